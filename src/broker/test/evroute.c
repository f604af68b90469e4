/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Unit tests for evroute: keys of subscriptions, counts per holder and
 * their 0 <-> 1 transitions, which child wants which topic, a lost
 * child's keys, and requests held until their registration is acked.
 */
#include "config.h"
#include <stdio.h>
#include <string.h>

#include "broker/evroute.h"
#include "tap.h"

static const char *key_of (const char *sub)
{
    static char key[256];
    return evroute_key (sub, key, sizeof (key)) ? key : "(none)";
}

static void test_keys (void)
{
    char small[20];

    is (key_of (""), "kvs.namespace-", "the empty prefix: all routed events");
    is (key_of ("kvs."), "kvs.namespace-", "a prefix of the class: all");
    is (key_of ("kvs.namespace-"), "kvs.namespace-", "the class itself");
    is (key_of ("kvs.namespace-job-12-"), "kvs.namespace-job-12-",
        "a namespace's prefix is its own key");
    is (key_of ("kvs.namespace-job-12-setroot"), "kvs.namespace-job-12-",
        "a whole topic: its namespace's key");
    is (key_of ("kvs.namespace-job-1"), "kvs.namespace-job-",
        "a partial name: cut after its last dash (more, never less)");
    is (key_of ("heartbeat.pulse"), "(none)", "another topic: no key");
    is (key_of ("kvs.setroot"), "(none)", "kvs. but not namespace-: no key");
    ok (evroute_key ("kvs.namespace-a-very-long-name-", small, sizeof (small))
            && !strcmp (small, "kvs.namespace-"),
        "a key too long for the buffer: the whole class");
    ok (evroute_routed ("kvs.namespace-primary-setroot")
            && !evroute_routed ("kvs.namespac")
            && !evroute_routed ("heartbeat.pulse"),
        "only kvs.namespace-* topics are routed");
}

static void test_counts (void)
{
    struct evroute *r = evroute_create (2);
    const char *k = "kvs.namespace-job-1-";

    ok (r != NULL, "evroute_create (2 children)");
    ok (!evroute_wanted (r, 0, "kvs.namespace-job-1-setroot"),
        "no subscription: a child wants nothing");
    cmp_ok (evroute_ref (r, -1, k), "==", 1, "first local holder: 0 -> 1");
    cmp_ok (evroute_ref (r, 0, k), "==", 0, "a child as second holder: 0");
    cmp_ok (evroute_ref (r, 0, k), "==", 0, "the same child again: 0");
    ok (evroute_wanted (r, 0, "kvs.namespace-job-1-setroot"),
        "child 0 wants its namespace's setroot");
    ok (!evroute_wanted (r, 0, "kvs.namespace-job-12-setroot"),
        "... not another namespace whose name it prefixes");
    ok (!evroute_wanted (r, 1, "kvs.namespace-job-1-setroot"),
        "child 1 wants nothing");
    ok (!evroute_wanted (r, 2, "kvs.namespace-job-1-setroot")
            && !evroute_wanted (r, -1, "kvs.namespace-job-1-setroot"),
        "an index out of range wants nothing");
    cmp_ok (evroute_unref (r, 1, k), "==", 0,
            "a child that holds nothing cannot drop the count");
    cmp_ok (evroute_unref (r, -1, k), "==", 0, "local holder gone: still 2");
    cmp_ok (evroute_unref (r, 0, k), "==", 0, "child 0 once: still 1");
    ok (evroute_wanted (r, 0, "kvs.namespace-job-1-removed"),
        "child 0 still wants it");
    cmp_ok (evroute_unref (r, 0, k), "==", -1, "child 0 again: 1 -> 0");
    ok (!evroute_wanted (r, 0, "kvs.namespace-job-1-removed"),
        "child 0 no longer wants it");
    cmp_ok ((long long)evroute_count (r), "==", 0, "no key left");

    cmp_ok (evroute_ref (r, 1, "kvs.namespace-"), "==", 1,
            "child 1 takes everything: 0 -> 1");
    ok (evroute_wanted (r, 1, "kvs.namespace-primary-setroot")
            && evroute_wanted (r, 1, "kvs.namespace-job-9-created"),
        "child 1 wants every routed topic");
    evroute_destroy (r);
}

static int dropped_n;
static void dropped (const char *key, void *arg)
{
    (void)arg;
    diag ("dropped %s", key);
    dropped_n++;
}

static void test_child_clear (void)
{
    struct evroute *r = evroute_create (2);

    (void)evroute_ref (r, 0, "kvs.namespace-a-");
    (void)evroute_ref (r, 0, "kvs.namespace-a-");
    (void)evroute_ref (r, 0, "kvs.namespace-b-");
    (void)evroute_ref (r, 1, "kvs.namespace-b-");
    evroute_child_clear (r, 0, dropped, NULL);
    cmp_ok (dropped_n, "==", 1, "a lost child's keys: one left no holder");
    ok (!evroute_wanted (r, 0, "kvs.namespace-b-setroot")
            && evroute_wanted (r, 1, "kvs.namespace-b-setroot"),
        "the lost child wants nothing, the other keeps its key");
    cmp_ok (evroute_unref (r, 1, "kvs.namespace-b-"), "==", -1,
            "the other child's drop: 1 -> 0");
    evroute_destroy (r);
}

static int released;
static void release (const flux_msg_t *req, void *arg)
{
    (void)req;
    (void)arg;
    released++;
}

static void test_hold (void)
{
    struct evroute *r = evroute_create (1);
    const char *k = "kvs.namespace-x-";
    flux_msg_t *a = flux_request_encode ("event.subscribe", NULL);
    flux_msg_t *b = flux_request_encode ("event.subscribe", NULL);

    cmp_ok (evroute_hold (r, k, a), "==", 0, "nothing pending: answer now");
    (void)evroute_ref (r, -1, k);
    evroute_pending (r, k);
    cmp_ok (evroute_hold (r, k, a), "==", 1, "a registration pending: held");
    (void)evroute_unref (r, -1, k); /* gone before the ack */
    (void)evroute_ref (r, -1, k);
    evroute_pending (r, k); /* registered again */
    cmp_ok (evroute_hold (r, k, b), "==", 1, "a second request: held");
    evroute_acked (r, k, release, NULL);
    cmp_ok (released, "==", 0, "first ack: one registration still pending");
    evroute_acked (r, k, release, NULL);
    cmp_ok (released, "==", 2, "second ack: both requests answered");
    evroute_acked (r, k, release, NULL);
    cmp_ok (released, "==", 2, "an ack too many does nothing");
    cmp_ok ((long long)evroute_count (r), "==", 1, "the key is still held");

    /* destroy frees what it still holds (valgrind/ASAN check it) */
    evroute_pending (r, k);
    (void)evroute_hold (r, k, a);
    flux_msg_decref (a);
    flux_msg_decref (b);
    evroute_destroy (r);
    pass ("destroy with a request held");
}

int main (void)
{
    plan (NO_PLAN);
    test_keys ();
    test_counts ();
    test_child_clear ();
    test_hold ();
    done_testing ();
    return 0;
}
