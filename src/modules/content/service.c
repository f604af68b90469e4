/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* service.c - the content service of one broker (RFC 10).
 *
 * Three things are in progress at any time, each kept where it belongs:
 *  - per blob (struct pending, the cache entry's aux): requests waiting
 *    for a load from upstream/backing, rank > 0 stores waiting for the
 *    parent, and the load or write RPC in flight;
 *  - writes to do (the send queue), started in order, at most
 *    write_limit at once;
 *  - barriers (struct waiter): a flush or checkpoint-put waits until no
 *    blob made dirty before it (cache sequence numbers) is still dirty.
 * Every continuation ends with after_io(), which starts queued writes,
 * releases barriers, finishes a backing store's departure and purges.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "libcontent/blobref.h"

#include "cache.h"
#include "service.h"

struct msgvec {
    const flux_msg_t **v;
    int n, cap;
};

struct pending {
    struct content_service *svc;
    struct cache_entry *e;
    struct msgvec loads;     /* content.load requests */
    struct msgvec validates; /* content.validate requests */
    struct msgvec stores;    /* rank > 0: content.store requests */
    flux_future_t *load_f;
    flux_future_t *write_f;
    bool queued;
    struct pending *qprev, *qnext; /* send queue */
    struct pending *prev, *next;   /* svc->pendings */
};

enum { W_FLUSH, W_CHECKPOINT };

struct waiter {
    struct waiter *next;
    int type;
    uint64_t barrier;
    const flux_msg_t *msg; /* NULL: internal checkpoint push */
    json_t *value;         /* W_CHECKPOINT */
};

/* A request forwarded as is (checkpoints). */
struct op {
    struct content_service *svc;
    flux_future_t *f;
    const flux_msg_t *msg; /* NULL: internal */
    json_t *value;         /* checkpoint-put: what was sent */
    bool backing;
    struct op *prev, *next;
};

struct content_service {
    flux_t *h;
    struct content_config cfg;
    char hashtype[16];
    int hash_size;
    struct cache *cache;
    flux_msg_handler_t **handlers;

    char *backing; /* registered backing store, or NULL */
    bool detaching;
    const flux_msg_t *unregister_req;
    int backing_inflight; /* RPCs to content-backing.* */

    struct pending *sendq_head, *sendq_tail;
    int writes; /* writes in flight */
    struct pending *pendings;
    struct waiter *waiters_head, *waiters_tail;
    struct op *ops;

    json_t *checkpoint;      /* rank 0: latest value kept in memory */
    bool checkpoint_unsaved; /* not yet given to a backing store */
};

static void after_io (struct content_service *svc);
static void checkpoint_commit (struct content_service *svc,
                               const flux_msg_t *msg, json_t *value);

/* ---- logging ---- */

void content_log (flux_t *h, int severity, const char *fmt, ...)
{
    const char *app = flux_aux_get (h, "flux::name");
    char buf[1024];
    struct timespec ts;
    struct tm tm;
    uint32_t rank = 0;
    va_list ap;
    int n, saved_errno = errno;

    clock_gettime (CLOCK_REALTIME, &ts);
    gmtime_r (&ts.tv_sec, &tm);
    (void)flux_get_rank (h, &rank);
    n = snprintf (buf, sizeof (buf),
                  "<%d>1 %04d-%02d-%02dT%02d:%02d:%02d.%06ldZ %u %s - - - ",
                  (severity << 3) | 1, tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  ts.tv_nsec / 1000, rank, app ? app : "content");
    if (n < 0 || n >= (int)sizeof (buf)) {
        errno = saved_errno;
        return;
    }
    va_start (ap, fmt);
    vsnprintf (buf + n, sizeof (buf) - n, fmt, ap);
    va_end (ap);
    flux_future_destroy (flux_rpc_raw (h, "log.append", buf, strlen (buf),
                                       FLUX_NODEID_ANY, FLUX_RPC_NORESPONSE));
    errno = saved_errno;
}

/* ---- lists of held requests ---- */

static int msgvec_add (struct msgvec *mv, const flux_msg_t *msg)
{
    if (mv->n == mv->cap) {
        int ncap = mv->cap ? mv->cap * 2 : 4;
        const flux_msg_t **nv = realloc (mv->v, ncap * sizeof (*nv));
        if (!nv)
            return -1;
        mv->v = nv;
        mv->cap = ncap;
    }
    mv->v[mv->n++] = flux_msg_incref (msg);
    return 0;
}

/* Answer every request with data (or with no payload if data is NULL
 * and len 0), or with an error if errnum != 0, and empty the list. */
static void msgvec_respond (flux_t *h, struct msgvec *mv, const void *data,
                            size_t len, int errnum, const char *errstr)
{
    int i;

    for (i = 0; i < mv->n; i++) {
        if (errnum)
            flux_respond_error (h, mv->v[i], errnum, errstr);
        else
            flux_respond_raw (h, mv->v[i], data, len);
        flux_msg_decref (mv->v[i]);
    }
    mv->n = 0;
}

static void msgvec_free (struct msgvec *mv)
{
    free (mv->v);
    mv->v = NULL;
    mv->n = mv->cap = 0;
}

/* Release a message whose payload a cache entry borrowed. */
static void msg_release (void *owner)
{
    flux_msg_decref (owner);
}

/* ---- per-entry state ---- */

static struct pending *pending_get (struct content_service *svc,
                                    struct cache_entry *e)
{
    struct pending *p = cache_entry_aux (e);

    if (p)
        return p;
    if (!(p = calloc (1, sizeof (*p))))
        return NULL;
    p->svc = svc;
    p->e = e;
    p->next = svc->pendings;
    if (p->next)
        p->next->prev = p;
    svc->pendings = p;
    cache_entry_set_aux (e, p);
    return p;
}

/* Free p once nothing is in progress for its entry; an entry still
 * without its blob then goes too. */
static void pending_gc (struct pending *p)
{
    struct content_service *svc = p->svc;

    if (p->loads.n || p->validates.n || p->stores.n || p->load_f || p->write_f
        || p->queued)
        return;
    if (p->prev)
        p->prev->next = p->next;
    else
        svc->pendings = p->next;
    if (p->next)
        p->next->prev = p->prev;
    cache_entry_set_aux (p->e, NULL);
    if (!cache_entry_valid (p->e))
        cache_remove (svc->cache, p->e);
    msgvec_free (&p->loads);
    msgvec_free (&p->validates);
    msgvec_free (&p->stores);
    free (p);
}

/* ---- writes: the send queue ---- */

static bool have_destination (struct content_service *svc)
{
    if (svc->cfg.rank > 0)
        return true;
    return svc->backing && !svc->detaching;
}

static void sendq_remove (struct content_service *svc, struct pending *p)
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
}

/* Queue a dirty entry to be written unless it already is, or is being
 * written, or there is nowhere to write it.  -1 only if out of memory. */
static int enqueue_write (struct content_service *svc, struct cache_entry *e)
{
    struct pending *p;

    if (!have_destination (svc) || !cache_entry_dirty (e))
        return 0;
    if (!(p = pending_get (svc, e)))
        return -1;
    if (p->queued || p->write_f)
        return 0;
    p->qprev = svc->sendq_tail;
    p->qnext = NULL;
    if (svc->sendq_tail)
        svc->sendq_tail->qnext = p;
    else
        svc->sendq_head = p;
    svc->sendq_tail = p;
    p->queued = true;
    return 0;
}

/* Queue every idle dirty entry with seq <= barrier (retries included). */
static void requeue_dirty (struct content_service *svc, uint64_t barrier)
{
    struct cache_entry *e, *next;

    for (e = cache_dirty_first (svc->cache);
         e && cache_entry_seq (e) <= barrier; e = next) {
        next = cache_dirty_next (e);
        (void)enqueue_write (svc, e);
    }
}

/* Fail (and drop) every barrier covering seq. */
static void waiters_fail (struct content_service *svc, uint64_t seq, int errnum,
                          const char *errstr)
{
    struct waiter **wp = &svc->waiters_head, *w;

    svc->waiters_tail = NULL;
    while ((w = *wp)) {
        if (w->barrier >= seq) {
            *wp = w->next;
            if (w->msg) {
                flux_respond_error (svc->h, w->msg, errnum, errstr);
                flux_msg_decref (w->msg);
            }
            else
                content_log (svc->h, 3, "checkpoint not saved: %s",
                             errstr ? errstr : strerror (errnum));
            json_decref (w->value);
            free (w);
        }
        else {
            svc->waiters_tail = w;
            wp = &w->next;
        }
    }
}

static void start_detach (struct content_service *svc);

/* A content-backing request got ENOSYS: the backing store went away
 * without unregistering. */
static void backing_lost (struct content_service *svc)
{
    if (svc->backing && !svc->detaching) {
        content_log (svc->h, 3, "backing store %s stopped answering",
                     svc->backing);
        start_detach (svc);
    }
}

static void write_continuation (flux_future_t *f, void *arg)
{
    struct pending *p = arg;
    struct content_service *svc = p->svc;
    const void *hash;
    size_t len;
    int errnum = 0;
    const char *errstr = NULL;

    p->write_f = NULL;
    svc->writes--;
    if (svc->cfg.rank == 0)
        svc->backing_inflight--;
    if (flux_rpc_get_raw (f, &hash, &len) < 0) {
        errnum = errno;
        errstr = flux_future_error_string (f);
    }
    else if (len != (size_t)svc->hash_size
             || memcmp (hash, cache_entry_digest (p->e), len) != 0) {
        errnum = EPROTO;
        errstr = "store answered with the wrong digest";
    }
    if (errnum == 0) {
        cache_entry_set_clean (svc->cache, p->e);
        msgvec_respond (svc->h, &p->stores, cache_entry_digest (p->e),
                        svc->hash_size, 0, NULL);
    }
    else {
        if (!errstr)
            errstr = strerror (errnum);
        content_log (svc->h, 3, "store to %s failed: %s",
                     svc->cfg.rank > 0 ? "parent" : svc->backing, errstr);
        msgvec_respond (svc->h, &p->stores, NULL, 0, errnum, errstr);
        waiters_fail (svc, cache_entry_seq (p->e), errnum, errstr);
        if (svc->cfg.rank == 0 && errnum == ENOSYS)
            backing_lost (svc);
    }
    flux_future_destroy (f);
    pending_gc (p);
    after_io (svc);
}

static void send_write (struct content_service *svc, struct pending *p)
{
    size_t len;
    const void *data = cache_entry_data (p->e, &len);
    const char *topic;
    uint32_t nodeid;
    flux_future_t *f;

    if (svc->cfg.rank > 0) {
        topic = "content.store";
        nodeid = FLUX_NODEID_UPSTREAM;
    }
    else {
        topic = "content-backing.store";
        nodeid = FLUX_NODEID_ANY;
    }
    if (!(f = flux_rpc_raw (svc->h, topic, len ? data : NULL, len, nodeid, 0))
        || flux_future_then (f, -1., write_continuation, p) < 0) {
        int errnum = errno;
        flux_future_destroy (f);
        content_log (svc->h, 3, "%s: %s", topic, strerror (errnum));
        msgvec_respond (svc->h, &p->stores, NULL, 0, errnum, NULL);
        waiters_fail (svc, cache_entry_seq (p->e), errnum, NULL);
        pending_gc (p);
        return;
    }
    p->write_f = f;
    svc->writes++;
    if (svc->cfg.rank == 0)
        svc->backing_inflight++;
}

static void pump (struct content_service *svc)
{
    while (svc->sendq_head && svc->writes < svc->cfg.write_limit
           && have_destination (svc)) {
        struct pending *p = svc->sendq_head;
        sendq_remove (svc, p);
        send_write (svc, p);
    }
}

/* ---- barriers ---- */

static int waiter_add (struct content_service *svc, int type,
                       const flux_msg_t *msg, json_t *value)
{
    struct waiter *w;

    if (!(w = calloc (1, sizeof (*w))))
        return -1;
    w->type = type;
    w->barrier = cache_last_seq (svc->cache);
    w->msg = msg ? flux_msg_incref (msg) : NULL;
    w->value = json_incref (value);
    if (svc->waiters_tail)
        svc->waiters_tail->next = w;
    else
        svc->waiters_head = w;
    svc->waiters_tail = w;
    requeue_dirty (svc, w->barrier);
    return 0;
}

/* True if nothing made dirty up to now is still dirty, and no earlier
 * barrier waits (barriers are released in order). */
static bool barrier_clear (struct content_service *svc)
{
    uint64_t oldest = cache_oldest_dirty (svc->cache);

    return !svc->waiters_head
           && (oldest == 0 || oldest > cache_last_seq (svc->cache));
}

static void waiters_check (struct content_service *svc)
{
    uint64_t oldest = cache_oldest_dirty (svc->cache);
    struct waiter *w;

    while ((w = svc->waiters_head) && (oldest == 0 || oldest > w->barrier)) {
        svc->waiters_head = w->next;
        if (!svc->waiters_head)
            svc->waiters_tail = NULL;
        if (w->type == W_FLUSH)
            flux_respond (svc->h, w->msg, NULL);
        else
            checkpoint_commit (svc, w->msg, w->value);
        flux_msg_decref (w->msg);
        json_decref (w->value);
        free (w);
    }
}

/* ---- the backing store ---- */

static void detach_check (struct content_service *svc)
{
    struct cache_stats st;

    if (!svc->detaching || svc->backing_inflight > 0)
        return;
    cache_get_stats (svc->cache, &st);
    content_log (svc->h, st.dirty ? 4 : 6,
                 "backing store %s unregistered (%d blobs only in memory)",
                 svc->backing, st.dirty);
    free (svc->backing);
    svc->backing = NULL;
    svc->detaching = false;
    waiters_fail (svc, 0, ENOSYS, "the backing store was unregistered");
    if (svc->unregister_req) {
        flux_respond (svc->h, svc->unregister_req, NULL);
        flux_msg_decref (svc->unregister_req);
        svc->unregister_req = NULL;
    }
}

static void start_detach (struct content_service *svc)
{
    svc->detaching = true;
    while (svc->sendq_head) {
        struct pending *p = svc->sendq_head;
        sendq_remove (svc, p);
        pending_gc (p);
    }
    detach_check (svc);
}

static void after_io (struct content_service *svc)
{
    pump (svc);
    waiters_check (svc);
    detach_check (svc);
    (void)cache_purge (svc->cache, svc->cfg.purge_target);
}

/* ---- content.load, content.validate ---- */

static void load_continuation (flux_future_t *f, void *arg)
{
    struct pending *p = arg;
    struct content_service *svc = p->svc;
    const flux_msg_t *rsp;
    const void *data;
    size_t len;
    int errnum = 0;
    const char *errstr = NULL;

    p->load_f = NULL;
    if (svc->cfg.rank == 0)
        svc->backing_inflight--;
    if (flux_rpc_get_raw (f, &data, &len) < 0) {
        errnum = errno;
        errstr = flux_future_error_string (f);
        if (svc->cfg.rank == 0 && errnum == ENOSYS) {
            backing_lost (svc);
            errnum = ENOENT;
            errstr = NULL;
        }
    }
    else if (!cache_entry_valid (p->e)) {
        uint8_t digest[BLOBREF_MAX_DIGEST_SIZE];
        if (blobref_hash_raw (svc->hashtype, data, len, digest, sizeof (digest))
                < 0
            || memcmp (digest, cache_entry_digest (p->e), svc->hash_size)
                   != 0) {
            content_log (svc->h, 3, "a loaded blob does not match its digest");
            errnum = EPROTO;
            errstr = "loaded blob does not match its digest";
        }
        else if (flux_future_get_msg (f, &rsp) < 0
                 || cache_entry_fill_borrow (svc->cache, p->e, data, len,
                                             (void *)flux_msg_incref (rsp),
                                             msg_release)
                        < 0)
            errnum = ENOMEM;
    }
    if (errnum == 0) {
        data = cache_entry_data (p->e, &len);
        msgvec_respond (svc->h, &p->loads, data, len, 0, NULL);
        msgvec_respond (svc->h, &p->validates, NULL, 0, 0, NULL);
    }
    else {
        msgvec_respond (svc->h, &p->loads, NULL, 0, errnum, errstr);
        msgvec_respond (svc->h, &p->validates, NULL, 0, errnum, errstr);
    }
    flux_future_destroy (f);
    pending_gc (p);
    after_io (svc);
}

static int send_load (struct content_service *svc, struct pending *p)
{
    const char *topic;
    uint32_t nodeid;
    flux_future_t *f;

    if (svc->cfg.rank > 0) {
        topic = "content.load";
        nodeid = FLUX_NODEID_UPSTREAM;
    }
    else {
        topic = "content-backing.load";
        nodeid = FLUX_NODEID_ANY;
    }
    if (!(f = flux_rpc_raw (svc->h, topic, cache_entry_digest (p->e),
                            svc->hash_size, nodeid, 0))
        || flux_future_then (f, -1., load_continuation, p) < 0) {
        flux_future_destroy (f);
        return -1;
    }
    p->load_f = f;
    if (svc->cfg.rank == 0)
        svc->backing_inflight++;
    return 0;
}

static void load_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    struct content_service *svc = arg;
    const char *topic;
    const void *digest;
    size_t len;
    struct cache_entry *e;
    struct pending *p;
    bool validate;
    char errbuf[128];

    if (flux_request_decode_raw (msg, &topic, &digest, &len) < 0)
        goto proto;
    validate = !strcmp (topic, "content.validate");
    if (len != (size_t)svc->hash_size) {
        snprintf (errbuf, sizeof (errbuf),
                  "%s: payload must be a %d-byte %s digest", topic,
                  svc->hash_size, svc->hashtype);
        flux_respond_error (h, msg, EPROTO, errbuf);
        return;
    }
    if ((e = cache_lookup (svc->cache, digest)) && cache_entry_valid (e)) {
        const void *data = cache_entry_data (e, &len);
        cache_entry_touch (svc->cache, e);
        if (validate)
            flux_respond (h, msg, NULL);
        else
            flux_respond_raw (h, msg, data, len);
        return;
    }
    if (!e) {
        if (!have_destination (svc)) {
            flux_respond_error (h, msg, ENOENT, NULL);
            return;
        }
        if (!(e = cache_insert (svc->cache, digest)))
            goto error;
    }
    if (!(p = pending_get (svc, e))) {
        if (!cache_entry_aux (e))
            cache_remove (svc->cache, e);
        goto error;
    }
    if (msgvec_add (validate ? &p->validates : &p->loads, msg) < 0) {
        pending_gc (p);
        goto error;
    }
    if (!p->load_f && send_load (svc, p) < 0) {
        int errnum = errno;
        msgvec_respond (h, &p->loads, NULL, 0, errnum, NULL);
        msgvec_respond (h, &p->validates, NULL, 0, errnum, NULL);
        pending_gc (p);
    }
    return;
proto:
    flux_respond_error (h, msg, EPROTO, "content.load: malformed request");
    return;
error:
    flux_respond_error (h, msg, errno, NULL);
}

/* ---- content.store ---- */

static void store_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    struct content_service *svc = arg;
    const void *data;
    size_t len;
    uint8_t digest[BLOBREF_MAX_DIGEST_SIZE];
    struct cache_entry *e;
    struct pending *p;
    char errbuf[128];

    if (flux_request_decode_raw (msg, NULL, &data, &len) < 0) {
        flux_respond_error (h, msg, EPROTO, "content.store: malformed request");
        return;
    }
    if (len > svc->cfg.blob_size_limit) {
        snprintf (errbuf, sizeof (errbuf),
                  "content.store: blob of %zu bytes exceeds the limit of %zu",
                  len, svc->cfg.blob_size_limit);
        flux_respond_error (h, msg, EFBIG, errbuf);
        return;
    }
    if (blobref_hash_raw (svc->hashtype, data, len, digest, sizeof (digest))
        < 0)
        goto error;
    if (!(e = cache_lookup (svc->cache, digest))
        && !(e = cache_insert (svc->cache, digest)))
        goto error;
    if (!cache_entry_valid (e)) {
        if (cache_entry_fill_borrow (svc->cache, e, data, len,
                                     (void *)flux_msg_incref (msg), msg_release)
            < 0) {
            flux_msg_decref (msg);
            if (!cache_entry_aux (e))
                cache_remove (svc->cache, e);
            goto error;
        }
        (void)cache_entry_set_dirty (svc->cache, e);
        if ((p = cache_entry_aux (e))) {
            /* loads waiting for this blob need not wait any longer */
            msgvec_respond (h, &p->loads, data, len, 0, NULL);
            msgvec_respond (h, &p->validates, NULL, 0, 0, NULL);
        }
    }
    if (svc->cfg.rank == 0 || !cache_entry_dirty (e)) {
        flux_respond_raw (h, msg, digest, svc->hash_size);
        if (enqueue_write (svc, e) < 0)
            content_log (h, 3, "content.store: cannot queue a write: %s",
                         strerror (errno));
    }
    else {
        /* rank > 0: answered once the parent has it */
        if (!(p = pending_get (svc, e)))
            goto error;
        if (msgvec_add (&p->stores, msg) < 0) {
            pending_gc (p);
            goto error;
        }
        (void)enqueue_write (svc, e); /* cannot fail: p exists */
    }
    after_io (svc);
    return;
error:
    flux_respond_error (h, msg, errno, NULL);
}

/* ---- content.flush, content.dropcache, content.stats-get ---- */

static void flush_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    struct content_service *svc = arg;

    if (!have_destination (svc)) {
        flux_respond_error (h, msg, ENOSYS,
                            "content.flush: no backing store is registered");
        return;
    }
    if (barrier_clear (svc)) {
        flux_respond (h, msg, NULL);
        return;
    }
    if (waiter_add (svc, W_FLUSH, msg, NULL) < 0) {
        flux_respond_error (h, msg, errno, NULL);
        return;
    }
    after_io (svc);
}

static void dropcache_cb (flux_t *h, flux_msg_handler_t *mh,
                          const flux_msg_t *msg, void *arg)
{
    struct content_service *svc = arg;

    (void)cache_drop (svc->cache);
    flux_respond (h, msg, NULL);
}

static void stats_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    struct content_service *svc = arg;
    struct cache_stats st;
    struct pending *p;
    int loads = 0;

    cache_get_stats (svc->cache, &st);
    for (p = svc->pendings; p; p = p->next)
        if (p->load_f)
            loads++;
    if (flux_respond_pack (
            h, msg, "{s:i s:i s:i s:I s:i s:i s:I s:s s:s?}", "count", st.count,
            "valid", st.valid, "dirty", st.dirty, "size", (json_int_t)st.size,
            "flush-batch-count", svc->writes, "load-pending", loads,
            "purge-target-size", (json_int_t)svc->cfg.purge_target, "hash",
            svc->hashtype, "backing", svc->backing)
        < 0)
        flux_respond_error (h, msg, errno, NULL);
}

/* ---- content.register-backing, content.unregister-backing ---- */

static void register_cb (flux_t *h, flux_msg_handler_t *mh,
                         const flux_msg_t *msg, void *arg)
{
    struct content_service *svc = arg;
    const char *name;
    char errbuf[128];

    if (flux_request_unpack (msg, NULL, "{s:s}", "name", &name) < 0 || !*name) {
        flux_respond_error (h, msg, EPROTO,
                            "content.register-backing: expected {name:s}");
        return;
    }
    if (svc->cfg.rank != 0) {
        flux_respond_error (h, msg, EINVAL,
                            "a backing store can only be registered on rank 0");
        return;
    }
    if (svc->backing) {
        snprintf (errbuf, sizeof (errbuf),
                  "backing store %s is already registered", svc->backing);
        flux_respond_error (h, msg, EBUSY, errbuf);
        return;
    }
    if (!(svc->backing = strdup (name))) {
        flux_respond_error (h, msg, ENOMEM, NULL);
        return;
    }
    flux_respond (h, msg, NULL);
    content_log (h, 6, "backing store %s registered", name);
    requeue_dirty (svc, UINT64_MAX);
    if (svc->checkpoint && svc->checkpoint_unsaved
        && waiter_add (svc, W_CHECKPOINT, NULL, svc->checkpoint) < 0)
        content_log (h, 3, "cannot save the checkpoint: out of memory");
    after_io (svc);
}

static void unregister_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg)
{
    struct content_service *svc = arg;

    if (svc->cfg.rank != 0 || !svc->backing) {
        flux_respond_error (h, msg, EINVAL, "no backing store is registered");
        return;
    }
    if (svc->unregister_req) {
        flux_respond_error (h, msg, EBUSY, "already unregistering");
        return;
    }
    svc->unregister_req = flux_msg_incref (msg);
    start_detach (svc);
}

/* ---- checkpoints (PROTOCOLS.md 4) ---- */

static void op_destroy (struct op *op)
{
    struct content_service *svc = op->svc;

    if (op->prev)
        op->prev->next = op->next;
    else
        svc->ops = op->next;
    if (op->next)
        op->next->prev = op->prev;
    flux_future_destroy (op->f);
    flux_msg_decref (op->msg);
    json_decref (op->value);
    free (op);
}

static void op_continuation (flux_future_t *f, void *arg)
{
    struct op *op = arg;
    struct content_service *svc = op->svc;
    const char *s = NULL;

    if (op->backing)
        svc->backing_inflight--;
    if (flux_rpc_get (f, &s) < 0) {
        int errnum = errno;
        const char *errstr = flux_future_error_string (f);
        if (op->msg)
            flux_respond_error (svc->h, op->msg, errnum, errstr);
        else
            content_log (svc->h, 3, "checkpoint not saved: %s",
                         errstr ? errstr : strerror (errnum));
        if (op->backing && errnum == ENOSYS)
            backing_lost (svc);
    }
    else {
        /* Keep the saved checkpoint in memory too: it answers
         * checkpoint-get while no backing store is registered.  A newer
         * one put in memory meanwhile (while detaching) stays. */
        if (op->backing && op->value) {
            if (op->value == svc->checkpoint)
                svc->checkpoint_unsaved = false;
            else if (!svc->checkpoint_unsaved) {
                json_decref (svc->checkpoint);
                svc->checkpoint = json_incref (op->value);
            }
        }
        if (op->msg)
            flux_respond (svc->h, op->msg, s);
    }
    op_destroy (op);
    after_io (svc);
}

/* Send topic (to the backing store, or upstream), answer msg with the
 * reply as it comes. */
static int forward (struct content_service *svc, const flux_msg_t *msg,
                    const char *topic, json_t *value, bool backing)
{
    uint32_t nodeid = backing ? FLUX_NODEID_ANY : FLUX_NODEID_UPSTREAM;
    struct op *op;

    if (!(op = calloc (1, sizeof (*op))))
        return -1;
    op->svc = svc;
    op->backing = backing;
    if (value)
        op->f
            = flux_rpc_pack (svc->h, topic, nodeid, 0, "{s:O}", "value", value);
    else
        op->f = flux_rpc (svc->h, topic, "{}", nodeid, 0);
    if (!op->f || flux_future_then (op->f, -1., op_continuation, op) < 0) {
        int saved_errno = errno;
        flux_future_destroy (op->f);
        free (op);
        errno = saved_errno;
        return -1;
    }
    op->msg = msg ? flux_msg_incref (msg) : NULL;
    op->value = json_incref (value);
    op->next = svc->ops;
    if (op->next)
        op->next->prev = op;
    svc->ops = op;
    if (backing)
        svc->backing_inflight++;
    return 0;
}

/* Every blob stored before it is durable: save the checkpoint. */
static void checkpoint_commit (struct content_service *svc,
                               const flux_msg_t *msg, json_t *value)
{
    if (have_destination (svc)) {
        if (forward (svc, msg, "content-backing.checkpoint-put", value, true)
                < 0
            && msg)
            flux_respond_error (svc->h, msg, errno, NULL);
        return;
    }
    json_decref (svc->checkpoint);
    svc->checkpoint = json_incref (value);
    svc->checkpoint_unsaved = true;
    if (msg)
        flux_respond (svc->h, msg, NULL);
}

static void checkpoint_get_cb (flux_t *h, flux_msg_handler_t *mh,
                               const flux_msg_t *msg, void *arg)
{
    struct content_service *svc = arg;

    if (svc->cfg.rank > 0
        || (have_destination (svc) && !svc->checkpoint_unsaved)) {
        const char *topic = svc->cfg.rank > 0 ? "content.checkpoint-get"
                                              : "content-backing.checkpoint-"
                                                "get";
        if (forward (svc, msg, topic, NULL, svc->cfg.rank == 0) < 0)
            flux_respond_error (h, msg, errno, NULL);
        return;
    }
    if (!svc->checkpoint) {
        flux_respond_error (h, msg, ENOENT, "no checkpoint");
        return;
    }
    if (flux_respond_pack (h, msg, "{s:[O]}", "value", svc->checkpoint) < 0)
        flux_respond_error (h, msg, errno, NULL);
}

/* {value:{version:1, rootref:s, sequence:i, timestamp:f}} */
static json_t *checkpoint_decode (const flux_msg_t *msg, int *errnum,
                                  const char **errstr)
{
    json_t *value;
    const char *rootref;
    int version, seq;
    double ts;

    *errnum = EPROTO;
    *errstr = "content.checkpoint-put: expected {value:{version:i rootref:s "
              "sequence:i timestamp:f}}";
    if (flux_request_unpack (msg, NULL, "{s:o}", "value", &value) < 0
        || json_unpack (value, "{s:i s:s s:i s:F}", "version", &version,
                        "rootref", &rootref, "sequence", &seq, "timestamp", &ts)
               < 0)
        return NULL;
    if (version != 1) {
        *errnum = EINVAL;
        *errstr = "content.checkpoint-put: unsupported checkpoint version";
        return NULL;
    }
    if (blobref_validate (rootref) < 0) {
        *errnum = EINVAL;
        *errstr = "content.checkpoint-put: rootref is not a blobref";
        return NULL;
    }
    return value;
}

static void checkpoint_put_cb (flux_t *h, flux_msg_handler_t *mh,
                               const flux_msg_t *msg, void *arg)
{
    struct content_service *svc = arg;
    json_t *value;
    int errnum;
    const char *errstr;

    if (!(value = checkpoint_decode (msg, &errnum, &errstr))) {
        flux_respond_error (h, msg, errnum, errstr);
        return;
    }
    if (svc->cfg.rank > 0) {
        if (forward (svc, msg, "content.checkpoint-put", value, false) < 0)
            flux_respond_error (h, msg, errno, NULL);
        return;
    }
    /* Ordering contract: answer only once every earlier store is durable;
     * the checkpoint itself is sent to the backing store only then. */
    if (!have_destination (svc) || barrier_clear (svc)) {
        checkpoint_commit (svc, msg, value);
        return;
    }
    if (waiter_add (svc, W_CHECKPOINT, msg, value) < 0) {
        flux_respond_error (h, msg, errno, NULL);
        return;
    }
    after_io (svc);
}

/* ---- create / destroy ---- */

static const struct flux_msg_handler_spec htab[] = {
    {FLUX_MSGTYPE_REQUEST, "content.load", load_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "content.validate", load_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "content.store", store_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "content.flush", flush_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "content.dropcache", dropcache_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "content.stats-get", stats_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "content.register-backing", register_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "content.unregister-backing", unregister_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "content.checkpoint-get", checkpoint_get_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "content.checkpoint-put", checkpoint_put_cb, 0},
    FLUX_MSGHANDLER_TABLE_END,
};

struct content_service *content_service_create (
    flux_t *h, const struct content_config *cfg, flux_error_t *error)
{
    struct content_service *svc;
    int size;

    if (!h || !cfg || !cfg->hashtype
        || (size = blobref_hashtype_size (cfg->hashtype)) < 0) {
        errprintf (error, "unknown hash type %s",
                   cfg && cfg->hashtype ? cfg->hashtype : "(null)");
        errno = EINVAL;
        return NULL;
    }
    if (cfg->write_limit < 1) {
        errprintf (error, "the write limit must be at least 1");
        errno = EINVAL;
        return NULL;
    }
    if (!(svc = calloc (1, sizeof (*svc))))
        goto nomem;
    svc->h = h;
    svc->cfg = *cfg;
    snprintf (svc->hashtype, sizeof (svc->hashtype), "%s", cfg->hashtype);
    svc->cfg.hashtype = svc->hashtype;
    svc->hash_size = size;
    if (!(svc->cache = cache_create (size)))
        goto nomem;
    if (flux_msg_handler_addvec (h, htab, svc, &svc->handlers) < 0) {
        errprintf (error, "cannot register handlers: %s", strerror (errno));
        content_service_destroy (svc);
        return NULL;
    }
    return svc;
nomem:
    errprintf (error, "out of memory");
    content_service_destroy (svc);
    errno = ENOMEM;
    return NULL;
}

void content_service_destroy (struct content_service *svc)
{
    if (svc) {
        int saved_errno = errno;
        const char *why = "the content module is unloading";
        struct cache_stats st;

        flux_msg_handler_delvec (svc->handlers);
        while (svc->pendings) {
            struct pending *p = svc->pendings;
            flux_future_destroy (p->load_f);
            flux_future_destroy (p->write_f);
            p->load_f = p->write_f = NULL;
            msgvec_respond (svc->h, &p->loads, NULL, 0, ENOSYS, why);
            msgvec_respond (svc->h, &p->validates, NULL, 0, ENOSYS, why);
            msgvec_respond (svc->h, &p->stores, NULL, 0, ENOSYS, why);
            sendq_remove (svc, p);
            pending_gc (p);
        }
        waiters_fail (svc, 0, ENOSYS, why);
        while (svc->ops) {
            struct op *op = svc->ops;
            if (op->msg)
                flux_respond_error (svc->h, op->msg, ENOSYS, why);
            op_destroy (op);
        }
        if (svc->unregister_req) {
            flux_respond (svc->h, svc->unregister_req, NULL);
            flux_msg_decref (svc->unregister_req);
        }
        cache_get_stats (svc->cache, &st);
        if (svc->cfg.rank == 0 && st.dirty > 0)
            content_log (svc->h, 3, "%d blobs were never stored (%s)", st.dirty,
                         svc->backing ? "backing store busy"
                                      : "no backing store");
        cache_destroy (svc->cache);
        json_decref (svc->checkpoint);
        free (svc->backing);
        free (svc);
        errno = saved_errno;
    }
}
