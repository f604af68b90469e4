/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/rlist.c - the resource set: Rv1 in and out (R_lite grouping,
 * nodelist, times, nslots), malformed R, ranks and hosts, up/down,
 * copy/append, set_allocated/free checks, the summary string.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libidset/idset.h"
#include "librlist/rlist.h"
#include "tap.h"

static json_t *R_of (const char *s)
{
    json_error_t e;
    json_t *o = json_loads (s, 0, &e);
    if (!o)
        BAIL_OUT ("bad test JSON: %s: %s", e.text, s);
    return o;
}

static struct rlist *from (const char *s)
{
    json_t *R = R_of (s);
    flux_error_t error;
    struct rlist *rl = rlist_from_R (R, &error);
    if (!rl)
        diag ("rlist_from_R: %s", error.text);
    json_decref (R);
    return rl;
}

/* compact JSON text of rlist_to_R, caller frees */
static char *to (const struct rlist *rl)
{
    json_t *R = rlist_to_R (rl);
    char *s = R ? json_dumps (R, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref (R);
    return s;
}

static void check_R_lite (const struct rlist *rl, const char *expected,
                          const char *what)
{
    json_t *R = rlist_to_R (rl), *lite = NULL;
    char *s = NULL;

    if (R && json_unpack (R, "{s:{s:o}}", "execution", "R_lite", &lite) == 0)
        s = json_dumps (lite, JSON_COMPACT | JSON_SORT_KEYS);
    is (s, expected, "%s", what);
    free (s);
    json_decref (R);
}

static void test_round_trip (void)
{
    const char *in
        = "{\"version\":1,\"execution\":{\"R_lite\":["
          "{\"rank\":\"2-3\",\"children\":{\"core\":\"0-3\"}},"
          "{\"rank\":\"0-1\",\"children\":{\"core\":\"0-3\",\"gpu\":\"0\"}},"
          "{\"rank\":\"4\",\"children\":{\"core\":\"0-3\"}}],"
          "\"nodelist\":[\"node[0-3]\",\"login\"],"
          "\"starttime\":10.5,\"expiration\":20.25}}";
    struct rlist *rl = from (in), *back;
    char *s, *s2;

    ok (rl != NULL, "rlist_from_R accepts R_lite in any order");
    cmp_ok (rlist_nnodes (rl), "==", 5, "5 ranks");
    cmp_ok (rlist_count_cores (rl), "==", 20, "20 cores");
    cmp_ok (rlist_count_gpus (rl), "==", 2, "2 gpus");
    cmp_ok (rlist_avail_cores (rl), "==", 20, "all cores available");
    s = rlist_ranks (rl);
    is (s, "0-4", "rlist_ranks");
    free (s);
    s = rlist_nodelist (rl);
    is (s, "node[0-3],login", "nodelist maps hosts to sorted ranks");
    free (s);
    ok (rlist_starttime (rl) == 10.5 && rlist_expiration (rl) == 20.25,
        "times are parsed");
    check_R_lite (rl,
                  "[{\"children\":{\"core\":\"0-3\",\"gpu\":\"0\"},"
                  "\"rank\":\"0-1\"},"
                  "{\"children\":{\"core\":\"0-3\"},\"rank\":\"2-4\"}]",
                  "R_lite groups ranks with identical children");
    s = to (rl);
    ok (s && strstr (s, "\"nodelist\":[\"node[0-3],login\"]")
            && strstr (s, "\"starttime\":10.5")
            && strstr (s, "\"expiration\":20.25") && strstr (s, "\"version\":1")
            && !strstr (s, "nslots"),
        "rlist_to_R has version, nodelist, times, no nslots");
    back = from (s);
    s2 = to (back);
    is (s2, s, "R -> rlist -> R -> rlist -> R is stable");
    free (s);
    free (s2);
    rlist_destroy (back);
    rlist_destroy (rl);
}

static void test_compression (void)
{
    struct rlist *rl = rlist_create ();
    char *s;
    int rc = 0;

    for (unsigned int r = 0; r < 8; r++) {
        char host[16];
        snprintf (host, sizeof (host), "n%u", r);
        /* ranks 0-5 alike, 6 differs, 7 like 0-5 again */
        rc |= rlist_add_rank (rl, r, host, r == 6 ? "0-1" : "0-7", "");
    }
    ok (rc == 0, "rlist_add_rank x8");
    check_R_lite (rl,
                  "[{\"children\":{\"core\":\"0-7\"},\"rank\":\"0-5,7\"},"
                  "{\"children\":{\"core\":\"0-1\"},\"rank\":\"6\"}]",
                  "non-contiguous ranks with equal children share an entry");
    s = rlist_dumps (rl);
    is (s, "rank[0-5,7]/core[0-7] rank6/core[0-1]", "rlist_dumps");
    free (s);
    ok (rlist_add_rank (rl, 3, "x", "0", NULL) < 0 && errno == EEXIST,
        "rlist_add_rank of an existing rank fails with EEXIST");
    ok (rlist_add_rank (rl, 9, "x", "0-", NULL) < 0 && errno == EINVAL,
        "rlist_add_rank with a bad core idset fails with EINVAL");
    ok (rlist_add_rank (rl, 9, "a,b", "0", NULL) < 0 && errno == EINVAL,
        "rlist_add_rank with two hostnames fails with EINVAL");
    rlist_destroy (rl);

    rl = rlist_create ();
    ok (rlist_add_rank (rl, 0, "h", "0", "0-1") == 0, "a node with 2 gpus");
    s = rlist_dumps (rl);
    is (s, "rank0/core0,gpu[0-1]", "summary with gpus");
    free (s);
    rlist_destroy (rl);
}

static void test_bad_R (void)
{
    struct {
        const char *R;
        const char *errtext;
    } bad[] = {
        {"{\"execution\":{\"R_lite\":[]}}", "R: "},
        {"{\"version\":2,\"execution\":{\"R_lite\":[]}}",
         "R version 2 is not supported (only version 1)"},
        {"{\"version\":1,\"execution\":{}}", "R execution: "},
        {"{\"version\":1,\"execution\":{\"R_lite\":{}}}",
         "R_lite must be an array"},
        {"{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\"}]}}",
         "R_lite[0]: "},
        {"{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"x\","
         "\"children\":{\"core\":\"0\"}}]}}",
         "R_lite[0]: rank \"x\" is not a valid idset"},
        {"{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\","
         "\"children\":{\"core\":\"3-1\"}}]}}",
         "R_lite[0]: core \"3-1\" is not a valid idset"},
        {"{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\","
         "\"children\":{\"core\":\"0\",\"gpu\":\"a\"}}]}}",
         "R_lite[0]: gpu \"a\" is not a valid idset"},
        {"{\"version\":1,\"execution\":{\"R_lite\":["
         "{\"rank\":\"0-1\",\"children\":{\"core\":\"0\"}},"
         "{\"rank\":\"1\",\"children\":{\"core\":\"0\"}}]}}",
         "R_lite: rank 1 appears more than once"},
        {"{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0-1\","
         "\"children\":{\"core\":\"0\"}}],\"nodelist\":[\"a\"]}}",
         "nodelist has 1 hosts but R_lite has 2 ranks"},
        {"{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\","
         "\"children\":{\"core\":\"0\"}}],\"nodelist\":[\"a[\"]}}",
         "nodelist[0] is not a valid hostlist"},
        {"{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\","
         "\"children\":{\"core\":\"0\"}}],\"starttime\":\"x\"}}",
         "starttime must be a number >= 0"},
        {"{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\","
         "\"children\":{\"core\":\"0\"}}],\"starttime\":5,\"expiration\":4}}",
         "expiration must be greater than starttime"},
        {"{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\","
         "\"children\":{\"core\":\"0\"}}],\"nslots\":0}}",
         "nslots must be an integer > 0"},
        /* found by src/common/fuzz/parse_fuzz.c: a few bytes made billions
         * of nodes (out of memory), or a core count that wrapped to -1 */
        {"{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":"
         "\"0-4294967294\",\"children\":{\"core\":\"0\"}}]}}",
         "R_lite: more than 1048576 ranks"},
        {"{\"version\":1,\"execution\":{\"R_lite\":["
         "{\"rank\":\"0\",\"children\":{\"core\":\"0\"}},"
         "{\"rank\":\"1-1048576\",\"children\":{\"core\":\"0\"}}]}}",
         "R_lite: more than 1048576 ranks"},
        {"{\"version\":1,\"execution\":{\"R_lite\":["
         "{\"rank\":\"0,2,4\",\"children\":{\"core\":\"0\"}},"
         "{\"rank\":\"1,4\",\"children\":{\"core\":\"0\"}}]}}",
         "R_lite: rank 4 appears more than once"},
        {"{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\","
         "\"children\":{\"core\":\"0-4294967294\"}}]}}",
         "R_lite[0]: more than 2147483647 cores or gpus"},
        {"{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\","
         "\"children\":{\"core\":\"0\",\"gpu\":\"1-2147483648\"}}]}}",
         "R_lite[0]: more than 2147483647 cores or gpus"},
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        json_t *R = R_of (bad[i].R);
        flux_error_t error = {{0}};
        struct rlist *rl = rlist_from_R (R, &error);
        ok (rl == NULL && errno == EINVAL
                && !strncmp (error.text, bad[i].errtext,
                             strlen (bad[i].errtext)),
            "bad R %zu: EINVAL \"%s\"", i, error.text);
        rlist_destroy (rl);
        json_decref (R);
    }
    ok (rlist_from_R (NULL, NULL) == NULL && errno == EINVAL,
        "rlist_from_R (NULL) fails with EINVAL");
}

static void test_nslots_and_empty (void)
{
    struct rlist *rl = from ("{\"version\":1,\"execution\":{\"R_lite\":["
                             "{\"rank\":\"0\",\"children\":{\"core\":\"0\"}}],"
                             "\"nodelist\":[\"a\"],\"nslots\":1}}");
    char *s = to (rl);

    ok (rlist_nslots (rl) == 1 && s && strstr (s, "\"nslots\":1"),
        "nslots is parsed and emitted");
    free (s);
    rlist_destroy (rl);
    rl = from ("{\"version\":1,\"execution\":{\"R_lite\":[]}}");
    s = to (rl);
    is (s,
        "{\"execution\":{\"R_lite\":[],\"expiration\":0.0,\"nodelist\":[],"
        "\"starttime\":0.0},\"version\":1}",
        "an empty set round trips");
    free (s);
    s = rlist_dumps (rl);
    is (s, "", "summary of an empty set is empty");
    free (s);
    rlist_destroy (rl);
    rl = from ("{\"version\":1,\"execution\":{\"R_lite\":["
               "{\"rank\":\"0\",\"children\":{\"core\":\"0\"}}]}}");
    s = to (rl);
    ok (rl && s && !strstr (s, "nodelist"),
        "R without nodelist is accepted (hosts unknown, none emitted)");
    free (s);
    rlist_destroy (rl);
}

static struct rlist *alloc1 (struct rlist *rl, int cores)
{
    struct rlist_request req = {.nslots = 1, .cores_per_slot = cores};
    return rlist_alloc (rl, &req);
}

static void test_updown_alloc_state (void)
{
    struct rlist *rl = from ("{\"version\":1,\"execution\":{\"R_lite\":["
                             "{\"rank\":\"0-3\",\"children\":{\"core\":\"0-3\","
                             "\"gpu\":\"0\"}}],\"nodelist\":[\"n[0-3]\"]}}");
    struct rlist *a, *cpy, *down, *al, *b;
    char *s;

    ok (rlist_mark_down (rl, "1-2,7") == 0, "mark 1-2 down (7 ignored)");
    cmp_ok (rlist_avail_cores (rl), "==", 8, "8 cores available");
    cmp_ok (rlist_avail_gpus (rl), "==", 2, "2 gpus available");
    cmp_ok (rlist_count_cores (rl), "==", 16, "16 cores in all");
    ok (rlist_mark_down (rl, "1-") < 0 && errno == EINVAL,
        "mark_down of a bad idset fails with EINVAL");
    down = rlist_copy_down (rl);
    s = rlist_dumps (down);
    is (s, "rank[1-2]/core[0-3],gpu0", "rlist_copy_down");
    free (s);
    rlist_destroy (down);

    a = alloc1 (rl, 3);
    s = rlist_dumps (a);
    is (s, "rank0/core[0-2]", "first fit takes rank 0 cores 0-2");
    free (s);
    b = alloc1 (rl, 2);
    s = rlist_dumps (b);
    is (s, "rank3/core[0-1]",
        "next 2-core slot skips full rank 0 and down 1-2");
    free (s);
    al = rlist_copy_allocated (rl);
    s = rlist_dumps (al);
    is (s, "rank0/core[0-2] rank3/core[0-1]", "rlist_copy_allocated");
    free (s);
    rlist_destroy (al);

    cpy = rlist_copy (rl);
    cmp_ok (rlist_avail_cores (cpy), "==", 8,
            "rlist_copy: nothing allocated, down marks kept");
    ok (rlist_free (cpy, a) < 0 && errno == ENOENT,
        "freeing in the copy what it does not have allocated: ENOENT");
    rlist_destroy (cpy);

    ok (rlist_set_allocated (rl, a) < 0 && errno == EEXIST,
        "set_allocated of something allocated: EEXIST");
    ok (rlist_free (rl, a) == 0, "rlist_free");
    ok (rlist_free (rl, a) < 0 && errno == ENOENT, "double free: ENOENT");
    ok (rlist_set_allocated (rl, a) == 0, "set_allocated (hello replay)");
    cmp_ok (rlist_avail_cores (rl), "==", 3, "3 cores left");
    ok (rlist_mark_up (rl, "all") == 0, "mark all up");
    cmp_ok (rlist_avail_cores (rl), "==", 11, "11 cores available");
    ok (rlist_free (rl, a) == 0 && rlist_free (rl, b) == 0, "free both");
    cmp_ok (rlist_avail_cores (rl), "==", 16, "all 16 available again");
    rlist_destroy (b);

    /* an allocation naming a rank rl does not have */
    b = from ("{\"version\":1,\"execution\":{\"R_lite\":["
              "{\"rank\":\"9\",\"children\":{\"core\":\"0\"}}]}}");
    ok (rlist_set_allocated (rl, b) < 0 && errno == ENOENT,
        "set_allocated of an unknown rank: ENOENT");
    rlist_destroy (b);
    b = from ("{\"version\":1,\"execution\":{\"R_lite\":["
              "{\"rank\":\"0\",\"children\":{\"core\":\"3-4\"}}]}}");
    ok (rlist_set_allocated (rl, b) < 0 && errno == ENOENT,
        "set_allocated of an unknown core: ENOENT");
    cmp_ok (rlist_avail_cores (rl), "==", 16, "a failed call changes nothing");
    rlist_destroy (b);
    rlist_destroy (a);
    rlist_destroy (rl);
}

static void test_append (void)
{
    struct rlist *a = rlist_create (), *b = rlist_create ();
    char *s;

    ok (rlist_add_rank (a, 0, "h0", "0-1", NULL) == 0
            && rlist_add_rank (b, 2, "h2", "0-1", NULL) == 0
            && rlist_add_rank (b, 1, "h1", "0-1", NULL) == 0,
        "two sets");
    ok (rlist_append (a, b) == 0, "rlist_append");
    s = rlist_nodelist (a);
    is (s, "h[0-2]", "hosts in rank order after append");
    free (s);
    ok (rlist_append (a, b) < 0 && errno == EEXIST,
        "appending overlapping ranks: EEXIST");
    cmp_ok (rlist_nnodes (a), "==", 3, "a failed append changes nothing");
    rlist_destroy (a);
    rlist_destroy (b);
}

static void test_add (void)
{
    struct rlist *a = rlist_create (), *b = rlist_create ();
    char *s;

    ok (rlist_add_rank (a, 0, "h0", "0-1", NULL) == 0
            && rlist_add_rank (a, 1, "h1", "0", "0") == 0
            && rlist_add_rank (b, 1, "h1", "2-3", "1") == 0
            && rlist_add_rank (b, 2, "h2", "0", NULL) == 0,
        "two sets sharing rank 1");
    ok (rlist_add (a, b) == 0, "rlist_add");
    cmp_ok (rlist_nnodes (a), "==", 3, "3 nodes");
    cmp_ok (rlist_count_cores (a), "==", 6, "cores of rank 1 are united");
    cmp_ok (rlist_count_gpus (a), "==", 2, "gpus of rank 1 are united");
    cmp_ok (rlist_avail_cores (a), "==", 6, "all free");
    s = rlist_dumps (a);
    is (s, "rank0/core[0-1] rank1/core[0,2-3],gpu[0-1] rank2/core0",
        "the union");
    free (s);
    ok (rlist_add (a, b) == 0 && rlist_count_cores (a) == 6,
        "adding the same set again changes nothing");
    ok (rlist_add (a, a) < 0 && errno == EINVAL, "a set to itself: EINVAL");
    rlist_destroy (a);
    rlist_destroy (b);
}

static void test_diff (void)
{
    struct rlist *a = from ("{\"version\":1,\"execution\":{\"R_lite\":["
                            "{\"rank\":\"0-2\",\"children\":{\"core\":"
                            "\"0-3\",\"gpu\":\"0\"}}],"
                            "\"nodelist\":[\"n[0-2]\"]}}");
    struct rlist *b = from ("{\"version\":1,\"execution\":{\"R_lite\":["
                            "{\"rank\":\"0\",\"children\":{\"core\":"
                            "\"0-3\",\"gpu\":\"0\"}},"
                            "{\"rank\":\"1\",\"children\":{\"core\":"
                            "\"1-2\"}},"
                            "{\"rank\":\"5\",\"children\":{\"core\":"
                            "\"0\"}}]}}");
    struct rlist *d = rlist_diff (a, b);
    char *s = rlist_dumps (d);

    is (s, "rank1/core[0,3],gpu0 rank2/core[0-3],gpu0",
        "rlist_diff drops emptied ranks and ignores ranks only in b");
    free (s);
    s = rlist_nodelist (d);
    is (s, "n[1-2]", "rlist_diff keeps hostnames");
    free (s);
    rlist_destroy (d);
    rlist_destroy (a);
    rlist_destroy (b);
}

static void test_ranks (void)
{
    struct rlist *a = from ("{\"version\":1,\"execution\":{\"R_lite\":["
                            "{\"rank\":\"0-3\",\"children\":{\"core\":"
                            "\"0-3\",\"gpu\":\"0\"}}],"
                            "\"nodelist\":[\"n[0-3]\"],"
                            "\"starttime\":10,\"expiration\":20}}");
    struct idset *ranks = idset_decode ("1-2,7");
    struct rlist *part = rlist_copy_ranks (a, ranks);
    char *s = rlist_dumps (part);

    is (s, "rank[1-2]/core[0-3],gpu0", "rlist_copy_ranks keeps those ranks");
    free (s);
    s = rlist_nodelist (part);
    is (s, "n[1-2]", "rlist_copy_ranks keeps hostnames");
    free (s);
    ok (rlist_starttime (part) == 10. && rlist_expiration (part) == 20.,
        "rlist_copy_ranks keeps the times");
    cmp_ok (rlist_avail_cores (part), "==", 8, "the copy is all free");
    cmp_ok (rlist_remove_ranks (a, ranks), "==", 2,
            "rlist_remove_ranks removes the 2 ranks present");
    s = rlist_dumps (a);
    is (s, "rank[0,3]/core[0-3],gpu0", "ranks 0 and 3 are left");
    free (s);
    ok (rlist_nnodes (a) == 2 && rlist_count_cores (a) == 8
            && rlist_count_gpus (a) == 2 && rlist_avail_cores (a) == 8
            && rlist_avail_gpus (a) == 2,
        "counters follow the removal");
    cmp_ok (rlist_remove_ranks (a, ranks), "==", 0,
            "removing them again removes nothing");
    ok (rlist_append (a, part) == 0 && rlist_nnodes (a) == 4
            && rlist_avail_cores (a) == 16,
        "the removed ranks can be appended back");
    rlist_destroy (part);
    idset_destroy (ranks);
    ranks = idset_decode ("");
    part = rlist_copy_ranks (a, ranks);
    ok (part && rlist_nnodes (part) == 0, "no ranks: an empty copy");
    rlist_destroy (part);
    ok (rlist_copy_ranks (NULL, ranks) == NULL && errno == EINVAL,
        "rlist_copy_ranks (NULL): EINVAL");
    ok (rlist_remove_ranks (a, NULL) < 0 && errno == EINVAL,
        "rlist_remove_ranks (NULL ranks): EINVAL");
    idset_destroy (ranks);
    rlist_destroy (a);
}

int main (int argc, char **argv)
{
    plan (NO_PLAN);
    test_round_trip ();
    test_compression ();
    test_bad_R ();
    test_nslots_and_empty ();
    test_updown_alloc_state ();
    test_append ();
    test_add ();
    test_diff ();
    test_ranks ();
    done_testing ();
    return 0;
}
