/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* job.h - what job-list keeps per job, and how journal events change it.
 *
 * A job holds only a summary (RFC 43 attributes): the jobspec and R are
 * reduced to a few fields when they arrive and never stored, so an
 * inactive job costs a few hundred bytes.  Strings that many jobs share
 * (name, cwd, queue, nodelist...) are interned in a strpool.
 *
 * The functions here are pure (no I/O): the job store (jobstore.h)
 * calls them and maintains its lists and counts around them.
 */
#ifndef JOB_LIST_JOB_H
#define JOB_LIST_JOB_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "jbuf.h"
#include "libflux/flux.h"
#include "libjob/job.h"
#include "ordlist.h"
#include "libutil/strpool.h"

/* RFC 43 attributes, in the order they are written. */
enum job_attr {
    ATTR_USERID,
    ATTR_URGENCY,
    ATTR_PRIORITY,
    ATTR_T_SUBMIT,
    ATTR_T_DEPEND,
    ATTR_T_PRIORITY,
    ATTR_T_SCHED,
    ATTR_T_RUN,
    ATTR_T_CLEANUP,
    ATTR_T_INACTIVE,
    ATTR_STATE,
    ATTR_NAME,
    ATTR_CWD,
    ATTR_QUEUE,
    ATTR_PROJECT,
    ATTR_BANK,
    ATTR_NTASKS,
    ATTR_NCORES,
    ATTR_NNODES,
    ATTR_RANKS,
    ATTR_NODELIST,
    ATTR_DURATION,
    ATTR_EXPIRATION,
    ATTR_SUCCESS,
    ATTR_RESULT,
    ATTR_WAITSTATUS,
    ATTR_EXCEPTION_OCCURRED,
    ATTR_EXCEPTION_TYPE,
    ATTR_EXCEPTION_SEVERITY,
    ATTR_EXCEPTION_NOTE,
    ATTR_ANNOTATIONS,
    ATTR_DEPENDENCIES,
    ATTR_COUNT,
};
#define ATTR_ALL ((UINT64_C (1) << ATTR_COUNT) - 1)

struct job {
    flux_jobid_t id;
    uint32_t userid;
    int urgency;      /* -1: unset */
    int64_t priority; /* -1: unset */
    int state;        /* FLUX_JOB_STATE_* */
    int states_mask;  /* every state the job has been in */
    double t_submit, t_depend, t_priority, t_sched;
    double t_run, t_cleanup, t_inactive;             /* 0: unset */
    const char *name, *cwd, *queue, *project, *bank; /* pooled or NULL */
    const char *ranks, *nodelist;                    /* pooled or NULL */
    const char *exception_type;                      /* pooled or NULL */
    char *exception_note;                            /* malloc'd or NULL */
    int exception_severity;
    int ntasks, ncores, nnodes; /* -1: unknown */
    int ntasks_per_node;        /* per-resource node count, until R */
    int ntasks_per_core;        /* per-resource core count, until R */
    double duration;            /* -1: not in jobspec */
    double expiration;          /* -1: unset */
    int waitstatus;             /* -1: unset */
    int result;                 /* FLUX_JOB_RESULT_*, 0 while active */
    bool success;
    bool exception_occurred;
    bool have_R;
    char *annotations;    /* the object as compact JSON text, NULL when
                           * empty: sent by the thousand, changed
                           * rarely, and a quarter of the memory of the
                           * decoded object */
    json_t *dependencies; /* array of strings, NULL if never any */

    /* kept by the job store */
    ordlist_node_t *node;
    int list;
    unsigned int gen;
};

/* A job in state NEW with nothing else known.  NULL with ENOMEM. */
struct job *job_create (flux_jobid_t id);

/* Free the job, returning its strings to pool.  NULL-safe. */
void job_destroy (struct job *job, strpool_t *pool);

/* What job_apply_event() did, beyond changing fields. */
enum {
    JOB_EVENT_IGNORED = 0,    /* not an event job-list acts on */
    JOB_EVENT_APPLIED = 1,    /* fields (maybe the state) changed */
    JOB_EVENT_INVALIDATE = 2, /* "invalidate": the job must be dropped */
};

/* Apply one RFC 21 event (an RFC 18 entry) to job.  Returns one of the
 * JOB_EVENT_* values, or -1 with errno EPROTO (a malformed entry or
 * context, explained in error; the job is unchanged) or ENOMEM.
 */
int job_apply_event (struct job *job, strpool_t *pool, json_t *entry,
                     flux_error_t *error);

/* Take the summary of a jobspec: name, cwd, queue, project, bank,
 * duration, ntasks, ncores, nnodes.  -1 EPROTO with error text if it is
 * not an object; missing or odd parts are left unset.
 */
int job_apply_jobspec (struct job *job, strpool_t *pool, json_t *jobspec,
                       flux_error_t *error);

/* Take the summary of an Rv1 (RFC 20) object: ranks, nodelist, nnodes,
 * ncores, expiration.  -1 EPROTO with error text if malformed (the job
 * is then unchanged).
 */
int job_apply_R (struct job *job, strpool_t *pool, json_t *R,
                 flux_error_t *error);

/* Apply a jobspec-update context (RFC 21) to the summary.  Only
 * attributes.* keys can be applied (job-list keeps no jobspec, so an
 * update of resources or tasks is not reflected).  Returns
 * JOB_EVENT_APPLIED or -1 with ENOMEM.
 */
int job_jobspec_update (struct job *job, strpool_t *pool, json_t *context,
                        flux_error_t *error);

/* Attribute names <-> bits.  job_attrs_parse() reads an array of names
 * ("all" means every attribute; "id" is accepted and always written):
 * -1 EINVAL with error text for a non-array, a non-string or an
 * unknown name.
 */
int job_attrs_parse (json_t *attrs, uint64_t *mask, flux_error_t *error);
const char *job_attr_name (int attr);

/* Write the job as a JSON object holding id and the attributes of mask
 * that are set.
 */
void job_encode (const struct job *job, uint64_t mask, struct jbuf *b);

#endif /* !JOB_LIST_JOB_H */
