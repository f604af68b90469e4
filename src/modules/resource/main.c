/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* main.c - the resource broker module (loaded on every rank).
 *
 * Every rank discovers its resources with hwloc (after the module reports
 * RUNNING, so the broker goes on loading meanwhile) and takes part in the
 * TBON reduction of reduce.c; rank 0 also holds the inventory and serves
 * the resource.* requests (resource.c, service.c).
 *
 * Broker attributes read at load:
 *   resource.path               an Rv1 file: R is configured, no discovery
 *   jobid, parent-uri           this instance is a job of the parent: R is
 *                               the job's R, fetched from it (jobR.c), no
 *                               discovery (unless resource.path is set)
 *   resource.exclude            targets (idset or hostlist) never scheduled
 *   resource.monitor-force-up   every target of R is online (not monitored)
 *   tbon.topo, hostlist, rank, size
 * The module takes no arguments.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libhostlist/hostlist.h"
#include "libflux/stats.h"
#include "librlist/rlist.h"
#include "jobR.h"
#include "overlay/topology.h"
#include "reduce.h"
#include "resource.h"
#include "rlog.h"

/* Seconds a rank waits for its children before reporting without them. */
#define REDUCE_GRACE 5.0

struct ctx {
    flux_t *h;
    uint32_t rank, size;
    struct reduce *reduce;
    struct resource *res; /* rank 0 */
    uv_prepare_t *prep;
    struct flux_deferred discover;
};

/* ---- handlers ---- */

static void hello_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    reduce_hello (((struct ctx *)arg)->reduce, msg);
}

static void watch_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    reduce_watch (((struct ctx *)arg)->reduce, msg);
}

static void stats_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    struct ctx *ctx = arg;
    json_t *o, *r = NULL;

    if ((o = reduce_stats (ctx->reduce)) && ctx->res
        && (!(r = resource_stats (ctx->res))
            || json_object_update (o, r) < 0)) {
        json_decref (o);
        o = NULL;
    }
    json_decref (r);
    flux_stats_respond (h, msg, o);
}

#define RANK0_CB(name)                                        \
    static void name##_cb (flux_t *h, flux_msg_handler_t *mh, \
                           const flux_msg_t *msg, void *arg)  \
    {                                                         \
        resource_##name (((struct ctx *)arg)->res, msg);      \
    }
RANK0_CB (status)
RANK0_CB (sched_status)
RANK0_CB (drain)
RANK0_CB (undrain)
RANK0_CB (acquire)
RANK0_CB (acquire_cancel)
RANK0_CB (acquire_mute)
RANK0_CB (journal)
RANK0_CB (journal_cancel)
RANK0_CB (disconnect)

static void not_here_cb (flux_t *h, flux_msg_handler_t *mh,
                         const flux_msg_t *msg, void *arg)
{
    const char *topic = "?";
    char text[128];

    (void)flux_msg_get_topic (msg, &topic);
    snprintf (text, sizeof (text), "%s is served on rank 0 only", topic);
    flux_respond_error (h, msg, EPROTO, text);
}

static const struct flux_msg_handler_spec common_tab[] = {
    {FLUX_MSGTYPE_REQUEST, "resource.hello", hello_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "resource.watch", watch_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "resource.stats-get", stats_cb, FLUX_ROLE_ALL},
    FLUX_MSGHANDLER_TABLE_END,
};

/* Rank 0's services; elsewhere the same topics get EPROTO, except the
 * disconnect which needs no answer. */
static const struct flux_msg_handler_spec rank0_tab[] = {
    {FLUX_MSGTYPE_REQUEST, "resource.status", status_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "resource.sched-status", sched_status_cb,
     FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "resource.drain", drain_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "resource.undrain", undrain_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "resource.acquire", acquire_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "resource.acquire-cancel", acquire_cancel_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "resource.acquire-mute", acquire_mute_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "resource.journal", journal_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "resource.journal-cancel", journal_cancel_cb,
     FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "resource.disconnect", disconnect_cb,
     FLUX_ROLE_USER},
    FLUX_MSGHANDLER_TABLE_END,
};

static const struct flux_msg_handler_spec other_tab[] = {
    {FLUX_MSGTYPE_REQUEST, "resource.status", not_here_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "resource.sched-status", not_here_cb,
     FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "resource.drain", not_here_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "resource.undrain", not_here_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "resource.acquire", not_here_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "resource.journal", not_here_cb, FLUX_ROLE_USER},
    FLUX_MSGHANDLER_TABLE_END,
};

/* ---- discovery ---- */

static void discover_cb (struct flux_deferred *d)
{
    struct ctx *ctx
        = (struct ctx *)((char *)d - offsetof (struct ctx, discover));
    flux_error_t error;
    struct rlist *rl;
    json_t *R = NULL;

    if (!(rl = rlist_from_hwloc (ctx->rank, &error))
        || !(R = rlist_to_R (rl))) {
        rlog (ctx->h, LOG_ERR, "resource discovery failed: %s",
              rl ? "out of memory" : error.text);
        flux_reactor_stop_error (flux_get_reactor (ctx->h));
        goto done;
    }
    if (reduce_local_ready (ctx->reduce, R) < 0)
        flux_reactor_stop_error (flux_get_reactor (ctx->h));
done:
    json_decref (R);
    rlist_destroy (rl);
}

/* The first prepare runs in the loop turn that reports RUNNING: discover
 * on the next turn, so the broker is not kept waiting for hwloc. */
static void prepare_cb (uv_prepare_t *p)
{
    struct ctx *ctx = p->data;
    uv_prepare_stop (p);
    flux_reactor_defer (flux_get_reactor (ctx->h), &ctx->discover);
}

/* Adopting failed (no fragment from the parent): discover after all. */
static void discover_now (void *arg)
{
    struct ctx *ctx = arg;
    flux_reactor_defer (flux_get_reactor (ctx->h), &ctx->discover);
}

/* Does this rank share its TBON parent's host (the hostlist attribute)?
 * Then it takes the parent's fragment rather than loading hwloc again:
 * brokers of one host see the same hardware. */
static bool same_host_as_parent (struct ctx *ctx, const struct topology *topo)
{
    const char *s = flux_attr_get (ctx->h, "hostlist");
    struct hostlist *hl;
    char *mine = NULL;
    bool same = false;
    const char *h;

    if (ctx->rank == 0 || !s || !(hl = hostlist_decode (s)))
        return false;
    if (hostlist_count (hl) == (int)ctx->size
        && (h = hostlist_nth (hl, (int)ctx->rank)) && (mine = strdup (h))
        && (h = hostlist_nth (hl, (int)topology_parent (topo, ctx->rank))))
        same = !strcmp (mine, h);
    free (mine);
    hostlist_destroy (hl);
    return same;
}

/* ---- setup ---- */

static bool attr_true (flux_t *h, const char *name)
{
    const char *v = flux_attr_get (h, name);
    return v && *v && strcmp (v, "0") != 0 && strcmp (v, "false") != 0;
}

static json_t *load_R (flux_t *h, const char *path)
{
    json_error_t jerr;
    json_t *R = json_load_file (path, 0, &jerr);

    if (!R)
        rlog (h, LOG_ERR, "resource.path %s: %s (line %d)", path, jerr.text,
              jerr.line);
    return R;
}

/* R of an instance that is a job (RFC 8), or NULL when it is not one
 * (or has a configured resource.path).  *is_job says whether it is. */
static json_t *job_R (flux_t *h, bool *is_job)
{
    const char *jobid = flux_attr_get (h, "jobid");
    const char *puri = flux_attr_get (h, "parent-uri");
    const char *lvl = flux_attr_get (h, "instance-level");
    flux_error_t error;
    json_t *R;

    *is_job = jobid && puri && lvl && atoi (lvl) > 0
              && !flux_attr_get (h, "resource.path");
    if (!*is_job)
        return NULL;
    if (!(R = jobR_fetch (puri, jobid, &error)))
        rlog (h, LOG_ERR, "%s", error.text);
    return R;
}

static int setup_rank0 (struct ctx *ctx, const char *path)
{
    struct resource_config cfg = {
        .size = ctx->size,
        .exclude = flux_attr_get (ctx->h, "resource.exclude"),
        .force_up = attr_true (ctx->h, "resource.monitor-force-up"),
    };
    char *exclude = cfg.exclude ? strdup (cfg.exclude) : NULL;
    const char *hl = flux_attr_get (ctx->h, "hostlist");
    char *hostlist = hl ? strdup (hl) : NULL;
    flux_error_t error;
    int rc = -1;

    cfg.exclude = exclude;
    cfg.hostlist = hostlist;
    if (path && !(cfg.R = load_R (ctx->h, path)))
        goto done;
    if (!path) {
        bool is_job;
        cfg.R = job_R (ctx->h, &is_job);
        if (is_job && !cfg.R)
            goto done;
    }
    if (!(ctx->res = resource_create (ctx->h, &cfg, &error))) {
        rlog (ctx->h, LOG_ERR, "%s", error.text);
        goto done;
    }
    rc = 0;
done:
    json_decref (cfg.R);
    free (exclude);
    free (hostlist);
    return rc;
}

static int start (struct ctx *ctx, bool configured, const struct topology *topo)
{
    uv_loop_t *loop = flux_reactor_uv (flux_get_reactor (ctx->h));

    if (configured) /* nothing to discover: just report online */
        return reduce_start (ctx->reduce) < 0
                   ? -1
                   : reduce_local_ready (ctx->reduce, NULL);
    if (same_host_as_parent (ctx, topo)) {
        reduce_set_adopt (ctx->reduce, discover_now, ctx);
        return reduce_start (ctx->reduce);
    }
    if (reduce_start (ctx->reduce) < 0)
        return -1;
    if (!(ctx->prep = calloc (1, sizeof (*ctx->prep))))
        return -1;
    uv_prepare_init (loop, ctx->prep);
    ctx->prep->data = ctx;
    return uv_prepare_start (ctx->prep, prepare_cb) < 0 ? -1 : 0;
}

int mod_main (flux_t *h, int argc, char **argv)
{
    struct ctx ctx = {.h = h};
    flux_msg_handler_t **common = NULL, **rank0 = NULL;
    const char *path;
    struct topology *topo = NULL;
    flux_error_t error;
    int rc = -1;

    flux_deferred_init (&ctx.discover, discover_cb);
    if (argc > 0) {
        rlog (h, LOG_ERR, "the resource module takes no arguments");
        errno = EINVAL;
        return -1;
    }
    if (flux_get_rank (h, &ctx.rank) < 0 || flux_get_size (h, &ctx.size) < 0)
        return -1;
    if (!(topo = topology_create_broker (h, &error))) {
        rlog (h, LOG_ERR, "%s", error.text);
        return -1;
    }
    path = flux_attr_get (h, "resource.path");
    if (ctx.rank == 0 && setup_rank0 (&ctx, path) < 0)
        goto done;
    if (!(ctx.reduce
          = reduce_create (h, ctx.rank, topo, REDUCE_GRACE,
                           ctx.rank == 0 ? resource_update : NULL, ctx.res)))
        goto done;
    if (flux_msg_handler_addvec (h, common_tab, &ctx, &common) < 0
        || flux_msg_handler_addvec (h, ctx.rank == 0 ? rank0_tab : other_tab,
                                    &ctx, &rank0)
               < 0)
        goto done;
    const char *level = flux_attr_get (h, "instance-level");
    bool is_job = flux_attr_get (h, "jobid") && flux_attr_get (h, "parent-uri")
                  && level && atoi (level) > 0;
    if (start (&ctx, path != NULL || is_job, topo) < 0)
        goto done;
    if (flux_reactor_run (flux_get_reactor (h), 0) < 0)
        goto done;
    rc = 0;
done:
    if (ctx.prep)
        flux_uv_close_free ((uv_handle_t *)ctx.prep);
    flux_reactor_undefer (&ctx.discover);
    flux_msg_handler_delvec (rank0);
    flux_msg_handler_delvec (common);
    reduce_destroy (ctx.reduce);
    resource_destroy (ctx.res);
    topology_destroy (topo);
    return rc;
}
