/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef RESOURCE_FRAG_H
#define RESOURCE_FRAG_H
/* frag - assembling the instance's R from per-rank fragments.
 *
 * Each rank discovers its own resources; fragments travel up the TBON
 * and are merged on the way.  A fragment may repeat ranks already merged
 * (a subtree reporting again after its module was reloaded): those ranks
 * keep what was merged first.
 */
#include <jansson.h>

#include "librlist/rlist.h"
#include "libflux/flux.h"

/* Merge the ranks of R (an Rv1 object) that *acc does not have yet into
 * *acc (created if NULL).  Returns the number of ranks added, or -1 with
 * errno EINVAL (bad R, with text in error) or ENOMEM; *acc is then
 * unchanged. */
int frag_merge (struct rlist **acc, json_t *R, flux_error_t *error);

/* Merge rlist b the same way (b is not modified). */
int frag_merge_rlist (struct rlist **acc, const struct rlist *b);

/* The ranks of rl as an idset (empty if rl is NULL).  NULL/ENOMEM. */
struct idset *frag_ranks (const struct rlist *rl);

#endif /* !RESOURCE_FRAG_H */
