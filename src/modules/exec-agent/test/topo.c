/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/topo.c - shares of a job in kary, binomial and custom trees,
 * against a brute-force walk of the parent links. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "overlay/topology.h"
#include "tap.h"
#include "topo.h"

static int init (struct topo *t, uint32_t rank, uint32_t size, int k)
{
    char spec[32];

    topo_fini (t);
    if (k < 0)
        snprintf (spec, sizeof (spec), "binomial");
    else
        snprintf (spec, sizeof (spec), "kary:%d", k);
    return topo_init (t, rank, topology_create (spec, size, NULL));
}

static char *share_str (struct topo *t, uint32_t root, const char *ranks)
{
    struct idset *ids = idset_decode (ranks);
    struct idset *s = ids ? topo_share (t, root, ids) : NULL;
    char *str = s ? idset_encode (s, IDSET_FLAG_RANGE) : NULL;

    idset_destroy (ids);
    idset_destroy (s);
    return str;
}

static void check (const char *name, uint32_t root, const char *ranks,
                   struct topo *t, const char *expected)
{
    char *s = share_str (t, root, ranks);
    is (s, expected, "%s: share of %u in %s", name, root, ranks);
    free (s);
}

/* every share against a walk up the parents */
static bool brute (uint32_t size, int k)
{
    struct topo t = {0};
    struct idset *all = idset_create (0, IDSET_FLAG_AUTOGROW);
    bool good = true;

    if (!all || init (&t, 0, size, k) < 0)
        return false;
    for (uint32_t r = 0; r < size; r += 3)
        idset_set (all, r);
    for (uint32_t root = 0; root < size && good; root++) {
        struct idset *s = topo_share (&t, root, all);
        for (uint32_t r = 0; r < size && s; r++) {
            int64_t x = r;
            bool below = false;
            while (x >= 0) {
                if (x == (int64_t)root) {
                    below = true;
                    break;
                }
                x = topology_parent (t.tree, (uint32_t)x);
            }
            if (idset_test (s, r) != (below && idset_test (all, r)))
                good = false;
        }
        if (!s)
            good = false;
        idset_destroy (s);
    }
    idset_destroy (all);
    topo_fini (&t);
    return good;
}

int main (int argc, char **argv)
{
    struct topo t = {0};
    struct idset *ids;

    plan (NO_PLAN);
    ok (init (&t, 0, 0, 2) < 0 && errno == EINVAL, "size 0: EINVAL");
    ok (init (&t, 4, 4, 2) < 0 && errno == EINVAL, "rank >= size: EINVAL");

    ok (init (&t, 0, 64, 2) == 0, "rank 0 of 64, fanout 2");
    ok (t.parent == -1 && t.children[0] == 1 && t.nchildren == 2,
        "rank 0: no parent, children 1-2");
    check ("k=2", 0, "0-63", &t, "0-63");
    check ("k=2", 1, "0-63", &t, "1,3-4,7-10,15-22,31-46,63");
    check ("k=2", 2, "0-63", &t, "2,5-6,11-14,23-30,47-62");
    check ("k=2", 1, "2,5-6", &t, "");
    check ("k=2", 31, "0-63", &t, "31,63");
    check ("k=2", 63, "0-63", &t, "63");

    ok (init (&t, 1, 4, 2) == 0 && t.parent == 0 && t.children[0] == 3
            && t.nchildren == 1,
        "rank 1 of 4: parent 0, child 3");
    ok (init (&t, 3, 4, 2) == 0 && t.nchildren == 0, "rank 3 of 4: a leaf");
    ids = idset_decode ("0,3");
    ok (topo_share (&t, 4, ids) == NULL && errno == EINVAL,
        "share of a rank out of range: EINVAL");
    ok (topo_index (&t, ids) == 1, "rank 3 is index 1 in 0,3");
    ok (init (&t, 2, 4, 2) == 0 && topo_index (&t, ids) == -1,
        "rank 2 is not in 0,3");
    idset_destroy (ids);

    ok (init (&t, 0, 10, 1) == 0, "a chain of 10");
    check ("k=1", 4, "0-9", &t, "4-9");
    ok (init (&t, 0, 1, 2) == 0 && t.nchildren == 0,
        "a single broker has no child");
    check ("size 1", 0, "0", &t, "0");

    ok (brute (64, 2), "k=2, 64 ranks: every share matches a parent walk");
    ok (brute (100, 3), "k=3, 100 ranks: every share matches");
    ok (brute (37, 1), "k=1, 37 ranks: every share matches");
    ok (brute (200, 16), "k=16, 200 ranks: every share matches");
    ok (brute (100, 0), "kary:0 (flat), 100 ranks: every share matches");
    ok (brute (100, -1), "binomial, 100 ranks: every share matches");
    ok (init (&t, 0, 8, -1) == 0, "binomial of 8");
    check ("binomial", 4, "0-7", &t, "4-7");
    check ("binomial", 2, "0-7", &t, "2-3");
    {
        uint32_t parent[6] = {0, 0, 0, 2, 2, 1};
        topo_fini (&t);
        ok (topo_init (&t, 2, topology_create_custom (6, parent, NULL)) == 0
                && t.parent == 0 && t.nchildren == 2 && t.children[0] == 3
                && t.children[1] == 4,
            "custom: rank 2 has parent 0, children 3,4");
        check ("custom", 2, "0-5", &t, "2-4");
        check ("custom", 1, "0-5", &t, "1,5");
    }
    topo_fini (&t);
    done_testing ();
    return 0;
}
