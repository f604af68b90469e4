/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* acquire.c - the resource.acquire stream (RFC 28). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "acquire.h"
#include "reqlist.h"
#include "rlog.h"
#include "rmap.h"

struct acquire {
    flux_t *h;
    struct reqlist *req; /* at most one: the acquirer */
    bool started;        /* first response sent */
    bool muted;
    json_t *R; /* the inventory, once defined */
    struct idset *up_copy;
};

struct acquire *acquire_create (flux_t *h)
{
    struct acquire *a = calloc (1, sizeof (*a));

    if (!a || !(a->req = reqlist_create (1))) {
        free (a);
        errno = ENOMEM;
        return NULL;
    }
    a->h = h;
    return a;
}

void acquire_destroy (struct acquire *a)
{
    if (a) {
        int saved_errno = errno;
        reqlist_destroy (a->req);
        json_decref (a->R);
        idset_destroy (a->up_copy);
        free (a);
        errno = saved_errno;
    }
}

static bool first_cb (const flux_msg_t *msg, void *arg)
{
    struct acquire *a = arg;
    char *up = rmap_idset_str (a->up_copy);

    if (!up
        || flux_respond_pack (a->h, msg, "{s:O s:s}", "resources", a->R, "up",
                              up)
               < 0) {
        rlog (a->h, LOG_ERR, "resource.acquire: first response: %s",
              strerror (errno));
        free (up);
        return true; /* drop the stream */
    }
    free (up);
    a->started = true;
    return false;
}

int acquire_define (struct acquire *a, json_t *R, const struct idset *up)
{
    json_decref (a->R);
    idset_destroy (a->up_copy);
    a->R = json_incref (R);
    if (!(a->up_copy = idset_copy (up)))
        return -1;
    reqlist_foreach (a->req, first_cb, a);
    return 0;
}

struct update {
    struct acquire *a;
    json_t *payload;
};

static bool update_cb (const flux_msg_t *msg, void *arg)
{
    struct update *u = arg;
    if (flux_respond_pack (u->a->h, msg, "O", u->payload) < 0) {
        rlog (u->a->h, LOG_ERR, "resource.acquire: update: %s",
              strerror (errno));
        u->a->started = false;
        return true;
    }
    return false;
}

static int add_set (json_t *o, const char *key, const struct idset *ids)
{
    char *s;
    int rc;

    if (!ids || idset_empty (ids))
        return 0;
    if (!(s = rmap_idset_str (ids)))
        return -1;
    rc = json_object_set_new (o, key, json_string (s));
    free (s);
    return rc;
}

void acquire_notify (struct acquire *a, const struct idset *up,
                     const struct idset *down)
{
    struct update u = {.a = a};

    /* keep the up set current for a later acquirer */
    if (a->up_copy
        && ((up && idset_add (a->up_copy, up) < 0)
            || (down && idset_subtract (a->up_copy, down) < 0)))
        rlog (a->h, LOG_ERR, "resource.acquire: out of memory");
    if (!a->started || a->muted
        || ((!up || idset_empty (up)) && (!down || idset_empty (down))))
        return;
    if (!(u.payload = json_object ()) || add_set (u.payload, "up", up) < 0
        || add_set (u.payload, "down", down) < 0) {
        rlog (a->h, LOG_ERR, "resource.acquire: out of memory");
        json_decref (u.payload);
        return;
    }
    reqlist_foreach (a->req, update_cb, &u);
    json_decref (u.payload);
}

void acquire_request (struct acquire *a, const flux_msg_t *msg)
{
    const char *errstr = NULL;
    int errnum = EPROTO;

    if (!flux_msg_is_streaming (msg)) {
        errstr = "resource.acquire requires the streaming flag";
        goto error;
    }
    if (flux_msg_has_payload (msg)
        && flux_request_unpack (msg, NULL, "{!}") < 0) {
        errstr = "resource.acquire takes no payload (or {})";
        goto error;
    }
    if (reqlist_add (a->req, msg) < 0) {
        errnum = errno == EAGAIN ? EBUSY : errno;
        errstr = errnum == EBUSY ? "resources are already acquired by "
                                   "another scheduler (one at a time)"
                                 : NULL;
        goto error;
    }
    a->started = false;
    a->muted = false;
    if (a->R)
        reqlist_foreach (a->req, first_cb, a);
    return;
error:
    flux_respond_error (a->h, msg, errnum, errstr);
}

void acquire_cancel (struct acquire *a, const flux_msg_t *msg)
{
    const flux_msg_t *req = reqlist_cancel (a->req, msg);

    if (req) {
        flux_respond_error (a->h, req, ENODATA, NULL);
        flux_msg_decref (req);
        a->started = false;
    }
}

void acquire_mute (struct acquire *a, const flux_msg_t *msg)
{
    if (flux_msg_has_payload (msg)
        && flux_request_unpack (msg, NULL, "{!}") < 0) {
        flux_respond_error (a->h, msg, EPROTO,
                            "resource.acquire-mute takes {} or no payload");
        return;
    }
    a->muted = true;
    flux_respond (a->h, msg, NULL);
}

void acquire_disconnect (struct acquire *a, const flux_msg_t *msg)
{
    if (reqlist_disconnect (a->req, msg) > 0)
        a->started = false;
}

bool acquire_active (const struct acquire *a)
{
    return reqlist_count (a->req) > 0;
}
