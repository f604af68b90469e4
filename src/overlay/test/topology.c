/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Tests for topology.c: every query against a brute force over the parent
 * links (walk up until rank 0), for kary:0..6, binomial and random custom
 * trees at sizes 1..160; the json round trip; flux-core's known shapes;
 * and bad specs and bad trees refused with a message.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "overlay/topology.h"

#define MAXSIZE 160

struct tally {
    long checks;
    long errors;
};

#define CHECK(tl, cond, ...)        \
    do {                            \
        (tl)->checks++;             \
        if (!(cond)) {              \
            if ((tl)->errors++ < 5) \
                diag (__VA_ARGS__); \
        }                           \
    } while (0)

/* Brute force: is x in r's subtree, and which child of r leads to x. */
static bool ref_in (const uint32_t *parent, uint32_t r, uint32_t x,
                    int64_t *hop)
{
    int64_t below = -1;
    uint32_t y = x;

    for (;;) {
        if (y == r) {
            *hop = below;
            return true;
        }
        if (y == 0)
            break;
        below = y;
        y = parent[y];
    }
    *hop = -1;
    return false;
}

static void check_tree (const struct topology *t, const uint32_t *parent,
                        uint32_t n, const char *name, struct tally *tl)
{
    int64_t level[MAXSIZE], desc[MAXSIZE] = {0}, maxlevel = 0;
    int count[MAXSIZE] = {0};

    for (uint32_t r = 0; r < n; r++) {
        int64_t l = 0;
        for (uint32_t y = r; y != 0; y = parent[y])
            l++;
        level[r] = l;
        if (l > maxlevel)
            maxlevel = l;
        if (r > 0)
            count[parent[r]]++;
        for (uint32_t y = r; y != 0; y = parent[y])
            desc[parent[y]]++;
    }
    CHECK (tl, topology_size (t) == n, "%s size=%u", name, n);
    CHECK (tl, topology_maxlevel (t) == maxlevel, "%s maxlevel size=%u", name,
           n);
    for (uint32_t r = 0; r < n; r++) {
        const uint32_t *ch = topology_children (t, r);
        int nc = topology_child_count (t, r);
        CHECK (tl, topology_parent (t, r) == (r == 0 ? -1 : (int64_t)parent[r]),
               "%s parent r=%u size=%u", name, r, n);
        CHECK (tl, nc == count[r], "%s child_count r=%u size=%u", name, r, n);
        for (int i = 0; i < nc; i++) {
            CHECK (tl, parent[ch[i]] == r && (i == 0 || ch[i - 1] < ch[i]),
                   "%s children r=%u size=%u", name, r, n);
            CHECK (tl, topology_child_index (t, r, ch[i]) == i,
                   "%s child_index r=%u c=%u", name, r, ch[i]);
        }
        CHECK (tl, topology_level (t, r) == level[r], "%s level r=%u size=%u",
               name, r, n);
        CHECK (tl, topology_descendants (t, r) == desc[r],
               "%s descendants r=%u size=%u", name, r, n);
        for (uint32_t x = 0; x < n; x++) {
            int64_t hop;
            bool in = ref_in (parent, r, x, &hop);
            CHECK (tl, topology_in_subtree (t, r, x) == in,
                   "%s in_subtree r=%u x=%u size=%u", name, r, x, n);
            errno = 0;
            int64_t got = topology_child_toward (t, r, x);
            CHECK (tl, got == hop && (hop >= 0 || errno == EINVAL),
                   "%s child_toward r=%u x=%u size=%u got %lld", name, r, x, n,
                   (long long)got);
        }
    }
}

/* kary:0..6 and binomial against their definitions. */
static void test_specs (void)
{
    static uint32_t parent[MAXSIZE];
    struct tally tl = {0};
    char spec[32];

    for (int k = 0; k <= 7; k++) {
        for (uint32_t n = 1; n <= MAXSIZE; n += (n < 40 ? 1 : 7)) {
            flux_error_t error;
            struct topology *t;
            if (k < 7)
                snprintf (spec, sizeof (spec), "kary:%d", k);
            else
                snprintf (spec, sizeof (spec), "binomial");
            for (uint32_t r = 1; r < n; r++)
                parent[r] = k == 7 ? (r & (r - 1)) : k == 0 ? 0 : (r - 1) / k;
            if (!(t = topology_create (spec, n, &error))) {
                tl.errors++;
                diag ("%s size %u: %s", spec, n, error.text);
                continue;
            }
            CHECK (&tl, !strcmp (topology_spec (t), spec), "spec %s", spec);
            check_tree (t, parent, n, spec, &tl);
            topology_destroy (t);
        }
    }
    ok (tl.errors == 0,
        "kary:0..6 and binomial match their definitions "
        "(%ld checks)",
        tl.checks);
}

/* Random custom trees (parents anywhere, not only below the rank), with
 * a json round trip of each. */
static void test_custom (void)
{
    static uint32_t parent[MAXSIZE], perm[MAXSIZE];
    struct tally tl = {0}, tj = {0};

    srand (42);
    for (int iter = 0; iter < 60; iter++) {
        uint32_t n = 1 + (uint32_t)(rand () % MAXSIZE);
        flux_error_t error;
        struct topology *t, *t2;
        json_t *o;

        /* a random tree on positions, then ranks shuffled (0 stays root) */
        perm[0] = 0;
        for (uint32_t i = 1; i < n; i++)
            perm[i] = i;
        for (uint32_t i = n - 1; i > 1; i--) {
            uint32_t j = 1 + (uint32_t)(rand () % i);
            uint32_t tmp = perm[i];
            perm[i] = perm[j];
            perm[j] = tmp;
        }
        for (uint32_t i = 1; i < n; i++)
            parent[perm[i]] = perm[(uint32_t)(rand () % i)];
        if (!(t = topology_create_custom (n, parent, &error))) {
            tl.errors++;
            diag ("custom size %u: %s", n, error.text);
            continue;
        }
        check_tree (t, parent, n, "custom", &tl);
        o = topology_to_json (t, 0);
        t2 = o ? topology_create_json (o, &error) : NULL;
        if (!t2) {
            tj.errors++;
            diag ("json round trip size %u failed", n);
        }
        else
            check_tree (t2, parent, n, "custom-json", &tj);
        json_decref (o);
        topology_destroy (t2);
        topology_destroy (t);
    }
    ok (tl.errors == 0,
        "random custom trees answer as the brute force "
        "(%ld checks)",
        tl.checks);
    ok (tj.errors == 0, "their json form makes the same tree (%ld checks)",
        tj.checks);
}

/* Shapes known from flux-core's documentation of tbon.topo. */
static void test_shapes (void)
{
    struct topology *t;
    json_t *o;
    char *s;

    t = topology_create ("kary:0", 4, NULL);
    ok (t && topology_child_count (t, 0) == 3 && topology_maxlevel (t) == 1,
        "kary:0 is flat");
    topology_destroy (t);
    t = topology_create ("kary:32", 64, NULL);
    ok (t && topology_child_count (t, 0) == 32 && topology_parent (t, 33) == 1
            && topology_child_count (t, 1) == 31,
        "kary:32 of 64: 32 children of 0, ranks 33..63 under 1");
    topology_destroy (t);
    t = topology_create ("binomial", 8, NULL);
    ok (t && topology_child_count (t, 0) == 3 && topology_parent (t, 7) == 6
            && topology_parent (t, 6) == 4 && topology_parent (t, 5) == 4
            && topology_maxlevel (t) == 3,
        "binomial of 8: 0 has 1,2,4; 4 has 5,6; 6 has 7");
    o = t ? topology_to_json (t, 4) : NULL;
    s = o ? json_dumps (o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    ok (s
            && !strcmp (s, "{\"children\":[{\"children\":[],\"rank\":5,"
                           "\"size\":1},{\"children\":[{\"children\":[],"
                           "\"rank\":7,\"size\":1}],\"rank\":6,\"size\":2}],"
                           "\"rank\":4,\"size\":4}"),
        "topology_to_json gives flux-core's nested {rank,size,children}");
    diag ("%s", s ? s : "(null)");
    free (s);
    json_decref (o);
    topology_destroy (t);
}

static void test_errors (void)
{
    const char *bad[] = {"kary",       "kary:",   "kary:-1",
                         "kary:x",     "kary:2x", "kary:99999999999",
                         "binomial:2", "mesh",    "",
                         "custom"};
    uint32_t cyc[4] = {0, 2, 3, 1}, self[3] = {0, 0, 2}, out[3] = {0, 0, 7};
    flux_error_t error;
    json_t *o;

    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        error.text[0] = '\0';
        errno = 0;
        ok (topology_create (bad[i], 4, &error) == NULL && errno == EINVAL
                && strlen (error.text) > 0,
            "spec \"%s\" refused: %s", bad[i], error.text);
    }
    ok (topology_create ("kary:2", 0, &error) == NULL && errno == EINVAL,
        "size 0 refused");
    ok (topology_create_custom (4, cyc, &error) == NULL && errno == EINVAL
            && strstr (error.text, "cycle"),
        "custom with a cycle refused: %s", error.text);
    ok (topology_create_custom (3, self, &error) == NULL && errno == EINVAL,
        "custom with a rank its own parent refused: %s", error.text);
    ok (topology_create_custom (3, out, &error) == NULL && errno == EINVAL,
        "custom with a parent out of range refused: %s", error.text);
    o = json_pack ("{s:i s:i s:[{s:i}]}", "rank", 0, "size", 3, "children",
                   "rank", 1);
    ok (topology_create_json (o, &error) == NULL && errno == EPROTO,
        "json missing a rank refused: %s", error.text);
    json_decref (o);
    o = json_pack ("{s:i s:i s:[{s:i},{s:i}]}", "rank", 0, "size", 2,
                   "children", "rank", 1, "rank", 1);
    ok (topology_create_json (o, &error) == NULL && errno == EPROTO,
        "json with a rank twice refused: %s", error.text);
    json_decref (o);
    o = json_pack ("{s:i s:i s:s}", "rank", 0, "size", 2, "children", "x");
    ok (topology_create_json (o, &error) == NULL && errno == EPROTO,
        "json with children not an array refused");
    json_decref (o);
    struct topology *t = topology_create ("kary:2", 5, NULL);
    errno = 0;
    ok (topology_parent (t, 5) == -1 && errno == EINVAL
            && topology_children (t, 9) == NULL
            && topology_child_index (t, 0, 3) == -1
            && !topology_in_subtree (t, 0, 5)
            && topology_child_toward (t, 1, 2) == -1,
        "queries out of range or off the tree fail with EINVAL");
    topology_destroy (t);
}

/* A deep chain: creation and json are not recursive. */
static void test_chain (void)
{
    struct topology *t = topology_create ("kary:1", 200000, NULL);
    ok (t && topology_maxlevel (t) == 199999
            && topology_child_toward (t, 0, 199999) == 1
            && topology_in_subtree (t, 5, 199999)
            && topology_descendants (t, 0) == 199999,
        "a chain of 200000 ranks");
    topology_destroy (t);
}

int main (int argc, char **argv)
{
    plan (NO_PLAN);
    test_specs ();
    test_custom ();
    test_shapes ();
    test_errors ();
    test_chain ();
    done_testing ();
    return 0;
}
