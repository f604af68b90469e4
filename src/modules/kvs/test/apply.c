/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* apply unit tests: put, unlink, mkdir, symlink and append ops,
 * intermediate directories, ENOTDIR, several commits merged into one
 * root change, a failing commit inside a batch, missing objects, large
 * values, unchanged subtrees keeping their refs, big directories patched
 * in place, stored dirs in a foreign format, and hdirs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libcontent/blobref.h"
#include "libkvs/kvs.h"
#include "libkvs/treeobj.h"
#include "tap.h"

#include "../apply.h"
#include "../txn.h"
#include "treeutil.h"

static struct fakestore *fs;
static struct cache *cache;

static json_t *op (const char *key, int flags, json_t *dirent)
{
    return json_pack ("{s:s s:i s:o}", "key", key, "flags", flags, "dirent",
                      dirent ? dirent : json_null ());
}

static json_t *put (const char *key, const char *s)
{
    return op (key, 0, val_str (s));
}

static json_t *append (const char *key, const char *s)
{
    return op (key, FLUX_KVS_APPEND, val_str (s));
}

static json_t *unlink_op (const char *key)
{
    return op (key, 0, NULL);
}

static json_t *link_op (const char *key, const char *ns, const char *target)
{
    return op (key, 0, treeobj_create_symlink (ns, target));
}

/* A txn of the NULL-terminated ops (references stolen). */
static struct txn *mktxn (json_t *first, ...)
{
    json_t *ops = json_array ();
    struct txn *t;
    va_list ap;

    va_start (ap, first);
    for (json_t *o = first; o; o = va_arg (ap, json_t *))
        json_array_append_new (ops, o);
    va_end (ap);
    if (!(t = txn_create (ops, 0, false, NULL)))
        BAIL_OUT ("txn_create: %s", strerror (errno));
    json_decref (ops);
    return t;
}

static void noop_cb (int errnum, const char *ref, void *arg)
{
}

/* Apply t, loading missing objects from the fake store.  0 or errno. */
static int apply_one (struct apply *a, struct txn *t, int *stalls)
{
    flux_error_t error = {{0}};

    for (int n = 0; n < 1000; n++) {
        if (apply_txn (a, t, &error) == 0)
            return 0;
        if (errno != EAGAIN || !apply_missing_ref (a))
            return errno;
        if (stalls)
            (*stalls)++;
        for (int i = 0; i < apply_missing_count (a); i++) {
            if (cache_wait (cache, apply_missing (a, i), noop_cb, NULL) < 0)
                return errno;
        }
        fakestore_deliver (fs);
    }
    return EIO;
}

/* Finalize and "store": every new blob goes to the fake store. */
static void finish (struct apply *a, char *root, size_t size)
{
    int ok_all = 1;

    if (apply_finalize (a, root, size) < 0)
        BAIL_OUT ("apply_finalize: %s", strerror (errno));
    for (int i = 0; i < apply_blob_count (a); i++) {
        const struct apply_blob *b = apply_blob (a, i);
        const char *ref = fakestore_put (fs, b->data, b->len);
        if (strcmp (ref, b->ref) != 0)
            ok_all = 0;
        if (b->dir) {
            /* the canonical form: jansson's compact sorted dump */
            json_t *o = treeobj_decodeb (b->data, b->len);
            char *enc = o ? treeobj_encode (o) : NULL;
            if (!enc || strlen (enc) != b->len || memcmp (enc, b->data, b->len))
                ok_all = 0;
            free (enc);
            json_decref (o);
        }
    }
    ok (ok_all, "every new blob hashes to its ref (dirs encode as stored)");
}

/* lookups through a fresh, cold cache: only the stored blobs count */
static char *get (const char *root, const char *key)
{
    struct cache *saved = cache;
    char *s;

    cache = fakestore_cache (fs, 0);
    s = get_string (fs, cache, root, key, 0);
    {
        int saved_errno = errno;
        cache_destroy (cache);
        errno = saved_errno;
    }
    cache = saved;
    fakestore_set_cache (fs, cache);
    return s;
}

static bool has (const char *root, const char *key, const char *expect)
{
    char *s = get (root, key);
    bool eq = s && !strcmp (s, expect);
    if (!eq)
        diag ("%s: got %s", key, s ? s : strerror (errno));
    free (s);
    return eq;
}

static bool absent (const char *root, const char *key)
{
    char *s = get (root, key);
    bool rc = !s && errno == ENOENT;
    free (s);
    return rc;
}

static json_t *treeobj_at (const char *root, const char *key)
{
    struct cache *c = fakestore_cache (fs, 0);
    struct lookup *l
        = lookup_create (c, "primary", root, key, FLUX_KVS_TREEOBJ, NULL, NULL);
    json_t *v = NULL;

    if (run_lookup (fs, c, l, &v, NULL) < 0)
        v = NULL;
    lookup_destroy (l);
    cache_destroy (c);
    fakestore_set_cache (fs, cache);
    return v;
}

static char root0[BLOBREF_MAX_STRING_SIZE], root1[BLOBREF_MAX_STRING_SIZE],
    root2[BLOBREF_MAX_STRING_SIZE], root3[BLOBREF_MAX_STRING_SIZE];

static void test_merge (void)
{
    struct apply *a = apply_create (cache, "primary", root0, "sha1", 256);
    struct txn *t[5];
    json_t *keys;
    int rc = 0;

    t[0] = mktxn (put ("a", "1"), NULL);
    t[1] = mktxn (put ("x.y.z", "deep"), NULL);
    t[2] = mktxn (op ("m", 0, treeobj_create_dir ()), NULL);
    t[3] = mktxn (put ("m.n", "inside"), put ("a", "2"), NULL);
    t[4] = mktxn (put ("a", "3"), NULL);
    for (int i = 0; i < 5; i++)
        rc |= apply_one (a, t[i], NULL);
    ok (rc == 0, "five commits applied to one working root");
    finish (a, root1, sizeof (root1));
    ok (strcmp (root0, root1) != 0, "the root changed");
    ok (has (root1, "a", "3"), "a: the last commit wins");
    ok (has (root1, "x.y.z", "deep"), "intermediate dirs were created");
    ok (has (root1, "m.n", "inside"), "mkdir then a put inside it, same batch");
    keys = apply_keys (a);
    ok (json_array_size (keys) == 4
            && !strcmp (json_string_value (json_array_get (keys, 0)), "a")
            && !strcmp (json_string_value (json_array_get (keys, 3)), "m.n"),
        "keys: each written key once, in order");
    {
        json_t *x = treeobj_at (root1, "x"), *m = treeobj_at (root1, "m");
        ok (treeobj_is_dirref (x) && treeobj_is_dirref (m),
            "new directories are stored as dirrefs");
        json_decref (x);
        json_decref (m);
    }
    for (int i = 0; i < 5; i++)
        txn_destroy (t[i]);
    apply_destroy (a);
}

static void test_failing_commit (void)
{
    struct apply *a = apply_create (cache, "primary", root1, "sha1", 256);
    struct txn *bad, *good, *unl, *dot;
    flux_error_t error = {{0}};
    json_t *x1, *x2;

    bad = mktxn (put ("p", "1"), put ("q.r", "2"), put ("a.b", "3"), NULL);
    good = mktxn (put ("q.s", "4"), NULL);
    unl = mktxn (unlink_op ("nosuch"), unlink_op ("a.b.c"), unlink_op ("x.y.z"),
                 unlink_op ("nodir.at.all"), NULL);
    dot = mktxn (link_op ("dotlink", NULL, "."), NULL);
    ok (apply_one (a, bad, NULL) == ENOTDIR,
        "a put through a value fails with ENOTDIR");
    ok (apply_txn (a, bad, &error) < 0 && errno == ENOTDIR
            && strlen (error.text) > 0,
        "with a message: %s", error.text);
    ok (apply_one (a, good, NULL) == 0, "the next commit applies");
    ok (apply_one (a, unl, NULL) == 0,
        "unlinks of missing keys and paths through values are no-ops");
    ok (apply_one (a, dot, NULL) == 0, "a symlink to the root");
    finish (a, root2, sizeof (root2));
    ok (absent (root2, "p") && absent (root2, "q.r"),
        "nothing of the failed commit was kept");
    ok (has (root2, "q.s", "4"), "the other commit's key is there");
    ok (has (root2, "a", "3"), "a is untouched");
    ok (absent (root2, "x.y.z"), "x.y.z was unlinked");
    x1 = treeobj_at (root2, "x.y");
    ok (x1 && treeobj_is_dirref (x1), "its parent dir remains");
    json_decref (x1);
    x1 = treeobj_at (root1, "m");
    x2 = treeobj_at (root2, "m");
    ok (x1 && x2 && json_equal (x1, x2),
        "an unchanged subtree keeps its dirref");
    json_decref (x1);
    json_decref (x2);
    txn_destroy (bad);
    txn_destroy (good);
    txn_destroy (unl);
    txn_destroy (dot);
    apply_destroy (a);
}

static void test_append (void)
{
    struct apply *a = apply_create (cache, "primary", root2, "sha1", 256);
    struct txn *t[4], *dir, *lnk, *lnkset;
    json_t *v;
    char r[BLOBREF_MAX_STRING_SIZE];

    t[0] = mktxn (append ("log", "one,"), NULL);
    t[1] = mktxn (append ("log", "two,"), NULL);
    t[2] = mktxn (append ("log", "three,"), append ("log", "four,"), NULL);
    t[3] = mktxn (append ("a", "+appended"), NULL);
    lnkset = mktxn (link_op ("lnk", NULL, "a"), NULL);
    dir = mktxn (append ("m", "x"), NULL);
    lnk = mktxn (append ("lnk", "x"), NULL);
    ok (apply_one (a, t[0], NULL) == 0 && apply_one (a, t[1], NULL) == 0
            && apply_one (a, t[2], NULL) == 0 && apply_one (a, t[3], NULL) == 0
            && apply_one (a, lnkset, NULL) == 0,
        "appends in one batch");
    ok (apply_one (a, dir, NULL) == EISDIR, "append to a dir: EISDIR");
    ok (apply_one (a, lnk, NULL) == EOPNOTSUPP,
        "append to a symlink: EOPNOTSUPP");
    finish (a, r, sizeof (r));
    ok (has (r, "log", "one,two,three,four,"), "appends kept in order");
    v = treeobj_at (r, "log");
    ok (v && treeobj_is_valref (v) && treeobj_get_count (v) == 4,
        "the appended key is a valref of 4 blobs");
    json_decref (v);
    ok (has (r, "a", "3+appended"), "append to a val: old value + new");
    v = treeobj_at (r, "a");
    ok (v && treeobj_is_valref (v) && treeobj_get_count (v) == 2,
        "and it became a valref of 2 blobs");
    json_decref (v);
    apply_destroy (a);

    /* next batch: one more */
    a = apply_create (cache, "primary", r, "sha1", 256);
    txn_destroy (t[0]);
    t[0] = mktxn (append ("log", "five"), NULL);
    ok (apply_one (a, t[0], NULL) == 0, "append in a later batch");
    finish (a, root3, sizeof (root3));
    ok (has (root3, "log", "one,two,three,four,five"),
        "appended after the earlier blobs");
    v = treeobj_at (root3, "log");
    ok (v && treeobj_get_count (v) == 5, "5 blobs");
    json_decref (v);
    for (int i = 0; i < 4; i++)
        txn_destroy (t[i]);
    txn_destroy (dir);
    txn_destroy (lnk);
    txn_destroy (lnkset);
    apply_destroy (a);
}

/* Store a batch's blobs; add the bytes of its value blobs to *vbytes and
 * keep the largest dir blob in *maxdir. */
static void store_quiet (struct apply *a, char *root, size_t size,
                         size_t *vbytes, size_t *maxdir)
{
    if (apply_finalize (a, root, size) < 0)
        BAIL_OUT ("apply_finalize: %s", strerror (errno));
    for (int i = 0; i < apply_blob_count (a); i++) {
        const struct apply_blob *b = apply_blob (a, i);
        (void)fakestore_put (fs, b->data, b->len);
        if (!b->dir)
            *vbytes += b->len;
        else if (b->len > *maxdir)
            *maxdir = b->len;
    }
}

/* Appends past the first 16 blobs are folded: the valref stays short,
 * the first 16 blobs are kept as they were, the value is unchanged, and
 * what n appends store grows as n log n, not n^2. */
static void test_append_fold (void)
{
    const int n = 1000;
    char r[BLOBREF_MAX_STRING_SIZE];
    char first[BLOBREF_MAX_STRING_SIZE];
    char *expect = calloc (1, n * 16 + 1);
    size_t vbytes = 0, maxdir = 0, len = 0;
    int maxcount = 0, errs = 0;
    struct apply *a;
    struct txn *t;
    json_t *v;

    if (!expect)
        BAIL_OUT ("out of memory");
    snprintf (r, sizeof (r), "%s", root0);
    for (int i = 0; i < n; i++) {
        char line[32];
        snprintf (line, sizeof (line), "line %04d\n", i);
        len += snprintf (expect + len, 32, "%s", line);
        a = apply_create (cache, "primary", r, "sha1", 4);
        t = mktxn (append ("f.log", line), NULL);
        if (apply_one (a, t, NULL) != 0)
            errs++;
        store_quiet (a, r, sizeof (r), &vbytes, &maxdir);
        txn_destroy (t);
        apply_destroy (a);
        if (i % 50 == 49 || i < 40) {
            v = treeobj_at (r, "f.log");
            if (!v || !treeobj_is_valref (v))
                errs++;
            else if (treeobj_get_count (v) > maxcount)
                maxcount = treeobj_get_count (v);
            json_decref (v);
        }
    }
    ok (errs == 0, "%d appends, each its own batch, from a cold cache", n);
    ok (has (r, "f.log", expect), "the value is every line, in order");
    v = treeobj_at (r, "f.log");
    blobref_hash ("sha1", "line 0000\n", 10, first, sizeof (first));
    ok (v && treeobj_get_blobref (v, 0)
            && !strcmp (treeobj_get_blobref (v, 0), first)
            && treeobj_get_count (v) > 16,
        "the first blob is the first append's, still");
    diag ("%zu bytes in %d blobs (at most %d seen); value blobs stored: "
          "%zu bytes; largest dir %zu bytes",
          len, v ? treeobj_get_count (v) : -1, maxcount, vbytes, maxdir);
    /* 16 kept + 1 + log2 (10000 / 10) */
    ok (maxcount <= 16 + 1 + 10, "the valref never held more than 27 refs");
    ok (vbytes <= len * 12, "the value's bytes were copied at most 12 times");
    ok (maxdir < 2000, "no directory blob grew past 2000 bytes");
    json_decref (v);

    /* an empty append changes nothing */
    a = apply_create (cache, "primary", r, "sha1", 4);
    t = mktxn (append ("f.log", ""), NULL);
    {
        char r2[BLOBREF_MAX_STRING_SIZE];
        ok (apply_one (a, t, NULL) == 0, "an empty append is applied");
        store_quiet (a, r2, sizeof (r2), &vbytes, &maxdir);
        ok (!strcmp (r2, r), "and leaves the root as it was");
    }
    txn_destroy (t);
    apply_destroy (a);

    /* many appends in one batch fold through the batch's own blobs, and a
     * failing commit after them takes its fold back */
    a = apply_create (cache, "primary", root0, "sha1", 4);
    len = 0;
    errs = 0;
    for (int i = 0; i < 200; i++) {
        char line[32];
        snprintf (line, sizeof (line), "x%d,", i);
        len += snprintf (expect + len, 32, "%s", line);
        t = mktxn (append ("g", line), NULL);
        if (apply_one (a, t, NULL) != 0)
            errs++;
        txn_destroy (t);
    }
    t = mktxn (append ("g", "lost"), append ("g.sub", "x"), NULL);
    ok (errs == 0 && apply_one (a, t, NULL) == ENOTDIR,
        "200 appends in one batch, then a commit that fails");
    txn_destroy (t);
    store_quiet (a, r, sizeof (r), &vbytes, &maxdir);
    ok (has (r, "g", expect), "the batch's value is its 200 appends");
    v = treeobj_at (r, "g");
    ok (v && treeobj_get_count (v) > 16 && treeobj_get_count (v) <= 16 + 1 + 9,
        "in at most 26 blobs");
    json_decref (v);
    apply_destroy (a);

    /* big appends are not copied: 30 of 64 KiB stay 30 blobs */
    a = apply_create (cache, "primary", root0, "sha1", 4);
    errs = 0;
    vbytes = 0;
    for (int i = 0; i < 30; i++) {
        char *big = malloc (65536 + 1);
        if (!big)
            BAIL_OUT ("out of memory");
        memset (big, 'a' + i % 26, 65536);
        big[65536] = '\0';
        big[0] = 'A' + i; /* each different */
        t = mktxn (append ("big", big), NULL);
        if (apply_one (a, t, NULL) != 0)
            errs++;
        txn_destroy (t);
        free (big);
    }
    store_quiet (a, r, sizeof (r), &vbytes, &maxdir);
    v = treeobj_at (r, "big");
    ok (errs == 0 && v && treeobj_get_count (v) == 30,
        "30 appends of 64 KiB are 30 blobs");
    ok (vbytes == 30 * 65536, "none was copied");
    json_decref (v);
    apply_destroy (a);
    free (expect);
}

static void test_symlinks (void)
{
    struct apply *a = apply_create (cache, "primary", root3, "sha1", 256);
    struct txn *t1, *t2, *t3, *t4, *t5, *t6;
    char r[BLOBREF_MAX_STRING_SIZE];
    json_t *v;

    t1 = mktxn (link_op ("ln", NULL, "x"), link_op ("s1", NULL, "s2"),
                link_op ("s2", NULL, "s1"), link_op ("lo", "other", "k"),
                link_op ("lp", "primary", "q"), NULL);
    t2 = mktxn (put ("ln.w", "5"), NULL);
    t3 = mktxn (put ("lo.k", "x"), NULL);
    t4 = mktxn (put ("s1.k", "x"), NULL);
    t5 = mktxn (put ("lp.t", "6"), put ("ln", "replaced?"), NULL);
    t6 = mktxn (put ("dotlink.viaroot", "7"), NULL);
    ok (apply_one (a, t1, NULL) == 0, "symlinks put");
    ok (apply_one (a, t2, NULL) == 0, "a put through a symlink");
    ok (apply_one (a, t3, NULL) == EINVAL,
        "a put through a symlink to another namespace: EINVAL");
    ok (apply_one (a, t4, NULL) == ELOOP, "a symlink loop: ELOOP");
    ok (apply_one (a, t5, NULL) == 0,
        "a symlink naming this namespace is followed; the last component "
        "is replaced, not followed");
    ok (apply_one (a, t6, NULL) == 0, "a symlink to the root");
    finish (a, r, sizeof (r));
    ok (has (r, "x.w", "5"), "the put landed at the target");
    ok (has (r, "q.t", "6"), "same for the namespaced symlink");
    ok (has (r, "viaroot", "7"), "and for the root symlink");
    ok (has (r, "ln", "replaced?"), "ln itself was replaced by a value");
    v = treeobj_at (r, "s1");
    ok (v && treeobj_is_symlink (v), "s1 is still a symlink");
    json_decref (v);
    txn_destroy (t1);
    txn_destroy (t2);
    txn_destroy (t3);
    txn_destroy (t4);
    txn_destroy (t5);
    txn_destroy (t6);
    apply_destroy (a);
}

static void test_large_and_inline (void)
{
    struct apply *a = apply_create (cache, "primary", root3, "sha1", 8);
    struct txn *t;
    char r[BLOBREF_MAX_STRING_SIZE];
    json_t *v, *d = treeobj_create_dir (), *e = val_str ("a long inline value");

    treeobj_insert_entry (d, "e", e);
    json_decref (e);
    t = mktxn (put ("big", "0123456789abcdef"), put ("small", "01234567"),
               op ("d", 0, d), NULL);
    ok (apply_one (a, t, NULL) == 0, "put a large, a small value, a full dir");
    finish (a, r, sizeof (r));
    v = treeobj_at (r, "big");
    ok (v && treeobj_is_valref (v) && treeobj_get_count (v) == 1,
        "a value over inline-max is stored as a valref");
    json_decref (v);
    v = treeobj_at (r, "small");
    ok (v && treeobj_is_val (v), "a value of inline-max bytes stays a val");
    json_decref (v);
    ok (has (r, "big", "0123456789abcdef"), "the large value reads back");
    v = treeobj_at (r, "d");
    ok (v && treeobj_is_dirref (v), "a dir given inline is stored as dirref");
    json_decref (v);
    ok (has (r, "d.e", "a long inline value"), "with its contents");
    v = treeobj_at (r, "d.e");
    ok (v && treeobj_is_valref (v), "whose large value became a valref too");
    json_decref (v);
    txn_destroy (t);
    apply_destroy (a);
}

static void test_missing (void)
{
    struct apply *a;
    struct txn *t;
    char r[BLOBREF_MAX_STRING_SIZE];
    int stalls = 0, rc;
    const char *ref;

    /* cold cache */
    cache_destroy (cache);
    cache = fakestore_cache (fs, 0);
    a = apply_create (cache, "primary", root3, "sha1", 4);
    t = mktxn (put ("big", "a value of more than four bytes"),
               put ("x.y.new", "1"), put ("m.n", "2"), NULL);
    ok (apply_txn (a, t, NULL) < 0 && errno == EAGAIN
            && (ref = apply_missing_ref (a)) && !strcmp (ref, root3),
        "cold cache: EAGAIN on the root");
    cache_wait (cache, root3, noop_cb, NULL);
    fakestore_deliver (fs);
    ok (apply_txn (a, t, NULL) < 0 && errno == EAGAIN && apply_missing_ref (a)
            && apply_blob_count (a) == 0,
        "then EAGAIN on a subdir, with nothing of the commit kept");
    ok (apply_missing_count (a) == 2 && apply_missing (a, 0)
            && apply_missing (a, 1)
            && strcmp (apply_missing (a, 0), apply_missing (a, 1)) != 0
            && !apply_missing (a, 2),
        "both subdirs the ops go through are named at once (x and m)");
    rc = apply_one (a, t, &stalls);
    ok (rc == 0 && stalls == 2,
        "applies once they and x.y are loaded (%d more stalls: x and m, then"
        " x.y)",
        stalls);
    cmp_ok (apply_blob_count (a), "==", 1, "one value blob before finalize");
    {
        /* the same commit on a warm cache: as many dirs copied */
        struct apply *w = apply_create (cache, "primary", root3, "sha1", 4);
        ok (apply_txn (w, t, NULL) == 0
                && apply_owned_count (a) == apply_owned_count (w),
            "the four attempts kept the copies of one: %zu dirs owned",
            apply_owned_count (a));
        apply_destroy (w);
    }
    finish (a, r, sizeof (r));
    ok (has (r, "x.y.new", "1") && has (r, "m.n", "2") && absent (r, "x.w"),
        "values in the new root (x.w was only in the symlink test)");
    ok (has (r, "log", "one,two,three,four,five"),
        "untouched keys still there");
    txn_destroy (t);
    apply_destroy (a);
}

static void test_nothing_changed (void)
{
    struct apply *a = apply_create (cache, "primary", root3, "sha1", 256);
    struct txn *t = mktxn (put ("a.b", "x"), NULL);
    struct txn *e = mktxn (NULL);
    char r[BLOBREF_MAX_STRING_SIZE];

    ok (apply_one (a, t, NULL) == ENOTDIR, "a failing commit");
    ok (apply_finalize (a, r, sizeof (r)) == 0 && !strcmp (r, root3)
            && apply_blob_count (a) == 0,
        "all commits failed: the root is unchanged, no blobs");
    ok (apply_txn (a, t, NULL) < 0 && errno == EINVAL,
        "apply after finalize: EINVAL");
    apply_destroy (a);
    a = apply_create (cache, "primary", root3, "sha1", 256);
    ok (apply_one (a, e, NULL) == 0 && apply_finalize (a, r, sizeof (r)) == 0
            && !strcmp (r, root3),
        "an empty commit leaves the root as it is");
    apply_destroy (a);
    ok (apply_create (cache, "primary", "bad", "sha1", 1) == NULL
            && errno == EINVAL,
        "apply_create with a bad root: EINVAL");
    ok (apply_create (cache, "primary", root3, "md5", 1) == NULL
            && errno == EINVAL,
        "apply_create with an unknown hash: EINVAL");
    txn_destroy (t);
    txn_destroy (e);
}

/* Entries of the dir at key (READDIR through a cold cache), -1 on error. */
static int dir_size (const char *root, const char *key)
{
    struct cache *c = fakestore_cache (fs, 0);
    struct lookup *l
        = lookup_create (c, "primary", root, key, FLUX_KVS_READDIR, NULL, NULL);
    json_t *v = NULL;
    int n = -1;

    if (run_lookup (fs, c, l, &v, NULL) == 0 && treeobj_is_dir (v))
        n = (int)json_object_size (treeobj_get_data (v));
    json_decref (v);
    lookup_destroy (l);
    cache_destroy (c);
    fakestore_set_cache (fs, cache);
    return n;
}

/* A big directory is patched, not copied: loaded cold, changed at both
 * ends and in the middle by several commits (one failing), and stored
 * in canonical form with every other entry intact. */
static void test_big_dir (void)
{
    json_t *ops = json_array ();
    struct txn *t;
    struct apply *a;
    char rootA[BLOBREF_MAX_STRING_SIZE], rootB[BLOBREF_MAX_STRING_SIZE];
    char key[64], val[64];
    int rc = 0;

    for (int i = 0; i < 500; i++) {
        snprintf (key, sizeof (key), "big.k%03d", i);
        snprintf (val, sizeof (val), "v%d", i);
        json_array_append_new (ops, put (key, val));
    }
    if (!(t = txn_create (ops, 0, false, NULL)))
        BAIL_OUT ("txn_create");
    json_decref (ops);
    a = apply_create (cache, "primary", root0, "sha1", 256);
    ok (apply_one (a, t, NULL) == 0, "a commit of 500 keys in one dir");
    finish (a, rootA, sizeof (rootA));
    apply_destroy (a);
    txn_destroy (t);
    ok (dir_size (rootA, "big") == 500, "big has 500 entries");

    /* a cold cache: the root and big are loaded, then patched */
    cache_destroy (cache);
    cache = fakestore_cache (fs, 0);
    a = apply_create (cache, "primary", rootA, "sha1", 256);
    struct txn *t1
        = mktxn (put ("big.k250", "changed"), put ("big.new", "n"), NULL);
    struct txn *t2 = mktxn (unlink_op ("big.k000"), unlink_op ("big.k499"),
                            unlink_op ("big.nothere"), NULL);
    struct txn *t3
        = mktxn (put ("big.k100", "lost"), put ("big.k101.x", "y"), NULL);
    struct txn *t4 = mktxn (put ("big.k250", "again"), put ("big.k000", "back"),
                            unlink_op ("big.new"), NULL);
    rc |= apply_one (a, t1, NULL);
    rc |= apply_one (a, t2, NULL);
    ok (rc == 0, "puts and unlinks at both ends and in the middle");
    ok (apply_one (a, t3, NULL) == ENOTDIR,
        "a commit writing through a value fails");
    ok (apply_one (a, t4, NULL) == 0, "a later commit re-adds and removes");
    finish (a, rootB, sizeof (rootB));
    ok (has (rootB, "big.k250", "again") && has (rootB, "big.k000", "back")
            && absent (rootB, "big.k499") && absent (rootB, "big.new"),
        "the changes are there");
    ok (has (rootB, "big.k100", "v100") && has (rootB, "big.k101", "v101")
            && has (rootB, "big.k001", "v1") && has (rootB, "big.k498", "v498"),
        "the failed commit left nothing, the rest is intact");
    ok (dir_size (rootB, "big") == 499, "big has 499 entries");
    apply_destroy (a);
    txn_destroy (t1);
    txn_destroy (t2);
    txn_destroy (t3);
    txn_destroy (t4);
}

/* A stored dir not in canonical form (unsorted, spaced) is copied whole
 * instead of patched: the result is canonical and complete. */
static void test_foreign_dir (void)
{
    const char *foreign
        = "{\"ver\":1, \"type\":\"dir\", \"data\":{"
          "\"zeta\":{\"data\":\"MQ==\",\"type\":\"val\",\"ver\":1},"
          "\"alpha\":{\"data\":\"Mg==\",\"type\":\"val\",\"ver\":1}}}";
    const char *ref = fakestore_put (fs, foreign, strlen (foreign));
    json_t *root = treeobj_create_dir ();
    json_t *dref = treeobj_create_dirref (ref);
    char rootF[BLOBREF_MAX_STRING_SIZE], r[BLOBREF_MAX_STRING_SIZE];
    struct apply *a;
    struct txn *t = mktxn (put ("f.mid", "3"), NULL);

    treeobj_insert_entry (root, "f", dref);
    snprintf (rootF, sizeof (rootF), "%s", fakestore_put_obj (fs, root));
    cache_destroy (cache);
    cache = fakestore_cache (fs, 0);
    a = apply_create (cache, "primary", rootF, "sha1", 256);
    ok (apply_one (a, t, NULL) == 0, "a put into a foreign-format dir");
    finish (a, r, sizeof (r));
    ok (has (r, "f.zeta", "1") && has (r, "f.alpha", "2")
            && has (r, "f.mid", "3"),
        "all its entries and the new one are there");
    apply_destroy (a);
    txn_destroy (t);
    json_decref (dref);
    json_decref (root);
}

/* The stored object behind the dirref at key (new reference). */
static json_t *stored_at (const char *root, const char *key)
{
    json_t *dref = treeobj_at (root, key), *obj = NULL;
    struct cache *c = fakestore_cache (fs, 0);
    const char *ref = dref ? treeobj_get_blobref (dref, 0) : NULL;

    if (ref && cache_wait (c, ref, noop_cb, NULL) == 0) {
        fakestore_deliver (fs);
        obj = json_incref (cache_get_treeobj (c, ref));
    }
    json_decref (dref);
    cache_destroy (c);
    fakestore_set_cache (fs, cache);
    return obj;
}

/* Bytes of the blobs a batch created. */
static size_t blob_bytes (struct apply *a)
{
    size_t n = 0;
    for (int i = 0; i < apply_blob_count (a); i++)
        n += apply_blob (a, i)->len;
    return n;
}

/* A txn putting h.k<i> = v<i> for i in [from, to). */
static struct txn *put_range (const char *dir, int from, int to)
{
    json_t *ops = json_array ();
    char key[64], val[64];
    struct txn *t;

    for (int i = from; i < to; i++) {
        snprintf (key, sizeof (key), "%s.k%04d", dir, i);
        snprintf (val, sizeof (val), "v%d", i);
        json_array_append_new (ops, put (key, val));
    }
    if (!(t = txn_create (ops, 0, false, NULL)))
        BAIL_OUT ("txn_create");
    json_decref (ops);
    return t;
}

/* Big directories become hdirs (RFC 11): written, read, changed through
 * a cold cache, undone by a failing commit, nested, and emptied. */
static void test_hdir (void)
{
    char rootA[BLOBREF_MAX_STRING_SIZE], rootB[BLOBREF_MAX_STRING_SIZE];
    char rootC[BLOBREF_MAX_STRING_SIZE], rootD[BLOBREF_MAX_STRING_SIZE];
    char key[64], val[64];
    struct apply *a;
    struct txn *t[4];
    json_t *o;
    int rc = 0, bad = 0;
    size_t flat, hashed;

    /* 200 names in one batch of 4 commits, maxdirent 2: nested hdirs */
    a = apply_create (cache, "primary", root0, "sha1", 256);
    apply_set_maxdirent (a, 2);
    for (int i = 0; i < 4; i++) {
        t[i] = put_range ("h", i * 50, i * 50 + 50);
        rc |= apply_one (a, t[i], NULL);
        txn_destroy (t[i]);
    }
    t[0] = mktxn (put ("h.sub.x", "sx"), NULL);
    rc |= apply_one (a, t[0], NULL);
    txn_destroy (t[0]);
    ok (rc == 0, "200 keys and a subdir put in one dir (maxdirent 2)");
    finish (a, rootA, sizeof (rootA));
    apply_destroy (a);
    o = stored_at (rootA, "h");
    ok (treeobj_is_hdir (o) && treeobj_hdir_size (o) == 67,
        "h is stored as an hdir of 67 buckets");
    {
        int nested = 0;
        for (int k = 0; k < 67; k++) {
            json_t *b = treeobj_hdir_get_bucket (o, k);
            if (b && !treeobj_is_dirref (b))
                bad++;
        }
        json_decref (o);
        o = stored_at (rootA, "h.k0000");
        ok (o == NULL, "a value has no stored dir behind it");
        /* a bucket of more than 2 names is an hdir of 61 */
        json_t *dref = treeobj_at (rootA, "h"), *h;
        struct cache *c = fakestore_cache (fs, 0);
        cache_wait (c, treeobj_get_blobref (dref, 0), noop_cb, NULL);
        fakestore_deliver (fs);
        h = cache_get_treeobj (c, treeobj_get_blobref (dref, 0));
        for (int k = 0; h && k < 67; k++) {
            json_t *b = treeobj_hdir_get_bucket (h, k), *sub;
            if (!b)
                continue;
            cache_wait (c, treeobj_get_blobref (b, 0), noop_cb, NULL);
            fakestore_deliver (fs);
            sub = cache_get_treeobj (c, treeobj_get_blobref (b, 0));
            if (treeobj_is_hdir (sub) && treeobj_hdir_size (sub) == 61)
                nested++;
            else if (!treeobj_is_dir (sub) || treeobj_get_count (sub) > 2)
                bad++;
        }
        json_decref (dref);
        cache_destroy (c);
        fakestore_set_cache (fs, cache);
        ok (bad == 0 && nested > 0,
            "buckets are dirrefs; %d buckets of more than 2 are hdirs of 61",
            nested);
    }
    for (int i = 0; i < 200; i++) {
        snprintf (key, sizeof (key), "h.k%04d", i);
        snprintf (val, sizeof (val), "v%d", i);
        if (!has (rootA, key, val))
            bad++;
    }
    ok (bad == 0 && has (rootA, "h.sub.x", "sx") && absent (rootA, "h.k9999"),
        "every key reads back through the buckets; a missing one is ENOENT");
    ok (dir_size (rootA, "h") == 201,
        "READDIR merges the buckets: 201 entries");

    /* cold cache: change, remove, append, and a failing commit */
    cache_destroy (cache);
    cache = fakestore_cache (fs, 0);
    a = apply_create (cache, "primary", rootA, "sha1", 256);
    apply_set_maxdirent (a, 2);
    t[0] = mktxn (put ("h.k0050", "changed"), unlink_op ("h.k0100"),
                  append ("h.log", "a"), put ("h.sub.y", "sy"), NULL);
    t[1] = mktxn (put ("h.k0008", "lost"), unlink_op ("h.k0009"),
                  put ("h.new", "lost"), put ("h.k0007.x", "y"), NULL);
    t[2] = mktxn (append ("h.log", "b"), unlink_op ("h.nothere"), NULL);
    ok (apply_one (a, t[0], NULL) == 0, "a commit to the hdir, cold cache");
    ok (apply_one (a, t[1], NULL) == ENOTDIR,
        "a commit writing through a value in it fails");
    ok (apply_one (a, t[2], NULL) == 0, "a later commit appends");
    finish (a, rootB, sizeof (rootB));
    apply_destroy (a);
    for (int i = 0; i < 3; i++)
        txn_destroy (t[i]);
    ok (has (rootB, "h.k0050", "changed") && absent (rootB, "h.k0100")
            && has (rootB, "h.log", "ab") && has (rootB, "h.sub.y", "sy")
            && has (rootB, "h.sub.x", "sx"),
        "the changes are there");
    ok (has (rootB, "h.k0008", "v8") && has (rootB, "h.k0009", "v9")
            && absent (rootB, "h.new") && has (rootB, "h.k0007", "v7"),
        "the failed commit left nothing");
    ok (dir_size (rootB, "h") == 201, "201 entries (one gone, log added)");
    ok (has (rootA, "h.k0100", "v100") && dir_size (rootA, "h") == 201,
        "the old root is intact");

    /* what one commit to a big hdir writes, against a flat dir */
    a = apply_create (cache, "primary", root0, "sha1", 256);
    apply_set_maxdirent (a, 0);
    t[0] = put_range ("flat", 0, 3000);
    rc = apply_one (a, t[0], NULL);
    txn_destroy (t[0]);
    finish (a, rootC, sizeof (rootC));
    apply_destroy (a);
    a = apply_create (cache, "primary", rootC, "sha1", 256);
    apply_set_maxdirent (a, 0);
    t[0] = mktxn (put ("flat.k1500", "x"), NULL);
    rc |= apply_one (a, t[0], NULL);
    apply_finalize (a, rootD, sizeof (rootD));
    flat = blob_bytes (a);
    apply_destroy (a);
    a = apply_create (cache, "primary", rootC, "sha1", 256);
    rc |= apply_one (a, t[0], NULL);
    finish (a, rootD, sizeof (rootD));
    apply_destroy (a);
    a = apply_create (cache, "primary", rootD, "sha1", 256);
    txn_destroy (t[0]);
    t[0] = mktxn (put ("flat.k1501", "x"), NULL);
    rc |= apply_one (a, t[0], NULL);
    finish (a, rootD, sizeof (rootD));
    hashed = blob_bytes (a);
    apply_destroy (a);
    txn_destroy (t[0]);
    o = stored_at (rootD, "flat");
    ok (rc == 0 && treeobj_is_hdir (o),
        "3000 entries flat, then one put with maxdirent 256: an hdir");
    json_decref (o);
    ok (hashed * 10 < flat,
        "a one-key commit writes %zu bytes to the hdir, %zu to the flat dir",
        hashed, flat);
    ok (has (rootD, "flat.k1501", "x") && has (rootD, "flat.k2999", "v2999")
            && dir_size (rootD, "flat") == 3000,
        "the hdir holds all 3000");

    /* emptied: an hdir with no bucket left is an empty dir */
    a = apply_create (cache, "primary", rootB, "sha1", 256);
    apply_set_maxdirent (a, 2);
    {
        json_t *ops = json_array ();
        for (int i = 0; i < 200; i++) {
            snprintf (key, sizeof (key), "h.k%04d", i);
            json_array_append_new (ops, unlink_op (key));
        }
        json_array_append_new (ops, unlink_op ("h.log"));
        json_array_append_new (ops, unlink_op ("h.sub"));
        t[0] = txn_create (ops, 0, false, NULL);
        json_decref (ops);
    }
    ok (apply_one (a, t[0], NULL) == 0, "unlink every entry of the hdir");
    finish (a, rootD, sizeof (rootD));
    apply_destroy (a);
    txn_destroy (t[0]);
    o = stored_at (rootD, "h");
    ok (treeobj_is_dir (o) && treeobj_get_count (o) == 0,
        "h is stored as an empty dir again");
    json_decref (o);
}

int main (void)
{
    json_t *empty = treeobj_create_dir ();

    plan (NO_PLAN);
    fs = fakestore_create ("sha1");
    cache = fakestore_cache (fs, 0);
    snprintf (root0, sizeof (root0), "%s", fakestore_put_obj (fs, empty));
    json_decref (empty);
    /* the working cache starts warm with the empty root */
    cache_wait (cache, root0, noop_cb, NULL);
    fakestore_deliver (fs);

    test_merge ();
    test_failing_commit ();
    test_append ();
    test_append_fold ();
    test_symlinks ();
    test_large_and_inline ();
    test_missing ();
    test_nothing_changed ();
    test_big_dir ();
    test_foreign_dir ();
    test_hdir ();

    cache_destroy (cache);
    fakestore_destroy (fs);
    done_testing ();
    return 0;
}
