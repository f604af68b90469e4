/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* strhash.c - chained string hash map (FNV-1a), doubling at load 1. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strhash.h"
#include "libutil/fnv.h"

struct entry {
    struct entry *next;
    uint32_t hash;
    void *val;
    char key[]; /* NUL-terminated copy */
};

struct strhash {
    struct entry **buckets;
    size_t nbuckets; /* a power of two */
    size_t count;
    strhash_free_f destroy;
};

#define INITIAL_BUCKETS 16

strhash_t *strhash_create (strhash_free_f destroy)
{
    strhash_t *m;

    if (!(m = calloc (1, sizeof (*m))))
        return NULL;
    if (!(m->buckets = calloc (INITIAL_BUCKETS, sizeof (m->buckets[0])))) {
        free (m);
        return NULL;
    }
    m->nbuckets = INITIAL_BUCKETS;
    m->destroy = destroy;
    return m;
}

void strhash_destroy (strhash_t *m)
{
    if (m) {
        int saved_errno = errno;
        for (size_t i = 0; i < m->nbuckets; i++) {
            struct entry *e = m->buckets[i];
            while (e) {
                struct entry *next = e->next;
                if (m->destroy)
                    m->destroy (e->val);
                free (e);
                e = next;
            }
        }
        free (m->buckets);
        free (m);
        errno = saved_errno;
    }
}

static struct entry **find (strhash_t *m, const char *key, uint32_t hash)
{
    struct entry **ep = &m->buckets[hash & (m->nbuckets - 1)];

    while (*ep && ((*ep)->hash != hash || strcmp ((*ep)->key, key) != 0))
        ep = &(*ep)->next;
    return ep;
}

/* Double the table.  On allocation failure the map just stays denser. */
static void grow (strhash_t *m)
{
    size_t n = m->nbuckets * 2;
    struct entry **nb;

    if (!(nb = calloc (n, sizeof (nb[0]))))
        return;
    for (size_t i = 0; i < m->nbuckets; i++) {
        struct entry *e = m->buckets[i];
        while (e) {
            struct entry *next = e->next;
            struct entry **slot = &nb[e->hash & (n - 1)];
            e->next = *slot;
            *slot = e;
            e = next;
        }
    }
    free (m->buckets);
    m->buckets = nb;
    m->nbuckets = n;
}

int strhash_insert (strhash_t *m, const char *key, void *val)
{
    uint32_t hash;
    struct entry **ep, *e;
    size_t len;

    if (!m || !key) {
        errno = EINVAL;
        return -1;
    }
    hash = fnv1a32_str (key);
    ep = find (m, key, hash);
    if (*ep) {
        errno = EEXIST;
        return -1;
    }
    len = strlen (key);
    if (!(e = malloc (sizeof (*e) + len + 1)))
        return -1;
    memcpy (e->key, key, len + 1);
    e->hash = hash;
    e->val = val;
    e->next = NULL;
    *ep = e;
    if (++m->count > m->nbuckets)
        grow (m);
    return 0;
}

void *strhash_lookup (strhash_t *m, const char *key)
{
    struct entry *e;

    if (!m || !key)
        return NULL;
    e = *find (m, key, fnv1a32_str (key));
    return e ? e->val : NULL;
}

void *strhash_take (strhash_t *m, const char *key)
{
    struct entry **ep, *e;
    void *val;

    if (!m || !key)
        return NULL;
    ep = find (m, key, fnv1a32_str (key));
    if (!(e = *ep))
        return NULL;
    *ep = e->next;
    val = e->val;
    free (e);
    m->count--;
    return val;
}

int strhash_delete (strhash_t *m, const char *key)
{
    struct entry **ep, *e;

    if (!m || !key) {
        errno = EINVAL;
        return -1;
    }
    ep = find (m, key, fnv1a32_str (key));
    if (!(e = *ep)) {
        errno = ENOENT;
        return -1;
    }
    *ep = e->next;
    m->count--;
    if (m->destroy)
        m->destroy (e->val);
    free (e);
    return 0;
}

size_t strhash_count (strhash_t *m)
{
    return m ? m->count : 0;
}

int strhash_foreach (strhash_t *m,
                     int (*cb) (const char *key, void *val, void *arg),
                     void *arg)
{
    if (!m || !cb)
        return 0;
    for (size_t i = 0; i < m->nbuckets; i++) {
        for (struct entry *e = m->buckets[i]; e; e = e->next) {
            int rc = cb (e->key, e->val, arg);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}
