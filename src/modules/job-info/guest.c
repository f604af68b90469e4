/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* guest.c - job-info.eventlog-watch of guest.<key> paths (see info.h).
 *
 * While a job runs, <key> lives in its guest namespace job-<id>; once the
 * exec service is done with it, the namespace's content is at
 * job.<id>.guest in the primary namespace (with job-exec's last events
 * appended) and the namespace is removed (PROTOCOLS-exec.md 2.4).  A
 * guest watcher therefore:
 *
 *   1. watches the job's main eventlog (which also checks a guest's
 *      access: its first line is the submit event): "start" means the
 *      namespace exists, "clean" that the job is done with it;
 *   2. from "start", watches <key> in the guest namespace, counting the
 *      bytes it has sent;
 *   3. when that watch ends because the namespace was removed (ENOTSUP),
 *      or the main eventlog reaches "clean" first, reads
 *      job.<id>.guest.<key> from the primary namespace and sends what
 *      follows the bytes already sent, then ends with ENODATA.
 *
 * The copy in the primary namespace is complete before the namespace is
 * removed, and "clean" comes after both, so nothing is lost or sent
 * twice.  A job that becomes inactive without "start" ends the watch with
 * ENODATA.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "info.h"
#include "libkvs/kvs.h"
#include "util.h"

struct gwatch {
    struct list_node link;
    struct info *ctx;
    const flux_msg_t *msg;
    flux_jobid_t id;
    int flags;
    bool owner;           /* the sender is the instance owner */
    bool allowed;         /* access checked */
    bool started;         /* "start" seen */
    bool sentinel;        /* INITIAL_SENTINEL sent */
    char ns[32];          /* job-<id> */
    char gkey[260];       /* <key> in the guest namespace */
    char pkey[320];       /* job.<id>.guest.<key> */
    char ekey[320];       /* job.<id>.eventlog */
    flux_future_t *main;  /* main eventlog watch */
    flux_future_t *watch; /* <key> in the guest namespace */
    flux_future_t *final; /* job.<id>.guest.<key> lookup */
    struct info_lines mlines, lines;
    size_t offset; /* bytes of <key> received from the guest namespace */
};

static void cancel_watch (flux_future_t **fp)
{
    if (*fp) {
        (void)flux_kvs_lookup_cancel (*fp);
        flux_future_destroy (*fp);
        *fp = NULL;
    }
}

static void gwatch_destroy (struct gwatch *w)
{
    if (w) {
        list_del (&w->link);
        cancel_watch (&w->main);
        cancel_watch (&w->watch);
        flux_future_destroy (w->final);
        info_lines_free (&w->mlines);
        info_lines_free (&w->lines);
        flux_msg_decref (w->msg);
        free (w);
    }
}

static void end (struct gwatch *w, int errnum, const char *text)
{
    info_respond_error (w->ctx, w->msg, errnum, text);
    gwatch_destroy (w);
}

void info_guest_destroy_all (struct info *ctx, const flux_msg_t *sender)
{
    struct list_node *pos, *tmp;

    list_for_each_safe (pos, tmp, &ctx->guests)
    {
        struct gwatch *w = list_entry (pos, struct gwatch, link);
        if (!sender)
            info_respond_error (ctx, w->msg, ENOSYS, "job-info is unloading");
        else if (!info_disconnect_matches (w->msg, sender))
            continue;
        gwatch_destroy (w);
    }
}

void info_guest_cancel (struct info *ctx, const flux_msg_t *msg,
                        uint32_t matchtag)
{
    struct list_node *pos, *tmp;

    list_for_each_safe (pos, tmp, &ctx->guests)
    {
        struct gwatch *w = list_entry (pos, struct gwatch, link);
        if (info_cancel_matches (w->msg, msg, matchtag))
            end (w, ENODATA, NULL);
    }
}

static void send_sentinel (struct gwatch *w)
{
    if ((w->flags & INFO_WATCH_INITIAL_SENTINEL) && !w->sentinel) {
        w->sentinel = true;
        if (flux_respond (w->ctx->h, w->msg, NULL) < 0)
            info_log (w->ctx, LOG_ERR, "eventlog-watch: respond: %s",
                      strerror (errno));
    }
}

/* Send the complete lines of data; -1 ENOMEM. */
static int send_lines (struct gwatch *w, const void *data, size_t len)
{
    const char *line;

    if (len > 0 && info_lines_feed (&w->lines, data, len) < 0)
        return -1;
    while ((line = info_lines_next (&w->lines, &len))) {
        w->ctx->responses++;
        if (flux_respond_pack (w->ctx->h, w->msg, "{s:s%}", "event", line, len)
            < 0)
            info_log (w->ctx, LOG_ERR, "eventlog-watch: respond: %s",
                      strerror (errno));
    }
    return 0;
}

/* 3. the copy in the primary namespace: what follows w->offset */
static void final_cb (flux_future_t *f, void *arg)
{
    struct gwatch *w = arg;
    const void *data;
    size_t len;

    if (flux_kvs_lookup_get_raw (f, &data, &len) < 0) {
        int errnum = errno;
        if (errnum == ENOENT
            && (w->offset > 0 || w->sentinel
                || (w->flags & INFO_WATCH_WAITCREATE))) {
            send_sentinel (w);
            end (w, ENODATA, NULL); /* the key never was, and never will be */
            return;
        }
        end (w, errnum, errnum == ENOENT ? "eventlog path not found" : NULL);
        return;
    }
    if (len > w->offset
        && send_lines (w, (const char *)data + w->offset, len - w->offset)
               < 0) {
        end (w, ENOMEM, NULL);
        return;
    }
    send_sentinel (w);
    end (w, ENODATA, NULL);
}

static void go_final (struct gwatch *w)
{
    cancel_watch (&w->main);
    cancel_watch (&w->watch);
    if (w->final)
        return;
    if (!(w->final
          = flux_kvs_lookup (w->ctx->h, KVS_PRIMARY_NAMESPACE, 0, w->pkey))
        || flux_future_then (w->final, -1., final_cb, w) < 0)
        end (w, errno, NULL);
}

/* 2. <key> in the guest namespace */
static void watch_cb (flux_future_t *f, void *arg)
{
    struct gwatch *w = arg;
    const void *data;
    size_t len;

    if (flux_kvs_lookup_is_sentinel (f)) {
        send_sentinel (w);
        flux_future_reset (f);
        return;
    }
    if (flux_kvs_lookup_get_raw (f, &data, &len) < 0) {
        int errnum = errno;
        flux_future_destroy (w->watch); /* the stream is over: no cancel */
        w->watch = NULL;
        if (errnum == ENOTSUP || errnum == ENODATA)
            go_final (w); /* the namespace was removed */
        else
            end (w, errnum,
                 errnum == ENOENT ? "eventlog path not found" : NULL);
        return;
    }
    w->offset += len;
    if (send_lines (w, data, len) < 0) {
        end (w, ENOMEM, NULL);
        return;
    }
    flux_future_reset (f);
}

static int start_watch (struct gwatch *w)
{
    int flags = FLUX_KVS_WATCH | FLUX_KVS_WATCH_APPEND;

    if (w->flags & INFO_WATCH_WAITCREATE)
        flags |= FLUX_KVS_WAITCREATE;
    if (w->flags & INFO_WATCH_INITIAL_SENTINEL)
        flags |= FLUX_KVS_WATCH_INITIAL_SENTINEL;
    if (!(w->watch = flux_kvs_lookup (w->ctx->h, w->ns, flags, w->gkey))
        || flux_future_then (w->watch, -1., watch_cb, w) < 0)
        return -1;
    return 0;
}

/* 1. the main eventlog */
static void main_cb (flux_future_t *f, void *arg)
{
    struct gwatch *w = arg;
    const void *data;
    const char *line;
    size_t len;
    char name[64];
    bool clean = false, start = false;

    if (flux_kvs_lookup_get_raw (f, &data, &len) < 0) {
        int errnum = errno;
        flux_future_destroy (w->main); /* the stream is over: no cancel */
        w->main = NULL;
        end (w, errnum, errnum == ENOENT ? "job not found" : NULL);
        return;
    }
    if (info_lines_feed (&w->mlines, data, len) < 0) {
        end (w, ENOMEM, NULL);
        return;
    }
    while ((line = info_lines_next (&w->mlines, &len))) {
        if (!w->allowed) {
            char *first = strndup (line, len);
            int rc = first ? info_allow (w->msg, first) : -1;
            int errnum = errno;
            free (first);
            if (rc < 0) {
                end (w, errnum,
                     errnum == EPERM ? "job belongs to another user" : NULL);
                return;
            }
            w->allowed = true;
        }
        if (!info_line_name (line, len, name, sizeof (name)))
            continue;
        if (!strcmp (name, "start"))
            start = true;
        else if (!strcmp (name, "clean"))
            clean = true;
    }
    if (start)
        w->started = true;
    if (clean) {
        if (!w->started) {
            end (w, ENODATA, NULL); /* the job never started */
            return;
        }
        go_final (w);
        return;
    }
    if (w->started && !w->watch && start_watch (w) < 0) {
        end (w, errno, NULL);
        return;
    }
    flux_future_reset (f);
}

void info_guest_watch (struct info *ctx, const flux_msg_t *msg, flux_jobid_t id,
                       const char *path, int flags)
{
    struct gwatch *w;
    struct flux_msg_cred cred = {0, 0};
    int mflags = FLUX_KVS_WATCH | FLUX_KVS_WATCH_APPEND;

    if (!(w = calloc (1, sizeof (*w)))) {
        info_respond_error (ctx, msg, ENOMEM, NULL);
        return;
    }
    list_init (&w->link);
    w->ctx = ctx;
    w->id = id;
    w->flags = flags;
    w->msg = flux_msg_incref (msg);
    info_lines_init (&w->mlines);
    info_lines_init (&w->lines);
    list_add_tail (&ctx->guests, &w->link);
    (void)flux_msg_get_cred (msg, &cred);
    w->owner = (cred.rolemask & FLUX_ROLE_OWNER) != 0;
    w->allowed = w->owner;
    /* path is "guest.<key>" */
    if (strlen (path) - 6 >= sizeof (w->gkey)
        || info_job_key (w->pkey, sizeof (w->pkey), id, path) < 0
        || info_job_key (w->ekey, sizeof (w->ekey), id, "eventlog") < 0
        || flux_job_kvs_namespace (w->ns, sizeof (w->ns), id) < 0) {
        end (w, EINVAL, "invalid eventlog path");
        return;
    }
    strcpy (w->gkey, path + 6);
    if (flags & INFO_WATCH_WAITCREATE)
        mflags |= FLUX_KVS_WAITCREATE;
    if (!(w->main
          = flux_kvs_lookup (ctx->h, KVS_PRIMARY_NAMESPACE, mflags, w->ekey))
        || flux_future_then (w->main, -1., main_cb, w) < 0)
        end (w, errno, NULL);
}
