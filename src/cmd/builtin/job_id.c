/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* job_id.c - `flux job id [--to=ENCODING] [ID...]`: convert job ids
 * between the RFC 19 forms (PROTOCOLS.md 7).  Reads one id per line from
 * stdin when no ID is given.  Any form is accepted on input.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libjob/job.h"

#include "cmdutil.h"

static const char id_usage[]
    = "Usage: flux job id [OPTIONS] [ID...]\n"
      "Convert each job ID (any form; one per line on stdin if none given)\n"
      "to another form.\n"
      "  -t, --to=ENC   dec (default), hex, dothex, kvs, f58, f58plain\n"
      "  -h, --help     Display this message\n";

static int cmd_job_id (int argc, char **argv);

const struct builtin builtin_job_id = {
    .name = "id",
    .summary = "Convert job ids between forms",
    .usage = id_usage,
    .main = cmd_job_id,
};

/* Print s converted; 0 on success, -1 after a message. */
static int convert (const char *s, const char *to)
{
    flux_jobid_t id;
    char buf[64];

    if (flux_job_id_parse (s, &id) < 0) {
        cmd_warn ("invalid job id '%s'", s);
        return -1;
    }
    if (flux_job_id_encode (id, to, buf, sizeof (buf)) < 0)
        cmd_die ("encode: %s", strerror (errno));
    printf ("%s\n", buf);
    return 0;
}

static int cmd_job_id (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"to", required_argument, NULL, 't'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    const char *to = "dec";
    char buf[64], *line = NULL;
    size_t size = 0;
    ssize_t n;
    int c, rc = 0;

    while ((c = cmd_getopt (argc, argv, "t:", longopts)) != -1) {
        if (c == 't')
            to = optarg;
    }
    if (flux_job_id_encode (0, to, buf, sizeof (buf)) < 0)
        cmd_usage_error ("--to=%s: unknown encoding", to);
    if (optind < argc) {
        for (int i = optind; i < argc; i++)
            if (convert (argv[i], to) < 0)
                rc = 1;
        return rc;
    }
    while ((n = getline (&line, &size, stdin)) > 0) {
        if (line[n - 1] == '\n')
            line[n - 1] = '\0';
        if (convert (line, to) < 0)
            rc = 1;
    }
    free (line);
    return rc;
}
