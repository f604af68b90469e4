/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* alloc.c - `flux alloc [OPTIONS] [COMMAND [ARGS...]]`: a new Flux
 * instance as a job, with COMMAND as its initial program, followed as
 * `flux run` follows a job (output, stdin, signals, exit code).
 *
 * Without COMMAND the initial program is the user's shell ($SHELL, else
 * /bin/sh).  When our stdin is a terminal the job gets the shell option
 * pty.interactive: the shell runs on the job's pty, which the attach
 * connects to this terminal (raw mode, window size), so it has job
 * control and line editing.
 *
 * --bg: submit, wait until the instance has posted its URI (it is up),
 * print the job id and exit; `flux proxy ID` reaches it, `flux cancel
 * ID` or `flux shutdown` inside it ends it.  Without COMMAND the
 * instance has no initial program (broker.rc2_none) and runs until
 * then.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libjob/job.h"

#include "cmdutil.h"
#include "instance.h"
#include "job_attach.h"
#include "submit_opts.h"

static const char usage[]
    = "Usage: flux alloc [OPTIONS] [COMMAND [ARGS...]]\n"
      "Start a new Flux instance as a job on the resources requested, with\n"
      "COMMAND (default: an interactive shell) as its initial program; print\n"
      "its output, forward stdin and signals to it, and exit with its exit\n"
      "code.  On a terminal the shell runs on the job's "
      "pty.\n" INSTANCE_RES_HELP
      "      --bg                 Wait until the instance is up, print its\n"
      "                           job id and exit (it runs on; without\n"
      "                           COMMAND, until canceled)\n" INSTANCE_JOB_HELP
      "      --job-name=NAME      Job name (default: flux)\n"
      "      --output=PATH        Write output to PATH instead\n"
      "      --error=PATH         Write stderr to PATH\n"
      "      --input=PATH         Read stdin from PATH\n"
      "  -v, --verbose            Print the job id (-vv: its events)\n"
      "      --dry-run            Print the jobspec instead of running it\n"
      "  -h, --help               Display this message\n";

const struct builtin builtin_alloc = {
    .name = "alloc",
    .summary = "Run a new Flux instance as an interactive job",
    .usage = usage,
    .main = cmd_alloc,
};

static int run_bg (flux_t *h, flux_jobid_t id)
{
    flux_error_t error;
    char buf[64], *uri;

    (void)flux_job_id_encode (id, "f58", buf, sizeof (buf));
    if (!(uri = instance_job_uri (h, id, true, &error)))
        cmd_die ("%s", error.text);
    free (uri);
    printf ("%s\n", buf);
    return 0;
}

/* True if the user set a pty option (-o pty...). */
static bool has_pty_opt (const struct submit_opts *o)
{
    for (int i = 0; i < o->nsetopt; i++) {
        if (!strncmp (o->setopt[i], "pty", 3)
            && (o->setopt[i][3] == '\0' || o->setopt[i][3] == '.'
                || o->setopt[i][3] == '='))
            return true;
    }
    return false;
}

int cmd_alloc (int argc, char **argv)
{
    struct submit_opts o = {0};
    char *shell_argv[2] = {getenv ("SHELL"), NULL};
    flux_jobid_t id;
    json_t *js;
    flux_t *h;
    int rc;

    submit_opts_parse (argc, argv, SUBMIT_MODE_ALLOC, &o);
    if (!o.job_name)
        o.job_name = "flux";
    if (optind < argc)
        js = instance_build_jobspec (argc - optind, argv + optind, &o);
    else if (o.bg) {
        /* no initial program: the instance runs until canceled or shut
         * down (flux-core's --bg without a command) */
        o.broker_opts[o.nbroker_opts++] = "-Sbroker.rc2_none=1";
        js = instance_build_jobspec (0, NULL, &o);
    }
    else {
        if (!shell_argv[0] || !*shell_argv[0])
            shell_argv[0] = "/bin/sh";
        /* on a terminal: the shell runs on the job's pty, with job
         * control and line editing, unless -o pty... says otherwise */
        if (isatty (STDIN_FILENO) && !has_pty_opt (&o))
            o.setopt[o.nsetopt++] = "pty.interactive=1";
        js = instance_build_jobspec (1, shell_argv, &o);
    }
    if (submit_opts_submit_one (js, &o, &h, &id) > 0) {
        rc = 0; /* --dry-run */
        goto done;
    }
    if (o.bg)
        rc = run_bg (h, id);
    else {
        struct attach_opts ao = {
            .show_events = o.verbose > 1,
            .show_exec = o.verbose > 2,
            .print_jobid = o.verbose > 0,
        };
        rc = attach_run (h, id, &ao);
    }
    flux_close (h);
done:
    json_decref (js);
    submit_opts_free (&o);
    return rc;
}
