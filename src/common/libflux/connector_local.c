/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* connector_local.c - framed messages over a stream socket: local://PATH
 * (connect to a broker's unix socket and read its accept byte, retrying
 * while the broker starts; with FLUX_O_EARLY the byte is read as the
 * first of the stream instead) and fd://N (an already connected socket).
 *
 * The fd may be blocking or not (libuv makes it non-blocking once the
 * handle is driven from a reactor), so every read and write copes with
 * EAGAIN by waiting in poll() when the caller asked to block.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdbool.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "connector.h"
#include "local_connect.h"

#define IBUF_INITIAL 65536

struct stream {
    int fd;
    uint8_t *ibuf;
    size_t ioff, ilen, icap; /* unread bytes are ibuf[ioff..ilen) */
    uint8_t *obuf;
    size_t ocap;
    int error;                 /* sticky decode error */
    bool accept_pending;       /* FLUX_O_EARLY: the accept byte is unread */
    bool stamp;                /* fd://: stamp the peer's credentials */
    struct flux_msg_cred peer; /* from SO_PEERCRED */
    pid_t child;               /* ssh://: the ssh process, reaped at close */
};

/* The peer process got EOF when fd was closed: let it exit by itself
 * for up to ~2 s (ssh passes the EOF on and waits for the remote side),
 * then kill it, so closing a handle never hangs and leaves no zombie.
 */
void connector_reap_child (pid_t pid)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = 10 * 1000000L};
    int status, i;

    for (i = 0; i < 200; i++) {
        pid_t rc = waitpid (pid, &status, WNOHANG);
        if (rc == pid || (rc < 0 && errno != EINTR))
            return;
        nanosleep (&ts, NULL);
    }
    kill (pid, SIGKILL);
    while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
        ;
}

static void stream_destroy (void *impl)
{
    struct stream *s = impl;
    if (s) {
        int saved_errno = errno;
        if (s->fd >= 0)
            close (s->fd);
        if (s->child > 0)
            connector_reap_child (s->child);
        free (s->ibuf);
        free (s->obuf);
        free (s);
        errno = saved_errno;
    }
}

static int stream_pollfd (void *impl)
{
    struct stream *s = impl;
    return s->fd;
}

/* True if a whole frame is buffered (or a decode error is pending). */
static int stream_pollevents (void *impl)
{
    struct stream *s = impl;
    size_t avail = s->ilen - s->ioff;
    const uint8_t *p = s->ibuf + s->ioff;
    uint32_t len;

    if (s->error)
        return FLUX_POLLERR | FLUX_POLLOUT;
    if (s->accept_pending) {
        if (avail == 0)
            return FLUX_POLLOUT;
        if (p[0] != 0) /* a refusal: recv() fails at once */
            return FLUX_POLLIN | FLUX_POLLERR | FLUX_POLLOUT;
        avail--;
        p++;
    }
    if (avail >= FLUX_MSG_FRAME_PREFIX) {
        len = (uint32_t)p[4] << 24 | (uint32_t)p[5] << 16 | (uint32_t)p[6] << 8
              | p[7];
        if (avail - FLUX_MSG_FRAME_PREFIX >= len)
            return FLUX_POLLIN | FLUX_POLLOUT;
    }
    return FLUX_POLLOUT;
}

static int wait_fd (int fd, short events)
{
    struct pollfd pfd = {.fd = fd, .events = events};
    if (poll (&pfd, 1, -1) < 0 && errno != EINTR)
        return -1;
    return 0;
}

static int stream_send (void *impl, const flux_msg_t *msg, int flags)
{
    struct stream *s = impl;
    ssize_t size, n;
    size_t done = 0;

    if ((size = flux_msg_frame_size (msg)) < 0)
        return -1;
    if ((size_t)size > s->ocap) {
        uint8_t *nb = realloc (s->obuf, size);
        if (!nb)
            return -1;
        s->obuf = nb;
        s->ocap = size;
    }
    if (flux_msg_frame_encode (msg, s->obuf, s->ocap) < 0)
        return -1;
    while (done < (size_t)size) {
        n = send (s->fd, s->obuf + done, size - done, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                /* never leave half a frame on the wire */
                if ((flags & FLUX_O_NONBLOCK) && done == 0) {
                    errno = EWOULDBLOCK;
                    return -1;
                }
                if (wait_fd (s->fd, POLLOUT) < 0)
                    return -1;
                continue;
            }
            return -1;
        }
        done += n;
    }
    return 0;
}

/* Make room for at least 'need' unread bytes plus some slack. */
static int ibuf_reserve (struct stream *s, size_t need)
{
    size_t unread = s->ilen - s->ioff;

    if (s->ioff > 0 && (s->icap - s->ilen < 4096 || s->icap < need)) {
        memmove (s->ibuf, s->ibuf + s->ioff, unread);
        s->ilen = unread;
        s->ioff = 0;
    }
    if (s->icap < need || s->icap - s->ilen < 1024) {
        size_t ncap = s->icap ? s->icap : IBUF_INITIAL;
        uint8_t *nb;
        while (ncap < need || ncap - s->ilen < 1024)
            ncap *= 2;
        if (!(nb = realloc (s->ibuf, ncap)))
            return -1;
        s->ibuf = nb;
        s->icap = ncap;
    }
    return 0;
}

/* RFC 12 for a point-to-point link: a peer running as our own uid is the
 * owner and may preset credentials (only unset fields are filled); any
 * other peer is a guest and always gets its own credentials.
 */
static void stamp_cred (struct stream *s, flux_msg_t *msg)
{
    struct flux_msg_cred cred;

    if (flux_msg_get_cred (msg, &cred) < 0)
        return;
    if (s->peer.rolemask & FLUX_ROLE_OWNER) {
        if (cred.userid == FLUX_USERID_UNKNOWN)
            cred.userid = s->peer.userid;
        if (cred.rolemask == FLUX_ROLE_NONE)
            cred.rolemask = s->peer.rolemask;
    }
    else
        cred = s->peer;
    (void)flux_msg_set_cred (msg, cred);
}

static int get_peer_cred (int fd, struct flux_msg_cred *cred)
{
    struct ucred uc;
    socklen_t len = sizeof (uc);

    if (getsockopt (fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) < 0)
        return -1;
    cred->userid = uc.uid;
    cred->rolemask = (uc.uid == getuid () ? FLUX_ROLE_OWNER : FLUX_ROLE_USER)
                     | FLUX_ROLE_LOCAL;
    return 0;
}

static flux_msg_t *stream_recv (void *impl, int flags)
{
    struct stream *s = impl;

    for (;;) {
        flux_msg_t *msg = NULL;
        size_t need = FLUX_MSG_FRAME_PREFIX;
        ssize_t n;

        if (s->error) {
            errno = s->error;
            return NULL;
        }
        if (s->accept_pending && s->ilen > s->ioff) {
            uint8_t c = s->ibuf[s->ioff++];
            s->accept_pending = false;
            if (c != 0) { /* refused: the byte is the broker's errno */
                s->error = c;
                continue;
            }
            if (s->ioff == s->ilen)
                s->ioff = s->ilen = 0;
        }
        n = flux_msg_frame_decode (s->ibuf + s->ioff, s->ilen - s->ioff, &msg,
                                   &need);
        if (n > 0) {
            s->ioff += n;
            if (s->ioff == s->ilen)
                s->ioff = s->ilen = 0;
            if (s->stamp)
                stamp_cred (s, msg);
            return msg;
        }
        if (n < 0) {
            s->error = EPROTO;
            continue;
        }
        if (ibuf_reserve (s, need) < 0)
            return NULL;
        n = recv (s->fd, s->ibuf + s->ilen, s->icap - s->ilen,
                  (flags & FLUX_O_NONBLOCK) ? MSG_DONTWAIT : 0);
        if (n == 0) {
            s->error = ECONNRESET;
            continue;
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                if (flags & FLUX_O_NONBLOCK) {
                    errno = EWOULDBLOCK;
                    return NULL;
                }
                if (wait_fd (s->fd, POLLIN) < 0)
                    return NULL;
                continue;
            }
            return NULL;
        }
        s->ilen += n;
    }
}

static const struct flux_handle_ops stream_ops = {
    .pollfd = stream_pollfd,
    .pollevents = stream_pollevents,
    .send = stream_send,
    .recv = stream_recv,
    .impl_destroy = stream_destroy,
};

/* early: the broker's accept byte is still to be read (FLUX_O_EARLY) */
static flux_t *stream_handle (int fd, int flags, bool stamp, bool early,
                              pid_t child)
{
    struct stream *s;

    if (!(s = calloc (1, sizeof (*s)))) {
        int saved_errno = errno;
        close (fd);
        if (child > 0)
            connector_reap_child (child);
        errno = saved_errno;
        return NULL;
    }
    s->fd = fd; /* from here the handle (or its failure path) closes fd */
    s->child = child;
    s->accept_pending = early;
    if (stamp) {
        if (get_peer_cred (fd, &s->peer) < 0) {
            stream_destroy (s);
            return NULL;
        }
        s->stamp = true;
    }
    return flux_handle_create (s, &stream_ops, flags);
}

flux_t *connector_fd_open (const char *arg, int flags, flux_error_t *error)
{
    char *end;
    long fd;
    flux_t *h;

    errno = 0;
    fd = strtol (arg, &end, 10);
    if (errno != 0 || end == arg || *end != '\0' || fd < 0 || fd > 65535) {
        errprintf (error, "fd://%s: expected a file descriptor number", arg);
        errno = EINVAL;
        return NULL;
    }
    if (!(h = stream_handle ((int)fd, flags, true, false, 0)))
        errprintf (error, "fd://%s: %s", arg, strerror (errno));
    return h;
}

flux_t *connector_stream_open (int fd, pid_t child, int flags)
{
    return stream_handle (fd, flags, false, false, child);
}

static int retry_count (void)
{
    const char *s = getenv ("FLUX_LOCAL_CONNECTOR_RETRY_COUNT");
    char *end;
    long n;

    if (!s)
        return 5;
    n = strtol (s, &end, 10);
    return (*end || n < 0 || n > 1000) ? 5 : (int)n;
}

flux_t *connector_local_open (const char *path, int flags, flux_error_t *error)
{
    int retries = retry_count ();
    long delay_ms = 16;
    int fd;
    flux_t *h;

    if (!*path) {
        errprintf (error, "local:// needs a socket path");
        errno = EINVAL;
        return NULL;
    }
    while ((fd = local_connect (path)) < 0) {
        struct timespec ts;
        if ((errno != ENOENT && errno != ECONNREFUSED) || retries-- <= 0) {
            errprintf (error, "cannot connect to %s: %s", path,
                       strerror (errno));
            return NULL;
        }
        ts.tv_sec = delay_ms / 1000;
        ts.tv_nsec = (delay_ms % 1000) * 1000000L;
        nanosleep (&ts, NULL);
        delay_ms = delay_ms * 2 > 2000 ? 2000 : delay_ms * 2;
    }
    if (!(flags & FLUX_O_EARLY) && local_read_accept (fd, NULL) < 0) {
        int saved_errno = errno;
        errprintf (error, "%s: connection refused by broker: %s", path,
                   strerror (errno));
        close (fd);
        errno = saved_errno;
        return NULL;
    }
    if (!(h = stream_handle (fd, flags, false, (flags & FLUX_O_EARLY) != 0, 0)))
        errprintf (error, "%s: %s", path, strerror (errno));
    return h;
}
