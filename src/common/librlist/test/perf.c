/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/perf.c - a 1024-node, 64-core R: parse and emit it (one R_lite
 * entry), then allocate 1000 jobs of mixed shapes (each also turned into
 * its R and summary, as the scheduler does), free them, and try 1000
 * allocations on a full instance.  Times are printed; the bounds checked
 * are loose (100x what this code takes) so that a slow machine or a
 * sanitizer build does not fail, while an O(n^2) slip would.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "librlist/rlist.h"
#include "tap.h"

#define NODES 1024
#define JOBS 1000

static double now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static json_t *big_R (void)
{
    return json_pack ("{s:i s:{s:[{s:s s:{s:s s:s}}] s:[s] s:f s:f}}",
                      "version", 1, "execution", "R_lite", "rank", "0-1023",
                      "children", "core", "0-63", "gpu", "0-3", "nodelist",
                      "node[0-1023]", "starttime", 0., "expiration", 0.);
}

static const struct rlist_request shapes[] = {
    {.nslots = 1, .cores_per_slot = 1},
    {.nslots = 4, .cores_per_slot = 2},
    {.nslots = 1, .cores_per_slot = 8, .gpus_per_slot = 1},
    {.nnodes = 2, .nslots = 2, .cores_per_slot = 1, .exclusive = 1},
    {.nnodes = 4, .nslots = 16, .cores_per_slot = 4},
};

int main (int argc, char **argv)
{
    json_t *R = big_R (), *R2;
    struct rlist *rl, *jobs[JOBS];
    flux_error_t error;
    double t0, t_parse, t_emit, t_alloc, t_free, t_full;
    int failures = 0, nospc = 0;
    char *s;

    plan (NO_PLAN);
    t0 = now ();
    rl = rlist_from_R (R, &error);
    t_parse = now () - t0;
    ok (rl != NULL && rlist_nnodes (rl) == NODES
            && rlist_count_cores (rl) == NODES * 64,
        "parse a 1024-node R in %.2f ms", t_parse * 1e3);
    t0 = now ();
    R2 = rlist_to_R (rl);
    t_emit = now () - t0;
    s = json_dumps (R2, JSON_COMPACT);
    ok (s && strlen (s) < 200, "emit it in %.2f ms as %zu bytes (one entry)",
        t_emit * 1e3, s ? strlen (s) : 0);
    free (s);
    json_decref (R2);

    t0 = now ();
    for (int i = 0; i < JOBS; i++) {
        const struct rlist_request *req = &shapes[i % 5];
        json_t *jR;
        char *sum;
        if (!(jobs[i] = rlist_alloc (rl, req))) {
            failures++;
            continue;
        }
        rlist_set_times (jobs[i], 1000., 2000.);
        jR = rlist_to_R (jobs[i]);
        sum = rlist_dumps (jobs[i]);
        if (!jR || !sum)
            failures++;
        json_decref (jR);
        free (sum);
    }
    t_alloc = now () - t0;
    ok (failures == 0, "%d allocations (+R, summary) in %.2f ms: %.1f us each",
        JOBS, t_alloc * 1e3, t_alloc * 1e6 / JOBS);

    t0 = now ();
    for (int i = 0; i < JOBS; i++) {
        if (jobs[i] && rlist_free (rl, jobs[i]) < 0)
            failures++;
        rlist_destroy (jobs[i]);
    }
    t_free = now () - t0;
    ok (failures == 0 && rlist_avail_cores (rl) == NODES * 64,
        "%d frees in %.2f ms: %.1f us each", JOBS, t_free * 1e3,
        t_free * 1e6 / JOBS);

    /* full: one exclusive job holds everything; then every attempt is
     * ENOSPC and must be cheap */
    {
        struct rlist_request all = {.nnodes = NODES,
                                    .nslots = NODES,
                                    .cores_per_slot = 1,
                                    .exclusive = 1};
        struct rlist *a = rlist_alloc (rl, &all);
        ok (a && rlist_avail_cores (rl) == 0, "one job takes all 1024 nodes");
        t0 = now ();
        for (int i = 0; i < JOBS; i++) {
            struct rlist *x = rlist_alloc (rl, &shapes[i % 5]);
            if (x)
                failures++;
            else if (errno == ENOSPC)
                nospc++;
            rlist_destroy (x);
        }
        t_full = now () - t0;
        ok (nospc == JOBS, "%d ENOSPC attempts in %.2f ms: %.2f us each", JOBS,
            t_full * 1e3, t_full * 1e6 / JOBS);
        ok (a && rlist_free (rl, a) == 0, "free it");
        rlist_destroy (a);
    }
    ok (t_parse < 1.0 && t_emit < 1.0 && t_alloc < 2.0 && t_free < 2.0
            && t_full < 1.0,
        "within loose bounds");
    rlist_destroy (rl);
    json_decref (R);

    /* Found by src/common/fuzz/parse_fuzz.c: ranks were inserted in
     * R_lite order, so each rank of an entry listed after higher ones
     * moved the node array: 20 s for these 200,000 ranks under ASAN.
     * Both orders must cost about the same. */
    {
        const char *halves[2] = {"0-99999", "100000-199999"};
        double t[2];
        for (int back = 0; back < 2; back++) {
            R = json_pack ("{s:i s:{s:[{s:s s:{s:s}} {s:s s:{s:s}}]}}",
                           "version", 1, "execution", "R_lite", "rank",
                           halves[back], "children", "core", "0-3", "rank",
                           halves[!back], "children", "core", "0-3");
            t0 = now ();
            rl = rlist_from_R (R, &error);
            t[back] = now () - t0;
            ok (rl && rlist_nnodes (rl) == 200000,
                "parse 200,000 ranks listed %s in %.2f ms",
                back ? "backwards" : "in order", t[back] * 1e3);
            rlist_destroy (rl);
            json_decref (R);
        }
        ok (t[1] < 4 * t[0] + 0.05, "backwards costs about the same");
    }
    done_testing ();
    return 0;
}
