/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* db.c - the sqlite side of content-sqlite: open and check the file,
 * prepared statements for blobs and the checkpoint, transactions, and
 * sqlite result codes turned into errno values.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <sqlite3.h>

#include "db.h"
#include "walbuf.h"

#define SCHEMA_VERSION "1"
#define CHECKPOINT_KEY "kvs-primary"

struct db {
    sqlite3 *sq;
    sqlite3_stmt *store;
    sqlite3_stmt *load;
    sqlite3_stmt *cp_put;
    sqlite3_stmt *cp_get;
    sqlite3_stmt *count;
    int wal_pages; /* frames in the WAL (after the last commit) */
    int page_size; /* of this file */
    bool walbuf;   /* holds a reference to the walbuf VFS */
    char errbuf[256];
};

/* Set errno and the error text from sqlite's last error (rc). */
static int fail (struct db *db, int rc, const char *what)
{
    int errnum;

    switch (rc & 0xff) {
        case SQLITE_FULL:
            errnum = ENOSPC;
            break;
        case SQLITE_TOOBIG:
            errnum = EFBIG;
            break;
        case SQLITE_NOMEM:
            errnum = ENOMEM;
            break;
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
            errnum = EBUSY;
            break;
        case SQLITE_IOERR:
            errnum = sqlite3_system_errno (db->sq) == ENOSPC ? ENOSPC : EIO;
            break;
        default:
            errnum = EIO;
            break;
    }
    snprintf (db->errbuf, sizeof (db->errbuf), "%s: %s", what,
              errnum == ENOSPC ? "database or disk is full"
                               : sqlite3_errmsg (db->sq));
    errno = errnum;
    return -1;
}

/* Statements that return rows keep them until reset: do it on entry to
 * every function, so returned pointers live "until the next call". */
static void reset_reads (struct db *db)
{
    sqlite3_reset (db->load);
    sqlite3_reset (db->cp_get);
    sqlite3_reset (db->count);
}

static int exec (struct db *db, const char *sql)
{
    int rc;

    if ((rc = sqlite3_exec (db->sq, sql, NULL, NULL, NULL)) != SQLITE_OK)
        return fail (db, rc, sql);
    return 0;
}

const char *db_errstr (struct db *db)
{
    return db ? db->errbuf : "no database";
}

void db_close (struct db *db)
{
    if (db) {
        int saved_errno = errno;
        if (db->sq) {
            reset_reads (db);
            db_rollback (db);
        }
        sqlite3_finalize (db->store);
        sqlite3_finalize (db->load);
        sqlite3_finalize (db->cp_put);
        sqlite3_finalize (db->cp_get);
        sqlite3_finalize (db->count);
        sqlite3_close (db->sq);
        if (db->walbuf)
            walbuf_vfs_release ();
        free (db);
        errno = saved_errno;
    }
}

/* Create the tables of a new file, or check an existing file's version
 * and hash type. */
static int schema (struct db *db, const char *hashtype, flux_error_t *error)
{
    sqlite3_stmt *st = NULL;
    const char *version = NULL, *ht = NULL;
    char *v = NULL, *h = NULL;
    int rc, result = -1;

    if (exec (db, "BEGIN IMMEDIATE") < 0
        || exec (db, "CREATE TABLE IF NOT EXISTS meta ("
                     " name TEXT PRIMARY KEY, value TEXT NOT NULL)")
               < 0
        || exec (db, "CREATE TABLE IF NOT EXISTS objects ("
                     " hash BLOB PRIMARY KEY, object BLOB NOT NULL)")
               < 0
        || exec (db, "CREATE TABLE IF NOT EXISTS checkpt ("
                     " key TEXT PRIMARY KEY, value TEXT NOT NULL)")
               < 0)
        goto sqlerr;
    if ((rc = sqlite3_prepare_v2 (db->sq, "SELECT name, value FROM meta", -1,
                                  &st, NULL))
        != SQLITE_OK) {
        fail (db, rc, "reading meta");
        goto sqlerr;
    }
    while ((rc = sqlite3_step (st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text (st, 0);
        const char *value = (const char *)sqlite3_column_text (st, 1);
        if (name && value && !strcmp (name, "version"))
            version = v = strdup (value);
        else if (name && value && !strcmp (name, "hashtype"))
            ht = h = strdup (value);
    }
    if (rc != SQLITE_DONE) {
        fail (db, rc, "reading meta");
        goto sqlerr;
    }
    if (!version) {
        char sql[256];
        snprintf (sql, sizeof (sql),
                  "INSERT INTO meta (name, value) VALUES ('version', '%s'),"
                  " ('hashtype', '%s')",
                  SCHEMA_VERSION, hashtype); /* hashtype was validated */
        if (exec (db, sql) < 0)
            goto sqlerr;
    }
    else if (strcmp (version, SCHEMA_VERSION) != 0) {
        errprintf (error, "database schema version %s is not %s", version,
                   SCHEMA_VERSION);
        errno = EINVAL;
        goto done;
    }
    else if (!ht || strcmp (ht, hashtype) != 0) {
        errprintf (error, "database holds %s blobs, not %s",
                   ht ? ht : "unknown", hashtype);
        errno = EINVAL;
        goto done;
    }
    if (exec (db, "COMMIT") < 0)
        goto sqlerr;
    result = 0;
    goto done;
sqlerr:
    errprintf (error, "%s", db->errbuf);
done:
    sqlite3_finalize (st);
    if (result < 0)
        db_rollback (db);
    free (v);
    free (h);
    return result;
}

/* After each commit: remember how big the WAL is (db_checkpoint). */
static int wal_hook (void *arg, sqlite3 *sq, const char *name, int npages)
{
    struct db *db = arg;

    db->wal_pages = npages;
    return SQLITE_OK;
}

static int prepare (struct db *db, sqlite3_stmt **st, const char *sql)
{
    int rc;

    if ((rc = sqlite3_prepare_v3 (db->sq, sql, -1, SQLITE_PREPARE_PERSISTENT,
                                  st, NULL))
        != SQLITE_OK)
        return fail (db, rc, sql);
    return 0;
}

struct db *db_open (const char *path, const char *hashtype, bool truncate,
                    flux_error_t *error)
{
    struct db *db;
    const char *vfs;
    int rc;

    if (!path || !hashtype
        || (strcmp (hashtype, "sha1") != 0
            && strcmp (hashtype, "sha256") != 0)) {
        errprintf (error, "bad database path or hash type");
        errno = EINVAL;
        return NULL;
    }
    if (!(db = calloc (1, sizeof (*db)))) {
        errprintf (error, "out of memory");
        return NULL;
    }
    if (truncate) {
        char p[4096];
        (void)unlink (path);
        snprintf (p, sizeof (p), "%s-wal", path);
        (void)unlink (p);
        snprintf (p, sizeof (p), "%s-shm", path);
        (void)unlink (p);
    }
    /* commits go to the WAL in one write each (walbuf.h); without that
     * VFS, sqlite's default one does the same work in more calls */
    vfs = walbuf_vfs_acquire ();
    db->walbuf = vfs != NULL;
    rc = sqlite3_open_v2 (path, &db->sq,
                          SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, vfs);
    if (rc != SQLITE_OK) {
        if (!db->sq) {
            errprintf (error, "%s: cannot open", path);
            if (db->walbuf)
                walbuf_vfs_release ();
            free (db);
            errno = ENOMEM;
            return NULL;
        }
        fail (db, rc, path);
        goto error;
    }
    sqlite3_extended_result_codes (db->sq, 1);
    /* Exclusive locking first, so that WAL needs no shared memory file. */
    if (exec (db, "PRAGMA locking_mode=EXCLUSIVE") < 0
        || exec (db, "PRAGMA journal_mode=WAL") < 0
        || exec (db, "PRAGMA synchronous=FULL") < 0
        || exec (db, "PRAGMA journal_size_limit=67108864") < 0
        || exec (db, "PRAGMA wal_autocheckpoint=0") < 0)
        goto error;
    /* the caller checkpoints, when the commits it waits for are answered */
    sqlite3_wal_hook (db->sq, wal_hook, db);
    db->page_size = 4096;
    if (schema (db, hashtype, error) < 0)
        goto error_set;
    if (prepare (db, &db->store,
                 "INSERT OR IGNORE INTO objects (hash, object) VALUES (?1, ?2)")
            < 0
        || prepare (db, &db->load, "SELECT object FROM objects WHERE hash = ?1")
               < 0
        || prepare (db, &db->cp_put,
                    "INSERT OR REPLACE INTO checkpt (key, value)"
                    " VALUES ('" CHECKPOINT_KEY "', ?1)")
               < 0
        || prepare (db, &db->cp_get,
                    "SELECT value FROM checkpt WHERE key = '" CHECKPOINT_KEY
                    "'")
               < 0
        || prepare (db, &db->count, "SELECT count(*) FROM objects") < 0)
        goto error;
    {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2 (db->sq, "PRAGMA page_size", -1, &st, NULL)
                == SQLITE_OK
            && sqlite3_step (st) == SQLITE_ROW)
            db->page_size = sqlite3_column_int (st, 0);
        sqlite3_finalize (st);
    }
    return db;
error:
    errprintf (error, "%s", db->errbuf);
error_set : {
    int saved_errno = errno;
    db_close (db);
    errno = saved_errno;
}
    return NULL;
}

bool db_in_transaction (struct db *db)
{
    return db && sqlite3_get_autocommit (db->sq) == 0;
}

int db_begin (struct db *db)
{
    reset_reads (db);
    return exec (db, "BEGIN");
}

int db_commit (struct db *db)
{
    int rc;

    reset_reads (db);
    if (exec (db, "COMMIT") < 0) {
        int saved_errno = errno;
        db_rollback (db);
        errno = saved_errno;
        return -1;
    }
    if (db->walbuf && (rc = walbuf_flush (db->sq)) != SQLITE_OK)
        return fail (db, rc, "writing the WAL");
    return 0;
}

void db_rollback (struct db *db)
{
    reset_reads (db);
    if (db_in_transaction (db))
        (void)sqlite3_exec (db->sq, "ROLLBACK", NULL, NULL, NULL);
}

int db_store (struct db *db, const void *digest, size_t digest_len,
              const void *data, size_t len)
{
    int rc;

    reset_reads (db);
    if (!digest || digest_len == 0 || (!data && len > 0)) {
        errno = EINVAL;
        return -1;
    }
    if (len > db_blob_limit (db)) {
        snprintf (db->errbuf, sizeof (db->errbuf),
                  "blob of %zu bytes is over the database limit", len);
        errno = EFBIG;
        return -1;
    }
    sqlite3_bind_blob (db->store, 1, digest, (int)digest_len, SQLITE_STATIC);
    /* zeroblob for the empty blob: a NULL blob would violate NOT NULL */
    if (len > 0)
        sqlite3_bind_blob64 (db->store, 2, data, len, SQLITE_STATIC);
    else
        sqlite3_bind_zeroblob (db->store, 2, 0);
    rc = sqlite3_step (db->store);
    sqlite3_reset (db->store);
    sqlite3_clear_bindings (db->store);
    if (rc != SQLITE_DONE)
        return fail (db, rc, "store");
    return 0;
}

int db_load (struct db *db, const void *digest, size_t digest_len,
             const void **data, size_t *len)
{
    int rc;

    reset_reads (db);
    if (!digest || digest_len == 0) {
        errno = EINVAL;
        return -1;
    }
    sqlite3_bind_blob (db->load, 1, digest, (int)digest_len, SQLITE_TRANSIENT);
    rc = sqlite3_step (db->load);
    if (rc == SQLITE_DONE) {
        snprintf (db->errbuf, sizeof (db->errbuf), "no such blob");
        errno = ENOENT;
        return -1;
    }
    if (rc != SQLITE_ROW)
        return fail (db, rc, "load");
    if (len)
        *len = (size_t)sqlite3_column_bytes (db->load, 0);
    if (data) {
        *data = sqlite3_column_blob (db->load, 0);
        if (sqlite3_column_bytes (db->load, 0) == 0)
            *data = NULL;
    }
    return 0;
}

int db_checkpoint_put (struct db *db, const char *value)
{
    int rc;

    reset_reads (db);
    if (!value) {
        errno = EINVAL;
        return -1;
    }
    sqlite3_bind_text (db->cp_put, 1, value, -1, SQLITE_STATIC);
    rc = sqlite3_step (db->cp_put);
    sqlite3_reset (db->cp_put);
    sqlite3_clear_bindings (db->cp_put);
    if (rc != SQLITE_DONE)
        return fail (db, rc, "checkpoint-put");
    return 0;
}

int db_checkpoint_get (struct db *db, const char **value)
{
    int rc;

    reset_reads (db);
    rc = sqlite3_step (db->cp_get);
    if (rc == SQLITE_DONE) {
        snprintf (db->errbuf, sizeof (db->errbuf), "no checkpoint");
        errno = ENOENT;
        return -1;
    }
    if (rc != SQLITE_ROW)
        return fail (db, rc, "checkpoint-get");
    if (value)
        *value = (const char *)sqlite3_column_text (db->cp_get, 0);
    return 0;
}

size_t db_wal_size (struct db *db)
{
    return db ? (size_t)db->wal_pages * db->page_size : 0;
}

int db_checkpoint (struct db *db)
{
    int rc;

    reset_reads (db);
    if (db_in_transaction (db)) {
        errno = EBUSY;
        return -1;
    }
    rc = sqlite3_wal_checkpoint_v2 (db->sq, NULL, SQLITE_CHECKPOINT_PASSIVE,
                                    NULL, NULL);
    if (rc != SQLITE_OK)
        return fail (db, rc, "checkpoint");
    db->wal_pages = 0;
    return 0;
}

long long db_object_count (struct db *db)
{
    long long n = -1;

    reset_reads (db);
    if (sqlite3_step (db->count) == SQLITE_ROW)
        n = sqlite3_column_int64 (db->count, 0);
    sqlite3_reset (db->count);
    return n;
}

size_t db_blob_limit (struct db *db)
{
    return (size_t)sqlite3_limit (db->sq, SQLITE_LIMIT_LENGTH, -1);
}

int db_set_max_pages (struct db *db, long npages)
{
    char sql[64];

    snprintf (sql, sizeof (sql), "PRAGMA max_page_count=%ld", npages);
    return exec (db, sql);
}

int db_set_synchronous (struct db *db, const char *mode)
{
    static const char *modes[] = {"OFF", "NORMAL", "FULL", "EXTRA"};
    char sql[64];

    for (size_t i = 0; i < sizeof (modes) / sizeof (modes[0]); i++) {
        if (!strcasecmp (mode, modes[i])) {
            snprintf (sql, sizeof (sql), "PRAGMA synchronous=%s", modes[i]);
            return exec (db, sql);
        }
    }
    errno = EINVAL;
    return -1;
}

const char *db_synchronous (struct db *db)
{
    static const char *modes[] = {"OFF", "NORMAL", "FULL", "EXTRA"};
    sqlite3_stmt *st;
    int v = -1;

    if (sqlite3_prepare_v2 (db->sq, "PRAGMA synchronous", -1, &st, NULL)
            == SQLITE_OK
        && sqlite3_step (st) == SQLITE_ROW)
        v = sqlite3_column_int (st, 0);
    sqlite3_finalize (st);
    return v >= 0 && v < 4 ? modes[v] : "unknown";
}
