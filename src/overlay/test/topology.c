/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Tests for topology.c: every function against a brute-force tree built
 * by breadth-first numbering (sizes 1..300, fanouts 1..5, all rank pairs),
 * argument errors, and consistency checks at sizes up to 2^32-1 where the
 * brute force is impossible (these also catch overflow under UBSAN).
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "overlay/topology.h"

#define MAXSIZE 300
#define MAXK 5

/* The reference tree: ranks handed out breadth first, k per parent. */
struct ref {
    uint32_t size;
    int k;
    int64_t parent[MAXSIZE];
    int64_t first[MAXSIZE];
    int count[MAXSIZE];
    int64_t level[MAXSIZE];
    int64_t desc[MAXSIZE];
    int64_t maxlevel;
};

static void ref_build (struct ref *t, uint32_t size, int k)
{
    uint32_t queue[MAXSIZE];
    uint32_t head = 0, tail = 0, next = 1;

    t->size = size;
    t->k = k;
    for (uint32_t r = 0; r < size; r++) {
        t->parent[r] = -1;
        t->first[r] = -1;
        t->count[r] = 0;
        t->desc[r] = 0;
    }
    queue[tail++] = 0;
    while (head < tail) {
        uint32_t p = queue[head++];
        for (int i = 0; i < k && next < size; i++) {
            if (t->count[p] == 0)
                t->first[p] = next;
            t->count[p]++;
            t->parent[next] = p;
            queue[tail++] = next++;
        }
    }
    t->level[0] = 0;
    t->maxlevel = 0;
    for (uint32_t r = 1; r < size; r++) {
        t->level[r] = t->level[t->parent[r]] + 1;
        if (t->level[r] > t->maxlevel)
            t->maxlevel = t->level[r];
    }
    for (uint32_t r = size; r-- > 1;)
        t->desc[t->parent[r]] += 1 + t->desc[r];
}

/* Pair relations of the MAXSIZE tree, computed by walking up the
 * reference parent links.  Breadth-first numbering makes the tree of size
 * n the first n ranks of any larger one (checked in test_brute_force), so
 * these serve every size. */
static bool ref_in[MAXSIZE][MAXSIZE];
static int16_t ref_hop[MAXSIZE][MAXSIZE];

static void ref_pairs_build (const struct ref *t)
{
    for (uint32_t r = 0; r < t->size; r++) {
        for (uint32_t x = 0; x < t->size; x++) {
            int64_t y = x, below = -1;
            while (y > (int64_t)r) {
                below = y;
                y = t->parent[y];
            }
            ref_in[r][x] = (y == r);
            ref_hop[r][x] = (y == r && x != r) ? (int16_t)below : -1;
        }
    }
}

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

static void check_single (const struct ref *t, struct tally *tl)
{
    uint32_t n = t->size;
    int k = t->k;

    CHECK (tl, topology_maxlevel (n, k) == t->maxlevel, "maxlevel size=%u k=%d",
           n, k);
    for (uint32_t r = 0; r < n; r++) {
        CHECK (tl, topology_parent (r, n, k) == t->parent[r],
               "parent r=%u size=%u k=%d", r, n, k);
        CHECK (tl, topology_child_count (r, n, k) == t->count[r],
               "child_count r=%u size=%u k=%d", r, n, k);
        CHECK (tl, topology_first_child (r, n, k) == t->first[r],
               "first_child r=%u size=%u k=%d", r, n, k);
        CHECK (tl, topology_level (r, n, k) == t->level[r],
               "level r=%u size=%u k=%d", r, n, k);
        CHECK (tl, topology_descendants (r, n, k) == t->desc[r],
               "descendants r=%u size=%u k=%d", r, n, k);
    }
}

static void check_pairs (const struct ref *t, struct tally *tl)
{
    uint32_t n = t->size;
    int k = t->k;

    for (uint32_t r = 0; r < n; r++) {
        for (uint32_t x = 0; x < n; x++) {
            bool in = ref_in[r][x];
            int64_t hop = ref_hop[r][x];
            CHECK (tl, topology_in_subtree (r, x, n, k) == in,
                   "in_subtree r=%u x=%u size=%u k=%d", r, x, n, k);
            errno = 0;
            int64_t got = topology_child_toward (r, x, n, k);
            CHECK (tl, got == hop && (hop >= 0 || errno == EINVAL),
                   "child_toward r=%u x=%u size=%u k=%d got %lld", r, x, n, k,
                   (long long)got);
        }
    }
}

static void test_brute_force (void)
{
    static struct ref t, full;

    for (int k = 1; k <= MAXK; k++) {
        struct tally single = {0}, pairs = {0};
        ref_build (&full, MAXSIZE, k);
        ref_pairs_build (&full);
        for (uint32_t n = 1; n <= MAXSIZE; n++) {
            ref_build (&t, n, k);
            for (uint32_t r = 0; r < n; r++)
                CHECK (&single, t.parent[r] == full.parent[r],
                       "reference tree of size %u is a prefix", n);
            check_single (&t, &single);
            check_pairs (&t, &pairs);
        }
        ok (single.errors == 0,
            "k=%d sizes 1..%d: parent, children, level, descendants, "
            "maxlevel match reference (%ld checks)",
            k, MAXSIZE, single.checks);
        ok (pairs.errors == 0,
            "k=%d sizes 1..%d: in_subtree, child_toward match reference "
            "for all pairs (%ld checks)",
            k, MAXSIZE, pairs.checks);
    }
}

static void test_einval (void)
{
    struct {
        uint32_t rank, size;
        int k;
    } bad[] = {
        {0, 0, 2}, {4, 4, 2},  {5, 4, 2},       {UINT32_MAX, UINT32_MAX, 2},
        {0, 4, 0}, {0, 4, -1}, {0, 4, INT_MIN},
    };
    int n = sizeof (bad) / sizeof (bad[0]);

    for (int i = 0; i < n; i++) {
        uint32_t r = bad[i].rank, s = bad[i].size;
        int k = bad[i].k;
        errno = 0;
        ok (topology_parent (r, s, k) == -1 && errno == EINVAL,
            "parent (%u, %u, %d) fails with EINVAL", r, s, k);
        errno = 0;
        ok (topology_child_count (r, s, k) == -1 && errno == EINVAL,
            "child_count (%u, %u, %d) fails with EINVAL", r, s, k);
        errno = 0;
        ok (topology_first_child (r, s, k) == -1 && errno == EINVAL,
            "first_child (%u, %u, %d) fails with EINVAL", r, s, k);
        errno = 0;
        ok (topology_level (r, s, k) == -1 && errno == EINVAL,
            "level (%u, %u, %d) fails with EINVAL", r, s, k);
        errno = 0;
        ok (topology_descendants (r, s, k) == -1 && errno == EINVAL,
            "descendants (%u, %u, %d) fails with EINVAL", r, s, k);
        errno = 0;
        ok (!topology_in_subtree (r, 0, s, k) && errno == EINVAL,
            "in_subtree (%u, 0, %u, %d) fails with EINVAL", r, s, k);
        errno = 0;
        ok (topology_child_toward (r, 0, s, k) == -1 && errno == EINVAL,
            "child_toward (%u, 0, %u, %d) fails with EINVAL", r, s, k);
    }
    errno = 0;
    ok (topology_maxlevel (0, 2) == -1 && errno == EINVAL,
        "maxlevel size=0 fails with EINVAL");
    errno = 0;
    ok (topology_maxlevel (10, 0) == -1 && errno == EINVAL,
        "maxlevel k=0 fails with EINVAL");
    errno = 0;
    ok (!topology_in_subtree (0, 4, 4, 2) && errno == EINVAL,
        "in_subtree with target == size fails with EINVAL");
    errno = 0;
    ok (topology_child_toward (0, 4, 4, 2) == -1 && errno == EINVAL,
        "child_toward with target == size fails with EINVAL");
    errno = 0;
    ok (topology_child_toward (1, 1, 4, 2) == -1 && errno == EINVAL,
        "child_toward to itself fails with EINVAL");
    errno = 0;
    ok (topology_child_toward (1, 2, 4, 2) == -1 && errno == EINVAL,
        "child_toward to a rank outside the subtree fails with EINVAL");
    errno = 12345;
    ok (topology_parent (0, 4, 2) == -1 && errno == 12345,
        "parent of rank 0 is -1 and leaves errno alone");
    errno = 12345;
    ok (topology_first_child (3, 4, 2) == -1 && errno == 12345,
        "first_child of a leaf is -1 and leaves errno alone");
}

/* Smallest L such that levels 0..L hold at least size ranks. */
static int64_t expected_maxlevel (uint64_t size, int k)
{
    if (k == 1)
        return (int64_t)size - 1;
    unsigned __int128 total = 1, width = 1;
    int64_t level = 0;
    while (total < size) {
        width *= (unsigned)k;
        total += width;
        level++;
    }
    return level;
}

/* Relations that must hold for any rank, checked with calls only. */
static void check_rank_huge (uint32_t r, uint32_t n, int k, struct tally *tl)
{
    int64_t p = topology_parent (r, n, k);
    if (r == 0) {
        CHECK (tl, p == -1, "parent of 0 n=%u k=%d", n, k);
        CHECK (tl, topology_level (0, n, k) == 0, "level 0");
        CHECK (tl, topology_descendants (0, n, k) == (int64_t)n - 1,
               "descendants of root n=%u k=%d", n, k);
        return;
    }
    CHECK (tl, p >= 0 && p < r, "parent r=%u n=%u k=%d", r, n, k);
    int64_t f = topology_first_child (p, n, k);
    int c = topology_child_count (p, n, k);
    CHECK (tl, f >= 1 && c >= 1 && c <= k && f <= r && r < f + c,
           "r=%u lies among its parent's children n=%u k=%d", r, n, k);
    CHECK (tl, topology_level (r, n, k) == topology_level (p, n, k) + 1,
           "level r=%u n=%u k=%d", r, n, k);
    CHECK (tl, topology_in_subtree (p, r, n, k), "in_subtree (parent)");
    CHECK (tl, topology_in_subtree (0, r, n, k), "in_subtree (root)");
    CHECK (tl, !topology_in_subtree (r, p, n, k), "parent not below");
    CHECK (tl, topology_child_toward (p, r, n, k) == r,
           "child_toward parent r=%u n=%u k=%d", r, n, k);
    int64_t d = topology_descendants (r, n, k);
    int64_t dp = topology_descendants (p, n, k);
    CHECK (tl, d >= 0 && d < dp && r + d < n,
           "descendants r=%u n=%u k=%d: %lld", r, n, k, (long long)d);
    int cc = topology_child_count (r, n, k);
    if (k <= 5 && cc > 0) {
        /* descendants = sum over children of (1 + descendants) */
        int64_t sum = 0, f2 = topology_first_child (r, n, k);
        for (int i = 0; i < cc; i++)
            sum += 1 + topology_descendants ((uint32_t)(f2 + i), n, k);
        CHECK (tl, sum == d, "descendants sum r=%u n=%u k=%d", r, n, k);
    }
}

static void test_huge (void)
{
    uint32_t sizes[] = {1000000, 2147483648u, 4294967294u, UINT32_MAX};
    int ks[] = {1, 2, 3, 4, 5, 16, 1000, INT_MAX - 1, INT_MAX};

    for (size_t i = 0; i < sizeof (sizes) / sizeof (sizes[0]); i++) {
        uint32_t n = sizes[i];
        for (size_t j = 0; j < sizeof (ks) / sizeof (ks[0]); j++) {
            int k = ks[j];
            struct tally tl = {0};
            uint32_t probe[]
                = {0,     1,     2,     3,     (uint32_t)k, (uint32_t)k + 1u,
                   n / 3, n / 2, n - 3, n - 2, n - 1};
            for (size_t m = 0; m < sizeof (probe) / sizeof (probe[0]); m++)
                if (probe[m] < n)
                    check_rank_huge (probe[m], n, k, &tl);
            CHECK (&tl, topology_maxlevel (n, k) == expected_maxlevel (n, k),
                   "maxlevel n=%u k=%d got %lld want %lld", n, k,
                   (long long)topology_maxlevel (n, k),
                   (long long)expected_maxlevel (n, k));
            CHECK (&tl,
                   topology_level (n - 1, n, k) == topology_maxlevel (n, k),
                   "last rank is deepest");
            int64_t c0 = topology_child_count (0, n, k);
            int64_t want0 = (int64_t)n - 1 < k ? (int64_t)n - 1 : k;
            CHECK (&tl, c0 == want0, "child_count of root n=%u k=%d", n, k);
            CHECK (&tl,
                   topology_child_toward (0, n - 1, n, k) >= 1
                       && topology_child_toward (0, n - 1, n, k) <= c0,
                   "child_toward root to last n=%u k=%d", n, k);
            ok (tl.errors == 0, "size %u k=%d: consistent (%ld checks)", n, k,
                tl.checks);
        }
    }
}

static void test_known_values (void)
{
    /* the binary tree on 7 ranks, and the edges of the 2^32-1 chain */
    cmp_ok (topology_parent (6, 7, 2), "==", 2, "parent (6) in 7/2 is 2");
    cmp_ok (topology_first_child (1, 7, 2), "==", 3, "first child of 1");
    cmp_ok (topology_child_count (2, 7, 2), "==", 2, "2 has two children");
    cmp_ok (topology_child_count (2, 6, 2), "==", 1, "in size 6 only one");
    cmp_ok (topology_maxlevel (7, 2), "==", 2, "maxlevel 7/2 is 2");
    cmp_ok (topology_maxlevel (8, 2), "==", 3, "maxlevel 8/2 is 3");
    cmp_ok (topology_descendants (1, 7, 2), "==", 2, "1 has 2 descendants");
    cmp_ok (topology_child_toward (0, 5, 7, 2), "==", 2, "0 to 5 via 2");
    ok (topology_in_subtree (1, 4, 7, 2), "4 is below 1");
    ok (!topology_in_subtree (1, 5, 7, 2), "5 is not below 1");
    ok (topology_in_subtree (3, 3, 7, 2), "a rank is in its own subtree");
    cmp_ok (topology_level (UINT32_MAX - 1, UINT32_MAX, 1),
            "==", (int64_t)UINT32_MAX - 1,
            "chain: level of the last rank > INT_MAX");
    cmp_ok (topology_maxlevel (UINT32_MAX, 1), "==", (int64_t)UINT32_MAX - 1,
            "chain: maxlevel of 2^32-1 ranks");
    cmp_ok (topology_descendants (0, UINT32_MAX, 1),
            "==", (int64_t)UINT32_MAX - 1,
            "chain: root has 2^32-2 descendants");
    cmp_ok (topology_child_toward (5, UINT32_MAX - 1, UINT32_MAX, 1), "==", 6,
            "chain: next hop down is rank + 1");
    cmp_ok (topology_maxlevel (UINT32_MAX, 2), "==", 31,
            "binary: 2^32-1 ranks fill levels 0..31 exactly");
    cmp_ok (topology_maxlevel (1, 3), "==", 0, "a single rank has depth 0");
    cmp_ok (topology_child_count (0, 1, 3), "==", 0, "and no children");
}

int main (int argc, char *argv[])
{
    plan (NO_PLAN);
    test_known_values ();
    test_einval ();
    test_brute_force ();
    test_huge ();
    done_testing ();
    return 0;
}
