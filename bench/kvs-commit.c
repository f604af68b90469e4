/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* kvs-commit - KVS commit throughput, like flux-core's t/kvs/commit.
 *
 * Usage: kvs-commit [--stats] [--append] NTHREADS COUNT PREFIX
 *
 * Each thread opens its own handle and COUNT times puts one small key
 * (PREFIX.<thread>.<i> = i) and commits it, waiting for each commit
 * before the next.  Prints the commit rate; --stats adds the commit
 * latency distribution.  With --append each thread instead appends an
 * RFC 18 event to its own eventlog PREFIX.<thread> in each commit (the
 * way the job manager writes job eventlogs).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libflux/flux.h"
#include "libkvs/kvs.h"
#include "libutil/monotime.h"

static int append;

struct thd {
    pthread_t t;
    int id;
    int count;
    const char *prefix;
    double *lat; /* seconds, one per commit */
    int errnum;
};

static void *run (void *arg)
{
    struct thd *t = arg;
    flux_t *h;
    char key[256];

    if (!(h = flux_open (NULL, 0))) {
        t->errnum = errno;
        return NULL;
    }
    for (int i = 0; i < t->count; i++) {
        flux_kvs_txn_t *txn = flux_kvs_txn_create ();
        flux_future_t *f = NULL;
        double t0 = monotime ();

        int rc;

        if (append) {
            char event[128];
            struct timespec ts;
            clock_gettime (CLOCK_REALTIME, &ts);
            snprintf (key, sizeof (key), "%s.%d", t->prefix, t->id);
            snprintf (event, sizeof (event),
                      "{\"timestamp\":%.6f,\"name\":\"test\","
                      "\"context\":{\"i\":%d}}\n",
                      ts.tv_sec + ts.tv_nsec * 1e-9, i);
            rc = txn ? flux_kvs_txn_put (txn, FLUX_KVS_APPEND, key, event) : -1;
        }
        else {
            snprintf (key, sizeof (key), "%s.%d.%d", t->prefix, t->id, i);
            rc = txn ? flux_kvs_txn_pack (txn, 0, key, "i", i) : -1;
        }
        if (rc < 0 || !(f = flux_kvs_commit (h, NULL, 0, txn))
            || flux_future_get (f, NULL) < 0) {
            t->errnum = errno;
            fprintf (stderr, "kvs-commit: thread %d: %s: %s\n", t->id, key,
                     f ? future_strerror (f, errno) : strerror (errno));
            flux_future_destroy (f);
            flux_kvs_txn_destroy (txn);
            break;
        }
        t->lat[i] = monotime () - t0;
        flux_future_destroy (f);
        flux_kvs_txn_destroy (txn);
    }
    flux_close (h);
    return NULL;
}

static int cmp_double (const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main (int argc, char **argv)
{
    int stats = 0, nthreads, count, n = 0, rc = 0;
    struct thd *thd;
    double t0, elapsed, *all;
    const char *prefix;

    while (argc > 1 && !strncmp (argv[1], "--", 2)) {
        if (!strcmp (argv[1], "--stats"))
            stats = 1;
        else if (!strcmp (argv[1], "--append"))
            append = 1;
        else
            argc = 0; /* usage */
        argc--;
        argv++;
    }
    if (argc != 4 || (nthreads = atoi (argv[1])) < 1
        || (count = atoi (argv[2])) < 1) {
        fprintf (stderr,
                 "Usage: kvs-commit [--stats] [--append] NTHREADS COUNT "
                 "PREFIX\n");
        return 1;
    }
    prefix = argv[3];
    if (!(thd = calloc (nthreads, sizeof (*thd)))
        || !(all = calloc ((size_t)nthreads * count, sizeof (double)))) {
        perror ("calloc");
        return 1;
    }
    t0 = monotime ();
    for (int i = 0; i < nthreads; i++) {
        thd[i].id = i;
        thd[i].count = count;
        thd[i].prefix = prefix;
        thd[i].lat = all + (size_t)i * count;
        if ((errno = pthread_create (&thd[i].t, NULL, run, &thd[i]))) {
            perror ("pthread_create");
            return 1;
        }
    }
    for (int i = 0; i < nthreads; i++) {
        pthread_join (thd[i].t, NULL);
        if (thd[i].errnum)
            rc = 1;
    }
    elapsed = monotime () - t0;
    for (size_t i = 0; i < (size_t)nthreads * count; i++) {
        if (all[i] > 0)
            all[n++] = all[i];
    }
    printf ("%d threads x %d %s: %d in %.3fs, %.0f commits/s\n", nthreads,
            count, append ? "eventlog appends" : "commits", n, elapsed,
            n / elapsed);
    if (stats && n > 0) {
        double sum = 0;
        qsort (all, n, sizeof (double), cmp_double);
        for (int i = 0; i < n; i++)
            sum += all[i];
        printf ("latency ms: min %.3f mean %.3f p50 %.3f p99 %.3f max %.3f\n",
                all[0] * 1e3, sum / n * 1e3, all[n / 2] * 1e3,
                all[(int)(n * 0.99)] * 1e3, all[n - 1] * 1e3);
    }
    free (all);
    free (thd);
    return rc;
}
