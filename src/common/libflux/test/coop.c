/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Unit tests for coop: loops of several tasks on one thread, each
 * yielding where it would block (timers, RPCs between tasks over a
 * msgpipe, synchronous RPCs, a busy loop beside a waiting one, spawns
 * from another thread, reactors created and destroyed in turn). */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libflux/coop.h"
#include "libflux/flux.h"
#include "libflux/msgpipe.h"
#include "tap.h"

static double now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- timers: the shorter wait ends first, whatever the order ---- */

struct sleeper {
    int ms;
    double t_end;
    int order;
    int *counter;
    bool in_task;
};

static void timer_cb (uv_timer_t *t)
{
}

static void sleeper_task (void *arg)
{
    struct sleeper *s = arg;
    flux_reactor_t *r = flux_reactor_create (0);
    uv_timer_t t;

    s->in_task = flux_coop_in_task ();
    if (!r)
        return;
    uv_timer_init (flux_reactor_uv (r), &t);
    uv_timer_start (&t, timer_cb, s->ms, 0);
    (void)flux_reactor_run (r, 0); /* until the timer is done */
    s->t_end = now ();
    s->order = ++*s->counter;
    uv_close ((uv_handle_t *)&t, NULL);
    flux_reactor_destroy (r);
}

static void test_timers (void)
{
    flux_coop_t *c = flux_coop_create ();
    int counter = 0;
    struct sleeper a = {.ms = 200, .counter = &counter};
    struct sleeper b = {.ms = 20, .counter = &counter};
    double t0 = now ();

    ok (c != NULL, "flux_coop_create works");
    ok (flux_coop_spawn (c, sleeper_task, &a, 0) == 0
            && flux_coop_spawn (c, sleeper_task, &b, 0) == 0,
        "spawned two tasks");
    ok (flux_coop_count (c) == 2, "flux_coop_count says 2");
    ok (flux_coop_run (c) == 0, "flux_coop_run returns once both are done");
    ok (flux_coop_count (c) == 0, "flux_coop_count says 0");
    ok (a.in_task && b.in_task && !flux_coop_in_task (),
        "flux_coop_in_task is true in a task only");
    ok (b.order == 1 && a.order == 2,
        "the 20 ms sleeper finished first (each yielded while it waited)");
    ok (a.t_end - t0 >= 0.19, "the 200 ms one took its time (%.3f s)",
        a.t_end - t0);
    flux_coop_destroy (c);
}

/* ---- RPCs between two tasks over a msgpipe ---- */

#define NRPC 200

struct pair {
    struct flux_msgpipe *p;
    int answered_async;
    int answered_sync;
    int served;
    bool stopped;
};

static void echo_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    struct pair *pr = arg;
    const char *s;

    pr->served++;
    if (flux_request_decode (msg, NULL, &s) < 0)
        flux_respond_error (h, msg, errno, NULL);
    else
        flux_respond (h, msg, s);
}

static void stop_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    struct pair *pr = arg;
    pr->stopped = true;
    flux_respond (h, msg, NULL);
    flux_reactor_stop (flux_get_reactor (h));
}

static void server_task (void *arg)
{
    struct pair *pr = arg;
    flux_t *h = flux_msgpipe_open (pr->p, 1, 0);
    struct flux_match m1 = FLUX_MATCH_REQUEST, m2 = FLUX_MATCH_REQUEST;
    flux_msg_handler_t *mh1, *mh2;

    m1.topic_glob = "echo";
    m2.topic_glob = "stop";
    if (!h || !(mh1 = flux_msg_handler_create (h, m1, echo_cb, pr))
        || !(mh2 = flux_msg_handler_create (h, m2, stop_cb, pr)))
        BAIL_OUT ("server set-up failed");
    flux_msg_handler_start (mh1);
    flux_msg_handler_start (mh2);
    (void)flux_reactor_run (flux_get_reactor (h), 0);
    flux_msg_handler_destroy (mh1);
    flux_msg_handler_destroy (mh2);
    flux_close (h);
}

static void then_cb (flux_future_t *f, void *arg)
{
    struct pair *pr = arg;
    flux_reactor_t *r = flux_future_get_reactor (f);
    const char *s;

    if (flux_rpc_get (f, &s) == 0 && !strcmp (s, "async"))
        pr->answered_async++;
    flux_future_destroy (f);
    if (pr->answered_async == NRPC)
        flux_reactor_stop (r);
}

static void client_task (void *arg)
{
    struct pair *pr = arg;
    flux_t *h = flux_msgpipe_open (pr->p, 0, 0);
    flux_future_t *f;
    const char *s;

    if (!h)
        BAIL_OUT ("client set-up failed");
    /* synchronous: the wait yields to the server's task */
    for (int i = 0; i < NRPC; i++) {
        if ((f = flux_rpc (h, "echo", "sync", FLUX_NODEID_ANY, 0))
            && flux_rpc_get (f, &s) == 0 && !strcmp (s, "sync"))
            pr->answered_sync++;
        flux_future_destroy (f);
    }
    /* asynchronous, many in flight: the loop yields */
    for (int i = 0; i < NRPC; i++) {
        if (!(f = flux_rpc (h, "echo", "async", FLUX_NODEID_ANY, 0))
            || flux_future_then (f, -1., then_cb, pr) < 0)
            BAIL_OUT ("flux_rpc failed");
    }
    (void)flux_reactor_run (flux_get_reactor (h), 0);
    if ((f = flux_rpc (h, "stop", NULL, FLUX_NODEID_ANY, 0)))
        (void)flux_future_get (f, NULL);
    flux_future_destroy (f);
    flux_close (h);
}

static void test_rpc (void)
{
    flux_coop_t *c = flux_coop_create ();
    struct pair pr = {.p = flux_msgpipe_create ()};

    if (!c || !pr.p)
        BAIL_OUT ("cannot create a coop and a msgpipe");
    ok (flux_coop_spawn (c, server_task, &pr, 0) == 0
            && flux_coop_spawn (c, client_task, &pr, 0) == 0,
        "spawned a server and a client on one thread");
    ok (flux_coop_run (c) == 0, "flux_coop_run returns when both are done");
    ok (pr.answered_sync == NRPC,
        "%d synchronous RPCs were answered by the other task", NRPC);
    ok (pr.answered_async == NRPC, "%d RPCs in flight at once were answered",
        NRPC);
    ok (pr.served == 2 * NRPC && pr.stopped, "the server served them all");
    flux_msgpipe_decref (pr.p);
    flux_coop_destroy (c);
}

/* ---- a busy loop does not starve a waiting one ---- */

struct busy {
    volatile bool flag;
    long spins;
};

static void idle_cb (uv_idle_t *w)
{
    struct busy *b = w->data;

    if (b->flag || ++b->spins >= 1000000) {
        uv_idle_stop (w);
        uv_stop (w->loop);
    }
}

/* Run a loop of its own whose idle callback cb (data in w->data) runs at
 * every turn until it stops the loop: a task that always has work. */
static void run_idle_loop (uv_idle_cb cb, void *data)
{
    flux_reactor_t *r = flux_reactor_create (0);
    uv_idle_t w;

    if (!r)
        BAIL_OUT ("flux_reactor_create failed");
    uv_idle_init (flux_reactor_uv (r), &w);
    w.data = data;
    uv_idle_start (&w, cb);
    (void)flux_reactor_run (r, 0);
    uv_close ((uv_handle_t *)&w, NULL);
    flux_reactor_destroy (r);
}

static void busy_task (void *arg)
{
    run_idle_loop (idle_cb, arg);
}

static void flag_timer_cb (uv_timer_t *t)
{
    struct busy *b = t->data;
    b->flag = true;
}

static void waiter_task (void *arg)
{
    struct busy *b = arg;
    flux_reactor_t *r = flux_reactor_create (0);
    uv_timer_t t;

    uv_timer_init (flux_reactor_uv (r), &t);
    t.data = b;
    uv_timer_start (&t, flag_timer_cb, 10, 0);
    (void)flux_reactor_run (r, 0);
    uv_close ((uv_handle_t *)&t, NULL);
    flux_reactor_destroy (r);
}

static void test_busy (void)
{
    flux_coop_t *c = flux_coop_create ();
    struct busy b = {0};

    ok (flux_coop_spawn (c, busy_task, &b, 0) == 0
            && flux_coop_spawn (c, waiter_task, &b, 0) == 0
            && flux_coop_run (c) == 0,
        "a busy task and a waiting one ran");
    ok (b.flag && b.spins < 1000000,
        "the waiter's timer fired while the other was busy (%ld turns)",
        b.spins);
    flux_coop_destroy (c);
}

/* ---- NOWAIT runs never yield ---- */

struct nowait {
    int other_turns; /* the other task's loop turns */
    bool done;
    int before, after;
};

static void nowait_task (void *arg)
{
    struct nowait *n = arg;
    flux_reactor_t *r = flux_reactor_create (0);
    uv_timer_t t;

    uv_timer_init (flux_reactor_uv (r), &t);
    uv_timer_start (&t, timer_cb, 10000, 0); /* never due here */
    n->before = n->other_turns;
    for (int i = 0; i < 100; i++)
        (void)flux_reactor_run (r, FLUX_REACTOR_NOWAIT);
    n->after = n->other_turns;
    n->done = true;
    uv_close ((uv_handle_t *)&t, NULL);
    flux_reactor_destroy (r);
}

static void turn_cb (uv_idle_t *w)
{
    struct nowait *n = w->data;

    n->other_turns++;
    if (n->done || n->other_turns > 100000) {
        uv_idle_stop (w);
        uv_stop (w->loop);
    }
}

static void turns_task (void *arg)
{
    run_idle_loop (turn_cb, arg);
}

static void test_nowait (void)
{
    flux_coop_t *c = flux_coop_create ();
    struct nowait n = {0};
    double t0 = now ();

    ok (flux_coop_spawn (c, turns_task, &n, 0) == 0
            && flux_coop_spawn (c, nowait_task, &n, 0) == 0
            && flux_coop_run (c) == 0,
        "a task ran 100 NOWAIT turns beside a busy one");
    ok (n.done && n.before == n.after && n.other_turns > n.after,
        "the NOWAIT turns did not yield to the other task (%d, %d, %d)",
        n.before, n.after, n.other_turns);
    ok (now () - t0 < 5., "and did not wait for the timer");
    flux_coop_destroy (c);
}

/* ---- reactors created and destroyed in turn (fd numbers reused) ---- */

static void serial_task (void *arg)
{
    int *done = arg;

    for (int i = 0; i < 5; i++) {
        flux_reactor_t *r = flux_reactor_create (0);
        uv_timer_t t;
        if (!r)
            return;
        uv_timer_init (flux_reactor_uv (r), &t);
        uv_timer_start (&t, timer_cb, 5, 0);
        (void)flux_reactor_run (r, 0);
        uv_close ((uv_handle_t *)&t, NULL);
        flux_reactor_destroy (r);
        (*done)++;
    }
}

static void sleep_task (void *arg)
{
    struct sleeper *s = arg;
    sleeper_task (s);
}

static void test_serial (void)
{
    flux_coop_t *c = flux_coop_create ();
    int counter = 0, done = 0;
    struct sleeper s = {.ms = 100, .counter = &counter};

    ok (flux_coop_spawn (c, serial_task, &done, 0) == 0
            && flux_coop_spawn (c, sleep_task, &s, 0) == 0
            && flux_coop_run (c) == 0,
        "a task made five reactors in turn beside a sleeper");
    ok (done == 5, "each ran its timer to the end");
    flux_coop_destroy (c);
}

/* ---- a spawn from another thread while the coop runs ---- */

struct remote {
    flux_coop_t *c;
    bool ran;
    bool in_time;
    double t_spawn;
};

static void remote_task (void *arg)
{
    struct remote *rm = arg;
    rm->ran = true;
    rm->in_time = now () - rm->t_spawn < 0.25;
}

static void *spawner (void *arg)
{
    struct remote *rm = arg;
    usleep (20000);
    rm->t_spawn = now ();
    if (flux_coop_spawn (rm->c, remote_task, rm, 64 << 10) < 0)
        diag ("flux_coop_spawn from a thread: %s", strerror (errno));
    return NULL;
}

static void test_remote (void)
{
    struct remote rm = {.c = flux_coop_create ()};
    int counter = 0;
    struct sleeper s = {.ms = 300, .counter = &counter};
    pthread_t t;

    ok (flux_coop_spawn (rm.c, sleeper_task, &s, 0) == 0,
        "spawned a 300 ms sleeper");
    ok (pthread_create (&t, NULL, spawner, &rm) == 0,
        "another thread spawns a task 20 ms later");
    ok (flux_coop_run (rm.c) == 0, "flux_coop_run returned");
    pthread_join (t, NULL);
    ok (rm.ran && rm.in_time,
        "the task spawned from the other thread ran at once, with a "
        "64 KiB stack");
    flux_coop_destroy (rm.c);
}

/* ---- misuse ---- */

static void test_inval (void)
{
    flux_coop_t *c = flux_coop_create ();

    errno = 0;
    ok (flux_coop_spawn (NULL, remote_task, NULL, 0) < 0 && errno == EINVAL,
        "flux_coop_spawn c=NULL fails with EINVAL");
    errno = 0;
    ok (flux_coop_spawn (c, NULL, NULL, 0) < 0 && errno == EINVAL,
        "flux_coop_spawn fn=NULL fails with EINVAL");
    errno = 0;
    ok (flux_coop_run (NULL) < 0 && errno == EINVAL,
        "flux_coop_run c=NULL fails with EINVAL");
    errno = 0;
    ok (flux_coop_wait_fd (0, 0) < 0 && errno == EINVAL,
        "flux_coop_wait_fd outside a task fails with EINVAL");
    errno = 0;
    ok (flux_coop_attach (NULL) == NULL && errno == EINVAL,
        "flux_coop_attach outside a task fails with EINVAL");
    ok (flux_coop_run (c) == 0, "flux_coop_run with no task returns 0");
    flux_coop_detach (NULL);
    flux_coop_destroy (NULL);
    flux_coop_destroy (c);
    pass ("flux_coop_detach and flux_coop_destroy take NULL");
}

int main (int argc, char *argv[])
{
    plan (NO_PLAN);
    test_timers ();
    test_rpc ();
    test_busy ();
    test_nowait ();
    test_serial ();
    test_remote ();
    test_inval ();
    done_testing ();
    return 0;
}
