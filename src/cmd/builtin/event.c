/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* event.c - `flux event pub` and `flux event sub`.
 *
 * pub publishes through the event.publish RPC to rank 0 (libflux
 * flux_event_publish, PROTOCOLS.md section 3, Events), so it returns once
 * the event has its sequence number.  sub subscribes to topic prefixes
 * and prints "TOPIC<tab>PAYLOAD" for each event received.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdutil.h"

static const char usage[] = "Usage: flux event COMMAND [OPTIONS] [ARGS...]\n"
                            "Publish and subscribe to Flux events.\n";

static const char pub_usage[]
    = "Usage: flux event pub [OPTIONS] TOPIC [PAYLOAD...]\n"
      "Publish an event.  PAYLOAD words are joined by spaces and must form\n"
      "JSON unless --raw is given.\n"
      "  -r, --raw          Send PAYLOAD as raw bytes, not JSON\n"
      "  -p, --private      Only the instance owner and we receive it\n"
      "  -l, --loopback     Wait until the event comes back to us\n"
      "  -h, --help         Display this message\n";

static const char sub_usage[]
    = "Usage: flux event sub [OPTIONS] [TOPIC...]\n"
      "Print events whose topic starts with one of the TOPIC prefixes (all\n"
      "events if none), as TOPIC<tab>PAYLOAD.\n"
      "  -c, --count=N      Exit after N events\n"
      "  -h, --help         Display this message\n";

static int cmd_event_pub (int argc, char **argv);
static int cmd_event_sub (int argc, char **argv);

const struct builtin builtin_event = {
    .name = "event",
    .summary = "Publish and subscribe to Flux events",
    .usage = usage,
    .main = cmd_event,
};

static const struct builtin event_pub = {
    .name = "pub",
    .summary = "Publish an event",
    .usage = pub_usage,
    .main = cmd_event_pub,
};

static const struct builtin event_sub = {
    .name = "sub",
    .summary = "Subscribe to events and print them",
    .usage = sub_usage,
    .main = cmd_event_sub,
};

static const struct builtin *const members[] = {
    &event_pub,
    &event_sub,
    NULL,
};

int cmd_event (int argc, char **argv)
{
    return cmd_run_group (&builtin_event, members, argc, argv);
}

/* Wait for the event numbered seq on topic (we are subscribed to it). */
static void wait_loopback (flux_t *h, const char *topic, int seq)
{
    const char *t;
    flux_msg_t *msg;
    uint32_t s;
    int type;

    while ((msg = flux_recv (h, 0))) {
        bool mine = flux_msg_get_type (msg, &type) == 0
                    && type == FLUX_MSGTYPE_EVENT
                    && flux_event_decode_raw (msg, &t, NULL, NULL) == 0
                    && !strcmp (t, topic) && flux_msg_get_seq (msg, &s) == 0
                    && (int)s == seq;
        flux_msg_destroy (msg);
        if (mine)
            return;
    }
    cmd_die ("waiting for %s: %s", topic, strerror (errno));
}

static int cmd_event_pub (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"raw", no_argument, NULL, 'r'},
        {"private", no_argument, NULL, 'p'},
        {"loopback", no_argument, NULL, 'l'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    bool raw = false, loopback = false;
    int flags = 0, c, seq;
    char *payload = NULL;
    const char *topic;
    flux_future_t *f;
    flux_t *h;

    while ((c = cmd_getopt (argc, argv, "rpl", longopts)) != -1) {
        if (c == 'r')
            raw = true;
        if (c == 'p')
            flags |= FLUX_MSGFLAG_PRIVATE;
        if (c == 'l')
            loopback = true;
    }
    if (optind >= argc)
        cmd_usage_error ("missing TOPIC");
    topic = argv[optind++];
    if (optind < argc) {
        json_t *o;
        payload = cmd_join_words (argc - optind, argv + optind);
        if (!raw && !(o = json_loads (payload, JSON_DECODE_ANY, NULL)))
            cmd_usage_error ("payload is not valid JSON (use --raw?)");
        if (!raw)
            json_decref (o);
    }
    h = cmd_open ();
    if (loopback && flux_event_subscribe (h, topic) < 0)
        cmd_die ("subscribe %s: %s", topic, strerror (errno));
    if (raw)
        f = flux_event_publish_raw (h, topic, flags, payload,
                                    payload ? strlen (payload) : 0);
    else
        f = flux_event_publish (h, topic, flags, payload);
    if (!f || flux_event_publish_get_seq (f, &seq) < 0)
        cmd_die ("publish %s: %s", topic,
                 f ? future_strerror (f, errno) : strerror (errno));
    if (loopback)
        wait_loopback (h, topic, seq);
    flux_future_destroy (f);
    free (payload);
    flux_close (h);
    return 0;
}

struct sub {
    long count; /* 0: no limit */
    long received;
};

static void event_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    struct sub *sub = arg;
    const char *topic;
    const void *data;
    size_t len;

    if (flux_event_decode_raw (msg, &topic, &data, &len) < 0)
        return;
    if (len > 0 && ((const char *)data)[len - 1] == '\0')
        len--; /* string and JSON payloads carry their NUL */
    printf ("%s\t%.*s\n", topic, (int)len, data ? (const char *)data : "");
    fflush (stdout);
    if (sub->count > 0 && ++sub->received == sub->count)
        flux_msg_handler_stop (mh);
}

static int cmd_event_sub (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"count", required_argument, NULL, 'c'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    struct sub sub = {0};
    flux_msg_handler_t *mh;
    flux_t *h;
    int c;

    while ((c = cmd_getopt (argc, argv, "c:", longopts)) != -1) {
        if (c == 'c')
            sub.count = cmd_parse_long ("--count", optarg, 0, INT32_MAX);
    }
    h = cmd_open ();
    if (!(mh = flux_msg_handler_create (h, FLUX_MATCH_EVENT, event_cb, &sub)))
        cmd_die ("cannot create message handler: %s", strerror (errno));
    flux_msg_handler_allow_rolemask (mh, FLUX_ROLE_ALL);
    flux_msg_handler_start (mh);
    if (optind == argc && flux_event_subscribe (h, "") < 0)
        cmd_die ("subscribe: %s", strerror (errno));
    for (int i = optind; i < argc; i++) {
        if (flux_event_subscribe (h, argv[i]) < 0)
            cmd_die ("subscribe '%s': %s", argv[i], strerror (errno));
    }
    if (flux_reactor_run (flux_get_reactor (h), 0) < 0)
        cmd_die ("lost the connection to the broker: %s", strerror (errno));
    flux_msg_handler_destroy (mh);
    flux_close (h);
    return 0;
}
