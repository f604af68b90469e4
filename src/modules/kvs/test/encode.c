/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* encode unit tests: kvs_encode gives exactly treeobj_encode's bytes */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libkvs/treeobj.h"
#include "tap.h"

#include "../encode.h"

static void same (const json_t *o, const char *what)
{
    char *exp = treeobj_encode (o);
    size_t len = 0;
    char *got = kvs_encode (o, &len);

    ok (exp && got && !strcmp (exp, got) && len == strlen (exp),
        "%s: identical to treeobj_encode", what);
    if (!exp || !got || strcmp (exp, got))
        diag ("expected %s\ngot      %s", exp ? exp : "NULL",
              got ? got : "NULL");
    free (exp);
    free (got);
}

static void add (json_t *dir, const char *name, json_t *o)
{
    if (treeobj_insert_entry (dir, name, o) < 0)
        BAIL_OUT ("insert %s", name);
    json_decref (o);
}

/* An hdir of size buckets, bucket k a dirref of a blobref made of k
 * (about half of them null). */
static json_t *make_hdir (int size, int seed)
{
    json_t *h = treeobj_create_hdir (size, NULL);

    for (int k = 0; k < size; k++) {
        char ref[64];
        json_t *v;
        if ((k * 7 + seed) % 3 == 0)
            continue;
        snprintf (ref, sizeof (ref), "sha1-%040d", k * 1000 + seed);
        v = treeobj_create_dirref (ref);
        treeobj_hdir_set_bucket (h, k, v);
        json_decref (v);
    }
    return h;
}

static void test_hdir_patch (void)
{
    json_t *src = make_hdir (67, 1);
    char *text = kvs_encode (src, NULL);
    int good = 0, trials = 200;
    unsigned int r = 12345;

    if (!text)
        BAIL_OUT ("kvs_encode of an hdir failed");

    for (int t = 0; t < trials; t++) {
        json_t *h = treeobj_copy (src);
        int changes = 1 + t % 5;
        char *exp, *got;
        size_t len = 0;

        for (int c = 0; c < changes; c++) {
            int k;
            r = r * 1103515245 + 12345;
            k = (r >> 8) % 67;
            if ((r >> 20) % 4 == 0)
                treeobj_hdir_set_bucket (h, k, NULL);
            else {
                char ref[64];
                json_t *v;
                snprintf (ref, sizeof (ref), "sha1-%040u", r % 100000);
                v = treeobj_create_dirref (ref);
                treeobj_hdir_set_bucket (h, k, v);
                json_decref (v);
            }
        }
        exp = kvs_encode (h, NULL);
        got = kvs_encode_hdir_patch (h, src, text, strlen (text), &len);
        if (exp && got && !strcmp (exp, got) && len == strlen (exp))
            good++;
        else if (good == t)
            diag ("trial %d differs:\n%s\n%s", t, exp, got ? got : "NULL");
        free (exp);
        free (got);
        json_decref (h);
    }
    ok (good == trials,
        "hdir patched from its stored text = encoded whole (%d/%d changes "
        "of 1 to 5 buckets)",
        good, trials);

    {
        json_t *h = treeobj_copy (src);
        json_t *other = make_hdir (61, 1);
        char *spaced = malloc (strlen (text) + 2);
        size_t len;
        if (!spaced)
            BAIL_OUT ("out of memory");
        sprintf (spaced, "%.*s %s", 20, text, text + 20);
        errno = 0;
        ok (kvs_encode_hdir_patch (h, src, spaced, strlen (spaced), &len)
                    == NULL
                && errno == EINVAL,
            "a stored text with white space is refused: EINVAL");
        ok (kvs_encode_hdir_patch (h, src, text, strlen (text) - 1, &len)
                    == NULL
                && errno == EINVAL,
            "a truncated stored text is refused: EINVAL");
        ok (kvs_encode_hdir_patch (other, src, text, strlen (text), &len)
                    == NULL
                && errno == EINVAL,
            "an hdir of another size is refused: EINVAL");
        free (spaced);
        json_decref (other);
        json_decref (h);
    }
    {
        /* a kept slot is copied as it is, quotes and backslashes in its
         * strings included (they must not end the slot early) */
        json_t *s2 = make_hdir (2, 0), *h2, *v;
        const char *odd = "{\"data\":{\"bucket\":[{\"data\":[\"x\\\"],"
                          "\\\\\"],\"type\":\"dirref\",\"ver\":1},null],"
                          "\"func\":\"fnv1a32\",\"size\":2},\"type\":\"hdir\","
                          "\"ver\":1}";
        char *got, exp[512];
        size_t len;
        treeobj_hdir_set_bucket (s2, 1, NULL);
        h2 = treeobj_copy (s2);
        v = treeobj_create_dirref (
            "sha1-0000000000000000000000000000000000000009");
        treeobj_hdir_set_bucket (h2, 1, v);
        json_decref (v);
        snprintf (exp, sizeof (exp),
                  "{\"data\":{\"bucket\":[{\"data\":[\"x\\\"],\\\\\"],"
                  "\"type\":\"dirref\",\"ver\":1},{\"data\":[\"sha1-"
                  "0000000000000000000000000000000000000009\"],\"type\":"
                  "\"dirref\",\"ver\":1}],\"func\":\"fnv1a32\",\"size\":2},"
                  "\"type\":\"hdir\",\"ver\":1}");
        got = kvs_encode_hdir_patch (h2, s2, odd, strlen (odd), &len);
        ok (got && !strcmp (got, exp),
            "escaped quotes inside a kept slot do not end it");
        if (!got || strcmp (got, exp))
            diag ("got %s", got ? got : "NULL");
        free (got);
        json_decref (h2);
        json_decref (s2);
    }
    free (text);
    json_decref (src);
}

int main (void)
{
    json_t *d, *sub, *v;
    char name[32];
    const char *weird = "q\"b\\s/\b\f\n\r\t\x01\x1f\x7f é €";

    plan (NO_PLAN);
    d = treeobj_create_dir ();
    same (d, "empty dir");
    add (d, "val", treeobj_create_val ("hello", 5));
    add (d, "empty", treeobj_create_val ("", 0));
    v = treeobj_create_valref ("sha1-c0a9faf907dda6216fd73bf81d0b3b21a1a8cb91");
    treeobj_append_blobref (v, "sha1-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    add (d, "valref", v);
    add (d, "dirref",
         treeobj_create_dirref (
             "sha1-c0a9faf907dda6216fd73bf81d0b3b21a1a8cb91"));
    add (d, "link", treeobj_create_symlink (NULL, "a.b"));
    add (d, "nslink", treeobj_create_symlink ("ns", weird));
    add (d, weird, treeobj_create_val (weird, strlen (weird)));
    add (d, "Zed", treeobj_create_val ("1", 1));
    add (d, "zed", treeobj_create_val ("2", 1));
    add (d, "z", treeobj_create_val ("3", 1));
    add (d, "zz\xc3\xa9", treeobj_create_val ("4", 1));
    sub = treeobj_create_dir ();
    add (sub, "inner", treeobj_create_val ("x", 1));
    add (sub, "deeper", treeobj_create_dir ());
    add (d, "inline", sub);
    same (d, "a dir of every type, escapes and odd names");
    same (treeobj_get_entry (d, "valref"), "a valref alone");
    same (treeobj_get_entry (d, "nslink"), "a symlink alone");
    for (int i = 0; i < 2000; i++) {
        snprintf (name, sizeof (name), "k%d", i * 7919 % 2003);
        add (d, name, treeobj_create_val (name, strlen (name)));
    }
    same (d, "a dir of 2000 more entries");
    json_decref (d);

    d = treeobj_create_hdir (7, NULL);
    same (d, "an empty hdir");
    v = treeobj_create_dirref ("sha1-c0a9faf907dda6216fd73bf81d0b3b21a1a8cb91");
    treeobj_hdir_set_bucket (d, 0, v);
    treeobj_hdir_set_bucket (d, 5, v);
    json_decref (v);
    same (d, "an hdir with two buckets");
    json_decref (d);

    v = json_pack ("{s:i s:s s:[i]}", "ver", 2, "type", "val", "data", 1);
    {
        char *exp = json_dumps (v, JSON_COMPACT | JSON_SORT_KEYS);
        char *got = kvs_encode (v, NULL);
        ok (exp && got && !strcmp (exp, got),
            "a non-treeobj is encoded as jansson would");
        free (exp);
        free (got);
    }
    json_decref (v);
    ok (kvs_encode (NULL, NULL) == NULL && errno == EINVAL, "NULL: EINVAL");
    test_hdir_patch ();
    done_testing ();
    return 0;
}
