/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Unit tests for the content service on rank 0, without a broker: over
 * loop:// with a fake content-backing service in the same handle that can
 * hold requests (answering them when told) and fail stores.  Covers the
 * write-through, the write limit, the checkpoint ordering contract,
 * failures and retries, shared misses, unregistering with writes in
 * flight, purge, bad payloads and guests; then a backing store taking
 * content-backing.write (blobs of a turn and the checkpoint in one
 * request, checkpoints refused after a failure they did not see),
 * content.write, and lazy writes held to ride on the next durable one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "libcontent/blobref.h"
#include "libcontent/write.h"
#include "libflux/flux.h"
#include "service.h"
#include "tap.h"

#define MAXB 64

struct fake {
    bool hold;       /* keep requests until release() */
    int fail_errnum; /* answer stores with this error */
    bool corrupt;    /* answer loads with the wrong blob */
    const flux_msg_t *held[256];
    int nheld;
    struct {
        uint8_t digest[20];
        char *data;
        size_t len;
    } blobs[MAXB];
    int nblobs;
    int nstore, nload, ncp;
    char log[512]; /* S: store received, s: store answered, C: checkpoint,
                      W: write received, b: a blob in it, K: its checkpoint */
    json_t *checkpoint;
    /* content-backing.write, as content-sqlite does it */
    int nwrite;
    int nlazy;               /* of them, lazy (no sync asked) */
    uint32_t write_failures; /* errors answered to writes */
    uint32_t last_failures;  /* what the last write carried */
    int fail_writes;         /* answer this many writes with fail_errnum */
};

static flux_t *h;
static struct fake fk;

static void logc (char c)
{
    size_t n = strlen (fk.log);
    if (n + 1 < sizeof (fk.log)) {
        fk.log[n] = c;
        fk.log[n + 1] = '\0';
    }
}

static void answer (const flux_msg_t *msg)
{
    const char *topic;
    const void *data;
    size_t len;
    int i;

    flux_request_decode_raw (msg, &topic, &data, &len);
    if (!strcmp (topic, "content-backing.write")) {
        struct content_write w;
        int errnum = 0;
        if (content_write_decode (data, len, 20, &w) < 0)
            errnum = EPROTO;
        else if (fk.fail_writes > 0) {
            fk.fail_writes--;
            errnum = fk.fail_errnum ? fk.fail_errnum : EIO;
        }
        else if (w.checkpoint && w.failures != fk.write_failures)
            errnum = EIO; /* an earlier write failed */
        if (errnum) {
            fk.write_failures++;
            content_write_clear (&w);
            flux_respond_error (h, msg, errnum, "fake write failure");
            return;
        }
        for (int k = 0; k < w.nblobs; k++) {
            for (i = 0; i < fk.nblobs; i++)
                if (!memcmp (fk.blobs[i].digest, w.blobs[k].digest, 20))
                    break;
            if (i == fk.nblobs && fk.nblobs < MAXB) {
                size_t blen = w.blobs[k].len;
                memcpy (fk.blobs[i].digest, w.blobs[k].digest, 20);
                fk.blobs[i].data = blen ? malloc (blen) : NULL;
                if (blen)
                    memcpy (fk.blobs[i].data, w.blobs[k].data, blen);
                fk.blobs[i].len = blen;
                fk.nblobs++;
            }
        }
        if (w.checkpoint) {
            json_decref (fk.checkpoint);
            fk.checkpoint
                = json_loadb (w.checkpoint, w.checkpoint_len, 0, NULL);
        }
        content_write_clear (&w);
        flux_respond (h, msg, NULL);
        return;
    }
    if (!strcmp (topic, "content-backing.store")) {
        uint8_t d[20];
        logc ('s');
        if (fk.fail_errnum) {
            flux_respond_error (h, msg, fk.fail_errnum, "fake failure");
            return;
        }
        blobref_hash_raw ("sha1", data, len, d, sizeof (d));
        for (i = 0; i < fk.nblobs; i++)
            if (!memcmp (fk.blobs[i].digest, d, 20))
                break;
        if (i == fk.nblobs && fk.nblobs < MAXB) {
            memcpy (fk.blobs[i].digest, d, 20);
            fk.blobs[i].data = len ? malloc (len) : NULL;
            if (len)
                memcpy (fk.blobs[i].data, data, len);
            fk.blobs[i].len = len;
            fk.nblobs++;
        }
        flux_respond_raw (h, msg, d, 20);
    }
    else if (!strcmp (topic, "content-backing.load")) {
        for (i = 0; i < fk.nblobs; i++)
            if (len == 20 && !memcmp (fk.blobs[i].digest, data, 20))
                break;
        if (i == fk.nblobs)
            flux_respond_error (h, msg, ENOENT, NULL);
        else if (fk.corrupt)
            flux_respond_raw (h, msg, "corrupt", 7);
        else
            flux_respond_raw (h, msg, fk.blobs[i].data, fk.blobs[i].len);
    }
    else if (!strcmp (topic, "content-backing.checkpoint-put")) {
        json_t *value;
        flux_msg_unpack (msg, "{s:o}", "value", &value);
        json_decref (fk.checkpoint);
        fk.checkpoint = json_incref (value);
        flux_respond (h, msg, NULL);
    }
    else if (!strcmp (topic, "content-backing.checkpoint-get")) {
        if (fk.checkpoint)
            flux_respond_pack (h, msg, "{s:[O]}", "value", fk.checkpoint);
        else
            flux_respond_error (h, msg, ENOENT, NULL);
    }
}

static void backing_cb (flux_t *h, flux_msg_handler_t *mh,
                        const flux_msg_t *msg, void *arg)
{
    const char *topic;

    flux_msg_get_topic (msg, &topic);
    if (!strcmp (topic, "content-backing.store")) {
        fk.nstore++;
        logc ('S');
    }
    else if (!strcmp (topic, "content-backing.load"))
        fk.nload++;
    else if (!strcmp (topic, "content-backing.checkpoint-put")) {
        fk.ncp++;
        logc ('C');
    }
    else if (!strcmp (topic, "content-backing.write")) {
        struct content_write w;
        const void *data;
        size_t len;
        fk.nwrite++;
        logc ('W');
        if (flux_request_decode_raw (msg, NULL, &data, &len) == 0
            && content_write_decode (data, len, 20, &w) == 0) {
            for (int i = 0; i < w.nblobs; i++)
                logc ('b');
            if (w.checkpoint)
                logc ('K');
            if (w.lazy)
                fk.nlazy++;
            fk.last_failures = w.failures;
            content_write_clear (&w);
        }
    }
    if (fk.hold && fk.nheld < 256)
        fk.held[fk.nheld++] = flux_msg_incref (msg);
    else
        answer (msg);
}

/* Let the reactor run until nothing more happens right away. */
static void settle (void)
{
    for (int i = 0; i < 50; i++)
        flux_reactor_run (flux_get_reactor (h), FLUX_REACTOR_NOWAIT);
}

static void release (void)
{
    int i, n = fk.nheld;

    fk.nheld = 0;
    for (i = 0; i < n; i++) {
        answer (fk.held[i]);
        flux_msg_decref (fk.held[i]);
    }
    settle ();
}

/* Answer the oldest n held requests. */
static void release_n (int n)
{
    int i;

    if (n > fk.nheld)
        n = fk.nheld;
    for (i = 0; i < n; i++) {
        answer (fk.held[i]);
        flux_msg_decref (fk.held[i]);
    }
    memmove (fk.held, fk.held + n, (fk.nheld - n) * sizeof (fk.held[0]));
    fk.nheld -= n;
    settle ();
}

static void wait_ready (flux_future_t *f)
{
    for (int i = 0; i < 1000 && !flux_future_is_ready (f); i++)
        flux_reactor_run (flux_get_reactor (h), FLUX_REACTOR_ONCE);
    if (!flux_future_is_ready (f))
        BAIL_OUT ("a future never became ready");
}

static flux_future_t *store (const char *s)
{
    return flux_rpc_raw (h, "content.store", s, strlen (s), FLUX_NODEID_ANY, 0);
}

static int store_sync (const char *s, uint8_t digest[20])
{
    flux_future_t *f = store (s);
    const void *d;
    size_t len;
    int rc;

    wait_ready (f);
    if ((rc = flux_rpc_get_raw (f, &d, &len)) == 0 && digest && len == 20)
        memcpy (digest, d, 20);
    flux_future_destroy (f);
    return rc;
}

static flux_future_t *load (const uint8_t digest[20])
{
    return flux_rpc_raw (h, "content.load", digest, 20, FLUX_NODEID_ANY, 0);
}

static int simple (const char *topic, const char *payload, int *errnum)
{
    flux_future_t *f = flux_rpc (h, topic, payload, FLUX_NODEID_ANY, 0);
    int rc;

    wait_ready (f);
    rc = flux_rpc_get (f, NULL);
    if (errnum)
        *errnum = rc < 0 ? errno : 0;
    flux_future_destroy (f);
    return rc;
}

static int stat_int (const char *key)
{
    flux_future_t *f = flux_rpc (h, "content.stats-get", NULL, 0, 0);
    json_int_t v = -1;

    wait_ready (f);
    if (flux_rpc_get_unpack (f, "{s:I}", key, &v) < 0)
        v = -1;
    flux_future_destroy (f);
    return (int)v;
}

static flux_future_t *checkpoint_put (int seq)
{
    return flux_rpc_pack (h, "content.checkpoint-put", 0, 0,
                          "{s:{s:i s:s s:i s:f}}", "value", "version", 1,
                          "rootref",
                          "sha1-c0a9faf907dda6216fd73bf81d0b3b21a1a8cb91",
                          "sequence", seq, "timestamp", 1.0);
}

static void test_no_backing (void)
{
    uint8_t d[20];
    flux_future_t *f;
    const void *data;
    size_t len;
    int errnum, seq = 0;

    ok (store_sync ("alpha", d) == 0, "store without a backing store");
    f = load (d);
    wait_ready (f);
    ok (flux_rpc_get_raw (f, &data, &len) == 0 && len == 5
            && !memcmp (data, "alpha", 5),
        "and load it back");
    flux_future_destroy (f);
    ok (stat_int ("dirty") == 1, "it stays dirty");
    ok (simple ("content.flush", NULL, &errnum) < 0 && errnum == ENOSYS,
        "flush without a backing store: ENOSYS");
    ok (simple ("content.dropcache", NULL, NULL) == 0
            && stat_int ("count") == 1,
        "dropcache keeps dirty blobs");
    f = checkpoint_put (1);
    wait_ready (f);
    ok (flux_future_get (f, NULL) == 0, "checkpoint-put goes to memory");
    flux_future_destroy (f);
    f = flux_rpc (h, "content.checkpoint-get", NULL, 0, 0);
    wait_ready (f);
    ok (flux_rpc_get_unpack (f, "{s:[{s:i}]}", "value", "sequence", &seq) == 0
            && seq == 1,
        "checkpoint-get from memory");
    flux_future_destroy (f);
    ok (simple ("content.unregister-backing", NULL, &errnum) < 0
            && errnum == EINVAL,
        "unregister without a backing store: EINVAL");
}

static void test_register (void)
{
    int errnum;

    ok (simple ("content.register-backing", "{\"name\":\"fake\"}", NULL) == 0,
        "register-backing");
    settle ();
    ok (fk.nstore == 1 && fk.nblobs == 1, "the dirty blob is written out");
    ok (fk.ncp == 1 && fk.checkpoint, "so is the checkpoint kept in memory");
    ok (stat_int ("dirty") == 0, "nothing dirty any more");
    ok (simple ("content.register-backing", "{\"name\":\"other\"}", &errnum) < 0
            && errnum == EBUSY,
        "a second backing store: EBUSY");
    ok (simple ("content.flush", NULL, NULL) == 0, "flush succeeds");
}

static void test_ordering (void)
{
    flux_future_t *fs[6], *cf;
    char buf[32];
    int i, answered = 0;
    const char *c;

    fk.hold = true;
    fk.log[0] = '\0';
    for (i = 0; i < 6; i++) {
        snprintf (buf, sizeof (buf), "blob-%d", i);
        fs[i] = store (buf);
    }
    cf = checkpoint_put (2);
    settle ();
    for (i = 0; i < 6; i++)
        if (flux_future_is_ready (fs[i]) && flux_future_get (fs[i], NULL) == 0)
            answered++;
    ok (answered == 6, "stores are answered from the cache at once");
    ok (fk.nheld == 4, "the write limit (4) holds back two writes");
    ok (!flux_future_is_ready (cf), "checkpoint-put waits");
    ok (strchr (fk.log, 'C') == NULL, "and is not sent to the backing store");
    release (); /* four answered; two more sent */
    ok (fk.nheld == 2 && !flux_future_is_ready (cf) && !strchr (fk.log, 'C'),
        "after four writes, the checkpoint still waits for two");
    release (); /* the last two; then the checkpoint goes */
    release (); /* the checkpoint */
    wait_ready (cf);
    ok (flux_future_get (cf, NULL) == 0, "then checkpoint-put succeeds");
    c = strchr (fk.log, 'C');
    ok (c && strlen (fk.log) == 13 && c == fk.log + 12,
        "backing saw every store answered before the checkpoint: %s", fk.log);
    for (i = 0; i < 6; i++)
        flux_future_destroy (fs[i]);
    flux_future_destroy (cf);
    fk.hold = false;
}

static void test_failure (void)
{
    flux_future_t *cf, *ff;
    int errnum;

    fk.hold = true;
    fk.fail_errnum = ENOSPC;
    ok (store_sync ("gamma", NULL) == 0, "store gamma (answered from cache)");
    cf = checkpoint_put (3);
    settle ();
    release ();
    wait_ready (cf);
    errnum = flux_future_get (cf, NULL) < 0 ? errno : 0;
    ok (errnum == ENOSPC, "its write fails: the checkpoint-put gets ENOSPC");
    ok (fk.checkpoint
            && json_integer_value (json_object_get (fk.checkpoint, "sequence"))
                   == 2,
        "the failed checkpoint never reached the backing store");
    ok (stat_int ("dirty") == 1, "gamma is still dirty");
    flux_future_destroy (cf);
    fk.fail_errnum = 0;
    ff = flux_rpc (h, "content.flush", NULL, 0, 0);
    settle ();
    ok (fk.nheld == 1, "flush retries the failed write");
    release ();
    wait_ready (ff);
    ok (flux_future_get (ff, NULL) == 0 && stat_int ("dirty") == 0,
        "and succeeds once the backing store does");
    flux_future_destroy (ff);
    fk.hold = false;
}

static void test_shared_miss (void)
{
    uint8_t d[20];
    flux_future_t *f[3];
    const void *data;
    size_t len;
    int i, good = 0, errnum;

    store_sync ("delta", d);
    settle ();
    ok (simple ("content.dropcache", NULL, NULL) == 0, "dropcache");
    ok (stat_int ("count") == 0, "the cache is empty");
    fk.hold = true;
    fk.nload = 0;
    for (i = 0; i < 3; i++)
        f[i] = load (d);
    settle ();
    ok (fk.nload == 1, "three loads of one missing blob: one backing load");
    ok (stat_int ("load-pending") == 1, "stats: one load pending");
    release ();
    for (i = 0; i < 3; i++) {
        wait_ready (f[i]);
        if (flux_rpc_get_raw (f[i], &data, &len) == 0 && len == 5
            && !memcmp (data, "delta", 5))
            good++;
        flux_future_destroy (f[i]);
    }
    ok (good == 3, "all three get the blob");
    ok (stat_int ("count") == 1 && stat_int ("dirty") == 0,
        "it is cached, clean");
    fk.hold = false;

    simple ("content.dropcache", NULL, NULL);
    fk.corrupt = true;
    f[0] = load (d);
    wait_ready (f[0]);
    errnum = flux_rpc_get_raw (f[0], &data, &len) < 0 ? errno : 0;
    ok (errnum == EPROTO, "a blob that does not match its digest: EPROTO");
    flux_future_destroy (f[0]);
    ok (stat_int ("count") == 0, "and is not cached");
    fk.corrupt = false;

    memset (d, 0x42, sizeof (d));
    f[0] = load (d);
    wait_ready (f[0]);
    errnum = flux_rpc_get_raw (f[0], &data, &len) < 0 ? errno : 0;
    ok (errnum == ENOENT, "a blob the backing store lacks: ENOENT");
    flux_future_destroy (f[0]);
}

static void test_purge (void)
{
    char buf[1100];
    int i;

    for (i = 0; i < 10; i++) {
        memset (buf, 'a' + i, sizeof (buf) - 1);
        buf[sizeof (buf) - 1] = '\0';
        store_sync (buf, NULL);
    }
    settle ();
    ok (stat_int ("size") <= 4096 && stat_int ("dirty") == 0,
        "clean blobs are purged down to purge-target-size (%d bytes)",
        stat_int ("size"));
}

static void test_bad_requests (void)
{
    flux_msg_t *msg;
    flux_future_t *f;
    char *big;
    int errnum;

    f = flux_rpc_raw (h, "content.load", "abc", 3, 0, 0);
    wait_ready (f);
    ok (flux_rpc_get (f, NULL) < 0 && errno == EPROTO,
        "load of a 3-byte digest: EPROTO");
    flux_future_destroy (f);
    f = flux_rpc (h, "content.load", NULL, 0, 0);
    wait_ready (f);
    ok (flux_rpc_get (f, NULL) < 0 && errno == EPROTO,
        "load without payload: EPROTO");
    flux_future_destroy (f);
    big = calloc (1, 1024 * 1024 + 1);
    f = flux_rpc_raw (h, "content.store", big, 1024 * 1024 + 1, 0, 0);
    wait_ready (f);
    ok (flux_rpc_get (f, NULL) < 0 && errno == EFBIG,
        "a blob over the limit: EFBIG");
    flux_future_destroy (f);
    free (big);
    ok (simple ("content.checkpoint-put", "{\"value\":{}}", &errnum) < 0
            && errnum == EPROTO,
        "checkpoint-put of an empty object: EPROTO");
    ok (simple ("content.register-backing", "[]", &errnum) < 0
            && errnum == EPROTO,
        "register-backing of an array: EPROTO");
    ok (store_sync ("", NULL) == 0, "the empty blob stores");

    msg = flux_request_encode ("content.stats-get", NULL);
    flux_msg_set_cred (msg, (struct flux_msg_cred){1234, FLUX_ROLE_USER});
    f = flux_rpc_message (h, msg, FLUX_NODEID_ANY, 0);
    wait_ready (f);
    ok (flux_rpc_get (f, NULL) < 0 && errno == EPERM, "a guest gets EPERM");
    flux_future_destroy (f);
    flux_msg_decref (msg);
}

static void test_unregister (void)
{
    flux_future_t *uf;
    int errnum;

    fk.hold = true;
    ok (store_sync ("epsilon", NULL) == 0, "store with the write held");
    settle ();
    uf = flux_rpc (h, "content.unregister-backing", NULL, 0, 0);
    settle ();
    ok (!flux_future_is_ready (uf), "unregister waits for the write");
    release ();
    wait_ready (uf);
    ok (flux_future_get (uf, NULL) == 0 && stat_int ("dirty") == 0,
        "then succeeds, the blob written");
    flux_future_destroy (uf);
    fk.hold = false;
    ok (store_sync ("zeta", NULL) == 0 && stat_int ("dirty") == 1,
        "afterwards blobs stay dirty in memory");
    ok (simple ("content.flush", NULL, &errnum) < 0 && errnum == ENOSYS,
        "and flush is ENOSYS again");
}

/* content.write of blobs (strings, digests computed unless bad_digest)
 * and an optional checkpoint of sequence seq (seq < 0: none). */
static flux_future_t *content_write_req (const char **blobs, int n, int seq,
                                         bool bad_digest)
{
    struct content_write_blob b[8];
    uint8_t d[8][20];
    char cp[160];
    flux_future_t *f;
    void *buf;
    size_t len;

    for (int i = 0; i < n; i++) {
        blobref_hash_raw ("sha1", blobs[i], strlen (blobs[i]), d[i], 20);
        if (bad_digest)
            d[i][0] ^= 1;
        b[i].digest = d[i];
        b[i].data = blobs[i];
        b[i].len = strlen (blobs[i]);
    }
    snprintf (cp, sizeof (cp),
              "{\"version\":1,\"rootref\":\"sha1-"
              "c0a9faf907dda6216fd73bf81d0b3b21a1a8cb91\",\"sequence\":%d,"
              "\"timestamp\":1.0}",
              seq);
    if (!(buf = content_write_encode (20, b, n, seq >= 0 ? cp : NULL, 0, &len)))
        BAIL_OUT ("content_write_encode");
    f = flux_rpc_raw (h, "content.write", buf, len, FLUX_NODEID_ANY, 0);
    free (buf);
    return f;
}

static int cp_seq (void)
{
    json_int_t seq = -1;
    if (!fk.checkpoint
        || json_unpack (fk.checkpoint, "{s:I}", "sequence", &seq) < 0)
        return -1;
    return (int)seq;
}

/* A backing store registered with "write": blobs and checkpoints in
 * content-backing.write requests. */
static void test_write_mode (void)
{
    flux_future_t *f, *fs[3], *cf;
    const char *sender = NULL;
    int errnum;

    fk.log[0] = '\0';
    flux_aux_set (h, "flux::uuid", "content-uuid", NULL);
    f = flux_rpc (h, "content.register-backing",
                  "{\"name\":\"fakew\",\"write\":true}", 0, 0);
    wait_ready (f);
    ok (flux_rpc_get_unpack (f, "{s?s}", "sender", &sender) == 0 && sender
            && !strcmp (sender, "content-uuid"),
        "register-backing with write: the answer names our route id");
    flux_future_destroy (f);
    settle ();
    ok (!strcmp (fk.log, "Wb") && stat_int ("dirty") == 0,
        "the dirty blob left over goes in a write: %s", fk.log);

    /* one turn: three stores and a checkpoint -> one request */
    fk.hold = true;
    fk.log[0] = '\0';
    fs[0] = store ("w-one");
    fs[1] = store ("w-two");
    fs[2] = store ("w-three");
    cf = checkpoint_put (10);
    settle ();
    ok (!strcmp (fk.log, "WbbbK") && fk.nheld == 1,
        "three stores and a checkpoint of one turn: one write: %s", fk.log);
    ok (!flux_future_is_ready (cf), "the checkpoint waits for it");
    release ();
    wait_ready (cf);
    ok (flux_future_get (cf, NULL) == 0 && cp_seq () == 10,
        "then the checkpoint succeeds");
    ok (stat_int ("dirty") == 0, "and the blobs are clean");
    for (int i = 0; i < 3; i++)
        flux_future_destroy (fs[i]);
    flux_future_destroy (cf);

    /* the checkpoint does not wait for an earlier write to be answered */
    fk.log[0] = '\0';
    ok (store_sync ("w-four", NULL) == 0, "store a blob, its write held");
    settle ();
    cf = checkpoint_put (11);
    settle ();
    ok (!strcmp (fk.log, "WbWK") && fk.nheld == 2,
        "the checkpoint follows in its own write at once: %s", fk.log);
    release ();
    wait_ready (cf);
    ok (flux_future_get (cf, NULL) == 0 && cp_seq () == 11,
        "both answered: the checkpoint succeeds");
    flux_future_destroy (cf);

    /* the earlier write fails after the checkpoint was sent */
    fk.log[0] = '\0';
    ok (store_sync ("w-five", NULL) == 0, "store another, its write held");
    settle ();
    cf = checkpoint_put (12);
    settle ();
    ok (!strcmp (fk.log, "WbWK") && fk.last_failures == 0,
        "checkpoint sent behind it, carrying 0 failures");
    fk.fail_writes = 1;
    fk.fail_errnum = ENOSPC;
    release_n (1);
    release ();
    wait_ready (cf);
    errnum = flux_future_get (cf, NULL) < 0 ? errno : 0;
    ok (errnum == EIO && cp_seq () == 11,
        "the write fails: the backing store refuses the checkpoint (EIO)");
    ok (stat_int ("dirty") == 1, "the blob is still dirty");
    flux_future_destroy (cf);
    fk.fail_errnum = 0;
    fk.log[0] = '\0';
    cf = checkpoint_put (13);
    settle ();
    ok (!strcmp (fk.log, "WbK") && fk.last_failures == 2,
        "the next checkpoint re-sends the blob, counting 2 failures: %s",
        fk.log);
    release ();
    wait_ready (cf);
    ok (flux_future_get (cf, NULL) == 0 && cp_seq () == 13
            && stat_int ("dirty") == 0,
        "and succeeds");
    flux_future_destroy (cf);

    /* blobs without a checkpoint go lazy; a flush then waits for a
     * durable write after them (an empty one) */
    fk.log[0] = '\0';
    fk.nlazy = 0;
    ok (store_sync ("w-six", NULL) == 0, "store a blob, its write held");
    settle ();
    ok (!strcmp (fk.log, "Wb") && fk.nlazy == 1,
        "a write of blobs alone is lazy: %s", fk.log);
    release ();
    settle ();
    ok (stat_int ("dirty") == 0, "answered: the blob is clean");
    cf = flux_rpc (h, "content.flush", NULL, 0, 0);
    settle ();
    ok (!strcmp (fk.log, "WbW") && fk.nlazy == 1 && !flux_future_is_ready (cf),
        "a flush after it sends an empty durable write and waits: %s", fk.log);
    release ();
    wait_ready (cf);
    ok (flux_future_get (cf, NULL) == 0, "then the flush succeeds");
    flux_future_destroy (cf);
    cf = flux_rpc (h, "content.flush", NULL, 0, 0);
    wait_ready (cf);
    ok (flux_future_get (cf, NULL) == 0 && !strcmp (fk.log, "WbW"),
        "a second flush is answered at once, with no write");
    flux_future_destroy (cf);

    /* a flush sent while an earlier (lazy) write is in flight rides on
     * an empty write; if the earlier write then fails, the empty one's
     * success must not answer the flush: the blob is written again and
     * the flush goes with it */
    fk.log[0] = '\0';
    ok (store_sync ("w-seven", NULL) == 0, "store a blob, its lazy write held");
    settle ();
    cf = flux_rpc (h, "content.flush", NULL, 0, 0);
    settle ();
    ok (!strcmp (fk.log, "WbW") && !flux_future_is_ready (cf),
        "a flush rides on an empty write behind it: %s", fk.log);
    fk.fail_writes = 1;
    fk.fail_errnum = ENOSPC;
    release_n (1);
    release_n (1);
    ok (!flux_future_is_ready (cf) && !strcmp (fk.log, "WbWWb"),
        "the blob's write failed: the empty write does not answer the "
        "flush, the blob is sent again: %s",
        fk.log);
    fk.fail_writes = 1;
    release ();
    wait_ready (cf);
    errnum = flux_future_get (cf, NULL) < 0 ? errno : 0;
    ok (errnum == ENOSPC, "that write fails too, and so does the flush");
    flux_future_destroy (cf);
    fk.fail_errnum = 0;
    cf = flux_rpc (h, "content.flush", NULL, 0, 0);
    settle ();
    release ();
    wait_ready (cf);
    ok (flux_future_get (cf, NULL) == 0 && stat_int ("dirty") == 0,
        "once writes succeed, a flush writes the blob and succeeds");
    flux_future_destroy (cf);
    fk.hold = false;
}

/* content.write: a KVS commit's blobs and checkpoint in one request. */
static void test_content_write (void)
{
    const char *blobs[] = {"cw-one", "cw-two"};
    flux_future_t *f;
    flux_msg_t *msg;
    int errnum;
    uint8_t d[20];

    fk.hold = true;
    fk.log[0] = '\0';
    f = content_write_req (blobs, 2, 20, false);
    settle ();
    ok (!strcmp (fk.log, "WbbK") && !flux_future_is_ready (f),
        "content.write: blobs and checkpoint go in one write, held: %s",
        fk.log);
    release ();
    wait_ready (f);
    ok (flux_future_get (f, NULL) == 0 && cp_seq () == 20,
        "answered once the write is durable");
    flux_future_destroy (f);
    fk.hold = false;
    blobref_hash_raw ("sha1", "cw-two", 6, d, 20);
    f = load (d);
    wait_ready (f);
    {
        const void *data;
        size_t len;
        ok (flux_rpc_get_raw (f, &data, &len) == 0 && len == 6
                && !memcmp (data, "cw-two", 6),
            "its blobs load");
    }
    flux_future_destroy (f);

    fk.hold = true;
    fk.log[0] = '\0';
    f = content_write_req (blobs, 1, -1, false);
    wait_ready (f);
    ok (flux_future_get (f, NULL) == 0,
        "without a checkpoint: answered at once, before any write");
    flux_future_destroy (f);
    release ();
    fk.hold = false;

    f = content_write_req (blobs, 2, 21, true);
    wait_ready (f);
    errnum = flux_future_get (f, NULL) < 0 ? errno : 0;
    ok (errnum == EPROTO && cp_seq () == 20,
        "a blob that does not match its digest: EPROTO, no checkpoint");
    flux_future_destroy (f);

    ok (simple ("content.write", "garbage", &errnum) < 0 && errnum == EPROTO,
        "a malformed content.write: EPROTO");
    msg = flux_request_encode ("content.write", NULL);
    flux_msg_set_cred (msg, (struct flux_msg_cred){1234, FLUX_ROLE_USER});
    f = flux_rpc_message (h, msg, FLUX_NODEID_ANY, 0);
    wait_ready (f);
    ok (flux_rpc_get (f, NULL) < 0 && errno == EPERM,
        "content.write from a guest: EPERM");
    flux_future_destroy (f);
    flux_msg_decref (msg);
}

/* Register as a backing store taking content-backing.write. */
static void register_write (void)
{
    flux_future_t *f;

    f = flux_rpc (h, "content.register-backing",
                  "{\"name\":\"fakew\",\"write\":true}", 0, 0);
    wait_ready (f);
    if (flux_future_get (f, NULL) < 0)
        BAIL_OUT ("register-backing: %s", strerror (errno));
    flux_future_destroy (f);
    fk.write_failures = 0; /* as content-sqlite resets on registration */
    settle ();
}

/* content.write of blobs without a checkpoint, answered. */
static int write_blobs (const char **blobs, int n)
{
    flux_future_t *f = content_write_req (blobs, n, -1, false);
    int rc;

    wait_ready (f);
    rc = flux_future_get (f, NULL);
    flux_future_destroy (f);
    return rc;
}

/* The KVS's lazy writes held (lazy_delay): a service whose delay never
 * runs out within the test, then one whose delay runs out at once. */
static void test_linger (struct content_config *cfg)
{
    const char *two[] = {"l-one", "l-two"}, *three[] = {"l-three"},
               *four[] = {"l-four"}, *big[1];
    struct content_service *svc;
    flux_error_t error;
    flux_future_t *f, *cf;
    char bigblob[200];

    cfg->hashtype = "sha1";
    cfg->lazy_delay = 3600.;
    cfg->lazy_bytes = 100;
    if (!(svc = content_service_create (h, cfg, &error)))
        BAIL_OUT ("content_service_create: %s", error.text);
    register_write ();
    fk.hold = false;
    fk.log[0] = '\0';
    fk.nlazy = 0;
    ok (write_blobs (two, 2) == 0,
        "linger: content.write of two blobs, no checkpoint: answered");
    settle ();
    ok (fk.log[0] == '\0' && stat_int ("dirty") == 2
            && stat_int ("lazy-held") == 1,
        "their lazy write is held: %s", fk.log);
    cf = checkpoint_put (30);
    wait_ready (cf);
    ok (flux_future_get (cf, NULL) == 0 && cp_seq () == 30,
        "a checkpoint succeeds");
    ok (!strcmp (fk.log, "WbbK") && fk.nlazy == 0 && stat_int ("dirty") == 0,
        "the held blobs rode on its durable write: %s", fk.log);
    flux_future_destroy (cf);

    fk.log[0] = '\0';
    ok (write_blobs (three, 1) == 0, "write another");
    settle ();
    f = flux_rpc (h, "content.flush", NULL, 0, 0);
    wait_ready (f);
    ok (flux_future_get (f, NULL) == 0 && !strcmp (fk.log, "Wb")
            && fk.nlazy == 0 && stat_int ("dirty") == 0,
        "a flush sends it at once, durably: %s", fk.log);
    flux_future_destroy (f);

    fk.log[0] = '\0';
    memset (bigblob, 'x', sizeof (bigblob) - 1);
    bigblob[sizeof (bigblob) - 1] = '\0';
    big[0] = bigblob;
    ok (write_blobs (big, 1) == 0, "write a blob larger than lazy_bytes");
    settle ();
    ok (!strcmp (fk.log, "Wb") && fk.nlazy == 1 && stat_int ("dirty") == 0,
        "it is not held: one lazy write at the next turn: %s", fk.log);

    fk.log[0] = '\0';
    fk.nlazy = 0;
    ok (store_sync ("l-store", NULL) == 0, "a client's content.store");
    settle ();
    ok (!strcmp (fk.log, "Wb") && fk.nlazy == 1 && stat_int ("dirty") == 0,
        "is written through at the next turn, not held: %s", fk.log);
    content_service_destroy (svc);

    cfg->lazy_delay = 0.001;
    if (!(svc = content_service_create (h, cfg, &error)))
        BAIL_OUT ("content_service_create: %s", error.text);
    register_write ();
    fk.log[0] = '\0';
    fk.nlazy = 0;
    ok (write_blobs (four, 1) == 0, "linger 1 ms: write a blob");
    for (int i = 0; i < 1000 && fk.log[0] == '\0'; i++)
        flux_reactor_run (flux_get_reactor (h), FLUX_REACTOR_ONCE);
    settle ();
    ok (!strcmp (fk.log, "Wb") && fk.nlazy == 1 && stat_int ("dirty") == 0,
        "once the delay runs out it goes alone, lazy: %s", fk.log);
    content_service_destroy (svc);
}

int main (void)
{
    struct flux_msg_handler_spec tab[] = {
        {FLUX_MSGTYPE_REQUEST, "content-backing.*", backing_cb, 0},
        FLUX_MSGHANDLER_TABLE_END,
    };
    struct content_config cfg = {
        .hashtype = "sha1",
        .rank = 0,
        .purge_target = 4096,
        .blob_size_limit = 1024 * 1024,
        .write_limit = 4,
    };
    flux_msg_handler_t **handlers;
    struct content_service *svc;
    flux_error_t error;

    plan (NO_PLAN);
    if (!(h = flux_open ("loop://", 0)))
        BAIL_OUT ("loop://");
    flux_attr_set_cacheonly (h, "rank", "0");
    if (!(svc = content_service_create (h, &cfg, &error)))
        BAIL_OUT ("content_service_create: %s", error.text);
    if (flux_msg_handler_addvec (h, tab, NULL, &handlers) < 0)
        BAIL_OUT ("handlers");
    cfg.hashtype = "md5";
    ok (content_service_create (h, &cfg, &error) == NULL && errno == EINVAL,
        "an unknown hash type is refused: %s", error.text);

    test_no_backing ();
    test_register ();
    test_ordering ();
    test_failure ();
    test_shared_miss ();
    test_purge ();
    test_bad_requests ();
    test_unregister ();
    test_write_mode ();
    test_content_write ();
    content_service_destroy (svc);
    test_linger (&cfg);

    flux_msg_handler_delvec (handlers);
    for (int i = 0; i < fk.nblobs; i++)
        free (fk.blobs[i].data);
    json_decref (fk.checkpoint);
    flux_close (h);
    done_testing ();
    return 0;
}
