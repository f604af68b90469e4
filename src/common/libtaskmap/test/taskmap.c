/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/taskmap.c - RFC 34 test vectors, block/cyclic, lookups, PMI form */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "libtaskmap/taskmap.h"
#include "tap.h"

/* RFC 34 test vectors: raw <-> JSON */
static const struct {
    const char *raw;
    const char *json;
} vectors[] = {
    {"0", "[[0,1,1,1]]"},
    {"0;1", "[[0,2,1,1]]"},
    {"0-1", "[[0,1,2,1]]"},
    {"0-1;2-3", "[[0,2,2,1]]"},
    {"0,2;1,3", "[[0,2,1,2]]"},
    {"1;0", "[[1,1,1,1],[0,1,1,1]]"},
    {"0-3;4-7;8-11;12-15", "[[0,4,4,1]]"},
    {"0,4,8,12;1,5,9,13;2,6,10,14;3,7,11,15", "[[0,4,1,4]]"},
    {"0-1,8-9;2-3,10-11;4-5,12-13;6-7,14-15", "[[0,4,2,2]]"},
    {"0-1;2-3;4-5;6-7;8-11;12-15", "[[0,4,2,1],[4,2,4,1]]"},
    {"0,6;1,7;2,8;3,9;4,10,12,14;5,11,13,15", "[[0,6,1,2],[4,2,1,2]]"},
    {"0-1,12-13;2-3,14-15;4-5,16-17;6-7,18-19;8-9,20-21;10-11,22-23",
     "[[0,6,2,2]]"},
    {"0;1-2", "[[0,1,1,1],[1,1,2,1]]"},
};

static void test_vectors (void)
{
    for (size_t i = 0; i < sizeof (vectors) / sizeof (vectors[0]); i++) {
        flux_error_t error;
        struct taskmap *a = taskmap_decode (vectors[i].raw, &error);
        struct taskmap *b = taskmap_decode (vectors[i].json, &error);
        char *s1 = a ? taskmap_encode (a, 0) : NULL;
        char *s2 = b ? taskmap_encode (b, TASKMAP_ENCODE_RAW) : NULL;

        ok (s1 && !strcmp (s1, vectors[i].json), "raw %s encodes as %s",
            vectors[i].raw, s1 ? s1 : "(null)");
        ok (s2 && !strcmp (s2, vectors[i].raw), "json %s encodes raw as %s",
            vectors[i].json, s2 ? s2 : "(null)");
        free (s1);
        free (s2);
        taskmap_destroy (a);
        taskmap_destroy (b);
    }
}

static void test_block_cyclic (void)
{
    int c44[] = {4, 4, 4, 4};
    int c42[] = {2, 2, 2, 2, 4, 4};
    int c3[] = {3, 0, 2};
    struct taskmap *m;
    char *s;

    m = taskmap_block (c44, 4);
    s = taskmap_encode (m, TASKMAP_ENCODE_WRAPPED);
    is (s, "{\"version\":1,\"map\":[[0,4,4,1]]}", "block 4*4 (wrapped)");
    free (s);
    s = taskmap_encode (m, TASKMAP_ENCODE_PMI);
    is (s, "(vector,(0,4,4))", "block 4*4 PMI");
    free (s);
    ok (taskmap_nnodes (m) == 4 && taskmap_total_ntasks (m) == 16,
        "4 nodes, 16 tasks");
    taskmap_destroy (m);

    m = taskmap_cyclic (c44, 4, 1);
    s = taskmap_encode (m, 0);
    is (s, "[[0,4,1,4]]", "cyclic:1 4*4");
    free (s);
    s = taskmap_encode (m, TASKMAP_ENCODE_PMI);
    is (s, "(vector,(0,4,1),(0,4,1),(0,4,1),(0,4,1))", "cyclic:1 4*4 PMI");
    free (s);
    ok (taskmap_nodeid (m, 0) == 0 && taskmap_nodeid (m, 5) == 1
            && taskmap_nodeid (m, 15) == 3,
        "cyclic nodeid lookups");
    taskmap_destroy (m);

    m = taskmap_cyclic (c42, 6, 2);
    s = taskmap_encode (m, 0);
    is (s, "[[0,6,2,1],[4,2,2,1]]", "cyclic:2 4*2+2*4");
    free (s);
    taskmap_destroy (m);

    m = taskmap_cyclic (c42, 6, 1);
    s = taskmap_encode (m, 0);
    is (s, "[[0,6,1,2],[4,2,1,2]]", "cyclic:1 4*2+2*4");
    free (s);
    taskmap_destroy (m);

    m = taskmap_block (c3, 3);
    s = taskmap_encode (m, 0);
    is (s, "[[0,1,3,1],[2,1,2,1]]", "block skips a node without tasks");
    free (s);
    ok (taskmap_ntasks (m, 1) == 0 && taskmap_ntasks (m, 2) == 2
            && taskmap_ntasks (m, 7) == 0,
        "ntasks per node");
    struct idset *ids = taskmap_taskids (m, 2);
    s = ids ? idset_encode (ids, IDSET_FLAG_RANGE) : NULL;
    is (s, "3-4", "taskids of node 2");
    free (s);
    idset_destroy (ids);
    errno = 0;
    ok (taskmap_nodeid (m, 5) < 0 && errno == ENOENT, "no task 5: ENOENT");
    taskmap_destroy (m);

    errno = 0;
    ok (taskmap_cyclic (c44, 4, 0) == NULL && errno == EINVAL,
        "stride 0: EINVAL");
    int neg[] = {1, -1};
    errno = 0;
    ok (taskmap_block (neg, 2) == NULL && errno == EINVAL,
        "negative count: EINVAL");
}

static void test_big (void)
{
    struct taskmap *m = taskmap_create ();
    char *s;

    ok (taskmap_append (m, 0, 4096, 256) == 0, "append 4096*256");
    s = taskmap_encode (m, 0);
    is (s, "[[0,4096,256,1]]", "4096*256 is one block");
    free (s);
    ok (taskmap_nodeid (m, 4096 * 256 - 1) == 4095, "last task on last node");
    errno = 0;
    ok (taskmap_append (m, 0, INT_MAX, 2) < 0 && errno == EOVERFLOW,
        "more than INT_MAX tasks: EOVERFLOW");
    ok (taskmap_total_ntasks (m) == 4096 * 256,
        "failed append changed nothing");
    errno = 0;
    ok (taskmap_append (m, -1, 1, 1) < 0 && errno == EINVAL, "nodeid -1");
    ok (taskmap_append (m, 0, 0, 1) < 0 && errno == EINVAL, "nnodes 0");
    taskmap_destroy (m);
}

static void test_decode_errors (void)
{
    const char *bad[] = {
        "[[0,1,1]]",
        "[[0,1,1,0]]",
        "[[-1,1,1,1]]",
        "[[0,1,1,\"1\"]]",
        "[1]",
        "{\"version\":2,\"map\":[]}",
        "{\"map\":[]}",
        "[[0,1,1,1]",
        "0;0",
        "0;2",
        "1",
        "a",
        "0-1;1",
        "[[0,2147483647,2,1]]",
        NULL,
    };
    flux_error_t error;

    for (int i = 0; bad[i]; i++) {
        error.text[0] = '\0';
        errno = 0;
        struct taskmap *m = taskmap_decode (bad[i], &error);
        ok (m == NULL && (errno == EINVAL || errno == EOVERFLOW)
                && error.text[0],
            "decode '%s' fails: %s", bad[i], error.text);
        taskmap_destroy (m);
    }
    struct taskmap *m = taskmap_decode ("[]", &error);
    ok (m && taskmap_unknown (m) && taskmap_total_ntasks (m) == 0,
        "[] is the unknown map");
    char *s = taskmap_encode (m, TASKMAP_ENCODE_PMI);
    is (s, "(vector)", "unknown map in PMI form");
    free (s);
    taskmap_destroy (m);
    m = taskmap_decode ("{\"version\":1,\"map\":[[0,2,3,1]]}", &error);
    ok (m && taskmap_total_ntasks (m) == 6, "wrapped form decodes");
    taskmap_destroy (m);
    ok (taskmap_encode (NULL, 0) == NULL && errno == EINVAL, "encode NULL");
}

static void test_check (void)
{
    int c[] = {2, 2};
    struct taskmap *a = taskmap_block (c, 2);
    struct taskmap *b = taskmap_cyclic (c, 2, 1);
    struct taskmap *d = taskmap_decode ("0-2;3", NULL);

    ok (taskmap_check (a, b), "block and cyclic of the same counts match");
    ok (!taskmap_check (a, d), "different counts do not");
    taskmap_destroy (a);
    taskmap_destroy (b);
    taskmap_destroy (d);
}

int main (void)
{
    plan (NO_PLAN);
    test_vectors ();
    test_block_cyclic ();
    test_big ();
    test_decode_errors ();
    test_check ();
    done_testing ();
}
