/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* idtab.c - intrusive hash of objects by a 64-bit id (see idtab.h). */
#include <errno.h>
#include <stdlib.h>

#include "idtab.h"

#define JOBTAB_MIN_BUCKETS 256

struct idtab {
    struct idtab_entry **buckets;
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

struct idtab *idtab_create (void)
{
    struct idtab *t;

    if (!(t = calloc (1, sizeof (*t))))
        return NULL;
    if (!(t->buckets = calloc (JOBTAB_MIN_BUCKETS, sizeof (*t->buckets)))) {
        free (t);
        return NULL;
    }
    t->nbuckets = JOBTAB_MIN_BUCKETS;
    return t;
}

void idtab_destroy (struct idtab *t)
{
    if (t) {
        int saved_errno = errno;
        free (t->buckets);
        free (t);
        errno = saved_errno;
    }
}

static int grow (struct idtab *t)
{
    size_t n = t->nbuckets * 2;
    struct idtab_entry **b;

    if (!(b = calloc (n, sizeof (*b))))
        return -1;
    for (size_t i = 0; i < t->nbuckets; i++) {
        struct idtab_entry *e = t->buckets[i];
        while (e) {
            struct idtab_entry *next = e->next;
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

struct idtab_entry *idtab_lookup (struct idtab *t, uint64_t id)
{
    struct idtab_entry *e = t->buckets[slot (id, t->nbuckets)];

    while (e && e->id != id)
        e = e->next;
    return e;
}

int idtab_insert (struct idtab *t, struct idtab_entry *e)
{
    size_t s;

    if (idtab_lookup (t, e->id)) {
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

void idtab_remove (struct idtab *t, struct idtab_entry *e)
{
    struct idtab_entry **pp = &t->buckets[slot (e->id, t->nbuckets)];

    while (*pp && *pp != e)
        pp = &(*pp)->next;
    if (*pp) {
        *pp = e->next;
        e->next = NULL;
        t->count--;
    }
}

size_t idtab_count (const struct idtab *t)
{
    return t->count;
}

void idtab_foreach (struct idtab *t,
                    void (*fn) (struct idtab_entry *e, void *arg), void *arg)
{
    for (size_t i = 0; i < t->nbuckets; i++) {
        struct idtab_entry *next;
        for (struct idtab_entry *e = t->buckets[i]; e; e = next) {
            next = e->next;
            fn (e, arg);
        }
    }
}
