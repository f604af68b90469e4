/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* run.c - `flux run [OPTIONS] COMMAND [ARGS...]`: submit one job with
 * the options of flux submit (submit_opts.c), then follow it in this
 * process as `flux job attach` does (job_attach.c): its output is
 * printed, stdin and signals are forwarded to it, and the exit code is
 * the job's (PROTOCOLS-exec.md 4.1).
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libjob/job.h"

#include "cmdutil.h"
#include "job_attach.h"
#include "submit_opts.h"

static const char usage[]
    = "Usage: flux run [OPTIONS] COMMAND [ARGS...]\n"
      "Run COMMAND as a job: submit it, print its output, forward stdin\n"
      "and signals to it (ctrl-C twice within 1s cancels it), and exit\n"
      "with its exit code.\n" SUBMIT_OPTS_HELP
      "      --flags=LIST         Comma list of waitable, debug, novalidate\n"
      "      --output=PATH        Write stdout to PATH (a template: "
      "{{id}}...)\n"
      "      --error=PATH         Write stderr to PATH\n"
      "      --input=PATH|IDSET   Read stdin from PATH, or send it only to\n"
      "                           the tasks of IDSET\n"
      "  -l, --label-io           Prefix each output line with its task rank\n"
      "  -v, --verbose            Print the job id; -vv the job's events,\n"
      "                           -vvv its exec events too\n"
      "      --wait-event=NAME    Stop following the job at event NAME\n"
      "                           (default clean)\n"
      "      --dry-run            Print the jobspec instead of running it\n"
      "  -h, --help               Display this message\n";

const struct builtin builtin_run = {
    .name = "run",
    .summary = "Run a job interactively",
    .usage = usage,
    .main = cmd_run,
};

/* A -o pty option: the tasks' stdin is then their pty, which a file
 * given as input would replace. */
static bool wants_pty (const struct submit_opts *o)
{
    for (int i = 0; i < o->nsetopt; i++) {
        const char *s = o->setopt[i];
        if (!strncmp (s, "pty", 3) && (s[3] == '\0' || s[3] == '.'))
            return true;
    }
    return false;
}

int cmd_run (int argc, char **argv)
{
    struct submit_opts o = {0};
    flux_jobid_t id;
    json_t *js;
    flux_t *h;
    int rc;

    submit_opts_parse (argc, argv, SUBMIT_MODE_RUN, &o);
    /* stdin on /dev/null: the tasks read it themselves (as --input=
     * /dev/null), so the leader shell has no stdin to take and pass to
     * every other shell (63 requests for a -N64 job); not with a pty */
    if (!o.input && !o.stdin_ranks && !wants_pty (&o) && cmd_stdin_is_null ())
        o.input = "/dev/null";
    js = submit_build_jobspec (argc - optind, argv + optind, &o);
    if (submit_opts_submit_one (js, &o, &h, &id) > 0) {
        rc = 0; /* --dry-run */
        goto done;
    }
    struct attach_opts ao = {
        .label_io = o.label_io,
        .show_events = o.verbose > 1,
        .show_exec = o.verbose > 2,
        .wait_event = o.wait_event,
        .stdin_ranks = o.stdin_ranks,
        .no_stdin = o.input != NULL,
        .print_jobid = o.verbose > 0,
    };
    rc = attach_run (h, id, &ao);
    flux_close (h);
done:
    json_decref (js);
    submit_opts_free (&o);
    return rc;
}
