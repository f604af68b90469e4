/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/engine.c - the sched-simple engine over loop://, with the other
 * side of every protocol played on the same handle: resource.acquire
 * (RFC 28, with up/down updates), job-manager.sched-hello/sched-ready and
 * the sched.* requests (RFC 27), kvs.commit and kvs.lookup (a fake KVS
 * that can hold or fail commits), log.append.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "libflux/flux.h"
#include "libkvs/treeobj.h"
#include "librlist/rlist.h"
#include "tap.h"

static flux_t *h;
static flux_reactor_t *r;
static sched_t *s;

/* ---- the fake resource module ---- */

static const char *inventory_R;
static const char *inventory_up = "0-3";
static bool acquire_fail;
static const flux_msg_t *acquire_msg;

static void acquire_cb (flux_t *h, flux_msg_handler_t *mh,
                        const flux_msg_t *msg, void *arg)
{
    json_t *R = json_loads (inventory_R, 0, NULL);

    if (acquire_fail) {
        flux_respond_error (h, msg, EIO, "no resources for you");
        json_decref (R);
        return;
    }
    flux_msg_decref (acquire_msg);
    acquire_msg = flux_msg_incref (msg);
    flux_respond_pack (h, msg, "{s:o s:s}", "resources", R, "up", inventory_up);
}

static void acquire_update (const char *key, const char *ids)
{
    flux_respond_pack (h, acquire_msg, "{s:s}", key, ids);
}

/* ---- the fake job manager (hello, ready) ---- */

static json_t *hello_jobs; /* array of {id, priority, userid, t_submit} */
static char ready_mode[32];
static int ready_limit;
static int hellos;
static int hello_partial_ok = -1; /* partial-ok of the last hello */

static void hello_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    size_t i;
    json_t *job;

    hellos++;
    hello_partial_ok = -1;
    (void)flux_request_unpack (msg, NULL, "{s:b}", "partial-ok",
                               &hello_partial_ok);
    json_array_foreach (hello_jobs, i, job)
        flux_respond_pack (h, msg, "O", job);
    flux_respond_error (h, msg, ENODATA, NULL);
}

static void ready_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    const char *mode;
    ready_limit = -1;
    if (flux_request_unpack (msg, NULL, "{s:s s?i}", "mode", &mode, "limit",
                             &ready_limit)
        < 0) {
        flux_respond_error (h, msg, EPROTO, NULL);
        return;
    }
    snprintf (ready_mode, sizeof (ready_mode), "%s", mode);
    flux_respond_pack (h, msg, "{s:i}", "count", 0);
}

/* ---- the fake KVS ---- */

static json_t *store; /* key -> JSON text */
static int commits;
static bool commit_fail;
static bool commit_hold;
static const flux_msg_t *held[16];
static int nheld;

static void commit_apply (const flux_msg_t *msg)
{
    json_t *ops, *op;
    size_t i;

    if (flux_request_unpack (msg, NULL, "{s:o}", "ops", &ops) < 0) {
        flux_respond_error (h, msg, EPROTO, NULL);
        return;
    }
    json_array_foreach (ops, i, op)
    {
        const char *key;
        json_t *dirent;
        void *data;
        size_t len;
        if (json_unpack (op, "{s:s s:o}", "key", &key, "dirent", &dirent) < 0
            || treeobj_decode_val (dirent, &data, &len) < 0)
            BAIL_OUT ("bad commit op");
        json_object_set_new (store, key, json_stringn (data, len));
        free (data);
    }
    commits++;
    flux_respond_pack (h, msg, "{s:s s:i}", "rootref", "sha1-0", "rootseq",
                       commits);
}

static void commit_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    if (commit_fail)
        flux_respond_error (h, msg, EIO, "disk on fire");
    else if (commit_hold && nheld < 16)
        held[nheld++] = flux_msg_incref (msg);
    else
        commit_apply (msg);
}

static void commit_release (void)
{
    for (int i = 0; i < nheld; i++) {
        commit_apply (held[i]);
        flux_msg_decref (held[i]);
    }
    nheld = 0;
}

static void lookup_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    const char *key;
    json_t *v;

    if (flux_request_unpack (msg, NULL, "{s:s}", "key", &key) < 0) {
        flux_respond_error (h, msg, EPROTO, NULL);
        return;
    }
    if (!(v = json_object_get (store, key))) {
        flux_respond_error (h, msg, ENOENT, NULL);
        return;
    }
    flux_respond_pack (
        h, msg, "{s:o}", "val",
        treeobj_create_val (json_string_value (v), json_string_length (v)));
}

static char lastlog[1024];
static char alllogs[16384];
static int nlogs;

static void log_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                    void *arg)
{
    const void *data;
    size_t len;

    if (flux_request_decode_raw (msg, NULL, &data, &len) == 0) {
        size_t n = strlen (alllogs);
        snprintf (lastlog, sizeof (lastlog), "%.*s", (int)len,
                  (const char *)data);
        if (n + strlen (lastlog) + 2 < sizeof (alllogs))
            sprintf (alllogs + n, "%s\n", lastlog);
        nlogs++;
    }
}

/* ---- the sched.* requests, fed to the engine as main.c does ---- */

#define FEED(name, fn)                                   \
    static void name (flux_t *h, flux_msg_handler_t *mh, \
                      const flux_msg_t *msg, void *arg)  \
    {                                                    \
        if (s)                                           \
            fn (s, msg);                                 \
    }
FEED (s_alloc, sched_alloc)
FEED (s_free, sched_free)
FEED (s_cancel, sched_cancel)
FEED (s_prioritize, sched_prioritize)
FEED (s_expiration, sched_expiration)
FEED (s_status, sched_resource_status)
FEED (s_disconnect, sched_disconnect)
FEED (s_feasibility, sched_feasibility)

/* ---- responses to sched.alloc / sched.free (matchtag 0) ---- */

struct ev {
    uint64_t id;
    int type; /* 0-3, 10 = free, -1 = error response */
    int errnum;
    char summary[128];
    char reason[128];
    char note[256];
    bool reason_null;
    bool R_stored; /* job.<id>.R was in the KVS when this arrived */
};
static struct ev evs[4096];
static int nevs;

static void key_of (char *buf, size_t size, uint64_t id)
{
    snprintf (buf, size, "job.%04x.%04x.%04x.%04x.R",
              (unsigned)(id >> 48) & 0xffff, (unsigned)(id >> 32) & 0xffff,
              (unsigned)(id >> 16) & 0xffff, (unsigned)id & 0xffff);
}

static void response_cb (flux_t *h, flux_msg_handler_t *mh,
                         const flux_msg_t *msg, void *arg)
{
    struct ev *e = &evs[nevs < 4095 ? nevs++ : nevs];
    const char *topic = "";
    json_int_t id = -1;
    json_t *ann = NULL, *sched = NULL, *v;
    const char *note = NULL;
    char key[64];

    memset (e, 0, sizeof (*e));
    flux_msg_get_topic (msg, &topic);
    flux_msg_get_errnum (msg, &e->errnum);
    if (e->errnum) {
        e->type = -1;
        return;
    }
    if (!strcmp (topic, "sched.free")) {
        flux_msg_unpack (msg, "{s:I}", "id", &id);
        e->id = id;
        e->type = 10;
        return;
    }
    if (flux_msg_unpack (msg, "{s:I s:i s?o s?s}", "id", &id, "type", &e->type,
                         "annotations", &ann, "note", &note)
        < 0)
        BAIL_OUT ("bad sched.alloc response");
    e->id = id;
    if (note)
        snprintf (e->note, sizeof (e->note), "%s", note);
    if (ann && (sched = json_object_get (ann, "sched"))) {
        if ((v = json_object_get (sched, "resource_summary")))
            snprintf (e->summary, sizeof (e->summary), "%s",
                      json_string_value (v));
        v = json_object_get (sched, "reason_pending");
        if (json_is_string (v))
            snprintf (e->reason, sizeof (e->reason), "%s",
                      json_string_value (v));
        e->reason_null = json_is_null (v);
    }
    key_of (key, sizeof (key), e->id);
    e->R_stored = json_object_get (store, key) != NULL;
}

/* The last event for id (of type, or any type if type < -1). */
static struct ev *find (uint64_t id, int type)
{
    for (int i = nevs - 1; i >= 0; i--)
        if (evs[i].id == id && (type < -1 || evs[i].type == type))
            return &evs[i];
    return NULL;
}

static int count (uint64_t id, int type)
{
    int n = 0;
    for (int i = 0; i < nevs; i++)
        if (evs[i].id == id && evs[i].type == type)
            n++;
    return n;
}

/* Run the loop until cond() or nothing is left to do. */
static void run_until (bool (*cond) (void))
{
    for (int i = 0; i < 2000 && !(cond && cond ()); i++)
        if (flux_reactor_run (r, FLUX_REACTOR_NOWAIT) < 0)
            break;
}

static void settle (void)
{
    run_until (NULL);
}

static bool is_ready (void)
{
    return sched_is_ready (s);
}

/* ---- requests ---- */

static json_t *jobspec (int nnodes, int nslots, int cores, int gpus, int x,
                        double duration)
{
    json_t *with = json_pack ("[{s:s s:i}]", "type", "core", "count", cores);
    json_t *slot, *res;

    if (gpus > 0)
        json_array_append_new (
            with, json_pack ("{s:s s:i}", "type", "gpu", "count", gpus));
    slot = json_pack ("{s:s s:i s:s s:o}", "type", "slot", "count", nslots,
                      "label", "task", "with", with);
    if (nnodes > 0)
        res = json_pack ("[{s:s s:i s:b s:[o]}]", "type", "node", "count",
                         nnodes, "exclusive", x, "with", slot);
    else
        res = json_pack ("[o]", slot);
    return json_pack ("{s:i s:o s:[{s:[s] s:s s:{s:i}}] s:{s:{s:f}}}",
                      "version", 1, "resources", res, "tasks", "command",
                      "true", "slot", "task", "count", "per_slot", 1,
                      "attributes", "system", "duration", duration);
}

static void send_req (const char *topic, json_t *o)
{
    char *str = json_dumps (o, JSON_COMPACT);
    flux_msg_t *msg = flux_request_encode (topic, str);
    if (!msg || flux_send (h, msg, 0) < 0)
        BAIL_OUT ("sending %s", topic);
    flux_msg_decref (msg);
    free (str);
    json_decref (o);
}

static void alloc (uint64_t id, unsigned int priority, json_t *js)
{
    send_req ("sched.alloc",
              json_pack ("{s:I s:I s:i s:f s:o}", "id", (json_int_t)id,
                         "priority", (json_int_t)priority, "userid", 42,
                         "t_submit", 1.0, "jobspec", js));
}

static void sched_free_req (uint64_t id)
{
    send_req ("sched.free",
              json_pack ("{s:I s:b}", "id", (json_int_t)id, "final", 1));
}

/* An RPC to the engine; returns the errno (0 on success), *out the
 * payload (new reference) if wanted. */
static int rpc (const char *topic, json_t *in, json_t **out)
{
    char *str = in ? json_dumps (in, JSON_COMPACT) : NULL;
    flux_future_t *f = flux_rpc (h, topic, str, FLUX_NODEID_ANY, 0);
    const char *resp;
    int rc = 0;

    json_decref (in);
    free (str);
    while (f && !flux_future_is_ready (f))
        if (flux_reactor_run (r, FLUX_REACTOR_ONCE) < 0)
            break;
    if (!f || flux_rpc_get (f, &resp) < 0)
        rc = errno;
    else if (out)
        *out = resp ? json_loads (resp, 0, NULL) : NULL;
    flux_future_destroy (f);
    return rc;
}

static json_int_t stat_of (const char *name)
{
    json_t *o = sched_stats (s);
    json_int_t v = -1;
    json_unpack (o, "{s:I}", name, &v);
    json_decref (o);
    return v;
}

static char *R_summary (json_t *R)
{
    struct rlist *rl = rlist_from_R (R, NULL);
    char *str = rl ? rlist_dumps (rl) : NULL;
    rlist_destroy (rl);
    return str;
}

static json_t *stored_R (uint64_t id)
{
    char key[64];
    json_t *v;
    key_of (key, sizeof (key), id);
    v = json_object_get (store, key);
    return v ? json_loads (json_string_value (v), 0, NULL) : NULL;
}

/* ---- tests ---- */

static const char *R4
    = "{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0-3\","
      "\"children\":{\"core\":\"0-3\",\"gpu\":\"0\"}}],\"nodelist\":"
      "[\"n[0-3]\"],\"starttime\":0,\"expiration\":0}}";

static void start (int depth)
{
    if (!(s = sched_create (h, depth)))
        BAIL_OUT ("sched_create");
    ok (sched_start (s) == 0, "sched_start");
    run_until (is_ready);
}

static void test_startup (void)
{
    inventory_R = R4;
    start (8);
    ok (sched_is_ready (s) && hellos == 1, "acquire, hello, ready");
    ok (!strcmp (ready_mode, "limited") && ready_limit == 8,
        "sched-ready: limited mode, limit 8");
    cmp_ok (stat_of ("cores"), "==", 16, "16 cores acquired");
    ok (hello_partial_ok == 1, "sched-hello says partial-ok:true");
}

static void test_alloc_basic (void)
{
    struct ev *e;
    json_t *R;
    double start, expiration;
    char *sum;

    alloc (1, 16, jobspec (0, 1, 2, 0, 0, 0.));
    settle ();
    e = find (1, 0);
    ok (e && !strcmp (e->summary, "rank0/core[0-1]"),
        "job 1: success, resource_summary %s", e ? e->summary : "none");
    ok (e && e->R_stored, "job 1: R was committed before the response");
    R = stored_R (1);
    sum = R_summary (R);
    is (sum, "rank0/core[0-1]", "job 1: R names rank 0 cores 0-1");
    free (sum);
    ok (R
            && !json_unpack (R, "{s:{s:F s:F}}", "execution", "starttime",
                             &start, "expiration", &expiration)
            && fabs (start - time (NULL)) < 5 && expiration == 0.,
        "job 1: starttime is now, no expiration (duration 0)");
    {
        char *txt = R ? json_dumps (R, JSON_COMPACT) : NULL;
        ok (txt && strstr (txt, "\"nodelist\":[\"n0\"]")
                && strstr (txt, "\"nslots\":1"),
            "job 1: R has nodelist n0 and nslots 1");
        free (txt);
    }
    json_decref (R);

    alloc (2, 16, jobspec (0, 1, 1, 1, 0, 60.));
    settle ();
    R = stored_R (2);
    ok (R
            && !json_unpack (R, "{s:{s:F s:F}}", "execution", "starttime",
                             &start, "expiration", &expiration)
            && fabs (expiration - start - 60.) < 1e-3,
        "job 2: expiration = starttime + duration");
    json_decref (R);
    e = find (2, 0);
    ok (e && !strcmp (e->summary, "rank0/core2,gpu0"), "job 2: %s",
        e ? e->summary : "none");
}

static void test_batching (void)
{
    int before = commits, ok_all = 1;

    for (uint64_t id = 10; id < 20; id++)
        alloc (id, 16, jobspec (0, 1, 1, 0, 0, 0.));
    settle ();
    for (uint64_t id = 10; id < 20; id++)
        if (!find (id, 0) || !find (id, 0)->R_stored)
            ok_all = 0;
    ok (ok_all, "10 allocs sent at once all succeed after their R is stored");
    cmp_ok (commits - before, "==", 1, "their R went to the KVS in 1 commit");
    for (uint64_t id = 10; id < 20; id++)
        sched_free_req (id);
    settle ();
    ok (find (19, 10) != NULL, "free responses carry the id");
    cmp_ok (stat_of ("cores-free"), "==", 13,
            "13 cores free (jobs 1, 2 hold 3)");
}

static void test_commit_before_success (void)
{
    commit_hold = true;
    alloc (30, 16, jobspec (0, 1, 1, 0, 0, 0.));
    settle ();
    ok (find (30, 0) == NULL && stat_of ("committing") == 1,
        "while the commit is held, no success is sent");
    commit_hold = false;
    commit_release ();
    settle ();
    ok (find (30, 0) && find (30, 0)->R_stored,
        "after the commit, success (R stored)");
    sched_free_req (30);
    settle ();
}

static void test_pending (void)
{
    struct ev *e;

    /* 13 free: rank0 has core3, ranks 1-3 all 4 */
    alloc (40, 16, jobspec (3, 1, 4, 0, 1, 0.)); /* 3 whole nodes */
    settle ();
    ok (find (40, 0) != NULL, "job 40 takes 3 whole nodes: %s",
        find (40, 0) ? find (40, 0)->summary : "none");
    alloc (41, 16, jobspec (0, 1, 2, 0, 0, 0.)); /* 1 core left */
    settle ();
    e = find (41, 1);
    ok (e && !strcmp (e->reason, "insufficient resources"),
        "job 41 pends: annotated reason_pending \"%s\"", e ? e->reason : "");
    alloc (42, 10, jobspec (0, 1, 1, 0, 0, 0.)); /* would fit */
    settle ();
    ok (!find (42, -2), "job 42 (lower priority, fits) waits behind 41: no "
                        "backfill, no annotation");
    alloc (43, 20, jobspec (0, 1, 1, 0, 0, 0.)); /* higher priority */
    settle ();
    ok (find (43, 0) != NULL, "job 43 (higher priority) becomes the head and "
                              "runs at once");
    cmp_ok (count (41, 1), "==", 1, "job 41 was annotated only once");
    cmp_ok (stat_of ("pending"), "==", 2, "2 jobs pending");

    sched_free_req (40);
    settle ();
    e = find (41, 0);
    ok (e && e->reason_null, "job 41 runs after the free; its success "
                             "clears reason_pending");
    ok (find (42, 0) != NULL, "then job 42");
    sched_free_req (41);
    sched_free_req (42);
    sched_free_req (43);
    settle ();
}

static void test_deny (void)
{
    struct ev *e;
    json_t *bad;

    alloc (50, 16, jobspec (5, 1, 1, 0, 0, 0.));
    settle ();
    e = find (50, 2);
    is (e ? e->note : NULL,
        "unsatisfiable request: 5 nodes requested, the instance has 4",
        "more nodes than configured: denied");
    alloc (51, 16, jobspec (0, 1, 1, 2, 0, 0.));
    settle ();
    e = find (51, 2);
    ok (e && !strncmp (e->note, "unsatisfiable request: ", 23),
        "2 gpus per slot on 1-gpu nodes: denied \"%s\"", e ? e->note : "");
    bad = jobspec (0, 1, 1, 0, 0, 0.);
    json_object_set_new (bad, "resources", json_array ());
    alloc (52, 16, bad);
    settle ();
    e = find (52, 2);
    is (e ? e->note : NULL,
        "invalid jobspec: resources: must be a list of exactly one node or "
        "slot",
        "malformed jobspec: denied with the reason");
    cmp_ok (stat_of ("pending"), "==", 0, "denied jobs are not queued");
}

static void test_cancel_prioritize (void)
{
    alloc (60, 16, jobspec (0, 1, 4, 0, 0, 0.)); /* fills rank 1 */
    alloc (61, 16, jobspec (4, 1, 4, 0, 0, 0.)); /* blocked head */
    alloc (62, 10, jobspec (0, 1, 1, 0, 0, 0.)); /* behind */
    alloc (63, 9, jobspec (0, 1, 1, 0, 0, 0.));  /* behind */
    settle ();
    ok (find (60, 0) && find (61, 1) && !find (62, -2) && !find (63, -2),
        "60 runs, 61 blocked (annotated), 62 and 63 wait");
    send_req ("sched.cancel", json_pack ("{s:I}", "id", (json_int_t)63));
    send_req ("sched.cancel", json_pack ("{s:I}", "id", (json_int_t)999));
    send_req ("sched.cancel", json_pack ("{s:I}", "id", (json_int_t)60));
    settle ();
    ok (find (63, 3) != NULL, "sched.cancel: job 63 gets a CANCEL response");
    ok (!find (999, -2) && !find (60, 3),
        "cancel of an unknown or allocated job is ignored");
    send_req ("sched.prioritize",
              json_pack ("{s:[[I,I],[I,I]]}", "jobs", (json_int_t)62,
                         (json_int_t)100, (json_int_t)12345, (json_int_t)1));
    settle ();
    ok (find (62, 0) != NULL, "sched.prioritize: job 62 moves ahead and runs");
    send_req ("sched.cancel", json_pack ("{s:I}", "id", (json_int_t)61));
    settle ();
    ok (find (61, 3) != NULL, "cancel the blocked head");
    sched_free_req (60);
    sched_free_req (62);
    settle ();
    cmp_ok (stat_of ("cores-free"), "==", 13, "13 cores free again");
}

static void test_expiration (void)
{
    json_t *R;
    double start = 0;
    alloc (70, 16, jobspec (0, 1, 1, 0, 0, 0.));
    settle ();
    R = stored_R (70);
    json_unpack (R, "{s:{s:F}}", "execution", "starttime", &start);
    json_decref (R);
    cmp_ok (rpc ("sched.expiration",
                 json_pack ("{s:I s:f}", "id", (json_int_t)70, "expiration",
                            start + 100.),
                 NULL),
            "==", 0, "sched.expiration of an allocated job: success");
    cmp_ok (rpc ("sched.expiration",
                 json_pack ("{s:I s:f}", "id", (json_int_t)71, "expiration",
                            start + 100.),
                 NULL),
            "==", ENOENT, "sched.expiration of an unknown job: ENOENT");
    cmp_ok (rpc ("sched.expiration",
                 json_pack ("{s:I s:f}", "id", (json_int_t)70, "expiration",
                            start - 1.),
                 NULL),
            "==", EINVAL, "sched.expiration before the start: EINVAL");
    cmp_ok (rpc ("sched.expiration", json_pack ("{s:I}", "id", (json_int_t)70),
                 NULL),
            "==", EPROTO, "sched.expiration without expiration: EPROTO");
    sched_free_req (70);
    settle ();
}

static void test_status_updown (void)
{
    json_t *o = NULL, *all, *down, *allocd;
    char *a, *d, *al;

    alloc (80, 16, jobspec (0, 1, 2, 0, 0, 0.));
    settle ();
    acquire_update ("down", "2");
    settle ();
    cmp_ok (rpc ("sched.resource-status", NULL, &o), "==", 0,
            "sched.resource-status");
    json_unpack (o, "{s:o s:o s:o}", "all", &all, "down", &down, "allocated",
                 &allocd);
    a = R_summary (all);
    d = R_summary (down);
    al = R_summary (allocd);
    is (a, "rank[0-3]/core[0-3],gpu0", "all");
    is (d, "rank2/core[0-3],gpu0", "down: rank 2");
    is (al, "rank0/core[0-2],gpu0 rank1/core[0-1]",
        "allocated: jobs 1, 2 and 80");
    free (a);
    free (d);
    free (al);
    json_decref (o);

    alloc (81, 16, jobspec (2, 1, 4, 0, 1, 0.)); /* needs ranks 2, 3 */
    settle ();
    ok (find (81, 1) && !find (81, 0), "job 81 (2 whole nodes) pends with "
                                       "rank 2 down");
    acquire_update ("up", "2");
    settle ();
    ok (find (81, 0)
            && !strcmp (find (81, 0)->summary, "rank[2-3]/core[0-3],gpu0"),
        "rank 2 up: job 81 runs on ranks 2-3");
    sched_free_req (80);
    sched_free_req (81);
    settle ();
}

static json_t *rank_R (const char *ranks)
{
    return json_pack ("{s:i s:{s:[{s:s s:{s:s}}]}}", "version", 1, "execution",
                      "R_lite", "rank", ranks, "children", "core", "0-1");
}

static int partial_free (uint64_t id, const char *ranks)
{
    return rpc ("sched.free",
                json_pack ("{s:I s:o s:b}", "id", (json_int_t)id, "R",
                           rank_R (ranks), "final", 0),
                NULL);
}

static char *allocated_summary (void)
{
    json_t *o = NULL, *allocd = NULL;
    char *sum = NULL;

    if (rpc ("sched.resource-status", NULL, &o) == 0
        && json_unpack (o, "{s:o}", "allocated", &allocd) == 0)
        sum = R_summary (allocd);
    json_decref (o);
    return sum;
}

static void test_partial_free (void)
{
    char *sum;
    json_int_t errors = stat_of ("free-errors");
    json_int_t frees = stat_of ("frees");

    /* jobs 1 and 2 hold rank0 cores 0-2 and gpu0 */
    alloc (90, 16, jobspec (2, 1, 2, 0, 0, 0.));
    settle ();
    is (find (90, 0) ? find (90, 0)->summary : NULL, "rank[1-2]/core[0-1]",
        "job 90 on ranks 1-2");
    alloc (91, 16, jobspec (2, 1, 4, 0, 1, 0.)); /* 2 idle nodes: only 3 */
    settle ();
    ok (find (91, 1) && !find (91, 0), "job 91 (2 whole nodes) pends");
    cmp_ok (partial_free (90, "2"), "==", 0,
            "partial free of job 90's rank 2 (final:false)");
    settle ();
    is (find (91, 0) ? find (91, 0)->summary : NULL, "rank[2-3]/core[0-3],gpu0",
        "the freed rank is scheduled at once: job 91 runs on ranks 2-3");
    cmp_ok (stat_of ("partial-frees"), "==", 1, "stats: 1 partial free");
    sum = allocated_summary ();
    is (sum, "rank0/core[0-2],gpu0 rank1/core[0-1] rank[2-3]/core[0-3],gpu0",
        "allocated: jobs 1, 2, 90 (rank 1 only), 91");
    free (sum);

    /* refused: nothing is freed twice */
    cmp_ok (partial_free (90, "2"), "==", EINVAL,
            "a second free of rank 2: EINVAL");
    cmp_ok (partial_free (90, "3"), "==", EINVAL,
            "a free of rank 3 (job 91's): EINVAL");
    cmp_ok (partial_free (90, "1,7"), "==", EINVAL,
            "a free naming a rank outside the instance: EINVAL");
    cmp_ok (partial_free (12345, "1"), "==", ENOENT,
            "a partial free of an unknown job: ENOENT");
    cmp_ok (rpc ("sched.free",
                 json_pack ("{s:I s:b}", "id", (json_int_t)90, "final", 0),
                 NULL),
            "==", EPROTO, "a partial free without R: EPROTO");
    cmp_ok (rpc ("sched.free", json_pack ("{s:I}", "id", (json_int_t)90), NULL),
            "==", EPROTO,
            "a free without final is partial (RFC 27): without R, EPROTO");
    cmp_ok (stat_of ("free-errors") - errors, "==", 6,
            "stats: the 6 refused frees are counted");
    cmp_ok (stat_of ("cores-free"), "==", 3,
            "the refused frees freed nothing (3 cores free)");
    ok (strstr (alllogs, "partial free refused: rank(s) 2 not held by the job")
            != NULL,
        "the refusal is logged with the ranks");

    /* final absent: partial (RFC 27), so job 90 keeps rank 1 */
    cmp_ok (
        rpc ("sched.free",
             json_pack ("{s:I s:o}", "id", (json_int_t)90, "R", rank_R ("1")),
             NULL),
        "==", 0, "a free of rank 1 without final is answered");
    settle ();
    cmp_ok (stat_of ("partial-frees"), "==", 2,
            "a free without final counts as partial");
    cmp_ok (stat_of ("cores-free"), "==", 5,
            "it returns rank 1's 2 cores and no more");
    cmp_ok (stat_of ("frees"), "==", frees,
            "job 90 is not forgotten: no final free yet");
    cmp_ok (partial_free (90, "1"), "==", EINVAL,
            "rank 1 is no longer held: a second free of it is refused");

    /* the final free returns the rest, whatever its R says */
    send_req ("sched.free", json_pack ("{s:I s:o s:b}", "id", (json_int_t)90,
                                       "R", rank_R ("1"), "final", 1));
    settle ();
    cmp_ok (stat_of ("cores-free"), "==", 5,
            "the final free returns what is left (nothing more)");
    cmp_ok (count (90, 10), "==", 1, "the final free got a response");
    send_req ("sched.free",
              json_pack ("{s:I s:b}", "id", (json_int_t)90, "final", 1));
    settle ();
    cmp_ok (stat_of ("cores-free"), "==", 5,
            "a second final free frees nothing (but is answered)");
    cmp_ok (count (90, 10), "==", 2, "both final frees got a response");
    sched_free_req (91);
    settle ();
    cmp_ok (stat_of ("cores-free"), "==", 13, "job 91's free: 13 cores free");
}

static void test_hello_partial (void)
{
    char *sum;

    /* 16 cores free */
    alloc (500, 16, jobspec (3, 1, 4, 0, 1, 0.));
    settle ();
    is (find (500, 0) ? find (500, 0)->summary : NULL,
        "rank[0-2]/core[0-3],gpu0", "job 500 on ranks 0-2");
    /* a new job manager: ranks 1-2 were released before it said hello */
    json_decref (hello_jobs);
    hello_jobs = json_pack ("[{s:I s:I s:i s:f s:s}]", "id", (json_int_t)500,
                            "priority", (json_int_t)16, "userid", 42,
                            "t_submit", 1.0, "free", "1-2");
    sched_restart (s);
    run_until (is_ready);
    cmp_ok (stat_of ("cores-free"), "==", 12,
            "hello with free:\"1-2\": only rank 0 is allocated");
    sum = allocated_summary ();
    is (sum, "rank0/core[0-3],gpu0", "allocated: rank 0");
    free (sum);
    cmp_ok (partial_free (500, "1"), "==", EINVAL,
            "a partial free of a rank freed before the hello: EINVAL");
    sched_free_req (500);
    settle ();
    cmp_ok (stat_of ("cores-free"), "==", 16, "the final free: all free");

    /* a bad "free" key: logged, the whole R stays allocated */
    alloc (501, 16, jobspec (2, 1, 4, 0, 1, 0.));
    settle ();
    json_decref (hello_jobs);
    hello_jobs = json_pack ("[{s:I s:I s:i s:f s:s}]", "id", (json_int_t)501,
                            "priority", (json_int_t)16, "userid", 42,
                            "t_submit", 1.0, "free", "x");
    alllogs[0] = '\0';
    sched_restart (s);
    run_until (is_ready);
    ok (strstr (alllogs, "free \"x\" is not an idset") != NULL,
        "hello: a bad free idset is logged");
    cmp_ok (stat_of ("cores-free"), "==", 8,
            "and all of the job's R is taken as allocated");
    sched_free_req (501);
    settle ();
    cmp_ok (stat_of ("cores-free"), "==", 16, "all free");
    json_decref (hello_jobs);
    hello_jobs = json_array ();
}

static void test_protocol_errors (void)
{
    int before = nevs;

    send_req ("sched.alloc", json_pack ("{s:I}", "id", (json_int_t)100));
    settle ();
    ok (nevs == before + 1 && evs[before].type == -1
            && evs[before].errnum == EPROTO,
        "malformed sched.alloc: EPROTO error response");
    alloc (101, 16, jobspec (4, 1, 4, 0, 1, 0.)); /* pends: 4 whole nodes */
    settle ();
    alloc (101, 16, jobspec (0, 1, 1, 0, 0, 0.));
    settle ();
    ok (evs[nevs - 1].type == -1 && evs[nevs - 1].errnum == EEXIST,
        "a second alloc for a pending job: EEXIST error response");
    send_req ("sched.free", json_pack ("{s:s}", "id", "x"));
    settle ();
    ok (evs[nevs - 1].type == -1 && evs[nevs - 1].errnum == EPROTO,
        "malformed sched.free: EPROTO");
    nlogs = 0;
    send_req ("sched.prioritize", json_pack ("{s:s}", "jobs", "x"));
    settle ();
    ok (nlogs == 1 && strstr (lastlog, "malformed sched.prioritize"),
        "malformed sched.prioritize is logged and dropped");
    sched_free_req (12345);
    settle ();
    ok (find (12345, 10) && strstr (lastlog, "holds no resources"),
        "free of an unknown job: logged, answered");
    send_req ("sched.disconnect", json_object ());
    settle ();
    cmp_ok (stat_of ("pending"), "==", 0,
            "sched.disconnect drops the pending requests");
}

static void test_commit_failure (void)
{
    struct ev *e;
    int free_before = stat_of ("cores-free");

    commit_fail = true;
    alloc (110, 16, jobspec (0, 1, 1, 0, 0, 0.));
    settle ();
    commit_fail = false;
    e = find (110, 2);
    ok (e && strstr (e->note, "could not write R"),
        "a failed R commit denies the job: %s", e ? e->note : "");
    cmp_ok (stat_of ("cores-free"), "==", free_before,
            "and returns its resources");
}

static void test_feasibility (void)
{
    cmp_ok (rpc ("feasibility.check",
                 json_pack ("{s:o}", "jobspec", jobspec (2, 1, 4, 1, 1, 0.)),
                 NULL),
            "==", 0, "feasibility.check: 2 whole nodes fit");
    cmp_ok (rpc ("feasibility.check",
                 json_pack ("{s:o}", "jobspec", jobspec (0, 17, 1, 0, 0, 0.)),
                 NULL),
            "==", EINVAL, "feasibility.check: 17 cores do not");
    cmp_ok (rpc ("feasibility.check", json_object (), NULL), "==", EPROTO,
            "feasibility.check without jobspec: EPROTO");
}

static void test_hello_replay (void)
{
    char key[64];
    json_t *Rmissing;

    /* jobs 1, 2 hold rank0 core0-2 + gpu0; hand them to a new engine */
    sched_destroy (s);
    s = NULL;
    json_decref (hello_jobs);
    hello_jobs = json_pack ("[{s:I s:I s:i s:f} {s:I s:I s:i s:f}"
                            " {s:I s:I s:i s:f}]",
                            "id", (json_int_t)1, "priority", (json_int_t)16,
                            "userid", 42, "t_submit", 1.0, "id", (json_int_t)2,
                            "priority", (json_int_t)16, "userid", 42,
                            "t_submit", 1.0, "id", (json_int_t)200, "priority",
                            (json_int_t)16, "userid", 42, "t_submit", 1.0);
    key_of (key, sizeof (key), 200);
    Rmissing = json_object_get (store, key);
    ok (Rmissing == NULL, "job 200 has no R in the KVS");
    alllogs[0] = '\0';
    start (0);
    ok (sched_is_ready (s) && hellos == 2, "a new engine: hello, ready");
    ok (!strcmp (ready_mode, "unlimited") && ready_limit == -1,
        "queue-depth 0: unlimited mode");
    cmp_ok (stat_of ("cores-free"), "==", 13,
            "the replayed jobs 1 and 2 hold their 3 cores");
    ok (strstr (alllogs, "hello: job 200: R lookup failed") != NULL,
        "the job without R is logged");
    alloc (210, 16, jobspec (0, 1, 2, 0, 0, 0.));
    settle ();
    is (find (210, 0) ? find (210, 0)->summary : NULL, "rank1/core[0-1]",
        "a new job avoids the replayed allocations");
    sched_free_req (1);
    sched_free_req (2);
    sched_free_req (200);
    sched_free_req (210);
    settle ();
    cmp_ok (stat_of ("cores-free"), "==", 16, "all free");
    json_decref (hello_jobs);
    hello_jobs = json_array ();
}

static void test_restart (void)
{
    int before = hellos;

    alloc (400, 16, jobspec (0, 1, 2, 0, 0, 0.)); /* allocated */
    settle ();
    commit_hold = true;
    alloc (401, 16, jobspec (0, 1, 1, 0, 0, 0.)); /* committing */
    alloc (402, 16, jobspec (4, 1, 4, 0, 1, 0.)); /* pending */
    settle ();
    ok (stat_of ("committing") == 1 && stat_of ("pending") == 1
            && stat_of ("cores-free") == 13,
        "before: 400 allocated, 401 committing, 402 pending");
    /* the new job manager finds only 400 holding resources */
    json_decref (hello_jobs);
    hello_jobs
        = json_pack ("[{s:I s:I s:i s:f}]", "id", (json_int_t)400, "priority",
                     (json_int_t)16, "userid", 42, "t_submit", 1.0);
    alllogs[0] = '\0';
    sched_restart (s);
    ok (!sched_is_ready (s), "sched_restart: not ready until the new hello");
    run_until (is_ready);
    ok (hellos == before + 1, "sched_restart: hello again, then ready");
    ok (strstr (alllogs, "the job manager was reloaded") != NULL,
        "sched_restart is logged");
    ok (stat_of ("committing") == 0 && stat_of ("pending") == 0,
        "the old job manager's pending and committing jobs are forgotten");
    cmp_ok (stat_of ("cores-free"), "==", 14,
            "only the replayed job 400 holds its 2 cores");
    commit_hold = false;
    commit_release (); /* the forgotten commit's answer goes nowhere */
    settle ();
    cmp_ok (stat_of ("cores-free"), "==", 14,
            "a late commit answer changes "
            "nothing");
    alloc (403, 16, jobspec (0, 1, 2, 0, 0, 0.));
    settle ();
    is (find (403, 0) ? find (403, 0)->summary : NULL, "rank0/core[2-3]",
        "a new job avoids job 400's cores");
    sched_free_req (400);
    sched_free_req (403);
    settle ();
    cmp_ok (stat_of ("cores-free"), "==", 16, "all free");
    json_decref (hello_jobs);
    hello_jobs = json_array ();
}

static void test_acquire_failure (void)
{
    sched_t *s2 = sched_create (h, 8);
    int rc = 0;

    acquire_fail = true;
    ok (sched_start (s2) == 0, "start an engine whose acquire will fail");
    for (int i = 0; i < 100 && rc == 0; i++)
        rc = flux_reactor_run (r, FLUX_REACTOR_NOWAIT);
    ok (rc < 0 && strstr (lastlog, "no resources for you"),
        "an acquire error stops the reactor with an error, logged");
    acquire_fail = false;
    sched_destroy (s2);
}

static void test_destroy_busy (void)
{
    commit_hold = true;
    alloc (300, 16, jobspec (0, 1, 1, 0, 0, 0.));  /* committing */
    alloc (301, 16, jobspec (0, 1, 99, 0, 0, 0.)); /* denied */
    alloc (302, 16, jobspec (4, 1, 4, 0, 1, 0.));  /* pending */
    settle ();
    ok (stat_of ("committing") == 1 && stat_of ("pending") == 1,
        "one job committing, one pending");
    sched_destroy (s);
    s = NULL;
    commit_hold = false;
    commit_release ();
    settle ();
    pass ("destroy with jobs pending and a commit in flight");
}

int main (int argc, char **argv)
{
    const struct flux_msg_handler_spec htab[] = {
        {FLUX_MSGTYPE_REQUEST, "resource.acquire", acquire_cb, 0},
        {FLUX_MSGTYPE_REQUEST, "job-manager.sched-hello", hello_cb, 0},
        {FLUX_MSGTYPE_REQUEST, "job-manager.sched-ready", ready_cb, 0},
        {FLUX_MSGTYPE_REQUEST, "kvs.commit", commit_cb, 0},
        {FLUX_MSGTYPE_REQUEST, "kvs.lookup", lookup_cb, 0},
        {FLUX_MSGTYPE_REQUEST, "log.append", log_cb, 0},
        {FLUX_MSGTYPE_REQUEST, "sched.alloc", s_alloc, 0},
        {FLUX_MSGTYPE_REQUEST, "sched.free", s_free, 0},
        {FLUX_MSGTYPE_REQUEST, "sched.cancel", s_cancel, 0},
        {FLUX_MSGTYPE_REQUEST, "sched.prioritize", s_prioritize, 0},
        {FLUX_MSGTYPE_REQUEST, "sched.expiration", s_expiration, 0},
        {FLUX_MSGTYPE_REQUEST, "sched.resource-status", s_status, 0},
        {FLUX_MSGTYPE_REQUEST, "sched.disconnect", s_disconnect, 0},
        {FLUX_MSGTYPE_REQUEST, "feasibility.check", s_feasibility, 0},
        {FLUX_MSGTYPE_RESPONSE, "sched.alloc", response_cb, 0},
        {FLUX_MSGTYPE_RESPONSE, "sched.free", response_cb, 0},
        FLUX_MSGHANDLER_TABLE_END,
    };
    flux_msg_handler_t **handlers;

    plan (NO_PLAN);
    if (!(h = flux_open ("loop://", 0)) || !(r = flux_get_reactor (h)))
        BAIL_OUT ("flux_open loop://");
    if (flux_msg_handler_addvec (h, htab, NULL, &handlers) < 0)
        BAIL_OUT ("flux_msg_handler_addvec");
    store = json_object ();
    hello_jobs = json_array ();

    test_startup ();
    test_alloc_basic ();
    test_batching ();
    test_commit_before_success ();
    test_pending ();
    test_deny ();
    test_cancel_prioritize ();
    test_expiration ();
    test_status_updown ();
    test_partial_free ();
    test_protocol_errors ();
    test_commit_failure ();
    test_feasibility ();
    test_hello_replay ();
    test_restart ();
    test_hello_partial ();
    test_acquire_failure ();
    test_destroy_busy ();

    flux_msg_decref (acquire_msg);
    flux_msg_handler_delvec (handlers);
    json_decref (store);
    json_decref (hello_jobs);
    flux_close (h);
    done_testing ();
    return 0;
}
