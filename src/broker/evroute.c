/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Routing of KVS namespace events by subscription (evroute.h): counts
 * of the holders of each key, per broker and per child, and the
 * subscriptions held until their registration reaches rank 0. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "evroute.h"
#include "strmap.h"

#define CLASS "kvs.namespace-"
#define CLASS_LEN (sizeof (CLASS) - 1)

struct entry {
    int count;         /* holders: local subscribers and children */
    int pending;       /* registrations with the parent not yet acked */
    flux_msg_t **held; /* requests answered once pending is 0 */
    size_t nheld, heldcap;
};

struct evroute {
    struct strmap *keys;      /* key -> struct entry */
    struct strmap **children; /* per child: key -> int (its count) */
    int nchildren;
};

static void entry_free (void *arg)
{
    struct entry *e = arg;
    size_t i;

    if (e) {
        for (i = 0; i < e->nheld; i++)
            flux_msg_decref (e->held[i]);
        free (e->held);
        free (e);
    }
}

struct evroute *evroute_create (int nchildren)
{
    struct evroute *r;
    int i;

    if (!(r = calloc (1, sizeof (*r))))
        return NULL;
    if (!(r->keys = strmap_create (entry_free)))
        goto error;
    if (nchildren > 0) {
        if (!(r->children = calloc (nchildren, sizeof (*r->children))))
            goto error;
        r->nchildren = nchildren;
        for (i = 0; i < nchildren; i++)
            if (!(r->children[i] = strmap_create (free)))
                goto error;
    }
    return r;
error:
    evroute_destroy (r);
    errno = ENOMEM;
    return NULL;
}

void evroute_destroy (struct evroute *r)
{
    if (r) {
        int saved = errno;
        int i;
        for (i = 0; i < r->nchildren; i++)
            strmap_destroy (r->children[i]);
        free (r->children);
        strmap_destroy (r->keys);
        free (r);
        errno = saved;
    }
}

bool evroute_routed (const char *topic)
{
    return !strncmp (topic, CLASS, CLASS_LEN);
}

bool evroute_key (const char *sub, char *key, size_t size)
{
    size_t len = strlen (sub);

    if (len <= CLASS_LEN && !strncmp (sub, CLASS, len))
        len = CLASS_LEN; /* a prefix of the class: all of it */
    else if (!strncmp (sub, CLASS, CLASS_LEN))
        len = strrchr (sub, '-') - sub + 1;
    else
        return false;
    if (len >= size)
        len = CLASS_LEN; /* too long to keep: more, never less */
    memcpy (key, len == CLASS_LEN ? CLASS : sub, len);
    key[len] = '\0';
    return true;
}

static void entry_gc (struct evroute *r, const char *key, struct entry *e)
{
    if (e->count == 0 && e->pending == 0 && e->nheld == 0)
        (void)strmap_delete (r->keys, key);
}

int evroute_ref (struct evroute *r, int holder, const char *key)
{
    struct entry *e = strmap_get (r->keys, key);
    int *n = NULL;

    if (holder >= r->nchildren)
        return 0;
    if (!e) {
        if (!(e = calloc (1, sizeof (*e))))
            return -2;
        if (strmap_put (r->keys, key, e) < 0) {
            free (e);
            return -2;
        }
    }
    if (holder >= 0 && !(n = strmap_get (r->children[holder], key))) {
        if (!(n = calloc (1, sizeof (*n)))
            || strmap_put (r->children[holder], key, n) < 0) {
            free (n);
            entry_gc (r, key, e);
            return -2;
        }
    }
    if (n)
        (*n)++;
    return ++e->count == 1 ? 1 : 0;
}

int evroute_unref (struct evroute *r, int holder, const char *key)
{
    struct entry *e = strmap_get (r->keys, key);
    int *n;

    if (!e || e->count == 0 || holder >= r->nchildren)
        return 0;
    if (holder >= 0) {
        if (!(n = strmap_get (r->children[holder], key)))
            return 0;
        if (--(*n) == 0)
            (void)strmap_delete (r->children[holder], key);
    }
    if (--e->count > 0)
        return 0;
    entry_gc (r, key, e);
    return -1;
}

bool evroute_wanted (struct evroute *r, int child, const char *topic)
{
    struct strmap *m;
    const char *p;
    char key[256];

    if (child < 0 || child >= r->nchildren)
        return false;
    m = r->children[child];
    if (strmap_count (m) == 0)
        return false;
    /* each prefix of topic ending with '-', from CLASS on */
    for (p = topic + CLASS_LEN - 1; p; p = strchr (p + 1, '-')) {
        size_t len = p - topic + 1;
        if (len >= sizeof (key))
            break;
        memcpy (key, topic, len);
        key[len] = '\0';
        if (strmap_get (m, key))
            return true;
    }
    return false;
}

struct clear_ctx {
    struct evroute *r;
    int child;
    void (*dropped) (const char *key, void *arg);
    void *arg;
};

static int clear_key (const char *key, void *val, void *arg)
{
    struct clear_ctx *c = arg;
    struct entry *e = strmap_get (c->r->keys, key);
    int n = *(int *)val;

    if (!e)
        return 0;
    e->count -= n < e->count ? n : e->count;
    if (e->count == 0) {
        entry_gc (c->r, key, e);
        if (c->dropped)
            c->dropped (key, c->arg);
    }
    return 0;
}

void evroute_child_clear (struct evroute *r, int child,
                          void (*dropped) (const char *key, void *arg),
                          void *arg)
{
    struct clear_ctx c = {r, child, dropped, arg};
    struct strmap *old, *fresh;

    if (child < 0 || child >= r->nchildren || !(fresh = strmap_create (free)))
        return;
    old = r->children[child];
    r->children[child] = fresh;
    (void)strmap_foreach (old, clear_key, &c);
    strmap_destroy (old);
}

void evroute_pending (struct evroute *r, const char *key)
{
    struct entry *e = strmap_get (r->keys, key);
    if (e)
        e->pending++;
}

int evroute_hold (struct evroute *r, const char *key, const flux_msg_t *req)
{
    struct entry *e = strmap_get (r->keys, key);
    flux_msg_t **v;

    if (!e || e->pending == 0)
        return 0;
    if (e->nheld == e->heldcap) {
        size_t cap = e->heldcap ? 2 * e->heldcap : 4;
        if (!(v = realloc (e->held, cap * sizeof (*v))))
            return -1;
        e->held = v;
        e->heldcap = cap;
    }
    e->held[e->nheld++] = (flux_msg_t *)flux_msg_incref (req);
    return 1;
}

void evroute_acked (struct evroute *r, const char *key,
                    void (*release) (const flux_msg_t *req, void *arg),
                    void *arg)
{
    struct entry *e = strmap_get (r->keys, key);
    flux_msg_t **held;
    size_t i, n;

    if (!e || e->pending == 0 || --e->pending > 0)
        return;
    held = e->held;
    n = e->nheld;
    e->held = NULL;
    e->nheld = e->heldcap = 0;
    entry_gc (r, key, e); /* e may be gone: release may change the map */
    for (i = 0; i < n; i++) {
        if (release)
            release (held[i], arg);
        flux_msg_decref (held[i]);
    }
    free (held);
}

struct foreach_ctx {
    void (*cb) (const char *key, void *arg);
    void *arg;
};

static int foreach_key (const char *key, void *val, void *arg)
{
    struct foreach_ctx *c = arg;
    if (((struct entry *)val)->count > 0)
        c->cb (key, c->arg);
    return 0;
}

void evroute_foreach (struct evroute *r,
                      void (*cb) (const char *key, void *arg), void *arg)
{
    struct foreach_ctx c = {cb, arg};
    /* cb may not change the map: sub_upstream only marks a key pending */
    (void)strmap_foreach (r->keys, foreach_key, &c);
}

size_t evroute_count (struct evroute *r)
{
    return r ? strmap_count (r->keys) : 0;
}
