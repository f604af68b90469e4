/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/job.c - the job table (insert, lookup, remove, growth, duplicates)
 * and the priority queue (order by priority then id, reorder, removal
 * from the middle), checked against a brute-force reference.
 */
#include <errno.h>
#include <stdlib.h>

#include "job.h"
#include "tap.h"

#define N 5000

static uint64_t fluid (int i)
{
    /* timestamp in the high bits, sequence in the low ones, like RFC 19 */
    return ((uint64_t)(1000 + i / 7) << 24) | (uint64_t)(i % 7);
}

static void test_jobtab (void)
{
    struct jobtab *t = jobtab_create ();
    struct job *dup = job_create (fluid (3), NULL);
    int bad = 0;

    ok (t != NULL, "jobtab_create");
    for (int i = 0; i < N; i++) {
        struct job *job = job_create (fluid (i), NULL);
        if (!job || jobtab_insert (t, job) < 0)
            bad++;
    }
    ok (bad == 0 && jobtab_count (t) == N, "insert %d jobs", N);
    ok (jobtab_insert (t, dup) < 0 && errno == EEXIST,
        "inserting a duplicate id fails with EEXIST");
    job_destroy (dup);
    for (int i = 0; i < N; i++) {
        struct job *job = jobtab_lookup (t, fluid (i));
        if (!job || job->id != fluid (i))
            bad++;
    }
    ok (bad == 0, "every job is found");
    for (int i = 0; i < N; i += 2)
        job_destroy (jobtab_remove (t, fluid (i)));
    for (int i = 0; i < N; i++)
        if ((jobtab_lookup (t, fluid (i)) != NULL) != (i % 2 == 1))
            bad++;
    ok (bad == 0 && jobtab_count (t) == N / 2,
        "after removing the even ones, only the odd ones are found");
    ok (jobtab_remove (t, fluid (0)) == NULL, "removing an absent id: NULL");
    ok (jobtab_lookup (t, 42) == NULL, "looking up an unknown id: NULL");
    jobtab_destroy (t); /* destroys the rest */
}

/* Pop everything and check it comes out in (priority desc, id asc). */
static int drain_ordered (struct jobq *q)
{
    struct job *prev = NULL, *job;
    int bad = 0;

    while ((job = jobq_first (q))) {
        if (prev
            && (prev->priority < job->priority
                || (prev->priority == job->priority && prev->id > job->id)))
            bad++;
        jobq_remove (q, job);
        if (job->qindex != -1)
            bad++;
        prev = job;
    }
    return bad;
}

static void test_jobq (void)
{
    struct jobq *q = jobq_create ();
    static struct job *jobs[N];
    int bad = 0;

    srand (7);
    for (int i = 0; i < N; i++) {
        jobs[i] = job_create (fluid (i), NULL);
        jobs[i]->priority = rand () % 50;
        if (jobq_push (q, jobs[i]) < 0)
            bad++;
    }
    ok (bad == 0 && jobq_count (q) == N, "push %d jobs", N);
    ok (drain_ordered (q) == 0 && jobq_count (q) == 0,
        "they come out by priority, then id");

    for (int i = 0; i < N; i++)
        jobq_push (q, jobs[i]);
    for (int i = 0; i < N; i += 3) {
        jobs[i]->priority = rand () % 50;
        jobq_reorder (q, jobs[i]);
    }
    for (int i = 1; i < N; i += 5)
        jobq_remove (q, jobs[i]);
    jobq_remove (q, jobs[1]); /* already removed: no-op */
    ok (jobq_count (q) == N - N / 5, "after removing every fifth: %d left",
        jobq_count (q));
    ok (drain_ordered (q) == 0, "reordered and removed: still in order");

    jobs[0]->priority = 1;
    jobs[1]->priority = 1;
    jobq_push (q, jobs[1]);
    jobq_push (q, jobs[0]);
    ok (jobq_first (q) == jobs[0], "equal priority: the lower id first");
    jobs[1]->priority = 2;
    jobq_reorder (q, jobs[1]);
    ok (jobq_first (q) == jobs[1], "raising a priority moves it to the head");
    jobq_destroy (q);
    ok (jobs[0]->qindex == -1 && jobs[1]->qindex == -1,
        "jobq_destroy leaves the jobs unqueued");
    for (int i = 0; i < N; i++)
        job_destroy (jobs[i]);
}

int main (int argc, char **argv)
{
    plan (NO_PLAN);
    test_jobtab ();
    test_jobq ();
    done_testing ();
    return 0;
}
