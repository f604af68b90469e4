/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* gc.c - copy what the KVS checkpoint reaches into a new database and
 * put it in place of the old one (gc.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "libcontent/blobref.h"
#include "libkvs/treeobj.h"
#include "libutil/monotime.h"

#include "db.h"
#include "gc.h"

/* blobs copied per transaction of the new file */
#define GC_TXN_BLOBS 8192

enum { K_TREE, K_RAW };

struct todo {
    char ref[BLOBREF_MAX_STRING_SIZE];
    int kind;
};

/* The digests of the dirs walked already: an open-addressing set (a
 * digest is its own hash; the all-zero digest, which no hash gives,
 * marks a free slot).  A blob copied as a raw value may be a dir
 * elsewhere (same bytes), so "copied" alone does not say "walked". */
struct dset {
    unsigned char *slot; /* size * hash_size bytes; all zero: free */
    size_t size, count;
    int hash_size;
};

static size_t dset_index (const struct dset *d, const unsigned char *digest)
{
    size_t h;

    memcpy (&h, digest, sizeof (h));
    return h & (d->size - 1);
}

static bool dset_free_slot (const struct dset *d, size_t i)
{
    const unsigned char *p = d->slot + i * d->hash_size;

    for (int k = 0; k < d->hash_size; k++) {
        if (p[k])
            return false;
    }
    return true;
}

/* Add digest: 1 if added, 0 if present, -1 out of memory. */
static int dset_add (struct dset *d, const unsigned char *digest)
{
    size_t i;

    if ((d->count + 1) * 2 > d->size) {
        struct dset n
            = {.size = d->size ? d->size * 2 : 4096, .hash_size = d->hash_size};
        if (!(n.slot = calloc (n.size, n.hash_size)))
            return -1;
        for (i = 0; i < d->size; i++) {
            if (!dset_free_slot (d, i))
                (void)dset_add (&n, d->slot + i * d->hash_size);
        }
        free (d->slot);
        *d = n;
    }
    for (i = dset_index (d, digest);; i = (i + 1) & (d->size - 1)) {
        unsigned char *p = d->slot + i * d->hash_size;
        if (dset_free_slot (d, i)) {
            memcpy (p, digest, d->hash_size);
            d->count++;
            return 1;
        }
        if (!memcmp (p, digest, d->hash_size))
            return 0;
    }
}

struct walk {
    struct db *old, *new;
    int hash_size;
    struct dset walked;
    struct todo *stack;
    int n, max;
    int intxn; /* blobs in the open transaction of new */
    struct gc_stats *st;
    flux_error_t *error;
};

static int push (struct walk *w, const char *ref, int kind)
{
    if (!ref || blobref_validate (ref) < 0)
        return errprintf (w->error, "a tree object holds a malformed blobref");
    if (w->n == w->max) {
        int n = w->max ? w->max * 2 : 1024;
        struct todo *v = realloc (w->stack, n * sizeof (*v));
        if (!v)
            return errprintf (w->error, "out of memory");
        w->stack = v;
        w->max = n;
    }
    snprintf (w->stack[w->n].ref, sizeof (w->stack[0].ref), "%s", ref);
    w->stack[w->n++].kind = kind;
    return 0;
}

static int walk_obj (struct walk *w, const json_t *obj);

/* An entry of a dir or an hdir bucket. */
static int walk_entry (struct walk *w, const json_t *e)
{
    int kind;

    if (json_is_null (e) || treeobj_is_val (e) || treeobj_is_symlink (e))
        return 0;
    if (treeobj_is_dir (e) || treeobj_is_hdir (e))
        return walk_obj (w, e);
    if (treeobj_is_dirref (e))
        kind = K_TREE;
    else if (treeobj_is_valref (e))
        kind = K_RAW;
    else
        return errprintf (w->error, "unknown tree object type");
    for (int i = 0; i < treeobj_get_count (e); i++) {
        if (push (w, treeobj_get_blobref (e, i), kind) < 0)
            return -1;
    }
    return 0;
}

static int walk_obj (struct walk *w, const json_t *obj)
{
    if (treeobj_is_hdir (obj)) {
        json_t *b = treeobj_hdir_get_buckets (obj);
        size_t i;
        json_t *e;
        json_array_foreach (b, i, e)
        {
            if (walk_entry (w, e) < 0)
                return -1;
        }
        return 0;
    }
    if (treeobj_is_dir (obj)) {
        const char *name;
        json_t *e;
        json_object_foreach (treeobj_get_data (obj), name, e)
        {
            if (walk_entry (w, e) < 0)
                return -1;
        }
        return 0;
    }
    return errprintf (w->error, "a directory is a %s",
                      treeobj_get_type (obj) ? treeobj_get_type (obj)
                                             : "not a tree object");
}

/* Copy one blob into the new file (once), and walk it (once) if it is a
 * dir. */
static int copy (struct walk *w, const struct todo *t)
{
    unsigned char digest[BLOBREF_MAX_DIGEST_SIZE];
    const void *data;
    size_t len;
    void *buf = NULL;
    bool copied;
    int rc = -1;

    if (blobref_strtohash (t->ref, digest, sizeof (digest)) != w->hash_size)
        return errprintf (w->error, "%s: not a blobref of this store", t->ref);
    if (t->kind == K_TREE) {
        int added = dset_add (&w->walked, digest);
        if (added < 0)
            return errprintf (w->error, "out of memory");
        if (added == 0)
            return 0; /* walked already */
    }
    copied = db_load (w->new, digest, w->hash_size, &data, &len) == 0;
    if (copied && t->kind == K_RAW)
        return 0;
    if (!copied && db_load (w->old, digest, w->hash_size, &data, &len) < 0)
        return errprintf (w->error, "%s: %s", t->ref,
                          errno == ENOENT ? "missing from the store"
                                          : db_errstr (w->old));
    /* data lives until the next call on its db: the walk needs it longer */
    if (len > 0 && !(buf = malloc (len)))
        return errprintf (w->error, "out of memory");
    if (len > 0)
        memcpy (buf, data, len);
    if (!copied) {
        if (db_store (w->new, digest, w->hash_size, buf, len) < 0) {
            errprintf (w->error, "writing %s: %s", t->ref, db_errstr (w->new));
            goto done;
        }
        w->st->objects_kept++;
        w->st->bytes_kept += len;
    }
    if (t->kind == K_TREE) {
        json_t *obj = treeobj_decodeb (buf, len);
        if (!obj) {
            errprintf (w->error, "%s: not a tree object", t->ref);
            goto done;
        }
        rc = walk_obj (w, obj);
        json_decref (obj);
        if (rc < 0)
            goto done;
    }
    if (++w->intxn == GC_TXN_BLOBS) {
        w->intxn = 0;
        if (db_commit (w->new) < 0
            || (db_index_due (w->new) && db_index (w->new) < 0)
            || db_begin (w->new) < 0) {
            errprintf (w->error, "%s", db_errstr (w->new));
            rc = -1;
            goto done;
        }
    }
    rc = 0;
done:
    free (buf);
    return rc;
}

static long long file_size (const char *path)
{
    struct stat sb;
    return stat (path, &sb) < 0 ? 0 : (long long)sb.st_size;
}

/* Whether the WAL file of the database at path holds anything. */
static bool wal_pending (const char *path)
{
    char *wal;
    bool pending;

    if (asprintf (&wal, "%s-wal", path) < 0)
        return true;
    pending = file_size (wal) > 0;
    free (wal);
    return pending;
}

static int fsync_path (const char *path, int flags)
{
    int fd = open (path, flags);
    int rc;

    if (fd < 0)
        return -1;
    rc = fsync (fd);
    close (fd);
    return rc;
}

/* The directory of path, for fsync after the rename. */
static char *dir_of (const char *path)
{
    const char *slash = strrchr (path, '/');

    if (!slash)
        return strdup (".");
    if (slash == path)
        return strdup ("/");
    return strndup (path, slash - path);
}

/* Copy what the checkpoint reaches from old into new.  The checkpoint
 * itself goes last, in the same transaction as the last blobs. */
static int copy_reachable (struct walk *w)
{
    const char *text, *rootref;
    char *cp = NULL;
    json_t *o = NULL;
    int rc = -1;

    if (db_checkpoint_get (w->old, &text) < 0) {
        /* without one nothing says what is live: blobs stored with
         * flux content store alone, say, are not garbage to drop */
        if (errno == ENOENT)
            return errprintf (w->error, "no KVS checkpoint in the store: "
                                        "nothing says what to keep");
        return errprintf (w->error, "checkpoint: %s", db_errstr (w->old));
    }
    if (!(cp = strdup (text)))
        return errprintf (w->error, "out of memory");
    if (!(o = json_loads (cp, 0, NULL))
        || json_unpack (o, "{s:s}", "rootref", &rootref) < 0) {
        errprintf (w->error, "the checkpoint has no rootref");
        goto done;
    }
    if (db_begin (w->new) < 0) {
        errprintf (w->error, "%s", db_errstr (w->new));
        goto done;
    }
    if (push (w, rootref, K_TREE) < 0)
        goto done;
    while (w->n > 0) {
        struct todo t = w->stack[--w->n];
        if (copy (w, &t) < 0)
            goto done;
    }
    if (db_checkpoint_put (w->new, cp) < 0 || db_commit (w->new) < 0
        || (db_index_pending (w->new) > 0 && db_index (w->new) < 0)) {
        errprintf (w->error, "%s", db_errstr (w->new));
        goto done;
    }
    rc = 0;
done:
    if (rc < 0)
        db_rollback (w->new);
    json_decref (o);
    free (cp);
    return rc;
}

int gc_run (const char *path, const char *hashtype, struct gc_stats *st,
            flux_error_t *error)
{
    struct walk w = {.st = st, .error = error};
    char *tmp = NULL, *dir = NULL, *side = NULL;
    double t0 = monotime ();
    int rc = -1;

    memset (st, 0, sizeof (*st));
    if ((w.hash_size = blobref_hashtype_size (hashtype)) < 0)
        return errprintf (error, "unknown hash type %s", hashtype);
    w.walked.hash_size = w.hash_size;
    if (asprintf (&tmp, "%s.gc-new", path) < 0 || !(dir = dir_of (path))) {
        errprintf (error, "out of memory");
        goto done;
    }
    st->file_before = file_size (path);
    if (!(w.old = db_open (path, hashtype, false, error))
        || !(w.new = db_open (tmp, hashtype, true, error)))
        goto done;
    st->objects_before = db_object_count (w.old);
    if (db_set_synchronous (w.new, "OFF") < 0) {
        errprintf (error, "%s", db_errstr (w.new));
        goto done;
    }
    if (copy_reachable (&w) < 0)
        goto done;
    db_close (w.new);
    w.new = NULL;
    db_close (w.old); /* its WAL is folded in and removed */
    w.old = NULL;
    /* a log left with frames holds what the file lacks: the new file
     * would be incomplete, or the old one's log replayed onto it */
    if (wal_pending (tmp) || wal_pending (path)) {
        errprintf (error, "a database was not closed cleanly (its -wal file "
                          "is not empty)");
        goto done;
    }
    for (int i = 0; i < 2; i++) {
        free (side);
        if (asprintf (&side, "%s-%s", path, i ? "shm" : "wal") < 0) {
            side = NULL;
            errprintf (error, "out of memory");
            goto done;
        }
        if (unlink (side) < 0 && errno != ENOENT) {
            errprintf (error, "%s: %s", side, strerror (errno));
            goto done;
        }
    }
    if (fsync_path (tmp, O_RDONLY) < 0 || rename (tmp, path) < 0
        || fsync_path (dir, O_RDONLY | O_DIRECTORY) < 0) {
        errprintf (error, "putting %s in place: %s", tmp, strerror (errno));
        goto done;
    }
    st->file_after = file_size (path);
    rc = 0;
done:
    db_close (w.new);
    db_close (w.old);
    if (rc < 0 && tmp) {
        int saved_errno = errno;
        (void)unlink (tmp);
        free (side);
        if (asprintf (&side, "%s-wal", tmp) >= 0)
            (void)unlink (side);
        errno = saved_errno;
    }
    st->seconds = monotime () - t0;
    free (w.stack);
    free (w.walked.slot);
    free (side);
    free (dir);
    free (tmp);
    return rc;
}

static char *marker (const char *path)
{
    char *m;
    return asprintf (&m, "%s.gc", path) < 0 ? NULL : m;
}

bool gc_requested (const char *path)
{
    char *m = marker (path);
    bool yes = m && access (m, F_OK) == 0;

    free (m);
    return yes;
}

int gc_request (const char *path, bool on)
{
    char *m = marker (path), *dir = dir_of (path);
    int rc = -1, fd;

    if (!m || !dir) {
        errno = ENOMEM;
        goto done;
    }
    if (on) {
        if ((fd = open (m, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) < 0)
            goto done;
        if (fsync (fd) < 0) {
            close (fd);
            goto done;
        }
        close (fd);
    }
    else if (unlink (m) < 0 && errno != ENOENT)
        goto done;
    rc = fsync_path (dir, O_RDONLY | O_DIRECTORY);
done:
    free (m);
    free (dir);
    return rc;
}
