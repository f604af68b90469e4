/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* future_compose.c - composite futures (wait-all, wait-any) and chained
 * futures (and_then / or_then / continue), built on future_ops so that
 * both then() and synchronous get() work through them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "future_private.h"
#include "libutil/monotime.h"
#include "handle_private.h"

/* Copy src's current result into dst without taking ownership of the
 * value (whoever owns src keeps it alive as long as dst). */
static void pass_result (flux_future_t *dst, flux_future_t *src)
{
    const void *value = NULL;

    if (flux_future_get (src, &value) < 0)
        flux_future_fulfill_error (dst, errno, flux_future_error_string (src));
    else
        flux_future_fulfill (dst, (void *)value, NULL);
}

/* Composites */

struct child {
    char *name;
    flux_future_t *f;
};

struct composite {
    flux_future_t *self;
    bool any;
    bool then_started;
    bool fulfilled;
    struct child *v;
    size_t n, cap, iter;
};

static bool composite_done (struct composite *c)
{
    size_t i, ready = 0;

    for (i = 0; i < c->n; i++)
        if (flux_future_is_ready (c->v[i].f))
            ready++;
    return c->any ? ready > 0 : ready == c->n;
}

static void composite_check (struct composite *c)
{
    if (!c->fulfilled && composite_done (c)) {
        c->fulfilled = true;
        flux_future_fulfill (c->self, NULL, NULL);
    }
}

static void child_cb (flux_future_t *child, void *arg)
{
    composite_check (arg);
}

static int child_then (struct composite *c, flux_future_t *child)
{
    if (!flux_future_get_reactor (child))
        flux_future_set_reactor (child, flux_future_get_reactor (c->self));
    return flux_future_then (child, -1, child_cb, c);
}

static void composite_on_then (flux_future_t *f)
{
    struct composite *c = future_impl (f);
    size_t i;

    c->then_started = true;
    for (i = 0; i < c->n; i++)
        (void)child_then (c, c->v[i].f);
    composite_check (c);
}

static bool any_ready (void *arg)
{
    struct composite *c = arg;
    size_t i;
    for (i = 0; i < c->n; i++)
        if (flux_future_is_ready (c->v[i].f))
            return true;
    return false;
}

static int composite_wait (flux_future_t *f, double timeout)
{
    struct composite *c = future_impl (f);
    double start = monotime ();
    size_t i;

    if (c->n == 0) {
        errno = EINVAL;
        return -1;
    }
    if (c->any) {
        flux_t *h = flux_future_get_flux (c->v[0].f);
        bool same = h != NULL;
        for (i = 1; i < c->n && same; i++)
            same = flux_future_get_flux (c->v[i].f) == h;
        if (any_ready (c))
            ;
        else if (same) {
            if (handle_sync_wait (h, any_ready, c, timeout) < 0)
                return -1;
        }
        else if (flux_future_wait_for (c->v[0].f, timeout) < 0)
            return -1;
    }
    else {
        for (i = 0; i < c->n; i++) {
            if (flux_future_wait_for (c->v[i].f,
                                      future_remaining (start, timeout))
                < 0)
                return -1;
        }
    }
    composite_check (c);
    return 0;
}

static void composite_destroy (flux_future_t *f)
{
    struct composite *c = future_impl (f);
    size_t i;

    for (i = 0; i < c->n; i++) {
        flux_future_destroy (c->v[i].f);
        free (c->v[i].name);
    }
    free (c->v);
    free (c);
}

static const struct future_ops composite_ops = {
    .on_then = composite_on_then,
    .wait = composite_wait,
    .destroy = composite_destroy,
};

static flux_future_t *composite_create (bool any)
{
    struct composite *c;
    flux_future_t *f;

    if (!(c = calloc (1, sizeof (*c))))
        return NULL;
    if (!(f = future_create_ops (&composite_ops, c))) {
        free (c);
        return NULL;
    }
    c->self = f;
    c->any = any;
    return f;
}

flux_future_t *flux_future_wait_all_create (void)
{
    return composite_create (false);
}

flux_future_t *flux_future_wait_any_create (void)
{
    return composite_create (true);
}

static struct composite *composite_of (flux_future_t *cf)
{
    if (!cf || future_get_ops (cf) != &composite_ops) {
        errno = EINVAL;
        return NULL;
    }
    return future_impl (cf);
}

int flux_future_push (flux_future_t *cf, const char *name, flux_future_t *f)
{
    struct composite *c;
    size_t i;

    if (!(c = composite_of (cf)) || !name || !f) {
        errno = EINVAL;
        return -1;
    }
    for (i = 0; i < c->n; i++) {
        if (!strcmp (c->v[i].name, name)) {
            errno = EEXIST;
            return -1;
        }
    }
    if (c->n == c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 8;
        struct child *nv = realloc (c->v, ncap * sizeof (*nv));
        if (!nv)
            return -1;
        c->v = nv;
        c->cap = ncap;
    }
    if (!(c->v[c->n].name = strdup (name)))
        return -1;
    c->v[c->n].f = f;
    c->n++;
    if (c->then_started && child_then (c, f) < 0) {
        c->n--;
        free (c->v[c->n].name);
        return -1;
    }
    return 0;
}

flux_future_t *flux_future_get_child (flux_future_t *cf, const char *name)
{
    struct composite *c = composite_of (cf);
    size_t i;

    for (i = 0; c && name && i < c->n; i++)
        if (!strcmp (c->v[i].name, name))
            return c->v[i].f;
    errno = ENOENT;
    return NULL;
}

const char *flux_future_first_child (flux_future_t *cf)
{
    struct composite *c = composite_of (cf);

    if (!c || c->n == 0)
        return NULL;
    c->iter = 0;
    return c->v[0].name;
}

const char *flux_future_next_child (flux_future_t *cf)
{
    struct composite *c = composite_of (cf);

    if (!c || c->iter + 1 >= c->n)
        return NULL;
    return c->v[++c->iter].name;
}

/* Chains */

#define CHAIN_AUX "flux::chain"

struct chain {
    flux_future_t *next;
    flux_future_t *prev;
    flux_future_t *follow; /* the future given to flux_future_continue */
    flux_continuation_f and_cb, or_cb;
    void *and_arg, *or_arg;
    bool prev_handled;
    bool then_started;
};

static void follow_cb (flux_future_t *f, void *arg)
{
    struct chain *c = arg;
    pass_result (c->next, f);
}

static void chain_handle_prev (struct chain *c)
{
    c->prev_handled = true;
    if (flux_future_get (c->prev, NULL) == 0) {
        if (c->and_cb)
            c->and_cb (c->prev, c->and_arg);
        else
            pass_result (c->next, c->prev);
    }
    else {
        if (c->or_cb)
            c->or_cb (c->prev, c->or_arg);
        else
            pass_result (c->next, c->prev);
    }
}

static void prev_cb (flux_future_t *prev, void *arg)
{
    struct chain *c = arg;
    if (!c->prev_handled)
        chain_handle_prev (c);
}

static void chain_on_then (flux_future_t *f)
{
    struct chain *c = future_impl (f);

    c->then_started = true;
    if (!flux_future_get_reactor (c->prev))
        flux_future_set_reactor (c->prev, flux_future_get_reactor (f));
    if (c->follow)
        (void)flux_future_then (c->follow, -1, follow_cb, c);
    else
        (void)flux_future_then (c->prev, -1, prev_cb, c);
}

static int chain_wait (flux_future_t *f, double timeout)
{
    struct chain *c = future_impl (f);
    double start = monotime ();

    if (!c->prev_handled) {
        if (flux_future_wait_for (c->prev, timeout) < 0)
            return -1;
        chain_handle_prev (c);
    }
    if (flux_future_is_ready (f))
        return 0;
    if (!c->follow) {
        errno = EDEADLK; /* callback neither continued nor failed */
        return -1;
    }
    if (flux_future_wait_for (c->follow, future_remaining (start, timeout)) < 0)
        return -1;
    if (!flux_future_is_ready (f))
        pass_result (f, c->follow);
    return 0;
}

static void chain_destroy (flux_future_t *f)
{
    struct chain *c = future_impl (f);

    flux_future_destroy (c->follow);
    flux_future_destroy (c->prev);
    free (c);
}

static const struct future_ops chain_ops = {
    .on_then = chain_on_then,
    .wait = chain_wait,
    .destroy = chain_destroy,
};

static struct chain *chain_get (flux_future_t *prev)
{
    flux_future_t *next;
    struct chain *c;

    if ((next = flux_future_aux_get (prev, CHAIN_AUX)))
        return future_impl (next);
    if (!(c = calloc (1, sizeof (*c))))
        return NULL;
    if (!(next = future_create_ops (&chain_ops, c))) {
        free (c);
        return NULL;
    }
    c->next = next;
    c->prev = prev;
    flux_future_set_flux (next, flux_future_get_flux (prev));
    if (flux_future_aux_set (prev, CHAIN_AUX, next, NULL) < 0) {
        c->prev = NULL; /* do not destroy the caller's prev */
        flux_future_destroy (next);
        return NULL;
    }
    return c;
}

flux_future_t *flux_future_and_then (flux_future_t *prev,
                                     flux_continuation_f cb, void *arg)
{
    struct chain *c;

    if (!prev || !cb) {
        errno = EINVAL;
        return NULL;
    }
    if (!(c = chain_get (prev)))
        return NULL;
    c->and_cb = cb;
    c->and_arg = arg;
    return c->next;
}

flux_future_t *flux_future_or_then (flux_future_t *prev, flux_continuation_f cb,
                                    void *arg)
{
    struct chain *c;

    if (!prev || !cb) {
        errno = EINVAL;
        return NULL;
    }
    if (!(c = chain_get (prev)))
        return NULL;
    c->or_cb = cb;
    c->or_arg = arg;
    return c->next;
}

int flux_future_continue (flux_future_t *prev, flux_future_t *f)
{
    flux_future_t *next;
    struct chain *c;

    if (!prev || !f || !(next = flux_future_aux_get (prev, CHAIN_AUX))) {
        errno = EINVAL;
        return -1;
    }
    c = future_impl (next);
    if (c->follow) {
        errno = EEXIST;
        return -1;
    }
    c->follow = f;
    if (c->then_started) {
        if (!flux_future_get_reactor (f))
            flux_future_set_reactor (f, flux_future_get_reactor (next));
        return flux_future_then (f, -1, follow_cb, c);
    }
    return 0;
}

void flux_future_continue_error (flux_future_t *prev, int errnum,
                                 const char *errstr)
{
    flux_future_t *next = prev ? flux_future_aux_get (prev, CHAIN_AUX) : NULL;
    if (next)
        flux_future_fulfill_error (next, errnum, errstr);
}
