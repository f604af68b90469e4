/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/journal.c - the resource journal and held request lists, over
 * loop:// (every response comes back to flux_recv). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "journal.h"
#include "libeventlog/eventlog.h"
#include "reqlist.h"
#include "tap.h"

static flux_msg_t *request (const char *topic, const char *payload,
                            bool streaming, uint32_t tag, const char *sender)
{
    flux_msg_t *msg = flux_request_encode (topic, payload);
    struct flux_msg_cred cred = {1000, FLUX_ROLE_USER};

    if (!msg || (streaming && flux_msg_set_streaming (msg) < 0)
        || flux_msg_set_matchtag (msg, tag) < 0
        || flux_msg_route_push (msg, sender) < 0
        || flux_msg_set_cred (msg, cred) < 0)
        BAIL_OUT ("cannot build a request");
    return msg;
}

/* The next response: its errnum (0 on success) and payload (a new ref). */
static int next_response (flux_t *h, json_t **payload)
{
    flux_msg_t *msg = flux_recv (h, FLUX_O_NONBLOCK);
    const char *s = NULL;
    int errnum = 0;

    *payload = NULL;
    if (!msg)
        return -1;
    (void)flux_msg_get_errnum (msg, &errnum);
    if (errnum == 0 && flux_response_decode (msg, NULL, &s) == 0 && s)
        *payload = json_loads (s, 0, NULL);
    flux_msg_decref (msg);
    return errnum;
}

static json_t *event (const char *name, double ts)
{
    return eventlog_entry_pack (ts, name, "{s:s}", "idset", "0");
}

static void append (struct journal *j, const char *name, double ts, json_t *R)
{
    json_t *e = event (name, ts);
    if (journal_append (j, e, R) < 0)
        BAIL_OUT ("journal_append failed");
    json_decref (e);
}

static const char *event_name (json_t *o, size_t i)
{
    return json_string_value (json_object_get (
        json_array_get (json_object_get (o, "events"), i), "name"));
}

static void test_journal (flux_t *h)
{
    struct journal *j = journal_create (h, 3);
    json_t *R = json_pack ("{s:i}", "version", 1), *o;
    flux_msg_t *req, *req2, *cancel;

    ok (j != NULL, "journal_create works");
    append (j, "restart", 1., NULL);
    append (j, "resource-define", 2., R);
    ok (journal_count (j) == 2, "2 events held");

    req = request ("resource.journal", NULL, true, 7, "c1");
    journal_request (j, req);
    ok (next_response (h, &o) == 0
            && json_array_size (json_object_get (o, "events")) == 2,
        "the backlog comes in one response");
    ok (json_equal (json_object_get (o, "R"), R),
        "with R, as it holds resource-define");
    json_decref (o);
    ok (next_response (h, &o) == 0
            && json_array_size (json_object_get (o, "events")) == 0,
        "then the sentinel");
    json_decref (o);
    ok (journal_streams (j) == 1, "one stream open");

    append (j, "online", 3., NULL);
    ok (next_response (h, &o) == 0 && !strcmp (event_name (o, 0), "online")
            && !json_object_get (o, "R"),
        "a new event is streamed");
    json_decref (o);

    append (j, "offline", 4., NULL); /* drops restart */
    (void)next_response (h, &o);
    json_decref (o);
    append (j, "online", 5., NULL); /* drops resource-define */
    (void)next_response (h, &o);
    json_decref (o);

    req2 = request ("resource.journal", "{}", true, 8, "c2");
    journal_request (j, req2);
    ok (next_response (h, &o) == 0 && !strcmp (event_name (o, 0), "truncate")
            && json_number_value (json_object_get (
                   json_array_get (json_object_get (o, "events"), 0),
                   "timestamp"))
                   == 2.
            && json_array_size (json_object_get (o, "events")) == 4
            && !json_object_get (o, "R"),
        "a truncated backlog starts with truncate (ts of the last dropped)");
    json_decref (o);
    (void)next_response (h, &o);
    json_decref (o);
    ok (journal_streams (j) == 2, "two streams open");

    cancel = request ("resource.journal-cancel", "{\"matchtag\":8}", false, 0,
                      "c1");
    journal_cancel (j, cancel);
    ok (journal_streams (j) == 2, "a cancel from another sender does nothing");
    flux_msg_decref (cancel);
    cancel = request ("resource.journal-cancel", "{\"matchtag\":8}", false, 0,
                      "c2");
    journal_cancel (j, cancel);
    ok (next_response (h, &o) == ENODATA && journal_streams (j) == 1,
        "cancel ends the stream with ENODATA");
    flux_msg_decref (cancel);

    cancel = request ("resource.disconnect", NULL, false, 0, "c1");
    journal_disconnect (j, cancel);
    ok (journal_streams (j) == 0, "disconnect drops the sender's stream");
    flux_msg_decref (cancel);
    append (j, "online", 6., NULL);
    ok (next_response (h, &o) < 0, "nothing is sent to nobody");

    flux_msg_decref (req2);
    req2 = request ("resource.journal", NULL, false, 9, "c3");
    journal_request (j, req2);
    ok (next_response (h, &o) == EPROTO, "a non-streaming request is EPROTO");
    flux_msg_decref (req2);
    req2 = request ("resource.journal", "{\"x\":1}", true, 9, "c3");
    journal_request (j, req2);
    ok (next_response (h, &o) == EPROTO, "a payload with keys is EPROTO");
    flux_msg_decref (req2);

    flux_msg_decref (req);
    json_decref (R);
    journal_destroy (j);
}

static bool count_cb (const flux_msg_t *msg, void *arg)
{
    (*(int *)arg)++;
    return false;
}

static void test_reqlist (flux_t *h)
{
    struct reqlist *l = reqlist_create (2);
    flux_msg_t *a = request ("x.y", NULL, true, 1, "s1");
    flux_msg_t *b = request ("x.y", NULL, true, 2, "s2");
    flux_msg_t *c = request ("x.y", NULL, true, 3, "s3");
    flux_msg_t *bad = request ("x.cancel", "{\"tag\":1}", false, 0, "s1");
    json_t *o;
    int n = 0;

    ok (reqlist_add (l, a) == 0 && reqlist_add (l, b) == 0,
        "two requests held");
    errno = 0;
    ok (reqlist_add (l, c) < 0 && errno == EAGAIN, "a third is EAGAIN");
    reqlist_foreach (l, count_cb, &n);
    ok (n == 2, "foreach visits both");
    errno = 0;
    ok (reqlist_cancel (l, bad) == NULL && errno == EPROTO,
        "a malformed cancel is EPROTO");
    reqlist_fail_all (l, h, EIO, "gone");
    ok (next_response (h, &o) == EIO && next_response (h, &o) == EIO
            && reqlist_count (l) == 0,
        "fail_all answers each and empties the list");
    reqlist_destroy (l);
    flux_msg_decref (a);
    flux_msg_decref (b);
    flux_msg_decref (c);
    flux_msg_decref (bad);
}

int main (int argc, char **argv)
{
    flux_t *h;

    plan (NO_PLAN);
    if (!(h = flux_open ("loop://", 0)))
        BAIL_OUT ("cannot open loop://");
    test_journal (h);
    test_reqlist (h);
    flux_close (h);
    done_testing ();
    return 0;
}
