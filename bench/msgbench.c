/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* msgbench - messaging benchmark for libflux.
 *
 * Measures, in one run on this machine:
 *  1. a bare unix-socket ping-pong between two processes (write N bytes,
 *     read N bytes back), N = the size of one framed echo request: the
 *     machine's floor for a round trip;
 *  2. RPC round trips per second between two processes over the local
 *     connector: a client on local://PATH calling an echo service in a
 *     server process that accepts the connection, sends the accept byte
 *     and serves it with libflux (fd:// handle driven by its reactor);
 *  3. message encode+decode per second (framed form, a request with two
 *     routes, a topic and a ~100 byte JSON payload).
 * It prints each figure and the ratio RPC RTT / bare RTT (target <= 1.5).
 *
 * Usage: msgbench [-t SECONDS] (time per measurement, default 2)
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libflux/flux.h"
#include "libutil/monotime.h"

static double seconds = 2.0;

static void die (const char *what)
{
    fprintf (stderr, "msgbench: %s: %s\n", what, strerror (errno));
    exit (1);
}

static int read_full (int fd, void *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = read (fd, (char *)buf + done, len - done);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            return -1;
        }
        done += n;
    }
    return 0;
}

static int write_full (int fd, const void *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = write (fd, (const char *)buf + done, len - done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        done += n;
    }
    return 0;
}

/* 1. bare ping-pong */
static double bench_bare (size_t size)
{
    int sv[2];
    pid_t pid;
    char buf[4096];
    long count = 0;
    double t0, elapsed;

    if (socketpair (AF_UNIX, SOCK_STREAM, 0, sv) < 0)
        die ("socketpair");
    if ((pid = fork ()) == 0) {
        close (sv[0]);
        while (read_full (sv[1], buf, size) == 0)
            if (write_full (sv[1], buf, size) < 0)
                break;
        _exit (0);
    }
    close (sv[1]);
    memset (buf, 'x', size);
    t0 = monotime ();
    do {
        int i;
        for (i = 0; i < 1000; i++) {
            if (write_full (sv[0], buf, size) < 0
                || read_full (sv[0], buf, size) < 0)
                die ("ping-pong");
        }
        count += 1000;
    } while ((elapsed = monotime () - t0) < seconds);
    close (sv[0]);
    waitpid (pid, NULL, 0);
    return elapsed / count;
}

/* 2. RPC echo over local:// */
static void echo_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    const void *data;
    size_t len;
    if (flux_request_decode_raw (msg, NULL, &data, &len) < 0)
        flux_respond_error (h, msg, errno, NULL);
    else
        flux_respond_raw (h, msg, data, len);
}

static void serve (int lfd)
{
    static const struct flux_msg_handler_spec htab[] = {
        {FLUX_MSGTYPE_REQUEST, "echo", echo_cb, 0},
        FLUX_MSGHANDLER_TABLE_END,
    };
    flux_msg_handler_t **handlers;
    char uri[32];
    unsigned char zero = 0;
    int fd;
    flux_t *h;

    if ((fd = accept (lfd, NULL, NULL)) < 0)
        die ("accept");
    close (lfd);
    if (write_full (fd, &zero, 1) < 0)
        die ("accept byte");
    snprintf (uri, sizeof (uri), "fd://%d", fd);
    if (!(h = flux_open (uri, 0))
        || flux_msg_handler_addvec (h, htab, NULL, &handlers) < 0)
        die ("server handle");
    /* returns when the client disconnects: the handle stops watching */
    flux_reactor_run (flux_get_reactor (h), 0);
    flux_msg_handler_delvec (handlers);
    flux_close (h);
    _exit (0);
}

static double bench_rpc (size_t *framesize)
{
    char dir[] = "/tmp/msgbench.XXXXXX";
    char path[128], uri[160];
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    int lfd;
    pid_t pid;
    flux_t *h;
    long count = 0;
    double t0, elapsed;
    const char payload[] = "0123456789abcdef0123456789abcdef";
    flux_msg_t *msg;

    if (!mkdtemp (dir))
        die ("mkdtemp");
    snprintf (path, sizeof (path), "%s/local", dir);
    strcpy (sun.sun_path, path);
    if ((lfd = socket (AF_UNIX, SOCK_STREAM, 0)) < 0
        || bind (lfd, (struct sockaddr *)&sun, sizeof (sun)) < 0
        || listen (lfd, 1) < 0)
        die ("listen");
    if ((pid = fork ()) == 0)
        serve (lfd);
    close (lfd);
    snprintf (uri, sizeof (uri), "local://%s", path);
    if (!(h = flux_open (uri, 0)))
        die ("flux_open");

    msg = flux_request_encode_raw ("echo", payload, sizeof (payload));
    flux_msg_set_matchtag (msg, 1);
    *framesize = flux_msg_frame_size (msg);
    flux_msg_destroy (msg);

    t0 = monotime ();
    do {
        int i;
        for (i = 0; i < 1000; i++) {
            flux_future_t *f;
            const void *data;
            size_t len;
            if (!(f = flux_rpc_raw (h, "echo", payload, sizeof (payload),
                                    FLUX_NODEID_ANY, 0))
                || flux_rpc_get_raw (f, &data, &len) < 0
                || len != sizeof (payload))
                die ("rpc");
            flux_future_destroy (f);
        }
        count += 1000;
    } while ((elapsed = monotime () - t0) < seconds);
    flux_close (h);
    waitpid (pid, NULL, 0);
    unlink (path);
    rmdir (dir);
    return elapsed / count;
}

/* 3. encode + decode */
static double bench_codec (void)
{
    flux_msg_t *msg, *out;
    uint8_t buf[4096];
    ssize_t n;
    long count = 0;
    double t0, elapsed;

    if (!(msg = flux_request_encode ("kvs.lookup", NULL))
        || flux_msg_pack (msg, "{s:s s:i s:s s:[i,i,i]}", "key",
                          "job.0000.0004.b200.0000.eventlog", "flags", 0,
                          "namespace", "primary", "ranks", 1, 2, 3)
               < 0
        || flux_msg_route_push (msg, "b9d32a68-4a6f-4bde-9b38-2e4f1c35a1f0") < 0
        || flux_msg_route_push (msg, "3") < 0)
        die ("build message");
    flux_msg_set_matchtag (msg, 42);
    t0 = monotime ();
    do {
        int i;
        for (i = 0; i < 10000; i++) {
            if ((n = flux_msg_frame_encode (msg, buf, sizeof (buf))) < 0
                || flux_msg_frame_decode (buf, n, &out, NULL) != n)
                die ("codec");
            flux_msg_destroy (out);
        }
        count += 10000;
    } while ((elapsed = monotime () - t0) < seconds);
    flux_msg_destroy (msg);
    return count / elapsed;
}

int main (int argc, char *argv[])
{
    int c;
    size_t framesize = 0;
    double bare, rpc, codec;

    while ((c = getopt (argc, argv, "t:h")) != -1) {
        switch (c) {
            case 't':
                seconds = strtod (optarg, NULL);
                if (seconds <= 0)
                    seconds = 2.0;
                break;
            default:
                fprintf (stderr, "Usage: msgbench [-t SECONDS]\n"
                                 "Measure unix-socket ping-pong, libflux "
                                 "RPC round trips and message codec speed.\n");
                return c == 'h' ? 0 : 1;
        }
    }
    signal (SIGPIPE, SIG_IGN);
    rpc = bench_rpc (&framesize);
    bare = bench_bare (framesize);
    codec = bench_codec ();
    printf ("bare unix-socket ping-pong (%zu bytes): %.1f us RTT, %.0f/s\n",
            framesize, bare * 1e6, 1 / bare);
    printf ("libflux RPC echo over local://:       %.1f us RTT, %.0f/s\n",
            rpc * 1e6, 1 / rpc);
    printf ("RPC RTT / bare RTT: %.2f (target <= 1.5)\n", rpc / bare);
    printf ("message encode+decode: %.0f/s\n", codec);
    return 0;
}
