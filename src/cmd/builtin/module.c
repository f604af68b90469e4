/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* module.c - `flux module load|remove|reload|list|stats`: broker modules
 * through module.load / module.remove / module.list (RFC 5, PROTOCOLS.md
 * section 3) and the modules' default NAME.stats-get / NAME.rusage methods.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdutil.h"
#include "libutil/modname.h"

static const char usage[] = "Usage: flux module COMMAND [OPTIONS] [ARGS...]\n"
                            "Manage broker modules.\n";

static const char load_usage[]
    = "Usage: flux module load [OPTIONS] NAME|PATH [ARGS...]\n"
      "Load a broker module by name or by path (a target containing '/').\n"
      "      --name=NAME    Load it under another name\n"
      "  -h, --help         Display this message\n";

static const char remove_usage[]
    = "Usage: flux module remove [OPTIONS] NAME\n"
      "Unload a broker module.\n"
      "  -f, --force        Ignore a module that is not loaded\n"
      "      --cancel       Abandon the module if it has not stopped in 1 s\n"
      "  -h, --help         Display this message\n";

static const char reload_usage[]
    = "Usage: flux module reload [OPTIONS] NAME|PATH [ARGS...]\n"
      "Remove a broker module, then load it again with ARGS.\n"
      "  -f, --force        Load it even if it was not loaded\n"
      "      --name=NAME    The module's name, if not that of NAME|PATH\n"
      "  -h, --help         Display this message\n";

static const char list_usage[]
    = "Usage: flux module list [OPTIONS]\n"
      "List loaded broker modules.\n"
      "  -l, --long         Include the module path\n"
      "  -h, --help         Display this message\n";

static const char stats_usage[]
    = "Usage: flux module stats [OPTIONS] NAME\n"
      "Print the message statistics of a module (NAME.stats-get).\n"
      "  -c, --clear        Clear the statistics instead\n"
      "  -R, --rusage[=WHO] Print resource usage instead (self, children,\n"
      "                     thread)\n"
      "  -h, --help         Display this message\n";

static int cmd_module_load (int argc, char **argv);
static int cmd_module_remove (int argc, char **argv);
static int cmd_module_reload (int argc, char **argv);
static int cmd_module_list (int argc, char **argv);
static int cmd_module_stats (int argc, char **argv);

const struct builtin builtin_module = {
    .name = "module",
    .summary = "Manage broker modules",
    .usage = usage,
    .main = cmd_module,
};

static const struct builtin module_load = {
    "load",
    "Load a module",
    load_usage,
    cmd_module_load,
};
static const struct builtin module_remove = {
    "remove",
    "Unload a module",
    remove_usage,
    cmd_module_remove,
};
static const struct builtin module_reload = {
    "reload",
    "Remove and load a module again",
    reload_usage,
    cmd_module_reload,
};
static const struct builtin module_list = {
    "list",
    "List loaded modules",
    list_usage,
    cmd_module_list,
};
static const struct builtin module_stats = {
    "stats",
    "Print module statistics",
    stats_usage,
    cmd_module_stats,
};

extern const struct builtin module_trace; /* trace.c */

static const struct builtin *const members[] = {
    &module_load,  &module_remove, &module_reload, &module_list,
    &module_stats, &module_trace,  NULL,
};

int cmd_module (int argc, char **argv)
{
    return cmd_run_group (&builtin_module, members, argc, argv);
}

static void rpc_die (flux_future_t *f, const char *what)
{
    const char *why = f ? future_strerror (f, errno) : strerror (errno);
    size_t len = strlen (what);

    /* the broker's messages often name the module already */
    if (!strncmp (why, what, len) && !strncmp (why + len, ": ", 2))
        cmd_die ("%s", why);
    cmd_die ("%s: %s", what, why);
}

/* module.load of target (a name, or a path made absolute here) with
 * argv[0..argc-1] as its arguments; exits on error. */
static void modload (flux_t *h, const char *target, const char *name, int argc,
                     char **argv)
{
    char path[PATH_MAX];
    const char *what = target;
    json_t *args, *o;
    flux_future_t *f;

    /* a path is made absolute: the broker runs elsewhere */
    if (strchr (target, '/')) {
        if (!realpath (target, path))
            cmd_die ("%s: %s", target, strerror (errno));
        target = path;
    }
    if (!(args = json_array ()))
        cmd_die ("out of memory");
    for (int i = 0; i < argc; i++) {
        if (json_array_append_new (args, json_string (argv[i])) < 0)
            cmd_die ("out of memory");
    }
    if (!(o = json_pack ("{s:s s:o}", "path", target, "args", args))
        || (name && json_object_set_new (o, "name", json_string (name)) < 0))
        cmd_die ("out of memory");
    if (!(f = flux_rpc_pack (h, "module.load", FLUX_NODEID_ANY, 0, "O", o))
        || flux_rpc_get (f, NULL) < 0)
        rpc_die (f, what);
    flux_future_destroy (f);
    json_decref (o);
}

/* module.remove of name; exits on error, unless force and it was not
 * loaded. */
static void modremove (flux_t *h, const char *name, bool force, bool cancel)
{
    flux_future_t *f;

    if (!(f = flux_rpc_pack (h, "module.remove", FLUX_NODEID_ANY, 0,
                             "{s:s s:b}", "name", name, "cancel", cancel))
        || flux_rpc_get (f, NULL) < 0) {
        if (!(force && f && errno == ENOENT))
            rpc_die (f, name);
    }
    flux_future_destroy (f);
}

static int cmd_module_load (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"name", required_argument, NULL, 'N'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    const char *name = NULL;
    const char *target;
    flux_t *h;
    int c;

    while ((c = cmd_getopt (argc, argv, "", longopts)) != -1) {
        if (c == 'N')
            name = optarg;
    }
    if (optind >= argc)
        cmd_usage_error ("missing module NAME or PATH");
    target = argv[optind++];
    h = cmd_open ();
    modload (h, target, name, argc - optind, argv + optind);
    flux_close (h);
    return 0;
}

static int cmd_module_remove (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"force", no_argument, NULL, 'f'},
        {"cancel", no_argument, NULL, 'C'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    bool force = false, cancel = false;
    flux_t *h;
    int c;

    while ((c = cmd_getopt (argc, argv, "f", longopts)) != -1) {
        if (c == 'f')
            force = true;
        if (c == 'C')
            cancel = true;
    }
    if (optind != argc - 1)
        cmd_usage_error ("expected one module NAME");
    h = cmd_open ();
    modremove (h, argv[optind], force, cancel);
    flux_close (h);
    return 0;
}

static int cmd_module_reload (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"force", no_argument, NULL, 'f'},
        {"name", required_argument, NULL, 'N'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    const char *name = NULL, *target, *base;
    char modname[256];
    size_t len;
    bool force = false;
    flux_t *h;
    int c;

    while ((c = cmd_getopt (argc, argv, "f", longopts)) != -1) {
        if (c == 'f')
            force = true;
        if (c == 'N')
            name = optarg;
    }
    if (optind >= argc)
        cmd_usage_error ("missing module NAME or PATH");
    target = argv[optind++];
    /* the name the broker gives it */
    len = module_name_of_path (target, &base);
    snprintf (modname, sizeof (modname), "%.*s", (int)len, base);
    if (!name && !modname[0])
        cmd_usage_error ("%s: no module name in it (use --name)", target);
    h = cmd_open ();
    modremove (h, name ? name : modname, force, false);
    modload (h, target, name, argc - optind, argv + optind);
    flux_close (h);
    return 0;
}

/* The services of a module other than its own name, comma separated. */
static void print_services (json_t *services, const char *name)
{
    const char *sep = "";
    size_t i;
    json_t *v;

    json_array_foreach (services, i, v)
    {
        const char *s = json_string_value (v);
        if (s && strcmp (s, name) != 0) {
            printf ("%s%s", sep, s);
            sep = ",";
        }
    }
}

static void print_module (json_t *m, bool longfmt)
{
    const char *name, *path;
    json_t *idle, *services = NULL;
    int status, sendq = 0, recvq = 0;
    char idlebuf[16];
    const char *states = "IRFX";

    if (json_unpack (m, "{s:s s:s s:o s:i s?o s?i s?i}", "name", &name, "path",
                     &path, "idle", &idle, "status", &status, "services",
                     &services, "sendqueue", &sendq, "recvqueue", &recvq)
            < 0
        || !json_is_number (idle))
        cmd_die ("module.list: malformed module entry");
    if (json_number_value (idle) > 99)
        snprintf (idlebuf, sizeof (idlebuf), "idle");
    else
        snprintf (idlebuf, sizeof (idlebuf), "%d",
                  (int)json_number_value (idle));
    printf ("%-24.24s %4s  %c %5d %5d ", name, idlebuf,
            status >= 0 && status <= 3 ? states[status] : '?', sendq, recvq);
    print_services (services, name);
    if (longfmt)
        printf (" %s", path);
    printf ("\n");
}

static int cmd_module_list (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"long", no_argument, NULL, 'l'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    bool longfmt = false;
    flux_future_t *f;
    json_t *mods;
    size_t i;
    json_t *m;
    flux_t *h;
    int c;

    while ((c = cmd_getopt (argc, argv, "l", longopts)) != -1) {
        if (c == 'l')
            longfmt = true;
    }
    if (optind != argc)
        cmd_usage_error ("unexpected argument '%s'", argv[optind]);
    h = cmd_open ();
    if (!(f = flux_rpc (h, "module.list", NULL, FLUX_NODEID_ANY, 0))
        || flux_rpc_get_unpack (f, "{s:o}", "mods", &mods) < 0
        || !json_is_array (mods))
        rpc_die (f, "module.list");
    printf ("%-24s %4s  %c %s %s %s%s\n", "Module", "Idle", 'S', "Sendq",
            "Recvq", "Service", longfmt ? " Path" : "");
    json_array_foreach (mods, i, m) print_module (m, longfmt);
    flux_future_destroy (f);
    flux_close (h);
    return 0;
}

static int cmd_module_stats (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"clear", no_argument, NULL, 'c'},
        {"rusage", optional_argument, NULL, 'R'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    bool clear = false, rusage = false;
    const char *who = NULL;
    char topic[256];
    flux_future_t *f;
    json_t *o;
    char *s;
    flux_t *h;
    int c;

    while ((c = cmd_getopt (argc, argv, "cR::", longopts)) != -1) {
        if (c == 'c')
            clear = true;
        if (c == 'R') {
            rusage = true;
            who = optarg;
        }
    }
    if (optind != argc - 1)
        cmd_usage_error ("expected one module NAME");
    if (clear && rusage)
        cmd_usage_error ("--clear and --rusage are exclusive");
    snprintf (topic, sizeof (topic), "%s.%s", argv[optind],
              clear    ? "stats-clear"
              : rusage ? "rusage"
                       : "stats-get");
    h = cmd_open ();
    if (who)
        f = flux_rpc_pack (h, topic, FLUX_NODEID_ANY, 0, "{s:s}", "who", who);
    else
        f = flux_rpc (h, topic, NULL, FLUX_NODEID_ANY, 0);
    if (clear) {
        if (!f || flux_rpc_get (f, NULL) < 0)
            rpc_die (f, topic);
    }
    else {
        if (!f || flux_rpc_get_unpack (f, "o", &o) < 0)
            rpc_die (f, topic);
        if (!(s = json_dumps (o, JSON_INDENT (1) | JSON_SORT_KEYS)))
            cmd_die ("out of memory");
        printf ("%s\n", s);
        free (s);
    }
    flux_future_destroy (f);
    flux_close (h);
    return 0;
}
