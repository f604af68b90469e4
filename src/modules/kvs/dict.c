/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* dict.c - string-keyed hash map (chained, FNV-1a, doubles when the load
 * factor passes 1).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dict.h"
#include "libutil/fnv.h"

struct item {
    struct item *next;
    uint32_t hash;
    void *val;
    char key[];
};

struct dict {
    struct item **bucket;
    size_t nbuckets; /* power of 2 */
    size_t count;
    dict_free_f destroy;
};

struct dict *dict_create (dict_free_f destroy)
{
    struct dict *d = calloc (1, sizeof (*d));

    if (!d)
        return NULL;
    d->nbuckets = 16;
    if (!(d->bucket = calloc (d->nbuckets, sizeof (d->bucket[0])))) {
        free (d);
        return NULL;
    }
    d->destroy = destroy;
    return d;
}

void dict_destroy (struct dict *d)
{
    if (d) {
        int saved_errno = errno;
        for (size_t i = 0; i < d->nbuckets; i++) {
            struct item *it = d->bucket[i];
            while (it) {
                struct item *next = it->next;
                if (d->destroy)
                    d->destroy (it->val);
                free (it);
                it = next;
            }
        }
        free (d->bucket);
        free (d);
        errno = saved_errno;
    }
}

static struct item **find (struct dict *d, const char *key, uint32_t hash)
{
    struct item **pp = &d->bucket[hash & (d->nbuckets - 1)];

    while (*pp && ((*pp)->hash != hash || strcmp ((*pp)->key, key) != 0))
        pp = &(*pp)->next;
    return pp;
}

static void grow (struct dict *d)
{
    size_t n = d->nbuckets * 2;
    struct item **b = calloc (n, sizeof (b[0]));

    if (!b)
        return; /* keep working with longer chains */
    for (size_t i = 0; i < d->nbuckets; i++) {
        struct item *it = d->bucket[i];
        while (it) {
            struct item *next = it->next;
            it->next = b[it->hash & (n - 1)];
            b[it->hash & (n - 1)] = it;
            it = next;
        }
    }
    free (d->bucket);
    d->bucket = b;
    d->nbuckets = n;
}

int dict_insert (struct dict *d, const char *key, void *val)
{
    struct item **pp, *it;
    uint32_t hash;
    size_t len;

    if (!d || !key) {
        errno = EINVAL;
        return -1;
    }
    hash = fnv1a32_str (key);
    if (*(pp = find (d, key, hash))) {
        errno = EEXIST;
        return -1;
    }
    len = strlen (key);
    if (!(it = malloc (sizeof (*it) + len + 1)))
        return -1;
    memcpy (it->key, key, len + 1);
    it->hash = hash;
    it->val = val;
    it->next = NULL;
    *pp = it;
    if (++d->count > d->nbuckets)
        grow (d);
    return 0;
}

void *dict_lookup (struct dict *d, const char *key)
{
    struct item *it;

    if (!d || !key)
        return NULL;
    it = *find (d, key, fnv1a32_str (key));
    return it ? it->val : NULL;
}

void *dict_take (struct dict *d, const char *key)
{
    struct item **pp, *it;
    void *val;

    if (!d || !key)
        return NULL;
    pp = find (d, key, fnv1a32_str (key));
    if (!(it = *pp))
        return NULL;
    *pp = it->next;
    val = it->val;
    free (it);
    d->count--;
    return val;
}

int dict_delete (struct dict *d, const char *key)
{
    struct item **pp, *it;

    if (!d || !key) {
        errno = EINVAL;
        return -1;
    }
    pp = find (d, key, fnv1a32_str (key));
    if (!(it = *pp)) {
        errno = ENOENT;
        return -1;
    }
    *pp = it->next;
    if (d->destroy)
        d->destroy (it->val);
    free (it);
    d->count--;
    return 0;
}

size_t dict_count (struct dict *d)
{
    return d ? d->count : 0;
}

int dict_foreach (struct dict *d,
                  int (*cb) (const char *key, void *val, void *arg), void *arg)
{
    if (!d || !cb)
        return 0;
    for (size_t i = 0; i < d->nbuckets; i++) {
        for (struct item *it = d->bucket[i]; it; it = it->next) {
            int rc = cb (it->key, it->val, arg);
            if (rc)
                return rc;
        }
    }
    return 0;
}
