/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Unit tests for gc.c: what the checkpoint reaches (dirs, hdirs, inline
 * dirs, valrefs, symlinks) is kept, the rest dropped; a blob that is
 * both a raw value and a dir elsewhere is still walked; a missing blob
 * or a dirref to something that is not a dir leaves the file as it was;
 * a store without a checkpoint is left alone; the request marker.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "libcontent/blobref.h"
#include "libkvs/treeobj.h"

#include "db.h"
#include "gc.h"
#include "tap.h"

static char dir[] = "/tmp/gctest.XXXXXX";
static char path[256];

/* Store bytes; its blobref into ref. */
static void put (struct db *db, const char *data, size_t len, char *ref)
{
    unsigned char digest[BLOBREF_MAX_DIGEST_SIZE];

    if (blobref_hash ("sha1", data, len, ref, BLOBREF_MAX_STRING_SIZE) < 0
        || blobref_strtohash (ref, digest, sizeof (digest)) != 20
        || db_store (db, digest, 20, data, len) < 0)
        BAIL_OUT ("put failed");
}

/* Insert e into the dir o, giving o the reference. */
static void ins (json_t *o, const char *name, json_t *e)
{
    if (treeobj_insert_entry (o, name, e) < 0)
        BAIL_OUT ("treeobj_insert_entry failed");
    json_decref (e);
}

/* Store a tree object; its blobref into ref. */
static void put_obj (struct db *db, json_t *obj, char *ref)
{
    char *s = treeobj_encode (obj);

    if (!s)
        BAIL_OUT ("treeobj_encode failed");
    put (db, s, strlen (s), ref);
    free (s);
    json_decref (obj);
}

static bool has (struct db *db, const char *ref)
{
    unsigned char digest[BLOBREF_MAX_DIGEST_SIZE];
    const void *data;
    size_t len;

    return blobref_strtohash (ref, digest, sizeof (digest)) == 20
           && db_load (db, digest, 20, &data, &len) == 0;
}

static void set_checkpoint (struct db *db, const char *rootref)
{
    char text[256];

    snprintf (text, sizeof (text), "{\"version\":1,\"rootref\":\"%s\"}",
              rootref);
    if (db_checkpoint_put (db, text) < 0)
        BAIL_OUT ("checkpoint put failed");
}

static long long objects (void)
{
    flux_error_t error;
    struct db *db = db_open (path, "sha1", false, &error);
    long long n = db ? db_object_count (db) : -1;

    db_close (db);
    return n;
}

/* The refs of a small tree, and garbage beside it. */
struct tree {
    char root[BLOBREF_MAX_STRING_SIZE];
    char sub[BLOBREF_MAX_STRING_SIZE];  /* dir via dirref */
    char val1[BLOBREF_MAX_STRING_SIZE]; /* valref blobs */
    char val2[BLOBREF_MAX_STRING_SIZE];
    char deep[BLOBREF_MAX_STRING_SIZE];   /* dir under an inline dir */
    char hdir[BLOBREF_MAX_STRING_SIZE];   /* an hdir (behind a dirref) */
    char bucket[BLOBREF_MAX_STRING_SIZE]; /* its bucket */
    char bval[BLOBREF_MAX_STRING_SIZE];   /* valref in the bucket */
    char rawdir[BLOBREF_MAX_STRING_SIZE]; /* a value, and a dir too */
    char rawsub[BLOBREF_MAX_STRING_SIZE]; /* under rawdir */
    char garbage[4][BLOBREF_MAX_STRING_SIZE];
};

static void make_tree (struct db *db, struct tree *t)
{
    json_t *o, *inl, *h, *b, *rd;
    char *rdtext;

    if (db_begin (db) < 0)
        BAIL_OUT ("begin");
    put (db, "value one", 9, t->val1);
    put (db, "value two", 9, t->val2);
    put (db, "bucket value", 12, t->bval);
    put (db, "under the raw dir", 17, t->rawsub);
    /* sub: a dir with a val, a symlink and a valref of two blobs */
    o = treeobj_create_dir ();
    ins (o, "v", treeobj_create_val ("x", 1));
    ins (o, "l", treeobj_create_symlink (NULL, "a.b"));
    inl = treeobj_create_valref (t->val1);
    treeobj_append_blobref (inl, t->val2);
    ins (o, "big", inl);
    put_obj (db, o, t->sub);
    /* deep: a dir reached through an inline dir */
    o = treeobj_create_dir ();
    ins (o, "k", treeobj_create_val ("deep", 4));
    put_obj (db, o, t->deep);
    /* an hdir bucket holding a valref */
    o = treeobj_create_dir ();
    ins (o, "bv", treeobj_create_valref (t->bval));
    put_obj (db, o, t->bucket);
    /* rawdir: a dir whose very bytes are also stored as a value */
    rd = treeobj_create_dir ();
    ins (rd, "r", treeobj_create_valref (t->rawsub));
    rdtext = treeobj_encode (rd);
    put (db, rdtext, strlen (rdtext), t->rawdir);
    free (rdtext);
    json_decref (rd);
    /* the root: the value copy of rawdir comes first in the walk order
     * (a valref entry), the dirref to it after */
    o = treeobj_create_dir ();
    ins (o, "sub", treeobj_create_dirref (t->sub));
    inl = treeobj_create_dir ();
    ins (inl, "deep", treeobj_create_dirref (t->deep));
    ins (o, "inline", inl);
    h = treeobj_create_hdir (3, "fnv1a32");
    b = treeobj_create_dirref (t->bucket);
    treeobj_hdir_set_bucket (h, 1, b);
    json_decref (b);
    put_obj (db, h, t->hdir);
    ins (o, "h", treeobj_create_dirref (t->hdir));
    ins (o, "asval", treeobj_create_valref (t->rawdir));
    ins (o, "asdir", treeobj_create_dirref (t->rawdir));
    put_obj (db, o, t->root);
    /* garbage: an old root, an old value, a dir only it references */
    put (db, "old value", 9, t->garbage[0]);
    o = treeobj_create_dir ();
    ins (o, "old", treeobj_create_valref (t->garbage[0]));
    put_obj (db, o, t->garbage[1]);
    o = treeobj_create_dir ();
    ins (o, "sub", treeobj_create_dirref (t->garbage[1]));
    put_obj (db, o, t->garbage[2]);
    put (db, "unreferenced", 12, t->garbage[3]);
    set_checkpoint (db, t->root);
    if (db_commit (db) < 0)
        BAIL_OUT ("commit");
}

static void test_collect (void)
{
    flux_error_t error;
    struct gc_stats st;
    struct tree t;
    struct db *db;
    const char *cp;
    bool all = true;

    unlink (path);
    if (!(db = db_open (path, "sha1", false, &error)))
        BAIL_OUT ("db_open: %s", error.text);
    make_tree (db, &t);
    db_close (db);
    ok (gc_run (path, "sha1", &st, &error) == 0, "gc_run succeeds");
    if (st.objects_kept != 10)
        diag ("%s", error.text);
    cmp_ok (st.objects_before, "==", 14, "14 objects before");
    cmp_ok (st.objects_kept, "==", 10, "10 kept");
    if (!(db = db_open (path, "sha1", false, &error)))
        BAIL_OUT ("db_open after gc: %s", error.text);
    const char *live[] = {t.root,   t.sub,  t.val1,   t.val2,   t.deep, t.hdir,
                          t.bucket, t.bval, t.rawdir, t.rawsub, NULL};
    for (int i = 0; live[i]; i++) {
        if (!has (db, live[i])) {
            diag ("%s missing", live[i]);
            all = false;
        }
    }
    ok (all,
        "everything reachable is there: through dirrefs, valrefs, an inline "
        "dir, an hdir bucket, and a blob that is a value and a dir");
    ok (!has (db, t.garbage[0]) && !has (db, t.garbage[1])
            && !has (db, t.garbage[2]) && !has (db, t.garbage[3]),
        "the unreachable blobs are gone");
    ok (db_checkpoint_get (db, &cp) == 0 && strstr (cp, t.root),
        "the checkpoint is kept");
    db_close (db);
    ok (access ("gcdb.sqlite.gc-new", F_OK) < 0 && errno == ENOENT,
        "no temporary file is left");
    ok (gc_run (path, "sha1", &st, &error) == 0 && st.objects_kept == 10
            && st.objects_before == 10,
        "collecting again keeps all 10");
}

static void test_missing (void)
{
    flux_error_t error;
    struct gc_stats st;
    struct tree t;
    struct db *db;
    unsigned char digest[BLOBREF_MAX_DIGEST_SIZE];
    char ref[BLOBREF_MAX_STRING_SIZE];
    json_t *o;

    unlink (path);
    if (!(db = db_open (path, "sha1", false, &error)))
        BAIL_OUT ("db_open: %s", error.text);
    make_tree (db, &t);
    /* a new root with a dirref to a blob that was never stored */
    blobref_hash ("sha1", "nowhere", 7, ref, sizeof (ref));
    blobref_strtohash (ref, digest, sizeof (digest));
    o = treeobj_create_dir ();
    ins (o, "lost", treeobj_create_dirref (ref));
    ins (o, "sub", treeobj_create_dirref (t.sub));
    db_begin (db);
    put_obj (db, o, t.root);
    set_checkpoint (db, t.root);
    db_commit (db);
    db_close (db);
    ok (gc_run (path, "sha1", &st, &error) < 0 && strstr (error.text, ref)
            && strstr (error.text, "missing"),
        "a missing blob stops the collection: %s", error.text);
    cmp_ok (objects (), "==", 15, "and the file is as it was (15 objects)");
    ok (access ("gcdb.sqlite.gc-new", F_OK) < 0 && errno == ENOENT,
        "no temporary file is left");

    /* a dirref to a raw value */
    o = treeobj_create_dir ();
    ins (o, "notdir", treeobj_create_dirref (t.val1));
    if (!(db = db_open (path, "sha1", false, &error)))
        BAIL_OUT ("db_open: %s", error.text);
    db_begin (db);
    put_obj (db, o, t.root);
    set_checkpoint (db, t.root);
    db_commit (db);
    db_close (db);
    ok (gc_run (path, "sha1", &st, &error) < 0
            && strstr (error.text, "not a tree object"),
        "a dirref to something that is not a dir stops it: %s", error.text);
    cmp_ok (objects (), "==", 16, "and the file is as it was (16 objects)");
}

static void test_no_checkpoint (void)
{
    flux_error_t error;
    struct gc_stats st;
    struct db *db;
    char ref[BLOBREF_MAX_STRING_SIZE];

    unlink (path);
    if (!(db = db_open (path, "sha1", false, &error)))
        BAIL_OUT ("db_open: %s", error.text);
    db_begin (db);
    put (db, "stored alone", 12, ref);
    db_commit (db);
    db_close (db);
    ok (gc_run (path, "sha1", &st, &error) < 0
            && strstr (error.text, "no KVS checkpoint"),
        "a store with no checkpoint is not collected: %s", error.text);
    cmp_ok (objects (), "==", 1, "and its blob is still there");
    ok (gc_run (path, "sha256", &st, &error) < 0,
        "a store of another hash type is refused: %s", error.text);
}

static void test_marker (void)
{
    ok (!gc_requested (path), "no marker: not requested");
    ok (gc_request (path, true) == 0 && gc_requested (path),
        "gc_request on: requested");
    ok (gc_request (path, true) == 0 && gc_requested (path),
        "twice: still requested");
    ok (gc_request (path, false) == 0 && !gc_requested (path),
        "gc_request off: no longer");
    ok (gc_request (path, false) == 0, "off when off: fine");
}

int main (void)
{
    plan (NO_PLAN);
    if (!mkdtemp (dir) || chdir (dir) < 0)
        BAIL_OUT ("cannot make a temporary directory");
    snprintf (path, sizeof (path), "gcdb.sqlite");
    test_collect ();
    test_missing ();
    test_no_checkpoint ();
    test_marker ();
    unlink (path);
    unlink ("gcdb.sqlite-wal");
    if (chdir ("/") < 0 || rmdir (dir) < 0)
        diag ("cannot remove %s: %s", dir, strerror (errno));
    done_testing ();
    return 0;
}
