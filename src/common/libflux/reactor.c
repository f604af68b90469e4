/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* reactor.c - a thin wrapper over a libuv loop, plus the deferred-call
 * queue that makes "never call back from inside the caller" cheap: one
 * idle handle per reactor, started only while calls are queued.
 */
#include <errno.h>
#include <stdlib.h>

#include "coop.h"
#include "reactor.h"

struct flux_reactor {
    uv_loop_t loop_storage;
    uv_loop_t *loop;
    int owned;
    int stop_errnum;
    int stopped_error;
    uv_idle_t deferred_idle;
    struct flux_deferred deferred; /* list head */
    struct flux_coop_loop *coop;   /* in a coop task: yields for the poll */
};

static void deferred_run (uv_idle_t *idle);

static flux_reactor_t *reactor_init (flux_reactor_t *r)
{
    r->deferred.next = r->deferred.prev = &r->deferred;
    if (uv_idle_init (r->loop, &r->deferred_idle) < 0)
        return NULL;
    r->deferred_idle.data = r;
    /* started before anything else on the loop, so it runs last in the
     * prepare phase (libuv runs the latest started first) */
    if (flux_coop_in_task () && !(r->coop = flux_coop_attach (r->loop)))
        return NULL;
    return r;
}

flux_reactor_t *flux_reactor_create (int flags)
{
    flux_reactor_t *r;

    if (flags != 0) {
        errno = EINVAL;
        return NULL;
    }
    if (!(r = calloc (1, sizeof (*r))))
        return NULL;
    if (uv_loop_init (&r->loop_storage) < 0) {
        free (r);
        errno = ENOMEM;
        return NULL;
    }
    r->loop = &r->loop_storage;
    r->owned = 1;
    if (!reactor_init (r)) {
        uv_loop_close (r->loop);
        free (r);
        errno = ENOMEM;
        return NULL;
    }
    return r;
}

flux_reactor_t *flux_reactor_wrap (uv_loop_t *loop)
{
    flux_reactor_t *r;

    if (!loop) {
        errno = EINVAL;
        return NULL;
    }
    if (!(r = calloc (1, sizeof (*r))))
        return NULL;
    r->loop = loop;
    if (!reactor_init (r)) {
        free (r);
        errno = ENOMEM;
        return NULL;
    }
    return r;
}

static void close_walk_cb (uv_handle_t *h, void *arg)
{
    if (!uv_is_closing (h))
        uv_close (h, NULL);
}

void flux_reactor_destroy (flux_reactor_t *r)
{
    if (r) {
        int saved_errno = errno;
        if (!uv_is_closing ((uv_handle_t *)&r->deferred_idle))
            uv_close ((uv_handle_t *)&r->deferred_idle, NULL);
        flux_coop_detach (r->coop);
        r->coop = NULL;
        if (r->owned) {
            /* Handles still open belong to objects the user leaked;
             * close them so the loop can be closed. */
            uv_walk (r->loop, close_walk_cb, NULL);
            uv_run (r->loop, UV_RUN_DEFAULT);
            uv_loop_close (r->loop);
        }
        else
            uv_run (r->loop, UV_RUN_NOWAIT); /* let the idle close */
        free (r);
        errno = saved_errno;
    }
}

int flux_reactor_run (flux_reactor_t *r, int flags)
{
    uv_run_mode mode = UV_RUN_DEFAULT;

    if (!r) {
        errno = EINVAL;
        return -1;
    }
    if (flags & FLUX_REACTOR_NOWAIT)
        mode = UV_RUN_NOWAIT;
    else if (flags & FLUX_REACTOR_ONCE)
        mode = UV_RUN_ONCE;
    r->stopped_error = 0;
    (void)flux_coop_uv_run (r->loop, mode);
    if (r->stopped_error) {
        errno = r->stop_errnum ? r->stop_errnum : ECANCELED;
        return -1;
    }
    return 0;
}

static void run_until_timer_cb (uv_timer_t *t)
{
}

bool flux_reactor_run_until (flux_reactor_t *r, bool (*done) (void *arg),
                             void *arg, double timeout)
{
    uint64_t ms = timeout > 0 ? (uint64_t)(timeout * 1000.) : 0, deadline;
    uv_timer_t *t;

    if (!r || !done || done (arg))
        return done && done (arg);
    if (!(t = calloc (1, sizeof (*t))) || uv_timer_init (r->loop, t) < 0) {
        free (t);
        return false;
    }
    /* the loop's clock first: a timer started on a stale clock fires
     * before the deadline, and the loop then blocks with nothing due */
    uv_update_time (r->loop);
    deadline = uv_now (r->loop) + ms;
    uv_timer_start (t, run_until_timer_cb, ms, 0); /* so that the loop wakes */
    while (!done (arg) && uv_now (r->loop) < deadline)
        (void)flux_reactor_run (r, FLUX_REACTOR_ONCE);
    flux_uv_close_free ((uv_handle_t *)t);
    return done (arg);
}

void flux_reactor_stop (flux_reactor_t *r)
{
    if (r)
        uv_stop (r->loop);
}

void flux_reactor_stop_error (flux_reactor_t *r)
{
    if (r) {
        r->stop_errnum = errno;
        r->stopped_error = 1;
        uv_stop (r->loop);
    }
}

double flux_reactor_now (flux_reactor_t *r)
{
    return (double)uv_now (r->loop) / 1000.;
}

void flux_reactor_now_update (flux_reactor_t *r)
{
    uv_update_time (r->loop);
}

uv_loop_t *flux_reactor_uv (flux_reactor_t *r)
{
    return r ? r->loop : NULL;
}

static void free_handle_cb (uv_handle_t *h)
{
    free (h);
}

void flux_uv_close_free (uv_handle_t *h)
{
    if (h)
        uv_close (h, free_handle_cb);
}

void flux_deferred_init (struct flux_deferred *d,
                         void (*cb) (struct flux_deferred *d))
{
    d->next = d->prev = d;
    d->cb = cb;
}

int flux_deferred_pending (const struct flux_deferred *d)
{
    return d->next != d;
}

void flux_reactor_defer (flux_reactor_t *r, struct flux_deferred *d)
{
    if (flux_deferred_pending (d))
        return;
    d->prev = r->deferred.prev;
    d->next = &r->deferred;
    r->deferred.prev->next = d;
    r->deferred.prev = d;
    if (!uv_is_active ((uv_handle_t *)&r->deferred_idle))
        uv_idle_start (&r->deferred_idle, deferred_run);
}

void flux_reactor_undefer (struct flux_deferred *d)
{
    if (flux_deferred_pending (d)) {
        d->prev->next = d->next;
        d->next->prev = d->prev;
        d->next = d->prev = d;
    }
}

/* Run the calls queued before this turn; calls queued by the callbacks
 * themselves wait for the next turn, so a callback that re-queues itself
 * cannot starve the loop.
 */
static void deferred_run (uv_idle_t *idle)
{
    flux_reactor_t *r = idle->data;
    struct flux_deferred batch;

    if (r->deferred.next == &r->deferred) {
        uv_idle_stop (&r->deferred_idle);
        return;
    }
    batch.next = r->deferred.next;
    batch.prev = r->deferred.prev;
    batch.next->prev = &batch;
    batch.prev->next = &batch;
    r->deferred.next = r->deferred.prev = &r->deferred;

    while (batch.next != &batch) {
        struct flux_deferred *d = batch.next;
        flux_reactor_undefer (d);
        d->cb (d);
    }
    if (r->deferred.next == &r->deferred)
        uv_idle_stop (&r->deferred_idle);
}
