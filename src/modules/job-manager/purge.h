/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef JOBMGR_PURGE_H
#define JOBMGR_PURGE_H
/* purge - remove inactive jobs from the KVS and the job table
 * (PROTOCOLS.md 5.2), on request or automatically:
 *
 *   purge    {age_limit:f, num_limit:i, batch:i, force:b} -> {count}
 *            oldest first, those inactive longer than age_limit seconds
 *            (if >= 0) or beyond the newest num_limit (if >= 0), at most
 *            batch per request; without force, only count them.
 *   purge-id {id:I, force:b} -> {count:1}
 *
 * Purged jobs are announced with the event job-purge-inactive {jobs:[I]}
 * once their removal is committed; the response follows it.
 */
#include "jobmgr.h"

void purge_request (struct jobmgr *jm, const flux_msg_t *msg);
void purge_id_request (struct jobmgr *jm, const flux_msg_t *msg);

/* Automatic purge, as flux-core does it, from the broker's configuration
 * (config.get, streaming: a reload applies at once):
 *   [job-manager]
 *   inactive-age-limit = FSD   purge jobs inactive for longer than this
 *   inactive-num-limit = N     keep at most the newest N inactive jobs
 * Jobs go oldest first, at most PURGE_AUTO_BATCH per commit, as soon as
 * a job is over a limit: a timer is armed for the oldest inactive job's
 * age limit, and a job going inactive past the count limit starts a
 * purge.  An invalid value is logged and the previous one kept.
 * Without a config service (tests over loop://) nothing is purged.
 */
#define PURGE_AUTO_BATCH 1000

struct purge;
struct purge *purge_create (struct jobmgr *jm);
void purge_destroy (struct purge *p);

/* Watch the configuration (from jobmgr_start: after a restart). */
int purge_start (struct purge *p);

/* A job was added to the inactive jobs. */
void purge_inactive_added (struct purge *p);

#endif /* !JOBMGR_PURGE_H */
