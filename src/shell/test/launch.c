/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/launch.c - the shell launcher's packets (encode, decode, fail
 * closed), their transport with descriptors, and a launcher serving this
 * test as its agent: a forked "shell" gets its argv, env and pipes, its
 * exit is reported and it stays a zombie until reaped. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch.h"
#include "tap.h"

static char buf[LAUNCH_MSG_MAX];

static void test_codec (void)
{
    char *argv[] = {"/bin/shell", "1234", NULL};
    char *env[] = {"A=1", "EMPTY=", NULL};
    char *noenv[] = {NULL};
    char **a, **e;
    struct launch_hdr hdr;
    ssize_t n;

    n = launch_encode_start (buf, sizeof (buf), 42, argv, env);
    ok (n == (ssize_t)(sizeof (hdr) + 11 + 5 + 4 + 7), "START encodes");
    ok (launch_decode_start (buf, (size_t)n, &hdr, &a, &e) == 0 && hdr.seq == 42
            && hdr.argc == 2 && hdr.envc == 2,
        "START decodes");
    ok (!strcmp (a[0], "/bin/shell") && !strcmp (a[1], "1234") && !a[2]
            && !strcmp (e[0], "A=1") && !strcmp (e[1], "EMPTY=") && !e[2],
        "argv and env come back as they went");
    free (a);
    n = launch_encode_start (buf, sizeof (buf), 1, argv, noenv);
    ok (n > 0 && launch_decode_start (buf, (size_t)n, &hdr, &a, &e) == 0
            && hdr.envc == 0 && e[0] == NULL,
        "an empty env");
    free (a);
    n = launch_encode_start (buf, sizeof (buf), 1, argv, NULL);
    ok (n > 0 && launch_decode_start (buf, (size_t)n, &hdr, &a, &e) == 0
            && e[0] == NULL,
        "a NULL env is an empty one");
    free (a);
    ok (launch_encode_start (buf, sizeof (buf), 1, noenv, env) < 0
            && errno == EINVAL,
        "an empty argv is EINVAL");
    ok (launch_encode_start (buf, sizeof (hdr) + 12, 1, argv, env) < 0
            && errno == E2BIG,
        "a START larger than the buffer is E2BIG");
    {
        char *big = malloc (LAUNCH_MSG_MAX);
        char *bigenv[] = {big, NULL};
        memset (big, 'x', LAUNCH_MSG_MAX - 1);
        big[LAUNCH_MSG_MAX - 1] = '\0';
        char *huge = malloc (2 * LAUNCH_MSG_MAX);
        ok (huge
                && launch_encode_start (huge, 2 * LAUNCH_MSG_MAX, 1, argv,
                                        bigenv)
                       < 0
                && errno == E2BIG,
            "a START larger than LAUNCH_MSG_MAX is E2BIG");
        free (huge);
        free (big);
    }

    /* fail closed */
    n = launch_encode_start (buf, sizeof (buf), 42, argv, env);
    buf[n] = 'x';
    ok (launch_decode_start (buf, (size_t)n + 1, &hdr, &a, &e) < 0
            && errno == EPROTO,
        "bytes after the last string: EPROTO");
    ok (launch_decode_start (buf, (size_t)n - 1, &hdr, &a, &e) < 0
            && errno == EPROTO,
        "a last string without its NUL: EPROTO");
    ((struct launch_hdr *)buf)->envc = 3;
    ok (launch_decode_start (buf, (size_t)n, &hdr, &a, &e) < 0
            && errno == EPROTO,
        "more strings counted than sent: EPROTO");
    ((struct launch_hdr *)buf)->envc = 1;
    ok (launch_decode_start (buf, (size_t)n, &hdr, &a, &e) < 0
            && errno == EPROTO,
        "fewer strings counted than sent: EPROTO");
    ((struct launch_hdr *)buf)->envc = 2;
    ((struct launch_hdr *)buf)->argc = 0;
    ok (launch_decode_start (buf, (size_t)n, &hdr, &a, &e) < 0
            && errno == EPROTO,
        "argc 0: EPROTO");
    ((struct launch_hdr *)buf)->argc = 2;
    ((struct launch_hdr *)buf)->magic = LAUNCH_MAGIC + 1;
    ok (launch_decode (buf, (size_t)n, &hdr) < 0 && errno == EPROTO,
        "another version: EPROTO");
    launch_encode (&hdr, LAUNCH_EXITED, 0, 99, 9);
    ok (launch_decode (&hdr, sizeof (hdr), &hdr) == 0
            && hdr.type == LAUNCH_EXITED && hdr.pid == 99 && hdr.value == 9,
        "EXITED decodes");
    memcpy (buf, &hdr, sizeof (hdr));
    ok (launch_decode (buf, sizeof (hdr) + 1, &hdr) < 0 && errno == EPROTO,
        "a header-only packet with more: EPROTO");
    ok (launch_decode (buf, sizeof (hdr) - 1, &hdr) < 0 && errno == EPROTO,
        "a short packet: EPROTO");
    ((struct launch_hdr *)buf)->type = 77;
    ok (launch_decode (buf, sizeof (hdr), &hdr) < 0 && errno == EPROTO,
        "an unknown type: EPROTO");
    ok (launch_decode_start (buf, sizeof (hdr), &hdr, &a, &e) < 0
            && errno == EPROTO,
        "launch_decode_start of another type: EPROTO");

    ok (launch_wait_status (CLD_EXITED, 3) == 3 << 8
            && launch_wait_status (CLD_KILLED, SIGKILL) == SIGKILL
            && launch_wait_status (CLD_DUMPED, SIGSEGV) == (SIGSEGV | 0x80),
        "siginfo to wait status");
}

static bool fd_is_open (int fd)
{
    return fcntl (fd, F_GETFD) >= 0;
}

static void test_transport (void)
{
    int sv[2], p[2], fds[4], nfds;
    struct launch_hdr hdr;
    ssize_t n;

    if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0
        || pipe2 (p, O_CLOEXEC) < 0)
        BAIL_OUT ("socketpair, pipe");
    launch_encode (&hdr, LAUNCH_HELLO, 0, 0, 0);
    ok (launch_send (sv[0], &hdr, sizeof (hdr), p, 2, 0) == 0,
        "a packet with two descriptors goes");
    nfds = 2;
    n = launch_recv (sv[1], buf, sizeof (buf), fds, &nfds, MSG_DONTWAIT);
    ok (n == (ssize_t)sizeof (hdr) && nfds == 2
            && (fcntl (fds[0], F_GETFD) & FD_CLOEXEC),
        "it comes with them (close-on-exec)");
    (void)close (fds[0]);
    (void)close (fds[1]);
    ok (launch_send (sv[0], &hdr, sizeof (hdr), p, 2, 0) == 0
            && (nfds = 1,
                launch_recv (sv[1], buf, sizeof (buf), fds, &nfds, 0) < 0)
            && errno == EPROTO && nfds == 0,
        "more descriptors than room: EPROTO");
    ok (launch_send (sv[0], buf, 100, NULL, 0, 0) == 0
            && launch_recv (sv[1], buf, 10, NULL, NULL, 0) < 0
            && errno == EPROTO,
        "a truncated packet: EPROTO");
    ok (launch_recv (sv[1], buf, sizeof (buf), NULL, NULL, MSG_DONTWAIT) < 0
            && errno == EAGAIN,
        "nothing more: EAGAIN");
    ok (launch_send (sv[0], &hdr, sizeof (hdr), p, 3, 0) < 0 && errno == EINVAL,
        "three descriptors: EINVAL");
    (void)close (sv[0]);
    ok (launch_recv (sv[1], buf, sizeof (buf), NULL, NULL, 0) == 0,
        "EOF when the peer closed");
    ok (launch_send (sv[1], &hdr, sizeof (hdr), NULL, 0, 0) < 0
            && errno == EPIPE,
        "EPIPE (no signal) to a closed peer");
    (void)close (sv[1]);
    (void)close (p[0]);
    (void)close (p[1]);
    ok (!fd_is_open (p[0]), "descriptors are released");
}

/* The launcher's "argv": one block, as the kernel lays argv out. */
static char title_block[64] = "launcher\0--launcher\0"
                              "000000000000000000000003";
static char *title[] = {title_block, title_block + 9, title_block + 20, NULL};

/* The "shell": reports what it was given on stdout, exits with argv[1]. */
static int fake_main (int argc, char **argv)
{
    char cwd[64] = "";
    sigset_t mask;
    int blocked = 0;

    (void)sigprocmask (SIG_SETMASK, NULL, &mask);
    for (int s = 1; s < 32; s++)
        blocked += sigismember (&mask, s) == 1;
    if (!getcwd (cwd, sizeof (cwd)))
        cwd[0] = '\0';
    printf ("argc=%d arg=%s foo=%s cwd=%s leader=%d fd3=%d fd4=%d blocked=%d"
            " stdin=%d name=%s title=%s|\n",
            argc, argv[1], getenv ("FOO") ? getenv ("FOO") : "-", cwd,
            getsid (0) == getpid () && getpgrp () == getpid (), fd_is_open (3),
            fd_is_open (4), blocked, read (0, cwd, 1) == 0,
            program_invocation_short_name, title_block);
    fprintf (stderr, "to stderr\n");
    if (!strcmp (argv[1], "sleep"))
        pause ();
    return atoi (argv[1]);
}

static ssize_t recv_wait (int sock, struct launch_hdr *hdr, int *fds, int *nfds)
{
    struct pollfd pfd = {.fd = sock, .events = POLLIN};
    ssize_t n;

    if (poll (&pfd, 1, 10000) != 1)
        return -1;
    n = launch_recv (sock, buf, sizeof (buf), fds, nfds, 0);
    if (n > 0 && launch_decode (buf, (size_t)n, hdr) < 0)
        return -1;
    return n;
}

static char state_of (pid_t pid)
{
    char path[64], line[256], *p;
    FILE *f;

    snprintf (path, sizeof (path), "/proc/%d/stat", (int)pid);
    if (!(f = fopen (path, "r")))
        return '-';
    p = fgets (line, sizeof (line), f) ? strrchr (line, ')') : NULL;
    fclose (f);
    return p && p[1] ? p[2] : '?';
}

static pid_t start_shell (int sock, const char *arg, int *pidfd, int *out,
                          int *err)
{
    char *argv[] = {"fake", (char *)arg, NULL};
    char *env[] = {"FOO=bar", NULL};
    int po[2], pe[2], fds[2], nfds = 1, rc;
    struct launch_hdr hdr;
    ssize_t n;

    if (pipe2 (po, O_CLOEXEC) < 0 || pipe2 (pe, O_CLOEXEC) < 0)
        BAIL_OUT ("pipe");
    n = launch_encode_start (buf, sizeof (buf), 7, argv, env);
    fds[0] = po[1];
    fds[1] = pe[1];
    rc = launch_send (sock, buf, (size_t)n, fds, 2, 0);
    (void)close (po[1]);
    (void)close (pe[1]);
    *out = po[0];
    *err = pe[0];
    if (rc < 0 || recv_wait (sock, &hdr, pidfd, &nfds) <= 0
        || hdr.type != LAUNCH_STARTED || hdr.seq != 7 || hdr.value != 0
        || nfds != 1)
        return -1;
    return (pid_t)hdr.pid;
}

static void test_launcher (void)
{
    int sv[2], pidfd, out, err, nfds = 0;
    struct launch_hdr hdr;
    pid_t lpid, pid, pid2;
    char line[512] = "";
    ssize_t n;
    FILE *f;
    int status;

    if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        BAIL_OUT ("socketpair");
    if ((lpid = fork ()) == 0) {
        (void)close (sv[0]);
        _exit (launcher_serve (sv[1], fake_main, title));
    }
    (void)close (sv[1]);
    ok (recv_wait (sv[0], &hdr, NULL, &nfds) > 0 && hdr.type == LAUNCH_HELLO,
        "the launcher says hello");

    pid = start_shell (sv[0], "3", &pidfd, &out, &err);
    ok (pid > 0, "a START is answered with the pid and a pidfd");
    f = fdopen (out, "r");
    ok (f && fgets (line, sizeof (line), f), "the shell writes on stdout");
    is (line,
        "argc=2 arg=3 foo=bar cwd=/ leader=1 fd3=0 fd4=0 blocked=0 stdin=1 "
        "name=fake title=fake 3|\n",
        "argv, env, cwd /, a session leader, nothing else open, "
        "stdin /dev/null, its name and title");
    if (f)
        fclose (f);
    n = read (err, line, sizeof (line) - 1);
    ok (n == 10 && !strncmp (line, "to stderr\n", 10), "and on stderr");
    (void)close (err);
    nfds = 0;
    ok (recv_wait (sv[0], &hdr, NULL, &nfds) > 0 && hdr.type == LAUNCH_EXITED
            && hdr.pid == pid && hdr.value == 3 << 8,
        "its exit is reported with its status");
    ok (state_of (pid) == 'Z', "it stays a zombie (its ids stay taken)");
    launch_encode (&hdr, LAUNCH_REAP, 0, pid, 0);
    ok (launch_send (sv[0], &hdr, sizeof (hdr), NULL, 0, 0) == 0, "REAP goes");
    for (int i = 0; i < 1000 && state_of (pid) != '-'; i++)
        usleep (1000);
    ok (state_of (pid) == '-', "then it is reaped");
    (void)close (pidfd);

    pid = start_shell (sv[0], "sleep", &pidfd, &out, &err);
    pid2 = start_shell (sv[0], "0", &pidfd, &out, &err);
    ok (pid > 0 && pid2 > 0, "two more shells");
    ok (kill (pid, SIGKILL) == 0, "one is killed");
    {
        int seen = 0, st = -1, st2 = -1;
        for (int i = 0; i < 2; i++) {
            nfds = 0;
            if (recv_wait (sv[0], &hdr, NULL, &nfds) > 0
                && hdr.type == LAUNCH_EXITED) {
                seen++;
                if (hdr.pid == pid)
                    st = hdr.value;
                else if (hdr.pid == pid2)
                    st2 = hdr.value;
            }
        }
        ok (seen == 2 && st == SIGKILL && st2 == 0,
            "the signal and the exit code are reported");
    }

    /* a START without its two descriptors */
    {
        char *argv[] = {"x", NULL};
        n = launch_encode_start (buf, sizeof (buf), 9, argv, NULL);
        nfds = 0;
        ok (launch_send (sv[0], buf, (size_t)n, NULL, 0, 0) == 0
                && recv_wait (sv[0], &hdr, NULL, &nfds) > 0
                && hdr.type == LAUNCH_STARTED && hdr.seq == 9
                && hdr.value == EPROTO,
            "a START without its pipes is answered EPROTO");
    }
    (void)close (sv[0]);
    ok (waitpid (lpid, &status, 0) == lpid && WIFEXITED (status)
            && WEXITSTATUS (status) == 0,
        "at EOF the launcher exits 0");
    ok (state_of (pid) == '-' && state_of (pid2) == '-',
        "having reaped the zombies the agent did not reap");
}

int main (int argc, char **argv)
{
    (void)argc;
    (void)argv;
    plan (NO_PLAN);
    test_codec ();
    test_transport ();
    test_launcher ();
    done_testing ();
    return 0;
}
