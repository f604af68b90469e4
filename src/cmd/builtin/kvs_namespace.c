/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* kvs_namespace.c - `flux kvs namespace create|remove|list`
 * (kvs.namespace-* on rank 0, PROTOCOLS.md section 4).
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvs_cmd.h"

static const char ns_usage[]
    = "Usage: flux kvs namespace COMMAND [OPTIONS] [ARGS...]\n"
      "Manage KVS namespaces (instance owner only).\n";

static const char create_usage[]
    = "Usage: flux kvs namespace create [OPTIONS] NAME...\n"
      "Create empty namespaces.\n"
      "  -o, --owner=USERID    Let USERID read and write the namespace\n"
      "  -r, --rootref=BLOBREF Start from this root instead of an empty dir\n"
      "  -h, --help            Display this message\n";

static const char remove_usage[]
    = "Usage: flux kvs namespace remove NAME...\n"
      "Remove namespaces (an absent one is not an error).\n"
      "  -h, --help            Display this message\n";

static const char list_usage[]
    = "Usage: flux kvs namespace list\n"
      "List namespaces with their owner and flags.\n"
      "  -h, --help            Display this message\n";

static int cmd_ns (int argc, char **argv);
static int cmd_ns_create (int argc, char **argv);
static int cmd_ns_remove (int argc, char **argv);
static int cmd_ns_list (int argc, char **argv);

const struct builtin kvs_namespace_cmd
    = {"namespace", "Manage namespaces", ns_usage, cmd_ns};

static const struct builtin ns_create
    = {"create", "Create namespaces", create_usage, cmd_ns_create};
static const struct builtin ns_remove
    = {"remove", "Remove namespaces", remove_usage, cmd_ns_remove};
static const struct builtin ns_list
    = {"list", "List namespaces", list_usage, cmd_ns_list};

static const struct builtin *const members[] = {
    &ns_create,
    &ns_remove,
    &ns_list,
    NULL,
};

static int cmd_ns (int argc, char **argv)
{
    return kvs_run_subgroup (&kvs_namespace_cmd, members, argc, argv);
}

static int cmd_ns_create (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"owner", required_argument, NULL, 'o'},
        {"rootref", required_argument, NULL, 'r'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    uint32_t owner = FLUX_USERID_UNKNOWN;
    const char *rootref = NULL;
    flux_t *h;
    int c;

    while ((c = cmd_getopt (argc, argv, "o:r:", longopts)) != -1) {
        if (c == 'o')
            owner = cmd_parse_long ("--owner", optarg, 0, UINT32_MAX);
        if (c == 'r')
            rootref = optarg;
    }
    if (optind >= argc)
        cmd_usage_error ("missing NAME");
    h = cmd_open ();
    for (int i = optind; i < argc; i++) {
        flux_future_t *f;
        if (rootref)
            f = flux_kvs_namespace_create_with (h, argv[i], rootref, owner, 0);
        else
            f = flux_kvs_namespace_create (h, argv[i], owner, 0);
        if (!f || flux_future_get (f, NULL) < 0)
            cmd_die ("%s: %s", argv[i],
                     f ? future_strerror (f, errno) : strerror (errno));
        flux_future_destroy (f);
    }
    flux_close (h);
    return 0;
}

static int cmd_ns_remove (int argc, char **argv)
{
    flux_t *h;

    cmd_getopt_none (argc, argv);
    if (optind >= argc)
        cmd_usage_error ("missing NAME");
    h = cmd_open ();
    for (int i = optind; i < argc; i++) {
        flux_future_t *f = flux_kvs_namespace_remove (h, argv[i]);
        if (!f || flux_future_get (f, NULL) < 0)
            cmd_die ("%s: %s", argv[i],
                     f ? future_strerror (f, errno) : strerror (errno));
        flux_future_destroy (f);
    }
    flux_close (h);
    return 0;
}

static int cmd_ns_list (int argc, char **argv)
{
    flux_future_t *f;
    json_t *array, *o;
    size_t i;
    flux_t *h;

    cmd_getopt_none (argc, argv);
    if (optind != argc)
        cmd_usage_error ("too many arguments");
    h = cmd_open ();
    if (!(f = flux_kvs_namespace_list (h))
        || flux_rpc_get_unpack (f, "{s:o}", "namespaces", &array) < 0)
        cmd_die ("%s", f ? future_strerror (f, errno) : strerror (errno));
    if (!json_is_array (array))
        cmd_die ("malformed kvs.namespace-list response");
    printf ("%-36s %10s %10s\n", "NAMESPACE", "OWNER", "FLAGS");
    json_array_foreach (array, i, o)
    {
        const char *ns;
        json_int_t owner;
        int flags;
        if (json_unpack (o, "{s:s s:I s:i}", "namespace", &ns, "owner", &owner,
                         "flags", &flags)
            < 0)
            cmd_die ("malformed kvs.namespace-list response");
        printf ("%-36s %10u 0x%08X\n", ns, (unsigned)owner, (unsigned)flags);
    }
    flux_future_destroy (f);
    flux_close (h);
    return 0;
}
