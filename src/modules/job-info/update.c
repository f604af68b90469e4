/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* update.c - job-info.update-watch and update-lookup (see info.h).
 *
 * The base value (job.<id>.R or .jobspec) is read once; the eventlog
 * is watched (WATCH_APPEND with the initial sentinel).  When both the
 * base and the eventlog so far are in, the updates found are applied
 * and the value sent; afterwards each jobspec-update / resource-update
 * event sends the value again.  The stream ends with ENODATA after
 * "clean"; update-lookup ends after the first response.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libflux/jsonparse.h"
#include "info.h"
#include "libeventlog/eventlog.h"
#include "libkvs/kvs.h"
#include "util.h"

struct update {
    struct list_node link;
    struct info *ctx;
    const flux_msg_t *msg;
    flux_jobid_t id;
    bool is_R;
    bool once;     /* update-lookup */
    bool checked;  /* access allowed */
    bool synced;   /* eventlog sentinel seen */
    bool sent;     /* the first value was sent */
    bool inactive; /* "clean" seen */
    flux_future_t *base;
    flux_future_t *watch;
    json_t *value;
    char *early; /* eventlog text before the value was sent */
    struct info_lines lines;
};

static void update_destroy (struct update *u)
{
    if (u) {
        list_del (&u->link);
        flux_future_destroy (u->base);
        if (u->watch) {
            (void)flux_kvs_lookup_cancel (u->watch);
            flux_future_destroy (u->watch);
        }
        json_decref (u->value);
        free (u->early);
        info_lines_free (&u->lines);
        flux_msg_decref (u->msg);
        free (u);
    }
}

static void end (struct update *u, int errnum, const char *text)
{
    info_respond_error (u->ctx, u->msg, errnum, text);
    update_destroy (u);
}

void info_update_destroy_all (struct info *ctx, const flux_msg_t *sender)
{
    struct list_node *pos, *tmp;

    list_for_each_safe (pos, tmp, &ctx->updates)
    {
        struct update *u = list_entry (pos, struct update, link);
        if (!sender)
            info_respond_error (ctx, u->msg, ENOSYS, "job-info is unloading");
        else if (!info_disconnect_matches (u->msg, sender))
            continue;
        update_destroy (u);
    }
}

/* Send the current value; returns -1 if u was destroyed. */
static int send_value (struct update *u)
{
    u->ctx->responses++;
    if (flux_respond_pack (u->ctx->h, u->msg, "{s:O}",
                           u->is_R ? "R" : "jobspec", u->value)
        < 0)
        info_log (u->ctx, LOG_ERR, "update-watch: respond: %s",
                  strerror (errno));
    u->sent = true;
    if (u->once) {
        update_destroy (u);
        return -1;
    }
    return 0;
}

/* Both the base value and the eventlog so far are in: apply and send. */
static int try_first (struct update *u)
{
    int rc;

    if (u->sent || !u->value || !u->synced)
        return 0;
    rc = u->is_R
             ? info_apply_R_updates (u->value, u->early ? u->early : "")
             : info_apply_jobspec_updates (u->value, u->early ? u->early : "");
    free (u->early);
    u->early = NULL;
    if (rc < 0) {
        end (u, errno, NULL);
        return -1;
    }
    if (send_value (u) < 0)
        return -1;
    if (u->inactive) {
        end (u, ENODATA, NULL);
        return -1;
    }
    return 0;
}

static void base_cb (flux_future_t *f, void *arg)
{
    struct update *u = arg;
    const char *s;

    if (flux_kvs_lookup_get (f, &s) < 0) {
        end (u, errno, errno == ENOENT ? "no such key (yet)" : NULL);
        return;
    }
    if (!s || !(u->value = jsonparse (s, strlen (s), NULL, 0))) {
        end (u, EPROTO, "stored value is not JSON");
        return;
    }
    (void)try_first (u);
}

static int keep_early (struct update *u, const char *line, size_t len)
{
    size_t old = u->early ? strlen (u->early) : 0;
    char *p = realloc (u->early, old + len + 1);

    if (!p)
        return -1;
    memcpy (p + old, line, len);
    p[old + len] = '\0';
    u->early = p;
    return 0;
}

/* One new eventlog line after the first value was sent. */
static int apply_line (struct update *u, const char *line, size_t len,
                       const char *name)
{
    char *text;
    int rc;

    if (strcmp (name, u->is_R ? "resource-update" : "jobspec-update") != 0)
        return 0;
    if (!(text = strndup (line, len)))
        return -1;
    rc = u->is_R ? info_apply_R_updates (u->value, text)
                 : info_apply_jobspec_updates (u->value, text);
    free (text);
    if (rc < 0)
        return -1;
    return send_value (u) < 0 ? 1 : 0;
}

static void watch_cb (flux_future_t *f, void *arg)
{
    struct update *u = arg;
    const void *data;
    const char *line;
    size_t len;
    char name[64];

    if (flux_kvs_lookup_is_sentinel (f)) {
        u->synced = true;
        flux_future_reset (f);
        (void)try_first (u);
        return;
    }
    if (flux_kvs_lookup_get_raw (f, &data, &len) < 0) {
        int errnum = errno;
        flux_future_destroy (u->watch);
        u->watch = NULL;
        end (u, errnum, errnum == ENOENT ? "job not found" : NULL);
        return;
    }
    if (info_lines_feed (&u->lines, data, len) < 0) {
        end (u, ENOMEM, NULL);
        return;
    }
    while ((line = info_lines_next (&u->lines, &len))) {
        if (!info_line_name (line, len, name, sizeof (name)))
            continue;
        if (!u->checked) { /* the first line is the submit event */
            char *text = strndup (line, len);
            int rc = text ? info_allow (u->msg, text) : -1;
            free (text);
            if (rc < 0) {
                end (u, errno,
                     errno == EPERM ? "job belongs to another user" : NULL);
                return;
            }
            u->checked = true;
        }
        if (!u->sent) {
            if (keep_early (u, line, len) < 0) {
                end (u, ENOMEM, NULL);
                return;
            }
        }
        else {
            int rc = apply_line (u, line, len, name);
            if (rc < 0) {
                end (u, errno, NULL);
                return;
            }
            if (rc > 0)
                return; /* destroyed */
        }
        if (!strcmp (name, "clean")) {
            u->inactive = true;
            if (u->sent) {
                end (u, ENODATA, NULL);
                return;
            }
        }
    }
    flux_future_reset (f);
}

static void start (struct info *ctx, const flux_msg_t *msg, bool once)
{
    struct update *u = NULL;
    json_int_t id;
    const char *key;
    int flags;
    char path[320];

    ctx->nupdates++;
    if (flux_request_unpack (msg, NULL, "{s:I s:s s:i}", "id", &id, "key", &key,
                             "flags", &flags)
            < 0
        || flags != 0) {
        info_respond_error (ctx, msg, EPROTO,
                            "expected {id:I, key:s, flags:0}");
        return;
    }
    if (strcmp (key, "R") != 0 && strcmp (key, "jobspec") != 0) {
        info_respond_error (ctx, msg, EINVAL, "key must be R or jobspec");
        return;
    }
    if (!once && !flux_msg_is_streaming (msg)) {
        info_respond_error (ctx, msg, EPROTO,
                            "update-watch requires FLUX_MSGFLAG_STREAMING");
        return;
    }
    if (!(u = calloc (1, sizeof (*u))))
        goto error;
    list_init (&u->link);
    u->ctx = ctx;
    u->id = id;
    u->is_R = !strcmp (key, "R");
    u->once = once;
    u->msg = flux_msg_incref (msg);
    info_lines_init (&u->lines);
    list_add_tail (&ctx->updates, &u->link);
    if (info_job_key (path, sizeof (path), id, key) < 0
        || !(u->base = flux_kvs_lookup (ctx->h, NULL, 0, path))
        || flux_future_then (u->base, -1., base_cb, u) < 0
        || info_job_key (path, sizeof (path), id, "eventlog") < 0
        || !(u->watch = flux_kvs_lookup (ctx->h, NULL,
                                         FLUX_KVS_WATCH | FLUX_KVS_WATCH_APPEND
                                             | FLUX_KVS_WATCH_INITIAL_SENTINEL,
                                         path))
        || flux_future_then (u->watch, -1., watch_cb, u) < 0)
        goto error;
    return;
error:
    if (u)
        end (u, errno, NULL);
    else
        info_respond_error (ctx, msg, errno, NULL);
}

void info_update_watch (struct info *ctx, const flux_msg_t *msg)
{
    bool once = false;
    const char *topic;

    if (flux_msg_get_topic (msg, &topic) == 0
        && !strcmp (topic, "job-info.update-lookup"))
        once = true;
    start (ctx, msg, once);
}

void info_update_watch_cancel (struct info *ctx, const flux_msg_t *msg)
{
    struct list_node *pos, *tmp;
    int matchtag;

    if (flux_request_unpack (msg, NULL, "{s:i}", "matchtag", &matchtag) < 0)
        return;
    list_for_each_safe (pos, tmp, &ctx->updates)
    {
        struct update *u = list_entry (pos, struct update, link);
        if (info_cancel_matches (u->msg, msg, matchtag))
            end (u, ENODATA, NULL);
    }
}
