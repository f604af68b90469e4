/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* msgpipe.c - a two-ended, mutex-protected message queue pair with
 * eventfd wakeups; and a flux_t connector over one end.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "msgdeque.h"
#include "msgpipe.h"

struct queue {
    struct msgdeque m;
    size_t bytes; /* weight of the queued messages (msg_weight) */
    int efd;      /* readable while count > 0 or peer closed */
    bool closed;  /* the owning end closed */
    bool quiet;   /* pushes do not signal efd (flux_msgpipe_set_quiet) */
    /* Wakeups written (or about to be: senders write after unlocking)
     * and not yet read back.  While it is 0 the eventfd is known clear,
     * so the reader does not read it: without this a wakeup cost ~4
     * reads (the pop that empties the queue, the empty receive that ends
     * a dispatch, and the loop's prepare and check probes). */
    uint64_t owed;
    /* flux_msgpipe_set_limit(): senders wait on 'room' while the queue
     * weighs over 'limit' (0: no limit) */
    size_t limit;
    pthread_cond_t room;
    unsigned waiters;
    size_t bytes_max; /* the most 'bytes' has been */
    uint64_t waits;   /* sends that had to wait */
};

struct flux_msgpipe {
    pthread_mutex_t lock;
    int refcount;
    struct queue q[2];           /* q[i]: messages waiting for end i */
    flux_msgpipe_send_f hook[2]; /* how the handle over end i sends */
    void *hook_arg[2];
    flux_msgpipe_gate_f gate[2]; /* whether the handle over end i takes */
    void *gate_arg[2];
};

static void efd_set (int efd)
{
    uint64_t one = 1;
    if (write (efd, &one, sizeof (one)) < 0) {
        /* cannot overflow with our usage */
    }
}

/* Read back the wakeups owed to q (with the pipe locked).  A wakeup not
 * yet written stays owed: it will make the eventfd readable, and the
 * empty receive that follows reads it. */
static void efd_clear (struct queue *q)
{
    uint64_t val;

    if (q->owed > 0 && read (q->efd, &val, sizeof (val)) == sizeof (val))
        q->owed = val < q->owed ? q->owed - val : 0;
}

/* What a queued message counts for flux_msgpipe_send_bounded: its
 * encoded size, and at least what a small message costs in memory. */
#define MSG_WEIGHT_MIN 256

static size_t msg_weight (const flux_msg_t *msg)
{
    ssize_t n = flux_msg_frame_size (msg);
    return n > MSG_WEIGHT_MIN ? (size_t)n : MSG_WEIGHT_MIN;
}

struct flux_msgpipe *flux_msgpipe_create (void)
{
    struct flux_msgpipe *p;
    int i;

    if (!(p = calloc (1, sizeof (*p))))
        return NULL;
    pthread_mutex_init (&p->lock, NULL);
    p->refcount = 1;
    p->q[0].efd = p->q[1].efd = -1;
    for (i = 0; i < 2; i++)
        pthread_cond_init (&p->q[i].room, NULL);
    for (i = 0; i < 2; i++) {
        if ((p->q[i].efd = eventfd (0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
            flux_msgpipe_decref (p);
            return NULL;
        }
    }
    return p;
}

struct flux_msgpipe *flux_msgpipe_incref (struct flux_msgpipe *p)
{
    if (p) {
        pthread_mutex_lock (&p->lock);
        p->refcount++;
        pthread_mutex_unlock (&p->lock);
    }
    return p;
}

void flux_msgpipe_decref (struct flux_msgpipe *p)
{
    if (p) {
        int saved_errno = errno;
        int n, i;
        pthread_mutex_lock (&p->lock);
        n = --p->refcount;
        pthread_mutex_unlock (&p->lock);
        if (n == 0) {
            for (i = 0; i < 2; i++) {
                struct queue *q = &p->q[i];
                msgdeque_clear (&q->m);
                if (q->efd >= 0)
                    close (q->efd);
                pthread_cond_destroy (&q->room);
            }
            pthread_mutex_destroy (&p->lock);
            free (p);
        }
        errno = saved_errno;
    }
}

static int pipe_send (struct flux_msgpipe *p, int end, flux_msg_t *msg,
                      size_t max_bytes)
{
    struct queue *q;
    size_t weight;
    bool wake;
    int rc = -1;

    if (!p || (end != 0 && end != 1) || !msg) {
        errno = EINVAL;
        return -1;
    }
    weight = msg_weight (msg);
    q = &p->q[!end];
    pthread_mutex_lock (&p->lock);
    if (max_bytes == 0 && q->limit > 0 && !q->closed && q->m.count > 0
        && q->bytes + weight > q->limit) {
        /* backpressure (flux_msgpipe_set_limit): wait for the reader */
        q->waits++;
        q->waiters++;
        while (!q->closed && q->limit > 0 && q->m.count > 0
               && q->bytes + weight > q->limit)
            pthread_cond_wait (&q->room, &p->lock);
        q->waiters--;
    }
    if (q->closed)
        errno = EPIPE;
    else if (max_bytes > 0 && q->m.count > 0 && q->bytes + weight > max_bytes)
        errno = EAGAIN;
    else if (msgdeque_push (&q->m, msg, false) == 0) {
        q->bytes += weight;
        if (q->bytes > q->bytes_max)
            q->bytes_max = q->bytes;
        rc = 0;
    }
    if ((wake = rc == 0 && q->m.count == 1 && !q->quiet))
        q->owed++;
    pthread_mutex_unlock (&p->lock);
    /* Signal after unlocking: the reader this wakes takes the lock at
     * once, and would only sleep on it again while we are in write().
     * A reader that emptied the queue in between finds a stale signal,
     * and clears it on its next (empty) receive. */
    if (wake)
        efd_set (q->efd);
    return rc;
}

int flux_msgpipe_send (struct flux_msgpipe *p, int end, flux_msg_t *msg)
{
    return pipe_send (p, end, msg, 0);
}

int flux_msgpipe_send_bounded (struct flux_msgpipe *p, int end, flux_msg_t *msg,
                               size_t max_bytes)
{
    if (max_bytes == 0) {
        errno = EINVAL;
        return -1;
    }
    return pipe_send (p, end, msg, max_bytes);
}

int flux_msgpipe_set_limit (struct flux_msgpipe *p, int end, size_t max_bytes)
{
    if (!p || (end != 0 && end != 1)) {
        errno = EINVAL;
        return -1;
    }
    pthread_mutex_lock (&p->lock);
    p->q[end].limit = max_bytes;
    pthread_cond_broadcast (&p->q[end].room); /* a raised limit */
    pthread_mutex_unlock (&p->lock);
    return 0;
}

void flux_msgpipe_limit_stats (struct flux_msgpipe *p, int end,
                               size_t *bytes_max, uint64_t *waits)
{
    pthread_mutex_lock (&p->lock);
    if (bytes_max)
        *bytes_max = p->q[end].bytes_max;
    if (waits)
        *waits = p->q[end].waits;
    pthread_mutex_unlock (&p->lock);
}

size_t flux_msgpipe_bytes (struct flux_msgpipe *p, int end)
{
    size_t n;

    pthread_mutex_lock (&p->lock);
    n = p->q[end].bytes;
    pthread_mutex_unlock (&p->lock);
    return n;
}

flux_msg_t *flux_msgpipe_recv (struct flux_msgpipe *p, int end)
{
    struct queue *q;
    flux_msg_t *msg = NULL;

    if (!p || (end != 0 && end != 1)) {
        errno = EINVAL;
        return NULL;
    }
    q = &p->q[end];
    pthread_mutex_lock (&p->lock);
    if ((msg = msgdeque_pop (&q->m))) {
        q->bytes -= msg_weight (msg);
        if (q->m.count == 0 && !p->q[!end].closed)
            efd_clear (q);
        /* wake the senders once half of the limit is free: one wakeup
         * per half a queue, not one per message */
        if (q->waiters > 0 && (q->m.count == 0 || q->bytes <= q->limit / 2))
            pthread_cond_broadcast (&q->room);
    }
    else if (p->q[!end].closed)
        errno = EPIPE;
    else {
        efd_clear (q); /* a stale signal (see flux_msgpipe_send) */
        errno = EWOULDBLOCK;
    }
    pthread_mutex_unlock (&p->lock);
    return msg;
}

size_t flux_msgpipe_count (struct flux_msgpipe *p, int end)
{
    size_t n;

    pthread_mutex_lock (&p->lock);
    n = p->q[end].m.count;
    pthread_mutex_unlock (&p->lock);
    return n;
}

void flux_msgpipe_set_quiet (struct flux_msgpipe *p, int end)
{
    if (p && (end == 0 || end == 1)) {
        pthread_mutex_lock (&p->lock);
        p->q[end].quiet = true;
        pthread_mutex_unlock (&p->lock);
    }
}

void flux_msgpipe_set_send_hook (struct flux_msgpipe *p, int end,
                                 flux_msgpipe_send_f fn, void *arg)
{
    if (p && (end == 0 || end == 1)) {
        p->hook[end] = fn;
        p->hook_arg[end] = arg;
    }
}

void flux_msgpipe_set_recv_gate (struct flux_msgpipe *p, int end,
                                 flux_msgpipe_gate_f fn, void *arg)
{
    if (p && (end == 0 || end == 1)) {
        p->gate[end] = fn;
        p->gate_arg[end] = arg;
    }
}

int flux_msgpipe_pollfd (struct flux_msgpipe *p, int end)
{
    return p->q[end].efd;
}

void flux_msgpipe_close (struct flux_msgpipe *p, int end)
{
    if (p) {
        pthread_mutex_lock (&p->lock);
        p->q[end].closed = true;
        efd_set (p->q[!end].efd); /* wake the other end to see EPIPE */
        pthread_cond_broadcast (&p->q[end].room); /* and its senders */
        pthread_mutex_unlock (&p->lock);
    }
}

/* The flux_t connector over one end */

struct pipe_end {
    struct flux_msgpipe *p;
    int end;
};

static int end_pollfd (void *impl)
{
    struct pipe_end *pe = impl;
    return flux_msgpipe_pollfd (pe->p, pe->end);
}

static int end_pollevents (void *impl)
{
    struct pipe_end *pe = impl;
    struct queue *q = &pe->p->q[pe->end];
    int ev = FLUX_POLLOUT;

    pthread_mutex_lock (&pe->p->lock);
    if (q->m.count > 0)
        ev |= FLUX_POLLIN;
    else if (pe->p->q[!pe->end].closed)
        ev |= FLUX_POLLERR;
    else
        efd_clear (q); /* a stale signal (see flux_msgpipe_send) */
    pthread_mutex_unlock (&pe->p->lock);
    return ev;
}

static int end_send (void *impl, const flux_msg_t *msg, int flags)
{
    struct pipe_end *pe = impl;
    flux_msg_t *ref = (flux_msg_t *)flux_msg_incref (msg);
    flux_msgpipe_send_f hook = pe->p->hook[pe->end];

    if ((hook ? hook (pe->p, pe->end, ref, pe->p->hook_arg[pe->end])
              : flux_msgpipe_send (pe->p, pe->end, ref))
        < 0) {
        flux_msg_decref (ref);
        return -1;
    }
    return 0;
}

static flux_msg_t *end_recv (void *impl, int flags)
{
    struct pipe_end *pe = impl;
    flux_msgpipe_gate_f gate = pe->p->gate[pe->end];
    flux_msg_t *msg;
    struct flux_msg_cred cred;

    if (gate && !gate (pe->p, pe->end, pe->p->gate_arg[pe->end])) {
        errno = EWOULDBLOCK;
        return NULL;
    }
    msg = flux_msgpipe_recv (pe->p, pe->end);
    if (!msg) {
        if (errno == EPIPE)
            errno = ECONNRESET;
        return NULL;
    }
    /* The peer is in this process: unset credentials are the owner's.
     * (A broker always stamps the credentials of what it forwards.) */
    if (flux_msg_get_cred (msg, &cred) == 0
        && (cred.userid == FLUX_USERID_UNKNOWN
            || cred.rolemask == FLUX_ROLE_NONE)) {
        if (cred.userid == FLUX_USERID_UNKNOWN)
            cred.userid = getuid ();
        if (cred.rolemask == FLUX_ROLE_NONE)
            cred.rolemask = FLUX_ROLE_OWNER;
        (void)flux_msg_set_cred (msg, cred);
    }
    return msg;
}

static void end_destroy (void *impl)
{
    struct pipe_end *pe = impl;
    if (pe) {
        flux_msgpipe_close (pe->p, pe->end);
        flux_msgpipe_decref (pe->p);
        free (pe);
    }
}

static const struct flux_handle_ops pipe_ops = {
    .pollfd = end_pollfd,
    .pollevents = end_pollevents,
    .send = end_send,
    .recv = end_recv,
    .impl_destroy = end_destroy,
};

flux_t *flux_msgpipe_open (struct flux_msgpipe *p, int end, int flags)
{
    struct pipe_end *pe;

    if (!p || (end != 0 && end != 1)) {
        errno = EINVAL;
        return NULL;
    }
    if (!(pe = calloc (1, sizeof (*pe))))
        return NULL;
    pe->p = flux_msgpipe_incref (p);
    pe->end = end;
    return flux_handle_create (pe, &pipe_ops, flags);
}
