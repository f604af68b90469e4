/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* service.c - rank 0's resource.* request handlers (PROTOCOLS 5.5,
 * RFC 28, RFC 44).  Requests that need R wait in res->deferred until it
 * is defined. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libeventlog/eventlog.h"
#include "resource_private.h"
#include "rlog.h"

/* True if msg was queued (or refused) because R is not defined yet. */
static bool deferred (struct resource *res, const flux_msg_t *msg)
{
    if (res->map)
        return false;
    if (reqlist_add (res->deferred, msg) < 0)
        flux_respond_error (res->h, msg, errno == EAGAIN ? EAGAIN : errno,
                            errno == EAGAIN ? "too many requests waiting for "
                                              "the resource set to be defined"
                                            : NULL);
    return true;
}

static bool run_one (const flux_msg_t *msg, void *arg)
{
    struct resource *res = arg;
    const char *topic = "";

    (void)flux_msg_get_topic (msg, &topic);
    if (!strcmp (topic, "resource.status"))
        resource_status (res, msg);
    else if (!strcmp (topic, "resource.sched-status"))
        resource_sched_status (res, msg);
    else if (!strcmp (topic, "resource.drain"))
        resource_drain (res, msg);
    else if (!strcmp (topic, "resource.undrain"))
        resource_undrain (res, msg);
    else
        flux_respond_error (res->h, msg, EPROTO, "unexpected request");
    return true;
}

void res_run_deferred (struct resource *res)
{
    reqlist_foreach (res->deferred, run_one, res);
}

/* Accept no payload or an empty object (the CLI sends either). */
static bool empty_payload (const flux_msg_t *msg)
{
    return !flux_msg_has_payload (msg)
           || flux_request_unpack (msg, NULL, "{!}") == 0;
}

static char *ids_str (const struct idset *ids)
{
    return ids ? rmap_idset_str (ids) : NULL;
}

/* ---- resource.status ---- */

void resource_status (struct resource *res, const flux_msg_t *msg)
{
    struct idset *online = NULL, *offline = NULL;
    char *on = NULL, *off = NULL, *ex = NULL;
    json_t *R = NULL, *drain = NULL;

    if (!empty_payload (msg)) {
        flux_respond_error (res->h, msg, EPROTO,
                            "resource.status takes no payload (or {})");
        return;
    }
    if (deferred (res, msg))
        return;
    if (!(online = idset_intersect (res->online, rmap_ranks (res->map)))
        || !(offline = idset_difference (rmap_ranks (res->map), res->online))
        || !(on = ids_str (online)) || !(off = ids_str (offline))
        || !(ex = ids_str (res->exclude)) || !(R = json_copy (res->R))
        || !(drain = drainset_to_json (res->drain)))
        goto nomem;
    (void)json_object_del (R, "scheduling");
    if (flux_respond_pack (res->h, msg, "{s:O s:O s:s s:s s:s s:s}", "R", R,
                           "drain", drain, "online", on, "offline", off,
                           "exclude", ex, "torpid", "")
        < 0)
        rlog (res->h, LOG_ERR, "resource.status: %s", strerror (errno));
    goto done;
nomem:
    flux_respond_error (res->h, msg, ENOMEM, NULL);
done:
    json_decref (drain);
    json_decref (R);
    free (ex);
    free (off);
    free (on);
    idset_destroy (offline);
    idset_destroy (online);
}

/* ---- resource.sched-status ---- */

static void sched_status_respond (struct resource *res, const flux_msg_t *msg,
                                  json_t *allocated)
{
    struct idset *all = NULL, *up = NULL, *down = NULL;
    json_t *all_R = NULL, *down_R = NULL;

    if (!(all = idset_difference (rmap_ranks (res->map), res->exclude))
        || !(up = res_up (res, all)) || !(down = idset_difference (all, up))
        || !(all_R = rmap_subset (res->map, all))
        || !(down_R = rmap_subset (res->map, down))) {
        flux_respond_error (res->h, msg, ENOMEM, NULL);
        goto done;
    }
    if (flux_respond_pack (res->h, msg, "{s:O s:O s:O}", "all", all_R, "down",
                           down_R, "allocated", allocated)
        < 0)
        rlog (res->h, LOG_ERR, "resource.sched-status: %s", strerror (errno));
done:
    json_decref (down_R);
    json_decref (all_R);
    idset_destroy (down);
    idset_destroy (up);
    idset_destroy (all);
}

/* job-manager.resource-status answered: {allocated:R}.  Without a job
 * manager (ENOSYS) nothing is allocated. */
static void jm_status_cb (flux_future_t *f, void *arg)
{
    struct resource *res = arg;
    const flux_msg_t *msg = flux_future_aux_get (f, "request");
    json_t *allocated = NULL, *empty = NULL;

    if (flux_rpc_get_unpack (f, "{s:o}", "allocated", &allocated) < 0) {
        if (errno != ENOSYS) {
            flux_respond_error (res->h, msg, errno,
                                flux_future_error_string (f));
            goto done;
        }
        allocated = NULL;
    }
    if (!allocated || json_is_null (allocated)) {
        if (!(allocated = empty = rmap_empty_R ())) {
            flux_respond_error (res->h, msg, ENOMEM, NULL);
            goto done;
        }
    }
    sched_status_respond (res, msg, allocated);
done:
    json_decref (empty);
    flux_future_destroy (f);
}

void resource_sched_status (struct resource *res, const flux_msg_t *msg)
{
    flux_future_t *f;

    if (!empty_payload (msg)) {
        flux_respond_error (res->h, msg, EPROTO,
                            "resource.sched-status takes no payload (or {})");
        return;
    }
    if (deferred (res, msg))
        return;
    if (!(f = flux_rpc (res->h, "job-manager.resource-status", NULL, 0, 0))
        || flux_future_aux_set (f, "request", (void *)flux_msg_incref (msg),
                                (flux_free_f)flux_msg_decref)
               < 0
        || flux_future_then (f, -1., jm_status_cb, res) < 0) {
        flux_respond_error (res->h, msg, errno, NULL);
        flux_future_destroy (f);
    }
}

/* ---- drain / undrain ---- */

/* The targets of a drain or undrain request, or NULL (answered). */
static struct idset *req_targets (struct resource *res, const flux_msg_t *msg,
                                  const char **reason, const char **mode)
{
    const char *topic = "", *targets;
    json_t *r = NULL;
    struct idset *ids;
    flux_error_t error;

    (void)flux_msg_get_topic (msg, &topic);
    *reason = *mode = NULL;
    if (flux_request_unpack (msg, NULL, "{s:s s?o s?s !}", "targets", &targets,
                             "reason", &r, "mode", mode)
            < 0
        || (r && !json_is_string (r) && !json_is_null (r))) {
        flux_respond_error (res->h, msg, EPROTO,
                            "expected {targets:s reason?:s mode?:s}");
        return NULL;
    }
    if (r && json_is_string (r))
        *reason = json_string_value (r);
    if (!(ids = rmap_targets (res->map, targets, &error))) {
        flux_respond_error (res->h, msg, errno, error.text);
        return NULL;
    }
    return ids;
}

/* A drain/undrain event for ids, or NULL. */
static json_t *drain_event (struct resource *res, const char *name,
                            const struct idset *ids, const char *reason,
                            int overwrite)
{
    char *s = ids_str (ids), *nodelist = rmap_nodelist (res->map, ids);
    json_t *entry = NULL;

    if (s && nodelist)
        entry = eventlog_entry_pack (0., name, "{s:s s:s}", "idset", s,
                                     "nodelist", nodelist);
    if (entry && reason
        && json_object_set_new (json_object_get (entry, "context"), "reason",
                                json_string (reason))
               < 0) {
        json_decref (entry);
        entry = NULL;
    }
    if (entry && overwrite >= 0
        && json_object_set_new (json_object_get (entry, "context"), "overwrite",
                                json_integer (overwrite))
               < 0) {
        json_decref (entry);
        entry = NULL;
    }
    free (nodelist);
    free (s);
    return entry;
}

/* Post the event and apply it; the request is answered once committed. */
static void drain_apply (struct resource *res, const flux_msg_t *msg,
                         json_t *entry, const struct idset *ids, bool drain,
                         const char *reason, int overwrite)
{
    double ts = json_number_value (json_object_get (entry, "timestamp"));
    struct idset *before = change_begin (res, ids);
    int rc;

    if (drain)
        rc = drainset_drain (
            res->drain, ids,
            json_string_value (json_object_get (
                json_object_get (entry, "context"), "nodelist")),
            ts, reason, overwrite);
    else
        rc = drainset_undrain (res->drain, ids);
    change_end (res, ids, before);
    if (rc < 0 || res_post (res, entry, true, NULL, msg) < 0)
        flux_respond_error (res->h, msg, errno, NULL);
}

static int drain_mode (const char *mode, int *overwrite)
{
    if (!mode)
        *overwrite = DRAIN_KEEP;
    else if (!strcmp (mode, "update"))
        *overwrite = DRAIN_KEEP;
    else if (!strcmp (mode, "overwrite"))
        *overwrite = DRAIN_UPDATE_REASON;
    else if (!strcmp (mode, "force-overwrite"))
        *overwrite = DRAIN_UPDATE_ALL;
    else
        return -1;
    return 0;
}

void resource_drain (struct resource *res, const flux_msg_t *msg)
{
    const char *reason, *mode;
    struct idset *ids = NULL, *bad = NULL, *todo = NULL;
    char *s = NULL;
    json_t *entry = NULL;
    int overwrite;

    if (deferred (res, msg) || !(ids = req_targets (res, msg, &reason, &mode)))
        return;
    if (drain_mode (mode, &overwrite) < 0) {
        flux_respond_error (res->h, msg, EINVAL, "invalid drain mode");
        goto done;
    }
    if (!(bad = idset_intersect (ids, res->exclude)))
        goto nomem;
    if (!idset_empty (bad)) {
        char text[200];
        s = ids_str (bad);
        snprintf (text, sizeof (text), "ranks %s are excluded", s ? s : "?");
        flux_respond_error (res->h, msg, EINVAL, text);
        goto done;
    }
    idset_destroy (bad);
    if (!(bad = idset_intersect (ids, drainset_ranks (res->drain))))
        goto nomem;
    if (!mode && !idset_empty (bad)) {
        char text[200];
        s = ids_str (bad);
        snprintf (text, sizeof (text), "ranks %s already drained", s ? s : "?");
        flux_respond_error (res->h, msg, EEXIST, text);
        goto done;
    }
    /* update: only the targets not yet drained */
    if (!(todo = (mode && !strcmp (mode, "update"))
                     ? idset_difference (ids, bad)
                     : idset_copy (ids)))
        goto nomem;
    if (idset_empty (todo)) {
        flux_respond (res->h, msg, NULL);
        goto done;
    }
    if (!(entry = drain_event (res, "drain", todo, reason, overwrite)))
        goto nomem;
    drain_apply (res, msg, entry, todo, true, reason, overwrite);
    goto done;
nomem:
    flux_respond_error (res->h, msg, ENOMEM, NULL);
done:
    json_decref (entry);
    free (s);
    idset_destroy (todo);
    idset_destroy (bad);
    idset_destroy (ids);
}

void resource_undrain (struct resource *res, const flux_msg_t *msg)
{
    const char *reason, *mode;
    struct idset *ids = NULL, *notdrained = NULL, *todo = NULL;
    char *s = NULL;
    json_t *entry = NULL;

    if (deferred (res, msg) || !(ids = req_targets (res, msg, &reason, &mode)))
        return;
    if (mode && strcmp (mode, "force") != 0) {
        flux_respond_error (res->h, msg, EINVAL, "invalid undrain mode");
        goto done;
    }
    if (!(notdrained = idset_difference (ids, drainset_ranks (res->drain)))
        || !(todo = idset_intersect (ids, drainset_ranks (res->drain))))
        goto nomem;
    if (!mode && !idset_empty (notdrained)) {
        char text[200];
        s = ids_str (notdrained);
        snprintf (text, sizeof (text), "ranks %s not drained", s ? s : "?");
        flux_respond_error (res->h, msg, EEXIST, text);
        goto done;
    }
    if (idset_empty (todo)) {
        flux_respond (res->h, msg, NULL);
        goto done;
    }
    if (!(entry = drain_event (res, "undrain", todo, reason, -1)))
        goto nomem;
    drain_apply (res, msg, entry, todo, false, reason, 0);
    goto done;
nomem:
    flux_respond_error (res->h, msg, ENOMEM, NULL);
done:
    json_decref (entry);
    free (s);
    idset_destroy (todo);
    idset_destroy (notdrained);
    idset_destroy (ids);
}

/* ---- acquire, journal, disconnect ---- */

void resource_acquire (struct resource *res, const flux_msg_t *msg)
{
    acquire_request (res->acquire, msg);
}

void resource_acquire_cancel (struct resource *res, const flux_msg_t *msg)
{
    acquire_cancel (res->acquire, msg);
}

void resource_acquire_mute (struct resource *res, const flux_msg_t *msg)
{
    acquire_mute (res->acquire, msg);
}

void resource_journal (struct resource *res, const flux_msg_t *msg)
{
    journal_request (res->journal, msg);
}

void resource_journal_cancel (struct resource *res, const flux_msg_t *msg)
{
    journal_cancel (res->journal, msg);
}

void resource_disconnect (struct resource *res, const flux_msg_t *msg)
{
    acquire_disconnect (res->acquire, msg);
    journal_disconnect (res->journal, msg);
    (void)reqlist_disconnect (res->deferred, msg);
}
