/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_REACTOR_H
#define FLUX_REACTOR_H

/* The reactor: a libuv event loop.
 *
 * Every flux_t handle, future and message handler runs from a reactor.
 * Code that needs timers, fd watchers, signals or child processes uses
 * libuv directly on the loop returned by flux_reactor_uv().
 *
 * flux_reactor_run() returns when flux_reactor_stop() is called or when
 * nothing keeps the loop alive any more (no started message handler, no
 * future with a pending continuation, no active libuv handle).
 * A reactor belongs to one thread.
 */
#include <stdbool.h>
#include <uv.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct flux_reactor flux_reactor_t;

enum {
    FLUX_REACTOR_NOWAIT = 1, /* run once without blocking */
    FLUX_REACTOR_ONCE = 2,   /* run once, blocking for one event */
};

/* Create a reactor with its own uv loop.  flags must be 0. */
flux_reactor_t *flux_reactor_create (int flags);

/* Wrap an existing loop (not owned: not closed on destroy). */
flux_reactor_t *flux_reactor_wrap (uv_loop_t *loop);

/* Destroy.  Closes remaining handles of an owned loop.  NULL-safe. */
void flux_reactor_destroy (flux_reactor_t *r);

/* Run the loop.  Returns 0 normally, -1 if stopped with
 * flux_reactor_stop_error() (errno is then as it was when stop_error was
 * called, or ECANCELED if it was 0).
 */
int flux_reactor_run (flux_reactor_t *r, int flags);
void flux_reactor_stop (flux_reactor_t *r);
void flux_reactor_stop_error (flux_reactor_t *r);

/* Run the loop one turn at a time until done(arg) is true or timeout
 * seconds have passed (a timer wakes the loop then), and return done(arg).
 * For a module finishing work in flight after its reactor was stopped.
 */
bool flux_reactor_run_until (flux_reactor_t *r, bool (*done) (void *arg),
                             void *arg, double timeout);

/* Cached loop time in seconds (uv_now / 1000) and its refresh. */
double flux_reactor_now (flux_reactor_t *r);
void flux_reactor_now_update (flux_reactor_t *r);

uv_loop_t *flux_reactor_uv (flux_reactor_t *r);

/* Close a libuv handle that was allocated on its own (malloc, calloc)
 * and free it once libuv is done with it: uv_close() with a callback
 * that frees the handle.  NULL-safe. */
void flux_uv_close_free (uv_handle_t *h);

/* A callback run on the next loop turn (not from inside the caller).
 * Used by futures to call continuations.  Internal to libflux but
 * usable by any code needing "call me soon": a deferred call is a node
 * embedded in the caller's object.  The callback may free the object
 * holding the node.
 */
struct flux_deferred {
    struct flux_deferred *next, *prev;
    void (*cb) (struct flux_deferred *d);
};
void flux_deferred_init (struct flux_deferred *d,
                         void (*cb) (struct flux_deferred *d));
void flux_reactor_defer (flux_reactor_t *r, struct flux_deferred *d);
void flux_reactor_undefer (struct flux_deferred *d); /* no-op if not queued */
int flux_deferred_pending (const struct flux_deferred *d);

#ifdef __cplusplus
}
#endif

#endif /* !FLUX_REACTOR_H */
