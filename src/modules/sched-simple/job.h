/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* job.h - a job the scheduler knows: pending (an alloc request waiting in
 * the queue), committing (resources taken, R being written) or allocated
 * (holding resources until sched.free).  jobtab indexes jobs by id;
 * jobq orders the pending ones by priority (highest first), then id.
 */
#ifndef SCHED_SIMPLE_JOB_H
#define SCHED_SIMPLE_JOB_H

#include <stdbool.h>
#include <stdint.h>

#include "libidset/idset.h"
#include "librlist/rlist.h"
#include "libflux/flux.h"

enum job_state {
    JOB_PENDING = 1,
    JOB_COMMITTING = 2,
    JOB_ALLOCATED = 3,
};

struct job {
    uint64_t id;
    uint32_t priority;
    uint32_t userid;
    enum job_state state;
    const flux_msg_t *msg; /* the sched.alloc request (a reference) */
    struct rlist_request req;
    double duration;
    struct rlist *alloc;   /* what the job holds (committing, allocated) */
    bool annotated;        /* a reason_pending annotation was sent */
    int qindex;            /* position in jobq, -1 when not queued */
    flux_future_t *lookup; /* hello replay: the lookup of R in flight */
    struct idset *freed;   /* hello replay: ranks already released (RFC 27
                            * "free"), dropped from R when it is read */
    struct job *hnext;     /* jobtab chain */
};

/* A new job (state 0, not queued); msg may be NULL.  NULL/ENOMEM. */
struct job *job_create (uint64_t id, const flux_msg_t *msg);
/* Frees the job, its allocation and its message reference. */
void job_destroy (struct job *job);

/* Jobs by id: a chained hash table that doubles as it fills, so insert,
 * lookup and remove are O(1) on average. */
struct jobtab;
struct jobtab *jobtab_create (void);
/* Destroys the table and every job still in it. */
void jobtab_destroy (struct jobtab *t);
int jobtab_insert (struct jobtab *t, struct job *job); /* EEXIST, ENOMEM */
struct job *jobtab_lookup (struct jobtab *t, uint64_t id);
/* Remove (not destroy) the job with that id; returns it or NULL. */
struct job *jobtab_remove (struct jobtab *t, uint64_t id);
int jobtab_count (struct jobtab *t);
/* Call fn for every job (it must not insert or remove any). */
void jobtab_foreach (struct jobtab *t, void (*fn) (struct job *job, void *arg),
                     void *arg);

/* Pending jobs in order: a binary heap (push, remove, reorder O(log n),
 * first O(1)).  The queue does not own the jobs. */
struct jobq;
struct jobq *jobq_create (void);
void jobq_destroy (struct jobq *q);
int jobq_push (struct jobq *q, struct job *job); /* ENOMEM */
void jobq_remove (struct jobq *q, struct job *job);
/* Restore the order after job->priority changed. */
void jobq_reorder (struct jobq *q, struct job *job);
struct job *jobq_first (struct jobq *q);
/* The i-th job in heap order (not priority order), 0 <= i < count. */
struct job *jobq_at (struct jobq *q, int i);
int jobq_count (struct jobq *q);

#endif /* !SCHED_SIMPLE_JOB_H */
