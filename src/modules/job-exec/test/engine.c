/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/engine.c - the job-exec core and testexec over loop://, with a
 * fake kvs (kvs.lookup answered on the same handle) playing the KVS and
 * the test playing the job manager: it sends job-exec.start requests
 * (streaming, matchtag 0) and records each job's responses as a string
 * like "start finish=0 release=all!" ("!" marks final:true).
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec.h"
#include "impl.h"
#include "libkvs/treeobj.h"
#include "tap.h"

static flux_t *h;
static flux_reactor_t *r;
static exec_t *x;

/* ---- the fake kvs ---- */

static json_t *kvs; /* key -> string value */
static int kvs_lookups;
static bool kvs_hold;
static flux_msg_t *held[64];
static int nheld;

static void kvs_answer (const flux_msg_t *msg)
{
    const char *key;
    json_t *val, *o;

    if (flux_request_unpack (msg, NULL, "{s:s}", "key", &key) < 0) {
        flux_respond_error (h, msg, EPROTO, NULL);
        return;
    }
    if (!(val = json_object_get (kvs, key))) {
        flux_respond_error (h, msg, ENOENT, NULL);
        return;
    }
    o = treeobj_create_val (json_string_value (val), json_string_length (val));
    flux_respond_pack (h, msg, "{s:o}", "val", o);
}

static void kvs_lookup_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg)
{
    kvs_lookups++;
    if (kvs_hold && nheld < 64) {
        held[nheld++] = (flux_msg_t *)flux_msg_incref (msg);
        return;
    }
    kvs_answer (msg);
}

/* Namespaces: name -> {log:s (exec.eventlog), commits:i}; the guest
 * roots copied to the primary namespace: key -> treeobj; symlinks set:
 * key -> namespace. */
static json_t *namespaces, *primary, *removed;
static int kvs_seq;
static int ns_create_errno; /* != 0: namespace-create fails with it */
static int ns_commit_errno; /* != 0: commits to a guest namespace fail */
static bool ns_hold;        /* namespace-create requests wait */
static flux_msg_t *ns_held[64];
static int ns_nheld;
static bool ns_remove_hold; /* namespace-remove requests wait */
static flux_msg_t *ns_remove_held[64];
static int ns_remove_nheld;

static void ns_create_answer (const flux_msg_t *msg)
{
    const char *name;

    if (flux_request_unpack (msg, NULL, "{s:s}", "namespace", &name) < 0)
        flux_respond_error (h, msg, EPROTO, NULL);
    else if (ns_create_errno)
        flux_respond_error (h, msg, ns_create_errno, NULL);
    else if (json_object_get (namespaces, name))
        flux_respond_error (h, msg, EEXIST, NULL);
    else {
        json_object_set_new (namespaces, name,
                             json_pack ("{s:s s:i}", "log", "", "commits", 0));
        flux_respond (h, msg, NULL);
    }
}

static void ns_create_cb (flux_t *h, flux_msg_handler_t *mh,
                          const flux_msg_t *msg, void *arg)
{
    if (ns_hold && ns_nheld < 64) {
        ns_held[ns_nheld++] = (flux_msg_t *)flux_msg_incref (msg);
        return;
    }
    ns_create_answer (msg);
}

static void commit_answer (const flux_msg_t *msg);

/* The held creates, and the commits held behind them (as the kvs holds
 * requests for a namespace whose create waits), in arrival order. */
static void ns_release_held (void)
{
    ns_hold = false;
    for (int i = 0; i < ns_nheld; i++) {
        const char *topic = NULL;
        (void)flux_msg_get_topic (ns_held[i], &topic);
        if (topic && !strcmp (topic, "kvs.commit"))
            commit_answer (ns_held[i]);
        else
            ns_create_answer (ns_held[i]);
        flux_msg_decref (ns_held[i]);
    }
    ns_nheld = 0;
}

/* A commit to a namespace whose create is held: held behind it. */
static bool ns_hold_commit (const flux_msg_t *msg, const char *name)
{
    for (int i = 0; i < ns_nheld; i++) {
        const char *topic = NULL, *held_name;
        if (flux_msg_get_topic (ns_held[i], &topic) == 0
            && !strcmp (topic, "kvs.namespace-create")
            && flux_request_unpack (ns_held[i], NULL, "{s:s}", "namespace",
                                    &held_name)
                   == 0
            && !strcmp (held_name, name) && ns_nheld < 64) {
            ns_held[ns_nheld++] = (flux_msg_t *)flux_msg_incref (msg);
            return true;
        }
    }
    return false;
}

static void ns_remove_answer (const flux_msg_t *msg);

static void ns_remove_cb (flux_t *h, flux_msg_handler_t *mh,
                          const flux_msg_t *msg, void *arg)
{
    if (ns_remove_hold && ns_remove_nheld < 64) {
        ns_remove_held[ns_remove_nheld++] = (flux_msg_t *)flux_msg_incref (msg);
        return;
    }
    ns_remove_answer (msg);
}

static void ns_remove_release_held (void)
{
    ns_remove_hold = false;
    for (int i = 0; i < ns_remove_nheld; i++) {
        ns_remove_answer (ns_remove_held[i]);
        flux_msg_decref (ns_remove_held[i]);
    }
    ns_remove_nheld = 0;
}

static void ns_remove_answer (const flux_msg_t *msg)
{
    const char *name;

    if (flux_request_unpack (msg, NULL, "{s:s}", "namespace", &name) < 0) {
        flux_respond_error (h, msg, EPROTO, NULL);
        return;
    }
    if (json_object_get (namespaces, name))
        json_object_set (removed, name, json_object_get (namespaces, name));
    json_object_del (namespaces, name);
    flux_respond (h, msg, NULL);
}

static void getroot_cb (flux_t *h, flux_msg_handler_t *mh,
                        const flux_msg_t *msg, void *arg)
{
    const char *name;
    char ref[64];

    if (flux_request_unpack (msg, NULL, "{s:s}", "namespace", &name) < 0) {
        flux_respond_error (h, msg, EPROTO, NULL);
        return;
    }
    if (!json_object_get (namespaces, name)) {
        flux_respond_error (h, msg, ENOTSUP, NULL);
        return;
    }
    snprintf (ref, sizeof (ref), "sha1-%040d", ++kvs_seq);
    flux_respond_pack (h, msg, "{s:i s:i s:s s:i s:s}", "owner", 0, "rootseq",
                       kvs_seq, "rootref", ref, "flags", 0, "namespace", name);
}

static bool primary_hold; /* primary commits wait */
static flux_msg_t *primary_held[64];
static int primary_nheld;

static void commit_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    const char *name;

    if (flux_request_unpack (msg, NULL, "{s:s}", "namespace", &name) == 0
        && ns_hold_commit (msg, name))
        return;
    if (primary_hold && primary_nheld < 64
        && flux_request_unpack (msg, NULL, "{s:s}", "namespace", &name) == 0
        && !strcmp (name, "primary")) {
        primary_held[primary_nheld++] = (flux_msg_t *)flux_msg_incref (msg);
        return;
    }
    commit_answer (msg);
}

static void primary_release_held (void)
{
    primary_hold = false;
    for (int i = 0; i < primary_nheld; i++) {
        commit_answer (primary_held[i]);
        flux_msg_decref (primary_held[i]);
    }
    primary_nheld = 0;
}

static void commit_answer (const flux_msg_t *msg)
{
    const char *name;
    json_t *ops, *op, *ns;
    size_t i;
    char ref[64];

    if (flux_request_unpack (msg, NULL, "{s:s s:o}", "namespace", &name, "ops",
                             &ops)
        < 0) {
        flux_respond_error (h, msg, EPROTO, NULL);
        return;
    }
    if (strcmp (name, "primary") != 0) {
        if (!(ns = json_object_get (namespaces, name))) {
            flux_respond_error (h, msg, ENOTSUP, NULL);
            return;
        }
        if (ns_commit_errno) {
            flux_respond_error (h, msg, ns_commit_errno, NULL);
            return;
        }
    }
    else
        ns = NULL;
    json_array_foreach (ops, i, op)
    {
        const char *key;
        int flags;
        json_t *dirent;
        if (json_unpack (op, "{s:s s:i s:o}", "key", &key, "flags", &flags,
                         "dirent", &dirent)
            < 0)
            BAIL_OUT ("malformed commit op");
        if (ns) {
            void *data;
            size_t len;
            char *log;
            if (strcmp (key, "exec.eventlog") != 0
                || treeobj_decode_val (dirent, &data, &len) < 0)
                BAIL_OUT ("unexpected guest commit of %s", key);
            if (asprintf (&log, "%s%.*s",
                          (flags & 32)
                              ? json_string_value (json_object_get (ns, "log"))
                              : "",
                          (int)len, (char *)data)
                < 0)
                BAIL_OUT ("out of memory");
            json_object_set_new (ns, "log", json_string (log));
            json_object_set_new (
                ns, "commits",
                json_integer (
                    json_integer_value (json_object_get (ns, "commits")) + 1));
            free (log);
            free (data);
        }
        else if (json_is_null (dirent))
            json_object_del (primary, key);
        else if (strstr (key, ".exec.eventlog")) {
            void *data;
            size_t len;
            char *log;
            const char *old
                = json_string_value (json_object_get (primary, key));
            if (treeobj_decode_val (dirent, &data, &len) < 0
                || asprintf (&log, "%s%.*s", (flags & 32) && old ? old : "",
                             (int)len, (char *)data)
                       < 0)
                BAIL_OUT ("bad primary exec.eventlog op");
            json_object_set_new (primary, key, json_string (log));
            free (log);
            free (data);
        }
        else
            json_object_set (primary, key, dirent);
    }
    snprintf (ref, sizeof (ref), "sha1-%040d", ++kvs_seq);
    flux_respond_pack (h, msg, "{s:s s:i}", "rootref", ref, "rootseq", kvs_seq);
}

/* The event names of an eventlog text, "name name ...", in evnames. */
static char evnames[1024];
static const char *names_of (const char *log)
{
    const char *p;

    evnames[0] = '\0';
    for (p = log; (p = strstr (p, "\"name\":\"")); p++) {
        p += 8;
        size_t n = strcspn (p, "\"");
        if (evnames[0])
            strcat (evnames, " ");
        strncat (evnames, p, n);
    }
    return evnames;
}

/* The exec.eventlog of job id in its namespace, while it exists, else as
 * it was when it was removed. */
static const char *ns_events (uint64_t id)
{
    char name[64];
    json_t *ns;

    snprintf (name, sizeof (name), "job-%ju", (uintmax_t)id);
    if (!(ns = json_object_get (namespaces, name)))
        ns = json_object_get (removed, name);
    if (!ns)
        return "(no namespace)";
    return names_of (json_string_value (json_object_get (ns, "log")));
}

/* The exec.eventlog of job id once it is inactive: what its namespace
 * held, then what was appended at job.<id>.guest.exec.eventlog. */
static const char *final_events (uint64_t id)
{
    char name[64], key[128];
    json_t *ns;
    const char *a = "", *b;
    char *log;

    snprintf (name, sizeof (name), "job-%ju", (uintmax_t)id);
    snprintf (key, sizeof (key), "job.%04x.%04x.%04x.%04x.guest.exec.eventlog",
              (unsigned)(id >> 48) & 0xffff, (unsigned)(id >> 32) & 0xffff,
              (unsigned)(id >> 16) & 0xffff, (unsigned)id & 0xffff);
    if ((ns = json_object_get (removed, name)))
        a = json_string_value (json_object_get (ns, "log"));
    if (!(b = json_string_value (json_object_get (primary, key))))
        b = "";
    if (asprintf (&log, "%s%s", a, b) < 0)
        BAIL_OUT ("out of memory");
    names_of (log);
    free (log);
    return evnames;
}

/* The type of what the primary namespace holds at job.<id>.guest */
static const char *guest_link (uint64_t id)
{
    char key[128];
    json_t *o;

    snprintf (key, sizeof (key), "job.%04x.%04x.%04x.%04x.guest",
              (unsigned)(id >> 48) & 0xffff, (unsigned)(id >> 32) & 0xffff,
              (unsigned)(id >> 16) & 0xffff, (unsigned)id & 0xffff);
    if (!(o = json_object_get (primary, key)))
        return "none";
    return json_string_value (json_object_get (o, "type"));
}

static void kvs_release_held (void)
{
    kvs_hold = false;
    for (int i = 0; i < nheld; i++) {
        kvs_answer (held[i]);
        flux_msg_decref (held[i]);
    }
    nheld = 0;
}

static void key_of (char *buf, size_t size, uint64_t id, const char *name)
{
    snprintf (buf, size, "job.%04x.%04x.%04x.%04x.%s",
              (unsigned)(id >> 48) & 0xffff, (unsigned)(id >> 32) & 0xffff,
              (unsigned)(id >> 16) & 0xffff, (unsigned)id & 0xffff, name);
}

static void kvs_put (uint64_t id, const char *name, const char *value)
{
    char key[128];
    key_of (key, sizeof (key), id, name);
    json_object_set_new (kvs, key, json_string (value));
}

static double now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* R with ranks 'ranks' and the given times */
static void put_R (uint64_t id, const char *ranks, double start, double exp)
{
    char buf[512];
    snprintf (buf, sizeof (buf),
              "{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"%s\","
              "\"children\":{\"core\":\"0\"}}],\"nodelist\":[\"n\"],"
              "\"starttime\":%.6f,\"expiration\":%.6f}}",
              ranks, start, exp);
    kvs_put (id, "R", buf);
}

/* ---- the job manager's side ---- */

#define MAXJOBS 20000
static char *trace[MAXJOBS]; /* by id */
static int finals;
static int errors[256]; /* errnum of error responses */

static void append (uint64_t id, const char *s)
{
    char *old, *new;

    if (id >= MAXJOBS)
        BAIL_OUT ("job id %ju out of range", (uintmax_t)id);
    old = trace[id];
    if (asprintf (&new, "%s%s%s", old ? old : "", old ? " " : "", s) < 0)
        BAIL_OUT ("out of memory");
    free (old);
    trace[id] = new;
}

static const char *T (uint64_t id)
{
    return trace[id] ? trace[id] : "";
}

static void start_rsp_cb (flux_t *h, flux_msg_handler_t *mh,
                          const flux_msg_t *msg, void *arg)
{
    json_int_t id;
    const char *type;
    json_t *data;
    char buf[512];
    int errnum = 0;

    if (flux_msg_get_errnum (msg, &errnum) == 0 && errnum != 0) {
        errors[errnum & 0xff]++;
        return;
    }
    if (flux_msg_unpack (msg, "{s:I s:s s:o !}", "id", &id, "type", &type,
                         "data", &data)
        < 0)
        BAIL_OUT ("malformed start response");
    if (!strcmp (type, "start"))
        snprintf (buf, sizeof (buf), "start");
    else if (!strcmp (type, "finish"))
        snprintf (buf, sizeof (buf), "finish=%d",
                  (int)json_integer_value (json_object_get (data, "status")));
    else if (!strcmp (type, "release")) {
        bool final = json_is_true (json_object_get (data, "final"));
        snprintf (buf, sizeof (buf), "release=%s%s",
                  json_string_value (json_object_get (data, "ranks")),
                  final ? "!" : "");
        if (final)
            finals++;
    }
    else if (!strcmp (type, "exception"))
        snprintf (buf, sizeof (buf), "exception=%s/%d:%s",
                  json_string_value (json_object_get (data, "type")),
                  (int)json_integer_value (json_object_get (data, "severity")),
                  json_string_value (json_object_get (data, "note")));
    else
        snprintf (buf, sizeof (buf), "?%s", type);
    append (id, buf);
}

static void send_start_raw (const char *payload, bool streaming)
{
    flux_msg_t *msg = flux_request_encode ("job-exec.start", payload);
    if (!msg || (streaming && flux_msg_set_streaming (msg) < 0)
        || flux_send (h, msg, 0) < 0)
        BAIL_OUT ("sending start");
    flux_msg_decref (msg);
}

/* start job id; system is the inside of attributes.system */
static void start_job (uint64_t id, const char *system, bool reattach,
                       const char *R)
{
    char buf[2048];
    snprintf (buf, sizeof (buf),
              "{\"id\":%ju,\"userid\":%d,\"jobspec\":{\"version\":1,"
              "\"attributes\":{\"system\":{%s}}},\"reattach\":%s%s%s}",
              (uintmax_t)id, (int)getuid (), system,
              reattach ? "true" : "false", R ? ",\"R\":" : "", R ? R : "");
    send_start_raw (buf, true);
}

static void publish (const char *topic, const char *fmt, ...)
{
    va_list ap;
    json_t *o;
    char *s;
    flux_msg_t *msg;

    va_start (ap, fmt);
    o = json_vpack_ex (NULL, 0, fmt, ap);
    va_end (ap);
    if (!o || !(s = json_dumps (o, JSON_COMPACT))
        || !(msg = flux_event_encode (topic, s)) || flux_send (h, msg, 0) < 0)
        BAIL_OUT ("publishing %s", topic);
    flux_msg_decref (msg);
    free (s);
    json_decref (o);
}

/* ---- running the loop ---- */

static void tick_cb (uv_timer_t *t)
{
}

/* Run the reactor until cond() or timeout seconds; true if cond(). */
static bool run_until (bool (*cond) (void *), void *arg, double timeout)
{
    uv_timer_t tick;
    double deadline = now () + timeout;
    bool result;

    uv_timer_init (flux_reactor_uv (r), &tick);
    uv_timer_start (&tick, tick_cb, 5, 5);
    while (!(result = cond (arg)) && now () < deadline)
        flux_reactor_run (r, FLUX_REACTOR_ONCE);
    uv_close ((uv_handle_t *)&tick, NULL);
    flux_reactor_run (r, FLUX_REACTOR_NOWAIT);
    return result;
}

static bool has_final (void *arg)
{
    const char *s = T ((uintptr_t)arg);
    return strchr (s, '!') != NULL;
}

static bool has_text (void *arg)
{
    const char **a = arg;
    return strstr (T ((uintptr_t)a[0]), a[1]) != NULL;
}

static bool wait_final (uint64_t id)
{
    return run_until (has_final, (void *)(uintptr_t)id, 5.);
}

static bool wait_text (uint64_t id, const char *text)
{
    const char *a[2] = {(const char *)(uintptr_t)id, text};
    return run_until (has_text, a, 5.);
}

static bool never (void *arg)
{
    return false;
}

static void settle (double seconds)
{
    run_until (never, NULL, seconds);
}

static bool ready (void *arg)
{
    return flux_future_is_ready (arg);
}

/* an RPC answered by a handler on this very handle: errno or 0 */
static int rpc (const char *topic, const char *fmt, ...)
{
    va_list ap;
    json_t *o;
    char *s;
    flux_future_t *f;
    int rc;

    va_start (ap, fmt);
    o = json_vpack_ex (NULL, 0, fmt, ap);
    va_end (ap);
    if (!o || !(s = json_dumps (o, JSON_COMPACT))
        || !(f = flux_rpc (h, topic, s, FLUX_NODEID_ANY, 0)))
        BAIL_OUT ("rpc %s", topic);
    if (!run_until (ready, f, 5.))
        BAIL_OUT ("rpc %s: no answer", topic);
    rc = flux_future_get (f, NULL) < 0 ? errno : 0;
    flux_future_destroy (f);
    free (s);
    json_decref (o);
    return rc;
}

/* ---- handlers the module's main.c would install ---- */

static void start_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    exec_start_request (x, msg);
}

static void exception_cb (flux_t *h, flux_msg_handler_t *mh,
                          const flux_msg_t *msg, void *arg)
{
    exec_exception_event (x, msg);
}

static void expiration_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg)
{
    exec_expiration_request (x, msg);
}

static void critical_cb (flux_t *h, flux_msg_handler_t *mh,
                         const flux_msg_t *msg, void *arg)
{
    exec_critical_ranks_request (x, msg);
}

static void stats_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    exec_stats_request (x, msg);
}

static const struct flux_msg_handler_spec htab[] = {
    {FLUX_MSGTYPE_REQUEST, "job-exec.start", start_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "job-exec.expiration", expiration_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "job-exec.critical-ranks", critical_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "job-exec.stats-get", stats_cb, 0},
    {FLUX_MSGTYPE_EVENT, "job-exception", exception_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "kvs.lookup", kvs_lookup_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "kvs.namespace-create", ns_create_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "kvs.namespace-remove", ns_remove_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "kvs.commit", commit_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "kvs.getroot", getroot_cb, 0},
    {FLUX_MSGTYPE_RESPONSE, "job-exec.start", start_rsp_cb, 0},
    FLUX_MSGHANDLER_TABLE_END,
};

/* ---- tests ---- */

#define TEST0 "\"exec\":{\"test\":{}}"

static void test_basic (void)
{
    double t0;

    put_R (1, "0", 0, 0);
    start_job (1, TEST0, false, NULL);
    ok (wait_final (1), "job 1 ends");
    is (T (1), "start finish=0 release=all!",
        "run_duration 0: start, finish 0, release all final");

    start_job (2, "\"duration\":60", false, NULL);
    ok (wait_final (2), "job 2 (no exec.test) ends");
    is (T (2),
        "exception=exec/0:reading R: No such file or directory release=all!",
        "no exec.test (realexec) and no R: exec exception, final release, no "
        "start or finish");

    put_R (3, "0", 0, 0);
    start_job (3, "\"exec\":{\"test\":{\"run_duration\":\"0.5s\"}}", false,
               NULL);
    t0 = now ();
    ok (wait_text (3, "start"), "job 3 started");
    settle (0.05);
    is (T (3), "start", "job 3 is still running after 50 ms");
    ok (wait_final (3), "job 3 ends");
    t0 = now () - t0;
    ok (t0 >= 0.495 && t0 < 10., "run_duration 0.5s honoured (%.3f s)", t0);
    is (T (3), "start finish=0 release=all!", "job 3 sequence");

    put_R (4, "0", 0, 0);
    start_job (4, "\"exec\":{\"test\":{\"wait_status\":256}}", false, NULL);
    ok (wait_final (4), "job 4 ends");
    is (T (4), "start finish=256 release=all!", "wait_status 256");

    put_R (5, "0", 0, 0);
    start_job (5, "\"duration\":0.05,\"exec\":{\"test\":{}}", false, NULL);
    t0 = now ();
    ok (wait_final (5), "job 5 ends");
    t0 = now () - t0;
    ok (t0 >= 0.045,
        "run_duration defaults to attributes.system.duration (%.3f s)", t0);
}

static bool ns_gone (void *arg)
{
    char name[64];
    snprintf (name, sizeof (name), "job-%ju", (uintmax_t)(uintptr_t)arg);
    return json_object_get (namespaces, name) == NULL;
}

/* The guest namespace and exec.eventlog of every job (guestns.c). */
static void test_guest (void)
{
    char name[64];
    json_t *ns;

    /* a job that runs: the namespace holds what was committed while it
     * ran; complete and done go with the copy of its final root (one
     * commit to the namespace less), before the final release */
    put_R (180, "0", 0, 0);
    start_job (180, "\"exec\":{\"test\":{\"run_duration\":\"0.3s\"}}", false,
               NULL);
    ok (wait_text (180, "start"), "guest: job 180 started");
    is (ns_events (180), "init starting",
        "guest: init and starting are committed before the start");
    is (guest_link (180), "symlink", "guest: job.<id>.guest is a symlink");
    ok (wait_final (180), "guest: job 180 ends");
    is (final_events (180), "init starting complete done",
        "guest: init starting complete done");
    ok (!strstr (ns_events (180), "done"),
        "guest: done is not committed to the namespace: it goes with the "
        "copy");
    is (T (180), "start finish=0 release=all!", "guest: the RFC 32 sequence");
    ok (ns_gone ((void *)180),
        "guest: the namespace is removed by the release");
    is (guest_link (180), "dirref",
        "guest: job.<id>.guest is the namespace's final root (dirref)");

    /* run_duration 0: the last events go in one commit with done */
    put_R (181, "0", 0, 0);
    snprintf (name, sizeof (name), "job-%d", 181);
    ns_hold = true;
    start_job (181, TEST0, false, NULL);
    settle (0.02);
    is (T (181), "", "guest: no start before the namespace exists");
    ns_release_held ();
    ok (wait_text (181, "finish"), "guest: job 181 finishes");
    ok (wait_final (181), "guest: job 181 ends");
    is (final_events (181), "init starting complete done",
        "guest: job 181 events");
    ns = json_object_get (removed, name);
    ok (json_integer_value (json_object_get (ns, "commits")) == 1,
        "guest: run_duration 0: one commit to the namespace (init "
        "starting)");
    is (ns_events (181), "init starting",
        "guest: the rest (complete done) goes with the copy");
    is (guest_link (181), "dirref", "guest: job 181 copied");

    /* the symlink is a durable commit: the shells need not wait for it,
     * but the start response does, and what follows the start waits
     * behind it */
    put_R (188, "0", 0, 0);
    primary_hold = true;
    start_job (188, TEST0, false, NULL);
    settle (0.05);
    is (ns_events (188), "init starting",
        "guest: symlink held: the namespace holds init starting (the job "
        "ran and ended: the rest waits for the copy)");
    is (T (188), "", "guest: symlink held: no start, nor what follows it");
    primary_release_held ();
    ok (wait_final (188), "guest: job 188 ends");
    is (T (188), "start finish=0 release=all!",
        "guest: then the RFC 32 sequence, in order");
    is (guest_link (188), "dirref", "guest: job 188 copied");
    is (final_events (188), "init starting complete done",
        "guest: job 188: its events in the copy");

    /* namespace creation fails: the job started meanwhile (its create
     * and init go with the start); an exec exception, even though this
     * one (run_duration 0) ended before the answer */
    put_R (182, "0", 0, 0);
    ns_create_errno = EPERM;
    start_job (182, TEST0, false, NULL);
    ok (wait_final (182), "guest: job 182 ends");
    ns_create_errno = 0;
    is (T (182),
        "start finish=0 exception=exec/0:exec.eventlog: creating namespace "
        "job-182: Operation not permitted release=all!",
        "guest: namespace-create failure is an exec exception");
    is (guest_link (182), "none", "guest: job 182: the symlink is unlinked");

    /* a commit that fails while opening: exception, namespace removed */
    put_R (183, "0", 0, 0);
    ns_commit_errno = EIO;
    start_job (183, TEST0, false, NULL);
    ok (wait_final (183), "guest: job 183 ends");
    ns_commit_errno = 0;
    ok (strstr (T (183), "exception=exec/0:exec.eventlog: committing to "
                         "job-183")
            && strstr (T (183), " release=all!"),
        "guest: a failed init commit is an exec exception (%s)", T (183));
    ok (ns_gone ((void *)183), "guest: job 183: namespace removed");

    /* canceled while the namespace is being created: the job started
     * meanwhile (and, run_duration 0, ended); its responses wait for the
     * namespace, the namespace is removed, the release comes last */
    put_R (184, "0", 0, 0);
    ns_hold = true;
    start_job (184, TEST0, false, NULL);
    settle (0.02);
    publish ("job-exception", "{s:I s:s s:i}", "id", (json_int_t)184, "type",
             "cancel", "severity", 0);
    settle (0.02);
    is (T (184), "", "guest: canceled job 184 waits for its namespace");
    ns_release_held ();
    ok (wait_final (184), "guest: job 184 ends");
    is (T (184), "start finish=0 release=all!",
        "guest: canceled job 184: its responses after the namespace");
    ok (ns_gone ((void *)184), "guest: job 184: namespace removed");
    is (guest_link (184), "dirref", "guest: job 184: copied (init done)");

    /* a namespace left behind (EEXIST) is adopted */
    put_R (185, "0", 0, 0);
    json_object_set_new (namespaces, "job-185",
                         json_pack ("{s:s s:i}", "log", "", "commits", 0));
    start_job (185, "\"exec\":{\"test\":{\"run_duration\":\"10s\"}}", false,
               NULL);
    ok (wait_text (185, "start"),
        "guest: job 185 starts in an adopted namespace");
    is (ns_events (185), "init starting",
        "guest: job 185: init starting appended");
    /* the namespace vanishes (kvs reload): created again with the events */
    json_object_del (namespaces, "job-185");
    publish ("job-exception", "{s:I s:s s:i}", "id", (json_int_t)185, "type",
             "cancel", "severity", 0);
    ok (wait_final (185), "guest: job 185 ends");
    is (T (185), "start finish=9 release=all!", "guest: job 185 sequence");
    is (guest_link (185), "none",
        "guest: job 185: the namespace was lost: the symlink replaced");
    is (final_events (185), "init starting complete done",
        "guest: job 185: job-exec's events kept at job.<id>.guest");
}

/* execjob_event(): an implementation's own events (shell-exit, log) */
static void test_impl_events (void)
{
    struct execjob *job;
    json_t *o = json_pack ("{s:i s:i}", "rank", 0, "wait_status", 0);
    json_t *bad = json_array ();

    put_R (186, "0", 0, 0);
    start_job (186, "\"exec\":{\"test\":{\"run_duration\":\"10s\"}}", false,
               NULL);
    ok (wait_text (186, "start"), "impl events: job 186 started");
    ok ((job = exec_lookup (x, 186)) != NULL, "impl events: exec_lookup");
    ok (execjob_event (job, "shell-exit", o) == 0,
        "impl events: execjob_event shell-exit");
    errno = 0;
    ok (execjob_event (job, "log", bad) < 0 && errno == EINVAL,
        "impl events: a context that is not an object: EINVAL");
    ok (execjob_event (job, "", NULL) < 0 && errno == EINVAL,
        "impl events: an empty name: EINVAL");
    settle (0.05);
    is (ns_events (186), "init starting shell-exit",
        "impl events: committed after starting, within the batching delay");
    publish ("job-exception", "{s:I s:s s:i}", "id", (json_int_t)186, "type",
             "cancel", "severity", 0);
    ok (wait_final (186), "impl events: job 186 ends");
    is (final_events (186), "init starting shell-exit complete done",
        "impl events: the whole log");
    ok (exec_lookup (x, 186) == NULL, "impl events: a done job is not found");
    json_decref (o);
    json_decref (bad);

    /* the last commit fails: the root as it is, the rest appended */
    put_R (187, "0", 0, 0);
    start_job (187, "\"exec\":{\"test\":{\"run_duration\":\"10s\"}}", false,
               NULL);
    ok (wait_text (187, "start"), "last commit fails: job 187 started");
    settle (0.05);
    ns_commit_errno = EIO;
    publish ("job-exception", "{s:I s:s s:i}", "id", (json_int_t)187, "type",
             "cancel", "severity", 0);
    ok (wait_final (187), "last commit fails: job 187 ends");
    ns_commit_errno = 0;
    is (T (187), "start finish=9 release=all!",
        "last commit fails: no exception once finished");
    is (ns_events (187), "init starting",
        "last commit fails: the namespace kept what it had");
    is (final_events (187), "init starting complete done",
        "last commit fails: complete and done appended to the copy");
}

static void test_mock (void)
{
    put_R (10, "0", 0, 0);
    start_job (10, "\"exec\":{\"test\":{\"mock_exception\":\"init\"}}", false,
               NULL);
    ok (wait_final (10), "mock init: ends");
    is (T (10),
        "exception=exec/0:mock initialization exception generated "
        "release=all!",
        "mock init: exception and release only");

    put_R (11, "0", 0, 0);
    start_job (11,
               "\"exec\":{\"test\":{\"mock_exception\":\"run\","
               "\"run_duration\":\"10s\"}}",
               false, NULL);
    ok (wait_final (11), "mock run: ends at once");
    is (T (11),
        "start exception=exec/0:mock run exception generated finish=9 "
        "release=all!",
        "mock run: start, exception, finish 9 (SIGKILL), release");

    put_R (12, "0", 0, 0);
    start_job (12, "\"exec\":{\"test\":{\"run_duration\":\"soon\"}}", false,
               NULL);
    ok (wait_final (12), "bad knob: ends");
    ok (!strncmp (T (12),
                  "exception=exec/0:attributes.system.exec.test.run_duration",
                  56)
            && strstr (T (12), " release=all!"),
        "bad knob: exception naming it, release (%s)", T (12));
}

static void test_R (void)
{
    int before = kvs_lookups;

    start_job (20, TEST0, false,
               "{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"3-4\","
               "\"children\":{\"core\":\"0\"}}]}}");
    ok (wait_final (20), "R in the request: ends");
    is (T (20), "start finish=0 release=all!", "R in the request: sequence");
    ok (kvs_lookups == before, "R in the request: no KVS lookup");

    start_job (21, TEST0, false, NULL);
    ok (wait_final (21), "no R in the KVS: ends");
    ok (strstr (T (21), "exception=exec/0:reading R:") == T (21)
            && strstr (T (21), "release=all!"),
        "no R in the KVS: exception, release (%s)", T (21));

    kvs_put (22, "R", "{\"version\":1,\"execution\":{\"R_lite\":[]}}");
    start_job (22, TEST0, false, NULL);
    ok (wait_final (22), "bad R: ends");
    is (T (22),
        "exception=exec/0:R: execution.R_lite is not a non-empty array "
        "release=all!",
        "bad R: exception, release");
}

static void test_partial_release (void)
{
    put_R (30, "0-3", 0, 0);
    start_job (30, "\"exec\":{\"test\":{\"release_per_rank\":true}}", false,
               NULL);
    ok (wait_final (30), "release_per_rank: ends");
    is (T (30), "start finish=0 release=0 release=1 release=2 release=3!",
        "release_per_rank over 4 ranks: one release per rank, final last");

    put_R (31, "5,9", 0, 0);
    start_job (31, "\"exec\":{\"test\":{\"release_per_rank\":1}}", false, NULL);
    ok (wait_final (31), "release_per_rank 2 ranks: ends");
    is (T (31), "start finish=0 release=5 release=9!", "ranks 5,9");

    put_R (32, "7", 0, 0);
    start_job (32, "\"exec\":{\"test\":{\"release_per_rank\":1}}", false, NULL);
    ok (wait_final (32), "release_per_rank 1 rank: ends");
    is (T (32), "start finish=0 release=all!", "a single rank: release all");

    put_R (33, "0-3", 0, 0);
    start_job (33,
               "\"exec\":{\"test\":{\"release_early\":\"0.1s\","
               "\"run_duration\":\"0.5s\"}}",
               false, NULL);
    ok (wait_final (33), "release_early: ends");
    is (T (33), "start release=0-2 finish=0 release=3!",
        "release_early: ranks 0-2 while running, then finish, rank 3 final");

    put_R (34, "0-3", 0, 0);
    start_job (34,
               "\"exec\":{\"test\":{\"release_early\":0,"
               "\"run_duration\":\"0.2s\",\"release_per_rank\":1}}",
               false, NULL);
    ok (wait_final (34), "release_early 0 with release_per_rank: ends");
    is (T (34), "start release=0-2 finish=0 release=3!",
        "release_per_rank adds nothing after an early release");

    put_R (35, "4", 0, 0);
    start_job (35,
               "\"exec\":{\"test\":{\"release_early\":0,"
               "\"run_duration\":\"0.1s\"}}",
               false, NULL);
    ok (wait_final (35), "release_early on one rank: ends");
    is (T (35), "start finish=0 release=all!",
        "release_early on one rank: nothing early");

    put_R (36, "0-1", 0, 0);
    start_job (36,
               "\"exec\":{\"test\":{\"release_early\":\"10s\","
               "\"run_duration\":\"0.1s\"}}",
               false, NULL);
    ok (wait_final (36), "release_early after the end: ends");
    is (T (36), "start finish=0 release=all!",
        "release_early after the end: never released early");
}

static void test_expiration (void)
{
    double t0 = now ();

    put_R (40, "0", t0, t0 + 0.1);
    start_job (40, "\"exec\":{\"test\":{\"run_duration\":\"10s\"}}", false,
               NULL);
    ok (wait_final (40), "expiring job: ends");
    ok (now () - t0 >= 0.09 && now () - t0 < 2., "at its expiration (%.3f s)",
        now () - t0);
    is (T (40),
        "start exception=timeout/0:resource allocation expired finish=14 "
        "release=all!",
        "timeout exception, finish 14 (SIGALRM), release");

    /* R allocated 5 s ago with 5.1 s: the start delay is not charged */
    t0 = now ();
    put_R (41, "0", t0 - 5., t0 + 0.1);
    start_job (41, "\"exec\":{\"test\":{\"run_duration\":\"0.2s\"}}", false,
               NULL);
    ok (wait_final (41), "job allocated earlier: ends");
    is (T (41), "start finish=0 release=all!",
        "expiration is shifted by the delay between starttime and start");

    /* expiration after the run: no timeout */
    t0 = now ();
    put_R (42, "0", t0, t0 + 5);
    start_job (42, "\"exec\":{\"test\":{\"run_duration\":\"0.01s\"}}", false,
               NULL);
    ok (wait_final (42), "job expiring after its run: ends");
    is (T (42), "start finish=0 release=all!", "no timeout");

    /* job-exec.expiration moves it */
    t0 = now ();
    put_R (43, "0", 0, 0);
    start_job (43, "\"exec\":{\"test\":{\"run_duration\":\"inf\"}}", false,
               NULL);
    ok (wait_text (43, "start"), "unlimited job started");
    ok (rpc ("job-exec.expiration", "{s:I s:f}", "id", (json_int_t)43,
             "expiration", now () + 0.05)
            == 0,
        "job-exec.expiration sets an expiration");
    ok (wait_final (43), "it ends");
    is (T (43),
        "start exception=timeout/0:resource allocation expired finish=14 "
        "release=all!",
        "by timeout");
    ok (rpc ("job-exec.expiration", "{s:I s:f}", "id", (json_int_t)43,
             "expiration", 1.)
            == ENOENT,
        "expiration of an ended job: ENOENT");
    ok (rpc ("job-exec.expiration", "{s:I s:s}", "id", (json_int_t)43,
             "expiration", "x")
            == EPROTO,
        "malformed expiration: EPROTO");
    ok (rpc ("job-exec.expiration", "{s:I s:f}", "id", (json_int_t)43,
             "expiration", -1.)
            == EINVAL,
        "negative expiration: EINVAL");
}

static void test_exceptions (void)
{
    put_R (50, "0", 0, 0);
    start_job (50, "\"exec\":{\"test\":{\"run_duration\":\"10s\"}}", false,
               NULL);
    ok (wait_text (50, "start"), "long job started");
    publish ("job-exception", "{s:I s:s s:i}", "id", (json_int_t)50, "type",
             "other", "severity", 1);
    settle (0.05);
    is (T (50), "start", "a severity 1 exception changes nothing");
    publish ("job-exception", "{s:I s:s s:i s:s}", "id", (json_int_t)50, "type",
             "cancel", "severity", 0, "note", "");
    ok (wait_final (50), "a severity 0 exception ends it");
    is (T (50), "start finish=9 release=all!",
        "cancel: finish 9 (SIGKILL), release; no exception response");

    /* an exception while R is being fetched */
    kvs_hold = true;
    put_R (51, "0", 0, 0);
    start_job (51, TEST0, false, NULL);
    settle (0.02);
    ok (nheld == 1, "R lookup held");
    publish ("job-exception", "{s:I s:s s:i}", "id", (json_int_t)51, "type",
             "cancel", "severity", 0);
    ok (wait_final (51), "cancel during the R fetch ends it");
    kvs_release_held ();
    settle (0.02);
    is (T (51), "release=all!", "release only: no start, no finish");

    publish ("job-exception", "{s:I s:s s:i}", "id", (json_int_t)9999, "type",
             "cancel", "severity", 0);
    publish ("job-exception", "{s:s}", "id", "garbage");
    settle (0.02);
    pass ("exceptions for unknown jobs and malformed events are ignored");
}

static void test_kill (void)
{
    put_R (60, "0", 0, 0);
    start_job (60, "\"exec\":{\"test\":{\"run_duration\":\"10s\"}}", false,
               NULL);
    ok (wait_text (60, "start"), "job started");
    publish ("shell-60.kill", "{s:i}", "signum", SIGCHLD);
    publish ("shell-60.kill", "{s:i}", "signum", SIGCONT);
    settle (0.05);
    is (T (60), "start", "SIGCHLD and SIGCONT are ignored");
    publish ("shell-60.kill", "{s:i}", "signum", SIGTERM);
    ok (wait_final (60), "SIGTERM ends it");
    is (T (60), "start finish=15 release=all!", "finish with status 15");

    put_R (61, "0", 0, 0);
    start_job (61, "\"exec\":{\"test\":{\"run_duration\":\"10s\"}}", false,
               NULL);
    ok (wait_text (61, "start"), "job started");
    publish ("shell-61.kill", "{s:i}", "signum", SIGKILL);
    ok (wait_final (61), "SIGKILL ends it");
    is (T (61), "start finish=9 release=all!", "finish with status 9");
    publish ("shell-61x.kill", "{s:i}", "signum", SIGKILL);
    publish ("shell-62.kill", "{s:s}", "signum", "KILL");
    settle (0.02);
    pass ("malformed kill events are ignored");
}

static void test_override (void)
{
    put_R (70, "0", 0, 0);
    start_job (70, "\"exec\":{\"test\":{\"override\":1}}", false, NULL);
    settle (0.05);
    is (T (70), "", "override: nothing before the override start");
    ok (rpc ("job-exec.override", "{s:I s:s}", "jobid", (json_int_t)70, "event",
             "finish")
            == EINVAL,
        "override finish before start: EINVAL");
    ok (rpc ("job-exec.override", "{s:I s:s}", "jobid", (json_int_t)70, "event",
             "start")
            == 0,
        "override start");
    ok (wait_text (70, "start"), "start response");
    ok (rpc ("job-exec.override", "{s:I s:s}", "jobid", (json_int_t)70, "event",
             "start")
            == EINVAL,
        "a second override start: EINVAL");
    settle (0.05);
    is (T (70), "start", "run_duration 0 with override: runs until finish");
    ok (rpc ("job-exec.override", "{s:I s:s s:i}", "jobid", (json_int_t)70,
             "event", "finish", "status", 3 << 8)
            == 0,
        "override finish with status");
    ok (wait_final (70), "ends");
    is (T (70), "start finish=768 release=all!", "finish 768");

    ok (rpc ("job-exec.override", "{s:I s:s}", "jobid", (json_int_t)70, "event",
             "start")
            == ENOENT,
        "override of an ended job: ENOENT");
    put_R (71, "0", 0, 0);
    start_job (71, "\"exec\":{\"test\":{\"run_duration\":\"10s\"}}", false,
               NULL);
    ok (wait_text (71, "start"), "a job without override started");
    ok (rpc ("job-exec.override", "{s:I s:s}", "jobid", (json_int_t)71, "event",
             "finish")
            == EINVAL,
        "override of a job not in override mode: EINVAL");
    ok (rpc ("job-exec.override", "{s:I s:i}", "jobid", (json_int_t)71, "event",
             1)
            == EPROTO,
        "malformed override: EPROTO");
    publish ("job-exception", "{s:I s:s s:i}", "id", (json_int_t)71, "type",
             "cancel", "severity", 0);
    ok (wait_final (71), "cancelled");

    /* override start arriving while R is being fetched */
    kvs_hold = true;
    put_R (72, "0", 0, 0);
    start_job (72,
               "\"exec\":{\"test\":{\"override\":1,\"run_duration\":"
               "\"0.01s\"}}",
               false, NULL);
    settle (0.02);
    ok (rpc ("job-exec.override", "{s:I s:s}", "jobid", (json_int_t)72, "event",
             "start")
            == 0,
        "override start before R is known");
    kvs_release_held ();
    ok (wait_final (72), "the job then runs its run_duration and ends");
    is (T (72), "start finish=0 release=all!", "sequence");

    /* cancel while waiting for the override start */
    put_R (73, "0", 0, 0);
    start_job (73, "\"exec\":{\"test\":{\"override\":1}}", false, NULL);
    settle (0.02);
    publish ("job-exception", "{s:I s:s s:i}", "id", (json_int_t)73, "type",
             "cancel", "severity", 0);
    ok (wait_final (73), "cancel while waiting for override start ends it");
    is (T (73), "release=all!", "release only");
}

static void put_eventlog (uint64_t id, double start)
{
    char buf[512];
    snprintf (buf, sizeof (buf),
              "{\"timestamp\":%.6f,\"name\":\"submit\",\"context\":"
              "{\"userid\":1,\"urgency\":16,\"flags\":0,\"version\":1}}\n"
              "{\"timestamp\":%.6f,\"name\":\"start\"}\n",
              start - 1., start);
    kvs_put (id, "eventlog", buf);
}

static void test_reattach (void)
{
    double t0 = now ();

    put_R (80, "0", 0, 0);
    put_eventlog (80, t0 - 100.);
    start_job (80, "\"exec\":{\"test\":{\"run_duration\":\"50s\"}}", true,
               NULL);
    ok (wait_final (80), "reattach after run_duration elapsed: ends at once");
    is (T (80), "start finish=0 release=all!", "sequence");
    is (final_events (80), "reattach re-starting complete done",
        "exec.eventlog: reattach, re-starting, complete, done");

    put_R (81, "0", 0, 0);
    put_eventlog (81, t0 - 0.1);
    start_job (81, "\"exec\":{\"test\":{\"run_duration\":\"0.3s\"}}", true,
               NULL);
    ok (wait_text (81, "start"), "reattach with time left: start");
    ok (wait_final (81), "it ends");
    t0 = now () - t0;
    ok (t0 >= 0.18 && t0 < 10., "after the remaining time only (%.3f s)", t0);

    put_R (82, "0", 0, 0);
    put_eventlog (82, now ());
    start_job (82,
               "\"exec\":{\"test\":{\"run_duration\":\"50s\","
               "\"reattach_finish\":1}}",
               true, NULL);
    ok (wait_final (82), "reattach_finish: ends at once");
    is (T (82), "start finish=0 release=all!", "sequence");

    put_R (83, "0", 0, 0);
    start_job (83, "\"exec\":{\"test\":{\"run_duration\":\"50s\"}}", true,
               NULL);
    ok (wait_final (83), "reattach without an eventlog: ends");
    ok (strstr (T (83), "exception=exec/0:reattach: reading the eventlog")
            == T (83),
        "with an exec exception (%s)", T (83));

    /* a reattach start for a job still active here adopts it */
    put_R (84, "0", 0, 0);
    start_job (84, "\"exec\":{\"test\":{\"run_duration\":\"10s\"}}", false,
               NULL);
    ok (wait_text (84, "start"), "job started");
    start_job (84, "\"exec\":{\"test\":{\"run_duration\":\"10s\"}}", true,
               NULL);
    ok (wait_text (84, "start start"),
        "reattach of an active job: start again");
    publish ("job-exception", "{s:I s:s s:i}", "id", (json_int_t)84, "type",
             "cancel", "severity", 0);
    ok (wait_final (84), "cancel ends it");
    is (T (84), "start start finish=9 release=all!", "one job, one final");

    /* a job finished, its resources not yet released (the guest namespace
     * is being copied), when a reloaded job manager takes it over: the
     * new one hears the start and the finish again, since the old one may
     * have gone before it logged them */
    put_R (85, "0", 0, 0);
    start_job (85, "\"exec\":{\"test\":{\"run_duration\":\"0.2s\"}}", false,
               NULL);
    ok (wait_text (85, "start"), "job 85 started");
    primary_hold = true;
    ok (wait_text (85, "start finish=0"), "job 85 finished");
    ok (!strstr (T (85), "release"), "its release waits for the copy");
    start_job (85, "\"exec\":{\"test\":{\"run_duration\":\"0.01s\"}}", true,
               NULL);
    {
        /* T () may move while wait_text () waits: call it after */
        bool again = wait_text (85, "start finish=0 start finish=0");
        ok (again, "adopted after its finish: start and finish again (%s)",
            T (85));
    }
    primary_release_held ();
    ok (wait_final (85), "then the final release");
    is (T (85), "start finish=0 start finish=0 release=all!",
        "one final release");

    /* the final release waits for the copy, not for the namespace's
     * removal (readers have the copy): it goes while the removal is
     * still unanswered, and the namespace goes after */
    ns_remove_hold = true;
    put_R (86, "0", 0, 0);
    start_job (86, TEST0, false, NULL);
    ok (wait_final (86), "job 86: released with its removal unanswered");
    is (T (86), "start finish=0 release=all!", "job 86: the RFC 32 sequence");
    is (guest_link (86), "dirref", "job 86: copied before the release");
    ok (!ns_gone ((void *)86), "job 86: the namespace is still there");
    ns_remove_release_held ();
    ok (run_until (ns_gone, (void *)86, 5.), "job 86: then it is removed");
}

static void test_bad_requests (void)
{
    int eproto = errors[EPROTO];
    int eexist = errors[EEXIST];

    send_start_raw ("{\"id\":90,\"userid\":0,\"jobspec\":{},\"reattach\":"
                    "false}",
                    false);
    send_start_raw ("[1]", true);
    send_start_raw ("{\"id\":90}", true);
    send_start_raw ("{\"id\":-1,\"userid\":0,\"jobspec\":{},\"reattach\":"
                    "false}",
                    true);
    send_start_raw ("{\"id\":90,\"userid\":0,\"jobspec\":[],\"reattach\":"
                    "false}",
                    true);
    send_start_raw ("{\"id\":90,\"userid\":0,\"jobspec\":{},\"reattach\":"
                    "false,\"extra\":1}",
                    true);
    send_start_raw ("{\"id\":90,\"userid\":0,\"jobspec\":{},\"reattach\":"
                    "0}",
                    true);
    send_start_raw (NULL, true);
    settle (0.05);
    ok (errors[EPROTO] - eproto == 8,
        "8 malformed start requests: EPROTO each (%d)",
        errors[EPROTO] - eproto);

    put_R (91, "0", 0, 0);
    start_job (91, "\"exec\":{\"test\":{\"run_duration\":\"10s\"}}", false,
               NULL);
    ok (wait_text (91, "start"), "job 91 started");
    start_job (91, TEST0, false, NULL);
    settle (0.05);
    ok (errors[EEXIST] - eexist == 1,
        "a second start without reattach: EEXIST");
    /* the same start from another sender: a job manager reloaded before
     * it logged the start event replays the job as not started */
    {
        char buf[512];
        flux_msg_t *msg;
        snprintf (buf, sizeof (buf),
                  "{\"id\":91,\"userid\":%d,\"jobspec\":{\"version\":1,"
                  "\"attributes\":{\"system\":{}}},\"reattach\":false}",
                  (int)getuid ());
        if (!(msg = flux_request_encode ("job-exec.start", buf))
            || flux_msg_set_streaming (msg) < 0)
            BAIL_OUT ("encoding start");
        flux_msg_route_enable (msg);
        if (flux_msg_route_push (msg, "new-job-manager") < 0
            || flux_send (h, msg, 0) < 0)
            BAIL_OUT ("sending start");
        flux_msg_decref (msg);
    }
    {
        /* T () may move while wait_text () waits: call it after */
        bool adopted = wait_text (91, "start start");
        ok (adopted,
            "a start from another sender adopts the job: start again (%s)",
            T (91));
    }
    ok (errors[EEXIST] - eexist == 1, "no EEXIST for it");

    ok (rpc ("job-exec.critical-ranks", "{s:I s:s}", "id", (json_int_t)91,
             "ranks", "0")
            == 0,
        "critical-ranks 0 of a 1-rank job");
    ok (rpc ("job-exec.critical-ranks", "{s:I s:s}", "id", (json_int_t)91,
             "ranks", "1")
            == EINVAL,
        "critical-ranks beyond the job: EINVAL");
    ok (rpc ("job-exec.critical-ranks", "{s:I s:s}", "id", (json_int_t)91,
             "ranks", "x")
            == EINVAL,
        "critical-ranks not an idset: EINVAL");
    ok (rpc ("job-exec.critical-ranks", "{s:I s:s}", "id", (json_int_t)92,
             "ranks", "0")
            == ENOENT,
        "critical-ranks of an unknown job: ENOENT");
    ok (rpc ("job-exec.critical-ranks", "{s:I}", "id", (json_int_t)91)
            == EPROTO,
        "malformed critical-ranks: EPROTO");
    publish ("job-exception", "{s:I s:s s:i}", "id", (json_int_t)91, "type",
             "cancel", "severity", 0);
    ok (wait_final (91), "job 91 still served and cancelled");

    put_R (93, "0", 0, 0);
    start_job (93, TEST0, false, NULL);
    ok (wait_final (93) && !strcmp (T (93), "start finish=0 release=all!"),
        "after all that, a good job still runs");
}

static bool all_final (void *arg)
{
    return finals >= *(int *)arg;
}

static void test_many (void)
{
    enum { N = 10000, BASE = 10000 };
    int want = finals + N;
    double t0;
    bool good = true;

    for (int i = 0; i < N; i++)
        put_R (BASE + i, "0", 0, 0);
    t0 = now ();
    for (int i = 0; i < N; i++)
        start_job (BASE + i, TEST0, false, NULL);
    ok (run_until (all_final, &want, 120.), "%d jobs ended", N);
    diag ("%d jobs in %.3f s over loop:// (%.0f jobs/s, with the fake kvs"
          " and this driver in the same thread)",
          N, now () - t0, N / (now () - t0));
    for (int i = 0; i < N; i++) {
        if (strcmp (T (BASE + i), "start finish=0 release=all!") != 0)
            good = false;
    }
    ok (good, "each had start, finish 0, release all");
    ok (exec_job_count (x) == 0, "no job is left in the table");
}

static void stats_check (void)
{
    flux_future_t *f
        = flux_rpc (h, "job-exec.stats-get", NULL, FLUX_NODEID_ANY, 0);
    json_int_t active = -1, timers = -1;

    if (!f || !run_until (ready, f, 5.))
        BAIL_OUT ("stats-get");
    ok (flux_rpc_get_unpack (f, "{s:{s:I} s:{s:{s:I}}}", "jobs", "active",
                             &active, "implementations", "testexec", "timers",
                             &timers)
                == 0
            && timers > 0,
        "stats-get answers (active=%jd, testexec timers=%jd)", (intmax_t)active,
        (intmax_t)timers);
    flux_future_destroy (f);
}

int main (int argc, char **argv)
{
    flux_msg_handler_t **handlers;
    flux_error_t error;

    plan (NO_PLAN);
    if (!(h = flux_open ("loop://", getenv ("TRACE") ? FLUX_O_TRACE : 0))
        || !(r = flux_get_reactor (h)) || !(kvs = json_object ())
        || !(namespaces = json_object ()) || !(primary = json_object ())
        || !(removed = json_object ()))
        BAIL_OUT ("loop://");
    if (flux_msg_handler_addvec (h, htab, NULL, &handlers) < 0
        || flux_attr_set_cacheonly (h, "content.hash", "sha1") < 0)
        BAIL_OUT ("handlers");
    if (!(x = exec_create (h, 0, "job-exec", &error)))
        BAIL_OUT ("exec_create: %s", error.text);
    test_basic ();
    test_guest ();
    test_impl_events ();
    test_mock ();
    test_R ();
    test_partial_release ();
    test_expiration ();
    test_exceptions ();
    test_kill ();
    test_override ();
    test_reattach ();
    test_bad_requests ();
    test_many ();
    stats_check ();

    /* leave jobs running: destroy must forget them without leaking */
    put_R (95, "0", 0, 0);
    start_job (95, "\"exec\":{\"test\":{\"run_duration\":\"10s\"}}", false,
               NULL);
    ok (wait_text (95, "start"), "a job left running");
    kvs_hold = true;
    start_job (96, TEST0, false, NULL);
    settle (0.02);
    exec_destroy (x);
    kvs_release_held ();
    flux_msg_handler_delvec (handlers);
    settle (0.02);
    pass ("exec_destroy with a running and a fetching job");
    for (int i = 0; i < MAXJOBS; i++)
        free (trace[i]);
    json_decref (kvs);
    json_decref (namespaces);
    json_decref (primary);
    json_decref (removed);
    flux_close (h);
    done_testing ();
    return 0;
}
