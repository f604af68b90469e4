/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* submit.c - the job-ingest.submit client (PROTOCOLS.md 5.1).
 *
 * The jobspec is wrapped in J for the caller's uid: with mechanism
 * "none" when the caller is the instance owner (attribute security.owner,
 * cached by the handle), with "munge" otherwise, as flux-core does with
 * flux-security's default mechanism.  job-ingest verifies the munge
 * credential and refuses "none" from anyone but the owner.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libflux/jsonplain.h"

#include "job.h"
#include "sign.h"

/* True if s can stand between JSON quotes as it is. */
static bool json_plain (const char *s)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + strlen (s);

    return json_plain_skip (p, end) == end;
}

/* "none" for the instance owner (or when the owner is unknown: the
 * instance then decides), "munge" for a guest. */
static const char *mechanism (flux_t *h)
{
    const char *s = flux_attr_get (h, "security.owner");
    char *end;
    unsigned long owner;

    if (!s)
        return "none";
    errno = 0;
    owner = strtoul (s, &end, 10);
    if (errno != 0 || *end != '\0' || end == s || owner == getuid ())
        return "none";
    return "munge";
}

/* A future already failed with the signer's reason, so that the
 * caller reports "munge: Socket communication error" as it would an
 * ingest refusal.  A payload with NUL is still NULL/EINVAL. */
static flux_future_t *sign_failed (flux_t *h, flux_error_t *error)
{
    int e = errno;
    flux_future_t *f;

    if (e == EINVAL || e == ENOMEM || !(f = flux_future_create (NULL, NULL)))
        return NULL;
    flux_future_set_flux (f, h);
    flux_future_fulfill_error (f, e, error->text);
    return f;
}

flux_future_t *flux_job_submit (flux_t *h, const char *jobspec, int urgency,
                                int flags)
{
    flux_future_t *f;
    flux_error_t error;
    char *J = NULL;
    const char *s;

    if (!h || !jobspec
        || (flags
            & ~(FLUX_JOB_PRE_SIGNED | FLUX_JOB_DEBUG | FLUX_JOB_WAITABLE
                | FLUX_JOB_NOVALIDATE))) {
        errno = EINVAL;
        return NULL;
    }
    if (flags & FLUX_JOB_PRE_SIGNED)
        s = jobspec;
    else if (!(s = J = sign_wrap (mechanism (h), jobspec, strlen (jobspec),
                                  getuid (), &error)))
        return sign_failed (h, &error);
    flags &= ~FLUX_JOB_PRE_SIGNED;
    if (json_plain (s)) {
        /* the usual J (base64 parts): the payload text is written
         * directly, without a JSON string of several KB to build,
         * check and escape again */
        char *payload;
        if (asprintf (&payload, "{\"J\":\"%s\",\"urgency\":%d,\"flags\":%d}", s,
                      urgency, flags)
            < 0) {
            free (J);
            errno = ENOMEM;
            return NULL;
        }
        f = flux_rpc (h, "job-ingest.submit", payload, FLUX_NODEID_ANY, 0);
        free (payload);
    }
    else
        f = flux_rpc_pack (h, "job-ingest.submit", FLUX_NODEID_ANY, 0,
                           "{s:s s:i s:i}", "J", s, "urgency", urgency, "flags",
                           flags);
    free (J);
    return f;
}

int flux_job_submit_get_id (flux_future_t *f, flux_jobid_t *id)
{
    json_int_t v;

    if (!f || !id) {
        errno = EINVAL;
        return -1;
    }
    if (flux_rpc_get_unpack (f, "{s:I}", "id", &v) < 0)
        return -1;
    *id = (flux_jobid_t)v;
    return 0;
}
