/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* config.c - `flux config get|reload|load`: the broker's configuration
 * through config.get, config.reload and config.load (PROTOCOLS.md
 * section 3, src/broker/conf.h).  Each talks to the local broker only.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdutil.h"
#include "libjob/jobspec.h"
#include "libutil/fsd.h"

static const char usage[] = "Usage: flux config COMMAND [OPTIONS] [ARGS...]\n"
                            "Show or change the broker's configuration.\n";

static const char get_usage[]
    = "Usage: flux config get [OPTIONS] [NAME]\n"
      "Print the value of NAME, a dotted key (\"job-manager.inactive-age-"
      "limit\"),\n"
      "or the whole configuration.  A string is printed as it is, any other\n"
      "value as JSON.  Exits 1 if NAME is not set (and no --default).\n"
      "  -t, --type=TYPE      Fail unless the value is a TYPE: string, "
      "integer,\n"
      "                       real, boolean, object, array, fsd (a duration\n"
      "                       string, printed in seconds), fsd-integer or\n"
      "                       fsd-real (the same, printed as that number)\n"
      "  -d, --default=VALUE  Print VALUE if NAME is not set\n"
      "  -q, --quiet          Print nothing (the exit status tells)\n"
      "  -h, --help           Display this message\n";

static const char reload_usage[]
    = "Usage: flux config reload\n"
      "Read the configuration files of this broker (config.path) again.  On\n"
      "an error the broker keeps its configuration and the error is shown.\n"
      "  -h, --help     Display this message\n";

static const char load_usage[]
    = "Usage: flux config load [PATH]\n"
      "Replace this broker's configuration with the object in PATH (standard\n"
      "input if none or \"-\"), JSON or YAML.\n"
      "  -h, --help     Display this message\n";

static int cmd_config_get (int argc, char **argv);
static int cmd_config_reload (int argc, char **argv);
static int cmd_config_load (int argc, char **argv);

const struct builtin builtin_config = {
    .name = "config",
    .summary = "Show or change the broker's configuration",
    .usage = usage,
    .main = cmd_config,
};

static const struct builtin config_get = {
    .name = "get",
    .summary = "Print a configuration value",
    .usage = get_usage,
    .main = cmd_config_get,
};

static const struct builtin config_reload = {
    .name = "reload",
    .summary = "Read the configuration files again",
    .usage = reload_usage,
    .main = cmd_config_reload,
};

static const struct builtin config_load = {
    .name = "load",
    .summary = "Replace the configuration",
    .usage = load_usage,
    .main = cmd_config_load,
};

static const struct builtin *const members[] = {
    &config_get,
    &config_reload,
    &config_load,
    NULL,
};

int cmd_config (int argc, char **argv)
{
    return cmd_run_group (&builtin_config, members, argc, argv);
}

static const struct option help_only[] = {
    CMD_OPT_HELP,
    {NULL, 0, NULL, 0},
};

/* The value at a dotted key, or NULL. */
static json_t *lookup (json_t *conf, const char *name)
{
    char *copy = strdup (name), *save = NULL;
    json_t *o = conf;

    if (!copy)
        cmd_die ("out of memory");
    for (char *tok = strtok_r (copy, ".", &save); tok && o;
         tok = strtok_r (NULL, ".", &save))
        o = json_is_object (o) ? json_object_get (o, tok) : NULL;
    free (copy);
    return o;
}

static bool valid_type (const char *type)
{
    const char *types[]
        = {"string", "integer", "real",        "boolean", "object",
           "array",  "fsd",     "fsd-integer", "fsd-real"};
    for (size_t i = 0; i < sizeof (types) / sizeof (types[0]); i++)
        if (!strcmp (type, types[i]))
            return true;
    return false;
}

/* Print o as TYPE (NULL: any), or die naming what it is not. */
static void print_as (const char *name, json_t *o, const char *type, bool quiet)
{
    double d;
    char *s = NULL;

    if (!type) {
        if (json_is_string (o))
            s = strdup (json_string_value (o));
        else
            s = json_dumps (o, JSON_COMPACT | JSON_ENCODE_ANY);
    }
    else if (!strcmp (type, "string") && json_is_string (o))
        s = strdup (json_string_value (o));
    else if (!strcmp (type, "integer") && json_is_integer (o))
        s = json_dumps (o, JSON_ENCODE_ANY);
    else if (!strcmp (type, "real") && json_is_number (o)) {
        if (asprintf (&s, "%g", json_number_value (o)) < 0)
            s = NULL;
    }
    else if (!strcmp (type, "boolean") && json_is_boolean (o))
        s = strdup (json_is_true (o) ? "true" : "false");
    else if ((!strcmp (type, "object") && json_is_object (o))
             || (!strcmp (type, "array") && json_is_array (o)))
        s = json_dumps (o, JSON_COMPACT);
    else if (!strncmp (type, "fsd", 3) && json_is_string (o)
             && fsd_parse_duration (json_string_value (o), &d) == 0) {
        int n = 0;
        if (!strcmp (type, "fsd") || !strcmp (type, "fsd-real"))
            n = asprintf (&s, "%g", d);
        else if (!strcmp (type, "fsd-integer") && d < 9.2e18)
            n = asprintf (&s, "%lld", (long long)d);
        if (n < 0)
            s = NULL;
    }
    if (!s) {
        if (!type)
            cmd_die ("out of memory");
        cmd_die ("%s: the value is not of type %s", name, type);
    }
    if (!quiet)
        printf ("%s\n", s);
    free (s);
}

static int cmd_config_get (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"type", required_argument, NULL, 't'},
        {"default", required_argument, NULL, 'd'},
        {"quiet", no_argument, NULL, 'q'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    const char *type = NULL, *def = NULL, *name = NULL;
    bool quiet = false;
    flux_future_t *f;
    json_t *conf, *o;
    flux_t *h;
    int c;

    while ((c = cmd_getopt (argc, argv, "t:d:q", longopts)) != -1) {
        if (c == 't')
            type = optarg;
        else if (c == 'd')
            def = optarg;
        else if (c == 'q')
            quiet = true;
    }
    if (optind < argc)
        name = argv[optind++];
    if (optind < argc)
        cmd_usage_error ("expected at most one NAME");
    if (type && !valid_type (type))
        cmd_usage_error ("--type: unknown type %s", type);
    h = cmd_open ();
    if (!(f = flux_rpc (h, "config.get", NULL, FLUX_NODEID_ANY, 0))
        || flux_rpc_get_unpack (f, "o", &conf) < 0)
        cmd_die ("config.get: %s",
                 f ? future_strerror (f, errno) : strerror (errno));
    if (!(o = name ? lookup (conf, name) : conf)) {
        if (!def) {
            if (!quiet)
                cmd_warn ("%s is not set", name);
            exit (1);
        }
        if (!quiet)
            printf ("%s\n", def);
    }
    else
        print_as (name ? name : "the configuration", o, type, quiet);
    flux_future_destroy (f);
    flux_close (h);
    return 0;
}

static int cmd_config_reload (int argc, char **argv)
{
    flux_future_t *f;
    flux_t *h;

    while (cmd_getopt (argc, argv, "", help_only) != -1)
        ;
    if (optind < argc)
        cmd_usage_error ("unexpected argument %s", argv[optind]);
    h = cmd_open ();
    if (!(f = flux_rpc (h, "config.reload", NULL, FLUX_NODEID_ANY, 0))
        || flux_rpc_get (f, NULL) < 0)
        cmd_die ("reload: %s",
                 f ? future_strerror (f, errno) : strerror (errno));
    flux_future_destroy (f);
    flux_close (h);
    return 0;
}

static int cmd_config_load (int argc, char **argv)
{
    const char *path = "-";
    flux_future_t *f;
    flux_error_t error;
    json_error_t jerr;
    json_t *conf;
    FILE *fp = stdin;
    size_t len;
    char *text;
    flux_t *h;

    while (cmd_getopt (argc, argv, "", help_only) != -1)
        ;
    if (optind < argc)
        path = argv[optind++];
    if (optind < argc)
        cmd_usage_error ("expected at most one PATH");
    if (strcmp (path, "-") && !(fp = fopen (path, "r")))
        cmd_die ("%s: %s", path, strerror (errno));
    text = cmd_read_all (fp, "read", &len);
    if (fp != stdin)
        fclose (fp);
    /* JSON first (its errors are the clearer for JSON), then YAML */
    if (!(conf = json_loadb (text, len, JSON_REJECT_DUPLICATES, &jerr))
        && !(conf = jobspec_yaml_to_json (text, &error)))
        cmd_die ("%s: %s", path, error.text);
    if (!json_is_object (conf))
        cmd_die ("%s: expected a table (an object) at the top", path);
    free (text);
    h = cmd_open ();
    if (!(f = flux_rpc_pack (h, "config.load", FLUX_NODEID_ANY, 0, "O", conf))
        || flux_rpc_get (f, NULL) < 0)
        cmd_die ("load: %s", f ? future_strerror (f, errno) : strerror (errno));
    flux_future_destroy (f);
    json_decref (conf);
    flux_close (h);
    return 0;
}
