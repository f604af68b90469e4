/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* overlay_trace.c - `flux overlay trace`: one line for each message the
 * local broker sends to or receives from its overlay peers (the broker's
 * streaming overlay.trace, PROTOCOLS.md section 3), until interrupted:
 *   2026-12-01T17:20:02.123456Z tx 1 request kvs.lookup [25]
 * The time, the direction (tx: sent to the peer, rx: received from it),
 * the peer's rank, the message type, the topic (for a control message,
 * its type and status) and the payload size; with --full the JSON
 * payload, or an error response's text.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmdutil.h"

static const char trace_usage[]
    = "Usage: flux overlay trace [OPTIONS] [TOPIC-GLOB]\n"
      "Print the messages this broker sends to and receives from its\n"
      "overlay peers (its parent and children), until interrupted.\n"
      "TOPIC-GLOB (default *) selects topics, as fnmatch(3) does.\n"
      "  -f, --full         Show JSON payloads and errors' text\n"
      "  -r, --rank=RANK    Only messages to and from peer RANK\n"
      "  -t, --type=TYPE,.. Only these types: request, response, event,\n"
      "                     control (default all)\n"
      "  -H, --human        Time since the first message, not the clock\n"
      "  -d, --delta        With --human, time since the previous message\n"
      "  -L, --color[=WHEN]  Color the types: always (without WHEN), never\n"
      "                     or auto (default: when stdout is a terminal)\n"
      "  -c, --count=N      Stop after N messages\n"
      "  -h, --help         Display this message\n";

static int cmd_overlay_trace (int argc, char **argv);

const struct builtin overlay_trace = {
    "trace",
    "Print the messages of this broker's overlay links",
    trace_usage,
    cmd_overlay_trace,
};

static const struct {
    const char *name;
    int type;
    const char *color;
} types[] = {
    {"request", FLUX_MSGTYPE_REQUEST, "\033[33m"},
    {"response", FLUX_MSGTYPE_RESPONSE, "\033[32m"},
    {"event", FLUX_MSGTYPE_EVENT, "\033[35m"},
    {"control", FLUX_MSGTYPE_CONTROL, "\033[36m"},
};
enum { NTYPES = sizeof (types) / sizeof (types[0]) };

/* --type: a comma-separated list of type names, as a typemask. */
static int parse_types (const char *arg)
{
    char *copy = strdup (arg), *save = NULL, *name;
    int mask = 0;

    if (!copy)
        cmd_die ("out of memory");
    for (name = strtok_r (copy, ",", &save); name;
         name = strtok_r (NULL, ",", &save)) {
        int i;
        for (i = 0; i < NTYPES; i++) {
            if (!strcmp (name, types[i].name))
                break;
        }
        if (i == NTYPES)
            cmd_usage_error ("--type: unknown type '%s' (request, response, "
                             "event or control)",
                             name);
        mask |= types[i].type;
    }
    free (copy);
    if (mask == 0)
        cmd_usage_error ("--type: no type given");
    return mask;
}

struct trace {
    bool full, human, delta, color;
    double first, prev; /* timestamps, for --human; first < 0: none yet */
};

static void print_time (struct trace *t, double ts)
{
    char buf[64];
    time_t sec = (time_t)ts;
    struct tm tm;

    if (t->human) {
        if (t->first < 0)
            t->first = t->prev = ts;
        printf ("[%+.6f]", t->delta ? ts - t->prev : ts - t->first);
        t->prev = ts;
        return;
    }
    if (!gmtime_r (&sec, &tm) || !strftime (buf, sizeof (buf), "%FT%T", &tm))
        snprintf (buf, sizeof (buf), "%.6f", ts);
    printf ("%s.%06dZ", buf, (int)((ts - (double)sec) * 1e6));
}

static void print_entry (struct trace *t, json_t *o)
{
    double ts;
    const char *prefix, *topic, *errstr = "";
    int rank, type, errnum = 0;
    json_int_t size = 0;
    json_t *payload = NULL;
    const char *tname = "unknown", *color = "";

    if (json_unpack (o, "{s:F s:s s:i s:i s:s s?I s?o s?i s?s}", "timestamp",
                     &ts, "prefix", &prefix, "rank", &rank, "type", &type,
                     "topic", &topic, "payload_size", &size, "payload",
                     &payload, "errnum", &errnum, "errstr", &errstr)
        < 0) {
        cmd_warn ("overlay.trace: malformed entry");
        return;
    }
    for (int i = 0; i < NTYPES; i++) {
        if (types[i].type == type) {
            tname = types[i].name;
            color = types[i].color;
        }
    }
    if (errnum)
        color = "\033[31m";
    print_time (t, ts);
    printf (" %s %d ", prefix, rank);
    if (t->color)
        printf ("%s%s\033[0m", color, tname);
    else
        fputs (tname, stdout);
    printf (" %s", topic);
    if (errnum)
        printf (" error %d (%s)", errnum, strerror (errnum));
    else if (type != FLUX_MSGTYPE_CONTROL)
        printf (" [%lld]", (long long)size);
    if (t->full) {
        if (errnum && *errstr)
            printf (" %s", errstr);
        else if (payload && !json_is_null (payload)) {
            char *s = json_dumps (payload, JSON_COMPACT | JSON_ENCODE_ANY);
            if (s)
                printf (" %s", s);
            free (s);
        }
    }
    printf ("\n");
    fflush (stdout);
}

static int cmd_overlay_trace (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"full", no_argument, NULL, 'f'},
        {"rank", required_argument, NULL, 'r'},
        {"type", required_argument, NULL, 't'},
        {"human", no_argument, NULL, 'H'},
        {"delta", no_argument, NULL, 'd'},
        {"color", optional_argument, NULL, 'L'},
        {"count", required_argument, NULL, 'c'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    struct trace t = {.first = -1};
    int typemask = FLUX_MSGTYPE_ANY;
    long rank = -1, count = -1, n = 0;
    const char *glob = "*";
    flux_future_t *f;
    flux_t *h;
    json_t *o;
    int c;

    t.color = cmd_parse_color ("--color", "auto");
    while ((c = cmd_getopt (argc, argv, "fr:t:HdL::c:", longopts)) != -1) {
        switch (c) {
            case 'f':
                t.full = true;
                break;
            case 'r':
                rank = cmd_parse_long ("--rank", optarg, 0, INT32_MAX);
                break;
            case 't':
                typemask = parse_types (optarg);
                break;
            case 'H':
                t.human = true;
                break;
            case 'd':
                t.delta = true;
                break;
            case 'L':
                t.color = cmd_parse_color ("--color", optarg);
                break;
            case 'c':
                count = cmd_parse_long ("--count", optarg, 1, LONG_MAX);
                break;
        }
    }
    if (optind < argc)
        glob = argv[optind++];
    if (optind != argc)
        cmd_usage_error ("unexpected argument '%s'", argv[optind]);
    h = cmd_open ();
    if (!(f = flux_rpc_pack (h, "overlay.trace", FLUX_NODEID_ANY,
                             FLUX_RPC_STREAMING, "{s:i s:s s:i s:b}",
                             "typemask", typemask, "topic_glob", glob, "nodeid",
                             (int)rank, "full", t.full)))
        cmd_die ("overlay.trace: %s", strerror (errno));
    while (count < 0 || n < count) {
        if (flux_rpc_get_unpack (f, "o", &o) < 0) {
            if (errno == ENODATA)
                break;
            cmd_die ("overlay.trace: %s", future_strerror (f, errno));
        }
        print_entry (&t, o);
        n++;
        flux_future_reset (f);
    }
    flux_future_destroy (f);
    flux_close (h);
    return 0;
}
