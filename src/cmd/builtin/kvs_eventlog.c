/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* kvs_eventlog.c - `flux kvs eventlog get|append|wait-event`: RFC 18
 * eventlogs stored under a KVS key, written with FLUX_KVS_APPEND and
 * watched with FLUX_KVS_WATCH_APPEND.  Appended data is fed to an
 * incremental parser (libeventlog), so entries split across responses
 * are still read whole.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libeventlog/eventlog.h"
#include "libutil/monotime.h"

#include "kvs_cmd.h"

static const char eventlog_usage[]
    = "Usage: flux kvs eventlog COMMAND [OPTIONS] [ARGS...]\n"
      "Read and write RFC 18 eventlogs stored in the KVS.\n";

static const char get_usage[]
    = "Usage: flux kvs eventlog get [OPTIONS] KEY\n"
      "Print the events of the eventlog KEY, one per line, as\n"
      "'TIMESTAMP NAME [CONTEXT]'.\n"
      "  -N, --namespace=NS  Use namespace NS\n"
      "  -W, --waitcreate    Wait for KEY to be created\n"
      "  -w, --watch         Keep printing events as they are appended\n"
      "  -c, --count=N       Stop after N events\n"
      "  -u, --unformatted   Print events in their RFC 18 JSON form\n"
      "  -h, --help          Display this message\n";

static const char append_usage[]
    = "Usage: flux kvs eventlog append [OPTIONS] KEY NAME [CONTEXT...]\n"
      "Append an event to the eventlog KEY.  CONTEXT words are joined by\n"
      "spaces and must form a JSON object.\n"
      "  -N, --namespace=NS      Use namespace NS\n"
      "  -t, --timestamp=SECONDS Event time (default: now)\n"
      "  -h, --help              Display this message\n";

static const char wait_usage[]
    = "Usage: flux kvs eventlog wait-event [OPTIONS] KEY EVENT\n"
      "Wait until an event named EVENT is in the eventlog KEY, print it.\n"
      "  -N, --namespace=NS    Use namespace NS\n"
      "  -t, --timeout=FSD     Fail if EVENT has not come after FSD\n"
      "  -W, --waitcreate      Wait for KEY to be created\n"
      "  -u, --unformatted     Print events in their RFC 18 JSON form\n"
      "  -q, --quiet           Do not print the event\n"
      "  -v, --verbose         Also print the events before it\n"
      "  -h, --help            Display this message\n";

static int cmd_eventlog (int argc, char **argv);
static int cmd_eventlog_get (int argc, char **argv);
static int cmd_eventlog_append (int argc, char **argv);
static int cmd_eventlog_wait (int argc, char **argv);

const struct builtin kvs_eventlog_cmd
    = {"eventlog", "Read and write eventlogs", eventlog_usage, cmd_eventlog};

static const struct builtin el_get
    = {"get", "Print an eventlog", get_usage, cmd_eventlog_get};
static const struct builtin el_append
    = {"append", "Append an event", append_usage, cmd_eventlog_append};
static const struct builtin el_wait
    = {"wait-event", "Wait for an event", wait_usage, cmd_eventlog_wait};

static const struct builtin *const members[] = {
    &el_get,
    &el_append,
    &el_wait,
    NULL,
};

static int cmd_eventlog (int argc, char **argv)
{
    return kvs_run_subgroup (&kvs_eventlog_cmd, members, argc, argv);
}

/* Print an entry: unformatted as compact JSON, else "TIMESTAMP NAME" and
 * the context as compact JSON if there is one.
 */
static void print_entry (json_t *entry, bool unformatted)
{
    json_t *context;
    const char *name;
    double t;
    char *s = NULL;

    if (unformatted) {
        if (!(s = json_dumps (entry, JSON_COMPACT)))
            cmd_die ("out of memory");
        printf ("%s\n", s);
    }
    else {
        if (eventlog_entry_parse (entry, &t, &name, &context) < 0)
            cmd_die ("malformed event");
        if (context && !(s = json_dumps (context, JSON_COMPACT)))
            cmd_die ("out of memory");
        printf ("%f %s%s%s\n", t, name, s ? " " : "", s ? s : "");
    }
    free (s);
    fflush (stdout);
}

/* Feed the current response of f to p.  Returns 0, or -1 with errno set
 * by the lookup (ENODATA at the end of a watch).
 */
static int feed (flux_future_t *f, eventlog_parser_t *p, const char *key)
{
    const void *data;
    size_t len;

    if (flux_kvs_lookup_get_raw (f, &data, &len) < 0)
        return -1;
    if (eventlog_parser_feed (p, data, len) < 0)
        cmd_die ("%s: %s", key, strerror (errno));
    return 0;
}

/* The next complete entry of p, or NULL if none is buffered. */
static json_t *next_entry (eventlog_parser_t *p, const char *key)
{
    json_t *entry;

    if (!(entry = eventlog_parser_next (p))) {
        if (errno == EAGAIN)
            return NULL;
        cmd_die ("%s: %s", key,
                 errno == EPROTO ? "malformed eventlog" : strerror (errno));
    }
    return entry;
}

static int cmd_eventlog_get (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"namespace", required_argument, NULL, 'N'},
        {"waitcreate", no_argument, NULL, 'W'},
        {"watch", no_argument, NULL, 'w'},
        {"count", required_argument, NULL, 'c'},
        {"unformatted", no_argument, NULL, 'u'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    bool watch = false, unformatted = false, canceled = false;
    int c, rc, flags = 0, maxcount = 0, count = 0;
    const char *ns = NULL, *key;
    eventlog_parser_t *p;
    flux_future_t *f;
    json_t *entry;
    flux_t *h;

    while ((c = cmd_getopt (argc, argv, "N:Wwc:u", longopts)) != -1) {
        if (c == 'N')
            ns = optarg;
        if (c == 'W')
            flags |= FLUX_KVS_WAITCREATE;
        if (c == 'w')
            watch = true;
        if (c == 'c')
            maxcount = cmd_parse_long ("--count", optarg, 1, INT32_MAX);
        if (c == 'u')
            unformatted = true;
    }
    if (argc - optind != 1)
        cmd_usage_error ("specify one KEY");
    key = argv[optind];
    if (watch)
        flags |= FLUX_KVS_WATCH | FLUX_KVS_WATCH_APPEND;
    if (!(p = eventlog_parser_create ()))
        cmd_die ("out of memory");
    h = cmd_open ();
    if (!(f = flux_kvs_lookup (h, ns, flags, key)))
        cmd_die ("%s: %s", key, strerror (errno));
    while ((rc = feed (f, p, key)) == 0) {
        while ((entry = next_entry (p, key))) {
            if (maxcount == 0 || count < maxcount)
                print_entry (entry, unformatted);
            count++;
            json_decref (entry);
        }
        if (!watch)
            break;
        flux_future_reset (f);
        if (maxcount > 0 && count >= maxcount && !canceled) {
            if (flux_kvs_lookup_cancel (f) < 0)
                cmd_die ("cancel: %s", strerror (errno));
            canceled = true;
        }
    }
    if (rc < 0 && (!watch || errno != ENODATA))
        cmd_die ("%s: %s", key, strerror (errno));
    if (!watch && eventlog_parser_pending (p) > 0)
        cmd_die ("%s: malformed eventlog (incomplete last line)", key);
    flux_future_destroy (f);
    eventlog_parser_destroy (p);
    flux_close (h);
    return 0;
}

static int cmd_eventlog_append (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"namespace", required_argument, NULL, 'N'},
        {"timestamp", required_argument, NULL, 't'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    const char *ns = NULL, *key, *name;
    char *context = NULL, *line;
    double timestamp = 0.;
    flux_kvs_txn_t *txn;
    flux_future_t *f;
    json_t *entry;
    flux_t *h;
    int c;

    while ((c = cmd_getopt (argc, argv, "N:t:", longopts)) != -1) {
        if (c == 'N')
            ns = optarg;
        if (c == 't') {
            timestamp = cmd_parse_double ("--timestamp", optarg, 0.);
            if (timestamp == 0.)
                cmd_usage_error ("--timestamp must be greater than zero");
        }
    }
    if (argc - optind < 2)
        cmd_usage_error ("specify KEY and NAME");
    key = argv[optind];
    name = argv[optind + 1];
    if (argc - optind > 2)
        context = cmd_join_words (argc - optind - 2, argv + optind + 2);
    if (!(entry = eventlog_entry_create (timestamp, name, context)))
        cmd_die ("%s", context ? "CONTEXT must be a JSON object"
                               : "invalid event name");
    if (!(line = eventlog_entry_encode (entry))
        || !(txn = flux_kvs_txn_create ())
        || flux_kvs_txn_put (txn, FLUX_KVS_APPEND, key, line) < 0)
        cmd_die ("%s: %s", key, strerror (errno));
    h = cmd_open ();
    if (!(f = flux_kvs_commit (h, ns, 0, txn)))
        cmd_die ("commit: %s", strerror (errno));
    kvs_commit_finish (f, false, false);
    flux_future_destroy (f);
    flux_kvs_txn_destroy (txn);
    json_decref (entry);
    free (line);
    free (context);
    flux_close (h);
    return 0;
}

struct wait_ctx {
    const char *key;
    const char *event;
    bool unformatted, quiet, verbose;
    bool got;
};

/* Print what is due from the entries buffered in p; cancel f once the
 * event is seen.
 */
static void wait_scan (struct wait_ctx *ctx, eventlog_parser_t *p,
                       flux_future_t *f)
{
    json_t *entry;
    const char *name;

    while ((entry = next_entry (p, ctx->key))) {
        if (!ctx->got) {
            if (eventlog_entry_parse (entry, NULL, &name, NULL) < 0)
                cmd_die ("%s: malformed event", ctx->key);
            if (!strcmp (name, ctx->event)) {
                if (!ctx->quiet)
                    print_entry (entry, ctx->unformatted);
                ctx->got = true;
                if (flux_kvs_lookup_cancel (f) < 0)
                    cmd_die ("cancel: %s", strerror (errno));
            }
            else if (ctx->verbose)
                print_entry (entry, ctx->unformatted);
        }
        json_decref (entry);
    }
}

static int cmd_eventlog_wait (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"namespace", required_argument, NULL, 'N'},
        {"timeout", required_argument, NULL, 't'},
        {"waitcreate", no_argument, NULL, 'W'},
        {"unformatted", no_argument, NULL, 'u'},
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    int c, flags = FLUX_KVS_WATCH | FLUX_KVS_WATCH_APPEND;
    struct wait_ctx ctx = {0};
    double timeout = -1., deadline = 0.;
    const char *ns = NULL;
    eventlog_parser_t *p;
    flux_future_t *f;
    flux_t *h;

    while ((c = cmd_getopt (argc, argv, "N:t:Wuqv", longopts)) != -1) {
        if (c == 'N')
            ns = optarg;
        if (c == 't')
            timeout = cmd_parse_duration ("--timeout", optarg);
        if (c == 'W')
            flags |= FLUX_KVS_WAITCREATE;
        if (c == 'u')
            ctx.unformatted = true;
        if (c == 'q')
            ctx.quiet = true;
        if (c == 'v')
            ctx.verbose = true;
    }
    if (argc - optind != 2)
        cmd_usage_error ("specify KEY and EVENT");
    ctx.key = argv[optind];
    ctx.event = argv[optind + 1];
    if (!(p = eventlog_parser_create ()))
        cmd_die ("out of memory");
    h = cmd_open ();
    if (!(f = flux_kvs_lookup (h, ns, flags, ctx.key)))
        cmd_die ("%s: %s", ctx.key, strerror (errno));
    if (timeout >= 0.)
        deadline = monotime () + timeout;
    for (;;) {
        if (timeout >= 0. && !ctx.got) {
            double left = deadline - monotime ();
            if (flux_future_wait_for (f, left > 0. ? left : 0.) < 0) {
                if (errno == ETIMEDOUT)
                    cmd_die ("wait-event timeout on event '%s'", ctx.event);
                cmd_die ("%s: %s", ctx.key, strerror (errno));
            }
        }
        if (feed (f, p, ctx.key) < 0)
            break;
        wait_scan (&ctx, p, f);
        flux_future_reset (f);
    }
    if (errno == ENOENT)
        cmd_die ("eventlog path %s not found", ctx.key);
    if (errno != ENODATA)
        cmd_die ("%s: %s", ctx.key, strerror (errno));
    if (!ctx.got)
        cmd_die ("event '%s' never received", ctx.event);
    flux_future_destroy (f);
    eventlog_parser_destroy (p);
    flux_close (h);
    return 0;
}
