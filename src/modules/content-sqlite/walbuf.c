/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* walbuf.c - an sqlite VFS that gathers the writes of a WAL commit into
 * one write (walbuf.h).  Every method forwards to the default VFS; only
 * xWrite on a WAL file holds data back, and every other method on that
 * file hands what it holds to the file system first.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "walbuf.h"

#define VFS_NAME "flux-walbuf"
#define FRAME_HEADER 24 /* bytes of a WAL frame header (sqlite's format) */
#define MIN_BUF ((size_t)64 << 10)
/* sqlite's unix VFS writes at most 128 KiB - 1 bytes per call */
#define WRITE_CHUNK ((size_t)96 << 10)

struct wfile {
    sqlite3_file base;          /* base.pMethods = &methods */
    sqlite3_io_methods methods; /* the template, at the real file's version */
    sqlite3_file *real;         /* the default VFS's file (after this struct) */
    bool wal;                   /* gather writes (a WAL file) */
    bool commit;                /* the frame being written ends a commit */
    unsigned char *buf; /* gathered writes, for offsets off .. off+len */
    size_t len;
    size_t size;
    sqlite3_int64 off;
};

/* struct wfile rounded up, so the real file that follows is aligned */
#define WFILE_SIZE ((sizeof (struct wfile) + 15) & ~(size_t)15)

static pthread_mutex_t vfs_lock = PTHREAD_MUTEX_INITIALIZER;
static sqlite3_vfs vfs;
static int vfs_refs;

static sqlite3_vfs *base_vfs (sqlite3_vfs *v)
{
    return v->pAppData;
}

/* Hand the gathered writes to the file system. */
static int flush (struct wfile *f)
{
    int rc = SQLITE_OK;

    if (f->len > 0) {
        size_t done = 0;
        while (done < f->len && rc == SQLITE_OK) {
            size_t n
                = f->len - done < WRITE_CHUNK ? f->len - done : WRITE_CHUNK;
            rc = f->real->pMethods->xWrite (f->real, f->buf + done, (int)n,
                                            f->off + (sqlite3_int64)done);
            done += n;
        }
        f->len = 0;
    }
    f->commit = false;
    return rc;
}

/* Room for n more bytes; false if the buffer cannot grow. */
static bool reserve (struct wfile *f, size_t n)
{
    size_t size = f->size ? f->size : MIN_BUF;
    unsigned char *p;

    if (f->len + n <= f->size)
        return true;
    while (size < f->len + n)
        size *= 2;
    if (!(p = realloc (f->buf, size)))
        return false;
    f->buf = p;
    f->size = size;
    return true;
}

static int f_close (sqlite3_file *file)
{
    struct wfile *f = (struct wfile *)file;
    int rc = flush (f);
    int rc2 = f->real->pMethods->xClose (f->real);

    free (f->buf);
    f->buf = NULL;
    f->size = 0;
    return rc != SQLITE_OK ? rc : rc2;
}

static int f_read (sqlite3_file *file, void *data, int amt, sqlite3_int64 ofs)
{
    struct wfile *f = (struct wfile *)file;
    int rc = flush (f);

    return rc != SQLITE_OK ? rc
                           : f->real->pMethods->xRead (f->real, data, amt, ofs);
}

static int f_write (sqlite3_file *file, const void *data, int amt,
                    sqlite3_int64 ofs)
{
    struct wfile *f = (struct wfile *)file;
    sqlite3_int64 end = f->off + (sqlite3_int64)f->len;
    int rc;

    if (!f->wal || amt <= 0 || (size_t)amt > WALBUF_MAX) {
        if ((rc = flush (f)) != SQLITE_OK)
            return rc;
        return f->real->pMethods->xWrite (f->real, data, amt, ofs);
    }
    if (f->len > 0 && ofs >= f->off && ofs + amt <= end)
        /* sqlite rewrites a frame of the commit it is writing */
        memcpy (f->buf + (ofs - f->off), data, (size_t)amt);
    else {
        if (f->len > 0 && (ofs != end || f->len + (size_t)amt > WALBUF_MAX)
            && (rc = flush (f)) != SQLITE_OK)
            return rc;
        if (!reserve (f, (size_t)amt)) {
            if ((rc = flush (f)) != SQLITE_OK)
                return rc;
            return f->real->pMethods->xWrite (f->real, data, amt, ofs);
        }
        if (f->len == 0)
            f->off = ofs;
        memcpy (f->buf + f->len, data, (size_t)amt);
        f->len += (size_t)amt;
    }
    if (amt == FRAME_HEADER) {
        /* bytes 4-7 of a frame header: the database size in pages after
         * a commit, zero in the other frames */
        const unsigned char *h = data;
        f->commit = (h[4] | h[5] | h[6] | h[7]) != 0;
        return SQLITE_OK;
    }
    return f->commit ? flush (f) : SQLITE_OK;
}

static int f_truncate (sqlite3_file *file, sqlite3_int64 size)
{
    struct wfile *f = (struct wfile *)file;
    int rc = flush (f);

    return rc != SQLITE_OK ? rc : f->real->pMethods->xTruncate (f->real, size);
}

static int f_sync (sqlite3_file *file, int flags)
{
    struct wfile *f = (struct wfile *)file;
    int rc = flush (f);

    return rc != SQLITE_OK ? rc : f->real->pMethods->xSync (f->real, flags);
}

static int f_file_size (sqlite3_file *file, sqlite3_int64 *size)
{
    struct wfile *f = (struct wfile *)file;
    int rc = flush (f);

    return rc != SQLITE_OK ? rc : f->real->pMethods->xFileSize (f->real, size);
}

static int f_lock (sqlite3_file *file, int level)
{
    struct wfile *f = (struct wfile *)file;
    int rc = flush (f);

    return rc != SQLITE_OK ? rc : f->real->pMethods->xLock (f->real, level);
}

static int f_unlock (sqlite3_file *file, int level)
{
    struct wfile *f = (struct wfile *)file;
    int rc = flush (f);

    return rc != SQLITE_OK ? rc : f->real->pMethods->xUnlock (f->real, level);
}

static int f_check_reserved_lock (sqlite3_file *file, int *out)
{
    struct wfile *f = (struct wfile *)file;
    int rc = flush (f);

    return rc != SQLITE_OK
               ? rc
               : f->real->pMethods->xCheckReservedLock (f->real, out);
}

static int f_file_control (sqlite3_file *file, int op, void *arg)
{
    struct wfile *f = (struct wfile *)file;
    int rc = flush (f);

    return rc != SQLITE_OK ? rc
                           : f->real->pMethods->xFileControl (f->real, op, arg);
}

static int f_sector_size (sqlite3_file *file)
{
    struct wfile *f = (struct wfile *)file;
    return f->real->pMethods->xSectorSize (f->real);
}

static int f_device_characteristics (sqlite3_file *file)
{
    struct wfile *f = (struct wfile *)file;
    return f->real->pMethods->xDeviceCharacteristics (f->real);
}

/* Version 2: shared memory (of the database file, never a WAL file) */

static int f_shm_map (sqlite3_file *file, int pg, int pgsz, int extend,
                      void volatile **pp)
{
    struct wfile *f = (struct wfile *)file;
    return f->real->pMethods->xShmMap (f->real, pg, pgsz, extend, pp);
}

static int f_shm_lock (sqlite3_file *file, int offset, int n, int flags)
{
    struct wfile *f = (struct wfile *)file;
    return f->real->pMethods->xShmLock (f->real, offset, n, flags);
}

static void f_shm_barrier (sqlite3_file *file)
{
    struct wfile *f = (struct wfile *)file;
    f->real->pMethods->xShmBarrier (f->real);
}

static int f_shm_unmap (sqlite3_file *file, int delete_flag)
{
    struct wfile *f = (struct wfile *)file;
    return f->real->pMethods->xShmUnmap (f->real, delete_flag);
}

/* Version 3: memory-mapped reads */

static int f_fetch (sqlite3_file *file, sqlite3_int64 ofs, int amt, void **pp)
{
    struct wfile *f = (struct wfile *)file;
    int rc = flush (f);

    return rc != SQLITE_OK ? rc
                           : f->real->pMethods->xFetch (f->real, ofs, amt, pp);
}

static int f_unfetch (sqlite3_file *file, sqlite3_int64 ofs, void *p)
{
    struct wfile *f = (struct wfile *)file;
    return f->real->pMethods->xUnfetch (f->real, ofs, p);
}

static const sqlite3_io_methods methods_template = {
    .iVersion = 3,
    .xClose = f_close,
    .xRead = f_read,
    .xWrite = f_write,
    .xTruncate = f_truncate,
    .xSync = f_sync,
    .xFileSize = f_file_size,
    .xLock = f_lock,
    .xUnlock = f_unlock,
    .xCheckReservedLock = f_check_reserved_lock,
    .xFileControl = f_file_control,
    .xSectorSize = f_sector_size,
    .xDeviceCharacteristics = f_device_characteristics,
    .xShmMap = f_shm_map,
    .xShmLock = f_shm_lock,
    .xShmBarrier = f_shm_barrier,
    .xShmUnmap = f_shm_unmap,
    .xFetch = f_fetch,
    .xUnfetch = f_unfetch,
};

/* The VFS: open wraps, the rest forwards to the default VFS */

static int v_open (sqlite3_vfs *v, const char *name, sqlite3_file *file,
                   int flags, int *out_flags)
{
    struct wfile *f = (struct wfile *)file;
    sqlite3_vfs *base = base_vfs (v);
    int rc;

    memset (f, 0, sizeof (*f));
    f->real = (sqlite3_file *)((char *)f + WFILE_SIZE);
    f->real->pMethods = NULL;
    rc = base->xOpen (base, name, f->real, flags, out_flags);
    if (!f->real->pMethods) /* nothing to close */
        return rc != SQLITE_OK ? rc : SQLITE_CANTOPEN;
    f->methods = methods_template;
    if (f->real->pMethods->iVersion < f->methods.iVersion)
        f->methods.iVersion = f->real->pMethods->iVersion;
    f->wal = (flags & SQLITE_OPEN_WAL) != 0;
    f->base.pMethods = &f->methods;
    return rc;
}

static int v_delete (sqlite3_vfs *v, const char *name, int sync_dir)
{
    sqlite3_vfs *base = base_vfs (v);
    return base->xDelete (base, name, sync_dir);
}

static int v_access (sqlite3_vfs *v, const char *name, int flags, int *out)
{
    sqlite3_vfs *base = base_vfs (v);
    return base->xAccess (base, name, flags, out);
}

static int v_full_pathname (sqlite3_vfs *v, const char *name, int n, char *out)
{
    sqlite3_vfs *base = base_vfs (v);
    return base->xFullPathname (base, name, n, out);
}

static void *v_dlopen (sqlite3_vfs *v, const char *name)
{
    sqlite3_vfs *base = base_vfs (v);
    return base->xDlOpen (base, name);
}

static void v_dlerror (sqlite3_vfs *v, int n, char *msg)
{
    sqlite3_vfs *base = base_vfs (v);
    base->xDlError (base, n, msg);
}

static void (*v_dlsym (sqlite3_vfs *v, void *p, const char *sym)) (void)
{
    sqlite3_vfs *base = base_vfs (v);
    return base->xDlSym (base, p, sym);
}

static void v_dlclose (sqlite3_vfs *v, void *p)
{
    sqlite3_vfs *base = base_vfs (v);
    base->xDlClose (base, p);
}

static int v_randomness (sqlite3_vfs *v, int n, char *out)
{
    sqlite3_vfs *base = base_vfs (v);
    return base->xRandomness (base, n, out);
}

static int v_sleep (sqlite3_vfs *v, int usec)
{
    sqlite3_vfs *base = base_vfs (v);
    return base->xSleep (base, usec);
}

static int v_current_time (sqlite3_vfs *v, double *t)
{
    sqlite3_vfs *base = base_vfs (v);
    return base->xCurrentTime (base, t);
}

static int v_get_last_error (sqlite3_vfs *v, int n, char *out)
{
    sqlite3_vfs *base = base_vfs (v);
    return base->xGetLastError (base, n, out);
}

static int v_current_time_int64 (sqlite3_vfs *v, sqlite3_int64 *t)
{
    sqlite3_vfs *base = base_vfs (v);
    return base->xCurrentTimeInt64 (base, t);
}

const char *walbuf_vfs_acquire (void)
{
    const char *name = NULL;
    sqlite3_vfs *base;

    pthread_mutex_lock (&vfs_lock);
    if (vfs_refs > 0) {
        vfs_refs++;
        name = VFS_NAME;
    }
    else if (sqlite3_initialize () != SQLITE_OK)
        errno = ENOMEM;
    else if (!(base = sqlite3_vfs_find (NULL)))
        errno = ENOENT;
    else {
        memset (&vfs, 0, sizeof (vfs));
        vfs.iVersion = 2; /* no system call overrides */
        vfs.szOsFile = (int)WFILE_SIZE + base->szOsFile;
        vfs.mxPathname = base->mxPathname;
        vfs.zName = VFS_NAME;
        vfs.pAppData = base;
        vfs.xOpen = v_open;
        vfs.xDelete = v_delete;
        vfs.xAccess = v_access;
        vfs.xFullPathname = v_full_pathname;
        vfs.xDlOpen = v_dlopen;
        vfs.xDlError = v_dlerror;
        vfs.xDlSym = v_dlsym;
        vfs.xDlClose = v_dlclose;
        vfs.xRandomness = v_randomness;
        vfs.xSleep = v_sleep;
        vfs.xCurrentTime = v_current_time;
        vfs.xGetLastError = v_get_last_error;
        vfs.xCurrentTimeInt64 = base->iVersion >= 2 && base->xCurrentTimeInt64
                                    ? v_current_time_int64
                                    : NULL;
        if (sqlite3_vfs_register (&vfs, 0) != SQLITE_OK)
            errno = ENOMEM;
        else {
            vfs_refs = 1;
            name = VFS_NAME;
        }
    }
    pthread_mutex_unlock (&vfs_lock);
    return name;
}

int walbuf_flush (sqlite3 *sq)
{
    sqlite3_file *file = NULL;

    if (sqlite3_file_control (sq, "main", SQLITE_FCNTL_JOURNAL_POINTER, &file)
            != SQLITE_OK
        || !file || !file->pMethods || file->pMethods->xClose != f_close)
        return SQLITE_OK;
    return flush ((struct wfile *)file);
}

void walbuf_vfs_release (void)
{
    pthread_mutex_lock (&vfs_lock);
    if (vfs_refs > 0 && --vfs_refs == 0)
        (void)sqlite3_vfs_unregister (&vfs);
    pthread_mutex_unlock (&vfs_lock);
}
