/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef EXEC_AGENT_TOPO_H
#define EXEC_AGENT_TOPO_H

/* topo - an exec agent's place in the TBON (broker attributes rank, size,
 * tbon.fanout over src/overlay/topology.h), and the shares of a job.
 * Everything the agent knows of the tree is here, so that a configured
 * tbon.topo can replace the k-ary tree in one file.
 *
 * The subtree of a rank in a k-ary tree is one interval of ranks per
 * level below it, so a share (the job's ranks in a subtree) costs
 * O(depth) interval operations on idsets, never a walk over every rank.
 */
#include <stdint.h>

#include "libflux/flux.h"
#include "libidset/idset.h"

struct topo {
    uint32_t rank;
    uint32_t size;
    int k;
    int64_t parent;      /* -1 on rank 0 */
    int64_t first_child; /* -1 for a leaf */
    int nchildren;
};

/* Set t for rank of size brokers with fanout k.  -1 with EINVAL. */
int topo_init (struct topo *t, uint32_t rank, uint32_t size, int k);

/* Read rank, size and tbon.fanout from the broker.  -1 with errno. */
int topo_init_broker (struct topo *t, flux_t *h);

/* The ranks of the subtree rooted at root (root included) that are in
 * ranks: a new idset (possibly empty) for the caller to destroy.  NULL
 * with errno (EINVAL: root out of range). */
struct idset *topo_share (const struct topo *t, uint32_t root,
                          const struct idset *ranks);

/* Index of this broker in ranks (the number of members below it), or -1
 * if it is not a member. */
int topo_index (const struct topo *t, const struct idset *ranks);

#endif /* !EXEC_AGENT_TOPO_H */
