/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* job_submit.c - `flux job submit [FILE]`: submit a jobspec written by
 * hand, JSON or YAML (converted to JSON here: job-ingest takes JSON), from
 * FILE or stdin.  The jobspec is not validated here; job-ingest answers
 * with a one-line error if it is not valid.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libjob/job.h"
#include "libjob/jobspec.h"

#include "cmdutil.h"
#include "submit_opts.h"

static const char submit_usage[]
    = "Usage: flux job submit [OPTIONS] [FILE]\n"
      "Submit the jobspec in FILE (or stdin), JSON or YAML, and print the\n"
      "job id.\n"
      "  -u, --urgency=N   Urgency 0-31 (default 16), hold, default or\n"
      "                    expedite\n"
      "  -f, --flags=LIST  Comma list of waitable, debug, novalidate\n"
      "  -h, --help        Display this message\n";

static int cmd_job_submit (int argc, char **argv);

const struct builtin builtin_job_submit = {
    .name = "submit",
    .summary = "Submit a JSON or YAML jobspec",
    .usage = submit_usage,
    .main = cmd_job_submit,
};

/* The jobspec text: all of f, which must hold no NUL byte. */
static char *read_jobspec (FILE *f)
{
    size_t len;
    char *buf = cmd_read_all (f, "read", &len);

    if (memchr (buf, '\0', len))
        cmd_die ("the jobspec contains a NUL byte");
    return buf;
}

/* JSON text as is; anything else is YAML, converted to compact JSON. */
static char *to_json (char *text)
{
    const char *p = text + strspn (text, " \t\r\n");
    flux_error_t error;
    json_t *o;
    char *s;

    if (*p == '{')
        return text;
    if (!(o = jobspec_yaml_to_json (text, &error)))
        cmd_die ("%s", error.text);
    if (!(s = json_dumps (o, JSON_COMPACT | JSON_ENCODE_ANY)))
        cmd_die ("out of memory");
    json_decref (o);
    free (text);
    return s;
}

static int cmd_job_submit (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"urgency", required_argument, NULL, 'u'},
        {"flags", required_argument, NULL, 'f'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    int urgency = FLUX_JOB_URGENCY_DEFAULT, flags = 0, c;
    FILE *in = stdin;
    char *text, buf[64];
    flux_jobid_t id;
    flux_future_t *f;
    flux_t *h;

    while ((c = cmd_getopt (argc, argv, "u:f:", longopts)) != -1) {
        if (c == 'u')
            urgency = cmd_parse_urgency ("--urgency", optarg);
        if (c == 'f')
            flags = submit_parse_flags (optarg);
    }
    if (argc - optind > 1)
        cmd_usage_error ("too many arguments");
    if (optind < argc && strcmp (argv[optind], "-") != 0
        && !(in = fopen (argv[optind], "r")))
        cmd_die ("%s: %s", argv[optind], strerror (errno));
    text = to_json (read_jobspec (in));
    if (in != stdin)
        fclose (in);
    h = cmd_open ();
    if (!(f = flux_job_submit (h, text, urgency, flags))
        || flux_job_submit_get_id (f, &id) < 0)
        cmd_die ("%s", f ? future_strerror (f, errno) : strerror (errno));
    if (flux_job_id_encode (id, NULL, buf, sizeof (buf)) < 0)
        cmd_die ("encode id: %s", strerror (errno));
    printf ("%s\n", buf);
    flux_future_destroy (f);
    flux_close (h);
    free (text);
    return 0;
}
