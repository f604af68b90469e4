/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* rpc-cred - test helper: send one request with preset credentials (as
 * the instance owner may, PROTOCOLS.md 1.2) and print the responses.
 * Usage: rpc-cred [-u USERID] [-R ROLEMASK] [-s] [-c N] TOPIC [PAYLOAD]
 *   -u, -R  the request's userid and rolemask (default: unset, so the
 *           connector stamps ours)
 *   -s      streaming: print every response until the stream ends
 *   -c N    streaming: stop after N responses (sends no cancel)
 *   -f FILE the payload is FILE's contents (for payloads over argv's limit)
 *   -n N    send the request N times, one after another, and print
 *           "answered A errors E untold U" (U: errors without a text)
 *           and the first error's text; exit 0 once all N are answered
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

/* The whole of FILE, NUL-terminated, or NULL with errno set. */
static char *read_file (const char *path)
{
    FILE *fp = fopen (path, "r");
    char *buf = NULL;
    size_t size = 0, len = 0, n;

    if (!fp)
        return NULL;
    do {
        if (len + 4096 + 1 > size) {
            char *nbuf = realloc (buf, size = (size + 4096) * 2);
            if (!nbuf) {
                free (buf);
                fclose (fp);
                return NULL;
            }
            buf = nbuf;
        }
        n = fread (buf + len, 1, size - len - 1, fp);
        len += n;
    } while (n > 0);
    fclose (fp);
    buf[len] = '\0';
    return buf;
}

/* Send TOPIC/PAYLOAD n times, one at a time; count what comes back. */
static int send_repeated (flux_t *h, struct flux_msg_cred cred,
                          const char *topic, const char *payload, int n)
{
    int answered = 0, errors = 0, untold = 0;
    char first[256] = "";

    for (int i = 0; i < n; i++) {
        flux_msg_t *msg;
        flux_future_t *f;
        const char *s;

        if (!(msg = flux_request_encode (topic, payload))
            || flux_msg_set_cred (msg, cred) < 0
            || !(f = flux_rpc_message (h, msg, FLUX_NODEID_ANY, 0))) {
            perror ("flux_rpc_message");
            return 1;
        }
        flux_msg_decref (msg);
        if (flux_rpc_get (f, &s) < 0) {
            int e = errno;
            const char *text = flux_future_error_string (f);
            errors++;
            if (!text || !*text)
                untold++;
            if (!*first)
                snprintf (first, sizeof (first), "%s", future_strerror (f, e));
        }
        else
            answered++;
        flux_future_destroy (f);
    }
    printf ("answered %d errors %d untold %d\n", answered, errors, untold);
    if (*first)
        printf ("first error: %s\n", first);
    flux_close (h);
    return 0;
}

int main (int argc, char **argv)
{
    struct flux_msg_cred cred = {FLUX_USERID_UNKNOWN, 0};
    int streaming = 0, c, count = -1, n = 0, repeat = 0;
    char *file_payload = NULL;
    const char *payload;
    flux_msg_t *msg;
    flux_future_t *f;
    flux_t *h;
    const char *s;

    while ((c = getopt (argc, argv, "u:R:sc:n:f:")) != -1) {
        if (c == 'u')
            cred.userid = strtoul (optarg, NULL, 0);
        else if (c == 'R')
            cred.rolemask = strtoul (optarg, NULL, 0);
        else if (c == 's')
            streaming = 1;
        else if (c == 'c')
            count = atoi (optarg);
        else if (c == 'n')
            repeat = atoi (optarg);
        else if (c == 'f') {
            if (!(file_payload = read_file (optarg))) {
                perror (optarg);
                return 1;
            }
        }
        else
            goto usage;
    }
    if (optind >= argc)
        goto usage;
    if (!(h = flux_open (NULL, 0))) {
        perror ("flux_open");
        return 1;
    }
    payload = file_payload ? file_payload
                           : (optind + 1 < argc ? argv[optind + 1] : NULL);
    if (repeat > 0) {
        int rc = send_repeated (h, cred, argv[optind], payload, repeat);
        free (file_payload);
        return rc;
    }
    if (!(msg = flux_request_encode (argv[optind], payload))
        || flux_msg_set_cred (msg, cred) < 0
        || (streaming && flux_msg_set_streaming (msg) < 0)
        || !(f = flux_rpc_message (h, msg, FLUX_NODEID_ANY,
                                   streaming ? FLUX_RPC_STREAMING : 0))) {
        perror ("flux_rpc_message");
        return 1;
    }
    flux_msg_decref (msg);
    free (file_payload);
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
    fprintf (stderr,
             "Usage: rpc-cred [-u UID] [-R ROLES] [-s] [-c N] [-n N] [-f FILE] "
             "TOPIC [PAYLOAD]\n");
    return 1;
}
