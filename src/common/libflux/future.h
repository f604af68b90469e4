/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_FUTURE_H
#define FLUX_FUTURE_H

/* Futures: a result that will be ready later.
 *
 * A future is fulfilled with a value or an error (errnum and optional
 * text).  It can be fulfilled more than once: extra results queue up, and
 * flux_future_reset() moves to the next one (streaming RPCs use this).
 *
 * Two ways to wait:
 *  - flux_future_then(): the continuation runs from the reactor when the
 *    future is ready, always on a later loop turn, never from inside
 *    then() or fulfill().  It runs again after each reset() that finds
 *    another queued result.  A continuation usually ends by destroying the
 *    future or resetting it.
 *  - flux_future_get() / flux_future_wait_for(): block the caller.  For
 *    RPC futures this reads only the handle's connection; other messages
 *    that arrive meanwhile are kept for the reactor.  For futures created
 *    with flux_future_create() it runs the reactor until ready.
 *
 * Futures that fail to be created call nothing.  Destroying a future stops
 * any pending continuation and timer; it may be done from the future's own
 * continuation.
 */
#include <stdbool.h>

#include "handle.h"
#include "reactor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct flux_future flux_future_t;
typedef void (*flux_continuation_f) (flux_future_t *f, void *arg);
typedef void (*flux_future_init_f) (flux_future_t *f, void *arg);

/* Create a future.  init (may be NULL) is called once, at the first
 * then() or wait_for(), to start whatever will fulfill it.
 */
flux_future_t *flux_future_create (flux_future_init_f init, void *arg);
void flux_future_destroy (flux_future_t *f);

/* Register a continuation.  timeout >= 0: if not ready within timeout
 * seconds (re-armed on each reset), the future is fulfilled with
 * ETIMEDOUT.  Errors: EINVAL (no reactor can be found: set one with
 * flux_future_set_reactor or flux_future_set_flux).
 */
int flux_future_then (flux_future_t *f, double timeout, flux_continuation_f cb,
                      void *arg);

/* Block until ready or timeout (< 0: forever).  0 if ready, -1 with
 * ETIMEDOUT (the future is not fulfilled by this) or another error.
 */
int flux_future_wait_for (flux_future_t *f, double timeout);

bool flux_future_is_ready (flux_future_t *f);

/* Wait if needed, then return the current result.  -1 with errno set to
 * the result's errnum if it is an error.  result may be NULL.
 */
int flux_future_get (flux_future_t *f, const void **result);

/* Drop the current result; the next queued one (if any) becomes current. */
void flux_future_reset (flux_future_t *f);

/* Fulfill with a value (ownership passes to the future: free_fn is called
 * when the result is dropped) or with an error.  Never calls back
 * synchronously.
 */
void flux_future_fulfill (flux_future_t *f, void *result, flux_free_f free_fn);
void flux_future_fulfill_error (flux_future_t *f, int errnum,
                                const char *errstr);
/* Fulfill f with the current result of p, which f takes ownership of
 * (p is destroyed with f).  p must be ready.
 */
int flux_future_fulfill_with (flux_future_t *f, flux_future_t *p);

/* Error text of the current result, or NULL. */
const char *flux_future_error_string (flux_future_t *f);
/* The error text if there is one, else strerror (errnum).
 * Not part of libflux-core.so: a stateless helper of libflux-internal.la
 * for the code of this tree (src/common/libflux/Makefile.am). */
const char *future_strerror (flux_future_t *f, int errnum);

/* Context */
void flux_future_set_flux (flux_future_t *f, flux_t *h);
flux_t *flux_future_get_flux (flux_future_t *f);
void flux_future_set_reactor (flux_future_t *f, flux_reactor_t *r);
flux_reactor_t *flux_future_get_reactor (flux_future_t *f);

int flux_future_aux_set (flux_future_t *f, const char *name, void *val,
                         flux_free_f destroy);
void *flux_future_aux_get (flux_future_t *f, const char *name);

/* Composites.  A wait-all future is ready once every child is ready; a
 * wait-any future once one is.  Either is fulfilled with success: inspect
 * the children.  Children are owned by the composite.
 */
flux_future_t *flux_future_wait_all_create (void);
flux_future_t *flux_future_wait_any_create (void);
int flux_future_push (flux_future_t *cf, const char *name, flux_future_t *f);
flux_future_t *flux_future_get_child (flux_future_t *cf, const char *name);
const char *flux_future_first_child (flux_future_t *cf);
const char *flux_future_next_child (flux_future_t *cf);

/* Chaining.  and_then() returns a future "next" that is fulfilled as
 * follows when prev is ready:
 *  - prev succeeded: cb (prev, arg) runs and must call
 *    flux_future_continue (prev, f2): next then takes f2's result.  With
 *    no and_then callback, next takes prev's result.
 *  - prev failed: the or_then callback runs if one was given (and must
 *    call flux_future_continue or flux_future_continue_error), else next
 *    takes prev's error.
 * next owns prev (and f2).  Both and_then and or_then may be set on the
 * same prev; the second call returns the same next.
 */
flux_future_t *flux_future_and_then (flux_future_t *prev,
                                     flux_continuation_f cb, void *arg);
flux_future_t *flux_future_or_then (flux_future_t *prev, flux_continuation_f cb,
                                    void *arg);
int flux_future_continue (flux_future_t *prev, flux_future_t *f);
void flux_future_continue_error (flux_future_t *prev, int errnum,
                                 const char *errstr);

#ifdef __cplusplus
}
#endif

#endif /* !FLUX_FUTURE_H */
