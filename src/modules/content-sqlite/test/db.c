/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Unit tests for db.c: blobs and the checkpoint through transactions,
 * rollback, persistence across close/open, refusal of a file of another
 * hash type or schema version or held by another opener, truncate, and
 * a full database (max_page_count) giving ENOSPC, then recovering; that
 * the walbuf VFS hands each commit to the file system at COMMIT; the
 * index kept in memory and folded to disk; the upgrade of a version 1
 * and a version 2 file; blobs stored compressed, or not, and a corrupt
 * compressed row refused.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "db.h"
#include "tap.h"

static char dir[] = "/tmp/dbtest.XXXXXX";
static char path[256];

static void d (unsigned char *digest, int n)
{
    memset (digest, 0, 20);
    digest[0] = n;
    digest[19] = n;
}

/* Bytes that do not compress (xorshift), printable if text: where a test
 * counts on a blob's size on disk. */
static void fill_random (void *buf, size_t len, bool text)
{
    static uint64_t x = 88172645463325252ULL;
    unsigned char *p = buf;

    for (size_t i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = text ? 'A' + (x >> 32) % 58 : (unsigned char)(x >> 24);
    }
}

/* Run sql on the closed database file, as something else than db.c
 * would: SQLITE_OK or the error. */
static int sql_behind (const char *sql)
{
    sqlite3 *sq;
    int rc = sqlite3_open (path, &sq);

    if (rc == SQLITE_OK)
        rc = sqlite3_exec (sq, sql, NULL, NULL, NULL);
    sqlite3_close (sq);
    return rc;
}

static void test_basic (void)
{
    flux_error_t error;
    struct db *db;
    unsigned char k1[20], k2[20], k3[20];
    const void *data;
    size_t len;
    const char *cp;

    ok ((db = db_open (path, "sha1", false, &error)) != NULL,
        "db_open creates");
    d (k1, 1);
    d (k2, 2);
    d (k3, 3);
    ok (db_begin (db) == 0 && db_in_transaction (db), "begin");
    ok (db_store (db, k1, 20, "one", 3) == 0, "store one");
    ok (db_store (db, k2, 20, NULL, 0) == 0, "store the empty blob");
    ok (db_store (db, k1, 20, "one", 3) == 0, "store one again");
    ok (db_checkpoint_put (db, "{\"rootref\":\"x\"}") == 0, "checkpoint put");
    ok (db_commit (db) == 0 && !db_in_transaction (db), "commit");
    ok (db_load (db, k1, 20, &data, &len) == 0 && len == 3
            && !memcmp (data, "one", 3),
        "load one");
    ok (db_load (db, k2, 20, &data, &len) == 0 && len == 0 && data == NULL,
        "load the empty blob");
    errno = 0;
    ok (db_load (db, k3, 20, &data, &len) < 0 && errno == ENOENT,
        "load of an unknown blob: ENOENT");
    ok (db_checkpoint_get (db, &cp) == 0 && !strcmp (cp, "{\"rootref\":\"x\"}"),
        "checkpoint get");
    ok (db_object_count (db) == 2, "2 objects");

    ok (db_begin (db) == 0 && db_store (db, k3, 20, "three", 5) == 0
            && db_checkpoint_put (db, "{}") == 0,
        "store three and a checkpoint in a new transaction");
    ok (db_load (db, k3, 20, &data, &len) == 0,
        "visible inside the transaction");
    db_rollback (db);
    errno = 0;
    ok (!db_in_transaction (db) && db_load (db, k3, 20, &data, &len) < 0
            && errno == ENOENT,
        "gone after rollback");
    ok (db_checkpoint_get (db, &cp) == 0 && !strcmp (cp, "{\"rootref\":\"x\"}"),
        "checkpoint unchanged after rollback");
    errno = 0;
    ok (db_store (db, NULL, 0, "x", 1) < 0 && errno == EINVAL,
        "store without digest: EINVAL");
    db_close (db);
    db_close (NULL);

    ok ((db = db_open (path, "sha1", false, &error)) != NULL, "reopen");
    ok (db_load (db, k1, 20, &data, &len) == 0 && len == 3,
        "blobs persist across close/open");
    ok (db_checkpoint_get (db, &cp) == 0, "so does the checkpoint");
    {
        struct db *db2;
        errno = 0;
        db2 = db_open (path, "sha1", false, &error);
        ok (db2 == NULL && errno == EBUSY,
            "a second opener is refused while the first holds it: %s",
            error.text);
        db_close (db2);
    }
    db_close (db);

    errno = 0;
    ok (db_open (path, "sha256", false, &error) == NULL && errno == EINVAL
            && strstr (error.text, "sha1"),
        "a sha1 database is refused for sha256: %s", error.text);
    errno = 0;
    ok (db_open (path, "md5", false, &error) == NULL && errno == EINVAL,
        "unknown hash type refused");
}

/* The WAL grows with commits and is folded in by db_checkpoint() only. */
static void test_wal (void)
{
    flux_error_t error;
    struct db *db;
    unsigned char k[20];
    char buf[10000];
    const void *data;
    size_t len;
    int i;

    if (!(db = db_open (path, "sha1", true, &error)))
        BAIL_OUT ("db_open: %s", error.text);
    fill_random (buf, sizeof (buf), false);
    for (i = 0; i < 20; i++) {
        d (k, 100 + i);
        if (db_begin (db) < 0 || db_store (db, k, 20, buf, sizeof (buf)) < 0
            || db_commit (db) < 0)
            BAIL_OUT ("store: %s", db_errstr (db));
    }
    ok (db_wal_size (db) >= 20 * sizeof (buf),
        "20 commits: the WAL holds them (%zu bytes), no automatic checkpoint",
        db_wal_size (db));
    ok (db_begin (db) == 0 && db_checkpoint (db) < 0 && errno == EBUSY,
        "checkpoint inside a transaction: EBUSY");
    db_rollback (db);
    ok (db_checkpoint (db) == 0 && db_wal_size (db) == 0, "checkpoint");
    d (k, 110);
    ok (db_load (db, k, 20, &data, &len) == 0 && len == sizeof (buf),
        "the blobs are still there");
    db_close (db);
}

static int copy_file (const char *src, const char *dst)
{
    FILE *in = fopen (src, "r"), *out = fopen (dst, "w");
    char buf[65536];
    size_t n;
    int rc = 0;

    if (!in || !out)
        rc = -1;
    while (rc == 0 && (n = fread (buf, 1, sizeof (buf), in)) > 0)
        if (fwrite (buf, 1, n, out) != n)
            rc = -1;
    if (in)
        fclose (in);
    if (out && fclose (out) != 0)
        rc = -1;
    return rc;
}

/* Copy the database and its WAL as they are on disk now (the db is
 * still open), open the copy with sqlite's default VFS and count the
 * objects in it; -1 on error. */
static long long count_on_disk (void)
{
    char copy[300], src[300], dst[300];
    sqlite3 *sq = NULL;
    sqlite3_stmt *st = NULL;
    long long n = -1;

    snprintf (copy, sizeof (copy), "%s/copy.sqlite", dir);
    snprintf (src, sizeof (src), "%s-wal", path);
    snprintf (dst, sizeof (dst), "%s-wal", copy);
    if (copy_file (path, copy) < 0 || copy_file (src, dst) < 0)
        return -1;
    if (sqlite3_open_v2 (copy, &sq, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK
        && sqlite3_prepare_v2 (sq, "SELECT count(*) FROM objects", -1, &st,
                               NULL)
               == SQLITE_OK
        && sqlite3_step (st) == SQLITE_ROW)
        n = sqlite3_column_int64 (st, 0);
    sqlite3_finalize (st);
    sqlite3_close (sq);
    (void)unlink (copy);
    (void)unlink (dst);
    return n;
}

/* With synchronous=OFF nothing syncs the WAL: what walbuf gathered must
 * still be written when sqlite writes the commit frame, including a
 * commit bigger than its buffer. */
static void test_walbuf (void)
{
    flux_error_t error;
    struct db *db;
    unsigned char k[20];
    char buf[5000];
    const void *data;
    size_t len;
    int i;

    if (!(db = db_open (path, "sha1", true, &error)))
        BAIL_OUT ("db_open: %s", error.text);
    ok (sqlite3_vfs_find ("flux-walbuf") != NULL,
        "the walbuf VFS is registered while a db is open");
    ok (db_set_synchronous (db, "OFF") == 0, "synchronous=OFF");
    ok (db_begin (db) == 0, "begin");
    for (i = 0; i < 3; i++) {
        d (k, 50 + i);
        ok (db_store (db, k, 20, "small", 5) == 0, "store small blob %d", i);
    }
    ok (db_commit (db) == 0, "commit");
    ok (count_on_disk () == 3,
        "a copy of the files on disk after COMMIT holds the 3 blobs");
    fill_random (buf, sizeof (buf), false);
    if (db_begin (db) < 0)
        BAIL_OUT ("begin: %s", db_errstr (db));
    for (i = 0; i < 1200; i++) { /* ~6 MB of frames: over WALBUF_MAX */
        memcpy (buf, &i, sizeof (i));
        memset (k, 0, sizeof (k));
        memcpy (k + 4, &i, sizeof (i));
        k[0] = 0xee;
        if (db_store (db, k, 20, buf, sizeof (buf)) < 0)
            BAIL_OUT ("store: %s", db_errstr (db));
    }
    ok (db_commit (db) == 0, "commit of 1200 blobs of 5000 bytes");
    ok (count_on_disk () == 1203, "a copy on disk holds all 1203 blobs");
    ok (db_load (db, k, 20, &data, &len) == 0 && len == sizeof (buf)
            && !memcmp (data, buf, len),
        "the last blob loads intact");
    db_close (db);
    ok (sqlite3_vfs_find ("flux-walbuf") == NULL,
        "the VFS is unregistered when the last db closes");
    if ((db = db_open (path, "sha1", false, &error))) {
        ok (db_object_count (db) == 1203, "reopened: 1203 blobs");
        db_close (db);
    }
    else
        fail ("reopen: %s", error.text);
}

static void test_version (void)
{
    flux_error_t error;
    sqlite3 *sq;
    struct db *db;

    ok (sqlite3_open (path, &sq) == SQLITE_OK
            && sqlite3_exec (sq,
                             "UPDATE meta SET value = '7' WHERE name = "
                             "'version'",
                             NULL, NULL, NULL)
                   == SQLITE_OK,
        "set the schema version to 7 behind its back");
    sqlite3_close (sq);
    errno = 0;
    ok (db_open (path, "sha1", false, &error) == NULL && errno == EINVAL
            && strstr (error.text, "version 7"),
        "schema version 7 is refused: %s", error.text);
    ok ((db = db_open (path, "sha1", true, &error)) != NULL
            && db_object_count (db) == 0,
        "truncate starts afresh");
    db_close (db);
}

/* A digest from a number, spread over all its bytes. */
static void dn (unsigned char *k, unsigned n)
{
    for (int i = 0; i < 20; i++) {
        n = n * 1103515245u + 12345u;
        k[i] = (unsigned char)(n >> 16);
    }
}

static int load_n (struct db *db, unsigned n)
{
    unsigned char k[20];
    const void *data;
    size_t len;

    dn (k, n);
    return db_load (db, k, 20, &data, &len) == 0 && len == sizeof (n)
                   && !memcmp (data, &n, sizeof (n))
               ? 0
               : -1;
}

static long long rows_in_idx (void)
{
    sqlite3 *sq = NULL;
    sqlite3_stmt *st = NULL;
    long long n = -1;

    if (sqlite3_open_v2 (path, &sq, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK
        && sqlite3_prepare_v2 (sq, "SELECT count(*) FROM idx", -1, &st, NULL)
               == SQLITE_OK
        && sqlite3_step (st) == SQLITE_ROW)
        n = sqlite3_column_int64 (st, 0);
    sqlite3_finalize (st);
    sqlite3_close (sq);
    return n;
}

/* Blobs are indexed in memory until db_index() folds them into the
 * index on disk; after a close (or a crash) the ones not folded are read
 * back; a rollback takes them out of memory too. */
static void test_index (void)
{
    flux_error_t error;
    struct db *db;
    unsigned char k[20];
    const unsigned total = 20000;
    unsigned n, bad;

    if (!(db = db_open (path, "sha1", true, &error)))
        BAIL_OUT ("db_open: %s", error.text);
    ok (!db_index_due (db) && db_index_pending (db) == 0,
        "a new database: nothing to index");
    for (n = 0; n < 1000; n++) {
        if (n % 100 == 0 && (n > 0 && db_commit (db) < 0))
            BAIL_OUT ("commit: %s", db_errstr (db));
        if (n % 100 == 0 && db_begin (db) < 0)
            BAIL_OUT ("begin: %s", db_errstr (db));
        dn (k, n);
        if (db_store (db, k, 20, &n, sizeof (n)) < 0)
            BAIL_OUT ("store: %s", db_errstr (db));
    }
    if (db_commit (db) < 0)
        BAIL_OUT ("commit: %s", db_errstr (db));
    ok (db_index_pending (db) == 1000 && !db_index_due (db),
        "1000 blobs stored: indexed in memory, not due yet");
    db_close (db); /* as if the broker died here: the index on disk is
                    * behind the blobs */
    ok ((db = db_open (path, "sha1", false, &error)) != NULL
            && db_index_pending (db) == 1000,
        "reopened: the 1000 blobs past the index are read back");
    for (bad = 0, n = 0; n < 1000; n++)
        bad += load_n (db, n) < 0;
    ok (bad == 0, "all 1000 load");

    ok (db_begin (db) == 0, "begin");
    dn (k, 50000);
    n = 50000;
    ok (db_store (db, k, 20, &n, sizeof (n)) == 0
            && db_index_pending (db) == 1001 && load_n (db, 50000) == 0,
        "a blob stored in the transaction loads inside it");
    db_rollback (db);
    errno = 0;
    ok (db_index_pending (db) == 1000 && load_n (db, 50000) < 0
            && errno == ENOENT,
        "after the rollback it is gone, from memory too");
    ok (db_begin (db) == 0 && db_store (db, k, 20, &n, sizeof (n)) == 0
            && db_commit (db) == 0 && load_n (db, 50000) == 0,
        "stored again and committed, it loads");

    for (n = 1000; n < total; n++) {
        if (n % 500 == 0 && db_begin (db) < 0)
            BAIL_OUT ("begin: %s", db_errstr (db));
        dn (k, n);
        if (db_store (db, k, 20, &n, sizeof (n)) < 0)
            BAIL_OUT ("store: %s", db_errstr (db));
        if (n % 500 == 499 && db_commit (db) < 0)
            BAIL_OUT ("commit: %s", db_errstr (db));
    }
    ok (db_index_due (db), "%u blobs in memory: indexing is due",
        (unsigned)db_index_pending (db));
    ok (db_begin (db) == 0 && db_index (db) < 0 && errno == EBUSY,
        "db_index inside a transaction: EBUSY");
    db_rollback (db);
    {
        size_t pending = db_index_pending (db);
        errno = 0;
        ok (db_set_max_pages (db, 1) == 0 && db_index (db) < 0
                && errno == ENOSPC,
            "db_index when the database is full: ENOSPC (%s)", db_errstr (db));
        for (bad = 0, n = 1000; n < total; n++)
            bad += load_n (db, n) < 0;
        ok (db_index_pending (db) == pending && bad == 0
                && load_n (db, 50000) == 0,
            "the blobs stay indexed in memory and load");
        ok (db_set_max_pages (db, 1 << 30) == 0, "room again");
    }
    ok (db_index (db) == 0 && db_index_pending (db) == 0 && !db_index_due (db),
        "db_index folds them all into the index on disk");
    for (bad = 0, n = 0; n < total; n++)
        bad += load_n (db, n) < 0;
    ok (bad == 0 && load_n (db, 50000) == 0, "all %u blobs load through it",
        total + 1);
    dn (k, 7);
    n = 7;
    ok (db_store (db, k, 20, &n, sizeof (n)) == 0
            && db_object_count (db) == total + 2 && db_index_pending (db) == 1
            && load_n (db, 7) == 0,
        "a blob in the index on disk stored again is a second row");
    ok (db_store (db, k, 20, &n, sizeof (n)) == 0
            && db_object_count (db) == total + 2,
        "but not a third: it is in memory now");
    ok (db_index (db) == 0 && db_index_dropped (db) == 1
            && db_object_count (db) == total + 1 && load_n (db, 7) == 0,
        "db_index drops the second row; the blob loads");
    ok (db_index (db) == 0, "db_index with nothing to do");
    db_close (db);
    ok (rows_in_idx () == total + 1, "the index on disk has %u rows",
        total + 1);
    ok ((db = db_open (path, "sha1", false, &error)) != NULL
            && db_index_pending (db) == 0 && load_n (db, 19999) == 0,
        "reopened: nothing past the index; blobs load");
    db_close (db);
}

/* A file of schema version 1 (blobs keyed by digest) is upgraded. */
static void test_upgrade (void)
{
    flux_error_t error;
    sqlite3 *sq;
    sqlite3_stmt *st = NULL;
    struct db *db;
    const char *cp;
    unsigned n, bad;
    int rc;

    (void)unlink (path);
    rc = sqlite3_open (path, &sq);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec (
            sq,
            "CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);"
            "CREATE TABLE objects (hash BLOB PRIMARY KEY,"
            " object BLOB NOT NULL);"
            "CREATE TABLE checkpt (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
            "INSERT INTO meta VALUES ('version', '1'), ('hashtype', 'sha1');"
            "INSERT INTO checkpt VALUES ('kvs-primary', '{\"v\":1}');",
            NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2 (sq, "INSERT INTO objects VALUES (?1, ?2)", -1,
                                 &st, NULL);
    for (n = 0; rc == SQLITE_OK && n < 300; n++) {
        unsigned char k[20];
        dn (k, n);
        sqlite3_bind_blob (st, 1, k, 20, SQLITE_TRANSIENT);
        sqlite3_bind_blob (st, 2, &n, sizeof (n), SQLITE_TRANSIENT);
        rc = sqlite3_step (st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
        sqlite3_reset (st);
    }
    sqlite3_finalize (st);
    sqlite3_close (sq);
    ok (rc == SQLITE_OK, "a version 1 file with 300 blobs and a checkpoint");
    ok ((db = db_open (path, "sha1", false, &error)) != NULL,
        "db_open upgrades it");
    if (!db)
        return;
    for (bad = 0, n = 0; n < 300; n++)
        bad += load_n (db, n) < 0;
    ok (bad == 0 && db_object_count (db) == 300 && db_index_pending (db) == 0,
        "its 300 blobs load, all indexed on disk");
    ok (db_checkpoint_get (db, &cp) == 0 && !strcmp (cp, "{\"v\":1}"),
        "its checkpoint is kept");
    db_close (db);
    ok (rows_in_idx () == 300, "the index on disk has 300 rows");
    ok ((db = db_open (path, "sha1", false, &error)) != NULL
            && load_n (db, 299) == 0,
        "reopened as version 3");
    db_close (db);
}

/* A file of schema version 2 (no size column) is upgraded in place: its
 * blobs read as stored, new ones are compressed. */
static void test_upgrade_v2 (void)
{
    flux_error_t error;
    struct db *db;
    char big[4096];
    const void *data;
    size_t len;
    unsigned n, bad;
    unsigned char k[20];

    if (!(db = db_open (path, "sha1", true, &error)))
        BAIL_OUT ("db_open: %s", error.text);
    db_set_compression (db, false);
    memset (big, 'v', sizeof (big));
    d (k, 77);
    for (n = 0; n < 50; n++) {
        unsigned char kn[20];
        dn (kn, n);
        if (db_begin (db) < 0 || db_store (db, kn, 20, &n, sizeof (n)) < 0
            || db_commit (db) < 0)
            BAIL_OUT ("store: %s", db_errstr (db));
    }
    if (db_begin (db) < 0 || db_store (db, k, 20, big, sizeof (big)) < 0
        || db_commit (db) < 0)
        BAIL_OUT ("store: %s", db_errstr (db));
    db_close (db);
    /* make it what version 2 wrote: the rows had no size column */
    ok (sql_behind ("ALTER TABLE objects DROP COLUMN size;"
                    "UPDATE meta SET value = '2' WHERE name = 'version'")
            == SQLITE_OK,
        "a version 2 file with 51 blobs");
    ok ((db = db_open (path, "sha1", false, &error)) != NULL,
        "db_open upgrades it");
    if (!db)
        return;
    for (bad = 0, n = 0; n < 50; n++)
        bad += load_n (db, n) < 0;
    ok (bad == 0 && db_load (db, k, 20, &data, &len) == 0 && len == sizeof (big)
            && !memcmp (data, big, len),
        "its blobs load as they were stored");
    d (k, 78);
    big[0] = 'w';
    ok (db_begin (db) == 0 && db_store (db, k, 20, big, sizeof (big)) == 0
            && db_commit (db) == 0 && db_stats (db)->compressed == 1,
        "a new blob is stored compressed");
    db_close (db);
    ok ((db = db_open (path, "sha1", false, &error)) != NULL
            && load_n (db, 49) == 0 && db_load (db, k, 20, &data, &len) == 0
            && len == sizeof (big) && !memcmp (data, big, len),
        "reopened as version 3: old and new blobs load");
    db_close (db);
}

/* Blobs of 256 bytes or more are compressed when it pays; both kinds
 * load, whatever the setting; a corrupt row is an error, not a crash. */
static void test_compression (void)
{
    flux_error_t error;
    struct db *db;
    char text[10000], noise[10000], small[200];
    unsigned char kt[20], kn[20], ks[20], ko[20];
    const struct db_stats *st;
    const void *data;
    size_t len;
    int rc;

    if (!(db = db_open (path, "sha1", true, &error)))
        BAIL_OUT ("db_open: %s", error.text);
    ok (db_compression (db), "compression is on by default");
    static const char pattern[] = "{\"dirref\":\"sha1-0123456789abcdef\"}";
    for (size_t i = 0; i < sizeof (text); i++)
        text[i] = pattern[i % (sizeof (pattern) - 1)];
    fill_random (noise, sizeof (noise), false);
    memset (small, 's', sizeof (small));
    d (kt, 1);
    d (kn, 2);
    d (ks, 3);
    d (ko, 4);
    ok (db_begin (db) == 0 && db_store (db, kt, 20, text, sizeof (text)) == 0
            && db_store (db, kn, 20, noise, sizeof (noise)) == 0
            && db_store (db, ks, 20, small, sizeof (small)) == 0
            && db_commit (db) == 0,
        "store a repetitive blob, a random one and a small one");
    st = db_stats (db);
    ok (st->compressed == 1 && st->bytes == 20200
            && st->stored_bytes < 10200 + 1000,
        "only the repetitive one is compressed: %lld bytes in %lld", st->bytes,
        st->stored_bytes);
    ok (db_load (db, kt, 20, &data, &len) == 0 && len == sizeof (text)
            && !memcmp (data, text, len),
        "it loads intact");
    ok (db_load (db, kn, 20, &data, &len) == 0 && len == sizeof (noise)
            && !memcmp (data, noise, len)
            && db_load (db, ks, 20, &data, &len) == 0 && len == sizeof (small)
            && !memcmp (data, small, len),
        "so do the others");
    db_set_compression (db, false);
    text[0] = '[';
    ok (db_begin (db) == 0 && db_store (db, ko, 20, text, sizeof (text)) == 0
            && db_commit (db) == 0 && db_stats (db)->compressed == 1,
        "with compression off, a repetitive blob is stored as it is");
    ok (db_load (db, ko, 20, &data, &len) == 0 && len == sizeof (text)
            && !memcmp (data, text, len)
            && db_load (db, kt, 20, &data, &len) == 0 && len == sizeof (text)
            && data != NULL && ((const char *)data)[0] == '{',
        "both load, the compressed one too");
    {
        size_t n = 3 << 20;
        char *big = malloc (n);
        unsigned char kb[20];
        if (!big)
            BAIL_OUT ("out of memory");
        for (size_t i = 0; i < n; i++)
            big[i] = "abcdefgh"[(i / 7) % 8];
        d (kb, 5);
        db_set_compression (db, true);
        ok (db_begin (db) == 0 && db_store (db, kb, 20, big, n) == 0
                && db_commit (db) == 0 && db_load (db, kb, 20, &data, &len) == 0
                && len == n && !memcmp (data, big, n),
            "a 3 MiB blob, compressed, loads intact");
        ok (db_load (db, kt, 20, &data, &len) == 0 && len == sizeof (text)
                && ((const char *)data)[0] == '{'
                && !memcmp ((const char *)data + 1, text + 1, len - 1),
            "then a small one (the big buffer given back)");
        free (big);
    }
    db_close (db);
    ok ((db = db_open (path, "sha1", false, &error)) != NULL
            && db_load (db, kt, 20, &data, &len) == 0 && len == sizeof (text),
        "and after reopening");
    db_close (db);

    ok (sql_behind ("UPDATE objects SET object = x'28b52ffd00'"
                    " WHERE size IS NOT NULL")
            == SQLITE_OK,
        "truncate the compressed row behind its back");
    if (!(db = db_open (path, "sha1", false, &error)))
        BAIL_OUT ("db_open: %s", error.text);
    errno = 0;
    ok (db_load (db, kt, 20, &data, &len) < 0 && errno == EIO,
        "its load fails: EIO (%s)", db_errstr (db));
    ok (db_load (db, kn, 20, &data, &len) == 0 && len == sizeof (noise),
        "the other blobs still load");
    db_close (db);

    rc = sql_behind ("UPDATE objects SET size = -5 WHERE size IS NOT NULL");
    if (!(db = db_open (path, "sha1", false, &error)))
        BAIL_OUT ("db_open: %s", error.text);
    errno = 0;
    ok (rc == SQLITE_OK && db_load (db, kt, 20, &data, &len) < 0
            && errno == EIO,
        "a negative size: EIO (%s)", db_errstr (db));
    db_close (db);
}

static void test_full (void)
{
    flux_error_t error;
    struct db *db;
    unsigned char k[20];
    size_t big = 2 << 20;
    char *buf = malloc (big);
    const void *data;
    size_t len;

    if (!buf || !(db = db_open (path, "sha1", true, &error)))
        BAIL_OUT ("db_open: %s", error.text);
    fill_random (buf, big, false);
    ok (db_set_max_pages (db, 64) == 0, "cap the database at 64 pages");
    d (k, 9);
    errno = 0;
    ok (db_begin (db) == 0
            && (db_store (db, k, 20, buf, big) < 0 || db_commit (db) < 0)
            && errno == ENOSPC,
        "a 2 MiB blob does not fit: ENOSPC");
    ok (strstr (db_errstr (db), "full") != NULL, "error text: %s",
        db_errstr (db));
    db_rollback (db);
    errno = 0;
    ok (db_load (db, k, 20, &data, &len) < 0 && errno == ENOENT,
        "nothing of it stored");
    d (k, 10);
    ok (db_begin (db) == 0 && db_store (db, k, 20, "small", 5) == 0
            && db_commit (db) == 0,
        "a small blob still fits afterwards");
    ok (db_load (db, k, 20, &data, &len) == 0 && len == 5, "and loads");
    db_close (db);
    free (buf);
}

int main (void)
{
    plan (NO_PLAN);
    if (!mkdtemp (dir))
        BAIL_OUT ("mkdtemp");
    snprintf (path, sizeof (path), "%s/content.sqlite", dir);
    test_basic ();
    test_wal ();
    test_walbuf ();
    test_version ();
    test_index ();
    test_upgrade ();
    test_upgrade_v2 ();
    test_compression ();
    test_full ();
    {
        char cmd[300];
        snprintf (cmd, sizeof (cmd), "rm -rf %s", dir);
        if (system (cmd) != 0)
            diag ("cannot remove %s", dir);
    }
    done_testing ();
    return 0;
}
