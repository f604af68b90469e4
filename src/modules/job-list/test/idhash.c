/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/idhash.c - the job id hash */
#include <errno.h>
#include <stdlib.h>

#include "idhash.h"
#include "tap.h"

static int count_cb (uint64_t id, void *val, void *arg)
{
    (*(int *)arg)++;
    return (uintptr_t)val == id + 1 ? 0 : -1;
}

static int stop_cb (uint64_t id, void *val, void *arg)
{
    return ++(*(int *)arg) == 5 ? 42 : 0;
}

/* FLUID-like ids: a millisecond timestamp in the high bits, a
 * sequence in the low ones.
 */
static uint64_t fluid (int i)
{
    return ((uint64_t)(1700000000000ULL + i / 1024) << 24) | (i % 1024);
}

int main (int argc, char **argv)
{
    enum { N = 100000 };
    idhash_t *h;
    int bad, n;

    plan (NO_PLAN);

    ok ((h = idhash_create ()) != NULL, "idhash_create works");
    ok (idhash_lookup (h, 1) == NULL && idhash_count (h) == 0,
        "a new hash is empty");
    errno = 0;
    ok (idhash_insert (h, 1, NULL) < 0 && errno == EINVAL,
        "a NULL value is refused with EINVAL");
    ok (idhash_insert (h, 0, (void *)1) == 0
            && idhash_lookup (h, 0) == (void *)1,
        "id 0 is an id like any other");
    errno = 0;
    ok (idhash_insert (h, 0, (void *)2) < 0 && errno == EEXIST,
        "a second insert of an id fails with EEXIST");
    ok (idhash_remove (h, 0) == (void *)1 && idhash_count (h) == 0,
        "remove returns the value");
    ok (idhash_remove (h, 0) == NULL, "removing an absent id returns NULL");

    for (int i = 0; i < N; i++)
        if (idhash_insert (h, fluid (i), (void *)(uintptr_t)(fluid (i) + 1))
            < 0)
            BAIL_OUT ("insert %d failed", i);
    ok (idhash_count (h) == N, "%d FLUID-like ids inserted (the hash grew)", N);
    bad = 0;
    for (int i = 0; i < N; i++)
        if (idhash_lookup (h, fluid (i)) != (void *)(uintptr_t)(fluid (i) + 1))
            bad++;
    ok (bad == 0, "every id is found with its value");
    ok (idhash_lookup (h, fluid (N)) == NULL, "an absent id is not found");

    /* remove every other id: backward shifts must keep runs reachable */
    for (int i = 0; i < N; i += 2)
        if (idhash_remove (h, fluid (i)) != (void *)(uintptr_t)(fluid (i) + 1))
            BAIL_OUT ("remove %d failed", i);
    bad = 0;
    for (int i = 0; i < N; i++) {
        void *v = idhash_lookup (h, fluid (i));
        if (i % 2 == 0 ? v != NULL : v != (void *)(uintptr_t)(fluid (i) + 1))
            bad++;
    }
    ok (bad == 0 && idhash_count (h) == N / 2,
        "after removing half, the rest are found and the removed are not");
    n = 0;
    ok (idhash_foreach (h, count_cb, &n) == 0 && n == N / 2,
        "foreach visits every entry once");
    n = 0;
    ok (idhash_foreach (h, stop_cb, &n) == 42 && n == 5,
        "foreach stops at a non-zero return and passes it on");
    for (int i = 0; i < N; i += 2)
        if (idhash_insert (h, fluid (i), (void *)(uintptr_t)(fluid (i) + 1))
            < 0)
            BAIL_OUT ("reinsert %d failed", i);
    ok (idhash_count (h) == N, "removed ids can be inserted again");
    idhash_destroy (h);
    idhash_destroy (NULL);
    pass ("idhash_destroy accepts NULL");
    done_testing ();
    return 0;
}
