/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* jm-journal - test helper: read job-manager.events-journal and cancel it.
 *
 * Usage: jm-journal [-c COUNT] [PAYLOAD]
 * Prints each response (one JSON object per line, flushed).  After
 * COUNT responses (the sentinel counts) it sends
 * job-manager.events-journal-cancel {matchtag} and prints "ENODATA" when
 * the stream ends as it should; without -c it reads until the stream
 * ends.  Exits with the errno of an unexpected end.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libflux/flux.h"

int main (int argc, char **argv)
{
    long count = -1, n = 0;
    flux_future_t *f;
    flux_t *h;
    const char *s;
    int c;

    while ((c = getopt (argc, argv, "c:")) != -1) {
        if (c == 'c')
            count = strtol (optarg, NULL, 10);
        else {
            fprintf (stderr, "Usage: jm-journal [-c COUNT] [PAYLOAD]\n");
            return 1;
        }
    }
    if (!(h = flux_open (NULL, 0))) {
        perror ("flux_open");
        return 1;
    }
    if (!(f = flux_rpc (h, "job-manager.events-journal",
                        optind < argc ? argv[optind] : "{}", FLUX_NODEID_ANY,
                        FLUX_RPC_STREAMING))) {
        perror ("flux_rpc");
        return 1;
    }
    for (;;) {
        if (flux_rpc_get (f, &s) < 0) {
            int e = errno;
            if (e == ENODATA) {
                printf ("ENODATA\n");
                break;
            }
            fprintf (stderr, "events-journal: %s\n", future_strerror (f, e));
            return e;
        }
        printf ("%s\n", s ? s : "");
        fflush (stdout);
        if (++n == count) {
            flux_future_t *cf;
            cf = flux_rpc_pack (h, "job-manager.events-journal-cancel",
                                FLUX_NODEID_ANY, FLUX_RPC_NORESPONSE, "{s:i}",
                                "matchtag", (int)flux_rpc_get_matchtag (f));
            flux_future_destroy (cf);
        }
        flux_future_reset (f);
    }
    flux_future_destroy (f);
    flux_close (h);
    return 0;
}
