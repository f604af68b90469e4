/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Unit tests for db.c: blobs and the checkpoint through transactions,
 * rollback, persistence across close/open, refusal of a file of another
 * hash type or schema version or held by another opener, truncate, and
 * a full database (max_page_count) giving ENOSPC, then recovering; and
 * that the walbuf VFS hands each commit to the file system at COMMIT.
 */
#include <errno.h>
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
    memset (buf, 'w', sizeof (buf));
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
    memset (buf, 'b', sizeof (buf));
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
                             "UPDATE meta SET value = '2' WHERE name = "
                             "'version'",
                             NULL, NULL, NULL)
                   == SQLITE_OK,
        "set the schema version to 2 behind its back");
    sqlite3_close (sq);
    errno = 0;
    ok (db_open (path, "sha1", false, &error) == NULL && errno == EINVAL,
        "schema version 2 is refused: %s", error.text);
    ok ((db = db_open (path, "sha1", true, &error)) != NULL
            && db_object_count (db) == 0,
        "truncate starts afresh");
    db_close (db);
}

static void test_full (void)
{
    flux_error_t error;
    struct db *db;
    unsigned char k[20];
    size_t big = 2 << 20;
    char *buf = calloc (1, big);
    const void *data;
    size_t len;

    if (!(db = db_open (path, "sha1", true, &error)))
        BAIL_OUT ("db_open: %s", error.text);
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
