/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef EXEC_AGENT_LAUNCHER_H
#define EXEC_AGENT_LAUNCHER_H

/* launcher - the agent's end of the shell launcher (src/shell/launch.h,
 * doc/guide/exec.md "The shell launcher"): one `flux-shell --launcher FD`
 * process that forks the instance owner's job shells on request, so that
 * no shell pays for an exec, the dynamic linking and the initialization
 * of its libraries.
 *
 * Never blocks the agent (a nonblocking socket in the agent's loop),
 * except launcher_destroy(), which waits a bounded time.  Each request
 * carries a ctx, the caller's (proc.c), given back to its callbacks:
 *
 *   started (ctx, pid, pidfd, 0)   the shell runs; the callee owns pidfd
 *   started (ctx, 0, -1, errnum)   no shell: the launcher could not fork
 *                                  (its errno), ECONNREFUSED: it died
 *                                  before it read any request (safe to
 *                                  start the shell otherwise),
 *                                  ECONNRESET: it died after (the shell
 *                                  may have been forked: never start it
 *                                  twice)
 *   exited (ctx, status)           the shell exited (wait status); it is
 *                                  a zombie holding its pid and process
 *                                  group id until launcher_reap()
 *   lost (ctx)                     the launcher died, the shell's status
 *                                  is lost (it may still run)
 *
 * A callback for a ctx is the last thing the launcher does with it: the
 * callee may free ctx there, and call any launcher function but
 * launcher_destroy().  Once every ctx was told, died (arg, nlost) runs (the
 * launcher died: nlost shells lost); launcher_dead() is then true and the
 * owner replaces it at a safe point.
 */
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <uv.h>

#include "libflux/flux.h"

struct launcher;

struct launcher_ops {
    void (*started) (void *ctx, pid_t pid, int pidfd, int errnum);
    void (*exited) (void *ctx, int status);
    void (*lost) (void *ctx);
};

typedef void (*launcher_died_f) (size_t nlost, bool hello, void *arg);

/* Start `shell --launcher FD` (posix_spawn; a session of its own, stdin
 * and stdout /dev/null, stderr the agent's).  NULL with errno and a
 * reason in error. */
struct launcher *launcher_create (uv_loop_t *loop, const char *shell,
                                  const struct launcher_ops *ops,
                                  launcher_died_f died, void *arg,
                                  flux_error_t *error);

/* Ask for a shell: the START packet buf of len bytes (launch.h; its seq
 * is set here) with the shell's stdout and stderr (duplicated: the caller
 * keeps its own).  0:
 * started() will follow; -1 with errno, no callback: EMSGSIZE, EAGAIN
 * (the socket is full), EPIPE or ENOTCONN (the launcher is gone). */
int launcher_start (struct launcher *l, void *buf, size_t len, int out, int err,
                    void *ctx);

/* After exited(): reap pid (the caller killed the strays of its group). */
void launcher_reap (struct launcher *l, pid_t pid);

/* True once the launcher died (after the callbacks). */
bool launcher_dead (const struct launcher *l);

pid_t launcher_pid (const struct launcher *l);

/* Close the socket: the launcher reaps its children and exits; wait for
 * it, at most 2 s (then SIGKILL), blocking.  First wait (at most 1 s) for
 * the answers to pending requests (they and any exit reported meanwhile
 * go to their callbacks as usual); every ctx still held is then told
 * (started() with ECONNRESET, or lost()).
 * NULL-safe; not from inside a callback. */
void launcher_destroy (struct launcher *l);

#endif /* !EXEC_AGENT_LAUNCHER_H */
