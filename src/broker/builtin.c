/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* builtin.c - the broker's own services, run on its internal handle:
 * broker.*, event.publish, module.*, state-machine.*, shutdown.*,
 * overlay.topology/health/trace.  (attr.* and log.* live in attr.c and
 * log.c.)
 */
#include <errno.h>
#include <stdbool.h>
#include <syslog.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "broker.h"
#include "groups.h"
#include "libflux/base64.h"
#include "libflux/stats.h"
#include "methods.h"
#include "module.h"
#include "evroute.h"
#include "msgcount.h"
#include "overlay/overlay.h"
#include "overlay/topology.h"
#include "trace.h"

/* How long a module asked to stop with cancel gets before the broker
 * abandons it (module_abandon). */
#define CANCEL_GRACE_MS 1000

struct modctx {
    const flux_msg_t *load_req;   /* answered when RUNNING or EXITED */
    const flux_msg_t *remove_req; /* answered when EXITED */
    const flux_msg_t *cancel_req; /* a remove with cancel, the same */
    uv_timer_t *cancel_timer;     /* runs out: the module is abandoned */
    struct broker *b;
    size_t rank; /* place in the shutdown order (state_module_rank) */
    bool abandoned;
};

static struct broker *broker_of (void *arg)
{
    return arg;
}

/* ---- broker.ping / broker.stats-get ---- */

static void ping_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    struct broker *b = broker_of (arg);
    method_ping_respond (h, msg, b->uuid, b->rank);
}

/* The message counters, the RPCs in flight below this broker, what went
 * up to the parent past its share of the link (refused: requests answered
 * EAGAIN; dropped: events and responses), and the longest loop turn. */
static void stats_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    struct broker *b = broker_of (arg);
    json_t *o = json_pack (
        "{s:I s:I s:I}", "tracked-rpcs", (json_int_t)router_tracked_count (b),
        "upstream-refused", (json_int_t)b->upq_refused_total,
        "upstream-dropped", (json_int_t)b->upq_dropped_total);

    struct flux_msg_cred cred = {0};

    (void)flux_msg_get_cred (msg, &cred);
    if (o)
        router_turn_stats (b, o, false);
    if (o)
        (void)json_object_set_new (
            o, "evroute-keys",
            json_integer ((json_int_t)evroute_count (b->evroute)));
    if (o && b->msgcount)
        (void)json_object_set_new (o, "msgcount",
                                   msgcount_json (b->msgcount, false));
    if (o
        && router_upstream_clients (b, o,
                                    cred.rolemask & FLUX_ROLE_OWNER
                                        ? FLUX_USERID_UNKNOWN
                                        : cred.userid)
               < 0) {
        json_decref (o);
        o = NULL;
    }
    flux_stats_respond (h, msg, o);
}

/* flux module stats --clear broker: the loop's figures start again (to
 * measure one phase, e.g. an attack, apart from the start-up's). */
static void stats_clear_cb (flux_t *h, flux_msg_handler_t *mh,
                            const flux_msg_t *msg, void *arg)
{
    router_turn_stats (broker_of (arg), NULL, true);
    json_decref (msgcount_json (broker_of (arg)->msgcount, true));
    flux_respond (h, msg, NULL);
}

/* ---- event.publish ---- */

/* Event topics the instance's own services publish and act on.  Their
 * handlers accept only the owner's events anyway (events carry the
 * publisher's credentials); refusing guests here makes the rule visible
 * (doc/guide/access.md) and keeps such events off the wire.
 */
static bool reserved_topic (const char *topic)
{
    static const char *prefix[] = {
        "job-",    "job.",           "kvs.",         "content.", "shell-",
        "broker.", "heartbeat.",     "resource.",    "sched.",   "exec-agent.",
        "rexec.",  "log.",           "config.",      "groups.",  "overlay.",
        "module.", "state-machine.", "feasibility.",
    };
    for (size_t i = 0; i < sizeof (prefix) / sizeof (prefix[0]); i++)
        if (!strncmp (topic, prefix[i], strlen (prefix[i])))
            return true;
    return false;
}

static void publish_cb (flux_t *h, flux_msg_handler_t *mh,
                        const flux_msg_t *msg, void *arg)
{
    struct broker *b = broker_of (arg);
    const char *topic, *payload = NULL;
    int flags;
    struct flux_msg_cred cred;
    flux_msg_t *ev = NULL;
    void *data = NULL;
    ssize_t len = 0;
    uint32_t seq;

    if (b->rank != 0) {
        flux_respond_error (h, msg, EPROTO, "event.publish: send to rank 0");
        return;
    }
    if (flux_request_unpack (msg, NULL, "{s:s s:i s?s}", "topic", &topic,
                             "flags", &flags, "payload", &payload)
            < 0
        || (flags & ~FLUX_MSGFLAG_PRIVATE) || !*topic) {
        flux_respond_error (h, msg, EPROTO,
                            "event.publish: expected {topic:s flags:i "
                            "payload?:s}");
        return;
    }
    if (payload) {
        size_t slen = strlen (payload);
        if (!(data = malloc (base64_decoded_size (slen)))
            || (len = base64_decode (data, base64_decoded_size (slen), payload,
                                     slen))
                   < 0) {
            flux_respond_error (h, msg, EPROTO,
                                "event.publish: payload is not base64");
            free (data);
            return;
        }
    }
    (void)flux_msg_get_cred (msg, &cred);
    if (!(cred.rolemask & FLUX_ROLE_OWNER) && reserved_topic (topic)) {
        char text[160];
        snprintf (text, sizeof (text),
                  "guests may not publish events of the instance's services "
                  "(topic %.64s)",
                  topic);
        flux_respond_error (h, msg, EPERM, text);
        free (data);
        return;
    }
    if (!(ev = flux_event_encode_raw (topic, data, len))
        || flux_msg_set_cred (ev, cred) < 0
        || ((flags & FLUX_MSGFLAG_PRIVATE) && flux_msg_set_private (ev) < 0)) {
        flux_respond_error (h, msg, ENOMEM, NULL);
        flux_msg_decref (ev);
        free (data);
        return;
    }
    free (data);
    seq = b->event_seq + 1;
    if (router_publish (b, ev) < 0)
        flux_respond_error (h, msg, errno, NULL);
    else
        flux_respond_pack (h, msg, "{s:i}", "seq", (int)seq);
}

/* ---- modules ---- */

static void modctx_destroy (struct modctx *ctx)
{
    if (ctx) {
        if (ctx->cancel_timer)
            flux_uv_close_free ((uv_handle_t *)ctx->cancel_timer);
        free (ctx);
    }
}

static void respond_once (flux_t *h, const flux_msg_t **req, int errnum,
                          const char *text)
{
    if (*req) {
        if (errnum)
            flux_respond_error (h, *req, errnum, text);
        else
            flux_respond (h, *req, NULL);
        flux_msg_decref (*req);
        *req = NULL;
    }
}

static void module_reap (struct broker *b, struct module *m)
{
    size_t i;

    for (i = 0; i < b->nmodules; i++) {
        if (b->modules[i] == m) { /* keep the shutdown order */
            memmove (&b->modules[i], &b->modules[i + 1],
                     (b->nmodules - i - 1) * sizeof (b->modules[0]));
            b->nmodules--;
            break;
        }
    }
    router_module_remove (b, m);
    modctx_destroy (module_get_aux (m));
    module_destroy (m);
}

/* Modules exit from their own thread; they are destroyed from a fresh
 * loop turn, never inside their pipe callback. */
static void reap_cb (uv_idle_t *w)
{
    struct broker *b = w->data;
    size_t i;

    uv_idle_stop (w);
    for (i = 0; i < b->nmodules;) {
        if (module_status (b->modules[i]) == MODSTATE_EXITED)
            module_reap (b, b->modules[i]);
        else
            i++;
    }
    state_modules_reaped (b);
}

static void module_status_cb (struct module *m, int prev, void *arg)
{
    struct broker *b = arg;
    struct modctx *ctx = module_get_aux (m);
    int status = module_status (m);

    if (status == MODSTATE_RUNNING)
        respond_once (b->h, &ctx->load_req, 0, NULL);
    if (status == MODSTATE_EXITED) {
        int errnum = module_errnum (m);
        if (ctx->load_req) {
            char text[128];
            snprintf (text, sizeof (text),
                      "module exited during initialization: %s "
                      "(see flux dmesg)",
                      strerror (errnum ? errnum : EINVAL));
            respond_once (b->h, &ctx->load_req, errnum ? errnum : EINVAL, text);
        }
        else if (errnum && !ctx->abandoned)
            brokerlog_msg (b->log, 3, "module %s exited: %s", module_name (m),
                           strerror (errnum));
        if (ctx->cancel_timer)
            uv_timer_stop (ctx->cancel_timer);
        respond_once (b->h, &ctx->remove_req, 0, NULL);
        respond_once (b->h, &ctx->cancel_req, 0, NULL);
        /* no new requests may reach it */
        router_module_remove (b, m);
        b->module_reaper.data = b;
        uv_idle_start (&b->module_reaper, reap_cb);
    }
    state_module_status (b, m, status);
}

static struct module *module_lookup (struct broker *b, const char *name)
{
    size_t i;
    for (i = 0; i < b->nmodules; i++)
        if (!strcmp (module_name (b->modules[i]), name)
            || !strcmp (module_path (b->modules[i]), name))
            return b->modules[i];
    return NULL;
}

static json_t *cacheable_attrs (struct broker *b)
{
    static const char *names[]
        = {"rank",           "size",           "rundir",    "local-uri",
           "hostlist",       "tbon.fanout",    "tbon.topo", "version",
           "security.owner", "instance-level", NULL};
    json_t *o = json_object ();
    int i;

    for (i = 0; o && names[i]; i++) {
        const char *v = attr_get (b->attrs, names[i], NULL);
        if (v)
            json_object_set_new (o, names[i], json_string (v));
    }
    return o;
}

struct module *broker_module_load (struct broker *b, const char *target,
                                   const char *name, json_t *args,
                                   const flux_msg_t *req, flux_error_t *error)
{
    char *path = NULL;
    size_t i;
    struct module *m = NULL;
    struct modctx *ctx = NULL;
    json_t *attrs = NULL;
    const char *searchpath;

    if (strchr (target, '/'))
        path = strdup (target);
    else if (!(searchpath = attr_get (b->attrs, "conf.module_path", NULL))
             || !(path = module_find (searchpath, target))) {
        errprintf (error, "%s: module not found in module path", target);
        errno = ENOENT;
        return NULL;
    }
    if (!path || !(ctx = calloc (1, sizeof (*ctx)))
        || !(attrs = cacheable_attrs (b)))
        goto nomem;
    if (!(m = module_create (b->loop, path, name, args, attrs, b->owner,
                             router_from_module, router_fast_from_module,
                             module_status_cb, b, error)))
        goto error;
    module_set_aux (m, ctx);
    module_set_recv_limit (m, b->module_recvq_limit);
    if (module_lookup (b, module_name (m))) {
        errprintf (error, "%s: a module of that name is already loaded",
                   module_name (m));
        errno = EEXIST;
        module_stop (m);
        module_destroy (m); /* joins the thread once it has stopped */
        m = NULL;
        goto error;
    }
    if (b->nmodules == b->modules_cap) {
        size_t ncap = b->modules_cap ? b->modules_cap * 2 : 16;
        struct module **nv = realloc (b->modules, ncap * sizeof (*nv));
        if (!nv)
            goto nomem;
        b->modules = nv;
        b->modules_cap = ncap;
    }
    if (router_module_add (b, m) < 0) {
        errprintf (error, "%s: cannot register service: %s", module_name (m),
                   strerror (errno));
        goto error;
    }
    /* keep b->modules sorted by shutdown rank, then load order */
    ctx->rank = state_module_rank (b, module_name (m));
    for (i = b->nmodules; i > 0; i--) {
        struct modctx *prev = module_get_aux (b->modules[i - 1]);
        if (prev->rank <= ctx->rank)
            break;
    }
    memmove (&b->modules[i + 1], &b->modules[i],
             (b->nmodules - i) * sizeof (b->modules[0]));
    b->modules[i] = m;
    b->nmodules++;
    if (req)
        ctx->load_req = flux_msg_incref (req);
    json_decref (attrs);
    free (path);
    return m;
nomem:
    errprintf (error, "out of memory");
    errno = ENOMEM;
error:
    if (m) {
        int saved_errno = errno;
        module_stop (m);
        module_destroy (m);
        errno = saved_errno;
    }
    free (ctx);
    json_decref (attrs);
    free (path);
    return NULL;
}

static void load_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    struct broker *b = broker_of (arg);
    const char *path, *name = NULL;
    json_t *args = NULL;
    flux_error_t error = {{0}};

    if (flux_request_unpack (msg, NULL, "{s:s s?s s?o}", "path", &path, "name",
                             &name, "args", &args)
        < 0) {
        flux_respond_error (h, msg, EPROTO,
                            "module.load: expected {path:s name?:s args:a}");
        return;
    }
    if (!broker_module_load (b, path, name, args, msg, &error))
        flux_respond_error (h, msg, errno, error.text);
}

void broker_module_abandon (struct broker *b, struct module *m, int level,
                            const char *why)
{
    struct modctx *ctx = module_get_aux (m);

    if (module_status (m) == MODSTATE_EXITED)
        return;
    ctx->abandoned = true;
    brokerlog_msg (b->log, level,
                   "module %s %s: abandoned (its thread may still be running)",
                   module_name (m), why);
    (void)module_abandon (m); /* EXITED: answers the removes, reaps it */
}

/* The grace of a remove with cancel ran out: stop waiting. */
static void cancel_timer_cb (uv_timer_t *w)
{
    struct module *m = w->data;
    struct modctx *ctx = module_get_aux (m);
    char why[64];

    snprintf (why, sizeof (why), "did not stop within %.1f s",
              CANCEL_GRACE_MS / 1000.);
    broker_module_abandon (ctx->b, m, LOG_WARNING, why);
}

static int cancel_start (struct broker *b, struct module *m, struct modctx *ctx)
{
    if (!(ctx->cancel_timer = calloc (1, sizeof (*ctx->cancel_timer))))
        return -1;
    ctx->b = b;
    uv_timer_init (b->loop, ctx->cancel_timer);
    ctx->cancel_timer->data = m;
    uv_timer_start (ctx->cancel_timer, cancel_timer_cb, CANCEL_GRACE_MS, 0);
    return 0;
}

/* module.remove {name, cancel?}: ask the module to stop, and answer once
 * its thread has exited.  With cancel, a module that has not stopped
 * within CANCEL_GRACE_MS is abandoned (module_abandon) and the answer
 * goes then; a remove with cancel may follow one without, which then
 * ends the same way. */
static void remove_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    struct broker *b = broker_of (arg);
    const char *name;
    int cancel = 0;
    struct module *m;
    struct modctx *ctx;
    const flux_msg_t **slot;

    if (flux_request_unpack (msg, NULL, "{s:s s?b}", "name", &name, "cancel",
                             &cancel)
        < 0) {
        flux_respond_error (h, msg, EPROTO,
                            "module.remove: expected {name:s cancel?:b}");
        return;
    }
    if (!(m = module_lookup (b, name))) {
        flux_respond_error (h, msg, ENOENT, "module is not loaded");
        return;
    }
    ctx = module_get_aux (m);
    slot = cancel ? &ctx->cancel_req : &ctx->remove_req;
    if (*slot || (!cancel && ctx->cancel_req)) {
        flux_respond_error (h, msg, EBUSY, "module is already being removed");
        return;
    }
    if (cancel && !ctx->cancel_timer && cancel_start (b, m, ctx) < 0) {
        flux_respond_error (h, msg, ENOMEM, NULL);
        return;
    }
    *slot = flux_msg_incref (msg);
    if (ctx->remove_req && cancel)
        return; /* the shutdown request went with the first remove */
    if (module_stop (m) < 0 && module_status (m) != MODSTATE_EXITED) {
        flux_respond_error (h, msg, errno, NULL);
        flux_msg_decref (*slot);
        *slot = NULL;
    }
}

static void list_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    struct broker *b = broker_of (arg);
    json_t *mods = json_array ();
    size_t i;

    for (i = 0; mods && i < b->nmodules; i++) {
        struct module *m = b->modules[i];
        json_t *svcs = router_module_services (b, m);
        size_t sendq, recvq, rbytes_max;
        uint64_t rwaits;
        json_t *o;

        module_queue_counts (m, &sendq, &recvq);
        module_recv_stats (m, &rbytes_max, &rwaits);
        o = svcs ? json_pack ("{s:s s:s s:i s:i s:o s:i s:i s:I s:I}", "name",
                              module_name (m), "path", module_path (m), "idle",
                              (int)module_idle (m), "status", module_status (m),
                              "services", svcs, "sendqueue", (int)sendq,
                              "recvqueue", (int)recvq, "recvqueue-bytes-max",
                              (json_int_t)rbytes_max, "recvqueue-waits",
                              (json_int_t)rwaits)
                 : NULL;
        if (!o || json_array_append_new (mods, o) < 0) {
            json_decref (mods);
            mods = NULL;
        }
    }
    if (!mods)
        flux_respond_error (h, msg, ENOMEM, NULL);
    else
        flux_respond_pack (h, msg, "{s:o}", "mods", mods);
}

/* ---- state machine, shutdown ---- */

static void state_get_cb (flux_t *h, flux_msg_handler_t *mh,
                          const flux_msg_t *msg, void *arg)
{
    struct broker *b = broker_of (arg);
    flux_respond_pack (h, msg, "{s:s s:f}", "state", state_name (b->state),
                       "duration", uv_now (b->loop) / 1000. - b->starttime);
}

static void state_wait_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg)
{
    struct broker *b = broker_of (arg);
    const flux_msg_t **v;

    if (b->state == STATE_RUN)
        flux_respond (h, msg, NULL);
    else if (b->state > STATE_RUN)
        flux_respond_error (h, msg, ENOENT, "broker is past the run state");
    else if (!(v = realloc (b->state_waiters,
                            (b->nstate_waiters + 1) * sizeof (*v))))
        flux_respond_error (h, msg, ENOMEM, NULL);
    else {
        b->state_waiters = v;
        b->state_waiters[b->nstate_waiters++] = flux_msg_incref (msg);
    }
}

void builtin_drop_sender (const flux_msg_t **v, size_t *n,
                          const flux_msg_t *msg)
{
    size_t i = 0;

    while (i < *n) {
        if (flux_msg_route_match_first (v[i], msg)) {
            flux_msg_decref (v[i]);
            v[i] = v[--*n];
        }
        else
            i++;
    }
}

/* state-machine.monitor (owner, streaming) {final?:i}: {state:i} now
 * and after each change, then ENODATA once the state is final or later
 * (default: exit). */
struct state_monitor {
    const flux_msg_t *req;
    int final;
};

/* Tell monitor i the state; false if that ended it (it is then gone). */
static bool monitor_tell (struct broker *b, size_t i)
{
    struct state_monitor *m = &b->state_monitors[i];

    flux_respond_pack (b->h, m->req, "{s:i}", "state", (int)b->state);
    if ((int)b->state < m->final)
        return true;
    flux_respond_error (b->h, m->req, ENODATA, NULL);
    flux_msg_decref (m->req);
    *m = b->state_monitors[--b->nstate_monitors];
    return false;
}

static void state_monitor_cb (flux_t *h, flux_msg_handler_t *mh,
                              const flux_msg_t *msg, void *arg)
{
    struct broker *b = broker_of (arg);
    int final = STATE_EXIT;
    struct state_monitor *v;

    if (flux_request_unpack (msg, NULL, "{s?i}", "final", &final) < 0) {
        flux_respond_error (h, msg, EPROTO,
                            "state-machine.monitor: expected {final?:i}");
        return;
    }
    if (!flux_msg_is_streaming (msg)) {
        flux_respond_error (h, msg, EPROTO,
                            "state-machine.monitor must be streaming");
        return;
    }
    if (!(v = realloc (b->state_monitors,
                       (b->nstate_monitors + 1) * sizeof (*v)))) {
        flux_respond_error (h, msg, ENOMEM, NULL);
        return;
    }
    b->state_monitors = v;
    v[b->nstate_monitors].req = flux_msg_incref (msg);
    v[b->nstate_monitors].final = final;
    (void)monitor_tell (b, b->nstate_monitors++);
}

/* A client went away: drop its monitors and waits. */
static void state_disconnect_cb (flux_t *h, flux_msg_handler_t *mh,
                                 const flux_msg_t *msg, void *arg)
{
    struct broker *b = broker_of (arg);
    size_t i = 0;

    while (i < b->nstate_monitors) {
        if (flux_msg_route_match_first (b->state_monitors[i].req, msg)) {
            flux_msg_decref (b->state_monitors[i].req);
            b->state_monitors[i] = b->state_monitors[--b->nstate_monitors];
        }
        else
            i++;
    }
    builtin_drop_sender (b->state_waiters, &b->nstate_waiters, msg);
}

void builtin_state_changed (struct broker *b)
{
    size_t i = 0;

    groups_state_changed (b);
    while (i < b->nstate_monitors) {
        if (monitor_tell (b, i))
            i++;
    }
    if (b->state < STATE_RUN)
        return;
    for (i = 0; i < b->nstate_waiters; i++) {
        if (b->state == STATE_RUN)
            flux_respond (b->h, b->state_waiters[i], NULL);
        else
            flux_respond_error (b->h, b->state_waiters[i], ENOENT,
                                "broker is past the run state");
        flux_msg_decref (b->state_waiters[i]);
    }
    free (b->state_waiters);
    b->state_waiters = NULL;
    b->nstate_waiters = 0;
}

/* A streaming shutdown.start gets the log lines of the shutdown, at or
 * above its loglevel, until the broker says goodbye (ENODATA). */
static void shutdown_tap (const char *line, int severity, void *arg)
{
    struct broker *b = arg;

    if (b->shutdown_req && severity <= b->shutdown_loglevel)
        flux_respond_pack (b->h, b->shutdown_req, "{s:s+}", "log", line, "\n");
}

void builtin_shutdown_done (struct broker *b)
{
    if (b->shutdown_req) {
        brokerlog_set_tap (b->log, NULL, NULL);
        flux_respond_error (b->h, b->shutdown_req, ENODATA, NULL);
        flux_msg_decref (b->shutdown_req);
        b->shutdown_req = NULL;
    }
}

static void shutdown_cb (flux_t *h, flux_msg_handler_t *mh,
                         const flux_msg_t *msg, void *arg)
{
    struct broker *b = broker_of (arg);
    int loglevel = LOG_INFO;

    if (flux_request_unpack (msg, NULL, "{s?i}", "loglevel", &loglevel) < 0) {
        flux_respond_error (h, msg, EPROTO,
                            "shutdown.start: expected {loglevel?:i}");
        return;
    }
    if (b->rank != 0 || b->state != STATE_RUN || b->shutdown_requested) {
        flux_respond_error (h, msg, EINVAL,
                            b->rank != 0 ? "shutdown must be sent to rank 0"
                            : b->shutdown_requested
                                ? "shutdown is already in progress"
                                : "broker is not in the run state");
        return;
    }
    if (flux_msg_is_streaming (msg)) {
        b->shutdown_req = flux_msg_incref (msg);
        b->shutdown_loglevel = loglevel;
        brokerlog_set_tap (b->log, shutdown_tap, b);
    }
    else
        flux_respond (h, msg, NULL);
    broker_shutdown (b, 0);
}

/* ---- overlay ---- */

static void topology_cb (flux_t *h, flux_msg_handler_t *mh,
                         const flux_msg_t *msg, void *arg)
{
    struct broker *b = broker_of (arg);
    int rank;
    json_t *o;

    if (flux_request_unpack (msg, NULL, "{s:i}", "rank", &rank) < 0) {
        flux_respond_error (h, msg, EPROTO, "expected {rank:i}");
        return;
    }
    /* every broker holds the whole tree: any rank is answered (flux-core
     * answers only its own rank and its children; this is a superset,
     * which lets a module anywhere read a custom tree from its broker) */
    if (rank < 0 || (uint32_t)rank >= b->size) {
        flux_respond_error (h, msg, ENOENT, "no such rank");
        return;
    }
    if (!(o = topology_to_json (b->topo, (uint32_t)rank)))
        flux_respond_error (h, msg, ENOMEM, NULL);
    else {
        flux_respond_pack (h, msg, "O", o);
        json_decref (o);
    }
}

/* The status of a subtree (flux-overlay(1)), from best to worst: full
 * (every broker in it is online), partial (some are offline: not connected
 * yet, or gone in an orderly way), degraded (some are lost or torpid). */
enum subtree_status {
    SUBTREE_FULL = 0,
    SUBTREE_PARTIAL = 1,
    SUBTREE_DEGRADED = 2,
};

static const char *subtree_names[] = {"full", "partial", "degraded"};

static int subtree_parse (const char *s)
{
    for (int i = 0; i <= SUBTREE_DEGRADED; i++)
        if (!strcmp (s, subtree_names[i]))
            return i;
    return -1;
}

/* How this broker sees child i: the status its link has, or for a child
 * that is online, the status of its subtree as the child last said. */
static const char *child_status_name (struct broker *b, int i, int s)
{
    switch (s) {
        case OVERLAY_PEER_ONLINE:
            return subtree_names[b->child_subtree ? b->child_subtree[i]
                                                  : SUBTREE_FULL];
        case OVERLAY_PEER_TORPID:
            return "degraded";
        case OVERLAY_PEER_LOST:
            return "lost";
        default:
            return "offline";
    }
}

/* The status of this broker's subtree: the worst of its children's. */
static int subtree_status (struct broker *b)
{
    int worst = SUBTREE_FULL;

    for (int i = 0; b->overlay && i < b->nchildren; i++) {
        int s = overlay_child_status (b->overlay, b->children[i], NULL);
        int v = s == OVERLAY_PEER_ONLINE
                    ? (b->child_subtree ? b->child_subtree[i] : SUBTREE_FULL)
                : s == OVERLAY_PEER_OFFLINE ? SUBTREE_PARTIAL
                                            : SUBTREE_DEGRADED;
        if (v > worst)
            worst = v;
    }
    return worst;
}

/* This broker's health: its subtree's status, and how it sees each of its
 * direct children. */
static json_t *health_get (struct broker *b)
{
    json_t *children = json_array (), *o;
    int i;

    for (i = 0; children && i < b->nchildren; i++) {
        double since = 0;
        int s = b->overlay
                    ? overlay_child_status (b->overlay, b->children[i], &since)
                    : OVERLAY_PEER_OFFLINE;
        json_t *c = json_pack ("{s:i s:s s:f}", "rank", (int)(b->children[i]),
                               "status", child_status_name (b, i, s),
                               "duration", uv_now (b->loop) / 1000. - since);
        const char *error = b->child_error ? b->child_error[i] : NULL;
        if (c && error && (s == OVERLAY_PEER_LOST || s == OVERLAY_PEER_OFFLINE)
            && json_object_set_new (c, "error", json_string (error)) < 0) {
            json_decref (c);
            c = NULL;
        }
        if (!c || json_array_append_new (children, c) < 0) {
            json_decref (children);
            children = NULL;
        }
    }
    if (!children)
        return NULL;
    if (!(o = json_pack ("{s:i s:s s:f s:o}", "rank", (int)b->rank, "status",
                         subtree_names[subtree_status (b)], "duration",
                         uv_now (b->loop) / 1000. - b->starttime, "children",
                         children)))
        json_decref (children);
    return o;
}

/* overlay.health: one response, or with the streaming flag, one now and
 * one after each change of a child's status until the client goes away. */
static void health_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    struct broker *b = broker_of (arg);
    json_t *o = health_get (b);

    if (!o) {
        flux_respond_error (h, msg, ENOMEM, NULL);
        return;
    }
    if (flux_msg_is_streaming (msg)) {
        const flux_msg_t **v = realloc (
            b->health_watchers, (b->nhealth_watchers + 1) * sizeof (*v));
        if (!v) {
            flux_respond_error (h, msg, ENOMEM, NULL);
            json_decref (o);
            return;
        }
        b->health_watchers = v;
        b->health_watchers[b->nhealth_watchers++] = flux_msg_incref (msg);
    }
    flux_respond_pack (h, msg, "O", o);
    json_decref (o);
}

/* Tell the parent the status of this subtree when it changed (sent with
 * no response expected, like broker.ready). */
static void subtree_tell_parent (struct broker *b)
{
    int64_t parent = topology_parent (b->topo, b->rank);
    int status = subtree_status (b);
    flux_future_t *f;

    if (parent < 0 || !b->parent_online || status == b->subtree_sent)
        return;
    f = flux_rpc_pack (b->h, "overlay.subtree-status", (uint32_t)parent,
                       FLUX_RPC_NORESPONSE, "{s:i s:s}", "rank", (int)b->rank,
                       "status", subtree_names[status]);
    if (f)
        b->subtree_sent = status;
    flux_future_destroy (f);
}

void builtin_parent_online (struct broker *b)
{
    b->subtree_sent = -1;
    subtree_tell_parent (b);
    groups_parent_online (b);
}

void builtin_health_changed (struct broker *b)
{
    json_t *o;
    size_t i;

    /* a child whose link is not up tells nothing: forget what it said */
    for (i = 0; b->child_subtree && b->overlay && i < (size_t)b->nchildren;
         i++) {
        int s = overlay_child_status (b->overlay, b->children[i], NULL);
        if (s != OVERLAY_PEER_ONLINE && s != OVERLAY_PEER_TORPID)
            b->child_subtree[i] = SUBTREE_FULL;
    }
    subtree_tell_parent (b);
    groups_health_changed (b);
    if (b->nhealth_watchers == 0 || !(o = health_get (b)))
        return;
    for (i = 0; i < b->nhealth_watchers; i++)
        flux_respond_pack (b->h, b->health_watchers[i], "O", o);
    json_decref (o);
}

/* Errors are the overlay's own words ("connection closed", "disconnected
 * by request"): a bounded copy, kept while the child is not online. */
#define CHILD_ERROR_MAX 128

void builtin_child_error (struct broker *b, uint32_t rank, const char *error)
{
    int idx = topology_child_index (b->topo, b->rank, rank);

    if (!b->child_error || idx < 0)
        return;
    free (b->child_error[idx]);
    b->child_error[idx] = error ? strndup (error, CHILD_ERROR_MAX) : NULL;
}

/* overlay.subtree-status {rank, status} from a direct child broker, with
 * no response expected: anything else is refused (and not counted). */
static void subtree_status_cb (flux_t *h, flux_msg_handler_t *mh,
                               const flux_msg_t *msg, void *arg)
{
    struct broker *b = broker_of (arg);
    const char *status;
    int rank, v;

    if (flux_request_unpack (msg, NULL, "{s:i s:s}", "rank", &rank, "status",
                             &status)
            < 0
        || rank <= 0 || (uint32_t)rank >= b->size
        || topology_parent (b->topo, (uint32_t)rank) != (int64_t)b->rank
        || (v = subtree_parse (status)) < 0) {
        flux_respond_error (h, msg, EPROTO,
                            "overlay.subtree-status: expected {rank, status} "
                            "of a child");
        return;
    }
    if (!flux_msg_is_noresponse (msg)) {
        flux_respond_error (h, msg, EPROTO,
                            "overlay.subtree-status is for child brokers only");
        return;
    }
    int idx = topology_child_index (b->topo, b->rank, (uint32_t)rank);
    if (b->child_subtree && idx >= 0 && b->child_subtree[idx] != v) {
        b->child_subtree[idx] = v;
        builtin_health_changed (b);
    }
}

/* overlay.disconnect-subtree {rank} (owner), sent to the parent of rank:
 * the child is told DISCONNECT and reported lost at once, with its whole
 * subtree (its brokers, having lost their parent, exit).  For a broker
 * that hangs: `flux overlay disconnect`. */
static void disconnect_subtree_cb (flux_t *h, flux_msg_handler_t *mh,
                                   const flux_msg_t *msg, void *arg)
{
    struct broker *b = broker_of (arg);
    char text[128];
    int rank;

    if (flux_request_unpack (msg, NULL, "{s:i}", "rank", &rank) < 0) {
        flux_respond_error (h, msg, EPROTO,
                            "overlay.disconnect-subtree: expected {rank:i}");
        return;
    }
    if (rank < 0 || (uint32_t)rank >= b->size
        || topology_parent (b->topo, (uint32_t)rank) != (int64_t)b->rank) {
        snprintf (text, sizeof (text), "rank %d is not a child of rank %u",
                  rank, b->rank);
        flux_respond_error (h, msg, EINVAL, text);
        return;
    }
    if (overlay_disconnect_child (b->overlay, (uint32_t)rank,
                                  "disconnected by request")
        < 0) {
        int errnum = errno;
        snprintf (text, sizeof (text), "rank %d is not online", rank);
        flux_respond_error (h, msg, errnum,
                            errnum == EHOSTUNREACH ? text : NULL);
        return;
    }
    flux_respond (h, msg, NULL);
}

/* overlay.trace and module.trace (owner, streaming): trace.h.  The
 * overlay calls back only while someone traces it; the modules' threads
 * send through the broker's thread while someone traces them (their
 * fast path would bypass it). */
static void overlay_trace_cb (struct overlay *ov, bool tx, uint32_t rank,
                              const flux_msg_t *msg, void *arg)
{
    struct broker *b = arg;

    trace_set_emit (b->overlay_trace, b->h, tx, rank, NULL, msg);
}

static void trace_watch (struct broker *b)
{
    if (b->overlay)
        overlay_set_trace (
            b->overlay,
            trace_set_count (b->overlay_trace) > 0 ? overlay_trace_cb : NULL,
            b);
    __atomic_store_n (&b->module_tracing, trace_set_count (b->module_trace) > 0,
                      __ATOMIC_RELAXED);
}

static void trace_request_cb (flux_t *h, flux_msg_handler_t *mh,
                              const flux_msg_t *msg, void *arg)
{
    struct broker *b = broker_of (arg);
    const char *topic = "";
    struct trace_set *ts;
    const char *why;

    (void)flux_msg_get_topic (msg, &topic);
    ts = strncmp (topic, "overlay.", 8) ? b->module_trace : b->overlay_trace;
    if (trace_set_add (ts, msg, &why) < 0) {
        flux_respond_error (h, msg, errno, why);
        return;
    }
    trace_watch (b);
}

static void module_disconnect_cb (flux_t *h, flux_msg_handler_t *mh,
                                  const flux_msg_t *msg, void *arg)
{
    struct broker *b = broker_of (arg);

    trace_set_disconnect (b->module_trace, msg);
    trace_watch (b);
}

/* A client went away: drop its streaming health and trace requests. */
static void overlay_disconnect_cb (flux_t *h, flux_msg_handler_t *mh,
                                   const flux_msg_t *msg, void *arg)
{
    struct broker *b = broker_of (arg);

    builtin_drop_sender (b->health_watchers, &b->nhealth_watchers, msg);
    trace_set_disconnect (b->overlay_trace, msg);
    trace_watch (b);
}

static const struct flux_msg_handler_spec htab[] = {
    {FLUX_MSGTYPE_REQUEST, "broker.ping", ping_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "broker.stats-get", stats_cb, FLUX_ROLE_ALL},
    {FLUX_MSGTYPE_REQUEST, "broker.stats-clear", stats_clear_cb,
     FLUX_ROLE_OWNER},
    {FLUX_MSGTYPE_REQUEST, "event.publish", publish_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "module.load", load_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "module.remove", remove_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "module.list", list_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "state-machine.get", state_get_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "state-machine.wait", state_wait_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "state-machine.monitor", state_monitor_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "state-machine.disconnect", state_disconnect_cb,
     FLUX_ROLE_ALL},
    {FLUX_MSGTYPE_REQUEST, "shutdown.start", shutdown_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "overlay.topology", topology_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "overlay.health", health_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "overlay.subtree-status", subtree_status_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "overlay.disconnect-subtree", disconnect_subtree_cb,
     0},
    {FLUX_MSGTYPE_REQUEST, "overlay.trace", trace_request_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "module.trace", trace_request_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "module.disconnect", module_disconnect_cb,
     FLUX_ROLE_ALL},
    {FLUX_MSGTYPE_REQUEST, "overlay.disconnect", overlay_disconnect_cb,
     FLUX_ROLE_ALL},
    FLUX_MSGHANDLER_TABLE_END,
};

static const char *self_services[]
    = {"broker",        "attr",     "log",     "event", "module",
       "state-machine", "shutdown", "overlay", NULL};

int builtin_register (struct broker *b)
{
    int i;

    uv_idle_init (b->loop, &b->module_reaper);
    b->subtree_sent = -1;
    if (b->nchildren > 0
        && (!(b->child_subtree = calloc (b->nchildren, sizeof (int)))
            || !(b->child_error = calloc (b->nchildren, sizeof (char *)))))
        return -1;
    for (i = 0; self_services[i]; i++)
        if (router_self_service (b, self_services[i]) < 0)
            return -1;
    if (groups_register (b) < 0
        || !(b->overlay_trace = trace_set_create ("overlay.trace"))
        || !(b->module_trace = trace_set_create ("module.trace")))
        return -1;
    return flux_msg_handler_addvec (b->h, htab, b, &b->builtin_handlers);
}

void builtin_unregister (struct broker *b)
{
    size_t i;

    builtin_shutdown_done (b);
    groups_unregister (b);
    for (i = 0; i < b->nmodules; i++)
        free (module_get_aux (b->modules[i]));
    flux_msg_handler_delvec (b->builtin_handlers);
    b->builtin_handlers = NULL;
    for (i = 0; i < b->nhealth_watchers; i++)
        flux_msg_decref (b->health_watchers[i]);
    free (b->health_watchers);
    b->health_watchers = NULL;
    for (i = 0; i < b->nstate_monitors; i++)
        flux_msg_decref (b->state_monitors[i].req);
    free (b->state_monitors);
    b->state_monitors = NULL;
    b->nstate_monitors = 0;
    trace_set_destroy (b->overlay_trace);
    b->overlay_trace = NULL;
    trace_set_destroy (b->module_trace);
    b->module_trace = NULL;
    __atomic_store_n (&b->module_tracing, 0, __ATOMIC_RELAXED);
    free (b->child_subtree);
    b->child_subtree = NULL;
    for (i = 0; b->child_error && i < (size_t)b->nchildren; i++)
        free (b->child_error[i]);
    free (b->child_error);
    b->child_error = NULL;
    b->nhealth_watchers = 0;
    if (!uv_is_closing ((uv_handle_t *)&b->module_reaper))
        uv_close ((uv_handle_t *)&b->module_reaper, NULL);
}
