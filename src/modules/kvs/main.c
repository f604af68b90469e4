/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* main.c - the kvs broker module: handler table, start-up and shutdown.
 *
 * Every rank runs kvs.  Rank 0 owns the namespaces: it applies commits
 * and publishes root changes as private kvs.namespace-<NS>-* events; the
 * primary root is checkpointed in the content store and restored at
 * start.  Ranks > 0 relay commits to rank 0, follow root changes from
 * the events, and answer lookups from their own object cache.
 *
 * Once ready, rank 0 publishes the private event "kvs.online".  While the
 * module is unloading or absent, commits, lookups and namespace creates
 * and removes fail with ENOSYS and nothing of them was applied
 * (commit.c), so a client can keep them and send them again on that
 * event (the job manager, sched-simple, job-exec and the job shells do:
 * a reload of the kvs loses no job).  The unload's last checkpoint holds
 * the other namespaces too (final_checkpoint), restored at the start: a
 * job's guest namespace outlives a reload (and a clean restart).
 *
 * Arguments: inline-max=BYTES (vals larger than this are stored as
 * blobs, default 256), cache-max=N and cache-max-bytes=N (the object
 * cache's bounds, default 100000 entries and 16 MiB, counting each
 * entry, its blob and an estimate of its decoded object: cache.c; the
 * directories of 10,000 active jobs fit, which the job manager's
 * batches of appends need), cache-max-age=SECONDS (an entry not used for
 * this long, rounded up to 10 s, is dropped within 10 s more; default
 * 60, 0: never; so an idle broker gives its cache back), batch-max=N
 * (commits per root change, default 4096), linger-ms=N (longest wait to
 * gather a batch, default 1, 0: never wait), pipeline=N (batches of a
 * namespace in flight at once, default 1: see commit.c), write-chunk=N
 * (most blobs in one content.write, default 4096), hdir-maxdirent=N
 * (a directory of more entries is stored as an RFC 11 hdir, default 256,
 * 0: never).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "libcontent/content.h"
#include "libkvs/treeobj.h"
#include "libutil/sizeparse.h"

#include "apply.h"
#include "kvs.h"

#define STOP_TIMEOUT_MS 30000 /* give up on in-flight work at shutdown */

/* ---- helpers shared by the service files ---- */

void kvs_log (struct kvs_ctx *ctx, int severity, const char *fmt, ...)
{
    va_list ap;

    va_start (ap, fmt);
    flux_vlog (ctx->h, severity, fmt, ap);
    va_end (ap);
}

bool kvs_authorized (const flux_msg_t *msg, const struct kvs_ns *ns)
{
    struct flux_msg_cred cred;

    if (flux_msg_get_cred (msg, &cred) < 0)
        return false;
    return flux_msg_cred_authorize (cred, ns->owner) == 0;
}

void kvs_respond_error (struct kvs_ctx *ctx, const flux_msg_t *msg, int errnum,
                        const char *fmt, ...)
{
    char text[256] = "";
    va_list ap;

    if (fmt) {
        va_start (ap, fmt);
        vsnprintf (text, sizeof (text), fmt, ap);
        va_end (ap);
    }
    if (flux_respond_error (ctx->h, msg, errnum, fmt ? text : NULL) < 0)
        kvs_log (ctx, LOG_ERR, "error response: %s", strerror (errno));
}

static void stop_timer_cb (uv_timer_t *t)
{
    struct kvs_ctx *ctx = t->data;

    kvs_log (ctx, LOG_ERR, "shutdown: %d commit(s) still in flight after %ds",
             ctx->inflight, STOP_TIMEOUT_MS / 1000);
    flux_reactor_stop (flux_get_reactor (ctx->h));
}

void kvs_free_handle (uv_handle_t *h)
{
    free (h);
}

static void final_checkpoint_cb (flux_future_t *f, void *arg)
{
    struct kvs_ctx *ctx = arg;

    if (flux_future_get (f, NULL) < 0)
        kvs_log (ctx, LOG_ERR, "shutdown: checkpoint of the last root: %s",
                 future_strerror (f, errno));
    flux_future_destroy (f);
    ctx->inflight--;
    kvs_check_stop (ctx);
}

static int add_namespace (struct kvs_ns *ns, void *arg)
{
    json_t *o;

    if (!strcmp (ns->name, KVS_PRIMARY))
        return 0;
    if (!(o = json_pack ("{s:s s:i s:I s:i}", "rootref", ns->rootref,
                         "sequence", ns->rootseq, "owner",
                         (json_int_t)ns->owner, "flags", ns->flags))
        || json_object_set_new (arg, ns->name, o) < 0) {
        json_decref (o);
        return -1;
    }
    return 0;
}

/* The last checkpoint, once nothing is in flight (once): the primary root
 * if a LAZY batch left the checkpoint behind it, and the other namespaces
 * (a job's guest namespace: its shells keep committing to it across a
 * reload), restored by the next start (restore_namespaces).  Their blobs
 * were stored before it, so they are durable with it.  False if nothing
 * was sent. */
static bool final_checkpoint (struct kvs_ctx *ctx)
{
    struct kvs_ns *primary = nstab_lookup (ctx->nstab, KVS_PRIMARY);
    json_t *extra = NULL, *nss;
    flux_future_t *f = NULL;

    if (!ctx->checkpoint || ctx->final_sent || !primary)
        return false;
    ctx->final_sent = true;
    if (ctx->behind_errnum) {
        kvs_log (ctx, LOG_CRIT,
                 "shutdown: the last root is not checkpointed: %s",
                 ctx->behind_errstr);
        return false;
    }
    if (nstab_count (ctx->nstab) == 1 && !ctx->checkpoint_behind)
        return false;
    errno = ENOMEM;
    if (!(nss = json_object ())
        || nstab_foreach (ctx->nstab, add_namespace, nss) != 0
        || !(extra = json_pack ("{s:O}", "namespaces", nss))
        || !(f = content_checkpoint_put_with (ctx->h, primary->rootref,
                                              primary->rootseq, extra))
        || flux_future_then (f, -1., final_checkpoint_cb, ctx) < 0) {
        kvs_log (ctx, LOG_ERR, "shutdown: checkpoint of the last root: %s",
                 strerror (errno));
        flux_future_destroy (f);
        json_decref (nss);
        json_decref (extra);
        return false;
    }
    json_decref (nss);
    json_decref (extra);
    ctx->checkpoint_behind = false;
    ctx->inflight++;
    return true;
}

/* Start: the namespaces the last unload kept (final_checkpoint).  A bad
 * entry is logged and skipped. */
static void restore_namespaces (struct kvs_ctx *ctx, json_t *cp)
{
    json_t *nss = json_object_get (cp, "namespaces"), *o;
    const char *name;
    int n = 0;

    json_object_foreach (nss, name, o)
    {
        const char *ref;
        int seq, flags;
        json_int_t owner;
        if (json_unpack (o, "{s:s s:i s:I s:i}", "rootref", &ref, "sequence",
                         &seq, "owner", &owner, "flags", &flags)
                < 0
            || blobref_validate (ref) < 0 || seq < 0 || owner < 0
            || owner > UINT32_MAX || !strcmp (name, KVS_PRIMARY)
            || !nstab_add (ctx->nstab, name, (uint32_t)owner, flags, ref,
                           seq)) {
            kvs_log (ctx, LOG_ERR, "checkpoint: namespace %s not restored",
                     name);
            continue;
        }
        n++;
    }
    if (n > 0)
        kvs_log (ctx, LOG_INFO, "restored %d namespace%s besides primary", n,
                 n == 1 ? "" : "s");
}

void kvs_check_stop (struct kvs_ctx *ctx)
{
    if (ctx->stopping && ctx->inflight == 0 && !final_checkpoint (ctx))
        flux_reactor_stop (flux_get_reactor (ctx->h));
}

/* ---- requests handled here ---- */

/* kvs.shutdown (the broker unloading us): refuse new commits, finish
 * the ones in flight, then leave the reactor.
 */
static void shutdown_cb (flux_t *h, flux_msg_handler_t *mh,
                         const flux_msg_t *msg, void *arg)
{
    struct kvs_ctx *ctx = arg;

    if (ctx->stopping)
        return;
    commit_settle_now (ctx); /* the commits of this turn go first */
    ctx->stopping = true;
    kvs_check_stop (ctx); /* may send the final checkpoint */
    if (ctx->inflight > 0
        && (ctx->stop_timer = calloc (1, sizeof (uv_timer_t)))) {
        uv_timer_init (flux_reactor_uv (flux_get_reactor (h)), ctx->stop_timer);
        ctx->stop_timer->data = ctx;
        uv_timer_start (ctx->stop_timer, stop_timer_cb, STOP_TIMEOUT_MS, 0);
    }
}

static void disconnect_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg)
{
    struct kvs_ctx *ctx = arg;

    lookupsvc_disconnect (ctx, msg);
    nssvc_disconnect (ctx, msg);
}

/* kvs.stats-get (flux module stats kvs): the object cache (cache.h),
 * counts of commits, batches (root changes: lazy-batches of them not
 * checkpointed, lazy-first of those ahead of durable commits,
 * overtakes of those answered before a durable batch in flight) and
 * lookups, writes-behind (content.writes not waited for) and
 * checkpoints-deferred (sent after some), and where a commit's time
 * goes, in seconds summed over answered commits or batches:
 * queue-seconds (waiting for its batch to start), commit-seconds
 * (arrival to answer), apply-seconds and store-seconds (per batch:
 * applying, then storing and checkpointing). */
static void stats_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    struct kvs_ctx *ctx = arg;
    struct cache_stats cs;
    struct kvs_ns *primary = nstab_lookup (ctx->nstab, KVS_PRIMARY);

    cache_get_stats (ctx->cache, &cs);
    if (flux_respond_pack (
            h, msg,
            "{s:{s:I s:I s:I s:I s:I s:I s:I s:I s:I} s:i s:I s:I s:I s:I s:I "
            "s:I s:I s:I s:I s:I s:I"
            " s:i s:i s:f s:f s:f s:f s:i}",
            "cache", "count", (json_int_t)cs.count, "dirty",
            (json_int_t)cs.dirty, "bytes", (json_int_t)cs.bytes, "loading",
            (json_int_t)cs.loading, "loads", (json_int_t)cs.loads, "hits",
            (json_int_t)cs.hits, "misses", (json_int_t)cs.misses, "expired",
            (json_int_t)cs.expired, "aged", (json_int_t)cs.aged, "namespaces",
            nstab_count (ctx->nstab), "commits", (json_int_t)ctx->stats.commits,
            "commit-errors", (json_int_t)ctx->stats.commit_errors, "batches",
            (json_int_t)ctx->stats.batches, "max-batch",
            (json_int_t)ctx->stats.max_batch, "lookups",
            (json_int_t)ctx->stats.lookups, "relays",
            (json_int_t)ctx->stats.relays, "lazy-batches",
            (json_int_t)ctx->stats.lazy_batches, "lazy-first",
            (json_int_t)ctx->stats.lazy_first, "overtakes",
            (json_int_t)ctx->stats.overtakes, "writes-behind",
            (json_int_t)ctx->stats.behind, "checkpoints-deferred",
            (json_int_t)ctx->stats.deferred, "rootseq",
            primary ? primary->rootseq : -1, "inflight", ctx->inflight,
            "apply-seconds", ctx->stats.apply_time, "store-seconds",
            ctx->stats.store_time, "queue-seconds", ctx->stats.queue_time,
            "commit-seconds", ctx->stats.commit_time, "parked",
            lookupsvc_parked (ctx) + nssvc_parked (ctx))
        < 0)
        kvs_log (ctx, LOG_ERR, "kvs.stats-get: respond: %s", strerror (errno));
}

/* content.online (rank 0): a content service runs again; writes it
 * refused while it was reloading go again (commit.c). */
static void content_online_cb (flux_t *h, flux_msg_handler_t *mh,
                               const flux_msg_t *msg, void *arg)
{
    commit_content_online (arg);
}

static const struct flux_msg_handler_spec htab[] = {
    {FLUX_MSGTYPE_REQUEST, "kvs.lookup", lookup_request_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "kvs.lookup-plus", lookup_plus_request_cb,
     FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "kvs.commit", commit_request_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "kvs.relaycommit", relaycommit_request_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "kvs.getroot", getroot_request_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "kvs.wait-version", wait_version_request_cb,
     FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "kvs.namespace-create", ns_create_request_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "kvs.namespace-remove", ns_remove_request_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "kvs.namespace-list", ns_list_request_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "kvs.setroot-pause", setroot_pause_request_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "kvs.setroot-unpause", setroot_unpause_request_cb,
     0},
    {FLUX_MSGTYPE_REQUEST, "kvs.stats-get", stats_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "kvs.disconnect", disconnect_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "kvs.shutdown", shutdown_cb, 0},
    {FLUX_MSGTYPE_EVENT, "kvs.namespace-*", ns_event_cb, 0},
    {FLUX_MSGTYPE_EVENT, "content.online", content_online_cb, 0},
    FLUX_MSGHANDLER_TABLE_END,
};

/* ---- the object cache loads through the content service ---- */

struct load {
    struct kvs_ctx *ctx;
    flux_future_t *f;
    char ref[BLOBREF_MAX_STRING_SIZE];
};

static void load_free (void *handle)
{
    struct load *ld = handle;
    if (ld) {
        flux_future_destroy (ld->f);
        free (ld);
    }
}

static void load_continuation (flux_future_t *f, void *arg)
{
    struct load *ld = arg;
    const void *data = NULL;
    size_t len = 0;
    int errnum = 0;

    if (content_load_get (f, &data, &len) < 0)
        errnum = errno;
    /* frees ld (and f) once the data is copied, then calls the waiters */
    cache_load_response (ld->ctx->cache, ld->ref, errnum, data, len);
}

static void *load_start (const char *ref, void *arg)
{
    struct kvs_ctx *ctx = arg;
    struct load *ld;

    if (!(ld = calloc (1, sizeof (*ld))))
        return NULL;
    ld->ctx = ctx;
    snprintf (ld->ref, sizeof (ld->ref), "%s", ref);
    if (!(ld->f = content_load_byblobref (ctx->h, ref, 0))
        || flux_future_then (ld->f, -1., load_continuation, ld) < 0) {
        load_free (ld);
        return NULL;
    }
    return ld;
}

/* ---- start-up ---- */

static int parse_args (struct kvs_ctx *ctx, int argc, char **argv,
                       flux_error_t *error)
{
    for (int i = 0; i < argc; i++) {
        char *end;
        long long v;
        const char *eq = strchr (argv[i], '=');
        if (!eq)
            goto bad;
        errno = 0;
        v = strtoll (eq + 1, &end, 10);
        if (errno || *end || end == eq + 1 || v < 0)
            goto bad;
        if (!strncmp (argv[i], "inline-max=", 11))
            ctx->inline_max = (size_t)v;
        else if (!strncmp (argv[i], "cache-max=", 10))
            ctx->cache_max = (size_t)v;
        else if (!strncmp (argv[i], "cache-max-bytes=", 16))
            ctx->cache_max_bytes = (size_t)v;
        else if (!strncmp (argv[i], "cache-max-age=", 14) && v < 1 << 30)
            ctx->cache_max_age = (int)v;
        else if (!strncmp (argv[i], "batch-max=", 10) && v > 0 && v < 1 << 30)
            ctx->batch_max = (int)v;
        else if (!strncmp (argv[i], "write-chunk=", 12) && v > 0 && v < 1 << 30)
            ctx->write_chunk = (int)v;
        else if (!strncmp (argv[i], "pipeline=", 9) && v > 0 && v < 1024)
            ctx->pipeline = (int)v;
        else if (!strncmp (argv[i], "linger-ms=", 10) && v < 60000)
            ctx->linger_ms = (int)v;
        else if (!strncmp (argv[i], "hdir-maxdirent=", 15) && v < 1 << 30)
            ctx->hdir_maxdirent = (int)v;
        else
            goto bad;
        continue;
    bad:
        errno = EINVAL;
        return errprintf (error, "invalid argument: %s", argv[i]);
    }
    return 0;
}

static int init_attrs (struct kvs_ctx *ctx, flux_error_t *error)
{
    const char *s;
    size_t limit;
    json_t *empty;

    if (flux_get_rank (ctx->h, &ctx->rank) < 0)
        return errprintf (error, "cannot get rank: %s", strerror (errno));
    ctx->owner = getuid ();
    if ((s = flux_attr_get (ctx->h, "security.owner")))
        ctx->owner = (uint32_t)strtoul (s, NULL, 10);
    snprintf (ctx->hashtype, sizeof (ctx->hashtype), "sha1");
    if ((s = flux_attr_get (ctx->h, "content.hash")))
        snprintf (ctx->hashtype, sizeof (ctx->hashtype), "%s", s);
    if (blobref_hashtype_size (ctx->hashtype) < 0) {
        errno = EINVAL;
        return errprintf (error, "unknown content.hash %s", ctx->hashtype);
    }
    /* writes behind (commit.c) only of blobs the content service takes:
     * below its limit (the attribute, read as the content module reads
     * it) and 1 MiB */
    ctx->behind_max = (size_t)1 << 20;
    if ((s = flux_attr_get (ctx->h, "content.blob-size-limit"))
        && size_parse (s, &limit) == 0 && limit < ctx->behind_max)
        ctx->behind_max = limit;
    if (!(empty = treeobj_create_dir ())
        || treeobj_hash (ctx->hashtype, empty, ctx->empty_ref,
                         sizeof (ctx->empty_ref))
               < 0) {
        json_decref (empty);
        return errprintf (error, "cannot hash the empty directory");
    }
    json_decref (empty);
    return 0;
}

/* Rank 0: store the empty dir (namespace-create's clients count on it),
 * then restore primary from the checkpoint, or start it empty and
 * checkpoint that.
 */
static int init_rank0 (struct kvs_ctx *ctx, flux_error_t *error)
{
    json_t *empty = treeobj_create_dir ();
    char *enc = empty ? treeobj_encode (empty) : NULL;
    const char *ref = ctx->empty_ref;
    int seq = 0, rc = -1;
    flux_future_t *f = NULL;
    json_t *cp, *cp_keep = NULL;

    json_decref (empty);
    if (!enc) {
        errprintf (error, "cannot encode the empty directory");
        goto done;
    }
    if (!(f = content_store (ctx->h, enc, strlen (enc), 0))
        || flux_future_get (f, NULL) < 0) {
        errprintf (error, "storing the empty directory: %s",
                   f ? future_strerror (f, errno) : strerror (errno));
        goto done;
    }
    flux_future_destroy (f);
    if (!(f = content_checkpoint_get (ctx->h)))
        goto done;
    if (content_checkpoint_get_rootref (f, &ref, &seq) == 0) {
        if (blobref_validate (ref) < 0 || seq < 0) {
            errno = EINVAL;
            errprintf (error, "checkpoint holds an invalid root");
            goto done;
        }
        kvs_log (ctx, LOG_INFO, "restored primary at sequence %d", seq);
        if (content_checkpoint_get_object (f, &cp) == 0)
            cp_keep = json_incref (cp);
    }
    else if (errno == ENOENT) {
        ref = ctx->empty_ref;
        seq = 0;
        flux_future_destroy (f);
        if (!(f = content_checkpoint_put (ctx->h, ref, seq))
            || flux_future_get (f, NULL) < 0) {
            errprintf (error, "checkpoint of the empty root: %s",
                       f ? future_strerror (f, errno) : strerror (errno));
            goto done;
        }
    }
    else if (errno == ENOSYS) {
        /* no checkpoint service: nothing survives a restart anyway */
        ctx->checkpoint = false;
        ref = ctx->empty_ref;
        seq = 0;
        kvs_log (ctx, LOG_INFO, "no checkpoint service: primary not durable");
    }
    else {
        errprintf (error, "checkpoint-get: %s", future_strerror (f, errno));
        goto done;
    }
    if (!nstab_add (ctx->nstab, KVS_PRIMARY, ctx->owner, 0, ref, seq)) {
        errprintf (error, "cannot create the primary namespace");
        goto done;
    }
    if (cp_keep)
        restore_namespaces (ctx, cp_keep);
    rc = 0;
done:
    json_decref (cp_keep);
    flux_future_destroy (f);
    free (enc);
    return rc;
}

static void ctx_destroy (struct kvs_ctx *ctx)
{
    if (ctx) {
        int saved_errno = errno;
        /* answer what is still parked, then drop the objects */
        commit_teardown (ctx);
        lookupsvc_teardown (ctx);
        nssvc_teardown (ctx);
        cache_destroy (ctx->cache);
        nstab_destroy (ctx->nstab);
        if (ctx->stop_timer)
            uv_close ((uv_handle_t *)ctx->stop_timer, kvs_free_handle);
        if (ctx->age_timer)
            uv_close ((uv_handle_t *)ctx->age_timer, kvs_free_handle);
        free (ctx);
        errno = saved_errno;
    }
}

static void age_cb (uv_timer_t *t)
{
    struct kvs_ctx *ctx = t->data;

    cache_age (ctx->cache, ctx->age_ticks);
}

/* Tick the cache's age every 10 s (every cache-max-age seconds if that
 * is less): an entry goes 0 to 1 tick after max-age, rounded up to
 * ticks.  The timer does not keep the module's loop alive. */
static int age_timer_start (struct kvs_ctx *ctx)
{
    int tick = ctx->cache_max_age < 10 ? ctx->cache_max_age : 10;

    if (ctx->cache_max_age == 0)
        return 0;
    if (!(ctx->age_timer = calloc (1, sizeof (*ctx->age_timer))))
        return -1;
    uv_timer_init (flux_reactor_uv (flux_get_reactor (ctx->h)), ctx->age_timer);
    ctx->age_timer->data = ctx;
    ctx->age_ticks = (unsigned int)((ctx->cache_max_age + tick - 1) / tick);
    uv_timer_start (ctx->age_timer, age_cb, (uint64_t)tick * 1000,
                    (uint64_t)tick * 1000);
    uv_unref ((uv_handle_t *)ctx->age_timer);
    return 0;
}

static struct kvs_ctx *ctx_create (flux_t *h, int argc, char **argv,
                                   flux_error_t *error)
{
    struct kvs_ctx *ctx;

    if (!(ctx = calloc (1, sizeof (*ctx)))) {
        errprintf (error, "out of memory");
        return NULL;
    }
    ctx->h = h;
    ctx->inline_max = 256;
    ctx->hdir_maxdirent = APPLY_MAXDIRENT;
    ctx->cache_max = 100000;
    ctx->cache_max_bytes = 16 << 20;
    ctx->cache_max_age = 60;
    ctx->batch_max = 4096;
    ctx->write_chunk = 4096;
    ctx->pipeline = 1;
    ctx->linger_ms = 1;
    ctx->checkpoint = true;
    list_init (&ctx->lookups);
    list_init (&ctx->creates);
    list_init (&ctx->relays);
    list_init (&ctx->batches);
    list_init (&ctx->behind);
    list_init (&ctx->deferred);
    list_init (&ctx->forwards);
    commit_init (ctx);
    if (parse_args (ctx, argc, argv, error) < 0 || init_attrs (ctx, error) < 0)
        goto error;
    if (!(ctx->nstab = nstab_create ()) || nssvc_init (ctx) < 0
        || !(ctx->cache = cache_create (ctx->cache_max, ctx->cache_max_bytes,
                                        load_start, load_free, ctx))) {
        errprintf (error, "out of memory");
        goto error;
    }
    /* ranks > 0 learn primary from upstream when first asked (nssvc.c
     * follows each namespace's events while it is known) */
    if (ctx->rank == 0 && init_rank0 (ctx, error) < 0)
        goto error;
    if (age_timer_start (ctx) < 0) {
        errprintf (error, "out of memory");
        goto error;
    }
    return ctx;
error:
    ctx_destroy (ctx);
    return NULL;
}

/* Publish kvs.online (see above); a failure is only logged. */
static void announce (struct kvs_ctx *ctx)
{
    flux_error_t error;

    if (flux_service_announce (ctx->h, "kvs", &error) < 0)
        kvs_log (ctx, LOG_ERR, "%s", error.text);
}

int mod_main (flux_t *h, int argc, char **argv)
{
    flux_error_t error = {{0}};
    flux_msg_handler_t **handlers = NULL;
    struct kvs_ctx *ctx;
    int rc = -1;

    if (!(ctx = ctx_create (h, argc, argv, &error))) {
        int saved_errno = errno;
        flux_log (h, LOG_ERR, "%s", error.text);
        errno = saved_errno;
        return -1;
    }
    if (flux_msg_handler_addvec (h, htab, ctx, &handlers) < 0) {
        kvs_log (ctx, LOG_ERR, "registering handlers: %s", strerror (errno));
        goto done;
    }
    if (ctx->rank == 0) {
        if (flux_event_subscribe (h, "content.online") < 0) {
            kvs_log (ctx, LOG_ERR, "subscribing to content.online: %s",
                     strerror (errno));
            goto done;
        }
        announce (ctx);
    }
    if (flux_reactor_run (flux_get_reactor (h), 0) < 0) {
        kvs_log (ctx, LOG_ERR, "reactor: %s", strerror (errno));
        goto done;
    }
    rc = 0;
done:
    flux_msg_handler_delvec (handlers);
    ctx_destroy (ctx);
    return rc;
}
