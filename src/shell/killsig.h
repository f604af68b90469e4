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

/* A shell killed from outside (kill -9, the OOM killer, a crash), or
 * stuck until the kill sequence's SIGKILL of its group, cannot kill its
 * tasks' groups.  The tasks themselves die with it (PR_SET_PDEATHSIG),
 * but not what they started.  So the shell tells its agent each task's
 * group as it starts the task: one line on its stdout, which is a pipe
 * the agent reads anyway (no message, no commit), "<tag><pgid>\n".  The
 * agent SIGKILLs those groups when the shell dies by a signal (proc.c).
 * The shell keeps each exited task a zombie until its own end, so no
 * group id it reported is reused while the shell lives.  Through the
 * IMP the line is ignored (the agent may not signal another user's
 * processes): the IMP, the shell's parent and a child subreaper, kills
 * what the shell leaves (imp.c).
 */
#define SHELL_TASK_GROUP_TAG "flux-shell: task group "

/* Nor can such a shell remove its FLUX_JOB_TMPDIR.  The agent removes an
 * owner's shell's (exec-agent agent.c).  Through the IMP the shell finds
 * in its environment SHELL_IMP_TMPDIR_FD_ENV, the number of a pipe to
 * the IMP: it writes its tmpdir's path there and closes it, before any
 * task starts; the IMP removes that directory, as the job's user, if the
 * shell dies by a signal (imp.c).
 */
#define SHELL_IMP_TMPDIR_FD_ENV "FLUX_IMP_TMPDIR_FD"

/* A shell the launcher forks (the instance owner's default shell) finds
 * its exec-agent.shell-info answer in its environment, as JSON text in
 * SHELL_INFO_ENV: it need not ask for it, a round trip through the
 * broker and the agent fewer before its tasks start.  The shell takes it
 * out of its environment.  Other shells (spawned, or through the IMP,
 * which passes no such variable) ask, as before; so does a forked one
 * whose answer would not fit in the launcher's START packet.
 */
#define SHELL_INFO_ENV "FLUX_SHELL_INFO"

#endif /* !FLUX_SHELL_KILLSIG_H */
