/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* launcher.c - flux-shell --launcher FD: fork a job shell per request of
 * the exec agent (the protocol: launch.h).
 *
 * Nothing here may initialize libflux, libuv or jansson: each shell is a
 * fork of this process and must start as clean as an exec'd one.  So the
 * loop is plain epoll over the agent's socket and one pidfd per child,
 * and the launcher keeps every signal disposition at its default and its
 * mask empty (the shell then starts as posix_spawn started it: a session
 * of its own, stdin /dev/null, stdout and stderr the agent's pipes,
 * nothing else open, cwd /).
 *
 * A child's exit is reported, not reaped: the agent first kills what is
 * left of the shell's process group, whose id the zombie holds, then
 * asks for the reap.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch.h"

extern char **environ;

/* in a forked shell: child_run() (volatile: a store never read back
 * must not be optimized away) */
static char **volatile shell_argv;

struct child {
    pid_t pid;
    int pidfd;
    bool exited; /* reported, waiting for REAP */
};

struct launcher {
    int sock;
    int epfd;
    launch_main_f main_fn;
    char *title, *title_end; /* the launcher's argv strings (retitle) */
    struct child *children;
    size_t n, cap;
    char *buf;
};

static void warn (const char *what)
{
    fprintf (stderr, "flux-shell --launcher: %s: %s\n", what, strerror (errno));
}

/* In the child: show argv as the command line (/proc/PID/cmdline, which
 * the kernel reads from the launcher's argv strings) if it fits: the
 * strings joined by spaces, then a NUL, then spaces to the end, whose last
 * byte not being a NUL tells the kernel to stop at the first NUL (the
 * setproctitle convention).  glibc's program name pointed there: it
 * points to the job's argv[0] instead. */
static void retitle (struct launcher *l, char **argv)
{
    size_t room = (size_t)(l->title_end - l->title), len = 0;
    char *p = l->title, *slash;

    for (int i = 0; argv[i]; i++)
        len += strlen (argv[i]) + 1;
    if (!l->title || len + 1 > room)
        return;
    for (int i = 0; argv[i]; i++) {
        size_t n = strlen (argv[i]);
        memcpy (p, argv[i], n);
        p[n] = argv[i + 1] ? ' ' : '\0';
        p += n + 1;
    }
    memset (p, ' ', (size_t)(l->title_end - p));
    program_invocation_name = argv[0];
    slash = strrchr (argv[0], '/');
    program_invocation_short_name = slash ? slash + 1 : argv[0];
}

/* In the child: become the shell, as posix_spawn would have started it. */
static void child_run (struct launcher *l, int out, int err, int argc,
                       char **argv, char **env)
{
    sigset_t none;
    int null;

    sigemptyset (&none);
    if (setsid () < 0 || (null = open ("/dev/null", O_RDONLY)) < 0
        || dup2 (null, 0) < 0 || dup2 (out, 1) < 0 || dup2 (err, 2) < 0
        || chdir ("/") < 0 || sigprocmask (SIG_SETMASK, &none, NULL) < 0) {
        warn ("starting a shell");
        _exit (1);
    }
    if (close_range (3, ~0U, 0) < 0) {
        long max = sysconf (_SC_OPEN_MAX);
        for (int fd = 3; fd < (max > 0 ? max : 1024); fd++)
            (void)close (fd);
    }
    free (l->children); /* the launcher's, not the shell's */
    retitle (l, argv);
    /* the shell's argv and env (and through them the packet they point
     * into) stay reachable from a global for the shell's whole life:
     * LeakSanitizer at its exit must not take them for leaks */
    shell_argv = argv;
    environ = env;
    exit (l->main_fn (argc, argv));
}

static int child_add (struct launcher *l, pid_t pid, int pidfd)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = (uint64_t)pid};

    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        struct child *c = realloc (l->children, cap * sizeof (*c));
        if (!c)
            return -1;
        l->children = c;
        l->cap = cap;
    }
    if (epoll_ctl (l->epfd, EPOLL_CTL_ADD, pidfd, &ev) < 0)
        return -1;
    l->children[l->n++] = (struct child){.pid = pid, .pidfd = pidfd};
    return 0;
}

static struct child *child_find (struct launcher *l, pid_t pid)
{
    for (size_t i = 0; i < l->n; i++) {
        if (l->children[i].pid == pid)
            return &l->children[i];
    }
    return NULL;
}

static void child_reap (struct launcher *l, struct child *c)
{
    siginfo_t si;

    while (waitid (P_PIDFD, (id_t)c->pidfd, &si, WEXITED) < 0 && errno == EINTR)
        ;
    (void)close (c->pidfd); /* also leaves the epoll set */
    *c = l->children[--l->n];
}

static int answer (struct launcher *l, uint64_t seq, pid_t pid, int pidfd,
                   int errnum)
{
    struct launch_hdr hdr;

    launch_encode (&hdr, LAUNCH_STARTED, seq, pid, errnum);
    return launch_send (l->sock, &hdr, sizeof (hdr), &pidfd, pidfd >= 0 ? 1 : 0,
                        0);
}

static int start (struct launcher *l, size_t len, int *fds, int nfds)
{
    struct launch_hdr hdr;
    char **argv, **env;
    pid_t pid;
    int pidfd, rc;

    if (launch_decode_start (l->buf, len, &hdr, &argv, &env) < 0 || nfds != 2) {
        if (nfds != 2)
            errno = EPROTO;
        rc = launch_decode (l->buf, len, &hdr) == 0
                 ? answer (l, hdr.seq, 0, -1, errno)
                 : 0;
        goto done;
    }
    if ((pid = fork ()) < 0) {
        rc = answer (l, hdr.seq, 0, -1, errno);
        free (argv);
        goto done;
    }
    if (pid == 0)
        child_run (l, fds[0], fds[1], (int)hdr.argc, argv, env);
    free (argv);
    if ((pidfd = (int)syscall (SYS_pidfd_open, pid, 0)) < 0
        || child_add (l, pid, pidfd) < 0) {
        /* it must not run unwatched */
        int e = errno;
        (void)kill (pid, SIGKILL);
        (void)waitpid (pid, NULL, 0);
        if (pidfd >= 0)
            (void)close (pidfd);
        rc = answer (l, hdr.seq, 0, -1, e);
        goto done;
    }
    rc = answer (l, hdr.seq, pid, pidfd, 0);
done:
    for (int i = 0; i < nfds; i++)
        (void)close (fds[i]);
    return rc;
}

/* Packets from the agent until none is left: 0; -1 at EOF or error. */
static int sock_ready (struct launcher *l)
{
    for (;;) {
        int fds[2], nfds = 2;
        ssize_t n = launch_recv (l->sock, l->buf, LAUNCH_MSG_MAX, fds, &nfds,
                                 MSG_DONTWAIT);
        struct launch_hdr hdr;
        struct child *c;

        if (n < 0 && errno == EAGAIN)
            return 0;
        if (n < 0 && errno == EPROTO) {
            warn ("a packet from the agent");
            continue;
        }
        if (n <= 0)
            return -1;
        if (launch_decode (l->buf, (size_t)n, &hdr) < 0) {
            warn ("a packet from the agent");
        }
        else if (hdr.type == LAUNCH_START) {
            if (start (l, (size_t)n, fds, nfds) < 0)
                return -1;
            nfds = 0;
        }
        else if (hdr.type == LAUNCH_REAP) {
            if ((c = child_find (l, (pid_t)hdr.pid)) && c->exited)
                child_reap (l, c);
        }
        for (int i = 0; i < nfds; i++)
            (void)close (fds[i]);
    }
}

static int child_ready (struct launcher *l, pid_t pid)
{
    struct child *c = child_find (l, pid);
    struct launch_hdr hdr;
    siginfo_t si = {0};

    if (!c || c->exited)
        return 0;
    if (waitid (P_PIDFD, (id_t)c->pidfd, &si, WEXITED | WNOHANG | WNOWAIT) < 0
        || si.si_pid == 0)
        return 0; /* not yet */
    c->exited = true;
    (void)epoll_ctl (l->epfd, EPOLL_CTL_DEL, c->pidfd, NULL);
    launch_encode (&hdr, LAUNCH_EXITED, 0, pid,
                   launch_wait_status (si.si_code, si.si_status));
    return launch_send (l->sock, &hdr, sizeof (hdr), NULL, 0, 0);
}

/* Descriptors 0-2 open, so that those received never land there (the
 * child's dup2 of them would then clobber one another). */
static void std_fds (void)
{
    for (int fd = 0; fd < 3; fd++) {
        if (fcntl (fd, F_GETFD) < 0 && open ("/dev/null", O_RDWR) < 0)
            break;
    }
}

/* The extent of the launcher's argv strings, if they are contiguous. */
static void title_init (struct launcher *l, char **title)
{
    char *end;

    if (!title || !title[0])
        return;
    end = title[0];
    for (int i = 0; title[i]; i++) {
        if (title[i] != end)
            return; /* not one block: leave the command line alone */
        end += strlen (title[i]) + 1;
    }
    l->title = title[0];
    l->title_end = end;
}

int launcher_serve (int sock, launch_main_f main_fn, char **title)
{
    struct launcher l = {.sock = sock, .main_fn = main_fn, .epfd = -1};
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 0};
    struct launch_hdr hello;
    sigset_t none;

    std_fds ();
    title_init (&l, title);
    sigemptyset (&none);
    (void)sigprocmask (SIG_SETMASK, &none, NULL);
    for (int sig = 1; sig < NSIG; sig++)
        (void)signal (sig, SIG_DFL); /* fails harmlessly where it must */
    if (fcntl (sock, F_SETFD, FD_CLOEXEC) < 0
        || !(l.buf = malloc (LAUNCH_MSG_MAX))
        || (l.epfd = epoll_create1 (EPOLL_CLOEXEC)) < 0
        || epoll_ctl (l.epfd, EPOLL_CTL_ADD, sock, &ev) < 0) {
        warn ("setting up");
        return 1;
    }
    launch_encode (&hello, LAUNCH_HELLO, 0, 0, 0);
    if (launch_send (sock, &hello, sizeof (hello), NULL, 0, 0) < 0) {
        warn ("hello");
        return 1;
    }
    for (;;) {
        struct epoll_event evs[64];
        int n = epoll_wait (l.epfd, evs, 64, -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        for (int i = 0; i < n; i++) {
            if (evs[i].data.u64 == 0) {
                if (sock_ready (&l) < 0)
                    goto eof;
            }
            else if (child_ready (&l, (pid_t)evs[i].data.u64) < 0)
                goto eof;
        }
    }
eof:
    /* the agent is gone (module unload: it killed what was left) */
    (void)close (sock);
    while (l.n > 0)
        child_reap (&l, &l.children[0]);
    free (l.children);
    free (l.buf);
    (void)close (l.epfd);
    return 0;
}
