/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/jobreq.c - every check of a job-ingest.submit request, in
 * PROTOCOLS.md 5.1 order, with the errno and text the requester sees.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jobreq.h"
#include "libjob/sign.h"
#include "tap.h"

#define OWNER 1000
#define GUEST 2000

static const char *good_js
    = "{\"version\":1,\"resources\":[{\"type\":\"slot\",\"count\":1,"
      "\"label\":\"task\",\"with\":[{\"type\":\"core\",\"count\":1}]}],"
      "\"tasks\":[{\"command\":[\"true\"],\"slot\":\"task\",\"count\":{"
      "\"per_slot\":1}}],\"attributes\":{\"system\":{\"duration\":0}}}";

static flux_msg_t *make_req (const char *payload, uint32_t userid,
                             uint32_t rolemask)
{
    flux_msg_t *msg = flux_request_encode ("job-ingest.submit", payload);
    struct flux_msg_cred cred = {userid, rolemask};

    if (!msg || flux_msg_set_cred (msg, cred) < 0)
        BAIL_OUT ("make_req");
    return msg;
}

/* A request {J, urgency, flags} with J signed by signer. */
static flux_msg_t *submit_req (const char *jobspec, uint32_t signer,
                               int urgency, int flags, uint32_t userid,
                               uint32_t rolemask)
{
    char *J = sign_none_wrap (jobspec, strlen (jobspec), signer);
    json_t *o = json_pack ("{s:s s:i s:i}", "J", J, "urgency", urgency, "flags",
                           flags);
    char *s = json_dumps (o, JSON_COMPACT);
    flux_msg_t *msg = make_req (s, userid, rolemask);

    free (J);
    free (s);
    json_decref (o);
    return msg;
}

static void check (flux_msg_t *msg, int errnum, const char *text,
                   const char *what)
{
    flux_error_t error = {.text = ""};
    int e = 0;
    struct jobreq *job
        = jobreq_create (msg, OWNER, JOBREQ_JOBSPEC_MAX_DEFAULT, &e, &error);

    if (errnum == 0) {
        ok (job != NULL, "%s: accepted", what);
        if (!job)
            diag ("%s", error.text);
    }
    else {
        ok (job == NULL && e == errnum && strstr (error.text, text),
            "%s: %s (%s)", what, strerror (errnum), error.text);
    }
    jobreq_destroy (job);
    flux_msg_decref (msg);
}

int main (int argc, char **argv)
{
    const uint32_t O = FLUX_ROLE_OWNER, U = FLUX_ROLE_USER;
    flux_error_t error;
    struct jobreq *job;
    flux_msg_t *msg;
    int e;

    msg = submit_req (good_js, OWNER, 16, FLUX_JOB_WAITABLE, OWNER, O);
    job = jobreq_create (msg, OWNER, JOBREQ_JOBSPEC_MAX_DEFAULT, &e, &error);
    ok (job && job->userid == OWNER && job->rolemask == O && job->urgency == 16
            && job->flags == FLUX_JOB_WAITABLE && job->jobspec
            && !strcmp (job->jobspec, good_js) && job->J && job->msg == msg,
        "a good request is decoded");
    jobreq_destroy (job);
    flux_msg_decref (msg);

    check (make_req ("not json", OWNER, O), EPROTO, "malformed", "not JSON");
    check (make_req (NULL, OWNER, O), EPROTO, "malformed", "no payload");
    check (make_req ("{\"urgency\":16,\"flags\":0}", OWNER, O), EPROTO,
           "expected {J:s, urgency:i, flags:i}", "no J");
    check (make_req ("{\"J\":\"x\",\"urgency\":\"16\",\"flags\":0}", OWNER, O),
           EPROTO, "malformed", "urgency a string");
    check (make_req ("{\"J\":\"x\",\"urgency\":16,\"flags\":0,\"jobs\":[]}",
                     OWNER, O),
           EPROTO, "malformed", "an extra key");
    check (submit_req (good_js, OWNER, 16, FLUX_JOB_PRE_SIGNED, OWNER, O),
           EPROTO, "unknown submit flags 0x1", "PRE_SIGNED is never sent");
    check (submit_req (good_js, OWNER, 16, 0x10, OWNER, O), EPROTO,
           "unknown submit flags 0x10", "unknown flag");
    check (submit_req (good_js, GUEST, 16, FLUX_JOB_WAITABLE, GUEST, U), EINVAL,
           "waitable", "guest WAITABLE");
    check (submit_req (good_js, GUEST, 16, FLUX_JOB_NOVALIDATE, GUEST, U),
           EPERM, "skip validation", "guest NOVALIDATE");
    check (submit_req (good_js, OWNER, 32, 0, OWNER, O), EINVAL,
           "urgency 32 is out of range (0-31)", "urgency 32");
    check (submit_req (good_js, OWNER, -1, 0, OWNER, O), EINVAL, "out of range",
           "urgency -1");
    check (submit_req (good_js, OWNER, 31, 0, OWNER, O), 0, NULL,
           "owner urgency 31");
    check (submit_req (good_js, OWNER, 0, 0, OWNER, O), 0, NULL,
           "owner urgency 0 (hold)");
    check (submit_req (good_js, GUEST, 17, 0, GUEST, U), EINVAL, "urgency > 16",
           "guest urgency 17");
    check (submit_req (good_js, 0, 16, 0, 0, U), EPERM, "root may not submit",
           "root in another user's instance");
    check (make_req ("{\"J\":\"abc\",\"urgency\":16,\"flags\":0}", OWNER, O),
           EINVAL, "J has 1 part, expected 3", "J not signed");
    check (submit_req (good_js, OWNER + 1, 16, 0, OWNER, O), EPERM,
           "signer=1001 != requestor=1000", "signer is not the requester");
    check (submit_req (good_js, GUEST, 16, 0, GUEST, U), EPERM,
           "mechanism none", "a guest signing with none");
    check (submit_req (good_js, GUEST, 16, 0, GUEST, O), 0, NULL,
           "the owner acting as another user (preset credentials)");
    check (submit_req ("{\"version\":1", OWNER, 16, 0, OWNER, O), EINVAL,
           "invalid JSON", "jobspec not JSON");
    check (submit_req ("[1]", OWNER, 16, FLUX_JOB_NOVALIDATE, OWNER, O), EINVAL,
           "jobspec must be an object",
           "jobspec an array, even with NOVALIDATE");
    check (submit_req ("{\"version\":2}", OWNER, 16, 0, OWNER, O), EINVAL,
           "version 2 is not supported (only version 1)", "jobspec v2");
    check (submit_req ("{\"version\":2}", OWNER, 16, FLUX_JOB_NOVALIDATE, OWNER,
                       O),
           0, NULL, "jobspec v2 with NOVALIDATE");
    check (submit_req ("{\"a\":1,\"a\":2}", OWNER, 16, FLUX_JOB_NOVALIDATE,
                       OWNER, O),
           EINVAL, "duplicate", "duplicate keys");

    /* a duration no timer can honour (1e308 s used to fail the job at
     * exec with "cannot arm the expiration timer") */
    {
        char js[1024];
        const char *at = strstr (good_js, "\"duration\":0");
        int n = (int)(at - good_js);
        snprintf (js, sizeof (js), "%.*s\"duration\":1e308}}}", n, good_js);
        check (submit_req (js, OWNER, 16, 0, OWNER, O), EINVAL,
               "attributes.system.duration must be at most 1e+09",
               "duration 1e308");
        snprintf (js, sizeof (js), "%.*s\"duration\":1e9}}}", n, good_js);
        check (submit_req (js, OWNER, 16, 0, OWNER, O), 0, NULL,
               "duration 1e9 (about 31 years)");
    }

    /* the size limit: checked on the jobspec before it is parsed */
    msg = submit_req (good_js, OWNER, 16, 0, OWNER, O);
    job = jobreq_create (msg, OWNER, 100, &e, &error);
    ok (job == NULL && e == EINVAL
            && strstr (error.text, "jobspec is 210 bytes, above the limit of "
                                   "100 (job-ingest max-jobspec-size)"),
        "a jobspec over max-jobspec-size: EINVAL (%s)", error.text);
    jobreq_destroy (job);
    job = jobreq_create (msg, OWNER, strlen (good_js), &e, &error);
    ok (job != NULL, "a jobspec of exactly max-jobspec-size is accepted");
    jobreq_destroy (job);
    flux_msg_decref (msg);
    done_testing ();
    return 0;
}
