/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef EXEC_AGENT_TOPO_H
#define EXEC_AGENT_TOPO_H

/* topo - an exec agent's place in the TBON and the shares of a job.  The
 * tree is the broker's own (src/overlay/topology.h, from the tbon.topo
 * attribute or, for a custom tree, overlay.topology), so the agents send
 * down exactly the tree the overlay routes on, whatever tbon.topo is.
 *
 * A share (the job's ranks in a subtree) costs O(ranks of the job): each
 * member is tested for subtree membership in O(1), never a walk over
 * every rank of the instance.
 */
#include <stdint.h>

#include "libflux/flux.h"
#include "libidset/idset.h"

struct topology;

struct topo {
    uint32_t rank;
    uint32_t size;
    struct topology *tree; /* owned */
    int64_t parent;        /* -1 on rank 0 */
    int nchildren;
    const uint32_t *children; /* ascending */
};

/* Set t for rank in tree, taking tree (destroyed by topo_fini, also on
 * failure).  -1 with EINVAL. */
int topo_init (struct topo *t, uint32_t rank, struct topology *tree);

/* The broker's tree and rank.  -1 with errno and a message. */
int topo_init_broker (struct topo *t, flux_t *h, flux_error_t *error);

void topo_fini (struct topo *t);

/* The ranks of the subtree rooted at root (root included) that are in
 * ranks: a new idset (possibly empty) for the caller to destroy.  NULL
 * with errno (EINVAL: root out of range). */
struct idset *topo_share (const struct topo *t, uint32_t root,
                          const struct idset *ranks);

/* Index of this broker in ranks (the number of members below it), or -1
 * if it is not a member. */
int topo_index (const struct topo *t, const struct idset *ranks);

#endif /* !EXEC_AGENT_TOPO_H */
