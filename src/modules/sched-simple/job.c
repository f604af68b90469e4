/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* job.c - jobs, the id table and the priority queue (see job.h). */
#include <errno.h>
#include <stdlib.h>

#include "job.h"

struct job *job_create (uint64_t id, const flux_msg_t *msg)
{
    struct job *job = calloc (1, sizeof (*job));

    if (!job) {
        errno = ENOMEM;
        return NULL;
    }
    job->id = id;
    job->qindex = -1;
    if (msg)
        job->msg = flux_msg_incref (msg);
    return job;
}

void job_destroy (struct job *job)
{
    if (job) {
        int saved_errno = errno;
        flux_msg_decref (job->msg);
        flux_future_destroy (job->lookup);
        rlist_destroy (job->alloc);
        idset_destroy (job->freed);
        free (job);
        errno = saved_errno;
    }
}

/* jobtab */

struct jobtab {
    struct job **buckets;
    size_t nbuckets; /* a power of two */
    int count;
};

static size_t bucket (const struct jobtab *t, uint64_t id)
{
    /* FLUIDs keep the timestamp in the high bits and a sequence in the
     * low ones: mix them before masking */
    id ^= id >> 33;
    id *= UINT64_C (0xff51afd7ed558ccd);
    id ^= id >> 33;
    return id & (t->nbuckets - 1);
}

struct jobtab *jobtab_create (void)
{
    struct jobtab *t = calloc (1, sizeof (*t));

    if (!t || !(t->buckets = calloc (64, sizeof (t->buckets[0])))) {
        free (t);
        errno = ENOMEM;
        return NULL;
    }
    t->nbuckets = 64;
    return t;
}

void jobtab_destroy (struct jobtab *t)
{
    if (t) {
        int saved_errno = errno;
        for (size_t i = 0; i < t->nbuckets; i++) {
            struct job *job = t->buckets[i];
            while (job) {
                struct job *next = job->hnext;
                job_destroy (job);
                job = next;
            }
        }
        free (t->buckets);
        free (t);
        errno = saved_errno;
    }
}

static void grow (struct jobtab *t)
{
    size_t n = t->nbuckets * 2;
    struct job **b = calloc (n, sizeof (*b));
    struct jobtab nt = {.buckets = b, .nbuckets = n};

    if (!b)
        return; /* keep the longer chains */
    for (size_t i = 0; i < t->nbuckets; i++) {
        struct job *job = t->buckets[i];
        while (job) {
            struct job *next = job->hnext;
            size_t k = bucket (&nt, job->id);
            job->hnext = b[k];
            b[k] = job;
            job = next;
        }
    }
    free (t->buckets);
    t->buckets = b;
    t->nbuckets = n;
}

struct job *jobtab_lookup (struct jobtab *t, uint64_t id)
{
    struct job *job = t->buckets[bucket (t, id)];

    while (job && job->id != id)
        job = job->hnext;
    return job;
}

int jobtab_insert (struct jobtab *t, struct job *job)
{
    size_t k;

    if (jobtab_lookup (t, job->id)) {
        errno = EEXIST;
        return -1;
    }
    if ((size_t)t->count >= t->nbuckets)
        grow (t);
    k = bucket (t, job->id);
    job->hnext = t->buckets[k];
    t->buckets[k] = job;
    t->count++;
    return 0;
}

struct job *jobtab_remove (struct jobtab *t, uint64_t id)
{
    struct job **p = &t->buckets[bucket (t, id)];

    while (*p && (*p)->id != id)
        p = &(*p)->hnext;
    if (*p) {
        struct job *job = *p;
        *p = job->hnext;
        job->hnext = NULL;
        t->count--;
        return job;
    }
    return NULL;
}

void jobtab_foreach (struct jobtab *t, void (*fn) (struct job *job, void *arg),
                     void *arg)
{
    for (size_t i = 0; i < t->nbuckets; i++)
        for (struct job *job = t->buckets[i]; job; job = job->hnext)
            fn (job, arg);
}

int jobtab_count (struct jobtab *t)
{
    return t->count;
}

/* jobq */

struct jobq {
    struct job **v;
    int count;
    int max;
};

/* true if a goes before b: higher priority, then lower id */
static bool before (const struct job *a, const struct job *b)
{
    if (a->priority != b->priority)
        return a->priority > b->priority;
    return a->id < b->id;
}

static void put (struct jobq *q, int i, struct job *job)
{
    q->v[i] = job;
    job->qindex = i;
}

static void sift_up (struct jobq *q, int i)
{
    struct job *job = q->v[i];

    while (i > 0) {
        int parent = (i - 1) / 2;
        if (!before (job, q->v[parent]))
            break;
        put (q, i, q->v[parent]);
        i = parent;
    }
    put (q, i, job);
}

static void sift_down (struct jobq *q, int i)
{
    struct job *job = q->v[i];

    for (;;) {
        int c = 2 * i + 1;
        if (c >= q->count)
            break;
        if (c + 1 < q->count && before (q->v[c + 1], q->v[c]))
            c++;
        if (!before (q->v[c], job))
            break;
        put (q, i, q->v[c]);
        i = c;
    }
    put (q, i, job);
}

struct jobq *jobq_create (void)
{
    struct jobq *q = calloc (1, sizeof (*q));

    if (!q)
        errno = ENOMEM;
    return q;
}

void jobq_destroy (struct jobq *q)
{
    if (q) {
        int saved_errno = errno;
        for (int i = 0; i < q->count; i++)
            q->v[i]->qindex = -1;
        free (q->v);
        free (q);
        errno = saved_errno;
    }
}

int jobq_push (struct jobq *q, struct job *job)
{
    if (q->count == q->max) {
        int max = q->max ? q->max * 2 : 64;
        struct job **v = realloc (q->v, max * sizeof (*v));
        if (!v) {
            errno = ENOMEM;
            return -1;
        }
        q->v = v;
        q->max = max;
    }
    put (q, q->count++, job);
    sift_up (q, job->qindex);
    return 0;
}

void jobq_remove (struct jobq *q, struct job *job)
{
    int i = job->qindex;

    if (i < 0 || i >= q->count || q->v[i] != job)
        return;
    job->qindex = -1;
    if (--q->count == i)
        return;
    put (q, i, q->v[q->count]);
    jobq_reorder (q, q->v[i]);
}

void jobq_reorder (struct jobq *q, struct job *job)
{
    int i = job->qindex;

    if (i < 0 || i >= q->count)
        return;
    if (i > 0 && before (job, q->v[(i - 1) / 2]))
        sift_up (q, i);
    else
        sift_down (q, i);
}

struct job *jobq_first (struct jobq *q)
{
    return q->count > 0 ? q->v[0] : NULL;
}

struct job *jobq_at (struct jobq *q, int i)
{
    return i >= 0 && i < q->count ? q->v[i] : NULL;
}

int jobq_count (struct jobq *q)
{
    return q->count;
}
