/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* lookup.c - walk a key through the object cache (see lookup.h).
 *
 * The walk keeps the remaining path as a normalized key string and the
 * current "dirent" (the tree object reached so far, starting from a
 * dirref of the root).  Following a symlink replaces the remaining path
 * with target + rest and restarts from the root of the symlink's
 * namespace, since targets are full keys.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libcontent/blobref.h"
#include "libkvs/kvs.h"
#include "libkvs/kvs_util.h"
#include "libkvs/treeobj.h"

#include "lookup.h"

struct lookup {
    struct cache *cache;
    char *ns;
    char rootref[BLOBREF_MAX_STRING_SIZE];
    char *key;
    int flags;
    lookup_root_f get_root;
    void *arg;

    char **missing;
    int nmissing;
    char *missing_ns;
};

struct lookup *lookup_create (struct cache *cache, const char *ns,
                              const char *rootref, const char *key, int flags,
                              lookup_root_f get_root, void *arg)
{
    struct lookup *l;

    if (!cache || !rootref || !key || blobref_validate (rootref) < 0) {
        errno = EINVAL;
        return NULL;
    }
    if (!(l = calloc (1, sizeof (*l))))
        return NULL;
    l->cache = cache;
    l->flags = flags;
    l->get_root = get_root;
    l->arg = arg;
    snprintf (l->rootref, sizeof (l->rootref), "%s", rootref);
    if ((ns && !(l->ns = strdup (ns)))
        || !(l->key = kvs_util_normalize_key (key, NULL))) {
        lookup_destroy (l);
        return NULL;
    }
    return l;
}

static void clear_missing (struct lookup *l)
{
    for (int i = 0; i < l->nmissing; i++)
        free (l->missing[i]);
    free (l->missing);
    l->missing = NULL;
    l->nmissing = 0;
    free (l->missing_ns);
    l->missing_ns = NULL;
}

void lookup_destroy (struct lookup *l)
{
    if (l) {
        int saved_errno = errno;
        clear_missing (l);
        free (l->ns);
        free (l->key);
        free (l);
        errno = saved_errno;
    }
}

static int add_missing (struct lookup *l, const char *ref)
{
    char **tmp;

    for (int i = 0; i < l->nmissing; i++) {
        if (!strcmp (l->missing[i], ref))
            return 0;
    }
    if (!(tmp = realloc (l->missing, (l->nmissing + 1) * sizeof (*tmp))))
        return -1;
    l->missing = tmp;
    if (!(l->missing[l->nmissing] = strdup (ref)))
        return -1;
    l->nmissing++;
    return 0;
}

/* Missing object: remember it and fail with EAGAIN (or ENOMEM). */
static int stall (struct lookup *l, const char *ref)
{
    if (add_missing (l, ref) < 0)
        return -1;
    errno = EAGAIN;
    return -1;
}

/* The dir or hdir object behind a dirref (borrowed from the cache). */
static json_t *load_dir (struct lookup *l, const json_t *dirref)
{
    const char *ref;
    json_t *dir;

    if (treeobj_get_count (dirref) != 1
        || !(ref = treeobj_get_blobref (dirref, 0))) {
        errno = ENOTRECOVERABLE;
        return NULL;
    }
    if (!(dir = cache_get_treeobj (l->cache, ref))) {
        if (errno == ENOENT)
            (void)stall (l, ref);
        return NULL;
    }
    if (!treeobj_is_dir (dir) && !treeobj_is_hdir (dir)) {
        errno = ENOTRECOVERABLE;
        return NULL;
    }
    return dir;
}

/* The entry name of dir (a dir or hdir), borrowed, or NULL with errno
 * ENOENT, or EAGAIN when a bucket is not cached. */
static json_t *dir_entry (struct lookup *l, json_t *dir, const char *name)
{
    json_t *entry;

    while (treeobj_is_hdir (dir)) {
        int i = treeobj_hdir_index (dir, name);
        json_t *bucket;
        if (i < 0) {
            errno = ENOTRECOVERABLE;
            return NULL;
        }
        if (!(bucket = treeobj_hdir_get_bucket (dir, i)))
            return NULL; /* ENOENT */
        if (!(dir = load_dir (l, bucket)))
            return NULL;
    }
    if (!(entry = treeobj_get_entry (dir, name)))
        errno = ENOENT;
    return entry;
}

/* Add the entries of hdir's buckets to out (a dir's data), loading each
 * bucket; every bucket not cached is listed, then EAGAIN. */
static int merge_hdir (struct lookup *l, const json_t *hdir, json_t *out)
{
    int size = treeobj_hdir_size (hdir);
    int stalled = 0;

    for (int i = 0; i < size; i++) {
        json_t *bucket = treeobj_hdir_get_bucket (hdir, i), *dir;
        if (!bucket)
            continue;
        if (!(dir = load_dir (l, bucket))) {
            if (errno != EAGAIN)
                return -1;
            stalled++;
            continue;
        }
        if (treeobj_is_hdir (dir)) {
            if (merge_hdir (l, dir, out) < 0) {
                if (errno != EAGAIN)
                    return -1;
                stalled++;
            }
        }
        else if (json_object_update (out, treeobj_get_data (dir)) < 0)
            return -1;
    }
    if (stalled) {
        errno = EAGAIN;
        return -1;
    }
    return 0;
}

/* A dir of all the entries of an hdir (new reference). */
static json_t *hdir_to_dir (struct lookup *l, const json_t *hdir)
{
    json_t *dir = treeobj_create_dir ();

    if (!dir || merge_hdir (l, hdir, treeobj_get_data (dir)) < 0) {
        json_decref (dir);
        return NULL;
    }
    return dir;
}

/* Replace *path with the normalized "target.rest". */
static int redirect (char **path, const char *target, const char *rest)
{
    char *tmp, *norm;

    if (asprintf (&tmp, "%s.%s", target, rest ? rest : "") < 0)
        return -1;
    norm = kvs_util_normalize_key (tmp, NULL);
    free (tmp);
    if (!norm)
        return -1;
    free (*path);
    *path = norm;
    return 0;
}

struct walk {
    const char *ns; /* current namespace (may be NULL) */
    char *nsbuf;    /* storage of ns after a cross-namespace symlink */
    char rootref[BLOBREF_MAX_STRING_SIZE];
    char *path;     /* remaining normalized key */
    json_t *dirent; /* object reached so far (new reference) */
    int depth;      /* symlinks followed */
};

static int follow (struct lookup *l, struct walk *w, const json_t *link,
                   const char *rest)
{
    const char *ns, *target;

    if (++w->depth > LOOKUP_SYMLINK_MAX) {
        errno = ELOOP;
        return -1;
    }
    if (treeobj_get_symlink (link, &ns, &target) < 0) {
        errno = ENOTRECOVERABLE;
        return -1;
    }
    if (ns && (!w->ns || strcmp (ns, w->ns) != 0)) {
        if (!l->get_root) {
            errno = ENOTSUP;
            return -1;
        }
        if (l->get_root (ns, w->rootref, sizeof (w->rootref), l->arg) < 0) {
            if (errno == EAGAIN) {
                free (l->missing_ns);
                if (!(l->missing_ns = strdup (ns)))
                    return -1;
                errno = EAGAIN;
            }
            return -1;
        }
        free (w->nsbuf);
        if (!(w->nsbuf = strdup (ns)))
            return -1;
        w->ns = w->nsbuf;
    }
    if (redirect (&w->path, target, rest) < 0)
        return -1;
    json_decref (w->dirent);
    if (!(w->dirent = treeobj_create_dirref (w->rootref)))
        return -1;
    return 0;
}

/* Walk l->key to its final object (new reference in *result). */
static int walk (struct lookup *l, json_t **result)
{
    struct walk w = {.ns = l->ns};
    int rc = -1;

    snprintf (w.rootref, sizeof (w.rootref), "%s", l->rootref);
    if (!(w.path = strdup (l->key))
        || !(w.dirent = treeobj_create_dirref (w.rootref)))
        goto done;
    while (strcmp (w.path, ".") != 0) {
        char *name = w.path, *rest = strchr (w.path, '.');
        json_t *dir, *entry;

        if (rest)
            *rest++ = '\0';
        if (treeobj_is_dirref (w.dirent)) {
            if (!(dir = load_dir (l, w.dirent)))
                goto done;
        }
        else if (treeobj_is_dir (w.dirent))
            dir = w.dirent;
        else {
            errno = ENOENT; /* a path through a value */
            goto done;
        }
        if (!(entry = dir_entry (l, dir, name)))
            goto done;
        if (treeobj_is_symlink (entry)
            && (rest || !(l->flags & (FLUX_KVS_READLINK | FLUX_KVS_TREEOBJ)))) {
            if (follow (l, &w, entry, rest) < 0)
                goto done;
            continue;
        }
        json_incref (entry);
        json_decref (w.dirent);
        w.dirent = entry;
        /* shift the rest of the path down (name is at w.path) */
        memmove (w.path, rest ? rest : ".", strlen (rest ? rest : ".") + 1);
    }
    *result = w.dirent;
    w.dirent = NULL;
    rc = 0;
done:
    json_decref (w.dirent);
    free (w.path);
    free (w.nsbuf);
    return rc;
}

/* The value of a valref: its blobs concatenated, as a val. */
static json_t *valref_value (struct lookup *l, const json_t *valref)
{
    int count = treeobj_get_count (valref);
    size_t total = 0, off = 0;
    char *buf = NULL;
    json_t *val;

    if (count < 0) {
        errno = ENOTRECOVERABLE;
        return NULL;
    }
    for (int i = 0; i < count; i++) {
        const char *ref = treeobj_get_blobref (valref, i);
        size_t len;
        if (!ref) {
            errno = ENOTRECOVERABLE;
            return NULL;
        }
        if (cache_get_raw (l->cache, ref, NULL, &len) < 0) {
            if (add_missing (l, ref) < 0)
                return NULL;
            continue;
        }
        total += len;
    }
    if (l->nmissing > 0) {
        errno = EAGAIN;
        return NULL;
    }
    if (total > 0 && !(buf = malloc (total)))
        return NULL;
    for (int i = 0; i < count; i++) {
        const void *data;
        size_t len;
        (void)cache_get_raw (l->cache, treeobj_get_blobref (valref, i), &data,
                             &len);
        if (len > 0)
            memcpy (buf + off, data, len);
        off += len;
    }
    val = treeobj_create_val (buf, total);
    free (buf);
    return val;
}

/* Apply the flag rules of lookup.h to the final object. */
static json_t *result (struct lookup *l, json_t *dirent)
{
    json_t *dir;

    if ((l->flags & FLUX_KVS_TREEOBJ))
        return json_incref (dirent);
    if (treeobj_is_symlink (dirent) && (l->flags & FLUX_KVS_READLINK))
        return json_incref (dirent);
    if ((l->flags & FLUX_KVS_READLINK)) {
        errno = EINVAL;
        return NULL;
    }
    if (treeobj_is_dirref (dirent) || treeobj_is_dir (dirent)) {
        if (!(l->flags & FLUX_KVS_READDIR)) {
            errno = EISDIR;
            return NULL;
        }
        if (treeobj_is_dir (dirent))
            return json_incref (dirent);
        if (!(dir = load_dir (l, dirent)))
            return NULL;
        if (treeobj_is_hdir (dir))
            return hdir_to_dir (l, dir);
        return json_incref (dir);
    }
    if ((l->flags & FLUX_KVS_READDIR)) {
        errno = ENOTDIR;
        return NULL;
    }
    if (treeobj_is_val (dirent))
        return json_incref (dirent);
    if (treeobj_is_valref (dirent))
        return valref_value (l, dirent);
    errno = ENOTRECOVERABLE;
    return NULL;
}

int lookup_run (struct lookup *l, json_t **val)
{
    json_t *dirent, *v;

    if (!l || !val) {
        errno = EINVAL;
        return -1;
    }
    clear_missing (l);
    if (walk (l, &dirent) < 0)
        return -1;
    v = result (l, dirent);
    json_decref (dirent);
    if (!v)
        return -1;
    *val = v;
    return 0;
}

int lookup_missing_count (struct lookup *l)
{
    return l ? l->nmissing : 0;
}

const char *lookup_missing_ref (struct lookup *l, int index)
{
    if (!l || index < 0 || index >= l->nmissing)
        return NULL;
    return l->missing[index];
}

const char *lookup_missing_namespace (struct lookup *l)
{
    return l ? l->missing_ns : NULL;
}

const char *lookup_get_key (struct lookup *l)
{
    return l ? l->key : NULL;
}

const char *lookup_get_rootref (struct lookup *l)
{
    return l ? l->rootref : NULL;
}

const char *lookup_get_namespace (struct lookup *l)
{
    return l ? l->ns : NULL;
}
