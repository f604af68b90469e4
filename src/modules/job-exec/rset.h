/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef JOB_EXEC_RSET_H
#define JOB_EXEC_RSET_H

/* rset - what job-exec needs from a job's R (RFC 20, version 1): the set
 * of execution targets (the union of R_lite[].rank) and the validity
 * window (starttime, expiration; 0 means unset).  Cores, GPUs, hostnames
 * and the scheduling key are the shell's business and are not decoded.
 */
#include <jansson.h>

#include "libflux/flux.h"
#include "libidset/idset.h"

struct rset {
    struct idset *ranks; /* execution targets, never empty */
    double starttime;    /* 0: unset */
    double expiration;   /* 0: unset */
    json_t *R;           /* the R decoded (a reference), for rset_hosts() */
};

/* Decode R into rs (which the caller then owns: rset_clear()).
 * Checks: an object with version 1; execution.R_lite a non-empty array
 * of objects with a valid RFC 22 "rank" idset and a "children" object;
 * starttime and expiration, if present, numbers >= 0 with expiration >
 * starttime when both are set.  -1 with errno EINVAL and a reason in
 * error on failure (rs untouched), ENOMEM.
 */
int rset_decode (json_t *R, struct rset *rs, flux_error_t *error);

/* The hostnames of those ranks of R, as an RFC 29 hostlist
 * ("node[1-2,5]"), for messages: the i-th rank of R (ascending, over all
 * of R_lite) is the i-th host of execution.nodelist.  NULL (errno EINVAL)
 * when R has no usable nodelist or a rank is not in R; ENOMEM.  The
 * caller frees the string.
 */
char *rset_hosts (json_t *R, const struct idset *ranks);

/* Free what rset_decode() allocated; rs may then be decoded again. */
void rset_clear (struct rset *rs);

#endif /* !JOB_EXEC_RSET_H */
