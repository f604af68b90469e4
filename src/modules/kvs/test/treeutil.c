/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* treeutil.c - fake content store for the kvs unit tests. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libcontent/blobref.h"
#include "libkvs/treeobj.h"

#include "../dict.h"
#include "treeutil.h"

struct blob {
    void *data;
    size_t len;
    char ref[BLOBREF_MAX_STRING_SIZE];
};

struct pending {
    struct pending *next;
    struct fakestore *fs;
    char ref[BLOBREF_MAX_STRING_SIZE];
    int freed;
};

struct fakestore {
    char hashtype[16];
    struct dict *blobs;
    struct pending *pending; /* loads in flight, newest first */
    struct cache *cache;
    int loads;
};

static void blob_free (void *arg)
{
    struct blob *b = arg;
    if (b) {
        free (b->data);
        free (b);
    }
}

struct fakestore *fakestore_create (const char *hashtype)
{
    struct fakestore *fs = calloc (1, sizeof (*fs));

    if (!fs)
        return NULL;
    snprintf (fs->hashtype, sizeof (fs->hashtype), "%s", hashtype);
    fs->blobs = dict_create (blob_free);
    return fs;
}

void fakestore_destroy (struct fakestore *fs)
{
    if (fs) {
        dict_destroy (fs->blobs);
        free (fs);
    }
}

static struct blob *put (struct fakestore *fs, const char *ref,
                         const void *data, size_t len)
{
    struct blob *b = calloc (1, sizeof (*b));

    if (!b || !(b->data = malloc (len + 1)))
        abort ();
    memcpy (b->data, data, len);
    b->len = len;
    snprintf (b->ref, sizeof (b->ref), "%s", ref);
    (void)dict_delete (fs->blobs, ref);
    if (dict_insert (fs->blobs, ref, b) < 0)
        abort ();
    return b;
}

const char *fakestore_put (struct fakestore *fs, const void *data, size_t len)
{
    char ref[BLOBREF_MAX_STRING_SIZE];
    struct blob *b;

    if (blobref_hash (fs->hashtype, data, len, ref, sizeof (ref)) < 0)
        abort ();
    if ((b = dict_lookup (fs->blobs, ref)))
        return b->ref;
    return put (fs, ref, data, len)->ref;
}

const char *fakestore_put_obj (struct fakestore *fs, const json_t *obj)
{
    char *s = treeobj_encode (obj);
    const char *ref;

    if (!s)
        abort ();
    ref = fakestore_put (fs, s, strlen (s));
    free (s);
    return ref;
}

void fakestore_corrupt (struct fakestore *fs, const char *ref, const char *s)
{
    char cpy[BLOBREF_MAX_STRING_SIZE];
    snprintf (cpy, sizeof (cpy), "%s", ref);
    put (fs, cpy, s, strlen (s));
}

json_t *fakestore_dirref (struct fakestore *fs, const json_t *dir)
{
    return treeobj_create_dirref (fakestore_put_obj (fs, dir));
}

static void *load (const char *ref, void *arg)
{
    struct fakestore *fs = arg;
    struct pending *p = calloc (1, sizeof (*p));

    if (!p)
        return NULL;
    p->fs = fs;
    snprintf (p->ref, sizeof (p->ref), "%s", ref);
    p->next = fs->pending;
    fs->pending = p;
    fs->loads++;
    return p;
}

/* The cache frees a handle after the response, or at destroy: unlink it
 * from the pending list if it is still there.
 */
static void load_free (void *handle)
{
    struct pending *p = handle;
    struct pending **pp = &p->fs->pending;

    while (*pp && *pp != p)
        pp = &(*pp)->next;
    if (*pp)
        *pp = p->next;
    free (p);
}

struct cache *fakestore_cache (struct fakestore *fs, size_t max)
{
    fs->cache = cache_create (max, 0, load, load_free, fs);
    return fs->cache;
}

void fakestore_set_cache (struct fakestore *fs, struct cache *c)
{
    fs->cache = c;
}

int fakestore_pending (struct fakestore *fs)
{
    int n = 0;
    for (struct pending *p = fs->pending; p; p = p->next)
        n++;
    return n;
}

int fakestore_loads (struct fakestore *fs)
{
    return fs->loads;
}

int fakestore_deliver (struct fakestore *fs)
{
    int n = 0;

    while (fs->pending) {
        struct pending *p = fs->pending;
        char ref[BLOBREF_MAX_STRING_SIZE];
        struct blob *b;
        /* oldest first */
        while (p->next)
            p = p->next;
        snprintf (ref, sizeof (ref), "%s", p->ref);
        if ((b = dict_lookup (fs->blobs, ref)))
            cache_load_response (fs->cache, ref, 0, b->data, b->len);
        else
            cache_load_response (fs->cache, ref, ENOENT, NULL, 0);
        n++;
    }
    return n;
}

static void count_cb (int errnum, const char *ref, void *arg)
{
    int *count = arg;
    (*count)++;
}

int run_lookup (struct fakestore *fs, struct cache *c, struct lookup *l,
                json_t **val, int *rounds)
{
    int n = 0, rc;

    for (;;) {
        int called = 0, waits = 0;
        if ((rc = lookup_run (l, val)) == 0)
            break;
        if (errno != EAGAIN || lookup_missing_namespace (l))
            break;
        for (int i = 0; i < lookup_missing_count (l); i++) {
            if (cache_wait (c, lookup_missing_ref (l, i), count_cb, &called)
                == 0)
                waits++;
        }
        if (waits == 0)
            break;
        fakestore_deliver (fs);
        if (called != waits) {
            errno = EIO;
            return -1;
        }
        n++;
        if (n > 100) {
            errno = EIO;
            return -1;
        }
    }
    if (rounds)
        *rounds = n;
    return rc;
}

char *get_string (struct fakestore *fs, struct cache *c, const char *rootref,
                  const char *key, int flags)
{
    struct lookup *l
        = lookup_create (c, "primary", rootref, key, flags, NULL, NULL);
    json_t *val = NULL;
    void *data = NULL;
    size_t len;
    int saved_errno;

    if (!l)
        return NULL;
    if (run_lookup (fs, c, l, &val, NULL) < 0) {
        saved_errno = errno;
        lookup_destroy (l);
        errno = saved_errno;
        return NULL;
    }
    lookup_destroy (l);
    if (treeobj_decode_val (val, &data, &len) < 0) {
        saved_errno = errno;
        json_decref (val);
        errno = saved_errno;
        return NULL;
    }
    json_decref (val);
    return data;
}

json_t *val_str (const char *s)
{
    return treeobj_create_val (s, strlen (s));
}
