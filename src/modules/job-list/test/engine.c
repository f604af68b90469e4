/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/engine.c - the job-list engine over loop://, with a fake job
 * manager journal and a fake kvs.lookup answered on the same handle.
 * Requests are built here (a route and a matchtag of our own) and
 * handed to the engine; its responses come back through the loop and
 * are collected per matchtag.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "joblist.h"
#include "libjob/job.h"
#include "tap.h"

#define TAGBASE 100000

static flux_t *h;
static flux_reactor_t *r;

/* the fake journal: the last events-journal request */
static const flux_msg_t *journal_req;
static int journal_requests;

/* the fake kvs: job ids whose eventlog exists */
static flux_jobid_t kvs_ids[64];
static int nkvs;

/* responses to our requests, by matchtag - TAGBASE */
#define MAXREQ 256
static struct {
    int count;
    int errnum;   /* of the last error response, 0 if none */
    json_t *last; /* payload of the last success response */
    json_t *all;  /* array of all success payloads */
} resp[MAXREQ];
static int nreq;
static unsigned long progress;

static void journal_cb (flux_t *h, flux_msg_handler_t *mh,
                        const flux_msg_t *msg, void *arg)
{
    progress++;
    journal_requests++;
    flux_msg_decref (journal_req);
    journal_req = flux_msg_incref (msg);
}

static void kvs_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                    void *arg)
{
    const char *key;
    char k[64];

    progress++;
    if (flux_request_unpack (msg, NULL, "{s:s}", "key", &key) < 0) {
        flux_respond_error (h, msg, EPROTO, NULL);
        return;
    }
    for (int i = 0; i < nkvs; i++) {
        flux_job_kvs_key (k, sizeof (k), kvs_ids[i], "eventlog");
        if (!strcmp (k, key)) {
            flux_respond_pack (h, msg, "{s:{s:i s:s s:s}}", "val", "ver", 1,
                               "type", "val", "data", "e30=");
            return;
        }
    }
    flux_respond_error (h, msg, ENOENT, NULL);
}

static void response_cb (flux_t *h, flux_msg_handler_t *mh,
                         const flux_msg_t *msg, void *arg)
{
    uint32_t tag;
    int errnum = 0;
    json_t *o;

    progress++;
    if (flux_msg_get_matchtag (msg, &tag) < 0 || tag < TAGBASE
        || tag >= TAGBASE + MAXREQ)
        return;
    tag -= TAGBASE;
    resp[tag].count++;
    flux_msg_get_errnum (msg, &errnum);
    if (errnum) {
        resp[tag].errnum = errnum;
        return;
    }
    if (flux_msg_unpack (msg, "o", &o) < 0) {
        resp[tag].errnum = -1; /* a success without an object payload */
        return;
    }
    json_decref (resp[tag].last);
    resp[tag].last = json_incref (o);
    if (!resp[tag].all)
        resp[tag].all = json_array ();
    json_array_append (resp[tag].all, o);
}

static void settle (void)
{
    int quiet = 0;
    for (int i = 0; i < 1000000 && quiet < 8; i++) {
        unsigned long before = progress;
        flux_reactor_run (r, FLUX_REACTOR_NOWAIT);
        quiet = progress == before ? quiet + 1 : 0;
    }
}

/* Run the reactor for about secs seconds. */
static void run_for (double secs)
{
    for (int i = 0; i < secs * 1000; i++) {
        flux_reactor_run (r, FLUX_REACTOR_NOWAIT);
        usleep (1000);
    }
    settle ();
}

/* Hand the engine a request; returns its index for resp[]. */
static int request (joblist_t *jl, const char *topic, struct flux_msg_cred cred,
                    bool streaming, const char *fmt, ...)
{
    flux_msg_t *msg = flux_request_encode (topic, NULL);
    int i = nreq++;
    va_list ap;
    json_t *o;
    char sender[32];

    if (i >= MAXREQ)
        BAIL_OUT ("too many requests");
    va_start (ap, fmt);
    o = json_vpack_ex (NULL, 0, fmt, ap);
    va_end (ap);
    snprintf (sender, sizeof (sender), "client%d", i % 3);
    if (!msg || !o || flux_msg_pack (msg, "O", o) < 0
        || flux_msg_route_push (msg, sender) < 0
        || flux_msg_set_matchtag (msg, TAGBASE + i) < 0
        || flux_msg_set_cred (msg, cred) < 0
        || (streaming && flux_msg_set_streaming (msg) < 0))
        BAIL_OUT ("cannot build %s request", topic);
    json_decref (o);
    if (!strcmp (topic, "job-list.list"))
        joblist_list (jl, msg);
    else if (!strcmp (topic, "job-list.list-id"))
        joblist_list_id (jl, msg);
    else if (!strcmp (topic, "job-list.list-attrs"))
        joblist_list_attrs (jl, msg);
    else if (!strcmp (topic, "job-list.job-stats"))
        joblist_job_stats (jl, msg);
    flux_msg_decref (msg);
    settle ();
    return i;
}

static const struct flux_msg_cred owner = {1000, FLUX_ROLE_OWNER};
static const struct flux_msg_cred guest = {2000, FLUX_ROLE_USER};

/* The journal sends one response (a JSON text, printf style). */
static void jm_send (const char *fmt, ...)
{
    char text[4096];
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (text, sizeof (text), fmt, ap);
    va_end (ap);
    if (!journal_req || flux_respond (h, journal_req, text) < 0)
        BAIL_OUT ("jm_send");
}

#define EV(t, name, ctx) "{\"timestamp\":" #t ",\"name\":\"" name "\"" ctx "}"
#define SUBMIT(t, uid) \
    EV (t, "submit",   \
        ",\"context\":{\"userid\":" #uid ",\"urgency\":16,\"flags\":0}")

/* A job through to state: 1 NEW, 8 SCHED, 16 RUN, 64 INACTIVE. */
static void jm_job (flux_jobid_t id, int uid, int state, const char *name)
{
    char events[2048];
    int t = (int)id;

    snprintf (
        events, sizeof (events),
        "{\"timestamp\":%d,\"name\":\"submit\",\"context\":{\"userid\":%d,"
        "\"urgency\":16,\"flags\":0}}",
        t, uid);
    if (state >= 8)
        snprintf (events + strlen (events), sizeof (events) - strlen (events),
                  ",{\"timestamp\":%d.1,\"name\":\"validate\"},"
                  "{\"timestamp\":%d.2,\"name\":\"depend\"},"
                  "{\"timestamp\":%d.3,\"name\":\"priority\",\"context\":"
                  "{\"priority\":%d}}",
                  t, t, t, 100 - t);
    if (state >= 16)
        snprintf (events + strlen (events), sizeof (events) - strlen (events),
                  ",{\"timestamp\":%d.4,\"name\":\"alloc\"}", t);
    if (state >= 64)
        snprintf (events + strlen (events), sizeof (events) - strlen (events),
                  ",{\"timestamp\":%d.5,\"name\":\"finish\",\"context\":"
                  "{\"status\":0}},{\"timestamp\":%d.6,\"name\":\"clean\"}",
                  t, t);
    jm_send ("{\"id\":%ju,\"events\":[%s],\"jobspec\":{\"tasks\":[{\"command\":"
             "[\"%s\"],\"count\":{\"total\":1}}]}}",
             (uintmax_t)id, events, name);
}

static void jm_sentinel (void)
{
    jm_send ("{\"id\":-1,\"events\":[]}");
    settle ();
}

/* ids of the jobs of a list response, as "1,2,3" */
static const char *ids (int i)
{
    static char buf[1024];
    json_t *jobs = json_object_get (resp[i].last, "jobs"), *job;
    size_t k;

    buf[0] = '\0';
    json_array_foreach (jobs, k, job) snprintf (
        buf + strlen (buf), sizeof (buf) - strlen (buf), "%s%lld", k ? "," : "",
        (long long)json_integer_value (json_object_get (job, "id")));
    return buf;
}

static void test_sync (joblist_t *jl)
{
    int a;

    ok (journal_requests == 1 && journal_req,
        "the engine asked for the journal");
    a = request (jl, "job-list.list", owner, false, "{s:i s:[s]}",
                 "max_entries", 0, "attrs", "state");
    ok (resp[a].count == 0, "a list before the backlog is held");
    jm_job (1, 1000, 64, "a");
    jm_job (2, 1000, 16, "b");
    jm_job (3, 2000, 8, "c");
    jm_job (4, 1000, 8, "d");
    jm_job (5, 1000, 1, "e");
    settle ();
    ok (resp[a].count == 0, "still held while the backlog arrives");
    jm_sentinel ();
    ok (resp[a].count == 1 && resp[a].errnum == 0,
        "answered once the sentinel came");
    is (ids (a), "3,4,2,1",
        "pending by priority, then running, then inactive; NEW not listed");
}

static void test_list (joblist_t *jl)
{
    int a;

    a = request (jl, "job-list.list", owner, false, "{s:i s:[s s] s:{s:[i]}}",
                 "max_entries", 0, "attrs", "name", "userid", "constraint",
                 "userid", 1000);
    is (ids (a), "4,2,1", "constraint userid");
    a = request (jl, "job-list.list", owner, false, "{s:i s:[s] s:{s:[s]}}",
                 "max_entries", 2, "attrs", "name", "constraint", "states",
                 "active");
    is (ids (a), "3,4", "max_entries 2 of the active jobs");
    ok (!strcmp (json_string_value (json_object_get (
                     json_array_get (json_object_get (resp[a].last, "jobs"), 0),
                     "name")),
                 "c")
            && json_object_size (
                   json_array_get (json_object_get (resp[a].last, "jobs"), 0))
                   == 2,
        "only the asked attributes (and id) are returned");
    a = request (jl, "job-list.list", owner, false, "{s:i s:[s] s:f}",
                 "max_entries", 0, "attrs", "state", "since", 100.);
    is (ids (a), "3,4,2", "since: inactive jobs before it are left out");
    a = request (jl, "job-list.list", owner, true, "{s:i s:[s]}", "max_entries",
                 0, "attrs", "state");
    ok (resp[a].count == 2 && resp[a].errnum == ENODATA
            && json_integer_value (json_object_get (resp[a].last, "version"))
                   == 1,
        "streaming list: one chunk with version 1, then ENODATA");
    a = request (jl, "job-list.list", owner, false, "{s:[s]}", "attrs",
                 "state");
    ok (resp[a].errnum == EPROTO, "no max_entries: EPROTO");
    a = request (jl, "job-list.list", owner, false, "{s:i s:[s]}",
                 "max_entries", 0, "attrs", "nope");
    ok (resp[a].errnum == EINVAL, "unknown attribute: EINVAL");
    a = request (jl, "job-list.list", owner, false, "{s:i s:[s] s:{s:[s]}}",
                 "max_entries", 0, "attrs", "state", "constraint", "states",
                 "bogus");
    ok (resp[a].errnum == EINVAL, "bad constraint: EINVAL");
    a = request (jl, "job-list.list", owner, false, "{s:i s:[s]}",
                 "max_entries", -1, "attrs", "state");
    ok (resp[a].errnum == EPROTO, "negative max_entries: EPROTO");
    a = request (jl, "job-list.list-attrs", owner, false, "{}");
    ok (json_array_size (json_object_get (resp[a].last, "attrs")) > 30,
        "list-attrs lists the attributes");
}

static void test_list_id (joblist_t *jl)
{
    int a, b, c, d;

    a = request (jl, "job-list.list-id", owner, false, "{s:I s:[s]}", "id",
                 (json_int_t)2, "attrs", "name");
    ok (resp[a].count == 1
            && !strcmp (json_string_value (json_object_get (
                            json_object_get (resp[a].last, "job"), "name")),
                        "b"),
        "list-id of a known job answers at once");
    kvs_ids[nkvs++] = 10;
    b = request (jl, "job-list.list-id", owner, false, "{s:I s:[s]}", "id",
                 (json_int_t)10, "attrs", "name");
    ok (resp[b].count == 0, "list-id of an id in the kvs but not seen waits");
    c = request (jl, "job-list.list-id", owner, false, "{s:I s:[s] s:i}", "id",
                 (json_int_t)4, "attrs", "state", "state", FLUX_JOB_STATE_RUN);
    ok (resp[c].count == 0, "list-id of a SCHED job waiting for RUN waits");
    d = request (jl, "job-list.list-id", owner, false, "{s:I s:[s]}", "id",
                 (json_int_t)99, "attrs", "name");
    ok (resp[d].errnum == ENOENT, "list-id of an unknown id: ENOENT");
    jm_job (10, 1000, 1, "late");
    settle ();
    ok (resp[b].count == 1 && resp[b].errnum == 0,
        "the waiting list-id is answered when the job arrives");
    jm_send ("{\"id\":4,\"events\":[" EV (40, "alloc", "") "]}");
    settle ();
    ok (resp[c].count == 1
            && json_integer_value (json_object_get (
                   json_object_get (resp[c].last, "job"), "state"))
                   == FLUX_JOB_STATE_RUN,
        "the list-id waiting for RUN is answered at alloc");
    a = request (jl, "job-list.list-id", owner, false, "{s:I s:[s] s:i}", "id",
                 (json_int_t)1, "attrs", "state", "state", FLUX_JOB_STATE_RUN);
    ok (resp[a].count == 1, "an inactive job answers any state wait");
    a = request (jl, "job-list.list-id", owner, false, "{s:I s:[s] s:i}", "id",
                 (json_int_t)1, "attrs", "state", "state", 1000);
    ok (resp[a].errnum == EINVAL, "an invalid state is EINVAL");

    /* invalidate answers a waiter with ENOENT */
    kvs_ids[nkvs++] = 11;
    jm_job (11, 1000, 1, "inv");
    a = request (jl, "job-list.list-id", owner, false, "{s:I s:[s] s:i}", "id",
                 (json_int_t)11, "attrs", "state", "state", FLUX_JOB_STATE_RUN);
    jm_send ("{\"id\":11,\"events\":[" EV (50, "invalidate", "") "]}");
    settle ();
    ok (resp[a].errnum == ENOENT, "an invalidated job's waiter gets ENOENT");
}

static void test_stats (joblist_t *jl)
{
    int a, w;
    json_t *o;

    a = request (jl, "job-list.job-stats", owner, false, "{}");
    o = json_object_get (resp[a].last, "job_states");
    ok (json_integer_value (json_object_get (o, "run")) == 2
            && json_integer_value (json_object_get (o, "sched")) == 1
            && json_integer_value (json_object_get (o, "inactive")) == 1
            && json_integer_value (json_object_get (o, "total")) == 4
            && json_integer_value (json_object_get (resp[a].last, "successful"))
                   == 1,
        "job-stats counts the states and results");
    w = request (jl, "job-list.job-stats", owner, true, "{}");
    ok (resp[w].count == 1, "a streaming job-stats answers at once");
    jm_send ("{\"id\":3,\"events\":[" EV (
        60, "exception",
        ",\"context\":{\"type\":\"cancel\","
        "\"severity\":0,\"note\":\"\"}") "," EV (61, "clean", "") "]}");
    run_for (0.3);
    ok (resp[w].count == 2
            && json_integer_value (json_object_get (resp[w].last, "canceled"))
                   == 1,
        "and again after a change");
}

static void test_resync (joblist_t *jl)
{
    int a;

    flux_respond_error (h, journal_req, ENODATA, NULL);
    settle ();
    run_for (0.2);
    ok (journal_requests == 2, "after the journal ended it is asked again");
    jm_job (1, 1000, 64, "a");
    jm_job (2, 1000, 64, "b");
    jm_sentinel ();
    a = request (jl, "job-list.list", owner, false, "{s:i s:[s]}",
                 "max_entries", 0, "attrs", "state");
    is (ids (a), "2,1", "the new backlog replaced the old jobs");

    /* purge */
    {
        flux_msg_t *ev = flux_event_pack ("job-purge-inactive", "{s:[I]}",
                                          "jobs", (json_int_t)1);
        joblist_purge_event (jl, ev);
        flux_msg_decref (ev);
    }
    a = request (jl, "job-list.list", owner, false, "{s:i s:[s]}",
                 "max_entries", 0, "attrs", "state");
    is (ids (a), "2", "a purged job is gone");
}

static void test_private (void)
{
    joblist_t *jl;
    int a, b, w;
    flux_msg_t *msg;

    flux_msg_decref (journal_req);
    journal_req = NULL;
    if (!(jl = joblist_create (h, 0, true)))
        BAIL_OUT ("joblist_create private");
    settle ();
    jm_job (1, 1000, 16, "owner's");
    jm_job (2, 2000, 16, "guest's");
    jm_sentinel ();
    a = request (jl, "job-list.list", guest, false, "{s:i s:[s]}",
                 "max_entries", 0, "attrs", "userid");
    is (ids (a), "2", "private mode: a guest lists only its jobs");
    a = request (jl, "job-list.list", owner, false, "{s:i s:[s]}",
                 "max_entries", 0, "attrs", "userid");
    is (ids (a), "2,1", "the owner lists all");
    a = request (jl, "job-list.list-id", guest, false, "{s:I s:[s]}", "id",
                 (json_int_t)1, "attrs", "name");
    ok (resp[a].errnum == ENOENT, "list-id of another's job: ENOENT");
    a = request (jl, "job-list.job-stats", guest, false, "{}");
    ok (resp[a].errnum == EPERM, "job-stats for a guest: EPERM");

    /* a waiter dropped on disconnect, another ended at destroy */
    b = request (jl, "job-list.list-id", owner, false, "{s:I s:[s] s:i}", "id",
                 (json_int_t)2, "attrs", "name", "state",
                 FLUX_JOB_STATE_INACTIVE);
    w = request (jl, "job-list.list-id", owner, false, "{s:I s:[s] s:i}", "id",
                 (json_int_t)2, "attrs", "name", "state",
                 FLUX_JOB_STATE_INACTIVE);
    {
        char sender[32];
        snprintf (sender, sizeof (sender), "client%d", b % 3);
        msg = flux_request_encode ("job-list.disconnect", NULL);
        flux_msg_route_push (msg, sender);
        flux_msg_set_cred (msg, owner);
        joblist_disconnect (jl, msg);
        flux_msg_decref (msg);
        /* naming w's sender with a guest's credentials: nothing ends */
        snprintf (sender, sizeof (sender), "client%d", w % 3);
        msg = flux_request_encode ("job-list.disconnect", NULL);
        flux_msg_route_push (msg, sender);
        flux_msg_set_cred (msg, guest);
        joblist_disconnect (jl, msg);
        flux_msg_decref (msg);
    }
    joblist_destroy (jl);
    settle ();
    ok (resp[b].count == 0, "disconnect dropped the sender's waiter");
    ok (resp[w].count == 1 && resp[w].errnum == ENOSYS,
        "a guest's disconnect naming another sender left its waiter; "
        "destroy ended it with ENOSYS (job-list is unloading)");
}

int main (int argc, char **argv)
{
    joblist_t *jl;
    flux_msg_handler_t *mh[3];

    plan (NO_PLAN);
    if (!(h = flux_open ("loop://", 0)) || !(r = flux_get_reactor (h)))
        BAIL_OUT ("cannot open loop://");
    mh[0] = flux_msg_handler_create (
        h,
        (struct flux_match){FLUX_MSGTYPE_REQUEST, FLUX_MATCHTAG_NONE,
                            "job-manager.events-journal"},
        journal_cb, NULL);
    mh[1] = flux_msg_handler_create (h,
                                     (struct flux_match){FLUX_MSGTYPE_REQUEST,
                                                         FLUX_MATCHTAG_NONE,
                                                         "kvs.lookup"},
                                     kvs_cb, NULL);
    mh[2] = flux_msg_handler_create (h, FLUX_MATCH_RESPONSE, response_cb, NULL);
    for (int i = 0; i < 3; i++) {
        if (!mh[i])
            BAIL_OUT ("handler");
        flux_msg_handler_start (mh[i]);
    }
    /* responses to guest requests keep the guest's credentials */
    flux_msg_handler_allow_rolemask (mh[2], FLUX_ROLE_ALL);
    if (!(jl = joblist_create (h, 0, false)))
        BAIL_OUT ("joblist_create");
    settle ();
    test_sync (jl);
    test_list (jl);
    test_list_id (jl);
    test_stats (jl);
    test_resync (jl);
    joblist_destroy (jl);
    settle ();
    test_private ();
    for (int i = 0; i < 3; i++)
        flux_msg_handler_destroy (mh[i]);
    for (int i = 0; i < MAXREQ; i++) {
        json_decref (resp[i].last);
        json_decref (resp[i].all);
    }
    flux_msg_decref (journal_req);
    flux_close (h);
    done_testing ();
    return 0;
}
