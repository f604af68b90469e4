/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* start.c - `flux start`: run a Flux instance on this machine.
 *
 * Without --test-size the broker is exec'd directly (it bootstraps from
 * whatever PMI its environment offers, e.g. under a launcher), so
 * `flux start CMD` costs one exec.  With --test-size=N, N brokers are
 * started at once and flux start serves them PMI-1 (launch.c).
 * The initial program, if any, is passed to rank 0 after "--"; the broker
 * runs it with FLUX_URI set.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker_path.h"
#include "cmdutil.h"
#include "launch.h"

#ifndef FLUX_LIBEXECDIR
#define FLUX_LIBEXECDIR "/usr/libexec/flux"
#endif

#define MAX_TEST_SIZE 16384

static const char usage[]
    = "Usage: flux start [OPTIONS] [COMMAND [ARGS...]]\n"
      "Start a Flux instance on this machine; run COMMAND (default: an\n"
      "interactive shell chosen by the broker) as its initial program.\n"
      "  -s, --test-size=N          Start N brokers, with flux start as their\n"
      "                             PMI server\n"
      "  -o, --broker-opts=OPTS     Add broker options (comma separated)\n"
      "  -c, --config-path=PATH     Read the brokers' configuration from PATH\n"
      "                             (a JSON or YAML file, or a directory)\n"
      "  -S, --setattr=NAME=VALUE   Set a broker attribute\n"
      "      --test-exit-timeout=FSD  Grace period before brokers left "
      "running\n"
      "                             are killed (default 5s)\n"
      "      --test-exit-mode=MODE  any: a broker that fails stops the\n"
      "                             instance (default); leader: only rank 0\n"
      "  -v, --verbose              Print the broker commands (twice: also\n"
      "                             trace PMI)\n"
      "  -X, --noexec               Do not run anything (use with -v)\n"
      "  -h, --help                 Display this message\n";

const struct builtin builtin_start = {
    .name = "start",
    .summary = "Start a Flux instance on this machine",
    .usage = usage,
    .main = cmd_start,
};

static const struct option longopts[] = {
    {"test-size", required_argument, NULL, 's'},
    {"broker-opts", required_argument, NULL, 'o'},
    {"config-path", required_argument, NULL, 'c'},
    {"setattr", required_argument, NULL, 'S'},
    {"test-exit-timeout", required_argument, NULL, 'T'},
    {"test-exit-mode", required_argument, NULL, 'M'},
    {"verbose", no_argument, NULL, 'v'},
    {"noexec", no_argument, NULL, 'X'},
    CMD_OPT_HELP,
    {NULL, 0, NULL, 0},
};

/* A growable NULL-terminated argv. */
struct args {
    char **v;
    int n;
};

static void args_add (struct args *a, const char *s)
{
    char **v = realloc (a->v, (a->n + 2) * sizeof (a->v[0]));
    char *copy = strdup (s);

    if (!v || !copy)
        cmd_die ("out of memory");
    a->v = v;
    a->v[a->n++] = copy;
    a->v[a->n] = NULL;
}

static void args_free (struct args *a)
{
    for (int i = 0; i < a->n; i++)
        free (a->v[i]);
    free (a->v);
}

/* -o OPTS: comma separated broker options, empty items skipped. */
static void add_broker_opts (struct args *a, const char *opts)
{
    char *copy = strdup (opts);
    char *save = NULL;

    if (!copy)
        cmd_die ("out of memory");
    for (char *tok = strtok_r (copy, ",", &save); tok;
         tok = strtok_r (NULL, ",", &save))
        args_add (a, tok);
    free (copy);
}

static void add_setattr (struct args *a, const char *nv)
{
    char buf[PATH_MAX + 64];
    const char *eq = strchr (nv, '=');

    if (!eq || eq == nv)
        cmd_usage_error ("--setattr: expected NAME=VALUE, got '%s'", nv);
    if (snprintf (buf, sizeof (buf), "-S%s", nv) >= (int)sizeof (buf))
        cmd_usage_error ("--setattr: argument too long");
    args_add (a, buf);
}

/* -c PATH: made absolute, as the brokers may run elsewhere */
static void add_config_path (struct args *a, const char *path)
{
    char buf[PATH_MAX + 32], cwd[PATH_MAX];

    if (!*path)
        cmd_usage_error ("--config-path: empty path");
    if (*path != '/' && !getcwd (cwd, sizeof (cwd)))
        cmd_die ("getcwd: %s", strerror (errno));
    if (snprintf (buf, sizeof (buf), "--config-path=%s%s%s",
                  *path == '/' ? "" : cwd, *path == '/' ? "" : "/", path)
        >= (int)sizeof (buf))
        cmd_usage_error ("--config-path: argument too long");
    args_add (a, buf);
}

static bool is_executable (const char *path)
{
    return access (path, X_OK) == 0;
}

/* $FLUX_BROKER_PATH, else flux-broker next to this flux binary (or in
 * the build tree's src/broker), else the installed one.  A binary in a
 * .libs directory (behind a libtool wrapper script) counts as its parent.
 */
const char *start_broker_path (void)
{
    static char path[PATH_MAX];
    const char *env = getenv ("FLUX_BROKER_PATH");
    char self[PATH_MAX];
    ssize_t n;
    char *p;

    if (env && *env)
        return env;
    if ((n = readlink ("/proc/self/exe", self, sizeof (self) - 1)) > 0) {
        self[n] = '\0';
        if ((p = strrchr (self, '/')))
            *p = '\0';
        if ((p = strrchr (self, '/')) && !strcmp (p, "/.libs"))
            *p = '\0';
        snprintf (path, sizeof (path), "%s/flux-broker", self);
        if (is_executable (path))
            return path;
        snprintf (path, sizeof (path), "%s/../broker/flux-broker", self);
        if (is_executable (path))
            return path;
    }
    return FLUX_LIBEXECDIR "/flux-broker";
}

static void print_command (char **argv)
{
    fprintf (stderr, "flux-start:");
    for (int i = 0; argv[i]; i++)
        fprintf (stderr, " %s", argv[i]);
    fprintf (stderr, "\n");
}

/* No --test-size: become the broker. */
static int exec_broker (char **argv, int verbose, bool noexec)
{
    if (verbose)
        print_command (argv);
    if (noexec)
        return 0;
    execv (argv[0], argv);
    cmd_die ("%s: %s", argv[0], strerror (errno));
}

static int run_instance (struct launch_params *p, bool noexec)
{
    int status;

    if (noexec) {
        for (int i = 0; i < p->size && p->verbose; i++) {
            fprintf (stderr, "flux-start: rank %d:", i);
            for (char **v = i == 0 ? p->argv_rank0 : p->argv; *v; v++)
                fprintf (stderr, " %s", *v);
            fprintf (stderr, "\n");
        }
        return 0;
    }
    if ((status = launch_run (p)) < 0)
        cmd_die ("%s: %s", p->argv[0], strerror (errno));
    return status;
}

int cmd_start (int argc, char **argv)
{
    struct args common = {0};
    struct args rank0 = {0};
    struct launch_params p = {.grace = 5.};
    bool noexec = false;
    int c, status;

    args_add (&common, start_broker_path ());
    while ((c = cmd_getopt (argc, argv, "s:o:c:S:vX", longopts)) != -1) {
        switch (c) {
            case 's':
                p.size
                    = cmd_parse_long ("--test-size", optarg, 1, MAX_TEST_SIZE);
                break;
            case 'o':
                add_broker_opts (&common, optarg);
                break;
            case 'S':
                add_setattr (&common, optarg);
                break;
            case 'c':
                add_config_path (&common, optarg);
                break;
            case 'T':
                p.grace = cmd_parse_duration ("--test-exit-timeout", optarg);
                break;
            case 'M':
                if (!strcmp (optarg, "any"))
                    p.exit_mode = LAUNCH_EXIT_ANY;
                else if (!strcmp (optarg, "leader"))
                    p.exit_mode = LAUNCH_EXIT_LEADER;
                else {
                    fprintf (stderr, "flux-start: --test-exit-mode must be "
                                     "any or leader\n");
                    exit (1);
                }
                break;
            case 'v':
                p.verbose++;
                break;
            case 'X':
                noexec = true;
                break;
        }
    }
    for (int i = 0; i < common.n; i++)
        args_add (&rank0, common.v[i]);
    if (optind < argc) {
        args_add (&rank0, "--");
        for (int i = optind; i < argc; i++)
            args_add (&rank0, argv[i]);
    }
    if (p.size == 0)
        status = exec_broker (rank0.v, p.verbose, noexec);
    else {
        p.argv = common.v;
        p.argv_rank0 = rank0.v;
        status = run_instance (&p, noexec);
    }
    args_free (&common);
    args_free (&rank0);
    return status;
}
