/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* groups.c - broker groups: membership reduced up the tree (groups.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "broker.h"
#include "groups.h"
#include "libidset/idset.h"
#include "overlay/overlay.h"
#include "overlay/topology.h"
#include "strmap.h"

struct group {
    struct idset *members; /* ranks of this broker's subtree */
    struct idset *join;    /* not yet sent upstream (rank > 0) */
    struct idset *leave;
    bool dirty;                  /* changed since the last flush */
    const flux_msg_t **watchers; /* rank 0: streaming groups.get */
    size_t nwatchers;
};

struct groups {
    struct broker *b;
    struct strmap *map; /* name -> struct group */
    uv_timer_t *flush;  /* batches changes for one loop turn */
    bool flush_armed;
    size_t nwatchers;
    bool online;       /* this rank is in broker.online */
    int *child_status; /* last overlay status seen, per direct child */
    flux_msg_handler_t **handlers;
};

static void group_free (void *arg)
{
    struct group *g = arg;

    if (g) {
        idset_destroy (g->members);
        idset_destroy (g->join);
        idset_destroy (g->leave);
        for (size_t i = 0; i < g->nwatchers; i++)
            flux_msg_decref (g->watchers[i]);
        free (g->watchers);
        free (g);
    }
}

static bool name_valid (const char *name)
{
    return name && *name && strlen (name) <= GROUPS_NAME_MAX;
}

static struct group *group_get (struct groups *gs, const char *name,
                                bool create)
{
    struct group *g = strmap_get (gs->map, name);

    if (g || !create)
        return g;
    if (strmap_count (gs->map) >= GROUPS_MAX) {
        errno = ENOSPC;
        return NULL;
    }
    if (!(g = calloc (1, sizeof (*g))) || !(g->members = idset_create (0, 0))
        || !(g->join = idset_create (0, 0)) || !(g->leave = idset_create (0, 0))
        || strmap_put (gs->map, name, g) < 0) {
        group_free (g);
        return NULL;
    }
    return g;
}

static void flush_cb (uv_timer_t *t);

static void flush_arm (struct groups *gs)
{
    if (!gs->flush_armed) {
        uv_timer_start (gs->flush, flush_cb, 0, 0);
        gs->flush_armed = true;
    }
}

/* Rank r of this subtree joins (in) or leaves the group. */
static void group_set (struct groups *gs, struct group *g, uint32_t r, bool in)
{
    if (idset_test (g->members, r) == in)
        return;
    if ((in ? idset_set (g->members, r) : idset_clear (g->members, r)) < 0)
        return;
    if (gs->b->rank > 0) {
        (void)idset_set (in ? g->join : g->leave, r);
        (void)idset_clear (in ? g->leave : g->join, r);
    }
    g->dirty = true;
    flush_arm (gs);
}

/* ---- flush: once per loop turn with changes ---- */

static void notify_watchers (struct groups *gs, struct group *g)
{
    char *s;

    if (g->nwatchers == 0)
        return;
    if (!(s = idset_encode (g->members, IDSET_FLAG_RANGE)))
        return;
    for (size_t i = 0; i < g->nwatchers; i++)
        (void)flux_respond_pack (gs->b->h, g->watchers[i], "{s:s}", "members",
                                 s);
    free (s);
}

static int add_update (const char *name, void *val, void *arg)
{
    struct group *g = val;
    json_t *o = arg;
    char *join = NULL, *leave = NULL;
    json_t *u;

    if (!g->dirty || (idset_empty (g->join) && idset_empty (g->leave)))
        return 0;
    if (!(join = idset_encode (g->join, IDSET_FLAG_RANGE))
        || !(leave = idset_encode (g->leave, IDSET_FLAG_RANGE))
        || !(u = json_pack ("{s:s s:s}", "join", join, "leave", leave))
        || json_object_set_new (o, name, u) < 0) {
        free (join);
        free (leave);
        return -1;
    }
    free (join);
    free (leave);
    (void)idset_subtract (g->join, g->join);
    (void)idset_subtract (g->leave, g->leave);
    return 0;
}

static int flush_one (const char *name, void *val, void *arg)
{
    struct group *g = val;
    struct groups *gs = arg;

    if (g->dirty && gs->b->rank == 0)
        notify_watchers (gs, g);
    g->dirty = false;
    return 0;
}

static void send_update (struct groups *gs)
{
    struct broker *b = gs->b;
    json_t *o = json_object ();
    flux_msg_t *msg = NULL;

    if (!o || strmap_foreach (gs->map, add_update, o) != 0
        || json_object_size (o) == 0)
        goto done;
    if (!(msg = flux_request_encode ("groups.update", NULL))
        || flux_msg_pack (msg, "{s:O}", "updates", o) < 0
        || flux_msg_set_nodeid (msg, b->rank) < 0
        || flux_msg_set_flag (msg, FLUX_MSGFLAG_UPSTREAM) < 0
        || flux_msg_set_noresponse (msg) < 0)
        goto done;
    if (flux_send (b->h, msg, 0) < 0)
        brokerlog_msg (b->log, LOG_ERR, "groups.update: %s", strerror (errno));
done:
    flux_msg_decref (msg);
    json_decref (o);
}

static void flush_cb (uv_timer_t *t)
{
    struct groups *gs = t->data;

    gs->flush_armed = false;
    if (gs->b->rank > 0)
        send_update (gs);
    (void)strmap_foreach (gs->map, flush_one, gs);
}

/* ---- services ---- */

static void get_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                    void *arg)
{
    struct groups *gs = arg;
    const char *name;
    struct group *g;
    char *s = NULL;

    if (flux_request_unpack (msg, NULL, "{s:s}", "name", &name) < 0
        || !name_valid (name)) {
        flux_respond_error (h, msg, EPROTO, "groups.get: expected {name:s}");
        return;
    }
    if (gs->b->rank != 0) {
        flux_respond_error (h, msg, EPROTO, "groups.get: send to rank 0");
        return;
    }
    g = group_get (gs, name, flux_msg_is_streaming (msg));
    if (flux_msg_is_streaming (msg)) {
        const flux_msg_t **w;
        if (!g || gs->nwatchers >= GROUPS_MAX_WATCHERS) {
            flux_respond_error (h, msg, g ? EAGAIN : errno,
                                g ? "groups.get: too many watchers" : NULL);
            return;
        }
        if (!(w = realloc (g->watchers, (g->nwatchers + 1) * sizeof (*w)))) {
            flux_respond_error (h, msg, ENOMEM, NULL);
            return;
        }
        g->watchers = w;
        g->watchers[g->nwatchers++] = flux_msg_incref (msg);
        gs->nwatchers++;
    }
    if (g && !(s = idset_encode (g->members, IDSET_FLAG_RANGE))) {
        flux_respond_error (h, msg, errno, NULL);
        return;
    }
    flux_respond_pack (h, msg, "{s:s}", "members", s ? s : "");
    free (s);
}

static int drop_watchers (const char *name, void *val, void *arg)
{
    struct group *g = val;
    void **a = arg;
    struct groups *gs = a[0];
    const flux_msg_t *msg = a[1];
    size_t i = 0;

    while (i < g->nwatchers) {
        if (flux_msg_route_match_first (g->watchers[i], msg)) {
            flux_msg_decref (g->watchers[i]);
            g->watchers[i] = g->watchers[--g->nwatchers];
            gs->nwatchers--;
        }
        else
            i++;
    }
    return 0;
}

static void disconnect_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg)
{
    void *a[2] = {arg, (void *)msg};
    (void)strmap_foreach (((struct groups *)arg)->map, drop_watchers, a);
}

static void join_leave (flux_t *h, const flux_msg_t *msg, struct groups *gs,
                        bool in)
{
    const char *name;
    struct group *g;
    uint32_t r = gs->b->rank;

    if (flux_request_unpack (msg, NULL, "{s:s}", "name", &name) < 0
        || !name_valid (name)) {
        flux_respond_error (h, msg, EPROTO, "expected {name:s}");
        return;
    }
    if (!(g = group_get (gs, name, in))) {
        flux_respond_error (h, msg, in ? errno : ENOENT,
                            in ? NULL : "not a member");
        return;
    }
    if (idset_test (g->members, r) == in) {
        flux_respond_error (h, msg, in ? EEXIST : ENOENT,
                            in ? "already a member" : "not a member");
        return;
    }
    group_set (gs, g, r, in);
    flux_respond (h, msg, NULL);
}

static void join_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    join_leave (h, msg, arg, true);
}

static void leave_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    join_leave (h, msg, arg, false);
}

/* Decode an idset of ranks that must all lie strictly below this broker. */
static struct idset *subtree_idset (struct broker *b, const char *s)
{
    struct idset *ids = idset_decode (s);
    unsigned int r;

    if (!ids)
        return NULL;
    for (r = idset_first (ids); r != IDSET_INVALID_ID;
         r = idset_next (ids, r)) {
        if (r == b->rank || r >= b->size
            || !topology_in_subtree (b->topo, b->rank, r)) {
            idset_destroy (ids);
            errno = EPROTO;
            return NULL;
        }
    }
    return ids;
}

static int apply_update (struct groups *gs, const char *name, json_t *u)
{
    const char *js, *ls;
    struct idset *join = NULL, *leave = NULL;
    struct group *g;
    unsigned int r;
    int rc = -1;

    if (!name_valid (name)
        || json_unpack (u, "{s:s s:s}", "join", &js, "leave", &ls) < 0
        || !(join = subtree_idset (gs->b, js))
        || !(leave = subtree_idset (gs->b, ls))
        || idset_has_intersection (join, leave))
        goto done;
    if (!(g = group_get (gs, name, true)))
        goto done;
    for (r = idset_first (join); r != IDSET_INVALID_ID;
         r = idset_next (join, r))
        group_set (gs, g, r, true);
    for (r = idset_first (leave); r != IDSET_INVALID_ID;
         r = idset_next (leave, r))
        group_set (gs, g, r, false);
    rc = 0;
done:
    idset_destroy (join);
    idset_destroy (leave);
    return rc;
}

static void update_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    struct groups *gs = arg;
    json_t *updates, *u;
    const char *name;

    if (flux_request_unpack (msg, NULL, "{s:o}", "updates", &updates) < 0
        || !json_is_object (updates))
        goto bad;
    json_object_foreach (updates, name, u)
    {
        if (apply_update (gs, name, u) < 0)
            goto bad;
    }
    return;
bad:
    brokerlog_msg (gs->b->log, LOG_ERR,
                   "groups.update: malformed update dropped");
    if (!flux_msg_is_noresponse (msg))
        flux_respond_error (h, msg, EPROTO, "groups.update: malformed");
}

/* ---- the broker's own groups ---- */

static void set_self (struct groups *gs, const char *name, uint32_t r, bool in)
{
    struct group *g = group_get (gs, name, in);
    if (g)
        group_set (gs, g, r, in);
}

struct subtree_arg {
    struct groups *gs;
    uint32_t child;
};

static int subtree_leave (const char *name, void *val, void *arg)
{
    struct group *g = val;
    struct subtree_arg *a = arg;
    struct broker *b = a->gs->b;
    unsigned int r, next;

    for (r = idset_first (g->members); r != IDSET_INVALID_ID; r = next) {
        next = idset_next (g->members, r);
        if (topology_in_subtree (b->topo, a->child, r))
            group_set (a->gs, g, r, false);
    }
    return 0;
}

void groups_state_changed (struct broker *b)
{
    struct groups *gs = b->groups;

    if (!gs)
        return;
    if (!gs->online && b->state >= STATE_QUORUM && b->state < STATE_SHUTDOWN) {
        set_self (gs, "broker.online", b->rank, true);
        gs->online = true;
    }
    else if (gs->online && b->state >= STATE_SHUTDOWN) {
        set_self (gs, "broker.online", b->rank, false);
        gs->online = false;
    }
}

void groups_health_changed (struct broker *b)
{
    struct groups *gs = b->groups;

    if (!gs || !b->overlay)
        return;
    for (int i = 0; i < b->nchildren; i++) {
        uint32_t child = b->children[i];
        int st = overlay_child_status (b->overlay, child, NULL);
        int prev = gs->child_status[i];

        if (st == prev)
            continue;
        gs->child_status[i] = st;
        if (st == OVERLAY_PEER_TORPID)
            set_self (gs, "broker.torpid", child, true);
        else if (prev == OVERLAY_PEER_TORPID)
            set_self (gs, "broker.torpid", child, false);
        if (st == OVERLAY_PEER_LOST || st == OVERLAY_PEER_OFFLINE) {
            struct subtree_arg a = {gs, child};
            (void)strmap_foreach (gs->map, subtree_leave, &a);
        }
    }
}

static int resync_one (const char *name, void *val, void *arg)
{
    struct group *g = val;
    struct groups *gs = arg;

    (void)idset_subtract (g->leave, g->leave);
    (void)idset_subtract (g->join, g->join);
    if (idset_add (g->join, g->members) < 0)
        return -1;
    if (!idset_empty (g->join)) {
        g->dirty = true;
        flush_arm (gs);
    }
    return 0;
}

void groups_parent_online (struct broker *b)
{
    struct groups *gs = b->groups;

    if (!gs || b->rank == 0)
        return;
    if (strmap_foreach (gs->map, resync_one, gs) != 0)
        brokerlog_msg (b->log, LOG_ERR, "groups: cannot resend to parent");
}

static const struct flux_msg_handler_spec htab[] = {
    {FLUX_MSGTYPE_REQUEST, "groups.get", get_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "groups.join", join_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "groups.leave", leave_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "groups.update", update_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "groups.disconnect", disconnect_cb, FLUX_ROLE_ALL},
    FLUX_MSGHANDLER_TABLE_END,
};

int groups_register (struct broker *b)
{
    struct groups *gs;

    if (!(gs = calloc (1, sizeof (*gs))))
        return -1;
    gs->b = b;
    if (!(gs->flush = calloc (1, sizeof (*gs->flush)))
        || !(gs->map = strmap_create (group_free))
        || (b->nchildren > 0
            && !(gs->child_status
                 = calloc (b->nchildren, sizeof (*gs->child_status))))
        || router_self_service (b, "groups") < 0
        || flux_msg_handler_addvec (b->h, htab, gs, &gs->handlers) < 0) {
        flux_msg_handler_delvec (gs->handlers);
        strmap_destroy (gs->map);
        free (gs->child_status);
        free (gs->flush);
        free (gs);
        return -1;
    }
    uv_timer_init (b->loop, gs->flush);
    gs->flush->data = gs;
    b->groups = gs;
    return 0;
}

void groups_unregister (struct broker *b)
{
    struct groups *gs = b->groups;

    if (!gs)
        return;
    b->groups = NULL;
    flux_msg_handler_delvec (gs->handlers);
    strmap_destroy (gs->map);
    free (gs->child_status);
    uv_timer_stop (gs->flush);
    flux_uv_close_free ((uv_handle_t *)gs->flush);
    free (gs);
}
