/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* rlist_private.h - the inside of struct rlist, shared by the files of
 * librlist (rlist.c: the set and its indexes; rlist_R.c: Rv1 in and out;
 * rlist_alloc.c: first fit; rlist_hwloc.c: discovery).
 *
 * Nodes are kept in an array sorted by rank (binary search).  Each node
 * has its cores and gpus (all) and the free subsets.  Two idsets keyed by
 * rank index the nodes the allocator looks at: 'partial' holds the up
 * nodes with at least one free core, 'idle' the up nodes with nothing
 * allocated.  The 'shapes' table counts nodes by (cores, gpus) so the
 * "can it ever fit" question costs O(distinct shapes), not O(nodes).
 */
#ifndef FLUX_RLIST_PRIVATE_H
#define FLUX_RLIST_PRIVATE_H

#include <stdbool.h>

#include "libidset/idset.h"
#include "rlist.h"

struct rnode {
    unsigned int rank;
    char *hostname; /* NULL if unknown */
    struct idset *cores;
    struct idset *gpus;
    struct idset *cores_free;
    struct idset *gpus_free;
    bool up;
    int ncores; /* idset_count (cores), cached */
    int ngpus;
    /* what this node adds to rl->avail_cores / avail_gpus right now */
    int counted_cores;
    int counted_gpus;
};

struct rshape {
    int ncores;
    int ngpus;
    int count;
};

struct rlist {
    struct rnode **nodes; /* sorted by rank */
    int nnodes;
    int maxnodes;
    double starttime;
    double expiration;
    int nslots; /* 0 = unset */
    struct idset *partial;
    struct idset *idle;
    long total_cores;
    long total_gpus;
    long avail_cores;
    long avail_gpus;
    struct rshape *shapes;
    int nshapes;
    int maxshapes;
};

/* A new node taking ownership of cores and gpus (gpus may be NULL: none);
 * all free, up.  NULL/ENOMEM (the idsets are then destroyed). */
struct rnode *rnode__create (unsigned int rank, const char *hostname,
                             struct idset *cores, struct idset *gpus);
void rnode__destroy (struct rnode *n);

/* Binary search; NULL if absent. */
struct rnode *rlist__find (const struct rlist *rl, unsigned int rank);
/* Insert n (ownership passes on success); EEXIST if the rank is there. */
int rlist__insert (struct rlist *rl, struct rnode *n);
/* Refresh the indexes and counters after n's free sets or up changed. */
int rlist__reindex (struct rlist *rl, struct rnode *n);

/* Mark alloc (checked by the caller to be free in rl) allocated. */
int rlist__take (struct rlist *rl, const struct rlist *alloc);

/* Slots of (c cores, g gpus) that fit in cores/gpus counts. */
static inline int rnode__cap (int cores, int gpus, int c, int g)
{
    int cap = c > 0 ? cores / c : 0;
    if (g > 0 && gpus / g < cap)
        cap = gpus / g;
    return cap;
}

#endif /* !FLUX_RLIST_PRIVATE_H */
