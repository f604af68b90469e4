/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef JOBMGR_INFO_H
#define JOBMGR_INFO_H
/* info - requests about jobs and the job manager (PROTOCOLS.md 5.2):
 *
 *   getattr    {id, attrs:["jobspec"|"R"|"eventlog"]} -> {attr:...}
 *              (active jobs from memory, inactive ones from the KVS)
 *   getinfo    {} -> {max_jobid}
 *   stats-get  {} -> {journal, active_jobs, inactive_jobs, max_jobid,
 *                     housekeeping, ...}
 *   memo       {id, memo:{k:v|null}, volatile?} -> {}
 *   post-event {id, name, context?} -> {}   (owner; a test hook for the
 *              events other job manager plugins would post: prolog-*,
 *              epilog-*, dependency-*, set-flags, debug.*)
 */
#include "jobmgr.h"

void getattr_request (struct jobmgr *jm, const flux_msg_t *msg);
void getinfo_request (struct jobmgr *jm, const flux_msg_t *msg);
/* job-manager.resource-status (owner): {allocated:R}, the union of the R
 * of the jobs holding resources (PROTOCOLS.md 7). */
void resource_status_request (struct jobmgr *jm, const flux_msg_t *msg);
void stats_request (struct jobmgr *jm, const flux_msg_t *msg);
void memo_request (struct jobmgr *jm, const flux_msg_t *msg);
void post_event_request (struct jobmgr *jm, const flux_msg_t *msg);

#endif /* !JOBMGR_INFO_H */
