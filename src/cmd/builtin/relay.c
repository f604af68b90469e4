/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* relay.c - `flux relay PATH`: the remote end of the ssh:// connector.
 *
 * ssh runs it on the broker's host with its stdin and stdout carrying
 * the connector's stream.  It connects to the broker's socket PATH (also
 * accepted as local://PATH), takes the broker's accept byte, writes its
 * own (0) on stdout, then copies bytes both ways until either side ends.
 * A broker's refusal (a nonzero accept byte) is passed on as it is.
 * The frames pass untouched: to the broker the relay is one local client
 * with the relay's credentials, which are the ssh user's, so RFC 12
 * holds as it would for that user on that host.  Each direction has one
 * 64 KiB buffer; a side is read only while its buffer has room, so a
 * slow reader slows the writer instead of growing memory.
 *
 * The exit code is 0 when stdin ends (the client closed), 1 when the
 * broker's side ends or fails first.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmdutil.h"
#include "libflux/local_connect.h"

static const char usage[]
    = "Usage: flux relay [OPTIONS] PATH\n"
      "Connect to the broker's socket PATH (or local://PATH) and relay the\n"
      "local connector's protocol between it and stdin/stdout.  The ssh://\n"
      "connector runs it on the broker's host; it is not run by hand.\n"
      "  -h, --help       Display this message\n";

const struct builtin builtin_relay = {
    .name = "relay",
    .summary = "Relay messages between stdin/stdout and a local broker",
    .usage = usage,
    .main = cmd_relay,
};

#define RELAY_BUFSIZE 65536

struct pipebuf {
    char data[RELAY_BUFSIZE];
    size_t off, len; /* unwritten bytes are data[off..len) */
    bool eof;        /* the reading side ended */
};

/* Read from fd into b while it has room: -1 on error, else 0 (eof set
 * at end of file). */
static int fill (struct pipebuf *b, int fd)
{
    ssize_t n;

    if (b->off == b->len)
        b->off = b->len = 0;
    n = read (fd, b->data + b->len, sizeof (b->data) - b->len);
    if (n < 0)
        return (errno == EINTR || errno == EAGAIN) ? 0 : -1;
    if (n == 0)
        b->eof = true;
    b->len += n;
    return 0;
}

static int drain (struct pipebuf *b, int fd)
{
    ssize_t n = write (fd, b->data + b->off, b->len - b->off);

    if (n < 0)
        return (errno == EINTR || errno == EAGAIN) ? 0 : -1;
    b->off += n;
    if (b->off == b->len)
        b->off = b->len = 0;
    return 0;
}

static void set_nonblock (int fd)
{
    int fl = fcntl (fd, F_GETFL);
    if (fl < 0 || fcntl (fd, F_SETFL, fl | O_NONBLOCK) < 0)
        cmd_die ("fcntl: %s", strerror (errno));
}

/* Copy until the client's side (stdin) or the broker's side ends, and
 * what was read before the end is written.  Returns the exit code. */
static int relay (int sock)
{
    static struct pipebuf up, down; /* stdin -> sock, sock -> stdout */

    set_nonblock (STDIN_FILENO);
    set_nonblock (STDOUT_FILENO);
    set_nonblock (sock);
    for (;;) {
        struct pollfd pfd[4] = {{.fd = -1}, {.fd = -1}, {.fd = -1}, {.fd = -1}};
        if (up.eof && up.len == 0)
            return 0;
        if (down.eof && down.len == 0) {
            cmd_warn ("the broker closed the connection");
            return 1;
        }
        if (!up.eof && up.len < sizeof (up.data))
            pfd[0] = (struct pollfd){.fd = STDIN_FILENO, .events = POLLIN};
        if (up.len > up.off)
            pfd[1] = (struct pollfd){.fd = sock, .events = POLLOUT};
        if (!down.eof && down.len < sizeof (down.data))
            pfd[2] = (struct pollfd){.fd = sock, .events = POLLIN};
        if (down.len > down.off)
            pfd[3] = (struct pollfd){.fd = STDOUT_FILENO, .events = POLLOUT};
        if (poll (pfd, 4, -1) < 0) {
            if (errno == EINTR)
                continue;
            cmd_die ("poll: %s", strerror (errno));
        }
        if (pfd[0].revents && fill (&up, STDIN_FILENO) < 0)
            up.eof = true; /* the client is gone: treat as its end */
        if (pfd[1].revents && drain (&up, sock) < 0) {
            cmd_warn ("write to the broker: %s", strerror (errno));
            return 1;
        }
        if (pfd[2].revents && fill (&down, sock) < 0)
            down.eof = true;
        if (pfd[3].revents && drain (&down, STDOUT_FILENO) < 0)
            return 0; /* nobody to tell */
    }
}

int cmd_relay (int argc, char **argv)
{
    const char *path;
    unsigned char ok = 0;
    bool refused = false;
    int sock;

    cmd_getopt_none (argc, argv);
    if (optind != argc - 1)
        cmd_usage_error ("expected one PATH");
    path = argv[optind];
    if (strncmp (path, "local://", 8) == 0)
        path += 8;
    signal (SIGPIPE, SIG_IGN);
    if ((sock = local_connect (path)) < 0)
        cmd_die ("%s: %s", path, strerror (errno));
    if (local_read_accept (sock, &refused) < 0) {
        int e = errno;
        if (refused) { /* the client reads the broker's own answer */
            unsigned char c = (unsigned char)e;
            if (write (STDOUT_FILENO, &c, 1) != 1)
                cmd_warn ("write: %s", strerror (errno));
        }
        cmd_die ("%s: %s", path, strerror (e));
    }
    if (write (STDOUT_FILENO, &ok, 1) != 1)
        cmd_die ("write: %s", strerror (errno));
    return relay (sock);
}
