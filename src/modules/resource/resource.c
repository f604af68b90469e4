/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* resource.c - rank 0's inventory: defining R, online/offline, exclude,
 * and what the scheduler is told (the "up" set).
 *
 * A target is up when it is in R, online, not excluded and not drained.
 * Every change goes through change_begin()/change_end() over the targets
 * it touches, which compares their up state before and after and tells
 * the acquirer -- O(targets touched), never a rescan of R.
 *
 * The request handlers are in service.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "frag.h"
#include "libeventlog/eventlog.h"
#include "libkvs/kvs.h"
#include "resource_private.h"
#include "rlog.h"

#define DEFERRED_MAX 1024
#define JOURNAL_MAX 10000

/* up(ids) = ids & R & online - excluded - drained.  NULL/ENOMEM. */
struct idset *res_up (struct resource *res, const struct idset *ids)
{
    struct idset *up;

    if (!res->map)
        return idset_create (0, 0);
    if (!(up = idset_intersect (ids, rmap_ranks (res->map))))
        return NULL;
    if (!res->force_up) {
        struct idset *on = idset_intersect (up, res->online);
        idset_destroy (up);
        if (!(up = on))
            return NULL;
    }
    if (idset_subtract (up, res->exclude) < 0
        || idset_subtract (up, drainset_ranks (res->drain)) < 0) {
        idset_destroy (up);
        return NULL;
    }
    return up;
}

struct idset *change_begin (struct resource *res, const struct idset *ids)
{
    return res_up (res, ids);
}

void change_end (struct resource *res, const struct idset *ids,
                 struct idset *before)
{
    struct idset *after = NULL, *up = NULL, *down = NULL;

    if (!before || !(after = res_up (res, ids))
        || !(up = idset_difference (after, before))
        || !(down = idset_difference (before, after)))
        rlog (res->h, LOG_ERR, "computing the up set: out of memory");
    else
        acquire_notify (res->acquire, up, down);
    idset_destroy (up);
    idset_destroy (down);
    idset_destroy (after);
    idset_destroy (before);
}

/* Post an event to the journal and, if kvs, to resource.eventlog. */
int res_post (struct resource *res, json_t *entry, bool kvs, json_t *R_put,
              const flux_msg_t *msg)
{
    const char *name = json_string_value (json_object_get (entry, "name"));

    if (journal_append (res->journal, entry,
                        !strcmp (name, "resource-define") ? res->R : NULL)
        < 0)
        rlog (res->h, LOG_ERR, "journal: %s", strerror (errno));
    if (kvs)
        return reslog_post (res->reslog, entry, R_put, msg);
    return 0;
}

/* A journal-only event {idset} (online, offline). */
static void post_ids (struct resource *res, const char *name,
                      const struct idset *ids)
{
    char *s;
    json_t *entry;

    if (idset_empty (ids))
        return;
    if (!(s = rmap_idset_str (ids))
        || !(entry = eventlog_entry_pack (0., name, "{s:s}", "idset", s))) {
        free (s);
        rlog (res->h, LOG_ERR, "%s event: out of memory", name);
        return;
    }
    (void)res_post (res, entry, false, NULL, NULL);
    json_decref (entry);
    free (s);
}

/* post_ids () of the ranks that are targets: those of R once defined
 * (a configured R may have fewer ranks than the instance). */
static void post_targets (struct resource *res, const char *name,
                          const struct idset *ids)
{
    struct idset *in;

    if (!res->map) {
        post_ids (res, name, ids);
        return;
    }
    if (!(in = idset_intersect (ids, rmap_ranks (res->map)))) {
        rlog (res->h, LOG_ERR, "%s event: out of memory", name);
        return;
    }
    post_ids (res, name, in);
    idset_destroy (in);
}

/* ---- defining R ---- */

static int resolve_exclude (struct resource *res, flux_error_t *error)
{
    struct idset *ids;

    if (!res->exclude_spec)
        return 0;
    if (!(ids = rmap_targets (res->map, res->exclude_spec, error)))
        return -1;
    idset_destroy (res->exclude);
    res->exclude = ids;
    return 0;
}

static int online_all (struct resource *res)
{
    struct idset *fresh = idset_difference (rmap_ranks (res->map), res->online);

    if (!fresh || idset_add (res->online, fresh) < 0) {
        idset_destroy (fresh);
        return -1;
    }
    post_ids (res, "online", fresh);
    idset_destroy (fresh);
    return 0;
}

/* The scheduler's inventory: R less the excluded targets. */
json_t *res_sched_R (struct resource *res)
{
    struct idset *keep = idset_difference (rmap_ranks (res->map), res->exclude);
    json_t *R = keep ? rmap_subset (res->map, keep) : NULL;

    idset_destroy (keep);
    return R;
}

static int define (struct resource *res, json_t *R, struct rmap *map,
                   const char *method, flux_error_t *error)
{
    json_t *entry = NULL, *sched_R = NULL;
    struct idset *up = NULL;
    int moved = 0, rc = -1;

    res->R = json_incref (R);
    res->map = map;
    res->method = method;
    if (drainset_remap (res->drain, res->map, &moved) < 0)
        goto nomem;
    if (moved > 0)
        rlog (res->h, LOG_WARNING,
              "%d drained ranks no longer match their "
              "host: moved or dropped",
              moved);
    if (!(entry = eventlog_entry_pack (0., "resource-define", "{s:s}", "method",
                                       method)))
        goto nomem;
    if (res_post (res, entry, true, strcmp (method, "kvs") ? R : NULL, NULL)
        < 0) {
        errprintf (error, "posting resource-define: %s", strerror (errno));
        goto done;
    }
    if (res->force_up && online_all (res) < 0)
        goto nomem;
    if (!(sched_R = res_sched_R (res)) || !(up = res_up (res, res->online))
        || acquire_define (res->acquire, sched_R, up) < 0)
        goto nomem;
    res_run_deferred (res);
    rc = 0;
    goto done;
nomem:
    errno = ENOMEM;
    errprintf (error, "out of memory");
done:
    idset_destroy (up);
    json_decref (sched_R);
    json_decref (entry);
    return rc;
}

/* Define R if the fragments now cover every rank. */
static void try_assemble (struct resource *res)
{
    json_t *R = NULL;
    struct rmap *map = NULL;
    flux_error_t error;

    if (res->map || rlist_nnodes (res->frag) < (int)res->size)
        return;
    if (!(R = rlist_to_R (res->frag)) || !(map = rmap_create (R, &error))) {
        rlog (res->h, LOG_ERR, "assembling R: %s",
              R ? error.text : "out of memory");
        goto done;
    }
    res->map = map; /* for resolve_exclude (); define () sets it too */
    if (resolve_exclude (res, &error) < 0)
        rlog (res->h, LOG_ERR, "resource.exclude: %s (ignored)", error.text);
    res->map = NULL;
    if (define (res, R, map, "dynamic-discovery", &error) < 0)
        rlog (res->h, LOG_ERR, "defining R: %s", error.text);
    map = NULL; /* owned by res now */
done:
    rmap_destroy (map);
    json_decref (R);
}

void resource_update (const struct idset *online, json_t *R,
                      const struct idset *offline, void *arg)
{
    struct resource *res = arg;
    struct idset *changed = NULL, *before = NULL, *on = NULL, *off = NULL;
    flux_error_t error;

    if (R && !res->map && !res->configured
        && frag_merge (&res->frag, R, &error) < 0)
        rlog (res->h, LOG_ERR, "bad R fragment: %s", error.text);
    if (res->force_up && res->map)
        goto assemble; /* monitoring is off: everything in R is up */
    if (!(changed = idset_union (online, offline))
        || !(before = change_begin (res, changed))
        || !(on = idset_difference (online, res->online))
        || !(off = idset_intersect (offline, res->online))
        || idset_add (res->online, on) < 0
        || idset_subtract (res->online, off) < 0) {
        rlog (res->h, LOG_ERR, "online/offline update: out of memory");
        idset_destroy (before);
        goto assemble;
    }
    post_targets (res, "online", on);
    post_targets (res, "offline", off);
    change_end (res, changed, before);
assemble:
    idset_destroy (on);
    idset_destroy (off);
    idset_destroy (changed);
    if (!res->map && !res->configured)
        try_assemble (res);
}

/* ---- setup ---- */

/* Replay resource.eventlog (drain state persists across restarts). */
static int replay (struct resource *res, flux_error_t *error)
{
    flux_future_t *f = flux_kvs_lookup (res->h, NULL, 0, "resource.eventlog");
    const char *s = NULL;
    json_t *log = NULL, *entry;
    size_t i;
    int rc = -1;

    if (!f || flux_kvs_lookup_get (f, &s) < 0) {
        if (f && errno == ENOENT)
            rc = 0;
        else
            errprintf (error, "looking up resource.eventlog: %s",
                       strerror (errno));
        goto done;
    }
    if (!(log = eventlog_decode (s ? s : ""))) {
        errprintf (error, "resource.eventlog is malformed");
        goto done;
    }
    json_array_foreach (log, i, entry)
    {
        flux_error_t e;
        if (drainset_apply_event (res->drain, entry, &e) < 0)
            rlog (res->h, LOG_ERR, "resource.eventlog[%zu]: %s (ignored)", i,
                  e.text);
    }
    rc = 0;
done:
    json_decref (log);
    flux_future_destroy (f);
    return rc;
}

/* R saved by an earlier run of this instance, if it covers exactly the
 * ranks of this one.  NULL (not an error) otherwise. */
static json_t *kvs_R (struct resource *res, struct rmap **mapp)
{
    flux_future_t *f = flux_kvs_lookup (res->h, NULL, 0, "resource.R");
    json_t *R = NULL;
    const char *s;
    struct rmap *map = NULL;
    struct idset *want = idset_create (0, 0);

    if (!f || !want || flux_kvs_lookup_get (f, &s) < 0 || !s
        || !(R = json_loads (s, 0, NULL)) || !(map = rmap_create (R, NULL))
        || idset_range_set (want, 0, res->size - 1) < 0
        || !idset_equal (want, rmap_ranks (map))) {
        rmap_destroy (map);
        json_decref (R);
        R = NULL;
        map = NULL;
    }
    idset_destroy (want);
    flux_future_destroy (f);
    *mapp = map;
    return R;
}

/* The exclude attribute: an idset is checked now (against R or the
 * broker ranks), a hostlist when R is defined. */
static int parse_exclude (struct resource *res, const char *spec,
                          const struct idset *ranks, flux_error_t *error)
{
    struct idset *ids, *extra;

    if (!spec || !*spec)
        return 0;
    if (!(ids = idset_decode (spec))) {
        if (!(res->exclude_spec = strdup (spec)))
            return errprintf (error, "out of memory");
        return 0;
    }
    if (!(extra = idset_difference (ids, ranks))) {
        idset_destroy (ids);
        return errprintf (error, "out of memory");
    }
    if (!idset_empty (extra)) {
        idset_destroy (extra);
        idset_destroy (ids);
        errno = EINVAL;
        return errprintf (error,
                          "resource.exclude: ranks %s are not in "
                          "the instance",
                          spec);
    }
    idset_destroy (extra);
    idset_destroy (res->exclude);
    res->exclude = ids;
    return 0;
}

static void post_restart (struct resource *res, const char *hostlist)
{
    char *ranks = NULL, *nodelist = NULL;
    struct idset *all = NULL;
    json_t *entry;

    if (res->map) {
        ranks = rmap_idset_str (rmap_ranks (res->map));
        nodelist = rmap_nodelist (res->map, rmap_ranks (res->map));
    }
    else if ((all = idset_create (0, 0))
             && idset_range_set (all, 0, res->size - 1) == 0) {
        ranks = rmap_idset_str (all);
        nodelist = strdup (hostlist ? hostlist : "");
    }
    if (ranks && nodelist
        && (entry = eventlog_entry_pack (0., "restart", "{s:s s:s s:s}",
                                         "ranks", ranks, "online", "",
                                         "nodelist", nodelist))) {
        (void)res_post (res, entry, false, NULL, NULL);
        json_decref (entry);
    }
    idset_destroy (all);
    free (ranks);
    free (nodelist);
}

struct resource *resource_create (flux_t *h, const struct resource_config *cfg,
                                  flux_error_t *error)
{
    struct resource *res;
    struct rmap *map = NULL;
    json_t *R = NULL;
    struct idset *brokers = NULL;
    const char *method = NULL;

    if (!(res = calloc (1, sizeof (*res)))) {
        errprintf (error, "out of memory");
        return NULL;
    }
    res->h = h;
    res->size = cfg->size;
    res->force_up = cfg->force_up;
    if (!(res->online = idset_create (0, 0))
        || !(res->exclude = idset_create (0, 0))
        || !(res->drain = drainset_create ())
        || !(res->journal = journal_create (h, JOURNAL_MAX))
        || !(res->reslog = reslog_create (h))
        || !(res->acquire = acquire_create (h))
        || !(res->deferred = reqlist_create (DEFERRED_MAX))
        || !(brokers = idset_create (0, 0))
        || idset_range_set (brokers, 0, cfg->size - 1) < 0) {
        errprintf (error, "out of memory");
        goto error;
    }
    if (replay (res, error) < 0)
        goto error;
    if (cfg->R) {
        if (!(map = rmap_create (cfg->R, error)))
            goto error;
        R = json_incref (cfg->R);
        res->configured = true;
        method = "configuration";
    }
    else if ((R = kvs_R (res, &map)))
        method = "kvs";
    if (parse_exclude (res, cfg->exclude, map ? rmap_ranks (map) : brokers,
                       error)
        < 0)
        goto error;
    if (map) {
        res->map = map; /* for these two; define () sets it again */
        post_restart (res, cfg->hostlist);
        if (resolve_exclude (res, error) < 0) {
            res->map = NULL;
            goto error;
        }
        res->map = NULL;
        if (define (res, R, map, method, error) < 0) {
            map = NULL; /* owned by res */
            goto error;
        }
        map = NULL;
    }
    else
        post_restart (res, cfg->hostlist);
    json_decref (R);
    idset_destroy (brokers);
    return res;
error:
    rmap_destroy (map);
    json_decref (R);
    idset_destroy (brokers);
    resource_destroy (res);
    return NULL;
}

void resource_destroy (struct resource *res)
{
    if (res) {
        int saved_errno = errno;
        if (res->deferred)
            reqlist_fail_all (res->deferred, res->h, ENOSYS,
                              "resource module unloading");
        reqlist_destroy (res->deferred);
        acquire_destroy (res->acquire);
        reslog_destroy (res->reslog);
        journal_destroy (res->journal);
        drainset_destroy (res->drain);
        idset_destroy (res->exclude);
        idset_destroy (res->online);
        free (res->exclude_spec);
        rlist_destroy (res->frag);
        rmap_destroy (res->map);
        json_decref (res->R);
        free (res);
        errno = saved_errno;
    }
}

json_t *resource_stats (struct resource *res)
{
    int commits, errors;

    reslog_counts (res->reslog, &commits, &errors);
    return json_pack (
        "{s:b s:s s:i s:i s:i s:i s:b s:i}", "defined", res->map != NULL,
        "method", res->method ? res->method : "", "journal-events",
        journal_count (res->journal), "journal-streams",
        journal_streams (res->journal), "kvs-commits", commits, "kvs-errors",
        errors, "acquired", acquire_active (res->acquire), "deferred",
        reqlist_count (res->deferred));
}
