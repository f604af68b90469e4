/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Unit tests for generic futures, composites and chains (no handle). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libflux/flux.h"
#include "tap.h"

static int calls;
static const char *last_value;
static int last_errno;

static void count_cb (flux_future_t *f, void *arg)
{
    const void *v = NULL;
    calls++;
    last_errno = 0;
    if (flux_future_get (f, &v) < 0)
        last_errno = errno;
    last_value = v;
    flux_future_reset (f);
}

static void test_basic (flux_reactor_t *r)
{
    flux_future_t *f;
    const void *v;

    ok ((f = flux_future_create (NULL, NULL)) != NULL, "future_create works");
    ok (!flux_future_is_ready (f), "new future is not ready");
    flux_future_fulfill (f, "hello", NULL);
    ok (flux_future_is_ready (f), "fulfilled future is ready");
    ok (flux_future_get (f, &v) == 0 && !strcmp (v, "hello"),
        "get returns the value");
    flux_future_fulfill (f, "second", NULL);
    flux_future_reset (f);
    ok (flux_future_is_ready (f), "reset exposes the queued second result");
    ok (flux_future_get (f, &v) == 0 && !strcmp (v, "second"),
        "get returns the second value");
    flux_future_reset (f);
    ok (!flux_future_is_ready (f), "reset of the last result: not ready");
    flux_future_fulfill_error (f, ENOENT, "no such thing");
    errno = 0;
    ok (flux_future_get (f, NULL) < 0 && errno == ENOENT,
        "an error result fails get with its errnum");
    is (flux_future_error_string (f), "no such thing", "error string is kept");
    is (future_strerror (f, ENOENT), "no such thing",
        "future_strerror prefers the error string");
    flux_future_reset (f);
    flux_future_fulfill_error (f, EPERM, NULL);
    ok (flux_future_error_string (f) == NULL, "no error string: NULL");
    is (future_strerror (f, EPERM), strerror (EPERM),
        "future_strerror falls back to strerror");
    flux_future_destroy (f);

    /* value ownership */
    f = flux_future_create (NULL, NULL);
    flux_future_fulfill (f, strdup ("owned"), free);
    flux_future_fulfill (f, strdup ("owned2"), free);
    flux_future_destroy (f); /* valgrind/ASAN check the frees */
    pass ("destroy frees current and queued results");

    /* then() never calls back synchronously */
    f = flux_future_create (NULL, NULL);
    flux_future_set_reactor (f, r);
    flux_future_fulfill (f, "a", NULL);
    calls = 0;
    ok (flux_future_then (f, -1, count_cb, NULL) == 0, "then works");
    ok (calls == 0, "then on a ready future does not call back at once");
    flux_future_fulfill (f, "b", NULL);
    flux_future_fulfill (f, "c", NULL);
    ok (flux_reactor_run (r, 0) == 0, "reactor runs");
    ok (calls == 3 && !strcmp (last_value, "c"),
        "continuation ran once per result, in order (calls=%d)", calls);
    flux_future_destroy (f);

    errno = 0;
    f = flux_future_create (NULL, NULL);
    ok (flux_future_then (f, -1, count_cb, NULL) < 0 && errno == EINVAL,
        "then without a reactor fails with EINVAL");
    ok (flux_future_wait_for (f, 0.01) < 0 && errno == EDEADLK,
        "wait_for on a future nothing can fulfill fails with EDEADLK");
    flux_future_destroy (f);
}

static void timeout_cb (flux_future_t *f, void *arg)
{
    calls++;
    last_errno = 0;
    if (flux_future_get (f, NULL) < 0)
        last_errno = errno;
    flux_future_destroy (f);
}

static void test_timeout (flux_reactor_t *r)
{
    flux_future_t *f = flux_future_create (NULL, NULL);

    flux_future_set_reactor (f, r);
    calls = 0;
    ok (flux_future_then (f, 0.01, timeout_cb, NULL) == 0,
        "then with a timeout works");
    flux_reactor_run (r, 0);
    ok (calls == 1 && last_errno == ETIMEDOUT,
        "an unfulfilled future times out with ETIMEDOUT");
}

static void init_fulfill (flux_future_t *f, void *arg)
{
    int *count = arg;
    (*count)++;
    flux_future_fulfill (f, "from init", NULL);
}

static void test_init (flux_reactor_t *r)
{
    int count = 0;
    flux_future_t *f = flux_future_create (init_fulfill, &count);
    const void *v;

    ok (count == 0, "init is not called at create");
    ok (flux_future_get (f, &v) == 0 && !strcmp (v, "from init"),
        "get calls init, which fulfills");
    flux_future_get (f, NULL);
    ok (count == 1, "init is called only once");
    flux_future_destroy (f);
}

/* A future fulfilled from a timer: exercises generic wait_for. */
static void fulfill_timer_cb (uv_timer_t *t)
{
    flux_future_fulfill (t->data, "late", NULL);
    uv_close ((uv_handle_t *)t, (uv_close_cb)free);
}

static uv_timer_t *last_timer;

static void init_timer (flux_future_t *f, void *arg)
{
    flux_reactor_t *r = flux_future_get_reactor (f);
    uv_timer_t *t = calloc (1, sizeof (*t));
    last_timer = t;
    uv_timer_init (flux_reactor_uv (r), t);
    t->data = f;
    uv_timer_start (t, fulfill_timer_cb, *(int *)arg, 0);
}

static void test_generic_wait (flux_reactor_t *r)
{
    int ms = 5;
    flux_future_t *f = flux_future_create (init_timer, &ms);
    const void *v;

    flux_future_set_reactor (f, r);
    ok (flux_future_wait_for (f, 5.0) == 0, "wait_for runs the reactor");
    ok (flux_future_get (f, &v) == 0 && !strcmp (v, "late"),
        "and the timer fulfilled it");
    flux_future_destroy (f);

    ms = 2000;
    f = flux_future_create (init_timer, &ms);
    flux_future_set_reactor (f, r);
    errno = 0;
    ok (flux_future_wait_for (f, 0.02) < 0 && errno == ETIMEDOUT,
        "wait_for times out with ETIMEDOUT");
    ok (!flux_future_is_ready (f), "timing out does not fulfill the future");
    flux_future_destroy (f);
    /* the 2s timer still points at f: close it */
    uv_close ((uv_handle_t *)last_timer, (uv_close_cb)free);
    flux_reactor_run (r, FLUX_REACTOR_NOWAIT);
}

static void composite_cb (flux_future_t *f, void *arg)
{
    calls++;
    flux_future_destroy (f);
}

static void test_composite (flux_reactor_t *r)
{
    flux_future_t *all, *any, *a, *b;
    const char *name;
    int n;

    all = flux_future_wait_all_create ();
    a = flux_future_create (NULL, NULL);
    b = flux_future_create (NULL, NULL);
    ok (flux_future_push (all, "a", a) == 0
            && flux_future_push (all, "b", b) == 0,
        "push two children");
    errno = 0;
    ok (flux_future_push (all, "a", a) < 0 && errno == EEXIST,
        "pushing a duplicate name fails with EEXIST");
    ok (flux_future_get_child (all, "b") == b, "get_child finds b");
    for (n = 0, name = flux_future_first_child (all); name;
         name = flux_future_next_child (all))
        n++;
    ok (n == 2, "child iteration visits both");
    flux_future_set_reactor (all, r);
    calls = 0;
    ok (flux_future_then (all, -1, composite_cb, NULL) == 0,
        "then on wait_all");
    flux_future_fulfill (a, NULL, NULL);
    flux_reactor_run (r, FLUX_REACTOR_NOWAIT);
    flux_reactor_run (r, FLUX_REACTOR_NOWAIT);
    ok (calls == 0, "wait_all is not ready with one child of two");
    flux_future_fulfill_error (b, EIO, NULL);
    flux_reactor_run (r, 0);
    ok (calls == 1, "wait_all is ready once both are (errors count)");

    any = flux_future_wait_any_create ();
    a = flux_future_create (NULL, NULL);
    b = flux_future_create (NULL, NULL);
    flux_future_push (any, "a", a);
    flux_future_push (any, "b", b);
    flux_future_fulfill (b, NULL, NULL);
    ok (flux_future_wait_for (any, 1.0) == 0, "wait_any: sync wait works");
    ok (flux_future_is_ready (any), "wait_any is ready with one of two");
    flux_future_destroy (any);

    errno = 0;
    ok (flux_future_push (NULL, "x", NULL) < 0 && errno == EINVAL,
        "push with bad args fails with EINVAL");
}

static void step2 (flux_future_t *prev, void *arg)
{
    const void *v;
    flux_future_t *f2 = flux_future_create (NULL, NULL);
    flux_future_get (prev, &v);
    flux_future_set_reactor (f2, arg);
    flux_future_fulfill (f2, strcmp (v, "one") == 0 ? "two" : "bad", NULL);
    flux_future_continue (prev, f2);
}

static void recover (flux_future_t *prev, void *arg)
{
    flux_future_continue_error (prev, EAGAIN, "recovered to EAGAIN");
}

static void chain_done (flux_future_t *f, void *arg)
{
    const void *v = NULL;
    calls++;
    last_errno = 0;
    if (flux_future_get (f, &v) < 0)
        last_errno = errno;
    last_value = v;
    flux_future_destroy (f);
}

static void test_chain (flux_reactor_t *r)
{
    flux_future_t *prev, *next;
    const void *v;

    /* async */
    prev = flux_future_create (NULL, NULL);
    flux_future_set_reactor (prev, r);
    ok ((next = flux_future_and_then (prev, step2, r)) != NULL,
        "and_then returns a future");
    ok (flux_future_or_then (prev, recover, NULL) == next,
        "or_then on the same prev returns the same next");
    flux_future_set_reactor (next, r);
    calls = 0;
    flux_future_then (next, -1, chain_done, NULL);
    flux_future_fulfill (prev, "one", NULL);
    flux_reactor_run (r, 0);
    ok (calls == 1 && last_value && !strcmp (last_value, "two"),
        "chained result arrives through the continuation");

    /* async, error path through or_then */
    prev = flux_future_create (NULL, NULL);
    flux_future_set_reactor (prev, r);
    next = flux_future_and_then (prev, step2, r);
    flux_future_or_then (prev, recover, NULL);
    flux_future_set_reactor (next, r);
    calls = 0;
    flux_future_then (next, -1, chain_done, NULL);
    flux_future_fulfill_error (prev, ENOENT, NULL);
    flux_reactor_run (r, 0);
    ok (calls == 1 && last_errno == EAGAIN, "or_then turned the error");

    /* error with no or_then: passes through */
    prev = flux_future_create (NULL, NULL);
    next = flux_future_and_then (prev, step2, r);
    flux_future_fulfill_error (prev, ENOENT, "gone");
    errno = 0;
    ok (flux_future_get (next, NULL) < 0 && errno == ENOENT,
        "without or_then the error passes through (sync)");
    is (flux_future_error_string (next), "gone", "with its text");
    flux_future_destroy (next);

    /* sync */
    prev = flux_future_create (NULL, NULL);
    next = flux_future_and_then (prev, step2, r);
    flux_future_fulfill (prev, "one", NULL);
    ok (flux_future_get (next, &v) == 0 && !strcmp (v, "two"),
        "chain works synchronously with get");
    flux_future_destroy (next);
}

int main (int argc, char *argv[])
{
    flux_reactor_t *r;

    plan (NO_PLAN);
    if (!(r = flux_reactor_create (0)))
        BAIL_OUT ("reactor_create failed");
    test_basic (r);
    test_timeout (r);
    test_init (r);
    test_generic_wait (r);
    test_composite (r);
    test_chain (r);
    flux_reactor_destroy (r);
    done_testing ();
}
