/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* timerq.c - a binary min-heap of deadlines driving one timerfd
 * (see timerq.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "timerq.h"

struct timerq {
    uv_loop_t *loop;
    int fd; /* timerfd, CLOCK_MONOTONIC (the clock of uv_hrtime) */
    uv_poll_t poll;
    struct tq_entry **heap;
    size_t count, size;
    uint64_t seq;
    uint64_t armed_for; /* deadline the timerfd is set for, if active */
    bool active;
    bool in_pass; /* poll_cb is running: it rearms at the end */
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

static void poll_cb (uv_poll_t *h, int status, int events);

/* Set the timerfd to an absolute deadline (0: disarm). */
static void set_fd (timerq_t *tq, uint64_t deadline)
{
    struct itimerspec its = {
        .it_value
        = {.tv_sec = deadline / 1000000000, .tv_nsec = deadline % 1000000000},
    };
    /* fails only on bad arguments: a deadline is never negative */
    (void)timerfd_settime (tq->fd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* Point the timerfd at the earliest deadline (or disarm it). */
static void rearm (timerq_t *tq)
{
    uint64_t deadline;

    if (tq->in_pass)
        return;
    if (tq->count == 0) {
        if (tq->active) {
            set_fd (tq, 0);
            tq->active = false;
        }
        /* an empty queue keeps no loop alive */
        if (uv_is_active ((uv_handle_t *)&tq->poll))
            uv_poll_stop (&tq->poll);
        return;
    }
    deadline = tq->heap[0]->deadline;
    if (tq->active && tq->armed_for == deadline)
        return;
    if (!uv_is_active ((uv_handle_t *)&tq->poll)
        && uv_poll_start (&tq->poll, UV_READABLE, poll_cb) < 0)
        return; /* only on bad arguments */
    set_fd (tq, deadline > 0 ? deadline : 1);
    tq->armed_for = deadline;
    tq->active = true;
}

static void poll_cb (uv_poll_t *h, int status, int events)
{
    timerq_t *tq = h->data;
    uint64_t expirations;
    uint64_t now = uv_hrtime ();
    uint64_t limit = tq->seq; /* entries armed from here on wait */

    (void)status;
    (void)events;
    if (read (tq->fd, &expirations, sizeof (expirations)) < 0
        && errno != EAGAIN)
        return; /* cannot happen on a timerfd: nothing to do but wait */
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
    if ((tq->fd = timerfd_create (CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC))
        < 0) {
        free (tq);
        return NULL;
    }
    if (uv_poll_init (loop, &tq->poll, tq->fd) < 0) {
        close (tq->fd);
        free (tq);
        errno = ENOMEM;
        return NULL;
    }
    tq->poll.data = tq;
    return tq;
}

static void close_cb (uv_handle_t *handle)
{
    timerq_t *tq = handle->data;

    close (tq->fd);
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
        uv_poll_stop (&tq->poll);
        uv_close ((uv_handle_t *)&tq->poll, close_cb);
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
    /* beyond ~127 years, a deadline that never comes fits uint64_t */
    deadline
        = uv_hrtime ()
          + (seconds < 4e9 ? (uint64_t)ceil (seconds * 1e9) : (uint64_t)4e18);
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
