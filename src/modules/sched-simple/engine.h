/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* engine.h - the sched-simple engine: an RFC 27 scheduler over an rlist.
 *
 * Start-up (sched_start): resource.acquire (RFC 28) for the inventory and
 * its up/down updates; then job-manager.sched-hello {partial-ok:true},
 * whose responses name the jobs already holding resources (their R is
 * read from the KVS and marked allocated, less the ranks of the
 * response's "free" idset, released already); then
 * job-manager.sched-ready in limited mode (the queue depth) or unlimited
 * mode.  A failure of any of these is logged and stops the reactor with
 * an error, so the module exits (RFC 27/28).
 *
 * sched.alloc: a request that can never fit is denied at once
 * ("unsatisfiable request: ..."); the others wait in a queue ordered by
 * priority, then job id.  Only the head of the queue is tried (first
 * fit, no backfill), whenever something may have changed: a new head,
 * resources freed or up.  A job that does not fit is annotated
 * sched.reason_pending once.  On success R (Rv1, starttime now,
 * expiration now + duration or the instance expiration) is put in a KVS
 * transaction shared by every job allocated in the same loop turn; the
 * SUCCESS responses (with sched.resource_summary) go out when that
 * commit completes.
 *
 * sched.free with final:false (partial release) returns the resources
 * the job holds on the ranks of its R, which must all be held by the
 * job (else an error, nothing freed); the final one returns the rest.
 * Either way the queue is tried again on the next loop turn.
 *
 * The engine never registers handlers or services itself: main.c feeds it
 * the requests, so tests can drive it over loop://.  All functions run in
 * the reactor thread of h.
 */
#ifndef SCHED_SIMPLE_ENGINE_H
#define SCHED_SIMPLE_ENGINE_H

#include <jansson.h>

#include "libflux/flux.h"

typedef struct sched sched_t;

#define SCHED_DEFAULT_QUEUE_DEPTH 8
#define SCHED_MAX_BATCH 1024 /* jobs per R commit */

/* queue_depth >= 1: limited mode with that limit; 0: unlimited.
 * EINVAL, ENOMEM. */
sched_t *sched_create (flux_t *h, int queue_depth);
/* Frees everything; pending alloc requests get no response (the job
 * manager sees the disconnect).  NULL-safe, preserves errno. */
void sched_destroy (sched_t *s);

/* Begin start-up (see above).  -1 if the first RPC cannot be sent. */
int sched_start (sched_t *s);
/* The job manager was reloaded (its job-manager.online event): drop what
 * the old one asked for (pending requests, R commits in flight, the
 * allocations), and say hello again, whose replay rebuilds the
 * allocations.  The resource stream is kept.  Nothing to do before the
 * first hello. */
void sched_restart (sched_t *s);
/* The kvs announced itself (kvs.online): R commits it refused with
 * ENOSYS (it was unloading or absent; nothing was applied) go again.
 * Their jobs stay committing meanwhile. */
void sched_kvs_online (sched_t *s);
/* True once sched-ready has been answered. */
bool sched_is_ready (sched_t *s);

/* Requests (RFC 27).  Malformed ones get EPROTO with text, or are logged
 * and dropped where the protocol has no response (cancel, prioritize). */
void sched_alloc (sched_t *s, const flux_msg_t *msg);
void sched_free (sched_t *s, const flux_msg_t *msg);
void sched_cancel (sched_t *s, const flux_msg_t *msg);
void sched_prioritize (sched_t *s, const flux_msg_t *msg);
void sched_expiration (sched_t *s, const flux_msg_t *msg);
/* sched.disconnect: drop the sender's pending alloc requests. */
void sched_disconnect (sched_t *s, const flux_msg_t *msg);
/* sched.resource-status: {all, down, allocated} as Rv1 objects. */
void sched_resource_status (sched_t *s, const flux_msg_t *msg);
/* feasibility.check {jobspec, ...}: ∅ if it could ever fit, else EINVAL
 * with the reason. */
void sched_feasibility (sched_t *s, const flux_msg_t *msg);

/* {state, mode, queue-depth, pending, committing, allocated, nodes, cores,
 * cores-free, gpus, gpus-free, allocs, annotates, denies, cancels, frees,
 * partial-frees, free-errors,
 * commits, alloc-tries, alloc-time, commit-time} (new reference), or
 * NULL/ENOMEM.  cores-free counts up and free cores; alloc-time is the
 * seconds spent in first fit; commit-time the seconds the R commits
 * took, from sending to the answer, summed over commits. */
json_t *sched_stats (sched_t *s);

#endif /* !SCHED_SIMPLE_ENGINE_H */
