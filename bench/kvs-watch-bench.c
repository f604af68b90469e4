/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* kvs-watch-bench - kvs-watch measurements inside a running instance with
 * the kvs and kvs-watch modules (run it as the initial program of flux
 * start, e.g. flux start -s 4 -Sbroker.modules=content,kvs,kvs-watch
 * kvs-watch-bench fanout 5000 20).
 *
 *   kvs-watch-bench [-r RANK] fanout NWATCH ROUNDS
 *       NWATCH eventlogs, one WATCH_APPEND watcher each (on RANK).
 *       Then ROUNDS commits that append to every eventlog (prints the
 *       appends delivered per second), then ROUNDS commits that append to
 *       a single eventlog (prints the mean time from commit to its
 *       watcher's response, and the commit's own share: kvs-watch wakes
 *       one watcher whatever NWATCH is; on a rank > 0 the rest is mostly
 *       the kvs loading the changed NWATCH-entry directory).
 *   kvs-watch-bench [-r RANK] eventlog COUNT
 *       One watcher of one eventlog, COUNT appends, each waiting for the
 *       watcher: prints the mean latency of the first and last 10% and
 *       the content loads kvs-watch made (COUNT - 1 if each blob is
 *       loaded once).
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libflux/flux.h"
#include "libkvs/kvs.h"
#include "libutil/monotime.h"

static flux_t *h;
static flux_reactor_t *r;
static uint32_t rank = FLUX_NODEID_ANY;

struct watch {
    flux_future_t *f;
    int count; /* responses received */
};

static void die (const char *what)
{
    fprintf (stderr, "kvs-watch-bench: %s: %s\n", what, strerror (errno));
    exit (1);
}

static void usage (void)
{
    fprintf (stderr, "Usage: kvs-watch-bench [-r RANK] fanout NWATCH ROUNDS\n"
                     "       kvs-watch-bench [-r RANK] eventlog COUNT\n");
    exit (1);
}

static void watch_cb (flux_future_t *f, void *arg)
{
    struct watch *w = arg;

    if (flux_future_get (f, NULL) < 0)
        die ("watch");
    w->count++;
    flux_future_reset (f);
}

static void watch_start (struct watch *w, const char *key,
                         flux_continuation_f cb)
{
    w->f = flux_rpc_pack (h, "kvs-watch.lookup", rank, FLUX_RPC_STREAMING,
                          "{s:s s:s s:i}", "namespace", "primary", "key", key,
                          "flags", FLUX_KVS_WATCH | FLUX_KVS_WATCH_APPEND);
    if (!w->f || flux_future_then (w->f, -1., cb, w) < 0)
        die ("kvs-watch.lookup");
}

/* Append one event to each key of keys[0..n-1] in one commit. */
static double commit_time; /* spent waiting for commit responses */

static void append_commit (char **keys, int n, int seq)
{
    flux_kvs_txn_t *txn = flux_kvs_txn_create ();
    char event[128];
    flux_future_t *f;
    double t0;

    snprintf (event, sizeof (event), "{\"timestamp\":%.6f,\"name\":\"e%d\"}\n",
              1.0 + seq, seq);
    for (int i = 0; i < n; i++)
        if (!txn || flux_kvs_txn_put (txn, FLUX_KVS_APPEND, keys[i], event) < 0)
            die ("flux_kvs_txn_put");
    t0 = monotime ();
    if (!(f = flux_kvs_commit (h, NULL, 0, txn))
        || flux_future_get (f, NULL) < 0)
        die ("flux_kvs_commit");
    commit_time += monotime () - t0;
    flux_future_destroy (f);
    flux_kvs_txn_destroy (txn);
}

/* Run the reactor until *counter reaches target. */
static void wait_count (int *counter, int target)
{
    while (*counter < target)
        if (flux_reactor_run (r, FLUX_REACTOR_ONCE) < 0)
            die ("reactor");
}

static int total;

static void count_cb (flux_future_t *f, void *arg)
{
    watch_cb (f, arg);
    total++;
}

static int bench_fanout (int n, int rounds)
{
    struct watch *w;
    char **keys;
    double t0, t;

    if (n < 1 || rounds < 1)
        usage ();
    w = calloc (n, sizeof (*w));
    keys = calloc (n, sizeof (*keys));
    if (!w || !keys)
        die ("calloc");
    for (int i = 0; i < n; i++)
        if (asprintf (&keys[i], "bench.fanout.%d.eventlog", i) < 0)
            die ("asprintf");
    t0 = monotime ();
    append_commit (keys, n, 0);
    for (int i = 0; i < n; i++)
        watch_start (&w[i], keys[i], count_cb);
    wait_count (&total, n);
    printf ("fanout: %d watchers started in %.3f s\n", n, monotime () - t0);

    t0 = monotime ();
    for (int k = 1; k <= rounds; k++) {
        append_commit (keys, n, k);
        wait_count (&total, n * (k + 1));
    }
    t = monotime () - t0;
    printf ("fanout: %d commits appending to all %d eventlogs: %.0f appends "
            "delivered/s\n",
            rounds, n, (double)n * rounds / t);

    t0 = monotime ();
    commit_time = 0;
    for (int k = 0; k < rounds; k++) {
        int i = (k * 7919) % n;
        int target = w[i].count + 1;
        append_commit (&keys[i], 1, rounds + 1 + k);
        wait_count (&w[i].count, target);
    }
    t = monotime () - t0;
    printf ("fanout: commit to one of %d eventlogs until its watcher is "
            "answered: %.0f us (mean of %d; the commit itself: %.0f us)\n",
            n, t / rounds * 1e6, rounds, commit_time / rounds * 1e6);
    for (int i = 0; i < n; i++) {
        flux_future_destroy (w[i].f);
        free (keys[i]);
    }
    free (w);
    free (keys);
    return 0;
}

static long kvs_watch_loads (void)
{
    flux_future_t *f;
    json_int_t loads = -1;

    if ((f = flux_rpc (h, "kvs-watch.stats-get", "{}", rank, 0)))
        (void)flux_rpc_get_unpack (f, "{s:I}", "loads", &loads);
    flux_future_destroy (f);
    return (long)loads;
}

static int bench_eventlog (int count)
{
    struct watch w = {0};
    char *key = "bench.eventlog";
    double t0, first = 0, last = 0, cfirst = 0, clast = 0;
    int tenth = count / 10 > 0 ? count / 10 : 1;
    long loads0;

    if (count < 2)
        usage ();
    append_commit (&key, 1, 0);
    loads0 = kvs_watch_loads ();
    watch_start (&w, key, watch_cb);
    wait_count (&w.count, 1);
    for (int k = 1; k < count; k++) {
        double c0 = commit_time;
        t0 = monotime ();
        append_commit (&key, 1, k);
        wait_count (&w.count, k + 1);
        if (k <= tenth) {
            first += monotime () - t0;
            cfirst += commit_time - c0;
        }
        else if (k >= count - tenth) {
            last += monotime () - t0;
            clast += commit_time - c0;
        }
    }
    printf ("eventlog: %d appends, commit to response, first 10%%: %.0f us "
            "(commit %.0f us), last 10%%: %.0f us (commit %.0f us)\n",
            count, first / tenth * 1e6, cfirst / tenth * 1e6,
            last / tenth * 1e6, clast / tenth * 1e6);
    printf ("eventlog: content loads by kvs-watch: %ld\n",
            kvs_watch_loads () - loads0);
    flux_future_destroy (w.f);
    return 0;
}

int main (int argc, char **argv)
{
    int c, rc = 1;

    while ((c = getopt (argc, argv, "r:")) != -1) {
        if (c == 'r')
            rank = strtoul (optarg, NULL, 10);
        else
            usage ();
    }
    if (optind >= argc)
        usage ();
    if (!(h = flux_open (NULL, 0)) || !(r = flux_get_reactor (h)))
        die ("flux_open");
    if (!strcmp (argv[optind], "fanout") && argc - optind == 3)
        rc = bench_fanout (atoi (argv[optind + 1]), atoi (argv[optind + 2]));
    else if (!strcmp (argv[optind], "eventlog") && argc - optind == 2)
        rc = bench_eventlog (atoi (argv[optind + 1]));
    else
        usage ();
    flux_close (h);
    return rc;
}
