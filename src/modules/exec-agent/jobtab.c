/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* jobtab.c - intrusive hash of jobs by id (see jobtab.h). */
#include <errno.h>
#include <stdlib.h>

#include "jobtab.h"

#define JOBTAB_MIN_BUCKETS 256

struct jobtab {
    struct jobtab_entry **buckets;
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

struct jobtab *jobtab_create (void)
{
    struct jobtab *t;

    if (!(t = calloc (1, sizeof (*t))))
        return NULL;
    if (!(t->buckets = calloc (JOBTAB_MIN_BUCKETS, sizeof (*t->buckets)))) {
        free (t);
        return NULL;
    }
    t->nbuckets = JOBTAB_MIN_BUCKETS;
    return t;
}

void jobtab_destroy (struct jobtab *t)
{
    if (t) {
        int saved_errno = errno;
        free (t->buckets);
        free (t);
        errno = saved_errno;
    }
}

static int grow (struct jobtab *t)
{
    size_t n = t->nbuckets * 2;
    struct jobtab_entry **b;

    if (!(b = calloc (n, sizeof (*b))))
        return -1;
    for (size_t i = 0; i < t->nbuckets; i++) {
        struct jobtab_entry *e = t->buckets[i];
        while (e) {
            struct jobtab_entry *next = e->next;
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

struct jobtab_entry *jobtab_lookup (struct jobtab *t, uint64_t id)
{
    struct jobtab_entry *e = t->buckets[slot (id, t->nbuckets)];

    while (e && e->id != id)
        e = e->next;
    return e;
}

int jobtab_insert (struct jobtab *t, struct jobtab_entry *e)
{
    size_t s;

    if (jobtab_lookup (t, e->id)) {
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

void jobtab_remove (struct jobtab *t, struct jobtab_entry *e)
{
    struct jobtab_entry **pp = &t->buckets[slot (e->id, t->nbuckets)];

    while (*pp && *pp != e)
        pp = &(*pp)->next;
    if (*pp) {
        *pp = e->next;
        e->next = NULL;
        t->count--;
    }
}

size_t jobtab_count (const struct jobtab *t)
{
    return t->count;
}

void jobtab_foreach (struct jobtab *t,
                     void (*fn) (struct jobtab_entry *e, void *arg), void *arg)
{
    for (size_t i = 0; i < t->nbuckets; i++) {
        for (struct jobtab_entry *e = t->buckets[i]; e; e = e->next)
            fn (e, arg);
    }
}
