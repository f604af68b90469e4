/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef RESOURCE_RMAP_H
#define RESOURCE_RMAP_H
/* rmap - an Rv1 object (RFC 20) with its rank <-> hostname map, and the
 * subsets of it the resource services hand out.  Pure (no handle): the
 * unit tests drive it directly.
 *
 * The map follows RFC 20: the nodelist names the ranks of R_lite in
 * ascending rank order, one host per rank.  Every function is O(ranks) or
 * better; rank -> host is a binary search, host -> ranks a hash.
 */
#include <jansson.h>

#include "libflux/flux.h"
#include "libidset/idset.h"

struct rmap;

/* Validate R (version 1, execution.R_lite with disjoint rank idsets and a
 * children.core idset each, execution.nodelist of hostlists naming as many
 * hosts as there are ranks) and index it.  R is referenced, not copied.
 * NULL with errno EINVAL (and the reason in error) or ENOMEM. */
struct rmap *rmap_create (json_t *R, flux_error_t *error);
void rmap_destroy (struct rmap *m);

/* The R given to rmap_create (borrowed). */
json_t *rmap_R (const struct rmap *m);
/* Every rank of R (borrowed). */
const struct idset *rmap_ranks (const struct rmap *m);
/* The host of rank, or NULL (ENOENT) if rank is not in R. */
const char *rmap_host (const struct rmap *m, unsigned int rank);
/* The lowest rank on host, or -1 with ENOENT. */
int rmap_first_rank (struct rmap *m, const char *host);

/* The RFC 29 hostlist of the hosts of ranks (those in R), in rank order.
 * Caller frees.  NULL/ENOMEM. */
char *rmap_nodelist (const struct rmap *m, const struct idset *ranks);

/* A new Rv1 object holding only the given ranks of R: R_lite entries
 * intersected, nodelist filtered, properties intersected (empty ones
 * dropped), starttime/expiration and scheduling kept.  ranks NULL: all.
 * NULL/ENOMEM. */
json_t *rmap_subset (const struct rmap *m, const struct idset *ranks);

/* Parse drain/undrain targets: an RFC 22 idset, or else an RFC 29
 * hostlist whose hosts stand for all their ranks.  EINVAL with text for
 * an empty or malformed target, a rank not in R, or an unknown host. */
struct idset *rmap_targets (struct rmap *m, const char *targets,
                            flux_error_t *error);

/* An empty Rv1 object (version 1, no ranks, times 0).  NULL/ENOMEM. */
json_t *rmap_empty_R (void);

/* Encode an idset as a compact RFC 22 string (ranges); caller frees. */
char *rmap_idset_str (const struct idset *ids);

#endif /* !RESOURCE_RMAP_H */
