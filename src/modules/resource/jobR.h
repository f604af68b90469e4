/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef RESOURCE_JOBR_H
#define RESOURCE_JOBR_H

/* jobR.h - the R of an instance that runs as a job of another (RFC 8).
 *
 * The sub-instance's resources are exactly its job's R in the parent.
 * Its broker ranks are 0..size-1, one per node of the job in the order of
 * R's ranks (the job shell gives the broker on the lowest-ranked node
 * PMI rank 0, and so on), so the parent's ranks are renumbered to that
 * order: what flux-core's resource module does with rlist_remap().
 */
#include <jansson.h>

#include "libflux/flux.h"

/* A copy of Rv1 R with the execution ranks renumbered 0..n-1 in
 * ascending order of the original ranks (nodelist order is unchanged, as
 * it follows the ranks).  NULL with error set if R is malformed. */
json_t *jobR_remap (json_t *R, flux_error_t *error);

/* Fetch the R of job JOBID (any job id form) from the instance at
 * PARENT_URI (job-info.lookup, so a guest may read its own job's R) and
 * renumber it; NULL with error set on failure.  Blocks (the parent is a
 * local socket); called once, at module load. */
json_t *jobR_fetch (const char *parent_uri, const char *jobid,
                    flux_error_t *error);

#endif /* !RESOURCE_JOBR_H */
