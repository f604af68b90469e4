/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_SHELL_TIMELEFT_H
#define FLUX_SHELL_TIMELEFT_H

/* The shell option `signal` (flux run --signal=[SIG][@TIME], as
 * flux-core's): signal SIG (default SIGUSR1) to every local task TIME
 * seconds (default 60) before the job's expiration (R's
 * execution.expiration), once, so that a job may save its work before
 * its time limit; at once if the job starts with less than TIME left;
 * never for a job without a time limit.  The option is
 * {signum?:i, timeleft?:number}, or any true value for the defaults.
 *
 * While the signal is not sent, the shell watches the job's eventlog
 * (job-info.eventlog-watch, only for jobs that ask) for resource-update
 * events: a new expiration (flux update of the duration) moves the
 * signal.
 */
#include "libflux/flux.h"

struct shell;
struct timeleft;

/* Once the tasks are started: *tp is NULL when the option is not set (or
 * the job has no expiration).  -1 with error for a bad option. */
int timeleft_start (struct shell *shell, struct timeleft **tp,
                    flux_error_t *error);
void timeleft_destroy (struct timeleft *t);

#endif /* !FLUX_SHELL_TIMELEFT_H */
