/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* overlay.c - one broker's ZeroMQ links in the tree overlay, on libuv.
 *
 * Event loop.  Every ZeroMQ socket (ROUTER, DEALER, the ZAP REP socket and
 * one PAIR per socket monitor) is a "zwatch": a uv_poll on its ZMQ_FD.
 * That fd is edge-like: it only says "re-read ZMQ_EVENTS", and any zmq
 * call (a send too) may consume the signal while messages stay queued.
 * So a uv_prepare re-reads ZMQ_EVENTS before the loop blocks and keeps a
 * uv_idle started (the loop then polls without blocking) while any socket
 * has input, and a uv_check drains all sockets after every poll, at most
 * BATCH messages per socket per turn.  No input means no wakeups.
 * Sockets are drained ZAP first, then monitors, then data, so that a
 * disconnect event is seen before a hello on a new connection that
 * reuses the fd number (the monitor queues the event before the old fd
 * is closed).
 *
 * Security.  Each overlay has its own zmq context because a context has
 * exactly one ZAP endpoint (inproc://zeromq.zap.01).  The ROUTER is a
 * CURVE server; its ZAP handler admits only keys given to
 * overlay_authorize() and sets the ZAP user id to that key's rank, which
 * libzmq then attaches ("User-Id") to every frame from the peer.  The
 * DEALER is a CURVE client with routing id = its rank in decimal.
 * ROUTER_HANDOVER is on: a restarted child must get its routing id back
 * even while the ROUTER still holds the old connection's pipe (without
 * handover libzmq parks the new connection as anonymous and, as seen with
 * libzmq 4.3, never delivers its messages: the child could not rejoin).  Every
 * message from a child is checked: the routing id is a direct child, its
 * User-Id is that rank, and it came over the connection that said hello
 * (ZMQ_SRCFD); anything else is refused.  So a peer holding another
 * rank's authorized key that takes over a routing id only gets that rank
 * declared LOST (and what is sent to it meanwhile): brokers of one
 * instance trust each other anyway.
 *
 * Hello (control messages, types in overlay.h).  connect() queues
 * HELLO(status = OVERLAY_PROTOCOL_VERSION).  The parent checks the routing
 * id is a direct child, its User-Id matches, and the version; it answers
 * WELCOME(version) and marks the child ONLINE, or DISCONNECT(reason).  The
 * child goes ONLINE on WELCOME and LOST on DISCONNECT.  Until ONLINE, the
 * parent answers anything else from that rank with DISCONNECT(NOTONLINE),
 * which is how a child the parent dropped learns it must start over.
 *
 * Wire rule for the ROUTER (frames are [identity][RFC 3 parts]): the
 * parts are decoded without the identity; if the message has the ROUTE
 * flag (requests, responses) the identity (= rank string) is then pushed
 * as the newest hop, otherwise (events, control) it is dropped.  This is
 * exactly what decoding the identity as a route frame would give for
 * routed messages, and fails closed for the others.  Sending to a child
 * prepends its rank string as identity frame; the caller's message is
 * only read (flux_msg_to_parts).
 *
 * Loss detection.
 *  - Child side connection drops: a monitor on the ROUTER reports
 *    DISCONNECTED with the connection's fd; the fd of each child's
 *    connection is recorded at hello (ZMQ_SRCFD of the hello frame).
 *  - Dead hosts / half-open TCP: ZMQ_HEARTBEAT_IVL = heartbeat and
 *    ZMQ_HEARTBEAT_TIMEOUT = lost_max (when lost_max > 0) make libzmq
 *    close a link that stops answering pings, which again yields
 *    DISCONNECTED; TCP keepalive is on as well.  ZMQ_HEARTBEAT_TTL is not
 *    used since both ends set their own timeout.
 *  - A stuck broker (process alive, loop not running): overlay heartbeats
 *    both ways every heartbeat seconds; silence past torpid_max is TORPID,
 *    past lost_max LOST (the parent also sends DISCONNECT(SILENT)).
 *  - A send that finds the ROUTER has no pipe for an ONLINE child
 *    (ROUTER_MANDATORY gives EHOSTUNREACH) marks it LOST.
 *  - The child: DISCONNECTED or a failed handshake (e.g. ZAP refusal) on
 *    the DEALER's monitor, silence past lost_max, no WELCOME within
 *    lost_max, or a DISCONNECT from the parent.  Then the child stops
 *    reconnecting (zmq_disconnect) until overlay_connect() is called again.
 *
 * Nothing blocks: all sends use ZMQ_DONTWAIT with unbounded HWMs, and all
 * sockets have ZMQ_LINGER 0 so destroy is immediate.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <zmq.h>

#include "overlay.h"
#include "topology.h"

#define BATCH 64                             /* messages per socket per turn */
#define MAX_FRAMES (FLUX_MSG_MAX_ROUTES + 6) /* identity + routes + 4 */
#define KEYLEN 40                            /* Z85 CURVE key */
#define ZAP_ENDPOINT "inproc://zeromq.zap.01"
#define ZAP_DOMAIN "flux-overlay"
#define MONITOR_EVENTS                                                       \
    (ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL           \
     | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH \
     | ZMQ_EVENT_ACCEPTED)
/* Lines about refused or failed peers (unknown keys, failed handshakes,
 * connections closed for being too many): at most PEERLOG_BURST per
 * PEERLOG_WINDOW seconds, then one line saying how many were left out. */
#define PEERLOG_BURST 10
#define PEERLOG_WINDOW 60.
/* Accepted connections on the child-facing socket beyond the children
 * that are up: more are closed at once.  Each holds a file descriptor
 * until its handshake ends (ZMQ_HANDSHAKE_IVL). */
#define UNAUTH_MAX 64
#define SENDQ_DEFAULT (256u * 1024 * 1024) /* cfg.sendq_max = 0 */

struct zwatch;
/* Consume one queued message: 1, or 0 if none was queued. */
typedef int (*zwatch_f) (struct zwatch *w);

struct zwatch {
    uv_poll_t poll; /* first member: the close callback frees the watch */
    void *zs;       /* NULL once closed (the watch is then being freed) */
    struct overlay *ov;
    zwatch_f handler;
    bool dirty; /* operated on since ZMQ_EVENTS last said "nothing" */
};

struct peer {
    uint32_t rank;
    char id[16]; /* rank in decimal: routing id and ZAP user id */
    enum overlay_peer_status status;
    double since;     /* time of the last status change */
    double last_seen; /* time of the last message from it */
    int fd;           /* child: fd of its connection at hello, or -1 */
    bool notify;      /* status change not yet reported */
    char error[128];  /* reason of the last LOST */
    /* Bytes of messages to the peer that ZeroMQ still holds: added at
     * send, taken off by ZeroMQ's I/O thread when it is done with them
     * (sendbuf_free).  ZeroMQ's HWM counts messages, not bytes, and is
     * off (0): this is what bounds a peer that does not read. */
    atomic_size_t queued;
    ino_t ino;          /* child: inode of the socket fd, at hello */
    size_t lost_queued; /* queued when it was marked LOST, until freed */
    double lost_at;
};

/* The parts of one message sent to a peer, copied into one block that
 * ZeroMQ frees part by part (zmq_msg_init_data): when the last part is
 * freed the block's bytes come off the peer's count. */
struct sendbuf {
    atomic_int parts;
    size_t size;
    atomic_size_t *queued;
    uint8_t data[];
};

struct authkey {
    uint32_t rank;
    char key[KEYLEN + 1];
};

struct overlay {
    flux_reactor_t *r;
    uv_loop_t *loop;
    struct overlay_config cfg;
    overlay_recv_f recv_cb;
    overlay_status_f status_cb;
    void *arg;
    overlay_log_f log_cb;
    void *log_arg;
    overlay_trace_f trace_cb;
    void *trace_arg;
    void *zctx;
    char id[16]; /* own rank in decimal: the DEALER's routing id */
    char pubkey[KEYLEN + 1];
    char seckey[KEYLEN + 1];
    int monitor_gen; /* makes monitor endpoint names unique */

    /* downstream */
    struct peer *children;
    int nchildren;
    const uint32_t *child_ranks; /* ascending, from the topology */
    struct zwatch *router, *router_mon, *zap;
    char *bind_uri;
    struct authkey *keys;
    size_t nkeys;
    int nconns;             /* accepted connections not yet disconnected */
    unsigned long nrefused; /* connections closed: UNAUTH_MAX reached */

    /* rate limit of the lines about refused peers */
    double peerlog_start;
    int peerlog_count;
    unsigned long peerlog_dropped;

    /* upstream */
    struct peer parent;
    struct zwatch *dealer, *dealer_mon;
    char *parent_uri;

    uv_prepare_t *prepare;
    uv_check_t *check;
    uv_idle_t *idle;
    uv_timer_t *timer;
    struct flux_deferred notify;
};

struct frames {
    zmq_msg_t f[MAX_FRAMES];
    int n;
    bool truncated; /* more than MAX_FRAMES arrived (the rest dropped) */
};

static void drain_all (struct overlay *ov);

/* Logging */

static void ov_log (struct overlay *ov, int level, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static void ov_log (struct overlay *ov, int level, const char *fmt, ...)
{
    int saved_errno = errno;
    char buf[256];
    va_list ap;

    if (ov->log_cb) {
        va_start (ap, fmt);
        vsnprintf (buf, sizeof (buf), fmt, ap);
        va_end (ap);
        ov->log_cb (ov, level, buf, ov->log_arg);
    }
    errno = saved_errno;
}

/* A line about a refused or failed peer: rate limited (see PEERLOG_*),
 * since anyone who can reach the port can make them. */
static void peer_log (struct overlay *ov, int level, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static void peerlog_flush (struct overlay *ov, double t)
{
    if (t - ov->peerlog_start < PEERLOG_WINDOW)
        return;
    if (ov->peerlog_dropped > 0)
        ov_log (ov, LOG_WARNING,
                "%lu more messages about refused or failed peers in the "
                "last %.0fs were not logged",
                ov->peerlog_dropped, t - ov->peerlog_start);
    ov->peerlog_start = t;
    ov->peerlog_count = 0;
    ov->peerlog_dropped = 0;
}

static void peer_log (struct overlay *ov, int level, const char *fmt, ...)
{
    int saved_errno = errno;
    char buf[256];
    va_list ap;

    peerlog_flush (ov, flux_reactor_now (ov->r));
    if (ov->peerlog_count >= PEERLOG_BURST) {
        ov->peerlog_dropped++;
        errno = saved_errno;
        return;
    }
    ov->peerlog_count++;
    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    ov_log (ov, level, "%s", buf);
    errno = saved_errno;
}

static void log_stderr (struct overlay *ov, int level, const char *msg,
                        void *arg)
{
    if (level <= LOG_INFO)
        fprintf (stderr, "overlay[%" PRIu32 "]: %s\n", ov->cfg.rank, msg);
}

/* Peer state */

static double now (struct overlay *ov)
{
    return flux_reactor_now (ov->r);
}

static bool is_up (const struct peer *p)
{
    return p->status == OVERLAY_PEER_ONLINE || p->status == OVERLAY_PEER_TORPID;
}

static void peer_init (struct overlay *ov, struct peer *p, uint32_t rank)
{
    p->rank = rank;
    snprintf (p->id, sizeof (p->id), "%" PRIu32, rank);
    p->status = OVERLAY_PEER_OFFLINE;
    p->since = now (ov);
    p->last_seen = p->since;
    p->fd = -1;
}

static void report (struct overlay *ov, struct peer *p)
{
    if (ov->status_cb)
        ov->status_cb (ov, p->rank, p->status,
                       p->status == OVERLAY_PEER_LOST ? p->error : NULL,
                       ov->arg);
}

/* Change p's status.  Loop callbacks report at once; API calls pass
 * later = true so the report comes on the next loop turn, never from
 * inside the caller.  A report still waiting goes out first, so the
 * callback sees every transition in order. */
static void set_status (struct overlay *ov, struct peer *p,
                        enum overlay_peer_status status, const char *error,
                        bool later)
{
    if (p->notify) {
        p->notify = false;
        report (ov, p);
    }
    p->status = status;
    p->since = now (ov);
    if (status == OVERLAY_PEER_LOST)
        snprintf (p->error, sizeof (p->error), "%s", error ? error : "lost");
    if (later) {
        p->notify = true;
        flux_reactor_defer (ov->r, &ov->notify);
    }
    else
        report (ov, p);
}

static void notify_cb (struct flux_deferred *d)
{
    struct overlay *ov
        = (struct overlay *)((char *)d - offsetof (struct overlay, notify));

    for (int i = 0; i < ov->nchildren; i++) {
        if (ov->children[i].notify) {
            ov->children[i].notify = false;
            report (ov, &ov->children[i]);
        }
    }
    if (ov->parent.notify) {
        ov->parent.notify = false;
        report (ov, &ov->parent);
    }
}

/* Any message counts as hearing from the peer. */
static void heard_from (struct overlay *ov, struct peer *p)
{
    p->last_seen = now (ov);
    if (p->status == OVERLAY_PEER_TORPID)
        set_status (ov, p, OVERLAY_PEER_ONLINE, NULL, false);
}

static struct peer *child_lookup (struct overlay *ov, uint32_t rank)
{
    int i;

    if (ov->nchildren == 0
        || (i = topology_child_index (ov->cfg.topo, ov->cfg.rank, rank)) < 0)
        return NULL;
    return &ov->children[i];
}

/* A peer marked LOST while ZeroMQ still holds messages for it: note
 * how much, so that the heartbeat timer can tell when it is released
 * (released_check). */
static void note_lost_queued (struct overlay *ov, struct peer *p)
{
    p->lost_queued = atomic_load (&p->queued);
    p->lost_at = now (ov);
}

static void released_check (struct overlay *ov, struct peer *p, double t)
{
    if (p->status != OVERLAY_PEER_LOST || p->lost_queued == 0
        || atomic_load (&p->queued) > 0)
        return;
    ov_log (ov, LOG_INFO,
            "%s rank %" PRIu32 ": the %zu bytes ZeroMQ held for it were "
            "released %.3gs after it was lost",
            p == &ov->parent ? "parent" : "child", p->rank, p->lost_queued,
            t - p->lost_at);
    p->lost_queued = 0;
}

/* A child marked LOST while its connection is up (it stopped reading,
 * or went silent): what ZeroMQ holds for it would stay until the
 * connection closed, which a stopped peer's never does.  Shut the
 * connection down: ZeroMQ's I/O thread sees it end, drops the pipe and
 * frees those messages (the child, if alive, reconnects and says hello
 * again).  The fd was recorded at hello and its inode is checked, so a
 * number already reused for another socket is left alone. */
static void child_shutdown (struct peer *c)
{
    struct stat st;

    if (c->fd < 0 || fstat (c->fd, &st) < 0 || !S_ISSOCK (st.st_mode)
        || st.st_ino != c->ino)
        return;
    (void)shutdown (c->fd, SHUT_RDWR);
}

static void child_lost (struct overlay *ov, struct peer *c, const char *reason,
                        bool later)
{
    note_lost_queued (ov, c);
    if (c->lost_queued > 0)
        child_shutdown (c);
    c->fd = -1;
    set_status (ov, c, OVERLAY_PEER_LOST, reason, later);
}

static const char *reason_str (int reason)
{
    switch (reason) {
        case OVERLAY_DISCONNECT_ADMIN:
            return "disconnected by administrator";
        case OVERLAY_DISCONNECT_NOTCHILD:
            return "rank is not a child of the parent";
        case OVERLAY_DISCONNECT_BADKEY:
            return "key is authorized for another rank";
        case OVERLAY_DISCONNECT_VERSION:
            return "protocol version mismatch";
        case OVERLAY_DISCONNECT_NOTONLINE:
            return "not online at the parent";
        case OVERLAY_DISCONNECT_SILENT:
            return "parent heard nothing for too long";
    }
    return "unknown reason";
}

/* ZeroMQ helpers */

static int zset_int (void *zs, int option, int value)
{
    return zmq_setsockopt (zs, option, &value, sizeof (value));
}

static int zset_str (void *zs, int option, const char *value)
{
    return zmq_setsockopt (zs, option, value, strlen (value));
}

static int ms (double seconds)
{
    double v = ceil (seconds * 1000.);
    return v > INT32_MAX ? INT32_MAX : v < 1 ? 1 : (int)v;
}

static void zsock_close (void *zs)
{
    if (zs) {
        int saved_errno = errno;
        zmq_close (zs);
        errno = saved_errno;
    }
}

/* A socket that never blocks the loop or the exit. */
static void *zsock_create (struct overlay *ov, int type)
{
    void *zs;

    if (!(zs = zmq_socket (ov->zctx, type)))
        return NULL;
    if (zset_int (zs, ZMQ_LINGER, 0) < 0 || zset_int (zs, ZMQ_SNDHWM, 0) < 0
        || zset_int (zs, ZMQ_RCVHWM, 0) < 0) {
        zsock_close (zs);
        return NULL;
    }
    return zs;
}

/* Options of the links to peers: keepalive, and libzmq's own heartbeat
 * to close links to dead hosts (only if lost_max says links may die). */
static int set_liveness (struct overlay *ov, void *zs)
{
    if (zset_int (zs, ZMQ_TCP_KEEPALIVE, 1) < 0)
        return -1;
    if (ov->cfg.lost_max > 0) {
        if (zset_int (zs, ZMQ_HEARTBEAT_IVL, ms (ov->cfg.heartbeat)) < 0
            || zset_int (zs, ZMQ_HEARTBEAT_TIMEOUT, ms (ov->cfg.lost_max)) < 0)
            return -1;
    }
    return 0;
}

static void frames_close (struct frames *fr)
{
    for (int i = 0; i < fr->n; i++)
        zmq_msg_close (&fr->f[i]);
    fr->n = 0;
}

/* Receive one whole multipart message without blocking: 0, or -1 with
 * errno (EAGAIN: nothing queued).  Frames past MAX_FRAMES are read and
 * dropped, and fr->truncated is set. */
static int frames_recv (void *zs, struct frames *fr)
{
    zmq_msg_t extra;
    int more = 1;

    fr->n = 0;
    fr->truncated = false;
    while (more) {
        zmq_msg_t *m = fr->n < MAX_FRAMES ? &fr->f[fr->n] : &extra;
        zmq_msg_init (m);
        if (zmq_msg_recv (m, zs, ZMQ_DONTWAIT) < 0) {
            int saved_errno = errno; /* watch_drain() reads EAGAIN */
            zmq_msg_close (m);
            frames_close (fr);
            errno = saved_errno;
            return -1;
        }
        more = zmq_msg_more (m);
        if (m == &extra) {
            zmq_msg_close (m);
            fr->truncated = true;
        }
        else
            fr->n++;
    }
    return 0;
}

static bool frame_is (zmq_msg_t *f, const char *s)
{
    size_t len = strlen (s);
    return zmq_msg_size (f) == len && memcmp (zmq_msg_data (f), s, len) == 0;
}

/* Decode frames skip.. as one RFC 3 message; NULL with EPROTO if bad. */
static flux_msg_t *frames_decode (struct frames *fr, int skip)
{
    struct flux_msg_part parts[MAX_FRAMES];

    if (fr->truncated || fr->n <= skip) {
        errno = EPROTO;
        return NULL;
    }
    for (int i = skip; i < fr->n; i++) {
        parts[i - skip].data = zmq_msg_data (&fr->f[i]);
        parts[i - skip].size = zmq_msg_size (&fr->f[i]);
    }
    return flux_msg_from_parts (parts, fr->n - skip);
}

/* Called by ZeroMQ (its I/O thread, or ours) when it is done with a part. */
static void sendbuf_free (void *data, void *hint)
{
    struct sendbuf *sb = hint;

    if (atomic_fetch_sub (&sb->parts, 1) == 1) {
        atomic_fetch_sub (sb->queued, sb->size);
        free (sb);
    }
}

/* Send msg (preceded by an identity frame if id is set) as one multipart
 * message.  msg is only read: its parts are copied into one block, which
 * counts in p->queued until ZeroMQ is done with it.  ENOBUFS (nothing
 * sent) if that would take p->queued past the overlay's sendq_max.  With
 * unbounded HWMs only the first frame can fail (EHOSTUNREACH on the
 * ROUTER), so no half-sent message is left behind. */
static int send_msg (struct overlay *ov, struct peer *p, void *zs,
                     const char *id, const flux_msg_t *msg)
{
    uint8_t proto[FLUX_MSG_PROTO_SIZE];
    struct flux_msg_part parts[MAX_FRAMES];
    int count = MAX_FRAMES;
    struct sendbuf *sb;
    size_t size = 0, off = 0;

    if (flux_msg_to_parts (msg, proto, parts, &count) < 0)
        return -1;
    if (!p) { /* a control message to a peer not known yet: copied */
        if (id
            && zmq_send (zs, id, strlen (id), ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0)
            return -1;
        for (int i = 0; i < count; i++) {
            int flags = ZMQ_DONTWAIT | (i < count - 1 ? ZMQ_SNDMORE : 0);
            if (zmq_send (zs, parts[i].data, parts[i].size, flags) < 0)
                return -1;
        }
        return 0;
    }
    for (int i = 0; i < count; i++)
        size += parts[i].size;
    if (atomic_load (&p->queued) + size > ov->cfg.sendq_max) {
        errno = ENOBUFS;
        return -1;
    }
    if (!(sb = malloc (sizeof (*sb) + size)))
        return -1;
    atomic_init (&sb->parts, count);
    sb->size = size;
    sb->queued = &p->queued;
    atomic_fetch_add (&p->queued, size);
    if (id && zmq_send (zs, id, strlen (id), ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) {
        int saved_errno = errno;
        atomic_fetch_sub (&p->queued, size);
        free (sb);
        errno = saved_errno;
        return -1;
    }
    for (int i = 0; i < count; i++) {
        int flags = ZMQ_DONTWAIT | (i < count - 1 ? ZMQ_SNDMORE : 0);
        zmq_msg_t m;
        if (parts[i].size > 0)
            memcpy (sb->data + off, parts[i].data, parts[i].size);
        zmq_msg_init_data (&m, sb->data + off, parts[i].size, sendbuf_free, sb);
        off += parts[i].size;
        if (zmq_msg_send (&m, zs, flags) < 0) {
            /* not taken: this part and those not made yet are freed
             * here (only the first part can fail, see above) */
            int saved_errno = errno;
            int left = count - i - 1;
            zmq_msg_close (&m);
            while (left-- > 0)
                sendbuf_free (NULL, sb);
            errno = saved_errno;
            return -1;
        }
    }
    if (ov->trace_cb)
        ov->trace_cb (ov, true, p->rank, msg, ov->trace_arg);
    return 0;
}

static int send_control (struct overlay *ov, struct peer *p, void *zs,
                         const char *id, int type, int status)
{
    flux_msg_t *msg;
    int rc = -1;

    if ((msg = flux_msg_create (FLUX_MSGTYPE_CONTROL))
        && flux_msg_set_control (msg, type, status) == 0)
        rc = send_msg (ov, p, zs, id, msg);
    flux_msg_destroy (msg);
    return rc;
}

static bool is_overlay_control (const flux_msg_t *msg, int *type, int *status)
{
    int t;
    return flux_msg_get_type (msg, &t) == 0 && t == FLUX_MSGTYPE_CONTROL
           && flux_msg_get_control (msg, type, status) == 0 && *type >= 0
           && *type <= OVERLAY_CONTROL_RESERVED;
}

/* A message from another broker did not come from this broker's own
 * socket: it loses the local role (FLUX_ROLE_LOCAL), which the sending
 * broker gave its own clients.  Rank 0's rexec refuses requests without
 * it when guests are allowed, as flux-core does. */
static void deliver (struct overlay *ov, flux_msg_t *msg,
                     enum overlay_where where, uint32_t rank)
{
    uint32_t rolemask;

    if (flux_msg_get_rolemask (msg, &rolemask) == 0
        && (rolemask & FLUX_ROLE_LOCAL))
        (void)flux_msg_set_rolemask (msg, rolemask & ~FLUX_ROLE_LOCAL);
    if (ov->recv_cb)
        ov->recv_cb (ov, msg, where, rank, ov->arg);
    else
        flux_msg_decref (msg);
}

/* Watches: a zmq socket driven by the loop */

/* Close the socket and the poll handle; the memory goes when libuv is
 * done with the handle (the poll handle is the first member of the
 * watch, so freeing it frees the watch), so a drain loop holding w sees
 * w->zs == NULL. */
static void watch_destroy (struct zwatch *w)
{
    if (w && w->zs) {
        flux_uv_close_free ((uv_handle_t *)&w->poll);
        zsock_close (w->zs);
        w->zs = NULL;
    }
}

/* Close the monitor of socket zs (either may be NULL), before zs is
 * closed.  Monitoring stops first: after zmq_socket_monitor (NULL)
 * returns no thread of libzmq sends the monitor another event, whereas a
 * socket closed first has its I/O thread report the closing into a
 * monitor that may already be gone, a message libzmq then never frees
 * (ASAN's leak check saw it in overlay.t, 6 runs of 20 under load).  The
 * events still queued are read and dropped. */
static void monitor_stop (void *zs, struct zwatch *mon)
{
    zmq_msg_t m;

    if (!mon || !mon->zs)
        return;
    if (zs)
        (void)zmq_socket_monitor (zs, NULL, 0);
    zmq_msg_init (&m);
    while (zmq_msg_recv (&m, mon->zs, ZMQ_DONTWAIT) >= 0)
        ;
    zmq_msg_close (&m);
    watch_destroy (mon);
}

/* A watched socket and its monitor. */
static void monitored_destroy (struct zwatch *w, struct zwatch *mon)
{
    monitor_stop (w ? w->zs : NULL, mon);
    watch_destroy (w);
}

/* Read up to BATCH messages.  A receive that finds nothing (EAGAIN) has
 * just processed all of the socket's pending commands (libzmq does that
 * before it gives up on a non-blocking receive), so when the drain ends
 * that way the fd will signal whatever comes next: the socket is clean.
 * Otherwise (batch limit, error) it stays dirty, to be re-read. */
static void watch_drain (struct zwatch *w)
{
    bool clean = false;

    for (int i = 0; i < BATCH && w->zs; i++) {
        errno = 0;
        if (w->handler (w) == 0) {
            clean = errno == EAGAIN;
            break;
        }
    }
    w->dirty = !clean;
}

static bool watch_readable (struct zwatch *w)
{
    int events;
    size_t len = sizeof (events);

    return w && w->zs && zmq_getsockopt (w->zs, ZMQ_EVENTS, &events, &len) == 0
           && (events & ZMQ_POLLIN);
}

/* Only the socket whose fd fired needs reading (plus any still dirty);
 * drain_all keeps the zap/monitor-before-data order among them. */
static void poll_cb (uv_poll_t *h, int status, int events)
{
    struct zwatch *w = h->data;
    w->dirty = true;
    drain_all (w->ov);
}

/* Watch zs (owned by the watch on success, still the caller's on error). */
static struct zwatch *watch_create (struct overlay *ov, void *zs,
                                    zwatch_f handler)
{
    struct zwatch *w;
    int fd, e;
    size_t len = sizeof (fd);

    if (zmq_getsockopt (zs, ZMQ_FD, &fd, &len) < 0)
        return NULL;
    if (!(w = calloc (1, sizeof (*w))))
        return NULL;
    if ((e = uv_poll_init (ov->loop, &w->poll, fd)) < 0) {
        free (w);
        errno = -e;
        return NULL;
    }
    w->poll.data = w;
    w->zs = zs;
    w->ov = ov;
    w->handler = handler;
    w->dirty = true;
    if ((e = uv_poll_start (&w->poll, UV_READABLE, poll_cb)) < 0) {
        flux_uv_close_free ((uv_handle_t *)&w->poll);
        errno = -e;
        return NULL;
    }
    return w;
}

/* Read one monitor event: 1 if read (*event 0 if malformed), 0 if none. */
static int monitor_read (struct zwatch *w, uint16_t *event, uint32_t *value,
                         char *addr, size_t addrsize)
{
    struct frames fr;

    if (frames_recv (w->zs, &fr) < 0)
        return 0;
    *event = 0;
    if (fr.n == 2 && zmq_msg_size (&fr.f[0]) == 6) {
        const uint8_t *data = zmq_msg_data (&fr.f[0]);
        memcpy (event, data, 2);
        memcpy (value, data + 2, 4);
        snprintf (addr, addrsize, "%.*s", (int)zmq_msg_size (&fr.f[1]),
                  (const char *)zmq_msg_data (&fr.f[1]));
    }
    frames_close (&fr);
    return 1;
}

static struct zwatch *monitor_create (struct overlay *ov, void *zs,
                                      zwatch_f handler)
{
    char endpoint[64];
    struct zwatch *w;
    void *pair;

    snprintf (endpoint, sizeof (endpoint), "inproc://overlay-monitor-%d",
              ov->monitor_gen++);
    if (zmq_socket_monitor (zs, endpoint, MONITOR_EVENTS) < 0)
        return NULL;
    if (!(pair = zsock_create (ov, ZMQ_PAIR))
        || zmq_connect (pair, endpoint) < 0
        || !(w = watch_create (ov, pair, handler))) {
        int saved_errno = errno;
        zsock_close (pair);
        zmq_socket_monitor (zs, NULL, 0);
        errno = saved_errno;
        return NULL;
    }
    return w;
}

/* Sends on a watched socket leave it to be re-read before sleeping. */
static int send_control_dirty (struct overlay *ov, struct peer *p,
                               struct zwatch *w, const char *id, int type,
                               int status)
{
    w->dirty = true;
    return send_control (ov, p, w->zs, id, type, status);
}

/* Loop handles */

static void drain_all (struct overlay *ov)
{
    /* order matters, see the top of this file; pointers are re-read since
     * callbacks may replace the upstream sockets (overlay_connect) */
    struct zwatch **order[] = {&ov->zap, &ov->router_mon, &ov->dealer_mon,
                               &ov->router, &ov->dealer};

    for (size_t i = 0; i < sizeof (order) / sizeof (order[0]); i++) {
        if (*order[i] && (*order[i])->dirty)
            watch_drain (*order[i]);
    }
}

static void idle_cb (uv_idle_t *h)
{
}

/* Re-read ZMQ_EVENTS only for sockets used since it last said "nothing":
 * an untouched socket's fd still signals new input by itself.  This keeps
 * an idle loop turn free of zmq calls (each costs a poll and a getpid). */
static bool dirty_readable (struct zwatch *w)
{
    if (!w || !w->dirty)
        return false;
    if (watch_readable (w))
        return true;
    w->dirty = false;
    return false;
}

static void prepare_cb (uv_prepare_t *h)
{
    struct overlay *ov = h->data;
    bool ready = false;

    /* evaluate all (no short circuit) so every clean socket is cleared */
    ready |= dirty_readable (ov->zap);
    ready |= dirty_readable (ov->router_mon);
    ready |= dirty_readable (ov->dealer_mon);
    ready |= dirty_readable (ov->router);
    ready |= dirty_readable (ov->dealer);
    if (ready)
        uv_idle_start (ov->idle, idle_cb);
    else
        uv_idle_stop (ov->idle);
}

static void check_cb (uv_check_t *h)
{
    drain_all (h->data);
}

/* ZAP handler (RFC 27): admit authorized keys, user id = their rank */

static struct authkey *key_lookup (struct overlay *ov, const char *key)
{
    for (size_t i = 0; i < ov->nkeys; i++) {
        if (!strcmp (ov->keys[i].key, key))
            return &ov->keys[i];
    }
    return NULL;
}

static void zap_answer (struct overlay *ov, void *zs, struct frames *fr)
{
    const char *code = "400", *text = "unknown key", *user = "";
    char rank[16], key[KEYLEN + 1], addr[128];
    struct authkey *a;

    if (fr->n != 7 || !frame_is (&fr->f[0], "1.0")
        || !frame_is (&fr->f[5], "CURVE") || zmq_msg_size (&fr->f[6]) != 32) {
        ov_log (ov, LOG_ERR, "malformed ZAP request (%d frames)", fr->n);
        code = "500";
        text = "malformed request";
    }
    else {
        zmq_z85_encode (key, zmq_msg_data (&fr->f[6]), 32);
        snprintf (addr, sizeof (addr), "%.*s", (int)zmq_msg_size (&fr->f[3]),
                  (const char *)zmq_msg_data (&fr->f[3]));
        if ((a = key_lookup (ov, key))) {
            if (a->rank == OVERLAY_ANY_RANK)
                snprintf (rank, sizeof (rank), "*");
            else
                snprintf (rank, sizeof (rank), "%" PRIu32, a->rank);
            code = "200";
            text = "OK";
            user = rank;
        }
        else
            peer_log (ov, LOG_NOTICE, "refused unknown key %s from %s", key,
                      addr[0] ? addr : "(local)");
    }
    if (zmq_send (zs, "1.0", 3, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0
        || zmq_send (zs, fr->n > 1 ? zmq_msg_data (&fr->f[1]) : NULL,
                     fr->n > 1 ? zmq_msg_size (&fr->f[1]) : 0,
                     ZMQ_SNDMORE | ZMQ_DONTWAIT)
               < 0
        || zmq_send (zs, code, 3, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0
        || zmq_send (zs, text, strlen (text), ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0
        || zmq_send (zs, user, strlen (user), ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0
        || zmq_send (zs, "", 0, ZMQ_DONTWAIT) < 0)
        ov_log (ov, LOG_ERR, "ZAP reply: %s", zmq_strerror (errno));
}

static int zap_recv (struct zwatch *w)
{
    struct frames fr;

    if (frames_recv (w->zs, &fr) < 0)
        return 0;
    zap_answer (w->ov, w->zs, &fr);
    frames_close (&fr);
    return 1;
}

/* Downstream: messages from children */

static bool parse_rank (const void *data, size_t size, uint32_t *rank)
{
    const char *s = data;
    uint64_t v = 0;

    if (size == 0 || size > 10 || (size > 1 && s[0] == '0'))
        return false;
    for (size_t i = 0; i < size; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v > UINT32_MAX)
        return false;
    *rank = (uint32_t)v;
    return true;
}

static void refuse (struct overlay *ov, const char *id, int reason)
{
    if (send_control_dirty (ov, NULL, ov->router, id,
                            OVERLAY_CONTROL_DISCONNECT, reason)
        < 0)
        ov_log (ov, LOG_DEBUG, "DISCONNECT to %s: %s", id, strerror (errno));
}

static void child_hello (struct overlay *ov, struct peer *c, int version,
                         int fd)
{
    if (is_up (c))
        child_lost (ov, c, "said hello again (restarted?)", false);
    if (version != OVERLAY_PROTOCOL_VERSION) {
        ov_log (ov, LOG_ERR, "child %s speaks protocol %d, not %d", c->id,
                version, OVERLAY_PROTOCOL_VERSION);
        refuse (ov, c->id, OVERLAY_DISCONNECT_VERSION);
        return;
    }
    if (send_control_dirty (ov, c, ov->router, c->id, OVERLAY_CONTROL_WELCOME,
                            OVERLAY_PROTOCOL_VERSION)
        < 0) {
        ov_log (ov, LOG_ERR, "WELCOME to child %s: %s", c->id,
                strerror (errno));
        return;
    }
    c->fd = fd;
    {
        struct stat st;
        c->ino = fstat (fd, &st) == 0 ? st.st_ino : 0;
    }
    c->lost_queued = 0;
    c->last_seen = now (ov);
    set_status (ov, c, OVERLAY_PEER_ONLINE, NULL, false);
}

/* Is the child ONLINE over this connection?  A message over another one
 * means the child reconnected (handover) without saying hello. */
static bool child_connection_ok (struct overlay *ov, struct peer *c, int fd)
{
    if (!is_up (c))
        return false;
    if (fd != c->fd) {
        child_lost (ov, c, "reconnected without hello", false);
        return false;
    }
    return true;
}

/* Identity and key checks; the child or NULL (already answered). */
static struct peer *child_check (struct overlay *ov, struct frames *fr)
{
    uint32_t rank;
    struct peer *c;
    const char *user;
    char id[16];

    if (fr->n < 2
        || !parse_rank (zmq_msg_data (&fr->f[0]), zmq_msg_size (&fr->f[0]),
                        &rank)) {
        ov_log (ov, LOG_ERR,
                "dropped message from a peer without a rank "
                "as routing id");
        return NULL;
    }
    snprintf (id, sizeof (id), "%" PRIu32, rank);
    if (!(c = child_lookup (ov, rank))) {
        ov_log (ov, LOG_ERR, "refused rank %s: not a child", id);
        refuse (ov, id, OVERLAY_DISCONNECT_NOTCHILD);
        return NULL;
    }
    user = zmq_msg_gets (&fr->f[1], "User-Id");
    /* "*": the instance's shared key, good for any child */
    if (!user || (strcmp (user, c->id) != 0 && strcmp (user, "*") != 0)) {
        ov_log (ov, LOG_ERR, "refused rank %s: key is that of rank %s", id,
                user ? user : "(none)");
        refuse (ov, id, OVERLAY_DISCONNECT_BADKEY);
        /* handover gave this peer the child's routing id */
        if (is_up (c))
            child_lost (ov, c, "routing id taken by a peer with another key",
                        false);
        return NULL;
    }
    return c;
}

static void from_child (struct overlay *ov, struct frames *fr)
{
    struct peer *c;
    flux_msg_t *msg;
    int type, status, fd;

    if (!(c = child_check (ov, fr)))
        return;
    if (!(msg = frames_decode (fr, 1))) {
        ov_log (ov, LOG_ERR, "dropped malformed message from child %s: %s",
                c->id, strerror (errno));
        return;
    }
    if (ov->trace_cb)
        ov->trace_cb (ov, false, c->rank, msg, ov->trace_arg);
    fd = zmq_msg_get (&fr->f[1], ZMQ_SRCFD);
    if (is_overlay_control (msg, &type, &status)
        && type == OVERLAY_CONTROL_HELLO) {
        child_hello (ov, c, status, fd);
        flux_msg_decref (msg);
        return;
    }
    if (!child_connection_ok (ov, c, fd)) {
        refuse (ov, c->id, OVERLAY_DISCONNECT_NOTONLINE);
        flux_msg_decref (msg);
        return;
    }
    heard_from (ov, c);
    if (is_overlay_control (msg, &type, &status)) {
        if (type != OVERLAY_CONTROL_HEARTBEAT)
            ov_log (ov, LOG_ERR, "child %s sent unexpected control type %d",
                    c->id, type);
        flux_msg_decref (msg);
        return;
    }
    if (flux_msg_has_flag (msg, FLUX_MSGFLAG_ROUTE)
        && flux_msg_route_push (msg, c->id) < 0) {
        ov_log (ov, LOG_ERR, "dropped message from child %s: route push: %s",
                c->id, strerror (errno));
        flux_msg_decref (msg);
        return;
    }
    deliver (ov, msg, OVERLAY_DOWNSTREAM, c->rank);
}

static int router_recv (struct zwatch *w)
{
    struct frames fr;

    if (frames_recv (w->zs, &fr) < 0)
        return 0;
    from_child (w->ov, &fr);
    frames_close (&fr);
    return 1;
}

/* Is the local address ss that of our bound endpoint (same TCP port, or
 * same ipc path)? */
static bool endpoint_is_ours (struct overlay *ov,
                              const struct sockaddr_storage *ss, socklen_t len)
{
    const char *uri = ov->bind_uri;

    if (!strncmp (uri, "tcp://", 6)) {
        const char *colon = strrchr (uri, ':');
        long port = colon ? strtol (colon + 1, NULL, 10) : -1;
        if (ss->ss_family == AF_INET)
            return ntohs (((const struct sockaddr_in *)ss)->sin_port) == port;
        if (ss->ss_family == AF_INET6)
            return ntohs (((const struct sockaddr_in6 *)ss)->sin6_port) == port;
        return false;
    }
    if (!strncmp (uri, "ipc://", 6) && ss->ss_family == AF_UNIX
        && len > offsetof (struct sockaddr_un, sun_path)) {
        const struct sockaddr_un *sun = (const struct sockaddr_un *)ss;
        size_t n = len - offsetof (struct sockaddr_un, sun_path);
        return strnlen (sun->sun_path, n) == strlen (uri + 6)
               && !strncmp (sun->sun_path, uri + 6, n);
    }
    return false;
}

/* fd was just accepted on the child-facing socket (it may be closed and
 * its number reused by now: it is only touched if it is still a socket
 * bound to our endpoint).  If more connections are open than the children
 * that are up plus UNAUTH_MAX, it is shut down: libzmq then sees it close
 * and frees it, so strangers cannot take all our file descriptors. */
static void unauth_bound (struct overlay *ov, int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof (ss);
    int up = 0;

    for (int i = 0; i < ov->nchildren; i++)
        if (is_up (&ov->children[i]))
            up++;
    if (ov->nconns <= up + UNAUTH_MAX || fd < 0 || !ov->bind_uri)
        return;
    if (getsockname (fd, (struct sockaddr *)&ss, &len) < 0
        || !endpoint_is_ours (ov, &ss, len))
        return;
    (void)shutdown (fd, SHUT_RDWR);
    ov->nrefused++;
    peer_log (ov, LOG_WARNING,
              "more than %d connections not yet authenticated: closing new "
              "ones (%lu so far)",
              UNAUTH_MAX, ov->nrefused);
}

static int router_mon_recv (struct zwatch *w)
{
    struct overlay *ov = w->ov;
    uint16_t event;
    uint32_t value;
    char addr[128];

    if (monitor_read (w, &event, &value, addr, sizeof (addr)) == 0)
        return 0;
    if (event == ZMQ_EVENT_ACCEPTED) {
        ov->nconns++;
        unauth_bound (ov, (int)value);
    }
    else if (event == ZMQ_EVENT_DISCONNECTED) {
        if (ov->nconns > 0)
            ov->nconns--;
        for (int i = 0; i < ov->nchildren; i++) {
            struct peer *c = &ov->children[i];
            if (is_up (c) && c->fd == (int)value)
                child_lost (ov, c, "connection closed", false);
        }
    }
    else if (event != 0 && event != ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
        /* (the ZAP handler logged refused keys) */
        peer_log (ov, LOG_INFO,
                  "handshake with a peer at %s failed (event 0x%x, status "
                  "%" PRIu32 ")",
                  addr[0] ? addr : "(local)", event, value);
    return 1;
}

/* Upstream: messages from the parent */

static void parent_lost (struct overlay *ov, const char *reason)
{
    struct peer *p = &ov->parent;

    if (p->status == OVERLAY_PEER_LOST)
        return;
    /* stop reconnecting until overlay_connect() is called again */
    note_lost_queued (ov, p);
    if (ov->dealer) {
        (void)zmq_disconnect (ov->dealer->zs, ov->parent_uri);
        ov->dealer->dirty = true; /* any zmq call may consume the edge */
    }
    set_status (ov, p, OVERLAY_PEER_LOST, reason, false);
}

static void parent_control (struct overlay *ov, int type, int status)
{
    struct peer *p = &ov->parent;
    char reason[128];

    if (p->status == OVERLAY_PEER_LOST)
        return;
    if (type == OVERLAY_CONTROL_DISCONNECT) {
        snprintf (reason, sizeof (reason), "%s by parent: %s",
                  is_up (p) ? "disconnected" : "refused", reason_str (status));
        parent_lost (ov, reason);
    }
    else if (type == OVERLAY_CONTROL_WELCOME && !is_up (p)) {
        if (status != OVERLAY_PROTOCOL_VERSION) {
            parent_lost (ov, "parent speaks another protocol version");
            return;
        }
        p->last_seen = now (ov);
        set_status (ov, p, OVERLAY_PEER_ONLINE, NULL, false);
    }
    else if (is_up (p)) {
        heard_from (ov, p);
        if (type != OVERLAY_CONTROL_HEARTBEAT)
            ov_log (ov, LOG_ERR, "parent sent unexpected control type %d",
                    type);
    }
}

static void from_parent (struct overlay *ov, flux_msg_t *msg)
{
    int type, status;

    if (ov->trace_cb)
        ov->trace_cb (ov, false, ov->parent.rank, msg, ov->trace_arg);
    if (is_overlay_control (msg, &type, &status)) {
        parent_control (ov, type, status);
        flux_msg_decref (msg);
        return;
    }
    if (!is_up (&ov->parent)) {
        ov_log (ov, LOG_DEBUG, "dropped message from parent: not online");
        flux_msg_decref (msg);
        return;
    }
    heard_from (ov, &ov->parent);
    deliver (ov, msg, OVERLAY_UPSTREAM, ov->parent.rank);
}

static int dealer_recv (struct zwatch *w)
{
    struct frames fr;
    flux_msg_t *msg;

    if (frames_recv (w->zs, &fr) < 0)
        return 0;
    if (!(msg = frames_decode (&fr, 0)))
        ov_log (w->ov, LOG_ERR, "dropped malformed message from parent: %s",
                strerror (errno));
    frames_close (&fr);
    if (msg)
        from_parent (w->ov, msg);
    return 1;
}

static int dealer_mon_recv (struct zwatch *w)
{
    struct overlay *ov = w->ov;
    uint16_t event;
    uint32_t value;
    char addr[128], reason[128];

    if (monitor_read (w, &event, &value, addr, sizeof (addr)) == 0)
        return 0;
    if (w != ov->dealer_mon || event == 0)
        return 1; /* from a connection overlay_connect() replaced */
    if (event == ZMQ_EVENT_DISCONNECTED)
        parent_lost (ov, "connection to parent closed");
    else if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) {
        snprintf (reason, sizeof (reason),
                  "parent refused our key (ZAP status %" PRIu32 ")", value);
        parent_lost (ov, reason);
    }
    else
        parent_lost (ov, "handshake with parent failed (wrong parent key?)");
    return 1;
}

/* Heartbeats and silence */

static void child_tick (struct overlay *ov, struct peer *c, double t)
{
    double quiet = t - c->last_seen;
    char reason[64];

    released_check (ov, c, t);
    if (!is_up (c))
        return;
    if (ov->cfg.lost_max > 0 && quiet >= ov->cfg.lost_max) {
        refuse (ov, c->id, OVERLAY_DISCONNECT_SILENT);
        snprintf (reason, sizeof (reason), "no message for %.3gs", quiet);
        child_lost (ov, c, reason, false);
        return;
    }
    if (c->status == OVERLAY_PEER_ONLINE && quiet >= ov->cfg.torpid_max)
        set_status (ov, c, OVERLAY_PEER_TORPID, NULL, false);
    if (is_up (c)
        && send_control_dirty (ov, c, ov->router, c->id,
                               OVERLAY_CONTROL_HEARTBEAT, 0)
               < 0) {
        if (errno == EHOSTUNREACH)
            child_lost (ov, c, "connection to child is gone", false);
        else
            ov_log (ov, LOG_ERR, "heartbeat to child %s: %s", c->id,
                    strerror (errno));
    }
}

static void parent_tick (struct overlay *ov, double t)
{
    struct peer *p = &ov->parent;
    double quiet;
    char reason[64];

    released_check (ov, p, t);
    if (!ov->dealer || p->status == OVERLAY_PEER_LOST)
        return;
    quiet = t - (is_up (p) ? p->last_seen : p->since);
    if (ov->cfg.lost_max > 0 && quiet >= ov->cfg.lost_max) {
        snprintf (reason, sizeof (reason), "%s for %.3gs",
                  is_up (p) ? "no message from parent" : "no answer to hello",
                  quiet);
        parent_lost (ov, reason);
        return;
    }
    if (p->status == OVERLAY_PEER_ONLINE && quiet >= ov->cfg.torpid_max)
        set_status (ov, p, OVERLAY_PEER_TORPID, NULL, false);
    if (is_up (p) && ov->dealer
        && send_control_dirty (ov, &ov->parent, ov->dealer, NULL,
                               OVERLAY_CONTROL_HEARTBEAT, 0)
               < 0)
        ov_log (ov, LOG_ERR, "heartbeat to parent: %s", strerror (errno));
}

static void timer_cb (uv_timer_t *h)
{
    struct overlay *ov = h->data;
    double t = now (ov);

    for (int i = 0; i < ov->nchildren; i++) {
        if (ov->router)
            child_tick (ov, &ov->children[i], t);
    }
    parent_tick (ov, t);
    peerlog_flush (ov, t);
}

/* Public interface */

static bool key_valid (const char *key)
{
    uint8_t bin[32];
    return key && strlen (key) == KEYLEN && zmq_z85_decode (bin, key);
}

static int config_apply (struct overlay *ov, const struct overlay_config *cfg)
{
    if (cfg->size == 0 || cfg->rank >= cfg->size || !cfg->topo
        || topology_size (cfg->topo) != cfg->size || !isfinite (cfg->heartbeat)
        || cfg->heartbeat < 0 || !isfinite (cfg->torpid_max)
        || cfg->torpid_max < 0 || !isfinite (cfg->lost_max)
        || cfg->lost_max < 0) {
        errno = EINVAL;
        return -1;
    }
    ov->cfg = *cfg;
    if (ov->cfg.heartbeat == 0)
        ov->cfg.heartbeat = 1.0;
    if (ov->cfg.torpid_max == 0)
        ov->cfg.torpid_max = 30.0;
    if (ov->cfg.sendq_max == 0)
        ov->cfg.sendq_max = SENDQ_DEFAULT;
    return 0;
}

static int handles_create (struct overlay *ov)
{
    if (!(ov->prepare = calloc (1, sizeof (*ov->prepare)))
        || !(ov->check = calloc (1, sizeof (*ov->check)))
        || !(ov->idle = calloc (1, sizeof (*ov->idle)))
        || !(ov->timer = calloc (1, sizeof (*ov->timer)))) {
        free (ov->prepare);
        free (ov->check);
        free (ov->idle);
        free (ov->timer);
        ov->prepare = NULL;
        ov->check = NULL;
        ov->idle = NULL;
        ov->timer = NULL;
        errno = ENOMEM;
        return -1;
    }
    /* these cannot fail on a valid loop */
    uv_prepare_init (ov->loop, ov->prepare);
    uv_check_init (ov->loop, ov->check);
    uv_idle_init (ov->loop, ov->idle);
    uv_timer_init (ov->loop, ov->timer);
    ov->prepare->data = ov->check->data = ov->idle->data = ov;
    ov->timer->data = ov;
    uv_prepare_start (ov->prepare, prepare_cb);
    uv_check_start (ov->check, check_cb);
    uint64_t period = (uint64_t)ms (ov->cfg.heartbeat);
    uv_timer_start (ov->timer, timer_cb, period, period);
    return 0;
}

static void handle_close (void *h)
{
    flux_uv_close_free (h);
}

static int children_create (struct overlay *ov)
{
    uint32_t rank = ov->cfg.rank;

    ov->nchildren = topology_child_count (ov->cfg.topo, rank);
    if (ov->nchildren == 0)
        return 0;
    ov->child_ranks = topology_children (ov->cfg.topo, rank);
    if (!(ov->children = calloc (ov->nchildren, sizeof (ov->children[0]))))
        return -1;
    for (int i = 0; i < ov->nchildren; i++)
        peer_init (ov, &ov->children[i], ov->child_ranks[i]);
    return 0;
}

struct overlay *overlay_create (flux_reactor_t *r,
                                const struct overlay_config *cfg,
                                overlay_recv_f recv_cb,
                                overlay_status_f status_cb, void *arg)
{
    struct overlay *ov;

    if (!r || !cfg) {
        errno = EINVAL;
        return NULL;
    }
    if (!(ov = calloc (1, sizeof (*ov))))
        return NULL;
    flux_deferred_init (&ov->notify, notify_cb);
    if (config_apply (ov, cfg) < 0)
        goto error;
    ov->r = r;
    ov->loop = flux_reactor_uv (r);
    ov->recv_cb = recv_cb;
    ov->status_cb = status_cb;
    ov->arg = arg;
    ov->log_cb = log_stderr;
    snprintf (ov->id, sizeof (ov->id), "%" PRIu32, cfg->rank);
    int64_t parent = topology_parent (cfg->topo, cfg->rank);
    peer_init (ov, &ov->parent, parent < 0 ? 0 : (uint32_t)parent);
    if (children_create (ov) < 0)
        goto error;
    if (zmq_curve_keypair (ov->pubkey, ov->seckey) < 0)
        goto error;
    if (!(ov->zctx = zmq_ctx_new ()))
        goto error;
    (void)zmq_ctx_set (ov->zctx, ZMQ_BLOCKY, 0);
    if (handles_create (ov) < 0)
        goto error;
    return ov;
error:
    overlay_destroy (ov);
    return NULL;
}

void overlay_destroy (struct overlay *ov)
{
    if (ov) {
        int saved_errno = errno;
        flux_reactor_undefer (&ov->notify);
        monitored_destroy (ov->dealer, ov->dealer_mon);
        monitored_destroy (ov->router, ov->router_mon);
        watch_destroy (ov->zap);
        handle_close (ov->prepare);
        handle_close (ov->check);
        handle_close (ov->idle);
        handle_close (ov->timer);
        if (ov->zctx) {
            while (zmq_ctx_term (ov->zctx) < 0 && errno == EINTR)
                ;
        }
        free (ov->children);
        free (ov->keys);
        free (ov->bind_uri);
        free (ov->parent_uri);
        free (ov);
        errno = saved_errno;
    }
}

void overlay_set_log (struct overlay *ov, overlay_log_f cb, void *arg)
{
    if (ov) {
        ov->log_cb = cb;
        ov->log_arg = arg;
    }
}

void overlay_set_trace (struct overlay *ov, overlay_trace_f cb, void *arg)
{
    if (ov) {
        ov->trace_cb = cb;
        ov->trace_arg = arg;
    }
}

const char *overlay_get_pubkey (struct overlay *ov)
{
    return ov ? ov->pubkey : NULL;
}

int overlay_set_cert (struct overlay *ov, const char *pubkey,
                      const char *seckey)
{
    char derived[KEYLEN + 1];

    if (!ov || !key_valid (pubkey) || !key_valid (seckey)
        || zmq_curve_public (derived, seckey) < 0
        || strcmp (derived, pubkey) != 0) {
        errno = EINVAL;
        return -1;
    }
    if (ov->router || ov->dealer) {
        errno = EBUSY;
        return -1;
    }
    memcpy (ov->pubkey, pubkey, KEYLEN + 1);
    memcpy (ov->seckey, seckey, KEYLEN + 1);
    return 0;
}

int overlay_authorize (struct overlay *ov, uint32_t rank, const char *pubkey)
{
    struct authkey *a;

    if (!ov || (rank >= ov->cfg.size && rank != OVERLAY_ANY_RANK)
        || !key_valid (pubkey)) {
        errno = EINVAL;
        return -1;
    }
    if ((a = key_lookup (ov, pubkey)) && a->rank != rank) {
        errno = EEXIST;
        return -1;
    }
    for (size_t i = 0; i < ov->nkeys; i++) {
        if (ov->keys[i].rank == rank) {
            memcpy (ov->keys[i].key, pubkey, KEYLEN + 1);
            return 0;
        }
    }
    if (!(a = realloc (ov->keys, (ov->nkeys + 1) * sizeof (*a))))
        return -1;
    ov->keys = a;
    a[ov->nkeys].rank = rank;
    memcpy (a[ov->nkeys].key, pubkey, KEYLEN + 1);
    ov->nkeys++;
    return 0;
}

/* The ZAP handler lives as long as the overlay once created: an inproc
 * endpoint is released asynchronously after close, so closing it on a
 * failed bind could make the next attempt fail with EADDRINUSE. */
static int zap_start (struct overlay *ov)
{
    void *zs;

    if (ov->zap)
        return 0;
    if (!(zs = zsock_create (ov, ZMQ_REP)) || zmq_bind (zs, ZAP_ENDPOINT) < 0
        || !(ov->zap = watch_create (ov, zs, zap_recv))) {
        zsock_close (zs);
        return -1;
    }
    return 0;
}

static void *router_create (struct overlay *ov)
{
    void *zs;

    if (!(zs = zsock_create (ov, ZMQ_ROUTER)))
        return NULL;
    if (zset_int (zs, ZMQ_ROUTER_MANDATORY, 1) < 0
        || zset_int (zs, ZMQ_ROUTER_HANDOVER, 1) < 0
        || zset_int (zs, ZMQ_CURVE_SERVER, 1) < 0
        || zset_str (zs, ZMQ_CURVE_SECRETKEY, ov->seckey) < 0
        || zset_str (zs, ZMQ_ZAP_DOMAIN, ZAP_DOMAIN) < 0
        || set_liveness (ov, zs) < 0) {
        zsock_close (zs);
        return NULL;
    }
    return zs;
}

/* An ipc:// endpoint is a unix socket file: only this broker's user may
 * connect to it (the least mode that works; CURVE refuses strangers
 * anyway).  Other transports have no file. */
static int ipc_restrict (const char *endpoint)
{
    if (strncmp (endpoint, "ipc://", 6) != 0 || endpoint[6] == '@')
        return 0;
    return chmod (endpoint + 6, 0600);
}

int overlay_bind (struct overlay *ov, const char *uri)
{
    struct zwatch *mon = NULL, *w = NULL;
    char endpoint[1024];
    size_t len = sizeof (endpoint);
    void *zs = NULL;
    char *copy = NULL;

    if (!ov || !uri || ov->nchildren == 0) {
        errno = EINVAL;
        return -1;
    }
    if (ov->router) {
        errno = EBUSY;
        return -1;
    }
    if (zap_start (ov) < 0 || !(zs = router_create (ov))
        || !(mon = monitor_create (ov, zs, router_mon_recv))
        || zmq_bind (zs, uri) < 0
        || zmq_getsockopt (zs, ZMQ_LAST_ENDPOINT, endpoint, &len) < 0
        || ipc_restrict (endpoint) < 0 || !(copy = strdup (endpoint))
        || !(w = watch_create (ov, zs, router_recv))) {
        int saved_errno = errno;
        free (copy);
        monitor_stop (zs, mon);
        zsock_close (zs);
        errno = saved_errno;
        return -1;
    }
    ov->router = w;
    ov->router_mon = mon;
    ov->bind_uri = copy;
    return 0;
}

const char *overlay_get_bind_uri (struct overlay *ov)
{
    return ov ? ov->bind_uri : NULL;
}

static void *dealer_create (struct overlay *ov, const char *server_key)
{
    void *zs;

    if (!(zs = zsock_create (ov, ZMQ_DEALER)))
        return NULL;
    if (zset_str (zs, ZMQ_ROUTING_ID, ov->id) < 0
        || zset_str (zs, ZMQ_CURVE_SERVERKEY, server_key) < 0
        || zset_str (zs, ZMQ_CURVE_PUBLICKEY, ov->pubkey) < 0
        || zset_str (zs, ZMQ_CURVE_SECRETKEY, ov->seckey) < 0
        || set_liveness (ov, zs) < 0) {
        zsock_close (zs);
        return NULL;
    }
    return zs;
}

int overlay_connect (struct overlay *ov, const char *parent_uri,
                     const char *parent_pubkey)
{
    struct zwatch *mon = NULL, *w = NULL;
    void *zs = NULL;
    char *copy = NULL;

    if (!ov || !parent_uri || ov->cfg.rank == 0 || !key_valid (parent_pubkey)) {
        errno = EINVAL;
        return -1;
    }
    if (ov->dealer && ov->parent.status != OVERLAY_PEER_LOST) {
        errno = EBUSY;
        return -1;
    }
    if (!(copy = strdup (parent_uri))
        || !(zs = dealer_create (ov, parent_pubkey))
        || !(mon = monitor_create (ov, zs, dealer_mon_recv))
        || zmq_connect (zs, parent_uri) < 0
        || send_control (ov, &ov->parent, zs, NULL, OVERLAY_CONTROL_HELLO,
                         OVERLAY_PROTOCOL_VERSION)
               < 0
        || !(w = watch_create (ov, zs, dealer_recv))) {
        int saved_errno = errno;
        free (copy);
        monitor_stop (zs, mon);
        zsock_close (zs);
        errno = saved_errno;
        return -1;
    }
    monitored_destroy (ov->dealer, ov->dealer_mon);
    free (ov->parent_uri);
    ov->dealer = w;
    ov->dealer_mon = mon;
    ov->parent_uri = copy;
    ov->parent.status = OVERLAY_PEER_OFFLINE;
    ov->parent.since = now (ov);
    ov->parent.last_seen = ov->parent.since;
    return 0;
}

static bool sendable (const flux_msg_t *msg)
{
    int type, status;

    if (!msg || is_overlay_control (msg, &type, &status)) {
        errno = EINVAL;
        return false;
    }
    return true;
}

/* What ZeroMQ holds for p reached sendq_max: p does not read (stopped,
 * or slower than what is sent to it).  It is marked LOST, as a peer that
 * went silent is, and nothing more is sent to it: the broker fails what
 * was in flight to it, and a child must start over (hello). */
static void sendq_full (struct overlay *ov, struct peer *p)
{
    char reason[128];

    snprintf (reason, sizeof (reason),
              "%zu bytes wait to be sent to it, over tbon.sendq-limit (%zu): "
              "it does not read",
              atomic_load (&p->queued), ov->cfg.sendq_max);
    ov_log (ov, LOG_ERR, "%s rank %" PRIu32 ": %s: lost",
            p == &ov->parent ? "parent" : "child", p->rank, reason);
    if (p == &ov->parent) {
        /* zmq_disconnect() drops the pipe and what it holds */
        note_lost_queued (ov, p);
        if (ov->dealer)
            (void)zmq_disconnect (ov->dealer->zs, ov->parent_uri);
        set_status (ov, p, OVERLAY_PEER_LOST, reason, true);
    }
    else
        child_lost (ov, p, reason, true);
}

int overlay_send_parent (struct overlay *ov, const flux_msg_t *msg)
{
    if (!ov || !sendable (msg)) {
        errno = EINVAL;
        return -1;
    }
    if (!ov->dealer || !is_up (&ov->parent)) {
        errno = EHOSTUNREACH;
        return -1;
    }
    ov->dealer->dirty = true;
    if (send_msg (ov, &ov->parent, ov->dealer->zs, NULL, msg) < 0) {
        if (errno == ENOBUFS)
            sendq_full (ov, &ov->parent);
        return -1;
    }
    return 0;
}

size_t overlay_parent_queued (struct overlay *ov)
{
    return ov ? atomic_load (&ov->parent.queued) : 0;
}

size_t overlay_sendq_max (struct overlay *ov)
{
    return ov ? ov->cfg.sendq_max : 0;
}

static bool peer_room (struct peer *p, const flux_msg_t *msg, size_t limit)
{
    uint8_t proto[FLUX_MSG_PROTO_SIZE];
    struct flux_msg_part parts[MAX_FRAMES];
    int count = MAX_FRAMES;
    size_t size = 0;

    if (flux_msg_to_parts (msg, proto, parts, &count) < 0)
        return true; /* the send says what is wrong */
    for (int i = 0; i < count; i++)
        size += parts[i].size;
    return atomic_load (&p->queued) + size <= limit;
}

bool overlay_parent_room (struct overlay *ov, const flux_msg_t *msg,
                          size_t limit)
{
    return !ov || peer_room (&ov->parent, msg, limit);
}

bool overlay_child_room (struct overlay *ov, uint32_t child_rank,
                         const flux_msg_t *msg, size_t limit)
{
    struct peer *c = ov ? child_lookup (ov, child_rank) : NULL;
    return !c || peer_room (c, msg, limit);
}

size_t overlay_child_queued (struct overlay *ov, uint32_t child_rank)
{
    struct peer *c = ov ? child_lookup (ov, child_rank) : NULL;
    return c ? atomic_load (&c->queued) : 0;
}

int overlay_send_child (struct overlay *ov, uint32_t child_rank,
                        const flux_msg_t *msg)
{
    struct peer *c;

    if (!ov || !sendable (msg) || !(c = child_lookup (ov, child_rank))) {
        errno = EINVAL;
        return -1;
    }
    if (!ov->router || !is_up (c)) {
        errno = EHOSTUNREACH;
        return -1;
    }
    ov->router->dirty = true;
    if (send_msg (ov, c, ov->router->zs, c->id, msg) < 0) {
        if (errno == EHOSTUNREACH)
            child_lost (ov, c, "connection to child is gone", true);
        else if (errno == ENOBUFS)
            sendq_full (ov, c);
        return -1;
    }
    return 0;
}

enum overlay_peer_status overlay_child_status (struct overlay *ov,
                                               uint32_t child_rank,
                                               double *since)
{
    struct peer *c = ov ? child_lookup (ov, child_rank) : NULL;

    if (since)
        *since = c ? c->since : 0.;
    return c ? c->status : OVERLAY_PEER_OFFLINE;
}

enum overlay_peer_status overlay_parent_status (struct overlay *ov)
{
    if (!ov || ov->cfg.rank == 0)
        return OVERLAY_PEER_OFFLINE;
    return ov->parent.status;
}

int overlay_disconnect_child (struct overlay *ov, uint32_t child_rank,
                              const char *reason)
{
    struct peer *c;

    if (!ov || !(c = child_lookup (ov, child_rank))) {
        errno = EINVAL;
        return -1;
    }
    if (!ov->router || !is_up (c)) {
        errno = EHOSTUNREACH;
        return -1;
    }
    refuse (ov, c->id, OVERLAY_DISCONNECT_ADMIN);
    child_lost (ov, c, reason ? reason : "disconnected", true);
    return 0;
}
