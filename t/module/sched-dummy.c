/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* sched-dummy - an RFC 27 scheduler for the job manager tests.
 *
 * It registers the service "sched", says hello (marking the jobs the job
 * manager reports as allocated) and ready, then allocates one fake R per
 * job (one core of rank 0) as soon as a slot is free, writing R to the
 * KVS before answering SUCCESS with a resource_summary annotation.
 *
 * Arguments:
 *   mode=limited|unlimited   (default limited)
 *   limit=N                  sched-ready limit (default 8)
 *   slots=N                  allocations at once; 0 = no limit (default 0)
 *   r-in-response            put R in the SUCCESS response instead of
 *                            writing it to the KVS (flux-core's newer way)
 *   expiration=enosys        answer sched.expiration with ENOSYS
 *
 * Per job, attributes.system.test.sched in the jobspec selects:
 *   "deny"   DENY with a note
 *   "hold"   never allocate (ANNOTATE with a reason_pending), until
 *            canceled
 *   "error"  a conventional error response (a scheduler fatality)
 * A request that must wait for a slot gets one ANNOTATE response.
 *
 * sched-dummy.stats -> {allocated, pending:[id...] (in the order they
 * would be served), hello:[id...], counters, last_prioritize, mode}
 * sched-dummy.ctl {slots?:i} changes the number of slots.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "libflux/flux.h"
#include "libflux/list.h"
#include "libkvs/kvs.h"

struct areq {
    uint64_t id;
    int64_t priority;
    const flux_msg_t *msg;
    bool hold;
};

struct sched {
    flux_t *h;
    const char *mode;
    int limit;
    int slots; /* 0: unlimited */
    bool r_in_response;
    bool expiration_enosys;
    int used;
    struct areq *pending;
    int npending, maxpending;
    json_t *hello; /* ids reported at hello */
    json_t *last_prioritize;
    flux_future_t *hello_f;
    flux_future_t *ready_f;
    struct list_node commits; /* R commits in flight */
    int next_core;
    struct {
        int alloc, success, deny, cancel, free, prioritize, annotate,
            expiration, error;
    } count;
};

static void log_err (struct sched *s, const char *fmt, const char *arg)
{
    flux_log (s->h, LOG_ERR, fmt, arg);
}

static double now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static json_t *make_R (struct sched *s, json_t *jobspec)
{
    double duration = 0, t = now ();
    char core[16], host[64] = "localhost";

    (void)json_unpack (jobspec, "{s:{s:{s:F}}}", "attributes", "system",
                       "duration", &duration);
    (void)gethostname (host, sizeof (host) - 1);
    snprintf (core, sizeof (core), "%d", s->next_core++ % 1024);
    return json_pack ("{s:i s:{s:[{s:s s:{s:s}}] s:[s] s:f s:f}}", "version", 1,
                      "execution", "R_lite", "rank", "0", "children", "core",
                      core, "nodelist", host, "starttime", t, "expiration",
                      duration > 0 ? t + duration : 0.);
}

/* An R commit in flight, destroyed with its future (so none outlives
 * the module: the continuation must not run after mod_main returns). */
struct commit {
    struct list_node link;
    struct sched *s;
    flux_future_t *f;
    const flux_msg_t *msg;
};

static void commit_free (void *arg)
{
    struct commit *c = arg;
    list_del (&c->link);
    flux_msg_decref (c->msg);
    free (c);
}

static void commit_cb (flux_future_t *f, void *arg)
{
    struct commit *c = arg;
    struct sched *s = c->s;
    json_int_t id = 0;

    (void)flux_msg_unpack (c->msg, "{s:I}", "id", &id);
    if (flux_future_get (f, NULL) < 0) {
        log_err (s, "R commit failed: %s", strerror (errno));
        flux_respond_error (s->h, c->msg, errno, "R commit failed");
    }
    else
        flux_respond_pack (s->h, c->msg, "{s:I s:i s:{s:{s:s}}}", "id", id,
                           "type", 0, "annotations", "sched",
                           "resource_summary", "rank0/core0");
    flux_future_destroy (f); /* frees c */
}

/* Allocate: write R, then answer SUCCESS (or R in the response). */
static void allocate (struct sched *s, const flux_msg_t *msg)
{
    json_int_t id;
    json_t *jobspec = NULL, *R;
    char key[64], *str;
    flux_kvs_txn_t *txn = NULL;
    flux_future_t *f = NULL;
    struct commit *c;

    (void)flux_msg_unpack (msg, "{s:I s?o}", "id", &id, "jobspec", &jobspec);
    s->used++;
    s->count.success++;
    R = make_R (s, jobspec);
    if (s->r_in_response) {
        flux_respond_pack (s->h, msg, "{s:I s:i s:O s:{s:{s:s}}}", "id", id,
                           "type", 0, "R", R, "annotations", "sched",
                           "resource_summary", "rank0/core0");
        json_decref (R);
        return;
    }
    snprintf (key, sizeof (key), "job.%04x.%04x.%04x.%04x.R",
              (unsigned)((uint64_t)id >> 48) & 0xffff,
              (unsigned)((uint64_t)id >> 32) & 0xffff,
              (unsigned)((uint64_t)id >> 16) & 0xffff,
              (unsigned)(uint64_t)id & 0xffff);
    str = json_dumps (R, JSON_COMPACT);
    json_decref (R);
    if (!str || !(c = calloc (1, sizeof (*c)))) {
        flux_respond_error (s->h, msg, ENOMEM, "cannot write R");
        free (str);
        return;
    }
    c->s = s;
    c->msg = flux_msg_incref (msg);
    list_add_tail (&s->commits, &c->link);
    if (!(txn = flux_kvs_txn_create ())
        || flux_kvs_txn_put (txn, 0, key, str) < 0
        || !(f = flux_kvs_commit (s->h, NULL, 0, txn))
        || flux_future_aux_set (f, "commit", c, commit_free) < 0
        || flux_future_then (f, -1, commit_cb, (c->f = f, c)) < 0) {
        flux_respond_error (s->h, msg, errno, "cannot write R");
        if (!f || !flux_future_aux_get (f, "commit"))
            commit_free (c);
        flux_future_destroy (f);
    }
    flux_kvs_txn_destroy (txn);
    free (str);
}

static bool have_slot (struct sched *s)
{
    return s->slots == 0 || s->used < s->slots;
}

static int cmp_areq (const void *a, const void *b)
{
    const struct areq *x = a, *y = b;
    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* Serve waiting requests in priority order while slots are free. */
static void run_pending (struct sched *s)
{
    int i = 0;

    if (s->npending > 1)
        qsort (s->pending, s->npending, sizeof (s->pending[0]), cmp_areq);
    while (i < s->npending && have_slot (s)) {
        if (s->pending[i].hold) {
            i++;
            continue;
        }
        allocate (s, s->pending[i].msg);
        flux_msg_decref (s->pending[i].msg);
        memmove (&s->pending[i], &s->pending[i + 1],
                 (s->npending - i - 1) * sizeof (s->pending[0]));
        s->npending--;
    }
}

static int add_pending (struct sched *s, const flux_msg_t *msg, uint64_t id,
                        int64_t priority, bool hold)
{
    if (s->npending == s->maxpending) {
        int n = s->maxpending ? s->maxpending * 2 : 64;
        struct areq *p = realloc (s->pending, n * sizeof (*p));
        if (!p)
            return -1;
        s->pending = p;
        s->maxpending = n;
    }
    s->pending[s->npending++] = (struct areq){.id = id,
                                              .priority = priority,
                                              .msg = flux_msg_incref (msg),
                                              .hold = hold};
    return 0;
}

static void alloc_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    struct sched *s = arg;
    json_int_t id, priority;
    int userid;
    json_t *jobspec;
    const char *knob = "";

    if (flux_request_unpack (msg, NULL, "{s:I s:I s:i s:o}", "id", &id,
                             "priority", &priority, "userid", &userid,
                             "jobspec", &jobspec)
        < 0) {
        log_err (s, "%s", "malformed sched.alloc");
        return; /* no response: it would not carry an id */
    }
    s->count.alloc++;
    (void)json_unpack (jobspec, "{s:{s:{s:{s:s}}}}", "attributes", "system",
                       "test", "sched", &knob);
    if (!strcmp (knob, "deny")) {
        s->count.deny++;
        flux_respond_pack (h, msg, "{s:I s:i s:s}", "id", id, "type", 2, "note",
                           "denied by sched-dummy");
        return;
    }
    if (!strcmp (knob, "error")) {
        s->count.error++;
        flux_respond_error (h, msg, EIO, "sched-dummy: injected error");
        return;
    }
    if (!strcmp (knob, "hold") || !have_slot (s)) {
        bool hold = !strcmp (knob, "hold");
        if (add_pending (s, msg, id, priority, hold) < 0) {
            flux_respond_error (h, msg, ENOMEM, NULL);
            return;
        }
        s->count.annotate++;
        flux_respond_pack (h, msg, "{s:I s:i s:{s:{s:s s:f}}}", "id", id,
                           "type", 1, "annotations", "sched", "reason_pending",
                           hold ? "held by sched-dummy"
                                : "waiting for a free slot",
                           "t_estimate", now () + 3600);
        return;
    }
    allocate (s, msg);
}

static void free_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    struct sched *s = arg;
    json_int_t id;

    if (flux_request_unpack (msg, NULL, "{s:I}", "id", &id) < 0) {
        log_err (s, "%s", "malformed sched.free");
        return;
    }
    s->count.free++;
    if (s->used > 0)
        s->used--;
    flux_respond_pack (h, msg, "{s:I}", "id", id);
    run_pending (s);
}

static void cancel_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    struct sched *s = arg;
    json_int_t id;

    if (flux_request_unpack (msg, NULL, "{s:I}", "id", &id) < 0)
        return;
    for (int i = 0; i < s->npending; i++) {
        if (s->pending[i].id == (uint64_t)id) {
            s->count.cancel++;
            flux_respond_pack (h, s->pending[i].msg, "{s:I s:i}", "id", id,
                               "type", 3);
            flux_msg_decref (s->pending[i].msg);
            memmove (&s->pending[i], &s->pending[i + 1],
                     (s->npending - i - 1) * sizeof (s->pending[0]));
            s->npending--;
            return;
        }
    }
}

static void prioritize_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg)
{
    struct sched *s = arg;
    json_t *jobs, *pair;
    size_t i;

    if (flux_request_unpack (msg, NULL, "{s:o}", "jobs", &jobs) < 0)
        return;
    s->count.prioritize++;
    json_decref (s->last_prioritize);
    s->last_prioritize = json_incref (jobs);
    json_array_foreach (jobs, i, pair)
    {
        json_int_t id, priority;
        if (json_unpack (pair, "[I,I]", &id, &priority) < 0)
            continue;
        for (int k = 0; k < s->npending; k++) {
            if (s->pending[k].id == (uint64_t)id)
                s->pending[k].priority = priority;
        }
    }
    run_pending (s);
}

static void expiration_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg)
{
    struct sched *s = arg;
    json_int_t id;
    double expiration;

    if (flux_request_unpack (msg, NULL, "{s:I s:F}", "id", &id, "expiration",
                             &expiration)
        < 0) {
        flux_respond_error (h, msg, EPROTO, NULL);
        return;
    }
    s->count.expiration++;
    if (s->expiration_enosys)
        flux_respond_error (h, msg, ENOSYS, NULL);
    else
        flux_respond (h, msg, NULL);
}

static void stats_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    struct sched *s = arg;
    json_t *pending = json_array ();

    if (s->npending > 1)
        qsort (s->pending, s->npending, sizeof (s->pending[0]), cmp_areq);
    for (int i = 0; i < s->npending; i++)
        json_array_append_new (pending,
                               json_integer ((json_int_t)s->pending[i].id));
    flux_respond_pack (
        h, msg,
        "{s:s s:i s:i s:i s:o s:O s:O s:{s:i s:i s:i s:i s:i"
        " s:i s:i s:i s:i}}",
        "mode", s->mode, "limit", s->limit, "slots", s->slots, "allocated",
        s->used, "pending", pending, "hello", s->hello, "last_prioritize",
        s->last_prioritize ? s->last_prioritize : json_null (), "count",
        "alloc", s->count.alloc, "success", s->count.success, "deny",
        s->count.deny, "cancel", s->count.cancel, "free", s->count.free,
        "prioritize", s->count.prioritize, "annotate", s->count.annotate,
        "expiration", s->count.expiration, "error", s->count.error);
}

static void ctl_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                    void *arg)
{
    struct sched *s = arg;
    int slots = -1;

    if (flux_request_unpack (msg, NULL, "{s?i}", "slots", &slots) < 0) {
        flux_respond_error (h, msg, EPROTO, NULL);
        return;
    }
    if (slots >= 0)
        s->slots = slots;
    flux_respond (h, msg, NULL);
    run_pending (s);
}

static void ready_cb (flux_future_t *f, void *arg)
{
    struct sched *s = arg;

    if (flux_future_get (f, NULL) < 0) {
        log_err (s, "sched-ready: %s", future_strerror (f, errno));
        flux_reactor_stop_error (flux_get_reactor (s->h));
    }
    flux_future_destroy (f);
    s->ready_f = NULL;
}

static void hello_cb (flux_future_t *f, void *arg)
{
    struct sched *s = arg;
    json_int_t id;
    flux_future_t *rf;

    if (flux_rpc_get_unpack (f, "{s:I}", "id", &id) == 0) {
        json_array_append_new (s->hello, json_integer (id));
        s->used++;
        flux_future_reset (f);
        return;
    }
    if (errno != ENODATA) {
        log_err (s, "sched-hello: %s", future_strerror (f, errno));
        flux_reactor_stop_error (flux_get_reactor (s->h));
        return;
    }
    flux_future_destroy (f);
    s->hello_f = NULL;
    if (!strcmp (s->mode, "limited"))
        rf = flux_rpc_pack (s->h, "job-manager.sched-ready", 0, 0, "{s:s s:i}",
                            "mode", "limited", "limit", s->limit);
    else
        rf = flux_rpc_pack (s->h, "job-manager.sched-ready", 0, 0, "{s:s}",
                            "mode", "unlimited");
    if (!rf || flux_future_then (rf, -1, ready_cb, s) < 0)
        flux_reactor_stop_error (flux_get_reactor (s->h));
    s->ready_f = rf;
}

static int parse_args (struct sched *s, int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        if (!strcmp (argv[i], "mode=limited")
            || !strcmp (argv[i], "mode="
                                 "unlimit"
                                 "ed"))
            s->mode = argv[i] + 5;
        else if (!strncmp (argv[i], "limit=", 6))
            s->limit = atoi (argv[i] + 6);
        else if (!strncmp (argv[i], "slots=", 6))
            s->slots = atoi (argv[i] + 6);
        else if (!strcmp (argv[i], "r-in-response"))
            s->r_in_response = true;
        else if (!strcmp (argv[i], "expiration=enosys"))
            s->expiration_enosys = true;
        else {
            errno = EINVAL;
            return -1;
        }
    }
    return 0;
}

static const struct flux_msg_handler_spec htab[] = {
    {FLUX_MSGTYPE_REQUEST, "sched.alloc", alloc_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "sched.free", free_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "sched.cancel", cancel_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "sched.prioritize", prioritize_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "sched.expiration", expiration_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "sched-dummy.stats", stats_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "sched-dummy.ctl", ctl_cb, 0},
    FLUX_MSGHANDLER_TABLE_END,
};

int mod_main (flux_t *h, int argc, char **argv)
{
    struct sched s = {.h = h, .mode = "limited", .limit = 8};
    flux_msg_handler_t **handlers = NULL;
    flux_future_t *f;
    int rc = -1;

    list_init (&s.commits);
    if (parse_args (&s, argc, argv) < 0 || !(s.hello = json_array ()))
        return -1;
    if (!(f = flux_service_register (h, "sched"))
        || flux_future_get (f, NULL) < 0) {
        flux_future_destroy (f);
        goto done;
    }
    flux_future_destroy (f);
    if (flux_msg_handler_addvec (h, htab, &s, &handlers) < 0)
        goto done;
    if (!(s.hello_f = flux_rpc (h, "job-manager.sched-hello", NULL,
                                FLUX_NODEID_ANY, FLUX_RPC_STREAMING))
        || flux_future_then (s.hello_f, -1, hello_cb, &s) < 0)
        goto done;
    if (flux_reactor_run (flux_get_reactor (h), 0) < 0)
        goto done;
    rc = 0;
done:
    while (!list_empty (&s.commits)) {
        struct commit *c = list_entry (s.commits.next, struct commit, link);
        if (c->f)
            flux_future_destroy (c->f); /* frees c */
        else
            commit_free (c);
    }
    flux_future_destroy (s.hello_f);
    flux_future_destroy (s.ready_f);
    flux_msg_handler_delvec (handlers);
    for (int i = 0; i < s.npending; i++)
        flux_msg_decref (s.pending[i].msg);
    free (s.pending);
    json_decref (s.hello);
    json_decref (s.last_prioritize);
    return rc;
}
