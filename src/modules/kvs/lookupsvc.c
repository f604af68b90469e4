/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* lookupsvc.c - kvs.lookup and kvs.lookup-plus.
 *
 * A lookup runs at once when every object it needs is cached.  Otherwise
 * it is parked: one cache wait per missing blob (the cache loads each
 * blob once however many lookups wait), or a fetch of a namespace this
 * rank has not seen (a cross-namespace symlink), and run again from its
 * captured root when all of them are in.  A disconnecting client's parked
 * lookups are canceled: they are freed when their last wait returns.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libkvs/treeobj.h"

#include "kvs.h"
#include "lookup.h"

struct lookup_req {
    struct list_node node;
    struct kvs_ctx *ctx;
    const flux_msg_t *msg;
    struct lookup *l;
    bool plus;   /* kvs.lookup-plus */
    int rootseq; /* of the captured root (lookup-plus) */
    int nwait;   /* cache waits and fetches outstanding */
    int errnum;  /* first error among them */
    bool canceled;
    /* what was loaded for it, held until it is answered: the walk starts
     * again from the root after each load */
    struct cache_holds holds;
};

static void req_destroy (struct lookup_req *r)
{
    if (r) {
        list_del (&r->node);
        cache_holds_release (r->ctx->cache, &r->holds);
        lookup_destroy (r->l);
        flux_msg_decref (r->msg);
        free (r);
    }
}

static void req_respond (struct lookup_req *r, json_t *val, int errnum)
{
    struct kvs_ctx *ctx = r->ctx;
    const char *ref = lookup_get_rootref (r->l);
    int rc;

    if (r->plus && (errnum == 0 || errnum == ENOENT)) {
        if (errnum)
            rc = flux_respond_pack (ctx->h, r->msg, "{s:i s:i s:s}", "errno",
                                    errnum, "rootseq", r->rootseq, "rootref",
                                    ref);
        else
            rc = flux_respond_pack (ctx->h, r->msg, "{s:O s:i s:s}", "val", val,
                                    "rootseq", r->rootseq, "rootref", ref);
    }
    else if (errnum) {
        kvs_respond_error (ctx, r->msg, errnum, NULL);
        return;
    }
    else
        rc = flux_respond_pack (ctx->h, r->msg, "{s:O}", "val", val);
    if (rc < 0)
        kvs_log (ctx, LOG_ERR, "kvs.lookup: respond: %s", strerror (errno));
}

static void req_run (struct lookup_req *r);

static void req_resume (struct lookup_req *r, int errnum)
{
    if (errnum && !r->errnum)
        r->errnum = errnum;
    if (--r->nwait > 0)
        return;
    if (r->canceled)
        req_destroy (r);
    else if (r->errnum) {
        req_respond (r, NULL, r->errnum);
        req_destroy (r);
    }
    else
        req_run (r);
}

static void req_wait_cb (int errnum, const char *ref, void *arg)
{
    struct lookup_req *r = arg;

    if (errnum == 0)
        cache_holds_add (r->ctx->cache, &r->holds, ref);
    /* a namespace's root that does not exist is not its root */
    if (errnum == ENOENT && r->ctx->rank > 0
        && !strcmp (ref, lookup_get_rootref (r->l))
        && lookup_get_namespace (r->l))
        nssvc_root_missing (r->ctx, lookup_get_namespace (r->l), ref);
    req_resume (r, errnum);
}

static void req_fetch_cb (struct kvs_ctx *ctx, int errnum, void *arg)
{
    req_resume (arg, errnum);
}

/* Park r on what its lookup is missing.  0, or -1 with errno. */
static int req_park (struct lookup_req *r)
{
    struct kvs_ctx *ctx = r->ctx;
    const char *ns = lookup_missing_namespace (r->l);
    int n = lookup_missing_count (r->l);

    r->errnum = 0;
    if (ns) {
        if (nssvc_fetch (ctx, ns, NULL, req_fetch_cb, r) < 0)
            return -1;
        r->nwait++;
        return 0;
    }
    /* count them all first: a wait may not call back synchronously, but
     * keep nwait right even if one fails half way */
    for (int i = 0; i < n; i++) {
        if (cache_wait (ctx->cache, lookup_missing_ref (r->l, i), req_wait_cb,
                        r)
            < 0) {
            if (r->nwait == 0)
                return -1;
            r->errnum = errno; /* answered when the others return */
            break;
        }
        r->nwait++;
    }
    return 0;
}

static void req_run (struct lookup_req *r)
{
    json_t *val = NULL;

    if (lookup_run (r->l, &val) == 0) {
        req_respond (r, val, 0);
        json_decref (val);
        req_destroy (r);
        return;
    }
    if (errno != EAGAIN) {
        req_respond (r, NULL, errno);
        req_destroy (r);
        return;
    }
    if (req_park (r) < 0) {
        req_respond (r, NULL, errno);
        req_destroy (r);
        return;
    }
    if (!list_attached (&r->node))
        list_add_tail (&r->ctx->lookups, &r->node);
}

/* Cross-namespace symlinks: the other namespace's current root, if the
 * requester may read it.
 */
static int get_root_cb (const char *name, char *rootref, size_t size, void *arg)
{
    struct lookup_req *r = arg;
    struct kvs_ns *ns = nstab_lookup (r->ctx->nstab, name);

    if (!ns) {
        errno = r->ctx->rank == 0 ? ENOTSUP : EAGAIN;
        return -1;
    }
    if (!kvs_authorized (r->msg, ns)) {
        errno = EPERM;
        return -1;
    }
    snprintf (rootref, size, "%s", ns->rootref);
    return 0;
}

static void lookup_common (flux_t *h, const flux_msg_t *msg,
                           struct kvs_ctx *ctx, bool plus,
                           flux_msg_handler_f self)
{
    const char *key, *name = NULL,
                     *topic = plus ? "kvs.lookup-plus" : "kvs.lookup";
    int flags, rootseq = 0;
    json_t *rootdir = NULL;
    const char *rootref = NULL;
    struct lookup_req *r;
    struct kvs_ns *ns = NULL;
    bool parked;

    if (flux_request_unpack (msg, NULL, "{s:s s:i s?s s?o s?i}", "key", &key,
                             "flags", &flags, "namespace", &name, "rootdir",
                             &rootdir, "rootseq", &rootseq)
            < 0
        || (!name && !rootdir)) {
        kvs_respond_error (ctx, msg, EPROTO,
                           "%s: expected {key:s flags:i namespace:s}"
                           " or {key:s flags:i rootdir:o}",
                           topic);
        return;
    }
    if (rootdir) {
        if (!treeobj_is_dirref (rootdir) || treeobj_validate (rootdir) < 0
            || !(rootref = treeobj_get_blobref (rootdir, 0))) {
            kvs_respond_error (ctx, msg, EPROTO,
                               "%s: rootdir is not a valid dirref", topic);
            return;
        }
    }
    if (name) {
        if (!(ns = nssvc_get (ctx, name, msg, self, &parked)))
            return;
        if (!rootref) {
            rootref = ns->rootref;
            rootseq = ns->rootseq;
        }
    }
    if (!(r = calloc (1, sizeof (*r)))) {
        kvs_respond_error (ctx, msg, ENOMEM, NULL);
        return;
    }
    list_init (&r->node);
    r->ctx = ctx;
    r->msg = flux_msg_incref (msg);
    r->plus = plus;
    r->rootseq = rootseq;
    if (!(r->l = lookup_create (ctx->cache, name, rootref, key, flags,
                                get_root_cb, r))) {
        kvs_respond_error (ctx, msg, errno == EINVAL ? EPROTO : errno,
                           "%s: cannot start the lookup", topic);
        req_destroy (r);
        return;
    }
    ctx->stats.lookups++;
    req_run (r);
}

void lookup_request_cb (flux_t *h, flux_msg_handler_t *mh,
                        const flux_msg_t *msg, void *arg)
{
    lookup_common (h, msg, arg, false, lookup_request_cb);
}

void lookup_plus_request_cb (flux_t *h, flux_msg_handler_t *mh,
                             const flux_msg_t *msg, void *arg)
{
    lookup_common (h, msg, arg, true, lookup_plus_request_cb);
}

void lookupsvc_disconnect (struct kvs_ctx *ctx, const flux_msg_t *msg)
{
    struct list_node *pos, *tmp;
    struct flux_msg_cred a, b;

    if (flux_msg_get_cred (msg, &b) < 0)
        return;
    list_for_each_safe (pos, tmp, &ctx->lookups)
    {
        struct lookup_req *r = list_entry (pos, struct lookup_req, node);
        if (flux_msg_route_match_first (r->msg, msg)
            && flux_msg_get_cred (r->msg, &a) == 0 && a.userid == b.userid)
            r->canceled = true; /* freed when its last wait returns */
    }
}

int lookupsvc_parked (struct kvs_ctx *ctx)
{
    struct list_node *pos;
    int n = 0;

    for (pos = ctx->lookups.next; pos != &ctx->lookups; pos = pos->next) {
        if (!list_entry (pos, struct lookup_req, node)->canceled)
            n++;
    }
    return n;
}

/* The cache is gone (its waiters dropped): answer and free everything. */
void lookupsvc_teardown (struct kvs_ctx *ctx)
{
    struct list_node *pos, *tmp;

    list_for_each_safe (pos, tmp, &ctx->lookups)
    {
        struct lookup_req *r = list_entry (pos, struct lookup_req, node);
        if (!r->canceled)
            kvs_respond_error (ctx, r->msg, ENOSYS, "kvs module is unloading");
        req_destroy (r);
    }
}
