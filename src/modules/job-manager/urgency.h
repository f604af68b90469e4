/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef JOBMGR_URGENCY_H
#define JOBMGR_URGENCY_H
/* urgency - job urgency (RFC 30) and the priority derived from it.
 *
 * The default priority is flux-core's: urgency 0 (hold) is priority 0,
 * which is never given resources; urgency 31 (expedite) is the highest
 * priority 4294967295; any other urgency is its own priority.  Ties are
 * broken by submit order (job id) in the alloc queue.
 */
#include <stdint.h>

#include "jobmgr.h"

/* The priority of a job of this urgency (pure). */
int64_t priority_calc (int urgency);

/* A job in PRIORITY gets its priority event; a job in SCHED gets one if
 * its priority changed. */
void priority_assign (struct jobmgr *jm, struct job *job);

/* job-manager.urgency {id:I, urgency:i} -> {old_urgency:i} */
void urgency_request (struct jobmgr *jm, const flux_msg_t *msg);

#endif /* !JOBMGR_URGENCY_H */
