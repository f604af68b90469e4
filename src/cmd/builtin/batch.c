/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* batch.c - `flux batch [OPTIONS] [SCRIPT [ARGS...]]`: submit a script
 * as the initial program of a new Flux instance run as a job (RFC 8).
 *
 * As flux-core: the script travels in the jobspec as
 * attributes.system.files.script, which the job shell writes to
 * FLUX_JOB_TMPDIR, and the command is `flux broker {{tmpdir}}/script
 * ARGS...`.  `#flux:` directives in the script (RFC 36, directives.c)
 * give options; those on the command line win.  Output goes to
 * flux-{{id}}.out unless --output says otherwise.  The job's exit code is
 * the script's.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libjob/job.h"

#include "cmdutil.h"
#include "directives.h"
#include "instance.h"
#include "submit_attrs.h"
#include "submit_opts.h"

static const char usage[]
    = "Usage: flux batch [OPTIONS] [SCRIPT [ARGS...]]\n"
      "   or: flux batch [OPTIONS] --wrap COMMAND [ARGS...]\n"
      "Submit SCRIPT (default: standard input) as the initial program of a\n"
      "new Flux instance that runs as a job on the resources requested,\n"
      "and print its job id.  '#flux:' directives in the script (RFC 36)\n"
      "set options; the command line overrides them.  Output goes to\n"
      "flux-{{id}}.out by default; the job's exit code is the "
      "script's.\n" INSTANCE_RES_HELP
      "      --wrap               Wrap COMMAND [ARGS] (quoted) in a /bin/sh\n"
      "                           script\n" INSTANCE_JOB_HELP
      "      --job-name=NAME      Job name (default: the script's name)\n"
      "      --output=PATH        Output file (default flux-{{id}}.out)\n"
      "      --error=PATH         Error file (default: with the output)\n"
      "      --input=PATH         Read the script's stdin from PATH\n"
      "  -l, --label-io           Label output lines with the broker rank\n"
      "      --dry-run            Print the jobspec instead of submitting\n"
      "  -h, --help               Display this message\n";

const struct builtin builtin_batch = {
    .name = "batch",
    .summary = "Submit a batch script as a new Flux instance",
    .usage = usage,
    .main = cmd_batch,
};

/* argv as /bin/sh words: each one that is not plain single-quoted
 * (a ' as '\'').  Caller frees. */
static char *sh_join (int argc, char **argv)
{
    size_t len = 1;
    char *s, *p;

    for (int i = 0; i < argc; i++)
        len += 4 * strlen (argv[i]) + 3;
    if (!(s = p = malloc (len)))
        cmd_die ("out of memory");
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        bool plain = *a
                     && strspn (a, "abcdefghijklmnopqrstuvwxyz"
                                   "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                   "0123456789_-+=./,:@%")
                            == strlen (a);
        if (i > 0)
            *p++ = ' ';
        if (plain) {
            p = stpcpy (p, a);
            continue;
        }
        *p++ = '\'';
        for (; *a; a++) {
            if (*a == '\'')
                p = stpcpy (p, "'\\''");
            else
                *p++ = *a;
        }
        *p++ = '\'';
    }
    *p = '\0';
    return s;
}

/* The script: SCRIPT, standard input, or --wrap's command line. */
static char *read_script (int argc, char **argv, bool wrap, const char **namep)
{
    char *s = NULL, *cmd;
    FILE *fp;

    if (wrap) {
        if (argc == 0)
            cmd_usage_error ("--wrap requires a COMMAND");
        if (!(cmd = sh_join (argc, argv))
            || asprintf (&s, "#!/bin/sh\n%s\n", cmd) < 0)
            cmd_die ("out of memory");
        free (cmd);
        *namep = argv[0];
        return s;
    }
    if (argc == 0) {
        *namep = "stdin";
        return cmd_read_all (stdin, "stdin", NULL);
    }
    if (!(fp = fopen (argv[0], "r")))
        cmd_die ("%s: %s", argv[0], strerror (errno));
    s = cmd_read_all (fp, argv[0], NULL);
    fclose (fp);
    *namep = argv[0];
    return s;
}

/* Check each directive line as options on its own, so that an error
 * names its line; exits on the first bad one. */
static void check_directives (const char *name, struct directives *d)
{
    char ctx[256];
    int i = 0;

    while (i < d->argc) {
        int line = d->line[i], n = 0;
        char **argv = calloc (d->argc + 2, sizeof (char *));
        struct submit_opts o = {0};

        if (!argv)
            cmd_die ("out of memory");
        argv[n++] = "flux-batch";
        while (i < d->argc && d->line[i] == line)
            argv[n++] = d->argv[i++];
        snprintf (ctx, sizeof (ctx), "%s: line %d", name, line);
        cmd_set_context (ctx);
        optind = 0;
        submit_opts_parse (n, argv, SUBMIT_MODE_BATCH, &o);
        if (optind < n)
            cmd_usage_error ("unexpected argument '%s' in a directive",
                             argv[optind]);
        if (o.wrap)
            cmd_usage_error ("--wrap is not allowed in a directive");
        submit_opts_free (&o);
        free (argv);
    }
    cmd_set_context (NULL);
}

/* attributes.system.files.script, as flux-core's batch stores it. */
static void add_script (json_t *js, const char *script)
{
    flux_error_t error;
    json_t *file = submit_file_entry (script, strlen (script), 0700);

    if (!file || submit_setattr_json (js, "files.script", file, &error) < 0)
        cmd_die ("cannot store the script in the jobspec");
}

int cmd_batch (int argc, char **argv)
{
    struct submit_opts cli = {0}, o = {0};
    struct directives d;
    flux_error_t error;
    const char *name;
    char *script, *base = NULL, *tmpl = "{{tmpdir}}/script";
    char **all, **cmd;
    int nopts, n = 0, rc = 0;
    json_t *js;

    submit_opts_parse (argc, argv, SUBMIT_MODE_BATCH, &cli);
    nopts = optind;
    script = read_script (argc - nopts, argv + nopts, cli.wrap, &name);
    if (!cli.wrap && strncmp (script, "#!", 2) != 0)
        cmd_die ("%s: the script does not begin with #! (see --wrap)", name);
    if (directives_parse (script, &d, &error) < 0)
        cmd_die ("%s: %s", name, error.text);
    check_directives (name, &d);

    /* directives first: the command line's options override them */
    if (!(all = calloc (d.argc + nopts + 1, sizeof (char *))))
        cmd_die ("out of memory");
    all[n++] = argv[0];
    for (int i = 0; i < d.argc; i++)
        all[n++] = d.argv[i];
    for (int i = 1; i < nopts; i++)
        all[n++] = argv[i];
    optind = 0;
    submit_opts_parse (n, all, SUBMIT_MODE_BATCH, &o);
    if (!o.output)
        o.output = "flux-{{id}}.out";
    if (!o.job_name) {
        base = strdup (name);
        o.job_name = base ? basename (base) : "batch";
    }

    /* flux broker {{tmpdir}}/script ARGS (no ARGS with --wrap) */
    int nargs = cli.wrap || argc - nopts == 0 ? 0 : argc - nopts - 1;
    if (!(cmd = calloc (nargs + 2, sizeof (char *))))
        cmd_die ("out of memory");
    cmd[0] = tmpl;
    for (int i = 0; i < nargs; i++)
        cmd[i + 1] = argv[nopts + 1 + i];
    js = instance_build_jobspec (nargs + 1, cmd, &o);
    add_script (js, script);
    flux_t *h;
    flux_jobid_t id;
    if (submit_opts_submit_one (js, &o, &h, &id) == 0) {
        char buf[64];
        (void)flux_job_id_encode (id, "f58", buf, sizeof (buf));
        printf ("%s\n", buf);
        flux_close (h);
    }
    json_decref (js);
    free (cmd);
    free (all);
    directives_free (&d);
    free (base);
    free (script);
    submit_opts_free (&o);
    submit_opts_free (&cli);
    return rc;
}
