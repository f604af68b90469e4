/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* rpc - test helper: send one request and print the response payload.
 * Usage: rpc [-r RANK] [-s] [-b N] TOPIC [PAYLOAD]
 *   -r RANK  nodeid (default: any)
 *   -s       streaming: print every response until the stream ends
 *   -b N     burst: send N requests at once, wait up to 10 s for each
 *            answer, print "answered A failed F"; exit 0 when every
 *            request got an answer (success or error), else 1
 * Exit 0 on success; on error print "TOPIC: strerror" and exit with errno.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libflux/flux.h"

#define USAGE "Usage: rpc [-r RANK] [-s] [-b N] TOPIC [PAYLOAD]\n"

static int burst (flux_t *h, const char *topic, const char *payload,
                  uint32_t nodeid, int n)
{
    flux_future_t **f = calloc (n, sizeof (*f));
    int answered = 0, failed = 0;

    if (!f) {
        perror ("calloc");
        return 1;
    }
    for (int i = 0; i < n; i++) {
        if (!(f[i] = flux_rpc (h, topic, payload, nodeid, 0))) {
            perror ("flux_rpc");
            return 1;
        }
    }
    for (int i = 0; i < n; i++) {
        if (flux_future_wait_for (f[i], 10.) == 0) {
            answered++;
            if (flux_future_get (f[i], NULL) < 0)
                failed++;
        }
        flux_future_destroy (f[i]);
    }
    free (f);
    printf ("answered %d failed %d\n", answered, failed);
    return answered == n ? 0 : 1;
}

int main (int argc, char **argv)
{
    uint32_t nodeid = FLUX_NODEID_ANY;
    int flags = 0, c, nburst = 0;
    flux_t *h;
    flux_future_t *f;
    const char *s;

    while ((c = getopt (argc, argv, "r:sb:")) != -1) {
        if (c == 'r')
            nodeid = strtoul (optarg, NULL, 10);
        else if (c == 's')
            flags = FLUX_RPC_STREAMING;
        else if (c == 'b' && (nburst = atoi (optarg)) > 0)
            ;
        else {
            fprintf (stderr, USAGE);
            return 1;
        }
    }
    if (optind >= argc) {
        fprintf (stderr, USAGE);
        return 1;
    }
    if (!(h = flux_open (NULL, 0))) {
        perror ("flux_open");
        return 1;
    }
    if (nburst > 0) {
        int rc = burst (h, argv[optind],
                        optind + 1 < argc ? argv[optind + 1] : NULL, nodeid,
                        nburst);
        flux_close (h);
        return rc;
    }
    if (!(f = flux_rpc (h, argv[optind],
                        optind + 1 < argc ? argv[optind + 1] : NULL, nodeid,
                        flags))) {
        perror ("flux_rpc");
        return 1;
    }
    for (;;) {
        if (flux_rpc_get (f, &s) < 0) {
            int e = errno;
            if (flags && e == ENODATA)
                break;
            fprintf (stderr, "%s: %s\n", argv[optind], future_strerror (f, e));
            flux_future_destroy (f); /* exit quietly under LeakSanitizer */
            flux_close (h);
            return e;
        }
        printf ("%s\n", s ? s : "");
        if (!flags)
            break;
        fflush (stdout); /* a stream is read as it comes */
        flux_future_reset (f);
    }
    flux_future_destroy (f);
    flux_close (h);
    return 0;
}
