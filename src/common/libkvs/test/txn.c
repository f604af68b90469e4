/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/txn.c - transactions encode their operations exactly as kvs.commit
 * takes them, {key:s, flags:i, dirent:<treeobj>|null}; bad arguments are
 * refused without side effects; TXN_COMPACT merges appends.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "libkvs/kvs.h"
#include "libkvs/kvs_private.h"
#include "libkvs/treeobj.h"
#include "tap.h"

#define EMPTY_DIR "{\"data\":{},\"type\":\"dir\",\"ver\":1}"

static char *op_text (json_t *ops, int index)
{
    return json_dumps (json_array_get (ops, index),
                       JSON_COMPACT | JSON_SORT_KEYS);
}

static void is_op (flux_kvs_txn_t *txn, int index, const char *exp)
{
    json_t *op = json_array_get (kvs_txn__ops (txn), index);
    char *s = op_text (kvs_txn__ops (txn), index);

    is (s, exp, "op %d is %s", index, exp);
    ok (op && json_object_size (op) == 3, "op %d has exactly 3 keys", index);
    free (s);
}

static int count (flux_kvs_txn_t *txn)
{
    return json_array_size (kvs_txn__ops (txn));
}

static void test_ops (void)
{
    flux_kvs_txn_t *txn = flux_kvs_txn_create ();
    int n = 0;

    ok (txn != NULL && count (txn) == 0, "txn_create makes an empty txn");

    ok (flux_kvs_txn_put (txn, 0, "a.b", "hello") == 0, "put a.b=hello");
    is_op (txn, n++,
           "{\"dirent\":{\"data\":\"aGVsbG8=\",\"type\":\"val\",\"ver\":1},"
           "\"flags\":0,\"key\":\"a.b\"}");

    ok (flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "log", "x\n") == 0,
        "put with FLUX_KVS_APPEND");
    is_op (txn, n++,
           "{\"dirent\":{\"data\":\"eAo=\",\"type\":\"val\",\"ver\":1},"
           "\"flags\":32,\"key\":\"log\"}");

    ok (flux_kvs_txn_put (txn, 0, "e", NULL) == 0, "put NULL value");
    is_op (txn, n++,
           "{\"dirent\":{\"data\":\"\",\"type\":\"val\",\"ver\":1},"
           "\"flags\":0,\"key\":\"e\"}");

    ok (flux_kvs_txn_put_raw (txn, 0, "raw", "a\0b", 3) == 0,
        "put_raw with a NUL inside");
    is_op (txn, n++,
           "{\"dirent\":{\"data\":\"YQBi\",\"type\":\"val\",\"ver\":1},"
           "\"flags\":0,\"key\":\"raw\"}");

    ok (flux_kvs_txn_pack (txn, 0, "j", "{s:i}", "x", 1) == 0, "pack object");
    is_op (txn, n++,
           "{\"dirent\":{\"data\":\"eyJ4IjoxfQ==\",\"type\":\"val\","
           "\"ver\":1},\"flags\":0,\"key\":\"j\"}");

    ok (flux_kvs_txn_pack (txn, 0, "i", "i", 42) == 0, "pack integer");
    is_op (txn, n++,
           "{\"dirent\":{\"data\":\"NDI=\",\"type\":\"val\",\"ver\":1},"
           "\"flags\":0,\"key\":\"i\"}");

    ok (flux_kvs_txn_mkdir (txn, 0, "d") == 0, "mkdir");
    is_op (txn, n++, "{\"dirent\":" EMPTY_DIR ",\"flags\":0,\"key\":\"d\"}");

    ok (flux_kvs_txn_unlink (txn, 0, "a.b") == 0, "unlink");
    is_op (txn, n++, "{\"dirent\":null,\"flags\":0,\"key\":\"a.b\"}");

    ok (flux_kvs_txn_symlink (txn, 0, "l", NULL, "a.b") == 0, "symlink");
    is_op (txn, n++,
           "{\"dirent\":{\"data\":{\"target\":\"a.b\"},\"type\":\"symlink\","
           "\"ver\":1},\"flags\":0,\"key\":\"l\"}");

    ok (flux_kvs_txn_symlink (txn, 0, "l2", "ns", "x") == 0,
        "symlink with namespace");
    is_op (txn, n++,
           "{\"dirent\":{\"data\":{\"namespace\":\"ns\",\"target\":\"x\"},"
           "\"type\":\"symlink\",\"ver\":1},\"flags\":0,\"key\":\"l2\"}");

    ok (flux_kvs_txn_put_treeobj (txn, 0, "t", EMPTY_DIR) == 0, "put_treeobj");
    is_op (txn, n++, "{\"dirent\":" EMPTY_DIR ",\"flags\":0,\"key\":\"t\"}");

    ok (flux_kvs_txn_put (txn, 0, "..x...y..", "v") == 0,
        "put to an unnormalized key");
    is_op (txn, n++,
           "{\"dirent\":{\"data\":\"dg==\",\"type\":\"val\",\"ver\":1},"
           "\"flags\":0,\"key\":\"x.y\"}");

    ok (count (txn) == n, "txn holds %d operations", n);
    ok (flux_kvs_txn_clear (txn) == 0 && count (txn) == 0, "clear empties it");
    flux_kvs_txn_destroy (txn);
    flux_kvs_txn_destroy (NULL);
    pass ("txn_destroy (NULL) is harmless");
}

static void test_invalid (void)
{
    flux_kvs_txn_t *txn = flux_kvs_txn_create ();
    struct {
        int rc;
        const char *what;
    } t[] = {
        {flux_kvs_txn_put (NULL, 0, "a", "b"), "put to a NULL txn"},
        {flux_kvs_txn_put (txn, 0, NULL, "b"), "put with a NULL key"},
        {flux_kvs_txn_put (txn, 0, ".", "b"), "put to the root"},
        {flux_kvs_txn_put (txn, 0, "", "b"), "put to an empty key"},
        {flux_kvs_txn_put (txn, 0, "...", "b"), "put to only dots"},
        {flux_kvs_txn_put (txn, FLUX_KVS_READDIR, "a", "b"),
         "put with a lookup flag"},
        {flux_kvs_txn_put (txn, 0x10000, "a", "b"), "put with an unknown flag"},
        {flux_kvs_txn_put_raw (txn, 0, "a", NULL, 3),
         "put_raw NULL data, len 3"},
        {flux_kvs_txn_pack (txn, 0, "a", "{s:i", "x", 1), "pack bad format"},
        {flux_kvs_txn_pack (txn, 0, "a", NULL), "pack NULL format"},
        {flux_kvs_txn_put_treeobj (txn, 0, "a", "{}"), "put_treeobj of {}"},
        {flux_kvs_txn_put_treeobj (txn, 0, "a", "not json"),
         "put_treeobj of non-JSON"},
        {flux_kvs_txn_put_treeobj (txn, FLUX_KVS_APPEND, "a", EMPTY_DIR),
         "put_treeobj with APPEND"},
        {flux_kvs_txn_put_treeobj (txn, 0, "a", NULL), "put_treeobj NULL"},
        {flux_kvs_txn_mkdir (txn, FLUX_KVS_APPEND, "a"), "mkdir with APPEND"},
        {flux_kvs_txn_mkdir (txn, 0, "."), "mkdir of the root"},
        {flux_kvs_txn_unlink (txn, FLUX_KVS_APPEND, "a"), "unlink with APPEND"},
        {flux_kvs_txn_unlink (txn, 0, "."), "unlink of the root"},
        {flux_kvs_txn_symlink (txn, 0, "a", NULL, NULL), "symlink no target"},
        {flux_kvs_txn_symlink (txn, 0, "a", NULL, ""), "symlink empty target"},
        {flux_kvs_txn_symlink (txn, 0, "a", "", "b"), "symlink empty ns"},
        {flux_kvs_txn_symlink (txn, FLUX_KVS_APPEND, "a", NULL, "b"),
         "symlink with APPEND"},
    };

    for (size_t i = 0; i < sizeof (t) / sizeof (t[0]); i++)
        ok (t[i].rc == -1, "%s fails", t[i].what);
    errno = 0;
    ok (flux_kvs_txn_put (txn, 0, ".", "b") < 0 && errno == EINVAL,
        "errno is EINVAL");
    /* found by src/common/fuzz/parse_fuzz.c: it failed with ENOMEM */
    errno = 0;
    ok (flux_kvs_txn_put (txn, 0, "a.b\xee.c", "v") < 0 && errno == EINVAL,
        "put to a key of invalid UTF-8 fails with EINVAL");
    errno = 0;
    ok (flux_kvs_txn_put_treeobj (txn, 0, "\xc0\xaf", EMPTY_DIR) < 0
            && errno == EINVAL,
        "put_treeobj to an overlong UTF-8 key fails with EINVAL");
    errno = 0;
    ok (flux_kvs_txn_unlink (txn, 0, "x.\xed\xa0\x80") < 0 && errno == EINVAL,
        "unlink of a key with a UTF-8 surrogate fails with EINVAL");
    ok (count (txn) == 0, "no failed call left an operation");
    ok (flux_kvs_txn_put (txn, 0, "caf\xc3\xa9.\xf0\x9f\x98\x80", "v") == 0
            && count (txn) == 1,
        "put to a key of valid multibyte UTF-8 works");
    flux_kvs_txn_clear (txn);
    ok (flux_kvs_txn_clear (NULL) < 0 && errno == EINVAL,
        "clear (NULL) fails with EINVAL");
    flux_kvs_txn_destroy (txn);
}

static char *ops_text (json_t *ops)
{
    return json_dumps (ops, JSON_COMPACT | JSON_SORT_KEYS);
}

static void test_compact (void)
{
    flux_kvs_txn_t *txn = flux_kvs_txn_create ();
    json_t *ops;
    char *s;

    flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "a", "x");
    flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "a", "y");
    flux_kvs_txn_put (txn, 0, "b", "1");
    flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "a", "z");
    ops = kvs_txn__compact (txn);
    s = ops_text (ops);
    is (s,
        "[{\"dirent\":{\"data\":\"eHl6\",\"type\":\"val\",\"ver\":1},"
        "\"flags\":32,\"key\":\"a\"},{\"dirent\":{\"data\":\"MQ==\","
        "\"type\":\"val\",\"ver\":1},\"flags\":0,\"key\":\"b\"}]",
        "appends to a are merged past an unrelated key");
    ok (count (txn) == 4, "the txn itself is unchanged");
    free (s);
    json_decref (ops);

    flux_kvs_txn_clear (txn);
    flux_kvs_txn_put (txn, 0, "a", "x");
    flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "a", "y");
    ops = kvs_txn__compact (txn);
    s = ops_text (ops);
    is (s,
        "[{\"dirent\":{\"data\":\"eHk=\",\"type\":\"val\",\"ver\":1},"
        "\"flags\":0,\"key\":\"a\"}]",
        "an append after a put becomes part of the put");
    free (s);
    json_decref (ops);

    flux_kvs_txn_clear (txn);
    flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "a", "x");
    flux_kvs_txn_unlink (txn, 0, "a");
    flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "a", "y");
    ops = kvs_txn__compact (txn);
    ok (json_array_size (ops) == 3, "no merge across an unlink of the key");
    json_decref (ops);

    flux_kvs_txn_clear (txn);
    flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "a.b", "x");
    flux_kvs_txn_mkdir (txn, 0, "a");
    flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "a.b", "y");
    ops = kvs_txn__compact (txn);
    ok (json_array_size (ops) == 3, "no merge across an op on a parent");
    json_decref (ops);

    flux_kvs_txn_clear (txn);
    flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "a", "x");
    flux_kvs_txn_put (txn, 0, "a.c", "1");
    flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "a", "y");
    ops = kvs_txn__compact (txn);
    ok (json_array_size (ops) == 3, "no merge across an op on a child");
    json_decref (ops);

    flux_kvs_txn_clear (txn);
    flux_kvs_txn_mkdir (txn, 0, "a");
    flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "a", "y");
    ops = kvs_txn__compact (txn);
    ok (json_array_size (ops) == 2, "no merge into a mkdir");
    json_decref (ops);

    flux_kvs_txn_clear (txn);
    flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "ab", "x");
    flux_kvs_txn_put (txn, 0, "a", "1");
    flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "ab", "y");
    ops = kvs_txn__compact (txn);
    ok (json_array_size (ops) == 2,
        "a key that is a string prefix but not a parent does not block");
    json_decref (ops);

    flux_kvs_txn_clear (txn);
    flux_kvs_txn_mkdir (txn, 0, "a");
    flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "a.b", "x");
    flux_kvs_txn_put (txn, 0, "a.c", "1");
    flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "a.b", "y");
    ops = kvs_txn__compact (txn);
    ok (json_array_size (ops) == 3,
        "merge past a sibling, after an op on the parent before both");
    json_decref (ops);

    flux_kvs_txn_clear (txn);
    flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "a", "x");
    flux_kvs_txn_put (txn, 0, "a.b.c", "1");
    flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "a", "y");
    flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "a.b.c", "2");
    ops = kvs_txn__compact (txn);
    ok (json_array_size (ops) == 4,
        "no merge across an op on a grandchild, nor past its ancestor's");
    json_decref (ops);

    flux_kvs_txn_clear (txn);
    flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "a.b.c", "x");
    flux_kvs_txn_unlink (txn, 0, "a");
    flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "a.b.c", "y");
    flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "a.b.c", "z");
    ops = kvs_txn__compact (txn);
    ok (json_array_size (ops) == 3,
        "no merge across an op on a grandparent; later appends merge");
    json_decref (ops);

    /* The cost: appends to N different keys (each under one of 10
     * directories) take a few key lookups each, so twice the operations
     * cost twice the steps; scanning back over the earlier operations
     * for each append took N^2/2 steps. */
    {
        size_t steps[2] = {0, 0}, nops[2] = {0, 0};
        int n[2] = {2000, 4000};
        char key[64];

        for (int r = 0; r < 2; r++) {
            flux_kvs_txn_clear (txn);
            for (int i = 0; i < n[r]; i++) {
                snprintf (key, sizeof (key), "d%d.k%d", i % 10, i);
                flux_kvs_txn_put (txn, FLUX_KVS_APPEND, key, "x");
            }
            flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "d3.k3", "y");
            ops = kvs_txn__compact_steps (txn, &steps[r]);
            nops[r] = json_array_size (ops);
            json_decref (ops);
        }
        diag ("compact steps: %zu for %d appends, %zu for %d", steps[0],
              n[0] + 1, steps[1], n[1] + 1);
        ok (nops[0] == 2000 && nops[1] == 4000,
            "appends to N keys compact to N ops (the last one merged)");
        ok (steps[0] <= 4 * 2001 && steps[1] <= 4 * 4001,
            "at most 4 key lookups per operation");
        ok (steps[1] <= 2 * steps[0] + 8, "twice the appends, twice the cost");
    }

    /* 4,000 appends of 4 KB to two keys, interleaved, with an empty one:
     * each key's data in order, in one op each; with the earlier
     * re-encoding of the merged value per append this took minutes under
     * ASAN, now well under a second */
    {
        static char chunk[4097];
        void *d = NULL;
        size_t len = 0, i;
        bool same = true;

        flux_kvs_txn_clear (txn);
        for (i = 0; i < 4000; i++) {
            memset (chunk, 'a' + i % 26, 4096);
            flux_kvs_txn_put (txn, FLUX_KVS_APPEND, i % 2 ? "o" : "e", chunk);
            if (i == 10)
                flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "o", "");
        }
        ops = kvs_txn__compact (txn);
        ok (ops && json_array_size (ops) == 2,
            "4,000 appends to two keys compact to two ops");
        ok (treeobj_decode_val (
                json_object_get (json_array_get (ops, 1), "dirent"), &d, &len)
                    == 0
                && len == 2000 * 4096,
            "the merged value holds every append");
        for (i = 0; i < 2000 && d && same; i++) {
            char c = (char)('a' + (2 * i + 1) % 26);
            same = ((char *)d)[i * 4096] == c
                   && ((char *)d)[i * 4096 + 4095] == c;
        }
        ok (same, "in order");
        free (d);
        json_decref (ops);
    }
    flux_kvs_txn_destroy (txn);
}

static void test_append (void)
{
    flux_kvs_txn_t *a = flux_kvs_txn_create ();
    flux_kvs_txn_t *b = flux_kvs_txn_create ();

    ok (a && b && flux_kvs_txn_put (a, FLUX_KVS_APPEND, "log", "x\n") == 0
            && flux_kvs_txn_put (b, 0, "k", "v") == 0
            && flux_kvs_txn_put (b, FLUX_KVS_APPEND, "log", "y\n") == 0,
        "two transactions made");
    ok (kvs_txn__append (a, b) == 0 && count (a) == 3 && count (b) == 2,
        "kvs_txn__append adds b's operations to a, b unchanged");
    is_op (a, 0,
           "{\"dirent\":{\"data\":\"eAo=\",\"type\":\"val\",\"ver\":1},"
           "\"flags\":32,\"key\":\"log\"}");
    is_op (a, 1,
           "{\"dirent\":{\"data\":\"dg==\",\"type\":\"val\",\"ver\":1},"
           "\"flags\":0,\"key\":\"k\"}");
    is_op (a, 2,
           "{\"dirent\":{\"data\":\"eQo=\",\"type\":\"val\",\"ver\":1},"
           "\"flags\":32,\"key\":\"log\"}");
    errno = 0;
    ok (kvs_txn__append (a, a) < 0 && errno == EINVAL,
        "kvs_txn__append (a, a) fails with EINVAL");
    errno = 0;
    ok (kvs_txn__append (NULL, b) < 0 && errno == EINVAL,
        "kvs_txn__append (NULL, b) fails with EINVAL");
    ok (count (a) == 3, "a failed append leaves a unchanged");
    flux_kvs_txn_destroy (a);
    flux_kvs_txn_destroy (b);
}

int main (void)
{
    plan (NO_PLAN);
    test_ops ();
    test_invalid ();
    test_compact ();
    test_append ();
    done_testing ();
    return 0;
}
