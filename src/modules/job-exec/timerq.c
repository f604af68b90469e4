/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* timerq.c - a binary min-heap of deadlines driving one uv timer
 * (see timerq.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "timerq.h"

struct timerq {
    uv_loop_t *loop;
    uv_timer_t timer;
    struct tq_entry **heap;
    size_t count, size;
    uint64_t seq;
    uint64_t armed_for; /* deadline the uv timer is set for, if active */
    bool active;
    bool in_pass; /* timer_cb is running: it rearms at the end */
};

static bool before (const struct tq_entry *a, const struct tq_entry *b)
{
    return a->deadline < b->deadline
           || (a->deadline == b->deadline && a->seq < b->seq);
}

static void place (timerq_t *tq, size_t i, struct tq_entry *e)
{
    tq->heap[i] = e;
    e->index = i;
}

static void sift_up (timerq_t *tq, size_t i)
{
    struct tq_entry *e = tq->heap[i];

    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!before (e, tq->heap[parent]))
            break;
        place (tq, i, tq->heap[parent]);
        i = parent;
    }
    place (tq, i, e);
}

static void sift_down (timerq_t *tq, size_t i)
{
    struct tq_entry *e = tq->heap[i];

    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= tq->count)
            break;
        if (child + 1 < tq->count
            && before (tq->heap[child + 1], tq->heap[child]))
            child++;
        if (!before (tq->heap[child], e))
            break;
        place (tq, i, tq->heap[child]);
        i = child;
    }
    place (tq, i, e);
}

static void remove_at (timerq_t *tq, size_t i)
{
    struct tq_entry *e = tq->heap[i];
    struct tq_entry *last = tq->heap[--tq->count];

    e->index = TQ_UNARMED;
    if (i == tq->count)
        return;
    place (tq, i, last);
    if (i > 0 && before (last, tq->heap[(i - 1) / 2]))
        sift_up (tq, i);
    else
        sift_down (tq, i);
}

static void timer_cb (uv_timer_t *t);

/* Point the uv timer at the earliest deadline (or stop it). */
static void rearm (timerq_t *tq)
{
    uint64_t now, deadline;

    if (tq->in_pass)
        return;
    if (tq->count == 0) {
        if (tq->active) {
            uv_timer_stop (&tq->timer);
            tq->active = false;
        }
        return;
    }
    deadline = tq->heap[0]->deadline;
    if (tq->active && tq->armed_for == deadline)
        return;
    now = uv_now (tq->loop);
    uv_timer_start (&tq->timer, timer_cb, deadline > now ? deadline - now : 0,
                    0);
    tq->armed_for = deadline;
    tq->active = true;
}

static void timer_cb (uv_timer_t *t)
{
    timerq_t *tq = t->data;
    uint64_t now = uv_now (tq->loop);
    uint64_t limit = tq->seq; /* entries armed from here on wait */

    tq->active = false;
    tq->in_pass = true;
    while (tq->count > 0) {
        struct tq_entry *e = tq->heap[0];
        if (e->deadline > now || e->seq >= limit)
            break;
        remove_at (tq, 0);
        e->cb (e);
    }
    tq->in_pass = false;
    rearm (tq);
}

timerq_t *timerq_create (uv_loop_t *loop)
{
    timerq_t *tq;

    if (!loop) {
        errno = EINVAL;
        return NULL;
    }
    if (!(tq = calloc (1, sizeof (*tq))))
        return NULL;
    tq->loop = loop;
    if (uv_timer_init (loop, &tq->timer) < 0) {
        free (tq);
        errno = ENOMEM;
        return NULL;
    }
    tq->timer.data = tq;
    return tq;
}

static void close_cb (uv_handle_t *handle)
{
    timerq_t *tq = handle->data;

    free (tq->heap);
    free (tq);
}

void timerq_destroy (timerq_t *tq)
{
    if (tq) {
        int saved_errno = errno;
        for (size_t i = 0; i < tq->count; i++)
            tq->heap[i]->index = TQ_UNARMED;
        tq->count = 0;
        uv_timer_stop (&tq->timer);
        uv_close ((uv_handle_t *)&tq->timer, close_cb);
        errno = saved_errno;
    }
}

void tq_entry_init (struct tq_entry *e, tq_entry_f cb)
{
    e->deadline = 0;
    e->seq = 0;
    e->index = TQ_UNARMED;
    e->cb = cb;
}

int timerq_arm (timerq_t *tq, struct tq_entry *e, double seconds)
{
    uint64_t deadline;

    if (!tq || !e || !e->cb || !(seconds >= 0.) || !isfinite (seconds)
        || seconds > 1e12) {
        errno = EINVAL;
        return -1;
    }
    deadline = uv_now (tq->loop) + (uint64_t)ceil (seconds * 1000.);
    if (!tq_entry_armed (e)) {
        if (tq->count == tq->size) {
            size_t size = tq->size ? tq->size * 2 : 64;
            struct tq_entry **heap;
            if (!(heap = realloc (tq->heap, size * sizeof (*heap))))
                return -1;
            tq->heap = heap;
            tq->size = size;
        }
        e->deadline = deadline;
        e->seq = tq->seq++;
        place (tq, tq->count++, e);
        sift_up (tq, e->index);
    }
    else {
        size_t i = e->index;
        e->deadline = deadline;
        e->seq = tq->seq++;
        if (i > 0 && before (e, tq->heap[(i - 1) / 2]))
            sift_up (tq, i);
        else
            sift_down (tq, i);
    }
    rearm (tq);
    return 0;
}

void timerq_disarm (timerq_t *tq, struct tq_entry *e)
{
    if (!tq || !e || !tq_entry_armed (e))
        return;
    remove_at (tq, e->index);
    rearm (tq);
}

size_t timerq_count (const timerq_t *tq)
{
    return tq ? tq->count : 0;
}
