/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/treeobj.c - RFC 11 tree objects: every type, round trips through
 * the canonical encoding, the hash of the empty dir, and malformed
 * objects rejected.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libcontent/blobref.h"
#include "libkvs/treeobj.h"
#include "tap.h"

#define REF1 "sha1-c0a9faf907dda6216fd73bf81d0b3b21a1a8cb91"
#define REF2 "sha1-e6624a49295d1006f813a346fd5284b2f9c9e9f6"
#define REF256 \
    "sha256-61b85efa2a76db9377692c700b4e1edfc480bf224e0e9764b76f8082159d0ca0"

/* Encode obj and compare with the expected text. */
static void is_encoded (const json_t *obj, const char *exp, const char *what)
{
    char *s = treeobj_encode (obj);
    is (s, exp, "%s encodes as %s", what, exp);
    free (s);
}

/* Decode text, check it validates, re-encode to the same text. */
static void round_trip (const char *text, const char *what)
{
    json_t *o = treeobj_decode (text);
    char *s = o ? treeobj_encode (o) : NULL;

    ok (o != NULL && treeobj_validate (o) == 0, "%s decodes and validates",
        what);
    is (s, text, "%s re-encodes to the same text", what);
    free (s);
    json_decref (o);
}

static void test_val (void)
{
    json_t *o, *o2;
    void *data;
    size_t len;

    o = treeobj_create_val ("hello", 5);
    ok (o != NULL && treeobj_validate (o) == 0, "create_val validates");
    ok (treeobj_is_val (o) && !treeobj_is_dir (o) && !treeobj_is_valref (o),
        "is_val and nothing else");
    is (treeobj_get_type (o), "val", "type is val");
    is_encoded (o, "{\"data\":\"aGVsbG8=\",\"type\":\"val\",\"ver\":1}", "val");
    ok (treeobj_get_count (o) == 1, "val count is 1");
    ok (treeobj_decode_val (o, &data, &len) == 0 && len == 5
            && !memcmp (data, "hello", 6),
        "decode_val gives the bytes and a NUL");
    free (data);
    o2 = treeobj_decode ("{\"ver\":1,\"type\":\"val\",\"data\":\"aGVsbG8=\"}");
    ok (o2 && json_equal (o, o2), "decode of other key order is equal");
    json_decref (o2);
    json_decref (o);

    o = treeobj_create_val (NULL, 0);
    ok (o && treeobj_validate (o) == 0, "empty val validates");
    ok (treeobj_decode_val (o, &data, &len) == 0 && len == 0
            && ((char *)data)[0] == '\0',
        "empty val decodes to 0 bytes");
    free (data);
    json_decref (o);

    o = treeobj_create_val ("a\0b\xff", 4);
    ok (treeobj_decode_val (o, &data, &len) == 0 && len == 4
            && !memcmp (data, "a\0b\xff", 4),
        "binary val round trips");
    free (data);
    json_decref (o);

    errno = 0;
    ok (treeobj_create_val (NULL, 3) == NULL && errno == EINVAL,
        "create_val NULL data with len > 0 fails with EINVAL");
    round_trip ("{\"data\":\"NDIyCg==\",\"type\":\"val\",\"ver\":1}",
                "RFC val");
}

static void test_valref (void)
{
    json_t *o;

    o = treeobj_create_valref (REF1);
    ok (o && treeobj_validate (o) == 0 && treeobj_is_valref (o),
        "create_valref validates");
    ok (treeobj_append_blobref (o, REF2) == 0 && treeobj_get_count (o) == 2,
        "append_blobref makes count 2");
    is (treeobj_get_blobref (o, 0), REF1, "blobref 0");
    is (treeobj_get_blobref (o, 1), REF2, "blobref 1");
    errno = 0;
    ok (treeobj_get_blobref (o, 2) == NULL && errno == EINVAL,
        "blobref out of range fails with EINVAL");
    errno = 0;
    ok (treeobj_append_blobref (o, "sha1-123") < 0 && errno == EINVAL,
        "append of a malformed blobref fails with EINVAL");
    ok (treeobj_get_count (o) == 2, "and leaves the valref unchanged");
    is_encoded (o,
                "{\"data\":[\"" REF1 "\",\"" REF2
                "\"],\"type\":\"valref\",\"ver\":1}",
                "valref");
    json_decref (o);

    o = treeobj_create_valref (NULL);
    ok (o && treeobj_get_count (o) == 0, "create_valref(NULL) is empty");
    errno = 0;
    ok (treeobj_validate (o) < 0 && errno == EINVAL,
        "an empty valref does not validate");
    ok (treeobj_append_blobref (o, REF256) == 0 && treeobj_validate (o) == 0,
        "after appending a sha256 blobref it does");
    json_decref (o);
    errno = 0;
    ok (treeobj_create_valref ("md5-00") == NULL && errno == EINVAL,
        "create_valref with a bad blobref fails with EINVAL");
}

static void test_dirref (void)
{
    json_t *o;

    o = treeobj_create_dirref (REF1);
    ok (o && treeobj_validate (o) == 0 && treeobj_is_dirref (o),
        "create_dirref validates");
    is (treeobj_get_blobref (o, 0), REF1, "dirref blobref");
    is_encoded (o, "{\"data\":[\"" REF1 "\"],\"type\":\"dirref\",\"ver\":1}",
                "dirref");
    ok (treeobj_append_blobref (o, REF2) == 0, "a second blobref can be added");
    ok (treeobj_validate (o) < 0, "but a dirref of two does not validate");
    json_decref (o);
}

static void test_dir (void)
{
    json_t *dir, *val, *sub, *cpy, *o;
    char ref[BLOBREF_MAX_STRING_SIZE];

    dir = treeobj_create_dir ();
    ok (dir && treeobj_validate (dir) == 0 && treeobj_is_dir (dir),
        "create_dir validates");
    ok (treeobj_get_count (dir) == 0, "empty dir count is 0");
    is_encoded (dir, "{\"data\":{},\"type\":\"dir\",\"ver\":1}", "empty dir");
    ok (treeobj_hash ("sha1", dir, ref, sizeof (ref)) == 0, "hash sha1 works");
    is (ref, REF1, "empty dir hashes to sha1-c0a9faf9...");
    ok (treeobj_hash ("sha256", dir, ref, sizeof (ref)) == 0,
        "hash sha256 works");
    is (ref, REF256, "empty dir sha256");
    errno = 0;
    ok (treeobj_hash ("md5", dir, ref, sizeof (ref)) < 0 && errno == EINVAL,
        "hash with an unknown type fails with EINVAL");
    errno = 0;
    ok (treeobj_hash ("sha1", dir, ref, 10) < 0 && errno == EINVAL,
        "hash into a short buffer fails with EINVAL");

    val = treeobj_create_val ("x", 1);
    ok (treeobj_insert_entry (dir, "b", val) == 0, "insert_entry b");
    sub = treeobj_create_dir ();
    ok (treeobj_insert_entry (dir, "a", sub) == 0, "insert_entry a");
    ok (treeobj_get_count (dir) == 2, "count is 2");
    ok (treeobj_get_entry (dir, "b") == val, "get_entry returns the object");
    errno = 0;
    ok (treeobj_get_entry (dir, "c") == NULL && errno == ENOENT,
        "get_entry of a missing name fails with ENOENT");
    errno = 0;
    ok (treeobj_insert_entry (dir, "a.b", val) < 0 && errno == EINVAL,
        "insert of a name with '.' fails with EINVAL");
    errno = 0;
    ok (treeobj_insert_entry (dir, "", val) < 0 && errno == EINVAL,
        "insert of an empty name fails with EINVAL");
    errno = 0;
    ok (treeobj_insert_entry (val, "x", sub) < 0 && errno == EINVAL,
        "insert into a val fails with EINVAL");
    o = json_object ();
    errno = 0;
    ok (treeobj_insert_entry (dir, "z", o) < 0 && errno == EINVAL,
        "insert of a non-treeobj fails with EINVAL");
    json_decref (o);
    is_encoded (dir,
                "{\"data\":{\"a\":{\"data\":{},\"type\":\"dir\",\"ver\":1},"
                "\"b\":{\"data\":\"eA==\",\"type\":\"val\",\"ver\":1}},"
                "\"type\":\"dir\",\"ver\":1}",
                "dir with entries (sorted)");

    cpy = treeobj_copy (dir);
    ok (cpy && json_equal (cpy, dir), "copy is equal");
    ok (treeobj_get_entry (cpy, "a") == sub, "copy shares entries");
    ok (treeobj_delete_entry (cpy, "b") == 0 && treeobj_get_count (cpy) == 1
            && treeobj_get_count (dir) == 2,
        "delete in the copy leaves the original");
    errno = 0;
    ok (treeobj_delete_entry (cpy, "b") < 0 && errno == ENOENT,
        "delete of a missing name fails with ENOENT");
    json_decref (cpy);

    cpy = treeobj_deep_copy (dir);
    ok (cpy && json_equal (cpy, dir) && treeobj_get_entry (cpy, "a") != sub,
        "deep copy is equal and shares nothing");
    json_decref (cpy);

    json_decref (val);
    json_decref (sub);
    json_decref (dir);
    round_trip ("{\"data\":{\"a\":{\"data\":[\"" REF1
                "\"],\"type\":\"dirref\",\"ver\":1},\"b\":{\"data\":"
                "{\"target\":\"a\"},\"type\":\"symlink\",\"ver\":1}},"
                "\"type\":\"dir\",\"ver\":1}",
                "dir of dirref and symlink");
}

static void test_symlink (void)
{
    const char *ns, *target;
    json_t *o;

    o = treeobj_create_symlink (NULL, "a.b");
    ok (o && treeobj_validate (o) == 0 && treeobj_is_symlink (o),
        "create_symlink validates");
    ok (treeobj_get_symlink (o, &ns, &target) == 0 && ns == NULL
            && !strcmp (target, "a.b"),
        "get_symlink: no namespace, target a.b");
    is_encoded (
        o, "{\"data\":{\"target\":\"a.b\"},\"type\":\"symlink\",\"ver\":1}",
        "symlink");
    json_decref (o);

    o = treeobj_create_symlink ("ns1", "b.b");
    ok (treeobj_get_symlink (o, &ns, &target) == 0 && !strcmp (ns, "ns1")
            && !strcmp (target, "b.b"),
        "get_symlink with namespace");
    is_encoded (o,
                "{\"data\":{\"namespace\":\"ns1\",\"target\":\"b.b\"},"
                "\"type\":\"symlink\",\"ver\":1}",
                "symlink with namespace");
    json_decref (o);

    errno = 0;
    ok (treeobj_create_symlink (NULL, NULL) == NULL && errno == EINVAL,
        "symlink without target fails with EINVAL");
    errno = 0;
    ok (treeobj_create_symlink ("", "a") == NULL && errno == EINVAL,
        "symlink with empty namespace fails with EINVAL");
}

static void test_accessors_wrong_type (void)
{
    json_t *val = treeobj_create_val ("x", 1);
    json_t *dir = treeobj_create_dir ();
    void *data;
    size_t len;

    errno = 0;
    ok (treeobj_decode_val (dir, &data, &len) < 0 && errno == EINVAL,
        "decode_val of a dir fails with EINVAL");
    errno = 0;
    ok (treeobj_get_blobref (val, 0) == NULL && errno == EINVAL,
        "get_blobref of a val fails with EINVAL");
    errno = 0;
    ok (treeobj_get_symlink (dir, NULL, NULL) < 0 && errno == EINVAL,
        "get_symlink of a dir fails with EINVAL");
    errno = 0;
    ok (treeobj_get_entry (val, "a") == NULL && errno == EINVAL,
        "get_entry of a val fails with EINVAL");
    errno = 0;
    ok (treeobj_get_type (NULL) == NULL && errno == EINVAL,
        "get_type (NULL) fails with EINVAL");
    ok (!treeobj_is_val (NULL) && !treeobj_is_dir (NULL), "is_* (NULL) false");
    errno = 0;
    ok (treeobj_encode (NULL) == NULL && errno == EINVAL,
        "encode (NULL) fails with EINVAL");
    ok (treeobj_get_data (val) && json_is_string (treeobj_get_data (val)),
        "get_data of a val is its string");
    json_decref (val);
    json_decref (dir);
}

static const char *malformed[] = {
    "[1]",
    "{}",
    "{\"type\":\"val\",\"data\":\"\"}",
    "{\"ver\":2,\"type\":\"val\",\"data\":\"\"}",
    "{\"ver\":\"1\",\"type\":\"val\",\"data\":\"\"}",
    "{\"ver\":1.0,\"type\":\"val\",\"data\":\"\"}",
    "{\"ver\":1,\"data\":\"\"}",
    "{\"ver\":1,\"type\":\"foo\",\"data\":\"\"}",
    "{\"ver\":1,\"type\":\"hdir\",\"data\":{\"size\":8,\"func\":\"city32\","
    "\"bucket\":[]}}",
    "{\"ver\":1,\"type\":\"hdir\",\"data\":{\"size\":1,\"func\":\"fnv1a32\","
    "\"bucket\":[null,null]}}",
    "{\"ver\":1,\"type\":\"hdir\",\"data\":{\"size\":0,\"func\":\"fnv1a32\","
    "\"bucket\":[]}}",
    "{\"ver\":1,\"type\":\"hdir\",\"data\":{\"size\":1,\"func\":\"fnv1a32\","
    "\"bucket\":[{\"ver\":1,\"type\":\"val\",\"data\":\"\"}]}}",
    "{\"ver\":1,\"type\":\"hdir\",\"data\":{\"size\":1,\"func\":\"fnv1a32\","
    "\"bucket\":[null],\"x\":1}}",
    "{\"ver\":1,\"type\":\"hdir\",\"data\":{\"size\":1,\"bucket\":[null]}}",
    "{\"ver\":1,\"type\":\"dir\",\"data\":{\"a\":{\"ver\":1,\"type\":\"hdir\","
    "\"data\":{\"size\":1,\"func\":\"fnv1a32\",\"bucket\":[null]}}}}",
    "{\"ver\":1,\"type\":3,\"data\":\"\"}",
    "{\"ver\":1,\"type\":\"val\"}",
    "{\"ver\":1,\"type\":\"val\",\"data\":\"\",\"x\":1}",
    "{\"ver\":1,\"type\":\"val\",\"data\":42}",
    "{\"ver\":1,\"type\":\"val\",\"data\":\"NDIyCg\"}",
    "{\"ver\":1,\"type\":\"val\",\"data\":\"NDI*Cg==\"}",
    "{\"ver\":1,\"type\":\"val\",\"data\":\"NDIyCg=x\"}",
    "{\"ver\":1,\"type\":\"valref\",\"data\":[]}",
    "{\"ver\":1,\"type\":\"valref\",\"data\":\"" REF1 "\"}",
    "{\"ver\":1,\"type\":\"valref\",\"data\":[42]}",
    "{\"ver\":1,\"type\":\"valref\",\"data\":[\"sha1-xyz\"]}",
    "{\"ver\":1,\"type\":\"valref\",\"data\":[\"md5-"
    "d41d8cd98f00b204e9800998ecf8"
    "427e\"]}",
    "{\"ver\":1,\"type\":\"valref\",\"data\":[\"" REF1 "\",\"sha1-\"]}",
    "{\"ver\":1,\"type\":\"dirref\",\"data\":[]}",
    "{\"ver\":1,\"type\":\"dirref\",\"data\":[\"" REF1 "\",\"" REF2 "\"]}",
    "{\"ver\":1,\"type\":\"dirref\",\"data\":[\"sha1-c0a9faf907dd\"]}",
    "{\"ver\":1,\"type\":\"dirref\",\"data\":{}}",
    "{\"ver\":1,\"type\":\"dir\",\"data\":[]}",
    "{\"ver\":1,\"type\":\"dir\",\"data\":{\"a\":42}}",
    "{\"ver\":1,\"type\":\"dir\",\"data\":{\"a\":{\"ver\":1,\"type\":\"val\"}}"
    "}",
    "{\"ver\":1,\"type\":\"dir\",\"data\":{\"a.b\":{\"ver\":1,\"type\":\"val\","
    "\"data\":\"\"}}}",
    "{\"ver\":1,\"type\":\"dir\",\"data\":{\"\":{\"ver\":1,\"type\":\"val\","
    "\"data\":\"\"}}}",
    "{\"ver\":1,\"type\":\"dir\",\"data\":{\"a\":{\"ver\":1,\"type\":\"dir\","
    "\"data\":{\"b\":{\"ver\":1,\"type\":\"val\",\"data\":\"!\"}}}}}",
    "{\"ver\":1,\"type\":\"symlink\",\"data\":{}}",
    "{\"ver\":1,\"type\":\"symlink\",\"data\":{\"target\":1}}",
    "{\"ver\":1,\"type\":\"symlink\",\"data\":{\"target\":\"a\",\"x\":\"b\"}}",
    "{\"ver\":1,\"type\":\"symlink\",\"data\":{\"target\":\"\"}}",
    "{\"ver\":1,\"type\":\"symlink\",\"data\":{\"target\":\"a\","
    "\"namespace\":\"\"}}",
    "{\"ver\":1,\"type\":\"symlink\",\"data\":\"a.b\"}",
    "{\"ver\":1,\"type\":\"val\",\"type\":\"val\",\"data\":\"\"}",
    "{\"ver\":1,\"type\":\"val\",\"data\":\"\"} x",
    "{\"ver\":1,\"type\":\"val\",\"data\":\"\\u0000\"}",
    "{\"ver\":1,\"type\":\"val\",\"data\":\"\"",
    "",
    NULL,
};

static void test_malformed (void)
{
    int n = 0;

    for (int i = 0; malformed[i]; i++) {
        errno = 0;
        json_t *o = treeobj_decode (malformed[i]);
        ok (o == NULL && errno == EINVAL, "malformed %d rejected: %s", i,
            malformed[i]);
        json_decref (o);
        n++;
    }
    ok (n >= 25, "%d malformed cases", n);
    errno = 0;
    ok (treeobj_decode (NULL) == NULL && errno == EINVAL,
        "decode (NULL) fails with EINVAL");
    errno = 0;
    ok (treeobj_decodeb ("{\"ver\":1,\"type\":\"val\",\"data\":\"\"}", 10)
                == NULL
            && errno == EINVAL,
        "decodeb of a truncated buffer fails with EINVAL");
    {
        const char *s = "{\"data\":\"\",\"type\":\"val\",\"ver\":1}";
        json_t *o = treeobj_decodeb (s, strlen (s));
        ok (o && treeobj_is_val (o), "decodeb of a whole buffer works");
        json_decref (o);
    }
    errno = 0;
    ok (treeobj_validate (NULL) < 0 && errno == EINVAL,
        "validate (NULL) fails with EINVAL");
}

static void test_hdir (void)
{
    json_t *h, *dref, *cpy, *o;
    int i;

    ok (treeobj_fnv1a32 ("", 0) == 0x811c9dc5u
            && treeobj_fnv1a32 ("a", 1) == 0xe40c292cu
            && treeobj_fnv1a32 ("foobar", 6) == 0xbf9cf968u,
        "fnv1a32 gives the published FNV-1a values");
    h = treeobj_create_hdir (5, NULL);
    ok (h && treeobj_is_hdir (h) && treeobj_validate (h) == 0
            && treeobj_hdir_size (h) == 5,
        "create_hdir (5) makes a valid hdir of 5 buckets");
    is_encoded (h,
                "{\"data\":{\"bucket\":[null,null,null,null,null],"
                "\"func\":\"fnv1a32\",\"size\":5},\"type\":\"hdir\",\"ver\":1}",
                "an empty hdir");
    i = treeobj_hdir_index (h, "foobar");
    ok (i == (int)(0xbf9cf968u % 5), "foobar's bucket is its hash mod 5");
    errno = 0;
    ok (treeobj_hdir_get_bucket (h, i) == NULL && errno == ENOENT,
        "an empty bucket: ENOENT");
    dref = treeobj_create_dirref (REF1);
    ok (treeobj_hdir_set_bucket (h, i, dref) == 0
            && treeobj_hdir_get_bucket (h, i) == dref
            && treeobj_validate (h) == 0,
        "set_bucket puts a dirref in it; still valid");
    cpy = treeobj_copy (h);
    ok (cpy && treeobj_hdir_set_bucket (cpy, i, NULL) == 0
            && treeobj_hdir_get_bucket (h, i) == dref,
        "emptying a bucket of a copy leaves the original as it was");
    round_trip ("{\"data\":{\"bucket\":[null,{\"data\":[\"" REF1
                "\"],\"type\":\"dirref\",\"ver\":1}],\"func\":\"fnv1a32\","
                "\"size\":2},\"type\":\"hdir\",\"ver\":1}",
                "an hdir");
    o = treeobj_create_val ("x", 1);
    ok (treeobj_hdir_set_bucket (h, i, o) == 0 && treeobj_validate (h) < 0
            && errno == EINVAL,
        "a writer may hold another object in a bucket; it does not validate");
    errno = 0;
    ok (treeobj_hdir_set_bucket (h, 5, NULL) < 0 && errno == EINVAL
            && treeobj_hdir_get_bucket (h, -1) == NULL && errno == EINVAL,
        "bucket index out of range: EINVAL");
    errno = 0;
    ok (treeobj_hdir_index (h, "a.b") < 0 && errno == EINVAL
            && treeobj_hdir_index (o, "a") < 0 && errno == EINVAL,
        "hdir_index of a bad name or on a val: EINVAL");
    errno = 0;
    ok (treeobj_get_count (h) < 0 && errno == EINVAL
            && treeobj_get_entry (h, "a") == NULL,
        "get_count and get_entry do not apply to an hdir");
    errno = 0;
    ok (treeobj_create_hdir (0, NULL) == NULL && errno == EINVAL
            && treeobj_create_hdir (TREEOBJ_HDIR_MAX_SIZE + 1, NULL) == NULL
            && treeobj_create_hdir (4, "city32") == NULL,
        "create_hdir with a bad size or func: EINVAL");
    json_decref (o);
    json_decref (cpy);
    json_decref (dref);
    json_decref (h);
}

int main (void)
{
    plan (NO_PLAN);
    test_val ();
    test_valref ();
    test_dirref ();
    test_dir ();
    test_symlink ();
    test_hdir ();
    test_accessors_wrong_type ();
    test_malformed ();
    done_testing ();
    return 0;
}
