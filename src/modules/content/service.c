/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* service.c - the content service of one broker (RFC 10).
 *
 * Three things are in progress at any time, each kept where it belongs:
 *  - per blob (struct pending, the cache entry's aux): requests waiting
 *    for a load from upstream/backing, rank > 0 stores waiting for the
 *    parent, and the load or write in flight;
 *  - writes to do (the send queue, writer.c);
 *  - barriers (struct waiter, writer.c): a flush or checkpoint-put waits
 *    until no blob made dirty before it (cache sequence numbers) is still
 *    dirty, or, with a batching backing store, until they are all sent.
 * Every continuation ends with after_io(), which starts queued writes,
 * releases barriers, finishes a backing store's departure and purges.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "libcontent/blobref.h"
#include "libcontent/write.h"

#include "service_priv.h"

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
void msgvec_respond (flux_t *h, struct msgvec *mv, const void *data, size_t len,
                     int errnum, const char *errstr)
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

struct pending *pending_get (struct content_service *svc, struct cache_entry *e)
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
void pending_gc (struct pending *p)
{
    struct content_service *svc = p->svc;

    if (p->loads.n || p->validates.n || p->stores.n || p->load_f || p->wop
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

/* ---- writes go where they must ---- */

bool have_destination (struct content_service *svc)
{
    if (svc->cfg.rank > 0)
        return true;
    return svc->backing && !svc->detaching;
}

static void start_detach (struct content_service *svc);

/* A content-backing request got ENOSYS: the backing store went away
 * without unregistering. */
void backing_lost (struct content_service *svc)
{
    if (svc->backing && !svc->detaching) {
        flux_log (svc->h, 3, "backing store %s stopped answering",
                  svc->backing);
        start_detach (svc);
    }
}

/* ---- the backing store ---- */

static void detach_check (struct content_service *svc)
{
    struct cache_stats st;

    if (!svc->detaching || svc->backing_inflight > 0)
        return;
    cache_get_stats (svc->cache, &st);
    flux_log (svc->h, st.dirty ? 4 : 6,
              "backing store %s unregistered (%d blobs only in memory)",
              svc->backing, st.dirty);
    free (svc->backing);
    svc->backing = NULL;
    svc->detaching = false;
    svc->backing_write = false;
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
    sendq_drop (svc);
    detach_check (svc);
}

void after_io (struct content_service *svc)
{
    writer_kick (svc);
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
            flux_log (svc->h, 3, "a loaded blob does not match its digest");
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

/* Cache a stored blob (dirty unless it already was there).  msg's
 * payload, which holds data, is kept instead of a copy when data is most
 * of it: a small blob must not keep a big message alive.  NULL with
 * errno. */
static struct cache_entry *cache_blob (struct content_service *svc,
                                       const flux_msg_t *msg,
                                       const void *digest, const void *data,
                                       size_t len, size_t payload_len)
{
    struct cache_entry *e;
    struct pending *p;

    if (!(e = cache_lookup (svc->cache, digest))
        && !(e = cache_insert (svc->cache, digest)))
        return NULL;
    if (!cache_entry_valid (e)) {
        int rc;
        if (len < payload_len / 2)
            rc = cache_entry_fill (svc->cache, e, data, len);
        else if ((rc = cache_entry_fill_borrow (svc->cache, e, data, len,
                                                (void *)flux_msg_incref (msg),
                                                msg_release))
                 < 0)
            flux_msg_decref (msg);
        if (rc < 0) {
            int saved_errno = errno;
            if (!cache_entry_aux (e))
                cache_remove (svc->cache, e);
            errno = saved_errno;
            return NULL;
        }
        (void)cache_entry_set_dirty (svc->cache, e);
        if ((p = cache_entry_aux (e))) {
            /* loads waiting for this blob need not wait any longer */
            msgvec_respond (svc->h, &p->loads, data, len, 0, NULL);
            msgvec_respond (svc->h, &p->validates, NULL, 0, 0, NULL);
        }
    }
    return e;
}

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
    if (blobref_hash_raw (svc->hashtype, data, len, digest, sizeof (digest)) < 0
        || !(e = cache_blob (svc, msg, digest, data, len, len)))
        goto error;
    if (svc->cfg.rank == 0 || !cache_entry_dirty (e)) {
        flux_respond_raw (h, msg, digest, svc->hash_size);
        svc->prompt = true; /* a client's store is not held (writer.c) */
        if (enqueue_write (svc, e) < 0)
            flux_log (h, 3, "content.store: cannot queue a write: %s",
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
            h, msg, "{s:i s:i s:i s:I s:i s:i s:I s:s s:s? s:I}", "count",
            st.count, "valid", st.valid, "dirty", st.dirty, "size",
            (json_int_t)st.size, "flush-batch-count", svc->writes,
            "load-pending", loads, "purge-target-size",
            (json_int_t)svc->cfg.purge_target, "hash", svc->hashtype, "backing",
            svc->backing, "lazy-held", (json_int_t)svc->lazy_held)
        < 0)
        flux_respond_error (h, msg, errno, NULL);
}

/* ---- content.register-backing, content.unregister-backing ---- */

/* {name:s, write?:b}.  With write (rank 0, under a broker: this module
 * has a route id), the backing store takes content-backing.write from us:
 * the answer names our route id so that it can tell our requests. */
static void register_cb (flux_t *h, flux_msg_handler_t *mh,
                         const flux_msg_t *msg, void *arg)
{
    struct content_service *svc = arg;
    const char *name, *sender = flux_aux_get (h, "flux::uuid");
    int write = 0;
    char errbuf[128];

    if (flux_request_unpack (msg, NULL, "{s:s s?b}", "name", &name, "write",
                             &write)
            < 0
        || !*name) {
        flux_respond_error (h, msg, EPROTO,
                            "content.register-backing: expected {name:s "
                            "write?:b}");
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
    svc->backing_expected = false;
    svc->backing_write = write && sender;
    svc->write_failures = 0;
    svc->unsynced = false;
    if ((svc->backing_write
             ? flux_respond_pack (h, msg, "{s:s}", "sender", sender)
             : flux_respond_pack (h, msg, "{}"))
        < 0)
        flux_log (h, 3, "content.register-backing: respond: %s",
                  strerror (errno));
    flux_log (h, 6, "backing store %s registered%s", name,
              svc->backing_write ? " (batched writes)" : "");
    requeue_dirty (svc, UINT64_MAX);
    if (svc->checkpoint && svc->checkpoint_unsaved
        && waiter_add (svc, W_CHECKPOINT, NULL, svc->checkpoint) < 0)
        flux_log (h, 3, "cannot save the checkpoint: out of memory");
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
    svc->backing_expected = false;
    start_detach (svc);
}

void content_service_expect_backing (struct content_service *svc)
{
    if (svc && svc->cfg.rank == 0 && !svc->backing)
        svc->backing_expected = true;
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
            flux_log (svc->h, 3, "checkpoint not saved: %s",
                      errstr ? errstr : strerror (errnum));
        if (op->backing && errnum == ENOSYS)
            backing_lost (svc);
    }
    else if (op->backing && op->value)
        checkpoint_saved (svc, op->msg, op->value);
    else if (op->msg)
        flux_respond (svc->h, op->msg, s);
    op_destroy (op);
    after_io (svc);
}

void checkpoint_saved (struct content_service *svc, const flux_msg_t *msg,
                       json_t *value)
{
    /* Keep the saved checkpoint in memory too: it answers checkpoint-get
     * while no backing store is registered.  A newer one put in memory
     * meanwhile (while detaching) stays. */
    if (value == svc->checkpoint)
        svc->checkpoint_unsaved = false;
    else if (!svc->checkpoint_unsaved) {
        json_decref (svc->checkpoint);
        svc->checkpoint = json_incref (value);
    }
    if (msg)
        flux_respond (svc->h, msg, NULL);
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

void checkpoint_commit (struct content_service *svc, const flux_msg_t *msg,
                        json_t *value)
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

/* value is {version:1, rootref:s, sequence:i, timestamp:f}: 0, or -1
 * with *errnum and *errstr. */
static int checkpoint_check (json_t *value, int *errnum, const char **errstr)
{
    const char *rootref;
    int version, seq;
    double ts;

    *errnum = EPROTO;
    *errstr = "checkpoint: expected {version:i rootref:s sequence:i "
              "timestamp:f}";
    if (!value
        || json_unpack (value, "{s:i s:s s:i s:F}", "version", &version,
                        "rootref", &rootref, "sequence", &seq, "timestamp", &ts)
               < 0)
        return -1;
    if (version != 1) {
        *errnum = EINVAL;
        *errstr = "checkpoint: unsupported checkpoint version";
        return -1;
    }
    if (blobref_validate (rootref) < 0) {
        *errnum = EINVAL;
        *errstr = "checkpoint: rootref is not a blobref";
        return -1;
    }
    return 0;
}

/* Save the checkpoint value for msg (a checkpoint-put or a write). */
static void checkpoint_request (struct content_service *svc,
                                const flux_msg_t *msg, json_t *value)
{
    if (svc->cfg.rank > 0) {
        if (forward (svc, msg, "content.checkpoint-put", value, false) < 0)
            flux_respond_error (svc->h, msg, errno, NULL);
        return;
    }
    /* Ordering contract: answer only once every earlier store is durable.
     * A batching backing store gets the checkpoint with (or after) those
     * stores and makes them durable together (writer.c); any other gets
     * it only once they are. */
    if ((!have_destination (svc) && !svc->backing_expected)
        || (have_destination (svc) && !svc->backing_write
            && barrier_clear (svc))) {
        checkpoint_commit (svc, msg, value);
        return;
    }
    if (waiter_add (svc, W_CHECKPOINT, msg, value) < 0) {
        flux_respond_error (svc->h, msg, errno, NULL);
        return;
    }
    after_io (svc);
}

static void checkpoint_put_cb (flux_t *h, flux_msg_handler_t *mh,
                               const flux_msg_t *msg, void *arg)
{
    struct content_service *svc = arg;
    json_t *value = NULL;
    int errnum;
    const char *errstr;

    if (flux_request_unpack (msg, NULL, "{s:o}", "value", &value) < 0
        || checkpoint_check (value, &errnum, &errstr) < 0) {
        if (!value) {
            errnum = EPROTO;
            errstr = "content.checkpoint-put: expected {value:{version:i "
                     "rootref:s sequence:i timestamp:f}}";
        }
        flux_respond_error (h, msg, errnum, errstr);
        return;
    }
    checkpoint_request (svc, msg, value);
}

/* ---- content.write ---- */

/* Every blob of w matches its digest and is not too large, and the
 * checkpoint (if any) is valid: 0, or -1 with the error in errbuf. */
static int write_check (struct content_service *svc,
                        const struct content_write *w, json_t **value,
                        int *errnum, char *errbuf, size_t size)
{
    uint8_t digest[BLOBREF_MAX_DIGEST_SIZE];
    const char *errstr;

    for (int i = 0; i < w->nblobs; i++) {
        const struct content_write_blob *b = &w->blobs[i];
        if (b->len > svc->cfg.blob_size_limit) {
            *errnum = EFBIG;
            snprintf (errbuf, size,
                      "content.write: blob of %zu bytes exceeds the limit of "
                      "%zu",
                      b->len, svc->cfg.blob_size_limit);
            return -1;
        }
        if (blobref_hash_raw (svc->hashtype, b->data, b->len, digest,
                              sizeof (digest))
                < 0
            || memcmp (digest, b->digest, svc->hash_size) != 0) {
            *errnum = EPROTO;
            snprintf (errbuf, size,
                      "content.write: blob %d does not match its digest", i);
            return -1;
        }
    }
    if (w->checkpoint) {
        *value = json_loadb (w->checkpoint, w->checkpoint_len, 0, NULL);
        if (checkpoint_check (*value, errnum, &errstr) < 0) {
            snprintf (errbuf, size, "content.write: %s", errstr);
            json_decref (*value);
            *value = NULL;
            return -1;
        }
    }
    return 0;
}

/* content.write (rank 0): the blobs of a KVS commit and its checkpoint
 * in one request (libcontent/write.h; the failures field is not used).
 * Each blob is checked against its digest, cached and written like a
 * content.store; the checkpoint is then saved like a checkpoint-put.
 * The answer (empty) comes at once without a checkpoint, else once the
 * checkpoint and every blob before it are durable. */
static void write_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    struct content_service *svc = arg;
    struct content_write w;
    json_t *value = NULL;
    const void *data;
    size_t len;
    char errbuf[160];
    int errnum;

    if (flux_request_decode_raw (msg, NULL, &data, &len) < 0
        || content_write_decode (data, len, svc->hash_size, &w) < 0) {
        flux_respond_error (h, msg, EPROTO, "content.write: malformed request");
        return;
    }
    if (svc->cfg.rank != 0) {
        flux_respond_error (h, msg, EINVAL,
                            "content.write is served on rank 0");
        goto done;
    }
    if (write_check (svc, &w, &value, &errnum, errbuf, sizeof (errbuf)) < 0) {
        flux_respond_error (h, msg, errnum, errbuf);
        goto done;
    }
    for (int i = 0; i < w.nblobs; i++) {
        struct cache_entry *e;
        if (!(e = cache_blob (svc, msg, w.blobs[i].digest, w.blobs[i].data,
                              w.blobs[i].len, len))
            || enqueue_write (svc, e) < 0) {
            flux_respond_error (h, msg, errno, NULL);
            after_io (svc); /* the blobs cached so far are written */
            goto done;
        }
    }
    if (value)
        checkpoint_request (svc, msg, value);
    else
        flux_respond (h, msg, NULL);
    after_io (svc);
done:
    json_decref (value);
    content_write_clear (&w);
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
    {FLUX_MSGTYPE_REQUEST, "content.write", write_cb, 0},
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
    if (!(svc->cache = cache_create (size)) || writer_init (svc) < 0)
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
        writer_teardown (svc, why);
        while (svc->pendings) {
            struct pending *p = svc->pendings;
            flux_future_destroy (p->load_f);
            p->load_f = NULL;
            msgvec_respond (svc->h, &p->loads, NULL, 0, ENOSYS, why);
            msgvec_respond (svc->h, &p->validates, NULL, 0, ENOSYS, why);
            msgvec_respond (svc->h, &p->stores, NULL, 0, ENOSYS, why);
            sendq_remove (svc, p);
            pending_gc (p);
        }
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
            flux_log (svc->h, 3, "%d blobs were never stored (%s)", st.dirty,
                      svc->backing ? "backing store busy" : "no backing store");
        cache_destroy (svc->cache);
        json_decref (svc->checkpoint);
        free (svc->backing);
        free (svc);
        errno = saved_errno;
    }
}
