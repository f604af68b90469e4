/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* rpc - test helper: send one request and print the response payload.
 * Usage: rpc [-r RANK] [-s] TOPIC [PAYLOAD]
 *   -r RANK  nodeid (default: any)
 *   -s       streaming: print every response until the stream ends
 * Exit 0 on success; on error print "TOPIC: strerror" and exit with errno.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libflux/flux.h"

int main (int argc, char **argv)
{
    uint32_t nodeid = FLUX_NODEID_ANY;
    int flags = 0, c;
    flux_t *h;
    flux_future_t *f;
    const char *s;

    while ((c = getopt (argc, argv, "r:s")) != -1) {
        if (c == 'r')
            nodeid = strtoul (optarg, NULL, 10);
        else if (c == 's')
            flags = FLUX_RPC_STREAMING;
        else {
            fprintf (stderr, "Usage: rpc [-r RANK] [-s] TOPIC [PAYLOAD]\n");
            return 1;
        }
    }
    if (optind >= argc) {
        fprintf (stderr, "Usage: rpc [-r RANK] [-s] TOPIC [PAYLOAD]\n");
        return 1;
    }
    if (!(h = flux_open (NULL, 0))) {
        perror ("flux_open");
        return 1;
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
        flux_future_reset (f);
    }
    flux_future_destroy (f);
    flux_close (h);
    return 0;
}
