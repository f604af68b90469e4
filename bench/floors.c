/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* floors - what this machine allows, measured without any Flux code: the
 * costs that sit under our speed targets, so that a figure can be judged
 * against what the hardware (or the virtual machine) lets any design do.
 *
 *   handoff  one message handed from a thread to another and back, the
 *            way the broker and its module threads pass messages (an
 *            eventfd written, the other thread woken from epoll_wait):
 *            round trip with the two threads left to the scheduler, and
 *            with both held on one CPU (then no cross-CPU wakeup).
 *   zmq      a 100-byte message and its echo over ZeroMQ DEALER/ROUTER,
 *            CURVE, ipc://, between two processes: one overlay link.
 *   fsync    an overwrite of SIZE bytes then fdatasync() in DIR (what a
 *            durable commit pays at least once), and the same appending.
 *   spawn    fork + exec + wait of /bin/true (under every CLI command).
 *   fault    the first write to a page: of fresh anonymous memory (a
 *            minor fault and the page zeroed), and of a page shared
 *            with the parent after fork (copy on write); and how many
 *            minor faults one launch of /bin/true takes (fork, exec,
 *            the loader, exit).  Under every launch, shell and heap
 *            that grows: a virtual machine can make these costly.
 *
 * Usage: floors [-t SECONDS] [-d DIR] [-s SIZE] [TEST...]
 * (default: all tests, 1 s each, DIR ".", SIZE 28672: the WAL frames of a
 * one-key KVS commit).  Each figure is printed as "name: value unit".
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>
#include "libutil/monotime.h"

static double seconds = 1.0;
static const char *dir = ".";
static size_t fsync_size = 28672;

static void die (const char *what)
{
    fprintf (stderr, "floors: %s: %s\n", what, strerror (errno));
    exit (1);
}

/* ---- handoff: eventfd + epoll between two threads ---- */

struct efd_end {
    int efd; /* written to wake this end */
    int ep;
};

struct handoff {
    struct efd_end end[2];
    int cpu; /* both threads on this CPU, or -1 */
    long count;
};

static void end_init (struct efd_end *e)
{
    struct epoll_event ev = {.events = EPOLLIN};

    if ((e->efd = eventfd (0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0
        || (e->ep = epoll_create1 (EPOLL_CLOEXEC)) < 0
        || epoll_ctl (e->ep, EPOLL_CTL_ADD, e->efd, &ev) < 0)
        die ("eventfd/epoll");
}

static void end_fini (struct efd_end *e)
{
    close (e->efd);
    close (e->ep);
}

static void end_signal (struct efd_end *e)
{
    uint64_t one = 1;
    if (write (e->efd, &one, sizeof (one)) != sizeof (one))
        die ("eventfd write");
}

static void end_wait (struct efd_end *e)
{
    struct epoll_event ev;
    uint64_t val;

    while (epoll_wait (e->ep, &ev, 1, -1) < 0)
        if (errno != EINTR)
            die ("epoll_wait");
    if (read (e->efd, &val, sizeof (val)) != sizeof (val))
        die ("eventfd read");
}

static void pin (int cpu)
{
    cpu_set_t set;

    if (cpu < 0)
        return;
    CPU_ZERO (&set);
    CPU_SET (cpu, &set);
    if (sched_setaffinity (0, sizeof (set), &set) < 0)
        die ("sched_setaffinity");
}

static void *echo_thread (void *arg)
{
    struct handoff *h = arg;

    pin (h->cpu);
    for (long i = 0; i < h->count; i++) {
        end_wait (&h->end[1]);
        end_signal (&h->end[0]);
    }
    return NULL;
}

/* Round trips for about 'seconds'; returns microseconds per round trip. */
static double handoff_rtt (int cpu)
{
    struct handoff h = {.cpu = cpu};
    cpu_set_t saved;
    pthread_t t;
    double t0, t1;
    long n = 200;

    if (sched_getaffinity (0, sizeof (saved), &saved) < 0)
        die ("sched_getaffinity");
    pin (cpu);
    for (;;) {
        end_init (&h.end[0]);
        end_init (&h.end[1]);
        h.count = n;
        if ((errno = pthread_create (&t, NULL, echo_thread, &h)))
            die ("pthread_create");
        t0 = monotime ();
        for (long i = 0; i < n; i++) {
            end_signal (&h.end[1]);
            end_wait (&h.end[0]);
        }
        t1 = monotime ();
        pthread_join (t, NULL);
        end_fini (&h.end[0]);
        end_fini (&h.end[1]);
        if (t1 - t0 >= seconds / 4 || n >= 10000000)
            break;
        n *= 4; /* the first passes are warm-up and sizing */
    }
    (void)sched_setaffinity (0, sizeof (saved), &saved);
    return (t1 - t0) / n * 1e6;
}

static void test_handoff (void)
{
    printf ("handoff_rtt: %.1f us\n", handoff_rtt (-1));
    printf ("handoff_rtt_one_cpu: %.1f us\n",
            handoff_rtt (sched_getcpu () >= 0 ? sched_getcpu () : 0));
}

/* ---- zmq: DEALER/ROUTER, CURVE, ipc ---- */

#define ZMSG 100

static void zmq_server (const char *ep, const char *secret, int ready_fd)
{
    void *ctx = zmq_ctx_new ();
    void *s = zmq_socket (ctx, ZMQ_ROUTER);
    int one = 1, linger = 0;
    char id[256], buf[ZMSG];
    int idlen;

    if (!s || zmq_setsockopt (s, ZMQ_CURVE_SERVER, &one, sizeof (one)) < 0
        || zmq_setsockopt (s, ZMQ_CURVE_SECRETKEY, secret, 40) < 0
        || zmq_setsockopt (s, ZMQ_LINGER, &linger, sizeof (linger)) < 0
        || zmq_bind (s, ep) < 0)
        _exit (1);
    if (write (ready_fd, "", 1) != 1)
        _exit (1);
    /* echo until the client says "stop" (an empty message) */
    for (;;) {
        if ((idlen = zmq_recv (s, id, sizeof (id), 0)) < 0)
            _exit (1);
        int len = zmq_recv (s, buf, sizeof (buf), 0);
        if (len <= 0)
            break;
        if (zmq_send (s, id, idlen, ZMQ_SNDMORE) < 0
            || zmq_send (s, buf, len, 0) < 0)
            _exit (1);
    }
    zmq_close (s);
    zmq_ctx_term (ctx);
    _exit (0);
}

static void test_zmq (void)
{
    char spub[41], ssec[41], cpub[41], csec[41], ep[128], buf[ZMSG];
    int pfd[2], status, linger = 0, timeout = 5000;
    void *ctx, *s;
    double t0, t1;
    long n = 0;
    pid_t pid;

    if (zmq_curve_keypair (spub, ssec) < 0
        || zmq_curve_keypair (cpub, csec) < 0)
        die ("zmq_curve_keypair");
    snprintf (ep, sizeof (ep), "ipc://%s/floors-%d.sock", dir, (int)getpid ());
    if (pipe (pfd) < 0)
        die ("pipe");
    if ((pid = fork ()) < 0)
        die ("fork");
    if (pid == 0) {
        close (pfd[0]);
        zmq_server (ep, ssec, pfd[1]);
    }
    close (pfd[1]);
    if (read (pfd[0], buf, 1) != 1) {
        fprintf (stderr, "floors: zmq server did not start on %s\n", ep);
        exit (1);
    }
    close (pfd[0]);
    memset (buf, 'x', sizeof (buf));
    if (!(ctx = zmq_ctx_new ()) || !(s = zmq_socket (ctx, ZMQ_DEALER))
        || zmq_setsockopt (s, ZMQ_CURVE_SERVERKEY, spub, 40) < 0
        || zmq_setsockopt (s, ZMQ_CURVE_PUBLICKEY, cpub, 40) < 0
        || zmq_setsockopt (s, ZMQ_CURVE_SECRETKEY, csec, 40) < 0
        || zmq_setsockopt (s, ZMQ_LINGER, &linger, sizeof (linger)) < 0
        || zmq_setsockopt (s, ZMQ_RCVTIMEO, &timeout, sizeof (timeout)) < 0
        || zmq_connect (s, ep) < 0)
        die ("zmq client");
    /* the first exchange includes the CURVE handshake: not timed */
    if (zmq_send (s, buf, ZMSG, 0) < 0 || zmq_recv (s, buf, ZMSG, 0) < 0)
        die ("zmq exchange");
    t0 = t1 = monotime ();
    while (t1 - t0 < seconds) {
        for (int i = 0; i < 100; i++)
            if (zmq_send (s, buf, ZMSG, 0) < 0
                || zmq_recv (s, buf, ZMSG, 0) < 0)
                die ("zmq exchange");
        n += 100;
        t1 = monotime ();
    }
    if (zmq_send (s, "", 0, 0) < 0)
        die ("zmq stop");
    waitpid (pid, &status, 0);
    zmq_close (s);
    zmq_ctx_term (ctx);
    unlink (ep + 6);
    printf ("zmq_curve_ipc_rtt: %.1f us\n", (t1 - t0) / n * 1e6);
}

/* ---- fsync: SIZE bytes written then fdatasync ---- */

static double fsync_op (int fd, const char *buf, int append, long n)
{
    double t0 = monotime ();

    for (long i = 0; i < n; i++) {
        off_t off = append ? (off_t)i * fsync_size : 0;
        if (pwrite (fd, buf, fsync_size, off) != (ssize_t)fsync_size)
            die ("pwrite");
        if (fdatasync (fd) < 0)
            die ("fdatasync");
    }
    return (monotime () - t0) / n * 1e6;
}

static void test_fsync (void)
{
    char path[4096];
    char *buf;
    long n;
    int fd;

    snprintf (path, sizeof (path), "%s/floors-%d.tmp", dir, (int)getpid ());
    if (!(buf = malloc (fsync_size)))
        die ("malloc");
    memset (buf, 'f', fsync_size);
    if ((fd = open (path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
        die (path);
    (void)unlink (path);
    /* size the run from a short first pass */
    n = (long)(seconds / 4 / (fsync_op (fd, buf, 0, 20) * 1e-6)) + 1;
    printf ("fsync_overwrite_%zu: %.1f us\n", fsync_size,
            fsync_op (fd, buf, 0, n));
    if (ftruncate (fd, 0) < 0)
        die ("ftruncate");
    printf ("fsync_append_%zu: %.1f us\n", fsync_size,
            fsync_op (fd, buf, 1, n));
    close (fd);
    free (buf);
}

/* ---- spawn: fork + exec + wait ---- */

/* fork, exec /bin/true, wait: exits the program if it does not succeed */
static void spawn_true (void)
{
    char *argv[] = {"/bin/true", NULL};
    int status;
    pid_t pid = fork ();

    if (pid < 0)
        die ("fork");
    if (pid == 0) {
        execv (argv[0], argv);
        _exit (127);
    }
    if (waitpid (pid, &status, 0) < 0 || !WIFEXITED (status)
        || WEXITSTATUS (status) != 0) {
        fprintf (stderr, "floors: /bin/true failed\n");
        exit (1);
    }
}

static void test_spawn (void)
{
    double t0 = monotime (), t1 = t0;
    long n = 0;

    while (t1 - t0 < seconds) {
        spawn_true ();
        n++;
        t1 = monotime ();
    }
    printf ("spawn_true: %.3f ms\n", (t1 - t0) / n * 1e3);
}

/* ---- fault: first writes to pages ---- */

#define FAULT_PAGES 4096 /* 16 MiB of 4 KiB pages */

static char *fault_map (size_t len)
{
    char *p = mmap (NULL, len, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        die ("mmap");
    /* one fault per 4 KiB page, not one per transparent huge page */
    (void)madvise (p, len, MADV_NOHUGEPAGE);
    return p;
}

/* Write one byte to each page; the seconds it took. */
static double fault_touch (char *p, size_t pages, size_t pagesize, char v)
{
    double t0 = monotime ();
    for (size_t i = 0; i < pages; i++)
        ((volatile char *)p)[i * pagesize] = v;
    return monotime () - t0;
}

static void test_fault (void)
{
    size_t pagesize = (size_t)sysconf (_SC_PAGESIZE);
    size_t len = FAULT_PAGES * pagesize;
    double t0 = monotime (), spent = 0;
    long n = 0, nlaunch = 0;
    struct rusage ru0, ru1;
    char *p;

    /* fresh anonymous pages */
    do {
        p = fault_map (len);
        spent += fault_touch (p, FAULT_PAGES, pagesize, 1);
        if (munmap (p, len) < 0)
            die ("munmap");
        n += FAULT_PAGES;
    } while (monotime () - t0 < seconds / 3);
    printf ("fault_anon: %.2f us\n", spent / n * 1e6);

    /* copy on write: the parent's pages written by a forked child */
    p = fault_map (len);
    (void)fault_touch (p, FAULT_PAGES, pagesize, 1);
    t0 = monotime ();
    spent = 0;
    n = 0;
    do {
        int fds[2], status;
        double t;
        pid_t pid;

        if (pipe (fds) < 0)
            die ("pipe");
        if ((pid = fork ()) < 0)
            die ("fork");
        if (pid == 0) {
            t = fault_touch (p, FAULT_PAGES, pagesize, 2);
            _exit (write (fds[1], &t, sizeof (t)) == sizeof (t) ? 0 : 1);
        }
        (void)close (fds[1]);
        if (read (fds[0], &t, sizeof (t)) != sizeof (t)
            || waitpid (pid, &status, 0) < 0 || status != 0) {
            fprintf (stderr, "floors: the fault child failed\n");
            exit (1);
        }
        (void)close (fds[0]);
        spent += t;
        n += FAULT_PAGES;
    } while (monotime () - t0 < seconds / 3);
    (void)munmap (p, len);
    printf ("fault_cow: %.2f us\n", spent / n * 1e6);

    /* the minor faults of one /bin/true launch, from this small process */
    if (getrusage (RUSAGE_CHILDREN, &ru0) < 0)
        die ("getrusage");
    t0 = monotime ();
    do {
        spawn_true ();
        nlaunch++;
    } while (monotime () - t0 < seconds / 3);
    if (getrusage (RUSAGE_CHILDREN, &ru1) < 0)
        die ("getrusage");
    printf ("spawn_true_faults: %.1f\n",
            (double)(ru1.ru_minflt - ru0.ru_minflt) / nlaunch);
}

static const struct {
    const char *name;
    void (*fn) (void);
} tests[] = {
    {"handoff", test_handoff}, {"zmq", test_zmq},     {"fsync", test_fsync},
    {"spawn", test_spawn},     {"fault", test_fault},
};
#define NTESTS (sizeof (tests) / sizeof (tests[0]))

static void usage (FILE *f)
{
    fprintf (f, "Usage: floors [-t SECONDS] [-d DIR] [-s SIZE] [TEST...]\n"
                "Tests: handoff zmq fsync spawn fault (default: all)\n");
}

int main (int argc, char **argv)
{
    int c;

    while ((c = getopt (argc, argv, "t:d:s:h")) != -1) {
        switch (c) {
            case 't':
                seconds = atof (optarg);
                break;
            case 'd':
                dir = optarg;
                break;
            case 's':
                fsync_size = strtoul (optarg, NULL, 10);
                break;
            case 'h':
                usage (stdout);
                return 0;
            default:
                usage (stderr);
                return 1;
        }
    }
    if (seconds <= 0 || fsync_size == 0) {
        usage (stderr);
        return 1;
    }
    for (int j = optind; j < argc; j++) {
        size_t i = 0;
        while (i < NTESTS && strcmp (argv[j], tests[i].name))
            i++;
        if (i == NTESTS) {
            fprintf (stderr, "floors: unknown test %s\n", argv[j]);
            usage (stderr);
            return 1;
        }
    }
    setvbuf (stdout, NULL, _IOLBF, 0);
    for (size_t i = 0; i < NTESTS; i++) {
        bool run = optind == argc;
        for (int j = optind; j < argc && !run; j++)
            run = !strcmp (argv[j], tests[i].name);
        if (run)
            tests[i].fn ();
    }
    return 0;
}
