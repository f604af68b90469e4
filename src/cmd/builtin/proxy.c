/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* proxy.c - `flux proxy [OPTIONS] TARGET [COMMAND [ARGS...]]`: run
 * COMMAND (default: the user's shell) connected to the Flux instance
 * TARGET names (as flux uri(1) resolves it), with FLUX_URI set to it.
 *
 * A sub-instance on this host is reached through its local socket; one on
 * another host, or an ssh://[USER@]HOST[:PORT]/PATH target, through the
 * ssh:// connector (libflux connector_ssh.c, which runs `flux relay` on
 * HOST).  The proxy keeps a connection of its own open while COMMAND
 * runs and watches it: when it is lost (the instance ended, ssh died)
 * and COMMAND has not ended 5 s later, the proxy says so, sends SIGHUP
 * and SIGCONT to COMMAND (unless --nohup), waits for it and exits 1.  Unlike
 * flux-core's proxy, COMMAND gets TARGET's URI itself rather than a socket the
 * proxy routes, so each flux command under an ssh:// proxy opens its own ssh
 * connection. Otherwise the exit code is COMMAND's, 128+N if a signal killed
 * it.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmdutil.h"
#include "instance.h"

static const char usage[]
    = "Usage: flux proxy [OPTIONS] TARGET [COMMAND [ARGS...]]\n"
      "Run COMMAND (default: $SHELL) with FLUX_URI set to the Flux instance\n"
      "TARGET names: a URI, or a job id path ID[/ID...] of running\n"
      "sub-instances (see flux uri).  Exit with COMMAND's exit code.\n"
      "  -w, --wait       Wait for the job to start and post its URI\n"
      "  -n, --nohup      If the connection is lost, do not send SIGHUP and\n"
      "                   SIGCONT to COMMAND (it is still waited for)\n"
      "  -h, --help       Display this message\n";

const struct builtin builtin_proxy = {
    .name = "proxy",
    .summary = "Run a command in a running Flux sub-instance",
    .usage = usage,
    .main = cmd_proxy,
};

/* After the connection is lost, COMMAND gets this long to end by itself
 * (flux shutdown ends when its instance does) before it is told. */
#define LOST_GRACE_MS 5000

/* Wait for pid while watching h's connection; a message on it (there
 * should be none) is dropped, an error or end of file means it is lost.
 * Returns pid's wait status, or -1 if the connection was lost and pid
 * was still running LOST_GRACE_MS later (then it was told: an error
 * message, and SIGHUP and SIGCONT unless nohup). */
static int64_t now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int wait_watching (pid_t pid, flux_t *h, bool nohup, const char *uri)
{
    int pidfd = (int)syscall (SYS_pidfd_open, pid, 0);
    int64_t deadline = -1; /* once lost: when COMMAND is told */
    bool told = false;
    int status, timeout;

    for (;;) {
        struct pollfd pfd[2] = {
            {.fd = deadline >= 0 ? -1 : flux_pollfd (h), .events = POLLIN},
            {.fd = pidfd, .events = POLLIN},
        };
        pid_t rc = waitpid (pid, &status, WNOHANG);
        if (rc == pid)
            break;
        if (rc < 0 && errno != EINTR)
            cmd_die ("waitpid: %s", strerror (errno));
        if (deadline >= 0 && !told && now_ms () >= deadline) {
            cmd_warn ("%s: connection lost", uri);
            told = true;
            if (!nohup) {
                kill (pid, SIGHUP);
                kill (pid, SIGCONT);
            }
        }
        /* without a pidfd (old kernel), look at the child twice a second */
        timeout = pidfd < 0 ? 500 : -1;
        if (deadline >= 0 && !told) {
            int64_t left = deadline - now_ms ();
            if (timeout < 0 || left < timeout)
                timeout = left > 0 ? (int)left : 0;
        }
        if (poll (pfd, 2, timeout) < 0 && errno != EINTR)
            cmd_die ("poll: %s", strerror (errno));
        if (deadline < 0 && pfd[0].revents) {
            flux_msg_t *msg;
            while ((msg = flux_recv (h, FLUX_O_NONBLOCK)))
                flux_msg_destroy (msg);
            if (errno != EWOULDBLOCK && errno != EAGAIN)
                deadline = now_ms () + LOST_GRACE_MS;
        }
    }
    if (pidfd >= 0)
        close (pidfd);
    return told ? -1 : status;
}

int cmd_proxy (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"wait", no_argument, NULL, 'w'},
        {"nohup", no_argument, NULL, 'n'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    char *shell_argv[] = {getenv ("SHELL"), NULL};
    char **cmd = shell_argv;
    bool wait = false, nohup = false;
    flux_error_t error;
    char *uri, *local;
    flux_t *h, *sub;
    int c, status;
    pid_t pid;

    while ((c = cmd_getopt (argc, argv, "wn", longopts)) != -1) {
        if (c == 'w')
            wait = true;
        else if (c == 'n')
            nohup = true;
    }
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
    /* check it answers before handing it to COMMAND; keep it to watch */
    if (!(sub = flux_open_ex (local, 0, &error)))
        cmd_die ("%s", error.text);
    if (!flux_attr_get (sub, "rank"))
        cmd_die ("%s: %s", local, strerror (errno));
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
    status = wait_watching (pid, sub, nohup, local);
    flux_close (sub);
    free (uri);
    free (local);
    if (status < 0)
        return 1;
    if (WIFSIGNALED (status))
        return 128 + WTERMSIG (status);
    return WEXITSTATUS (status);
}
