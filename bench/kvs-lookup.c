/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* kvs-lookup - KVS lookup throughput from one broker, e.g. a leaf.
 *
 * Usage: kvs-lookup [-r RANK] [-w WINDOW] [-k NKEYS] COUNT PREFIX
 *
 * Run inside an instance (as flux start's initial program).  Puts NKEYS
 * keys PREFIX.k<i> (default 1) with one commit through rank 0, then
 * connects to RANK's own socket (its local-uri attribute; default: the
 * broker it was started on), waits until that broker's root has the
 * commit, and does COUNT lookups of the keys in turn, keeping WINDOW
 * lookups in flight (default 1: each waits for the previous).  Prints
 * lookups/s and, for WINDOW 1, the latency distribution.  The first
 * lookup of each key fills the leaf's cache; the rest are served by it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libflux/flux.h"
#include "libkvs/kvs.h"
#include "libutil/monotime.h"

struct run {
    flux_t *h;
    const char *prefix;
    int count, window, nkeys;
    int sent, done, errors;
    double *lat;
    double *t0; /* send time per slot */
};

static int cmp_double (const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void send_one (struct run *r);

static void lookup_cb (flux_future_t *f, void *arg)
{
    struct run *r = arg;
    int slot = (int)(intptr_t)flux_future_aux_get (f, "slot");
    const char *s;

    if (flux_kvs_lookup_get (f, &s) < 0) {
        if (r->errors++ == 0)
            fprintf (stderr, "kvs-lookup: %s\n", future_strerror (f, errno));
    }
    r->lat[r->done++] = monotime () - r->t0[slot];
    flux_future_destroy (f);
    if (r->sent < r->count)
        send_one (r);
    else if (r->done == r->count)
        flux_reactor_stop (flux_get_reactor (r->h));
}

static void send_one (struct run *r)
{
    char key[256];
    int slot = r->sent % r->window;
    flux_future_t *f;

    snprintf (key, sizeof (key), "%s.k%d", r->prefix, r->sent % r->nkeys);
    r->t0[slot] = monotime ();
    if (!(f = flux_kvs_lookup (r->h, NULL, 0, key))
        || flux_future_aux_set (f, "slot", (void *)(intptr_t)slot, NULL) < 0
        || flux_future_then (f, -1., lookup_cb, r) < 0) {
        perror ("flux_kvs_lookup");
        exit (1);
    }
    r->sent++;
}

/* Put the keys through h (one commit); the new root's sequence. */
static int put_keys (flux_t *h, const char *prefix, int nkeys)
{
    flux_kvs_txn_t *txn = flux_kvs_txn_create ();
    flux_future_t *f;
    char key[256];
    int seq;

    for (int i = 0; i < nkeys; i++) {
        snprintf (key, sizeof (key), "%s.k%d", prefix, i);
        if (flux_kvs_txn_pack (txn, 0, key, "s", "a small value") < 0) {
            perror ("flux_kvs_txn_pack");
            exit (1);
        }
    }
    if (!(f = flux_kvs_commit (h, NULL, 0, txn))
        || flux_kvs_commit_get_sequence (f, &seq) < 0) {
        fprintf (stderr, "kvs-lookup: commit: %s\n",
                 f ? future_strerror (f, errno) : strerror (errno));
        exit (1);
    }
    flux_future_destroy (f);
    flux_kvs_txn_destroy (txn);
    return seq;
}

/* The local-uri of rank (asked of that broker). */
static char *rank_uri (flux_t *h, uint32_t rank)
{
    flux_future_t *f;
    const char *uri;
    char *s;

    if (!(f = flux_rpc_pack (h, "attr.get", rank, 0, "{s:s}", "name",
                             "local-uri"))
        || flux_rpc_get_unpack (f, "{s:s}", "value", &uri) < 0) {
        fprintf (stderr, "kvs-lookup: local-uri of rank %u: %s\n", rank,
                 f ? future_strerror (f, errno) : strerror (errno));
        exit (1);
    }
    s = strdup (uri);
    flux_future_destroy (f);
    return s;
}

int main (int argc, char **argv)
{
    struct run r = {.window = 1, .nkeys = 1};
    long rank = -1;
    flux_t *h0;
    double t0, elapsed;
    int c, seq;

    while ((c = getopt (argc, argv, "r:w:k:")) != -1) {
        if (c == 'r')
            rank = strtol (optarg, NULL, 10);
        else if (c == 'w')
            r.window = atoi (optarg);
        else if (c == 'k')
            r.nkeys = atoi (optarg);
        else
            goto usage;
    }
    if (argc - optind != 2 || (r.count = atoi (argv[optind])) < 1
        || r.window < 1 || r.nkeys < 1)
        goto usage;
    if (r.window > r.count)
        r.window = r.count;
    r.prefix = argv[optind + 1];
    if (!(h0 = flux_open (NULL, 0))) {
        perror ("flux_open");
        return 1;
    }
    seq = put_keys (h0, r.prefix, r.nkeys);
    if (rank >= 0) {
        char *uri = rank_uri (h0, (uint32_t)rank);
        if (!(r.h = flux_open (uri, 0))) {
            fprintf (stderr, "kvs-lookup: %s: %s\n", uri, strerror (errno));
            return 1;
        }
        free (uri);
    }
    else
        r.h = h0;
    if (flux_kvs_wait_version (r.h, NULL, seq) < 0) {
        perror ("flux_kvs_wait_version");
        return 1;
    }
    if (!(r.lat = calloc (r.count, sizeof (double)))
        || !(r.t0 = calloc (r.window, sizeof (double)))) {
        perror ("calloc");
        return 1;
    }
    t0 = monotime ();
    while (r.sent < r.window)
        send_one (&r);
    if (flux_reactor_run (flux_get_reactor (r.h), 0) < 0) {
        perror ("flux_reactor_run");
        return 1;
    }
    elapsed = monotime () - t0;
    {
        char where[32] = "the local broker";
        if (rank >= 0)
            snprintf (where, sizeof (where), "rank %ld", rank);
        printf ("%d lookups from %s (window %d, %d keys): %.3fs, %.0f "
                "lookups/s\n",
                r.count, where, r.window, r.nkeys, elapsed, r.count / elapsed);
    }
    if (r.window == 1) {
        qsort (r.lat, r.count, sizeof (double), cmp_double);
        printf ("latency us: p50 %.1f p99 %.1f max %.1f\n",
                r.lat[r.count / 2] * 1e6, r.lat[(int)(r.count * 0.99)] * 1e6,
                r.lat[r.count - 1] * 1e6);
    }
    if (r.h != h0)
        flux_close (r.h);
    flux_close (h0);
    free (r.lat);
    free (r.t0);
    return r.errors ? 1 : 0;
usage:
    fprintf (stderr, "Usage: kvs-lookup [-r RANK] [-w WINDOW] [-k NKEYS] COUNT "
                     "PREFIX\n");
    return 1;
}
