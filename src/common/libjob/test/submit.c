/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/submit.c - flux_job_submit() over loop://: what goes on the wire
 * (J signed "none" for our uid, urgency, flags without PRE_SIGNED) and
 * how the answer comes back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libflux/flux.h"
#include "libjob/job.h"
#include "libjob/sign.h"
#include "tap.h"

static flux_t *h;
static json_t *last; /* the last request payload */
static int fail_errnum;

static void submit_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    const char *s;

    json_decref (last);
    last = NULL;
    if (flux_request_decode (msg, NULL, &s) == 0 && s)
        last = json_loads (s, 0, NULL);
    if (fail_errnum)
        flux_respond_error (h, msg, fail_errnum, "no thanks");
    else
        flux_respond_pack (h, msg, "{s:I}", "id", (json_int_t)1234567);
}

struct result {
    int rc, errnum;
    flux_jobid_t id;
    char errstr[128];
};

static void continuation (flux_future_t *f, void *arg)
{
    struct result *r = arg;
    r->rc = flux_job_submit_get_id (f, &r->id);
    r->errnum = r->rc < 0 ? errno : 0;
    snprintf (r->errstr, sizeof (r->errstr), "%s",
              flux_future_error_string (f) ? flux_future_error_string (f) : "");
    flux_future_destroy (f);
}

static struct result submit (const char *jobspec, int urgency, int flags)
{
    struct result r = {.rc = -2};
    flux_future_t *f = flux_job_submit (h, jobspec, urgency, flags);

    if (!f) {
        r.rc = -1;
        r.errnum = errno;
        return r;
    }
    if (flux_future_then (f, -1, continuation, &r) < 0)
        BAIL_OUT ("then");
    while (r.rc == -2)
        flux_reactor_run (flux_get_reactor (h), FLUX_REACTOR_ONCE);
    return r;
}

int main (int argc, char **argv)
{
    flux_msg_handler_t *mh;
    struct result r;
    const char *J;
    int urgency, flags;
    char *payload;
    size_t len;
    uint32_t uid;
    const char *mech;

    if (!(h = flux_open ("loop://", 0)))
        BAIL_OUT ("loop://");
    mh = flux_msg_handler_create (h,
                                  (struct flux_match){FLUX_MSGTYPE_REQUEST,
                                                      FLUX_MATCHTAG_NONE,
                                                      "job-ingest.submit"},
                                  submit_cb, NULL);
    flux_msg_handler_allow_rolemask (mh, FLUX_ROLE_ALL);
    flux_msg_handler_start (mh);
    {
        char owner[32];
        snprintf (owner, sizeof (owner), "%u", (unsigned)getuid ());
        if (flux_attr_set_cacheonly (h, "security.owner", owner) < 0)
            BAIL_OUT ("flux_attr_set_cacheonly");
    }

    r = submit ("{\"a\":1}", 16, FLUX_JOB_WAITABLE | FLUX_JOB_DEBUG);
    ok (r.rc == 0 && r.id == 1234567, "submit returns the id");
    ok (last
            && json_unpack (last, "{s:s s:i s:i !}", "J", &J, "urgency",
                            &urgency, "flags", &flags)
                   == 0,
        "the request is exactly {J, urgency, flags}");
    ok (urgency == 16 && flags == (FLUX_JOB_WAITABLE | FLUX_JOB_DEBUG),
        "urgency and flags as given");
    ok (sign_unwrap (J, &payload, &len, &uid, &mech, NULL) == 0
            && !strcmp (payload, "{\"a\":1}") && uid == getuid ()
            && !strcmp (mech, "none"),
        "J wraps the jobspec for our uid with mechanism none");
    free (payload);

    r = submit ("PRESIGNED.J.none", 0, FLUX_JOB_PRE_SIGNED);
    ok (r.rc == 0 && last
            && json_unpack (last, "{s:s s:i s:i}", "J", &J, "urgency", &urgency,
                            "flags", &flags)
                   == 0
            && !strcmp (J, "PRESIGNED.J.none") && flags == 0 && urgency == 0,
        "PRE_SIGNED sends J as given and is not sent as a flag");

    /* a J that is not plain text between quotes must be escaped */
    r = submit ("odd\"J\\\ttab.\xc3\xa9.none", -1, FLUX_JOB_PRE_SIGNED);
    ok (r.rc == 0 && last
            && json_unpack (last, "{s:s s:i s:i !}", "J", &J, "urgency",
                            &urgency, "flags", &flags)
                   == 0
            && !strcmp (J, "odd\"J\\\ttab.\xc3\xa9.none") && urgency == -1
            && flags == 0,
        "a pre-signed J with quotes, backslashes and UTF-8 arrives intact");

    fail_errnum = EPERM;
    r = submit ("{}", 16, 0);
    ok (r.rc < 0 && r.errnum == EPERM && !strcmp (r.errstr, "no thanks"),
        "an error response comes back with its text");
    fail_errnum = 0;

    /* a guest signs with munge: without munged the future fails with
     * munge's reason, and nothing is sent */
    {
        char owner[32];
        snprintf (owner, sizeof (owner), "%u", (unsigned)getuid () + 1);
        if (flux_attr_set_cacheonly (h, "security.owner", owner) < 0)
            BAIL_OUT ("flux_attr_set_cacheonly");
        setenv ("FLUX_MUNGE_SOCKET", "/nonexistent/munge.socket", 1);
        json_decref (last);
        last = NULL;
        r = submit ("{}", 16, 0);
        ok (r.rc < 0 && r.errnum == EPERM && !strncmp (r.errstr, "munge: ", 7)
                && last == NULL,
            "a guest without munged: EPERM with munge's reason (%s)", r.errstr);
        unsetenv ("FLUX_MUNGE_SOCKET");
    }

    errno = 0;
    ok (flux_job_submit (h, "{}", 16, 0x100) == NULL && errno == EINVAL,
        "unknown flags fail with EINVAL");
    ok (flux_job_submit (h, NULL, 16, 0) == NULL && errno == EINVAL,
        "NULL jobspec fails with EINVAL");
    ok (flux_job_submit_get_id (NULL, NULL) < 0 && errno == EINVAL,
        "get_id NULL fails with EINVAL");

    json_decref (last);
    flux_msg_handler_destroy (mh);
    flux_close (h);
    done_testing ();
    return 0;
}
