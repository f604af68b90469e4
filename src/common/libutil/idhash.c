/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* idhash.c - intrusive hash of objects by a 64-bit id (see idhash.h). */
#include <errno.h>
#include <stdlib.h>

#include "idhash.h"

#define JOBTAB_MIN_BUCKETS 256

struct idhash {
    struct idhash_entry **buckets;
    size_t nbuckets; /* a power of 2 */
    size_t count;
};

/* FLUIDs carry a millisecond timestamp in their high bits and a sequence
 * in the low ones: mix everything into the low bits (splitmix64 finish).
 */
static size_t slot (uint64_t id, size_t nbuckets)
{
    id ^= id >> 30;
    id *= UINT64_C (0xbf58476d1ce4e5b9);
    id ^= id >> 27;
    id *= UINT64_C (0x94d049bb133111eb);
    id ^= id >> 31;
    return (size_t)(id & (nbuckets - 1));
}

struct idhash *idhash_create (void)
{
    struct idhash *t;

    if (!(t = calloc (1, sizeof (*t))))
        return NULL;
    if (!(t->buckets = calloc (JOBTAB_MIN_BUCKETS, sizeof (*t->buckets)))) {
        free (t);
        return NULL;
    }
    t->nbuckets = JOBTAB_MIN_BUCKETS;
    return t;
}

void idhash_destroy (struct idhash *t)
{
    if (t) {
        int saved_errno = errno;
        free (t->buckets);
        free (t);
        errno = saved_errno;
    }
}

static int grow (struct idhash *t)
{
    size_t n = t->nbuckets * 2;
    struct idhash_entry **b;

    if (!(b = calloc (n, sizeof (*b))))
        return -1;
    for (size_t i = 0; i < t->nbuckets; i++) {
        struct idhash_entry *e = t->buckets[i];
        while (e) {
            struct idhash_entry *next = e->next;
            size_t s = slot (e->id, n);
            e->next = b[s];
            b[s] = e;
            e = next;
        }
    }
    free (t->buckets);
    t->buckets = b;
    t->nbuckets = n;
    return 0;
}

struct idhash_entry *idhash_lookup (struct idhash *t, uint64_t id)
{
    struct idhash_entry *e = t->buckets[slot (id, t->nbuckets)];

    while (e && e->id != id)
        e = e->next;
    return e;
}

int idhash_insert (struct idhash *t, struct idhash_entry *e)
{
    size_t s;

    if (idhash_lookup (t, e->id)) {
        errno = EEXIST;
        return -1;
    }
    if (t->count >= t->nbuckets && grow (t) < 0)
        return -1;
    s = slot (e->id, t->nbuckets);
    e->next = t->buckets[s];
    t->buckets[s] = e;
    t->count++;
    return 0;
}

void idhash_remove (struct idhash *t, struct idhash_entry *e)
{
    struct idhash_entry **pp = &t->buckets[slot (e->id, t->nbuckets)];

    while (*pp && *pp != e)
        pp = &(*pp)->next;
    if (*pp) {
        *pp = e->next;
        e->next = NULL;
        t->count--;
    }
}

size_t idhash_count (const struct idhash *t)
{
    return t->count;
}

void idhash_foreach (struct idhash *t,
                     void (*fn) (struct idhash_entry *e, void *arg), void *arg)
{
    for (size_t i = 0; i < t->nbuckets; i++) {
        for (struct idhash_entry *e = t->buckets[i]; e; e = e->next)
            fn (e, arg);
    }
}
