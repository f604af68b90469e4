/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* strmap.c - chained string hash map (FNV-1a), doubling at load 1. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strmap.h"
#include "libutil/fnv.h"

struct node {
    struct node *next;
    uint32_t hash;
    void *val;
    char key[];
};

struct strmap {
    struct node **b;
    size_t nb, count;
    strmap_free_f destroy;
};

struct strmap *strmap_create (strmap_free_f destroy)
{
    struct strmap *m = calloc (1, sizeof (*m));

    if (!m)
        return NULL;
    m->nb = 16;
    m->destroy = destroy;
    if (!(m->b = calloc (m->nb, sizeof (*m->b)))) {
        free (m);
        return NULL;
    }
    return m;
}

void strmap_destroy (struct strmap *m)
{
    if (m) {
        int saved_errno = errno;
        size_t i;
        for (i = 0; i < m->nb; i++) {
            struct node *n;
            while ((n = m->b[i])) {
                m->b[i] = n->next;
                if (m->destroy)
                    m->destroy (n->val);
                free (n);
            }
        }
        free (m->b);
        free (m);
        errno = saved_errno;
    }
}

static struct node **find (struct strmap *m, const char *key, uint32_t h)
{
    struct node **pp = &m->b[h & (m->nb - 1)];
    while (*pp && ((*pp)->hash != h || strcmp ((*pp)->key, key) != 0))
        pp = &(*pp)->next;
    return pp;
}

static void grow (struct strmap *m)
{
    size_t nnb = m->nb * 2, i;
    struct node **nb = calloc (nnb, sizeof (*nb));

    if (!nb)
        return; /* stay at this size: still correct, just slower */
    for (i = 0; i < m->nb; i++) {
        struct node *n;
        while ((n = m->b[i])) {
            m->b[i] = n->next;
            n->next = nb[n->hash & (nnb - 1)];
            nb[n->hash & (nnb - 1)] = n;
        }
    }
    free (m->b);
    m->b = nb;
    m->nb = nnb;
}

int strmap_put (struct strmap *m, const char *key, void *val)
{
    uint32_t h = fnv1a32_str (key);
    struct node **pp = find (m, key, h), *n;
    size_t len;

    if ((n = *pp)) {
        if (m->destroy && n->val != val)
            m->destroy (n->val);
        n->val = val;
        return 0;
    }
    len = strlen (key);
    if (!(n = malloc (sizeof (*n) + len + 1)))
        return -1;
    memcpy (n->key, key, len + 1);
    n->hash = h;
    n->val = val;
    n->next = NULL;
    *pp = n;
    if (++m->count > m->nb)
        grow (m);
    return 0;
}

void *strmap_get (struct strmap *m, const char *key)
{
    struct node *n = *find (m, key, fnv1a32_str (key));
    return n ? n->val : NULL;
}

void *strmap_take (struct strmap *m, const char *key)
{
    struct node **pp = find (m, key, fnv1a32_str (key)), *n;
    void *val;

    if (!(n = *pp))
        return NULL;
    *pp = n->next;
    val = n->val;
    free (n);
    m->count--;
    return val;
}

int strmap_delete (struct strmap *m, const char *key)
{
    struct node **pp = find (m, key, fnv1a32_str (key)), *n;

    if (!(n = *pp)) {
        errno = ENOENT;
        return -1;
    }
    *pp = n->next;
    if (m->destroy)
        m->destroy (n->val);
    free (n);
    m->count--;
    return 0;
}

size_t strmap_count (struct strmap *m)
{
    return m->count;
}

int strmap_foreach (struct strmap *m,
                    int (*cb) (const char *key, void *val, void *arg),
                    void *arg)
{
    size_t i;
    struct node *n;

    for (i = 0; i < m->nb; i++)
        for (n = m->b[i]; n; n = n->next)
            if (cb (n->key, n->val, arg))
                return 1;
    return 0;
}
