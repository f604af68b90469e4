/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* watch.c - job-info.eventlog-watch (see info.h).
 *
 * A watcher follows job.<id>.<path> with a kvs-watch WATCH_APPEND
 * lookup and sends each appended line as {event:line}.  For a guest the
 * job's eventlog is read first to check that the guest submitted it.
 * The main eventlog's stream ends after "clean" (the job is inactive and
 * its eventlog will not grow).  Guest paths go to guest.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "info.h"
#include "libkvs/kvs.h"
#include "util.h"

struct watcher {
    struct list_node link;
    struct info *ctx;
    const flux_msg_t *msg;
    flux_jobid_t id;
    char key[320];
    int flags;
    bool main_eventlog;
    flux_future_t *check; /* guest access check */
    flux_future_t *watch; /* the kvs-watch lookup */
    struct info_lines lines;
};

static void watcher_destroy (struct watcher *w)
{
    if (w) {
        list_del (&w->link);
        flux_future_destroy (w->check);
        if (w->watch) {
            (void)flux_kvs_lookup_cancel (w->watch);
            flux_future_destroy (w->watch);
        }
        info_lines_free (&w->lines);
        flux_msg_decref (w->msg);
        free (w);
    }
}

static void end (struct watcher *w, int errnum, const char *text)
{
    info_respond_error (w->ctx, w->msg, errnum, text);
    watcher_destroy (w);
}

void info_watch_destroy_all (struct info *ctx, const flux_msg_t *sender)
{
    struct list_node *pos, *tmp;

    list_for_each_safe (pos, tmp, &ctx->watchers)
    {
        struct watcher *w = list_entry (pos, struct watcher, link);
        if (!sender)
            info_respond_error (ctx, w->msg, ENOSYS, "job-info is unloading");
        else if (!info_disconnect_matches (w->msg, sender))
            continue;
        watcher_destroy (w);
    }
}

static void watch_cb (flux_future_t *f, void *arg)
{
    struct watcher *w = arg;
    struct info *ctx = w->ctx;
    const void *data;
    const char *line;
    size_t len;
    char name[64];

    if (flux_kvs_lookup_is_sentinel (f)) {
        if (flux_respond (ctx->h, w->msg, NULL) < 0)
            info_log (ctx, LOG_ERR, "eventlog-watch: respond: %s",
                      strerror (errno));
        flux_future_reset (f);
        return;
    }
    if (flux_kvs_lookup_get_raw (f, &data, &len) < 0) {
        int errnum = errno;
        flux_future_destroy (w->watch); /* the stream is over: no cancel */
        w->watch = NULL;
        end (w, errnum,
             errnum == ENOENT ? (w->main_eventlog ? "job not found"
                                                  : "eventlog path not found")
                              : NULL);
        return;
    }
    if (info_lines_feed (&w->lines, data, len) < 0) {
        end (w, ENOMEM, NULL);
        return;
    }
    while ((line = info_lines_next (&w->lines, &len))) {
        ctx->responses++;
        if (flux_respond_pack (ctx->h, w->msg, "{s:s%}", "event", line, len)
            < 0)
            info_log (ctx, LOG_ERR, "eventlog-watch: respond: %s",
                      strerror (errno));
        if (w->main_eventlog && info_line_name (line, len, name, sizeof (name))
            && !strcmp (name, "clean")) {
            end (w, ENODATA, NULL);
            return;
        }
    }
    flux_future_reset (f);
}

static int start_watch (struct watcher *w)
{
    int flags = FLUX_KVS_WATCH | FLUX_KVS_WATCH_APPEND;

    if (w->flags & INFO_WATCH_WAITCREATE)
        flags |= FLUX_KVS_WAITCREATE;
    if (w->flags & INFO_WATCH_INITIAL_SENTINEL)
        flags |= FLUX_KVS_WATCH_INITIAL_SENTINEL;
    if (!(w->watch = flux_kvs_lookup (w->ctx->h, NULL, flags, w->key))
        || flux_future_then (w->watch, -1., watch_cb, w) < 0)
        return -1;
    return 0;
}

static void check_cb (flux_future_t *f, void *arg)
{
    struct watcher *w = arg;
    const char *eventlog;

    if (flux_kvs_lookup_get (f, &eventlog) < 0) {
        end (w, errno, errno == ENOENT ? "job not found" : NULL);
        return;
    }
    if (info_allow (w->msg, eventlog) < 0) {
        end (w, errno, errno == EPERM ? "job belongs to another user" : NULL);
        return;
    }
    flux_future_destroy (w->check);
    w->check = NULL;
    if (start_watch (w) < 0)
        end (w, errno, NULL);
}

void info_eventlog_watch (struct info *ctx, const flux_msg_t *msg)
{
    struct watcher *w = NULL;
    json_int_t id;
    const char *path;
    int flags;
    struct flux_msg_cred cred = {0, 0};
    char key[320];

    ctx->nwatches++;
    if (flux_request_unpack (msg, NULL, "{s:I s:s s:i}", "id", &id, "path",
                             &path, "flags", &flags)
            < 0
        || (flags & ~(INFO_WATCH_WAITCREATE | INFO_WATCH_INITIAL_SENTINEL))) {
        info_respond_error (ctx, msg, EPROTO,
                            "expected {id:I, path:s, flags:i (1|2)}");
        return;
    }
    if (!flux_msg_is_streaming (msg)) {
        info_respond_error (ctx, msg, EPROTO,
                            "eventlog-watch requires FLUX_MSGFLAG_STREAMING");
        return;
    }
    if (!strncmp (path, "guest.", 6)) {
        info_guest_watch (ctx, msg, id, path, flags);
        return;
    }
    if (!(w = calloc (1, sizeof (*w))))
        goto error;
    list_init (&w->link);
    w->ctx = ctx;
    w->id = id;
    w->flags = flags;
    w->msg = flux_msg_incref (msg);
    w->main_eventlog = !strcmp (path, "eventlog");
    info_lines_init (&w->lines);
    list_add_tail (&ctx->watchers, &w->link);
    if (info_job_key (w->key, sizeof (w->key), id, path) < 0) {
        end (w, EINVAL, "invalid eventlog path");
        return;
    }
    (void)flux_msg_get_cred (msg, &cred);
    if (cred.rolemask & FLUX_ROLE_OWNER) {
        if (start_watch (w) < 0)
            goto error;
        return;
    }
    if (info_job_key (key, sizeof (key), id, "eventlog") < 0
        || !(w->check = flux_kvs_lookup (
                 ctx->h, NULL,
                 (flags & INFO_WATCH_WAITCREATE) ? FLUX_KVS_WAITCREATE : 0,
                 key))
        || flux_future_then (w->check, -1., check_cb, w) < 0)
        goto error;
    return;
error:
    if (w)
        end (w, errno, NULL);
    else
        info_respond_error (ctx, msg, errno, NULL);
}

void info_eventlog_watch_cancel (struct info *ctx, const flux_msg_t *msg)
{
    struct list_node *pos, *tmp;
    int matchtag;

    if (flux_request_unpack (msg, NULL, "{s:i}", "matchtag", &matchtag) < 0)
        return; /* NORESPONSE */
    list_for_each_safe (pos, tmp, &ctx->watchers)
    {
        struct watcher *w = list_entry (pos, struct watcher, link);
        if (info_cancel_matches (w->msg, msg, matchtag))
            end (w, ENODATA, NULL);
    }
    info_guest_cancel (ctx, msg, (uint32_t)matchtag);
}
