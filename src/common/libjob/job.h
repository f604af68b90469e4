/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_JOB_JOB_H
#define FLUX_JOB_JOB_H
/* Job constants shared by the job modules and commands (RFC 21, RFC 30,
 * PROTOCOLS.md section 5), job id strings (RFC 19) and the KVS layout of
 * a job (RFC 16).
 */
#include <stdint.h>
#include <stddef.h>
#include <jansson.h>
#include "libflux/flux.h"

typedef uint64_t flux_jobid_t;
#define FLUX_JOBID_ANY UINT64_C (0xffffffffffffffff)

/* States (RFC 21): bit values, so masks can be formed. */
enum {
    FLUX_JOB_STATE_NEW = 1,
    FLUX_JOB_STATE_DEPEND = 2,
    FLUX_JOB_STATE_PRIORITY = 4,
    FLUX_JOB_STATE_SCHED = 8,
    FLUX_JOB_STATE_RUN = 16,
    FLUX_JOB_STATE_CLEANUP = 32,
    FLUX_JOB_STATE_INACTIVE = 64,
};
#define FLUX_JOB_STATE_PENDING 14 /* DEPEND|PRIORITY|SCHED */
#define FLUX_JOB_STATE_RUNNING 48 /* RUN|CLEANUP */
#define FLUX_JOB_STATE_ACTIVE 62  /* PENDING|RUNNING */

/* Results of an inactive job. */
enum {
    FLUX_JOB_RESULT_COMPLETED = 1,
    FLUX_JOB_RESULT_FAILED = 2,
    FLUX_JOB_RESULT_CANCELED = 4,
    FLUX_JOB_RESULT_TIMEOUT = 8,
};

/* Urgency (RFC 30) and priority. */
#define FLUX_JOB_URGENCY_MIN 0
#define FLUX_JOB_URGENCY_HOLD 0
#define FLUX_JOB_URGENCY_DEFAULT 16
#define FLUX_JOB_URGENCY_EXPEDITE 31
#define FLUX_JOB_URGENCY_MAX 31
#define FLUX_JOB_PRIORITY_MIN 0
#define FLUX_JOB_PRIORITY_MAX 4294967295U

/* job-ingest.submit flags. */
enum {
    FLUX_JOB_PRE_SIGNED = 1, /* client side only, never sent */
    FLUX_JOB_DEBUG = 2,
    FLUX_JOB_WAITABLE = 4,
    FLUX_JOB_NOVALIDATE = 8,
};

/* State names: "NEW", "DEPEND", ... "INACTIVE" (long) or "N", "D", "P",
 * "S", "R", "C", "I" (single). Unknown → "?" */
const char *flux_job_statetostr (int state, int single_char);
/* Accepts long or single-letter names, any case.  -1/EINVAL if unknown. */
int flux_job_strtostate (const char *s, int *state);
/* "COMPLETED", "FAILED", "CANCELED", "TIMEOUT" (or "CD","F","CA","TO"). */
const char *flux_job_resulttostr (int result, int abbrev);
int flux_job_strtoresult (const char *s, int *result);

/* Job id strings (RFC 19, PROTOCOLS.md section 7).  encoding is one of
 * "dec", "hex", "dothex", "kvs", "f58", "f58plain" (NULL = "f58", which
 * prints U+0192 only under a UTF-8 locale with FLUX_F58_FORCE_ASCII
 * unset, else "f").  -1/EINVAL on a bad encoding, EOVERFLOW if buf is
 * too small (32 bytes always suffice). */
int flux_job_id_encode (flux_jobid_t id, const char *encoding, char *buf,
                        size_t bufsz);
/* Parse any form; -1/EINVAL if it is not a job id. */
int flux_job_id_parse (const char *s, flux_jobid_t *id);

/* KVS key of a job directory entry (RFC 16): "job.0000.0004.b200.0000"
 * when key is NULL, else "job.0000.0004.b200.0000.<key>".  -1/EOVERFLOW. */
int flux_job_kvs_key (char *buf, int bufsz, flux_jobid_t id, const char *key);
/* The job's guest namespace name: "job-<decimal id>". */
int flux_job_kvs_namespace (char *buf, int bufsz, flux_jobid_t id);

/* Client: submit a signed J (job-ingest.submit, PROTOCOLS.md 5.1).
 * The future is fulfilled with {id:I}; get the id with
 * flux_job_submit_get_id().  jobspec is JSON text; it is signed for
 * the current uid (sign.h: "none" if it is the instance owner, else
 * "munge") unless flags has FLUX_JOB_PRE_SIGNED (then jobspec is already
 * J).  If munge cannot sign, the future is fulfilled with that error and
 * its text. */
flux_future_t *flux_job_submit (flux_t *h, const char *jobspec, int urgency,
                                int flags);
int flux_job_submit_get_id (flux_future_t *f, flux_jobid_t *id);

#endif /* !FLUX_JOB_JOB_H */
