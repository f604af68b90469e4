/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* attr.c - client side of broker attributes, with a per-handle cache. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attr.h"
#include "rpc.h"

#define CACHE_AUX "flux::attr_cache"

struct attr_entry {
    struct attr_entry *next;
    char *name;
    char *value;
    int flags;
};

struct attr_cache {
    struct attr_entry *head;
};

static void cache_destroy (void *arg)
{
    struct attr_cache *c = arg;
    struct attr_entry *e;

    while ((e = c->head)) {
        c->head = e->next;
        free (e->name);
        free (e->value);
        free (e);
    }
    free (c);
}

static struct attr_cache *cache_get (flux_t *h)
{
    struct attr_cache *c = flux_aux_get (h, CACHE_AUX);

    if (!c) {
        if (!(c = calloc (1, sizeof (*c))))
            return NULL;
        if (flux_aux_set (h, CACHE_AUX, c, cache_destroy) < 0) {
            free (c);
            return NULL;
        }
    }
    return c;
}

static struct attr_entry *cache_lookup (struct attr_cache *c, const char *name)
{
    struct attr_entry *e;
    for (e = c->head; e; e = e->next)
        if (!strcmp (e->name, name))
            return e;
    return NULL;
}

static struct attr_entry *cache_store (struct attr_cache *c, const char *name,
                                       const char *value, int flags)
{
    struct attr_entry *e = cache_lookup (c, name);
    char *v;

    if (!(v = strdup (value)))
        return NULL;
    if (!e) {
        if (!(e = calloc (1, sizeof (*e))) || !(e->name = strdup (name))) {
            free (e);
            free (v);
            return NULL;
        }
        e->next = c->head;
        c->head = e;
    }
    free (e->value);
    e->value = v;
    e->flags = flags;
    return e;
}

const char *flux_attr_get (flux_t *h, const char *name)
{
    struct attr_cache *c;
    struct attr_entry *e;
    flux_future_t *f;
    const char *value;
    int flags;

    if (!h || !name) {
        errno = EINVAL;
        return NULL;
    }
    if (!(c = cache_get (h)))
        return NULL;
    if ((e = cache_lookup (c, name)) && (e->flags & FLUX_ATTRFLAG_IMMUTABLE))
        return e->value;
    if (!(f = flux_rpc_pack (h, "attr.get", FLUX_NODEID_ANY, 0, "{s:s}", "name",
                             name))
        || flux_rpc_get_unpack (f, "{s:s s:i}", "value", &value, "flags",
                                &flags)
               < 0
        || !(e = cache_store (c, name, value, flags))) {
        flux_future_destroy (f);
        return NULL;
    }
    flux_future_destroy (f);
    return e->value;
}

const char *flux_attr_peek (flux_t *h, const char *name)
{
    struct attr_cache *c = h ? flux_aux_get (h, CACHE_AUX) : NULL;
    struct attr_entry *e;

    if (!c || !name || !(e = cache_lookup (c, name))
        || !(e->flags & FLUX_ATTRFLAG_IMMUTABLE)) {
        errno = ENOENT;
        return NULL;
    }
    return e->value;
}

int flux_attr_set (flux_t *h, const char *name, const char *value)
{
    flux_future_t *f;
    int rc;

    if (!h || !name || !value) {
        errno = EINVAL;
        return -1;
    }
    if (!(f = flux_rpc_pack (h, "attr.set", FLUX_NODEID_ANY, 0, "{s:s s:s}",
                             "name", name, "value", value)))
        return -1;
    rc = flux_future_get (f, NULL);
    flux_future_destroy (f);
    return rc;
}

int flux_attr_set_cacheonly (flux_t *h, const char *name, const char *value)
{
    struct attr_cache *c;

    if (!h || !name || !value) {
        errno = EINVAL;
        return -1;
    }
    if (!(c = cache_get (h))
        || !cache_store (c, name, value, FLUX_ATTRFLAG_IMMUTABLE))
        return -1;
    return 0;
}

static int get_u32 (flux_t *h, const char *name, uint32_t *val)
{
    const char *s;
    char *end;
    unsigned long n;

    if (!val) {
        errno = EINVAL;
        return -1;
    }
    if (!(s = flux_attr_get (h, name)))
        return -1;
    errno = 0;
    n = strtoul (s, &end, 10);
    if (errno || end == s || *end || n > UINT32_MAX) {
        errno = EPROTO;
        return -1;
    }
    *val = (uint32_t)n;
    return 0;
}

int flux_get_rank (flux_t *h, uint32_t *rank)
{
    return get_u32 (h, "rank", rank);
}

int flux_get_size (flux_t *h, uint32_t *size)
{
    return get_u32 (h, "size", size);
}
