/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/frag.c - assembling R from per-rank fragments (as the TBON
 * reduction does: subtrees merged in any order, repeats ignored). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "frag.h"
#include "libidset/idset.h"
#include "reduce.h"
#include "rmap.h"
#include "tap.h"

static json_t *rank_R (unsigned int rank, const char *host, const char *cores,
                       const char *gpus)
{
    struct rlist *rl = rlist_create ();
    json_t *R;

    if (!rl || rlist_add_rank (rl, rank, host, cores, gpus) < 0
        || !(R = rlist_to_R (rl)))
        BAIL_OUT ("cannot make a fragment");
    rlist_destroy (rl);
    return R;
}

static char *dump_R_lite (struct rlist *rl)
{
    json_t *R = rlist_to_R (rl);
    char *s = json_dumps (json_object_get (R, "execution"),
                          JSON_COMPACT | JSON_SORT_KEYS);
    json_decref (R);
    return s;
}

/* Reduce fragments of ranks 0..n-1 (fanout k) bottom up the way the
 * module does: each rank merges its children's subtree fragments into
 * its own, children in reverse order to shake out ordering bugs. */
static struct rlist *reduce_tree (unsigned int rank, unsigned int n, int k)
{
    struct rlist *acc = NULL;
    json_t *R = rank_R (rank, "host", "0-3", "");
    flux_error_t error;

    if (frag_merge (&acc, R, &error) != 1)
        BAIL_OUT ("merging rank %u: %s", rank, error.text);
    json_decref (R);
    for (int i = k; i >= 1; i--) {
        unsigned int child = rank * k + i;
        struct rlist *sub;
        if (child >= n)
            continue;
        sub = reduce_tree (child, n, k);
        if (frag_merge_rlist (&acc, sub) < 0)
            BAIL_OUT ("merging subtree %u", child);
        rlist_destroy (sub);
    }
    return acc;
}

static void test_merge (void)
{
    struct rlist *acc = NULL;
    json_t *R0 = rank_R (0, "a", "0-3", ""), *R1 = rank_R (1, "b", "0-1", "0");
    json_t *R01, *bad;
    flux_error_t error;
    char *s;

    ok (frag_merge (&acc, R1, &error) == 1, "first fragment: 1 rank");
    ok (frag_merge (&acc, R0, &error) == 1, "second fragment: 1 rank");
    ok (frag_merge (&acc, R1, &error) == 0, "a repeated fragment adds nothing");
    s = rlist_nodelist (acc);
    is (s, "a,b", "hosts in rank order");
    free (s);
    ok (rlist_count_cores (acc) == 6 && rlist_count_gpus (acc) == 1,
        "6 cores, 1 gpu");

    /* an overlapping fragment: ranks 1-2, only 2 is new */
    {
        struct rlist *rl = rlist_create ();
        (void)rlist_add_rank (rl, 1, "b", "0-1", "0");
        (void)rlist_add_rank (rl, 2, "c", "0-7", "");
        R01 = rlist_to_R (rl);
        rlist_destroy (rl);
    }
    ok (frag_merge (&acc, R01, &error) == 1,
        "an overlapping fragment adds its new rank only");
    ok (rlist_nnodes (acc) == 3 && rlist_count_cores (acc) == 14,
        "3 nodes, 14 cores");
    bad = json_pack ("{s:i}", "version", 9);
    errno = 0;
    ok (frag_merge (&acc, bad, &error) < 0 && errno == EINVAL,
        "a bad fragment is EINVAL: %s", error.text);
    ok (rlist_nnodes (acc) == 3, "and changes nothing");
    json_decref (bad);
    json_decref (R01);
    json_decref (R0);
    json_decref (R1);
    rlist_destroy (acc);
}

static void test_tree (void)
{
    struct rlist *all;
    char *s;
    struct rmap *m;
    json_t *R;

    all = reduce_tree (0, 4, 2);
    s = dump_R_lite (all);
    is (s,
        "{\"R_lite\":[{\"children\":{\"core\":\"0-3\"},\"rank\":\"0-3\"}],"
        "\"expiration\":0.0,\"nodelist\":[\"host,host,host,host\"],"
        "\"starttime\":0.0}",
        "4 ranks with the same cores reduce to one R_lite entry 0-3");
    free (s);
    rlist_destroy (all);

    all = reduce_tree (0, 1000, 3);
    ok (rlist_nnodes (all) == 1000 && rlist_count_cores (all) == 4000,
        "1000 ranks reduced through a 3-ary tree: 1000 nodes, 4000 cores");
    R = rlist_to_R (all);
    ok ((m = rmap_create (R, NULL)) != NULL
            && idset_count (rmap_ranks (m)) == 1000,
        "the assembled R is valid with ranks 0-999");
    rmap_destroy (m);
    json_decref (R);
    rlist_destroy (all);
}

int main (int argc, char **argv)
{
    plan (NO_PLAN);
    test_merge ();
    test_tree ();
    done_testing ();
    return 0;
}
