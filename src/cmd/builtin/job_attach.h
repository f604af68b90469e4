/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_CMD_JOB_ATTACH_H
#define FLUX_CMD_JOB_ATTACH_H

/* job_attach.h - following a job as `flux job attach`, `flux run` and
 * `flux submit --wait|--watch` do (PROTOCOLS-exec.md 4.1, 4.2).
 *
 * An attach watches the job's main eventlog through job-info; from the
 * "start" event guest.exec.eventlog; from the shell's "shell.init"
 * guest.output, and it forwards stdin to the shell's <service>.stdin.
 * Once the main eventlog ends (after "clean") or reaches the wait event,
 * the guest eventlogs still watched are canceled and read once more
 * (job-info.lookup) from where their watches stopped, so that nothing
 * written before the end is lost and nothing waits on a log that will
 * not grow.  Several attaches may share one handle (submit --watch).
 * Failures of the broker or malformed job data exit through cmd_die().
 */
#include <stdbool.h>

#include "libflux/flux.h"
#include "libjob/job.h"

struct attach_opts {
    bool label_io;          /* "<rank>: " before each line of output */
    bool show_events;       /* print main eventlog events on stderr */
    bool show_exec;         /* print exec eventlog events on stderr */
    bool read_only;         /* no stdin forwarding (and no signals) */
    bool no_stdin;          /* the job reads its stdin from a file */
    bool quiet;             /* no redirect/log/stdin warnings */
    bool verbose;           /* file:line in shell log messages */
    bool no_output;         /* eventlog only: no output, no stdin */
    bool submit_rules;      /* exit code and exceptions as flux submit --wait */
    bool print_jobid;       /* attach_run: "jobid: ID" on stderr once the
                               signals are caught (flux run -v) */
    const char *wait_event; /* NULL: "clean" */
    const char *stdin_ranks; /* NULL: "all" */
};

struct attach;

/* Start following job id.  The ops are copied (the strings too). */
struct attach *attach_create (flux_t *h, flux_jobid_t id,
                              const struct attach_opts *opts);
void attach_destroy (struct attach *a);

/* Catch SIGINT (forwarded to the job; twice within one second: cancel
 * it) and SIGTERM, SIGHUP, SIGALRM, SIGUSR1, SIGUSR2 (forwarded with
 * job-manager.kill) while the attach lasts.  One attach per process. */
int attach_catch_signals (struct attach *a);

/* True once every watch has ended. */
bool attach_finished (struct attach *a);

/* The job's exit code (see jobio_exit_code()); meaningful once
 * finished. */
int attach_exit_code (struct attach *a);

/* Follow one job to its end in the handle's reactor, with signals
 * caught unless opts->read_only; returns the job's exit code.  What
 * `flux job attach` and `flux run` do. */
int attach_run (flux_t *h, flux_jobid_t id, const struct attach_opts *opts);

/* Check a --stdin-ranks value: "all" or a non-empty idset.  -1 if
 * invalid. */
int attach_check_stdin_ranks (const char *s);

#endif /* !FLUX_CMD_JOB_ATTACH_H */
