/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/heap.c - the indexed heap, the alloc queue order and the
 * default priority */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "heap.h"
#include "job.h"
#include "tap.h"
#include "urgency.h"

struct item {
    int key;
    size_t idx;
};

static int item_cmp (const void *a, const void *b)
{
    const struct item *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key;
}

static void item_setidx (void *elem, size_t idx)
{
    ((struct item *)elem)->idx = idx;
}

/* the heap invariant and the stored indexes */
static bool consistent (struct heap *h)
{
    for (size_t i = 0; i < heap_size (h); i++) {
        struct item *it = heap_at (h, i);
        if (it->idx != i)
            return false;
        if (i > 0 && item_cmp (heap_at (h, (i - 1) / 2), it) > 0)
            return false;
    }
    return true;
}

static void test_heap (void)
{
    enum { N = 2000 };
    struct item *items = calloc (N, sizeof (*items));
    struct heap *h = heap_create (item_cmp, item_setidx);
    int last = -1, ok_order = 1, n = 0;

    ok (h != NULL && heap_size (h) == 0 && heap_top (h) == NULL
            && heap_pop (h) == NULL,
        "an empty heap");
    errno = 0;
    ok (heap_create (NULL, item_setidx) == NULL && errno == EINVAL,
        "heap_create needs a comparator");
    srand (42);
    for (int i = 0; i < N; i++) {
        items[i].key = rand () % 500;
        if (heap_push (h, &items[i]) < 0)
            BAIL_OUT ("heap_push failed");
    }
    ok (heap_size (h) == N && consistent (h), "%d pushes keep the order", N);
    /* remove every third from the middle, change keys of others */
    for (int i = 0; i < N; i += 3)
        (void)heap_remove (h, items[i].idx);
    ok (items[0].idx == HEAP_NONE, "a removed element has index HEAP_NONE");
    ok (consistent (h), "removals keep the order");
    for (int i = 1; i < N; i += 3) {
        items[i].key = rand () % 500;
        heap_update (h, items[i].idx);
    }
    ok (consistent (h), "key changes with heap_update keep the order");
    ok (heap_remove (h, N * 10) == NULL, "removing out of range is NULL");
    while (heap_size (h) > 0) {
        struct item *it = heap_pop (h);
        if (it->key < last)
            ok_order = 0;
        last = it->key;
        n++;
    }
    ok (ok_order && n == N - (N + 2) / 3, "pops come out in order (%d)", n);
    heap_destroy (h);
    free (items);
}

static struct job *mkjob (flux_jobid_t id, int64_t priority)
{
    struct job *job = job_create (id);
    if (!job)
        BAIL_OUT ("job_create failed");
    job->x->js.priority = priority;
    return job;
}

static void qidx (void *elem, size_t idx)
{
    ((struct job *)elem)->x->qidx = idx;
}

static void test_queue_order (void)
{
    struct heap *h = heap_create (alloc_queue_cmp, qidx);
    struct job *jobs[6];
    flux_jobid_t expect[6] = {4, 2, 5, 1, 3, 6};

    jobs[0] = mkjob (1, 16);
    jobs[1] = mkjob (2, 31);
    jobs[2] = mkjob (3, 16);
    jobs[3] = mkjob (4, 4294967295LL);
    jobs[4] = mkjob (5, 31);
    jobs[5] = mkjob (6, 1);
    for (int i = 5; i >= 0; i--)
        heap_push (h, jobs[i]);
    for (int i = 0; i < 6; i++) {
        struct job *job = heap_pop (h);
        ok (job->id == expect[i],
            "alloc order %d: job %ju (priority desc, then id asc)", i,
            (uintmax_t)job->id);
    }
    /* a priority change moves a job */
    for (int i = 0; i < 6; i++)
        heap_push (h, jobs[i]);
    jobs[5]->x->js.priority = 4294967295LL; /* id 6 ties with id 4 */
    heap_update (h, jobs[5]->x->qidx);
    ok (((struct job *)heap_pop (h))->id == 4
            && ((struct job *)heap_pop (h))->id == 6,
        "after reprioritizing, equal priorities go in id order");
    ok (alloc_queue_cmp (jobs[0], jobs[0]) == 0, "a job equals itself");
    heap_destroy (h);
    for (int i = 0; i < 6; i++)
        job_destroy (jobs[i]);
}

static void test_priority (void)
{
    ok (priority_calc (0) == 0, "urgency 0 (hold): priority 0");
    ok (priority_calc (31) == 4294967295LL,
        "urgency 31 (expedite): priority 4294967295");
    ok (priority_calc (16) == 16 && priority_calc (1) == 1
            && priority_calc (30) == 30,
        "other urgencies: the urgency itself");
}

int main (int argc, char **argv)
{
    plan (NO_PLAN);
    test_heap ();
    test_queue_order ();
    test_priority ();
    done_testing ();
    return 0;
}
