/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* commit.c - kvs.commit and kvs.relaycommit.
 *
 * Ranks > 0 relay each commit to rank 0 (kvs.relaycommit, with the
 * requester's credentials) and answer their client when rank 0 answers,
 * once their own root has reached the commit's (read your writes).
 *
 * Rank 0: group commit.  Commits to a namespace queue in arrival order.
 * While a batch is in flight (applying, or its blobs and checkpoint being
 * stored), newly arriving commits wait; when it finishes, every queued
 * commit (up to batch_max, stopping before a NO_MERGE commit, which goes
 * alone) forms the next batch: one root change, one checkpoint.  The
 * commits are applied one by one (apply.c): one that fails is answered
 * with its error at once and leaves no trace in the others.  LAZY
 * commits (no checkpoint) may go ahead of durable ones of other senders,
 * and one lazy batch may join a durable one in flight (lazy_first) or
 * overtake it (may_overtake).
 *
 * A commit that arrives does not start a batch at once: the batch starts
 * once the turn's messages are dispatched (a deferred call), so commits
 * that arrived together (a busy kvs thread reads many at a time) are one
 * batch, one root change and one checkpoint, not a batch and a queue
 * that waits for its storage.
 *
 * Gathering: clients answered by a batch usually commit again at once.
 * Starting the next batch with only the commits that arrived meanwhile
 * splits N busy clients into two groups that alternate, each waiting for
 * the other's storage.  So after a batch of k commits, with q queued, the
 * next batch waits (at most linger_ms) until k + q commits are queued: a
 * single client is never delayed (k + q = 1), N clients stay together.
 * Only where there is an fsync to save: the primary namespace's durable
 * batches (a guest namespace's batch is written behind at once).
 * Clients that do not commit again at once (the job manager and the
 * scheduler, each waiting on the other) would only be delayed: so a wait
 * that runs out before its commits arrive makes the next 1, 2, 4 ... 64
 * batches start without waiting, until a wait pays again.
 *
 * Pipelining (pipeline > 1, off by default): the next batch may be
 * applied to the root of a batch not yet durable; it completes only after
 * that one, and fails with it.  The content service answers checkpoints
 * in order, so this is safe, but with a backing store that makes each
 * checkpoint durable separately it only adds checkpoints.
 *
 * Durability: a batch's new blobs and, for the primary namespace, the
 * checkpoint of its root go in ONE content.write request: the content
 * service answers it only once the checkpoint and every blob stored
 * before it are durable (one sqlite transaction with content-sqlite).
 * The commits are answered, and the setroot event published, only
 * after that succeeded; any error fails every commit of the batch and
 * the root does not move.
 *
 * Write-behind: a batch with no checkpoint (LAZY ones, other
 * namespaces) is answered once applied and its content.write sent, not
 * answered: the content service answers such a write at once, once it
 * has checked and cached the blobs, so the wait bought nothing but a
 * round trip through two threads.  The blobs stay dirty in the cache
 * (lookups here find them) until the answer, and anything that learns
 * of the new root (the answer, the setroot event) can only ask the
 * content service for them after the write, which left first on the
 * same path.  A blob over the content service's size limit is not
 * written behind (the batch fails with EFBIG as before), nor more than
 * BEHIND_MAX_WRITES or BEHIND_MAX_BYTES at once (with the content
 * service gone they would pile up: past that, batches wait as before).
 * A checkpoint is only sent once every write behind sent before it was
 * answered (ctx->deferred), so that it never covers a blob the store
 * refused or has yet to take again (a content service reloading refuses
 * writes: they go again on content.online); writes sent after it do
 * not hold it back.  A write behind that fails otherwise (not expected)
 * leaves a root naming blobs the store lacks: no checkpoint is saved
 * after it, and every durable commit fails, said in the log (LOG_CRIT).
 *
 * Answers go before the setroot event.  An event can only leave through
 * the broker's thread, and once a module has sent something that way its
 * later messages follow the same way (to keep their order), so answers
 * sent after the event could not go straight to the modules that wait
 * for them (the job manager, the scheduler).  Nothing depends on the
 * event arriving first: kvs-watch and the kvs of other ranks order root
 * changes by rootseq, and a commit's answer carries its rootseq.
 */
#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libcontent/content.h"
#include "libkvs/kvs.h"
#include "libutil/monotime.h"

#include "apply.h"
#include "kvs.h"
#include "txn.h"

struct commit {
    struct list_node node;
    const flux_msg_t *msg;
    struct txn *txn;
    char name[64];
    double t_arrive;
    bool stored;   /* applied and stored in a batch that was overtaken: it
                      goes again, as LAZY (batch_rebase) */
    json_t *stale; /* that batch's new directory versions (with its first
                      commit): forgotten once this one is applied again,
                      unless it makes them again (batch_forget_stale) */
};

struct batch {
    struct list_node node; /* in ctx->batches */
    struct kvs_ctx *ctx;
    struct kvs_ns *ns;
    struct list_node commits;
    int ncommits;
    struct list_node *cur; /* next commit to apply */
    struct apply *apply;
    char newroot[BLOBREF_MAX_STRING_SIZE];
    int newseq;
    struct list_node nsnode; /* in the namespace's pipeline */
    bool done;               /* applied and every RPC answered */
    bool lazy;               /* every commit LAZY: no checkpoint */
    bool overtakes;          /* applied on the published root, ahead of the
                                durable batch in flight (may_overtake) */
    bool overtaken; /* a batch overtook this one: on success its commits
                       go again on the new root (batch_rebase) */
    int pending;    /* store and checkpoint RPCs outstanding */
    double t_start, t_store; /* when applying and storing began */
    int errnum;
    char errstr[160];
    struct list_node rpcs;
    /* parked on missing objects: loads outstanding, the first failure */
    int waiting;
    int wait_errnum;
    char wait_ref[BLOBREF_MAX_STRING_SIZE];
    /* what was loaded for it, held in the cache until it is applied: a
     * commit that needs more than the cache's bounds would otherwise
     * expire, with each load, what the previous ones brought */
    struct cache_holds holds;
};

/* The batch's content.write requests: its new blobs, and with the last
 * one the (primary) checkpoint.  Normally one request; a batch of more
 * than WRITE_CHUNK_BYTES or ctx->write_chunk blobs is sent in chunks,
 * each once the previous one succeeded, so that the checkpoint is never
 * saved when blobs before it were refused. */
struct batch_rpc {
    struct list_node node;  /* in b->rpcs, or ctx->behind */
    struct list_node dnode; /* in ctx->deferred (a checkpoint) */
    struct kvs_ctx *ctx;
    struct batch *b; /* NULL: written behind (the batch may be gone) */
    uint8_t *data;   /* written behind: its own copy of the blobs */
    size_t datalen;
    unsigned long seq; /* behind: its number; checkpoint: the last one
                          sent before it, which it waits for */
    flux_future_t *f;
    bool checkpoint;
    struct content_write_blob *blobs;
    uint8_t *digests;
    int nblobs;
    int next;                        /* the first blob not sent yet */
    int chunk_first;                 /* the first blob of the chunk in flight */
    struct waitlist_item content_wi; /* refused: waits for content.online */
    int ndirty;
    bool *value; /* dirty[i] is a value (else a directory) */
    char (*dirty)[BLOBREF_MAX_STRING_SIZE]; /* dirty counts taken */
};

#define WRITE_CHUNK_BYTES ((size_t)16 << 20)

struct relay {
    struct list_node node;
    struct kvs_ctx *ctx;
    const flux_msg_t *msg;
    char *ns;
    flux_future_t *f;
};

static bool batch_start (struct kvs_ctx *ctx, struct kvs_ns *ns);
static void ns_settle (struct kvs_ctx *ctx, struct kvs_ns *ns);

/* ---- commits ---- */

static void commit_destroy (struct commit *c)
{
    if (c) {
        list_del (&c->node);
        txn_destroy (c->txn);
        flux_msg_decref (c->msg);
        json_decref (c->stale);
        free (c);
    }
}

static void commit_fail (struct kvs_ctx *ctx, struct commit *c, int errnum,
                         const char *errstr)
{
    kvs_respond_error (ctx, c->msg, errnum, "%s",
                       errstr && *errstr ? errstr : strerror (errnum));
    ctx->stats.commit_errors++;
    commit_destroy (c);
}

/* c needs no checkpoint: LAZY, or already stored (batch_rebase) */
static bool commit_lazy (const struct commit *c)
{
    return (txn_flags (c->txn) & FLUX_KVS_LAZY) || c->stored;
}

/* self: the request's handler, to be called again with msg if it waits
 * for the namespace's creation (nssvc_park_on_create) */
static void commit_enqueue (struct kvs_ctx *ctx, const flux_msg_t *msg,
                            const char *nsname, int flags, json_t *ops,
                            struct flux_msg_cred cred, const char *name,
                            flux_msg_handler_f self)
{
    flux_error_t error = {{0}};
    struct commit *c;
    struct kvs_ns *ns;
    struct txn *txn;
    bool guest = !(cred.rolemask & FLUX_ROLE_OWNER);

    if (!(txn = txn_create (ops, flags, guest, &error))) {
        kvs_respond_error (ctx, msg, errno, "%s", error.text);
        return;
    }
    if (!(ns = nstab_lookup (ctx->nstab, nsname))) {
        if (!nssvc_park_on_create (ctx, nsname, msg, self))
            kvs_respond_error (ctx, msg, ENOTSUP, "namespace %s does not exist",
                               nsname);
        goto error;
    }
    if (flux_msg_cred_authorize (cred, ns->owner) < 0) {
        kvs_respond_error (ctx, msg, EPERM,
                           "namespace %s belongs to another user", nsname);
        goto error;
    }
    if ((flags & FLUX_KVS_SYNC) && strcmp (nsname, KVS_PRIMARY) != 0) {
        kvs_respond_error (ctx, msg, EINVAL,
                           "SYNC applies to the primary namespace only");
        goto error;
    }
    if (!(c = calloc (1, sizeof (*c)))) {
        kvs_respond_error (ctx, msg, ENOMEM, NULL);
        goto error;
    }
    list_init (&c->node);
    c->msg = flux_msg_incref (msg);
    c->txn = txn;
    c->t_arrive = monotime ();
    if (name)
        snprintf (c->name, sizeof (c->name), "%s", name);
    else
        snprintf (c->name, sizeof (c->name), "%u.%lu", ctx->rank,
                  ++ctx->name_seq);
    list_add_tail (&ns->queue, &c->node);
    ns->queued++;
    if (!ns->settle_pending) {
        ns->settle_pending = true;
        list_add_tail (&ctx->settle, &kvs_ns_incref (ns)->settle_link);
        flux_reactor_defer (flux_get_reactor (ctx->h), &ctx->settle_defer);
    }
    return;
error:
    txn_destroy (txn);
}

static void fail_queue (struct kvs_ctx *ctx, struct kvs_ns *ns, int errnum,
                        const char *errstr)
{
    struct list_node *pos, *tmp;

    list_for_each_safe (pos, tmp, &ns->queue)
    {
        commit_fail (ctx, list_entry (pos, struct commit, node), errnum,
                     errstr);
    }
    ns->queued = 0;
}

void commit_ns_removed (struct kvs_ctx *ctx, struct kvs_ns *ns)
{
    fail_queue (ctx, ns, ENOTSUP, "namespace was removed");
}

/* ---- batches (rank 0) ---- */

/* Drop the dirty counts r holds (stored: the blobs are in the store). */
static void batch_rpc_clear (struct kvs_ctx *ctx, struct batch_rpc *r,
                             bool stored)
{
    for (int i = 0; i < r->ndirty; i++) {
        cache_clear_dirty (ctx->cache, r->dirty[i], stored);
        if (stored && r->value[i])
            cache_demote (ctx->cache, r->dirty[i]);
    }
    r->ndirty = 0;
}

static void batch_rpc_destroy (struct batch_rpc *r)
{
    if (r) {
        list_del (&r->node);
        list_del (&r->dnode);
        if (waitlist_waiting (&r->content_wi))
            waitlist_cancel (&r->ctx->content_wait, &r->content_wi);
        flux_future_destroy (r->f);
        free (r->data);
        free (r->blobs);
        free (r->digests);
        free (r->dirty);
        free (r->value);
        free (r);
    }
}

static void batch_destroy (struct batch *b)
{
    if (b) {
        struct list_node *pos, *tmp;
        cache_holds_release (b->ctx->cache, &b->holds);
        list_for_each_safe (pos, tmp, &b->rpcs)
        {
            struct batch_rpc *r = list_entry (pos, struct batch_rpc, node);
            batch_rpc_clear (b->ctx, r, false);
            batch_rpc_destroy (r);
        }
        list_for_each_safe (pos, tmp, &b->commits)
        {
            commit_destroy (list_entry (pos, struct commit, node));
        }
        list_del (&b->node);
        list_del (&b->nsnode);
        apply_destroy (b->apply);
        kvs_ns_decref (b->ns);
        free (b);
    }
}

/* ENOSYS from the kvs says "unloading or absent, nothing applied", and
 * clients send such commits again on kvs.online (main.c).  The content
 * service missing under a batch is another failure: EIO. */
static int not_enosys (int errnum)
{
    return errnum == ENOSYS ? EIO : errnum;
}

static void batch_error (struct batch *b, int errnum, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static void batch_error (struct batch *b, int errnum, const char *fmt, ...)
{
    va_list ap;

    if (b->errnum)
        return;
    b->errnum = not_enosys (errnum);
    va_start (ap, fmt);
    vsnprintf (b->errstr, sizeof (b->errstr), fmt, ap);
    va_end (ap);
}

static void publish (struct kvs_ctx *ctx, flux_msg_t *ev)
{
    if (!ev || flux_msg_set_private (ev) < 0 || flux_send (ctx->h, ev, 0) < 0)
        kvs_log (ctx, LOG_ERR, "publishing a setroot event: %s",
                 strerror (errno));
    flux_msg_decref (ev);
}

static json_t *batch_names (struct batch *b)
{
    json_t *names = json_array ();
    struct list_node *pos;

    for (pos = b->commits.next; names && pos != &b->commits; pos = pos->next) {
        struct commit *c = list_entry (pos, struct commit, node);
        json_t *s = json_string (c->name);
        if (!s || json_array_append_new (names, s) < 0) {
            json_decref (names);
            return NULL;
        }
    }
    return names;
}

/* The batches after b were built on b's root: they fail with it, and
 * the next batch starts again from the last durable root.
 */
static void abort_following (struct batch *b)
{
    struct kvs_ns *ns = b->ns;
    struct list_node *pos;

    for (pos = b->nsnode.next; pos != &ns->batches; pos = pos->next) {
        struct batch *b2 = list_entry (pos, struct batch, nsnode);
        if (!b2->overtakes) /* built on the published root, not b's */
            batch_error (b2, b->errnum, "an earlier commit failed: %s",
                         b->errstr);
    }
    snprintf (ns->tent_ref, sizeof (ns->tent_ref), "%s", ns->rootref);
    ns->tent_seq = ns->rootseq;
}

/* b, durable, succeeded, but a batch overtook it (may_overtake): the
 * published root does not descend from b's.  Its commits go again, at
 * the head of the queue, to be applied on the published root as LAZY
 * (they are durable already: b's checkpoint holds them, the next one
 * will hold them again) and answered then.
 */
static void batch_rebase (struct batch *b)
{
    struct kvs_ns *ns = b->ns;
    struct list_node *pos;
    struct commit *first;
    json_t *stale;

    if (list_empty (&b->commits))
        return;
    for (pos = b->commits.next; pos != &b->commits; pos = pos->next) {
        list_entry (pos, struct commit, node)->stored = true;
        ns->queued++;
    }
    b->ncommits = 0;
    /* its new directory versions are named by its checkpoint alone,
     * except those the commits make again (batch_forget_stale) */
    first = list_entry (b->commits.next, struct commit, node);
    stale = json_array ();
    for (int i = 0; stale && i < apply_blob_count (b->apply); i++) {
        const struct apply_blob *ab = apply_blob (b->apply, i);
        json_t *s;
        if (ab->dir
            && (!(s = json_string (ab->ref))
                || json_array_append_new (stale, s) < 0)) {
            json_decref (stale);
            stale = NULL; /* out of memory: the cache expires them */
        }
    }
    json_decref (first->stale);
    first->stale = stale;
    /* b's commits, then the queue */
    list_splice_tail (&b->commits, &ns->queue);
    list_move_all (&ns->queue, &b->commits);
}

/* b succeeded: the directory versions of the overtaken batches whose
 * commits b applied again, and that b did not make again, will not be
 * read: let the cache expire them first (cache_forget). */
static void batch_forget_stale (struct batch *b)
{
    struct list_node *pos;

    for (pos = b->commits.next; pos != &b->commits; pos = pos->next) {
        struct commit *c = list_entry (pos, struct commit, node);
        size_t i;
        json_t *v;
        json_array_foreach (c->stale, i, v)
        {
            const char *ref = json_string_value (v);
            if (!apply_has_blob (b->apply, ref))
                cache_forget (b->ctx->cache, ref);
        }
    }
}

/* b is the oldest batch of its namespace and all its RPCs have answered:
 * answer its commits and move the root (or fail them all).
 */
static void batch_complete (struct batch *b)
{
    struct kvs_ctx *ctx = b->ctx;
    struct kvs_ns *ns = b->ns;
    char topic[512];
    struct list_node *pos, *tmp;
    json_t *names;

    if (b->ncommits == 0)
        return; /* every commit failed alone: nothing changes */
    if (!b->errnum && ns->removed)
        batch_error (b, ENOTSUP, "namespace %s was removed", ns->name);
    if (!b->errnum && b->overtaken) {
        batch_rebase (b);
        return;
    }
    if (b->overtakes) /* the root it was applied on is the published one */
        b->newseq = ns->rootseq + 1;
    names = batch_names (b);
    if (!b->errnum) {
        batch_forget_stale (b);
        nssvc_set_root (ctx, ns, b->newroot, b->newseq);
        if (ctx->checkpoint && !strcmp (ns->name, KVS_PRIMARY)) {
            /* a LAZY batch leaves the checkpoint behind the root until
             * the next batch that is not, or the unload (kvs_check_stop) */
            ctx->checkpoint_behind = b->lazy;
            if (b->lazy)
                ctx->stats.lazy_batches++;
        }
        double t = monotime ();
        list_for_each_safe (pos, tmp, &b->commits)
        {
            struct commit *c = list_entry (pos, struct commit, node);
            ctx->stats.queue_time += b->t_start - c->t_arrive;
            ctx->stats.commit_time += t - c->t_arrive;
            if (flux_respond_pack (ctx->h, c->msg, "{s:s s:i}", "rootref",
                                   b->newroot, "rootseq", b->newseq)
                < 0)
                kvs_log (ctx, LOG_ERR, "kvs.commit: respond: %s",
                         strerror (errno));
            ctx->stats.commits++;
            commit_destroy (c);
        }
        snprintf (topic, sizeof (topic), "kvs.namespace-%s-setroot", ns->name);
        publish (ctx, flux_event_pack (topic, "{s:s s:i s:s s:O s:O s:I}",
                                       "namespace", ns->name, "rootseq",
                                       b->newseq, "rootref", b->newroot,
                                       "names", names ? names : json_null (),
                                       "keys", apply_keys (b->apply), "owner",
                                       (json_int_t)ns->owner));
        ctx->stats.batches++;
        /* the directory versions this root replaced are not wanted */
        for (int i = 0; i < apply_replaced_count (b->apply); i++)
            cache_forget (ctx->cache, apply_replaced (b->apply, i));
        /* the clients just answered will probably commit again */
        ns->linger_target = b->ncommits + ns->queued;
        if (ns->linger_target > ctx->batch_max)
            ns->linger_target = ctx->batch_max;
        if (ns->linger_target < 2)
            ns->linger_target = 0;
        ctx->stats.apply_time += b->t_store - b->t_start;
        ctx->stats.store_time += monotime () - b->t_store;
        if ((unsigned long)b->ncommits > ctx->stats.max_batch)
            ctx->stats.max_batch = b->ncommits;
    }
    else {
        abort_following (b);
        if (!ns->removed) {
            snprintf (topic, sizeof (topic), "kvs.namespace-%s-error",
                      ns->name);
            publish (ctx, flux_event_pack (topic, "{s:s s:O s:i}", "namespace",
                                           ns->name, "names",
                                           names ? names : json_null (),
                                           "errnum", b->errnum));
        }
        kvs_log (ctx, LOG_ERR, "%s: commit of %d transaction(s) failed: %s",
                 ns->name, b->ncommits, b->errstr);
        list_for_each_safe (pos, tmp, &b->commits)
        {
            commit_fail (ctx, list_entry (pos, struct commit, node), b->errnum,
                         b->errstr);
        }
    }
    json_decref (names);
}

/* Complete the finished batches at the head of ns's pipeline, in order,
 * and start new ones while there is room (a loop, not recursion: a batch
 * may finish as soon as it starts).
 */
static void ns_settle (struct kvs_ctx *ctx, struct kvs_ns *ns)
{
    struct batch *b;

    kvs_ns_incref (ns);
    do {
        while ((b = list_first_entry_or_null (&ns->batches, struct batch,
                                              nsnode))) {
            if (!b->done) {
                /* a batch overtaking it completes on its own */
                struct batch *o;
                if (b->nsnode.next == &ns->batches)
                    break;
                o = list_entry (b->nsnode.next, struct batch, nsnode);
                if (!o->overtakes || !o->done)
                    break;
                b = o;
            }
            batch_complete (b);
            ctx->inflight--;
            batch_destroy (b);
            ns->nbatches--;
        }
    } while (batch_start (ctx, ns));
    cache_expire (ctx->cache);
    kvs_ns_decref (ns);
    kvs_check_stop (ctx);
}

static void batch_rpc_continuation (flux_future_t *f, void *arg);

/* Send the next chunk of r's blobs (the last one with the checkpoint). */
static int batch_rpc_send (struct batch_rpc *r)
{
    struct kvs_ctx *ctx = r->ctx;
    int first = r->next, n = 0;
    size_t bytes = 0;
    bool last;

    while (first + n < r->nblobs && n < ctx->write_chunk
           && (n == 0 || bytes + r->blobs[first + n].len <= WRITE_CHUNK_BYTES))
        bytes += r->blobs[first + n++].len;
    last = (first + n == r->nblobs);
    if (!(r->f = content_write (ctx->h, blobref_hashtype_size (ctx->hashtype),
                                r->blobs + first, n,
                                last && r->checkpoint ? r->b->newroot : NULL,
                                r->checkpoint ? r->b->newseq : 0))
        || flux_future_then (r->f, -1., batch_rpc_continuation, r) < 0) {
        flux_future_destroy (r->f);
        r->f = NULL;
        return -1;
    }
    r->chunk_first = first;
    r->next = first + n;
    waitlist_sent (&ctx->content_wait, &r->content_wi);
    return 0;
}

static void send_deferred (struct kvs_ctx *ctx);

/* r is done (ok or not): drop it, and complete its batch if it was the
 * last RPC of it; or, written behind, let go the checkpoints that
 * waited for it and for the writes before it. */
static void batch_rpc_done (struct batch_rpc *r, bool ok)
{
    struct batch *b = r->b;
    struct kvs_ctx *ctx = r->ctx;

    if (!b) {
        ctx->behind_pending--;
        ctx->behind_bytes -= r->datalen;
    }
    batch_rpc_clear (ctx, r, ok);
    batch_rpc_destroy (r);
    if (!b) {
        ctx->inflight--;
        cache_expire (ctx->cache); /* its blobs may go now */
        send_deferred (ctx);
        kvs_check_stop (ctx);
        return;
    }
    if (--b->pending == 0) {
        b->done = true;
        ns_settle (ctx, b->ns);
    }
}

/* A write behind failed: its batch was answered and its root is in use,
 * so no checkpoint may be saved from now on (it could name blobs the
 * store lacks).  Not expected: such a write is answered once its blobs
 * are cached, after their digests and sizes are checked. */
static void behind_failed (struct batch_rpc *r, int errnum, const char *errstr)
{
    struct kvs_ctx *ctx = r->ctx;

    if (!ctx->behind_errnum) {
        ctx->behind_errnum = not_enosys (errnum);
        snprintf (ctx->behind_errstr, sizeof (ctx->behind_errstr),
                  "a store of %d blob(s) failed: %s", r->nblobs, errstr);
    }
    kvs_log (ctx, LOG_CRIT, "%s: no checkpoint will be saved",
             ctx->behind_errstr);
}

static void rpc_failed (struct batch_rpc *r, int errnum, const char *errstr)
{
    if (r->b)
        batch_error (r->b, errnum, "%s of %d blob(s)%s: %s",
                     r->checkpoint ? "checkpoint" : "store", r->nblobs,
                     r->checkpoint ? " and the root" : "", errstr);
    else
        behind_failed (r, errnum, errstr);
}

static void batch_rpc_continuation (flux_future_t *f, void *arg)
{
    struct batch_rpc *r = arg;
    struct kvs_ctx *ctx = r->ctx;
    bool ok = true;

    if (flux_future_get (f, NULL) < 0 && errno == ENOSYS && !ctx->stopping) {
        /* the content service is unloading or absent, and a write it
         * refused moved no root: keep the chunk, and send it again when
         * a content service announces itself (at once if one did since
         * the chunk was sent: its event can be handled before this
         * continuation) */
        if (waitlist_count (&ctx->content_wait) == 0)
            kvs_log (ctx, LOG_WARNING,
                     "content.write refused (%s): kept until the content "
                     "service is back",
                     future_strerror (f, errno));
        flux_future_destroy (f);
        r->f = NULL;
        r->next = r->chunk_first;
        (void)waitlist_refused (&ctx->content_wait, &r->content_wi);
        return;
    }
    if (flux_future_get (f, NULL) < 0) {
        ok = false;
        rpc_failed (r, errno, future_strerror (f, errno));
    }
    else if (r->next < r->nblobs) {
        /* more chunks: the next one goes now that this one succeeded */
        flux_future_destroy (f);
        r->f = NULL;
        if (batch_rpc_send (r) == 0)
            return;
        ok = false;
        rpc_failed (r, errno, strerror (errno));
    }
    batch_rpc_done (r, ok);
}

/* A chunk refused by the content service goes again (waitlist). */
static void content_resend (struct waitlist *wl, struct waitlist_item *it,
                            void *arg)
{
    struct batch_rpc *r = waitlist_entry (it, struct batch_rpc, content_wi);

    if (batch_rpc_send (r) < 0) {
        rpc_failed (r, errno, strerror (errno));
        batch_rpc_done (r, false);
    }
}

/* The oldest write behind not answered yet was sent after the
 * checkpoint r was made: no blob r covers can still be refused. */
static bool behind_clear (struct kvs_ctx *ctx, const struct batch_rpc *r)
{
    const struct batch_rpc *oldest;

    if (list_empty (&ctx->behind))
        return true;
    oldest = list_entry (ctx->behind.next, struct batch_rpc, node);
    return oldest->seq > r->seq;
}

/* The checkpoints whose writes behind were all answered go, in order
 * (each may complete its batch at once: take them off the list first). */
static void send_deferred (struct kvs_ctx *ctx)
{
    while (!list_empty (&ctx->deferred)) {
        struct batch_rpc *r
            = list_entry (ctx->deferred.next, struct batch_rpc, dnode);
        if (!behind_clear (ctx, r))
            break;
        list_del (&r->dnode);
        if (ctx->behind_errnum) {
            batch_error (r->b, ctx->behind_errnum, "%s", ctx->behind_errstr);
            batch_rpc_done (r, false);
        }
        else if (batch_rpc_send (r) < 0) {
            batch_error (r->b, errno, "content.write: %s", strerror (errno));
            batch_rpc_done (r, false);
        }
    }
}

void commit_content_online (struct kvs_ctx *ctx)
{
    size_t n = waitlist_count (&ctx->content_wait);

    if (n > 0)
        kvs_log (ctx, LOG_INFO, "content service back: %zu write(s) sent again",
                 n);
    waitlist_online (&ctx->content_wait);
}

void commit_settle_now (struct kvs_ctx *ctx)
{
    struct kvs_ns *ns;

    flux_reactor_undefer (&ctx->settle_defer);
    while ((ns = list_first_entry_or_null (&ctx->settle, struct kvs_ns,
                                           settle_link))) {
        list_del (&ns->settle_link);
        ns->settle_pending = false;
        if (!ns->removed)
            ns_settle (ctx, ns);
        kvs_ns_decref (ns);
    }
}

static void settle_cb (struct flux_deferred *d)
{
    commit_settle_now ((
        struct kvs_ctx *)((char *)d - offsetof (struct kvs_ctx, settle_defer)));
}

void commit_init (struct kvs_ctx *ctx)
{
    waitlist_init (&ctx->content_wait, content_resend, ctx);
    list_init (&ctx->settle);
    flux_deferred_init (&ctx->settle_defer, settle_cb);
}

/* Writes behind in flight at most (more wait for their answer) */
#define BEHIND_MAX_WRITES 256
#define BEHIND_MAX_BYTES ((size_t)64 << 20)

/* A write the content service answers at once (no checkpoint) and
 * takes (blobs within its size limit: a larger one fails the batch
 * with EFBIG, as before). */
static bool behind_ok (struct kvs_ctx *ctx, const struct batch_rpc *r)
{
    /* bounded: with the content service gone they would pile up */
    if (ctx->behind_pending >= BEHIND_MAX_WRITES
        || ctx->behind_bytes >= BEHIND_MAX_BYTES)
        return false;
    for (int i = 0; i < r->nblobs; i++)
        if (r->blobs[i].len > ctx->behind_max)
            return false;
    return true;
}

/* A write behind keeps its own copy of its blobs: it outlives the
 * batch's apply, and a refused chunk is sent again. */
static int copy_blobs (struct batch_rpc *r)
{
    size_t total = 0, off = 0;

    for (int i = 0; i < r->nblobs; i++)
        total += r->blobs[i].len;
    if (!(r->data = malloc (total ? total : 1)))
        return -1;
    r->datalen = total;
    for (int i = 0; i < r->nblobs; i++) {
        memcpy (r->data + off, r->blobs[i].data, r->blobs[i].len);
        r->blobs[i].data = r->data + off;
        off += r->blobs[i].len;
    }
    return 0;
}

/* Store the batch's new blobs and (primary) checkpoint its root with
 * content.write: the content service answers once the blobs are cached
 * (written behind: the batch does not wait), or with a checkpoint once
 * it and every blob before it are durable.  The cache holds the new
 * objects as dirty meanwhile, so the next batch of the pipeline finds
 * them.
 */
static void batch_store (struct batch *b)
{
    struct kvs_ctx *ctx = b->ctx;
    int n = apply_blob_count (b->apply), k = 0;
    int hsize = blobref_hashtype_size (ctx->hashtype);
    struct batch_rpc *r;

    if (!(r = calloc (1, sizeof (*r))))
        goto nomem;
    list_init (&r->node);
    list_init (&r->dnode);
    r->ctx = ctx;
    waitlist_item_init (&r->content_wi);
    if (n > 0
        && (!(r->blobs = calloc (n, sizeof (*r->blobs)))
            || !(r->digests = malloc ((size_t)n * hsize))
            || !(r->dirty = calloc (n, sizeof (*r->dirty)))
            || !(r->value = calloc (n, sizeof (*r->value)))))
        goto nomem;
    r->b = b;
    r->checkpoint
        = ctx->checkpoint && !b->lazy && !strcmp (b->ns->name, KVS_PRIMARY);
    for (int i = 0; i < n; i++) {
        const struct apply_blob *blob = apply_blob (b->apply, i);
        if (cache_is_clean (ctx->cache, blob->ref))
            continue; /* already in the content store */
        if (blobref_strtohash (blob->ref, r->digests + k * hsize, hsize) < 0) {
            batch_error (b, EINVAL, "bad blobref %s", blob->ref);
            goto done;
        }
        if (cache_insert_blob (ctx->cache, blob->ref, blob->blob, true) == 0) {
            r->value[r->ndirty] = !blob->dir;
            snprintf (r->dirty[r->ndirty++], sizeof (r->dirty[0]), "%s",
                      blob->ref);
        }
        if (blob->obj) /* an hdir: decoded already */
            (void)cache_insert_treeobj (ctx->cache, blob->ref, blob->obj,
                                        blob->len, false);
        r->blobs[k].digest = r->digests + k * hsize;
        r->blobs[k].data = blob->data;
        r->blobs[k].len = blob->len;
        k++;
    }
    r->nblobs = k;
    if (k == 0 && !r->checkpoint)
        goto done;
    if (!r->checkpoint && behind_ok (ctx, r)) {
        /* written behind: the batch completes without the answer */
        if (copy_blobs (r) < 0)
            goto nomem;
        if (batch_rpc_send (r) < 0) {
            batch_error (b, errno, "content.write: %s", strerror (errno));
            goto done;
        }
        r->b = NULL;
        r->seq = ++ctx->behind_seq;
        list_add_tail (&ctx->behind, &r->node);
        ctx->behind_pending++;
        ctx->behind_bytes += r->datalen;
        ctx->inflight++;
        ctx->stats.behind++;
        return;
    }
    if (ctx->behind_errnum) {
        batch_error (b, ctx->behind_errnum, "%s", ctx->behind_errstr);
        goto done;
    }
    r->seq = ctx->behind_seq;
    if (!list_empty (&ctx->deferred) || !behind_clear (ctx, r)) {
        /* after the writes behind sent before it: it must not cover a
         * blob the store has not taken (send_deferred) */
        list_add_tail (&ctx->deferred, &r->dnode);
        ctx->stats.deferred++;
    }
    else if (batch_rpc_send (r) < 0) {
        batch_error (b, errno, "content.write: %s", strerror (errno));
        goto done;
    }
    list_add_tail (&b->rpcs, &r->node);
    b->pending++;
    return;
nomem:
    batch_error (b, ENOMEM, "cannot store the new blobs: out of memory");
done:
    if (r) {
        batch_rpc_clear (ctx, r, false);
        batch_rpc_destroy (r);
    }
}

static void batch_wait_cb (int errnum, const char *ref, void *arg);

/* Apply the batch's commits from b->cur on, then finalize and store.
 * Returns false if it parked on a missing object (batch_wait_cb resumes).
 */
static bool batch_apply (struct batch *b)
{
    struct kvs_ctx *ctx = b->ctx;
    struct kvs_ns *ns = b->ns;

    while (b->cur != &b->commits) {
        struct commit *c = list_entry (b->cur, struct commit, node);
        flux_error_t error = {{0}};
        int errnum;

        if (apply_txn (b->apply, c->txn, &error) == 0) {
            b->cur = b->cur->next;
            continue;
        }
        errnum = errno;
        if (errnum == EAGAIN) {
            /* load everything the commit ran into, at once */
            int n = apply_missing_count (b->apply);
            const char *ref = apply_missing_ref (b->apply);
            b->waiting = 0;
            b->wait_errnum = 0;
            errnum = EINVAL; /* if nothing is named */
            for (int i = 0; i < n; i++) {
                const char *r = apply_missing (b->apply, i);
                if (cache_wait (ctx->cache, r, batch_wait_cb, b) == 0)
                    b->waiting++;
                else {
                    errnum = errno;
                    ref = r;
                }
            }
            if (b->waiting > 0)
                return false; /* a load that could not start is retried */
            snprintf (error.text, sizeof (error.text), "cannot load %s",
                      ref ? ref : "an object");
        }
        b->cur = b->cur->next;
        b->ncommits--;
        commit_fail (ctx, c, not_enosys (errnum), error.text);
    }
    cache_holds_release (ctx->cache, &b->holds);
    ns->applying = false;
    b->t_store = monotime ();
    if (b->ncommits > 0 && !b->errnum) {
        if (apply_finalize (b->apply, b->newroot, sizeof (b->newroot)) < 0)
            batch_error (b, errno, "cannot serialize the new root: %s",
                         strerror (errno));
        else {
            /* the next batch builds on this root, durable or not yet;
             * not on an overtaking one's (numbered when it completes) */
            if (!b->overtakes) {
                b->newseq = ns->tent_seq + 1;
                snprintf (ns->tent_ref, sizeof (ns->tent_ref), "%s",
                          b->newroot);
                ns->tent_seq = b->newseq;
            }
            batch_store (b);
        }
    }
    if (b->pending == 0)
        b->done = true;
    return true;
}

static void batch_wait_cb (int errnum, const char *ref, void *arg)
{
    struct batch *b = arg;

    if (errnum == 0)
        cache_holds_add (b->ctx->cache, &b->holds, ref);
    if (errnum && !b->wait_errnum) {
        b->wait_errnum = errnum;
        snprintf (b->wait_ref, sizeof (b->wait_ref), "%s", ref);
    }
    if (--b->waiting > 0)
        return;                      /* more loads to come */
    if ((errnum = b->wait_errnum)) { /* the current commit cannot be applied */
        struct commit *c = list_entry (b->cur, struct commit, node);
        char text[160];
        b->wait_errnum = 0;
        snprintf (text, sizeof (text), "cannot load %s: %s", b->wait_ref,
                  strerror (errnum));
        b->cur = b->cur->next;
        b->ncommits--;
        commit_fail (b->ctx, c,
                     errnum == ENOENT ? ENOTRECOVERABLE : not_enosys (errnum),
                     text);
    }
    if (batch_apply (b))
        ns_settle (b->ctx, b->ns);
}

static int linger_expire (struct kvs_ns *ns, void *arg)
{
    struct kvs_ctx *ctx = arg;

    if (ns->linger_target > 0) {
        ns->linger_expired = true;
        ns_settle (ctx, ns);
    }
    return 0;
}

static void linger_cb (uv_timer_t *t)
{
    (void)nstab_foreach (((struct kvs_ctx *)t->data)->nstab, linger_expire,
                         t->data);
}

/* Arm the linger timer (if not armed).  False if it cannot be. */
static bool linger_arm (struct kvs_ctx *ctx)
{
    if (!ctx->linger_timer) {
        if (!(ctx->linger_timer = calloc (1, sizeof (*ctx->linger_timer))))
            return false;
        uv_timer_init (flux_reactor_uv (flux_get_reactor (ctx->h)),
                       ctx->linger_timer);
        ctx->linger_timer->data = ctx;
    }
    if (!uv_is_active ((uv_handle_t *)ctx->linger_timer))
        uv_timer_start (ctx->linger_timer, linger_cb, ctx->linger_ms, 0);
    return true;
}

/* LAZY commits ahead of durable ones.  A batch with one durable commit
 * waits for the checkpoint's fsync: a LAZY commit batched with it (the
 * scheduler's R, which the next job's start waits for) would wait for
 * that fsync too.  So the LAZY commits among the first LAZY_SCAN queued
 * go first, in a lazy batch of their own, answered once applied; and
 * while a durable batch is in flight, one such lazy batch may be
 * applied on its root at once (batch_start), completing right after
 * it, instead of waiting for its fsync to begin.
 *
 * Only ahead of other senders' commits (route_first): a sender's commits
 * keep their order (its LAZY commit behind its own durable one stays
 * there), and no sender can count on another's commit that has not
 * been answered being applied first.  The primary namespace only (the
 * others are never checkpointed).
 *
 * Fills v with the commits to take, in queue order (at most LAZY_SCAN);
 * returns how many; *passed: some durable commit stays ahead of them.
 */
#define LAZY_SCAN 32

static int lazy_first (struct kvs_ctx *ctx, struct kvs_ns *ns,
                       struct commit **v, bool *passed)
{
    const flux_msg_t *behind[LAZY_SCAN];
    struct list_node *pos, *tmp;
    int nbehind = 0, scanned = 0, n = 0;

    *passed = false;
    if (!ctx->checkpoint || strcmp (ns->name, KVS_PRIMARY) != 0)
        return 0;
    list_for_each_safe (pos, tmp, &ns->queue)
    {
        struct commit *c = list_entry (pos, struct commit, node);
        int flags = txn_flags (c->txn);
        bool stays = !commit_lazy (c);

        if (scanned++ == LAZY_SCAN || n >= ctx->batch_max)
            break;
        for (int i = 0; i < nbehind && !stays; i++)
            if (flux_msg_route_match_first (behind[i], c->msg))
                stays = true;
        if (stays) {
            behind[nbehind++] = c->msg;
            continue;
        }
        if ((flags & FLUX_KVS_NO_MERGE) && n > 0)
            break; /* it goes alone, in a later batch */
        if (nbehind > 0)
            *passed = true;
        v[n++] = c;
        if (flags & FLUX_KVS_NO_MERGE)
            break;
    }
    return n;
}

/* Overtaking.  A lazy batch applied on the root of a durable one in
 * flight (above) still waits for that one's fsync: its root holds the
 * durable batch's changes, which may not be seen before they are
 * durable.  Under load that fsync is most of the scheduler's R commit,
 * which the next job's start waits for.  So the lazy commits may
 * instead be applied on the published root and answered at once; the
 * durable batch, once stored, is applied again on the new root (as
 * LAZY: its checkpoint already holds it) and its commits answered then
 * (batch_rebase).  The checkpoint it saved lacks the lazy commits:
 * they become durable with the next one, as LAZY commits may.
 *
 * Only where applying d's commits again cannot fail where it did not,
 * nor do anything else: no key of d went through a symlink (so its path
 * is the directories its key names), the lazy commits' keys neither
 * equal, contain nor lie under a key of d (so they change no directory
 * on those paths into something else), and none comes from a sender of
 * one of d's commits (a sender's commits keep their order).  At most
 * OVERTAKE_PAIRS key comparisons, else not.  Only with pipeline=1.
 */
#define OVERTAKE_PAIRS 8192

static bool keys_related (const char *a, const char *b)
{
    size_t la = strlen (a), lb = strlen (b);
    if (la > lb) {
        const char *t = a;
        a = b;
        b = t;
        la = lb;
    }
    return !strncmp (a, b, la) && (b[la] == '\0' || b[la] == '.');
}

static bool may_overtake (struct batch *d, struct commit **v, int n)
{
    struct list_node *pos;
    long nkeys = 0, dkeys = 0;

    if (apply_followed_symlink (d->apply))
        return false;
    for (int i = 0; i < n; i++)
        nkeys += txn_count (v[i]->txn);
    for (pos = d->commits.next; pos != &d->commits; pos = pos->next) {
        dkeys += txn_count (list_entry (pos, struct commit, node)->txn);
    }
    if (nkeys * dkeys > OVERTAKE_PAIRS)
        return false;
    for (pos = d->commits.next; pos != &d->commits; pos = pos->next) {
        struct commit *dc = list_entry (pos, struct commit, node);
        for (int i = 0; i < n; i++) {
            if (flux_msg_route_match_first (dc->msg, v[i]->msg))
                return false;
            for (int j = 0; j < txn_count (dc->txn); j++)
                for (int k = 0; k < txn_count (v[i]->txn); k++)
                    if (keys_related (txn_op (dc->txn, j)->key,
                                      txn_op (v[i]->txn, k)->key))
                        return false;
        }
    }
    return true;
}

/* Start the next batch of ns if its pipeline has room: it is applied to
 * the root of the batch before it (tent_ref), durable or not yet, or
 * overtakes it (may_overtake).
 * Returns true if a batch was started (it may be done already).
 */
static bool batch_start (struct kvs_ctx *ctx, struct kvs_ns *ns)
{
    struct batch *b, *last;
    struct commit *c, *lazy[LAZY_SCAN];
    bool passed, overtake = false, again = false;
    int nlazy;

    if (ns->applying || list_empty (&ns->queue) || ns->removed)
        return false;
    nlazy = lazy_first (ctx, ns, lazy, &passed);
    if (ns->nbatches >= ctx->pipeline) {
        /* full: one lazy batch more, on a durable one in flight, or
         * overtaking it */
        last = list_entry (ns->batches.prev, struct batch, nsnode);
        if (ns->nbatches > ctx->pipeline || last->lazy || nlazy == 0)
            return false;
        if (ctx->pipeline == 1 && may_overtake (last, lazy, nlazy))
            overtake = true;
        else if (last->overtaken)
            return false; /* its root is not the one to build on now */
    }
    else if (!passed)
        nlazy = 0; /* nothing to go ahead of: an ordinary batch */
    c = list_first_entry_or_null (&ns->queue, struct commit, node);
    if (ns->nbatches == 0) {
        /* gathering saves fsyncs: a lazy batch, or one of a namespace
         * not checkpointed (a job's guest namespace), has none to save;
         * there the wait would only delay a job's shell (the leader's
         * last output commit, which its exit and the job's end await) */
        if (nlazy == 0 && !commit_lazy (c) && ctx->checkpoint
            && !strcmp (ns->name, KVS_PRIMARY) && ns->linger_target > 0
            && ns->queued < ns->linger_target && ctx->linger_ms > 0
            && !ns->linger_expired) {
            if (ns->linger_skip > 0)
                ns->linger_skip--;
            else if (linger_arm (ctx))
                return false;
        }
        if (ns->linger_expired && ns->queued < ns->linger_target) {
            /* waited in vain */
            ns->linger_backoff
                = ns->linger_backoff ? ns->linger_backoff * 2 : 1;
            if (ns->linger_backoff > 64)
                ns->linger_backoff = 64;
            ns->linger_skip = ns->linger_backoff;
        }
        else if (ns->linger_target > 0 && ns->queued >= ns->linger_target)
            ns->linger_backoff = 0; /* gathered */
        ns->linger_target = 0;
        ns->linger_expired = false;
        snprintf (ns->tent_ref, sizeof (ns->tent_ref), "%s", ns->rootref);
        ns->tent_seq = ns->rootseq;
    }
    if (!(b = calloc (1, sizeof (*b)))
        || !(b->apply = apply_create (ctx->cache, ns->name,
                                      overtake ? ns->rootref : ns->tent_ref,
                                      ctx->hashtype, ctx->inline_max))) {
        kvs_log (ctx, LOG_ERR, "%s: cannot start a batch: %s", ns->name,
                 strerror (errno));
        free (b);
        fail_queue (ctx, ns, ENOMEM, "cannot start a batch");
        return false;
    }
    apply_set_maxdirent (b->apply, ctx->hdir_maxdirent);
    b->ctx = ctx;
    b->ns = kvs_ns_incref (ns);
    list_init (&b->node);
    list_init (&b->nsnode);
    list_init (&b->commits);
    list_init (&b->rpcs);
    /* the LAZY commits going ahead, else the queue head, then followers
     * until a NO_MERGE commit; commits going again (batch_rebase) go
     * alone, as a lazy batch, which nothing overtakes: else a durable
     * commit among them could be overtaken and go again, and again */
    b->lazy = true;
    for (int i = 0; i < nlazy; i++) {
        list_del (&lazy[i]->node);
        list_add_tail (&b->commits, &lazy[i]->node);
        ns->queued--;
        b->ncommits++;
    }
    if (nlazy > 0)
        ctx->stats.lazy_first++;
    if (overtake) {
        b->overtakes = true;
        last->overtaken = true;
        ctx->stats.overtakes++;
    }
    while (
        nlazy == 0
        && (c = list_first_entry_or_null (&ns->queue, struct commit, node))) {
        bool nomerge = (txn_flags (c->txn) & FLUX_KVS_NO_MERGE);
        if (b->ncommits == 0)
            again = c->stored;
        else if (nomerge || b->ncommits >= ctx->batch_max || c->stored != again)
            break;
        list_del (&c->node);
        list_add_tail (&b->commits, &c->node);
        ns->queued--;
        b->ncommits++;
        if (!commit_lazy (c))
            b->lazy = false;
        if (nomerge)
            break;
    }
    b->cur = b->commits.next;
    b->t_start = monotime ();
    ns->applying = true;
    list_add_tail (&ns->batches, &b->nsnode);
    ns->nbatches++;
    list_add_tail (&ctx->batches, &b->node);
    ctx->inflight++;
    (void)batch_apply (b);
    return true;
}

/* ---- relaying (ranks > 0) ---- */

static void relay_destroy (struct relay *r)
{
    if (r) {
        list_del (&r->node);
        flux_future_destroy (r->f);
        flux_msg_decref (r->msg);
        free (r->ns);
        free (r);
    }
}

static void relay_continuation (flux_future_t *f, void *arg)
{
    struct relay *r = arg;
    struct kvs_ctx *ctx = r->ctx;
    const char *ref;
    int seq;
    struct kvs_ns *ns;

    if (flux_rpc_get_unpack (f, "{s:s s:i}", "rootref", &ref, "rootseq", &seq)
        < 0) {
        kvs_respond_error (ctx, r->msg, errno, "%s",
                           future_strerror (f, errno));
        ctx->stats.commit_errors++;
    }
    else if ((ns = nstab_lookup (ctx->nstab, r->ns))) {
        /* answer once this rank's root contains the commit */
        nssvc_set_root (ctx, ns, ref, seq);
        if (nssvc_wait_root (ctx, ns, r->msg, seq, ref) < 0)
            kvs_respond_error (ctx, r->msg, errno, NULL);
        ctx->stats.commits++;
    }
    else {
        if (flux_respond_pack (ctx->h, r->msg, "{s:s s:i}", "rootref", ref,
                               "rootseq", seq)
            < 0)
            kvs_log (ctx, LOG_ERR, "kvs.commit: respond: %s", strerror (errno));
        ctx->stats.commits++;
    }
    relay_destroy (r);
    ctx->inflight--;
    kvs_check_stop (ctx);
}

static void relay (struct kvs_ctx *ctx, const flux_msg_t *msg,
                   const char *nsname, int flags, json_t *ops,
                   struct flux_msg_cred cred)
{
    flux_error_t error = {{0}};
    struct txn *txn;
    struct relay *r;
    char name[64];

    /* malformed commits are answered here, not at rank 0 */
    if (!(txn = txn_create (ops, flags, !(cred.rolemask & FLUX_ROLE_OWNER),
                            &error))) {
        kvs_respond_error (ctx, msg, errno, "%s", error.text);
        return;
    }
    txn_destroy (txn);
    if (!(r = calloc (1, sizeof (*r))) || !(r->ns = strdup (nsname))) {
        free (r);
        kvs_respond_error (ctx, msg, ENOMEM, NULL);
        return;
    }
    list_init (&r->node);
    r->ctx = ctx;
    r->msg = flux_msg_incref (msg);
    snprintf (name, sizeof (name), "%u.%lu", ctx->rank, ++ctx->name_seq);
    if (!(r->f = flux_rpc_pack (ctx->h, "kvs.relaycommit", 0, 0,
                                "{s:s s:i s:O s:I s:I s:s}", "namespace",
                                nsname, "flags", flags, "ops", ops, "userid",
                                (json_int_t)cred.userid, "rolemask",
                                (json_int_t)cred.rolemask, "name", name))
        || flux_future_then (r->f, -1., relay_continuation, r) < 0) {
        kvs_respond_error (ctx, msg, errno, "cannot relay the commit");
        relay_destroy (r);
        return;
    }
    list_add_tail (&ctx->relays, &r->node);
    ctx->inflight++;
    ctx->stats.relays++;
}

/* ---- requests ---- */

void commit_request_cb (flux_t *h, flux_msg_handler_t *mh,
                        const flux_msg_t *msg, void *arg)
{
    struct kvs_ctx *ctx = arg;
    const char *nsname;
    int flags;
    json_t *ops;
    struct flux_msg_cred cred;

    if (ctx->stopping) {
        kvs_respond_error (ctx, msg, ENOSYS, "kvs module is unloading");
        return;
    }
    if (flux_request_unpack (msg, NULL, "{s:s s:i s:o}", "namespace", &nsname,
                             "flags", &flags, "ops", &ops)
            < 0
        || flux_msg_get_cred (msg, &cred) < 0) {
        kvs_respond_error (ctx, msg, EPROTO,
                           "kvs.commit: expected {namespace:s flags:i ops:a}");
        return;
    }
    if (ctx->rank > 0)
        relay (ctx, msg, nsname, flags, ops, cred);
    else
        commit_enqueue (ctx, msg, nsname, flags, ops, cred, NULL,
                        commit_request_cb);
}

void relaycommit_request_cb (flux_t *h, flux_msg_handler_t *mh,
                             const flux_msg_t *msg, void *arg)
{
    struct kvs_ctx *ctx = arg;
    const char *nsname, *name = NULL;
    int flags;
    json_t *ops;
    json_int_t userid, rolemask;
    struct flux_msg_cred cred;

    if (ctx->stopping) {
        kvs_respond_error (ctx, msg, ENOSYS, "kvs module is unloading");
        return;
    }
    if (flux_request_unpack (msg, NULL, "{s:s s:i s:o s:I s:I s?s}",
                             "namespace", &nsname, "flags", &flags, "ops", &ops,
                             "userid", &userid, "rolemask", &rolemask, "name",
                             &name)
            < 0
        || userid < 0 || userid > 0xFFFFFFFFLL || rolemask < 0
        || rolemask > 0xFFFFFFFFLL) {
        kvs_respond_error (ctx, msg, EPROTO,
                           "kvs.relaycommit: expected {namespace:s flags:i"
                           " ops:a userid:i rolemask:i name?:s}");
        return;
    }
    if (ctx->rank > 0) {
        kvs_respond_error (ctx, msg, EINVAL,
                           "kvs.relaycommit is served by rank 0");
        return;
    }
    cred.userid = (uint32_t)userid;
    cred.rolemask = (uint32_t)rolemask;
    commit_enqueue (ctx, msg, nsname, flags, ops, cred, name,
                    relaycommit_request_cb);
}

static int teardown_queue (struct kvs_ns *ns, void *arg)
{
    fail_queue (arg, ns, ENOSYS, "kvs module is unloading");
    return 0;
}

/* Answer and free every commit (before the cache is destroyed). */
void commit_teardown (struct kvs_ctx *ctx)
{
    struct list_node *pos, *tmp;

    flux_reactor_undefer (&ctx->settle_defer);
    while (!list_empty (&ctx->settle)) {
        struct kvs_ns *ns
            = list_entry (ctx->settle.next, struct kvs_ns, settle_link);
        list_del (&ns->settle_link);
        ns->settle_pending = false;
        kvs_ns_decref (ns);
    }
    (void)nstab_foreach (ctx->nstab, teardown_queue, ctx);

    list_for_each_safe (pos, tmp, &ctx->batches)
    {
        struct batch *b = list_entry (pos, struct batch, node);
        struct list_node *p2, *t2;
        /* applied, maybe stored: not ENOSYS, which says "not applied" */
        list_for_each_safe (p2, t2, &b->commits)
        {
            commit_fail (ctx, list_entry (p2, struct commit, node), EIO,
                         "kvs module unloaded before the commit completed: "
                         "it may or may not have been applied");
        }
        b->ns->nbatches--;
        b->ns->applying = false;
        batch_destroy (b);
    }
    if (ctx->linger_timer) {
        uv_close ((uv_handle_t *)ctx->linger_timer, kvs_free_handle);
        ctx->linger_timer = NULL;
    }
    list_for_each_safe (pos, tmp, &ctx->behind)
    {
        struct batch_rpc *r = list_entry (pos, struct batch_rpc, node);
        batch_rpc_clear (ctx, r, false);
        batch_rpc_destroy (r);
    }
    ctx->behind_pending = 0;
    ctx->behind_bytes = 0;
    list_for_each_safe (pos, tmp, &ctx->relays)
    {
        struct relay *r = list_entry (pos, struct relay, node);
        kvs_respond_error (ctx, r->msg, EIO,
                           "kvs module unloaded before rank 0 answered: the "
                           "commit may or may not have been applied");
        relay_destroy (r);
    }
    ctx->inflight = 0;
}
