/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* jobreq.c - decode and check one job-ingest.submit request.
 *
 * Unlike flux-core (which unwraps with NOVERIFY and leaves the check to
 * the IMP), ingest verifies a munge signature, so that a forged J or one
 * signed by somebody else is refused at submit time with a reason; it
 * also checks that the signer is the requester and that mechanism "none"
 * comes from the instance owner.  The IMP verifies J again before
 * running anything.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "jobreq.h"
#include "libflux/jsonparse.h"
#include "libjob/jobspec.h"
#include "libjob/sign.h"

#define KNOWN_FLAGS (FLUX_JOB_DEBUG | FLUX_JOB_WAITABLE | FLUX_JOB_NOVALIDATE)

static struct jobreq *fail (struct jobreq *job, int *errnum, int e)
{
    jobreq_destroy (job);
    *errnum = e;
    return NULL;
}

/* The text must be one JSON object without duplicate keys, so that it
 * can be stored and forwarded as is; it must be valid jobspec v1 unless
 * the owner asked for NOVALIDATE.
 */
static int check_jobspec (struct jobreq *job, const char *text,
                          flux_error_t *error)
{
    char jerr[160];
    struct jobspec *js = NULL;
    json_t *o;

    /* jsonparse.h: json_loads, faster; the top must be an object or an
     * array, and only an object will do */
    if (!(o = jsonparse_ex (text, strlen (text), JSON_REJECT_DUPLICATES, jerr,
                            sizeof (jerr))))
        return errprintf (error, "invalid JSON: %s", jerr);
    if (!json_is_object (o))
        errprintf (error, "jobspec must be an object");
    else if (!(job->flags & FLUX_JOB_NOVALIDATE)
             && (js = jobspec_parse_json (o, error))
             && js->duration > JOBREQ_DURATION_MAX) {
        errprintf (error,
                   "attributes.system.duration must be at most %g seconds "
                   "(about 31 years)",
                   JOBREQ_DURATION_MAX);
        jobspec_destroy (js);
        js = NULL;
    }
    if (!json_is_object (o) || (!(job->flags & FLUX_JOB_NOVALIDATE) && !js)) {
        json_decref (o);
        return -1;
    }
    jobspec_destroy (js);
    json_decref (o);
    return 0;
}

struct jobreq *jobreq_create (const flux_msg_t *msg, uint32_t owner,
                              size_t max_jobspec, int *errnum,
                              flux_error_t *error)
{
    struct jobreq *job;
    struct flux_msg_cred cred;
    const char *mech;
    char *payload = NULL;
    size_t len;
    uint32_t signer;
    bool is_owner;
    int rc;

    if (!(job = calloc (1, sizeof (*job)))) {
        errprintf (error, "out of memory");
        return fail (NULL, errnum, ENOMEM);
    }
    job->msg = flux_msg_incref (msg);
    if (flux_request_unpack (msg, NULL, "{s:s s:i s:i !}", "J", &job->J,
                             "urgency", &job->urgency, "flags", &job->flags)
            < 0
        || flux_msg_get_cred (msg, &cred) < 0) {
        errprintf (error, "malformed job-ingest.submit: expected {J:s, "
                          "urgency:i, flags:i}");
        return fail (job, errnum, EPROTO);
    }
    job->userid = cred.userid;
    job->rolemask = cred.rolemask;
    is_owner = (cred.rolemask & FLUX_ROLE_OWNER) != 0;
    if (job->flags & ~KNOWN_FLAGS) {
        errprintf (error, "unknown submit flags 0x%x", job->flags);
        return fail (job, errnum, EPROTO);
    }
    if ((job->flags & FLUX_JOB_WAITABLE) && !is_owner) {
        errprintf (error, "only the instance owner may submit waitable jobs");
        return fail (job, errnum, EINVAL);
    }
    if ((job->flags & FLUX_JOB_NOVALIDATE) && !is_owner) {
        errprintf (error, "only the instance owner may skip validation");
        return fail (job, errnum, EPERM);
    }
    if (job->urgency < FLUX_JOB_URGENCY_MIN
        || job->urgency > FLUX_JOB_URGENCY_MAX) {
        errprintf (error, "urgency %d is out of range (0-31)", job->urgency);
        return fail (job, errnum, EINVAL);
    }
    if (job->urgency > FLUX_JOB_URGENCY_DEFAULT && !is_owner) {
        errprintf (error, "only the instance owner may use urgency > %d",
                   FLUX_JOB_URGENCY_DEFAULT);
        return fail (job, errnum, EINVAL);
    }
    if (cred.userid == 0 && owner != 0) {
        errprintf (error, "root may not submit jobs to an instance owned by "
                          "another user");
        return fail (job, errnum, EPERM);
    }
    if (sign_unwrap_ex (job->J, 0, &payload, &len, &signer, &mech, error) < 0)
        return fail (job, errnum, errno == EPERM ? EPERM : EINVAL);
    if (signer != cred.userid) {
        free (payload);
        errprintf (error, "signer=%u != requestor=%u", signer, cred.userid);
        return fail (job, errnum, EPERM);
    }
    if (!strcmp (mech, "none") && !is_owner) {
        free (payload);
        errprintf (error, "only the instance owner may submit with signing "
                          "mechanism none");
        return fail (job, errnum, EPERM);
    }
    if (len > max_jobspec) {
        free (payload);
        errprintf (error,
                   "jobspec is %zu bytes, above the limit of %zu "
                   "(job-ingest max-jobspec-size)",
                   len, max_jobspec);
        return fail (job, errnum, EINVAL);
    }
    rc = check_jobspec (job, payload, error);
    job->jobspec = payload;
    if (rc < 0)
        return fail (job, errnum, EINVAL);
    return job;
}

void jobreq_destroy (struct jobreq *job)
{
    if (job) {
        int saved_errno = errno;
        flux_msg_decref (job->msg);
        free (job->jobspec);
        free (job);
        errno = saved_errno;
    }
}
