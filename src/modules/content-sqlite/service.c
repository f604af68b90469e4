/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* service.c - content-backing.* requests over the sqlite db, with group
 * commit: writes join the open transaction and wait in the batch until
 * the idle watcher commits it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "libcontent/blobref.h"
#include "libcontent/write.h"
#include "libutil/monotime.h"

#include "gc.h"
#include "service.h"

enum { OP_STORE, OP_CHECKPOINT, OP_WRITE };

/* WAL size beyond which it is checkpointed after a batch */
#define WAL_CHECKPOINT_BYTES ((size_t)8 << 20)

struct deferred {
    const flux_msg_t *msg;
    int op;
    unsigned char digest[BLOBREF_MAX_DIGEST_SIZE];
};

struct sqlite_service {
    flux_t *h;
    struct db *db;
    char hashtype[16];
    int hash_size;
    char *dbpath;
    flux_msg_handler_t **handlers;
    uv_idle_t *idle;

    /* the batch: writes of this turn, answered after the commit */
    struct deferred *batch;
    int n, cap;
    int batch_errnum; /* a write failed: the batch fails */
    char batch_errstr[256];
    bool batch_has_checkpoint;
    int batch_durable; /* writes in the batch that must be synced */

    /* checkpoint-get requests that must see this batch's checkpoint */
    const flux_msg_t **gets;
    int ngets, capgets;

    /* content-backing.write: accepted only from the content module (its
     * route id), which counts our failed answers as we do */
    char *trusted;
    uint32_t write_failures;

    long long commits;
    long long lazy_commits; /* of them, not synced (db_commit_lazy) */
    double commit_time;     /* seconds in commits (writing, fsync) */
    long long checkpoints;  /* of the WAL into the database file */
    long long index_folds;  /* db_index() */
    double index_time;      /* seconds in them */
    double index_time_max;  /* the longest */
    long long writes;
    int batch_max;
    json_t *gc; /* the collection at load (sqlite_service_set_gc) */
};

static void respond_checkpoint (struct sqlite_service *s, const flux_msg_t *msg)
{
    const char *text;
    json_t *o;

    if (db_checkpoint_get (s->db, &text) < 0) {
        flux_respond_error (s->h, msg, errno, db_errstr (s->db));
        return;
    }
    if (!(o = json_loads (text, 0, NULL))) {
        flux_respond_error (s->h, msg, EIO,
                            "the checkpoint in the database is not JSON");
        return;
    }
    if (flux_respond_pack (s->h, msg, "{s:[o]}", "value", o) < 0)
        flux_respond_error (s->h, msg, errno, NULL);
}

/* Commit the batch and answer it. */
static void batch_finish (struct sqlite_service *s)
{
    int errnum = s->batch_errnum;
    const char *errstr = s->batch_errstr;
    int i;

    if (errnum == 0 && db_in_transaction (s->db)) {
        double t0 = monotime ();
        /* lazy writes only: no sync, the next durable commit's covers it */
        int rc = s->batch_durable ? db_commit (s->db) : db_commit_lazy (s->db);
        s->commit_time += monotime () - t0;
        if (rc == 0 && !s->batch_durable)
            s->lazy_commits++;
        if (rc < 0) {
            errnum = errno;
            snprintf (s->batch_errstr, sizeof (s->batch_errstr), "%s",
                      db_errstr (s->db));
        }
        else
            s->commits++;
    }
    else if (errnum)
        db_rollback (s->db);
    if (errnum)
        flux_log (s->h, 3, "%d writes rolled back: %s", s->n, errstr);
    if (s->n > s->batch_max)
        s->batch_max = s->n;
    for (i = 0; i < s->n; i++) {
        struct deferred *d = &s->batch[i];
        if (errnum) {
            flux_respond_error (s->h, d->msg, errnum, errstr);
            if (d->op == OP_WRITE)
                s->write_failures++;
        }
        else if (d->op == OP_STORE)
            flux_respond_raw (s->h, d->msg, d->digest, s->hash_size);
        else
            flux_respond (s->h, d->msg, NULL);
        flux_msg_decref (d->msg);
    }
    s->n = 0;
    s->batch_errnum = 0;
    s->batch_errstr[0] = '\0';
    s->batch_has_checkpoint = false;
    s->batch_durable = 0;
    for (i = 0; i < s->ngets; i++) {
        respond_checkpoint (s, s->gets[i]);
        flux_msg_decref (s->gets[i]);
    }
    s->ngets = 0;
    /* with everything answered, index the blobs of the last thousands
     * of commits (db.h), then fold the WAL into the database file */
    if (db_index_due (s->db)) {
        size_t n = db_index_pending (s->db);
        double t0 = monotime (), t;
        if (db_index (s->db) < 0)
            flux_log (s->h, 4, "indexing: %s", db_errstr (s->db));
        else {
            s->index_folds++;
            t = monotime () - t0;
            s->index_time += t;
            if (t > s->index_time_max)
                s->index_time_max = t;
            flux_log (s->h, 7, "indexed %zu blobs in %.3fs", n, t);
        }
    }
    if (db_wal_size (s->db) > WAL_CHECKPOINT_BYTES) {
        if (db_checkpoint (s->db) < 0)
            flux_log (s->h, 4, "checkpoint: %s", db_errstr (s->db));
        else
            s->checkpoints++;
    }
}

static void idle_cb (uv_idle_t *w)
{
    struct sqlite_service *s = w->data;

    uv_idle_stop (w);
    batch_finish (s);
}

/* Make room for one more write in the batch (before writing it, so that
 * a write in the transaction is always answered with its outcome). */
static int batch_reserve (struct sqlite_service *s)
{
    if (s->n == s->cap) {
        int ncap = s->cap ? s->cap * 2 : 64;
        struct deferred *nb = realloc (s->batch, ncap * sizeof (*nb));
        if (!nb)
            return -1;
        s->batch = nb;
        s->cap = ncap;
    }
    return 0;
}

static int batch_add (struct sqlite_service *s, const flux_msg_t *msg, int op,
                      const void *digest)
{
    struct deferred *d;

    if (batch_reserve (s) < 0)
        return -1;
    d = &s->batch[s->n++];
    d->msg = flux_msg_incref (msg);
    d->op = op;
    if (digest)
        memcpy (d->digest, digest, s->hash_size);
    /* the commit runs at the start of the next loop turn, after every
     * message of this turn has joined the batch */
    uv_idle_start (s->idle, idle_cb);
    return 0;
}

/* Open the batch's transaction if needed.  -1 if the batch has failed. */
static int batch_begin (struct sqlite_service *s)
{
    if (s->batch_errnum)
        return -1;
    if (!db_in_transaction (s->db) && db_begin (s->db) < 0) {
        s->batch_errnum = errno;
        snprintf (s->batch_errstr, sizeof (s->batch_errstr), "%s",
                  db_errstr (s->db));
        return -1;
    }
    return 0;
}

static void batch_fail (struct sqlite_service *s)
{
    s->batch_errnum = errno;
    snprintf (s->batch_errstr, sizeof (s->batch_errstr), "%s",
              db_errstr (s->db));
}

static void store_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    struct sqlite_service *s = arg;
    const void *data;
    size_t len;
    unsigned char digest[BLOBREF_MAX_DIGEST_SIZE];
    char errbuf[128];

    if (flux_request_decode_raw (msg, NULL, &data, &len) < 0) {
        flux_respond_error (h, msg, EPROTO,
                            "content-backing.store: malformed request");
        return;
    }
    if (len > db_blob_limit (s->db)) {
        snprintf (errbuf, sizeof (errbuf),
                  "blob of %zu bytes exceeds the database limit", len);
        flux_respond_error (h, msg, EFBIG, errbuf);
        return;
    }
    if (blobref_hash_raw (s->hashtype, data, len, digest, sizeof (digest))
        < 0) {
        flux_respond_error (h, msg, errno, NULL);
        return;
    }
    if (batch_reserve (s) < 0) {
        flux_respond_error (h, msg, ENOMEM, NULL);
        return;
    }
    if (batch_begin (s) == 0
        && db_store (s->db, digest, s->hash_size, data, len) < 0)
        batch_fail (s);
    (void)batch_add (s, msg, OP_STORE, digest); /* room was reserved */
    s->batch_durable++;
}

static void load_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    struct sqlite_service *s = arg;
    const void *digest, *data;
    size_t len;
    char errbuf[128];

    if (flux_request_decode_raw (msg, NULL, &digest, &len) < 0
        || len != (size_t)s->hash_size) {
        snprintf (errbuf, sizeof (errbuf),
                  "content-backing.load: payload must be a %d-byte %s digest",
                  s->hash_size, s->hashtype);
        flux_respond_error (h, msg, EPROTO, errbuf);
        return;
    }
    if (db_load (s->db, digest, len, &data, &len) < 0) {
        flux_respond_error (h, msg, errno,
                            errno == ENOENT ? NULL : db_errstr (s->db));
        return;
    }
    flux_respond_raw (h, msg, data, len);
}

static void checkpoint_put_cb (flux_t *h, flux_msg_handler_t *mh,
                               const flux_msg_t *msg, void *arg)
{
    struct sqlite_service *s = arg;
    json_t *value;
    char *text;

    if (flux_request_unpack (msg, NULL, "{s:o}", "value", &value) < 0
        || !json_is_object (value)) {
        flux_respond_error (h, msg, EPROTO,
                            "content-backing.checkpoint-put: expected "
                            "{value:{...}}");
        return;
    }
    if (!(text = json_dumps (value, JSON_COMPACT | JSON_SORT_KEYS))
        || batch_reserve (s) < 0) {
        free (text);
        flux_respond_error (h, msg, ENOMEM, NULL);
        return;
    }
    if (batch_begin (s) == 0 && db_checkpoint_put (s->db, text) < 0)
        batch_fail (s);
    free (text);
    (void)batch_add (s, msg, OP_CHECKPOINT, NULL);
    s->batch_has_checkpoint = true;
    s->batch_durable++;
}

static void write_error (struct sqlite_service *s, const flux_msg_t *msg,
                         int errnum, const char *errstr)
{
    flux_respond_error (s->h, msg, errnum, errstr);
    s->write_failures++;
}

/* The checkpoint value of a write, NUL-terminated, if it is a JSON
 * object. */
static char *checkpoint_text (const struct content_write *w)
{
    json_t *o = json_loadb (w->checkpoint, w->checkpoint_len, 0, NULL);
    char *text = NULL;

    if (o && json_is_object (o))
        text = strndup (w->checkpoint, w->checkpoint_len);
    json_decref (o);
    return text;
}

/* content-backing.write (libcontent/write.h): blobs under the digests
 * the content module computed, and the checkpoint, in the batch's
 * transaction, in arrival order.  A checkpoint is refused if a write
 * failed that its sender has not seen fail yet: it may reference a blob
 * of that write. */
static void write_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    struct sqlite_service *s = arg;
    const char *sender = flux_msg_route_first (msg);
    struct content_write w;
    const void *data;
    size_t len;
    char *cp = NULL;
    int i;

    if (!s->trusted || !sender || strcmp (sender, s->trusted) != 0) {
        flux_respond_error (h, msg, EPERM,
                            "content-backing.write is reserved for the content "
                            "module");
        return;
    }
    if (flux_request_decode_raw (msg, NULL, &data, &len) < 0
        || content_write_decode (data, len, s->hash_size, &w) < 0) {
        write_error (s, msg, EPROTO,
                     "content-backing.write: malformed request");
        return;
    }
    if (w.checkpoint && !(cp = checkpoint_text (&w))) {
        write_error (s, msg, EPROTO,
                     "content-backing.write: the checkpoint is not an object");
        goto done;
    }
    if (cp && w.failures != s->write_failures) {
        write_error (s, msg, EIO,
                     "checkpoint refused: an earlier write failed");
        goto done;
    }
    if (batch_reserve (s) < 0) {
        write_error (s, msg, ENOMEM, NULL);
        goto done;
    }
    if (batch_begin (s) == 0) {
        for (i = 0; i < w.nblobs; i++) {
            if (db_store (s->db, w.blobs[i].digest, s->hash_size,
                          w.blobs[i].data, w.blobs[i].len)
                < 0) {
                batch_fail (s);
                break;
            }
        }
        if (i == w.nblobs && cp && db_checkpoint_put (s->db, cp) < 0)
            batch_fail (s);
    }
    (void)batch_add (s, msg, OP_WRITE, NULL); /* room was reserved */
    if (cp)
        s->batch_has_checkpoint = true;
    if (cp || !w.lazy)
        s->batch_durable++;
    s->writes++;
done:
    free (cp);
    content_write_clear (&w);
}

static void checkpoint_get_cb (flux_t *h, flux_msg_handler_t *mh,
                               const flux_msg_t *msg, void *arg)
{
    struct sqlite_service *s = arg;

    /* A checkpoint put in this batch is not durable yet: answer after. */
    if (s->batch_has_checkpoint) {
        if (s->ngets == s->capgets) {
            int ncap = s->capgets ? s->capgets * 2 : 4;
            const flux_msg_t **nv = realloc (s->gets, ncap * sizeof (*nv));
            if (!nv) {
                flux_respond_error (h, msg, ENOMEM, NULL);
                return;
            }
            s->gets = nv;
            s->capgets = ncap;
        }
        s->gets[s->ngets++] = flux_msg_incref (msg);
        return;
    }
    respond_checkpoint (s, msg);
}

void sqlite_service_set_gc (struct sqlite_service *s, const struct gc_stats *st,
                            const char *error)
{
    json_decref (s->gc);
    if (error)
        s->gc = json_pack ("{s:s}", "error", error);
    else
        s->gc = json_pack ("{s:I s:I s:I s:I s:I s:f}", "kept",
                           (json_int_t)st->objects_kept, "before",
                           (json_int_t)st->objects_before, "bytes",
                           (json_int_t)st->bytes_kept, "file_before",
                           (json_int_t)st->file_before, "file_after",
                           (json_int_t)st->file_after, "seconds", st->seconds);
}

static void stats_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    struct sqlite_service *s = arg;

    if (flux_respond_pack (
            h, msg,
            "{s:I s:s s:I s:I s:f s:I s:I s:f s:f s:I s:I s:I s:i s:i s:s s:O "
            "s:b s:s s:{s:I s:I s:I}}",
            "object_count", (json_int_t)db_object_count (s->db), "dbfile",
            s->dbpath, "commits", (json_int_t)s->commits, "lazy_commits",
            (json_int_t)s->lazy_commits, "commit_seconds", s->commit_time,
            "wal_checkpoints", (json_int_t)s->checkpoints, "index_folds",
            (json_int_t)s->index_folds, "index_seconds", s->index_time,
            "index_seconds_max", s->index_time_max, "index_pending",
            (json_int_t)db_index_pending (s->db), "index_dropped",
            (json_int_t)db_index_dropped (s->db), "writes",
            (json_int_t)s->writes, "write_failures", (int)s->write_failures,
            "batch_max", s->batch_max, "synchronous", db_synchronous (s->db),
            "gc", s->gc ? s->gc : json_null (), "gc_requested",
            gc_requested (s->dbpath), "compression",
            db_compression (s->db) ? "zstd" : "none", "stored", "bytes",
            (json_int_t)db_stats (s->db)->bytes, "file_bytes",
            (json_int_t)db_stats (s->db)->stored_bytes, "compressed",
            (json_int_t)db_stats (s->db)->compressed)
        < 0)
        flux_respond_error (h, msg, errno, NULL);
}

/* content-sqlite.gc {cancel?:b} -> {path:s}: collect garbage when the
 * module next loads (gc.h), or no longer.  Only a kept store can be
 * collected: without a statedir it is removed at exit. */
static void gc_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                   void *arg)
{
    struct sqlite_service *s = arg;
    const char *statedir = flux_attr_get (h, "statedir");
    int cancel = 0;

    if (flux_request_unpack (msg, NULL, "{s?b !}", "cancel", &cancel) < 0) {
        flux_respond_error (h, msg, EPROTO,
                            "content-sqlite.gc: expected {cancel?:b}");
        return;
    }
    if (!statedir || !*statedir) {
        flux_respond_error (h, msg, EINVAL,
                            "the content store is not kept (no statedir): "
                            "there is nothing to collect");
        return;
    }
    if (gc_request (s->dbpath, !cancel) < 0) {
        flux_respond_error (h, msg, errno, NULL);
        return;
    }
    flux_log (h, 6, "garbage collection %s",
              cancel ? "canceled" : "requested for the next start");
    if (flux_respond_pack (h, msg, "{s:s}", "path", s->dbpath) < 0)
        flux_respond_error (h, msg, errno, NULL);
}

static const struct flux_msg_handler_spec htab[] = {
    {FLUX_MSGTYPE_REQUEST, "content-sqlite.gc", gc_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "content-backing.load", load_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "content-backing.store", store_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "content-backing.checkpoint-get", checkpoint_get_cb,
     0},
    {FLUX_MSGTYPE_REQUEST, "content-backing.checkpoint-put", checkpoint_put_cb,
     0},
    {FLUX_MSGTYPE_REQUEST, "content-backing.write", write_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "content-sqlite.stats-get", stats_cb, 0},
    FLUX_MSGHANDLER_TABLE_END,
};

struct sqlite_service *sqlite_service_create (flux_t *h, struct db *db,
                                              const char *hashtype,
                                              const char *dbpath,
                                              flux_error_t *error)
{
    struct sqlite_service *s;
    int size;

    if (!h || !db || !dbpath || (size = blobref_hashtype_size (hashtype)) < 0) {
        errprintf (error, "bad arguments");
        errno = EINVAL;
        return NULL;
    }
    if (!(s = calloc (1, sizeof (*s))) || !(s->dbpath = strdup (dbpath))
        || !(s->idle = calloc (1, sizeof (*s->idle))))
        goto nomem;
    s->h = h;
    s->db = db;
    s->hash_size = size;
    snprintf (s->hashtype, sizeof (s->hashtype), "%s", hashtype);
    uv_idle_init (flux_reactor_uv (flux_get_reactor (h)), s->idle);
    s->idle->data = s;
    if (flux_msg_handler_addvec (h, htab, s, &s->handlers) < 0) {
        errprintf (error, "cannot register handlers: %s", strerror (errno));
        sqlite_service_destroy (s);
        return NULL;
    }
    return s;
nomem:
    errprintf (error, "out of memory");
    if (s) {
        free (s->dbpath);
        free (s);
    }
    errno = ENOMEM;
    return NULL;
}

int sqlite_service_trust (struct sqlite_service *s, const char *sender)
{
    char *cpy;

    if (!s || !sender || !*sender) {
        errno = EINVAL;
        return -1;
    }
    if (!(cpy = strdup (sender)))
        return -1;
    free (s->trusted);
    s->trusted = cpy;
    s->write_failures = 0;
    return 0;
}

void sqlite_service_destroy (struct sqlite_service *s)
{
    if (s) {
        int saved_errno = errno;
        flux_msg_handler_delvec (s->handlers);
        batch_finish (s);
        flux_uv_close_free ((uv_handle_t *)s->idle);
        free (s->batch);
        free (s->gets);
        free (s->trusted);
        free (s->dbpath);
        json_decref (s->gc);
        free (s);
        errno = saved_errno;
    }
}
