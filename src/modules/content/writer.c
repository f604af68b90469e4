/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* writer.c - writing dirty blobs where they must go, and the barriers
 * (flush, checkpoint) that wait for them.
 *
 * Dirty entries wait in the send queue, in order, and are written with
 * at most write_limit blobs in flight.  Ranks > 0 store each blob with
 * content.store to the parent; rank 0 with content-backing.store to a
 * backing store that registered without "write".
 *
 * Batching backing store (registered with "write", rank 0): the queue is
 * sent at the start of the next loop turn, so that the blobs stored in
 * one turn (a KVS commit's) leave in ONE content-backing.write request
 * (libcontent/write.h).  A checkpoint-put does not wait for its blobs to
 * be durable: once every blob made dirty before it has been sent, it
 * rides on the next request, which the backing store makes durable in
 * the same transaction as its blobs, or after the earlier requests'.
 * Should an earlier request fail after the checkpoint was sent, the
 * checkpoint is refused by the backing store, because the count of
 * failures the request carries (write_failures) is behind its own: a
 * checkpoint never lands without every blob before it.
 *
 * Lazy writes: a content-backing.write that carries no checkpoint and
 * no flush is sent lazy (libcontent/write.h): the backing store writes
 * it without a sync.  Nothing acknowledged depends on those blobs until
 * a checkpoint references them, and a checkpoint always rides on a
 * durable write, whose sync covers every write before it (the backing
 * store commits in arrival order).  A flush (content.flush) likewise
 * rides on the next write, an empty one if nothing is queued, so it is
 * answered only once everything before it is durable.
 *
 * Lingering lazy writes: most lazy blobs (a guest namespace's commits)
 * are followed within milliseconds by a durable write (the next primary
 * commit's checkpoint).  So a send queue holding only lazy blobs waits
 * up to cfg.lazy_delay (or until cfg.lazy_bytes are queued) and then
 * rides on that write: one backing-store transaction instead of two.
 * Nothing waits on a lazy blob (rank 0 answers stores from the cache;
 * a flush or checkpoint arriving meanwhile sends the queue at once).
 * Only the KVS's blobs (content.write) are held: a client's
 * content.store is written through at the next turn, as before.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libcontent/write.h"

#include "service_priv.h"

/* One content-backing.write carries at most this much data (one larger
 * blob goes alone). */
#define WRITE_BYTES_MAX ((size_t)16 << 20)

struct wop {
    struct content_service *svc;
    flux_future_t *f;
    struct pending **v; /* the entries written */
    int n;
    struct waitq cps; /* checkpoints made durable with this write */
    bool batch;       /* a content-backing.write */
    bool backing;     /* to the backing store (not upstream) */
    struct wop *prev, *next;
};

static bool batching (struct content_service *svc)
{
    return svc->cfg.rank == 0 && svc->backing_write && have_destination (svc);
}

/* ---- barriers ---- */

static void waitq_push (struct waitq *q, struct waiter *w)
{
    w->next = NULL;
    if (q->tail)
        q->tail->next = w;
    else
        q->head = w;
    q->tail = w;
}

static void waiter_free (struct waiter *w)
{
    flux_msg_decref (w->msg);
    json_decref (w->value);
    free (w);
}

static void waiter_fail_one (struct content_service *svc, struct waiter *w,
                             int errnum, const char *errstr)
{
    if (w->msg)
        flux_respond_error (svc->h, w->msg, errnum, errstr);
    else
        flux_log (svc->h, 3, "checkpoint not saved: %s",
                  errstr ? errstr : strerror (errnum));
    waiter_free (w);
}

int waiter_add (struct content_service *svc, int type, const flux_msg_t *msg,
                json_t *value)
{
    struct waiter *w;

    if (!(w = calloc (1, sizeof (*w))))
        return -1;
    w->type = type;
    w->barrier = cache_last_seq (svc->cache);
    w->msg = msg ? flux_msg_incref (msg) : NULL;
    w->value = json_incref (value);
    requeue_dirty (svc, w->barrier);
    if (batching (svc)) /* a checkpoint or flush rides on the next write */
        waitq_push (&svc->cpq, w);
    else
        waitq_push (&svc->waiters, w);
    return 0;
}

bool barrier_clear (struct content_service *svc)
{
    uint64_t oldest = cache_oldest_dirty (svc->cache);

    return !svc->waiters.head && !svc->cpq.head
           && !(batching (svc) && svc->unsynced)
           && (oldest == 0 || oldest > cache_last_seq (svc->cache));
}

void waiters_check (struct content_service *svc)
{
    uint64_t oldest = cache_oldest_dirty (svc->cache);
    struct waiter *w;

    while ((w = svc->waiters.head) && (oldest == 0 || oldest > w->barrier)) {
        if (w->type == W_CHECKPOINT && !have_destination (svc)
            && svc->backing_expected)
            break; /* not into memory: the backing store is coming back */
        svc->waiters.head = w->next;
        if (!svc->waiters.head)
            svc->waiters.tail = NULL;
        if (w->type == W_FLUSH)
            flux_respond (svc->h, w->msg, NULL);
        else
            checkpoint_commit (svc, w->msg, w->value);
        waiter_free (w);
    }
}

static void waitq_fail (struct content_service *svc, struct waitq *q,
                        uint64_t seq, int errnum, const char *errstr)
{
    struct waiter **wp = &q->head, *w;

    q->tail = NULL;
    while ((w = *wp)) {
        if (w->barrier >= seq) {
            *wp = w->next;
            waiter_fail_one (svc, w, errnum, errstr);
        }
        else {
            q->tail = w;
            wp = &w->next;
        }
    }
}

void waiters_fail (struct content_service *svc, uint64_t seq, int errnum,
                   const char *errstr)
{
    waitq_fail (svc, &svc->waiters, seq, errnum, errstr);
    waitq_fail (svc, &svc->cpq, seq, errnum, errstr);
}

/* Some blob made dirty before flush w is still not written. */
static bool flush_unsatisfied (struct content_service *svc, struct waiter *w)
{
    uint64_t oldest = cache_oldest_dirty (svc->cache);

    return oldest != 0 && oldest <= w->barrier;
}

/* The checkpoints a write carried: saved, or failed with it. */
static void cps_finish (struct content_service *svc, struct waitq *q,
                        int errnum, const char *errstr)
{
    struct waiter *w;

    while ((w = q->head)) {
        q->head = w->next;
        if (errnum)
            waiter_fail_one (svc, w, errnum, errstr);
        else if (w->type == W_FLUSH && flush_unsatisfied (svc, w)) {
            /* a blob from before the flush is still dirty: its write
             * failed while this (later) write was in flight.  Write it
             * again, and let the flush ride on that: it fails with it,
             * or is answered once the blob is durable. */
            requeue_dirty (svc, w->barrier);
            waitq_push (batching (svc) ? &svc->cpq : &svc->waiters, w);
        }
        else {
            if (w->type == W_FLUSH)
                flux_respond (svc->h, w->msg, NULL);
            else
                checkpoint_saved (svc, w->msg, w->value);
            waiter_free (w);
        }
    }
    q->tail = NULL;
}

/* ---- the send queue ---- */

static size_t blob_len (struct pending *p)
{
    size_t len;

    (void)cache_entry_data (p->e, &len);
    return len;
}

void sendq_remove (struct content_service *svc, struct pending *p)
{
    if (!p->queued)
        return;
    if (p->qprev)
        p->qprev->qnext = p->qnext;
    else
        svc->sendq_head = p->qnext;
    if (p->qnext)
        p->qnext->qprev = p->qprev;
    else
        svc->sendq_tail = p->qprev;
    p->qprev = p->qnext = NULL;
    p->queued = false;
    svc->sendq_bytes -= blob_len (p);
}

int enqueue_write (struct content_service *svc, struct cache_entry *e)
{
    struct pending *p;

    if (!have_destination (svc) || !cache_entry_dirty (e))
        return 0;
    if (!(p = pending_get (svc, e)))
        return -1;
    if (p->queued || p->wop)
        return 0;
    p->qprev = svc->sendq_tail;
    p->qnext = NULL;
    if (svc->sendq_tail)
        svc->sendq_tail->qnext = p;
    else
        svc->sendq_head = p;
    svc->sendq_tail = p;
    p->queued = true;
    svc->sendq_bytes += blob_len (p);
    return 0;
}

void requeue_dirty (struct content_service *svc, uint64_t barrier)
{
    struct cache_entry *e, *next;

    for (e = cache_dirty_first (svc->cache);
         e && cache_entry_seq (e) <= barrier; e = next) {
        next = cache_dirty_next (e);
        (void)enqueue_write (svc, e);
    }
}

void sendq_drop (struct content_service *svc)
{
    while (svc->sendq_head) {
        struct pending *p = svc->sendq_head;
        sendq_remove (svc, p);
        pending_gc (p);
    }
}

/* ---- writes in flight ---- */

static struct wop *wop_create (struct content_service *svc, int n)
{
    struct wop *w;

    if (!(w = calloc (1, sizeof (*w)))
        || (n > 0 && !(w->v = calloc (n, sizeof (*w->v))))) {
        free (w);
        return NULL;
    }
    w->svc = svc;
    w->n = n;
    return w;
}

static void wop_destroy (struct wop *w)
{
    struct content_service *svc = w->svc;

    if (w->prev)
        w->prev->next = w->next;
    else if (svc->wops == w)
        svc->wops = w->next;
    if (w->next)
        w->next->prev = w->prev;
    flux_future_destroy (w->f);
    free (w->v);
    free (w);
}

/* The entries of w are being written (they left the send queue). */
static void wop_start (struct content_service *svc, struct wop *w)
{
    for (int i = 0; i < w->n; i++) {
        sendq_remove (svc, w->v[i]);
        w->v[i]->wop = w;
    }
    svc->writes += w->n;
    if (w->backing)
        svc->backing_inflight++;
    w->next = svc->wops;
    if (w->next)
        w->next->prev = w;
    svc->wops = w;
}

/* The write w is over (errnum 0: its blobs are stored): answer the
 * stores and checkpoints that waited for it, or fail them and every
 * barrier covering its blobs.  Frees w. */
static void wop_finish (struct wop *w, int errnum, const char *errstr)
{
    struct content_service *svc = w->svc;
    uint64_t minseq = UINT64_MAX;
    int i;

    for (i = 0; i < w->n; i++) {
        struct pending *p = w->v[i];
        if (errnum == 0) {
            cache_entry_set_clean (svc->cache, p->e);
            msgvec_respond (svc->h, &p->stores, cache_entry_digest (p->e),
                            svc->hash_size, 0, NULL);
        }
        else {
            msgvec_respond (svc->h, &p->stores, NULL, 0, errnum, errstr);
            if (cache_entry_seq (p->e) < minseq)
                minseq = cache_entry_seq (p->e);
        }
    }
    if (errnum && w->n > 0)
        waiters_fail (svc, minseq, errnum, errstr);
    cps_finish (svc, &w->cps, errnum, errstr);
    for (i = 0; i < w->n; i++) {
        w->v[i]->wop = NULL;
        pending_gc (w->v[i]);
    }
    wop_destroy (w);
}

static void wop_continuation (flux_future_t *f, void *arg)
{
    struct wop *w = arg;
    struct content_service *svc = w->svc;
    char errbuf[256] = "";
    int errnum = 0;

    if (w->batch) {
        if (flux_future_get (f, NULL) < 0)
            errnum = errno;
    }
    else {
        const void *hash;
        size_t len;
        if (flux_rpc_get_raw (f, &hash, &len) < 0)
            errnum = errno;
        else if (len != (size_t)svc->hash_size
                 || memcmp (hash, cache_entry_digest (w->v[0]->e), len) != 0) {
            errnum = EPROTO;
            snprintf (errbuf, sizeof (errbuf),
                      "store answered with the wrong digest");
        }
    }
    if (errnum && !errbuf[0]) {
        const char *s = flux_future_error_string (f);
        snprintf (errbuf, sizeof (errbuf), "%s", s ? s : strerror (errnum));
    }
    svc->writes -= w->n;
    if (w->backing)
        svc->backing_inflight--;
    if (errnum) {
        if (w->batch)
            svc->write_failures++;
        flux_log (svc->h, 3, "write of %d blob(s) to %s failed: %s", w->n,
                  svc->cfg.rank > 0 ? "parent" : svc->backing, errbuf);
    }
    wop_finish (w, errnum, errbuf);
    if (errnum == ENOSYS && svc->cfg.rank == 0)
        backing_lost (svc);
    after_io (svc);
}

/* Write one entry (content.store upstream, or content-backing.store). */
static void send_one (struct content_service *svc, struct pending *p)
{
    size_t len;
    const void *data = cache_entry_data (p->e, &len);
    const char *topic = "content-backing.store";
    uint32_t nodeid = FLUX_NODEID_ANY;
    struct wop *w;

    if (svc->cfg.rank > 0) {
        topic = "content.store";
        nodeid = FLUX_NODEID_UPSTREAM;
    }
    if (!(w = wop_create (svc, 1)))
        goto error;
    w->v[0] = p;
    w->backing = (svc->cfg.rank == 0);
    if (!(w->f
          = flux_rpc_raw (svc->h, topic, len ? data : NULL, len, nodeid, 0))
        || flux_future_then (w->f, -1., wop_continuation, w) < 0)
        goto error;
    wop_start (svc, w);
    return;
error : {
    int errnum = errno;
    flux_log (svc->h, 3, "%s: %s", topic, strerror (errnum));
    sendq_remove (svc, p);
    if (w) {
        w->n = 0; /* not started: fail p below, not through w */
        wop_destroy (w);
    }
    msgvec_respond (svc->h, &p->stores, NULL, 0, errnum, NULL);
    waiters_fail (svc, cache_entry_seq (p->e), errnum, NULL);
    pending_gc (p);
}
}

/* Send the head of the send queue (as much as the limits allow) in one
 * content-backing.write, and the waiting checkpoints with it if that
 * empties the queue.  Returns 0 if there was nothing to send. */
static int send_batch (struct content_service *svc)
{
    int room = svc->cfg.write_limit - svc->writes, n = 0, i;
    struct content_write_blob *blobs = NULL;
    struct pending *p;
    size_t bytes = 0, len = 0;
    char *cptext = NULL;
    void *buf = NULL;
    bool lazy;
    struct wop *w;

    for (p = svc->sendq_head; p && n < room; p = p->qnext) {
        size_t blen;
        (void)cache_entry_data (p->e, &blen);
        if (n > 0 && bytes + blen > WRITE_BYTES_MAX)
            break;
        bytes += blen;
        n++;
    }
    if (n == 0 && (svc->sendq_head || !svc->cpq.head))
        return 0;
    if (!(w = wop_create (svc, n))
        || (n > 0 && !(blobs = calloc (n, sizeof (*blobs)))))
        goto nomem;
    w->batch = w->backing = true;
    for (i = 0, p = svc->sendq_head; i < n; i++, p = p->qnext) {
        w->v[i] = p;
        blobs[i].digest = cache_entry_digest (p->e);
        blobs[i].data = cache_entry_data (p->e, &blobs[i].len);
    }
    if (!p && svc->cpq.head) {
        /* the last checkpoint is the one that counts; all are answered,
         * flushes too */
        json_t *last = NULL;
        for (struct waiter *c = svc->cpq.head; c; c = c->next)
            if (c->type == W_CHECKPOINT)
                last = c->value;
        if (last
            && !(cptext = json_dumps (last, JSON_COMPACT | JSON_SORT_KEYS)))
            goto nomem;
        w->cps = svc->cpq;
        svc->cpq.head = svc->cpq.tail = NULL;
    }
    lazy = !w->cps.head;
    for (i = 0; i < n && lazy; i++)
        if (w->v[i]->stores.n > 0)
            lazy = false;
    if (!(buf = content_write_encode (svc->hash_size, blobs, n, cptext,
                                      svc->write_failures, &len))
        || (lazy && content_write_set_lazy (buf, len) < 0)
        || !(w->f = flux_rpc_raw (svc->h, "content-backing.write", buf, len,
                                  FLUX_NODEID_ANY, 0))
        || flux_future_then (w->f, -1., wop_continuation, w) < 0) {
        int errnum = errno;
        flux_log (svc->h, 3, "content-backing.write: %s", strerror (errnum));
        wop_start (svc, w); /* so that finishing it fails it in order */
        svc->writes -= w->n;
        svc->backing_inflight--;
        wop_finish (w, errnum, strerror (errnum));
        goto done;
    }
    wop_start (svc, w);
    svc->unsynced = lazy;
done:
    free (buf);
    free (cptext);
    free (blobs);
    return 1;
nomem: /* nothing was taken from the queues: retried at the next kick */
    if (w) {
        w->n = 0;
        wop_destroy (w);
    }
    free (cptext);
    free (blobs);
    flux_log (svc->h, 3, "content-backing.write: out of memory");
    return 0;
}

static void pump (struct content_service *svc)
{
    if (!have_destination (svc))
        return;
    if (batching (svc)) {
        while ((svc->sendq_head && svc->writes < svc->cfg.write_limit)
               || (!svc->sendq_head && svc->cpq.head)) {
            if (send_batch (svc) == 0)
                break;
        }
        if (!svc->sendq_head)
            svc->prompt = false;
        return;
    }
    while (svc->sendq_head && svc->writes < svc->cfg.write_limit)
        send_one (svc, svc->sendq_head);
}

static void flush_cb (uv_idle_t *idle)
{
    struct content_service *svc = idle->data;

    uv_idle_stop (idle);
    pump (svc);
}

static void linger_cb (uv_timer_t *t)
{
    struct content_service *svc = t->data;

    pump (svc);
}

/* Only lazy blobs are queued, and few enough to hold a while longer. */
static bool may_linger (struct content_service *svc)
{
    return svc->cfg.lazy_delay > 0. && svc->sendq_head && !svc->cpq.head
           && !svc->prompt && svc->sendq_bytes < svc->cfg.lazy_bytes
           && !svc->detaching;
}

void writer_kick (struct content_service *svc)
{
    if (!have_destination (svc))
        return;
    if (!batching (svc)) {
        pump (svc);
        return;
    }
    if ((svc->sendq_head && svc->writes < svc->cfg.write_limit)
        || (!svc->sendq_head && svc->cpq.head)) {
        if (may_linger (svc)) {
            if (!uv_is_active ((uv_handle_t *)svc->linger_w)) {
                uint64_t ms = (uint64_t)(svc->cfg.lazy_delay * 1000. + 0.5);
                uv_timer_start (svc->linger_w, linger_cb, ms ? ms : 1, 0);
                svc->lazy_held++;
            }
            return;
        }
        uv_timer_stop (svc->linger_w);
        uv_idle_start (svc->flush_w, flush_cb);
    }
}

int writer_init (struct content_service *svc)
{
    uv_loop_t *loop = flux_reactor_uv (flux_get_reactor (svc->h));

    if (!(svc->flush_w = calloc (1, sizeof (*svc->flush_w))))
        return -1;
    uv_idle_init (loop, svc->flush_w);
    svc->flush_w->data = svc;
    if (!(svc->linger_w = calloc (1, sizeof (*svc->linger_w)))) {
        flux_uv_close_free ((uv_handle_t *)svc->flush_w);
        svc->flush_w = NULL;
        return -1;
    }
    uv_timer_init (loop, svc->linger_w);
    svc->linger_w->data = svc;
    return 0;
}

void writer_teardown (struct content_service *svc, const char *why)
{
    while (svc->wops) {
        struct wop *w = svc->wops;
        svc->writes -= w->n;
        if (w->backing)
            svc->backing_inflight--;
        wop_finish (w, ENOSYS, why);
    }
    waiters_fail (svc, 0, ENOSYS, why);
    if (svc->flush_w) {
        flux_uv_close_free ((uv_handle_t *)svc->flush_w);
        svc->flush_w = NULL;
    }
    if (svc->linger_w) {
        flux_uv_close_free ((uv_handle_t *)svc->linger_w);
        svc->linger_w = NULL;
    }
}
