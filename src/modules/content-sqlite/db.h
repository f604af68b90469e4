/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef CONTENT_SQLITE_DB_H
#define CONTENT_SQLITE_DB_H

/* The content database: one sqlite file holding blobs by digest and the
 * KVS checkpoint, in WAL mode with synchronous=FULL (a committed
 * transaction is on disk) and exclusive locking (one broker per file).
 *
 * Schema (version 1):
 *   meta (name TEXT PRIMARY KEY, value TEXT)   rows "version" = "1" and
 *                                              "hashtype" = e.g. "sha1"
 *   objects (hash BLOB PRIMARY KEY, object BLOB)
 *   checkpt (key TEXT PRIMARY KEY, value TEXT) key "kvs-primary": the
 *                                              checkpoint object (JSON)
 * A file of another schema version or hash type is refused.
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
/* Roll back if a transaction is open (sqlite may have rolled it back
 * itself after an error).  Never fails. */
void db_rollback (struct db *db);
bool db_in_transaction (struct db *db);

/* Store a blob under its digest (no change if present). */
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

/* Number of blobs stored. */
long long db_object_count (struct db *db);

/* The largest blob sqlite accepts. */
size_t db_blob_limit (struct db *db);

/* For tests: cap the database at npages pages (sqlite max_page_count),
 * to make it "full". */
int db_set_max_pages (struct db *db, long npages);

#endif /* !CONTENT_SQLITE_DB_H */
