/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/ordlist.c - the skip list job-list orders jobs with */
#include <errno.h>
#include <stdlib.h>

#include "ordlist.h"
#include "tap.h"

struct item {
    int key;
    int seq; /* insertion order, to check that equal keys stay stable */
    ordlist_node_t *node;
};

static int cmp (const void *a, const void *b)
{
    const struct item *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key ? 1 : 0;
}

/* In order (and stable for equal keys), and the count matches. */
static int check (ordlist_t *l, size_t expect)
{
    const struct item *prev = NULL;
    size_t n = 0;

    for (ordlist_node_t *node = ordlist_first (l); node;
         node = ordlist_next (node)) {
        const struct item *it = ordlist_item (node);
        if (prev
            && (prev->key > it->key
                || (prev->key == it->key && prev->seq > it->seq)))
            return 0;
        if (it->node != node)
            return 0;
        prev = it;
        n++;
    }
    return n == expect && ordlist_count (l) == expect;
}

int main (int argc, char **argv)
{
    enum { N = 20000 };
    static struct item items[N];
    ordlist_t *l;
    size_t live = N;

    plan (NO_PLAN);

    errno = 0;
    ok (ordlist_create (NULL, 1) == NULL && errno == EINVAL,
        "ordlist_create with no comparison fails with EINVAL");
    ok ((l = ordlist_create (cmp, 42)) != NULL, "ordlist_create works");
    ok (ordlist_first (l) == NULL && ordlist_count (l) == 0,
        "a new list is empty");
    ok (ordlist_next (NULL) == NULL && ordlist_item (NULL) == NULL
            && ordlist_first (NULL) == NULL && ordlist_count (NULL) == 0,
        "accessors accept NULL");

    srand (7);
    for (int i = 0; i < N; i++) {
        items[i].key = rand () % 1000; /* many equal keys */
        items[i].seq = i;
        if (!(items[i].node = ordlist_insert (l, &items[i])))
            BAIL_OUT ("ordlist_insert failed");
    }
    ok (check (l, N),
        "%d inserts in random order are walked in order, "
        "equal keys in insertion order",
        N);

    /* remove every third item through its node */
    for (int i = 0; i < N; i += 3) {
        ordlist_remove (l, items[i].node);
        items[i].node = NULL;
        live--;
    }
    ok (check (l, live), "after removing a third, still ordered (%zu left)",
        live);

    /* change keys the way job-list does: remove, change, reinsert */
    for (int i = 1; i < N; i += 3) {
        ordlist_remove (l, items[i].node);
        items[i].key = 1000 - items[i].key;
        items[i].seq += N;
        items[i].node = ordlist_insert (l, &items[i]);
    }
    ok (check (l, live), "keys changed by remove and reinsert stay ordered");

    {
        struct item lo = {.key = -1, .seq = 0}, hi = {.key = 5000, .seq = 0};
        lo.node = ordlist_insert (l, &lo);
        hi.node = ordlist_insert (l, &hi);
        ok (ordlist_item (ordlist_first (l)) == &lo,
            "the smallest key becomes the first node");
        ordlist_remove (l, lo.node);
        ordlist_remove (l, hi.node);
        ok (check (l, live), "removing the first and last keeps the order");
    }

    for (int i = 0; i < N; i++) {
        if (items[i].node) {
            ordlist_remove (l, items[i].node);
            items[i].node = NULL;
        }
    }
    ok (ordlist_count (l) == 0 && ordlist_first (l) == NULL,
        "removing everything empties the list");
    ordlist_remove (l, NULL);
    pass ("ordlist_remove of NULL is a no-op");
    ok ((items[0].node = ordlist_insert (l, &items[0])) != NULL && check (l, 1),
        "an emptied list can be reused");

    ordlist_destroy (l);
    ordlist_destroy (NULL);
    pass ("ordlist_destroy frees remaining nodes and accepts NULL");
    done_testing ();
    return 0;
}
