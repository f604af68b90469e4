/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* testmod - a broker module for the tests: "<name>.hello" answers
 * {"name":<module name>,"args":[...]}; "<name>.fail" makes mod_main return
 * -1 (EIO).  With the argument "fail-init", mod_main fails before running;
 * with "stall-init=SECONDS", it sleeps that long first (a module stuck in
 * its initialisation).
 *
 * Module to module messages (the broker's fast path must keep a module's
 * messages in order):
 *   <name>.order {seq:i}  is recorded and answered {seq}
 *   <name>.order-get      -> {seqs:[the seq of each .order, in arrival
 *                            order]} and forgets them
 *   <name>.burst {service:s, count:i, streaming?:b}  sends count
 *                            requests (streaming ones if asked)
 *                            <service>.order {seq:0..count-1} at once and
 *                            answers {count, ok, errnum} when all have
 *                            answered: ok counts the responses that
 *                            echoed their seq, errnum is the first error
 *
 * Events: with the argument "subscribe=TOPIC" the module subscribes to
 * TOPIC and counts the events it receives:
 *   <name>.events           -> {count:i}
 *
 *   <name>.publish {count:i, size:i}  publishes count (<= 10000) events
 *                            "<name>.flood" of size bytes at once (raw
 *                            event messages: nothing answers them) and
 *                            answers {count}
 *
 * A module that does not stop (flux module remove --cancel):
 *   <name>.stall {seconds:f}  blocks the module's thread that long (no
 *                            message is handled meanwhile), then answers
 *                            {} (a late answer, if it was abandoned)
 */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "libflux/flux.h"

struct ctx {
    int argc;
    char **argv;
    const char *name;
    int failed;
    json_t *seqs;
    int events;
};

struct burst {
    const flux_msg_t *req;
    int count, pending, ok, errnum;
};

static void hello_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    struct ctx *c = arg;
    json_t *args = json_array ();
    int i;

    for (i = 0; args && i < c->argc; i++)
        json_array_append_new (args, json_string (c->argv[i]));
    flux_respond_pack (h, msg, "{s:s s:o}", "name", c->name, "args", args);
}

static void fail_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    struct ctx *c = arg;
    c->failed = 1;
    flux_respond (h, msg, NULL);
    flux_reactor_stop (flux_get_reactor (h));
}

static void order_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    struct ctx *c = arg;
    int seq;

    if (flux_request_unpack (msg, NULL, "{s:i}", "seq", &seq) < 0) {
        flux_respond_error (h, msg, EPROTO, NULL);
        return;
    }
    json_array_append_new (c->seqs, json_integer (seq));
    flux_respond_pack (h, msg, "{s:i}", "seq", seq);
}

static void order_get_cb (flux_t *h, flux_msg_handler_t *mh,
                          const flux_msg_t *msg, void *arg)
{
    struct ctx *c = arg;

    flux_respond_pack (h, msg, "{s:O}", "seqs", c->seqs);
    json_array_clear (c->seqs);
}

static void burst_continuation (flux_future_t *f, void *arg)
{
    struct burst *b = arg;
    int seq;

    if (flux_rpc_get_unpack (f, "{s:i}", "seq", &seq) < 0) {
        if (!b->errnum)
            b->errnum = errno;
    }
    else if (seq == (int)(intptr_t)flux_future_aux_get (f, "seq"))
        b->ok++;
    if (--b->pending == 0) {
        flux_respond_pack (flux_future_get_flux (f), b->req, "{s:i s:i s:i}",
                           "count", b->count, "ok", b->ok, "errnum", b->errnum);
        flux_msg_decref (b->req);
        free (b);
    }
    flux_future_destroy (f);
}

static void burst_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    const char *service;
    char topic[128];
    struct burst *b;
    int count, i, streaming = 0;

    if (flux_request_unpack (msg, NULL, "{s:s s:i s?b}", "service", &service,
                             "count", &count, "streaming", &streaming)
            < 0
        || count < 1 || !(b = calloc (1, sizeof (*b)))) {
        flux_respond_error (h, msg, EPROTO, NULL);
        return;
    }
    b->req = flux_msg_incref (msg);
    b->count = count;
    snprintf (topic, sizeof (topic), "%s.order", service);
    for (i = 0; i < count; i++) {
        flux_future_t *f = flux_rpc_pack (h, topic, FLUX_NODEID_ANY,
                                          streaming ? FLUX_RPC_STREAMING : 0,
                                          "{s:i}", "seq", i);
        if (!f || flux_future_aux_set (f, "seq", (void *)(intptr_t)i, NULL) < 0
            || flux_future_then (f, -1., burst_continuation, b) < 0) {
            flux_future_destroy (f);
            if (!b->errnum)
                b->errnum = errno ? errno : ENOMEM;
            continue;
        }
        b->pending++;
    }
    if (b->pending == 0) {
        flux_respond_error (h, msg, b->errnum, "no request could be sent");
        flux_msg_decref (b->req);
        free (b);
    }
}

/* The events are all encoded first, then sent back to back: the sends
 * outrun the broker's thread even when encoding is slow (a sanitizer
 * build), which is what the recvq test needs.
 */
static void publish_cb (flux_t *h, flux_msg_handler_t *mh,
                        const flux_msg_t *msg, void *arg)
{
    struct ctx *c = arg;
    char topic[128];
    void *pay = NULL;
    flux_msg_t **evs = NULL;
    int count, size, n = 0;
    int errnum = 0;
    const char *why = NULL;

    if (flux_request_unpack (msg, NULL, "{s:i s:i}", "count", &count, "size",
                             &size)
            < 0
        || count < 0 || count > 10000 || size < 0 || size > (1 << 24)) {
        flux_respond_error (h, msg, EPROTO,
                            "expected {count:i size:i}, count <= 10000, "
                            "size <= 16M");
        return;
    }
    if (!(pay = calloc (1, size ? size : 1))
        || !(evs = calloc (count ? count : 1, sizeof (*evs)))) {
        errnum = ENOMEM;
        goto out;
    }
    snprintf (topic, sizeof (topic), "%s.flood", c->name);
    for (n = 0; n < count; n++) {
        if (!(evs[n] = flux_event_encode_raw (topic, pay, size))) {
            errnum = errno;
            why = "cannot encode an event";
            goto out;
        }
    }
    for (int i = 0; i < count; i++) {
        if (flux_send (h, evs[i], 0) < 0) {
            errnum = errno;
            why = "cannot send an event";
            goto out;
        }
    }
out:
    for (int i = 0; i < n; i++)
        flux_msg_decref (evs[i]);
    free (evs);
    free (pay);
    if (errnum)
        flux_respond_error (h, msg, errnum, why);
    else
        flux_respond_pack (h, msg, "{s:i}", "count", count);
}

static void stall_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    double seconds;
    struct timespec ts;

    if (flux_request_unpack (msg, NULL, "{s:F}", "seconds", &seconds) < 0
        || seconds < 0 || seconds > 3600) {
        flux_respond_error (h, msg, EPROTO, "expected {seconds:f} <= 3600");
        return;
    }
    ts.tv_sec = (time_t)seconds;
    ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
    while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
        ;
    flux_respond (h, msg, NULL);
}

static void event_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    struct ctx *c = arg;
    c->events++;
}

static void events_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    struct ctx *c = arg;
    flux_respond_pack (h, msg, "{s:i}", "count", c->events);
}

int mod_main (flux_t *h, int argc, char **argv)
{
    struct ctx c = {.argc = argc, .argv = argv};
    char hello[128], fail[128], order[128], order_get[128], burst[128];
    char stall[128], events[128], publish[128];
    struct flux_msg_handler_spec htab[] = {
        {FLUX_MSGTYPE_REQUEST, hello, hello_cb, FLUX_ROLE_USER},
        {FLUX_MSGTYPE_REQUEST, fail, fail_cb, 0},
        {FLUX_MSGTYPE_REQUEST, order, order_cb, 0},
        {FLUX_MSGTYPE_REQUEST, order_get, order_get_cb, 0},
        {FLUX_MSGTYPE_REQUEST, burst, burst_cb, 0},
        {FLUX_MSGTYPE_REQUEST, stall, stall_cb, 0},
        {FLUX_MSGTYPE_REQUEST, events, events_cb, 0},
        {FLUX_MSGTYPE_REQUEST, publish, publish_cb, 0},
        {FLUX_MSGTYPE_EVENT, "*", event_cb, 0},
        FLUX_MSGHANDLER_TABLE_END,
    };
    flux_msg_handler_t **handlers;

    if (argc > 0 && !strcmp (argv[0], "fail-init")) {
        errno = EINVAL;
        return -1;
    }
    if (argc > 0 && !strncmp (argv[0], "stall-init=", 11)) {
        struct timespec ts = {.tv_sec = atoi (argv[0] + 11)};
        while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
            ;
    }
    c.name = flux_aux_get (h, "flux::name");
    snprintf (hello, sizeof (hello), "%s.hello", c.name);
    snprintf (fail, sizeof (fail), "%s.fail", c.name);
    snprintf (order, sizeof (order), "%s.order", c.name);
    snprintf (order_get, sizeof (order_get), "%s.order-get", c.name);
    snprintf (burst, sizeof (burst), "%s.burst", c.name);
    snprintf (stall, sizeof (stall), "%s.stall", c.name);
    snprintf (events, sizeof (events), "%s.events", c.name);
    snprintf (publish, sizeof (publish), "%s.publish", c.name);
    for (int i = 0; i < argc; i++) {
        if (!strncmp (argv[i], "subscribe=", 10)
            && flux_event_subscribe (h, argv[i] + 10) < 0)
            return -1;
    }
    if (!(c.seqs = json_array ())
        || flux_msg_handler_addvec (h, htab, &c, &handlers) < 0) {
        json_decref (c.seqs);
        return -1;
    }
    flux_reactor_run (flux_get_reactor (h), 0);
    flux_msg_handler_delvec (handlers);
    json_decref (c.seqs);
    if (c.failed) {
        errno = EIO;
        return -1;
    }
    return 0;
}
