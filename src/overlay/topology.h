/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_TOPOLOGY_H
#define FLUX_TOPOLOGY_H

/* The tree of the overlay (TBON), as flux-core's tbon.topo describes it:
 *
 *   kary:N     rank r's parent is (r-1)/N; kary:0 is flat (every rank is
 *              a child of rank 0), kary:1 a chain
 *   binomial   a binomial tree: r's parent is r with its lowest set bit
 *              cleared
 *   custom     any tree rooted at rank 0, given as a parent per rank (the
 *              config's bootstrap hosts entries)
 *
 * One object describes the whole tree; the broker, the overlay, the
 * groups and state code, the resource module and the exec agents all ask
 * it, never a formula of their own.  Creation is O(size) time and memory;
 * parent, children, level, descendants and in_subtree are O(1),
 * child_toward O(log children).  Children are listed in ascending rank
 * order.  Functions taking a rank return -1 (or false, or NULL) with
 * EINVAL when it is out of range.
 */
#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "libflux/flux.h"

struct topology;

/* Parse spec ("kary:N", "binomial") for size ranks.  "custom" is refused
 * here: use topology_create_custom.  NULL with errno and a message. */
struct topology *topology_create (const char *spec, uint32_t size,
                                  flux_error_t *error);

/* A tree from parent[r] for each rank r (parent[0] is ignored).  Refused
 * (EINVAL with a message) unless every rank reaches rank 0. */
struct topology *topology_create_custom (uint32_t size, const uint32_t *parent,
                                         flux_error_t *error);

/* A tree from the nested {rank, size, children:[...]} object that
 * topology_to_json (t, 0) makes (overlay.topology {rank:0}). */
struct topology *topology_create_json (json_t *o, flux_error_t *error);

/* The tree of the broker under h, for a module: made from the tbon.topo
 * and size attributes, or, for a custom tree, asked of the broker
 * (overlay.topology {rank:0}, synchronously).  NULL with errno and a
 * message. */
struct topology *topology_create_broker (flux_t *h, flux_error_t *error);

void topology_destroy (struct topology *t);

/* The spec it was made from ("kary:32", "binomial", "custom"). */
const char *topology_spec (const struct topology *t);
uint32_t topology_size (const struct topology *t);

/* Parent of rank (-1 for rank 0, errno left unchanged). */
int64_t topology_parent (const struct topology *t, uint32_t rank);

/* The direct children of rank, ascending, and their number. */
int topology_child_count (const struct topology *t, uint32_t rank);
const uint32_t *topology_children (const struct topology *t, uint32_t rank);

/* Index of child among the children of rank, or -1 (EINVAL) if it is not
 * one of them. */
int topology_child_index (const struct topology *t, uint32_t rank,
                          uint32_t child);

/* Depth of rank (root is 0) and of the deepest rank. */
int64_t topology_level (const struct topology *t, uint32_t rank);
int64_t topology_maxlevel (const struct topology *t);

/* Number of ranks in the subtree below rank (not counting rank). */
int64_t topology_descendants (const struct topology *t, uint32_t rank);

/* True if target is in the subtree rooted at rank (rank itself included). */
bool topology_in_subtree (const struct topology *t, uint32_t rank,
                          uint32_t target);

/* The direct child of rank whose subtree holds target (a descendant of
 * rank), or -1 with EINVAL if target is not below rank. */
int64_t topology_child_toward (const struct topology *t, uint32_t rank,
                               uint32_t target);

/* The subtree at rank as {rank:i, size:i, children:[...]} (flux-core's
 * overlay.topology).  NULL with errno. */
json_t *topology_to_json (const struct topology *t, uint32_t rank);

#endif /* !FLUX_TOPOLOGY_H */
