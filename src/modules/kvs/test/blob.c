/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* blob unit tests: the entry index of canonical dir blobs (found, names,
 * values), refusal to index anything else, no crash on any truncation;
 * and kvs_encode_dir: a base patched with random puts and removals gives
 * exactly the bytes jansson gives for the resulting directory, indexed
 * as a fresh scan would index it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libkvs/treeobj.h"
#include "tap.h"

#include "../blob.h"
#include "../encode.h"

static struct blob *blob_of (const json_t *o)
{
    char *s = treeobj_encode (o);
    struct blob *b;

    if (!s || !(b = blob_create (s, strlen (s))))
        BAIL_OUT ("cannot encode");
    free (s);
    return b;
}

static struct blob *blob_str (const char *s)
{
    struct blob *b = blob_create (s, strlen (s));
    if (!b)
        BAIL_OUT ("blob_create");
    return b;
}

static json_t *mkdir_n (int n, const char *fmt)
{
    json_t *d = treeobj_create_dir ();
    char name[64], val[64];

    for (int i = 0; i < n; i++) {
        snprintf (name, sizeof (name), fmt, i);
        snprintf (val, sizeof (val), "value-%d", i);
        json_t *v = treeobj_create_val (val, strlen (val));
        if (treeobj_insert_entry (d, name, v) < 0)
            BAIL_OUT ("insert");
        json_decref (v);
    }
    return d;
}

static void test_index (void)
{
    json_t *d = mkdir_n (100, "k%d");
    struct blob *b = blob_of (d);
    json_t *v;
    bool found;
    size_t len;
    const char *name;
    int i, bad = 0;

    i = blob_dir_index (b);
    ok (i == 0 && b->n == 100, "a canonical dir indexes: %d entries", b->n);
    ok (blob_dir_index (b) == 0, "indexing again is a no-op");
    i = blob_dir_find (b, "k42", &found);
    name = blob_dir_name (b, i, &len);
    ok (found && len == 3 && !strncmp (name, "k42", 3), "find k42");
    v = blob_dir_value (b, i);
    ok (v && json_equal (v, json_object_get (treeobj_get_data (d), "k42")),
        "its value decodes to the entry");
    json_decref (v);
    i = blob_dir_find (b, "k42x", &found);
    ok (!found && i == blob_dir_find (b, "k43", NULL),
        "k42x is absent, placed before k43");
    ok (blob_dir_find (b, "a", &found) == 0 && !found, "a sorts first");
    ok (blob_dir_find (b, "zz", &found) == 100 && !found, "zz sorts last");
    for (i = 0; i < b->n; i++) {
        name = blob_dir_name (b, i, &len);
        char buf[64];
        snprintf (buf, sizeof (buf), "%.*s", (int)len, name);
        if (blob_dir_find (b, buf, &found) != i || !found
            || blob_dir_namecmp (b, i, buf) != 0)
            bad++;
    }
    ok (bad == 0, "every entry is found at its place");
    ok (blob_dir_namecmp (b, 0, "k0") == 0 && blob_dir_namecmp (b, 0, "k") > 0
            && blob_dir_namecmp (b, 0, "k00") < 0,
        "namecmp is byte order, shorter first");
    blob_decref (b);
    json_decref (d);

    d = treeobj_create_dir ();
    b = blob_of (d);
    ok (blob_dir_index (b) == 0 && b->n == 0, "the empty dir indexes");
    ok (blob_dir_find (b, "x", &found) == 0 && !found, "and finds nothing");
    blob_decref (b);
    json_decref (d);
}

static void test_not_indexed (void)
{
    static const char *bad[] = {
        "{\"data\": {},\"type\":\"dir\",\"ver\":1}",
        "{\"type\":\"dir\",\"data\":{},\"ver\":1}",
        "{\"data\":{\"b\":{},\"a\":{}},\"type\":\"dir\",\"ver\":1}",
        "{\"data\":{\"a\":{},\"a\":{}},\"type\":\"dir\",\"ver\":1}",
        "{\"data\":{\"a\\n\":{}},\"type\":\"dir\",\"ver\":1}",
        "{\"data\":{\"a.b\":{}},\"type\":\"dir\",\"ver\":1}",
        "{\"data\":{\"\":{}},\"type\":\"dir\",\"ver\":1}",
        "{\"data\":{\"a\":1},\"type\":\"dir\",\"ver\":1}",
        "{\"data\":{\"a\":{}}},\"type\":\"dir\",\"ver\":1}",
        "{\"data\":{\"a\":{} },\"type\":\"dir\",\"ver\":1}",
        "{\"data\":{\"a\":{\"x\":\"}\"},\"b\":{\"y\":[\"\\\"]\"]}},"
        "\"type\":\"dirref\",\"ver\":1}",
        "hello",
        "",
    };
    int i, refused = 0;

    for (i = 0; i < (int)(sizeof (bad) / sizeof (bad[0])); i++) {
        struct blob *b = blob_str (bad[i]);
        if (blob_dir_index (b) < 0)
            refused++;
        else
            diag ("indexed: %s", bad[i]);
        blob_decref (b);
    }
    ok (refused == i, "%d blobs not in canonical dir form are not indexed", i);
    {
        struct blob *b = blob_str (
            "{\"data\":{\"a\":{\"x\":\"}\"},\"b\":{\"y\":[\"\\\"]\"]}},"
            "\"type\":\"dir\",\"ver\":1}");
        ok (blob_dir_index (b) == 0 && b->n == 2,
            "brackets and escapes inside strings are skipped");
        blob_decref (b);
    }
}

static void test_truncations (void)
{
    json_t *d = mkdir_n (5, "n%d");
    char *s = treeobj_encode (d);
    size_t len = strlen (s);
    int indexed = 0;

    for (size_t i = 0; i < len; i++) {
        struct blob *b = blob_create (s, i);
        if (blob_dir_index (b) == 0)
            indexed++;
        blob_decref (b);
    }
    ok (indexed == 0, "no truncation of a dir (%zu) indexes", len);
    free (s);
    json_decref (d);
}

/* Patch a base with random changes; compare with jansson. */
static int patch_once (json_t *full, struct blob **basep, unsigned *seed,
                       int nchanges)
{
    json_t *overlay = json_object ();
    json_t *data = treeobj_get_data (full);
    struct blob *nb, *fresh;
    char *exp;
    char name[32], val[32];
    int rc = 0;

    for (int k = 0; k < nchanges; k++) {
        int r = rand_r (seed) % 300;
        snprintf (name, sizeof (name), "e%03d", r);
        if (rand_r (seed) % 3 == 0) { /* remove */
            json_object_set_new (overlay, name, json_null ());
            json_object_del (data, name);
        }
        else {
            snprintf (val, sizeof (val), "v%u", (unsigned)rand_r (seed));
            json_t *v = treeobj_create_val (val, strlen (val));
            json_object_set (overlay, name, v);
            json_object_set_new (data, name, v);
        }
    }
    exp = treeobj_encode (full);
    nb = kvs_encode_dir (*basep, overlay);
    if (!nb || !exp || nb->len != strlen (exp)
        || memcmp (nb->data, exp, nb->len))
        rc = -1;
    else {
        /* the index built while encoding equals a fresh scan's */
        fresh = blob_create (nb->data, nb->len);
        if (nb->index != 1 || blob_dir_index (fresh) < 0 || fresh->n != nb->n
            || memcmp (fresh->off, nb->off, (nb->n + 1) * sizeof (uint32_t)))
            rc = -1;
        blob_decref (fresh);
    }
    free (exp);
    json_decref (overlay);
    blob_decref (*basep);
    *basep = nb;
    return rc;
}

static void test_encode_dir (void)
{
    json_t *full = mkdir_n (0, "x");
    struct blob *base = NULL;
    unsigned seed = 42;
    int bad = 0, rounds = 400;

    for (int i = 0; i < rounds; i++) {
        if (patch_once (full, &base, &seed, 1 + i % 7) < 0) {
            diag ("round %d differs", i);
            bad++;
            break;
        }
    }
    ok (bad == 0, "%d random patches of a dir give jansson's bytes", rounds);
    ok (base && base->n == (int)json_object_size (treeobj_get_data (full)),
        "the dir has %d entries", base ? base->n : -1);
    blob_decref (base);
    json_decref (full);

    /* names that need escaping: right bytes, not indexed */
    {
        json_t *o = json_object ();
        json_t *v = treeobj_create_val ("x", 1);
        struct blob *b;
        json_object_set_new (o, "tab\there", v);
        full = treeobj_create_dir ();
        treeobj_insert_entry (full, "tab\there", v);
        char *exp = treeobj_encode (full);
        b = kvs_encode_dir (NULL, o);
        ok (b && !strcmp (b->data, exp) && blob_dir_index (b) < 0,
            "a name needing escapes: jansson's bytes, not indexed");
        blob_decref (b);
        free (exp);
        json_decref (o);
        json_decref (full);
    }
    {
        struct blob *nb = blob_str ("not a dir");
        json_t *o = json_object ();
        errno = 0;
        ok (kvs_encode_dir (nb, o) == NULL && errno == EINVAL,
            "a base that is not an indexed dir: EINVAL");
        json_decref (o);
        blob_decref (nb);
    }
}

int main (void)
{
    plan (NO_PLAN);
    test_index ();
    test_not_indexed ();
    test_truncations ();
    test_encode_dir ();
    done_testing ();
    return 0;
}
