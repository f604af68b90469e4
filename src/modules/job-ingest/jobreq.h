/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* jobreq.h - one job-ingest.submit request, decoded and checked
 * (PROTOCOLS.md 5.1), before it joins a batch.
 */
#ifndef JOB_INGEST_JOBREQ_H
#define JOB_INGEST_JOBREQ_H

#include <stddef.h>
#include <stdint.h>

#include "libflux/flux.h"
#include "libjob/job.h"

struct jobreq {
    const flux_msg_t *msg; /* the request (a reference is held) */
    const char *J;         /* points into msg's decoded payload */
    char *jobspec;         /* the jobspec JSON text from J, as signed:
                              checked, then stored and forwarded as is */
    flux_jobid_t id;       /* assigned when the batch starts */
    uint32_t userid;
    uint32_t rolemask;
    int urgency;
    int flags;
    double t_submit;
};

/* The default of job-ingest max-jobspec-size: the largest jobspec (in
 * bytes, as signed) accepted.  flux-core has no limit of its own (a
 * jobspec is bounded only by the content store's blob size limit, 1 GiB
 * by default): a 10 MB jobspec raised our broker by 140 MB. */
#define JOBREQ_JOBSPEC_MAX_DEFAULT (2 * 1024 * 1024)
/* The longest attributes.system.duration accepted (s): past it no timer
 * can be armed (job-exec's allows 1e12 s from now). */
#define JOBREQ_DURATION_MAX 1e9

/* Decode and check msg {J:s, urgency:i, flags:i} for an instance owned by
 * owner, in this order: payload shape (EPROTO), flags (EPROTO for an
 * unknown bit; WAITABLE from a non-owner EINVAL; NOVALIDATE from a
 * non-owner EPERM), urgency 0-31 and <= 16 for a non-owner (EINVAL),
 * root in an instance not owned by root (EPERM), J (EINVAL), signer ==
 * requester (EPERM), mechanism none only with the OWNER role (EPERM),
 * jobspec size at most max_jobspec bytes (EINVAL), jobspec JSON (EINVAL)
 * and, without NOVALIDATE, jobspec v1 with a duration of at most
 * JOBREQ_DURATION_MAX (EINVAL).
 * Returns a new jobreq, or NULL with *errnum set and error->text one
 * line for the requester.
 */
struct jobreq *jobreq_create (const flux_msg_t *msg, uint32_t owner,
                              size_t max_jobspec, int *errnum,
                              flux_error_t *error);
void jobreq_destroy (struct jobreq *job);

#endif /* !JOB_INGEST_JOBREQ_H */
