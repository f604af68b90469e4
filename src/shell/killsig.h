/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_SHELL_KILLSIG_H
#define FLUX_SHELL_KILLSIG_H

/* The signal the exec agent sends a shell in place of the SIGKILL of the
 * shell's process group (the kill sequence's last step, an unload's end).
 *
 * Each task leads a process group (a session) of its own, so that a
 * signal the shell forwards reaches the task's whole tree; the agent's
 * killpg() of the shell's group therefore no longer reaches the tasks.
 * On this signal the shell, from a plain signal handler (it works even
 * while the shell waits in a synchronous RPC), sends SIGKILL to every
 * task's group and then to itself.  The agent sends it once and
 * SIGKILLs the shell's group only at its next step, so a shell stopped
 * or stuck for a whole kill-timeout still dies (its tasks may then
 * escape: see doc/guide/exec.md).
 */
#include <signal.h>

/* SIGURG: ignored by default, so that a job shell of another kind
 * (exec.job-shell) is not ended by it with a status of its own, but by
 * the SIGKILL of the next step; the shell sets no socket owner, so the
 * kernel never sends it one. */
#define SHELL_KILL_SIGNAL SIGURG

#endif /* !FLUX_SHELL_KILLSIG_H */
