/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef JOBMGR_PURGE_H
#define JOBMGR_PURGE_H
/* purge - remove inactive jobs from the KVS and the job table
 * (PROTOCOLS.md 5.2):
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

#endif /* !JOBMGR_PURGE_H */
