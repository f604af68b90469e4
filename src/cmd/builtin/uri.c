/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* uri.c - `flux uri [--local|--remote] [--wait] TARGET`, `flux uri
 * --parent`: print the URI of a Flux instance.
 *
 * TARGET is a URI, or a job id path "ID[/ID...]" (also "jobid:ID..."):
 * the running sub-instance of job ID of this instance, then its job ID2,
 * and so on -- each read from the memo {uri} its rank 0 posted on its job
 * (instance.c).  The URI is remote (ssh://HOST/PATH) as posted; --local
 * gives local://PATH for a sub-instance on this host.  --parent prints
 * this instance's parent-uri attribute.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdutil.h"
#include "instance.h"

static const char usage[]
    = "Usage: flux uri [OPTIONS] TARGET\n"
      "   or: flux uri --parent\n"
      "Print the URI of the Flux instance TARGET names: a URI, or a job id\n"
      "path ID[/ID...] -- the sub-instance job ID runs in this instance,\n"
      "then the one job ID2 runs in that one, and so on.\n"
      "  -l, --local      A local:// URI (the instance is on this host)\n"
      "  -r, --remote     An ssh:// URI (the default for a job)\n"
      "  -w, --wait       Wait for the job to start and post its URI\n"
      "  -p, --parent     Print the URI of this instance's parent\n"
      "  -h, --help       Display this message\n";

const struct builtin builtin_uri = {
    .name = "uri",
    .summary = "Print the URI of a Flux instance",
    .usage = usage,
    .main = cmd_uri,
};

int cmd_uri (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"local", no_argument, NULL, 'l'},
        {"remote", no_argument, NULL, 'r'},
        {"wait", no_argument, NULL, 'w'},
        {"parent", no_argument, NULL, 'p'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    bool local = false, remote = false, wait = false, parent = false;
    flux_error_t error;
    char *uri, *out;
    flux_t *h;
    int c;

    while ((c = cmd_getopt (argc, argv, "lrwp", longopts)) != -1) {
        switch (c) {
            case 'l':
                local = true;
                break;
            case 'r':
                remote = true;
                break;
            case 'w':
                wait = true;
                break;
            case 'p':
                parent = true;
                break;
        }
    }
    if (local && remote)
        cmd_usage_error ("--local and --remote exclude each other");
    if (parent) {
        const char *p;
        if (optind != argc)
            cmd_usage_error ("--parent takes no TARGET");
        h = cmd_open ();
        if (!(p = flux_attr_get (h, "parent-uri")))
            cmd_die ("this instance has no parent");
        printf ("%s\n", p);
        flux_close (h);
        return 0;
    }
    if (optind != argc - 1)
        cmd_usage_error ("expected one TARGET");
    if (strstr (argv[optind], "://"))
        uri = strdup (argv[optind]);
    else {
        h = cmd_open ();
        if (!(uri = instance_resolve (h, argv[optind], wait, &error)))
            cmd_die ("%s", error.text);
        flux_close (h);
    }
    if (!uri)
        cmd_die ("out of memory");
    if (local) {
        if (!(out = instance_uri_local (uri)))
            cmd_die ("out of memory");
        if (strncmp (out, "local://", 8) != 0)
            cmd_die ("%s is not on this host", uri);
        free (uri);
        uri = out;
    }
    printf ("%s\n", uri);
    free (uri);
    return 0;
}
