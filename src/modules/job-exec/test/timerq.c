/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/timerq.c - deadline order, ties, re-arm, disarm, callbacks that
 * arm from inside a pass, a large random heap checked for order, and
 * sub-millisecond delays never cut short.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "timerq.h"

static uv_loop_t loop;
static timerq_t *tq;

struct item {
    struct tq_entry e;
    int id;
    int rearm; /* re-arm itself this many times with delay 0 */
};

static int fired[4096];
static int nfired;
static uint64_t fired_at[4096];

static void cb (struct tq_entry *e)
{
    struct item *it = (struct item *)e;

    fired_at[nfired] = uv_hrtime ();
    fired[nfired++] = it->id;
    if (it->rearm > 0) {
        it->rearm--;
        timerq_arm (tq, e, 0.);
    }
}

static void run (void)
{
    uv_run (&loop, UV_RUN_DEFAULT);
}

static void test_order (void)
{
    struct item it[5];
    double delays[5] = {0.03, 0.01, 0.02, 0.01, 0.};
    uint64_t t0;

    nfired = 0;
    for (int i = 0; i < 5; i++) {
        it[i].id = i;
        it[i].rearm = 0;
        tq_entry_init (&it[i].e, cb);
        ok (!tq_entry_armed (&it[i].e), "entry %d starts unarmed", i);
    }
    /* the queue's own clock: libuv's loop time may be CLOCK_MONOTONIC_COARSE
     * (where its resolution is 1 ms), up to a tick behind uv_hrtime() */
    t0 = uv_hrtime ();
    for (int i = 0; i < 5; i++)
        ok (timerq_arm (tq, &it[i].e, delays[i]) == 0, "arm %d (%.2fs)", i,
            delays[i]);
    ok (timerq_count (tq) == 5, "5 armed");
    run ();
    ok (nfired == 5, "all 5 fired");
    ok (fired[0] == 4 && fired[1] == 1 && fired[2] == 3 && fired[3] == 2
            && fired[4] == 0,
        "in deadline order, ties in arming order (%d %d %d %d %d)", fired[0],
        fired[1], fired[2], fired[3], fired[4]);
    ok (fired_at[4] - t0 >= 30000000,
        "the 30 ms one fired after >= 30 ms (%.3f)", (fired_at[4] - t0) / 1e6);
    ok (timerq_count (tq) == 0 && !tq_entry_armed (&it[0].e),
        "nothing armed afterwards");
}

static void test_rearm_disarm (void)
{
    struct item a = {.id = 1}, b = {.id = 2}, c = {.id = 3};

    nfired = 0;
    tq_entry_init (&a.e, cb);
    tq_entry_init (&b.e, cb);
    tq_entry_init (&c.e, cb);
    timerq_arm (tq, &a.e, 0.001);
    timerq_arm (tq, &b.e, 0.002);
    timerq_arm (tq, &c.e, 0.003);
    ok (timerq_arm (tq, &a.e, 0.01) == 0, "re-arm a later");
    timerq_disarm (tq, &b.e);
    ok (!tq_entry_armed (&b.e) && timerq_count (tq) == 2, "b disarmed");
    timerq_disarm (tq, &b.e);
    pass ("disarming twice is harmless");
    run ();
    ok (nfired == 2 && fired[0] == 3 && fired[1] == 1,
        "c then a fired, b did not");

    errno = 0;
    ok (timerq_arm (tq, &a.e, -1.) < 0 && errno == EINVAL,
        "negative delay: EINVAL");
    ok (timerq_arm (tq, &a.e, NAN) < 0 && errno == EINVAL, "NaN: EINVAL");
    ok (timerq_arm (tq, &a.e, INFINITY) < 0 && errno == EINVAL,
        "infinity: EINVAL");
    ok (!tq_entry_armed (&a.e), "a failed arm leaves the entry unarmed");
}

static void test_self_rearm (void)
{
    struct item a = {.id = 7, .rearm = 3};

    nfired = 0;
    tq_entry_init (&a.e, cb);
    timerq_arm (tq, &a.e, 0.);
    run ();
    ok (nfired == 4, "an entry re-arming itself with 0 fires once per pass"
                     " (4 passes)");
}

static void test_random (void)
{
    enum { N = 2000 };
    static struct item it[N];
    bool inorder = true;

    nfired = 0;
    srand (42);
    for (int i = 0; i < N; i++) {
        it[i].id = i;
        it[i].rearm = 0;
        tq_entry_init (&it[i].e, cb);
        timerq_arm (tq, &it[i].e, (rand () % 40) / 1000.);
    }
    /* disarm every third, re-arm every fifth */
    for (int i = 0; i < N; i += 3)
        timerq_disarm (tq, &it[i].e);
    for (int i = 0; i < N; i += 5)
        timerq_arm (tq, &it[i].e, (rand () % 40) / 1000.);
    size_t expect = timerq_count (tq);
    run ();
    ok ((size_t)nfired == expect, "every armed entry fired once (%d)", nfired);
    for (int i = 1; i < nfired; i++) {
        if (it[fired[i]].e.deadline < it[fired[i - 1]].e.deadline)
            inorder = false;
    }
    ok (inorder, "in deadline order");
}

/* Delays under a millisecond count from the call, to the nanosecond: none
 * fires early (on the loop's cached millisecond clock, a delay of 0.9 ms
 * could end at once), and the queue keeps no loop alive once empty (the
 * uv_run below returns). */
static struct {
    struct tq_entry e;
    uint64_t armed, delay_ns, fired;
} sub[50];

static void sub_cb (struct tq_entry *e)
{
    for (size_t i = 0; i < sizeof (sub) / sizeof (sub[0]); i++) {
        if (&sub[i].e == e)
            sub[i].fired = uv_hrtime ();
    }
}

static void test_submillisecond (void)
{
    int early = 0, unfired = 0;

    for (int i = 0; i < 50; i++) {
        double delay = 0.0001 + 0.00002 * i; /* 0.1 to 1.08 ms */
        tq_entry_init (&sub[i].e, sub_cb);
        sub[i].delay_ns = (uint64_t)(delay * 1e9);
        sub[i].fired = 0;
        sub[i].armed = uv_hrtime ();
        if (timerq_arm (tq, &sub[i].e, delay) < 0)
            BAIL_OUT ("timerq_arm");
        /* spread the arming over the millisecond */
        for (uint64_t t = uv_hrtime (); uv_hrtime () - t < 20000;)
            ;
    }
    run ();
    for (int i = 0; i < 50; i++) {
        if (!sub[i].fired)
            unfired++;
        else if (sub[i].fired - sub[i].armed < sub[i].delay_ns)
            early++;
    }
    ok (unfired == 0 && early == 0,
        "50 delays of 0.1 to 1.08 ms: all fired, none early (%d early)", early);
    ok (timerq_count (tq) == 0, "the queue is empty");
}

int main (int argc, char **argv)
{
    plan (NO_PLAN);
    uv_loop_init (&loop);
    if (!(tq = timerq_create (&loop)))
        BAIL_OUT ("timerq_create");
    errno = 0;
    ok (timerq_create (NULL) == NULL && errno == EINVAL,
        "timerq_create (NULL): EINVAL");
    test_order ();
    test_rearm_disarm ();
    test_self_rearm ();
    test_random ();
    test_submillisecond ();
    timerq_destroy (tq);
    timerq_destroy (NULL);
    uv_run (&loop, UV_RUN_DEFAULT);
    ok (uv_loop_close (&loop) == 0, "loop closes: the timer was closed");
    done_testing ();
    return 0;
}
