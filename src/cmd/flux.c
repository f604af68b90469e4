/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* flux.c - the `flux` front end: `flux [OPTIONS] CMD [ARGS]`.
 *
 * CMD is looked up in the table of built-in subcommands; failing that,
 * the program flux-CMD is executed from the first directory that has it
 * among $FLUX_EXEC_PATH (colon separated), the directory holding this
 * flux binary, and $(libexecdir)/flux/cmd.  Nothing here contacts a
 * broker or initializes more than it needs: `flux --version` must stay
 * cheap.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#define _GNU_SOURCE 1
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtin.h"
#include "cmdutil.h"
#include "libutil/noleakcheck.h"

#ifndef FLUX_CMD_LIBEXECDIR
#define FLUX_CMD_LIBEXECDIR "/usr/libexec/flux/cmd"
#endif

/* a hand-kept grid in alphabetical order (flux help merges it with
 * externals[]), so that a new command is one line */
/* clang-format off */
static const struct builtin *const builtins[] = {
    &builtin_alloc,      &builtin_batch,
    &builtin_broker,     &builtin_cancel,
    &builtin_config,     &builtin_content,
    &builtin_dmesg,      &builtin_dump,
    &builtin_event,      &builtin_exec,
    &builtin_getattr,    &builtin_imp_helper,
    &builtin_job,        &builtin_jobs,
    &builtin_kvs,        &builtin_logger,
    &builtin_lsattr,     &builtin_module,
    &builtin_overlay,    &builtin_ping,
    &builtin_proxy,      &builtin_pstree,
    &builtin_queue,      &builtin_relay,
    &builtin_resource,   &builtin_restore,
    &builtin_run,        &builtin_setattr,
    &builtin_shutdown,   &builtin_sproc,
    &builtin_start,      &builtin_submit,
    &builtin_update,     &builtin_uptime,
    &builtin_uri,
    NULL,
};
/* clang-format on */

/* Commands shipped as separate programs (flux-NAME), for `flux help`,
 * in alphabetical order. */
static const struct {
    const char *name;
    const char *summary;
} externals[] = {
    {"keygen", "Generate a CURVE certificate for the overlay network"},
    {NULL, NULL},
};

static const char *usage
    = "Usage: flux [OPTIONS] COMMAND [ARGS...]\n"
      "  -h, --help      Display this message and the list of commands\n"
      "  -V, --version   Display the version\n";

static void version (void)
{
    printf ("commands:    \t\t%s\n", PACKAGE_VERSION);
    printf ("libflux-core:\t\t%s\n", PACKAGE_VERSION);
}

static const struct builtin *builtin_find (const char *name)
{
    for (int i = 0; builtins[i]; i++) {
        if (!strcmp (builtins[i]->name, name))
            return builtins[i];
    }
    return NULL;
}

/* The directory holding the running flux binary, or "" if unknown.  In
 * the build tree that is src/cmd (a binary in src/cmd/.libs, run by a
 * libtool wrapper script, counts as src/cmd too).
 */
static const char *self_dir (void)
{
    static char dir[PATH_MAX];
    ssize_t n;
    char *p;

    if (dir[0] == '\0') {
        n = readlink ("/proc/self/exe", dir, sizeof (dir) - 1);
        if (n <= 0)
            n = 0;
        dir[n] = '\0';
        if ((p = strrchr (dir, '/')))
            *p = '\0';
        if ((p = strrchr (dir, '/')) && !strcmp (p, "/.libs"))
            *p = '\0';
    }
    return dir;
}

/* Run by a path (./flux, /opt/flux/bin/flux), put the directory of this
 * flux first in PATH, so that what it starts (flux start's initial
 * program, a job's tasks) runs the same flux, as flux-core's does.  Run
 * as "flux", found in PATH, leave PATH as it is.
 */
static void setup_path (const char *argv0)
{
    const char *dir, *path = getenv ("PATH");
    size_t len;
    char *s;

    if (!strchr (argv0, '/') || !*(dir = self_dir ()))
        return;
    len = strlen (dir);
    if (path && !strncmp (path, dir, len)
        && (path[len] == ':' || path[len] == '\0'))
        return;
    if (asprintf (&s, "%s:%s", dir, path ? path : "/bin:/usr/bin") < 0) {
        fprintf (stderr, "flux: out of memory\n");
        exit (1);
    }
    if (setenv ("PATH", s, 1) < 0) {
        fprintf (stderr, "flux: PATH: %s\n", strerror (errno));
        exit (1);
    }
    free (s);
}

/* Call fn on each directory of the exec search path until it returns
 * non-zero.
 */
static int exec_path_foreach (int (*fn) (const char *dir, void *arg), void *arg)
{
    const char *env = getenv ("FLUX_EXEC_PATH");
    char dir[PATH_MAX];

    while (env && *env) {
        size_t len = strcspn (env, ":");
        if (len > 0 && len < sizeof (dir)) {
            memcpy (dir, env, len);
            dir[len] = '\0';
            if (fn (dir, arg))
                return 1;
        }
        env += len;
        if (*env == ':')
            env++;
    }
    if (self_dir ()[0] && fn (self_dir (), arg))
        return 1;
    return fn (FLUX_CMD_LIBEXECDIR, arg);
}

struct exec_ctx {
    const char *name;
    char **argv;
};

static int try_exec (const char *dir, void *arg)
{
    struct exec_ctx *ctx = arg;
    char path[PATH_MAX];

    if (snprintf (path, sizeof (path), "%s/flux-%s", dir, ctx->name)
            >= (int)sizeof (path)
        || access (path, X_OK) < 0)
        return 0;
    ctx->argv[0] = path;
    execv (path, ctx->argv);
    fprintf (stderr, "flux: %s: %s\n", path, strerror (errno));
    exit (126);
}

static void exec_external (const char *name, char **argv)
{
    struct exec_ctx ctx = {.name = name, .argv = argv};

    if (strchr (name, '/') || name[0] == '\0' || name[0] == '.'
        || !exec_path_foreach (try_exec, &ctx)) {
        fprintf (stderr,
                 "flux: '%s' is not a flux command (see 'flux "
                 "--help')\n",
                 name);
        exit (1);
    }
}

static bool is_listed (const char *name)
{
    if (builtin_find (name))
        return true;
    for (int i = 0; externals[i].name; i++) {
        if (!strcmp (externals[i].name, name))
            return true;
    }
    return false;
}

/* List flux-* programs found on the exec path that we know nothing of. */
static int list_dir (const char *dir, void *arg)
{
    DIR *d = opendir (dir);
    struct dirent *ent;
    char path[PATH_MAX];
    int *header = arg;

    while (d && (ent = readdir (d))) {
        const char *name = ent->d_name + 5;
        if (strncmp (ent->d_name, "flux-", 5) != 0 || !*name
            || strchr (name, '.') || is_listed (name)
            || snprintf (path, sizeof (path), "%s/%s", dir, ent->d_name)
                   >= (int)sizeof (path)
            || access (path, X_OK) < 0)
            continue;
        if (!(*header)++)
            printf ("\nOther commands found on the exec path:\n");
        printf ("   %s\n", name);
    }
    if (d)
        closedir (d);
    return 0;
}

static void help (void)
{
    int header = 0;

    fputs (usage, stdout);
    printf ("\nCommands:\n");
    /* both tables are in alphabetical order: merge them */
    for (int i = 0, j = 0; builtins[i] || externals[j].name;) {
        if (builtins[i]
            && (!externals[j].name
                || strcmp (builtins[i]->name, externals[j].name) < 0)) {
            if (!builtins[i]->internal)
                printf ("   %-14s %s\n", builtins[i]->name,
                        builtins[i]->summary);
            i++;
        }
        else {
            printf ("   %-14s %s\n", externals[j].name, externals[j].summary);
            j++;
        }
    }
    fflush (stdout);
    exec_path_foreach (list_dir, &header);
}

/* flux help [CMD] */
static int help_command (int argc, char **argv)
{
    const struct builtin *b;
    char *args[] = {NULL, "--help", NULL};

    if (argc < 3) {
        help ();
        return 0;
    }
    args[0] = argv[2];
    if ((b = builtin_find (argv[2]))) {
        cmd_init (b, NULL);
        return b->main (2, args);
    }
    exec_external (argv[2], args);
    return 1;
}

int main (int argc, char **argv)
{
    const struct builtin *b;
    const char *cmd = argc > 1 ? argv[1] : NULL;

    /* Job ids print in F58 with its U+0192 prefix under a UTF-8 locale,
     * as flux-core's do, the same in every command. */
    setlocale (LC_CTYPE, "");
    if (!cmd) {
        fprintf (stderr, "flux: missing COMMAND (see 'flux --help')\n");
        return 1;
    }
    if (!strcmp (cmd, "-h") || !strcmp (cmd, "--help"))
        return help_command (1, argv);
    if (!strcmp (cmd, "-V") || !strcmp (cmd, "--version")
        || !strcmp (cmd, "version")) {
        version ();
        return 0;
    }
    if (cmd[0] == '-') {
        fprintf (stderr, "flux: unknown option '%s' (see 'flux --help')\n",
                 cmd);
        return 1;
    }
    if (!strcmp (cmd, "help"))
        return help_command (argc, argv);
    setup_path (argv[0]);
    if ((b = builtin_find (cmd))) {
        cmd_init (b, NULL);
        return b->main (argc - 1, argv + 1);
    }
    exec_external (cmd, argv + 1);
    return 1;
}
