/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* rpc.c - RPC futures: allocate a matchtag, register a response waiter on
 * the handle, send the request; each response fulfills the future.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attr.h"
#include "future_private.h"
#include "handle_private.h"
#include "msg_decode.h"
#include "response.h"
#include "rpc.h"

struct rpc {
    struct tag_waiter w; /* first: the handle calls back through it */
    flux_future_t *f;
    flux_t *h;
    uint32_t matchtag;
    uint32_t nodeid;
    bool final_received;
};

static bool rpc_deliver (struct tag_waiter *w, const flux_msg_t *msg)
{
    struct rpc *rpc = (struct rpc *)w;
    int errnum = 0;
    bool final;

    (void)flux_msg_get_errnum (msg, &errnum);
    final = errnum != 0 || !flux_msg_is_streaming (msg);
    if (final)
        rpc->final_received = true;
    if (errnum) {
        const char *errstr = NULL;
        if (flux_msg_has_payload (msg))
            (void)flux_msg_get_string (msg, &errstr);
        flux_future_fulfill_error (rpc->f, errnum, errstr);
    }
    else
        flux_future_fulfill (rpc->f, (void *)flux_msg_incref (msg),
                             (flux_free_f)flux_msg_decref);
    return final;
}

static bool rpc_ready (void *arg)
{
    return flux_future_is_ready (arg);
}

static int rpc_wait (flux_future_t *f, double timeout)
{
    struct rpc *rpc = future_impl (f);
    return handle_sync_wait (rpc->h, rpc_ready, f, timeout);
}

static void rpc_destroy (flux_future_t *f)
{
    struct rpc *rpc = future_impl (f);

    /* After the final response the handle has already released the tag
     * (and may have given it to a newer RPC): touch it only if responses
     * may still come, leaving it orphaned until they do. */
    if (rpc->matchtag != FLUX_MATCHTAG_NONE && !rpc->final_received)
        handle_waiter_clear (rpc->h, rpc->matchtag, false);
    free (rpc);
}

static const struct future_ops rpc_ops = {
    .wait = rpc_wait,
    .destroy = rpc_destroy,
};

static int resolve_nodeid (flux_t *h, uint32_t *nodeid, bool *upstream)
{
    *upstream = false;
    if (*nodeid == FLUX_NODEID_UPSTREAM) {
        uint32_t rank;
        if (flux_get_rank (h, &rank) < 0)
            return -1;
        *nodeid = rank;
        *upstream = true;
    }
    return 0;
}

/* Send the request cpy, which the caller owns and no one else holds:
 * it is addressed and tagged in place.  Takes over the caller's
 * reference whatever happens. */
static flux_future_t *rpc_send (flux_t *h, flux_msg_t *cpy, uint32_t nodeid,
                                int flags)
{
    struct rpc *rpc;
    flux_future_t *f;
    bool upstream;

    if (!h || (flags & ~(FLUX_RPC_NORESPONSE | FLUX_RPC_STREAMING))
        || ((flags & FLUX_RPC_NORESPONSE) && (flags & FLUX_RPC_STREAMING))) {
        flux_msg_decref (cpy);
        errno = EINVAL;
        return NULL;
    }
    if (resolve_nodeid (h, &nodeid, &upstream) < 0
        || !(rpc = calloc (1, sizeof (*rpc)))) {
        flux_msg_decref (cpy);
        return NULL;
    }
    rpc->w.deliver = rpc_deliver;
    rpc->h = h;
    rpc->nodeid = nodeid;
    if (!(f = future_create_ops (&rpc_ops, rpc))) {
        free (rpc);
        flux_msg_decref (cpy);
        return NULL;
    }
    rpc->f = f;
    flux_future_set_flux (f, h);
    if (flux_msg_set_nodeid (cpy, nodeid) < 0
        || (upstream && flux_msg_set_flag (cpy, FLUX_MSGFLAG_UPSTREAM) < 0))
        goto error;
    if (flags & FLUX_RPC_NORESPONSE) {
        if (flux_msg_set_noresponse (cpy) < 0
            || flux_msg_set_matchtag (cpy, FLUX_MATCHTAG_NONE) < 0
            || flux_send (h, cpy, 0) < 0)
            goto error;
        flux_future_fulfill (f, NULL, NULL);
    }
    else {
        if ((flags & FLUX_RPC_STREAMING) && flux_msg_set_streaming (cpy) < 0)
            goto error;
        if ((rpc->matchtag = flux_matchtag_alloc (h)) == FLUX_MATCHTAG_NONE)
            goto error;
        if (handle_waiter_set (h, rpc->matchtag, &rpc->w) < 0) {
            flux_matchtag_free (h, rpc->matchtag);
            rpc->matchtag = FLUX_MATCHTAG_NONE;
            goto error;
        }
        if (flux_msg_set_matchtag (cpy, rpc->matchtag) < 0
            || flux_send (h, cpy, 0) < 0) {
            /* nothing will come: release the tag now */
            handle_waiter_clear (h, rpc->matchtag, true);
            rpc->matchtag = FLUX_MATCHTAG_NONE;
            goto error;
        }
    }
    flux_msg_decref (cpy);
    return f;
error:
    flux_msg_decref (cpy);
    flux_future_destroy (f);
    return NULL;
}

flux_future_t *flux_rpc_message (flux_t *h, const flux_msg_t *msg,
                                 uint32_t nodeid, int flags)
{
    flux_msg_t *cpy;

    if (!msg) {
        errno = EINVAL;
        return NULL;
    }
    /* the caller keeps msg as it was: address and tag a copy */
    if (!(cpy = flux_msg_copy (msg, true)))
        return NULL;
    return rpc_send (h, cpy, nodeid, flags);
}

flux_future_t *flux_rpc_raw (flux_t *h, const char *topic, const void *data,
                             size_t len, uint32_t nodeid, int flags)
{
    flux_msg_t *msg;

    if (!(msg = flux_request_encode_raw (topic, data, len)))
        return NULL;
    return rpc_send (h, msg, nodeid, flags); /* no copy: msg is ours */
}

flux_future_t *flux_rpc (flux_t *h, const char *topic, const char *s,
                         uint32_t nodeid, int flags)
{
    return flux_rpc_raw (h, topic, s, s ? strlen (s) + 1 : 0, nodeid, flags);
}

flux_future_t *flux_rpc_pack (flux_t *h, const char *topic, uint32_t nodeid,
                              int flags, const char *fmt, ...)
{
    flux_msg_t *msg;
    va_list ap;
    int rc;

    if (!(msg = flux_request_encode_raw (topic, NULL, 0)))
        return NULL;
    va_start (ap, fmt);
    rc = flux_msg_vpack (msg, fmt, ap);
    va_end (ap);
    if (rc < 0) {
        flux_msg_decref (msg);
        return NULL;
    }
    return rpc_send (h, msg, nodeid, flags); /* no copy: msg is ours */
}

int flux_future_get_msg (flux_future_t *f, const flux_msg_t **msgp)
{
    const void *result;

    if (flux_future_get (f, &result) < 0)
        return -1;
    if (!result) { /* NORESPONSE rpc: there is no message */
        errno = ENODATA;
        return -1;
    }
    if (msgp)
        *msgp = result;
    return 0;
}

int flux_rpc_get (flux_future_t *f, const char **s)
{
    const flux_msg_t *msg;

    if (flux_future_get_msg (f, &msg) < 0)
        return -1;
    return msg_optional_string (msg, s);
}

int flux_rpc_get_raw (flux_future_t *f, const void **data, size_t *len)
{
    const flux_msg_t *msg;

    if (flux_future_get_msg (f, &msg) < 0)
        return -1;
    return msg_optional_raw (msg, data, len);
}

int flux_rpc_get_unpack (flux_future_t *f, const char *fmt, ...)
{
    const flux_msg_t *msg;
    va_list ap;
    int rc;

    if (flux_future_get_msg (f, &msg) < 0)
        return -1;
    va_start (ap, fmt);
    rc = flux_msg_vunpack (msg, fmt, ap);
    va_end (ap);
    return rc;
}

static struct rpc *rpc_of (flux_future_t *f)
{
    return f && future_get_ops (f) == &rpc_ops ? future_impl (f) : NULL;
}

uint32_t flux_rpc_get_matchtag (flux_future_t *f)
{
    struct rpc *rpc = rpc_of (f);
    return rpc ? rpc->matchtag : FLUX_MATCHTAG_NONE;
}

uint32_t flux_rpc_get_nodeid (flux_future_t *f)
{
    struct rpc *rpc = rpc_of (f);
    return rpc ? rpc->nodeid : FLUX_NODEID_ANY;
}
