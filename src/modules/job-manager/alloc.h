/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef JOBMGR_ALLOC_H
#define JOBMGR_ALLOC_H
/* alloc - the job manager's side of RFC 27 (resource allocation).
 *
 * Jobs in SCHED with a priority above 0 wait in the alloc queue, a heap
 * ordered by priority (highest first), then id (oldest first).  Once per
 * loop iteration alloc_schedule() sends sched.alloc for the best jobs,
 * as many as the scheduler's mode allows (unlimited, or limited to
 * 'limit' requests in flight).  In limited mode, when a waiting job
 * outranks one whose request is in flight, the lower one is canceled
 * (sched.cancel) to make room.  sched.alloc and sched.free are matched
 * by job id (matchtag 0); responses arrive through alloc_response() and
 * free_response() (only the final sched.free of a job asks for one).  A
 * conventional error response, or the scheduler's disconnect, suspends
 * scheduling until the next sched-hello/ready.
 */
#include <jansson.h>

#include "jobmgr.h"

struct alloc *alloc_create (struct jobmgr *jm);
void alloc_destroy (struct alloc *a);

/* A job entered SCHED (or got a priority): queue it (held jobs, with
 * priority 0, are not queued). */
void alloc_enqueue (struct alloc *a, struct job *job);
/* A job leaves SCHED: unqueue it and cancel its request, if any. */
void alloc_dequeue (struct alloc *a, struct job *job);
/* A job in SCHED got a new priority. */
void alloc_reprioritize (struct alloc *a, struct job *job);
/* Send sched.cancel for a job's outstanding request (once). */
void alloc_cancel (struct alloc *a, struct job *job);
/* Send sched.free for a job holding resources (once; when the scheduler
 * is ready).  To a scheduler that said partial-ok at hello it carries
 * final:true and the R of the ranks not yet released. */
void alloc_free (struct alloc *a, struct job *job);
/* A partial release of ranks (an idset string) was posted: a scheduler
 * that said partial-ok gets sched.free {id, R of those ranks,
 * final:false} (no response), at once if it is ready, else after its
 * ready (ranks released before its hello are in the hello's "free"
 * instead).  Others get nothing: they free the whole R at the end. */
void alloc_release (struct alloc *a, struct job *job, const char *ranks);

/* Once per loop iteration: send prioritize and alloc requests. */
void alloc_schedule (struct alloc *a);

/* Queue administration (queue.c): a stopped queue sends no sched.alloc
 * and cancels the requests in flight. */
void alloc_queue_start (struct alloc *a, bool start);
bool alloc_queue_started (struct alloc *a);

size_t alloc_queue_length (struct alloc *a);
size_t alloc_pending_count (struct alloc *a);
json_t *alloc_stats (struct alloc *a);

/* Message handlers. */
void alloc_hello (struct alloc *a, const flux_msg_t *msg);
void alloc_ready (struct alloc *a, const flux_msg_t *msg);
void alloc_response (struct alloc *a, const flux_msg_t *msg);
void free_response (struct alloc *a, const flux_msg_t *msg);
/* A client went away: if it was the scheduler, suspend. */
void alloc_disconnect (struct alloc *a, const flux_msg_t *msg);

/* Order of the alloc queue: <0 if a goes before b (pure). */
int alloc_queue_cmp (const void *a, const void *b);

#endif /* !JOBMGR_ALLOC_H */
