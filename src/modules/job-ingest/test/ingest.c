/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/ingest.c - the job-ingest engine over loop://, with a fake kvs
 * (kvs.commit into a key -> value map) and a fake job manager
 * (job-manager.submit, job-manager.getinfo) answered on the same handle:
 * one commit and one submit per batch, what is written, answers only
 * after the job manager, refusals, commit failures, batch_max, ids
 * across restarts, shutdown and unload.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ingest.h"
#include "libeventlog/eventlog.h"
#include "libjob/job.h"
#include "libjob/sign.h"
#include "libkvs/treeobj.h"
#include "libutil/fluid.h"
#include "tap.h"

#define RANK 3

static flux_t *h;
static flux_reactor_t *r;
static ingest_t *ing;

static const char *js_text
    = "{\"version\":1,\"resources\":[{\"type\":\"slot\",\"count\":1,"
      "\"label\":\"task\",\"with\":[{\"type\":\"core\",\"count\":1}]}],"
      "\"tasks\":[{\"command\":[\"true\"],\"slot\":\"task\",\"count\":{"
      "\"per_slot\":1}}],\"attributes\":{\"system\":{\"duration\":0}}}";

/* The fake kvs */
static json_t *kvs;
static int commits;
static int commit_errnum;

static void kvs_unlink (const char *key)
{
    size_t n = strlen (key);
    const char *k;
    json_t *v;
    void *tmp;

    json_object_foreach_safe (kvs, tmp, k, v)
    {
        if (!strcmp (k, key) || (!strncmp (k, key, n) && k[n] == '.'))
            json_object_del (kvs, k);
    }
}

static void commit_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    const char *ns, *key;
    json_t *ops, *op, *dirent;
    int flags, opflags;
    size_t i;

    commits++;
    if (flux_request_unpack (msg, NULL, "{s:s s:i s:o}", "namespace", &ns,
                             "flags", &flags, "ops", &ops)
        < 0) {
        flux_respond_error (h, msg, EPROTO, NULL);
        return;
    }
    if (commit_errnum) {
        flux_respond_error (h, msg, commit_errnum, NULL);
        return;
    }
    if (strcmp (ns, "primary") != 0)
        diag ("commit to namespace %s", ns);
    json_array_foreach (ops, i, op)
    {
        void *data;
        size_t len;
        if (json_unpack (op, "{s:s s:i s:o}", "key", &key, "flags", &opflags,
                         "dirent", &dirent)
            < 0)
            BAIL_OUT ("bad op");
        if (json_is_null (dirent))
            kvs_unlink (key);
        else if (treeobj_decode_val (dirent, &data, &len) == 0) {
            json_object_set_new (kvs, key, json_stringn (data, len));
            free (data);
        }
        else
            BAIL_OUT ("unexpected dirent");
    }
    flux_respond_pack (h, msg, "{s:s s:i}", "rootref", "sha1-0", "rootseq",
                       commits);
}

/* The fake job manager */
static json_t *jm_jobs;   /* every job received */
static int jm_submits;    /* job-manager.submit requests */
static int jm_last_count; /* jobs in the last one */
static int jm_errnum;
static bool jm_hold;
static flux_msg_t *jm_held[16]; /* held job-manager.submit requests */
static int jm_nheld;
static int getinfo_errnum;
static json_int_t max_jobid;
static int getinfos;

static void jm_submit_cb (flux_t *h, flux_msg_handler_t *mh,
                          const flux_msg_t *msg, void *arg)
{
    json_t *jobs, *job;
    size_t i;

    jm_submits++;
    if (flux_request_unpack (msg, NULL, "{s:o !}", "jobs", &jobs) < 0
        || !json_is_array (jobs)) {
        flux_respond_error (h, msg, EPROTO, NULL);
        return;
    }
    jm_last_count = json_array_size (jobs);
    json_array_foreach (jobs, i, job)
    {
        json_array_append (jm_jobs, job);
    }
    if (jm_hold && jm_nheld < 16) {
        jm_held[jm_nheld++] = (flux_msg_t *)flux_msg_incref (msg);
        return;
    }
    if (jm_errnum)
        flux_respond_error (h, msg, jm_errnum, "the job manager says no");
    else
        flux_respond (h, msg, NULL);
}

static void getinfo_cb (flux_t *h, flux_msg_handler_t *mh,
                        const flux_msg_t *msg, void *arg)
{
    getinfos++;
    if (getinfo_errnum)
        flux_respond_error (h, msg, getinfo_errnum, NULL);
    else
        flux_respond_pack (h, msg, "{s:I}", "max_jobid", max_jobid);
}

/* Stop holding and answer every held job-manager.submit with success. */
static void release_held (void)
{
    jm_hold = false;
    for (int i = 0; i < jm_nheld; i++) {
        flux_respond (h, jm_held[i], NULL);
        flux_msg_decref (jm_held[i]);
    }
    jm_nheld = 0;
}

static void ingest_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    ingest_submit (ing, msg);
}

/* Clients */
struct sub {
    bool done;
    int errnum;
    char errstr[160];
    flux_jobid_t id;
};

static void sub_cb (flux_future_t *f, void *arg)
{
    struct sub *s = arg;

    s->done = true;
    if (flux_job_submit_get_id (f, &s->id) < 0) {
        s->errnum = errno;
        snprintf (s->errstr, sizeof (s->errstr), "%s",
                  future_strerror (f, errno));
    }
    flux_future_destroy (f);
}

static void submit (struct sub *s, int urgency, int flags)
{
    flux_future_t *f;

    memset (s, 0, sizeof (*s));
    if (!(f = flux_job_submit (h, js_text, urgency, flags))
        || flux_future_then (f, -1, sub_cb, s) < 0)
        BAIL_OUT ("submit");
}

/* Send a raw job-ingest.submit with the given payload and credentials. */
static void submit_raw (struct sub *s, const char *payload, uint32_t userid,
                        uint32_t rolemask)
{
    flux_msg_t *msg = flux_request_encode ("job-ingest.submit", payload);
    struct flux_msg_cred cred = {userid, rolemask};
    flux_future_t *f;

    memset (s, 0, sizeof (*s));
    if (!msg || flux_msg_set_cred (msg, cred) < 0
        || !(f = flux_rpc_message (h, msg, FLUX_NODEID_ANY, 0))
        || flux_future_then (f, -1, sub_cb, s) < 0)
        BAIL_OUT ("submit_raw");
    flux_msg_decref (msg);
}

static bool all_done (struct sub *s, int n)
{
    for (int i = 0; i < n; i++)
        if (!s[i].done)
            return false;
    return true;
}

static void run_until_done (struct sub *s, int n)
{
    int turns = 0;
    while (!all_done (s, n) && turns++ < 100000)
        flux_reactor_run (r, FLUX_REACTOR_ONCE);
    if (!all_done (s, n))
        BAIL_OUT ("submissions did not finish");
}

static void reset_fakes (void)
{
    json_object_clear (kvs);
    json_array_clear (jm_jobs);
    commits = jm_submits = jm_last_count = getinfos = 0;
    commit_errnum = jm_errnum = getinfo_errnum = 0;
}

static const char *kvs_get (flux_jobid_t id, const char *name)
{
    char key[80];
    if (flux_job_kvs_key (key, sizeof (key), id, name) < 0)
        return NULL;
    return json_string_value (json_object_get (kvs, key));
}

static void test_batch (void)
{
    struct sub s[3];
    json_t *job, *entry, *context, *jobspec;
    const char *J, *name;
    char *payload;
    size_t len;
    uint32_t uid;
    const char *mech;
    double ts, t_submit;
    json_int_t id;
    int userid, urgency, flags, version;

    reset_fakes ();
    max_jobid = ((json_int_t)5000 << 24) | 7; /* timestamp 5000 */
    submit (&s[0], 16, 0);
    submit (&s[1], 0, FLUX_JOB_WAITABLE);
    submit (&s[2], 31, FLUX_JOB_DEBUG);
    run_until_done (s, 3);
    ok (s[0].errnum == 0 && s[1].errnum == 0 && s[2].errnum == 0,
        "3 jobs submitted in one loop turn are accepted");
    ok (getinfos == 1, "job-manager.getinfo was asked once");
    ok (commits == 1 && jm_submits == 1 && jm_last_count == 3,
        "one KVS commit and one job-manager.submit carried all 3");
    ok (s[0].id < s[1].id && s[1].id < s[2].id, "ids increase");
    ok (fluid_get_id (s[0].id) == RANK && fluid_get_id (s[2].id) == RANK,
        "the generator id is the rank");
    ok (fluid_get_timestamp (s[0].id) > 5000
            && fluid_get_timestamp (s[0].id) < 5000 + 60000,
        "ids start after max_jobid's timestamp (%ju)",
        (uintmax_t)fluid_get_timestamp (s[0].id));
    ok (json_object_size (kvs) == 9, "9 keys written");

    job = json_array_get (jm_jobs, 1);
    ok (job
            && json_unpack (job, "{s:I s:i s:i s:F s:i s:o !}", "id", &id,
                            "userid", &userid, "urgency", &urgency, "t_submit",
                            &t_submit, "flags", &flags, "jobspec", &jobspec)
                   == 0
            && (flux_jobid_t)id == s[1].id && userid == (int)getuid ()
            && urgency == 0 && flags == FLUX_JOB_WAITABLE
            && json_is_object (jobspec)
            && json_real_value (json_object_get (job, "t_submit")) > 0,
        "job-manager.submit gets {id, userid, urgency, t_submit, flags, "
        "jobspec}");
    ok ((J = kvs_get (s[1].id, "J"))
            && sign_unwrap (J, &payload, &len, &uid, &mech, NULL) == 0
            && !strcmp (payload, js_text) && uid == getuid (),
        "job.<id>.J is the signed jobspec");
    free (payload);
    {
        json_t *o = json_loads (kvs_get (s[1].id, "jobspec"), 0, NULL);
        ok (o && json_equal (o, jobspec), "job.<id>.jobspec is the jobspec");
        json_decref (o);
    }
    entry = eventlog_entry_decode (kvs_get (s[1].id, "eventlog"));
    ok (entry && eventlog_entry_parse (entry, &ts, &name, &context) == 0
            && !strcmp (name, "submit") && ts == t_submit
            && json_unpack (context, "{s:i s:i s:i s:i !}", "userid", &userid,
                            "urgency", &urgency, "flags", &flags, "version",
                            &version)
                   == 0
            && userid == (int)getuid () && urgency == 0
            && flags == FLUX_JOB_WAITABLE && version == 1,
        "job.<id>.eventlog is one submit event {userid, urgency, flags, "
        "version:1} at t_submit");
    ok (fabs (ts - (double)time (NULL)) < 60, "t_submit is wall clock time");
    json_decref (entry);
}

static void test_answer_after_jm (void)
{
    struct sub s[2];
    int turns = 0;

    reset_fakes ();
    jm_hold = true;
    submit (&s[0], 16, 0);
    submit (&s[1], 16, 0);
    while (jm_nheld == 0 && turns++ < 1000)
        flux_reactor_run (r, FLUX_REACTOR_ONCE);
    for (int i = 0; i < 20; i++)
        flux_reactor_run (r, FLUX_REACTOR_NOWAIT);
    ok (jm_nheld == 1 && !s[0].done && !s[1].done && ingest_busy (ing) == 1,
        "no answer while the job manager has not answered");
    release_held ();
    run_until_done (s, 2);
    ok (s[0].errnum == 0 && s[1].errnum == 0 && ingest_busy (ing) == 0,
        "answered once the job manager accepted");
    ok (getinfos == 0, "getinfo is not asked again");
}

static void test_jm_refuses (void)
{
    struct sub s[2];

    reset_fakes ();
    jm_errnum = EPERM;
    submit (&s[0], 16, 0);
    submit (&s[1], 16, 0);
    run_until_done (s, 2);
    ok (s[0].errnum == EPERM && s[1].errnum == EPERM
            && !strcmp (s[0].errstr, "the job manager says no"),
        "a refusal by the job manager reaches every requester with its text");
    ok (commits == 2 && json_object_size (kvs) == 0,
        "the refused jobs were unlinked from the KVS again");
}

static void test_commit_fails (void)
{
    struct sub s[2];

    reset_fakes ();
    commit_errnum = ENOSPC;
    submit (&s[0], 16, 0);
    submit (&s[1], 16, 0);
    run_until_done (s, 2);
    ok (s[0].errnum == ENOSPC && s[1].errnum == ENOSPC
            && strstr (s[0].errstr, "KVS commit failed"),
        "a failed commit reaches every requester: %s", s[0].errstr);
    ok (jm_submits == 0, "the job manager never heard of them");
}

static void test_bad_requests (void)
{
    struct sub s[4];

    reset_fakes ();
    submit_raw (&s[0], "{\"J\":1}", getuid (), FLUX_ROLE_OWNER);
    submit_raw (&s[1], "[]", getuid (), FLUX_ROLE_OWNER);
    submit_raw (&s[2], NULL, getuid (), FLUX_ROLE_OWNER);
    {
        char *J = sign_none_wrap (js_text, strlen (js_text), 4242);
        json_t *o
            = json_pack ("{s:s s:i s:i}", "J", J, "urgency", 16, "flags", 0);
        char *p = json_dumps (o, 0);
        submit_raw (&s[3], p, 4242, FLUX_ROLE_USER);
        free (p);
        free (J);
        json_decref (o);
    }
    run_until_done (s, 4);
    ok (s[0].errnum == EPROTO && s[1].errnum == EPROTO && s[2].errnum == EPROTO,
        "malformed requests get EPROTO");
    ok (s[3].errnum == EPERM && strstr (s[3].errstr, "mechanism none"),
        "a guest signing with none gets EPERM: %s", s[3].errstr);
    ok (commits == 0 && jm_submits == 0, "nothing was written or sent");
}

static void test_batch_max (void)
{
    struct sub s[10];
    json_t *stats;
    json_int_t batches0 = 0, batches1 = 0;

    stats = ingest_stats (ing);
    json_unpack (stats, "{s:I}", "batches", &batches0);
    json_decref (stats);
    reset_fakes ();
    for (int i = 0; i < 10; i++)
        submit (&s[i], 16, 0);
    run_until_done (s, 10);
    stats = ingest_stats (ing);
    json_unpack (stats, "{s:I}", "batches", &batches1);
    ok (all_done (s, 10) && s[9].errnum == 0 && commits == 3 && jm_submits == 3
            && batches1 - batches0 == 3,
        "10 jobs with batch-max 4 make 3 batches");
    json_decref (stats);
}

/* With a batch delay, jobs arriving in different loop turns within the
 * delay share one batch.
 */
static void test_batch_delay (void)
{
    struct sub s[3];

    reset_fakes ();
    ingest_set_batch_delay (ing, 200);
    submit (&s[0], 16, 0);
    for (int i = 0; i < 5; i++)
        flux_reactor_run (r, FLUX_REACTOR_NOWAIT);
    submit (&s[1], 16, 0);
    for (int i = 0; i < 5; i++)
        flux_reactor_run (r, FLUX_REACTOR_NOWAIT);
    submit (&s[2], 16, 0);
    run_until_done (s, 3);
    ok (s[2].errnum == 0 && commits == 1 && jm_submits == 1
            && jm_last_count == 3,
        "with batch-delay, jobs of several loop turns share one batch");
    ingest_set_batch_delay (ing, 0);
}

static void test_restart (void)
{
    struct sub s[2];
    flux_jobid_t last;

    reset_fakes ();
    submit (&s[0], 16, 0);
    run_until_done (s, 1);
    last = s[0].id;
    ingest_destroy (ing);
    /* a new engine, as after a restart: the job manager knows 'last' */
    max_jobid = (json_int_t)last;
    if (!(ing = ingest_create (h, RANK, getuid (), 4)))
        BAIL_OUT ("ingest_create");
    submit (&s[1], 16, 0);
    run_until_done (&s[1], 1);
    ok (s[1].errnum == 0 && s[1].id > last && getinfos == 1,
        "after a restart new ids are above max_jobid");

    ingest_destroy (ing);
    getinfo_errnum = ENOSYS;
    if (!(ing = ingest_create (h, RANK, getuid (), 4)))
        BAIL_OUT ("ingest_create");
    submit (&s[0], 16, 0);
    run_until_done (s, 1);
    {
        struct timespec now;
        uint64_t ms;
        clock_gettime (CLOCK_REALTIME, &now);
        ms = (uint64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000
             - INGEST_EPOCH_MS;
        /* the id's timestamp is the wall clock at start plus the
         * monotonic clock's ms since: each read truncated to whole ms,
         * so it may be 1 ms past the wall clock read here */
        ok (s[0].errnum == 0 && fluid_get_timestamp (s[0].id) <= ms + 1
                && fluid_get_timestamp (s[0].id) + 60000 > ms,
            "without getinfo, ids start from the wall clock since "
            "INGEST_EPOCH");
    }
    getinfo_errnum = 0;
}

static void test_shutdown (void)
{
    struct sub s[3];
    int turns = 0;

    reset_fakes ();
    jm_hold = true;
    submit (&s[0], 16, 0);
    while (jm_nheld == 0 && turns++ < 1000)
        flux_reactor_run (r, FLUX_REACTOR_ONCE);
    submit (&s[1], 16, 0);
    for (int i = 0; i < 5 && !s[1].done; i++)
        flux_reactor_run (r, FLUX_REACTOR_NOWAIT);
    /* s[1] is collected but its batch not started yet: shutdown starts it */
    ingest_shutdown (ing);
    submit (&s[2], 16, 0);
    run_until_done (&s[2], 1);
    ok (s[2].errnum == ENOSYS && strstr (s[2].errstr, "shutting down"),
        "after shutdown new requests get ENOSYS");
    ok (ingest_busy (ing) >= 1, "started batches are still busy");
    release_held ();
    turns = 0;
    while (ingest_busy (ing) > 0 && turns++ < 10000)
        flux_reactor_run (r, FLUX_REACTOR_ONCE);
    run_until_done (s, 2);
    ok (s[0].errnum == 0 && s[1].errnum == 0,
        "jobs accepted before shutdown still go through");

    /* unload with a batch at the job manager: the requester gets ENOSYS */
    ingest_destroy (ing);
    if (!(ing = ingest_create (h, RANK, getuid (), 4)))
        BAIL_OUT ("ingest_create");
    reset_fakes ();
    jm_hold = true;
    submit (&s[0], 16, 0);
    turns = 0;
    while (jm_nheld == 0 && turns++ < 1000)
        flux_reactor_run (r, FLUX_REACTOR_ONCE);
    ingest_destroy (ing);
    ing = NULL;
    run_until_done (s, 1);
    ok (s[0].errnum == ENOSYS, "unloading answers held requests ENOSYS");
    release_held (); /* the late answer is dropped */
    for (int i = 0; i < 10; i++)
        flux_reactor_run (r, FLUX_REACTOR_NOWAIT);
}

static void test_create_errors (void)
{
    errno = 0;
    ok (ingest_create (h, 16384, 0, 1) == NULL && errno == EINVAL,
        "rank 16384 cannot be a FLUID generator id");
    ok (ingest_create (h, 0, 0, 0) == NULL && errno == EINVAL,
        "batch_max 0 is refused");
    ingest_destroy (NULL);
}

int main (int argc, char **argv)
{
    struct {
        const char *topic;
        flux_msg_handler_f cb;
    } tab[] = {
        {"kvs.commit", commit_cb},
        {"job-manager.submit", jm_submit_cb},
        {"job-manager.getinfo", getinfo_cb},
        {"job-ingest.submit", ingest_cb},
    };
    flux_msg_handler_t *mh[4];

    if (!(h = flux_open ("loop://", 0)))
        BAIL_OUT ("loop://");
    {
        /* we are the owner: flux_job_submit signs with "none" */
        char owner[32];
        snprintf (owner, sizeof (owner), "%u", (unsigned)getuid ());
        if (flux_attr_set_cacheonly (h, "security.owner", owner) < 0)
            BAIL_OUT ("flux_attr_set_cacheonly");
    }
    r = flux_get_reactor (h);
    kvs = json_object ();
    jm_jobs = json_array ();
    for (int i = 0; i < 4; i++) {
        mh[i] = flux_msg_handler_create (
            h,
            (struct flux_match){FLUX_MSGTYPE_REQUEST, FLUX_MATCHTAG_NONE,
                                tab[i].topic},
            tab[i].cb, NULL);
        flux_msg_handler_allow_rolemask (mh[i], FLUX_ROLE_ALL);
        flux_msg_handler_start (mh[i]);
    }
    if (!(ing = ingest_create (h, RANK, getuid (), 4)))
        BAIL_OUT ("ingest_create");

    test_batch ();
    test_answer_after_jm ();
    test_jm_refuses ();
    test_commit_fails ();
    test_bad_requests ();
    test_batch_max ();
    test_batch_delay ();
    test_restart ();
    test_shutdown ();
    test_create_errors ();

    for (int i = 0; i < 4; i++)
        flux_msg_handler_destroy (mh[i]);
    json_decref (kvs);
    json_decref (jm_jobs);
    flux_close (h);
    done_testing ();
    return 0;
}
