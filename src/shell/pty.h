/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_SHELL_PTY_H
#define FLUX_SHELL_PTY_H

/* pty.h - tasks on a pty (shell option `pty`) and the interactive
 * session `terminus.0` that `flux job attach` / `flux run` / `flux
 * alloc` connect the user's terminal to (doc/man1/flux-shell.1).
 *
 * Options (attributes.system.shell.options):
 *   pty                 any value but an object: a pty for every task,
 *                       its output captured as the task's stdout
 *   pty.ranks           "all" or an idset of task ranks (default: "0"
 *                       with pty.interactive, else "all")
 *   pty.capture         0/1: pty output into the job's output eventlog
 *                       (default 1)
 *   pty.interactive     0/1: task 0's pty is the session terminus.0 of
 *                       the leader shell; shell.init carries
 *                       {pty:"terminus.0", capture?:1}
 *
 * The session is served by the shell of task 0 (which must be the
 * leader) as <service>.terminus.0.<method>, user role, job owner or
 * instance owner only:
 *   attach {rows?:i, cols?:i}   streaming: {type:"attach"}, then
 *                               {type:"data", data:base64} ..., then
 *                               {type:"exit", status:i (wait status)},
 *                               then ENODATA.  Output written before the
 *                               first attach (64 KiB at most) is
 *                               replayed to it.  At most 8 clients.  A
 *                               captured session whose task ended with
 *                               no client is gone at once (its output is
 *                               in the output eventlog); an uncaptured
 *                               one waits 10 s for a first client.
 *   write {data:base64}         into the pty, as if typed
 *   resize {rows:i, cols:i}     the window size (SIGWINCH to the task)
 *   detach {}                   the sender's attach ends (ENODATA)
 *   disconnect                  (from the broker) its attaches end
 * Tasks on a pty get FLUX_TERMINUS_SESSION (0 for the session, else
 * their rank).
 */
#include <stddef.h>

#include "libflux/flux.h"

#include "env.h"

struct shell;
struct task;
struct shell_pty;

/* Parse the options; on the shell holding task 0 of an interactive pty,
 * register the session's methods.  NULL with errno and error text. */
struct shell_pty *shell_pty_create (struct shell *shell, flux_error_t *error);
void shell_pty_destroy (struct shell_pty *p);

/* "terminus.0" if this shell serves the interactive session, else
 * NULL. */
const char *shell_pty_session (struct shell_pty *p);

/* True if pty output is captured into the output eventlog. */
bool shell_pty_capture (struct shell_pty *p);

/* Before task_start(): give task t a pty if its rank is in pty.ranks
 * (and set FLUX_TERMINUS_SESSION in env).  -1 with error text. */
int shell_pty_task_setup (struct shell_pty *p, struct task *t, struct env *env,
                          flux_error_t *error);

/* task.c: data read from t's pty; t's pty is closed and t reaped. */
void shell_pty_output (struct shell_pty *p, struct task *t, const char *data,
                       size_t len);
void shell_pty_task_done (struct shell_pty *p, struct task *t);

#endif /* !FLUX_SHELL_PTY_H */
