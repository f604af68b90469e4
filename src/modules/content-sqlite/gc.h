/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef CONTENT_SQLITE_GC_H
#define CONTENT_SQLITE_GC_H

/* Offline garbage collection of the content database (flux shutdown
 * --gc): every version of every KVS directory is kept by the content
 * store, so it grows with each commit (about 20 KB a job); what the KVS
 * can still reach is only what its checkpoint leads to.
 *
 * gc_run() copies that into a new file, PATH.gc-new, and renames it over
 * PATH.  The walk knows RFC 11 tree objects: the checkpoint's rootref is
 * a dir (or hdir); a dirref leads to a dir or hdir blob, a valref to raw
 * value blobs (never parsed), an inline dir or hdir is walked in place,
 * an hdir's buckets are entries like the others.  A blob the walk needs
 * and cannot find, or that is not a tree object where one is expected,
 * or a store without a checkpoint (nothing then says what is live),
 * stops it: PATH is left as it was.  The copy is written without fsync
 * and synced once before the rename, so a crash at any point leaves one
 * complete database at PATH.  The database must not be open elsewhere.
 *
 * gc_requested() / gc_request(): the marker file PATH.gc that asks for a
 * collection when the module next loads (written durably; removed by
 * gc_request(path, false) or once a collection was tried).
 */
#include <stdbool.h>

#include "libflux/flux.h"

struct gc_stats {
    long long objects_before; /* rows in the old file */
    long long objects_kept;   /* blobs copied */
    long long bytes_kept;     /* their size */
    long long file_before;    /* file sizes, bytes */
    long long file_after;
    double seconds;
};

int gc_run (const char *path, const char *hashtype, struct gc_stats *st,
            flux_error_t *error);

bool gc_requested (const char *path);
int gc_request (const char *path, bool on);

#endif /* !CONTENT_SQLITE_GC_H */
