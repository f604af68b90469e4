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
    done_testing ();
    return 0;
}
