/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/alloc.c - first fit: slots of cores and gpus, node counts (even
 * spread), whole nodes, down ranks, ENOSPC versus EOVERFLOW versus
 * EINVAL, the R of an allocation, and a random alloc/free soak checked
 * against the free-core count.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "librlist/rlist.h"
#include "tap.h"

/* n nodes "node<i>" with cores 0-(c-1) and g gpus */
static struct rlist *cluster (int n, int c, int g)
{
    struct rlist *rl = rlist_create ();
    char cores[32], gpus[32] = "";

    snprintf (cores, sizeof (cores), "0-%d", c - 1);
    if (g > 1)
        snprintf (gpus, sizeof (gpus), "0-%d", g - 1);
    else if (g == 1)
        strcpy (gpus, "0");
    for (int i = 0; i < n; i++) {
        char host[32];
        snprintf (host, sizeof (host), "node%d", i);
        if (rlist_add_rank (rl, i, host, c > 1 ? cores : "0", gpus) < 0)
            BAIL_OUT ("rlist_add_rank");
    }
    return rl;
}

static struct rlist *try (struct rlist *rl, int nnodes, int nslots, int c,
                          int g, int x, flux_error_t *error)
{
    struct rlist_request req = {
        .nnodes = nnodes,
        .nslots = nslots,
        .cores_per_slot = c,
        .gpus_per_slot = g,
        .exclusive = x,
    };
    return rlist_alloc_ex (rl, &req, error);
}

/* Allocate and compare the summary; returns the allocation. */
static struct rlist *expect (struct rlist *rl, int nnodes, int nslots, int c,
                             int g, int x, const char *summary)
{
    flux_error_t error = {{0}};
    struct rlist *a = try (rl, nnodes, nslots, c, g, x, &error);
    char *s = a ? rlist_dumps (a) : NULL;

    is (s, summary, "N=%d n=%d c=%d g=%d%s -> %s%s%s", nnodes, nslots, c, g,
        x ? " x" : "", summary, a ? "" : ": ", a ? "" : error.text);
    free (s);
    return a;
}

static void expect_errno (struct rlist *rl, int nnodes, int nslots, int c,
                          int g, int x, int errnum, const char *text)
{
    flux_error_t error = {{0}};
    int avail = rlist_avail_cores (rl);
    struct rlist *a = try (rl, nnodes, nslots, c, g, x, &error);

    ok (a == NULL && errno == errnum && !strcmp (error.text, text)
            && rlist_avail_cores (rl) == avail,
        "N=%d n=%d c=%d g=%d%s -> %s \"%s\"", nnodes, nslots, c, g,
        x ? " x" : "",
        errnum == ENOSPC      ? "ENOSPC"
        : errnum == EOVERFLOW ? "EOVERFLOW"
                              : "EINVAL",
        error.text);
    rlist_destroy (a);
}

static void test_slots (void)
{
    struct rlist *rl = cluster (4, 4, 2);
    struct rlist *a, *b, *c, *d;
    json_t *R;
    int nslots = 0;

    a = expect (rl, 0, 1, 1, 0, 0, "rank0/core0");
    b = expect (rl, 0, 2, 2, 0, 0, "rank0/core[1-2] rank1/core[0-1]");
    c = expect (rl, 0, 2, 1, 1, 0, "rank0/core3,gpu0 rank1/core2,gpu0");
    d = expect (rl, 0, 2, 1, 2, 0, "rank[2-3]/core0,gpu[0-1]");
    cmp_ok (rlist_avail_gpus (rl), "==", 2, "2 gpus left, on full nodes");
    expect_errno (rl, 0, 1, 1, 2, 0, ENOSPC, "insufficient resources");
    R = rlist_to_R (d);
    ok (R && !json_unpack (R, "{s:{s:i}}", "execution", "nslots", &nslots)
            && nslots == 2,
        "the R of an allocation has nslots=2");
    json_decref (R);
    ok (rlist_free (rl, b) == 0, "free the 2x2 cores");
    expect_errno (rl, 0, 1, 4, 0, 0, ENOSPC, "insufficient resources");
    rlist_destroy (
        expect (rl, 0, 2, 2, 0, 0, "rank0/core[1-2] rank1/core[0-1]"));
    rlist_destroy (a);
    rlist_destroy (b);
    rlist_destroy (c);
    rlist_destroy (d);
    rlist_destroy (rl);
}

static void test_nodes (void)
{
    struct rlist *rl = cluster (4, 4, 0);
    struct rlist *a, *b;

    a = expect (rl, 2, 3, 1, 0, 0, "rank0/core[0-1] rank1/core0");
    b = expect (rl, 2, 2, 3, 0, 0, "rank1/core[1-3] rank2/core[0-2]");
    /* free now: rank 0 {2-3}, rank 1 none, rank 2 {3}, rank 3 all */
    rlist_destroy (
        expect (rl, 2, 4, 1, 0, 0, "rank0/core[2-3] rank3/core[0-1]"));
    expect_errno (rl, 3, 3, 1, 0, 0, ENOSPC, "insufficient resources");
    expect_errno (rl, 1, 1, 1, 0, 1, ENOSPC, "insufficient resources");
    expect_errno (rl, 5, 5, 1, 0, 0, EOVERFLOW,
                  "unsatisfiable request: 5 nodes requested, the instance "
                  "has 4");
    expect_errno (rl, 2, 2, 5, 0, 0, EOVERFLOW,
                  "unsatisfiable request: 2 slots of 5 cores on 2 nodes, "
                  "only 0 nodes can hold 1 slot");
    expect_errno (rl, 2, 5, 2, 0, 0, EOVERFLOW,
                  "unsatisfiable request: 5 slots of 2 cores on 2 nodes, "
                  "only 0 nodes can hold 3 slots");
    ok (rlist_free (rl, a) == 0 && rlist_free (rl, b) == 0, "free");
    cmp_ok (rlist_avail_cores (rl), "==", 12, "12 free (one 4-core job left)");
    rlist_destroy (a);
    rlist_destroy (b);
    rlist_destroy (rl);
}

static void test_exclusive (void)
{
    struct rlist *rl = cluster (3, 4, 1);
    struct rlist *a, *b;

    a = expect (rl, 0, 1, 1, 0, 0, "rank0/core0");
    b = expect (rl, 1, 1, 1, 0, 1, "rank1/core[0-3],gpu0");
    expect_errno (rl, 2, 2, 1, 0, 1, ENOSPC, "insufficient resources");
    ok (rlist_free (rl, a) == 0, "free rank 0's core");
    rlist_destroy (expect (rl, 2, 2, 1, 0, 1, "rank[0,2]/core[0-3],gpu0"));
    rlist_destroy (a);
    rlist_destroy (b);
    rlist_destroy (rl);

    /* exclusive without a node count: whole nodes until the slots fit */
    rl = cluster (3, 4, 0);
    rlist_destroy (expect (rl, 0, 3, 2, 0, 1, "rank[0-1]/core[0-3]"));
    rlist_destroy (rl);
}

static void test_down (void)
{
    struct rlist *rl = cluster (4, 2, 0);
    struct rlist *a;

    ok (rlist_mark_down (rl, "0,2") == 0, "ranks 0 and 2 down");
    a = expect (rl, 2, 2, 2, 0, 0, "rank[1,3]/core[0-1]");
    expect_errno (rl, 0, 1, 1, 0, 0, ENOSPC, "insufficient resources");
    expect_errno (rl, 0, 9, 1, 0, 0, EOVERFLOW,
                  "unsatisfiable request: 9 slots of 1 core, the instance "
                  "can hold at most 8 such slots");
    ok (rlist_mark_down (rl, "1") == 0, "a rank with an allocation goes down");
    ok (rlist_free (rl, a) == 0, "its allocation can still be freed");
    cmp_ok (rlist_avail_cores (rl), "==", 2, "rank 3 is up and free");
    ok (rlist_mark_up (rl, "0-2") == 0, "all up");
    cmp_ok (rlist_avail_cores (rl), "==", 8, "8 cores available");
    rlist_destroy (a);
    rlist_destroy (rl);
}

static void test_invalid (void)
{
    struct rlist *rl = cluster (2, 2, 0);

    expect_errno (rl, 0, 0, 1, 0, 0, EINVAL,
                  "malformed request: slots and cores per slot must be >= "
                  "1, nodes and gpus >= 0");
    expect_errno (rl, 0, 1, 0, 0, 0, EINVAL,
                  "malformed request: slots and cores per slot must be >= "
                  "1, nodes and gpus >= 0");
    expect_errno (rl, 2, 1, 1, 0, 0, EINVAL,
                  "malformed request: 1 slots cannot be spread over 2 "
                  "nodes");
    expect_errno (rl, 0, 1, 1, 1, 0, EOVERFLOW,
                  "unsatisfiable request: 1 slot of 1 core and 1 gpu, the "
                  "instance can hold at most 0 such slots");
    ok (rlist_alloc (rl, NULL) == NULL && errno == EINVAL,
        "rlist_alloc (NULL request): EINVAL");
    ok (rlist_alloc (NULL, NULL) == NULL && errno == EINVAL,
        "rlist_alloc (NULL rlist): EINVAL");
    rlist_destroy (rl);
}

static void test_check (void)
{
    struct rlist *rl = cluster (2, 4, 0);
    struct rlist_request fits = {.nnodes = 2, .nslots = 2, .cores_per_slot = 4};
    struct rlist_request never = {.nslots = 9, .cores_per_slot = 1};
    flux_error_t error;
    struct rlist *a;

    ok (rlist_check (rl, &fits, &error) == 0, "rlist_check: fits when empty");
    ok ((a = rlist_alloc (rl, &fits)) != NULL, "allocate all of it");
    ok (rlist_check (rl, &fits, &error) == 0,
        "rlist_check: still fits in principle while everything is taken");
    ok (rlist_check (rl, &never, &error) < 0 && errno == EOVERFLOW,
        "rlist_check: EOVERFLOW: %s", error.text);
    never.nslots = 0;
    ok (rlist_check (rl, &never, &error) < 0 && errno == EINVAL,
        "rlist_check: EINVAL: %s", error.text);
    rlist_destroy (a);
    rlist_destroy (rl);
}

/* Would req fit on 16 empty nodes of 8 cores and 2 gpus? */
static bool fits_empty (const struct rlist_request *req)
{
    int cap = 8 / req->cores_per_slot;
    if (req->gpus_per_slot > 0 && 2 / req->gpus_per_slot < cap)
        cap = 2 / req->gpus_per_slot;
    if (req->nnodes > 0)
        return (req->nslots + req->nnodes - 1) / req->nnodes <= cap;
    return req->nslots <= 16 * cap;
}

/* Random jobs in and out; the free count must always add up, and
 * EOVERFLOW must agree with the oracle above. */
static void test_soak (void)
{
    struct rlist *rl = cluster (16, 8, 2);
    struct rlist *held[64] = {0};
    int used = 0, failures = 0, allocs = 0, nospc = 0, overflow = 0;

    srand (42);
    for (int i = 0; i < 5000; i++) {
        int k = rand () % 64;
        if (held[k]) {
            used -= rlist_count_cores (held[k]);
            if (rlist_free (rl, held[k]) < 0)
                failures++;
            rlist_destroy (held[k]);
            held[k] = NULL;
        }
        else {
            int nnodes = rand () % 3;
            int nslots = nnodes + 1 + rand () % 4;
            struct rlist_request req = {
                .nnodes = nnodes,
                .nslots = nslots,
                .cores_per_slot = 1 + rand () % 3,
                .gpus_per_slot = rand () % 4 == 0,
                .exclusive = nnodes > 0 && rand () % 5 == 0,
            };
            if ((held[k] = rlist_alloc (rl, &req))) {
                allocs++;
                if (!fits_empty (&req))
                    failures++;
                used += rlist_count_cores (held[k]);
                if (rlist_nnodes (held[k]) < nnodes)
                    failures++;
            }
            else if (errno == ENOSPC && fits_empty (&req))
                nospc++;
            else if (errno == EOVERFLOW && !fits_empty (&req))
                overflow++;
            else {
                diag ("N=%d n=%d c=%d g=%d x=%d: %s", nnodes, nslots,
                      req.cores_per_slot, req.gpus_per_slot, req.exclusive,
                      strerror (errno));
                failures++;
            }
        }
        if (rlist_avail_cores (rl) != 128 - used)
            failures++;
    }
    ok (failures == 0,
        "soak: %d allocations, %d ENOSPC, %d EOVERFLOW, counts consistent",
        allocs, nospc, overflow);
    for (int k = 0; k < 64; k++) {
        if (held[k])
            rlist_free (rl, held[k]);
        rlist_destroy (held[k]);
    }
    cmp_ok (rlist_avail_cores (rl), "==", 128, "everything free at the end");
    rlist_destroy (rl);
}

int main (int argc, char **argv)
{
    plan (NO_PLAN);
    test_slots ();
    test_nodes ();
    test_exclusive ();
    test_down ();
    test_invalid ();
    test_check ();
    test_soak ();
    done_testing ();
    return 0;
}
