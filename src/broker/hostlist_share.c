/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* hostlist_share.c - the hostlist attribute for every rank, through the
 * overlay when PMI gave it to rank 0 only (hostlist_share.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "attr.h"
#include "broker.h"
#include "hostlist_share.h"
#include "log.h"

struct hostlist_share {
    flux_msg_handler_t **handlers;
    flux_future_t *f;        /* our own request to the parent */
    const flux_msg_t **held; /* children's requests until we have it */
    int nheld;
};

static const char *hostlist (struct broker *b)
{
    const char *s = attr_get (b->attrs, "hostlist", NULL);
    return s && *s ? s : NULL;
}

static void respond (struct broker *b, const flux_msg_t *msg, const char *hl)
{
    if ((hl ? flux_respond_pack (b->h, msg, "{s:s}", "hostlist", hl)
            : flux_respond_error (b->h, msg, EAGAIN,
                                  "the hostlist could not be had"))
        < 0)
        brokerlog_msg (b->log, LOG_ERR, "broker.hostlist: responding: %s",
                       strerror (errno));
}

static void release_held (struct broker *b, const char *hl)
{
    struct hostlist_share *hs = b->hostshare;

    for (int i = 0; i < hs->nheld; i++) {
        respond (b, hs->held[i], hl);
        flux_msg_decref (hs->held[i]);
    }
    hs->nheld = 0;
}

static void hostlist_cb (flux_t *h, flux_msg_handler_t *mh,
                         const flux_msg_t *msg, void *arg)
{
    struct broker *b = arg;
    struct hostlist_share *hs = b->hostshare;
    const char *hl = hostlist (b);

    if (flux_request_decode (msg, NULL, NULL) < 0) {
        flux_respond_error (h, msg, EPROTO, "malformed broker.hostlist");
        return;
    }
    if (hl || b->rank == 0) {
        respond (b, msg, hl);
        return;
    }
    /* ours is not here yet: hold it (children only ask, once each) */
    if (hs->nheld >= b->nchildren) {
        flux_respond_error (h, msg, EAGAIN,
                            "this broker has no hostlist to give yet");
        return;
    }
    hs->held[hs->nheld++] = flux_msg_incref (msg);
}

static void fetch_continuation (flux_future_t *f, void *arg)
{
    struct broker *b = arg;
    struct hostlist_share *hs = b->hostshare;
    const char *hl;

    if (flux_rpc_get_unpack (f, "{s:s}", "hostlist", &hl) < 0) {
        brokerlog_msg (b->log, LOG_ERR,
                       "cannot get the hostlist from the parent: %s",
                       future_strerror (f, errno));
        goto error;
    }
    if (!*hl) {
        brokerlog_msg (b->log, LOG_ERR, "the parent gave an empty hostlist");
        goto error;
    }
    if (attr_add (b->attrs, "hostlist", hl, ATTR_IMMUTABLE) < 0) {
        brokerlog_msg (b->log, LOG_ERR, "setting hostlist: %s",
                       strerror (errno));
        goto error;
    }
    release_held (b, hostlist (b));
    hs->f = NULL;
    flux_future_destroy (f);
    if (b->state == STATE_JOIN)
        state_enter (b, STATE_INIT);
    return;
error:
    release_held (b, NULL);
    hs->f = NULL;
    flux_future_destroy (f);
    broker_shutdown (b, 1);
}

int hostlist_share_join (struct broker *b)
{
    struct hostlist_share *hs = b->hostshare;
    flux_msg_t *msg = NULL;

    if (b->rank == 0 || b->size < 2 || hostlist (b))
        return 0;
    if (hs->f)
        return 1; /* asked already (the parent came back) */
    /* addressed by hand: FLUX_NODEID_UPSTREAM would make libflux ask this
     * very broker for its rank, synchronously */
    if (!(msg = flux_request_encode ("broker.hostlist", NULL))
        || flux_msg_set_flag (msg, FLUX_MSGFLAG_UPSTREAM) < 0
        || !(hs->f = flux_rpc_message (b->h, msg, b->rank, 0))
        || flux_future_then (hs->f, -1., fetch_continuation, b) < 0) {
        brokerlog_msg (b->log, LOG_ERR, "broker.hostlist: %s",
                       strerror (errno));
        flux_msg_decref (msg);
        flux_future_destroy (hs->f);
        hs->f = NULL;
        broker_shutdown (b, 1);
        return 1;
    }
    flux_msg_decref (msg);
    return 1;
}

static const struct flux_msg_handler_spec htab[] = {
    {FLUX_MSGTYPE_REQUEST, "broker.hostlist", hostlist_cb, 0},
    FLUX_MSGHANDLER_TABLE_END,
};

int hostlist_share_init (struct broker *b)
{
    struct hostlist_share *hs;

    if (!(hs = calloc (1, sizeof (*hs)))
        || (b->nchildren > 0
            && !(hs->held = calloc (b->nchildren, sizeof (*hs->held))))) {
        free (hs);
        return -1;
    }
    if (flux_msg_handler_addvec (b->h, htab, b, &hs->handlers) < 0) {
        free (hs->held);
        free (hs);
        return -1;
    }
    b->hostshare = hs;
    return 0;
}

void hostlist_share_fini (struct broker *b)
{
    struct hostlist_share *hs = b->hostshare;

    if (hs) {
        int saved_errno = errno;
        for (int i = 0; i < hs->nheld; i++)
            flux_msg_decref (hs->held[i]);
        flux_msg_handler_delvec (hs->handlers);
        flux_future_destroy (hs->f);
        free (hs->held);
        free (hs);
        b->hostshare = NULL;
        errno = saved_errno;
    }
}
