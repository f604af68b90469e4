/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* proxy.c - `flux proxy [OPTIONS] TARGET [COMMAND [ARGS...]]`: run
 * COMMAND (default: the user's shell) connected to the Flux instance
 * TARGET names (as flux uri(1) resolves it), with FLUX_URI set to it.
 *
 * The sub-instance's URI is resolved through its parent; since it runs on
 * this host its local socket is used directly.  There is no ssh
 * connector: a sub-instance on another host cannot be reached (an error
 * says so).  The exit code is COMMAND's, 128+N if a signal killed it.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmdutil.h"
#include "instance.h"

static const char usage[]
    = "Usage: flux proxy [OPTIONS] TARGET [COMMAND [ARGS...]]\n"
      "Run COMMAND (default: $SHELL) with FLUX_URI set to the Flux instance\n"
      "TARGET names: a URI, or a job id path ID[/ID...] of running\n"
      "sub-instances (see flux uri).  Exit with COMMAND's exit code.\n"
      "  -w, --wait       Wait for the job to start and post its URI\n"
      "  -h, --help       Display this message\n";

const struct builtin builtin_proxy = {
    .name = "proxy",
    .summary = "Run a command in a running Flux sub-instance",
    .usage = usage,
    .main = cmd_proxy,
};

int cmd_proxy (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"wait", no_argument, NULL, 'w'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    char *shell_argv[] = {getenv ("SHELL"), NULL};
    char **cmd = shell_argv;
    bool wait = false;
    flux_error_t error;
    char *uri, *local;
    flux_t *h, *sub;
    int c, status;
    pid_t pid;

    while ((c = cmd_getopt (argc, argv, "w", longopts)) != -1)
        if (c == 'w')
            wait = true;
    if (optind >= argc)
        cmd_usage_error ("missing TARGET");
    if (!strstr (argv[optind], "://")) {
        h = cmd_open ();
        if (!(uri = instance_resolve (h, argv[optind], wait, &error)))
            cmd_die ("%s", error.text);
        flux_close (h);
    }
    else if (!(uri = strdup (argv[optind])))
        cmd_die ("out of memory");
    if (!(local = instance_uri_local (uri)))
        cmd_die ("out of memory");
    if (strncmp (local, "ssh://", 6) == 0)
        cmd_die ("%s: not on this host, and there is no ssh connector", uri);
    /* check it answers before handing it to COMMAND */
    if (!(sub = flux_open (local, 0)) || !flux_attr_get (sub, "rank"))
        cmd_die ("%s: %s", local, strerror (errno));
    flux_close (sub);
    if (optind + 1 < argc)
        cmd = argv + optind + 1;
    else if (!shell_argv[0] || !*shell_argv[0])
        shell_argv[0] = "/bin/sh";
    if (setenv ("FLUX_URI", local, 1) < 0)
        cmd_die ("setenv: %s", strerror (errno));
    unsetenv ("FLUX_KVS_NAMESPACE");
    fflush (stdout);
    if ((pid = fork ()) < 0)
        cmd_die ("fork: %s", strerror (errno));
    if (pid == 0) {
        execvp (cmd[0], cmd);
        fprintf (stderr, "flux-proxy: %s: %s\n", cmd[0], strerror (errno));
        _exit (errno == ENOENT ? 127 : 126);
    }
    /* the terminal's signals reach COMMAND, which decides */
    signal (SIGINT, SIG_IGN);
    signal (SIGQUIT, SIG_IGN);
    while (waitpid (pid, &status, 0) < 0)
        if (errno != EINTR)
            cmd_die ("waitpid: %s", strerror (errno));
    free (uri);
    free (local);
    if (WIFSIGNALED (status))
        return 128 + WTERMSIG (status);
    return WEXITSTATUS (status);
}
