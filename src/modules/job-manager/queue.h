/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef JOBMGR_QUEUE_H
#define JOBMGR_QUEUE_H
/* queue - administration of the (single, anonymous) job queue and the
 * requests that wait on the whole job population (PROTOCOLS.md 5.2):
 *
 *   queue-list, queue-status, queue-enable (a disabled queue refuses
 *   submissions), queue-start (a stopped queue allocates nothing),
 *   drain (answers once no job is active), idle (answers {pending} once
 *   no job runs or waits for an allocation), alloc-query.
 *
 * Named queues are not supported: a request naming one gets EINVAL.
 *
 * The queue's state (enabled, started, and the reasons) is kept in the
 * KVS key checkpoint.job-manager, written with the next eventlog commit
 * after each change, {version:1, queue:[{enable:b, start:b,
 * disable_reason?:s, stop_reason?:s}]}, and restored when the module
 * starts: a queue stopped or disabled stays so across a restart.  A stop
 * with nocheckpoint is not recorded (the queue starts again after a
 * restart).
 */
#include "jobmgr.h"

struct queue *queue_create (struct jobmgr *jm);
/* Restore the state saved in the KVS (at module start, before any
 * request).  -1 with error set if the key exists but cannot be read. */
int queue_restore (struct queue *q, flux_error_t *error);
void queue_destroy (struct queue *q);

/* NULL if submissions are accepted, else the reason they are not. */
const char *queue_disabled_reason (struct queue *q);

/* Once per loop iteration: answer drain/idle waiters that are done. */
void queue_check (struct queue *q);

void queue_list (struct queue *q, const flux_msg_t *msg);
void queue_status (struct queue *q, const flux_msg_t *msg);
void queue_enable (struct queue *q, const flux_msg_t *msg);
void queue_start (struct queue *q, const flux_msg_t *msg);
void queue_drain (struct queue *q, const flux_msg_t *msg);
void queue_idle (struct queue *q, const flux_msg_t *msg);
void queue_alloc_query (struct queue *q, const flux_msg_t *msg);
void queue_disconnect (struct queue *q, const flux_msg_t *msg);

#endif /* !JOBMGR_QUEUE_H */
