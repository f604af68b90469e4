/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* idhash.c - 64-bit id -> pointer map (see idhash.h).
 *
 * A slot is empty when its value is NULL.  FLUIDs keep the sequence
 * and generator in the low bits and the time in the high bits, so ids
 * are mixed (splitmix64 finalizer) before they pick a slot.
 */
#include <errno.h>
#include <stdlib.h>

#include "idhash.h"

struct slot {
    uint64_t id;
    void *val;
};

struct idhash {
    struct slot *slots;
    size_t mask; /* size - 1, size a power of 2 */
    size_t count;
};

#define MINSIZE 64

static uint64_t mix (uint64_t x)
{
    x ^= x >> 30;
    x *= UINT64_C (0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C (0x94d049bb133111eb);
    x ^= x >> 31;
    return x;
}

idhash_t *idhash_create (void)
{
    idhash_t *h;

    if (!(h = calloc (1, sizeof (*h))))
        return NULL;
    if (!(h->slots = calloc (MINSIZE, sizeof (h->slots[0])))) {
        free (h);
        return NULL;
    }
    h->mask = MINSIZE - 1;
    return h;
}

void idhash_destroy (idhash_t *h)
{
    if (h) {
        int saved_errno = errno;
        free (h->slots);
        free (h);
        errno = saved_errno;
    }
}

static size_t find (const idhash_t *h, uint64_t id)
{
    size_t i = mix (id) & h->mask;

    while (h->slots[i].val && h->slots[i].id != id)
        i = (i + 1) & h->mask;
    return i;
}

static int grow (idhash_t *h)
{
    size_t oldsize = h->mask + 1;
    struct slot *old = h->slots;
    struct slot *new;

    if (!(new = calloc (oldsize * 2, sizeof (new[0]))))
        return -1;
    h->slots = new;
    h->mask = oldsize * 2 - 1;
    for (size_t i = 0; i < oldsize; i++) {
        if (old[i].val)
            h->slots[find (h, old[i].id)] = old[i];
    }
    free (old);
    return 0;
}

int idhash_insert (idhash_t *h, uint64_t id, void *val)
{
    size_t i;

    if (!h || !val) {
        errno = EINVAL;
        return -1;
    }
    if ((h->count + 1) * 2 > h->mask + 1 && grow (h) < 0)
        return -1;
    i = find (h, id);
    if (h->slots[i].val) {
        errno = EEXIST;
        return -1;
    }
    h->slots[i].id = id;
    h->slots[i].val = val;
    h->count++;
    return 0;
}

void *idhash_lookup (const idhash_t *h, uint64_t id)
{
    if (!h)
        return NULL;
    return h->slots[find (h, id)].val;
}

/* Backward-shift deletion: move later members of the probe run into
 * the hole when their home slot allows it, so no tombstones are needed.
 */
void *idhash_remove (idhash_t *h, uint64_t id)
{
    size_t i, j;
    void *val;

    if (!h)
        return NULL;
    i = find (h, id);
    if (!(val = h->slots[i].val))
        return NULL;
    j = i;
    for (;;) {
        size_t home;
        j = (j + 1) & h->mask;
        if (!h->slots[j].val)
            break;
        home = mix (h->slots[j].id) & h->mask;
        /* leave slot j alone if its home lies cyclically in (i, j] */
        if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
            continue;
        h->slots[i] = h->slots[j];
        i = j;
    }
    h->slots[i].val = NULL;
    h->slots[i].id = 0;
    h->count--;
    return val;
}

size_t idhash_count (const idhash_t *h)
{
    return h ? h->count : 0;
}

int idhash_foreach (const idhash_t *h,
                    int (*cb) (uint64_t id, void *val, void *arg), void *arg)
{
    if (!h || !cb)
        return 0;
    for (size_t i = 0; i <= h->mask; i++) {
        int rc;
        if (h->slots[i].val && (rc = cb (h->slots[i].id, h->slots[i].val, arg)))
            return rc;
    }
    return 0;
}
