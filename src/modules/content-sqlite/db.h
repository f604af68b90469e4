/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef CONTENT_SQLITE_DB_H
#define CONTENT_SQLITE_DB_H

/* The content database: one sqlite file holding blobs by digest and the
 * KVS checkpoint, in WAL mode with synchronous=FULL (a committed
 * transaction is on disk) and exclusive locking (one broker per file).
 *
 * Schema (version 3):
 *   meta (name TEXT PRIMARY KEY, value TEXT)   rows "version" = "2",
 *                                              "hashtype" = e.g. "sha1",
 *                                              "indexed" = the last row
 *                                              of objects in idx
 *   objects (id INTEGER PRIMARY KEY, hash BLOB, object BLOB, size INTEGER)
 *                                              blobs in the order stored;
 *                                              size NULL: object is the
 *                                              blob, else a zstd frame of
 *                                              the blob's size bytes
 *   idx (hash BLOB PRIMARY KEY, id INTEGER)    digest -> row, for the
 *                                              rows up to "indexed"
 *   checkpt (key TEXT PRIMARY KEY, value TEXT) key "kvs-primary": the
 *                                              checkpoint object (JSON)
 * The rows past "indexed" are indexed in memory (read back at open) until
 * db_index() folds them into idx: see db.c for why.  A version 1 file
 * (objects keyed by hash) or 2 (no size column) is upgraded when opened;
 * a file of another version or hash type is refused.
 *
 * Writes happen inside db_begin() ... db_commit() (or db_rollback()).
 * Errors: -1 with errno ENOSPC (database or disk full), EFBIG (blob over
 * sqlite's length limit), ENOENT (not found), EINVAL (bad argument or
 * refused file), EIO (anything else); db_errstr() says more.
 * Not thread-safe: one thread per db.
 */
#include <stdbool.h>
#include <stddef.h>

#include "libflux/flux.h"

struct db;

/* Open or create the database at path for blobs of hashtype.  truncate:
 * delete any existing file first. */
struct db *db_open (const char *path, const char *hashtype, bool truncate,
                    flux_error_t *error);

/* sqlite's synchronous setting: "OFF", "NORMAL" (in WAL mode a commit
 * is written to the log but not fsync'd: it survives the death of the
 * process, not of the machine), "FULL" (the default: fsync each commit)
 * or "EXTRA".  -1/EINVAL for another mode. */
int db_set_synchronous (struct db *db, const char *mode);
/* The synchronous setting in force ("FULL"...). */
const char *db_synchronous (struct db *db);

/* Close (a transaction still open is rolled back).  NULL-safe, preserves
 * errno. */
void db_close (struct db *db);

/* The text of the last error. */
const char *db_errstr (struct db *db);

int db_begin (struct db *db);
int db_commit (struct db *db);
/* Commit without the sync a FULL or EXTRA setting does per commit: the
 * transaction survives the death of the process at once, and of the
 * machine once a later db_commit() returns (its sync of the WAL covers
 * everything before it) or the WAL is checkpointed.  Under NORMAL or
 * OFF this is db_commit(). */
int db_commit_lazy (struct db *db);
/* Roll back if a transaction is open (sqlite may have rolled it back
 * itself after an error).  Never fails. */
void db_rollback (struct db *db);
bool db_in_transaction (struct db *db);

/* Blobs of 256 bytes or more are stored compressed (zstd) unless
 * compression is off (db_set_compression); loads read either kind, so
 * the setting can change at any time. */
void db_set_compression (struct db *db, bool on);
bool db_compression (struct db *db);

/* Since db_open(): the bytes of the blobs db_store() wrote (not those it
 * found there already), the bytes that took in the file, and how many
 * blobs it wrote compressed. */
struct db_stats {
    long long bytes;
    long long stored_bytes;
    long long compressed;
};
const struct db_stats *db_stats (struct db *db);

/* Store a blob under its digest (see db_index_dropped()). */
int db_store (struct db *db, const void *digest, size_t digest_len,
              const void *data, size_t len);

/* Load a blob: *data (NULL for the empty blob) stays valid until the
 * next call on db.  ENOENT if absent. */
int db_load (struct db *db, const void *digest, size_t digest_len,
             const void **data, size_t *len);

/* Replace the checkpoint with value (a JSON string). */
int db_checkpoint_put (struct db *db, const char *value);

/* The checkpoint (JSON text, valid until the next call), ENOENT if none. */
int db_checkpoint_get (struct db *db, const char **value);

/* The WAL is not checkpointed into the database file by the commits
 * themselves (that would delay them): the caller does it with
 * db_checkpoint() when it suits it, e.g. once db_wal_size() (bytes,
 * an upper bound) is over some megabytes.  EBUSY inside a transaction.
 */
size_t db_wal_size (struct db *db);
int db_checkpoint (struct db *db);

/* Fold the blobs indexed only in memory into the index on disk, in one
 * transaction (outside any other: EBUSY).  db_index_due() says when:
 * once there are thousands, so that each page of the index is written
 * once for many blobs, not once for each.  On failure they stay in
 * memory and all is as before. */
bool db_index_due (struct db *db);
/* The floor of db_index_due(): 16384 unless set (tests set it low). */
int db_set_index_min (struct db *db, size_t n);
size_t db_index_pending (struct db *db);
int db_index (struct db *db);
/* db_store() looks for a blob only among those indexed in memory, so a
 * blob stored again once it is in the index on disk is a second row,
 * until db_index() drops it: how many it dropped. */
long long db_index_dropped (struct db *db);

/* Number of blobs stored (a blob stored twice counts twice until
 * db_index() drops the second). */
long long db_object_count (struct db *db);

/* The largest blob sqlite accepts. */
size_t db_blob_limit (struct db *db);

/* For tests: cap the database at npages pages (sqlite max_page_count),
 * to make it "full". */
int db_set_max_pages (struct db *db, long npages);

#endif /* !CONTENT_SQLITE_DB_H */
