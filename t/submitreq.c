/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* submitreq - test helper: send one job-ingest.submit and print the id
 * (decimal).  Usage:
 *   submitreq [-r RANK] [-g UID] [-s SIGNER] [-u URGENCY] [-f FLAGS] [-J]
 *             FILE|-
 *   -r RANK    send to RANK's job-ingest (default: the local one)
 *   -g UID     preset guest credentials (userid UID, role USER): only the
 *              instance owner's connection keeps them
 *   -s SIGNER  sign J for SIGNER (default: the requester's uid)
 *   -u N, -f N urgency (default 16) and raw flags (default 0)
 *   -J         FILE already holds J: send it as is
 * On error print "submitreq: ERRSTR" and exit with the errno.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "libflux/flux.h"
#include "libjob/sign.h"

static char *read_all (const char *path)
{
    FILE *f = strcmp (path, "-") ? fopen (path, "r") : stdin;
    char *buf = NULL;
    size_t size = 0;

    if (!f || getdelim (&buf, &size, '\0', f) < 0) {
        perror (path);
        exit (1);
    }
    if (f != stdin)
        fclose (f);
    return buf;
}

int main (int argc, char **argv)
{
    uint32_t nodeid = FLUX_NODEID_ANY;
    long guest = -1, signer = -1;
    int urgency = 16, flags = 0, raw = 0, c;
    char *text, *J;
    flux_msg_t *msg;
    flux_future_t *f;
    json_int_t id;
    flux_t *h;

    while ((c = getopt (argc, argv, "r:g:s:u:f:J")) != -1) {
        switch (c) {
            case 'r':
                nodeid = strtoul (optarg, NULL, 10);
                break;
            case 'g':
                guest = strtol (optarg, NULL, 10);
                break;
            case 's':
                signer = strtol (optarg, NULL, 10);
                break;
            case 'u':
                urgency = strtol (optarg, NULL, 10);
                break;
            case 'f':
                flags = strtol (optarg, NULL, 0);
                break;
            case 'J':
                raw = 1;
                break;
            default:
                fprintf (stderr, "Usage: submitreq [-r RANK] [-g UID] [-s "
                                 "SIGNER] [-u N] [-f N] [-J] FILE\n");
                return 1;
        }
    }
    if (optind != argc - 1) {
        fprintf (stderr, "submitreq: missing FILE\n");
        return 1;
    }
    text = read_all (argv[optind]);
    if (signer < 0)
        signer = guest >= 0 ? guest : (long)getuid ();
    if (raw) {
        J = strdup (text);
        J[strcspn (J, "\n")] = '\0';
    }
    else if (!(J = sign_none_wrap (text, strlen (text), (uint32_t)signer))) {
        perror ("sign_none_wrap");
        return 1;
    }
    if (!(h = flux_open (NULL, 0))) {
        perror ("flux_open");
        return 1;
    }
    if (!(msg = flux_request_encode ("job-ingest.submit", NULL))
        || flux_msg_pack (msg, "{s:s s:i s:i}", "J", J, "urgency", urgency,
                          "flags", flags)
               < 0) {
        perror ("encode");
        return 1;
    }
    if (guest >= 0) {
        struct flux_msg_cred cred = {(uint32_t)guest, FLUX_ROLE_USER};
        flux_msg_set_cred (msg, cred);
    }
    if (!(f = flux_rpc_message (h, msg, nodeid, 0))
        || flux_rpc_get_unpack (f, "{s:I}", "id", &id) < 0) {
        int e = errno;
        fprintf (stderr, "submitreq: %s\n",
                 f ? future_strerror (f, e) : strerror (e));
        flux_future_destroy (f);
        flux_msg_decref (msg);
        flux_close (h);
        free (J);
        free (text);
        return e;
    }
    printf ("%ju\n", (uintmax_t)id);
    flux_future_destroy (f);
    flux_msg_decref (msg);
    flux_close (h);
    free (J);
    free (text);
    return 0;
}
