/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef CONTENT_SQLITE_WALBUF_H
#define CONTENT_SQLITE_WALBUF_H

/* walbuf - an sqlite VFS that writes each commit to the WAL in one call.
 *
 * sqlite appends a commit to its write-ahead log as two writes per page
 * (a 24-byte frame header, then the page), so a commit of 12 pages costs
 * 24 system calls, most of them small unaligned writes.  This VFS wraps
 * the default one and, for WAL files only, gathers the writes of a
 * commit in memory and passes them on as one write (in pieces of 96 KiB
 * at most: the unix VFS takes less than 128 KiB per call):
 *   - when the commit frame is complete (its header says "commit"), so a
 *     commit reaches the operating system inside sqlite's COMMIT whatever
 *     the synchronous setting, and a failing write fails the COMMIT;
 *   - after each COMMIT, when the caller calls walbuf_flush() (db.c does);
 *   - before any other operation on the file (sync, read, size, truncate,
 *     locks, close ...), so sqlite never sees the difference;
 *   - when the gathered writes pass WALBUF_MAX bytes, or a write does not
 *     continue or overwrite what is gathered.
 * Other files (the database itself) go straight to the default VFS.
 *
 * walbuf_vfs_acquire() registers the VFS (not as the default) on first
 * use and returns its name for sqlite3_open_v2(); each successful call
 * takes a reference that walbuf_vfs_release() drops, after the sqlite
 * connection using it is closed.  The last release unregisters it (so a
 * module that uses it can be unloaded).  Both are thread-safe.
 */

#include <sqlite3.h>

#define WALBUF_MAX (4u << 20)

/* The VFS name, or NULL (errno ENOMEM, or ENOENT: no default VFS). */
const char *walbuf_vfs_acquire (void);
void walbuf_vfs_release (void);

/* Write what is gathered for the WAL of sq's main database, if it is
 * opened through this VFS (call after COMMIT: sqlite may rewrite frame
 * headers after the commit frame, with no sync in NORMAL or OFF mode).
 * Returns an sqlite result code. */
int walbuf_flush (sqlite3 *sq);

#endif /* !CONTENT_SQLITE_WALBUF_H */
