/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef JOBMGR_JOB_H
#define JOBMGR_JOB_H
/* job - the job manager's record of one job, and the table of all jobs.
 *
 * A job is two parts: a small header kept for every job the KVS holds
 * (id, owner, state, times, result), and while the job is active an
 * extension (struct jobx) with its jobstate (jobstate.h), jobspec, R,
 * the events posted so far, and the links that place it in the queues
 * of the other parts of the job manager.  When the job becomes inactive
 * the extension is freed and only the compact header remains.
 *
 * A pending job's jobspec and eventlog are kept as JSON text, parsed
 * when needed (alloc, the journal, getattr, dependencies): decoded they
 * took ten times the memory (a 300-byte jobspec is ~5 KB of jansson
 * objects), and a million pending jobs must fit.
 *
 * The table is a hash by id (O(1) insert, lookup and removal) and keeps
 * the inactive jobs in the order they became inactive, oldest first,
 * for purge.  Nothing here scans all jobs except the explicit iterator.
 */
#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include <uv.h>

#include "libflux/flux.h"
#include "libflux/list.h"
#include "libjob/job.h"
#include "libutil/strpool.h"
#include "jobstate.h"

struct jobx {
    struct job *job; /* back pointer */
    struct jobstate js;
    /* jobspec and environment: pooled strings (jobs submitted together
     * share them), NULL until job_jobspec_set */
    strpool_t *pool;
    const char *jobspec;     /* compact JSON text, with jobspec-update
                              * applied, without the environment */
    const char *environment; /* attributes.system.environment as JSON text,
                              * or NULL */
    json_t *R;               /* R (RFC 20) once known, else NULL */
    char *eventlog;          /* the events so far, RFC 18 text (or NULL) */
    size_t eventlog_len, eventlog_size;
    json_t *annotations;       /* RFC 27 annotations, NULL if none */
    struct idset *free_unsent; /* partially released ranks the scheduler
                                * has not been told about yet (alloc.c),
                                * NULL if none */

    size_t qidx;                 /* index in the alloc queue (heap.h) */
    size_t aidx;                 /* index in the pending-alloc heap */
    struct list_node alloc_link; /* on alloc's list of sched.alloc out */
    struct list_node res_link;   /* on the list of jobs with resources */
    struct list_node dependents; /* deplinks of jobs waiting on this one */
    struct list_node deplinks;   /* this job's deplinks (as dependent) */
    uv_timer_t *begin_timer;     /* begin-time dependency, or NULL */
    unsigned long pend_seq;      /* event.c: the batch holding this job's */
    size_t pend_idx;             /* ... uncommitted appends, and where */

    unsigned int alloc_pending : 1;    /* sched.alloc sent, no final answer */
    unsigned int alloc_canceling : 1;  /* sched.cancel sent */
    unsigned int alloc_lookup : 1;     /* allocated, R lookup in flight */
    unsigned int free_pending : 1;     /* sched.free sent */
    unsigned int start_pending : 1;    /* start sent, no final release */
    unsigned int start_unanswered : 1; /* plain start sent, no "start" yet */
    unsigned int reattach : 1;         /* start with reattach=true */
    unsigned int depend_done : 1;      /* jobspec dependencies processed */
    unsigned int depend_busy : 1;      /* ... being processed */
    unsigned int waitable : 1;         /* counted by wait.c */
};

struct job {
    flux_jobid_t id;
    uint32_t userid;
    int state;  /* FLUX_JOB_STATE_* (mirrors x->js.state while active) */
    int flags;  /* FLUX_JOB_* submit flags (and set-flags) */
    int result; /* FLUX_JOB_RESULT_* once inactive */
    bool success;
    bool started;
    bool zombie; /* inactive, waitable, not yet waited for */
    double t_submit;
    double t_inactive;
    char *errstr; /* inactive waitable jobs: the wait error string */
    struct job *hnext;
    struct list_node ilink; /* inactive list */
    struct jobx *x;         /* NULL once inactive */
};

/* A new active job with an empty jobstate.  NULL with ENOMEM. */
struct job *job_create (flux_jobid_t id);
/* A new inactive job header (restart of an inactive job). */
struct job *job_create_inactive (flux_jobid_t id, const struct jobstate *js);
/* Free the job (it must be in no table or queue).  NULL-safe. */
void job_destroy (struct job *job);

/* Drop the active part, keeping the compact record (result, times,
 * and the wait error string if the job is waitable).  The job must be
 * INACTIVE and unlinked from every queue. */
void job_compact (struct job *job);

/* The jobspec without attributes.system.environment (a new reference;
 * the same object when there is nothing to drop).  NULL on ENOMEM. */
json_t *job_jobspec_redacted (const json_t *jobspec);

/* Keep jobspec in x as text: the environment, by far its largest part
 * and needed only to start the job, apart from the rest.  Both strings
 * come from pool (identical jobspecs share them); x uses the same pool
 * for the rest of its life.  -1/ENOMEM (x unchanged). */
int job_jobspec_set (struct jobx *x, strpool_t *pool, json_t *jobspec);

/* The jobspec without its environment (a new object, what alloc, the
 * journal, getattr and dependencies use); NULL with ENOENT if x has
 * none, EPROTO if the text does not parse, or ENOMEM. */
json_t *job_jobspec (const struct jobx *x);

/* The whole jobspec, environment included (a new object), as the exec
 * service needs it; NULL with errno as job_jobspec(). */
json_t *job_jobspec_full (const struct jobx *x);

/* Apply a jobspec-update context (job_jobspec_update) to x's jobspec.
 * -1 with errno (x unchanged). */
int job_jobspec_apply (struct jobx *x, json_t *updates);

/* Append line, one encoded eventlog entry ending in a newline
 * (eventlog_entry_encode), to x's eventlog text.  -1/ENOMEM. */
int job_eventlog_append (struct jobx *x, const char *line);

/* Replace x's eventlog with the entries of the array log.  -1 with
 * errno (EINVAL: an invalid entry, ENOMEM). */
int job_eventlog_set (struct jobx *x, const json_t *log);

/* x's eventlog as an array of entries (a new object; an empty array if
 * there are none).  NULL with errno. */
json_t *job_eventlog (const struct jobx *x);

/* Set each "a.b.c" key of updates in jobspec, creating objects on the
 * way.  -1 with EINVAL if a path crosses a non-object. */
int job_jobspec_update (json_t *jobspec, json_t *updates);

/* The job's KVS key: "job.0000.0004.b200.0000" and, with a non-NULL
 * name, "job.0000.0004.b200.0000.<name>".  -1 with EOVERFLOW. */
int job_kvs_key (char *buf, size_t size, flux_jobid_t id, const char *name);

struct jobtab;

struct jobtab *jobtab_create (void);
/* Destroys every job still in the table. */
void jobtab_destroy (struct jobtab *t);
/* -1 with EEXIST (id already there) or ENOMEM. */
int jobtab_insert (struct jobtab *t, struct job *job);
struct job *jobtab_lookup (struct jobtab *t, flux_jobid_t id);
/* Remove job from the table (and the inactive list). */
void jobtab_remove (struct jobtab *t, struct job *job);
size_t jobtab_count (const struct jobtab *t);

/* Inactive list: jobs in the order they became inactive. */
void jobtab_inactive_add (struct jobtab *t, struct job *job);
struct job *jobtab_inactive_first (struct jobtab *t);
struct job *jobtab_inactive_next (struct jobtab *t, struct job *job);
size_t jobtab_inactive_count (const struct jobtab *t);

/* Iterate over all jobs in no particular order.  The table must not be
 * changed during the iteration (collect first, then act). */
struct job *jobtab_first (struct jobtab *t, size_t *cursor);
struct job *jobtab_next (struct jobtab *t, struct job *job, size_t *cursor);

#endif /* !JOBMGR_JOB_H */
