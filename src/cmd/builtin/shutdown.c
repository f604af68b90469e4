/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* shutdown.c - `flux shutdown`: ask the instance to shut down through
 * shutdown.start (PROTOCOLS.md section 3, State machine / shutdown).
 *
 * The request goes to the local broker (nodeid ANY, so a broker of rank
 * above 0 refuses at once).  As a streaming RPC it returns {log} lines of
 * the shutdown, filtered by the broker to our log level, until the
 * instance reaches "goodbye" (ENODATA); they are copied to stderr.  A
 * connection lost after the shutdown began counts as the end too.
 * --gc / --skip-gc first send content-sqlite.gc (gc.h there).  Without
 * either, the configuration's kvs.gc-threshold (config.get) asks for a
 * collection once the primary namespace's version (kvs.getroot) is over
 * it, as flux-core does.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdutil.h"
#include "stdlog.h"

static const char usage[]
    = "Usage: flux shutdown [OPTIONS]\n"
      "Shut down the Flux instance (run on rank 0).\n"
      "  -q, --quiet        Show only warnings and errors\n"
      "  -v, --verbose      Show debug messages too\n"
      "      --background   Return once the shutdown has started\n"
      "      --gc           Collect the content store's garbage at the next\n"
      "                     start (keep only what the KVS reaches)\n"
      "      --skip-gc      Cancel a --gc asked for before, and do not\n"
      "                     collect for kvs.gc-threshold\n"
      "  -h, --help         Display this message\n";

const struct builtin builtin_shutdown = {
    .name = "shutdown",
    .summary = "Shut down the Flux instance",
    .usage = usage,
    .main = cmd_shutdown,
};

/* Ask content-sqlite (rank 0) to collect garbage when it next loads,
 * or no longer: before the shutdown, so that a refusal changes nothing. */
static void request_gc (flux_t *h, bool on)
{
    flux_future_t *f;
    const char *path;
    uint32_t rank;

    if (flux_get_rank (h, &rank) < 0)
        cmd_die ("rank: %s", strerror (errno));
    if (rank != 0) /* as shutdown.start would: refuse before asking */
        cmd_die ("shutdown must be sent to rank 0");
    if (!(f = flux_rpc_pack (h, "content-sqlite.gc", 0, 0, "{s:b}", "cancel",
                             !on))
        || flux_rpc_get_unpack (f, "{s:s}", "path", &path) < 0) {
        if (errno == ENOSYS)
            cmd_die ("%s: content-sqlite is not loaded: no store to collect",
                     on ? "--gc" : "--skip-gc");
        cmd_die ("%s: %s", on ? "--gc" : "--skip-gc",
                 future_strerror (f, errno));
    }
    if (on)
        fprintf (stderr,
                 "flux-shutdown: %s will be garbage collected at the "
                 "next start\n",
                 path);
    flux_future_destroy (f);
}

/* Is the KVS version over the configuration's kvs.gc-threshold?  Only
 * with a statedir (a store that outlives the instance); a broker without
 * the config service, or a threshold that is not a positive integer
 * (said), is not. */
static bool over_gc_threshold (flux_t *h, bool quiet)
{
    flux_future_t *f, *g = NULL;
    json_int_t threshold = 0;
    json_t *conf, *val = NULL;
    int rootseq = 0;
    bool over = false;

    if (!flux_attr_get (h, "statedir"))
        return false;
    if (!(f = flux_rpc (h, "config.get", NULL, FLUX_NODEID_ANY, 0))
        || flux_rpc_get_unpack (f, "o", &conf) < 0
        || !(val
             = json_object_get (json_object_get (conf, "kvs"), "gc-threshold")))
        goto done;
    if (!json_is_integer (val) || (threshold = json_integer_value (val)) <= 0) {
        cmd_warn ("kvs.gc-threshold: expected an integer > 0: ignored");
        goto done;
    }
    if (!(g = flux_rpc_pack (h, "kvs.getroot", FLUX_NODEID_ANY, 0, "{s:s}",
                             "namespace", "primary"))
        || flux_rpc_get_unpack (g, "{s:i}", "rootseq", &rootseq) < 0) {
        cmd_warn ("kvs.gc-threshold: the KVS version: %s",
                  g ? future_strerror (g, errno) : strerror (errno));
        goto done;
    }
    if ((over = rootseq > threshold) && !quiet)
        fprintf (stderr,
                 "flux-shutdown: the KVS version %d is over kvs.gc-threshold "
                 "(%lld)\n",
                 rootseq, (long long)threshold);
done:
    flux_future_destroy (g);
    flux_future_destroy (f);
    return over;
}

int cmd_shutdown (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        {"background", no_argument, NULL, 'B'},
        {"gc", no_argument, NULL, 'G'},
        {"skip-gc", no_argument, NULL, 'S'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    int loglevel = STDLOG_INFO;
    bool background = false;
    int gc = -1; /* 1: --gc, 0: --skip-gc */
    flux_future_t *f;
    const char *s;
    flux_t *h;
    int c;

    while ((c = cmd_getopt (argc, argv, "qv", longopts)) != -1) {
        if (c == 'q')
            loglevel = STDLOG_WARNING;
        if (c == 'v')
            loglevel = STDLOG_DEBUG;
        if (c == 'B')
            background = true;
        if (c == 'G' || c == 'S') {
            if (gc == (c == 'S'))
                cmd_usage_error ("--gc and --skip-gc are exclusive");
            gc = (c == 'G');
        }
    }
    if (optind != argc)
        cmd_usage_error ("unexpected argument '%s'", argv[optind]);
    h = cmd_open ();
    if (gc < 0 && over_gc_threshold (h, loglevel < STDLOG_INFO))
        gc = 1;
    if (gc >= 0)
        request_gc (h, gc);
    if (!(f = flux_rpc_pack (h, "shutdown.start", FLUX_NODEID_ANY,
                             background ? 0 : FLUX_RPC_STREAMING, "{s:i}",
                             "loglevel", loglevel)))
        cmd_die ("shutdown.start: %s", strerror (errno));
    if (background) {
        if (flux_rpc_get (f, NULL) < 0)
            cmd_die ("%s", future_strerror (f, errno));
    }
    else {
        int count = 0;
        while (flux_rpc_get_unpack (f, "{s:s}", "log", &s) == 0) {
            struct stdlog_header hdr;
            const char *msg;
            size_t len = strcspn (s, "\n"), msglen;

            if (stdlog_decode (s, len, &hdr, NULL, NULL, &msg, &msglen) < 0)
                fprintf (stderr, "%.*s\n", (int)len, s);
            else
                fprintf (stderr, "%s.%s[%s]: %.*s\n", hdr.appname,
                         stdlog_severity_to_string (stdlog_severity (hdr.pri)),
                         hdr.hostname, (int)msglen, msg);
            flux_future_reset (f);
            count++;
        }
        /* the broker may go away before its final response arrives */
        if (errno != ENODATA && !(errno == ECONNRESET && count > 0))
            cmd_die ("%s", future_strerror (f, errno));
    }
    flux_future_destroy (f);
    flux_close (h);
    return 0;
}
