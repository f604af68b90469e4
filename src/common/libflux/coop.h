/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_CORE_COOP_H
#define FLUX_CORE_COOP_H

/* coop - several event loops on one thread, each on a stack of its own.
 *
 * A flux_coop_t runs tasks (coroutines) on the thread that calls
 * flux_coop_run().  A task has its own loops, as a thread would; where a
 * loop would block in its poll, the task yields instead, and is resumed
 * once that loop has an event ready or its next timer is due.  So broker
 * modules written for a thread of their own can share one thread, and a
 * message from one to another costs no wakeup of another thread (on a
 * VM, a cross-CPU wakeup costs tens of microseconds: bench/floors).
 *
 * What yields: the loops of reactors created in a task (flux_reactor_
 * create() attaches them: flux_coop_attach), whatever runs them
 * (flux_reactor_run, a future's wait), and libflux's synchronous RPC wait
 * (flux_coop_wait_fd).  Anything else that blocks (a system call, a lock,
 * a loop created by other means) blocks every task of the thread, and a
 * task that computes for long delays the others: a task yields at every
 * turn of its loop, never in the middle of a callback.
 */
#include <poll.h>
#include <uv.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct flux_coop flux_coop_t;
typedef void (*flux_coop_f) (void *arg);

flux_coop_t *flux_coop_create (void);

/* Free c and the tasks it still holds (their stacks unwound by nobody:
 * call only once flux_coop_run() has returned, or never ran). */
void flux_coop_destroy (flux_coop_t *c);

/* Run fn (arg) as a task of c, on a stack of stack_size bytes (0: 8 MiB,
 * reserved, not committed, below a guard).  Thread safe: the task starts
 * on c's thread, at flux_coop_run()'s next turn.  -1 with errno. */
int flux_coop_spawn (flux_coop_t *c, flux_coop_f fn, void *arg,
                     size_t stack_size);

/* Run the tasks until none is left: spawned and not finished (call it
 * again if a spawn may come later).  One thread at a time.  -1 with
 * errno if polling failed. */
int flux_coop_run (flux_coop_t *c);

/* The tasks spawned and not finished. */
int flux_coop_count (flux_coop_t *c);

/* Whether the caller runs in a task. */
int flux_coop_in_task (void);

/* In a task: make loop yield where it would block in its poll (a
 * prepare callback that runs last, so started before any other on the
 * loop, and an eventfd it watches).  NULL outside a task, or with errno.
 * Detach before the loop is closed: the handles close with its next
 * run. */
struct flux_coop_loop;
struct flux_coop_loop *flux_coop_attach (uv_loop_t *loop);
void flux_coop_detach (struct flux_coop_loop *cl);

/* uv_run (loop, mode); a UV_RUN_NOWAIT run in a task never yields. */
int flux_coop_uv_run (uv_loop_t *loop, uv_run_mode mode);

/* In a task: yield until fd is readable or timeout_ms (-1: no limit)
 * passed (look again: either may be why).  -1 with EINVAL elsewhere. */
int flux_coop_wait_fd (int fd, int timeout_ms);

/* poll (fds, nfds, timeout_ms), yielding while nothing is ready: on
 * the fd for one fd watched for POLLIN, else looking again every few ms.
 * For what must wait outside a loop in a task (a module's unload). */
int flux_coop_poll (struct pollfd *fds, nfds_t nfds, int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif /* !FLUX_CORE_COOP_H */
