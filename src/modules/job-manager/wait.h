/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef JOBMGR_WAIT_H
#define JOBMGR_WAIT_H
/* wait - job-manager.wait for WAITABLE jobs (PROTOCOLS.md 5.2).
 *
 * A waitable job that becomes inactive answers the waiter for its id,
 * else the oldest waiter for any job, else it becomes a zombie that the
 * next wait reaps.  Answers go out once the clean event is committed.
 * Like wait(2), ECHILD means there is nothing (left) to wait for.
 */
#include "jobmgr.h"

struct waitq *wait_create (struct jobmgr *jm);
/* Answers the remaining waiters with ENOSYS. */
void wait_destroy (struct waitq *w);

/* Count an active job if it is waitable (at submit, restart, or when a
 * set-flags event made it so). */
void wait_flags_changed (struct waitq *w, struct job *job);
/* The job became inactive (called before it is compacted). */
void wait_inactive (struct waitq *w, struct job *job);

/* job-manager.wait {id:I} -> {id:I, success:b, errstr:s} */
void wait_request (struct waitq *w, const flux_msg_t *msg);
void wait_disconnect (struct waitq *w, const flux_msg_t *msg);
int wait_count (struct waitq *w);

#endif /* !JOBMGR_WAIT_H */
