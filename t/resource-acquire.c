/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* resource-acquire - test client for resource.acquire (RFC 28): sends the
 * streaming request to rank 0 and prints each response payload on its
 * own line (flushed), as a scheduler would see them.
 * Usage: resource-acquire [-t TOPIC] [-n COUNT] [-c]
 *   -t TOPIC  another streaming topic with the same conventions, e.g.
 *             resource.journal (its cancel is TOPIC-cancel)
 *   -n COUNT  exit 0 after COUNT responses (default: until the stream
 *             ends)
 *   -c        after COUNT responses, cancel (resource.acquire-cancel) and
 *             wait for the stream to end with ENODATA
 * On an error response print "TOPIC: ERROR" on stderr and exit with the
 * errno.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libflux/flux.h"

int main (int argc, char **argv)
{
    const char *topic = "resource.acquire";
    char cancel_topic[128];
    long count = -1, n = 0;
    bool cancel = false;
    const char *s;
    flux_future_t *f;
    flux_t *h;
    int c;

    while ((c = getopt (argc, argv, "t:n:c")) != -1) {
        if (c == 't')
            topic = optarg;
        else if (c == 'n')
            count = strtol (optarg, NULL, 10);
        else if (c == 'c')
            cancel = true;
        else {
            fprintf (stderr,
                     "Usage: resource-acquire [-t TOPIC] [-n COUNT] [-c]\n");
            return 1;
        }
    }
    if (!(h = flux_open (NULL, 0))) {
        perror ("flux_open");
        return 1;
    }
    snprintf (cancel_topic, sizeof (cancel_topic), "%s-cancel", topic);
    if (!(f = flux_rpc (h, topic, NULL, 0, FLUX_RPC_STREAMING))) {
        perror ("flux_rpc");
        return 1;
    }
    while (count < 0 || n < count) {
        if (flux_rpc_get (f, &s) < 0) {
            int errnum = errno;
            fprintf (stderr, "%s: %s\n", topic, future_strerror (f, errnum));
            flux_future_destroy (f);
            flux_close (h);
            return errnum;
        }
        printf ("%s\n", s ? s : "");
        fflush (stdout);
        flux_future_reset (f);
        n++;
    }
    if (cancel) {
        flux_future_t *cf;
        cf = flux_rpc_pack (h, cancel_topic, 0, FLUX_RPC_NORESPONSE, "{s:i}",
                            "matchtag", (int)flux_rpc_get_matchtag (f));
        flux_future_destroy (cf);
        if (flux_rpc_get (f, &s) == 0 || errno != ENODATA) {
            fprintf (stderr, "%s: expected ENODATA, got %s\n", topic,
                     s ? s : strerror (errno));
            return 1;
        }
        printf ("ENODATA\n");
    }
    flux_future_destroy (f);
    flux_close (h);
    return 0;
}
