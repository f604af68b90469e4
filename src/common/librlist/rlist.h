/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_RLIST_RLIST_H
#define FLUX_RLIST_RLIST_H
/* A set of resources by rank — Rv1 (RFC 20) in memory — and the
 * first-fit allocator sched-simple uses.
 *
 * An rlist holds, for each rank, its hostname, its cores and gpus (idsets
 * of local ids) and which of them are allocated; ranks may be marked down
 * (drained, offline, excluded) so they are skipped by the allocator.
 * All operations are O(ranks touched) or O(ranks * log), never a scan of
 * every rank for each core.
 */
#include <jansson.h>
#include "libflux/flux.h"

struct rlist;

struct rlist *rlist_create (void);
void rlist_destroy (struct rlist *rl);
struct rlist *rlist_copy (const struct rlist *rl); /* all, none allocated */

/* Rv1 <-> rlist.  rlist_from_R accepts the RFC 20 object (version 1,
 * execution.R_lite, nodelist, starttime, expiration); EINVAL with error
 * text on anything malformed, and on an R of more than RLIST_MAX_RANKS
 * ranks or a rank of more than INT_MAX cores or gpus (a few bytes of
 * R_lite can name billions, and each rank costs memory).  O(n log n) for
 * n ranks, in whatever order R_lite lists them.  rlist_to_R emits
 * version 1 with R_lite compressed (ranks with identical children grouped
 * into one idset), nodelist as RFC 29 hostlist strings, and
 * starttime/expiration. */
#define RLIST_MAX_RANKS (1 << 20)
struct rlist *rlist_from_R (json_t *R, flux_error_t *error);
json_t *rlist_to_R (const struct rlist *rl);
void rlist_set_times (struct rlist *rl, double starttime, double expiration);

/* Add one rank: hostname, cores and gpus as idset strings ("0-63", ""). */
int rlist_add_rank (struct rlist *rl, unsigned int rank, const char *hostname,
                    const char *cores, const char *gpus);
/* Discover this node with hwloc: cores (physical cores, one id each),
 * gpus (CUDA/OpenCL/RSMI osdevs) and the hostname, as rank `rank`. */
struct rlist *rlist_from_hwloc (unsigned int rank, flux_error_t *error);
/* Merge b into a (ranks must not overlap: EEXIST). */
int rlist_append (struct rlist *a, const struct rlist *b);
/* Add b to a: ranks of b that a lacks are copied in; a rank in both ends
 * with the union of their cores and gpus.  The result is all free (for
 * summing allocations: the resources of many jobs as one set).  -1 with
 * errno (ENOMEM; then a may hold part of b). */
int rlist_add (struct rlist *a, const struct rlist *b);

int rlist_nnodes (const struct rlist *rl);
int rlist_count_cores (const struct rlist *rl); /* all */
int rlist_count_gpus (const struct rlist *rl);
int rlist_avail_cores (const struct rlist *rl); /* up and not allocated */
char *rlist_ranks (const struct rlist *rl);     /* idset string, caller frees */
char *rlist_nodelist (const struct rlist *rl);  /* hostlist string */

/* Mark ranks (idset string) up or down; down ranks are not allocated. */
int rlist_mark_down (struct rlist *rl, const char *ranks);
int rlist_mark_up (struct rlist *rl, const char *ranks);

/* The request of a job: nnodes (0 = any), nslots, cores and gpus per
 * slot, exclusive (whole nodes). */
struct rlist_request {
    int nnodes;
    int nslots;
    int cores_per_slot;
    int gpus_per_slot;
    int exclusive;
};
/* First fit.  Returns a new rlist of what was taken (and marks it
 * allocated in rl), or NULL with errno:
 *   ENOSPC  - it fits the instance but not now (wait);
 *   EOVERFLOW - it can never fit the instance as configured (deny);
 *   EINVAL  - a malformed request. */
struct rlist *rlist_alloc (struct rlist *rl, const struct rlist_request *req);
/* Return an allocation (an rlist from rlist_alloc or from an R).
 * ENOENT if something in it is not allocated in rl. */
int rlist_free (struct rlist *rl, const struct rlist *alloc);
/* Mark an allocation allocated (scheduler reload: hello replay).
 * EEXIST if some of it is already allocated. */
int rlist_set_allocated (struct rlist *rl, const struct rlist *alloc);

/* Additions (beyond the issue 5 contract).
 *
 * Precisions on the functions above: rlist_copy() keeps the down marks;
 * rlist_mark_down/up() also take "all" and ignore ranks rl does not
 * have; rlist_from_R() accepts an R without nodelist (hosts unknown,
 * and rlist_to_R() then omits nodelist) and parses nslots, which
 * rlist_to_R() emits when set (allocations); rlist_alloc() packs slots
 * onto nodes in rank order, or with nnodes spreads nslots evenly (the
 * first nslots % nnodes chosen nodes take one more), and with exclusive
 * takes whole idle nodes (all their cores and gpus). */

/* rlist_alloc() with a one-line reason in error: for EOVERFLOW, e.g.
 * "unsatisfiable request: 3 nodes requested, the instance has 2"; for
 * ENOSPC "insufficient resources"; for EINVAL what is malformed.
 * An allocation has nslots set (emitted in R) and times 0. */
struct rlist *rlist_alloc_ex (struct rlist *rl, const struct rlist_request *req,
                              flux_error_t *error);
/* Could req ever fit rl (every rank up and free)?  0, or -1 with
 * EOVERFLOW (never) or EINVAL (malformed) and the reason in error.
 * O(distinct node shapes). */
int rlist_check (const struct rlist *rl, const struct rlist_request *req,
                 flux_error_t *error);
/* A new rlist: what a has and b does not, rank by rank (ranks left
 * empty are dropped); a's times, no nslots.  NULL/ENOMEM, EINVAL. */
struct rlist *rlist_diff (const struct rlist *a, const struct rlist *b);
/* Up and free gpus (as rlist_avail_cores). */
int rlist_avail_gpus (const struct rlist *rl);
/* New rlists: the down ranks with all their resources; the allocated
 * resources of every rank that has some (up or down).  Nothing in the
 * copies is allocated.  NULL/ENOMEM. */
struct rlist *rlist_copy_down (const struct rlist *rl);
struct rlist *rlist_copy_allocated (const struct rlist *rl);
/* One-line summary, ranks with identical children grouped, e.g.
 * "rank[0-1]/core[0-3],gpu0 rank2/core0" ("" if empty).  Caller frees. */
char *rlist_dumps (const struct rlist *rl);
/* starttime, expiration (0 = unset) and nslots (0 = unset). */
double rlist_starttime (const struct rlist *rl);
double rlist_expiration (const struct rlist *rl);
int rlist_nslots (const struct rlist *rl);

/* Partial release (RFC 27 sched.free of a subset, by whole ranks).
 * rlist_copy_ranks(): a new rlist of the nodes of rl whose rank is in
 * ranks (all their resources, all free, up marks kept), rl's times, no
 * nslots; ranks rl lacks are ignored.  rlist_remove_ranks(): drop the
 * nodes whose rank is in ranks from rl (its counters follow), returns
 * how many were removed.  Both O(nodes of rl).  EINVAL on NULL
 * arguments, ENOMEM. */
struct idset;
struct rlist *rlist_copy_ranks (const struct rlist *rl,
                                const struct idset *ranks);
int rlist_remove_ranks (struct rlist *rl, const struct idset *ranks);

#endif /* !FLUX_RLIST_RLIST_H */
