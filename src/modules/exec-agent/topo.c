/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* topo.c - the agent's place in the tree and the shares of a job (see
 * topo.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "overlay/topology.h"
#include "topo.h"

int topo_init (struct topo *t, uint32_t rank, struct topology *tree)
{
    if (!t || !tree || rank >= topology_size (tree)) {
        topology_destroy (tree);
        errno = EINVAL;
        return -1;
    }
    t->rank = rank;
    t->size = topology_size (tree);
    t->tree = tree;
    t->parent = topology_parent (tree, rank);
    t->nchildren = topology_child_count (tree, rank);
    t->children = topology_children (tree, rank);
    return 0;
}

int topo_init_broker (struct topo *t, flux_t *h, flux_error_t *error)
{
    struct topology *tree;
    uint32_t rank;

    if (flux_get_rank (h, &rank) < 0)
        return errprintf (error, "reading rank: %s", strerror (errno));
    if (!(tree = topology_create_broker (h, error)))
        return -1;
    if (topo_init (t, rank, tree) < 0)
        return errprintf (error, "rank %u is not in the tree", rank);
    return 0;
}

void topo_fini (struct topo *t)
{
    if (t) {
        topology_destroy (t->tree);
        t->tree = NULL;
        t->children = NULL;
        t->nchildren = 0;
    }
}

struct idset *topo_share (const struct topo *t, uint32_t root,
                          const struct idset *ranks)
{
    struct idset *share;

    if (root >= t->size) {
        errno = EINVAL;
        return NULL;
    }
    if (!(share = idset_create (t->size, 0)))
        return NULL;
    for (unsigned int id = idset_first (ranks);
         id != IDSET_INVALID_ID && id < t->size; id = idset_next (ranks, id)) {
        if (topology_in_subtree (t->tree, root, id)
            && idset_set (share, id) < 0) {
            idset_destroy (share);
            return NULL;
        }
    }
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
