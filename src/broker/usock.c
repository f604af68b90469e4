/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* usock.c - the broker's local connector server: accept unix socket
 * clients, classify them by SO_PEERCRED, and move framed messages in and
 * out of them from a libuv loop without ever blocking.
 *
 * Sockets are driven by uv_poll on raw non-blocking fds so that each read
 * batch costs one recv() and each send one send().  Reads and small sends
 * go through per-server scratch buffers; a client holds buffer memory only
 * while it has a partial frame in or unsent bytes out.  Closed clients are
 * freed from their uv_close callback, which is the "safe point".
 */
#include "config.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "libflux/list.h"
#include "methods.h"
#include "usock.h"

#define RBUF_SIZE (256 * 1024) /* shared read buffer */
#define WBUF_SIZE (256 * 1024) /* shared encode buffer for small sends */
#define UBUF_MIN (16 * 1024)   /* first size of a per-client buffer */
#define UBUF_KEEP (64 * 1024)  /* an empty buffer larger than this is freed */
#define ACCEPT_BATCH 64        /* accepts per listen callback */
#define BACKOFF_MS 100         /* accept pause when out of fds/memory */

struct ubuf {
    uint8_t *data;
    size_t off, len, cap; /* bytes in use are data[off..len) */
};

struct usock_client {
    struct usock_server *server;
    struct list_node node;  /* on server->clients, then server->closing */
    struct list_node ready; /* on server->ready while frames wait */
    int fd;
    uv_poll_t w;
    int events;  /* events w is started with (0: stopped) */
    bool paused; /* complete frames buffered: reading paused */
    bool closing;
    bool released; /* disconnected callback and aux destroy done */
    struct flux_msg_cred cred;
    char uuid[37];
    struct ubuf in;
    struct ubuf out;
    size_t need; /* bytes the partial frame in 'in' needs in all */
    void *aux;
    usock_free_f aux_destroy;
};

struct usock_server {
    uv_loop_t *loop;
    int fd;
    char *path;
    dev_t dev;
    ino_t ino;
    struct usock_policy policy;
    struct usock_ops ops;
    void *arg;
    uv_poll_t listen_w;
    uv_timer_t backoff_w;
    uv_idle_t idle_w;
    struct list_node clients;
    struct list_node closing;
    struct list_node ready;
    size_t count;
    int handles; /* initialized uv handles not yet closed */
    bool destroyed;
    uint8_t *rbuf;
    uint8_t *wbuf;
};

static void server_log (struct usock_server *s, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static void server_log (struct usock_server *s, const char *fmt, ...)
{
    char text[256];
    va_list ap;
    int saved_errno = errno;

    va_start (ap, fmt);
    vsnprintf (text, sizeof (text), fmt, ap);
    va_end (ap);
    if (s->ops.log)
        s->ops.log (text, s->arg);
    else
        fprintf (stderr, "usock: %s\n", text);
    errno = saved_errno;
}

/* Buffers */

static size_t ubuf_used (const struct ubuf *b)
{
    return b->len - b->off;
}

/* Make room for 'room' more bytes after data[len]. */
static int ubuf_reserve (struct ubuf *b, size_t room)
{
    size_t used = ubuf_used (b);
    size_t ncap;
    uint8_t *nd;

    if (b->cap - b->len >= room)
        return 0;
    /* Slide down only when the dead prefix is at least as large as what
     * moves, so the copying stays proportional to the bytes consumed. */
    if (b->off > 0 && b->off >= used) {
        memmove (b->data, b->data + b->off, used);
        b->off = 0;
        b->len = used;
        if (b->cap - b->len >= room)
            return 0;
    }
    ncap = b->cap ? b->cap : UBUF_MIN;
    while (ncap - b->len < room)
        ncap *= 2;
    if (!(nd = realloc (b->data, ncap)))
        return -1;
    b->data = nd;
    b->cap = ncap;
    return 0;
}

static void ubuf_consume (struct ubuf *b, size_t n)
{
    b->off += n;
    if (b->off == b->len) {
        b->off = b->len = 0;
        if (b->cap > UBUF_KEEP) {
            free (b->data);
            b->data = NULL;
            b->cap = 0;
        }
    }
}

/* Clients */

static void server_free (struct usock_server *s);
static void client_poll_cb (uv_poll_t *w, int status, int events);
static void server_idle_cb (uv_idle_t *w);
static void server_listen_cb (uv_poll_t *w, int status, int events);

static void handle_closed (struct usock_server *s)
{
    if (--s->handles == 0 && s->destroyed)
        server_free (s);
}

/* Start or stop the poll watcher to match what the client waits for. */
static void client_update_poll (struct usock_client *c)
{
    int events = 0;

    if (c->closing)
        return;
    if (!c->paused)
        events |= UV_READABLE;
    if (ubuf_used (&c->out) > 0)
        events |= UV_WRITABLE;
    if (events == c->events)
        return;
    if (events == 0)
        uv_poll_stop (&c->w);
    else if (uv_poll_start (&c->w, events, client_poll_cb) < 0) {
        server_log (c->server, "client %s: cannot watch its socket", c->uuid);
        usock_client_disconnect (c);
        return;
    }
    c->events = events;
}

/* Run the disconnected callback and drop the aux value, once. */
static void client_release (struct usock_client *c)
{
    struct usock_server *s = c->server;

    if (c->released)
        return;
    c->released = true;
    if (s->ops.disconnected)
        s->ops.disconnected (c, s->arg);
    if (c->aux_destroy)
        c->aux_destroy (c->aux);
    c->aux = NULL;
    c->aux_destroy = NULL;
}

static void client_close_cb (uv_handle_t *h)
{
    struct usock_client *c = h->data;
    struct usock_server *s = c->server;

    client_release (c);
    list_del (&c->node);
    free (c->in.data);
    free (c->out.data);
    free (c);
    handle_closed (s);
}

void usock_client_disconnect (struct usock_client *c)
{
    struct usock_server *s;

    if (!c || c->closing)
        return;
    s = c->server;
    c->closing = true;
    list_del (&c->ready);
    list_del (&c->node);
    list_add_tail (&s->closing, &c->node);
    s->count--;
    /* uv_close takes the fd out of the poll set now, so closing the fd
     * right away is safe and lets the peer see EOF at once. */
    uv_close ((uv_handle_t *)&c->w, client_close_cb);
    close (c->fd);
    c->fd = -1;
}

/* PROTOCOLS.md 1.2: owners may preset credentials, guests may not. */
static void client_stamp (struct usock_client *c, flux_msg_t *msg)
{
    struct flux_msg_cred cred = c->cred;

    if ((c->cred.rolemask & FLUX_ROLE_OWNER)
        && flux_msg_get_cred (msg, &cred) == 0) {
        if (cred.userid == FLUX_USERID_UNKNOWN)
            cred.userid = c->cred.userid;
        if (cred.rolemask == FLUX_ROLE_NONE)
            cred.rolemask = c->cred.rolemask;
    }
    (void)flux_msg_set_cred (msg, cred);
}

/* Decode and deliver up to USOCK_BATCH frames from buf.  Returns the bytes
 * consumed, or -1 if the client was closed meanwhile.  *more is set when
 * the batch limit stopped it with bytes left over.
 */
static ssize_t client_deliver (struct usock_client *c, const uint8_t *buf,
                               size_t size, bool *more)
{
    struct usock_server *s = c->server;
    size_t off = 0;
    int count = 0;

    *more = false;
    while (off < size) {
        flux_msg_t *msg = NULL;
        size_t need = 0;
        ssize_t n;

        if (count == USOCK_BATCH) {
            *more = true;
            break;
        }
        n = flux_msg_frame_decode (buf + off, size - off, &msg, &need);
        if (n < 0) {
            server_log (s, "client %s (uid %u): bad frame (%s), disconnecting",
                        c->uuid, c->cred.userid, strerror (errno));
            usock_client_disconnect (c);
            return -1;
        }
        if (n == 0) {
            c->need = need;
            break;
        }
        off += n;
        count++;
        client_stamp (c, msg);
        s->ops.message (c, msg, s->arg);
        if (c->closing)
            return -1;
    }
    return off;
}

static void server_idle_start (struct usock_server *s)
{
    if (!uv_is_active ((uv_handle_t *)&s->idle_w))
        uv_idle_start (&s->idle_w, server_idle_cb);
}

/* After a delivery pass: pause reading while whole frames wait. */
static void client_set_paused (struct usock_client *c, bool more)
{
    if (more) {
        if (!list_attached (&c->ready))
            list_add_tail (&c->server->ready, &c->ready);
        server_idle_start (c->server);
    }
    c->paused = more;
    client_update_poll (c);
}

/* Deliver from the client's own buffer. */
static void client_deliver_buffered (struct usock_client *c)
{
    ssize_t n;
    bool more;

    n = client_deliver (c, c->in.data + c->in.off, ubuf_used (&c->in), &more);
    if (n < 0)
        return;
    ubuf_consume (&c->in, n);
    client_set_paused (c, more);
}

static void client_read_error (struct usock_client *c, ssize_t n)
{
    if (n < 0 && errno != ECONNRESET)
        server_log (c->server, "client %s (uid %u): read: %s", c->uuid,
                    c->cred.userid, strerror (errno));
    usock_client_disconnect (c);
}

/* Nothing buffered: read into the shared buffer, keep only a remainder. */
static void client_read_direct (struct usock_client *c)
{
    struct usock_server *s = c->server;
    ssize_t n, done;
    size_t left;
    bool more;

    n = recv (c->fd, s->rbuf, RBUF_SIZE, MSG_DONTWAIT);
    if (n <= 0) {
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        client_read_error (c, n);
        return;
    }
    if ((done = client_deliver (c, s->rbuf, n, &more)) < 0)
        return;
    if ((left = n - done) > 0) {
        if (ubuf_reserve (&c->in, left) < 0) {
            server_log (s, "client %s: out of memory, disconnecting", c->uuid);
            usock_client_disconnect (c);
            return;
        }
        memcpy (c->in.data + c->in.len, s->rbuf + done, left);
        c->in.len += left;
    }
    client_set_paused (c, more);
}

/* A partial frame is buffered: read the rest into the client's buffer,
 * growing it at most twofold per read (a frame's claimed length costs
 * memory only as its bytes actually arrive).
 */
static void client_read (struct usock_client *c)
{
    struct ubuf *b = &c->in;
    size_t used = ubuf_used (b);
    size_t want;
    ssize_t n;

    if (used == 0) {
        client_read_direct (c);
        return;
    }
    want = c->need > used ? c->need - used : UBUF_MIN;
    if (want > b->cap && b->cap >= UBUF_MIN)
        want = b->cap;
    if (ubuf_reserve (b, want) < 0) {
        server_log (c->server, "client %s: out of memory, disconnecting",
                    c->uuid);
        usock_client_disconnect (c);
        return;
    }
    n = recv (c->fd, b->data + b->len, b->cap - b->len, MSG_DONTWAIT);
    if (n <= 0) {
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        client_read_error (c, n);
        return;
    }
    b->len += n;
    client_deliver_buffered (c);
}

/* Write what the socket takes of the send queue.  -1 if c was closed. */
static int client_flush (struct usock_client *c)
{
    ssize_t n;

    n = send (c->fd, c->out.data + c->out.off, ubuf_used (&c->out),
              MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
        if (errno == EAGAIN || errno == EINTR)
            return 0;
        if (errno != EPIPE && errno != ECONNRESET)
            server_log (c->server, "client %s (uid %u): write: %s", c->uuid,
                        c->cred.userid, strerror (errno));
        usock_client_disconnect (c);
        return -1;
    }
    ubuf_consume (&c->out, n);
    client_update_poll (c);
    return 0;
}

static void client_poll_cb (uv_poll_t *w, int status, int events)
{
    struct usock_client *c = w->data;

    if (status < 0) {
        server_log (c->server, "client %s: poll: %s", c->uuid,
                    uv_strerror (status));
        usock_client_disconnect (c);
        return;
    }
    if ((events & UV_WRITABLE) && client_flush (c) < 0)
        return;
    if ((events & UV_READABLE) && !c->paused)
        client_read (c);
}

/* Continue clients whose last batch stopped at the limit, one batch each
 * per loop turn.  A client is taken off the list before its callbacks
 * run, so they may disconnect any client (or destroy the server).
 */
static void server_idle_cb (uv_idle_t *w)
{
    struct usock_server *s = w->data;
    struct list_node turn;

    list_move_all (&turn, &s->ready);
    while (!list_empty (&turn)) {
        struct usock_client *c;
        c = list_entry (turn.next, struct usock_client, ready);
        list_del (&c->ready);
        client_deliver_buffered (c);
        if (s->destroyed)
            return;
    }
    if (list_empty (&s->ready))
        uv_idle_stop (&s->idle_w);
}

/* Bytes wait for writability: queue behind them (no syscall). */
static int client_enqueue (struct usock_client *c, const flux_msg_t *msg,
                           size_t size)
{
    struct usock_server *s = c->server;
    struct ubuf *b = &c->out;
    size_t total = ubuf_used (b) + size;

    if (total > s->policy.max_sendq_bytes) {
        server_log (s,
                    "client %s (uid %u): %zu bytes unread, over the %zu "
                    "byte send queue limit: disconnecting",
                    c->uuid, c->cred.userid, total, s->policy.max_sendq_bytes);
        usock_client_disconnect (c);
        errno = EPIPE;
        return -1;
    }
    if (ubuf_reserve (b, size) < 0)
        return -1;
    (void)flux_msg_frame_encode (msg, b->data + b->len, size);
    b->len += size;
    return 0;
}

/* Nothing waits: encode (small frames into the shared buffer), write what
 * the socket takes and queue the rest.
 */
static int client_send_now (struct usock_client *c, const flux_msg_t *msg,
                            size_t size)
{
    struct usock_server *s = c->server;
    struct ubuf *b = &c->out;
    bool shared = size <= WBUF_SIZE;
    uint8_t *buf;
    ssize_t n;

    if (!shared && ubuf_reserve (b, size) < 0)
        return -1;
    buf = shared ? s->wbuf : b->data + b->len;
    (void)flux_msg_frame_encode (msg, buf, size);
    n = send (c->fd, buf, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
        if (errno != EAGAIN && errno != EINTR) {
            usock_client_disconnect (c);
            errno = EPIPE;
            return -1;
        }
        n = 0;
    }
    if (shared && (size_t)n < size) {
        if (ubuf_reserve (b, size - n) < 0) {
            /* part of a frame is on the wire: the stream is lost */
            server_log (s, "client %s: out of memory, disconnecting", c->uuid);
            usock_client_disconnect (c);
            errno = ENOMEM;
            return -1;
        }
        memcpy (b->data + b->len, buf + n, size - n);
        b->len += size - n;
    }
    else if (!shared) {
        b->len += size;
        ubuf_consume (b, n); /* frees a large buffer if all went out */
    }
    client_update_poll (c);
    return 0;
}

int usock_client_send (struct usock_client *c, const flux_msg_t *msg)
{
    ssize_t size;

    if (!c || !msg) {
        errno = EINVAL;
        return -1;
    }
    if (c->closing) {
        errno = EPIPE;
        return -1;
    }
    if ((size = flux_msg_frame_size (msg)) < 0)
        return -1;
    if (ubuf_used (&c->out) > 0)
        return client_enqueue (c, msg, size);
    return client_send_now (c, msg, size);
}

const char *usock_client_uuid (struct usock_client *c)
{
    return c ? c->uuid : NULL;
}

struct flux_msg_cred usock_client_cred (struct usock_client *c)
{
    struct flux_msg_cred none = {FLUX_USERID_UNKNOWN, FLUX_ROLE_NONE};
    return c ? c->cred : none;
}

void usock_client_aux_set (struct usock_client *c, void *val,
                           usock_free_f destroy)
{
    if (!c)
        return;
    if (c->aux_destroy && c->aux != val)
        c->aux_destroy (c->aux);
    c->aux = val;
    c->aux_destroy = destroy;
}

void *usock_client_aux_get (struct usock_client *c)
{
    return c ? c->aux : NULL;
}

/* Accepting */

/* PROTOCOLS.md 1.2 role assignment; 0 means refuse. */
static uint32_t policy_roles (const struct usock_policy *p, uint32_t uid)
{
    if (uid == p->owner || (uid == 0 && p->allow_root_owner))
        return FLUX_ROLE_OWNER | FLUX_ROLE_LOCAL;
    if (p->allow_guest_user)
        return (FLUX_ROLE_USER | p->guest_roles | FLUX_ROLE_LOCAL)
               & ~(uint32_t)FLUX_ROLE_OWNER;
    return FLUX_ROLE_NONE;
}

static void refuse (struct usock_server *s, int fd, uint32_t uid)
{
    uint8_t byte = EPERM;

    server_log (s, "refused connection from uid %u: no role", uid);
    (void)send (fd, &byte, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    close (fd);
}

static struct usock_client *client_create (struct usock_server *s, int fd,
                                           struct flux_msg_cred cred)
{
    struct usock_client *c;

    if (!(c = calloc (1, sizeof (*c))))
        return NULL;
    if (method_uuid (c->uuid, sizeof (c->uuid)) < 0
        || uv_poll_init (s->loop, &c->w, fd) < 0) {
        free (c);
        return NULL;
    }
    s->handles++;
    c->w.data = c;
    c->server = s;
    c->fd = fd;
    c->cred = cred;
    list_init (&c->ready);
    list_add_tail (&s->clients, &c->node);
    s->count++;
    return c;
}

static void server_accept (struct usock_server *s, int fd)
{
    struct ucred uc;
    socklen_t len = sizeof (uc);
    struct flux_msg_cred cred;
    struct usock_client *c;
    uint8_t byte = 0;

    if (getsockopt (fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) < 0) {
        server_log (s, "SO_PEERCRED: %s", strerror (errno));
        close (fd);
        return;
    }
    cred.userid = uc.uid;
    if ((cred.rolemask = policy_roles (&s->policy, uc.uid)) == 0) {
        refuse (s, fd, uc.uid);
        return;
    }
    if (!(c = client_create (s, fd, cred))) {
        server_log (s, "uid %u: cannot set up client: %s", uc.uid,
                    strerror (errno));
        close (fd);
        return;
    }
    c->released = true; /* no disconnected callback before connected */
    /* A fresh socket always takes one byte; failure means the peer left. */
    if (send (fd, &byte, 1, MSG_NOSIGNAL | MSG_DONTWAIT) != 1) {
        usock_client_disconnect (c);
        return;
    }
    client_update_poll (c);
    if (c->closing)
        return;
    c->released = false;
    if (s->ops.connected)
        s->ops.connected (c, s->arg);
}

static void server_backoff_cb (uv_timer_t *w)
{
    struct usock_server *s = w->data;
    uv_poll_start (&s->listen_w, UV_READABLE, server_listen_cb);
}

static void server_pause_accept (struct usock_server *s, const char *why)
{
    server_log (s, "accept: %s: pausing %d ms", why, BACKOFF_MS);
    uv_poll_stop (&s->listen_w);
    uv_timer_start (&s->backoff_w, server_backoff_cb, BACKOFF_MS, 0);
}

static void server_listen_cb (uv_poll_t *w, int status, int events)
{
    struct usock_server *s = w->data;

    if (status < 0) {
        server_pause_accept (s, uv_strerror (status));
        return;
    }
    for (int i = 0; i < ACCEPT_BATCH && !s->destroyed; i++) {
        int fd = accept4 (s->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                server_pause_accept (s, strerror (errno));
            return;
        }
        server_accept (s, fd);
    }
}

/* Server */

static void server_handle_close_cb (uv_handle_t *h)
{
    handle_closed (h->data);
}

static void server_free (struct usock_server *s)
{
    int saved_errno = errno;

    if (s->fd >= 0)
        close (s->fd);
    free (s->path);
    free (s->rbuf);
    free (s->wbuf);
    free (s);
    errno = saved_errno;
}

/* Bind a listening socket at path, replacing a stale socket. */
static int listen_socket (struct usock_server *s, const char *path,
                          flux_error_t *error)
{
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    struct stat st;

    if (strlen (path) >= sizeof (sun.sun_path)) {
        errno = ENAMETOOLONG;
        return errprintf (error, "socket path too long: %s", path);
    }
    strcpy (sun.sun_path, path);
    if (lstat (path, &st) == 0) {
        if (!S_ISSOCK (st.st_mode)) {
            errno = EEXIST;
            return errprintf (error, "%s: exists and is not a socket", path);
        }
        if (unlink (path) < 0)
            return errprintf (error, "unlink %s: %s", path, strerror (errno));
    }
    if ((s->fd
         = socket (AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0))
        < 0)
        return errprintf (error, "socket: %s", strerror (errno));
    if (bind (s->fd, (struct sockaddr *)&sun, sizeof (sun)) < 0)
        return errprintf (error, "bind %s: %s", path, strerror (errno));
    /* the least mode that works: the owner only (root passes anyway), or
     * anyone when guests are allowed (SO_PEERCRED decides then) */
    if (chmod (path, s->policy.allow_guest_user ? 0666 : 0600) < 0
        || lstat (path, &st) < 0) {
        int saved_errno = errno;
        (void)unlink (path);
        errno = saved_errno;
        return errprintf (error, "chmod %s: %s", path, strerror (errno));
    }
    s->dev = st.st_dev;
    s->ino = st.st_ino;
    if (listen (s->fd, SOMAXCONN) < 0) {
        int saved_errno = errno;
        (void)unlink (path);
        errno = saved_errno;
        return errprintf (error, "listen %s: %s", path, strerror (errno));
    }
    return 0;
}

struct usock_server *usock_server_create (uv_loop_t *loop, const char *path,
                                          const struct usock_policy *policy,
                                          const struct usock_ops *ops,
                                          void *arg, flux_error_t *error)
{
    struct usock_server *s;
    int e;

    if (!loop || !path || !*path || !policy || !ops || !ops->message) {
        errno = EINVAL;
        errprintf (error, "usock_server_create: invalid argument");
        return NULL;
    }
    if (!(s = calloc (1, sizeof (*s)))) {
        errprintf (error, "out of memory");
        return NULL;
    }
    s->fd = -1;
    s->loop = loop;
    s->policy = *policy;
    if (s->policy.max_sendq_bytes == 0)
        s->policy.max_sendq_bytes = USOCK_SENDQ_DEFAULT;
    s->ops = *ops;
    s->arg = arg;
    list_init (&s->clients);
    list_init (&s->closing);
    list_init (&s->ready);
    if (!(s->path = strdup (path)) || !(s->rbuf = malloc (RBUF_SIZE))
        || !(s->wbuf = malloc (WBUF_SIZE))) {
        errprintf (error, "out of memory");
        goto error;
    }
    if (listen_socket (s, path, error) < 0)
        goto error;
    if ((e = uv_poll_init (loop, &s->listen_w, s->fd)) < 0) {
        (void)unlink (path);
        errno = -e;
        errprintf (error, "%s: cannot watch socket: %s", path, uv_strerror (e));
        goto error;
    }
    uv_timer_init (loop, &s->backoff_w);
    uv_idle_init (loop, &s->idle_w);
    s->listen_w.data = s->backoff_w.data = s->idle_w.data = s;
    s->handles = 3;
    if ((e = uv_poll_start (&s->listen_w, UV_READABLE, server_listen_cb)) < 0) {
        errprintf (error, "%s: cannot watch socket: %s", path, uv_strerror (e));
        usock_server_destroy (s); /* handles exist: free from the loop */
        errno = -e;
        return NULL;
    }
    return s;
error:
    server_free (s);
    return NULL;
}

void usock_server_destroy (struct usock_server *s)
{
    struct list_node *pos, *tmp;
    struct stat st;
    int saved_errno;

    if (!s || s->destroyed)
        return;
    saved_errno = errno;
    s->destroyed = true;
    uv_close ((uv_handle_t *)&s->listen_w, server_handle_close_cb);
    uv_close ((uv_handle_t *)&s->backoff_w, server_handle_close_cb);
    uv_close ((uv_handle_t *)&s->idle_w, server_handle_close_cb);
    close (s->fd);
    s->fd = -1;
    /* remove the socket only if nobody replaced it since */
    if (lstat (s->path, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino)
        (void)unlink (s->path);
    while (!list_empty (&s->clients))
        usock_client_disconnect (
            list_entry (s->clients.next, struct usock_client, node));
    /* Callbacks cannot take clients off this list (only close callbacks
     * do), so the lookahead iteration is safe. */
    list_for_each_safe (pos, tmp, &s->closing)
        client_release (list_entry (pos, struct usock_client, node));
    errno = saved_errno;
}

size_t usock_server_client_count (struct usock_server *s)
{
    return s ? s->count : 0;
}
