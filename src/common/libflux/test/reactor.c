/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/reactor.c - flux_reactor_run_until: stops when done, or at the
 * timeout even when nothing else would wake the loop, or when the loop's
 * clock is stale and something else keeps the loop alive. */
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "libflux/reactor.h"
#include "libutil/monotime.h"
#include "tap.h"

static bool flag_set (void *arg)
{
    return *(bool *)arg;
}

static void nop_cb (uv_poll_t *p, int status, int events)
{
}

static void set_cb (uv_timer_t *t)
{
    *(bool *)t->data = true;
}

int main (int argc, char **argv)
{
    flux_reactor_t *r = flux_reactor_create (0);
    uv_timer_t t;
    bool flag = false;
    double t0;

    plan (NO_PLAN);
    if (!r)
        BAIL_OUT ("flux_reactor_create");

    t0 = monotime ();
    ok (!flux_reactor_run_until (r, flag_set, &flag, 0.2), "never done: false");
    ok (monotime () - t0 >= 0.19 && monotime () - t0 < 5.,
        "after the timeout, with nothing else to wake the loop (%.3f s)",
        monotime () - t0);

    uv_timer_init (flux_reactor_uv (r), &t);
    t.data = &flag;
    uv_timer_start (&t, set_cb, 50, 0);
    t0 = monotime ();
    ok (flux_reactor_run_until (r, flag_set, &flag, 10.), "done: true");
    ok (monotime () - t0 < 5., "as soon as it is done (%.3f s)",
        monotime () - t0);
    ok (flux_reactor_run_until (r, flag_set, &flag, 10.),
        "already done: true at once");
    uv_close ((uv_handle_t *)&t, NULL);

    /* An fd that never becomes readable keeps the loop alive; the loop's
     * clock goes stale while the caller works without running it.  The
     * timeout must still end the run (it once blocked for ever: the
     * timer, started on the stale clock, fired before the deadline). */
    {
        int fds[2];
        uv_poll_t poll;
        if (pipe (fds) < 0 || uv_poll_init (flux_reactor_uv (r), &poll, fds[0])
            || uv_poll_start (&poll, UV_READABLE, nop_cb) < 0)
            BAIL_OUT ("pipe and poll");
        alarm (20); /* a hang fails the test */
        for (int i = 0; i < 5; i++) {
            usleep (100000);
            flag = false;
            t0 = monotime ();
            if (flux_reactor_run_until (r, flag_set, &flag, 0.05)
                || monotime () - t0 > 5.)
                break;
        }
        ok (monotime () - t0 < 5.,
            "a stale clock: the run still ends at its timeout");
        alarm (0);
        uv_close ((uv_handle_t *)&poll, NULL);
        flux_reactor_run (r, FLUX_REACTOR_NOWAIT);
        close (fds[0]);
        close (fds[1]);
    }
    flux_reactor_destroy (r);
    done_testing ();
    return 0;
}
