/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/appendtrack.c - what is new in an appended-to value */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "appendtrack.h"
#include "libcontent/blobref.h"
#include "libkvs/treeobj.h"
#include "tap.h"

static void ref_of (const char *s, char *ref)
{
    if (blobref_hash ("sha1", s, strlen (s), ref, BLOBREF_MAX_STRING_SIZE) < 0)
        BAIL_OUT ("blobref_hash failed");
}

/* A valref of the blobs holding each string in v (NULL-terminated). */
static json_t *valref_of (const char **v)
{
    json_t *o = treeobj_create_valref (NULL);
    char ref[BLOBREF_MAX_STRING_SIZE];

    for (int i = 0; v[i]; i++) {
        ref_of (v[i], ref);
        if (treeobj_append_blobref (o, ref) < 0)
            BAIL_OUT ("treeobj_append_blobref failed");
    }
    return o;
}

static json_t *val_of (const char *s)
{
    return treeobj_create_val (s, strlen (s));
}

/* The decoded string of a val treeobj (static buffer). */
static const char *str_of (json_t *val)
{
    static char buf[256];
    void *data;
    size_t len;

    if (!val || treeobj_decode_val (val, &data, &len) < 0)
        return NULL;
    snprintf (buf, sizeof (buf), "%.*s", (int)len, (char *)data);
    free (data);
    return buf;
}

/* True if refs holds exactly the blobrefs of the strings in v. */
static bool refs_are (json_t *refs, const char **v)
{
    char ref[BLOBREF_MAX_STRING_SIZE];
    size_t i;

    for (i = 0; v[i]; i++) {
        ref_of (v[i], ref);
        if (i >= json_array_size (refs)
            || strcmp (json_string_value (json_array_get (refs, i)), ref))
            return false;
    }
    return i == json_array_size (refs);
}

static int update (appendtrack_t *at, json_t *dirent, json_t **direct,
                   json_t **refs)
{
    int rc = appendtrack_update (at, dirent, direct, refs);
    json_decref (dirent);
    return rc;
}

/* Feed the loaded blobs holding each string in v (NULL-terminated); the
 * bytes to send of each, concatenated, in out (static).  NULL with errno
 * on the first failure. */
static const char *load (appendtrack_t *at, const char **v)
{
    static char out[256];
    size_t n = 0;

    out[0] = '\0';
    for (int i = 0; v[i]; i++) {
        size_t skip;
        size_t len = strlen (v[i]);
        if (appendtrack_loaded (at, v[i], len, &skip) < 0)
            return NULL;
        n += snprintf (out + n, sizeof (out) - n, "%s", v[i] + skip);
    }
    return out;
}

int main (int argc, char **argv)
{
    appendtrack_t *at;
    json_t *direct, *refs;

    plan (NO_PLAN);

    /* val, then appends (kvs turns the val into blob 0 of a valref) */
    ok ((at = appendtrack_create ()) != NULL, "appendtrack_create works");
    ok (update (at, val_of ("abc"), &direct, &refs) == 0, "first value: val");
    is (str_of (direct), "abc", "the val is sent as it is");
    ok (json_array_size (refs) == 0, "no blob to load");
    json_decref (direct);
    json_decref (refs);
    ok (update (at, val_of ("abc"), &direct, &refs) == 0 && direct == NULL
            && json_array_size (refs) == 0,
        "the same val again: nothing new");
    json_decref (refs);
    ok (update (at, valref_of ((const char *[]){"abc", "d", NULL}), &direct,
                &refs)
                == 0
            && direct == NULL,
        "val became a valref starting with its bytes");
    ok (refs_are (refs, (const char *[]){"d", NULL}),
        "only the appended blob is to load");
    is (load (at, (const char *[]){"d", NULL}), "d", "and all of it is sent");
    json_decref (refs);
    ok (update (at, valref_of ((const char *[]){"abc", "d", "e", "f", NULL}),
                &direct, &refs)
                == 0
            && refs_are (refs, (const char *[]){"e", "f", NULL}),
        "two more appends: two new blobs, in order");
    is (load (at, (const char *[]){"e", "f", NULL}), "ef", "both sent");
    json_decref (refs);
    ok (appendtrack_count (at) == 4, "count is 4 pieces");
    ok (update (at, valref_of ((const char *[]){"abc", "d", "e", "f", NULL}),
                &direct, &refs)
                == 0
            && json_array_size (refs) == 0,
        "unchanged valref: nothing new");
    json_decref (refs);
    errno = 0;
    ok (update (at, valref_of ((const char *[]){"abc", "d", NULL}), &direct,
                &refs)
                < 0
            && errno == EINVAL,
        "a shorter valref (truncated) fails with EINVAL");
    errno = 0;
    ok (update (at, val_of ("abcdefg"), &direct, &refs) < 0 && errno == EINVAL,
        "a val after a valref (overwrite) fails with EINVAL");
    ok (update (at,
                valref_of ((const char *[]){"abc", "d", "e", "f", "g", NULL}),
                &direct, &refs)
                == 0
            && refs_are (refs, (const char *[]){"g", NULL}),
        "failures left the state alone: the next append is still seen");
    json_decref (refs);
    errno = 0;
    ok (update (at,
                valref_of ((const char *[]){"abc", "d", "e", "f", "g", NULL}),
                &direct, &refs)
                < 0
            && errno == EINVAL,
        "an update before the last one's blobs are loaded fails with EINVAL");
    is (load (at, (const char *[]){"g", NULL}), "g", "g is sent");
    errno = 0;
    ok (load (at, (const char *[]){"h", NULL}) == NULL && errno == EINVAL,
        "a blob that no update asked for fails with EINVAL");
    errno = 0;
    ok (update (at, treeobj_create_dir (), &direct, &refs) < 0
            && errno == EISDIR,
        "a dir fails with EISDIR");
    errno = 0;
    ok (update (at,
                treeobj_create_dirref ("sha1-c0a9faf907dda6216fd73bf81d0b"
                                       "3b21a1a8cb91"),
                &direct, &refs)
                < 0
            && errno == EISDIR,
        "a dirref fails with EISDIR");
    errno = 0;
    ok (update (at, treeobj_create_symlink (NULL, "a.b"), &direct, &refs) < 0
            && errno == EINVAL,
        "a symlink fails with EINVAL");
    errno = 0;
    ok (update (at, json_pack ("{s:i}", "ver", 1), &direct, &refs) < 0
            && errno == EINVAL,
        "a malformed object fails with EINVAL");
    appendtrack_destroy (at);

    /* starting from a valref */
    at = appendtrack_create ();
    ok (update (at, valref_of ((const char *[]){"x", "y", NULL}), &direct,
                &refs)
                == 0
            && direct == NULL
            && refs_are (refs, (const char *[]){"x", "y", NULL}),
        "first value a valref: every blob is to load");
    is (load (at, (const char *[]){"x", "y", NULL}), "xy", "both sent");
    json_decref (refs);
    ok (update (at, valref_of ((const char *[]){"x", "y", "z", NULL}), &direct,
                &refs)
                == 0
            && refs_are (refs, (const char *[]){"z", NULL}),
        "then only the new one");
    is (load (at, (const char *[]){"z", NULL}), "z", "z sent");
    json_decref (refs);
    errno = 0;
    ok (update (at, valref_of ((const char *[]){"x", "y", "X", "w", NULL}),
                &direct, &refs)
                == 0
            && refs_are (refs, (const char *[]){"X", "w", NULL}),
        "a sent blob replaced: it and the rest are to load");
    json_decref (refs);
    errno = 0;
    ok (load (at, (const char *[]){"X", NULL}) == NULL && errno == EINVAL,
        "one not starting with the replaced blob's bytes fails with EINVAL");
    appendtrack_destroy (at);

    /* blobs folded by the kvs: the bytes sent are skipped, checked */
    at = appendtrack_create ();
    ok (update (at, valref_of ((const char *[]){"a", "b", "c", NULL}), &direct,
                &refs)
            == 0,
        "a valref of 3 blobs");
    is (load (at, (const char *[]){"a", "b", "c", NULL}), "abc", "sent");
    json_decref (refs);
    ok (update (at, valref_of ((const char *[]){"a", "bcd", NULL}), &direct,
                &refs)
                == 0
            && refs_are (refs, (const char *[]){"bcd", NULL}),
        "b and c folded with the new d: that blob is to load");
    json_decref (refs);
    is (load (at, (const char *[]){"bcd", NULL}), "d", "only d is sent");
    ok (update (at, valref_of ((const char *[]){"a", "bcd", "e", NULL}),
                &direct, &refs)
                == 0
            && refs_are (refs, (const char *[]){"e", NULL}),
        "then a plain append");
    json_decref (refs);
    is (load (at, (const char *[]){"e", NULL}), "e", "e is sent");
    ok (update (at, valref_of ((const char *[]){"a", "bcdefg", "h", NULL}),
                &direct, &refs)
                == 0
            && refs_are (refs, (const char *[]){"bcdefg", "h", NULL}),
        "two folds and appends between two looks");
    json_decref (refs);
    is (load (at, (const char *[]){"bcdefg", "h", NULL}), "fgh",
        "what was new in each is sent");
    ok (appendtrack_count (at) == 7, "count is 7 pieces");
    ok (update (at, valref_of ((const char *[]){"a", "bcdefgh", "i", NULL}),
                &direct, &refs)
            == 0,
        "another fold");
    json_decref (refs);
    errno = 0;
    ok (load (at, (const char *[]){"bcdXfgh", NULL}) == NULL && errno == EINVAL,
        "a blob not holding the bytes sent fails with EINVAL");
    appendtrack_destroy (at);
    at = appendtrack_create ();
    ok (update (at, valref_of ((const char *[]){"a", "bcdefg", NULL}), &direct,
                &refs)
            == 0,
        "a valref of 2 blobs");
    json_decref (refs);
    is (load (at, (const char *[]){"a", "bcdefg", NULL}), "abcdefg", "sent");
    ok (update (at, valref_of ((const char *[]){"a", "bcd", NULL}), &direct,
                &refs)
            == 0,
        "its last blob replaced by a shorter one");
    json_decref (refs);
    errno = 0;
    ok (load (at, (const char *[]){"bcd", NULL}) == NULL && errno == EINVAL,
        "which fails with EINVAL when loaded (truncated)");
    appendtrack_destroy (at);

    /* a val that was overwritten, or that grew as a val */
    at = appendtrack_create ();
    ok (update (at, val_of ("abc"), &direct, &refs) == 0, "val abc");
    json_decref (direct);
    json_decref (refs);
    errno = 0;
    ok (update (at, val_of ("xyz"), &direct, &refs) < 0 && errno == EINVAL,
        "a different val fails with EINVAL");
    ok (update (at, val_of ("abcde"), &direct, &refs) == 0
            && json_array_size (refs) == 0,
        "a val extending the old one is an append");
    is (str_of (direct), "de", "its new bytes are sent");
    json_decref (direct);
    json_decref (refs);
    errno = 0;
    ok (update (at, valref_of ((const char *[]){"abc", "f", NULL}), &direct,
                &refs)
                < 0
            && errno == EINVAL,
        "a valref not starting with the whole val fails with EINVAL");
    ok (update (at, valref_of ((const char *[]){"abcde", "f", NULL}), &direct,
                &refs)
                == 0
            && refs_are (refs, (const char *[]){"f", NULL}),
        "a valref starting with it is fine");
    is (load (at, (const char *[]){"f", NULL}), "f", "f is sent");
    json_decref (refs);
    appendtrack_destroy (at);

    /* the empty value, then appends */
    at = appendtrack_create ();
    ok (update (at, val_of (""), &direct, &refs) == 0, "empty val");
    is (str_of (direct), "", "sent as it is");
    json_decref (direct);
    json_decref (refs);
    ok (update (at, valref_of ((const char *[]){"", "a", NULL}), &direct, &refs)
                == 0
            && refs_are (refs, (const char *[]){"a", NULL}),
        "then the appended blob");
    json_decref (refs);
    errno = 0;
    ok (appendtrack_update (NULL, NULL, &direct, &refs) < 0 && errno == EINVAL,
        "NULL arguments fail with EINVAL");
    errno = 99;
    appendtrack_destroy (at);
    ok (errno == 99, "destroy preserves errno");
    appendtrack_destroy (NULL);
    pass ("destroy (NULL) is a no-op");

    done_testing ();
    return 0;
}
