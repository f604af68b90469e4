/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* broker.c - the router: every message the broker receives, from a local
 * client, a module, its own services or an overlay peer, goes through
 * here, exactly as RFC 3 routes it.
 *
 * Route ids: local clients and modules are UUIDs, the broker's own
 * services are the broker's UUID, overlay peers are rank strings.  A
 * response's newest route names its next hop: a local peer (pop, deliver),
 * a direct child (pop, send down), else up to the parent.  Requests sent
 * down are tracked per child so that losing the child answers them
 * EHOSTUNREACH instead of leaving them hanging.
 *
 * Fast path: a module's request for another module's service, or its
 * response to another module, is routed by router_fast_from_module() in
 * the module's own thread, with the same rules, straight into the other
 * module's queue: one thread wakeup per message instead of two.  The
 * route maps are written only by the broker's thread, under route_lock,
 * which the module threads hold for reading while they route.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "broker.h"
#include "libutil/fsd.h"
#include "module.h"
#include "evroute.h"
#include "msgcount.h"
#include "overlay/overlay.h"
#include "overlay/topology.h"
#include "strmap.h"
#include "trace.h"
#include "usock.h"

enum peer_kind { PEER_CLIENT, PEER_MODULE, PEER_SELF };

struct peer {
    struct broker *b;
    enum peer_kind kind;
    char id[40];
    void *ptr; /* usock_client or module */
    struct flux_msg_cred cred;
    char **subs; /* event topic prefixes */
    size_t nsubs;
    struct strmap *services;    /* names registered with service.add */
    struct strmap *disconnects; /* "prefix\x1fnodeid\x1fupstream" seen */
    struct strmap *open;        /* a client's: matchtag -> open_req */
    struct strmap *open_keys;   /* a client's: disconnect key -> the
                                   number of its open requests (int *) */
    bool open_lost;             /* open not complete (disconnect_owed) */
    struct strmap *owed;        /* a client's: sender -> requests it was
                                   handed (key -> struct owed) */
    size_t nowed;               /* notes in owed */
    struct strmap *inflight;    /* a guest client's: matchtag -> how many of
                                   its requests are open (unsigned *) */
    size_t ninflight;           /* its requests not yet answered */
    int refs;                   /* the peers map's */
    bool gone;                  /* taken out of the map */
    size_t idx;                 /* its slot in b->cpeers or b->mpeers */
    uint64_t served;            /* fan-outs up to this id were served */
    uint64_t up_dropped; /* a client's events and answers dropped going up */
};

/* Event fan-out.  When more than FANOUT_SYNC local clients are connected,
 * an event is delivered to them over several loop turns, within each
 * turn's budget (self_check_cb): one 64 KB event to 5,000 subscribers
 * took 6-12 ms, and the fan-outs of consecutive events kept the loop from
 * answering anything else for 40-120 ms.  Routing is part of the fan-out:
 * a fan-out is a cursor over the clients connected when the event came
 * (b->cpeers[0..cn), in connection order; a client that goes leaves a
 * hole, filled only when no fan-out is pending), each matched against
 * the event when the cursor reaches it, so routing an event costs
 * O(modules) in the turn it arrives, not O(clients).  Events stay in
 * order: while a fan-out is pending every later event for clients waits
 * behind it, and anything else sent to a client the fan-out has not
 * reached yet, or a change of its subscriptions, is preceded by the
 * events owed to it (fanout_flush_peer; p->served then says that the
 * cursors need not serve it).  So what else the broker's
 * services sent (a ping's answer) need not wait behind events, except
 * the answers to event.publish, which wait for the newest fan-out: a
 * publisher is paced by the fan-out of its events.  At most FANOUT_MAX
 * events, FANOUT_BYTES in all, are pending; past that the oldest is
 * finished at once.  Modules, the broker's own services and
 * the overlay get each event at once. */
#define FANOUT_SYNC 512
#define TURN_BUDGET_NS 2000000 /* see self_prep_cb */
#define SELF_BACKLOG                                      \
    64 /* messages waiting for the broker's services past \
          which clients are not read (self_prep_cb) */
#define FANOUT_MAX 256
#define FANOUT_BYTES (64u << 20)

struct fanout {
    struct fanout *next;
    flux_msg_t *msg;
    const char *topic; /* the event's, in msg */
    struct flux_msg_cred cred;
    bool private;
    uint64_t id;        /* b->fanout_id when it was pushed */
    size_t c, cn;       /* b->cpeers[c..cn) are still to be served */
    size_t size;        /* the event's encoded size */
    flux_msg_t *rsp[8]; /* event.publish answers held until it is done */
    int nrsp;
};

/* ---- peers ---- */

/* A local client's routing state (its subscriptions, its services, the
 * services it must be disconnected from) is memory it makes the broker
 * hold: it is counted as held for it by the local connector
 * (usock_client_charge), so it is bounded per client by
 * broker.client-sendq-limit and in all by broker.client-queue-limit,
 * like its queues.  Each entry weighs its text plus STATE_OVERHEAD.  A
 * client subscribes to at most PEER_SUBS_MAX prefixes: every event is
 * matched against each.  Modules and the broker are not bounded. */
#define STATE_OVERHEAD 64
#define PEER_SUBS_MAX 1024

/* Charge (bytes > 0) or release (bytes < 0) what client p holds. */
static int peer_charge_bytes (struct peer *p, ssize_t bytes)
{
    if (p->kind != PEER_CLIENT)
        return 0;
    return usock_client_charge (p->ptr, bytes);
}

static int peer_charge (struct peer *p, const char *text)
{
    return peer_charge_bytes (p, (ssize_t)(strlen (text) + STATE_OVERHEAD));
}

static void peer_uncharge (struct peer *p, const char *text)
{
    (void)peer_charge_bytes (p, -(ssize_t)(strlen (text) + STATE_OVERHEAD));
}

static void peer_free (void *arg)
{
    struct peer *p = arg;
    size_t i;

    if (!p || --p->refs > 0)
        return;
    for (i = 0; i < p->nsubs; i++)
        free (p->subs[i]);
    free (p->subs);
    strmap_destroy (p->services);
    strmap_destroy (p->disconnects);
    strmap_destroy (p->open);
    strmap_destroy (p->open_keys);
    strmap_destroy (p->owed);
    strmap_destroy (p->inflight);
    free (p);
}

static void owed_free (void *m);
static void fanout_run (struct broker *b, uint64_t deadline);

/* Fill the holes clients left in b->cpeers (no fan-out may be pending:
 * their cursors index it). */
static void cpeers_compact (struct broker *b)
{
    size_t i, n = 0;

    for (i = 0; i < b->ncpeers; i++) {
        struct peer *p = b->cpeers[i];
        if (p) {
            p->idx = n;
            b->cpeers[n++] = p;
        }
    }
    b->ncpeers = n;
    b->cpeers_holes = 0;
}

/* Add p to the arrays events are routed by: modules in b->mpeers,
 * clients appended to b->cpeers.  When b->cpeers is full its holes are
 * filled first; while fan-outs are pending they cannot be, unless the
 * fan-outs are finished at once, which is done when holes make half of
 * it: so it stays under about twice the clients connected, and filling
 * holes costs O(1) per client amortized. */
static int peer_index_add (struct broker *b, struct peer *p)
{
    struct peer ***v = p->kind == PEER_MODULE ? &b->mpeers : &b->cpeers;
    size_t *n = p->kind == PEER_MODULE ? &b->nmpeers : &b->ncpeers;
    size_t *size = p->kind == PEER_MODULE ? &b->mpeers_size : &b->cpeers_size;

    if (p->kind == PEER_CLIENT && *n == *size && b->cpeers_holes > 0
        && (!b->fanout_head || 2 * b->cpeers_holes >= b->ncpeers)) {
        while (b->fanout_head)
            fanout_run (b, 0);
        cpeers_compact (b);
    }
    if (*n == *size) {
        size_t nsize = *size ? 2 * *size : 64;
        struct peer **nv = realloc (*v, nsize * sizeof (*nv));
        if (!nv)
            return -1;
        *v = nv;
        *size = nsize;
    }
    p->idx = *n;
    (*v)[(*n)++] = p;
    return 0;
}

static void peer_index_del (struct broker *b, struct peer *p)
{
    if (p->kind == PEER_MODULE) {
        b->mpeers[p->idx] = b->mpeers[--b->nmpeers];
        b->mpeers[p->idx]->idx = p->idx;
    }
    else if (p->kind == PEER_CLIENT) {
        b->cpeers[p->idx] = NULL;
        b->cpeers_holes++;
        if (!b->fanout_head && 2 * b->cpeers_holes >= b->ncpeers)
            cpeers_compact (b);
    }
}

static struct peer *peer_create (struct broker *b, enum peer_kind kind,
                                 const char *id, void *ptr,
                                 struct flux_msg_cred cred)
{
    struct peer *p = calloc (1, sizeof (*p));

    if (!p)
        return NULL;
    p->b = b;
    p->refs = 1;
    p->kind = kind;
    snprintf (p->id, sizeof (p->id), "%s", id);
    p->ptr = ptr;
    p->cred = cred;
    if (!(p->services = strmap_create (NULL))
        || (kind != PEER_SELF && !(p->disconnects = strmap_create (NULL)))
        || (kind == PEER_CLIENT && !(p->owed = strmap_create (owed_free)))
        || (kind == PEER_CLIENT && !(p->open = strmap_create (free)))
        || (kind == PEER_CLIENT && !(p->open_keys = strmap_create (free)))
        || (kind == PEER_CLIENT && !(p->inflight = strmap_create (free)))) {
        peer_free (p);
        return NULL;
    }
    if (kind != PEER_SELF && peer_index_add (b, p) < 0) {
        peer_free (p);
        return NULL;
    }
    pthread_rwlock_wrlock (&b->route_lock);
    if (strmap_put (b->peers, p->id, p) < 0) {
        pthread_rwlock_unlock (&b->route_lock);
        peer_index_del (b, p);
        peer_free (p);
        return NULL;
    }
    pthread_rwlock_unlock (&b->route_lock);
    return p;
}

static int unregister_service (const char *name, void *val, void *arg)
{
    struct broker *b = arg;
    (void)strmap_take (b->services, name);
    return 0;
}

static void sub_unref (struct broker *b, int holder, const char *sub);

static void peer_remove (struct broker *b, struct peer *p)
{
    size_t i;

    for (i = 0; i < p->nsubs; i++)
        sub_unref (b, -1, p->subs[i]);
    pthread_rwlock_wrlock (&b->route_lock);
    strmap_foreach (p->services, unregister_service, b);
    (void)strmap_take (b->peers, p->id);
    p->gone = true;
    if (p->kind != PEER_SELF)
        peer_index_del (b, p);
    peer_free (p);
    pthread_rwlock_unlock (&b->route_lock);
}

/* An event for a module past broker.module-queue-limit: an event cannot
 * be refused to its publisher (it may come from the overlay), so it is
 * dropped for that module (a module that far behind is stuck), with one
 * log line a minute that counts the drops since the last one.  The same
 * for a response a local client sends a module (client_response).
 * Other responses are not bounded: each answers a request the module
 * sent, so what waits is the module's own demand, and dropping one
 * would leave the module's RPC waiting for ever (a module that sent
 * 3,000 requests at once before reading lost its EAGAIN answers). */
static void module_drop (struct broker *b, struct peer *p,
                         const flux_msg_t *msg)
{
    double now = uv_now (b->loop) / 1000.;
    const char *topic = "?";
    int type = 0;

    b->modq_dropped++;
    if (b->modq_drop_logged != 0 && now - b->modq_drop_logged < 60.)
        return;
    (void)flux_msg_get_topic (msg, &topic);
    (void)flux_msg_get_type (msg, &type);
    brokerlog_msg (b->log, 4 /* LOG_WARNING */,
                   "module %s is not keeping up: %zu bytes of messages wait "
                   "for it (broker.module-queue-limit %zu): %s %s dropped "
                   "(%lu dropped since the last such line)",
                   module_name (p->ptr), module_queued_bytes (p->ptr),
                   b->module_queue_limit,
                   type == FLUX_MSGTYPE_EVENT ? "event" : "response", topic,
                   b->modq_dropped);
    b->modq_drop_logged = now;
    b->modq_dropped = 0;
}

/* The broker sends msg to module p: module.trace (trace.h). */
static void trace_to_module (struct broker *b, struct peer *p,
                             const flux_msg_t *msg)
{
    if (trace_set_count (b->module_trace) > 0)
        trace_set_emit (b->module_trace, b->h, true, -1, module_name (p->ptr),
                        msg);
}

/* An event for module p, or a response from a local client, bounded by
 * broker.module-queue-limit (requests are bounded in deliver_local:
 * answered EAGAIN past it). */
static int module_send_limited (struct peer *p, const flux_msg_t *msg)
{
    struct broker *b = p->b;

    trace_to_module (b, p, msg);
    if (b->module_queue_limit == 0)
        return module_send (p->ptr, msg);
    if (module_send_bounded (p->ptr, msg, b->module_queue_limit) < 0) {
        if (errno == EAGAIN)
            module_drop (b, p, msg);
        return -1;
    }
    return 0;
}

static void selfq_stamp (struct broker *b);
static void selfq_unstamp (struct broker *b);

static int peer_send_now (struct peer *p, const flux_msg_t *msg)
{
    flux_msg_t *ref;

    switch (p->kind) {
        case PEER_CLIENT:
            return usock_client_send (p->ptr, msg);
        case PEER_MODULE:
            trace_to_module (p->b, p, msg);
            return module_send (p->ptr, msg);
        case PEER_SELF:
            ref = (flux_msg_t *)flux_msg_incref (msg);
            selfq_stamp (p->b);
            if (flux_msgpipe_send (p->b->self_pipe, 0, ref) < 0) {
                selfq_unstamp (p->b);
                flux_msg_decref (ref);
                return -1;
            }
            return 0;
    }
    errno = EINVAL;
    return -1;
}

/* ---- answers a local client owes ----
 *
 * A response sent by a local client is routed only if the broker handed
 * that client the request it answers (a request for a service the client
 * registered): otherwise any client, a guest too, could answer another
 * user's pending RPC or a module's request by naming its route and
 * matchtag (a forged sched.alloc or job-manager answer).  flux-core routes
 * whatever a client sends (flux-core issue 2321).  Each request handed to
 * a client that expects an answer is noted under its full route stack
 * (its sender and the path to it: who gets the answer) and its matchtag.
 * A note goes with the answer that ends it (the first one, or for a
 * streaming request an error one, such as ENODATA), with the sender's
 * disconnect for that service (the requester went away: the service
 * drops its requests without answering; the disconnect took the path
 * the requests took, so it has the same route stack, which no other
 * client can forge: the broker pushes each client's own id), or with the
 * client.  Notes are charged to the client like its other routing state
 * (usock_client_charge), and a client holds at most
 * broker.client-pending-limit of them, one sender (route stack) half of
 * them (owed_share): past either, a new request for its service is
 * refused (ENOSPC, EAGAIN) rather than an old note dropped, as a dropped
 * note would leave its requester waiting for ever, its answers dropped as
 * forged. */
struct owed {
    unsigned n;     /* requests noted under this key */
    bool streaming; /* ended by an error response only */
    char prefix[];  /* the request's topic up to its last '.' */
};

/* "len:id:len:id..." over msg's route stack, newest hop first.  NULL if
 * msg has no route stack (nobody to answer). */
static char *owed_path (const flux_msg_t *msg)
{
    struct flux_msg_part parts[FLUX_MSG_MAX_ROUTES + 4];
    uint8_t proto[FLUX_MSG_PROTO_SIZE];
    int count = FLUX_MSG_MAX_ROUTES + 4;
    int nroutes = flux_msg_route_count (msg);
    size_t len = 1;
    char *path, *p;

    if (nroutes <= 0 || flux_msg_to_parts (msg, proto, parts, &count) < 0
        || count < nroutes)
        return NULL;
    for (int i = 0; i < nroutes; i++)
        len += parts[i].size + 24;
    if (!(path = malloc (len)))
        return NULL;
    p = path;
    for (int i = 0; i < nroutes; i++) {
        p += sprintf (p, "%zu:", parts[i].size);
        memcpy (p, parts[i].data, parts[i].size);
        p += parts[i].size;
        *p++ = ':';
    }
    *p = '\0';
    return path;
}

static void owed_tag (const flux_msg_t *msg, char *tag, size_t size)
{
    uint32_t matchtag = 0;

    (void)flux_msg_get_matchtag (msg, &matchtag);
    snprintf (tag, size, "%u", (unsigned)matchtag);
}

static ssize_t owed_weight (const char *path, const char *tag,
                            const struct owed *o)
{
    return (ssize_t)(strlen (path) + strlen (tag) + strlen (o->prefix)
                     + STATE_OVERHEAD);
}

static void owed_free (void *m)
{
    strmap_destroy (m);
}

/* One requester (one route stack) may hold at most half of a client's
 * notes, so that a requester that fills a service cannot shut the others
 * out until it leaves; the others share the rest. */
static size_t owed_share (struct broker *b)
{
    return b->client_pending_limit > 1 ? b->client_pending_limit / 2 : 1;
}

/* Note that client p was handed request msg.  -1 with ENOSPC if p holds
 * too much to note one more, EAGAIN if it holds
 * broker.client-pending-limit notes, or if msg's requester holds its
 * share of them (then *share_held is how many it holds, else 0). */
static int owed_note (struct peer *p, const flux_msg_t *msg, size_t *share_held)
{
    const char *topic = "", *dot;
    struct strmap *m;
    struct owed *o;
    char tag[16], *path;
    size_t plen;
    int rc = -1;

    if (p->kind != PEER_CLIENT || flux_msg_is_noresponse (msg))
        return 0;
    if (!(path = owed_path (msg)))
        return 0; /* no route: no answer can reach anyone */
    owed_tag (msg, tag, sizeof (tag));
    if ((m = strmap_get (p->owed, path)) && (o = strmap_get (m, tag))) {
        if (o->n < UINT_MAX)
            o->n++;
        free (path);
        return 0;
    }
    *share_held = 0;
    if (p->b->client_pending_limit > 0
        && p->nowed >= p->b->client_pending_limit) {
        free (path);
        errno = EAGAIN;
        return -1;
    }
    if (p->b->client_pending_limit > 0 && m
        && strmap_count (m) >= owed_share (p->b)) {
        *share_held = strmap_count (m);
        free (path);
        errno = EAGAIN;
        return -1;
    }
    (void)flux_msg_get_topic (msg, &topic);
    plen = (dot = strrchr (topic, '.')) ? (size_t)(dot - topic) : 0;
    if (!(o = calloc (1, sizeof (*o) + plen + 1))) {
        free (path);
        errno = ENOMEM;
        return -1;
    }
    memcpy (o->prefix, topic, plen);
    o->n = 1;
    o->streaming = flux_msg_is_streaming (msg);
    if (peer_charge_bytes (p, owed_weight (path, tag, o)) < 0)
        goto out;
    if (!m
        && (!(m = strmap_create (free)) || strmap_put (p->owed, path, m) < 0)) {
        strmap_destroy (m);
        m = NULL;
    }
    if (!m || strmap_put (m, tag, o) < 0) {
        (void)peer_charge_bytes (p, -owed_weight (path, tag, o));
        if (m && strmap_count (m) == 0)
            (void)strmap_delete (p->owed, path);
        errno = ENOMEM;
        goto out;
    }
    o = NULL; /* the map's */
    p->nowed++;
    rc = 0;
out:
    free (o);
    free (path);
    return rc;
}

/* The note of request (or response) msg, or NULL.  *mp is the map of
 * its path (*pathp, to free), tag its matchtag. */
static struct owed *owed_find (struct peer *p, const flux_msg_t *msg,
                               struct strmap **mp, char **pathp, char *tag,
                               size_t size)
{
    struct strmap *m;
    struct owed *o = NULL;
    char *path;

    if (!(path = owed_path (msg)))
        return NULL;
    owed_tag (msg, tag, size);
    if ((m = strmap_get (p->owed, path)))
        o = strmap_get (m, tag);
    if (!o) {
        free (path);
        return NULL;
    }
    *mp = m;
    *pathp = path;
    return o;
}

/* One request of note o (tag under path's map m) ended. */
static void owed_end (struct peer *p, struct strmap *m, const char *path,
                      const char *tag, struct owed *o)
{
    if (--o->n > 0)
        return;
    (void)peer_charge_bytes (p, -owed_weight (path, tag, o));
    (void)strmap_delete (m, tag);
    p->nowed--;
    if (strmap_count (m) == 0)
        (void)strmap_delete (p->owed, path);
}

/* Forget one note of request msg (it could not be handed over after all). */
static void owed_forget (struct peer *p, const flux_msg_t *msg)
{
    struct strmap *m;
    struct owed *o;
    char tag[16], *path;

    if (p->kind != PEER_CLIENT || flux_msg_is_noresponse (msg)
        || !(o = owed_find (p, msg, &m, &path, tag, sizeof (tag))))
        return;
    owed_end (p, m, path, tag, o);
    free (path);
}

/* True if client p was handed the request rsp answers; the note goes if
 * rsp ends the request. */
static bool owed_take (struct peer *p, const flux_msg_t *rsp)
{
    struct strmap *m;
    struct owed *o;
    char tag[16], *path;
    int errnum = 0;

    if (!(o = owed_find (p, rsp, &m, &path, tag, sizeof (tag))))
        return false;
    (void)flux_msg_get_errnum (rsp, &errnum);
    if (!o->streaming || errnum != 0)
        owed_end (p, m, path, tag, o);
    free (path);
    return true;
}

struct owed_match {
    const char *prefix;
    size_t len;
    char **tags;
    size_t n;
};

static int owed_match_cb (const char *tag, void *val, void *arg)
{
    struct owed_match *ctx = arg;
    struct owed *o = val;

    if (strlen (o->prefix) == ctx->len
        && !memcmp (o->prefix, ctx->prefix, ctx->len))
        ctx->tags[ctx->n++] = (char *)tag;
    return 0;
}

/* Request msg "<prefix>.disconnect" (topic) for client p: its sender went
 * away, and p drops the sender's requests to <prefix>.* without an
 * answer, so their notes go now (before, a streaming request never ended
 * kept its note until p itself disconnected). */
static void owed_disconnect (struct peer *p, const flux_msg_t *msg,
                             const char *topic)
{
    char *path = owed_path (msg);
    struct strmap *m = path ? strmap_get (p->owed, path) : NULL;
    struct owed_match ctx = {
        .prefix = topic,
        .len = strlen (topic) - strlen (".disconnect"),
    };

    if (!m || !(ctx.tags = malloc (strmap_count (m) * sizeof (*ctx.tags)))) {
        free (path);
        return;
    }
    strmap_foreach (m, owed_match_cb, &ctx);
    for (size_t i = 0; i < ctx.n; i++) {
        struct owed *o = strmap_get (m, ctx.tags[i]);
        (void)peer_charge_bytes (p, -owed_weight (path, ctx.tags[i], o));
        p->nowed--;
        /* last: the map goes with its last note */
        if (strmap_count (m) == 1) {
            (void)strmap_delete (p->owed, path);
            break;
        }
        (void)strmap_delete (m, ctx.tags[i]);
    }
    free (ctx.tags);
    free (path);
}

/* A request refused because the client serving it holds
 * broker.client-pending-limit notes: logged at most once a minute. */
static void owed_full (struct broker *b, struct peer *p, const flux_msg_t *msg,
                       size_t share_held)
{
    double now = uv_now (b->loop) / 1000.;
    char text[240];

    if (share_held > 0)
        snprintf (text, sizeof (text),
                  "this sender has %zu requests the client serving this has "
                  "not finished, its share (half of "
                  "broker.client-pending-limit %zu): try again later",
                  share_held, b->client_pending_limit);
    else
        snprintf (text, sizeof (text),
                  "the client serving this holds %zu requests it has not "
                  "finished (broker.client-pending-limit %zu): try again later",
                  p->nowed, b->client_pending_limit);
    b->pending_refused++;
    if (b->pending_logged == 0 || now - b->pending_logged >= 60.) {
        const char *topic = "?";
        (void)flux_msg_get_topic (msg, &topic);
        brokerlog_msg (
            b->log, 4 /* LOG_WARNING */,
            "local connector: client %s (uid %u, pid %d) holds %zu "
            "requests it has not finished "
            "(broker.client-pending-limit %zu%s): %s answered EAGAIN "
            "(%lu since the last such line)",
            p->id, p->cred.userid, (int)usock_client_pid (p->ptr), p->nowed,
            b->client_pending_limit,
            share_held > 0 ? ", half of it for one sender" : "", topic,
            b->pending_refused);
        b->pending_logged = now;
        b->pending_refused = 0;
    }
    router_respond_error (b, msg, EAGAIN, text);
}

/* A response from client p that answers nothing it was handed: dropped,
 * with one log line a minute naming the client and counting the drops
 * since the last line. */
static void owed_drop (struct broker *b, struct peer *p, const flux_msg_t *rsp)
{
    double now = uv_now (b->loop) / 1000.;
    const char *topic = "?";
    uint32_t matchtag = 0;

    b->unasked_dropped++;
    if (b->unasked_logged != 0 && now - b->unasked_logged < 60.)
        return;
    (void)flux_msg_get_topic (rsp, &topic);
    (void)flux_msg_get_matchtag (rsp, &matchtag);
    brokerlog_msg (b->log, 4 /* LOG_WARNING */,
                   "local connector: client %s (uid %u, pid %d) sent a "
                   "response %s (matchtag %u) to a request it was not "
                   "given: dropped (%lu dropped since the last such line)",
                   p->id, p->cred.userid, (int)usock_client_pid (p->ptr), topic,
                   (unsigned)matchtag, b->unasked_dropped);
    b->unasked_logged = now;
    b->unasked_dropped = 0;
}

static void self_idle_cb (uv_idle_t *w);

static bool sub_matches (struct peer *p, const char *topic)
{
    size_t i;
    for (i = 0; i < p->nsubs; i++)
        if (!strncmp (topic, p->subs[i], strlen (p->subs[i])))
            return true;
    return false;
}

/* Whether p is to get an event of topic from cred (private or not). */
static bool event_wanted (struct peer *p, const char *topic,
                          const struct flux_msg_cred *cred, bool private)
{
    if (!sub_matches (p, topic))
        return false;
    return !private || (p->cred.rolemask & FLUX_ROLE_OWNER)
           || p->cred.userid == cred->userid;
}

/* Whether the event was sent to p (or p's send failed). */
static bool fanout_serve (struct fanout *f, struct peer *p)
{
    if (p->served < f->id && event_wanted (p, f->topic, &f->cred, f->private)) {
        (void)peer_send_now (p, f->msg);
        return true;
    }
    return false;
}

/* Serve client p the events pending fan-outs still owe it, in order:
 * before anything else is sent to it or its subscriptions change. */
static void fanout_flush_peer (struct broker *b, struct peer *p)
{
    if (p->kind != PEER_CLIENT || !b->fanout_head || p->served >= b->fanout_id)
        return;
    for (struct fanout *f = b->fanout_head; f; f = f->next)
        if (p->idx >= f->c && p->idx < f->cn)
            fanout_serve (f, p);
    p->served = b->fanout_id;
}

static int peer_send (struct peer *p, const flux_msg_t *msg)
{
    fanout_flush_peer (p->b, p);
    return peer_send_now (p, msg);
}

/* Take the oldest fan-out off the list; its held answers go out if
 * answer, else are dropped. */
static void fanout_pop (struct broker *b, bool answer)
{
    struct fanout *f = b->fanout_head;

    if (!(b->fanout_head = f->next))
        b->fanout_tail = NULL;
    b->nfanout--;
    b->fanout_bytes -= f->size;
    usock_server_share (b->usock, NULL);
    flux_msg_decref (f->msg);
    for (int i = 0; i < f->nrsp; i++) {
        if (answer)
            router_response (b, f->rsp[i]);
        else
            flux_msg_decref (f->rsp[i]);
    }
    free (f);
    if (!b->fanout_head && b->cpeers_holes > 0)
        cpeers_compact (b);
}

/* An answer to event.publish while a fan-out is pending waits for the
 * newest one to be done (the event it answers is that one, or was
 * delivered before): a publisher cannot run ahead of the fan-out of its
 * events, and the broker never holds more pending fan-outs than its
 * publishers have requests in flight.  false if it cannot wait. */
static bool fanout_hold_answer (struct broker *b, flux_msg_t *msg)
{
    struct fanout *f = b->fanout_tail;
    const char *topic;

    if (!f || f->nrsp == 8 || flux_msg_get_topic (msg, &topic) < 0
        || strcmp (topic, "event.publish") != 0)
        return false;
    f->rsp[f->nrsp++] = msg;
    return true;
}

/* Serve pending fan-outs, oldest first, until uv_hrtime() passes
 * deadline (0: finish the oldest).  The clock is read after every send
 * (one 64 KB sendmsg() took up to 0.5 ms on a loaded machine) and every
 * 64 clients passed without one; at least one client is served. */
static void fanout_run (struct broker *b, uint64_t deadline)
{
    unsigned k = 0;

    while (b->fanout_head) {
        struct fanout *f = b->fanout_head;
        usock_server_share (b->usock, f->msg); /* encoded once for all */
        while (f->c < f->cn) {
            struct peer *p = b->cpeers[f->c++];
            bool sent = p && fanout_serve (f, p);
            if (sent)
                b->cur.fanout_sends++;
            if (deadline && (sent || (++k & 63) == 0)
                && uv_hrtime () >= deadline)
                return;
        }
        fanout_pop (b, true);
        if (!deadline)
            return;
    }
}

/* Deliver msg to the clients connected now, over the next loop turns. */
static void fanout_push (struct broker *b, flux_msg_t *msg, const char *topic,
                         const struct flux_msg_cred *cred, bool private)
{
    struct fanout *f;
    ssize_t size;

    if ((size = flux_msg_frame_size (msg)) < 0)
        size = 0;
    while (b->fanout_head
           && (b->nfanout >= FANOUT_MAX
               || b->fanout_bytes + (size_t)size > FANOUT_BYTES))
        fanout_run (b, 0);
    if (!(f = calloc (1, sizeof (*f)))) {
        /* out of memory: those clients miss the event */
        brokerlog_msg (b->log, 3 /* LOG_ERR */,
                       "event %s: out of memory: not delivered to local"
                       " clients",
                       topic);
        return;
    }
    f->msg = (flux_msg_t *)flux_msg_incref (msg);
    f->topic = topic;
    f->cred = *cred;
    f->private = private;
    f->id = ++b->fanout_id;
    f->cn = b->ncpeers;
    if (b->fanout_tail)
        b->fanout_tail->next = f;
    else
        b->fanout_head = f;
    b->fanout_tail = f;
    b->nfanout++;
    f->size = size;
    b->fanout_bytes += size;
    uv_idle_start (&b->self_idle, self_idle_cb);
}

static int peer_add_service (struct peer *p, const char *name)
{
    struct broker *b = p->b;
    int rc = -1;

    if (strmap_get (b->services, name)) {
        errno = EEXIST;
        return -1;
    }
    pthread_rwlock_wrlock (&b->route_lock);
    if (strmap_put (b->services, name, p) == 0) {
        if (strmap_put (p->services, name, p) < 0)
            (void)strmap_take (b->services, name);
        else
            rc = 0;
    }
    pthread_rwlock_unlock (&b->route_lock);
    return rc;
}

static int peer_remove_service (struct peer *p, const char *name)
{
    if (strmap_get (p->b->services, name) != p) {
        errno = ENOENT;
        return -1;
    }
    pthread_rwlock_wrlock (&p->b->route_lock);
    (void)strmap_take (p->b->services, name);
    (void)strmap_take (p->services, name);
    pthread_rwlock_unlock (&p->b->route_lock);
    return 0;
}

/* ---- errors ---- */

void router_respond_error (struct broker *b, const flux_msg_t *req, int errnum,
                           const char *errstr)
{
    flux_msg_t *rsp;

    if (flux_msg_is_noresponse (req))
        return;
    if (!(rsp = flux_response_derive (req, errnum)))
        return;
    if (errstr && flux_msg_set_string (rsp, errstr) < 0) {
        flux_msg_decref (rsp);
        return;
    }
    router_response (b, rsp);
}

/* ---- tracking RPCs sent down to children ---- */

static int child_index (struct broker *b, uint32_t rank)
{
    if (b->nchildren == 0)
        return -1;
    return topology_child_index (b->topo, b->rank, rank);
}

/* Requests in flight below each child: sender (the request's route
 * stack: its first route is a local client's or module's UUID, or a
 * remote one's; the whole stack, which a client cannot forge since the
 * broker pushes its id last, not the first route it could) -> its
 * matchtag -> a copy of the request (without payload).  A response that
 * ends the RPC takes its entry out; losing the child answers them all
 * EHOSTUNREACH.  A service drops what a sender that went away had in
 * flight without answering, when it gets the sender's disconnect: that
 * disconnect, on its way down, takes the sender's entries of that
 * service out too (untrack_disconnect).  Without that, each client that
 * went away with a request held below (a streaming RPC, a wait) left
 * an entry here for ever, and clients coming and going grew the map
 * without bound. */

static void tracked_free (void *m)
{
    strmap_destroy (m);
}

/* The entries of msg's sender below child idx (created if create), or
 * NULL.  If keyp, *keyp is the sender's key (to free). */
static struct strmap *tracked_sender (struct broker *b, int idx,
                                      const flux_msg_t *msg, bool create,
                                      char **keyp)
{
    char *sender = owed_path (msg);
    struct strmap *m;

    if (!sender && !(sender = strdup ("")))
        return NULL;
    if (!(m = strmap_get (b->tracked[idx], sender)) && create) {
        if ((m = strmap_create ((strmap_free_f)flux_msg_decref))
            && strmap_put (b->tracked[idx], sender, m) < 0) {
            strmap_destroy (m);
            m = NULL;
        }
    }
    if (m && keyp)
        *keyp = sender;
    else
        free (sender);
    return m;
}

/* Forget the entries of the sender key if it has none left. */
static void tracked_prune (struct broker *b, int idx, struct strmap *m,
                           char *key)
{
    if (strmap_count (m) == 0)
        (void)strmap_delete (b->tracked[idx], key);
    free (key);
}

static void tag_key (const flux_msg_t *msg, char *buf, size_t size)
{
    uint32_t tag = 0;

    (void)flux_msg_get_matchtag (msg, &tag);
    snprintf (buf, size, "%u", tag);
}

/* What one tracked request weighs, charged to a local client sender:
 * the header copy and its map entries. */
#define TRACK_WEIGHT 512

/* The local client that sent msg, if any: its requests tracked here are
 * charged to it.  It is the newest route (the broker pushed it; requests
 * going down push nothing more), whatever routes the client put below
 * its own, so a client cannot charge another. */
static struct peer *tracked_client (struct broker *b, const flux_msg_t *msg)
{
    const char *last = flux_msg_route_last (msg);
    struct peer *p = last ? strmap_get (b->peers, last) : NULL;
    return p && p->kind == PEER_CLIENT ? p : NULL;
}

static void tracked_uncharge (struct broker *b, const flux_msg_t *msg, size_t n)
{
    struct peer *p = tracked_client (b, msg);

    if (p && n > 0)
        (void)peer_charge_bytes (p, -(ssize_t)(n * TRACK_WEIGHT));
}

/* May request msg (which expects an answer) be sent down to child idx
 * and tracked?  A local client's tracked requests are charged to it
 * (TRACK_WEIGHT each, ENOSPC past broker.client-sendq-limit); a remote
 * sender (a client or module of another broker, whose own broker
 * charges it) may have at most broker.tracked-rpc-limit in flight below
 * each child (EAGAIN).  Modules of this broker are not bounded.  On
 * refusal the request is answered, with a log line at most once a
 * minute, and false returned. */
static bool track_admit (struct broker *b, int idx, const flux_msg_t *msg)
{
    const char *sender = flux_msg_route_first (msg);
    const char *last = flux_msg_route_last (msg);
    struct strmap *m = tracked_sender (b, idx, msg, false, NULL);
    double now = uv_now (b->loop) / 1000.;
    struct peer *p;
    char text[200];
    int errnum;

    if ((p = tracked_client (b, msg))) {
        if (peer_charge_bytes (p, TRACK_WEIGHT) == 0)
            return true;
        errnum = errno;
        snprintf (text, sizeof (text),
                  "this connection holds too much: %zu of its requests wait "
                  "below this broker (broker.client-sendq-limit)",
                  m ? strmap_count (m) : 0);
    }
    else if (last && strmap_get (b->peers, last))
        return true; /* a module or the broker's own services */
    else if (b->tracked_limit == 0 || !m || strmap_count (m) < b->tracked_limit)
        return true;
    else {
        errnum = EAGAIN;
        snprintf (text, sizeof (text),
                  "rank %" PRIu32 " holds %zu requests of this sender in "
                  "flight below rank %" PRIu32
                  " (broker.tracked-rpc-limit %zu): try again later",
                  b->rank, strmap_count (m), b->children[idx],
                  b->tracked_limit);
    }
    b->track_refused++;
    if (b->track_logged == 0 || now - b->track_logged >= 60.) {
        const char *topic = "?";
        uint32_t userid = 0;
        (void)flux_msg_get_topic (msg, &topic);
        (void)flux_msg_get_userid (msg, &userid);
        brokerlog_msg (b->log, 4 /* LOG_WARNING */,
                       "%s: %s from %s (uid %u) refused (%lu since the last "
                       "such line)",
                       text, topic, sender ? sender : "?", (unsigned)userid,
                       b->track_refused);
        b->track_logged = now;
        b->track_refused = 0;
    }
    router_respond_error (b, msg, errnum, text);
    return false;
}

/* Track request msg sent down to child idx (admitted by track_admit). */
static void track_request (struct broker *b, int idx, const flux_msg_t *msg)
{
    struct strmap *m;
    char key[16], *sender;
    flux_msg_t *cpy = NULL;

    tag_key (msg, key, sizeof (key));
    if (!(m = tracked_sender (b, idx, msg, true, &sender))) {
        tracked_uncharge (b, msg, 1);
        return;
    }
    /* a matchtag reused while in flight is tracked once */
    if (strmap_get (m, key) || !(cpy = flux_msg_copy (msg, false))
        || strmap_put (m, key, cpy) < 0) {
        flux_msg_decref (cpy);
        tracked_uncharge (b, msg, 1);
    }
    tracked_prune (b, idx, m, sender);
}

static void untrack_response (struct broker *b, int idx, const flux_msg_t *rsp)
{
    struct strmap *m;
    char key[16], *sender;
    int errnum = 0;

    (void)flux_msg_get_errnum (rsp, &errnum);
    if (flux_msg_is_streaming (rsp) && errnum == 0)
        return; /* more to come */
    if (!(m = tracked_sender (b, idx, rsp, false, &sender)))
        return;
    tag_key (rsp, key, sizeof (key));
    if (strmap_delete (m, key) == 0)
        tracked_uncharge (b, rsp, 1);
    tracked_prune (b, idx, m, sender);
}

struct untrack_ctx {
    const char *prefix; /* "<service>." */
    char **keys;
    size_t n;
};

static int untrack_match (const char *key, void *val, void *arg)
{
    struct untrack_ctx *ctx = arg;
    const char *topic;

    if (flux_msg_get_topic (val, &topic) == 0
        && !strncmp (topic, ctx->prefix, strlen (ctx->prefix))
        && !strchr (topic + strlen (ctx->prefix), '.'))
        ctx->keys[ctx->n++] = (char *)key;
    return 0;
}

/* A "<prefix>.disconnect" from a sender, sent down: its requests to
 * <prefix>.* in flight below are dropped by the service (see above). */
static void untrack_disconnect (struct broker *b, int idx,
                                const flux_msg_t *msg, const char *topic)
{
    char *sender;
    struct strmap *m = tracked_sender (b, idx, msg, false, &sender);
    size_t len = strlen (topic) - strlen ("disconnect");
    char prefix[256];
    struct untrack_ctx ctx = {.prefix = prefix};

    if (!m)
        return;
    if (len >= sizeof (prefix)
        || !(ctx.keys = malloc (strmap_count (m) * sizeof (*ctx.keys)))) {
        free (sender);
        return;
    }
    memcpy (prefix, topic, len);
    prefix[len] = '\0';
    strmap_foreach (m, untrack_match, &ctx);
    for (size_t i = 0; i < ctx.n; i++)
        (void)strmap_delete (m, ctx.keys[i]);
    free (ctx.keys);
    tracked_uncharge (b, msg, ctx.n);
    tracked_prune (b, idx, m, sender);
}

static bool is_disconnect (const char *topic)
{
    size_t len = strlen (topic);
    return len > 11 && !strcmp (topic + len - 11, ".disconnect");
}

struct lost_ctx {
    struct broker *b;
    uint32_t child;
};

static int fail_tracked (const char *key, void *val, void *arg)
{
    struct lost_ctx *ctx = arg;
    uint32_t nodeid = FLUX_NODEID_ANY;
    char text[160];

    (void)flux_msg_get_nodeid (val, &nodeid);
    if (nodeid == ctx->child || nodeid == FLUX_NODEID_ANY)
        snprintf (
            text, sizeof (text),
            "No route to host: broker on the route was lost (rank %" PRIu32 ")",
            ctx->child);
    else
        snprintf (
            text, sizeof (text),
            "No route to host: broker on the route was lost (rank %" PRIu32
            ", on the way to rank %" PRIu32 ")",
            ctx->child, nodeid);
    tracked_uncharge (ctx->b, val, 1);
    router_respond_error (ctx->b, val, EHOSTUNREACH, text);
    return 0;
}

static int fail_sender (const char *key, void *val, void *arg)
{
    strmap_foreach (val, fail_tracked, arg);
    return 0;
}

static void sub_dropped (const char *key, void *arg);

void router_child_lost (struct broker *b, uint32_t child_rank)
{
    int idx = child_index (b, child_rank);
    struct strmap *old;

    if (idx < 0)
        return;
    evroute_child_clear (b->evroute, idx, sub_dropped, b);
    old = b->tracked[idx];
    if (!(b->tracked[idx] = strmap_create (tracked_free))) {
        b->tracked[idx] = old;
        return;
    }
    strmap_foreach (old, fail_sender, &(struct lost_ctx){b, child_rank});
    strmap_destroy (old);
}

static int count_sender (const char *key, void *val, void *arg)
{
    *(size_t *)arg += strmap_count (val);
    return 0;
}

/* The local clients whose raw events or answers were dropped going up
 * (nothing tells them), as "upstream-dropped-clients": [{uid, pid,
 * dropped}], the first UPQ_CLIENTS_MAX found; for a guest (userid not
 * FLUX_USERID_UNKNOWN) only its own. */
#define UPQ_CLIENTS_MAX 32

int router_upstream_clients (struct broker *b, json_t *o, uint32_t userid)
{
    json_t *a = json_array ();

    for (size_t i = 0; a && i < b->ncpeers; i++) {
        struct peer *p = b->cpeers[i];
        json_t *e;
        if (!p || p->up_dropped == 0
            || (userid != FLUX_USERID_UNKNOWN && p->cred.userid != userid))
            continue;
        if (json_array_size (a) >= UPQ_CLIENTS_MAX)
            break;
        if (!(e = json_pack ("{s:I s:i s:I}", "uid", (json_int_t)p->cred.userid,
                             "pid", (int)usock_client_pid (p->ptr), "dropped",
                             (json_int_t)p->up_dropped))
            || json_array_append_new (a, e) < 0) {
            json_decref (a);
            a = NULL;
        }
    }
    if (!a || json_object_set_new (o, "upstream-dropped-clients", a) < 0)
        return -1;
    return 0;
}

size_t router_tracked_count (struct broker *b)
{
    size_t n = 0;

    for (int i = 0; i < b->nchildren && b->tracked; i++)
        strmap_foreach (b->tracked[i], count_sender, &n);
    return n;
}

/* ---- requests ---- */

static const char *service_name (const char *topic, char *buf, size_t size)
{
    size_t len = strcspn (topic, ".");
    if (len >= size)
        len = size - 1;
    memcpy (buf, topic, len);
    buf[len] = '\0';
    return buf;
}

static struct peer *service_lookup (struct broker *b, const char *topic)
{
    char name[128];
    return strmap_get (b->services, service_name (topic, name, sizeof (name)));
}

/* "<name>.shutdown" to module m: the broker stops a module with it
 * (module_stop, straight into the module's queue), so no client or
 * other module may send it through the router, owner or not: the module
 * would leave behind the broker's back.  flux module remove is the way. */
static bool module_shutdown_topic (struct peer *p, const char *topic)
{
    const char *name;
    size_t n, len = strlen (topic);

    if (p->kind != PEER_MODULE || len < 10
        || strcmp (topic + len - 9, ".shutdown") != 0)
        return false;
    name = module_name (p->ptr);
    n = strlen (name);
    return n == len - 9 && !strncmp (topic, name, n);
}

/* A module that does not read its requests: the excess is answered
 * EAGAIN (a client may try again later), with a log line at most once a
 * minute. */
static void module_full (struct broker *b, struct peer *p, flux_msg_t *msg)
{
    char text[200];
    double now = uv_now (b->loop) / 1000.;

    snprintf (text, sizeof (text),
              "module %s is not keeping up: %zu bytes of messages wait for "
              "it (broker.module-queue-limit %zu): try again later",
              module_name (p->ptr), module_queued_bytes (p->ptr),
              b->module_queue_limit);
    if (b->modq_logged == 0 || now - b->modq_logged >= 60.) {
        brokerlog_msg (b->log, 4 /* LOG_WARNING */, "%s", text);
        b->modq_logged = now;
    }
    router_respond_error (b, msg, EAGAIN, text);
}

/* The broker's own services read their requests from the self pipe at
 * most 64 a loop turn (libflux's dispatch batch), while clients may send
 * 64 each a turn: 20 clients pipelining 20,000 pings each grew the
 * broker to 500 MB whatever broker.client-queue-limit said.  The
 * requests waiting there are bounded like a module's queue: past
 * broker.module-queue-limit they are answered EAGAIN, logged at most
 * once a minute. */
static void deliver_self (struct broker *b, flux_msg_t *msg)
{
    flux_msg_t *ref = (flux_msg_t *)flux_msg_incref (msg);
    double now = uv_now (b->loop) / 1000.;
    char text[200];

    selfq_stamp (b);
    if (flux_msgpipe_send_bounded (b->self_pipe, 0, ref, b->module_queue_limit)
        == 0) {
        /* what clients sent the services is served before more is read
         * (self_prep_cb) */
        if (flux_msgpipe_count (b->self_pipe, 1) >= SELF_BACKLOG)
            usock_server_read_hold (b->usock, true);
        return;
    }
    selfq_unstamp (b);
    flux_msg_decref (ref);
    if (errno != EAGAIN) {
        router_respond_error (b, msg, ENOSYS, NULL);
        return;
    }
    snprintf (text, sizeof (text),
              "the broker is not keeping up: %zu bytes of requests wait for "
              "its services (broker.module-queue-limit %zu): try again later",
              flux_msgpipe_bytes (b->self_pipe, 1), b->module_queue_limit);
    if (b->selfq_logged == 0 || now - b->selfq_logged >= 60.) {
        brokerlog_msg (b->log, 4 /* LOG_WARNING */, "%s", text);
        b->selfq_logged = now;
    }
    router_respond_error (b, msg, EAGAIN, text);
}

static bool is_disconnect (const char *topic);

static void deliver_local (struct broker *b, struct peer *p, flux_msg_t *msg)
{
    size_t share_held = 0;
    const char *topic = NULL;

    if (flux_msg_get_topic (msg, &topic) == 0
        && module_shutdown_topic (p, topic))
        router_respond_error (b, msg, EPERM,
                              "only the broker stops a module: use flux "
                              "module remove");
    else if (p->kind == PEER_SELF && b->module_queue_limit > 0)
        deliver_self (b, msg);
    else if (p->kind == PEER_MODULE && b->module_queue_limit > 0) {
        trace_to_module (b, p, msg);
        if (module_send_bounded (p->ptr, msg, b->module_queue_limit) < 0) {
            if (errno == EAGAIN)
                module_full (b, p, msg);
            else
                router_respond_error (b, msg, ENOSYS, NULL);
        }
    }
    else if (p->kind == PEER_CLIENT && topic && is_disconnect (topic)
             && flux_msg_is_noresponse (msg)) {
        owed_disconnect (p, msg, topic);
        (void)peer_send (p, msg);
    }
    else if (owed_note (p, msg, &share_held) < 0) {
        if (errno == EAGAIN)
            owed_full (b, p, msg, share_held);
        else
            router_respond_error (b, msg, errno,
                                  errno == ENOSPC
                                      ? "the client serving this holds too "
                                        "many requests it did not answer "
                                        "(broker.client-sendq-limit)"
                                      : NULL);
    }
    else if (peer_send (p, msg) < 0) {
        owed_forget (p, msg);
        router_respond_error (b, msg, ENOSYS, NULL);
    }
    flux_msg_decref (msg);
}

/* ---- what goes up to the parent ----
 *
 * A broker's clients, modules and children may send upstream (requests
 * for services above, events to publish, answers to requests from above)
 * faster than the parent takes them.  Past tbon.sendq-limit the broker
 * would mark its parent LOST and leave the instance, so nothing a client,
 * a module or a child sends may take the queue there: each class of
 * message may use a share of the limit, and past its share a request is
 * answered EAGAIN ("the link to the parent is full ... try again later"),
 * an event or a response is dropped, with one log line a minute that
 * counts them:
 *   - what a local client originates: half;
 *   - requests from modules, the broker's services and children: 3/4;
 *   - their events (to publish): 7/8;
 *   - their responses: 15/16 (each answers a request from above:
 *     dropping one leaves that RPC waiting, so they get the most room).
 * The last sixteenth is the overlay's own (hello, keepalives), so only
 * the overlay's own traffic can reach the limit and mark the parent
 * LOST.  Before, a module or a child publishing events while the parent
 * was stopped took the queue past the limit, and the broker left. */
enum upq_class { UPQ_CLIENT, UPQ_REQUEST, UPQ_EVENT, UPQ_RESPONSE };

static size_t upq_limit (struct broker *b, enum upq_class class)
{
    size_t max = overlay_sendq_max (b->overlay);

    switch (class) {
        case UPQ_CLIENT:
            return max / 2;
        case UPQ_REQUEST:
            return max / 4 * 3;
        case UPQ_EVENT:
            return max / 8 * 7;
        case UPQ_RESPONSE:
            break;
    }
    return max / 16 * 15;
}

static const char *upq_who (enum upq_class class)
{
    switch (class) {
        case UPQ_CLIENT:
            return "local clients";
        case UPQ_REQUEST:
            return "requests from here or below";
        case UPQ_EVENT:
            return "events from here or below";
        case UPQ_RESPONSE:
            break;
    }
    return "responses from here or below";
}

/* True if msg (of class) may go to the parent now; else it is counted
 * and logged (one line a minute) and the caller refuses or drops it. */
static bool upq_room (struct broker *b, const flux_msg_t *msg,
                      enum upq_class class, const char *action)
{
    double now = uv_now (b->loop) / 1000.;
    size_t limit;
    const char *topic = "?";
    int type = 0, k;

    if (b->rank == 0 || !b->overlay
        || overlay_parent_room (b->overlay, msg,
                                (limit = upq_limit (b, class))))
        return true;
    /* a line a minute for refused requests, another for dropped events
     * and responses: neither hides the other */
    k = !strcmp (action, "dropped");
    b->upq_refused[k]++;
    if (k)
        b->upq_dropped_total++;
    else
        b->upq_refused_total++;
    if (b->upq_logged[k] != 0 && now - b->upq_logged[k] < 60.)
        return false;
    (void)flux_msg_get_topic (msg, &topic);
    (void)flux_msg_get_type (msg, &type);
    brokerlog_msg (
        b->log, 4 /* LOG_WARNING */,
        "the link to the parent is full: %zu bytes wait to be "
        "sent to it (%s may use %zu of tbon.sendq-limit %zu): "
        "%s %s from %s %s (%lu since the last such line)",
        overlay_parent_queued (b->overlay), upq_who (class), limit,
        overlay_sendq_max (b->overlay), flux_msg_typestr (type), topic,
        class == UPQ_CLIENT ? "a local client" : "this broker or below", action,
        b->upq_refused[k]);
    b->upq_logged[k] = now;
    b->upq_refused[k] = 0;
    return false;
}

/* Requests that cannot reach their rank get EHOSTUNREACH with a text
 * naming the rank and why.  The text starts with strerror's, which is all
 * that flux-core's clients show (its broker sends no text), so a client
 * that prints only the text still says "No route to host". */
static const char *unreach_why (enum overlay_peer_status s)
{
    switch (s) {
        case OVERLAY_PEER_LOST:
            return "lost";
        case OVERLAY_PEER_OFFLINE:
            return "offline (not joined yet, or gone)";
        default:
            return "not online";
    }
}

static void respond_unreach_up (struct broker *b, const flux_msg_t *msg)
{
    char text[200];
    int64_t parent = topology_parent (b->topo, b->rank);

    snprintf (text, sizeof (text),
              "No route to host: rank %" PRIu32 " has no link to its parent "
              "(rank %" PRId64 " is %s to it)",
              b->rank, parent,
              unreach_why (b->overlay ? overlay_parent_status (b->overlay)
                                      : OVERLAY_PEER_OFFLINE));
    router_respond_error (b, msg, EHOSTUNREACH, text);
}

static void respond_unreach_down (struct broker *b, const flux_msg_t *msg,
                                  uint32_t target, int64_t child)
{
    char text[200];
    const char *why;

    if (child < 0 || !b->overlay)
        snprintf (text, sizeof (text),
                  "No route to host: rank %" PRIu32 " has no route to rank "
                  "%" PRIu32,
                  b->rank, target);
    else {
        why = unreach_why (
            overlay_child_status (b->overlay, (uint32_t)child, NULL));
        if (child == target)
            snprintf (text, sizeof (text),
                      "No route to host: rank %" PRIu32 " is %s", target, why);
        else
            snprintf (text, sizeof (text),
                      "No route to host: rank %" PRIu32 " is unreachable: "
                      "rank %" PRId64 " on the route is %s",
                      target, child, why);
    }
    router_respond_error (b, msg, EHOSTUNREACH, text);
}

static void send_parent (struct broker *b, flux_msg_t *msg, struct peer *from)
{
    if (!upq_room (b, msg,
                   from && from->kind == PEER_CLIENT ? UPQ_CLIENT : UPQ_REQUEST,
                   "answered EAGAIN")) {
        char text[160];
        snprintf (text, sizeof (text),
                  "the link to the parent is full (%zu bytes wait to be sent "
                  "to it): try again later",
                  overlay_parent_queued (b->overlay));
        router_respond_error (b, msg, EAGAIN, text);
        flux_msg_decref (msg);
        return;
    }
    if (b->rank == 0)
        router_respond_error (b, msg, ENOSYS, NULL);
    else if (!b->overlay || overlay_send_parent (b->overlay, msg) < 0)
        respond_unreach_up (b, msg);
    flux_msg_decref (msg);
}

/* Requests going down to a child past their share of tbon.sendq-limit
 * (what ZeroMQ holds for the child): half for what a local client
 * originates, 3/4 for the rest, as going up ("what goes up to the
 * parent").  Past it a request is answered EAGAIN, one that expects no
 * answer dropped (a disconnect always goes: it frees state below), with
 * one log line a minute.  Events and responses going down are not
 * refused: a child that does not read them is marked LOST at the limit,
 * as it must be (t0102).  Before, a client of rank 0 sending requests of
 * 64 KB to a stopped rank 1 got rank 1 marked lost. */
static bool downq_room (struct broker *b, uint32_t child, const flux_msg_t *msg,
                        bool client, const char *topic)
{
    size_t max = overlay_sendq_max (b->overlay);
    size_t limit = client ? max / 2 : max / 4 * 3;
    double now = uv_now (b->loop) / 1000.;
    char text[200];

    if (overlay_child_room (b->overlay, child, msg, limit)
        || (flux_msg_is_noresponse (msg) && is_disconnect (topic)))
        return true;
    snprintf (text, sizeof (text),
              "the link to child rank %" PRIu32
              " is full (%zu bytes wait to be sent to it): try again later",
              child, overlay_child_queued (b->overlay, child));
    b->downq_refused++;
    if (b->downq_logged == 0 || now - b->downq_logged >= 60.) {
        brokerlog_msg (b->log, 4 /* LOG_WARNING */,
                       "%s (%s may use %zu of tbon.sendq-limit %zu): request "
                       "%s refused (%lu since the last such line)",
                       text, client ? "local clients" : "others", limit, max,
                       topic, b->downq_refused);
        b->downq_logged = now;
        b->downq_refused = 0;
    }
    router_respond_error (b, msg, EAGAIN, text);
    return false;
}

static void send_down (struct broker *b, uint32_t target, flux_msg_t *msg,
                       struct peer *from)
{
    int64_t child = topology_child_toward (b->topo, b->rank, target);
    const char *topic = "?";
    bool track;
    int idx;

    if (child < 0 || !b->overlay) {
        respond_unreach_down (b, msg, target, child);
        flux_msg_decref (msg);
        return;
    }
    (void)flux_msg_get_topic (msg, &topic);
    if (!downq_room (b, (uint32_t)child, msg, from && from->kind == PEER_CLIENT,
                     topic)) {
        flux_msg_decref (msg);
        return;
    }
    idx = child_index (b, (uint32_t)child);
    track = idx >= 0 && !flux_msg_is_noresponse (msg);
    if (track && !track_admit (b, idx, msg)) {
        flux_msg_decref (msg);
        return;
    }
    if (overlay_send_child (b->overlay, (uint32_t)child, msg) < 0) {
        if (track)
            tracked_uncharge (b, msg, 1);
        respond_unreach_down (b, msg, target, child);
    }
    else if (track)
        track_request (b, idx, msg);
    else if (idx >= 0 && is_disconnect (topic))
        untrack_disconnect (b, idx, msg, topic);
    flux_msg_decref (msg);
}

/* ---- events routed by subscription (evroute.h) ---- */

/* Answer a subscription held until its registration reached rank 0: a
 * local event.subscribe, or a child's broker.sub-add (whose answer
 * names its key). */
static void sub_release (const flux_msg_t *req, void *arg)
{
    struct broker *b = arg;
    const char *topic, *key;
    flux_msg_t *rsp;

    if (flux_msg_has_flag (req, FLUX_MSGFLAG_NORESPONSE)
        || !(rsp = flux_response_derive (req, 0)))
        return;
    if (flux_msg_get_topic (req, &topic) == 0
        && !strcmp (topic, "broker.sub-add")
        && (flux_msg_unpack (req, "{s:s}", "prefix", &key) < 0
            || flux_msg_pack (rsp, "{s:s}", "prefix", key) < 0)) {
        flux_msg_decref (rsp);
        return;
    }
    router_response (b, rsp);
}

/* Register (broker.sub-add) or withdraw (broker.sub-del) key with the
 * parent.  Sent straight to the overlay, not through the broker's own
 * services: a request a subscriber sends after subscribing must not
 * reach the parent before the registration does. */
static void sub_upstream (struct broker *b, const char *topic, const char *key)
{
    bool add = !strcmp (topic, "broker.sub-add");
    flux_msg_t *msg;
    int rc = -1;

    if (b->rank == 0)
        return;
    if (add)
        evroute_pending (b->evroute, key);
    if ((msg = flux_request_encode (topic, NULL))
        && flux_msg_pack (msg, "{s:s}", "prefix", key) == 0
        && flux_msg_set_cred (msg,
                              (struct flux_msg_cred){b->owner, FLUX_ROLE_OWNER})
               == 0
        && (add || flux_msg_set_flag (msg, FLUX_MSGFLAG_NORESPONSE) == 0)) {
        flux_msg_route_enable (msg);
        if (flux_msg_route_push (msg, b->uuid) == 0 && b->overlay)
            rc = overlay_send_parent (b->overlay, msg);
    }
    flux_msg_decref (msg);
    if (rc < 0) {
        brokerlog_msg (b->log, 3 /* LOG_ERR */,
                       "%s %s: cannot reach the parent", topic, key);
        if (add) /* nothing will come: the subscribers wait no more */
            evroute_acked (b->evroute, key, sub_release, b);
    }
}

static void sub_dropped (const char *key, void *arg)
{
    sub_upstream (arg, "broker.sub-del", key);
}

static void sub_again (const char *key, void *arg)
{
    sub_upstream (arg, "broker.sub-add", key);
}

/* The parent link is up (again): register every key with it.  A parent
 * that marked this broker lost forgot its keys; one that did not counts
 * them twice, which brings more events, never fewer. */
void router_parent_online (struct broker *b)
{
    if (b->evroute)
        evroute_foreach (b->evroute, sub_again, b);
}

/* Count a subscription of holder (-1 local, else a child) to sub: 1 if
 * its answer (req) is held until the registration reached rank 0, 0 if
 * it may be answered now, -1 with errno. */
static int sub_ref (struct broker *b, int holder, const char *sub,
                    const flux_msg_t *req)
{
    char key[256];
    int t;

    if (!evroute_key (sub, key, sizeof (key)))
        return 0;
    if ((t = evroute_ref (b->evroute, holder, key)) == -2) {
        errno = ENOMEM;
        return -1;
    }
    if (t == 1)
        sub_upstream (b, "broker.sub-add", key);
    return evroute_hold (b->evroute, key, req) == 1 ? 1 : 0;
}

static void sub_unref (struct broker *b, int holder, const char *sub)
{
    char key[256];

    if (evroute_key (sub, key, sizeof (key))
        && evroute_unref (b->evroute, holder, key) == -1)
        sub_upstream (b, "broker.sub-del", key);
}

/* broker.sub-add and broker.sub-del from a child (the owner's only):
 * true if msg was one (and is consumed). */
static bool child_sub_request (struct broker *b, flux_msg_t *msg, int idx)
{
    struct flux_msg_cred cred = {0};
    const char *topic, *prefix;
    char key[256];
    int rc;

    if (flux_msg_get_topic (msg, &topic) < 0
        || (strcmp (topic, "broker.sub-add")
            && strcmp (topic, "broker.sub-del")))
        return false;
    if (flux_msg_get_cred (msg, &cred) < 0
        || !(cred.rolemask & FLUX_ROLE_OWNER))
        router_respond_error (b, msg, EPERM, NULL);
    else if (idx < 0)
        router_respond_error (b, msg, EPROTO, "not from a child");
    else if (flux_msg_unpack (msg, "{s:s}", "prefix", &prefix) < 0
             || !evroute_key (prefix, key, sizeof (key))
             || strcmp (key, prefix))
        router_respond_error (b, msg, EPROTO, "expected {prefix:s}, a key");
    else if (!strcmp (topic, "broker.sub-del"))
        sub_unref (b, idx, prefix);
    else if ((rc = sub_ref (b, idx, prefix, msg)) < 0)
        router_respond_error (b, msg, errno, NULL);
    else if (rc == 0)
        sub_release (msg, b);
    flux_msg_decref (msg);
    return true;
}

/* The answer to this broker's broker.sub-add: true if msg was one. */
static bool parent_sub_response (struct broker *b, flux_msg_t *msg)
{
    const char *topic, *key, *top = flux_msg_route_last (msg);
    int errnum = 0;

    if (!top || strcmp (top, b->uuid) || flux_msg_get_topic (msg, &topic) < 0
        || strcmp (topic, "broker.sub-add"))
        return false;
    if (flux_msg_get_errnum (msg, &errnum) == 0 && errnum == 0
        && flux_msg_unpack (msg, "{s:s}", "prefix", &key) == 0)
        evroute_acked (b->evroute, key, sub_release, b);
    else
        brokerlog_msg (b->log, 3 /* LOG_ERR */, "broker.sub-add: refused (%s)",
                       strerror (errnum ? errnum : EPROTO));
    flux_msg_decref (msg);
    return true;
}

/* Requests the router answers itself for a local peer (PROTOCOLS 1.3). */
static bool local_request (struct broker *b, struct peer *from, flux_msg_t *msg,
                           const char *topic)
{
    const char *arg;
    int rc;

    if (!from || from->kind == PEER_SELF)
        return false;
    if (!strcmp (topic, "event.subscribe")
        || !strcmp (topic, "event.unsubscribe")) {
        if (flux_msg_unpack (msg, "{s:s}", "topic", &arg) < 0) {
            router_respond_error (b, msg, EPROTO, "expected {topic:s}");
            return true;
        }
        /* the events pending fan-outs owe it are matched against the
         * subscriptions it had when they were published */
        fanout_flush_peer (b, from);
        if (topic[6] == 's') {
            char **v;
            if (from->kind == PEER_CLIENT && from->nsubs >= PEER_SUBS_MAX) {
                router_respond_error (b, msg, ENOSPC,
                                      "at most 1024 subscriptions per "
                                      "connection");
                return true;
            }
            if (peer_charge (from, arg) < 0) {
                router_respond_error (b, msg, errno,
                                      errno == ENOSPC
                                          ? "this connection holds too much "
                                            "(broker.client-sendq-limit)"
                                          : NULL);
                return true;
            }
            v = realloc (from->subs, (from->nsubs + 1) * sizeof (*v));
            if (!v || !(v[from->nsubs] = strdup (arg))) {
                if (v)
                    from->subs = v;
                peer_uncharge (from, arg);
                router_respond_error (b, msg, ENOMEM, NULL);
                return true;
            }
            from->subs = v;
            from->nsubs++;
            if ((rc = sub_ref (b, -1, arg, msg)) == 1)
                return true; /* answered when rank 0 has it */
        }
        else {
            size_t i;
            rc = -1;
            errno = ENOENT;
            for (i = 0; i < from->nsubs; i++) {
                if (!strcmp (from->subs[i], arg)) {
                    sub_unref (b, -1, arg);
                    peer_uncharge (from, arg);
                    free (from->subs[i]);
                    from->subs[i] = from->subs[--from->nsubs];
                    rc = 0;
                    break;
                }
            }
        }
    }
    else if (!strcmp (topic, "service.add")
             || !strcmp (topic, "service.remove")) {
        if (flux_msg_unpack (msg, "{s:s}", "service", &arg) < 0) {
            router_respond_error (b, msg, EPROTO, "expected {service:s}");
            return true;
        }
        if (topic[8] == 'a') {
            char prefix[32];
            snprintf (prefix, sizeof (prefix), "%u-", from->cred.userid);
            if (!(from->cred.rolemask & FLUX_ROLE_OWNER)
                && strncmp (arg, prefix, strlen (prefix)) != 0) {
                router_respond_error (b, msg, EPERM,
                                      "guests may only register "
                                      "services named <userid>-*");
                return true;
            }
            if ((rc = peer_charge (from, arg)) == 0
                && (rc = peer_add_service (from, arg)) < 0) {
                int saved_errno = errno;
                peer_uncharge (from, arg);
                errno = saved_errno;
            }
        }
        else if ((rc = peer_remove_service (from, arg)) == 0)
            peer_uncharge (from, arg);
    }
    else
        return false;
    if (rc < 0)
        router_respond_error (b, msg, errno,
                              errno == ENOSPC
                                  ? "this connection holds too much "
                                    "(broker.client-sendq-limit)"
                                  : NULL);
    else if (!flux_msg_has_flag (msg, FLUX_MSGFLAG_NORESPONSE)) {
        flux_msg_t *rsp = flux_response_derive (msg, 0);
        if (rsp)
            router_response (b, rsp);
    }
    return true;
}

/* The key under which a request's (prefix, nodeid, upstream) is noted
 * for disconnect; false if there is nothing to note. */
static bool disconnect_key (const flux_msg_t *msg, const char *topic,
                            uint32_t nodeid, char *key, size_t size)
{
    const char *dot = strrchr (topic, '.');

    if (!dot || dot == topic || (size_t)(dot - topic) > 200)
        return false;
    snprintf (key, size, "%.*s\x1f%u\x1f%d", (int)(dot - topic), topic, nodeid,
              flux_msg_has_flag (msg, FLUX_MSGFLAG_UPSTREAM));
    return true;
}

/* ---- the disconnects a client's going owes ----
 *
 * A subprocess server (RFC 42: the broker's rexec, a job shell's
 * <uid>-shell-<id>.rexec) holds state for a sender only while one of the
 * sender's requests to it is open: a foreground exec or an attach until
 * its stream ends (ENODATA or another error), a wait until it is
 * answered; a background exec leaves nothing a disconnect would touch.
 * So when a client goes, its disconnect for such a server on a rank is
 * owed only if a request it sent there is still open: a `flux exec -r
 * all` whose processes all ended owes none, where it sent one to each
 * of 64 ranks (94 of its ~1,130 message hops).  A client that dies
 * while its processes run still has them killed on every rank.  Its
 * open requests are followed by matchtag, its own only: for one a proxy
 * relays, or a matchtag not unique or not noted, every disconnect goes,
 * as for any other service.  A request sent without wanting an answer
 * (NORESPONSE) leaves such a server nothing to clean up either. */
struct open_req {
    bool streaming;
    char key[]; /* its disconnect_key */
};

/* A job shell's own service, <uid>-shell-<jobid>: none of its methods
 * (output, input, stdin, task-exit, exception) keeps anything of a
 * sender past its request, so a shell of a -N64 job that exits owes its
 * leader no disconnect, nor the leader the 63 others (188 of a job's
 * ~2,120 message hops). */
static bool shell_service (const char *prefix, size_t len)
{
    size_t d = 0;

    while (d < len && prefix[d] >= '0' && prefix[d] <= '9')
        d++;
    return d > 0 && len > d + 7 && !strncmp (prefix + d, "-shell-", 7)
           && !memchr (prefix + d + 7, '.', len - d - 7);
}

static bool per_request_state (const char *prefix, size_t len)
{
    return (len == 5 && !strncmp (prefix, "rexec", 5))
           || (len > 6 && !strncmp (prefix + len - 6, ".rexec", 6))
           || shell_service (prefix, len);
}

/* Count one more (delta 1) or one fewer (-1) open request of p under
 * key; 0, or -1 if there is no memory (then p's following is lost). */
static int open_count (struct peer *p, const char *key, int delta)
{
    int *n = strmap_get (p->open_keys, key);

    if (!n) {
        if (delta < 0 || !(n = calloc (1, sizeof (*n)))
            || strmap_put (p->open_keys, key, n) < 0) {
            free (n);
            return -1;
        }
    }
    if ((*n += delta) <= 0)
        (void)strmap_delete (p->open_keys, key);
    return 0;
}

/* Client p sent msg (topic, its disconnect key): noted while open. */
static void open_note (struct peer *p, const flux_msg_t *msg, const char *topic,
                       const char *key)
{
    uint32_t tag;
    char tagstr[16];
    struct open_req *o;

    if (!p->open || p->open_lost || flux_msg_is_noresponse (msg)
        || !per_request_state (topic, strcspn (key, "\x1f")))
        return;
    if (flux_msg_route_count (msg) != 1 || flux_msg_get_matchtag (msg, &tag) < 0
        || tag == FLUX_MATCHTAG_NONE)
        goto lost;
    snprintf (tagstr, sizeof (tagstr), "%u", tag);
    if (strmap_get (p->open, tagstr)
        || !(o = malloc (sizeof (*o) + strlen (key) + 1)))
        goto lost;
    o->streaming = flux_msg_is_streaming (msg);
    strcpy (o->key, key);
    if (peer_charge (p, key) < 0) {
        free (o);
        goto lost;
    }
    if (open_count (p, key, 1) < 0) {
        peer_uncharge (p, key);
        free (o);
        goto lost;
    }
    if (strmap_put (p->open, tagstr, o) < 0) {
        (void)open_count (p, key, -1);
        peer_uncharge (p, key);
        free (o);
        goto lost;
    }
    return;
lost:
    p->open_lost = true;
}

/* rsp (its route popped) goes to client p: the request it ends is no
 * longer open. */
static void open_answered (struct peer *p, const flux_msg_t *rsp)
{
    uint32_t tag;
    int errnum = 0;
    char tagstr[16];
    struct open_req *o;

    if (flux_msg_route_count (rsp) != 0
        || flux_msg_get_matchtag (rsp, &tag) < 0)
        return;
    snprintf (tagstr, sizeof (tagstr), "%u", tag);
    if (!(o = strmap_get (p->open, tagstr)))
        return;
    (void)flux_msg_get_errnum (rsp, &errnum);
    if (o->streaming && errnum == 0)
        return;
    peer_uncharge (p, o->key);
    (void)open_count (p, o->key, -1);
    (void)strmap_delete (p->open, tagstr);
}

/* Does p's going owe the disconnect of key? */
static bool disconnect_owed (struct peer *p, const char *key)
{
    if (!p->open || p->open_lost
        || !per_request_state (key, strcspn (key, "\x1f")))
        return true;
    return strmap_get (p->open_keys, key) != NULL; /* O(1) per key */
}

/* Remember (prefix, nodeid, upstream) so a disconnect can be sent later.
 * -1 with ENOSPC if the client holds too much to note one more. */
static int note_disconnect (struct peer *from, const flux_msg_t *msg,
                            const char *topic, uint32_t nodeid)
{
    char key[300];

    if (!disconnect_key (msg, topic, nodeid, key, sizeof (key)))
        return 0;
    if (!strmap_get (from->disconnects, key)) {
        if (peer_charge (from, key) < 0)
            return -1;
        pthread_rwlock_wrlock (&from->b->route_lock);
        (void)strmap_put (from->disconnects, key, from);
        pthread_rwlock_unlock (&from->b->route_lock);
    }
    open_note (from, msg, topic, key);
    return 0;
}

/* ---- what a guest's requests make services hold ----
 *
 * A request holds memory in its service until it is answered, and a
 * streaming one (a KVS watch, overlay.health --wait, an eventlog watch)
 * until its stream ends with an error response (ENODATA at the end, or
 * the error that ends it) or the client goes: 0.5 to 1.5 KB each in the
 * services measured.  Nothing else bounds how many a client keeps open,
 * so a guest could make the broker's modules grow without end (100,000
 * streaming overlay.health requests took 54 MB, 32,768 KVS watches 50
 * MB).  So each request a guest's connection sends that expects an
 * answer is charged to it at INFLIGHT_WEIGHT until the answer that ends
 * it passes back.  A guest keeps at most half of
 * broker.client-sendq-limit in such charges (32,768 open requests by
 * default; the other half is room for their answers), and a guest user
 * USER_INFLIGHT_CONNS times that over all its connections, past which
 * new requests are refused (ENOSPC); and all clients together
 * broker.client-queue-limit, past which the largest holders are cut
 * (usock_client_charge).  The owner's connections are not counted: the
 * owner may load modules and stop the instance, its tools may pipeline
 * any number of requests, and a proxy relays its own clients' requests.
 * Requests are counted by matchtag (a matchtag used twice counts twice);
 * an answer ends one, unless it is a streaming one that is not an error
 * (a service derives its answers from the request, so they carry its
 * streaming flag, and every service that answers more than once requires
 * that flag).  The broker's refusals of requests it did not count
 * (client_refuse) are not answers to count: they would end another
 * request under the same matchtag. */
#define INFLIGHT_WEIGHT 1024
#define USER_INFLIGHT_CONNS 4

/* The open requests of guest uid over all its connections (created at 0
 * if create), or NULL. */
static size_t *user_inflight (struct broker *b, uint32_t uid, bool create)
{
    char key[16];
    size_t *n;

    snprintf (key, sizeof (key), "%u", (unsigned)uid);
    if (!(n = strmap_get (b->user_inflight, key)) && create) {
        if (!(n = calloc (1, sizeof (*n)))
            || strmap_put (b->user_inflight, key, n) < 0) {
            free (n);
            return NULL;
        }
    }
    return n;
}

/* count fewer open requests of p's user. */
static void user_inflight_sub (struct peer *p, size_t count)
{
    size_t *u = user_inflight (p->b, p->cred.userid, false);
    char key[16];

    if (u && (*u = *u > count ? *u - count : 0) == 0) {
        snprintf (key, sizeof (key), "%u", (unsigned)p->cred.userid);
        (void)strmap_delete (p->b->user_inflight, key);
    }
}

/* Client p sends msg (its route pushed): -1 with ENOSPC (and why) if p or
 * its user holds too much to send one more. */
static int inflight_note (struct peer *p, const flux_msg_t *msg, char *why,
                          size_t size)
{
    struct broker *b = p->b;
    uint32_t tag = FLUX_MATCHTAG_NONE;
    size_t *u;
    char key[16];
    unsigned *n;

    if ((p->cred.rolemask & FLUX_ROLE_OWNER) || flux_msg_is_noresponse (msg))
        return 0;
    if (b->client_inflight_limit > 0
        && p->ninflight >= b->client_inflight_limit) {
        snprintf (why, size,
                  "this connection holds too much: %zu requests not "
                  "answered yet (broker.client-sendq-limit)",
                  p->ninflight);
        errno = ENOSPC;
        return -1;
    }
    if ((u = user_inflight (b, p->cred.userid, true))
        && b->client_inflight_limit > 0
        && *u >= USER_INFLIGHT_CONNS * b->client_inflight_limit) {
        snprintf (why, size,
                  "user %u holds too much: %zu requests not answered yet "
                  "on its connections (broker.client-sendq-limit)",
                  (unsigned)p->cred.userid, *u);
        errno = ENOSPC;
        return -1;
    }
    (void)flux_msg_get_matchtag (msg, &tag);
    snprintf (key, sizeof (key), "%u", tag);
    if (peer_charge_bytes (p, INFLIGHT_WEIGHT) < 0) {
        snprintf (why, size,
                  "this connection holds too much (broker.client-sendq-limit)");
        return -1;
    }
    if (!u
        || (!(n = strmap_get (p->inflight, key))
            && (!(n = calloc (1, sizeof (*n)))
                || strmap_put (p->inflight, key, n) < 0))) {
        (void)peer_charge_bytes (p, -INFLIGHT_WEIGHT);
        return 0; /* not counted: no memory to count it */
    }
    (*n)++;
    p->ninflight++;
    (*u)++;
    return 0;
}

/* Client p is going: its open requests no longer count for its user. */
static void inflight_release (struct peer *p)
{
    if (p->ninflight > 0) {
        user_inflight_sub (p, p->ninflight);
        p->ninflight = 0;
    }
}

/* rsp (its route popped) goes to client p: the request it ends is no
 * longer charged. */
static void inflight_answered (struct peer *p, const flux_msg_t *rsp)
{
    uint32_t tag = FLUX_MATCHTAG_NONE;
    int errnum = 0;
    char key[16];
    unsigned *n;

    (void)flux_msg_get_errnum (rsp, &errnum);
    if (flux_msg_is_streaming (rsp) && errnum == 0)
        return; /* more to come */
    (void)flux_msg_get_matchtag (rsp, &tag);
    snprintf (key, sizeof (key), "%u", tag);
    if (!(n = strmap_get (p->inflight, key)))
        return;
    (void)peer_charge_bytes (p, -INFLIGHT_WEIGHT);
    p->ninflight--;
    user_inflight_sub (p, 1);
    if (--*n == 0)
        (void)strmap_delete (p->inflight, key);
}

void router_request (struct broker *b, flux_msg_t *msg, struct peer *from)
{
    const char *topic;
    uint32_t nodeid;
    struct peer *svc;
    bool upstream = flux_msg_has_flag (msg, FLUX_MSGFLAG_UPSTREAM);

    if (flux_msg_get_topic (msg, &topic) < 0
        || flux_msg_get_nodeid (msg, &nodeid) < 0) {
        flux_msg_decref (msg);
        return;
    }
    if (local_request (b, from, msg, topic)) {
        flux_msg_decref (msg);
        return;
    }
    if (from && from->disconnects /* a client or a module */
        && note_disconnect (from, msg, topic, nodeid) < 0) {
        router_respond_error (b, msg, errno,
                              errno == ENOSPC
                                  ? "this connection holds too much: it "
                                    "sent requests to too many services "
                                    "(broker.client-sendq-limit)"
                                  : NULL);
        flux_msg_decref (msg);
        return;
    }
    if (nodeid == FLUX_NODEID_ANY) {
        if ((svc = service_lookup (b, topic)))
            deliver_local (b, svc, msg);
        else
            send_parent (b, msg, from);
    }
    else if (upstream) {
        if (nodeid != b->rank && (svc = service_lookup (b, topic)))
            deliver_local (b, svc, msg);
        else
            send_parent (b, msg, from);
    }
    else if (nodeid == b->rank) {
        if ((svc = service_lookup (b, topic)))
            deliver_local (b, svc, msg);
        else {
            router_respond_error (b, msg, ENOSYS, NULL);
            flux_msg_decref (msg);
        }
    }
    else if (nodeid >= b->size) {
        char text[128];
        snprintf (text, sizeof (text),
                  "No route to host: rank %" PRIu32 ": no such rank (size "
                  "%" PRIu32 ")",
                  nodeid, b->size);
        router_respond_error (b, msg, EHOSTUNREACH, text);
        flux_msg_decref (msg);
    }
    else if (topology_in_subtree (b->topo, b->rank, nodeid))
        send_down (b, nodeid, msg, from);
    else
        send_parent (b, msg, from);
}

/* ---- responses ---- */

static int64_t child_of_route (struct broker *b, const char *id)
{
    char *end;
    unsigned long r;

    if (!id || !*id || strlen (id) > 10)
        return -1;
    r = strtoul (id, &end, 10);
    if (*end || child_index (b, (uint32_t)r) < 0)
        return -1;
    return (int64_t)r;
}

void router_response (struct broker *b, flux_msg_t *msg)
{
    const char *top = flux_msg_route_last (msg);
    struct peer *p;
    int64_t child;

    if (!top) {
        flux_msg_decref (msg); /* nowhere to go: a response to nobody */
        return;
    }
    if ((p = strmap_get (b->peers, top))) {
        (void)flux_msg_route_pop (msg);
        if (p->open && strmap_count (p->open) > 0)
            open_answered (p, msg);
        if (p->ninflight > 0)
            inflight_answered (p, msg);
        (void)peer_send (p, msg);
    }
    else if ((child = child_of_route (b, top)) >= 0) {
        (void)flux_msg_route_pop (msg);
        if (b->overlay)
            (void)overlay_send_child (b->overlay, (uint32_t)child, msg);
    }
    else if (b->rank > 0 && b->overlay
             && upq_room (b, msg, UPQ_RESPONSE, "dropped"))
        (void)overlay_send_parent (b->overlay, msg);
    flux_msg_decref (msg);
}

/* ---- events ---- */

/* Overlay children, modules and the broker's own services get the event
 * now; local clients in this turn if few are connected and no fan-out is
 * pending, else over the next turns (fanout_push). */
void router_event (struct broker *b, flux_msg_t *msg)
{
    struct flux_msg_cred cred = {0};
    const char *topic;
    bool private, routed;
    size_t i;

    if (flux_msg_get_topic (msg, &topic) < 0) {
        flux_msg_decref (msg);
        return;
    }
    (void)flux_msg_get_cred (msg, &cred);
    private = flux_msg_is_private (msg);
    routed = evroute_routed (topic);
    for (i = 0; i < (size_t)b->nchildren && b->overlay; i++)
        if (!routed || evroute_wanted (b->evroute, (int)i, topic))
            (void)overlay_send_child (b->overlay, b->children[i], msg);
    for (i = 0; i < b->nmpeers; i++)
        if (event_wanted (b->mpeers[i], topic, &cred, private))
            (void)module_send_limited (b->mpeers[i], msg);
    if (b->fanout_head || b->ncpeers - b->cpeers_holes > FANOUT_SYNC)
        fanout_push (b, msg, topic, &cred, private);
    else {
        /* one encoding of the event, shared by every client queue */
        usock_server_share (b->usock, msg);
        for (i = 0; i < b->ncpeers; i++) {
            struct peer *p = b->cpeers[i];
            if (p && event_wanted (p, topic, &cred, private))
                (void)peer_send_now (p, msg);
        }
        usock_server_share (b->usock, NULL);
    }
    /* the broker's own services see every event (they filter by handler) */
    (void)peer_send (b->self, msg);
    flux_msg_decref (msg);
}

int router_publish (struct broker *b, flux_msg_t *msg)
{
    /* flux-core's clients send raw events with FLAG_ROUTE and an empty
     * stack (PROTOCOLS 1.3): accept them, and publish as RFC 3 says, with
     * no route delimiter. */
    if (flux_msg_has_flag (msg, FLUX_MSGFLAG_ROUTE))
        flux_msg_route_disable (msg);
    if (b->rank > 0) {
        int rc = -1;
        if (!b->overlay)
            errno = EHOSTUNREACH;
        else if (!upq_room (b, msg, UPQ_EVENT, "dropped"))
            errno = EAGAIN;
        else
            rc = overlay_send_parent (b->overlay, msg);
        flux_msg_decref (msg);
        return rc;
    }
    if (flux_msg_set_seq (msg, ++b->event_seq) < 0) {
        flux_msg_decref (msg);
        return -1;
    }
    router_event (b, msg);
    return 0;
}

/* ---- from the overlay ---- */

void router_from_overlay (struct broker *b, flux_msg_t *msg, int where,
                          uint32_t peer_rank)
{
    int type = 0;
    int idx;

    b->cur.overlay_msgs++;
    msgcount_add (b->msgcount, where == OVERLAY_DOWNSTREAM ? "child" : "parent",
                  msg);
    (void)flux_msg_get_type (msg, &type);
    switch (type) {
        case FLUX_MSGTYPE_REQUEST:
            if (where == OVERLAY_DOWNSTREAM
                && child_sub_request (b, msg, child_index (b, peer_rank)))
                break;
            router_request (b, msg, NULL);
            break;
        case FLUX_MSGTYPE_RESPONSE:
            if (where != OVERLAY_DOWNSTREAM && parent_sub_response (b, msg))
                break;
            if (where == OVERLAY_DOWNSTREAM) {
                /* the child's identity was pushed as a route: drop it */
                (void)flux_msg_route_pop (msg);
                if ((idx = child_index (b, peer_rank)) >= 0)
                    untrack_response (b, idx, msg);
            }
            router_response (b, msg);
            break;
        case FLUX_MSGTYPE_EVENT:
            if (where == OVERLAY_DOWNSTREAM)
                (void)router_publish (b, msg); /* publish request */
            else
                router_event (b, msg);
            break;
        default:
            flux_msg_decref (msg);
    }
}

/* ---- from the broker's own services ---- */

/* Route what the broker's own services sent (at most 64 messages; past
 * deadline, at most one more event). */
static void self_drain (struct broker *b, uint64_t deadline)
{
    int n;

    for (n = 0; n < 64; n++) {
        flux_msg_t *msg = flux_msgpipe_recv (b->self_pipe, 0);
        int type = 0;
        if (!msg)
            break;
        b->cur.self_routed++;
        msgcount_add (b->msgcount, "self", msg);
        (void)flux_msg_set_cred (
            msg, (struct flux_msg_cred){b->owner,
                                        FLUX_ROLE_OWNER | FLUX_ROLE_LOCAL});
        (void)flux_msg_get_type (msg, &type);
        if (type == FLUX_MSGTYPE_REQUEST) {
            if (flux_msg_route_push (msg, b->uuid) < 0)
                flux_msg_decref (msg);
            else
                router_request (b, msg, b->self);
        }
        else if (type == FLUX_MSGTYPE_RESPONSE) {
            if (!fanout_hold_answer (b, msg))
                router_response (b, msg);
        }
        else if (type == FLUX_MSGTYPE_EVENT) {
            (void)router_publish (b, msg);
            /* the rest waits for the next turn past the budget
             * (self_prep_cb keeps the loop from blocking while the pipe
             * holds messages) */
            if (uv_hrtime () >= deadline)
                break;
        }
        else
            flux_msg_decref (msg);
    }
}

static void self_idle_cb (uv_idle_t *w)
{
}

/* The CPU time of the broker's thread (a waiting thread uses none, so a
 * turn's is its work, whatever the machine's load). */
static uint64_t thread_cpu_ns (void)
{
    struct timespec ts;

    if (clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Reading the thread's CPU clock is a system call (CLOCK_MONOTONIC, read
 * by uv_hrtime(), is not), and the turn's input checks it after each
 * client read and each message its services take: about 5% of the
 * broker thread's CPU.  A thread uses at most the time that passes, so
 * the CPU time of the last reading plus the monotonic time since bounds
 * it from above: below the input deadline that bound is the answer; at
 * or past it the clock is read.  Thread-local: only the broker's thread
 * asks. */
static __thread uint64_t cpu_ref, cpu_ref_wall, cpu_watch;

/* Read the thread's CPU time, and keep it as the reference. */
static uint64_t cpu_sample (void)
{
    cpu_ref_wall = uv_hrtime (); /* before: the bound counts the read */
    cpu_ref = thread_cpu_ns ();
    return cpu_ref;
}

/* The thread's CPU time for a comparison with the input deadline
 * (cpu_watch): exact once the deadline may be reached, before that a
 * bound above it. */
static uint64_t turn_cpu_ns (void)
{
    uint64_t bound = cpu_ref + (uv_hrtime () - cpu_ref_wall);

    if (cpu_watch && bound < cpu_watch)
        return bound;
    return cpu_sample ();
}

/* ---- the messages waiting for the broker's own services ----
 *
 * Each carries, in a ring beside the pipe's queue, the turn it was
 * queued in, so that the services' taking it (self_gate) knows how many
 * turns it waited: "self-wait-turns-max" in broker.stats-get. */

static void selfq_stamp (struct broker *b)
{
    if (b->selfq_lost)
        return;
    if (b->selfq_count == b->selfq_size) {
        size_t n = b->selfq_size ? b->selfq_size * 2 : 256;
        uint64_t *a = malloc (n * sizeof (*a));
        if (!a) {
            b->selfq_lost = true; /* until the pipe is empty */
            b->selfq_count = 0;
            return;
        }
        for (size_t i = 0; i < b->selfq_count; i++)
            a[i] = b->selfq_turn[(b->selfq_head + i) % b->selfq_size];
        free (b->selfq_turn);
        b->selfq_turn = a;
        b->selfq_size = n;
        b->selfq_head = 0;
    }
    b->selfq_turn[(b->selfq_head + b->selfq_count++) % b->selfq_size]
        = b->turns;
}

/* The newest stamp goes: its message was not queued. */
static void selfq_unstamp (struct broker *b)
{
    if (!b->selfq_lost && b->selfq_count > 0)
        b->selfq_count--;
}

/* Whether the services' handle may take a message now: at least one a
 * turn, more until the turn's input deadline (self_prep_cb), and past it
 * still those queued in an earlier turn.  Clients were read last turn
 * only for what the services took the turn before, but a turn whose
 * messages cost more CPU takes fewer: under load a ping then waited two
 * turns.  What is taken past the deadline is bounded by that room. */
static bool self_gate (struct flux_msgpipe *pipe, int end, void *arg)
{
    struct broker *b = arg;

    if (b->self_taken > 0 && b->input_deadline
        && turn_cpu_ns () >= b->input_deadline
        && (b->selfq_lost || b->selfq_count == 0
            || b->selfq_turn[b->selfq_head] >= b->turns))
        return false;
    if (flux_msgpipe_count (pipe, end) == 0)
        return true; /* nothing is taken */
    b->self_taken++;
    b->cur.self_msgs++;
    if (!b->selfq_lost && b->selfq_count > 0) {
        uint64_t t = b->selfq_turn[b->selfq_head];
        b->selfq_head = (b->selfq_head + 1) % b->selfq_size;
        b->selfq_count--;
        if (b->turns - t > b->self_wait_max)
            b->self_wait_max = b->turns - t;
    }
    return true;
}

static json_t *turn_record_json (const struct turn_record *r)
{
    return json_pack (
        "{s:f s:f s:f s:f s:f s:I s:I s:I s:I s:I s:I s:I s:I s:I s:I}", "cpu",
        r->cpu / 1e9, "prep", r->prep / 1e9, "input", r->input / 1e9, "io",
        r->io / 1e9, "rest", r->rest / 1e9, "client-reads",
        (json_int_t)r->client_reads, "client-msgs", (json_int_t)r->client_msgs,
        "flushes", (json_int_t)r->flushes, "reaped", (json_int_t)r->reaped,
        "enforced", (json_int_t)r->enforced, "self-msgs",
        (json_int_t)r->self_msgs, "self-routed", (json_int_t)r->self_routed,
        "fanout-sends", (json_int_t)r->fanout_sends, "module-msgs",
        (json_int_t)r->module_msgs, "overlay-msgs",
        (json_int_t)r->overlay_msgs);
}

void router_turn_stats (struct broker *b, json_t *o, bool clear)
{
    struct usock_units u;

    usock_server_units (b->usock, &u, clear);
    if (o) {
        (void)json_object_set_new (
            o, "turns",
            json_integer ((json_int_t)(b->turns - b->turns_cleared)));
        (void)json_object_set_new (o, "turn-cpu-max",
                                   json_real (b->turn_cpu_max / 1e9));
        (void)json_object_set_new (o, "turn-prep-cpu-max",
                                   json_real (b->prep_cpu_max / 1e9));
        (void)json_object_set_new (o, "turn-input-cpu-max",
                                   json_real (b->input_cpu_max / 1e9));
        (void)json_object_set_new (o, "turn-io-cpu-max",
                                   json_real (b->io_cpu_max / 1e9));
        (void)json_object_set_new (o, "turn-rest-cpu-max",
                                   json_real (b->rest_cpu_max / 1e9));
        (void)json_object_set_new (o, "turn-longest",
                                   turn_record_json (&b->longest));
        (void)json_object_set_new (o, "self-wait-turns-max",
                                   json_integer ((json_int_t)b->self_wait_max));
        (void)json_object_set_new (o, "read-wait-turns-max",
                                   json_integer ((json_int_t)u.read_wait_max));
    }
    if (clear) {
        /* the stamps of what waits now stay right: turns goes on */
        b->turn_cpu_max = 0;
        b->prep_cpu_max = 0;
        b->input_cpu_max = 0;
        b->io_cpu_max = 0;
        b->rest_cpu_max = 0;
        b->self_wait_max = 0;
        memset (&b->longest, 0, sizeof (b->longest));
        b->turns_cleared = b->turns;
    }
}

/* The turn that ends now (at cpu, the thread's CPU time): its figures
 * and, if it is the longest, its record.  All come from the same turn:
 * the whole, and its prepare, I/O and rest phases (check, closing,
 * timers, idle: from self_check_cb to now). */
static void turn_end (struct broker *b, uint64_t cpu)
{
    struct turn_record *r = &b->cur;
    struct usock_units u;

    usock_server_units (b->usock, &u, false);
    r->cpu = cpu - b->turn_cpu;
    r->prep = b->cur_prep;
    r->input = b->cur_input;
    r->rest = b->rest_cpu ? cpu - b->rest_cpu : 0;
    r->io = r->cpu - r->prep - r->input - r->rest;
    r->client_reads = u.reads - b->u_reads;
    r->client_msgs = u.msgs - b->u_msgs;
    r->flushes = u.flushes - b->u_flushes;
    r->reaped = u.reaped - b->u_reaped;
    r->enforced = u.enforced - b->u_enforced;
    if (r->cpu > b->turn_cpu_max) {
        b->turn_cpu_max = r->cpu;
        b->longest = *r;
    }
    if (r->prep > b->prep_cpu_max)
        b->prep_cpu_max = r->prep;
    if (r->input > b->input_cpu_max)
        b->input_cpu_max = r->input;
    if (r->io > b->io_cpu_max)
        b->io_cpu_max = r->io;
    if (r->rest > b->rest_cpu_max)
        b->rest_cpu_max = r->rest;
    memset (r, 0, sizeof (*r));
    b->u_reads = u.reads;
    b->u_msgs = u.msgs;
    b->u_flushes = u.flushes;
    b->u_reaped = u.reaped;
    b->u_enforced = u.enforced;
}

/* The bounded work of a loop turn, in its prepare callback: after the
 * last turn's input was read and handed to the services (their answers,
 * a ping's, are routed first), before this turn's input is read.  One
 * budget of TURN_BUDGET_NS is shared by the whole turn.  Three quarters
 * go to the rest of the broker's bounded work: events the broker's
 * services published, the local connector's work (closing clients that
 * were cut off or went away, writing to clients whose writes were
 * deferred: half of the budget while fan-outs are pending, so both go on)
 * and the pending fan-outs (at least one client each turn).  Each part
 * reads the clock after every client, so a turn overruns its share by one
 * client at most.  The turn's input comes last, until the end of the
 * budget and for at least a quarter of it: clients are read (one batch
 * each, round robin: those found readable past the deadline wait for the
 * next turn, first in line) and the broker's own services take the
 * requests read (self_gate: at least one a turn).  Clients are not read
 * while SELF_BACKLOG messages wait for the services, so one client's
 * flood of pings cannot make another's wait behind it for more than a
 * turn ("self-wait-turns-max", "read-wait-turns-max").  The loop is kept
 * from blocking while work is left (the pipe does not signal the
 * router). */
static void self_prep_cb (uv_prepare_t *w)
{
    struct broker *b = w->data;
    uint64_t t0 = uv_hrtime ();
    uint64_t deadline = t0 + TURN_BUDGET_NS / 4 * 3;
    uint64_t cpu = cpu_sample ();
    uint64_t input, work;
    size_t backlog, room;
    bool more;

    if (b->turns++ > b->turns_cleared)
        turn_end (b, cpu);
    else
        memset (&b->cur, 0, sizeof (b->cur));
    b->turn_cpu = cpu;
    b->rest_cpu = 0;
    b->input_deadline = 0; /* the budgeted work's answers are routed */
    cpu_watch = 0;

    if (flux_msgpipe_count (b->self_pipe, 0) > 0)
        self_drain (b, deadline);
    more = usock_server_turn (
        b->usock, b->fanout_head ? t0 + TURN_BUDGET_NS / 8 * 3 : deadline);
    if (b->fanout_head)
        fanout_run (b, deadline);
    if (flux_msgpipe_count (b->self_pipe, 1) == 0 && b->selfq_lost) {
        b->selfq_lost = false;
        b->selfq_count = b->selfq_head = 0;
    }
    /* the input's budget is in the thread's CPU time, so that what a
     * turn reads does not depend on the machine's load */
    work = cpu_sample ();
    input = work + TURN_BUDGET_NS / 4;
    if (input < cpu + TURN_BUDGET_NS)
        input = cpu + TURN_BUDGET_NS;
    b->input_deadline = cpu_watch = input;
    /* what clients may send the services this turn: what they took last
     * turn (if that left some waiting, else SELF_BACKLOG), less what still
     * waits, so that what is read now is taken by the next turn */
    backlog = flux_msgpipe_count (b->self_pipe, 1);
    room = backlog > 0 && b->self_taken < SELF_BACKLOG ? b->self_taken
                                                       : SELF_BACKLOG;
    room = room > backlog ? room - backlog : 0;
    b->self_taken = 0;
    if (usock_server_read_turn (b->usock, input, (unsigned)room))
        more = true;
    if (more || flux_msgpipe_count (b->self_pipe, 0) > 0
        || flux_msgpipe_count (b->self_pipe, 1) > 0 || b->fanout_head)
        uv_idle_start (&b->self_idle, self_idle_cb);
    else
        uv_idle_stop (&b->self_idle);
    b->io_cpu = cpu_sample ();
    b->cur_prep = work - cpu;
    b->cur_input = b->io_cpu - work;
}

/* After the turn's input: route the answers the services left (at most
 * one event: the rest waits for the next turn's budget). */
static void self_check_cb (uv_check_t *w)
{
    struct broker *b = w->data;

    b->rest_cpu = cpu_sample ();
    b->io_cpu = 0;
    if (flux_msgpipe_count (b->self_pipe, 0) > 0)
        self_drain (b, 0);
}

/* ---- modules ---- */

int router_module_add (struct broker *b, struct module *m)
{
    struct peer *p;
    struct flux_msg_cred cred = {b->owner, FLUX_ROLE_OWNER | FLUX_ROLE_LOCAL};

    if (!(p = peer_create (b, PEER_MODULE, module_uuid (m), m, cred)))
        return -1;
    if (peer_add_service (p, module_name (m)) < 0) {
        peer_remove (b, p);
        return -1;
    }
    return 0;
}

static int service_append (const char *name, void *val, void *arg)
{
    json_t *a = ((void **)arg)[0];
    const char *self = ((void **)arg)[1];

    if (strcmp (name, self) != 0
        && json_array_append_new (a, json_string (name)) < 0)
        return -1;
    return 0;
}

json_t *router_module_services (struct broker *b, struct module *m)
{
    struct peer *p = strmap_get (b->peers, module_uuid (m));
    json_t *a = json_array ();
    void *arg[2] = {a, (void *)module_name (m)};

    if (a && p && strmap_foreach (p->services, service_append, arg) != 0) {
        json_decref (a);
        return NULL;
    }
    return a;
}

static int send_disconnect (const char *key, void *val, void *arg);

/* A removed module, like a client that went away, disconnects from every
 * service it sent requests to, so they drop its streams and holds. */
void router_module_remove (struct broker *b, struct module *m)
{
    struct peer *p = strmap_get (b->peers, module_uuid (m));
    if (p) {
        strmap_foreach (p->disconnects, send_disconnect, b);
        peer_remove (b, p);
    }
}

/* ---- the fast path (in a module's thread) ---- */

/* The fast path takes a request for module p only while p's queue is
 * under half of broker.module-queue-limit; past that the request goes
 * through the broker's thread (in order: see module.c send_hook), where
 * the bound is applied and a refusal or a drop is logged. */
static bool fast_room (struct broker *b, struct peer *p)
{
    return b->module_queue_limit == 0
           || module_queued_bytes (p->ptr) < b->module_queue_limit / 2;
}

/* A request of module m for another module's service, on this broker. */
static bool fast_request (struct broker *b, struct module *m, flux_msg_t *msg)
{
    const char *topic;
    uint32_t nodeid;
    struct peer *from, *svc;
    char key[300];
    bool done = false;

    if (flux_msg_get_topic (msg, &topic) < 0
        || flux_msg_get_nodeid (msg, &nodeid) < 0
        || flux_msg_has_flag (msg, FLUX_MSGFLAG_UPSTREAM)
        || (nodeid != FLUX_NODEID_ANY && nodeid != b->rank)
        || !strncmp (topic, "event.", 6) || !strncmp (topic, "service.", 8))
        return false; /* local_request() topics, or not local */
    pthread_rwlock_rdlock (&b->route_lock);
    if (b->services && (svc = service_lookup (b, topic))
        && svc->kind == PEER_MODULE && !module_shutdown_topic (svc, topic)
        && fast_room (b, svc) && (from = strmap_get (b->peers, module_uuid (m)))
        && (!disconnect_key (msg, topic, nodeid, key, sizeof (key))
            || strmap_get (from->disconnects, key))
        && flux_msg_route_push (msg, module_uuid (m)) == 0) {
        module_stamp (m, msg);
        if (module_send (svc->ptr, msg) < 0 && !flux_msg_is_noresponse (msg)) {
            /* the module is going: answer as deliver_local() would */
            flux_msg_t *rsp = flux_response_derive (msg, ENOSYS);
            if (rsp && flux_msg_route_pop (rsp) == 0)
                (void)module_send (m, rsp);
            flux_msg_decref (rsp);
        }
        done = true;
    }
    pthread_rwlock_unlock (&b->route_lock);
    return done;
}

/* A response whose next hop is a module on this broker. */
static bool fast_response (struct broker *b, struct module *m, flux_msg_t *msg)
{
    const char *top = flux_msg_route_last (msg);
    struct peer *p;
    bool done = false;

    if (!top)
        return false;
    pthread_rwlock_rdlock (&b->route_lock);
    if (b->peers && (p = strmap_get (b->peers, top)) && p->kind == PEER_MODULE
        && flux_msg_route_pop (msg) == 0) {
        module_stamp (m, msg);
        (void)module_send (p->ptr, msg); /* gone: dropped, as by the router */
        done = true;
    }
    pthread_rwlock_unlock (&b->route_lock);
    return done;
}

bool router_fast_from_module (struct module *m, flux_msg_t *msg, void *arg)
{
    struct broker *b = arg;
    int type = 0;
    bool done = false;

    if (__atomic_load_n (&b->module_tracing, __ATOMIC_RELAXED))
        return false; /* traced in the broker's thread */
    (void)flux_msg_get_type (msg, &type);
    if (type == FLUX_MSGTYPE_REQUEST)
        done = fast_request (b, m, msg);
    else if (type == FLUX_MSGTYPE_RESPONSE)
        done = fast_response (b, m, msg);
    if (done)
        flux_msg_decref (msg);
    return done;
}

void router_from_module (struct module *m, flux_msg_t *msg, void *arg)
{
    struct broker *b = arg;
    struct peer *p = strmap_get (b->peers, module_uuid (m));
    int type = 0;

    b->cur.module_msgs++;
    msgcount_add (b->msgcount, "module", msg);
    if (trace_set_count (b->module_trace) > 0)
        trace_set_emit (b->module_trace, b->h, false, -1, module_name (m), msg);
    (void)flux_msg_get_type (msg, &type);
    if (type == FLUX_MSGTYPE_REQUEST)
        router_request (b, msg, p);
    else if (type == FLUX_MSGTYPE_RESPONSE)
        router_response (b, msg);
    else if (type == FLUX_MSGTYPE_EVENT)
        (void)router_publish (b, msg);
    else
        flux_msg_decref (msg);
}

/* ---- local clients ---- */

static void client_connected (struct usock_client *c, void *arg)
{
    struct broker *b = arg;
    struct peer *p = peer_create (b, PEER_CLIENT, usock_client_uuid (c), c,
                                  usock_client_cred (c));
    if (!p)
        usock_client_disconnect (c);
    else
        usock_client_aux_set (c, p, NULL);
}

static bool early_allowed (const char *topic)
{
    return !strcmp (topic, "state-machine.wait")
           || !strcmp (topic, "state-machine.get")
           || !strcmp (topic, "attr.get") || !strcmp (topic, "log.dmesg");
}

/* A response from a local client (for a service it registered): routed
 * only if it answers a request the client was handed (owed_take).  One
 * for a module is bounded like an event (module_send_limited): unlike
 * the answers to a module's requests that other modules and brokers
 * send, a client may send any number to a streaming request. */
static void client_response (struct broker *b, struct peer *from,
                             flux_msg_t *msg)
{
    const char *top = flux_msg_route_last (msg);
    struct peer *p;

    if (!owed_take (from, msg)) {
        owed_drop (b, from, msg);
        flux_msg_decref (msg);
        return;
    }
    if (top && !strmap_get (b->peers, top) && child_of_route (b, top) < 0
        && !upq_room (b, msg, UPQ_CLIENT, "dropped")) {
        from->up_dropped++;
        flux_msg_decref (msg); /* it would go up */
        return;
    }
    if (top && (p = strmap_get (b->peers, top)) && p->kind == PEER_MODULE) {
        if (flux_msg_route_pop (msg) == 0)
            (void)module_send_limited (p, msg);
        flux_msg_decref (msg);
        return;
    }
    router_response (b, msg);
}

/* Refuse request msg of client p (its route pushed) before it is
 * counted in flight: the answer goes straight to p, not through
 * router_response(), where it would end another request of p's under the
 * same matchtag (inflight_answered). */
static void client_refuse (struct peer *p, const flux_msg_t *msg, int errnum,
                           const char *text)
{
    flux_msg_t *rsp;

    if (flux_msg_is_noresponse (msg)
        || !(rsp = flux_response_derive (msg, errnum)))
        return;
    if ((!text || flux_msg_set_string (rsp, text) == 0)
        && flux_msg_route_pop (rsp) == 0)
        (void)peer_send (p, rsp);
    flux_msg_decref (rsp);
}

static void client_message (struct usock_client *c, flux_msg_t *msg, void *arg)
{
    struct broker *b = arg;
    struct peer *p = usock_client_aux_get (c);
    const char *topic = NULL;
    int type = 0;

    if (!p) {
        flux_msg_decref (msg);
        return;
    }
    msgcount_add (b->msgcount, "client", msg);
    (void)flux_msg_get_type (msg, &type);
    switch (type) {
        case FLUX_MSGTYPE_REQUEST:
            if (flux_msg_route_push (msg, p->id) < 0) {
                flux_msg_decref (msg);
                return;
            }
            /* Services take the first route as the sender (whose
             * watches a disconnect ends, say): routes a client put below
             * its own id would let it speak for another client.  Only
             * the owner may route for others (a proxy relaying its own
             * clients); a guest's request must come from itself. */
            if (flux_msg_route_count (msg) > 1
                && !(p->cred.rolemask & FLUX_ROLE_OWNER)) {
                client_refuse (p, msg, EPROTO,
                               "a guest's request may not carry routes of "
                               "its own");
                flux_msg_decref (msg);
                return;
            }
            (void)flux_msg_get_topic (msg, &topic);
            if (b->state < STATE_INIT && topic && !early_allowed (topic)) {
                client_refuse (p, msg, EAGAIN, "broker is not yet online");
                flux_msg_decref (msg);
                return;
            }
            char why[200];
            if (inflight_note (p, msg, why, sizeof (why)) < 0) {
                client_refuse (p, msg, ENOSPC, why);
                flux_msg_decref (msg);
                return;
            }
            router_request (b, msg, p);
            break;
        case FLUX_MSGTYPE_RESPONSE:
            client_response (b, p, msg);
            break;
        case FLUX_MSGTYPE_EVENT:
            if (!upq_room (b, msg, UPQ_CLIENT, "dropped")) {
                p->up_dropped++;
                flux_msg_decref (msg);
            }
            else
                (void)router_publish (b, msg);
            break;
        default:
            flux_msg_decref (msg);
    }
}

static int send_disconnect (const char *key, void *val, void *arg)
{
    struct peer *p = val;
    struct broker *b = arg;
    char topic[256];
    unsigned int nodeid;
    int upstream, len = (int)strcspn (key, "\x1f");
    flux_msg_t *msg;

    if (sscanf (key + len, "\x1f%u\x1f%d", &nodeid, &upstream) != 2
        || !disconnect_owed (p, key))
        return 0;
    snprintf (topic, sizeof (topic), "%.*s.disconnect", len, key);
    if (!(msg = flux_request_encode (topic, NULL)))
        return 0;
    if (flux_msg_set_nodeid (msg, nodeid) < 0
        || flux_msg_set_noresponse (msg) < 0
        || (upstream && flux_msg_set_flag (msg, FLUX_MSGFLAG_UPSTREAM) < 0)
        || flux_msg_set_cred (msg, p->cred) < 0
        || flux_msg_route_push (msg, p->id) < 0) {
        flux_msg_decref (msg);
        return 0;
    }
    router_request (b, msg, NULL);
    return 0;
}

static void client_disconnected (struct usock_client *c, void *arg)
{
    struct broker *b = arg;
    struct peer *p = usock_client_aux_get (c);

    if (!p)
        return;
    usock_client_aux_set (c, NULL, NULL);
    strmap_foreach (p->disconnects, send_disconnect, b);
    inflight_release (p);
    peer_remove (b, p);
}

static void usock_log (const char *text, void *arg)
{
    struct broker *b = arg;
    brokerlog_msg (b->log, 4 /* LOG_WARNING */, "local connector: %s", text);
}

static const struct usock_ops usock_ops = {
    .connected = client_connected,
    .message = client_message,
    .disconnected = client_disconnected,
    .log = usock_log,
};

/* A byte count: digits with an optional k, M, G or T (binary multiples). */
static int parse_bytes (const char *s, uint64_t *val)
{
    const char *units = "kMGT";
    const char *u;
    uint64_t v;
    char *end;

    if (!s || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    v = strtoull (s, &end, 10);
    if (errno)
        return -1;
    if (*end) {
        if (end[1] || !(u = strchr (units, *end == 'K' ? 'k' : *end)))
            return -1;
        for (int i = 0; i <= u - units; i++) {
            if (v > UINT64_MAX / 1024)
                return -1;
            v *= 1024;
        }
    }
    *val = v;
    return 0;
}

/* Read the immutable attribute name (or give it the default dflt) as a
 * byte count of at least 'min'. */
int broker_bytes_attr (struct broker *b, const char *name, uint64_t dflt,
                       uint64_t min, size_t *dst)
{
    const char *s = attr_get (b->attrs, name, NULL);
    char buf[32];
    uint64_t v = dflt;

    if (s && (parse_bytes (s, &v) < 0 || v < min || v > SIZE_MAX)) {
        fprintf (stderr,
                 "flux-broker: %s must be a byte count of at least %" PRIu64
                 " (e.g. 64M), not %s\n",
                 name, min, s);
        return -1;
    }
    if (!s) {
        snprintf (buf, sizeof (buf), "%" PRIu64, v);
        if (attr_add (b->attrs, name, buf, ATTR_IMMUTABLE) < 0)
            return -1;
    }
    *dst = (size_t)v;
    return 0;
}

/* Read the immutable attribute name (or give it the default dflt) as a
 * count of at least 1. */
static int count_attr (struct broker *b, const char *name, size_t dflt,
                       size_t *dst)
{
    const char *s = attr_get (b->attrs, name, NULL);
    unsigned long long v = dflt;
    char buf[32], *end;

    if (s) {
        errno = 0;
        v = strtoull (s, &end, 10);
        if (*s < '0' || *s > '9' || *end || errno || v < 1 || v > SIZE_MAX) {
            fprintf (stderr,
                     "flux-broker: %s must be a count of at least 1, "
                     "not %s\n",
                     name, s);
            return -1;
        }
    }
    else {
        snprintf (buf, sizeof (buf), "%zu", dflt);
        if (attr_add (b->attrs, name, buf, ATTR_IMMUTABLE) < 0)
            return -1;
    }
    *dst = (size_t)v;
    return 0;
}

/* Requests one remote sender may have in flight below a child
 * (track_admit). */
#define TRACKED_DEFAULT 65536

/* Requests a client's services may hold unfinished (owed_note). */
#define CLIENT_PENDING_DEFAULT 16384

/* What may wait for one module, in requests' bytes (module_send_bounded). */
#define MODULE_QUEUE_DEFAULT (256u * 1024 * 1024)

/* What one module may have waiting for the broker's thread, in bytes:
 * past it the module's sends wait (module_set_recv_limit). */
#define MODULE_RECVQ_DEFAULT (64u * 1024 * 1024)

/* The local connector's memory bounds (flux-broker(8), LOCAL CONNECTOR). */
static int usock_limits (struct broker *b, struct usock_policy *p)
{
    const char *name = "broker.client-frame-timeout";
    const char *s = attr_get (b->attrs, name, NULL);
    double t = USOCK_FRAME_TIMEOUT_DEFAULT / 1000.;
    size_t conns;

    if (broker_bytes_attr (b, "broker.client-queue-limit",
                           usock_held_default (), 1024 * 1024,
                           &p->max_held_bytes)
            < 0
        || broker_bytes_attr (b, "broker.client-sendq-limit",
                              USOCK_SENDQ_DEFAULT, 64 * 1024,
                              &p->max_sendq_bytes)
               < 0
        || broker_bytes_attr (b, "broker.owner-frame-limit",
                              FLUX_MSG_FRAME_PREFIX + FLUX_MSG_FRAME_MAX, 1024,
                              &p->owner_frame_max)
               < 0
        || broker_bytes_attr (b, "broker.guest-frame-limit",
                              USOCK_GUEST_FRAME_DEFAULT, 1024,
                              &p->guest_frame_max)
               < 0
        || count_attr (b, "broker.guest-connection-limit",
                       usock_guest_conns_default (), &conns)
               < 0)
        return -1;
    p->max_guest_conns = conns > UINT_MAX ? UINT_MAX : (unsigned)conns;
    if (s && (fsd_parse_duration (s, &t) < 0 || t < 0.001 || t > 1e6)) {
        fprintf (stderr, "flux-broker: %s must be a duration (FSD), not %s\n",
                 name, s);
        return -1;
    }
    if (!s && attr_add (b->attrs, name, "60s", ATTR_IMMUTABLE) < 0)
        return -1;
    p->frame_timeout_ms = (uint64_t)(t * 1000);
    return 0;
}

int router_usock_start (struct broker *b, const char *path)
{
    struct usock_policy policy = {.owner = b->owner};
    const char *s;
    flux_error_t error;

    policy.owner_turns = true;       /* in self_prep_cb's budget */
    policy.turn_clock = turn_cpu_ns; /* input is bounded in CPU time */
    if (usock_limits (b, &policy) < 0
        || broker_bytes_attr (b, "broker.module-queue-limit",
                              MODULE_QUEUE_DEFAULT, 64 * 1024,
                              &b->module_queue_limit)
               < 0
        || broker_bytes_attr (b, "broker.module-recvq-limit",
                              MODULE_RECVQ_DEFAULT, 64 * 1024,
                              &b->module_recvq_limit)
               < 0
        || count_attr (b, "broker.client-pending-limit", CLIENT_PENDING_DEFAULT,
                       &b->client_pending_limit)
               < 0
        || count_attr (b, "broker.tracked-rpc-limit", TRACKED_DEFAULT,
                       &b->tracked_limit)
               < 0)
        return -1;
    /* half the send queue limit in open requests (inflight_note) */
    b->client_inflight_limit = policy.max_sendq_bytes / 2 / INFLIGHT_WEIGHT;
    if (b->client_inflight_limit == 0)
        b->client_inflight_limit = 1;
    if ((s = attr_get (b->attrs, "access.allow-guest-user", NULL)))
        policy.allow_guest_user = !strcmp (s, "1") || !strcmp (s, "true");
    if ((s = attr_get (b->attrs, "access.allow-root-owner", NULL)))
        policy.allow_root_owner = !strcmp (s, "1") || !strcmp (s, "true");
    if (!(b->usock = usock_server_create (b->loop, path, &policy, &usock_ops, b,
                                          &error))) {
        fprintf (stderr, "flux-broker: %s\n", error.text);
        return -1;
    }
    return 0;
}

/* ---- setup ---- */

int router_init (struct broker *b)
{
    struct flux_msg_cred cred = {b->owner, FLUX_ROLE_OWNER | FLUX_ROLE_LOCAL};
    int i;

    /* never destroyed: it holds no resources, and module threads still
     * running at teardown take it after router_fini() freed the maps */
    if (pthread_rwlock_init (&b->route_lock, NULL) != 0)
        return -1;
    if (!(b->msgcount = msgcount_create ()) && errno != 0)
        return -1;
    if (!(b->evroute
          = evroute_create (topology_child_count (b->topo, b->rank))))
        return -1;
    if (!(b->peers = strmap_create (peer_free))
        || !(b->services = strmap_create (NULL))
        || !(b->user_inflight = strmap_create (free))
        || !(b->self = peer_create (b, PEER_SELF, b->uuid, NULL, cred)))
        return -1;
    b->nchildren = topology_child_count (b->topo, b->rank);
    b->children = topology_children (b->topo, b->rank);
    if (b->nchildren > 0) {
        if (!(b->tracked = calloc (b->nchildren, sizeof (*b->tracked))))
            return -1;
        for (i = 0; i < b->nchildren; i++)
            if (!(b->tracked[i] = strmap_create (tracked_free)))
                return -1;
    }
    /* both ends are this thread's: no eventfd signals (see broker.h) */
    flux_msgpipe_set_quiet (b->self_pipe, 0);
    flux_msgpipe_set_quiet (b->self_pipe, 1);
    flux_msgpipe_set_recv_gate (b->self_pipe, 1, self_gate, b);
    uv_prepare_init (b->loop, &b->self_prep);
    uv_check_init (b->loop, &b->self_check);
    uv_idle_init (b->loop, &b->self_idle);
    b->self_prep.data = b->self_check.data = b->self_idle.data = b;
    uv_unref ((uv_handle_t *)&b->self_prep);
    uv_unref ((uv_handle_t *)&b->self_check);
    uv_unref ((uv_handle_t *)&b->self_idle);
    uv_prepare_start (&b->self_prep, self_prep_cb);
    uv_check_start (&b->self_check, self_check_cb);
    return 0;
}

/* Register one of the broker's own service names (to the self peer). */
int router_self_service (struct broker *b, const char *name)
{
    return peer_add_service (b->self, name);
}

void router_fini (struct broker *b)
{
    int i;

    if (b->usock) {
        usock_server_destroy (b->usock);
        b->usock = NULL;
    }
    if (b->tracked) {
        for (i = 0; i < b->nchildren; i++)
            strmap_destroy (b->tracked[i]);
        free (b->tracked);
        b->tracked = NULL;
    }
    /* module threads may still be running (they are joined later): the
     * fast path finds the maps gone and leaves their messages to us */
    while (b->fanout_head) /* nothing more is sent */
        fanout_pop (b, false);
    free (b->cpeers);
    b->cpeers = NULL;
    b->ncpeers = b->cpeers_size = b->cpeers_holes = 0;
    free (b->mpeers);
    b->mpeers = NULL;
    b->nmpeers = b->mpeers_size = 0;
    pthread_rwlock_wrlock (&b->route_lock);
    strmap_destroy (b->services);
    b->services = NULL;
    strmap_destroy (b->user_inflight);
    b->user_inflight = NULL;
    strmap_destroy (b->peers); /* frees every peer, self included */
    b->peers = NULL;
    b->self = NULL;
    pthread_rwlock_unlock (&b->route_lock);
    uv_prepare_stop (&b->self_prep);
    uv_check_stop (&b->self_check);
    uv_idle_stop (&b->self_idle);
    free (b->selfq_turn);
    b->selfq_turn = NULL;
    b->selfq_count = b->selfq_size = b->selfq_head = 0;
    b->selfq_lost = true; /* no more stamps */
    msgcount_destroy (b->msgcount);
    b->msgcount = NULL;
    evroute_destroy (b->evroute);
    b->evroute = NULL;
}
