/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef JOBMGR_HISTORY_H
#define JOBMGR_HISTORY_H
/* history - each user's jobs in the order submitted, for `flux job last`
 * (job-manager.history.get, PROTOCOLS.md 5.2).
 *
 * Per user, an array of job ids (8 bytes a job), kept in id order: FLUIDs
 * begin with their millisecond timestamp, so id order is submission
 * order.  Adding is O(1) (jobs arrive in order; a restart, which adds
 * them in any order, marks the array for one sort at the next request).
 * A job leaving the job table (purged, or an invalid job removed) is not
 * searched for: it only counts as stale, entries no longer in the table
 * are skipped when read, and the array is compacted once half of it is
 * stale.  So nothing here scans all jobs but a request, or a compaction
 * paid for by as many removals.
 *
 * job-manager.history.get (user role): {slice:s} -> {jobs:[I]}, the ids
 * of the requester's own jobs, newest first, as selected by a
 * Python-style slice (libutil/slice.h; "[:1]" is the last job).  ENOENT
 * "job history is empty" if the user has no job, EINVAL for a bad slice,
 * EPROTO for a malformed request.
 */
#include "libflux/flux.h"
#include "jobmgr.h"

struct history *history_create (struct jobmgr *jm);
void history_destroy (struct history *hist);

/* A job entered the job table.  Errors (ENOMEM) are logged. */
void history_add (struct history *hist, const struct job *job);
/* A job left the job table. */
void history_remove (struct history *hist, const struct job *job);

void history_get_request (struct history *hist, const flux_msg_t *msg);

#endif /* !JOBMGR_HISTORY_H */
