/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* lookup unit tests: every result and error path of a walk, symlinks
 * (also across namespaces), valref concatenation, lookupat, and walks
 * that stall on objects missing from the cache.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libcontent/blobref.h"
#include "libkvs/kvs.h"
#include "libkvs/treeobj.h"
#include "tap.h"

#include "../lookup.h"
#include "treeutil.h"

static struct fakestore *fs;
static struct cache *cache;
static char rootref[BLOBREF_MAX_STRING_SIZE];
static char otherref[BLOBREF_MAX_STRING_SIZE];
static char dref[BLOBREF_MAX_STRING_SIZE]; /* b.d */

static void build (void)
{
    json_t *root = treeobj_create_dir ();
    json_t *b = treeobj_create_dir (), *d = treeobj_create_dir ();
    json_t *inl = treeobj_create_dir (), *other = treeobj_create_dir ();
    json_t *v, *o;

    treeobj_insert_entry (d, "e", o = val_str ("deep"));
    json_decref (o);
    snprintf (dref, sizeof (dref), "%s", fakestore_put_obj (fs, d));
    treeobj_insert_entry (b, "c", o = val_str ("world"));
    json_decref (o);
    treeobj_insert_entry (b, "d", o = treeobj_create_dirref (dref));
    json_decref (o);
    treeobj_insert_entry (root, "a", o = val_str ("hello"));
    json_decref (o);
    treeobj_insert_entry (root, "b", o = fakestore_dirref (fs, b));
    json_decref (o);
    v = treeobj_create_valref (fakestore_put (fs, "one", 3));
    treeobj_append_blobref (v, fakestore_put (fs, "two", 3));
    treeobj_append_blobref (v, fakestore_put (fs, "three", 5));
    treeobj_append_blobref (v, fakestore_put (fs, "one", 3));
    treeobj_insert_entry (root, "v", v);
    json_decref (v);
#define LINK(name, ns, target)                           \
    do {                                                 \
        json_t *s = treeobj_create_symlink (ns, target); \
        treeobj_insert_entry (root, name, s);            \
        json_decref (s);                                 \
    } while (0)
    LINK ("l", NULL, "b.c");
    LINK ("l2", NULL, "b");
    LINK ("l3", NULL, "l2.d"); /* a link through a link */
    LINK ("lroot", NULL, ".");
    LINK ("loop1", NULL, "loop2");
    LINK ("loop2", NULL, "loop1");
    LINK ("x", "other", "k");
    LINK ("xdir", "other", ".");
    LINK ("y", "primary", "a");
    LINK ("secret", "secret", "k");
    LINK ("absent", "absent", "k");
    LINK ("remote", "remote", "k");
    LINK ("dangling", NULL, "nosuch");
    treeobj_insert_entry (inl, "f", o = val_str ("inline"));
    json_decref (o);
    treeobj_insert_entry (root, "inl", inl);
    treeobj_insert_entry (root, "empty", o = val_str (""));
    json_decref (o);
    o = treeobj_create_dirref (fakestore_put (fs, "not json", 8));
    treeobj_insert_entry (root, "corrupt", o);
    json_decref (o);
    {
        json_t *val = val_str ("i am not a dir");
        o = treeobj_create_dirref (fakestore_put_obj (fs, val));
        treeobj_insert_entry (root, "notdir", o);
        json_decref (o);
        json_decref (val);
    }
    snprintf (rootref, sizeof (rootref), "%s", fakestore_put_obj (fs, root));
    treeobj_insert_entry (other, "k", o = val_str ("other-k"));
    json_decref (o);
    snprintf (otherref, sizeof (otherref), "%s", fakestore_put_obj (fs, other));
    json_decref (root);
    json_decref (b);
    json_decref (d);
    json_decref (inl);
    json_decref (other);
}

static int get_root (const char *ns, char *ref, size_t size, void *arg)
{
    int *calls = arg;
    if (calls)
        (*calls)++;
    if (!strcmp (ns, "other") || !strcmp (ns, "primary")) {
        snprintf (ref, size, "%s", !strcmp (ns, "other") ? otherref : rootref);
        return 0;
    }
    if (!strcmp (ns, "secret"))
        errno = EPERM;
    else if (!strcmp (ns, "remote"))
        errno = EAGAIN;
    else
        errno = ENOTSUP;
    return -1;
}

/* lookup key with flags; *val set on success; returns 0 or errno */
static int lk (const char *root, const char *ns, const char *key, int flags,
               json_t **val)
{
    struct lookup *l;
    json_t *v = NULL;
    int rc;

    if (!(l = lookup_create (cache, ns, root, key, flags, get_root, NULL)))
        return errno;
    rc = run_lookup (fs, cache, l, &v, NULL) == 0 ? 0 : errno;
    lookup_destroy (l);
    if (val)
        *val = v;
    else
        json_decref (v);
    return rc;
}

static bool is_string_val (const json_t *v, const char *s)
{
    void *data;
    size_t len;
    bool eq;

    if (!v || !treeobj_is_val (v) || treeobj_decode_val (v, &data, &len) < 0)
        return false;
    eq = len == strlen (s) && !memcmp (data, s, len);
    free (data);
    return eq;
}

static void check_str (const char *key, int flags, const char *expect)
{
    json_t *v = NULL;
    int rc = lk (rootref, "primary", key, flags, &v);
    ok (rc == 0 && is_string_val (v, expect), "%s (flags %d) is \"%s\"", key,
        flags, expect);
    json_decref (v);
}

static void check_err (const char *key, int flags, int errnum)
{
    int rc = lk (rootref, "primary", key, flags, NULL);
    ok (rc == errnum, "%s (flags %d) fails with %s", key, flags,
        strerror (errnum));
    if (rc != errnum)
        diag ("got %s", strerror (rc));
}

static void test_values (void)
{
    check_str ("a", 0, "hello");
    check_str (".a.", 0, "hello"); /* normalized */
    check_str ("b.c", 0, "world");
    check_str ("b..d.e", 0, "deep");
    check_str ("v", 0, "onetwothreeone");
    check_str ("empty", 0, "");
    check_str ("inl.f", 0, "inline");
}

static void test_errors (void)
{
    check_err ("nosuch", 0, ENOENT);
    check_err ("b.nosuch", 0, ENOENT);
    check_err ("a.b", 0, ENOENT); /* through a value */
    check_err ("v.x", 0, ENOENT); /* through a valref */
    check_err ("b", 0, EISDIR);   /* dirref without READDIR */
    check_err ("inl", 0, EISDIR); /* inline dir */
    check_err (".", 0, EISDIR);   /* root */
    check_err ("a", FLUX_KVS_READDIR, ENOTDIR);
    check_err ("v", FLUX_KVS_READDIR, ENOTDIR);
    check_err ("a", FLUX_KVS_READLINK, EINVAL);
    check_err ("b", FLUX_KVS_READLINK, EINVAL);
    check_err (".", FLUX_KVS_READLINK, EINVAL);
    check_err ("loop1", 0, ELOOP);
    check_err ("loop1.x", 0, ELOOP);
    check_err ("dangling", 0, ENOENT);
    check_err ("corrupt.x", 0, ENOTRECOVERABLE);
    check_err ("corrupt", FLUX_KVS_READDIR, ENOTRECOVERABLE);
    check_err ("notdir.x", 0, ENOTRECOVERABLE);
    check_err ("secret", 0, EPERM);
    check_err ("absent", 0, ENOTSUP);
}

static void test_dirs_treeobj (void)
{
    json_t *v = NULL;

    ok (lk (rootref, "primary", "b", FLUX_KVS_READDIR, &v) == 0
            && treeobj_is_dir (v) && treeobj_get_count (v) == 2
            && treeobj_is_dirref (treeobj_get_entry (v, "d")),
        "READDIR of a dirref gives the stored dir (subdirs as dirrefs)");
    json_decref (v);
    ok (lk (rootref, "primary", "inl", FLUX_KVS_READDIR, &v) == 0
            && treeobj_is_dir (v) && treeobj_get_entry (v, "f"),
        "READDIR of an inline dir gives it");
    json_decref (v);
    ok (lk (rootref, "primary", ".", FLUX_KVS_READDIR, &v) == 0
            && treeobj_is_dir (v) && treeobj_get_entry (v, "a"),
        "READDIR of the root gives the root dir");
    json_decref (v);
    ok (lk (rootref, "primary", ".", FLUX_KVS_TREEOBJ, &v) == 0
            && treeobj_is_dirref (v)
            && !strcmp (treeobj_get_blobref (v, 0), rootref),
        "TREEOBJ of the root is a dirref of the root");
    json_decref (v);
    ok (lk (rootref, "primary", "b.d", FLUX_KVS_TREEOBJ, &v) == 0
            && treeobj_is_dirref (v)
            && !strcmp (treeobj_get_blobref (v, 0), dref),
        "TREEOBJ of a subdir is its dirref");
    json_decref (v);
    ok (lk (rootref, "primary", "v", FLUX_KVS_TREEOBJ, &v) == 0
            && treeobj_is_valref (v) && treeobj_get_count (v) == 4,
        "TREEOBJ of a valref is the valref, not converted");
    json_decref (v);
    ok (lk (rootref, "primary", "b", FLUX_KVS_READDIR | FLUX_KVS_TREEOBJ, &v)
                == 0
            && treeobj_is_dirref (v),
        "READDIR|TREEOBJ gives the dirref");
    json_decref (v);
}

static void test_symlinks (void)
{
    json_t *v = NULL;
    const char *ns, *target;

    check_str ("l", 0, "world");
    check_str ("l2.c", 0, "world");
    check_str ("l2.d.e", 0, "deep");
    check_str ("l3.e", 0, "deep");
    check_str ("lroot.b.c", 0, "world");
    check_str ("lroot.l", 0, "world");
    check_str ("y", 0, "hello");
    check_str ("x", 0, "other-k");
    check_str ("xdir.k", 0, "other-k");
    ok (lk (rootref, "primary", "l", FLUX_KVS_READLINK, &v) == 0
            && treeobj_get_symlink (v, &ns, &target) == 0 && ns == NULL
            && !strcmp (target, "b.c"),
        "READLINK gives the symlink");
    json_decref (v);
    ok (lk (rootref, "primary", "x", FLUX_KVS_READLINK, &v) == 0
            && treeobj_get_symlink (v, &ns, &target) == 0 && ns
            && !strcmp (ns, "other"),
        "READLINK of a cross-namespace symlink gives its namespace");
    json_decref (v);
    ok (lk (rootref, "primary", "l", FLUX_KVS_TREEOBJ, &v) == 0
            && treeobj_is_symlink (v),
        "TREEOBJ does not follow the last symlink");
    json_decref (v);
    ok (lk (rootref, "primary", "l2.c", FLUX_KVS_READLINK, NULL) == EINVAL,
        "READLINK through a symlink to a value: EINVAL");
    ok (lk (rootref, "primary", "l2", FLUX_KVS_READDIR, &v) == 0
            && treeobj_is_dir (v),
        "READDIR follows a last symlink to a dir");
    json_decref (v);
    ok (lk (rootref, "primary", "l2", FLUX_KVS_READLINK | FLUX_KVS_READDIR, &v)
                == 0
            && treeobj_is_symlink (v),
        "READLINK|READDIR on a symlink gives the symlink");
    json_decref (v);
}

static void test_remote_namespace (void)
{
    struct lookup *l;
    json_t *v = NULL;

    l = lookup_create (cache, "primary", rootref, "remote", 0, get_root, NULL);
    ok (l && run_lookup (fs, cache, l, &v, NULL) < 0 && errno == EAGAIN
            && lookup_missing_namespace (l)
            && !strcmp (lookup_missing_namespace (l), "remote")
            && lookup_missing_count (l) == 0,
        "a namespace not known here: EAGAIN naming it");
    lookup_destroy (l);
    l = lookup_create (cache, "primary", rootref, "x", 0, NULL, NULL);
    ok (l && lookup_run (l, &v) < 0 && errno == ENOTSUP,
        "no get_root callback: cross-namespace symlinks are ENOTSUP");
    lookup_destroy (l);
}

static void test_lookupat (void)
{
    json_t *v = NULL;
    int calls = 0;
    struct lookup *l;

    /* at the subdir b.d as a root */
    check_err ("e", 0, ENOENT); /* not at the real root */
    ok (lk (dref, NULL, "e", 0, &v) == 0 && is_string_val (v, "deep"),
        "lookupat a snapshot root finds its keys");
    json_decref (v);
    ok (lk (otherref, NULL, "k", 0, &v) == 0 && is_string_val (v, "other-k"),
        "lookupat another namespace's root");
    json_decref (v);
    /* symlinks with a namespace always go through get_root in lookupat */
    l = lookup_create (cache, NULL, rootref, "y", 0, get_root, &calls);
    ok (l && run_lookup (fs, cache, l, &v, NULL) == 0 && calls == 1
            && is_string_val (v, "hello"),
        "lookupat: a symlink with a namespace asks for its root");
    json_decref (v);
    lookup_destroy (l);
    calls = 0;
    l = lookup_create (cache, NULL, rootref, "l", 0, get_root, &calls);
    ok (l && run_lookup (fs, cache, l, &v, NULL) == 0 && calls == 0
            && is_string_val (v, "world"),
        "lookupat: a symlink without a namespace stays in the snapshot");
    json_decref (v);
    lookup_destroy (l);
    ok (!strcmp (
            lookup_get_rootref (l = lookup_create (cache, NULL, dref, "..x..y.",
                                                   0, NULL, NULL)),
            dref)
            && !strcmp (lookup_get_key (l), "x.y"),
        "the lookup keeps its root and normalized key");
    lookup_destroy (l);
    ok (lookup_create (cache, NULL, "sha1-nope", "a", 0, NULL, NULL) == NULL
            && errno == EINVAL,
        "lookup_create with a malformed root: EINVAL");
}

static void test_stalls (void)
{
    struct lookup *l;
    json_t *v = NULL;
    int rounds = -1, rc;
    struct cache *saved = cache;

    /* a fresh, empty cache: every level stalls once */
    cache = fakestore_cache (fs, 0);
    l = lookup_create (cache, "primary", rootref, "b.d.e", 0, NULL, NULL);
    ok (lookup_run (l, &v) < 0 && errno == EAGAIN
            && lookup_missing_count (l) == 1
            && !strcmp (lookup_missing_ref (l, 0), rootref),
        "cold cache: the walk stalls on the root first");
    rc = run_lookup (fs, cache, l, &v, &rounds);
    ok (rc == 0 && is_string_val (v, "deep") && rounds == 3,
        "it completes after one stall per level (%d)", rounds);
    json_decref (v);
    lookup_destroy (l);

    l = lookup_create (cache, "primary", rootref, "v", 0, NULL, NULL);
    rc = lookup_run (l, &v);
    ok (rc < 0 && errno == EAGAIN && lookup_missing_count (l) == 3,
        "valref: every missing blob is named at once, each once (%d)",
        lookup_missing_count (l));
    ok (run_lookup (fs, cache, l, &v, &rounds) == 0
            && is_string_val (v, "onetwothreeone") && rounds == 1,
        "and the value is complete after one round");
    json_decref (v);
    lookup_destroy (l);

    ok (lookup_run (l = lookup_create (cache, "primary", rootref, "b.d.e", 0,
                                       NULL, NULL),
                    &v)
                == 0
            && is_string_val (v, "deep"),
        "warm cache: no stall");
    json_decref (v);
    lookup_destroy (l);
    cache_destroy (cache);
    cache = saved;
    fakestore_set_cache (fs, cache);
}

int main (void)
{
    plan (NO_PLAN);
    fs = fakestore_create ("sha1");
    cache = fakestore_cache (fs, 0);
    build ();
    test_values ();
    test_errors ();
    test_dirs_treeobj ();
    test_symlinks ();
    test_remote_namespace ();
    test_lookupat ();
    test_stalls ();
    cache_destroy (cache);
    fakestore_destroy (fs);
    done_testing ();
    return 0;
}
