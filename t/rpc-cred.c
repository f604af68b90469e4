/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* rpc-cred - test helper: send one request with preset credentials (as
 * the instance owner may, PROTOCOLS.md 1.2) and print the responses.
 * Usage: rpc-cred [-u USERID] [-R ROLEMASK] [-s] [-c N] TOPIC [PAYLOAD]
 *   -u, -R  the request's userid and rolemask (default: unset, so the
 *           connector stamps ours)
 *   -s      streaming: print every response until the stream ends
 *   -c N    streaming: stop after N responses (sends no cancel)
 * An empty response payload prints as an empty line.  Exit 0 on success
 * (ENODATA ends a stream); on error print "TOPIC: text" and exit with
 * the errno.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libflux/flux.h"

int main (int argc, char **argv)
{
    struct flux_msg_cred cred = {FLUX_USERID_UNKNOWN, 0};
    int streaming = 0, c, count = -1, n = 0;
    flux_msg_t *msg;
    flux_future_t *f;
    flux_t *h;
    const char *s;

    while ((c = getopt (argc, argv, "u:R:sc:")) != -1) {
        if (c == 'u')
            cred.userid = strtoul (optarg, NULL, 0);
        else if (c == 'R')
            cred.rolemask = strtoul (optarg, NULL, 0);
        else if (c == 's')
            streaming = 1;
        else if (c == 'c')
            count = atoi (optarg);
        else
            goto usage;
    }
    if (optind >= argc)
        goto usage;
    if (!(h = flux_open (NULL, 0))) {
        perror ("flux_open");
        return 1;
    }
    if (!(msg = flux_request_encode (
              argv[optind], optind + 1 < argc ? argv[optind + 1] : NULL))
        || flux_msg_set_cred (msg, cred) < 0
        || (streaming && flux_msg_set_streaming (msg) < 0)
        || !(f = flux_rpc_message (h, msg, FLUX_NODEID_ANY,
                                   streaming ? FLUX_RPC_STREAMING : 0))) {
        perror ("flux_rpc_message");
        return 1;
    }
    flux_msg_decref (msg);
    for (;;) {
        if (flux_rpc_get (f, &s) < 0) {
            int e = errno;
            if (streaming && e == ENODATA)
                break;
            fprintf (stderr, "%s: %s\n", argv[optind], future_strerror (f, e));
            flux_future_destroy (f); /* exit quietly under LeakSanitizer */
            flux_close (h);
            return e;
        }
        printf ("%s\n", s ? s : "");
        fflush (stdout);
        if (!streaming || ++n == count)
            break;
        flux_future_reset (f);
    }
    flux_future_destroy (f);
    flux_close (h);
    return 0;
usage:
    fprintf (
        stderr,
        "Usage: rpc-cred [-u UID] [-R ROLES] [-s] [-c N] TOPIC [PAYLOAD]\n");
    return 1;
}
