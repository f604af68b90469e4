/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* journal.c - a ring of the last `max` resource events and the streams
 * that follow them (RFC 44 "Journal"). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "journal.h"
#include "reqlist.h"

struct journal {
    flux_t *h;
    json_t **events; /* ring of max entries */
    json_t **R;      /* R of a resource-define event, else NULL */
    int max, first, count;
    bool truncated;
    double truncate_ts;
    struct reqlist *streams;
};

struct journal *journal_create (flux_t *h, int max)
{
    struct journal *j;

    if (!h || max < 2) {
        errno = EINVAL;
        return NULL;
    }
    if (!(j = calloc (1, sizeof (*j)))
        || !(j->events = calloc (max, sizeof (*j->events)))
        || !(j->R = calloc (max, sizeof (*j->R)))
        || !(j->streams = reqlist_create (0))) {
        journal_destroy (j);
        errno = ENOMEM;
        return NULL;
    }
    j->h = h;
    j->max = max;
    return j;
}

void journal_destroy (struct journal *j)
{
    if (j) {
        int saved_errno = errno;
        for (int i = 0; j->events && i < j->count; i++) {
            json_decref (j->events[(j->first + i) % j->max]);
            json_decref (j->R[(j->first + i) % j->max]);
        }
        free (j->events);
        free (j->R);
        reqlist_destroy (j->streams);
        free (j);
        errno = saved_errno;
    }
}

struct send_ctx {
    flux_t *h;
    json_t *payload;
};

/* Send payload on one stream; a stream that cannot be answered is
 * dropped. */
static bool send_cb (const flux_msg_t *msg, void *arg)
{
    struct send_ctx *ctx = arg;
    return flux_respond_pack (ctx->h, msg, "O", ctx->payload) < 0;
}

static json_t *response (json_t *events, json_t *R)
{
    json_t *o = json_pack ("{s:O}", "events", events);

    if (o && R && json_object_set (o, "R", R) < 0) {
        json_decref (o);
        return NULL;
    }
    return o;
}

int journal_append (struct journal *j, json_t *entry, json_t *R)
{
    const char *name = json_string_value (json_object_get (entry, "name"));
    struct send_ctx ctx = {.h = j->h};
    int slot;

    if (!name) {
        errno = EINVAL;
        return -1;
    }
    if (strcmp (name, "resource-define") != 0)
        R = NULL;
    if (j->count == j->max) { /* drop the oldest */
        json_t *old = j->events[j->first];
        j->truncated = true;
        j->truncate_ts = json_number_value (json_object_get (old, "timestamp"));
        json_decref (old);
        json_decref (j->R[j->first]);
        j->first = (j->first + 1) % j->max;
        j->count--;
    }
    slot = (j->first + j->count) % j->max;
    j->events[slot] = json_incref (entry);
    j->R[slot] = json_incref (R);
    j->count++;
    if (reqlist_count (j->streams) > 0) {
        json_t *events = json_pack ("[O]", entry);
        if (!events || !(ctx.payload = response (events, R))) {
            json_decref (events);
            errno = ENOMEM;
            return -1;
        }
        json_decref (events);
        reqlist_foreach (j->streams, send_cb, &ctx);
        json_decref (ctx.payload);
    }
    return 0;
}

/* The backlog as one response payload (NULL if empty or on ENOMEM). */
static json_t *backlog (struct journal *j)
{
    json_t *events = json_array (), *R = NULL, *o = NULL;

    if (!events)
        return NULL;
    if (j->truncated
        && json_array_append_new (events, json_pack ("{s:f s:s}", "timestamp",
                                                     j->truncate_ts, "name",
                                                     "truncate"))
               < 0)
        goto done;
    for (int i = 0; i < j->count; i++) {
        int slot = (j->first + i) % j->max;
        if (json_array_append (events, j->events[slot]) < 0)
            goto done;
        if (j->R[slot])
            R = j->R[slot];
    }
    if (json_array_size (events) > 0)
        o = response (events, R);
done:
    json_decref (events);
    return o;
}

void journal_request (struct journal *j, const flux_msg_t *msg)
{
    json_t *o = NULL;
    const char *errstr = NULL;

    if (!flux_msg_is_streaming (msg)) {
        errno = EPROTO;
        errstr = "resource.journal requires the streaming flag";
        goto error;
    }
    if (flux_msg_has_payload (msg)
        && flux_request_unpack (msg, NULL, "{!}") < 0) {
        errno = EPROTO;
        errstr = "resource.journal takes no payload (or {})";
        goto error;
    }
    if ((o = backlog (j)) && flux_respond_pack (j->h, msg, "O", o) < 0)
        goto error;
    if (j->count > 0 && !o) {
        errno = ENOMEM;
        goto error;
    }
    if (flux_respond_pack (j->h, msg, "{s:[]}", "events") < 0
        || reqlist_add (j->streams, msg) < 0)
        goto error;
    json_decref (o);
    return;
error:
    json_decref (o);
    flux_respond_error (j->h, msg, errno, errstr);
}

void journal_cancel (struct journal *j, const flux_msg_t *msg)
{
    const flux_msg_t *req = reqlist_cancel (j->streams, msg);

    if (req) {
        flux_respond_error (j->h, req, ENODATA, NULL);
        flux_msg_decref (req);
    }
}

void journal_disconnect (struct journal *j, const flux_msg_t *msg)
{
    (void)reqlist_disconnect (j->streams, msg);
}

int journal_count (const struct journal *j)
{
    return j->count + (j->truncated ? 1 : 0);
}

int journal_streams (const struct journal *j)
{
    return reqlist_count (j->streams);
}
