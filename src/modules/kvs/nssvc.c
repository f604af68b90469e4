/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* nssvc.c - namespaces: root updates and their waiters, the namespace
 * requests, the private kvs.namespace-* events, and on ranks > 0
 * learning a namespace from upstream (kvs.getroot) with the requests
 * that needed it parked meanwhile.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libkvs/treeobj.h"

#include "kvs.h"

#define FETCH_RETRY_MAX 200  /* upstream kvs not loaded yet: retry */
#define FETCH_RETRY_DELAY 50 /* ms */

/* ---- root updates and waiters ---- */

struct waiter {
    struct list_node node;
    const flux_msg_t *msg;
    int rootseq;
    bool fixed; /* answer with ref/rootseq, not the namespace's root */
    char ref[BLOBREF_MAX_STRING_SIZE];
};

static void waiter_destroy (struct waiter *w)
{
    if (w) {
        list_del (&w->node);
        flux_msg_decref (w->msg);
        free (w);
    }
}

static void waiter_respond (struct kvs_ctx *ctx, struct kvs_ns *ns,
                            struct waiter *w)
{
    const char *ref = w->fixed ? w->ref : ns->rootref;
    int seq = w->fixed ? w->rootseq : ns->rootseq;

    if (flux_respond_pack (ctx->h, w->msg, "{s:s s:i}", "rootref", ref,
                           "rootseq", seq)
        < 0)
        kvs_log (ctx, LOG_ERR, "responding to a root waiter: %s",
                 strerror (errno));
}

static void wake_waiters (struct kvs_ctx *ctx, struct kvs_ns *ns)
{
    struct list_node *pos, *tmp;

    list_for_each_safe (pos, tmp, &ns->waiters)
    {
        struct waiter *w = list_entry (pos, struct waiter, node);
        if (w->rootseq <= ns->rootseq) {
            waiter_respond (ctx, ns, w);
            waiter_destroy (w);
        }
    }
}

static void fail_waiters (struct kvs_ctx *ctx, struct kvs_ns *ns, int errnum)
{
    struct list_node *pos, *tmp;

    list_for_each_safe (pos, tmp, &ns->waiters)
    {
        struct waiter *w = list_entry (pos, struct waiter, node);
        kvs_respond_error (ctx, w->msg, errnum, "namespace %s was removed",
                           ns->name);
        waiter_destroy (w);
    }
}

int nssvc_wait_root (struct kvs_ctx *ctx, struct kvs_ns *ns,
                     const flux_msg_t *msg, int rootseq, const char *ref)
{
    struct waiter *w;

    if (!(w = calloc (1, sizeof (*w))))
        return -1;
    list_init (&w->node);
    w->msg = flux_msg_incref (msg);
    w->rootseq = rootseq;
    if (ref) {
        w->fixed = true;
        snprintf (w->ref, sizeof (w->ref), "%s", ref);
    }
    if (ns->rootseq >= rootseq) {
        waiter_respond (ctx, ns, w);
        waiter_destroy (w);
    }
    else
        list_add_tail (&ns->waiters, &w->node);
    return 0;
}

void nssvc_set_root (struct kvs_ctx *ctx, struct kvs_ns *ns,
                     const char *rootref, int rootseq)
{
    if (ns->paused) {
        if (rootseq > ns->rootseq && rootseq > ns->held_seq) {
            snprintf (ns->held_ref, sizeof (ns->held_ref), "%s", rootref);
            ns->held_seq = rootseq;
        }
        return;
    }
    if (kvs_ns_advance (ns, rootref, rootseq))
        wake_waiters (ctx, ns);
}

/* Ranks > 0 follow the events of a namespace (kvs.namespace-<NS>-*)
 * while it is in the table or being learned, and only then: the broker
 * routes them only to the subtrees that subscribed (src/broker/
 * evroute.h), so a rank whose clients never touch a job's namespace
 * does not hear of its every commit.  The subscription goes before the
 * getroot that learns the root, on the same path, so no later event is
 * missed.  Nothing waits for the answer. */
static void ns_follow (struct kvs_ctx *ctx, const char *name, bool on)
{
    char topic[300];

    if (ctx->rank == 0)
        return;
    if (snprintf (topic, sizeof (topic), "kvs.namespace-%s-", name)
        >= (int)sizeof (topic)) {
        snprintf (topic, sizeof (topic), "kvs.namespace-");
    }
    flux_future_destroy (flux_rpc_pack (
        ctx->h, on ? "event.subscribe" : "event.unsubscribe", FLUX_NODEID_ANY,
        FLUX_RPC_NORESPONSE, "{s:s}", "topic", topic));
}

/* Take ns out of the table: everything waiting on it gets ENOTSUP. */
static void ns_drop (struct kvs_ctx *ctx, struct kvs_ns *ns)
{
    kvs_ns_incref (ns);
    ns_follow (ctx, ns->name, false);
    nstab_remove (ctx->nstab, ns);
    if (ctx->rank == 0)
        commit_ns_removed (ctx, ns);
    fail_waiters (ctx, ns, ENOTSUP);
    kvs_ns_decref (ns);
}

/* ---- learning namespaces from upstream (ranks > 0) ---- */

struct parked {
    struct list_node node;
    const flux_msg_t *msg;      /* a request to handle again, or NULL */
    flux_msg_handler_f handler; /* ... with this handler */
    nssvc_fetch_f cb;           /* or: call this */
    void *arg;
};

struct fetch {
    struct kvs_ctx *ctx;
    char *name;
    flux_future_t *f;
    uv_timer_t *timer;
    int tries;
    bool resync; /* of a known namespace, from rank 0 (setroot_event) */
    int doubted; /* ... the number of the event not believed, or -1: the
                  * root could not be loaded (nssvc_root_missing) */
    struct list_node parked;
};

/* A list of struct parked (a fetch's, a create's): free every entry. */
static void parked_drop (struct list_node *parked)
{
    struct list_node *pos, *tmp;

    list_for_each_safe (pos, tmp, parked)
    {
        struct parked *p = list_entry (pos, struct parked, node);
        list_del (&p->node);
        flux_msg_decref (p->msg);
        free (p);
    }
}

/* The requests in a list of struct parked. */
static int parked_count (const struct list_node *parked)
{
    int n = 0;

    for (const struct list_node *pos = parked->next; pos != parked;
         pos = pos->next) {
        if (list_entry (pos, struct parked, node)->handler)
            n++;
    }
    return n;
}

/* Answer the requests in a list of struct parked ENOSYS (unloading). */
static void parked_refuse (struct kvs_ctx *ctx, const struct list_node *parked)
{
    for (const struct list_node *pos = parked->next; pos != parked;
         pos = pos->next) {
        struct parked *p = list_entry (pos, struct parked, node);
        if (p->handler)
            kvs_respond_error (ctx, p->msg, ENOSYS, "kvs module is unloading");
    }
}

static void fetch_destroy (void *arg)
{
    struct fetch *fe = arg;
    if (fe) {
        parked_drop (&fe->parked);
        if (fe->timer)
            flux_uv_close_free ((uv_handle_t *)fe->timer);
        flux_future_destroy (fe->f);
        free (fe->name);
        free (fe);
    }
}

static void fetch_complete (struct fetch *fe, int errnum)
{
    struct kvs_ctx *ctx = fe->ctx;
    struct list_node *pos, *tmp;

    /* out of the table first: the callbacks may fetch again */
    (void)dict_take (ctx->fetches, fe->name);
    if (!fe->resync && !nstab_lookup (ctx->nstab, fe->name))
        ns_follow (ctx, fe->name, false); /* not learned */
    list_for_each_safe (pos, tmp, &fe->parked)
    {
        struct parked *p = list_entry (pos, struct parked, node);
        list_del (&p->node);
        if (p->handler) {
            if (errnum)
                kvs_respond_error (ctx, p->msg, errnum,
                                   errnum == ENOTSUP
                                       ? "namespace %s does not exist"
                                       : "cannot learn namespace %s",
                                   fe->name);
            else
                p->handler (ctx->h, NULL, p->msg, ctx);
        }
        else
            p->cb (ctx, errnum, p->arg);
        flux_msg_decref (p->msg);
        free (p);
    }
    fetch_destroy (fe);
}

static int fetch_start (struct fetch *fe);

static void fetch_retry_cb (uv_timer_t *t)
{
    struct fetch *fe = t->data;
    if (fetch_start (fe) < 0)
        fetch_complete (fe, errno);
}

static void fetch_continuation (flux_future_t *f, void *arg)
{
    struct fetch *fe = arg;
    struct kvs_ctx *ctx = fe->ctx;
    const char *ref;
    int seq, owner, flags = 0;
    struct kvs_ns *ns;

    if (flux_rpc_get_unpack (f, "{s:i s:i s:s s?i}", "owner", &owner, "rootseq",
                             &seq, "rootref", &ref, "flags", &flags)
        < 0) {
        int errnum = errno;
        /* the upstream kvs may not be loaded yet */
        if ((errnum == ENOSYS || errnum == EAGAIN || errnum == EHOSTUNREACH)
            && fe->tries < FETCH_RETRY_MAX) {
            flux_future_destroy (fe->f);
            fe->f = NULL;
            if (!fe->timer) {
                if (!(fe->timer = calloc (1, sizeof (*fe->timer)))) {
                    fetch_complete (fe, ENOMEM);
                    return;
                }
                uv_timer_init (flux_reactor_uv (flux_get_reactor (ctx->h)),
                               fe->timer);
                fe->timer->data = fe;
            }
            uv_timer_start (fe->timer, fetch_retry_cb, FETCH_RETRY_DELAY, 0);
            return;
        }
        fetch_complete (fe, errnum);
        return;
    }
    if ((ns = nstab_lookup (ctx->nstab, fe->name)) && fe->resync) {
        /* rank 0's root is the truth, whatever its number */
        if (fe->doubted < 0)
            kvs_log (ctx, LOG_WARNING,
                     "namespace %s: root %d cannot be loaded: root %d from "
                     "rank 0",
                     ns->name, ns->rootseq, seq);
        else
            kvs_log (ctx, LOG_WARNING,
                     "namespace %s: setroot event %d not believed (at %d): "
                     "root %d from rank 0",
                     ns->name, fe->doubted, ns->rootseq, seq);
        if (kvs_ns_set_root (ns, ref, seq))
            wake_waiters (ctx, ns);
    }
    else if (ns)
        nssvc_set_root (ctx, ns, ref, seq);
    else if (fe->resync)
        ; /* removed meanwhile */
    else if (!nstab_add (ctx->nstab, fe->name, (uint32_t)owner, flags, ref,
                         seq)) {
        fetch_complete (fe, errno);
        return;
    }
    fetch_complete (fe, 0);
}

static int fetch_start (struct fetch *fe)
{
    fe->tries++;
    if (!(fe->f = flux_rpc_pack (
              fe->ctx->h, "kvs.getroot", fe->resync ? 0 : FLUX_NODEID_UPSTREAM,
              0, "{s:s s:i}", "namespace", fe->name, "flags", 0))
        || flux_future_then (fe->f, -1., fetch_continuation, fe) < 0)
        return -1;
    return 0;
}

/* Start a fetch of name (doubted >= -1: a resync, see setroot_event)
 * and enter it in ctx->fetches.  NULL with errno. */
static struct fetch *fetch_create (struct kvs_ctx *ctx, const char *name,
                                   bool resync, int doubted)
{
    struct fetch *fe;

    if (!(fe = calloc (1, sizeof (*fe))))
        return NULL;
    fe->ctx = ctx;
    fe->resync = resync;
    fe->doubted = doubted;
    list_init (&fe->parked);
    if (!(fe->name = strdup (name)))
        goto error;
    if (!resync)
        ns_follow (ctx, name, true);
    if (fetch_start (fe) < 0 || dict_insert (ctx->fetches, name, fe) < 0) {
        if (!resync)
            ns_follow (ctx, name, false);
        goto error;
    }
    return fe;
error:
    fetch_destroy (fe);
    return NULL;
}

static int fetch_park (struct kvs_ctx *ctx, const char *name, struct parked *p)
{
    struct fetch *fe;

    if (ctx->rank == 0) {
        errno = ENOTSUP;
        return -1;
    }
    if (!(fe = dict_lookup (ctx->fetches, name))
        && !(fe = fetch_create (ctx, name, false, 0)))
        return -1;
    list_add_tail (&fe->parked, &p->node);
    return 0;
}

int nssvc_fetch (struct kvs_ctx *ctx, const char *name, const flux_msg_t *msg,
                 nssvc_fetch_f cb, void *arg)
{
    struct parked *p;

    if (!(p = calloc (1, sizeof (*p))))
        return -1;
    list_init (&p->node);
    p->cb = cb;
    p->arg = arg;
    if (fetch_park (ctx, name, p) < 0) {
        free (p);
        return -1;
    }
    return 0;
}

struct kvs_ns *nssvc_get (struct kvs_ctx *ctx, const char *name,
                          const flux_msg_t *msg, flux_msg_handler_f handler,
                          bool *parked)
{
    struct kvs_ns *ns;
    struct parked *p;

    *parked = false;
    if ((ns = nstab_lookup (ctx->nstab, name))) {
        if (!kvs_authorized (msg, ns)) {
            kvs_respond_error (ctx, msg, EPERM,
                               "namespace %s belongs to another user", name);
            return NULL;
        }
        return ns;
    }
    if (nssvc_park_on_create (ctx, name, msg, handler)) {
        *parked = true;
        return NULL;
    }
    if (ctx->rank == 0 || !handler) {
        kvs_respond_error (ctx, msg, ENOTSUP, "namespace %s does not exist",
                           name);
        return NULL;
    }
    if (!(p = calloc (1, sizeof (*p)))) {
        kvs_respond_error (ctx, msg, ENOMEM, NULL);
        return NULL;
    }
    list_init (&p->node);
    p->msg = flux_msg_incref (msg);
    p->handler = handler;
    if (fetch_park (ctx, name, p) < 0) {
        kvs_respond_error (ctx, msg, errno, "cannot learn namespace %s", name);
        flux_msg_decref (p->msg);
        free (p);
        return NULL;
    }
    *parked = true;
    return NULL;
}

/* ---- forwarding to rank 0 ---- */

struct forward {
    struct list_node node;
    struct kvs_ctx *ctx;
    const flux_msg_t *msg;
    flux_future_t *f;
};

static void forward_destroy (struct forward *fw)
{
    if (fw) {
        list_del (&fw->node);
        flux_future_destroy (fw->f);
        flux_msg_decref (fw->msg);
        free (fw);
    }
}

static void forward_continuation (flux_future_t *f, void *arg)
{
    struct forward *fw = arg;
    const char *s;

    if (flux_rpc_get (f, &s) < 0)
        kvs_respond_error (fw->ctx, fw->msg, errno, "%s",
                           flux_future_error_string (f)
                               ? flux_future_error_string (f)
                               : strerror (errno));
    else if (flux_respond (fw->ctx->h, fw->msg, s) < 0)
        kvs_log (fw->ctx, LOG_ERR, "forwarded response: %s", strerror (errno));
    forward_destroy (fw);
}

static void forward_to_rank0 (struct kvs_ctx *ctx, const flux_msg_t *msg,
                              const char *topic)
{
    struct forward *fw;
    const char *s = NULL;

    if (flux_request_decode (msg, NULL, &s) < 0) {
        kvs_respond_error (ctx, msg, EPROTO, "%s: malformed request", topic);
        return;
    }
    if (!(fw = calloc (1, sizeof (*fw)))) {
        kvs_respond_error (ctx, msg, ENOMEM, NULL);
        return;
    }
    list_init (&fw->node);
    fw->ctx = ctx;
    fw->msg = flux_msg_incref (msg);
    if (!(fw->f = flux_rpc (ctx->h, topic, s, 0, 0))
        || flux_future_then (fw->f, -1., forward_continuation, fw) < 0) {
        kvs_respond_error (ctx, msg, errno, "%s: cannot forward", topic);
        forward_destroy (fw);
        return;
    }
    list_add_tail (&ctx->forwards, &fw->node);
}

/* ---- requests ---- */

void getroot_request_cb (flux_t *h, flux_msg_handler_t *mh,
                         const flux_msg_t *msg, void *arg)
{
    struct kvs_ctx *ctx = arg;
    const char *name;
    int flags = 0;
    struct kvs_ns *ns;
    bool parked;

    if (flux_request_unpack (msg, NULL, "{s:s s?i}", "namespace", &name,
                             "flags", &flags)
        < 0) {
        kvs_respond_error (ctx, msg, EPROTO,
                           "kvs.getroot: expected {namespace:s flags?:i}");
        return;
    }
    if (!(ns = nssvc_get (ctx, name, msg, getroot_request_cb, &parked)))
        return;
    if (flux_respond_pack (h, msg, "{s:I s:i s:s s:i s:s}", "owner",
                           (json_int_t)ns->owner, "rootseq", ns->rootseq,
                           "rootref", ns->rootref, "flags", ns->flags,
                           "namespace", ns->name)
        < 0)
        kvs_log (ctx, LOG_ERR, "kvs.getroot: respond: %s", strerror (errno));
}

void wait_version_request_cb (flux_t *h, flux_msg_handler_t *mh,
                              const flux_msg_t *msg, void *arg)
{
    struct kvs_ctx *ctx = arg;
    const char *name;
    int seq;
    struct kvs_ns *ns;
    bool parked;

    if (flux_request_unpack (msg, NULL, "{s:i s:s}", "rootseq", &seq,
                             "namespace", &name)
        < 0) {
        kvs_respond_error (
            ctx, msg, EPROTO,
            "kvs.wait-version: expected {rootseq:i namespace:s}");
        return;
    }
    if (!(ns = nssvc_get (ctx, name, msg, wait_version_request_cb, &parked)))
        return;
    if (nssvc_wait_root (ctx, ns, msg, seq, NULL) < 0)
        kvs_respond_error (ctx, msg, errno, NULL);
}

/* namespace-create waits for its root object to be loaded.  Requests
 * for that namespace which arrive meanwhile (a client that sends its
 * first commit right behind the create, without waiting for the answer)
 * wait with it, in arrival order, and are handled again once it is
 * answered: they see the namespace if it was created, ENOTSUP if not.
 */
struct create {
    struct list_node node;
    struct kvs_ctx *ctx;
    const flux_msg_t *msg;
    char *name;
    uint32_t owner;
    char ref[BLOBREF_MAX_STRING_SIZE];
    struct list_node parked; /* struct parked, each with a handler */
};

/* Out of ctx->creates first, so that the requests it held, handled
 * again here, no longer find it. */
static void create_destroy (struct create *c)
{
    if (c) {
        struct kvs_ctx *ctx = c->ctx;
        struct list_node *pos, *tmp;

        list_del (&c->node);
        list_for_each_safe (pos, tmp, &c->parked)
        {
            struct parked *p = list_entry (pos, struct parked, node);
            list_del (&p->node);
            p->handler (ctx->h, NULL, p->msg, ctx);
            flux_msg_decref (p->msg);
            free (p);
        }
        flux_msg_decref (c->msg);
        free (c->name);
        free (c);
    }
}

bool nssvc_park_on_create (struct kvs_ctx *ctx, const char *name,
                           const flux_msg_t *msg, flux_msg_handler_f handler)
{
    struct list_node *pos;
    struct parked *p;

    if (ctx->rank != 0 || !handler)
        return false;
    for (pos = ctx->creates.next; pos != &ctx->creates; pos = pos->next) {
        struct create *c = list_entry (pos, struct create, node);
        if (strcmp (c->name, name) != 0)
            continue;
        if (!(p = calloc (1, sizeof (*p))))
            return false; /* answered as if there were no create */
        list_init (&p->node);
        p->msg = flux_msg_incref (msg);
        p->handler = handler;
        list_add_tail (&c->parked, &p->node);
        return true;
    }
    return false;
}

static void publish (struct kvs_ctx *ctx, flux_msg_t *ev)
{
    if (!ev || flux_msg_set_private (ev) < 0 || flux_send (ctx->h, ev, 0) < 0)
        kvs_log (ctx, LOG_ERR, "publishing a namespace event: %s",
                 strerror (errno));
    flux_msg_decref (ev);
}

static void create_wait_cb (int errnum, const char *ref, void *arg);

/* Create c's namespace once its root is cached.  Returns true when c is
 * finished (answered).
 */
static bool create_run (struct create *c)
{
    struct kvs_ctx *ctx = c->ctx;
    char topic[512];
    json_t *root;

    if (ctx->stopping) {
        /* the unload's checkpoint keeps the namespaces it saw: nothing
         * changes them from then on (the client sends it again on
         * kvs.online) */
        kvs_respond_error (ctx, c->msg, ENOSYS, "kvs module is unloading");
        return true;
    }
    if (nstab_lookup (ctx->nstab, c->name)) {
        kvs_respond_error (ctx, c->msg, EEXIST, "namespace %s exists", c->name);
        return true;
    }
    if (!(root = cache_get_treeobj (ctx->cache, c->ref))) {
        if (errno == ENOENT
            && cache_wait (ctx->cache, c->ref, create_wait_cb, c) == 0)
            return false;
        kvs_respond_error (ctx, c->msg, EINVAL, "rootref %s: %s", c->ref,
                           strerror (errno));
        return true;
    }
    if (!treeobj_is_dir (root) && !treeobj_is_hdir (root)) {
        kvs_respond_error (ctx, c->msg, EINVAL, "rootref %s is not a directory",
                           c->ref);
        return true;
    }
    if (!nstab_add (ctx->nstab, c->name, c->owner, 0, c->ref, 0)) {
        kvs_respond_error (ctx, c->msg, errno, NULL);
        return true;
    }
    snprintf (topic, sizeof (topic), "kvs.namespace-%s-created", c->name);
    publish (ctx, flux_event_pack (topic, "{s:s s:i s:s s:I}", "namespace",
                                   c->name, "rootseq", 0, "rootref", c->ref,
                                   "owner", (json_int_t)c->owner));
    if (flux_respond (ctx->h, c->msg, NULL) < 0)
        kvs_log (ctx, LOG_ERR, "namespace-create: respond: %s",
                 strerror (errno));
    return true;
}

static void create_wait_cb (int errnum, const char *ref, void *arg)
{
    struct create *c = arg;

    if (errnum) {
        kvs_respond_error (c->ctx, c->msg, errnum == ENOENT ? EINVAL : errnum,
                           "rootref %s cannot be loaded: %s", c->ref,
                           strerror (errnum));
        create_destroy (c);
        return;
    }
    if (create_run (c))
        create_destroy (c);
}

void ns_create_request_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg)
{
    struct kvs_ctx *ctx = arg;
    const char *name, *ref;
    json_int_t owner;
    int flags;
    struct create *c;

    if (flux_request_unpack (msg, NULL, "{s:s s:s s:I s:i}", "namespace", &name,
                             "rootref", &ref, "owner", &owner, "flags", &flags)
            < 0
        || !*name) {
        kvs_respond_error (ctx, msg, EPROTO,
                           "kvs.namespace-create: expected {namespace:s"
                           " rootref:s owner:i flags:i}");
        return;
    }
    if (ctx->rank != 0) {
        kvs_respond_error (ctx, msg, EINVAL,
                           "kvs.namespace-create is served by rank 0");
        return;
    }
    if (strlen (name) > KVS_NAMESPACE_NAME_MAX) {
        kvs_respond_error (ctx, msg, EINVAL,
                           "namespace name longer than %d bytes",
                           KVS_NAMESPACE_NAME_MAX);
        return;
    }
    if (flags != 0 || owner < -1 || owner > 0xFFFFFFFFLL
        || blobref_validate (ref) < 0) {
        kvs_respond_error (ctx, msg, EINVAL, "invalid flags, owner or rootref");
        return;
    }
    if (!(c = calloc (1, sizeof (*c))) || !(c->name = strdup (name))) {
        free (c);
        kvs_respond_error (ctx, msg, ENOMEM, NULL);
        return;
    }
    list_init (&c->node);
    list_init (&c->parked);
    c->ctx = ctx;
    c->msg = flux_msg_incref (msg);
    c->owner
        = (owner == -1 || owner == 0xFFFFFFFFLL) ? ctx->owner : (uint32_t)owner;
    snprintf (c->ref, sizeof (c->ref), "%s", ref);
    if (create_run (c))
        create_destroy (c);
    else
        list_add_tail (&ctx->creates, &c->node);
}

void ns_remove_request_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg)
{
    struct kvs_ctx *ctx = arg;
    const char *name;
    struct kvs_ns *ns;
    char topic[512];

    if (flux_request_unpack (msg, NULL, "{s:s}", "namespace", &name) < 0) {
        kvs_respond_error (ctx, msg, EPROTO,
                           "kvs.namespace-remove: expected {namespace:s}");
        return;
    }
    if (ctx->rank != 0) {
        kvs_respond_error (ctx, msg, EINVAL,
                           "kvs.namespace-remove is served by rank 0");
        return;
    }
    if (!strcmp (name, KVS_PRIMARY)) {
        kvs_respond_error (ctx, msg, ENOTSUP,
                           "the primary namespace cannot be removed");
        return;
    }
    if (ctx->stopping) { /* as for a create (create_run) */
        kvs_respond_error (ctx, msg, ENOSYS, "kvs module is unloading");
        return;
    }
    if ((ns = nstab_lookup (ctx->nstab, name))) {
        ns_drop (ctx, ns);
        snprintf (topic, sizeof (topic), "kvs.namespace-%s-removed", name);
        publish (ctx, flux_event_pack (topic, "{s:s}", "namespace", name));
    }
    if (flux_respond (h, msg, NULL) < 0)
        kvs_log (ctx, LOG_ERR, "namespace-remove: respond: %s",
                 strerror (errno));
}

static int list_cb (struct kvs_ns *ns, void *arg)
{
    json_t *a = arg, *o;

    if (!(o = json_pack ("{s:s s:I s:i}", "namespace", ns->name, "owner",
                         (json_int_t)ns->owner, "flags", ns->flags))
        || json_array_append_new (a, o) < 0)
        return -1;
    return 0;
}

void ns_list_request_cb (flux_t *h, flux_msg_handler_t *mh,
                         const flux_msg_t *msg, void *arg)
{
    struct kvs_ctx *ctx = arg;
    json_t *a;

    if (flux_msg_has_payload (msg)
        && flux_request_unpack (msg, NULL, "{}") < 0) {
        kvs_respond_error (ctx, msg, EPROTO,
                           "kvs.namespace-list: expected no payload or {}");
        return;
    }
    if (ctx->rank != 0) {
        forward_to_rank0 (ctx, msg, "kvs.namespace-list");
        return;
    }
    if (!(a = json_array ()) || nstab_foreach (ctx->nstab, list_cb, a) != 0) {
        json_decref (a);
        kvs_respond_error (ctx, msg, ENOMEM, NULL);
        return;
    }
    if (flux_respond_pack (h, msg, "{s:o}", "namespaces", a) < 0)
        kvs_log (ctx, LOG_ERR, "namespace-list: respond: %s", strerror (errno));
}

static struct kvs_ns *pause_target (struct kvs_ctx *ctx, const flux_msg_t *msg)
{
    const char *name = KVS_PRIMARY;
    struct kvs_ns *ns;

    if (flux_msg_has_payload (msg)
        && flux_request_unpack (msg, NULL, "{s?s}", "namespace", &name) < 0) {
        kvs_respond_error (ctx, msg, EPROTO, "expected {namespace?:s}");
        return NULL;
    }
    if (ctx->rank == 0) {
        kvs_respond_error (ctx, msg, EINVAL,
                           "setroot events are applied on ranks > 0 only");
        return NULL;
    }
    if (!(ns = nstab_lookup (ctx->nstab, name))) {
        kvs_respond_error (ctx, msg, ENOTSUP, "namespace %s is not known here",
                           name);
        return NULL;
    }
    return ns;
}

void setroot_pause_request_cb (flux_t *h, flux_msg_handler_t *mh,
                               const flux_msg_t *msg, void *arg)
{
    struct kvs_ctx *ctx = arg;
    struct kvs_ns *ns;

    if (!(ns = pause_target (ctx, msg)))
        return;
    ns->paused = true;
    if (flux_respond (h, msg, NULL) < 0)
        kvs_log (ctx, LOG_ERR, "setroot-pause: respond: %s", strerror (errno));
}

void setroot_unpause_request_cb (flux_t *h, flux_msg_handler_t *mh,
                                 const flux_msg_t *msg, void *arg)
{
    struct kvs_ctx *ctx = arg;
    struct kvs_ns *ns;

    if (!(ns = pause_target (ctx, msg)))
        return;
    ns->paused = false;
    if (ns->held_seq >= 0) {
        nssvc_set_root (ctx, ns, ns->held_ref, ns->held_seq);
        ns->held_seq = -1;
    }
    if (flux_respond (h, msg, NULL) < 0)
        kvs_log (ctx, LOG_ERR, "setroot-unpause: respond: %s",
                 strerror (errno));
}

/* ---- events (ranks > 0) ---- */

/* A setroot event for ns.  The kvs of rank 0 moves a root one number at
 * a time and events arrive in order, so the next one is rootseq + 1 (one
 * at or below is old news: a fetch got ahead of it).  A jump ahead (an
 * event lost) or another root under the current number is not believed:
 * any owner's client may publish any event.  The root is then asked of
 * rank 0, the authority, and taken whatever its number (one resync at a
 * time per namespace; nothing else waits for it).  While a fetch of the
 * namespace is in flight (at start, from upstream), the doubtful event
 * is only dropped: the fetch brings the root.  A forged "next" root
 * cannot be told from a real one: the first lookup that fails to load
 * it (nssvc_root_missing) or the real event under its number resyncs.
 */
static void resync_start (struct kvs_ctx *ctx, struct kvs_ns *ns, int doubted)
{
    if (dict_lookup (ctx->fetches, ns->name))
        return; /* a resync is on its way */
    if (!fetch_create (ctx, ns->name, true, doubted))
        kvs_log (ctx, LOG_ERR, "namespace %s: cannot ask rank 0 for its root",
                 ns->name);
}

static void setroot_event (struct kvs_ctx *ctx, struct kvs_ns *ns,
                           const char *ref, int seq)
{
    if (ns->paused || seq == ns->rootseq + 1) {
        nssvc_set_root (ctx, ns, ref, seq);
        return;
    }
    if (seq < ns->rootseq || (seq == ns->rootseq && !strcmp (ref, ns->rootref)))
        return;
    resync_start (ctx, ns, seq);
}

void nssvc_root_missing (struct kvs_ctx *ctx, const char *name, const char *ref)
{
    struct kvs_ns *ns;

    if (ctx->rank > 0 && (ns = nstab_lookup (ctx->nstab, name)) && !ns->paused
        && !strcmp (ns->rootref, ref))
        resync_start (ctx, ns, -1);
}

void ns_event_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                  void *arg)
{
    struct kvs_ctx *ctx = arg;
    const char *topic, *suffix, *name, *ref;
    json_int_t owner = -1;
    int seq;
    struct kvs_ns *ns;

    if (ctx->rank == 0 || flux_event_decode (msg, &topic, NULL) < 0
        || !(suffix = strrchr (topic, '-')))
        return;
    if (!strcmp (suffix, "-setroot") || !strcmp (suffix, "-created")) {
        if (flux_event_unpack (msg, NULL, "{s:s s:i s:s s?I}", "namespace",
                               &name, "rootseq", &seq, "rootref", &ref, "owner",
                               &owner)
                < 0
            || blobref_validate (ref) < 0) {
            kvs_log (ctx, LOG_ERR, "%s: malformed event", topic);
            return;
        }
        if ((ns = nstab_lookup (ctx->nstab, name))) {
            if (!strcmp (suffix, "-setroot"))
                setroot_event (ctx, ns, ref, seq);
            else
                nssvc_set_root (ctx, ns, ref, seq);
        }
        else if (owner >= 0 && owner <= 0xFFFFFFFFLL)
            (void)nstab_add (ctx->nstab, name, (uint32_t)owner, 0, ref, seq);
    }
    else if (!strcmp (suffix, "-removed")) {
        if (flux_event_unpack (msg, NULL, "{s:s}", "namespace", &name) < 0) {
            kvs_log (ctx, LOG_ERR, "%s: malformed event", topic);
            return;
        }
        if ((ns = nstab_lookup (ctx->nstab, name)))
            ns_drop (ctx, ns);
    }
}

/* ---- disconnect and teardown ---- */

static bool same_sender (const flux_msg_t *a, const flux_msg_t *b)
{
    struct flux_msg_cred ca, cb;

    if (!a || !flux_msg_route_match_first (a, b)
        || flux_msg_get_cred (a, &ca) < 0 || flux_msg_get_cred (b, &cb) < 0)
        return false;
    return ca.userid == cb.userid;
}

static int disconnect_ns (struct kvs_ns *ns, void *arg)
{
    const flux_msg_t *msg = arg;
    struct list_node *pos, *tmp;

    list_for_each_safe (pos, tmp, &ns->waiters)
    {
        struct waiter *w = list_entry (pos, struct waiter, node);
        if (!w->fixed && same_sender (w->msg, msg))
            waiter_destroy (w);
    }
    return 0;
}

/* Drop msg's sender's requests from a list of struct parked. */
static void parked_drop_sender (struct list_node *parked, const flux_msg_t *msg)
{
    struct list_node *pos, *tmp;

    list_for_each_safe (pos, tmp, parked)
    {
        struct parked *p = list_entry (pos, struct parked, node);
        if (p->handler && same_sender (p->msg, msg)) {
            list_del (&p->node);
            flux_msg_decref (p->msg);
            free (p);
        }
    }
}

static int disconnect_fetch (const char *key, void *val, void *arg)
{
    parked_drop_sender (&((struct fetch *)val)->parked, arg);
    return 0;
}

static int count_ns (struct kvs_ns *ns, void *arg)
{
    for (struct list_node *pos = ns->waiters.next; pos != &ns->waiters;
         pos = pos->next)
        (*(int *)arg)++;
    return 0;
}

static int count_fetch (const char *key, void *val, void *arg)
{
    *(int *)arg += parked_count (&((struct fetch *)val)->parked);
    return 0;
}

int nssvc_parked (struct kvs_ctx *ctx)
{
    int n = 0;

    (void)nstab_foreach (ctx->nstab, count_ns, &n);
    (void)dict_foreach (ctx->fetches, count_fetch, &n);
    for (struct list_node *pos = ctx->creates.next; pos != &ctx->creates;
         pos = pos->next)
        n += parked_count (&list_entry (pos, struct create, node)->parked);
    return n;
}

void nssvc_disconnect (struct kvs_ctx *ctx, const flux_msg_t *msg)
{
    (void)nstab_foreach (ctx->nstab, disconnect_ns, (void *)msg);
    (void)dict_foreach (ctx->fetches, disconnect_fetch, (void *)msg);
    for (struct list_node *pos = ctx->creates.next; pos != &ctx->creates;
         pos = pos->next)
        parked_drop_sender (&list_entry (pos, struct create, node)->parked,
                            msg);
}

static int teardown_ns (struct kvs_ns *ns, void *arg)
{
    struct kvs_ctx *ctx = arg;
    struct list_node *pos, *tmp;

    list_for_each_safe (pos, tmp, &ns->waiters)
    {
        struct waiter *w = list_entry (pos, struct waiter, node);
        kvs_respond_error (ctx, w->msg, ENOSYS, "kvs module is unloading");
        waiter_destroy (w);
    }
    return 0;
}

static int teardown_fetch (const char *key, void *val, void *arg)
{
    parked_refuse (arg, &((struct fetch *)val)->parked);
    return 0;
}

void nssvc_teardown (struct kvs_ctx *ctx)
{
    struct list_node *pos, *tmp;

    (void)nstab_foreach (ctx->nstab, teardown_ns, ctx);
    (void)dict_foreach (ctx->fetches, teardown_fetch, ctx);
    dict_destroy (ctx->fetches); /* fetch_destroy on each */
    ctx->fetches = NULL;
    list_for_each_safe (pos, tmp, &ctx->creates)
    {
        struct create *c = list_entry (pos, struct create, node);
        parked_refuse (ctx, &c->parked);
        parked_drop (&c->parked);
        kvs_respond_error (ctx, c->msg, ENOSYS, "kvs module is unloading");
        create_destroy (c);
    }
    list_for_each_safe (pos, tmp, &ctx->forwards)
    {
        struct forward *fw = list_entry (pos, struct forward, node);
        kvs_respond_error (ctx, fw->msg, ENOSYS, "kvs module is unloading");
        forward_destroy (fw);
    }
}

int nssvc_init (struct kvs_ctx *ctx)
{
    if (!(ctx->fetches = dict_create (fetch_destroy)))
        return -1;
    return 0;
}
