/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* attr.c - `flux getattr`, `flux setattr` and `flux lsattr`: broker
 * attributes through attr.get / attr.set / attr.rm / attr.list
 * (PROTOCOLS.md section 3).
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdutil.h"

static const char getattr_usage[]
    = "Usage: flux getattr NAME\n"
      "Print the value of broker attribute NAME.\n"
      "  -h, --help     Display this message\n";

static const char setattr_usage[] = "Usage: flux setattr NAME VALUE\n"
                                    "   or: flux setattr --expunge NAME\n"
                                    "Set (or remove) broker attribute NAME.\n"
                                    "  -e, --expunge  Remove the attribute\n"
                                    "  -h, --help     Display this message\n";

static const char lsattr_usage[]
    = "Usage: flux lsattr [-v]\n"
      "List broker attributes, sorted by name.\n"
      "  -v, --values   Show values too (\"-\" if unset)\n"
      "  -h, --help     Display this message\n";

const struct builtin builtin_getattr = {
    .name = "getattr",
    .summary = "Get broker attribute",
    .usage = getattr_usage,
    .main = cmd_getattr,
};

const struct builtin builtin_setattr = {
    .name = "setattr",
    .summary = "Set broker attribute",
    .usage = setattr_usage,
    .main = cmd_setattr,
};

const struct builtin builtin_lsattr = {
    .name = "lsattr",
    .summary = "List broker attributes",
    .usage = lsattr_usage,
    .main = cmd_lsattr,
};

static const struct option help_only[] = {
    CMD_OPT_HELP,
    {NULL, 0, NULL, 0},
};

int cmd_getattr (int argc, char **argv)
{
    const char *value;
    flux_t *h;

    while (cmd_getopt (argc, argv, "", help_only) != -1)
        ;
    if (optind != argc - 1)
        cmd_usage_error ("expected one attribute NAME");
    h = cmd_open ();
    if (!(value = flux_attr_get (h, argv[optind])))
        cmd_die ("%s: %s", argv[optind], strerror (errno));
    printf ("%s\n", value);
    flux_close (h);
    return 0;
}

/* attr.rm has no libflux wrapper. */
static void attr_remove (flux_t *h, const char *name)
{
    flux_future_t *f;

    if (!(f = flux_rpc_pack (h, "attr.rm", FLUX_NODEID_ANY, 0, "{s:s}", "name",
                             name))
        || flux_rpc_get (f, NULL) < 0)
        cmd_die ("%s: %s", name,
                 f ? future_strerror (f, errno) : strerror (errno));
    flux_future_destroy (f);
}

/* attr.set directly, for the server's error text. */
static void attr_set (flux_t *h, const char *name, const char *value)
{
    flux_future_t *f;

    if (!(f = flux_rpc_pack (h, "attr.set", FLUX_NODEID_ANY, 0, "{s:s s:s}",
                             "name", name, "value", value))
        || flux_rpc_get (f, NULL) < 0)
        cmd_die ("%s: %s", name,
                 f ? future_strerror (f, errno) : strerror (errno));
    flux_future_destroy (f);
}

int cmd_setattr (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"expunge", no_argument, NULL, 'e'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    bool expunge = false;
    flux_t *h;
    int c;

    while ((c = cmd_getopt (argc, argv, "e", longopts)) != -1) {
        if (c == 'e')
            expunge = true;
    }
    if (optind != argc - (expunge ? 1 : 2))
        cmd_usage_error (expunge ? "expected one attribute NAME"
                                 : "expected attribute NAME and VALUE");
    h = cmd_open ();
    if (expunge)
        attr_remove (h, argv[optind]);
    else
        attr_set (h, argv[optind], argv[optind + 1]);
    flux_close (h);
    return 0;
}

static int compare_names (const void *a, const void *b)
{
    return strcmp (*(const char *const *)a, *(const char *const *)b);
}

int cmd_lsattr (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"values", no_argument, NULL, 'v'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    bool values = false;
    flux_future_t *f;
    json_t *names;
    const char **v;
    size_t n;
    flux_t *h;
    int c;

    while ((c = cmd_getopt (argc, argv, "v", longopts)) != -1) {
        if (c == 'v')
            values = true;
    }
    if (optind != argc)
        cmd_usage_error ("unexpected argument '%s'", argv[optind]);
    h = cmd_open ();
    if (!(f = flux_rpc (h, "attr.list", NULL, FLUX_NODEID_ANY, 0))
        || flux_rpc_get_unpack (f, "{s:o}", "names", &names) < 0)
        cmd_die ("attr.list: %s",
                 f ? future_strerror (f, errno) : strerror (errno));
    n = json_array_size (names);
    if (!(v = calloc (n + 1, sizeof (v[0]))))
        cmd_die ("out of memory");
    for (size_t i = 0; i < n; i++) {
        if (!(v[i] = json_string_value (json_array_get (names, i))))
            cmd_die ("attr.list: non-string attribute name");
    }
    qsort (v, n, sizeof (v[0]), compare_names);
    for (size_t i = 0; i < n; i++) {
        if (values) {
            const char *value = flux_attr_get (h, v[i]);
            printf ("%-40s%s\n", v[i], value ? value : "-");
        }
        else
            printf ("%s\n", v[i]);
    }
    free (v);
    flux_future_destroy (f);
    flux_close (h);
    return 0;
}
