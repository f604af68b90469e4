/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* kvswatch - test client for kvs-watch.lookup (t1003): watches any number
 * of keys at once from one connection, with raw flags and, for the
 * instance owner, preset credentials.
 * Usage: kvswatch [OPTIONS] KEY...
 *   -n NS        namespace (default: primary)
 *   -f FLAGS     lookup flags, a number (default: 4, WATCH)
 *   -r RANK      send the requests to RANK (default: any, i.e. local)
 *   -c COUNT     cancel each watch after COUNT values (kvs-watch.cancel)
 *   -L LINES     print values as they are, and cancel each watch after
 *                LINES newlines (appends may come folded together)
 *   -u USERID    preset the requests' userid
 *   -R ROLEMASK  preset the requests' rolemask
 *   -S           never mark requests streaming
 *   -l           prefix each line with "KEY: "
 *   -e           print "ENODATA" when a stream ends normally
 *   -t SECONDS   fail a watch idle for SECONDS
 * Prints each value on a line ("SENTINEL" for a response without payload,
 * the RFC 11 object for non-val results).  A stream ends with ENODATA;
 * any other error is printed as "KEY: strerror[: text]" on stderr, and
 * the exit status is then 1.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libflux/flux.h"
#include "libkvs/treeobj.h"

struct watch {
    const char *key;
    flux_future_t *f;
    int count;
    int lines;
    bool canceled;
};

static flux_t *h;
static uint32_t nodeid = FLUX_NODEID_ANY;
static int maxcount = 0;
static int maxlines = 0;
static bool label, print_enodata;
static double timeout = -1.;
static int failures;

static void print_line (struct watch *w, const char *s, size_t len)
{
    if (label)
        printf ("%s: ", w->key);
    printf ("%.*s\n", (int)len, s);
    fflush (stdout);
}

static void cancel (struct watch *w)
{
    flux_future_t *f;

    f = flux_rpc_pack (h, "kvs-watch.cancel", nodeid, FLUX_RPC_NORESPONSE,
                       "{s:i}", "matchtag", (int)flux_rpc_get_matchtag (w->f));
    if (!f) {
        fprintf (stderr, "%s: cancel: %s\n", w->key, strerror (errno));
        exit (1);
    }
    flux_future_destroy (f);
    w->canceled = true;
}

static void print_val (struct watch *w, const flux_msg_t *msg)
{
    json_t *val;
    void *data;
    size_t len;

    if (flux_msg_unpack (msg, "{s:o}", "val", &val) < 0) {
        fprintf (stderr, "%s: malformed response\n", w->key);
        failures++;
        return;
    }
    if (treeobj_is_val (val) && treeobj_decode_val (val, &data, &len) == 0) {
        if (maxlines > 0) {
            fwrite (data, 1, len, stdout);
            fflush (stdout);
            for (size_t i = 0; i < len; i++)
                if (((char *)data)[i] == '\n')
                    w->lines++;
        }
        else
            print_line (w, data, len);
        free (data);
    }
    else {
        char *s = json_dumps (val, JSON_COMPACT | JSON_SORT_KEYS);
        print_line (w, s ? s : "?", s ? strlen (s) : 1);
        free (s);
    }
}

static void watch_cb (flux_future_t *f, void *arg)
{
    struct watch *w = arg;
    const flux_msg_t *msg;

    if (flux_future_get (f, NULL) < 0) {
        if (errno == ENODATA) {
            if (print_enodata)
                print_line (w, "ENODATA", 7);
        }
        else {
            const char *text = flux_future_error_string (f);
            fprintf (stderr, "%s: %s%s%s\n", w->key, strerror (errno),
                     text ? ": " : "", text ? text : "");
            failures++;
        }
        flux_future_destroy (f);
        w->f = NULL;
        return;
    }
    if (flux_future_get_msg (f, &msg) < 0) {
        fprintf (stderr, "%s: %s\n", w->key, strerror (errno));
        exit (1);
    }
    if (!flux_msg_has_payload (msg))
        print_line (w, "SENTINEL", 8);
    else {
        print_val (w, msg);
        w->count++;
    }
    if (!flux_msg_is_streaming (msg)) { /* a single response */
        flux_future_destroy (f);
        w->f = NULL;
        return;
    }
    if (((maxcount > 0 && w->count == maxcount)
         || (maxlines > 0 && w->lines >= maxlines))
        && !w->canceled)
        cancel (w);
    flux_future_reset (f);
}

static void usage (void)
{
    fprintf (stderr,
             "Usage: kvswatch [-n NS] [-f FLAGS] [-r RANK] [-c N] [-L N] "
             "[-u UID] [-R ROLES] [-S] [-l] [-e] [-t SEC] "
             "KEY...\n");
    exit (1);
}

int main (int argc, char **argv)
{
    const char *ns = "primary";
    int flags = 4, c, nkeys;
    struct flux_msg_cred cred = {FLUX_USERID_UNKNOWN, FLUX_ROLE_NONE};
    bool nostream = false;
    struct watch *w;

    while ((c = getopt (argc, argv, "n:f:r:c:L:u:R:Slet:")) != -1) {
        switch (c) {
            case 'n':
                ns = optarg;
                break;
            case 'f':
                flags = (int)strtol (optarg, NULL, 0);
                break;
            case 'r':
                nodeid = strtoul (optarg, NULL, 10);
                break;
            case 'c':
                maxcount = atoi (optarg);
                break;
            case 'L':
                maxlines = atoi (optarg);
                break;
            case 'u':
                cred.userid = strtoul (optarg, NULL, 0);
                break;
            case 'R':
                cred.rolemask = strtoul (optarg, NULL, 0);
                break;
            case 'S':
                nostream = true;
                break;
            case 'l':
                label = true;
                break;
            case 'e':
                print_enodata = true;
                break;
            case 't':
                timeout = strtod (optarg, NULL);
                break;
            default:
                usage ();
        }
    }
    if (optind >= argc)
        usage ();
    nkeys = argc - optind;
    if (!(w = calloc (nkeys, sizeof (*w))) || !(h = flux_open (NULL, 0))) {
        perror ("kvswatch");
        return 1;
    }
    for (int i = 0; i < nkeys; i++) {
        flux_msg_t *msg;
        int rpcflags = 0;

        w[i].key = argv[optind + i];
        if ((flags & (4 | 512)) && !nostream)
            rpcflags = FLUX_RPC_STREAMING;
        if (!(msg = flux_request_encode ("kvs-watch.lookup", NULL))
            || flux_msg_pack (msg, "{s:s s:s s:i}", "namespace", ns, "key",
                              w[i].key, "flags", flags)
                   < 0
            || flux_msg_set_cred (msg, cred) < 0
            || (rpcflags && flux_msg_set_streaming (msg) < 0)
            || !(w[i].f = flux_rpc_message (h, msg, nodeid, rpcflags))
            || flux_future_then (w[i].f, timeout, watch_cb, &w[i]) < 0) {
            perror ("kvswatch: sending request");
            return 1;
        }
        flux_msg_decref (msg);
    }
    if (flux_reactor_run (flux_get_reactor (h), 0) < 0) {
        perror ("kvswatch: reactor");
        return 1;
    }
    flux_close (h);
    free (w);
    return failures ? 1 : 0;
}
