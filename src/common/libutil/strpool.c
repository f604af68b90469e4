/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* strpool.c - interned strings (see strpool.h).  Each string lives in
 * an entry that also holds its hash, reference count and bucket link,
 * so strpool_put() finds the entry from the string pointer.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libutil/strpool.h"
#include "libutil/fnv.h"

struct entry {
    struct entry *next;
    uint32_t hash;
    uint32_t refs;
    char s[];
};

struct strpool {
    struct entry **buckets;
    size_t mask;
    size_t count;
};

#define MINBUCKETS 64

strpool_t *strpool_create (void)
{
    strpool_t *p;

    if (!(p = calloc (1, sizeof (*p))))
        return NULL;
    if (!(p->buckets = calloc (MINBUCKETS, sizeof (p->buckets[0])))) {
        free (p);
        return NULL;
    }
    p->mask = MINBUCKETS - 1;
    return p;
}

void strpool_destroy (strpool_t *p)
{
    if (p) {
        int saved_errno = errno;
        for (size_t i = 0; i <= p->mask; i++) {
            struct entry *e = p->buckets[i];
            while (e) {
                struct entry *next = e->next;
                free (e);
                e = next;
            }
        }
        free (p->buckets);
        free (p);
        errno = saved_errno;
    }
}

static int grow (strpool_t *p)
{
    size_t size = (p->mask + 1) * 2;
    struct entry **b;

    if (!(b = calloc (size, sizeof (b[0]))))
        return -1;
    for (size_t i = 0; i <= p->mask; i++) {
        struct entry *e = p->buckets[i];
        while (e) {
            struct entry *next = e->next;
            e->next = b[e->hash & (size - 1)];
            b[e->hash & (size - 1)] = e;
            e = next;
        }
    }
    free (p->buckets);
    p->buckets = b;
    p->mask = size - 1;
    return 0;
}

const char *strpool_getn (strpool_t *p, const char *s, size_t len)
{
    uint32_t hash;
    struct entry *e;

    if (!s)
        return NULL;
    hash = fnv1a32 (s, len);
    for (e = p->buckets[hash & p->mask]; e; e = e->next) {
        if (e->hash == hash && !strncmp (e->s, s, len) && e->s[len] == '\0') {
            e->refs++;
            return e->s;
        }
    }
    if (p->count + 1 > p->mask + 1)
        (void)grow (p); /* a failure only lengthens the chains */
    if (!(e = malloc (sizeof (*e) + len + 1)))
        return NULL;
    memcpy (e->s, s, len);
    e->s[len] = '\0';
    e->hash = hash;
    e->refs = 1;
    e->next = p->buckets[hash & p->mask];
    p->buckets[hash & p->mask] = e;
    p->count++;
    return e->s;
}

const char *strpool_get (strpool_t *p, const char *s)
{
    return s ? strpool_getn (p, s, strlen (s)) : NULL;
}

void strpool_put (strpool_t *p, const char *s)
{
    struct entry *e, **pp;

    if (!p || !s)
        return;
    e = (struct entry *)(s - offsetof (struct entry, s));
    if (--e->refs > 0)
        return;
    pp = &p->buckets[e->hash & p->mask];
    while (*pp && *pp != e)
        pp = &(*pp)->next;
    if (*pp)
        *pp = e->next;
    p->count--;
    free (e);
}

size_t strpool_count (const strpool_t *p)
{
    return p ? p->count : 0;
}
