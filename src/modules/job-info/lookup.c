/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* lookup.c - job-info.lookup (see info.h).
 *
 * All keys (and the eventlog, when a guest asks or CURRENT needs it)
 * are looked up at once; the response is sent when all are in.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libflux/jsonparse.h"
#include "info.h"
#include "libkvs/kvs.h"
#include "util.h"

struct lookup {
    struct list_node link;
    struct info *ctx;
    const flux_msg_t *msg;
    flux_jobid_t id;
    json_t *keys;
    int flags;
    flux_future_t *f; /* wait-all of one lookup per key */
};

static void lookup_destroy (struct lookup *l)
{
    if (l) {
        list_del (&l->link);
        flux_future_destroy (l->f);
        flux_msg_decref (l->msg);
        json_decref (l->keys);
        free (l);
    }
}

void info_lookup_destroy_all (struct info *ctx, const flux_msg_t *sender)
{
    struct list_node *pos, *tmp;

    list_for_each_safe (pos, tmp, &ctx->lookups)
    {
        struct lookup *l = list_entry (pos, struct lookup, link);
        if (!sender)
            info_respond_error (ctx, l->msg, ENOSYS, "job-info is unloading");
        else if (!info_disconnect_matches (l->msg, sender))
            continue;
        lookup_destroy (l);
    }
}

static bool has_key (json_t *keys, const char *key)
{
    size_t i;
    json_t *v;

    json_array_foreach (keys, i, v)
    {
        if (!strcmp (json_string_value (v), key))
            return true;
    }
    return false;
}

/* The value of one key for the response: a string, or with JSON_DECODE
 * an object for jobspec and R (with CURRENT: updated).
 */
static json_t *key_value (struct lookup *l, const char *key, const char *s,
                          const char *eventlog, int *errnum)
{
    bool is_json = !strcmp (key, "jobspec") || !strcmp (key, "R");
    bool current = is_json && (l->flags & INFO_LOOKUP_CURRENT) && eventlog;
    json_t *o, *v;
    char *text;

    if (!is_json
        || !(l->flags & (INFO_LOOKUP_JSON_DECODE | INFO_LOOKUP_CURRENT)))
        return json_string (s);
    if (!(o = jsonparse (s, strlen (s), NULL, 0))) {
        *errnum = EPROTO; /* stored data that is not JSON */
        return NULL;
    }
    if (current
        && (!strcmp (key, "R") ? info_apply_R_updates (o, eventlog)
                               : info_apply_jobspec_updates (o, eventlog))
               < 0) {
        *errnum = errno;
        json_decref (o);
        return NULL;
    }
    if (l->flags & INFO_LOOKUP_JSON_DECODE)
        return o;
    text = json_dumps (o, JSON_COMPACT);
    v = text ? json_string (text) : NULL;
    free (text);
    json_decref (o);
    return v;
}

static void lookup_cb (flux_future_t *f, void *arg)
{
    struct lookup *l = arg;
    struct info *ctx = l->ctx;
    const char *eventlog = NULL, *s;
    json_t *resp = NULL, *v;
    size_t i;
    int errnum = 0;

    if (flux_future_get_child (f, "eventlog")
        && flux_kvs_lookup_get (flux_future_get_child (f, "eventlog"),
                                &eventlog)
               < 0) {
        errnum = errno;
        goto error;
    }
    if (eventlog && info_allow (l->msg, eventlog) < 0) {
        errnum = errno;
        goto error;
    }
    if (!(resp = json_pack ("{s:I}", "id", (json_int_t)l->id))) {
        errnum = ENOMEM;
        goto error;
    }
    json_array_foreach (l->keys, i, v)
    {
        const char *key = json_string_value (v);
        json_t *val;
        if (flux_kvs_lookup_get (flux_future_get_child (f, key), &s) < 0) {
            errnum = errno;
            goto error;
        }
        if (!(val = key_value (l, key, s ? s : "", eventlog, &errnum))) {
            if (!errnum)
                errnum = ENOMEM;
            goto error;
        }
        if (json_object_set_new (resp, key, val) < 0) {
            errnum = ENOMEM;
            goto error;
        }
    }
    ctx->responses++;
    if (flux_respond_pack (ctx->h, l->msg, "O", resp) < 0)
        info_log (ctx, LOG_ERR, "lookup: respond: %s", strerror (errno));
    json_decref (resp);
    lookup_destroy (l);
    return;
error:
    json_decref (resp);
    info_respond_error (ctx, l->msg, errnum,
                        errnum == ENOENT  ? "job or key not found"
                        : errnum == EPERM ? "job belongs to another user"
                                          : NULL);
    lookup_destroy (l);
}

static int push_lookup (struct lookup *l, const char *key)
{
    char path[320];
    flux_future_t *f;

    if (flux_future_get_child (l->f, key))
        return 0; /* asked twice */
    if (info_job_key (path, sizeof (path), l->id, key) < 0
        || !(f = flux_kvs_lookup (l->ctx->h, NULL, 0, path)))
        return -1;
    if (flux_future_push (l->f, key, f) < 0) {
        flux_future_destroy (f);
        return -1;
    }
    return 0;
}

void info_lookup (struct info *ctx, const flux_msg_t *msg)
{
    struct lookup *l = NULL;
    json_int_t id;
    json_t *keys, *v;
    int flags;
    size_t i;
    struct flux_msg_cred cred = {0, 0};
    bool need_eventlog;

    ctx->nlookups++;
    if (flux_request_unpack (msg, NULL, "{s:I s:o s:i}", "id", &id, "keys",
                             &keys, "flags", &flags)
            < 0
        || !json_is_array (keys) || json_array_size (keys) == 0
        || (flags & ~(INFO_LOOKUP_JSON_DECODE | INFO_LOOKUP_CURRENT))) {
        info_respond_error (ctx, msg, EPROTO,
                            "expected {id:I, keys:[s,...], flags:i (1|2)}");
        return;
    }
    json_array_foreach (keys, i, v)
    {
        char path[320];
        if (!json_is_string (v)
            || info_job_key (path, sizeof (path), 0, json_string_value (v))
                   < 0) {
            info_respond_error (ctx, msg, EINVAL, "invalid key");
            return;
        }
    }
    (void)flux_msg_get_cred (msg, &cred);
    need_eventlog = !(cred.rolemask & FLUX_ROLE_OWNER)
                    || ((flags & INFO_LOOKUP_CURRENT)
                        && (has_key (keys, "jobspec") || has_key (keys, "R")))
                    || has_key (keys, "eventlog");
    if (!(l = calloc (1, sizeof (*l))))
        goto error;
    list_init (&l->link);
    l->ctx = ctx;
    l->id = id;
    l->flags = flags;
    l->keys = json_incref (keys);
    l->msg = flux_msg_incref (msg);
    if (!(l->f = flux_future_wait_all_create ()))
        goto error;
    flux_future_set_flux (l->f, ctx->h);
    if ((need_eventlog && push_lookup (l, "eventlog") < 0))
        goto error;
    json_array_foreach (keys, i, v)
    {
        if (push_lookup (l, json_string_value (v)) < 0)
            goto error;
    }
    if (flux_future_then (l->f, -1., lookup_cb, l) < 0)
        goto error;
    list_add_tail (&ctx->lookups, &l->link);
    return;
error:
    info_respond_error (ctx, msg, errno, NULL);
    lookup_destroy (l);
}
