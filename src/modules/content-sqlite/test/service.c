/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Unit tests for service.c over loop://: content-backing.write is
 * accepted only from the trusted sender and stores under the digests it
 * is given; the writes of one loop turn share one transaction; a failed
 * write makes the next checkpoint that does not account for it fail
 * (EIO); content-backing.store still hashes what it stores; garbage gets
 * EPROTO.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "libcontent/blobref.h"
#include "libcontent/write.h"
#include "libflux/flux.h"

#include "db.h"
#include "service.h"
#include "tap.h"

#define SENDER "content-module-id"

static char dir[] = "/tmp/sqlsvc.XXXXXX";
static char path[256];
static flux_t *h;
static struct db *db;
static struct sqlite_service *svc;

/* log.append requests from the service: swallow them */
static void log_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                    void *arg)
{
}

static void wait_ready (flux_future_t *f)
{
    for (int i = 0; i < 1000 && !flux_future_is_ready (f); i++)
        flux_reactor_run (flux_get_reactor (h), FLUX_REACTOR_ONCE);
    if (!flux_future_is_ready (f))
        BAIL_OUT ("a future never became ready");
}

/* Send a content-backing.write of blobs (strings) with digests derived
 * from a counter (not their hash: the digests are trusted), and an
 * optional checkpoint, from sender (NULL: no route). */
static int next_digest;

static bool write_lazy; /* write_req() sends lazy writes */

static flux_future_t *write_req (const char *sender, const char **blobs, int n,
                                 const char *checkpoint, uint32_t failures)
{
    struct content_write_blob b[8];
    unsigned char digests[8][20];
    flux_msg_t *msg;
    flux_future_t *f;
    void *buf;
    size_t len;

    for (int i = 0; i < n; i++) {
        memset (digests[i], 0, 20);
        digests[i][0] = 0xa0;
        digests[i][1] = (unsigned char)next_digest++;
        b[i].digest = digests[i];
        b[i].data = blobs[i];
        b[i].len = strlen (blobs[i]);
    }
    if (!(buf = content_write_encode (20, b, n, checkpoint, failures, &len))
        || (write_lazy && content_write_set_lazy (buf, len) < 0)
        || !(msg = flux_request_encode_raw ("content-backing.write", buf, len))
        || (sender && flux_msg_route_push (msg, sender) < 0))
        BAIL_OUT ("cannot build a write request");
    free (buf);
    f = flux_rpc_message (h, msg, FLUX_NODEID_ANY, 0);
    flux_msg_decref (msg);
    return f;
}

static int result (flux_future_t *f, int *errnum)
{
    int rc;

    wait_ready (f);
    rc = flux_future_get (f, NULL);
    if (errnum)
        *errnum = rc < 0 ? errno : 0;
    flux_future_destroy (f);
    return rc;
}

static int stat_int (const char *key)
{
    flux_future_t *f = flux_rpc (h, "content-sqlite.stats-get", NULL, 0, 0);
    json_t *o;
    int v = -1;

    wait_ready (f);
    if (flux_rpc_get_unpack (f, "o", &o) == 0)
        v = (int)json_integer_value (json_object_get (o, key));
    flux_future_destroy (f);
    return v;
}

static int load (int index, char *buf, size_t size)
{
    unsigned char digest[20];
    flux_future_t *f;
    const void *data;
    size_t len;
    int rc = -1;

    memset (digest, 0, 20);
    digest[0] = 0xa0;
    digest[1] = (unsigned char)index;
    f = flux_rpc_raw (h, "content-backing.load", digest, 20, 0, 0);
    wait_ready (f);
    if (flux_rpc_get_raw (f, &data, &len) == 0 && len < size) {
        memcpy (buf, data, len);
        buf[len] = '\0';
        rc = 0;
    }
    flux_future_destroy (f);
    return rc;
}

static int checkpoint_seq (void)
{
    flux_future_t *f
        = flux_rpc (h, "content-backing.checkpoint-get", NULL, 0, 0);
    int seq = -1;

    wait_ready (f);
    if (flux_rpc_get_unpack (f, "{s:[{s:i}]}", "value", "sequence", &seq) < 0)
        seq = -1;
    flux_future_destroy (f);
    return seq;
}

static const char *cp (int seq)
{
    static char buf[128];
    snprintf (buf, sizeof (buf),
              "{\"version\":1,\"rootref\":\"sha1-"
              "c0a9faf907dda6216fd73bf81d0b3b21a1a8cb91\",\"sequence\":%d}",
              seq);
    return buf;
}

static void test_trust (void)
{
    const char *blobs[] = {"alpha", "beta"};
    int errnum, first;
    char buf[64];

    ok (result (write_req (SENDER, blobs, 2, NULL, 0), &errnum) < 0
            && errnum == EPERM,
        "write before a sender is trusted: EPERM");
    ok (sqlite_service_trust (svc, SENDER) == 0, "trust the content module");
    ok (result (write_req (NULL, blobs, 2, NULL, 0), &errnum) < 0
            && errnum == EPERM,
        "write from a request without a route: EPERM");
    ok (result (write_req ("someone-else", blobs, 2, NULL, 0), &errnum) < 0
            && errnum == EPERM,
        "write from another sender: EPERM");
    ok (stat_int ("write_failures") == 0, "refused senders are not counted");
    first = next_digest;
    ok (result (write_req (SENDER, blobs, 2, cp (1), 0), NULL) == 0,
        "write of two blobs and a checkpoint from the trusted sender");
    ok (load (first, buf, sizeof (buf)) == 0 && !strcmp (buf, "alpha")
            && load (first + 1, buf, sizeof (buf)) == 0
            && !strcmp (buf, "beta"),
        "both stored under the digests given (not re-hashed)");
    ok (checkpoint_seq () == 1, "the checkpoint is stored");
}

static void test_group (void)
{
    const char *b1[] = {"g1"}, *b2[] = {"g2", "g3"};
    flux_future_t *f1, *f2;
    int commits = stat_int ("commits");

    f1 = write_req (SENDER, b1, 1, NULL, 0);
    f2 = write_req (SENDER, b2, 2, cp (2), 0);
    ok (result (f1, NULL) == 0 && result (f2, NULL) == 0,
        "two writes sent in one turn succeed");
    ok (stat_int ("commits") == commits + 1, "in one transaction");
    ok (checkpoint_seq () == 2, "the checkpoint came with them");
}

static void test_lazy (void)
{
    const char *b1[] = {"l1"}, *b2[] = {"l2"}, *b3[] = {"l3"};
    int commits = stat_int ("commits"), lazy = stat_int ("lazy_commits");
    flux_future_t *f1, *f2;

    write_lazy = true;
    ok (result (write_req (SENDER, b1, 1, NULL, 0), NULL) == 0,
        "a lazy write succeeds");
    ok (stat_int ("commits") == commits + 1
            && stat_int ("lazy_commits") == lazy + 1,
        "committed without a sync (a lazy commit)");
    f1 = write_req (SENDER, b2, 1, NULL, 0);
    write_lazy = false;
    f2 = write_req (SENDER, b3, 1, NULL, 0);
    ok (result (f1, NULL) == 0 && result (f2, NULL) == 0
            && stat_int ("commits") == commits + 2
            && stat_int ("lazy_commits") == lazy + 1,
        "a lazy and a durable write of one turn: one synced commit");
    ok (!strcmp (db_synchronous (db), "FULL"), "the setting still says FULL");
}

static void test_failure (void)
{
    static char big[1 << 20];
    const char *blobs[] = {big}, *small[] = {"small"};
    flux_future_t *f1, *f2;
    int errnum, e2;

    /* not compressible: it must not fit in the 16 pages */
    for (unsigned long long i = 0, x = 1; i < sizeof (big) - 1; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        big[i] = 'A' + (x >> 33) % 58;
    }
    ok (db_set_max_pages (db, 16) == 0, "make the database full");
    f1 = write_req (SENDER, blobs, 1, NULL, 0);
    ok (result (f1, &errnum) < 0 && errnum == ENOSPC,
        "a write that does not fit: ENOSPC");
    ok (stat_int ("write_failures") == 1, "one failure counted");
    ok (result (write_req (SENDER, small, 1, cp (3), 0), &errnum) < 0
            && errnum == EIO,
        "a checkpoint that does not account for it: EIO");
    ok (checkpoint_seq () == 2, "the checkpoint did not change");
    ok (stat_int ("write_failures") == 2, "the refusal counts too");
    ok (result (write_req (SENDER, small, 1, cp (3), 2), NULL) == 0,
        "a checkpoint that accounts for both is stored");
    ok (checkpoint_seq () == 3, "checkpoint 3");
    ok (result (write_req (SENDER, small, 1, NULL, 0), NULL) == 0,
        "a write without checkpoint is not checked against the count");

    /* same turn: a failing write, then a checkpoint that follows it */
    f1 = write_req (SENDER, blobs, 1, NULL, 2);
    f2 = write_req (SENDER, small, 1, cp (4), 2);
    ok (result (f1, &errnum) < 0 && result (f2, &e2) < 0 && errnum == ENOSPC
            && e2 == ENOSPC,
        "a checkpoint in the transaction of a failed write fails with it");
    ok (checkpoint_seq () == 3, "checkpoint still 3");
    ok (db_set_max_pages (db, 1 << 30) == 0, "room again");
}

static void test_bad (void)
{
    flux_msg_t *msg;
    flux_future_t *f;
    int errnum, before = stat_int ("write_failures");
    const void *data;
    size_t len;
    char ref[BLOBREF_MAX_STRING_SIZE];

    if (!(msg = flux_request_encode_raw ("content-backing.write", "junk", 4))
        || flux_msg_route_push (msg, SENDER) < 0)
        BAIL_OUT ("cannot build a request");
    f = flux_rpc_message (h, msg, FLUX_NODEID_ANY, 0);
    flux_msg_decref (msg);
    ok (result (f, &errnum) < 0 && errnum == EPROTO,
        "a malformed write: EPROTO");
    ok (stat_int ("write_failures") == before + 1, "counted as a failure");
    {
        const char *blobs[] = {"x"};
        ok (result (write_req (SENDER, blobs, 1, "[1]", before + 1), &errnum)
                    < 0
                && errnum == EPROTO,
            "a checkpoint that is not an object: EPROTO");
    }
    f = flux_rpc_raw (h, "content-backing.store", "hello", 5, 0, 0);
    wait_ready (f);
    ok (flux_rpc_get_raw (f, &data, &len) == 0 && len == 20
            && blobref_hashtostr ("sha1", data, len, ref, sizeof (ref)) == 0
            && !strcmp (ref, "sha1-aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d"),
        "content-backing.store hashes the blob itself: %s", ref);
    flux_future_destroy (f);
}

int main (void)
{
    flux_error_t error;
    flux_msg_handler_t *mh;
    struct flux_match match = FLUX_MATCH_REQUEST;

    plan (NO_PLAN);
    if (!mkdtemp (dir))
        BAIL_OUT ("mkdtemp");
    snprintf (path, sizeof (path), "%s/content.sqlite", dir);
    if (!(h = flux_open ("loop://", 0)))
        BAIL_OUT ("flux_open loop://");
    flux_attr_set_cacheonly (h, "rank", "0"); /* for the log lines */
    match.topic_glob = "log.append";
    if (!(mh = flux_msg_handler_create (h, match, log_cb, NULL)))
        BAIL_OUT ("log handler");
    flux_msg_handler_start (mh);
    if (!(db = db_open (path, "sha1", false, &error))
        || !(svc = sqlite_service_create (h, db, "sha1", path, &error)))
        BAIL_OUT ("cannot create the service: %s", error.text);
    test_trust ();
    test_group ();
    test_lazy ();
    test_failure ();
    test_bad ();
    sqlite_service_destroy (svc);
    db_close (db);
    flux_msg_handler_destroy (mh);
    flux_close (h);
    {
        char cmd[300];
        snprintf (cmd, sizeof (cmd), "rm -rf %s", dir);
        if (system (cmd) != 0)
            diag ("cannot remove %s", dir);
    }
    done_testing ();
    return 0;
}
