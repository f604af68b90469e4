/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* topo.c - the agent's place in the tree and the shares of a job (see
 * topo.h). */
#include <errno.h>
#include <stdlib.h>

#include "overlay/topology.h"
#include "topo.h"

int topo_init (struct topo *t, uint32_t rank, uint32_t size, int k)
{
    if (!t || size == 0 || rank >= size || k < 1) {
        errno = EINVAL;
        return -1;
    }
    t->rank = rank;
    t->size = size;
    t->k = k;
    t->parent = topology_parent (rank, size, k);
    t->nchildren = topology_child_count (rank, size, k);
    t->first_child
        = t->nchildren > 0 ? topology_first_child (rank, size, k) : -1;
    return 0;
}

static int attr_uint (flux_t *h, const char *name, unsigned long *val)
{
    const char *s = flux_attr_get (h, name);
    char *end;

    if (!s)
        return -1;
    errno = 0;
    *val = strtoul (s, &end, 10);
    if (errno != 0 || end == s || *end != '\0') {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

int topo_init_broker (struct topo *t, flux_t *h)
{
    unsigned long k;
    uint32_t rank, size;

    if (flux_get_rank (h, &rank) < 0 || flux_get_size (h, &size) < 0
        || attr_uint (h, "tbon.fanout", &k) < 0)
        return -1;
    if (k > 1024 * 1024) {
        errno = EINVAL;
        return -1;
    }
    return topo_init (t, rank, size, (int)k);
}

struct idset *topo_share (const struct topo *t, uint32_t root,
                          const struct idset *ranks)
{
    struct idset *sub, *share;
    uint64_t lo = root, hi = root;

    if (root >= t->size) {
        errno = EINVAL;
        return NULL;
    }
    if (!(sub = idset_create (t->size, 0)))
        return NULL;
    /* level by level: the children of [lo, hi] are [k*lo+1, k*hi+k] */
    while (lo < t->size) {
        uint64_t top = hi < t->size ? hi : t->size - 1;
        if (idset_range_set (sub, (unsigned int)lo, (unsigned int)top) < 0) {
            idset_destroy (sub);
            return NULL;
        }
        lo = lo * (uint64_t)t->k + 1;
        hi = hi * (uint64_t)t->k + (uint64_t)t->k;
    }
    share = idset_intersect (sub, ranks);
    idset_destroy (sub);
    return share;
}

int topo_index (const struct topo *t, const struct idset *ranks)
{
    int index = 0;

    if (!idset_test (ranks, t->rank))
        return -1;
    for (unsigned int id = idset_first (ranks);
         id != IDSET_INVALID_ID && id < t->rank; id = idset_next (ranks, id))
        index++;
    return index;
}
