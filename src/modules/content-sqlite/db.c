/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* db.c - the sqlite side of content-sqlite: open and check the file,
 * prepared statements for blobs and the checkpoint, transactions, and
 * sqlite result codes turned into errno values.
 *
 * Why blobs are not simply a table keyed by digest: digests are random,
 * so each blob stored lands on a random page of that key's b-tree, and
 * every commit rewrote one 4 KiB page per blob in the WAL (and again at
 * the checkpoint) to add a 20-byte key: measured, 147 KB written per
 * simulated job for 15 KB of blobs.  Here blobs are appended to a table
 * in the order they come (the pages a commit writes are the last few),
 * and the digest index is kept in memory for the most recent ones, to
 * be folded into the on-disk index later, many at once and in digest
 * order (db_index()).  The index on disk says how far it goes (meta
 * "indexed"), so after a crash the blobs past that point are read back
 * into memory: nothing acknowledged depends on the index being written.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>
#include <zstd.h>

#include "libutil/fnv.h"

#include "db.h"
#include "walbuf.h"

#define SCHEMA_VERSION "3"
#define CHECKPOINT_KEY "kvs-primary"
#define DIGEST_MAX 32

/* Blobs of at least this many bytes are stored compressed (zstd level
 * 1, its fastest with entropy coding), when that makes them smaller.
 * Most of what a job leaves in the store is directories: mostly hex
 * digests and repeated JSON keys, which shrink to about a third.
 * Smaller blobs (values, eventlog entries) gain little for the time. */
#define COMPRESS_MIN 256
#define COMPRESS_LEVEL 1

/* Fold the recent blobs into the index once there are this many, or
 * 1/RECENT_RATIO of all blobs if more (a fold rewrites most pages of a
 * big index, and the checkpoint again: folding more at a time keeps the
 * cost per blob down), but at most RECENT_MAX: the entries take 56 bytes
 * each in memory, and a fold stalls the store for about 2 us each.
 * Measured at 100,000 simulated jobs (2 million blobs): 1/64 wrote 139
 * KB per job, 1/16 98 KB; folds of ~120,000 blobs took 0.18-0.33 s. */
#define RECENT_MIN 16384
#define RECENT_RATIO 16
#define RECENT_MAX ((size_t)1 << 18)

struct recent {
    sqlite3_int64 id; /* row of the blob in objects */
    unsigned char digest[DIGEST_MAX];
};

struct db {
    sqlite3 *sq;
    sqlite3_stmt *store; /* append a blob */
    sqlite3_stmt *find;  /* its row, from the index on disk */
    sqlite3_stmt *load;  /* a blob by row */
    sqlite3_stmt *idx_put;
    sqlite3_stmt *drop; /* a row stored twice */
    sqlite3_stmt *set_indexed;
    sqlite3_stmt *cp_put;
    sqlite3_stmt *cp_get;
    sqlite3_stmt *count;
    sqlite3_stmt *begin;  /* BEGIN and COMMIT, parsed once: each */
    sqlite3_stmt *commit; /* sqlite3_exec() cost 5-10% of a store */
    bool compress;        /* compress blobs of COMPRESS_MIN bytes or more */
    ZSTD_CCtx *zc;        /* created on first use */
    ZSTD_DCtx *zd;
    void *zbuf; /* compressed (store) or decompressed (load) bytes */
    size_t zbuf_size;
    struct db_stats stats;
    int wal_pages; /* frames in the WAL (after the last commit) */
    int page_size; /* of this file */
    bool walbuf;   /* holds a reference to the walbuf VFS */
    int sync_mode; /* synchronous, as set: 0 OFF .. 3 EXTRA */
    char errbuf[256];

    /* blobs past the index on disk, in row order; slots: open
     * addressing over them by digest (index + 1, 0 for empty) */
    struct recent *recent;
    size_t nrecent, caprecent;
    uint32_t *slots;
    size_t nslots; /* a power of two, at least twice nrecent */
    size_t mark;   /* nrecent when the open transaction began */
    sqlite3_int64 max_id;
    size_t digest_len; /* of the hash type */
    long long dropped; /* rows stored twice, dropped by db_index() */
    size_t index_min;  /* db_index_due() floor */
};

/* The slot of digest: its entry's, or the empty one where it would go. */
static uint32_t *recent_slot (struct db *db, const unsigned char *digest)
{
    size_t mask = db->nslots - 1;
    size_t i = fnv1a32 (digest, DIGEST_MAX) & mask;

    while (db->slots[i]
           && memcmp (db->recent[db->slots[i] - 1].digest, digest, DIGEST_MAX))
        i = (i + 1) & mask;
    return &db->slots[i];
}

static struct recent *recent_find (struct db *db, const unsigned char *digest)
{
    uint32_t *slot;

    if (db->nrecent == 0)
        return NULL;
    slot = recent_slot (db, digest);
    return *slot ? &db->recent[*slot - 1] : NULL;
}

/* Rebuild the slots from the entries (after they moved or went). */
static void recent_reindex (struct db *db)
{
    memset (db->slots, 0, db->nslots * sizeof (*db->slots));
    for (size_t i = 0; i < db->nrecent; i++)
        *recent_slot (db, db->recent[i].digest) = (uint32_t)(i + 1);
}

static int recent_grow_slots (struct db *db, size_t nslots)
{
    uint32_t *slots;

    if (!(slots = calloc (nslots, sizeof (*slots))))
        return -1;
    free (db->slots);
    db->slots = slots;
    db->nslots = nslots;
    recent_reindex (db);
    return 0;
}

static int recent_add (struct db *db, const unsigned char *digest,
                       sqlite3_int64 id)
{
    if (db->nrecent == db->caprecent) {
        size_t cap = db->caprecent ? db->caprecent * 2 : 1024;
        struct recent *r;
        if (cap > UINT32_MAX / 2
            || !(r = realloc (db->recent, cap * sizeof (*r))))
            goto nomem;
        db->recent = r;
        db->caprecent = cap;
    }
    if ((db->nrecent + 1) * 2 > db->nslots
        && recent_grow_slots (db, db->nslots ? db->nslots * 2 : 2048) < 0)
        goto nomem;
    db->recent[db->nrecent].id = id;
    memcpy (db->recent[db->nrecent].digest, digest, DIGEST_MAX);
    *recent_slot (db, digest) = (uint32_t)++db->nrecent;
    if (id > db->max_id)
        db->max_id = id;
    return 0;
nomem:
    snprintf (db->errbuf, sizeof (db->errbuf), "out of memory");
    errno = ENOMEM;
    return -1;
}

/* Forget the entries past n (their rows were rolled back). */
static void recent_truncate (struct db *db, size_t n)
{
    if (n < db->nrecent) {
        db->nrecent = n;
        recent_reindex (db);
    }
}

/* The digest, zero-padded to DIGEST_MAX bytes. */
static int pad_digest (struct db *db, unsigned char *buf, const void *digest,
                       size_t len)
{
    if (!digest || len != db->digest_len) {
        snprintf (db->errbuf, sizeof (db->errbuf), "bad digest");
        errno = EINVAL;
        return -1;
    }
    memset (buf, 0, DIGEST_MAX);
    memcpy (buf, digest, len);
    return 0;
}

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

/* The buffer for (de)compressed blobs grows to the biggest blob seen:
 * past this size it is given back on the next call. */
#define ZBUF_KEEP (1 << 20)

/* Statements that return rows keep them until reset: do it on entry to
 * every function, so returned pointers live "until the next call". */
static void reset_reads (struct db *db)
{
    if (db->zbuf_size > ZBUF_KEEP) {
        free (db->zbuf);
        db->zbuf = NULL;
        db->zbuf_size = 0;
    }
    sqlite3_reset (db->find);
    sqlite3_reset (db->load);
    sqlite3_reset (db->cp_get);
    sqlite3_reset (db->count);
}

/* Run a prepared statement that returns no rows, and reset it. */
static int step_once (struct db *db, sqlite3_stmt *st, const char *what)
{
    int rc = sqlite3_step (st);

    sqlite3_reset (st);
    if (rc != SQLITE_DONE)
        return fail (db, rc, what);
    return 0;
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
        sqlite3_finalize (db->find);
        sqlite3_finalize (db->load);
        sqlite3_finalize (db->idx_put);
        sqlite3_finalize (db->drop);
        sqlite3_finalize (db->set_indexed);
        sqlite3_finalize (db->cp_put);
        sqlite3_finalize (db->cp_get);
        sqlite3_finalize (db->count);
        sqlite3_finalize (db->begin);
        sqlite3_finalize (db->commit);
        sqlite3_close (db->sq);
        ZSTD_freeCCtx (db->zc);
        ZSTD_freeDCtx (db->zd);
        free (db->zbuf);
        if (db->walbuf)
            walbuf_vfs_release ();
        free (db->recent);
        free (db->slots);
        free (db);
        errno = saved_errno;
    }
}

static const char *create_v3[] = {
    "CREATE TABLE objects ("
    " id INTEGER PRIMARY KEY, hash BLOB NOT NULL, object BLOB NOT NULL,"
    " size INTEGER)",
    "CREATE TABLE idx ("
    " hash BLOB PRIMARY KEY, id INTEGER NOT NULL) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS checkpt ("
    " key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    NULL,
};

/* Version 1 kept blobs in objects (hash BLOB PRIMARY KEY, object BLOB):
 * copy them over in the order they were stored, and index them all. */
static const char *upgrade_v1[] = {
    "ALTER TABLE objects RENAME TO objects_v1",
    "CREATE TABLE objects ("
    " id INTEGER PRIMARY KEY, hash BLOB NOT NULL, object BLOB NOT NULL)",
    "INSERT INTO objects (hash, object)"
    " SELECT hash, object FROM objects_v1 ORDER BY rowid",
    "DROP TABLE objects_v1",
    "CREATE TABLE idx ("
    " hash BLOB PRIMARY KEY, id INTEGER NOT NULL) WITHOUT ROWID",
    "INSERT INTO idx (hash, id) SELECT hash, id FROM objects ORDER BY hash",
    "UPDATE meta SET value = '2' WHERE name = 'version'",
    "INSERT INTO meta (name, value)"
    " SELECT 'indexed', ifnull (max (id), 0) FROM objects",
    NULL,
};

/* Version 2 had no size column: its rows read as stored uncompressed
 * (NULL).  Adding a column rewrites no row. */
static const char *upgrade_v2[] = {
    "ALTER TABLE objects ADD COLUMN size INTEGER",
    "UPDATE meta SET value = '3' WHERE name = 'version'",
    NULL,
};

static int exec_all (struct db *db, const char **sql)
{
    for (int i = 0; sql[i]; i++) {
        if (exec (db, sql[i]) < 0)
            return -1;
    }
    return 0;
}

/* Create the tables of a new file, or check an existing file's version
 * and hash type (upgrading a version 1 file). */
static int schema (struct db *db, const char *hashtype, flux_error_t *error)
{
    sqlite3_stmt *st = NULL;
    const char *version = NULL, *ht = NULL;
    char *v = NULL, *h = NULL;
    int rc, result = -1;

    if (exec (db, "BEGIN IMMEDIATE") < 0
        || exec (db, "CREATE TABLE IF NOT EXISTS meta ("
                     " name TEXT PRIMARY KEY, value TEXT NOT NULL)")
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
                  " ('hashtype', '%s'), ('indexed', '0')",
                  SCHEMA_VERSION, hashtype); /* hashtype was validated */
        if (exec_all (db, create_v3) < 0 || exec (db, sql) < 0)
            goto sqlerr;
    }
    else if (strcmp (version, SCHEMA_VERSION) != 0 && strcmp (version, "1")
             && strcmp (version, "2")) {
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
    else if ((!strcmp (version, "1") && exec_all (db, upgrade_v1) < 0)
             || (strcmp (version, SCHEMA_VERSION) != 0
                 && exec_all (db, upgrade_v2) < 0))
        goto sqlerr;
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

/* Read back the blobs the index on disk does not cover yet. */
static int load_recent (struct db *db, flux_error_t *error)
{
    sqlite3_stmt *st = NULL;
    sqlite3_int64 indexed = 0;
    int rc;

    if ((rc = sqlite3_prepare_v2 (db->sq,
                                  "SELECT value FROM meta"
                                  " WHERE name = 'indexed'",
                                  -1, &st, NULL))
            != SQLITE_OK
        || ((rc = sqlite3_step (st)) != SQLITE_ROW && rc != SQLITE_DONE))
        goto sqlerr;
    if (rc == SQLITE_ROW)
        indexed = sqlite3_column_int64 (st, 0);
    sqlite3_finalize (st);
    if ((rc = sqlite3_prepare_v2 (db->sq,
                                  "SELECT id, hash FROM objects"
                                  " WHERE id > ?1 ORDER BY id",
                                  -1, &st, NULL))
        != SQLITE_OK)
        goto sqlerr;
    sqlite3_bind_int64 (st, 1, indexed);
    db->max_id = indexed;
    while ((rc = sqlite3_step (st)) == SQLITE_ROW) {
        unsigned char digest[DIGEST_MAX];
        if (pad_digest (db, digest, sqlite3_column_blob (st, 1),
                        sqlite3_column_bytes (st, 1))
                < 0
            || recent_add (db, digest, sqlite3_column_int64 (st, 0)) < 0) {
            errprintf (error, "reading the blobs past the index: %s",
                       db->errbuf);
            sqlite3_finalize (st);
            return -1;
        }
    }
    if (rc != SQLITE_DONE)
        goto sqlerr;
    sqlite3_finalize (st);
    db->mark = db->nrecent;
    return 0;
sqlerr:
    fail (db, rc, "reading the blobs past the index");
    errprintf (error, "%s", db->errbuf);
    sqlite3_finalize (st);
    return -1;
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
    db->digest_len = !strcmp (hashtype, "sha1") ? 20 : 32;
    db->index_min = RECENT_MIN;
    db->compress = true;
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
    /* the store is the owner's alone: create it 0600 (sqlite would make it
     * 0644 less the umask), and take group and other bits from one made
     * before; sqlite gives its -wal and -shm files the database's mode */
    {
        int fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        struct stat st;
        if (fd < 0 || fstat (fd, &st) < 0
            || ((st.st_mode & 077) && fchmod (fd, st.st_mode & 0700) < 0)) {
            int saved_errno = errno;
            errprintf (error, "%s: %s", path, strerror (errno));
            if (fd >= 0)
                close (fd);
            free (db);
            errno = saved_errno;
            return NULL;
        }
        close (fd);
    }
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
        || db_set_synchronous (db, "FULL") < 0
        || exec (db, "PRAGMA journal_size_limit=67108864") < 0
        || exec (db, "PRAGMA wal_autocheckpoint=0") < 0)
        goto error;
    /* the caller checkpoints, when the commits it waits for are answered */
    sqlite3_wal_hook (db->sq, wal_hook, db);
    db->page_size = 4096;
    if (schema (db, hashtype, error) < 0 || load_recent (db, error) < 0)
        goto error_set;
    if (prepare (db, &db->store,
                 "INSERT INTO objects (hash, object, size)"
                 " VALUES (?1, ?2, ?3)")
            < 0
        || prepare (db, &db->find, "SELECT id FROM idx WHERE hash = ?1") < 0
        || prepare (db, &db->load,
                    "SELECT object, size FROM objects WHERE id = ?1")
               < 0
        || prepare (db, &db->idx_put,
                    "INSERT OR IGNORE INTO idx (hash, id) VALUES (?1, ?2)")
               < 0
        || prepare (db, &db->drop, "DELETE FROM objects WHERE id = ?1") < 0
        || prepare (db, &db->set_indexed,
                    "UPDATE meta SET value = ?1 WHERE name = 'indexed'")
               < 0
        || prepare (db, &db->cp_put,
                    "INSERT OR REPLACE INTO checkpt (key, value)"
                    " VALUES ('" CHECKPOINT_KEY "', ?1)")
               < 0
        || prepare (db, &db->cp_get,
                    "SELECT value FROM checkpt WHERE key = '" CHECKPOINT_KEY
                    "'")
               < 0
        || prepare (db, &db->count, "SELECT count(*) FROM objects") < 0
        || prepare (db, &db->begin, "BEGIN") < 0
        || prepare (db, &db->commit, "COMMIT") < 0)
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
    db->mark = db->nrecent;
    return step_once (db, db->begin, "BEGIN");
}

/* Sync the log (WAL) file, as sqlite's FULL does after a commit. */
static int sync_log (struct db *db)
{
    sqlite3_file *file = NULL;
    int rc;

    if (sqlite3_file_control (db->sq, "main", SQLITE_FCNTL_JOURNAL_POINTER,
                              &file)
            != SQLITE_OK
        || !file || !file->pMethods)
        return 0; /* no log open: nothing was written to one */
    if ((rc = file->pMethods->xSync (file, SQLITE_SYNC_NORMAL)) != SQLITE_OK)
        return fail (db, rc, "syncing the WAL");
    return 0;
}

static int commit (struct db *db, bool sync)
{
    int rc;

    reset_reads (db);
    if (step_once (db, db->commit, "COMMIT") < 0) {
        int saved_errno = errno;
        db_rollback (db);
        errno = saved_errno;
        return -1;
    }
    db->mark = db->nrecent; /* those rows are there now */
    if (db->walbuf && (rc = walbuf_flush (db->sq)) != SQLITE_OK)
        return fail (db, rc, "writing the WAL");
    if (sync && db->sync_mode >= 2)
        return sync_log (db);
    return 0;
}

int db_commit (struct db *db)
{
    return commit (db, true);
}

int db_commit_lazy (struct db *db)
{
    return commit (db, false);
}

void db_rollback (struct db *db)
{
    reset_reads (db);
    if (db_in_transaction (db))
        (void)sqlite3_exec (db->sq, "ROLLBACK", NULL, NULL, NULL);
    /* sqlite may have rolled back by itself, after an error: either way
     * the rows added since db_begin() are gone */
    recent_truncate (db, db->mark);
}

/* The row of a blob, or 0 if there is none (-1 on error). */
static sqlite3_int64 find (struct db *db, const void *digest, size_t digest_len,
                           const unsigned char *padded)
{
    struct recent *r;
    sqlite3_int64 id = 0;
    int rc;

    if ((r = recent_find (db, padded)))
        return r->id;
    sqlite3_bind_blob (db->find, 1, digest, (int)digest_len, SQLITE_STATIC);
    rc = sqlite3_step (db->find);
    if (rc == SQLITE_ROW)
        id = sqlite3_column_int64 (db->find, 0);
    sqlite3_reset (db->find);
    sqlite3_clear_bindings (db->find);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return fail (db, rc, "index lookup");
    return id;
}

/* Make room for n bytes in db->zbuf. */
static int zbuf_reserve (struct db *db, size_t n)
{
    if (n > db->zbuf_size) {
        void *p;
        if (n < 65536)
            n = 65536;
        if (!(p = realloc (db->zbuf, n))) {
            snprintf (db->errbuf, sizeof (db->errbuf), "out of memory");
            errno = ENOMEM;
            return -1;
        }
        db->zbuf = p;
        db->zbuf_size = n;
    }
    return 0;
}

/* Compress data into db->zbuf: its size, or 0 to store data as it is
 * (compression off, a small blob, no gain, or no memory for it). */
static size_t compress (struct db *db, const void *data, size_t len)
{
    size_t n;

    db->stats.bytes += len;
    if (!db->compress || len < COMPRESS_MIN)
        goto raw;
    if (!db->zc && !(db->zc = ZSTD_createCCtx ()))
        goto raw;
    if (zbuf_reserve (db, ZSTD_compressBound (len)) < 0)
        goto raw;
    n = ZSTD_compressCCtx (db->zc, db->zbuf, db->zbuf_size, data, len,
                           COMPRESS_LEVEL);
    if (ZSTD_isError (n) || n >= len)
        goto raw;
    db->stats.compressed++;
    db->stats.stored_bytes += n;
    return n;
raw:
    db->stats.stored_bytes += len;
    return 0;
}

/* Decompress a row's object of size bytes into db->zbuf. */
static int decompress (struct db *db, const void *z, size_t zlen,
                       sqlite3_int64 size)
{
    size_t n;

    if (size < 0 || (size_t)size > db_blob_limit (db)) {
        snprintf (db->errbuf, sizeof (db->errbuf),
                  "a row gives its size as %lld", (long long)size);
        errno = EIO;
        return -1;
    }
    if (zbuf_reserve (db, size) < 0)
        return -1;
    if (!db->zd && !(db->zd = ZSTD_createDCtx ())) {
        snprintf (db->errbuf, sizeof (db->errbuf), "out of memory");
        errno = ENOMEM;
        return -1;
    }
    n = ZSTD_decompressDCtx (db->zd, db->zbuf, db->zbuf_size, z, zlen);
    if (ZSTD_isError (n) || n != (size_t)size) {
        snprintf (db->errbuf, sizeof (db->errbuf),
                  "a compressed blob does not decompress to its size: %s",
                  ZSTD_isError (n) ? ZSTD_getErrorName (n) : "short");
        errno = EIO;
        return -1;
    }
    return 0;
}

int db_store (struct db *db, const void *digest, size_t digest_len,
              const void *data, size_t len)
{
    unsigned char padded[DIGEST_MAX];
    size_t zlen;
    int rc;

    reset_reads (db);
    if ((!data && len > 0) || pad_digest (db, padded, digest, digest_len) < 0) {
        errno = EINVAL;
        return -1;
    }
    if (len > db_blob_limit (db)) {
        snprintf (db->errbuf, sizeof (db->errbuf),
                  "blob of %zu bytes is over the database limit", len);
        errno = EFBIG;
        return -1;
    }
    /* Only the blobs indexed in memory are checked: a search of the
     * index on disk for every blob, to find it absent nearly every time,
     * cost a sixth of this module's time.  A blob stored again is a
     * second row until db_index() finds it in the index and drops it. */
    if (recent_find (db, padded))
        return 0; /* there already */
    sqlite3_bind_blob (db->store, 1, digest, (int)digest_len, SQLITE_STATIC);
    if ((zlen = compress (db, data, len)) > 0) {
        sqlite3_bind_blob64 (db->store, 2, db->zbuf, zlen, SQLITE_STATIC);
        sqlite3_bind_int64 (db->store, 3, (sqlite3_int64)len);
    }
    /* zeroblob for the empty blob: a NULL blob would violate NOT NULL */
    else if (len > 0)
        sqlite3_bind_blob64 (db->store, 2, data, len, SQLITE_STATIC);
    else
        sqlite3_bind_zeroblob (db->store, 2, 0);
    rc = sqlite3_step (db->store);
    sqlite3_reset (db->store);
    sqlite3_clear_bindings (db->store);
    if (rc != SQLITE_DONE)
        return fail (db, rc, "store");
    if (recent_add (db, padded, sqlite3_last_insert_rowid (db->sq)) < 0) {
        /* unfindable: the caller must roll back (the row goes with it) */
        return -1;
    }
    if (!db_in_transaction (db))
        db->mark = db->nrecent; /* committed by itself */
    return 0;
}

int db_load (struct db *db, const void *digest, size_t digest_len,
             const void **data, size_t *len)
{
    unsigned char padded[DIGEST_MAX];
    sqlite3_int64 id;
    int rc;

    reset_reads (db);
    if (pad_digest (db, padded, digest, digest_len) < 0)
        return -1;
    if ((id = find (db, digest, digest_len, padded)) < 0)
        return -1;
    if (id == 0) {
        snprintf (db->errbuf, sizeof (db->errbuf), "no such blob");
        errno = ENOENT;
        return -1;
    }
    sqlite3_bind_int64 (db->load, 1, id);
    rc = sqlite3_step (db->load);
    if (rc == SQLITE_DONE) {
        snprintf (db->errbuf, sizeof (db->errbuf),
                  "the index names row %lld, which is missing", (long long)id);
        errno = EIO;
        return -1;
    }
    if (rc != SQLITE_ROW)
        return fail (db, rc, "load");
    if (sqlite3_column_type (db->load, 1) != SQLITE_NULL) {
        sqlite3_int64 size = sqlite3_column_int64 (db->load, 1);
        const void *z = sqlite3_column_blob (db->load, 0);
        if (decompress (db, z, sqlite3_column_bytes (db->load, 0), size) < 0)
            return -1;
        if (len)
            *len = (size_t)size;
        if (data)
            *data = size > 0 ? db->zbuf : NULL;
        return 0;
    }
    if (len)
        *len = (size_t)sqlite3_column_bytes (db->load, 0);
    if (data) {
        *data = sqlite3_column_blob (db->load, 0);
        if (sqlite3_column_bytes (db->load, 0) == 0)
            *data = NULL;
    }
    return 0;
}

static int digest_cmp (const void *a, const void *b)
{
    return memcmp (((const struct recent *)a)->digest,
                   ((const struct recent *)b)->digest, DIGEST_MAX);
}

bool db_index_due (struct db *db)
{
    size_t due = (size_t)(db->max_id / RECENT_RATIO);

    if (due > RECENT_MAX)
        due = RECENT_MAX;
    return db->nrecent >= (due > db->index_min ? due : db->index_min);
}

int db_set_index_min (struct db *db, size_t n)
{
    if (!db || n == 0) {
        errno = EINVAL;
        return -1;
    }
    db->index_min = n;
    return 0;
}

size_t db_index_pending (struct db *db)
{
    return db->nrecent;
}

long long db_index_dropped (struct db *db)
{
    return db->dropped;
}

int db_index (struct db *db)
{
    sqlite3_int64 last = 0;
    long long dropped = 0;
    int rc, saved_errno;

    reset_reads (db);
    if (db_in_transaction (db)) {
        errno = EBUSY;
        return -1;
    }
    if (db->nrecent == 0)
        return 0;
    /* (not the last entry: after a failed fold they are out of order) */
    for (size_t i = 0; i < db->nrecent; i++) {
        if (db->recent[i].id > last)
            last = db->recent[i].id;
    }
    qsort (db->recent, db->nrecent, sizeof (*db->recent), digest_cmp);
    if (step_once (db, db->begin, "BEGIN") < 0)
        goto error;
    for (size_t i = 0; i < db->nrecent; i++) {
        sqlite3_bind_blob (db->idx_put, 1, db->recent[i].digest,
                           (int)db->digest_len, SQLITE_STATIC);
        sqlite3_bind_int64 (db->idx_put, 2, db->recent[i].id);
        rc = sqlite3_step (db->idx_put);
        sqlite3_reset (db->idx_put);
        if (rc != SQLITE_DONE) {
            fail (db, rc, "indexing");
            goto error;
        }
        if (sqlite3_changes (db->sq) == 0) { /* stored twice (db_store) */
            sqlite3_bind_int64 (db->drop, 1, db->recent[i].id);
            rc = sqlite3_step (db->drop);
            sqlite3_reset (db->drop);
            if (rc != SQLITE_DONE) {
                fail (db, rc, "indexing");
                goto error;
            }
            dropped++;
        }
    }
    sqlite3_clear_bindings (db->idx_put);
    sqlite3_bind_int64 (db->set_indexed, 1, last);
    rc = sqlite3_step (db->set_indexed);
    sqlite3_reset (db->set_indexed);
    if (rc != SQLITE_DONE) {
        fail (db, rc, "indexing");
        goto error;
    }
    if (db_commit (db) < 0)
        goto error_rolledback;
    db->nrecent = db->mark = 0;
    db->dropped += dropped;
    recent_reindex (db);
    return 0;
error:
    saved_errno = errno;
    if (db_in_transaction (db))
        (void)sqlite3_exec (db->sq, "ROLLBACK", NULL, NULL, NULL);
    errno = saved_errno;
error_rolledback:
    /* the entries stay in memory, in digest order now */
    recent_reindex (db);
    db->mark = db->nrecent;
    return -1;
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

void db_set_compression (struct db *db, bool on)
{
    db->compress = on;
}

bool db_compression (struct db *db)
{
    return db->compress;
}

const struct db_stats *db_stats (struct db *db)
{
    return &db->stats;
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
            /* FULL and EXTRA: sqlite runs NORMAL (in WAL mode: no sync
             * at commit, the WAL synced before a checkpoint) and
             * db_commit() syncs the WAL itself, so that db_commit_lazy()
             * can leave it out (sqlite refuses a change of the setting
             * inside a transaction) */
            snprintf (sql, sizeof (sql), "PRAGMA synchronous=%s",
                      i >= 2 ? "NORMAL" : modes[i]);
            if (exec (db, sql) < 0)
                return -1;
            db->sync_mode = (int)i;
            return 0;
        }
    }
    errno = EINVAL;
    return -1;
}

const char *db_synchronous (struct db *db)
{
    static const char *modes[] = {"OFF", "NORMAL", "FULL", "EXTRA"};

    return db->sync_mode >= 0 && db->sync_mode < 4 ? modes[db->sync_mode]
                                                   : "unknown";
}
