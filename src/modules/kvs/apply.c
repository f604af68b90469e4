/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* apply.c - apply commits to a copy-on-write root (see apply.h).
 *
 * Ownership: the working tree mixes directories copied by this batch
 * ("owned": private, mutable) with objects shared with the cache or with
 * requests (immutable).  The owned map holds a reference on each owned
 * dir, so no address in it is ever reused while the batch lives.  Only
 * owned dirs are modified, and every modification is recorded in the
 * undo log of the current commit.
 *
 * Copy-on-write of a stored dir does not copy it: the owned dir starts
 * empty, on top of the stored blob (its "base", blob.h), and holds only
 * the entries the batch changed, JSON null for the ones it removed.
 * Reading an entry looks there first, then decodes just that entry of
 * the base; finalizing writes the new blob as the base with those
 * changes merged in (kvs_encode_dir).  So a commit to a directory of n
 * entries costs O(changes * log n) plus copying its bytes, not decoding,
 * copying, sorting and encoding n entries.  A stored dir that is not in
 * canonical form is copied whole, as an owned dir without a base.
 *
 * Big directories are hdirs (RFC 11, treeobj.h): a dir whose encoding
 * holds more than maxdirent entries is stored as an hdir of a few dozen
 * buckets, each a dir of the names that hash to it, and a bucket that
 * grows past maxdirent in turn becomes an hdir of another (coprime)
 * size.  A commit to a name copies the hdir (its bucket array only) and
 * that name's bucket, so what it rewrites stays a few KB however many
 * entries the directory has.  An owned hdir holds owned buckets in place
 * of the dirrefs it replaced; an hdir whose buckets all empty is stored
 * as an empty dir.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libkvs/kvs.h"
#include "libkvs/kvs_util.h"
#include "libkvs/treeobj.h"

#include "apply.h"
#include "blob.h"
#include "dict.h"
#include "encode.h"
#include "lookup.h"

struct undo {
    json_t *dir;
    char *name; /* NULL: bucket index of the hdir dir */
    int index;
    json_t *old; /* NULL: the entry did not exist */
};

/* Bucket counts of the hdirs of each level of one directory: pairwise
 * coprime, so that the names of one bucket spread over the next. */
static const int hdir_sizes[] = {67, 61, 59, 53, 47, 43, 41, 37};
#define HDIR_LEVELS ((int)(sizeof (hdir_sizes) / sizeof (hdir_sizes[0])))

/* owned dir -> its base blob (or NULL) */
struct owned_slot {
    json_t *dir;
    struct blob *base;  /* a dir's stored blob, indexed (blob.h) */
    json_t *hsrc;       /* an hdir's stored object, which dir copies */
    struct blob *htext; /* and its stored text (kvs_encode_hdir_patch) */
};

struct ownmap {
    struct owned_slot *slot;
    size_t size; /* power of 2, 0 when empty */
    size_t count;
};

struct apply {
    struct cache *cache;
    char *ns;
    char rootref[BLOBREF_MAX_STRING_SIZE];
    char hashtype[16];
    size_t inline_max;
    int maxdirent;

    json_t *root; /* owned working copy, NULL until first written */
    struct ownmap owned;
    json_t **fresh; /* dirs owned since the current commit began */
    int nfresh, maxfresh;
    json_t *keep; /* entries decoded from bases, kept for the batch */

    struct undo *log;
    int nlog, maxlog;

    struct apply_blob *blobs;
    int nblobs, maxblobs;
    struct dict *blobidx; /* ref -> index + 1 */

    json_t *keys;
    json_t *keyset;
    json_t *replaced; /* blobrefs of the stored dirs copied */
    char (*missing)[BLOBREF_MAX_STRING_SIZE];
    int nmissing, maxmissing;
    struct dict *missingidx; /* the same, to name each once */
    bool changed;            /* an applied commit modified the tree */
    bool symlinked;          /* a key went through a symlink */
    bool finalized;
};

/* owned map */

static size_t ptr_hash (const void *p)
{
    uint64_t x = (uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x;
}

static struct owned_slot *ownmap_find (const struct ownmap *m, const void *p)
{
    if (m->size == 0)
        return NULL;
    for (size_t i = ptr_hash (p) & (m->size - 1);;
         i = (i + 1) & (m->size - 1)) {
        if (m->slot[i].dir == p)
            return &m->slot[i];
        if (!m->slot[i].dir)
            return NULL;
    }
}

static void ownmap_put (struct owned_slot *slot, size_t size,
                        const struct owned_slot *s)
{
    size_t i = ptr_hash (s->dir) & (size - 1);
    while (slot[i].dir)
        i = (i + 1) & (size - 1);
    slot[i] = *s;
}

static int ownmap_add (struct ownmap *m, const struct owned_slot *s)
{
    if ((m->count + 1) * 2 > m->size) {
        size_t n = m->size ? m->size * 2 : 64;
        struct owned_slot *slot = calloc (n, sizeof (*slot));
        if (!slot)
            return -1;
        for (size_t i = 0; i < m->size; i++) {
            if (m->slot[i].dir)
                ownmap_put (slot, n, &m->slot[i]);
        }
        free (m->slot);
        m->slot = slot;
        m->size = n;
    }
    ownmap_put (m->slot, m->size, s);
    m->count++;
    return 0;
}

static void slot_release (struct owned_slot *s)
{
    json_decref (s->dir);
    blob_decref (s->base);
    json_decref (s->hsrc);
    blob_decref (s->htext);
}

/* Remove the slot of p (linear probing: the slots after it that would
 * not be found past the hole move into it). */
static void ownmap_remove (struct ownmap *m, const void *p)
{
    struct owned_slot *s = ownmap_find (m, p);
    size_t mask = m->size - 1, i, j;

    if (!s)
        return;
    slot_release (s);
    i = j = (size_t)(s - m->slot);
    for (;;) {
        j = (j + 1) & mask;
        if (!m->slot[j].dir)
            break;
        size_t home = ptr_hash (m->slot[j].dir) & mask;
        if (((j - home) & mask) >= ((j - i) & mask)) {
            m->slot[i] = m->slot[j];
            i = j;
        }
    }
    memset (&m->slot[i], 0, sizeof (m->slot[i]));
    m->count--;
}

/* Take ownership of a fresh dir (s->dir), with what it was made from
 * (s->base, s->hsrc, s->htext, any NULL): the map keeps a reference on
 * each.  The dir is also listed as fresh, for discard_fresh(). */
static int own_slot (struct apply *a, const struct owned_slot *s)
{
    if (a->nfresh == a->maxfresh) {
        int n = a->maxfresh ? a->maxfresh * 2 : 64;
        void *v = realloc (a->fresh, n * sizeof (*a->fresh));
        if (!v)
            return -1;
        a->fresh = v;
        a->maxfresh = n;
    }
    if (ownmap_add (&a->owned, s) < 0)
        return -1;
    a->fresh[a->nfresh++] = s->dir;
    json_incref (s->dir);
    blob_incref (s->base);
    json_incref (s->hsrc);
    blob_incref (s->htext);
    return 0;
}

/* A commit failed (or must be applied again) and its changes were
 * reverted: nothing links the dirs it copied any more, so drop them,
 * and what it decoded and replaced, rather than keep a copy per attempt
 * (a commit applied again after each round of loads would otherwise
 * hold as many copies of its directories as it made attempts). */
static void discard_fresh (struct apply *a, size_t keep_mark,
                           size_t replaced_mark)
{
    for (int i = 0; i < a->nfresh; i++) {
        if (a->fresh[i] == a->root) {
            json_decref (a->root);
            a->root = NULL;
        }
        ownmap_remove (&a->owned, a->fresh[i]);
    }
    a->nfresh = 0;
    while (json_array_size (a->keep) > keep_mark)
        (void)json_array_remove (a->keep, json_array_size (a->keep) - 1);
    while (json_array_size (a->replaced) > replaced_mark)
        (void)json_array_remove (a->replaced,
                                 json_array_size (a->replaced) - 1);
}

/* Take ownership of a fresh dir, on top of base (or NULL). */
static int own (struct apply *a, json_t *dir, struct blob *base)
{
    return own_slot (a, &(struct owned_slot){.dir = dir, .base = base});
}

static bool is_owned (struct apply *a, const json_t *obj)
{
    return ownmap_find (&a->owned, obj) != NULL;
}

/* The base of an owned dir, or NULL. */
static struct blob *base_of (struct apply *a, const json_t *dir)
{
    struct owned_slot *s = ownmap_find (&a->owned, dir);
    return s ? s->base : NULL;
}

/* life cycle */

struct apply *apply_create (struct cache *cache, const char *ns,
                            const char *rootref, const char *hashtype,
                            size_t inline_max)
{
    struct apply *a;

    if (!cache || !ns || !rootref || !hashtype || blobref_validate (rootref) < 0
        || blobref_hashtype_size (hashtype) < 0) {
        errno = EINVAL;
        return NULL;
    }
    if (!(a = calloc (1, sizeof (*a))))
        return NULL;
    a->cache = cache;
    a->inline_max = inline_max;
    a->maxdirent = APPLY_MAXDIRENT;
    snprintf (a->rootref, sizeof (a->rootref), "%s", rootref);
    snprintf (a->hashtype, sizeof (a->hashtype), "%s", hashtype);
    if (!(a->ns = strdup (ns)) || !(a->blobidx = dict_create (NULL))
        || !(a->keys = json_array ()) || !(a->keyset = json_object ())
        || !(a->keep = json_array ()) || !(a->replaced = json_array ())) {
        apply_destroy (a);
        return NULL;
    }
    return a;
}

static void log_clear (struct apply *a)
{
    for (int i = 0; i < a->nlog; i++) {
        json_decref (a->log[i].dir);
        json_decref (a->log[i].old);
        free (a->log[i].name);
    }
    a->nlog = 0;
}

static void blobs_truncate (struct apply *a, int n)
{
    while (a->nblobs > n) {
        struct apply_blob *b = &a->blobs[--a->nblobs];
        (void)dict_take (a->blobidx, b->ref);
        blob_decref (b->blob);
        json_decref (b->obj);
    }
}

void apply_destroy (struct apply *a)
{
    if (a) {
        int saved_errno = errno;
        log_clear (a);
        free (a->log);
        blobs_truncate (a, 0);
        free (a->blobs);
        dict_destroy (a->blobidx);
        dict_destroy (a->missingidx);
        free (a->missing);
        for (size_t i = 0; i < a->owned.size; i++)
            slot_release (&a->owned.slot[i]);
        free (a->owned.slot);
        free (a->fresh);
        json_decref (a->keep);
        json_decref (a->replaced);
        json_decref (a->root);
        json_decref (a->keys);
        json_decref (a->keyset);
        free (a->ns);
        free (a);
        errno = saved_errno;
    }
}

/* reading entries */

static int get_entry (struct apply *a, json_t *dir, const char *name,
                      json_t **entry);

/* Keep a decoded entry for the batch (taking the reference). */
static int keep (struct apply *a, json_t *v, json_t **entry)
{
    if (json_array_append_new (a->keep, v) < 0) {
        errno = ENOMEM;
        return -1;
    }
    *entry = v;
    return 0;
}

/* The indexed dir blob of ref (borrowed), or NULL if it is not cached
 * as one. */
static struct blob *indexed_dir (struct apply *a, const char *ref)
{
    struct blob *b = cache_get_blob (a->cache, ref);

    return b && blob_dir_index (b) == 0 ? b : NULL;
}

/* Add ref to the objects the commit being applied needs loaded. */
static void note_missing (struct apply *a, const char *ref)
{
    if (a->nmissing == APPLY_MAX_MISSING
        || (!a->missingidx && !(a->missingidx = dict_create (NULL)))
        || dict_lookup (a->missingidx, ref))
        return;
    if (a->nmissing == a->maxmissing) {
        int n = a->maxmissing ? a->maxmissing * 2 : 16;
        void *v = realloc (a->missing, n * sizeof (*a->missing));
        if (!v)
            return;
        a->missing = v;
        a->maxmissing = n;
    }
    if (dict_insert (a->missingidx, ref, a) < 0)
        return;
    snprintf (a->missing[a->nmissing++], sizeof (a->missing[0]), "%s", ref);
}

/* The decoded dir or hdir of ref (borrowed), or NULL with errno EAGAIN
 * (not cached: a->missing names it) or ENOTRECOVERABLE. */
static json_t *stored_dir (struct apply *a, const char *ref)
{
    json_t *obj;

    if (!(obj = cache_get_treeobj (a->cache, ref))) {
        if (errno == ENOENT) {
            note_missing (a, ref);
            errno = EAGAIN;
        }
        return NULL;
    }
    if (!treeobj_is_dir (obj) && !treeobj_is_hdir (obj)) {
        errno = ENOTRECOVERABLE;
        return NULL;
    }
    return obj;
}

/* The entry name of the indexed dir blob b into *entry (decoded, kept
 * for the batch; NULL if there is none). */
static int blob_entry (struct apply *a, struct blob *b, const char *name,
                       json_t **entry)
{
    json_t *v;
    bool found;
    int i = blob_dir_find (b, name, &found);

    if (!found)
        return 0;
    if (!(v = blob_dir_value (b, i)))
        return -1;
    return keep (a, v, entry);
}

/* The entry name of the stored dir or hdir ref, read without copying
 * it.  EAGAIN when something on the way is not cached (a->missing). */
static int stored_entry (struct apply *a, const char *ref, const char *name,
                         json_t **entry)
{
    struct blob *b = indexed_dir (a, ref);
    json_t *obj, *v;

    if (b)
        return blob_entry (a, b, name, entry);
    if (!(obj = stored_dir (a, ref)))
        return -1;
    if (treeobj_is_hdir (obj))
        return get_entry (a, obj, name, entry);
    if (!(v = json_object_get (treeobj_get_data (obj), name)))
        return 0;
    return keep (a, json_incref (v), entry);
}

/* The blobref of a dirref, or NULL with ENOTRECOVERABLE. */
static const char *dirref_ref (const json_t *dirref)
{
    const char *ref;

    if (!treeobj_is_dirref (dirref) || treeobj_get_count (dirref) != 1
        || !(ref = treeobj_get_blobref (dirref, 0))) {
        errno = ENOTRECOVERABLE;
        return NULL;
    }
    return ref;
}

/* The bucket of name in hdir (borrowed; NULL if empty). */
static int hdir_slot (json_t *hdir, const char *name, json_t **slot, int *index)
{
    int i = treeobj_hdir_index (hdir, name);

    if (i < 0) {
        errno = ENOTRECOVERABLE;
        return -1;
    }
    *slot = treeobj_hdir_get_bucket (hdir, i);
    if (index)
        *index = i;
    return 0;
}

/* The entry name of dir into *entry (borrowed; NULL if there is none).
 * An owned dir's own entries come first (null: removed), then its
 * base's.  In an hdir (owned, or stored when reached through one), the
 * entry is looked up in name's bucket.  -1 with errno EAGAIN (a bucket
 * is not cached), ENOTRECOVERABLE (a corrupt base entry), ENOMEM.
 */
static int get_entry (struct apply *a, json_t *dir, const char *name,
                      json_t **entry)
{
    json_t *data, *v;
    struct blob *base;

    *entry = NULL;
    if (treeobj_is_hdir (dir)) {
        const char *ref;
        if (hdir_slot (dir, name, &v, NULL) < 0)
            return -1;
        if (!v)
            return 0;
        if (is_owned (a, v))
            return get_entry (a, v, name, entry);
        if (!(ref = dirref_ref (v)))
            return -1;
        return stored_entry (a, ref, name, entry);
    }
    if (!(data = treeobj_get_data (dir)))
        return 0;
    if ((v = json_object_get (data, name))) {
        if (!json_is_null (v))
            *entry = v;
        return 0;
    }
    if (!(base = base_of (a, dir)))
        return 0;
    return blob_entry (a, base, name, entry);
}

/* logged modification of an owned dir: obj NULL unlinks */

static struct undo *log_push (struct apply *a, json_t *dir, const char *name,
                              int index, json_t *old)
{
    struct undo *u;

    if (a->nlog == a->maxlog) {
        int n = a->maxlog ? a->maxlog * 2 : 16;
        struct undo *tmp = realloc (a->log, n * sizeof (*tmp));
        if (!tmp)
            return NULL;
        a->log = tmp;
        a->maxlog = n;
    }
    u = &a->log[a->nlog];
    u->name = NULL;
    if (name && !(u->name = strdup (name)))
        return NULL;
    u->index = index;
    u->dir = json_incref (dir);
    u->old = json_incref (old);
    a->nlog++;
    return u;
}

static json_t *own_stored (struct apply *a, const char *ref);
static json_t *own_new_dir (struct apply *a, const json_t *src);

/* The owned bucket of name in the owned hdir, copied or created (and
 * logged) on first write. */
static json_t *hdir_bucket_for_write (struct apply *a, json_t *hdir,
                                      const char *name)
{
    json_t *slot, *sub;
    const char *ref;
    int i;

    if (hdir_slot (hdir, name, &slot, &i) < 0)
        return NULL;
    if (slot && is_owned (a, slot))
        return slot;
    if (!slot)
        sub = own_new_dir (a, NULL);
    else if (!(ref = dirref_ref (slot)))
        return NULL;
    else
        sub = own_stored (a, ref);
    if (!sub)
        return NULL;
    if (!log_push (a, hdir, NULL, i, slot ? slot : json_null ())
        || treeobj_hdir_set_bucket (hdir, i, sub) < 0)
        return NULL;
    return sub;
}

static int set_entry (struct apply *a, json_t *dir, const char *name,
                      json_t *obj)
{
    json_t *data;

    if (!obj) {
        json_t *old;
        if (get_entry (a, dir, name, &old) < 0)
            return -1;
        if (!old)
            return 0; /* nothing to unlink */
    }
    if (treeobj_is_hdir (dir)) {
        json_t *bucket = hdir_bucket_for_write (a, dir, name);
        return bucket ? set_entry (a, bucket, name, obj) : -1;
    }
    if (!(data = treeobj_get_data (dir))) {
        errno = EINVAL;
        return -1;
    }
    if (!log_push (a, dir, name, -1, json_object_get (data, name)))
        return -1;
    if (obj)
        return json_object_set (data, name, obj) < 0 ? -1 : 0;
    if (base_of (a, dir))
        return json_object_set_new (data, name, json_null ()) < 0 ? -1 : 0;
    return json_object_del (data, name) < 0 ? -1 : 0;
}

static void log_revert (struct apply *a)
{
    for (int i = a->nlog - 1; i >= 0; i--) {
        struct undo *u = &a->log[i];
        if (!u->name) /* an empty bucket is logged as null */
            (void)treeobj_hdir_set_bucket (
                u->dir, u->index, json_is_null (u->old) ? NULL : u->old);
        else if (u->old)
            (void)json_object_set (treeobj_get_data (u->dir), u->name, u->old);
        else
            (void)json_object_del (treeobj_get_data (u->dir), u->name);
    }
    log_clear (a);
}

/* blobs */

/* Record a blob to store (taking over the caller's reference, dropped
 * on failure too); its blobref into ref. */
static int add_blob (struct apply *a, struct blob *blob, bool dir, char *ref,
                     size_t size)
{
    struct apply_blob *b;

    if (!blob)
        return -1;
    if (blobref_hash (a->hashtype, blob->data, blob->len, ref, size) < 0)
        goto error;
    if (dict_lookup (a->blobidx, ref)) {
        blob_decref (blob);
        return 0;
    }
    if (a->nblobs == a->maxblobs) {
        int n = a->maxblobs ? a->maxblobs * 2 : 16;
        struct apply_blob *tmp = realloc (a->blobs, n * sizeof (*tmp));
        if (!tmp)
            goto error;
        a->blobs = tmp;
        a->maxblobs = n;
    }
    if (dict_insert (a->blobidx, ref, (void *)(intptr_t)(a->nblobs + 1)) < 0)
        goto error;
    b = &a->blobs[a->nblobs++];
    snprintf (b->ref, sizeof (b->ref), "%s", ref);
    b->blob = blob;
    b->data = blob->data;
    b->len = blob->len;
    b->dir = dir;
    b->obj = NULL;
    return 0;
error:
    blob_decref (blob);
    return -1;
}

/* A blob of len bytes at data, a malloc'ed buffer of len + 1 bytes
 * (taken over). */
static struct blob *take_bytes (void *data, size_t len)
{
    return blob_create_take (data, len, NULL, 0);
}

/* Record the blob of an hdir, with the object itself (no longer
 * modified): the cache need not decode what the next commit reads. */
static int add_hdir_blob (struct apply *a, json_t *hdir, char *ref, size_t size)
{
    struct owned_slot *os = ownmap_find (&a->owned, hdir);
    size_t len;
    char *s = NULL;

    if (os && os->hsrc && os->htext)
        s = kvs_encode_hdir_patch (hdir, os->hsrc, os->htext->data,
                                   os->htext->len, &len);
    if (!s)
        s = kvs_encode (hdir, &len);
    int n = a->nblobs;

    if (!s || add_blob (a, take_bytes (s, len), true, ref, size) < 0)
        return -1;
    if (a->nblobs > n)
        a->blobs[n].obj = json_incref (hdir);
    return 0;
}

/* A blob of the value of val: its blobref into ref. */
static int val_to_blob (struct apply *a, const json_t *val, char *ref,
                        size_t size)
{
    void *data;
    size_t len;

    if (treeobj_decode_val (val, &data, &len) < 0)
        return -1;
    return add_blob (a, take_bytes (data, len), false, ref, size);
}

/* val, or a valref of its blob if longer than inline_max (new ref). */
static json_t *store_large (struct apply *a, json_t *dirent)
{
    char ref[BLOBREF_MAX_STRING_SIZE];
    json_t *data;

    if (!treeobj_is_val (dirent) || !(data = treeobj_get_data (dirent))
        || json_string_length (data) / 4 * 3 <= a->inline_max)
        return json_incref (dirent);
    /* base64 may round up: decode to know */
    {
        void *buf;
        size_t len;
        if (treeobj_decode_val (dirent, &buf, &len) < 0)
            return NULL;
        if (len <= a->inline_max) {
            free (buf);
            return json_incref (dirent);
        }
        if (add_blob (a, take_bytes (buf, len), false, ref, sizeof (ref)) < 0)
            return NULL;
    }
    return treeobj_create_valref (ref);
}

/* applying ops */

/* A new owned copy of the stored dir or hdir ref: a dir on top of its
 * blob if that is indexed, else a copy of its decoded object.  NULL with
 * errno EAGAIN (ref not cached: a->missing names it), ENOTRECOVERABLE. */
static json_t *own_stored (struct apply *a, const char *ref)
{
    struct blob *base = indexed_dir (a, ref);
    struct owned_slot os = {.base = base};
    json_t *src, *dir;

    if (base)
        dir = treeobj_create_dir ();
    else if (!(src = stored_dir (a, ref)))
        return NULL;
    else {
        dir = treeobj_copy (src);
        if (treeobj_is_hdir (src)) {
            /* unchanged buckets keep their stored text (add_hdir_blob) */
            os.hsrc = src;
            os.htext = cache_get_blob (a->cache, ref);
        }
    }
    if (!dir)
        return NULL;
    os.dir = dir;
    if (own_slot (a, &os) < 0) {
        json_decref (dir);
        return NULL;
    }
    json_decref (dir); /* the owned map holds it */
    (void)json_array_append_new (a->replaced, json_string (ref));
    return dir;
}

/* A new owned dir: empty, or a copy of the dir src. */
static json_t *own_new_dir (struct apply *a, const json_t *src)
{
    json_t *dir = src ? treeobj_copy (src) : treeobj_create_dir ();

    if (!dir || own (a, dir, NULL) < 0) {
        json_decref (dir);
        return NULL;
    }
    json_decref (dir); /* the owned map holds it */
    return dir;
}

static json_t *get_root (struct apply *a)
{
    if (!a->root) {
        if (!(a->root = own_stored (a, a->rootref)))
            return NULL;
        json_incref (a->root);
    }
    return a->root;
}

/* An owned copy of the directory entry e, installed under name in dir. */
static json_t *subdir_for_write (struct apply *a, json_t *dir, const char *name,
                                 json_t *e)
{
    json_t *sub;

    if (!e || treeobj_is_dir (e)) {
        /* a new dir, or a copy of one given inline */
        if (!(sub = own_new_dir (a, e)))
            return NULL;
    }
    else { /* dirref */
        const char *ref;
        if (!(ref = dirref_ref (e)) || !(sub = own_stored (a, ref)))
            return NULL;
    }
    if (set_entry (a, dir, name, sub) < 0)
        return NULL;
    return sub;
}

/* Appends.  A valref gains one blobref per append, and the directory
 * holding it is rewritten with each commit, so n appends to one key
 * would store O(n^2) bytes of directories (48 bytes a ref).  The first
 * APPEND_KEEP blobs of a value stay apart: a short eventlog is never
 * copied.  Past them the blobs are folded like a binary counter: while
 * the one before the last is at most twice as big as the last, the two
 * become one blob of their bytes, so that each byte is copied O(log n)
 * times and the refs stay O(log n).  But copying is worth it only while
 * it costs less than the refs it saves: a tail of t refs costs 48 t
 * bytes a commit, and two blobs are folded only if they hold at most
 * APPEND_RENT t bytes, what the tail's refs cost in 100 commits.  Big
 * appends are then rarely copied, small ones always folded.  Readers see
 * the same bytes: a valref's value is the concatenation of its blobs
 * (RFC 11).
 */
#define APPEND_KEEP 16
#define APPEND_RENT (100 * 48)

/* The bytes of the value blob ref: stored by this batch, or cached.
 * -1 with errno EAGAIN if neither (a->missing names it). */
static int value_bytes (struct apply *a, const char *ref, const void **data,
                        size_t *len)
{
    intptr_t i = (intptr_t)dict_lookup (a->blobidx, ref);

    if (i > 0) {
        *data = a->blobs[i - 1].data;
        *len = a->blobs[i - 1].len;
        return 0;
    }
    if (cache_get_raw (a->cache, ref, data, len) == 0)
        return 0;
    note_missing (a, ref);
    errno = EAGAIN;
    return -1;
}

/* Fold the last blobs of valref (owned) as the comment above says. */
static int fold_appends (struct apply *a, json_t *valref)
{
    json_t *refs = treeobj_get_data (valref);
    size_t n;

    while ((n = json_array_size (refs)) > APPEND_KEEP + 1) {
        const char *pref = json_string_value (json_array_get (refs, n - 2));
        const char *lref = json_string_value (json_array_get (refs, n - 1));
        char ref[BLOBREF_MAX_STRING_SIZE];
        const void *p, *l;
        size_t plen, llen;
        char *buf;

        if (!pref || !lref) {
            errno = ENOTRECOVERABLE;
            return -1;
        }
        if (value_bytes (a, pref, &p, &plen) < 0
            || value_bytes (a, lref, &l, &llen) < 0)
            return -1;
        if (plen / 2 > llen || plen + llen > APPEND_RENT * (n - APPEND_KEEP))
            break;
        if (!(buf = malloc (plen + llen + 1))) /* + 1: blob_create_take */
            return -1;
        memcpy (buf, p, plen);
        memcpy (buf + plen, l, llen);
        if (add_blob (a, take_bytes (buf, plen + llen), false, ref,
                      sizeof (ref))
            < 0)
            return -1;
        if (json_array_remove (refs, n - 1) < 0
            || json_array_set_new (refs, n - 2, json_string (ref)) < 0) {
            errno = ENOMEM;
            return -1;
        }
    }
    return 0;
}

static int append_entry (struct apply *a, json_t *dir, const char *name,
                         json_t *dirent)
{
    json_t *old;
    char ref[BLOBREF_MAX_STRING_SIZE];
    json_t *nobj = NULL;
    json_t *data;
    int rc;

    if (get_entry (a, dir, name, &old) < 0)
        return -1;
    if (old && (data = treeobj_get_data (dirent))
        && json_string_length (data) == 0) {
        if (treeobj_is_val (old) || treeobj_is_valref (old))
            return 0; /* nothing appended: the value is unchanged */
    }
    if (!old)
        nobj = store_large (a, dirent);
    else if (treeobj_is_val (old)) {
        if (val_to_blob (a, old, ref, sizeof (ref)) < 0
            || !(nobj = treeobj_create_valref (ref))
            || val_to_blob (a, dirent, ref, sizeof (ref)) < 0
            || treeobj_append_blobref (nobj, ref) < 0) {
            json_decref (nobj);
            return -1;
        }
    }
    else if (treeobj_is_valref (old)) {
        if (!(nobj = treeobj_deep_copy (old))
            || val_to_blob (a, dirent, ref, sizeof (ref)) < 0
            || treeobj_append_blobref (nobj, ref) < 0
            || fold_appends (a, nobj) < 0) {
            json_decref (nobj);
            return -1;
        }
    }
    else if (treeobj_is_dir (old) || treeobj_is_dirref (old)) {
        errno = EISDIR;
        return -1;
    }
    else if (treeobj_is_symlink (old)) {
        errno = EOPNOTSUPP;
        return -1;
    }
    else {
        errno = ENOTRECOVERABLE;
        return -1;
    }
    if (!nobj)
        return -1;
    rc = set_entry (a, dir, name, nobj);
    json_decref (nobj);
    return rc;
}

static int apply_op (struct apply *a, const struct txn_op *op,
                     flux_error_t *error)
{
    char *path, *p;
    json_t *dir;
    int depth = 0, rc = -1;

    if (!(path = strdup (op->key)))
        return -1;
restart:
    if (!(dir = get_root (a)))
        goto done;
    p = path;
    for (char *dot; (dot = strchr (p, '.')); p = dot + 1) {
        json_t *e;
        *dot = '\0';
        if (get_entry (a, dir, p, &e) < 0)
            goto done;
        if (e && treeobj_is_symlink (e)) {
            const char *ns, *target;
            char *tmp = NULL, *npath;
            if (treeobj_get_symlink (e, &ns, &target) < 0) {
                errno = ENOTRECOVERABLE;
                goto done;
            }
            if (ns && strcmp (ns, a->ns) != 0) {
                errno = EINVAL;
                errprintf (error, "%s: symlink to namespace %s", op->key, ns);
                goto done;
            }
            a->symlinked = true;
            if (++depth > LOOKUP_SYMLINK_MAX) {
                errno = ELOOP;
                goto done;
            }
            if (asprintf (&tmp, "%s.%s", target, dot + 1) < 0)
                goto done;
            npath = kvs_util_normalize_key (tmp, NULL);
            free (tmp);
            if (!npath)
                goto done;
            free (path);
            path = npath;
            if (!strcmp (path, ".")) {
                errno = EINVAL;
                goto done;
            }
            goto restart;
        }
        if (e && (treeobj_is_val (e) || treeobj_is_valref (e))) {
            if (!op->dirent)
                goto success; /* nothing to unlink */
            errno = ENOTDIR;
            errprintf (error, "%s: a path component is a value", op->key);
            goto done;
        }
        if (!e && !op->dirent)
            goto success;
        if (!e || !is_owned (a, e)) {
            if (!(e = subdir_for_write (a, dir, p, e)))
                goto done;
        }
        dir = e;
    }
    if (!op->dirent) {
        if (set_entry (a, dir, p, NULL) < 0)
            goto done;
    }
    else if ((op->flags & FLUX_KVS_APPEND)) {
        if (append_entry (a, dir, p, op->dirent) < 0)
            goto done;
    }
    else {
        json_t *obj = store_large (a, op->dirent);
        int n = obj ? set_entry (a, dir, p, obj) : -1;
        json_decref (obj);
        if (n < 0)
            goto done;
    }
success:
    rc = 0;
done:
    free (path);
    return rc;
}

static int add_key (struct apply *a, const char *key)
{
    json_t *s;

    if (json_object_get (a->keyset, key))
        return 0;
    if (json_object_set_new (a->keyset, key, json_true ()) < 0
        || !(s = json_string (key)) || json_array_append_new (a->keys, s) < 0)
        return -1;
    return 0;
}

int apply_txn (struct apply *a, const struct txn *t, flux_error_t *error)
{
    int blob_mark;
    size_t keep_mark, replaced_mark;

    if (!a || !t || a->finalized) {
        errno = EINVAL;
        return -1;
    }
    if (a->nmissing > 0) {
        dict_destroy (a->missingidx);
        a->missingidx = NULL;
        a->nmissing = 0;
    }
    blob_mark = a->nblobs;
    keep_mark = json_array_size (a->keep);
    replaced_mark = json_array_size (a->replaced);
    a->nfresh = 0;
    for (int i = 0; i < txn_count (t); i++) {
        int errnum;
        if (apply_op (a, txn_op (t, i), error) == 0)
            continue;
        errnum = errno;
        /* Something is not cached: go on through the other ops, to name
         * every object they miss too, so that all are loaded at once
         * rather than one per attempt (a commit of appends to n evicted
         * job directories would be applied n times).  Their results,
         * errors included, do not count: the commit is applied again. */
        if ((errnum == EAGAIN || a->nmissing > 0)
            && a->nmissing < APPLY_MAX_MISSING && i + 1 < txn_count (t))
            continue;
        if (a->nmissing > 0)
            errnum = EAGAIN;
        log_revert (a);
        blobs_truncate (a, blob_mark);
        discard_fresh (a, keep_mark, replaced_mark);
        if (errnum == ENOTRECOVERABLE)
            errprintf (error, "%s: corrupt object in the store",
                       txn_op (t, i)->key);
        errno = errnum;
        return -1;
    }
    if (a->nmissing > 0) { /* the last op ran into nothing new */
        log_revert (a);
        blobs_truncate (a, blob_mark);
        discard_fresh (a, keep_mark, replaced_mark);
        errno = EAGAIN;
        return -1;
    }
    if (a->nlog > 0)
        a->changed = true;
    log_clear (a);
    a->nfresh = 0; /* they are the batch's now */
    /* the commit is applied: running out of memory here only shortens
     * the keys list (a watcher may miss a wakeup), never the data */
    for (int i = 0; i < txn_count (t); i++)
        (void)add_key (a, txn_op (t, i)->key);
    return 0;
}

void apply_set_maxdirent (struct apply *a, int maxdirent)
{
    if (a)
        a->maxdirent = maxdirent < 0 ? 0 : maxdirent;
}

const char *apply_missing_ref (struct apply *a)
{
    return apply_missing (a, 0);
}

size_t apply_owned_count (struct apply *a)
{
    return a ? a->owned.count : 0;
}

int apply_missing_count (struct apply *a)
{
    return a ? a->nmissing : 0;
}

const char *apply_missing (struct apply *a, int i)
{
    return a && i >= 0 && i < a->nmissing ? a->missing[i] : NULL;
}

/* finalize */

static int unroll (struct apply *a, json_t *dir, int level, char *ref,
                   size_t size, bool *empty);

static int split (struct apply *a, struct blob *b, int level, char *ref,
                  size_t size);

/* Store the dir blob b (taken over) as it is, or, if it is an indexed
 * dir of more than maxdirent entries and level has hdir sizes left,
 * split into an hdir of that level.  Its blobref into ref. */
static int store_dir_blob (struct apply *a, struct blob *b, int level,
                           char *ref, size_t size)
{
    if (a->maxdirent > 0 && level < HDIR_LEVELS && blob_dir_index (b) == 0
        && b->n > a->maxdirent)
        return split (a, b, level, ref, size);
    return add_blob (a, b, true, ref, size);
}

/* Split b, an indexed dir blob (taken over), into an hdir of
 * hdir_sizes[level] buckets: each bucket is a dir blob of its entries'
 * bytes as they are (a sub-run of sorted entries is sorted, so it is
 * canonical too), stored with store_dir_blob() at the next level.  The
 * hdir is stored too; its blobref into ref. */
static int split (struct apply *a, struct blob *b, int level, char *ref,
                  size_t size)
{
    static const char head[] = "{\"data\":{";
    static const char tail[] = "},\"type\":\"dir\",\"ver\":1}";
    int nb = hdir_sizes[level];
    int *bucket = malloc (b->n * sizeof (*bucket));
    int *order = malloc (b->n * sizeof (*order));  /* entries, by bucket */
    int *start = calloc (nb + 1, sizeof (*start)); /* bucket k's in order */
    int *fill = malloc (nb * sizeof (*fill));
    size_t *len = calloc (nb, sizeof (*len));
    json_t *hdir = treeobj_create_hdir (nb, NULL);
    int rc = -1;

    if (!bucket || !order || !start || !fill || !len || !hdir)
        goto done;
    for (int i = 0; i < b->n; i++) {
        size_t nlen;
        const char *name = blob_dir_name (b, i, &nlen);
        bucket[i] = treeobj_fnv1a32 (name, nlen) % nb;
        start[bucket[i] + 1]++;
        len[bucket[i]] += b->off[i + 1] - b->off[i]; /* with its ',' */
    }
    for (int k = 0; k < nb; k++)
        start[k + 1] += start[k];
    memcpy (fill, start, nb * sizeof (*fill));
    for (int i = 0; i < b->n; i++)
        order[fill[bucket[i]]++] = i; /* in name order within a bucket */
    for (int k = 0; k < nb; k++) {
        char subref[BLOBREF_MAX_STRING_SIZE];
        struct blob *sub;
        json_t *dirref;
        size_t n;
        char *buf;
        int err;

        if (start[k] == start[k + 1])
            continue;
        if (!(buf = malloc (sizeof (head) - 1 + len[k] - 1 + sizeof (tail))))
            goto done;
        memcpy (buf, head, sizeof (head) - 1);
        n = sizeof (head) - 1;
        for (int j = start[k]; j < start[k + 1]; j++) {
            int i = order[j];
            size_t elen = b->off[i + 1] - 1 - b->off[i];
            if (j > start[k])
                buf[n++] = ',';
            memcpy (buf + n, b->data + b->off[i], elen);
            n += elen;
        }
        memcpy (buf + n, tail, sizeof (tail) - 1);
        n += sizeof (tail) - 1;
        if (!(sub = take_bytes (buf, n))
            || store_dir_blob (a, sub, level + 1, subref, sizeof (subref)) < 0
            || !(dirref = treeobj_create_dirref (subref)))
            goto done;
        err = treeobj_hdir_set_bucket (hdir, k, dirref);
        json_decref (dirref);
        if (err < 0)
            goto done;
    }
    rc = add_hdir_blob (a, hdir, ref, size);
done:
    blob_decref (b);
    json_decref (hdir);
    free (len);
    free (fill);
    free (start);
    free (order);
    free (bucket);
    return rc;
}

/* Store the owned hdir (of level level) and its changed buckets; a
 * bucket that emptied becomes null, an hdir with no bucket left an
 * empty dir. */
static int unroll_hdir (struct apply *a, json_t *hdir, int level, char *ref,
                        size_t size, bool *empty)
{
    json_t *buckets = treeobj_hdir_get_buckets (hdir);
    bool all_empty = true;

    if (!buckets)
        return -1;
    for (int k = 0; k < (int)json_array_size (buckets); k++) {
        json_t *slot = json_array_get (buckets, k), *nobj = NULL;
        char subref[BLOBREF_MAX_STRING_SIZE];
        bool sub_empty;
        int err;

        if (json_is_null (slot))
            continue;
        if (is_owned (a, slot)) {
            if (unroll (a, slot, level + 1, subref, sizeof (subref), &sub_empty)
                < 0)
                return -1;
            if (!sub_empty && !(nobj = treeobj_create_dirref (subref)))
                return -1;
            err = json_array_set (buckets, k, nobj ? nobj : json_null ());
            json_decref (nobj);
            if (err < 0) {
                errno = ENOMEM;
                return -1;
            }
            if (!nobj)
                continue;
        }
        all_empty = false;
    }
    *empty = all_empty;
    if (all_empty) {
        json_t *none = json_object ();
        struct blob *blob = none ? kvs_encode_dir (NULL, none) : NULL;
        json_decref (none);
        return add_blob (a, blob, true, ref, size);
    }
    return add_hdir_blob (a, hdir, ref, size);
}

/* Store dir (owned: a dir, or an hdir of a dir at hdir level level) and
 * everything new below it; its blobref into ref, and whether it holds
 * no entry into *empty. */
static int unroll (struct apply *a, json_t *dir, int level, char *ref,
                   size_t size, bool *empty)
{
    json_t *data = treeobj_get_data (dir);
    struct blob *blob;
    json_t *e;
    void *iter;

    if (!data)
        return -1;
    if (treeobj_is_hdir (dir))
        return unroll_hdir (a, dir, level, ref, size, empty);
    /* only the dir's own entries: its base's are stored already */
    for (iter = json_object_iter (data); iter;
         iter = json_object_iter_next (data, iter)) {
        char subref[BLOBREF_MAX_STRING_SIZE];
        json_t *nobj = NULL;
        bool sub_empty;
        e = json_object_iter_value (iter);
        if (treeobj_is_dir (e) || treeobj_is_hdir (e)) {
            json_t *sub = e;
            if (!is_owned (a, e) && !(sub = own_new_dir (a, e)))
                return -1; /* a dir given inline by a commit */
            if (unroll (a, sub, 0, subref, sizeof (subref), &sub_empty) < 0
                || !(nobj = treeobj_create_dirref (subref)))
                return -1;
        }
        else if (treeobj_is_val (e)) {
            if (!(nobj = store_large (a, e)))
                return -1;
            if (nobj == e) {
                json_decref (nobj);
                continue;
            }
        }
        else
            continue; /* refs, symlinks, null (removed) */
        if (json_object_iter_set_new (data, iter, nobj) < 0) {
            json_decref (nobj);
            return -1;
        }
    }
    if (!(blob = kvs_encode_dir (base_of (a, dir), data)))
        return -1;
    *empty = blob_dir_index (blob) == 0 && blob->n == 0;
    return store_dir_blob (a, blob, level, ref, size);
}

int apply_finalize (struct apply *a, char *rootref, size_t size)
{
    if (!a || !rootref || a->finalized) {
        errno = EINVAL;
        return -1;
    }
    a->finalized = true;
    if (!a->root || !a->changed) {
        snprintf (rootref, size, "%s", a->rootref);
        return 0;
    }
    bool empty;
    return unroll (a, a->root, 0, rootref, size, &empty);
}

int apply_blob_count (struct apply *a)
{
    return a ? a->nblobs : 0;
}

const struct apply_blob *apply_blob (struct apply *a, int index)
{
    if (!a || index < 0 || index >= a->nblobs)
        return NULL;
    return &a->blobs[index];
}

json_t *apply_keys (struct apply *a)
{
    return a ? a->keys : NULL;
}

bool apply_has_blob (struct apply *a, const char *ref)
{
    return a && ref && dict_lookup (a->blobidx, ref) != NULL;
}

bool apply_followed_symlink (struct apply *a)
{
    return a && a->symlinked;
}

int apply_replaced_count (struct apply *a)
{
    return a && a->finalized && a->changed ? (int)json_array_size (a->replaced)
                                           : 0;
}

const char *apply_replaced (struct apply *a, int index)
{
    const char *ref;

    if (index < 0 || index >= apply_replaced_count (a))
        return NULL;
    ref = json_string_value (json_array_get (a->replaced, index));
    /* a dir changed and changed back is still current */
    if (!ref || dict_lookup (a->blobidx, ref))
        return NULL;
    return ref;
}
