/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* info.c - the job-info engine: lifetime, shared helpers, disconnect
 * (see info.h).  The requests live in lookup.c, watch.c and update.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "info.h"

void info_log (struct info *ctx, int severity, const char *fmt, ...)
{
    va_list ap;

    va_start (ap, fmt);
    flux_vlog (ctx->h, severity, fmt, ap);
    va_end (ap);
}

struct info *info_create (flux_t *h, uint32_t rank)
{
    struct info *ctx;

    if (!(ctx = calloc (1, sizeof (*ctx))))
        return NULL;
    ctx->h = h;
    ctx->rank = rank;
    list_init (&ctx->lookups);
    list_init (&ctx->watchers);
    list_init (&ctx->guests);
    list_init (&ctx->updates);
    return ctx;
}

void info_destroy (struct info *ctx)
{
    if (ctx) {
        int saved_errno = errno;
        info_lookup_destroy_all (ctx, NULL);
        info_watch_destroy_all (ctx, NULL);
        info_guest_destroy_all (ctx, NULL);
        info_update_destroy_all (ctx, NULL);
        free (ctx);
        errno = saved_errno;
    }
}

void info_respond_error (struct info *ctx, const flux_msg_t *msg, int errnum,
                         const char *text)
{
    if (flux_respond_error (ctx->h, msg, errnum, text) < 0)
        info_log (ctx, LOG_ERR, "respond: %s", strerror (errno));
}

/* job.<dothex>.<path>: path must be a plain relative key. */
int info_job_key (char *buf, size_t size, flux_jobid_t id, const char *path)
{
    size_t len = path ? strlen (path) : 0;

    if (len == 0 || len > 256 || path[0] == '.' || path[len - 1] == '.'
        || strstr (path, "..")
        || strspn (path, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                         "0123456789._-")
               != len) {
        errno = EINVAL;
        return -1;
    }
    return flux_job_kvs_key (buf, size, id, path);
}

bool info_disconnect_matches (const flux_msg_t *req, const flux_msg_t *disc)
{
    uint32_t userid;

    return flux_msg_route_match_first (req, disc)
           && flux_msg_get_userid (req, &userid) == 0
           && flux_msg_authorize (disc, userid) == 0;
}

bool info_cancel_matches (const flux_msg_t *req, const flux_msg_t *cancel,
                          uint32_t matchtag)
{
    uint32_t tag;
    struct flux_msg_cred cred;

    return flux_msg_get_matchtag (req, &tag) == 0 && tag == matchtag
           && flux_msg_route_match_first (req, cancel)
           && flux_msg_get_cred (cancel, &cred) == 0
           && ((cred.rolemask & FLUX_ROLE_OWNER)
               || flux_msg_authorize (req, cred.userid) == 0);
}

void info_disconnect (struct info *ctx, const flux_msg_t *msg)
{
    info_lookup_destroy_all (ctx, msg);
    info_watch_destroy_all (ctx, msg);
    info_guest_destroy_all (ctx, msg);
    info_update_destroy_all (ctx, msg);
}

static int count (struct list_node *head)
{
    struct list_node *pos, *tmp;
    int n = 0;

    list_for_each_safe (pos, tmp, head) n++;
    return n;
}

json_t *info_stats (struct info *ctx)
{
    return json_pack ("{s:i s:i s:i s:i s:i s:i s:i s:i}", "lookups",
                      count (&ctx->lookups), "watchers", count (&ctx->watchers),
                      "guest-watchers", count (&ctx->guests), "update-watchers",
                      count (&ctx->updates), "lookup-requests",
                      (int)ctx->nlookups, "watch-requests", (int)ctx->nwatches,
                      "update-requests", (int)ctx->nupdates, "responses",
                      (int)ctx->responses);
}
