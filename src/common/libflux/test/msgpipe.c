/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Unit tests for msgpipe: raw ends, the eventfd's signal, and RPCs
 * between two threads. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libflux/flux.h"
#include "libflux/msgpipe.h"
#include "tap.h"

static void echo_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    const char *s;
    if (flux_request_decode (msg, NULL, &s) < 0)
        flux_respond_error (h, msg, errno, NULL);
    else
        flux_respond (h, msg, s);
}

static void stop_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    flux_respond (h, msg, NULL);
    flux_reactor_stop (flux_get_reactor (h));
}

static bool readable (int fd)
{
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    return poll (&pfd, 1, 0) == 1 && (pfd.revents & POLLIN);
}

/* Write or read the eventfd behind the pipe's back. */
static void efd_write (int efd)
{
    uint64_t one = 1;
    if (write (efd, &one, sizeof (one)) != sizeof (one))
        BAIL_OUT ("cannot write the eventfd");
}

static void efd_drain (int efd)
{
    uint64_t v;
    if (read (efd, &v, sizeof (v)) != sizeof (v))
        BAIL_OUT ("cannot read the eventfd");
}

/* A sender signals after unlocking, so its signal can land after the
 * reader emptied the queue.  Replay that: send, take the signal away
 * before the receive (as if not written yet), receive, then let it land.
 * recv_fn receives the message (end 1). */
static void late_signal (struct flux_msgpipe *p,
                         flux_msg_t *(*recv_fn) (void *), void *arg)
{
    flux_msg_t *msg = flux_request_encode ("a.b", "x");
    flux_msg_t *got;
    int efd = flux_msgpipe_pollfd (p, 1);

    if (flux_msgpipe_send (p, 0, msg) < 0)
        BAIL_OUT ("send failed");
    efd_drain (efd);
    if (!(got = recv_fn (arg)))
        BAIL_OUT ("recv failed");
    flux_msg_decref (got);
    efd_write (efd);
}

static flux_msg_t *recv_pipe (void *arg)
{
    return flux_msgpipe_recv (arg, 1);
}

static flux_msg_t *recv_handle (void *arg)
{
    return flux_recv (arg, FLUX_O_NONBLOCK);
}

static void *server_thread (void *arg)
{
    struct flux_msgpipe *p = arg;
    static const struct flux_msg_handler_spec htab[] = {
        {FLUX_MSGTYPE_REQUEST, "echo", echo_cb, 0},
        {FLUX_MSGTYPE_REQUEST, "stop", stop_cb, 0},
        FLUX_MSGHANDLER_TABLE_END,
    };
    flux_msg_handler_t **handlers;
    flux_t *h = flux_msgpipe_open (p, 1, 0);

    if (!h || flux_msg_handler_addvec (h, htab, NULL, &handlers) < 0)
        return NULL;
    flux_reactor_run (flux_get_reactor (h), 0);
    flux_msg_handler_delvec (handlers);
    flux_close (h);
    return NULL;
}

/* A bounded send refuses past the bound with EAGAIN; what is taken off
 * the queue makes room again. */
static void test_bounded (void)
{
    struct flux_msgpipe *p = flux_msgpipe_create ();
    char big[4000];
    flux_msg_t *m;
    int n = 0, i;

    memset (big, 'x', sizeof (big) - 1);
    big[sizeof (big) - 1] = '\0';
    m = flux_request_encode ("a.b", big);
    errno = 0;
    ok (flux_msgpipe_send_bounded (p, 0, m, 0) < 0 && errno == EINVAL,
        "bounded send with a 0 bound: EINVAL");
    for (i = 0; i < 100; i++) {
        flux_msg_t *ref = (flux_msg_t *)flux_msg_incref (m);
        if (flux_msgpipe_send_bounded (p, 0, ref, 40000) < 0) {
            flux_msg_decref (ref);
            break;
        }
        n++;
    }
    ok (n >= 9 && n <= 10 && errno == EAGAIN,
        "40000 bytes take %d messages of 4000, then EAGAIN", n);
    ok (flux_msgpipe_count (p, 1) == (size_t)n
            && flux_msgpipe_bytes (p, 1) <= 40000
            && flux_msgpipe_bytes (p, 1) >= 36000,
        "count and bytes say what waits (%zu bytes)",
        flux_msgpipe_bytes (p, 1));
    ok (flux_msgpipe_send (p, 0, (flux_msg_t *)flux_msg_incref (m)) == 0,
        "an unbounded send still goes");
    flux_msg_decref (flux_msgpipe_recv (p, 1));
    flux_msg_decref (flux_msgpipe_recv (p, 1));
    ok (flux_msgpipe_send_bounded (p, 0, (flux_msg_t *)flux_msg_incref (m),
                                   40000)
            == 0,
        "after two are read, a bounded send goes again");
    while ((flux_msg_decref (flux_msgpipe_recv (p, 1)),
            flux_msgpipe_count (p, 1) > 0))
        ;
    ok (flux_msgpipe_bytes (p, 1) == 0, "all read: 0 bytes wait");
    ok (flux_msgpipe_send_bounded (p, 0, (flux_msg_t *)flux_msg_incref (m), 100)
            == 0,
        "an empty queue takes a message over the bound");
    flux_msg_decref (flux_msgpipe_recv (p, 1));
    flux_msg_decref (m);
    flux_msgpipe_decref (p);
}

/* A sender thread under flux_msgpipe_set_limit(): sends count messages
 * of 4000 bytes to end 1 (each its sequence number in the topic), or
 * until a send fails; sent, and the errno of the failure. */
struct flooder {
    struct flux_msgpipe *p;
    int count;
    int sent;
    int errnum;
};

static void *flood_thread (void *arg)
{
    struct flooder *f = arg;
    char big[4000], topic[32];

    memset (big, 'x', sizeof (big) - 1);
    big[sizeof (big) - 1] = '\0';
    for (int i = 0; i < f->count; i++) {
        flux_msg_t *m;
        snprintf (topic, sizeof (topic), "seq.%d", i);
        if (!(m = flux_request_encode (topic, big)))
            break;
        if (flux_msgpipe_send (f->p, 0, m) < 0) {
            f->errnum = errno;
            flux_msg_decref (m);
            break;
        }
        f->sent++;
    }
    return NULL;
}

/* Backpressure: a sender waits while the queue is over its limit, gets
 * every message through in order, and a closed reader frees it (EPIPE). */
static void test_limit (void)
{
    struct flux_msgpipe *p = flux_msgpipe_create ();
    struct flooder f = {.p = p, .count = 1000};
    size_t bytes_max = 0, most = 0;
    uint64_t waits = 0;
    pthread_t t;
    int got = 0, inorder = 1;

    ok (flux_msgpipe_set_limit (p, 2, 100) < 0 && errno == EINVAL,
        "set_limit on a bad end: EINVAL");
    ok (flux_msgpipe_set_limit (p, 1, 40000) == 0, "limit 40000 on end 1");
    pthread_create (&t, NULL, flood_thread, &f);
    while (got < f.count) {
        flux_msg_t *m;
        const char *topic;
        size_t b = flux_msgpipe_bytes (p, 1);
        if (b > most)
            most = b;
        if (!(m = flux_msgpipe_recv (p, 1))) {
            if (errno != EWOULDBLOCK)
                break;
            usleep (got < 50 ? 20000 : 100); /* slow at first: fill up */
            continue;
        }
        if (flux_msg_get_topic (m, &topic) < 0 || atoi (topic + 4) != got)
            inorder = 0;
        got++;
        flux_msg_decref (m);
    }
    pthread_join (t, NULL);
    flux_msgpipe_limit_stats (p, 1, &bytes_max, &waits);
    ok (got == 1000 && f.sent == 1000 && inorder,
        "a slow reader gets all 1000 messages, in order (%d)", got);
    ok (bytes_max <= 40000 && most <= 40000,
        "the queue never held more than the limit (%zu bytes)", bytes_max);
    ok (waits > 0, "the sender waited %ju times", (uintmax_t)waits);

    /* a sender waiting on a full queue is freed by the reader's close */
    f = (struct flooder){.p = p, .count = 100};
    pthread_create (&t, NULL, flood_thread, &f);
    while (flux_msgpipe_bytes (p, 1) + 4000 <= 40000)
        usleep (1000);
    usleep (50000);
    flux_msgpipe_close (p, 1);
    pthread_join (t, NULL);
    ok (f.sent < 100 && f.errnum == EPIPE,
        "closing the reader's end ends a waiting send with EPIPE (%d sent)",
        f.sent);
    flux_msgpipe_decref (p);
}

int main (int argc, char *argv[])
{
    struct flux_msgpipe *p;
    flux_msg_t *msg, *got;
    pthread_t t;
    flux_t *h;
    flux_future_t *f;
    const char *s;
    int i, errors = 0;

    plan (NO_PLAN);

    ok ((p = flux_msgpipe_create ()) != NULL, "msgpipe_create works");
    errno = 0;
    ok (flux_msgpipe_recv (p, 0) == NULL && errno == EWOULDBLOCK,
        "recv on an empty end: EWOULDBLOCK");
    msg = flux_request_encode ("a.b", "x");
    ok (flux_msgpipe_send (p, 0, msg) == 0, "send from end 0");
    ok ((got = flux_msgpipe_recv (p, 1)) == msg,
        "end 1 receives the very same message (no copy)");
    flux_msg_decref (got);
    ok (!readable (flux_msgpipe_pollfd (p, 1)),
        "the queue emptied: its eventfd is clear");
    late_signal (p, recv_pipe, p);
    errno = 0;
    ok (flux_msgpipe_recv (p, 1) == NULL && errno == EWOULDBLOCK
            && !readable (flux_msgpipe_pollfd (p, 1)),
        "a late signal (sender signalled after the queue was emptied)"
        " is cleared by the next empty receive");
    efd_write (flux_msgpipe_pollfd (p, 1));
    errno = 0;
    ok (flux_msgpipe_recv (p, 1) == NULL && errno == EWOULDBLOCK
            && readable (flux_msgpipe_pollfd (p, 1)),
        "with no signal owed, an empty receive does not read the eventfd");
    efd_drain (flux_msgpipe_pollfd (p, 1));
    for (i = 0; i < 3; i++) {
        msg = flux_request_encode ("a.b", "x");
        if (flux_msgpipe_send (p, 0, msg) < 0)
            BAIL_OUT ("send failed");
    }
    ok (readable (flux_msgpipe_pollfd (p, 1)), "three sends: readable");
    for (i = 0; i < 3; i++) {
        ok (readable (flux_msgpipe_pollfd (p, 1)),
            "still readable before receive %d", i + 1);
        flux_msg_decref (flux_msgpipe_recv (p, 1));
    }
    ok (!readable (flux_msgpipe_pollfd (p, 1)),
        "the last receive cleared the eventfd");
    {
        flux_t *h1 = flux_msgpipe_open (p, 1, 0);
        late_signal (p, recv_handle, h1);
        ok (h1 && !(flux_pollevents (h1) & FLUX_POLLIN)
                && !readable (flux_msgpipe_pollfd (p, 1)),
            "and by a poll-events check that finds the queue empty");
        flux_close (h1);
    }
    flux_msgpipe_close (p, 0);
    errno = 0;
    ok (flux_msgpipe_recv (p, 1) == NULL && errno == EPIPE,
        "after the other end closed: EPIPE");
    msg = flux_request_encode ("a.b", "x");
    errno = 0;
    ok (flux_msgpipe_send (p, 1, msg) < 0 && errno == EPIPE,
        "sending to a closed end: EPIPE");
    flux_msg_decref (msg);
    flux_msgpipe_decref (p);

    /* quiet ends: both served by one thread (the broker's own services) */
    p = flux_msgpipe_create ();
    flux_msgpipe_set_quiet (p, 0);
    flux_msgpipe_set_quiet (p, 1);
    msg = flux_request_encode ("echo", "q");
    ok (flux_msgpipe_send (p, 0, msg) == 0 && flux_msgpipe_count (p, 1) == 1
            && !readable (flux_msgpipe_pollfd (p, 1)),
        "quiet: a message waits without signalling the eventfd");
    {
        static const struct flux_msg_handler_spec htab[] = {
            {FLUX_MSGTYPE_REQUEST, "echo", echo_cb, 0},
            FLUX_MSGHANDLER_TABLE_END,
        };
        flux_msg_handler_t **handlers = NULL;
        flux_t *h1 = flux_msgpipe_open (p, 1, 0);

        ok (h1 && flux_msg_handler_addvec (h1, htab, NULL, &handlers) == 0
                && (flux_pollevents (h1) & FLUX_POLLIN),
            "quiet: a handle over the end still sees it pending");
        ok (flux_reactor_run (flux_get_reactor (h1), FLUX_REACTOR_NOWAIT) >= 0
                && flux_msgpipe_count (p, 0) == 1
                && !readable (flux_msgpipe_pollfd (p, 0)),
            "quiet: one loop turn answers it, and the answer waits "
            "unsignalled");
        got = flux_msgpipe_recv (p, 0);
        ok (got && flux_response_decode (got, NULL, &s) == 0 && s
                && !strcmp (s, "q"),
            "quiet: the answer is the echo");
        flux_msg_decref (got);
        flux_msg_handler_delvec (handlers);
        flux_close (h1);
    }
    ok (readable (flux_msgpipe_pollfd (p, 0)),
        "quiet: closing an end still signals the other");
    flux_msgpipe_decref (p);

    p = flux_msgpipe_create ();
    pthread_create (&t, NULL, server_thread, p);
    ok ((h = flux_msgpipe_open (p, 0, 0)) != NULL, "open end 0 as a handle");
    for (i = 0; i < 10000; i++) {
        char buf[32];
        snprintf (buf, sizeof (buf), "%d", i);
        f = flux_rpc (h, "echo", buf, FLUX_NODEID_ANY, 0);
        if (flux_rpc_get (f, &s) < 0 || strcmp (s, buf) != 0)
            errors++;
        flux_future_destroy (f);
    }
    ok (errors == 0, "10000 RPCs to a service in another thread");
    f = flux_rpc (h, "nosuch", NULL, FLUX_NODEID_ANY, 0);
    ok (flux_rpc_get (f, NULL) < 0 && errno == ENOSYS, "ENOSYS across threads");
    flux_future_destroy (f);
    f = flux_rpc (h, "stop", NULL, FLUX_NODEID_ANY, 0);
    ok (flux_future_get (f, NULL) == 0, "stop the server thread");
    flux_future_destroy (f);
    pthread_join (t, NULL);
    f = flux_rpc (h, "echo", "late", FLUX_NODEID_ANY, 0);
    ok (f == NULL
            || (flux_future_get (f, NULL) < 0
                && (errno == ECONNRESET || errno == EPIPE)),
        "rpc after the other end closed fails");
    flux_future_destroy (f);
    flux_close (h);
    flux_msgpipe_decref (p);
    test_bounded ();
    test_limit ();
    done_testing ();
}
