/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* trace.c - `flux overlay trace` and `flux module trace`: one line for
 * each message that crosses one of the local broker's doors, an overlay
 * link or a module's queue (its streaming overlay.trace or module.trace,
 * src/broker/trace.h), until interrupted:
 *   2026-12-01T17:20:02.123456Z tx 1 request kvs.lookup [25]
 *   2026-12-01T17:20:02.123598Z rx kvs response kvs.lookup [310]
 * The time, the direction (tx: the broker sent it to the peer or the
 * module, rx: the broker received it), the peer's rank or the module's
 * name, the message type, the topic (for a control message, its kind and
 * status) and the payload size; with --full the JSON payload, or an
 * error response's text.
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

#define COMMON_OPTIONS                                                      \
    "  -f, --full         Show JSON payloads and errors' text\n"            \
    "  -t, --type=TYPE,.. Only these types: request, response, event,\n"    \
    "                     control (default all)\n"                          \
    "  -H, --human        Time since the first message, not the clock\n"    \
    "  -d, --delta        With --human, time since the previous message\n"  \
    "  -L, --color[=WHEN]  Color the types: always (without WHEN), never\n" \
    "                     or auto (default: when stdout is a terminal)\n"   \
    "  -c, --count=N      Stop after N messages\n"                          \
    "  -h, --help         Display this message\n"

static const char overlay_usage[]
    = "Usage: flux overlay trace [OPTIONS] [TOPIC-GLOB]\n"
      "Print the messages this broker sends to and receives from its\n"
      "overlay peers (its parent and children), until interrupted.\n"
      "TOPIC-GLOB (default *) selects topics, as fnmatch(3) does.\n"
      "  -r, --rank=RANK    Only messages of peer RANK\n" COMMON_OPTIONS;

static const char module_usage[]
    = "Usage: flux module trace [OPTIONS] [MODULE...]\n"
      "Print the messages this broker sends to and receives from its\n"
      "modules (all, or those named), until interrupted.\n"
      "  -T, --topic=GLOB   Only topics GLOB matches\n" COMMON_OPTIONS;

static int cmd_overlay_trace (int argc, char **argv);
static int cmd_module_trace (int argc, char **argv);

const struct builtin overlay_trace = {
    "trace",
    "Print the messages of this broker's overlay links",
    overlay_usage,
    cmd_overlay_trace,
};

const struct builtin module_trace = {
    "trace",
    "Print the messages between this broker and its modules",
    module_usage,
    cmd_module_trace,
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
    int typemask;
    long count; /* -1: no end */
    const char *glob;
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
    json_t *payload = NULL, *name = NULL;
    const char *tname = "unknown", *color = "";

    if (json_unpack (o, "{s:F s:s s:i s?o s:i s:s s?I s?o s?i s?s}",
                     "timestamp", &ts, "prefix", &prefix, "rank", &rank, "name",
                     &name, "type", &type, "topic", &topic, "payload_size",
                     &size, "payload", &payload, "errnum", &errnum, "errstr",
                     &errstr)
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
    if (json_is_string (name)) /* a module's, else null */
        printf (" %s %s ", prefix, json_string_value (name));
    else
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

/* Parse the options both commands share, and a command's own: extra
 * (short) and extra_long, which extra_fn handles. */
static void parse_options (struct trace *t, int argc, char **argv,
                           const char *extra, const struct option *extra_long,
                           void (*extra_fn) (int c, void *arg), void *arg)
{
    const struct option common[] = {
        {"full", no_argument, NULL, 'f'},
        {"type", required_argument, NULL, 't'},
        {"human", no_argument, NULL, 'H'},
        {"delta", no_argument, NULL, 'd'},
        {"color", optional_argument, NULL, 'L'},
        {"count", required_argument, NULL, 'c'},
        CMD_OPT_HELP,
    };
    enum { NCOMMON = sizeof (common) / sizeof (common[0]) };
    struct option longopts[NCOMMON + 4] = {{0}};
    char shortopts[64];
    size_t n = 0;
    int c;

    for (size_t i = 0; i < NCOMMON; i++)
        longopts[n++] = common[i];
    for (size_t i = 0; extra_long[i].name && n < NCOMMON + 3; i++)
        longopts[n++] = extra_long[i];
    snprintf (shortopts, sizeof (shortopts), "ft:HdL::c:%s", extra);
    t->first = -1;
    t->count = -1;
    t->typemask = FLUX_MSGTYPE_ANY;
    t->glob = "*";
    t->color = cmd_parse_color ("--color", "auto");
    while ((c = cmd_getopt (argc, argv, shortopts, longopts)) != -1) {
        switch (c) {
            case 'f':
                t->full = true;
                break;
            case 't':
                t->typemask = parse_types (optarg);
                break;
            case 'H':
                t->human = true;
                break;
            case 'd':
                t->delta = true;
                break;
            case 'L':
                t->color = cmd_parse_color ("--color", optarg);
                break;
            case 'c':
                t->count = cmd_parse_long ("--count", optarg, 1, LONG_MAX);
                break;
            default:
                extra_fn (c, arg);
        }
    }
}

/* Send the streaming request (topic, payload req, stolen) and print what
 * comes back. */
static int run (struct trace *t, const char *topic, json_t *req)
{
    flux_t *h = cmd_open ();
    flux_future_t *f;
    long n = 0;
    json_t *o;

    if (json_object_set_new (req, "typemask", json_integer (t->typemask)) < 0
        || json_object_set_new (req, "topic_glob", json_string (t->glob)) < 0
        || json_object_set_new (req, "full", json_boolean (t->full)) < 0)
        cmd_die ("out of memory");
    if (!(f = flux_rpc_pack (h, topic, FLUX_NODEID_ANY, FLUX_RPC_STREAMING, "O",
                             req)))
        cmd_die ("%s: %s", topic, strerror (errno));
    json_decref (req);
    while (t->count < 0 || n < t->count) {
        if (flux_rpc_get_unpack (f, "o", &o) < 0) {
            if (errno == ENODATA)
                break;
            cmd_die ("%s: %s", topic, future_strerror (f, errno));
        }
        print_entry (t, o);
        n++;
        flux_future_reset (f);
    }
    flux_future_destroy (f);
    flux_close (h);
    return 0;
}

static void overlay_option (int c, void *arg)
{
    long *rank = arg;

    if (c == 'r')
        *rank = cmd_parse_long ("--rank", optarg, 0, INT32_MAX);
}

static int cmd_overlay_trace (int argc, char **argv)
{
    static const struct option extra[] = {
        {"rank", required_argument, NULL, 'r'},
        {NULL, 0, NULL, 0},
    };
    struct trace t = {0};
    long rank = -1;
    json_t *req;

    parse_options (&t, argc, argv, "r:", extra, overlay_option, &rank);
    if (optind < argc)
        t.glob = argv[optind++];
    if (optind != argc)
        cmd_usage_error ("unexpected argument '%s'", argv[optind]);
    if (!(req = json_pack ("{s:i}", "nodeid", (int)rank)))
        cmd_die ("out of memory");
    return run (&t, "overlay.trace", req);
}

static void module_option (int c, void *arg)
{
    struct trace *t = arg;

    if (c == 'T')
        t->glob = optarg;
}

static int cmd_module_trace (int argc, char **argv)
{
    static const struct option extra[] = {
        {"topic", required_argument, NULL, 'T'},
        {NULL, 0, NULL, 0},
    };
    struct trace t = {0};
    json_t *names = json_array ();
    json_t *req;

    parse_options (&t, argc, argv, "T:", extra, module_option, &t);
    if (!names)
        cmd_die ("out of memory");
    for (; optind < argc; optind++) {
        if (json_array_append_new (names, json_string (argv[optind])) < 0)
            cmd_die ("out of memory");
    }
    if (!(req = json_pack ("{s:o}", "names", names)))
        cmd_die ("out of memory");
    return run (&t, "module.trace", req);
}
