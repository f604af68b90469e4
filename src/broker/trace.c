/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* trace.c - the requests of overlay.trace and module.trace (trace.h). */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "trace.h"

struct tracer {
    const flux_msg_t *req;
    int typemask;
    char *glob;
    int nodeid;   /* -1: any */
    char **names; /* NULL-terminated, or NULL: any */
    bool full;
};

struct trace_set {
    char *topic;
    struct tracer *v;
    size_t n;
};

struct trace_set *trace_set_create (const char *topic)
{
    struct trace_set *ts = calloc (1, sizeof (*ts));

    if (!ts || !(ts->topic = strdup (topic))) {
        free (ts);
        errno = ENOMEM;
        return NULL;
    }
    return ts;
}

static void tracer_free (struct tracer *t)
{
    flux_msg_decref (t->req);
    free (t->glob);
    for (size_t i = 0; t->names && t->names[i]; i++)
        free (t->names[i]);
    free (t->names);
}

void trace_set_destroy (struct trace_set *ts)
{
    if (ts) {
        for (size_t i = 0; i < ts->n; i++)
            tracer_free (&ts->v[i]);
        free (ts->v);
        free (ts->topic);
        free (ts);
    }
}

size_t trace_set_count (const struct trace_set *ts)
{
    return ts ? ts->n : 0;
}

/* names: a JSON array of strings (or NULL) into t->names. */
static int copy_names (struct tracer *t, json_t *names, const char **why)
{
    size_t i, n = json_array_size (names);
    json_t *e;

    if (names && !json_is_array (names))
        goto proto;
    if (n == 0)
        return 0;
    if (!(t->names = calloc (n + 1, sizeof (char *))))
        goto nomem;
    json_array_foreach (names, i, e)
    {
        if (!json_is_string (e))
            goto proto;
        if (!(t->names[i] = strdup (json_string_value (e))))
            goto nomem;
    }
    return 0;
proto:
    *why = "names must be an array of module names";
    errno = EPROTO;
    return -1;
nomem:
    *why = NULL;
    errno = ENOMEM;
    return -1;
}

int trace_set_add (struct trace_set *ts, const flux_msg_t *msg,
                   const char **why)
{
    struct tracer t = {.nodeid = -1};
    const char *glob;
    json_t *names = NULL;
    int full = 0;
    struct tracer *v;

    *why = NULL;
    if (flux_request_unpack (msg, NULL, "{s:i s:s s?i s?o s?b}", "typemask",
                             &t.typemask, "topic_glob", &glob, "nodeid",
                             &t.nodeid, "names", &names, "full", &full)
        < 0) {
        *why = "expected {typemask:i, topic_glob:s, nodeid?:i, names?:[s], "
               "full?:b}";
        errno = EPROTO;
        return -1;
    }
    if (!flux_msg_is_streaming (msg)) {
        *why = "a trace request must be streaming";
        errno = EPROTO;
        return -1;
    }
    if (ts->n >= TRACE_MAX) {
        *why = "too many tracers";
        errno = EAGAIN;
        return -1;
    }
    if (copy_names (&t, names, why) < 0)
        goto error;
    if (!(t.glob = strdup (glob))
        || !(v = realloc (ts->v, (ts->n + 1) * sizeof (*v)))) {
        errno = ENOMEM;
        goto error;
    }
    ts->v = v;
    t.full = full;
    t.req = flux_msg_incref (msg);
    ts->v[ts->n++] = t;
    return 0;
error:
    tracer_free (&t);
    return -1;
}

void trace_set_disconnect (struct trace_set *ts, const flux_msg_t *msg)
{
    size_t i = 0;

    while (ts && i < ts->n) {
        if (flux_msg_route_match_first (ts->v[i].req, msg)) {
            tracer_free (&ts->v[i]);
            ts->v[i] = ts->v[--ts->n];
        }
        else
            i++;
    }
}

static const char *control_name (int type)
{
    static const char *names[]
        = {"heartbeat", "hello", "welcome", "disconnect"};

    return type >= 0 && type < 4 ? names[type] : "control";
}

static bool name_match (char **names, const char *name)
{
    if (!names)
        return true;
    for (size_t i = 0; name && names[i]; i++) {
        if (!strcmp (names[i], name))
            return true;
    }
    return false;
}

static void respond (flux_t *h, struct tracer *t, bool tx, int64_t rank,
                     const char *name, const flux_msg_t *msg, int type,
                     const char *topic)
{
    struct timespec ts;
    const void *data = NULL;
    size_t size = 0;
    int errnum = 0;
    const char *errstr = NULL;
    json_t *payload = NULL;

    if (type == FLUX_MSGTYPE_RESPONSE)
        (void)flux_msg_get_errnum (msg, &errnum);
    if (errnum) {
        if (t->full)
            (void)flux_msg_get_string (msg, &errstr);
    }
    else if (type != FLUX_MSGTYPE_CONTROL
             && flux_msg_get_payload (msg, &data, &size) == 0 && t->full
             && size > 0)
        payload = json_loadb (data, strnlen (data, size), 0, NULL);
    clock_gettime (CLOCK_REALTIME, &ts);
    /* payload's reference is the packer's, whatever happens */
    (void)flux_respond_pack (
        h, t->req, "{s:f s:s s:I s:s? s:i s:s s:I s:o? s:i s:s}", "timestamp",
        ts.tv_sec + ts.tv_nsec * 1e-9, "prefix", tx ? "tx" : "rx", "rank",
        (json_int_t)rank, "name", name, "type", type, "topic", topic,
        "payload_size", (json_int_t)size, "payload", payload, "errnum", errnum,
        "errstr", errstr ? errstr : "");
}

void trace_set_emit (struct trace_set *ts, flux_t *h, bool tx, int64_t rank,
                     const char *name, const flux_msg_t *msg)
{
    int type = 0, ctype, cstatus;
    const char *topic = "";
    char buf[64];

    if (!ts || ts->n == 0)
        return;
    (void)flux_msg_get_type (msg, &type);
    if (type == FLUX_MSGTYPE_CONTROL) {
        if (flux_msg_get_control (msg, &ctype, &cstatus) < 0)
            return;
        snprintf (buf, sizeof (buf), "%s %d", control_name (ctype), cstatus);
        topic = buf;
    }
    else if (flux_msg_get_topic (msg, &topic) < 0 || !strcmp (topic, ts->topic))
        return;
    for (size_t i = 0; i < ts->n; i++) {
        struct tracer *t = &ts->v[i];
        if ((t->typemask & type) && (t->nodeid < 0 || t->nodeid == rank)
            && name_match (t->names, name) && fnmatch (t->glob, topic, 0) == 0)
            respond (h, t, tx, rank, name, msg, type, topic);
    }
}
