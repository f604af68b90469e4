/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/waitlist.c - items refused by a service wait, and are resent in
 * order on its online event; a refusal seen after the event is resent at
 * once; cancelled items are never resent. */
#include <stdio.h>
#include <string.h>

#include "libflux/waitlist.h"
#include "tap.h"

struct job {
    int id;
    struct waitlist_item wi;
    int sent;
    bool refuse_again; /* the resend is refused again, at once */
};

static char order[64]; /* ids resent, in order */

static void send_job (struct waitlist *wl, struct job *j)
{
    j->sent++;
    waitlist_sent (wl, &j->wi);
}

static void resend_cb (struct waitlist *wl, struct waitlist_item *it, void *arg)
{
    struct job *j = waitlist_entry (it, struct job, wi);
    int *calls = arg;
    size_t len = strlen (order);

    (*calls)++;
    snprintf (order + len, sizeof (order) - len, "%d", j->id);
    send_job (wl, j);
    if (j->refuse_again) {
        j->refuse_again = false;
        (void)waitlist_refused (wl, &j->wi);
    }
}

static void test_basic (void)
{
    struct waitlist wl;
    struct job j[4];
    int calls = 0;

    waitlist_init (&wl, resend_cb, &calls);
    for (int i = 0; i < 4; i++) {
        memset (&j[i], 0, sizeof (j[i]));
        j[i].id = i;
        waitlist_item_init (&j[i].wi);
        send_job (&wl, &j[i]);
    }
    ok (waitlist_count (&wl) == 0 && waitlist_first (&wl) == NULL,
        "an empty waitlist has no first item");
    ok (!waitlist_refused (&wl, &j[2].wi) && !waitlist_refused (&wl, &j[0].wi)
            && !waitlist_refused (&wl, &j[3].wi),
        "items refused before any online event wait");
    ok (waitlist_count (&wl) == 3 && waitlist_waiting (&j[2].wi)
            && !waitlist_waiting (&j[1].wi),
        "three wait, one does not");
    ok (waitlist_first (&wl) == &j[2].wi,
        "the first is the one that has waited the longest");
    waitlist_cancel (&wl, &j[0].wi);
    waitlist_cancel (&wl, &j[0].wi);
    waitlist_cancel (&wl, &j[1].wi);
    ok (waitlist_count (&wl) == 2 && !waitlist_waiting (&j[0].wi),
        "cancel takes an item off (twice, or not waiting: no harm)");
    ok (calls == 0, "nothing is resent before the online event");
    waitlist_online (&wl);
    ok (calls == 2 && !strcmp (order, "23"),
        "the online event resends the waiting items in order (%s)", order);
    ok (waitlist_count (&wl) == 0 && j[0].sent == 1,
        "none waits, the cancelled one was not resent");
    waitlist_online (&wl);
    ok (calls == 2, "a second event resends nothing");
}

static void test_event_first (void)
{
    struct waitlist wl;
    struct job a = {.id = 1}, b = {.id = 2};
    int calls = 0;

    order[0] = '\0';
    waitlist_init (&wl, resend_cb, &calls);
    waitlist_item_init (&a.wi);
    waitlist_item_init (&b.wi);
    send_job (&wl, &a);
    waitlist_online (&wl); /* handled before a's refusal */
    send_job (&wl, &b);
    ok (waitlist_refused (&wl, &a.wi) && calls == 1 && a.sent == 2,
        "refused after an event that came since it was sent: resent at once");
    ok (!waitlist_refused (&wl, &b.wi) && waitlist_waiting (&b.wi),
        "sent after the event and refused: it waits");
    waitlist_online (&wl);
    ok (calls == 2 && b.sent == 2 && !waitlist_waiting (&b.wi),
        "and goes on the next event");
}

static void test_refused_again (void)
{
    struct waitlist wl;
    struct job a = {.id = 1, .refuse_again = true}, b = {.id = 2};
    int calls = 0;

    order[0] = '\0';
    waitlist_init (&wl, resend_cb, &calls);
    waitlist_item_init (&a.wi);
    waitlist_item_init (&b.wi);
    send_job (&wl, &a);
    send_job (&wl, &b);
    (void)waitlist_refused (&wl, &a.wi);
    (void)waitlist_refused (&wl, &b.wi);
    waitlist_online (&wl);
    ok (calls == 2 && !strcmp (order, "12"),
        "an item refused again during the walk is not resent in it (%s)",
        order);
    ok (waitlist_count (&wl) == 1 && waitlist_first (&wl) == &a.wi,
        "it waits for the next event");
    waitlist_online (&wl);
    ok (calls == 3 && a.sent == 3 && waitlist_count (&wl) == 0,
        "which resends it");
}

int main (int argc, char **argv)
{
    plan (NO_PLAN);
    test_basic ();
    test_event_first ();
    test_refused_again ();
    done_testing ();
    return 0;
}
