/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/idtab.c - insert, lookup, remove, growth, foreach. */
#include <errno.h>
#include <stdlib.h>

#include "libutil/idtab.h"
#include "tap.h"

static void count_cb (struct idtab_entry *e, void *arg)
{
    (*(size_t *)arg)++;
}

struct drain {
    struct idtab *t;
    size_t n;
};

/* Remove the entry given and spoil its link, as freeing it would. */
static void remove_cb (struct idtab_entry *e, void *arg)
{
    struct drain *d = arg;

    idtab_remove (d->t, e);
    e->next = NULL;
    d->n++;
}

int main (int argc, char **argv)
{
    enum { N = 10000 };
    struct idtab *t;
    struct idtab_entry *e = calloc (N, sizeof (*e));
    struct idtab_entry dup = {.id = 0};
    bool all = true;
    size_t n = 0;

    plan (NO_PLAN);
    if (!e || !(t = idtab_create ()))
        BAIL_OUT ("out of memory");
    ok (idtab_count (t) == 0 && idtab_lookup (t, 1) == NULL,
        "a new table is empty");
    /* ids shaped like FLUIDs: timestamp << 24 | seq */
    for (int i = 0; i < N; i++) {
        e[i].id = ((uint64_t)(1000 + i / 7) << 24) | (i % 7);
        if (idtab_insert (t, &e[i]) < 0)
            all = false;
    }
    ok (all && idtab_count (t) == N, "%d inserted (growing)", N);
    dup.id = e[5].id;
    errno = 0;
    ok (idtab_insert (t, &dup) < 0 && errno == EEXIST,
        "a duplicate id: EEXIST");
    all = true;
    for (int i = 0; i < N; i++) {
        if (idtab_lookup (t, e[i].id) != &e[i])
            all = false;
    }
    ok (all, "each one is found");
    ok (idtab_lookup (t, 12345) == NULL, "an unknown id is not");
    idtab_foreach (t, count_cb, &n);
    ok (n == N, "foreach visits all %d", N);
    for (int i = 0; i < N; i += 2)
        idtab_remove (t, &e[i]);
    idtab_remove (t, &e[0]);
    ok (idtab_count (t) == N / 2, "half removed (removing twice is a no-op)");
    all = true;
    for (int i = 0; i < N; i++) {
        struct idtab_entry *want = i % 2 ? &e[i] : NULL;
        if (idtab_lookup (t, e[i].id) != want)
            all = false;
    }
    ok (all, "the removed are gone, the others remain");
    struct drain d = {.t = t};
    idtab_foreach (t, remove_cb, &d);
    ok (d.n == N / 2 && idtab_count (t) == 0,
        "foreach may remove the entry it is given: all %zu visited", d.n);
    idtab_destroy (t);
    idtab_destroy (NULL);
    free (e);
    done_testing ();
    return 0;
}
