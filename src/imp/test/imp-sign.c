/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* imp-sign - make J from a jobspec on stdin, for the flux-imp tests:
 *   imp-sign [--mech munge|none] [--socket PATH] [--ttl SECS]
 *            [--userid N] [--input] < jobspec
 * J goes to stdout; with --input, the exec input {"J": J} instead.
 * --userid writes another uid in the header (a forgery, for tests).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "sign.h"

static void usage (FILE *f)
{
    fprintf (f, "Usage: imp-sign [--mech munge|none] [--socket PATH] "
                "[--ttl SECS] [--userid N] [--input] < jobspec\n");
}

int main (int argc, char *argv[])
{
    static const struct option opts[] = {
        {"mech", required_argument, NULL, 'm'},
        {"socket", required_argument, NULL, 's'},
        {"ttl", required_argument, NULL, 't'},
        {"userid", required_argument, NULL, 'u'},
        {"input", no_argument, NULL, 'i'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *mech = "munge", *sock = NULL;
    int ttl = 0, c;
    long userid = getuid ();
    bool input = false;
    struct imp_err e = {{0}};
    char buf[65536];
    size_t len;
    char *J;

    while ((c = getopt_long (argc, argv, "m:s:t:u:ih", opts, NULL)) != -1) {
        switch (c) {
            case 'm':
                mech = optarg;
                break;
            case 's':
                sock = optarg;
                break;
            case 't':
                ttl = atoi (optarg);
                break;
            case 'u':
                userid = atol (optarg);
                break;
            case 'i':
                input = true;
                break;
            case 'h':
                usage (stdout);
                return 0;
            default:
                usage (stderr);
                return 1;
        }
    }
    len = fread (buf, 1, sizeof (buf) - 1, stdin);
    if (!(J = imp_j_wrap (mech, buf, len, (uint32_t)userid, sock, ttl, &e))) {
        fprintf (stderr, "imp-sign: %s\n", e.text);
        return 1;
    }
    if (input) {
        json_t *o = json_pack ("{s:s}", "J", J);
        char *s = o ? json_dumps (o, JSON_COMPACT) : NULL;
        if (!s) {
            fprintf (stderr, "imp-sign: out of memory\n");
            return 1;
        }
        printf ("%s\n", s);
        free (s);
        json_decref (o);
    }
    else
        printf ("%s\n", J);
    free (J);
    return 0;
}
