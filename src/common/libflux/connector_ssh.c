/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* connector_ssh.c - ssh://[USER@]HOST[:PORT]/PATH: reach a broker on
 * another host through ssh, as flux-core's ssh connector does.
 *
 * The connector runs `$FLUX_SSH [-p PORT] [USER@]HOST $FLUX_SSH_RCMD relay
 * 'PATH'` with its stdin and stdout on one end of a socketpair (and
 * SIGINT ignored: see spawn_ssh()).  `flux relay` (src/cmd/builtin/
 * relay.c) connects to local://PATH on HOST,
 * writes the accept byte and then copies framed messages both ways, so
 * the socketpair speaks exactly the local connector's protocol and the
 * stream code of connector_local.c drives it.  Closing the handle closes
 * the socket; ssh and the relay then end, and the ssh process is reaped.
 *
 * FLUX_SSH is one program (default "ssh"; a wrapper script can add
 * options).  FLUX_SSH_RCMD is the remote command that runs flux (default:
 * the flux found on this host's PATH, which suits hosts that share an
 * install, else "flux"); it is put into the remote command line as is.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "connector.h"
#include "local_connect.h"

struct sshargs {
    char host[256]; /* [USER@]HOST */
    char port[8];   /* empty if none */
    const char *path;
};

/* Split "[USER@]HOST[:PORT]/PATH". */
static int parse_arg (const char *arg, struct sshargs *a, flux_error_t *error)
{
    const char *slash = strchr (arg, '/');
    const char *colon;
    size_t hostlen;

    if (!slash || slash == arg || slash[1] == '\0') {
        errprintf (error, "ssh://%s: expected ssh://[USER@]HOST[:PORT]/PATH",
                   arg);
        goto inval;
    }
    colon = memchr (arg, ':', slash - arg);
    hostlen = (colon ? colon : slash) - arg;
    /* a "host" beginning '-' would be taken by ssh as an option */
    if (hostlen == 0 || hostlen >= sizeof (a->host) || arg[0] == '-'
        || memchr (arg, '@', hostlen) == arg + hostlen - 1) {
        errprintf (error, "ssh://%s: bad host", arg);
        goto inval;
    }
    memcpy (a->host, arg, hostlen);
    a->host[hostlen] = '\0';
    a->port[0] = '\0';
    if (colon) {
        size_t plen = slash - colon - 1;
        char *end;
        long port;
        if (plen == 0 || plen >= sizeof (a->port))
            goto badport;
        memcpy (a->port, colon + 1, plen);
        a->port[plen] = '\0';
        port = strtol (a->port, &end, 10);
        if (*end != '\0' || port < 1 || port > 65535 || a->port[0] == '+')
            goto badport;
    }
    a->path = slash;
    return 0;
badport:
    errprintf (error, "ssh://%s: bad port", arg);
inval:
    errno = EINVAL;
    return -1;
}

/* The first executable NAME on PATH, in buf; NULL if none. */
static const char *which (const char *name, char *buf, size_t size)
{
    const char *p = getenv ("PATH");

    while (p && *p) {
        const char *end = strchrnul (p, ':');
        struct stat sb;
        int n = snprintf (buf, size, "%.*s/%s", (int)(end - p), p, name);
        if (end > p && n > 0 && (size_t)n < size && buf[0] == '/'
            && stat (buf, &sb) == 0 && S_ISREG (sb.st_mode)
            && access (buf, X_OK) == 0)
            return buf;
        p = *end ? end + 1 : end;
    }
    return NULL;
}

/* "RCMD relay 'PATH'" with PATH single-quoted for the remote shell. */
static char *remote_command (const char *path)
{
    const char *rcmd = getenv ("FLUX_SSH_RCMD");
    char pathbuf[4096];
    size_t len, i, n = 0;
    char *cmd;

    if (!rcmd || !*rcmd)
        rcmd = which ("flux", pathbuf, sizeof (pathbuf));
    if (!rcmd)
        rcmd = "flux";
    len = strlen (rcmd) + strlen (" relay ''") + 4 * strlen (path) + 1;
    if (!(cmd = malloc (len)))
        return NULL;
    n = sprintf (cmd, "%s relay '", rcmd);
    for (i = 0; path[i]; i++) {
        if (path[i] == '\'') {
            memcpy (cmd + n, "'\\''", 4);
            n += 4;
        }
        else
            cmd[n++] = path[i];
    }
    cmd[n++] = '\'';
    cmd[n] = '\0';
    return cmd;
}

/* Start ssh with stdin and stdout on fd; its pid in *pid.
 *
 * ssh starts with SIGINT and SIGQUIT ignored: it keeps an ignored
 * disposition (OpenSSH installs its handlers only over the default), so
 * a ctrl-C typed at the terminal reaches the flux command, which forwards
 * it to the job, instead of ending the connection under it.  ssh stays in
 * the terminal's process group, so it can still ask for a passphrase.
 * An exec failure comes back through a close-on-exec pipe as its errno.
 */
static int spawn_ssh (const struct sshargs *a, const char *rcmd, int fd,
                      pid_t *pid)
{
    const char *ssh = getenv ("FLUX_SSH");
    char *argv[8];
    int argc = 0, pfd[2], e = 0;
    ssize_t n;
    pid_t child;

    if (!ssh || !*ssh)
        ssh = "ssh";
    argv[argc++] = (char *)ssh;
    if (a->port[0]) {
        argv[argc++] = "-p";
        argv[argc++] = (char *)a->port;
    }
    argv[argc++] = (char *)a->host;
    argv[argc++] = (char *)rcmd;
    argv[argc] = NULL;
    if (pipe2 (pfd, O_CLOEXEC) < 0)
        return -1;
    if ((child = fork ()) < 0) {
        e = errno;
        close (pfd[0]);
        close (pfd[1]);
        errno = e;
        return -1;
    }
    if (child == 0) { /* async-signal-safe calls only */
        signal (SIGINT, SIG_IGN);
        signal (SIGQUIT, SIG_IGN);
        /* fcntl: dup2 onto itself would keep close-on-exec */
        if (dup2 (fd, STDIN_FILENO) >= 0 && dup2 (fd, STDOUT_FILENO) >= 0
            && fcntl (STDIN_FILENO, F_SETFD, 0) == 0
            && fcntl (STDOUT_FILENO, F_SETFD, 0) == 0)
            execvp (ssh, argv);
        e = errno;
        (void)!write (pfd[1], &e, sizeof (e));
        _exit (127);
    }
    close (pfd[1]);
    while ((n = read (pfd[0], &e, sizeof (e))) < 0 && errno == EINTR)
        ;
    close (pfd[0]);
    if (n == (ssize_t)sizeof (e)) { /* the exec failed */
        while (waitpid (child, NULL, 0) < 0 && errno == EINTR)
            ;
        errno = e;
        return -1;
    }
    *pid = child;
    return 0;
}

flux_t *connector_ssh_open (const char *arg, int flags, flux_error_t *error)
{
    struct sshargs a;
    char *rcmd;
    int sv[2];
    pid_t pid;
    flux_t *h;

    if (parse_arg (arg, &a, error) < 0)
        return NULL;
    if (!(rcmd = remote_command (a.path))) {
        errprintf (error, "out of memory");
        return NULL;
    }
    if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        errprintf (error, "socketpair: %s", strerror (errno));
        free (rcmd);
        return NULL;
    }
    if (spawn_ssh (&a, rcmd, sv[1], &pid) < 0) {
        int saved_errno = errno;
        errprintf (error, "ssh://%s: cannot run %s: %s", arg,
                   getenv ("FLUX_SSH") ? getenv ("FLUX_SSH") : "ssh",
                   strerror (errno));
        close (sv[0]);
        close (sv[1]);
        free (rcmd);
        errno = saved_errno;
        return NULL;
    }
    close (sv[1]);
    free (rcmd);
    if (local_read_accept (sv[0], NULL) < 0) {
        int saved_errno = errno;
        if (errno == ECONNRESET)
            errprintf (error, "ssh://%s: no answer from flux relay on %s", arg,
                       a.host);
        else
            errprintf (error, "ssh://%s: connection refused by broker: %s", arg,
                       strerror (errno));
        close (sv[0]);
        connector_reap_child (pid);
        errno = saved_errno;
        return NULL;
    }
    if (!(h = connector_stream_open (sv[0], pid, flags)))
        errprintf (error, "ssh://%s: %s", arg, strerror (errno));
    return h;
}
