/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_SHELL_STRAYS_H
#define FLUX_SHELL_STRAYS_H

/* The shell's use of its reaper (reaper.h): what the tasks leave
 * running when they exit ends with the job.
 */
#include "libflux/flux.h"

struct shell;

/* Before the tasks start: the shell becomes a child subreaper (shell
 * option stray-timeout: seconds from SIGTERM to SIGKILL, default 5).
 * -1 with text only for a bad option; a kernel without a subreaper or
 * /proc/self/task/<pid>/children leaves the shell without (a warning
 * on stderr). */
int shell_strays_start (struct shell *shell, flux_error_t *error);

/* On SIGCHLD, after the tasks were checked: strays that exited are
 * reaped; once no task runs, those left get SIGTERM (SIGKILL later). */
void shell_strays_check (struct shell *shell);

/* The shell's end, before its last commits: every stray ends and is
 * reaped; how many were killed is logged (exec.eventlog and stderr). */
void shell_strays_finish (struct shell *shell);

#endif /* !FLUX_SHELL_STRAYS_H */
