/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* reduce.c - online ranks and R fragments reduced up the TBON (see
 * reduce.h for the protocol). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "overlay/topology.h"
#include "frag.h"
#include "reduce.h"
#include "rlog.h"
#include "rmap.h"

enum child_state { CHILD_IDLE, CHILD_PENDING, CHILD_ACTIVE };

struct child {
    struct reduce *r;
    uint32_t rank;
    enum child_state state;
    bool hello;    /* hello came while a watch was in flight */
    bool want;     /* send a watch once this rank is ready */
    bool reported; /* the current watch has had its first response */
    flux_future_t *f;
    struct idset *online; /* what this child's subtree reported online */
};

struct reduce {
    flux_t *h;
    uint32_t rank, size;
    const struct topology *topo; /* borrowed */
    struct child *children;
    int nchildren;

    bool ready;      /* local discovery done */
    json_t *local_R; /* this rank's own fragment, sent to children */
    bool adopt;      /* take the parent's fragment (same host) */
    reduce_discover_f discover;
    void *discover_arg;
    struct idset *online; /* this subtree's online ranks */
    struct rlist *frag;   /* this subtree's fragment */

    const flux_msg_t *upstream; /* the parent's watch */
    bool first_sent;

    /* changes not yet sent (root: not yet delivered) */
    struct idset *b_online, *b_offline;
    struct rlist *b_frag;
    struct flux_deferred flush;

    uv_timer_t *grace_timer;
    double grace;
    bool grace_over;

    reduce_update_f cb;
    void *arg;
    unsigned long hello_rx, watch_rx, watch_tx;
};

static void send_watch (struct child *c);
static void maybe_watch (struct child *c);
static void check_first (struct reduce *r);

/* ---- changes ---- */

static void flush_cb (struct flux_deferred *d)
{
    struct reduce *r
        = (struct reduce *)((char *)d - offsetof (struct reduce, flush));
    json_t *R = NULL, *o = NULL;
    char *on = NULL, *off = NULL;

    if (idset_empty (r->b_online) && idset_empty (r->b_offline))
        return;
    if (r->b_frag && !(R = rlist_to_R (r->b_frag)))
        goto nomem;
    if (r->rank == 0) {
        if (r->cb)
            r->cb (r->b_online, R, r->b_offline, r->arg);
    }
    else if (r->upstream && r->first_sent) {
        if (!(o = json_object ()))
            goto nomem;
        if (!idset_empty (r->b_online)
            && (!(on = rmap_idset_str (r->b_online))
                || json_object_set_new (o, "online", json_string (on)) < 0))
            goto nomem;
        if (!idset_empty (r->b_offline)
            && (!(off = rmap_idset_str (r->b_offline))
                || json_object_set_new (o, "offline", json_string (off)) < 0))
            goto nomem;
        if (R && json_object_set (o, "R", R) < 0)
            goto nomem;
        if (flux_respond_pack (r->h, r->upstream, "O", o) < 0) {
            rlog (r->h, LOG_ERR, "responding to the parent's watch: %s",
                  strerror (errno));
            flux_msg_decref (r->upstream);
            r->upstream = NULL;
        }
        else
            r->watch_tx++;
    }
    goto done;
nomem:
    rlog (r->h, LOG_ERR, "reduce: out of memory; a change is lost");
done:
    (void)idset_subtract (r->b_online, r->b_online);
    (void)idset_subtract (r->b_offline, r->b_offline);
    rlist_destroy (r->b_frag);
    r->b_frag = NULL;
    free (on);
    free (off);
    json_decref (o);
    json_decref (R);
}

/* Record a change of this subtree (online/offline may be NULL; frag is
 * the fragment of the online ranks, if any). */
static void changed (struct reduce *r, const struct idset *online,
                     const struct rlist *frag, const struct idset *offline)
{
    if (online && idset_add (r->online, online) < 0)
        goto nomem;
    if (offline && idset_subtract (r->online, offline) < 0)
        goto nomem;
    if (frag && frag_merge_rlist (&r->frag, frag) < 0)
        goto nomem;
    if (r->rank > 0 && !r->first_sent) {
        check_first (r); /* the first response carries everything */
        return;
    }
    if (online
        && (idset_subtract (r->b_offline, online) < 0
            || idset_add (r->b_online, online) < 0))
        goto nomem;
    if (offline
        && (idset_subtract (r->b_online, offline) < 0
            || idset_add (r->b_offline, offline) < 0))
        goto nomem;
    if (frag && frag_merge_rlist (&r->b_frag, frag) < 0)
        goto nomem;
    if (!flux_deferred_pending (&r->flush))
        flux_reactor_defer (flux_get_reactor (r->h), &r->flush);
    return;
nomem:
    rlog (r->h, LOG_ERR, "reduce: out of memory recording a change");
}

static bool all_children_reported (struct reduce *r)
{
    for (int i = 0; i < r->nchildren; i++)
        if (!r->children[i].reported)
            return false;
    return true;
}

/* Send the first response on the upstream watch once this subtree is
 * settled: local discovery done, and all children heard from (or the
 * grace period over). */
static void check_first (struct reduce *r)
{
    json_t *R = NULL;
    char *on = NULL;
    int rc;

    if (r->rank == 0 || !r->upstream || r->first_sent || !r->ready
        || (!r->grace_over && !all_children_reported (r)))
        return;
    if (!(on = rmap_idset_str (r->online))
        || (r->frag && !(R = rlist_to_R (r->frag)))) {
        rlog (r->h, LOG_ERR, "reduce: out of memory");
        goto done;
    }
    if (R)
        rc = flux_respond_pack (r->h, r->upstream, "{s:s s:O}", "online", on,
                                "R", R);
    else
        rc = flux_respond_pack (r->h, r->upstream, "{s:s}", "online", on);
    if (rc < 0) {
        rlog (r->h, LOG_ERR, "responding to the parent's watch: %s",
              strerror (errno));
        flux_msg_decref (r->upstream);
        r->upstream = NULL;
        goto done;
    }
    r->watch_tx++;
    r->first_sent = true;
    /* everything so far went out with it */
    (void)idset_subtract (r->b_online, r->b_online);
    (void)idset_subtract (r->b_offline, r->b_offline);
    rlist_destroy (r->b_frag);
    r->b_frag = NULL;
done:
    free (on);
    json_decref (R);
}

static void grace_cb (uv_timer_t *t)
{
    struct reduce *r = t->data;
    r->grace_over = true;
    check_first (r);
}

/* ---- children ---- */

/* The subtree of c is gone (watch failed): its ranks go offline. */
static void child_lost (struct child *c, int errnum, const char *errstr)
{
    struct reduce *r = c->r;
    struct idset *gone = c->online;

    /* the broker logs lost peers; unloading modules are no news */
    if (c->state == CHILD_ACTIVE && errnum != ECONNRESET
        && errnum != EHOSTUNREACH)
        rlog (r->h, LOG_INFO, "rank %u: watch ended (%s%s%s)", c->rank,
              strerror (errnum), errstr ? ": " : "", errstr ? errstr : "");
    flux_future_destroy (c->f);
    c->f = NULL;
    c->state = CHILD_IDLE;
    c->reported = false;
    if (!(c->online = idset_create (0, 0))) {
        c->online = gone;
        (void)idset_subtract (c->online, c->online);
        gone = NULL;
    }
    if (gone && !idset_empty (gone))
        changed (r, NULL, NULL, gone);
    idset_destroy (gone);
    if (c->hello) { /* the child came (back) meanwhile */
        c->hello = false;
        maybe_watch (c);
    }
}

/* Check that every id of s is in the subtree of c; returns the idset. */
static struct idset *subtree_ids (struct child *c, const char *s)
{
    struct idset *ids = idset_decode (s);
    unsigned int id;

    if (!ids)
        return NULL;
    for (id = idset_first (ids); id != IDSET_INVALID_ID;
         id = idset_next (ids, id)) {
        if (id >= c->r->size
            || !topology_in_subtree (c->r->topo, c->rank, id)) {
            idset_destroy (ids);
            errno = EPROTO;
            return NULL;
        }
    }
    return ids;
}

static void watch_cb (flux_future_t *f, void *arg)
{
    struct child *c = arg;
    struct reduce *r = c->r;
    const char *on = NULL, *off = NULL;
    json_t *R = NULL;
    struct idset *online = NULL, *offline = NULL;
    struct rlist *frag = NULL;
    flux_error_t error;

    if (flux_rpc_get_unpack (f, "{s?s s?s s?o}", "online", &on, "offline", &off,
                             "R", &R)
        < 0) {
        child_lost (c, errno, flux_future_error_string (f));
        return;
    }
    r->watch_rx++;
    if ((on && !(online = subtree_ids (c, on)))
        || (off && !(offline = subtree_ids (c, off)))) {
        rlog (r->h, LOG_ERR,
              "rank %u: watch response with ranks outside "
              "its subtree, ignored",
              c->rank);
        goto done;
    }
    if (R && !(frag = rlist_from_R (R, &error))) {
        rlog (r->h, LOG_ERR, "rank %u: bad R fragment: %s", c->rank,
              error.text);
        goto done;
    }
    if (online)
        (void)idset_add (c->online, online);
    if (offline)
        (void)idset_subtract (c->online, offline);
    c->state = CHILD_ACTIVE;
    changed (r, online, frag, offline);
    if (!c->reported) {
        c->reported = true;
        check_first (r);
    }
done:
    rlist_destroy (frag);
    idset_destroy (online);
    idset_destroy (offline);
    flux_future_reset (f);
}

/* The watch carries this rank's own fragment, which a child on the same
 * host takes as its own instead of running hwloc again. */
static void send_watch (struct child *c)
{
    flux_future_t *f;

    if (c->r->local_R)
        f = flux_rpc_pack (c->r->h, "resource.watch", c->rank,
                           FLUX_RPC_STREAMING, "{s:O}", "R", c->r->local_R);
    else
        f = flux_rpc (c->r->h, "resource.watch", NULL, c->rank,
                      FLUX_RPC_STREAMING);
    if (!f || flux_future_then (f, -1., watch_cb, c) < 0) {
        rlog (c->r->h, LOG_ERR, "rank %u: sending resource.watch: %s", c->rank,
              strerror (errno));
        flux_future_destroy (f);
        return;
    }
    c->f = f;
    c->state = CHILD_PENDING;
    c->hello = false;
    c->want = false;
    c->reported = false;
}

/* Watches wait until this rank is ready, so that they carry its R. */
static void maybe_watch (struct child *c)
{
    if (c->r->ready)
        send_watch (c);
    else
        c->want = true;
}

void reduce_hello (struct reduce *r, const flux_msg_t *msg)
{
    int rank, i = -1;
    struct child *c;

    if (flux_request_unpack (msg, NULL, "{s:i}", "rank", &rank) < 0 || rank < 0
        || (uint32_t)rank >= r->size
        || (i = topology_child_index (r->topo, r->rank, (uint32_t)rank)) < 0) {
        rlog (r->h, LOG_ERR, "resource.hello: bad request (not a child)");
        /* hello is NORESPONSE: this reaches only another sender */
        flux_respond_error (r->h, msg, EPROTO,
                            "resource.hello: expected {rank} of a child");
        return;
    }
    r->hello_rx++;
    c = &r->children[i];
    if (c->state == CHILD_IDLE)
        maybe_watch (c);
    else
        c->hello = true; /* rewatch if the stream in flight fails */
}

/* The parent's fragment (one rank) given to this rank. */
static json_t *adopt_R (struct reduce *r, json_t *parent_R)
{
    json_t *exec = json_object_get (parent_R, "execution");
    json_t *R_lite = json_object_get (exec, "R_lite");
    json_t *nodelist = json_object_get (exec, "nodelist");
    json_t *children = json_object_get (json_array_get (R_lite, 0), "children");
    const char *core = json_string_value (json_object_get (children, "core"));
    const char *gpu = json_string_value (json_object_get (children, "gpu"));
    const char *host = json_string_value (json_array_get (nodelist, 0));
    struct rlist *rl = NULL;
    json_t *R = NULL;

    if (json_array_size (R_lite) == 1 && json_array_size (nodelist) == 1 && core
        && host && (rl = rlist_create ())
        && rlist_add_rank (rl, r->rank, host, core, gpu ? gpu : "") == 0)
        R = rlist_to_R (rl);
    rlist_destroy (rl);
    return R;
}

/* First watch on a rank that shares its parent's host: take the parent's
 * fragment, or discover after all if there is none. */
static void adopt (struct reduce *r, json_t *parent_R)
{
    json_t *R = parent_R ? adopt_R (r, parent_R) : NULL;

    r->adopt = false;
    if (R) {
        (void)reduce_local_ready (r, R);
        json_decref (R);
    }
    else if (r->discover)
        r->discover (r->discover_arg);
}

void reduce_watch (struct reduce *r, const flux_msg_t *msg)
{
    const char *errstr = NULL;
    json_t *R = NULL;

    if (r->rank == 0) {
        errstr = "resource.watch: rank 0 has no parent";
        goto error;
    }
    if (!flux_msg_is_streaming (msg)) {
        errstr = "resource.watch requires the streaming flag";
        goto error;
    }
    if (flux_msg_has_payload (msg)
        && flux_request_unpack (msg, NULL, "{s?o !}", "R", &R) < 0) {
        errstr = "resource.watch: expected no payload or {R?:o}";
        goto error;
    }
    flux_msg_decref (r->upstream); /* a new parent module replaces it */
    r->upstream = flux_msg_incref (msg);
    r->first_sent = false;
    if (r->adopt && !r->ready)
        adopt (r, R); /* calls check_first () when ready */
    else
        check_first (r);
    return;
error:
    flux_respond_error (r->h, msg, EPROTO, errstr);
}

void reduce_set_adopt (struct reduce *r, reduce_discover_f discover, void *arg)
{
    r->adopt = true;
    r->discover = discover;
    r->discover_arg = arg;
}

/* ---- setup ---- */

struct reduce *reduce_create (flux_t *h, uint32_t rank,
                              const struct topology *topo, double grace,
                              reduce_update_f cb, void *arg)
{
    struct reduce *r;
    const uint32_t *children;

    if (!h || !topo || rank >= topology_size (topo) || grace < 0) {
        errno = EINVAL;
        return NULL;
    }
    if (!(r = calloc (1, sizeof (*r))))
        return NULL;
    r->h = h;
    r->rank = rank;
    r->size = topology_size (topo);
    r->topo = topo;
    r->grace = grace;
    r->cb = cb;
    r->arg = arg;
    flux_deferred_init (&r->flush, flush_cb);
    if (!(r->online = idset_create (0, 0))
        || !(r->b_online = idset_create (0, 0))
        || !(r->b_offline = idset_create (0, 0)))
        goto nomem;
    r->nchildren = topology_child_count (topo, rank);
    children = topology_children (topo, rank);
    if (r->nchildren > 0) {
        if (!(r->children = calloc (r->nchildren, sizeof (*r->children))))
            goto nomem;
        for (int i = 0; i < r->nchildren; i++) {
            r->children[i].r = r;
            r->children[i].rank = children[i];
            if (!(r->children[i].online = idset_create (0, 0)))
                goto nomem;
        }
    }
    return r;
nomem:
    reduce_destroy (r);
    errno = ENOMEM;
    return NULL;
}

void reduce_destroy (struct reduce *r)
{
    if (r) {
        int saved_errno = errno;
        if (r->upstream) {
            (void)flux_respond_error (r->h, r->upstream, ECONNRESET,
                                      "resource module unloading");
            flux_msg_decref (r->upstream);
        }
        flux_reactor_undefer (&r->flush);
        if (r->grace_timer)
            flux_uv_close_free ((uv_handle_t *)r->grace_timer);
        for (int i = 0; i < r->nchildren; i++) {
            flux_future_destroy (r->children[i].f);
            idset_destroy (r->children[i].online);
        }
        free (r->children);
        rlist_destroy (r->frag);
        rlist_destroy (r->b_frag);
        json_decref (r->local_R);
        idset_destroy (r->online);
        idset_destroy (r->b_online);
        idset_destroy (r->b_offline);
        free (r);
        errno = saved_errno;
    }
}

int reduce_start (struct reduce *r)
{
    uv_loop_t *loop = flux_reactor_uv (flux_get_reactor (r->h));
    flux_future_t *f;

    if (r->nchildren > 0 && r->rank > 0) {
        if (!(r->grace_timer = calloc (1, sizeof (*r->grace_timer))))
            return -1;
        uv_timer_init (loop, r->grace_timer);
        r->grace_timer->data = r;
        uv_timer_start (r->grace_timer, grace_cb, (uint64_t)(r->grace * 1000),
                        0);
        uv_unref ((uv_handle_t *)r->grace_timer);
    }
    else
        r->grace_over = true; /* a leaf waits for nobody */
    if (r->rank > 0) {
        f = flux_rpc_pack (r->h, "resource.hello",
                           (uint32_t)topology_parent (r->topo, r->rank),
                           FLUX_RPC_NORESPONSE, "{s:i}", "rank", (int)r->rank);
        if (!f)
            return -1;
        flux_future_destroy (f);
    }
    for (int i = 0; i < r->nchildren; i++)
        maybe_watch (&r->children[i]);
    return 0;
}

int reduce_local_ready (struct reduce *r, json_t *R)
{
    struct idset *self = idset_create (0, 0);
    struct rlist *frag = NULL;
    flux_error_t error;
    int rc = -1;

    if (!self || idset_set (self, r->rank) < 0)
        goto done;
    if (R && !(frag = rlist_from_R (R, &error))) {
        rlog (r->h, LOG_ERR, "local R: %s", error.text);
        goto done;
    }
    r->ready = true;
    r->local_R = json_incref (R);
    changed (r, self, frag, NULL);
    for (int i = 0; i < r->nchildren; i++)
        if (r->children[i].want)
            send_watch (&r->children[i]);
    rc = 0;
done:
    rlist_destroy (frag);
    idset_destroy (self);
    return rc;
}

json_t *reduce_stats (struct reduce *r)
{
    static const char *names[] = {"idle", "pending", "active"};
    json_t *children = json_object ();
    char *on = rmap_idset_str (r->online);
    json_t *o = NULL;

    if (!children || !on)
        goto done;
    for (int i = 0; i < r->nchildren; i++) {
        char key[16];
        snprintf (key, sizeof (key), "%u", r->children[i].rank);
        if (json_object_set_new (children, key,
                                 json_string (names[r->children[i].state]))
            < 0)
            goto done;
    }
    o = json_pack ("{s:s s:O s:I s:I s:I s:b}", "online", on, "children",
                   children, "hello-rx", (json_int_t)r->hello_rx, "watch-rx",
                   (json_int_t)r->watch_rx, "watch-tx", (json_int_t)r->watch_tx,
                   "first-sent", r->rank == 0 || r->first_sent);
done:
    free (on);
    json_decref (children);
    return o;
}
