/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* future.c - the generic future: a current result plus a queue of later
 * ones, a continuation called through the reactor's deferred-call queue,
 * an optional timeout timer, and hooks (future_ops) that RPCs, composites
 * and chains use to fulfill it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "future_private.h"
#include "libutil/monotime.h"
#include "handle_private.h"

struct result {
    struct result *next;
    void *value;
    flux_free_f free_fn;
    int errnum;
    char *errstr;
};

struct aux_entry {
    struct aux_entry *next;
    char *name;
    void *val;
    flux_free_f destroy;
};

struct flux_future {
    struct result *current;        /* NULL: not ready */
    struct result *queue, **qtail; /* results after current */

    flux_t *h;
    flux_reactor_t *r;
    int active_held; /* holds handle_active_incref on h */

    flux_continuation_f then_cb;
    void *then_arg;
    double timeout;
    uv_timer_t *timer;
    struct flux_deferred deferred;

    flux_future_init_f init;
    void *init_arg;
    int init_called;

    const struct future_ops *ops;
    void *impl;
    int then_started; /* ops->on_then was called */

    struct aux_entry *aux;
};

double future_remaining (double start, double timeout)
{
    double left;
    if (timeout < 0)
        return -1;
    left = timeout - (monotime () - start);
    return left > 0 ? left : 0;
}

static void result_destroy (struct result *res)
{
    if (res) {
        if (res->free_fn)
            res->free_fn (res->value);
        free (res->errstr);
        free (res);
    }
}

static void deferred_cb (struct flux_deferred *d);

flux_future_t *future_create_ops (const struct future_ops *ops, void *impl)
{
    flux_future_t *f;

    if (!(f = calloc (1, sizeof (*f))))
        return NULL;
    f->qtail = &f->queue;
    f->timeout = -1;
    f->ops = ops;
    f->impl = impl;
    flux_deferred_init (&f->deferred, deferred_cb);
    return f;
}

void *future_impl (flux_future_t *f)
{
    return f->impl;
}

const struct future_ops *future_get_ops (flux_future_t *f)
{
    return f->ops;
}

static int generic_wait (flux_future_t *f, double timeout);

static const struct future_ops generic_ops = {
    .wait = generic_wait,
};

flux_future_t *flux_future_create (flux_future_init_f init, void *arg)
{
    flux_future_t *f;

    if (!(f = future_create_ops (&generic_ops, NULL)))
        return NULL;
    f->init = init;
    f->init_arg = arg;
    return f;
}

static void timer_destroy (flux_future_t *f)
{
    if (f->timer) {
        flux_uv_close_free ((uv_handle_t *)f->timer);
        f->timer = NULL;
    }
}

void flux_future_destroy (flux_future_t *f)
{
    if (f) {
        int saved_errno = errno;
        struct aux_entry *a;
        struct result *res;

        flux_reactor_undefer (&f->deferred);
        timer_destroy (f);
        if (f->active_held && f->h)
            handle_active_decref (f->h);
        if (f->ops && f->ops->destroy)
            f->ops->destroy (f);
        result_destroy (f->current);
        while ((res = f->queue)) {
            f->queue = res->next;
            result_destroy (res);
        }
        while ((a = f->aux)) {
            f->aux = a->next;
            if (a->destroy)
                a->destroy (a->val);
            free (a->name);
            free (a);
        }
        free (f);
        errno = saved_errno;
    }
}

flux_reactor_t *flux_future_get_reactor (flux_future_t *f)
{
    if (!f)
        return NULL;
    if (!f->r && f->h)
        f->r = flux_get_reactor (f->h);
    return f->r;
}

void flux_future_set_reactor (flux_future_t *f, flux_reactor_t *r)
{
    if (f)
        f->r = r;
}

void flux_future_set_flux (flux_future_t *f, flux_t *h)
{
    if (f) {
        if (f->active_held && f->h) {
            handle_active_decref (f->h);
            f->active_held = 0;
        }
        f->h = h;
        if (h && f->then_cb) {
            handle_active_incref (h);
            f->active_held = 1;
        }
    }
}

flux_t *flux_future_get_flux (flux_future_t *f)
{
    return f ? f->h : NULL;
}

bool flux_future_is_ready (flux_future_t *f)
{
    return f && f->current != NULL;
}

static void schedule_continuation (flux_future_t *f)
{
    flux_reactor_t *r;

    if (f->current && f->then_cb && (r = flux_future_get_reactor (f)))
        flux_reactor_defer (r, &f->deferred);
}

static void deferred_cb (struct flux_deferred *d)
{
    flux_future_t *f
        = (flux_future_t *)((char *)d - offsetof (flux_future_t, deferred));

    if (f->current && f->then_cb) {
        if (f->timer)
            uv_timer_stop (f->timer);
        f->then_cb (f, f->then_arg); /* f may be destroyed here */
    }
}

static void timer_cb (uv_timer_t *t)
{
    flux_future_t *f = t->data;
    if (!f->current)
        flux_future_fulfill_error (f, ETIMEDOUT, NULL);
}

static int timer_arm (flux_future_t *f)
{
    flux_reactor_t *r = flux_future_get_reactor (f);

    if (f->timeout < 0)
        return 0;
    if (!f->timer) {
        if (!(f->timer = calloc (1, sizeof (*f->timer))))
            return -1;
        uv_timer_init (flux_reactor_uv (r), f->timer);
        f->timer->data = f;
    }
    uv_timer_start (f->timer, timer_cb, (uint64_t)(f->timeout * 1000.), 0);
    return 0;
}

static void call_init (flux_future_t *f)
{
    if (!f->init_called) {
        f->init_called = 1;
        if (f->init)
            f->init (f, f->init_arg);
    }
}

int flux_future_then (flux_future_t *f, double timeout, flux_continuation_f cb,
                      void *arg)
{
    if (!f || !cb || !flux_future_get_reactor (f)) {
        errno = EINVAL;
        return -1;
    }
    f->then_cb = cb;
    f->then_arg = arg;
    f->timeout = timeout;
    if (f->h && !f->active_held) {
        handle_active_incref (f->h);
        f->active_held = 1;
    }
    if (!f->current && timer_arm (f) < 0)
        return -1;
    if (!f->then_started) {
        f->then_started = 1;
        if (f->ops && f->ops->on_then)
            f->ops->on_then (f);
    }
    call_init (f);
    schedule_continuation (f);
    return 0;
}

/* Wait on a generic future by running its reactor. */
static void wait_timer_cb (uv_timer_t *t)
{
    int *expired = t->data;
    *expired = 1;
}

static int generic_wait (flux_future_t *f, double timeout)
{
    flux_reactor_t *r = flux_future_get_reactor (f);
    uv_timer_t timer;
    int expired = 0;

    if (!r) {
        errno = EDEADLK; /* nothing could ever fulfill it */
        return -1;
    }
    if (timeout >= 0) {
        uv_timer_init (flux_reactor_uv (r), &timer);
        timer.data = &expired;
        uv_timer_start (&timer, wait_timer_cb, (uint64_t)(timeout * 1000.), 0);
    }
    while (!f->current && !expired) {
        if (uv_run (flux_reactor_uv (r), UV_RUN_ONCE) == 0 && !f->current
            && timeout < 0) {
            errno = EDEADLK;
            break;
        }
    }
    if (timeout >= 0) {
        uv_close ((uv_handle_t *)&timer, NULL);
        uv_run (flux_reactor_uv (r), UV_RUN_NOWAIT);
    }
    if (f->current)
        return 0;
    if (expired)
        errno = ETIMEDOUT;
    return -1;
}

int flux_future_wait_for (flux_future_t *f, double timeout)
{
    if (!f) {
        errno = EINVAL;
        return -1;
    }
    if (f->current)
        return 0;
    call_init (f);
    if (f->current)
        return 0;
    if (!f->ops || !f->ops->wait) {
        errno = EINVAL;
        return -1;
    }
    return f->ops->wait (f, timeout);
}

int flux_future_get (flux_future_t *f, const void **result)
{
    if (flux_future_wait_for (f, -1) < 0)
        return -1;
    if (f->current->errnum) {
        errno = f->current->errnum;
        return -1;
    }
    if (result)
        *result = f->current->value;
    return 0;
}

void flux_future_reset (flux_future_t *f)
{
    if (f && f->current) {
        result_destroy (f->current);
        f->current = NULL;
        if ((f->current = f->queue)) {
            if (!(f->queue = f->current->next))
                f->qtail = &f->queue;
            f->current->next = NULL;
            schedule_continuation (f);
        }
        else if (f->then_cb)
            (void)timer_arm (f);
    }
}

static void post_result (flux_future_t *f, struct result *res)
{
    if (!f->current) {
        f->current = res;
        if (f->timer)
            uv_timer_stop (f->timer);
        schedule_continuation (f);
    }
    else {
        *f->qtail = res;
        f->qtail = &res->next;
    }
}

void flux_future_fulfill (flux_future_t *f, void *value, flux_free_f free_fn)
{
    struct result *res;

    if (!f)
        return;
    if (!(res = calloc (1, sizeof (*res)))) {
        if (free_fn)
            free_fn (value);
        return;
    }
    res->value = value;
    res->free_fn = free_fn;
    post_result (f, res);
}

void flux_future_fulfill_error (flux_future_t *f, int errnum,
                                const char *errstr)
{
    struct result *res;

    if (!f)
        return;
    if (!(res = calloc (1, sizeof (*res))))
        return;
    res->errnum = errnum ? errnum : EINVAL;
    if (errstr && *errstr)
        res->errstr = strdup (errstr);
    post_result (f, res);
}

int flux_future_fulfill_with (flux_future_t *f, flux_future_t *p)
{
    struct result *res;
    char name[64];

    if (!f || !p || !p->current || f == p) {
        errno = EINVAL;
        return -1;
    }
    if (!(res = calloc (1, sizeof (*res))))
        return -1;
    res->errnum = p->current->errnum;
    if (p->current->errstr && !(res->errstr = strdup (p->current->errstr))) {
        free (res);
        return -1;
    }
    /* f owns p: p (and the value it owns) lives as long as this result */
    res->value = p->current->value;
    post_result (f, res);
    snprintf (name, sizeof (name), "flux::fulfill_with:%p", (void *)p);
    return flux_future_aux_set (f, name, p, (flux_free_f)flux_future_destroy);
}

const char *flux_future_error_string (flux_future_t *f)
{
    if (!f || !f->current || !f->current->errnum)
        return NULL;
    return f->current->errstr;
}

int flux_future_aux_set (flux_future_t *f, const char *name, void *val,
                         flux_free_f destroy)
{
    struct aux_entry *a;

    if (!f || !name) {
        errno = EINVAL;
        return -1;
    }
    for (a = f->aux; a; a = a->next) {
        if (!strcmp (a->name, name)) {
            if (a->destroy && a->val != val)
                a->destroy (a->val);
            a->val = val;
            a->destroy = destroy;
            return 0;
        }
    }
    if (!(a = calloc (1, sizeof (*a))) || !(a->name = strdup (name))) {
        free (a);
        return -1;
    }
    a->val = val;
    a->destroy = destroy;
    a->next = f->aux;
    f->aux = a;
    return 0;
}

void *flux_future_aux_get (flux_future_t *f, const char *name)
{
    struct aux_entry *a;

    for (a = f ? f->aux : NULL; a; a = a->next)
        if (!strcmp (a->name, name))
            return a->val;
    errno = ENOENT;
    return NULL;
}
