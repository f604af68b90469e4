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
 *
 * Memory bounds (issue 25): every byte held for clients (send queues,
 * partial input, queue rings) is counted in server->held.  Past
 * max_held_bytes the clients holding the most are disconnected, largest
 * first, with a log line.  An event sent to many clients is encoded once
 * and its frame shared by their queues (usock_server_share).  A frame's
 * announced size is checked against the client's role before its bytes
 * are read, and a frame begun must be finished within frame_timeout_ms.
 */
#include "config.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "libflux/list.h"
#include "methods.h"
#include "strmap.h"
#include "usock.h"

#define RBUF_SIZE (256 * 1024)  /* shared read buffer */
#define WBUF_SIZE (256 * 1024)  /* shared encode buffer for small sends */
#define UBUF_MIN (16 * 1024)    /* first size of a per-client buffer */
#define UBUF_KEEP (64 * 1024)   /* an empty buffer larger than this is freed */
#define UBUF_MAP (1024 * 1024)  /* buffers this large are mremap()ed */
#define FRAME_MIN (16 * 1024)   /* a private queue frame: small ones coalesce */
#define QUEUE_KEEP 64           /* an empty queue ring larger than this goes */
#define IOV_BATCH 64            /* frames per sendmsg() */
#define TURN_BUDGET (4u << 20)  /* bytes written per loop turn, beyond which */
#define TURN_SMALL 4096         /* only frames this small go out at once */
#define ACCEPT_BATCH 64         /* accepts per listen callback */
#define BACKOFF_MS 100          /* accept pause when out of fds/memory */
#define READ_MAX (256u << 10)   /* bytes of a big frame read at once */
#define REAP_BUDGET_NS 1000000  /* time per loop turn for closing clients */
#define FLUSH_BUDGET_NS 1000000 /* time per loop turn for deferred flushes */
#ifndef FRAME_MAP
#define FRAME_MAP (64u << 10) /* frames this large are mappings */
#endif
#define REAP_STEP 16 /* frames a dying client drops between clock reads */
#define MAP_CACHE 16 /* freed frame mappings kept for reuse, at most */
#define MAP_CACHE_BYTES (4u << 20) /* and this many bytes of them */
#define UNMAP_CHUNK \
    (2u << 20)                /* a dead mapping is unmapped this much at once */
#define CUTLOG_BURST 5        /* clients cut logged in full per window */
#define CUTLOG_WINDOW_MS 1000 /* then one summary line per window */

/* A dead mapping: unmapping hundreds of MB at once takes tens of ms, so
 * the reaper unmaps it UNMAP_CHUNK at a time, its bytes counted in
 * server->held until they are gone. */
struct grave {
    struct grave *next;
    uint8_t *addr;
    size_t len;
};

struct ubuf {
    uint8_t *data;
    size_t off, len, cap; /* bytes in use are data[off..len) */
    bool mapped;          /* data is an anonymous mapping (cap >= UBUF_MAP) */
};

/* Encoded bytes waiting in send queues.  A frame encoded for a shared
 * message (usock_server_share) is referenced by every queue that holds it;
 * a private frame (refs == 1) may take more messages at its end.
 */
struct frame {
    unsigned refs;
    bool shared;   /* made by shared_frame(): counted in server->shared_held */
    bool mapped;   /* a mapping of its own (FRAME_MAP), else malloc'd */
    size_t maplen; /* the mapping's length, if mapped */
    size_t len, cap;
    uint8_t data[];
};

struct usock_client {
    struct usock_server *server;
    struct list_node node;     /* on server->clients, then server->closing */
    struct list_node ready;    /* on server->ready while frames wait */
    struct list_node partial;  /* on server->partial while a frame is due */
    struct list_node deferred; /* on server->deferred: flush next turn */
    uint64_t partial_start;    /* loop time (ms) the partial frame began */
    int fd;
    pid_t pid;
    uv_poll_t w;
    int events;         /* events w is started with (0: stopped) */
    bool paused;        /* complete frames buffered: reading paused */
    bool waiting;       /* readable, on server->ready for its read */
    uint64_t wait_turn; /* server->turn when it began waiting */
    bool closing;
    bool released; /* disconnected callback and aux destroy done */
    bool doomed;   /* on server->dying: to be closed by the reaper */
    bool counted;  /* a guest's: counted in server->guest_conns */
    bool mute;     /* a write found its peer gone: read until EOF, write
                      nothing more */
    struct flux_msg_cred cred;
    char uuid[37];
    struct ubuf in;
    size_t need;      /* bytes the partial frame in 'in' needs in all */
    struct frame **q; /* send queue: a ring of frames */
    size_t qhead, qcount, qsize;
    size_t qoff;    /* bytes of the head frame already sent */
    size_t qbytes;  /* bytes waiting in all */
    size_t sbytes;  /* of which in shared frames */
    size_t state;   /* the user's (usock_client_charge) */
    size_t charged; /* in.cap + ring + state: counted in server->held */
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
    uv_timer_t deadline_w;
    uv_prepare_t turn_w;
    size_t turn_bytes; /* written since the last turn began */
    struct list_node clients;
    struct list_node closing;
    struct list_node ready;
    struct list_node partial;  /* clients with a partial frame, oldest first */
    struct list_node deferred; /* clients whose flush waits for a turn */
    struct list_node dying;    /* doomed clients the reaper closes */
    struct grave *graves;      /* dead mappings the reaper unmaps */
    size_t count;
    struct strmap *guest_conns; /* guest uid -> its connections (unsigned *) */
    uint64_t guest_refused_logged; /* loop time (ms) of the last such line */
    unsigned long guest_refused;   /* refused since that line */
    int handles;                   /* initialized uv handles not yet closed */
    bool destroyed;
    bool enforcing;
    size_t held; /* bytes held for clients: frames, input buffers, rings */
    size_t shared_held;  /* of which in shared frames */
    size_t pending_free; /* what the dying clients should free (estimate) */
    uv_timer_t cutlog_w;
    uint64_t cutlog_start; /* loop time (ms) the window began */
    unsigned cutlog_count; /* lines logged in full in the window */
    unsigned long cutlog_dropped;
    size_t cutlog_bytes; /* held for the clients not logged in full */
    /* the owner's input turns (usock_server_read_turn) */
    uint64_t turn;          /* input turns begun */
    uint64_t read_deadline; /* this turn's: 0 while it has none */
    unsigned turn_reads;    /* clients read this turn */
    unsigned read_quota;    /* messages a client may deliver this turn (0:
                               USOCK_BATCH) */
    bool read_hold;
    struct usock_units units;
    const flux_msg_t *share_msg;
    struct frame *share_frame; /* its encoding, made on first use */
    uint8_t *rbuf;
    uint8_t *wbuf;
    struct frame *map_cache[MAP_CACHE]; /* freed mappings (frame_create) */
    unsigned map_cached;
    size_t map_cached_bytes;
};

static void server_log (struct usock_server *s, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static void server_log (struct usock_server *s, const char *fmt, ...)
{
    char text[512];
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
    if (ncap >= UBUF_MAP) {
        /* Large buffers (a big frame arriving) are mappings: mremap()
         * moves pages instead of copying them, and never holds the old
         * and the new buffer at once. */
        if (b->mapped)
            nd = mremap (b->data, b->cap, ncap, MREMAP_MAYMOVE);
        else if ((nd = mmap (NULL, ncap, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
                 != MAP_FAILED) {
            memcpy (nd, b->data, b->len);
            free (b->data);
        }
        if (nd == MAP_FAILED)
            return -1;
        b->mapped = true;
    }
    else if (!(nd = realloc (b->data, ncap)))
        return -1;
    b->data = nd;
    b->cap = ncap;
    return 0;
}

/* The capacity ubuf_reserve (b, room) would grow b to, or 0 if it would
 * not allocate. */
static size_t ubuf_next_cap (const struct ubuf *b, size_t room)
{
    size_t used = ubuf_used (b);
    size_t len = b->len;
    size_t ncap;

    if (b->cap - len >= room)
        return 0;
    if (b->off > 0 && b->off >= used) {
        len = used;
        if (b->cap - len >= room)
            return 0;
    }
    ncap = b->cap ? b->cap : UBUF_MIN;
    while (ncap - len < room)
        ncap *= 2;
    return ncap;
}

static void server_reap_start (struct usock_server *s);

/* Free b's memory; a large mapping goes to the reaper (struct grave). */
static void ubuf_free (struct usock_server *s, struct ubuf *b)
{
    struct grave *g;

    if (b->mapped && b->cap > UNMAP_CHUNK && (g = malloc (sizeof (*g)))) {
        g->addr = b->data;
        g->len = b->cap;
        g->next = s->graves;
        s->graves = g;
        s->held += b->cap; /* until unmapped; the owner's charge goes */
        server_reap_start (s);
    }
    else if (b->mapped)
        munmap (b->data, b->cap);
    else
        free (b->data);
    memset (b, 0, sizeof (*b));
}

static void ubuf_consume (struct usock_server *s, struct ubuf *b, size_t n)
{
    b->off += n;
    if (b->off == b->len) {
        b->off = b->len = 0;
        if (b->cap > UBUF_KEEP)
            ubuf_free (s, b);
    }
}

/* Frames and send queues.  server->held counts each frame once, however
 * many queues hold it, plus every client's input buffer and queue ring.
 */

/* A cached mapping of at least len bytes and at most twice that, taken
 * out of the cache; NULL if none. */
static struct frame *map_cache_take (struct usock_server *s, size_t len)
{
    unsigned best = MAP_CACHE;

    for (unsigned i = 0; i < s->map_cached; i++) {
        size_t m = s->map_cache[i]->maplen;
        if (m >= len && m / 2 <= len
            && (best == MAP_CACHE || m < s->map_cache[best]->maplen))
            best = i;
    }
    if (best == MAP_CACHE)
        return NULL;
    struct frame *f = s->map_cache[best];
    s->map_cache[best] = s->map_cache[--s->map_cached];
    s->map_cached_bytes -= f->maplen;
    return f;
}

/* Frames of FRAME_MAP bytes or more are mappings of their own, so
 * freeing one costs one munmap() of its pages: from the heap, freeing the
 * last of many 64 KB frames let malloc trim all the free memory at the
 * top of the heap at once (3 ms in one free, under the reaper's clock).
 * A few freed mappings (MAP_CACHE, MAP_CACHE_BYTES) are kept and reused:
 * a fresh mapping for every 64 KB event cost its mmap(), page faults and
 * munmap(), about +40 % of the broker's CPU time for 64 KB events to 4
 * readers. */
static struct frame *frame_create (struct usock_server *s, size_t cap)
{
    struct frame *f;
    bool mapped = sizeof (*f) + cap >= FRAME_MAP;
    size_t maplen = 0;

    if (mapped) {
        long page = sysconf (_SC_PAGESIZE);
        maplen = sizeof (*f) + cap;
        if (page > 0)
            maplen = (maplen + page - 1) / page * page;
        if (!(f = map_cache_take (s, maplen))) {
            void *p = mmap (NULL, maplen, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED)
                return NULL;
            f = p;
            f->maplen = maplen;
        }
    }
    else if (!(f = malloc (sizeof (*f) + cap)))
        return NULL;
    f->refs = 1;
    f->mapped = mapped;
    f->shared = false;
    f->len = 0;
    f->cap = cap;
    s->held += cap;
    return f;
}

static void frame_decref (struct usock_server *s, struct frame *f)
{
    if (f && --f->refs == 0) {
        s->held -= f->cap;
        if (f->shared)
            s->shared_held -= f->cap;
        if (f->mapped) {
            if (s->map_cached < MAP_CACHE
                && s->map_cached_bytes + f->maplen <= MAP_CACHE_BYTES) {
                s->map_cache[s->map_cached++] = f;
                s->map_cached_bytes += f->maplen;
            }
            else
                munmap (f, f->maplen);
        }
        else
            free (f);
    }
}

/* Bring c's share of server->held in step with its buffer and ring. */
static void client_recharge (struct usock_client *c)
{
    size_t now = c->in.cap + c->qsize * sizeof (c->q[0]) + c->state;

    c->server->held = c->server->held - c->charged + now;
    c->charged = now;
}

static struct frame *queue_tail (struct usock_client *c)
{
    if (c->qcount == 0)
        return NULL;
    return c->q[(c->qhead + c->qcount - 1) % c->qsize];
}

/* Append f (the caller's reference passes to the queue). */
static int queue_push (struct usock_client *c, struct frame *f)
{
    if (c->qcount == c->qsize) {
        size_t nsize = c->qsize ? 2 * c->qsize : 8;
        struct frame **nq;

        if (!(nq = malloc (nsize * sizeof (*nq))))
            return -1;
        for (size_t i = 0; i < c->qcount; i++)
            nq[i] = c->q[(c->qhead + i) % c->qsize];
        free (c->q);
        c->q = nq;
        c->qhead = 0;
        c->qsize = nsize;
    }
    c->q[(c->qhead + c->qcount) % c->qsize] = f;
    c->qcount++;
    client_recharge (c);
    return 0;
}

static void queue_pop (struct usock_client *c)
{
    struct frame *f = c->q[c->qhead];

    if (f->shared)
        c->sbytes -= f->len - c->qoff;
    frame_decref (c->server, f);
    c->qhead = (c->qhead + 1) % c->qsize;
    c->qoff = 0;
    if (--c->qcount == 0) {
        c->qhead = 0;
        if (c->qsize > QUEUE_KEEP) {
            free (c->q);
            c->q = NULL;
            c->qsize = 0;
            client_recharge (c);
        }
    }
}

/* Take n sent bytes off the front of the queue. */
static void queue_consume (struct usock_client *c, size_t n)
{
    c->qbytes -= n;
    while (n > 0) {
        struct frame *f = c->q[c->qhead];
        size_t left = f->len - c->qoff;

        if (n < left) {
            if (f->shared)
                c->sbytes -= n;
            c->qoff += n;
            break;
        }
        n -= left;
        queue_pop (c);
    }
}

/* Drop everything held for c (it is being closed). */
static void client_drop_buffers (struct usock_client *c)
{
    while (c->qcount > 0)
        queue_pop (c);
    free (c->q);
    c->q = NULL;
    c->qsize = 0;
    c->qbytes = 0;
    c->sbytes = 0;
    ubuf_free (c->server, &c->in);
    c->state = 0;
    client_recharge (c);
}

/* Clients */

static void server_free (struct usock_server *s);
static void guest_uncount (struct usock_client *c);
static void client_poll_cb (uv_poll_t *w, int status, int events);
static void server_idle_cb (uv_idle_t *w);
static void server_listen_cb (uv_poll_t *w, int status, int events);
static void server_deadline_cb (uv_timer_t *w);

static void handle_closed (struct usock_server *s)
{
    if (--s->handles == 0 && s->destroyed)
        server_free (s);
}

/* Start or stop the poll watcher to match what the client waits for. */
static void client_update_poll (struct usock_client *c)
{
    int events = 0;

    if ((c->closing || c->doomed))
        return;
    if (!c->paused)
        events |= UV_READABLE;
    if (c->qcount > 0 && !c->mute && !list_attached (&c->deferred))
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
    client_drop_buffers (c);
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
    list_del (&c->partial);
    list_del (&c->deferred);
    list_del (&c->node);
    list_add_tail (&s->closing, &c->node);
    if (!c->doomed)
        s->count--;
    guest_uncount (c);
    /* uv_close takes the fd out of the poll set now, so closing the fd
     * right away is safe and lets the peer see EOF at once.  Nothing more
     * is sent or read: what was held for the client is freed now. */
    uv_close ((uv_handle_t *)&c->w, client_close_cb);
    close (c->fd);
    c->fd = -1;
    client_drop_buffers (c);
}

/* Memory held for c: its queued bytes, input buffer, queue ring and the
 * user's state. */
static size_t client_weight (const struct usock_client *c)
{
    return c->qbytes + c->charged;
}

static int weight_cmp (const void *a, const void *b)
{
    size_t wa = client_weight (*(struct usock_client *const *)a);
    size_t wb = client_weight (*(struct usock_client *const *)b);
    return wa < wb ? 1 : wa > wb ? -1 : 0;
}

/* Lines about clients cut off: any client can cause them, thousands at
 * once (5,000 subscribers over the limit), and they would push everything
 * else out of the log ring.  The first CUTLOG_BURST of a window are
 * logged in full, then one line per window says how many more. */
static void cutlog_flush (struct usock_server *s)
{
    if (s->cutlog_dropped > 0)
        server_log (s,
                    "%lu more clients cut in the last %.1f s: %zu bytes "
                    "were held for them",
                    s->cutlog_dropped,
                    (uv_now (s->loop) - s->cutlog_start) / 1000.,
                    s->cutlog_bytes);
    s->cutlog_start = uv_now (s->loop);
    s->cutlog_count = 0;
    s->cutlog_dropped = 0;
    s->cutlog_bytes = 0;
}

static void cutlog_timer_cb (uv_timer_t *w)
{
    cutlog_flush (w->data);
}

static void client_cut_log (struct usock_client *c, size_t bytes,
                            const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static void client_cut_log (struct usock_client *c, size_t bytes,
                            const char *fmt, ...)
{
    struct usock_server *s = c->server;
    char text[400];
    va_list ap;

    if (uv_now (s->loop) - s->cutlog_start >= CUTLOG_WINDOW_MS)
        cutlog_flush (s);
    if (s->cutlog_count >= CUTLOG_BURST) {
        s->cutlog_dropped++;
        s->cutlog_bytes += bytes;
        if (!uv_is_active ((uv_handle_t *)&s->cutlog_w))
            uv_timer_start (
                &s->cutlog_w, cutlog_timer_cb,
                s->cutlog_start + CUTLOG_WINDOW_MS - uv_now (s->loop), 0);
        return;
    }
    s->cutlog_count++;
    va_start (ap, fmt);
    vsnprintf (text, sizeof (text), fmt, ap);
    va_end (ap);
    server_log (s, "client %s (uid %u, pid %d): %s: disconnecting", c->uuid,
                c->cred.userid, (int)c->pid, text);
}

static void server_idle_start (struct usock_server *s);

static void server_reap_start (struct usock_server *s)
{
    server_idle_start (s);
}

/* Cut c off now, cheaply: nothing more is read from it or queued for it
 * (usock_client_send fails with EPIPE), and the reaper closes it and
 * frees what it holds within a time budget per loop turn.  Closing
 * thousands of clients in one turn (their queues hold thousands of frame
 * references each) stalled the broker for 100 ms. */
static void client_doom (struct usock_client *c)
{
    struct usock_server *s = c->server;

    if (c->closing || c->doomed)
        return;
    c->doomed = true;
    list_del (&c->ready);
    list_del (&c->partial);
    list_del (&c->deferred);
    list_del (&c->node);
    list_add_tail (&s->dying, &c->node);
    s->count--;
    guest_uncount (c);
    server_reap_start (s);
}

/* Drop what dying client c holds, the clock read after each frame freed
 * and every REAP_STEP frames (the last reference to a shared frame frees
 * it: the last of 5,000 cut clients freed about 1,000 frames of 64 KB,
 * 2 ms in one go, and 16 of them took up to 0.9 ms).  1 if the clock
 * passed deadline before its queue was empty. */
static int reap_queue (struct usock_client *c, uint64_t deadline)
{
    unsigned n = 0;

    while (c->qcount > 0) {
        struct frame *f = c->q[c->qhead];
        bool freed = f->refs == 1;
        c->qbytes -= f->len - c->qoff;
        queue_pop (c);
        if ((freed || ++n % REAP_STEP == 0) && c->qcount > 0
            && uv_hrtime () >= deadline)
            return 1;
    }
    return 0;
}

/* Close dying clients and unmap dead buffers until the clock passes
 * deadline (read after each, the first always done: closing one client
 * frees thousands of frame references, so its queue is dropped in steps
 * first).  Its disconnected callback runs here too, within the budget,
 * not from the close callback after the turn's budgeted work.  1 if
 * work is left for the next turn. */
static int server_reap (struct usock_server *s, uint64_t deadline)
{
    unsigned n = 0;

    while (!list_empty (&s->dying) || s->graves) {
        struct usock_client *c;
        if (n++ > 0 && uv_hrtime () >= deadline)
            return 1;
        if (s->graves) {
            struct grave *g = s->graves;
            size_t len = g->len < UNMAP_CHUNK ? g->len : UNMAP_CHUNK;
            /* from the end: the rest stays one mapping */
            munmap (g->addr + g->len - len, len);
            g->len -= len;
            s->held -= len;
            if (g->len == 0) {
                s->graves = g->next;
                free (g);
            }
            continue;
        }
        c = list_entry (s->dying.next, struct usock_client, node);
        if (reap_queue (c, deadline))
            return 1;
        s->units.reaped++;
        usock_client_disconnect (c);
        client_release (c);
        if (s->destroyed)
            return 0;
    }
    s->pending_free = 0;
    return 0;
}

static void client_evict (struct usock_client *c)
{
    struct usock_server *s = c->server;

    client_cut_log (c, client_weight (c),
                    "%zu bytes held for it (%zu unread, %zu buffered "
                    "input, %zu routing state): clients hold %zu bytes in "
                    "all, over the %zu byte limit",
                    client_weight (c), c->qbytes, c->in.cap, c->state, s->held,
                    s->policy.max_held_bytes);
    client_doom (c);
}

/* Keep server->held under the limit: past it, cut off the clients that
 * hold the most (the slowest readers, the largest partial frames).
 * They are closed by the reaper, over several loop turns, so what they
 * will free is estimated: all they hold alone, and of the frames shared
 * between queues (events) all but those the largest holder left still
 * holds (clients subscribed to the same events hold the same frames, the
 * slowest the most).  Once the reaper is done the real sum is checked
 * again.
 */
static void server_enforce (struct usock_server *s)
{
    struct usock_client **v;
    struct list_node *pos;
    size_t n = 0, over, freed = 0;
    size_t *smax;

    if (s->enforcing || s->held <= s->policy.max_held_bytes + s->pending_free)
        return;
    s->enforcing = true;
    s->units.enforced++;
    over = s->held - s->pending_free - s->policy.max_held_bytes;
    v = malloc ((s->count + 1) * sizeof (*v));
    smax = malloc ((s->count + 1) * sizeof (*smax));
    if (v && smax) {
        for (pos = s->clients.next; pos != &s->clients; pos = pos->next) {
            struct usock_client *c
                = list_entry (pos, struct usock_client, node);
            if (client_weight (c) > 0 && n < s->count)
                v[n++] = c;
        }
        qsort (v, n, sizeof (*v), weight_cmp);
        /* smax[i]: the most shared bytes held by one of v[i..n) */
        smax[n] = 0;
        for (size_t i = n; i > 0; i--)
            smax[i - 1]
                = v[i - 1]->sbytes > smax[i] ? v[i - 1]->sbytes : smax[i];
        for (size_t i = 0; i < n; i++) {
            size_t est;
            freed += client_weight (v[i]) - v[i]->sbytes;
            client_evict (v[i]);
            est = freed + (s->shared_held - smax[i + 1]);
            if (est >= over) {
                freed = est;
                break;
            }
            if (i == n - 1)
                freed = est;
        }
        s->pending_free += freed;
    }
    else {
        /* out of memory: cut the largest holder and free it now */
        struct usock_client *max = NULL;
        for (pos = s->clients.next; pos != &s->clients; pos = pos->next) {
            struct usock_client *c
                = list_entry (pos, struct usock_client, node);
            if (client_weight (c) > 0
                && (!max || client_weight (c) > client_weight (max)))
                max = c;
        }
        if (max) {
            client_evict (max);
            usock_client_disconnect (max);
        }
    }
    free (v);
    free (smax);
    s->enforcing = false;
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

static size_t client_frame_max (const struct usock_client *c)
{
    const struct usock_policy *p = &c->server->policy;

    return (c->cred.rolemask & FLUX_ROLE_OWNER) ? p->owner_frame_max
                                                : p->guest_frame_max;
}

/* A frame is partly in: start its clock unless it is already running. */
static void client_partial_begin (struct usock_client *c)
{
    struct usock_server *s = c->server;

    if (list_attached (&c->partial))
        return;
    c->partial_start = uv_now (s->loop);
    list_add_tail (&s->partial, &c->partial);
    if (!uv_is_active ((uv_handle_t *)&s->deadline_w))
        uv_timer_start (&s->deadline_w, server_deadline_cb,
                        s->policy.frame_timeout_ms, 0);
}

/* Disconnect clients that started a frame longer ago than the timeout
 * and have not finished it.  The list is in order of start time. */
static void server_deadline_cb (uv_timer_t *w)
{
    struct usock_server *s = w->data;
    uint64_t now = uv_now (s->loop);
    uint64_t limit = s->policy.frame_timeout_ms;

    while (!list_empty (&s->partial)) {
        struct usock_client *c
            = list_entry (s->partial.next, struct usock_client, partial);
        uint64_t due = c->partial_start + limit;

        if (due > now) {
            uv_timer_start (&s->deadline_w, server_deadline_cb, due - now, 0);
            return;
        }
        client_cut_log (c, client_weight (c),
                        "a frame of %zu bytes was begun %.1f s ago and is "
                        "still incomplete (%zu bytes in)",
                        c->need, (now - c->partial_start) / 1000.,
                        ubuf_used (&c->in));
        client_doom (c);
    }
}

/* Decode and deliver up to USOCK_BATCH frames from buf (the turn's
 * share, server->read_quota, while clients wait for their reads).  Returns the
 * bytes consumed, or -1 if the client was closed meanwhile.  *more is set when
 * the batch limit stopped it with bytes left over.  A frame whose announced
 * size is over the client's limit closes the client before its bytes are
 * read; one left incomplete starts its clock (frame_timeout_ms).
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

        if (count == USOCK_BATCH
            || (s->read_quota > 0 && (unsigned)count >= s->read_quota)) {
            *more = true;
            break;
        }
        n = flux_msg_frame_decode (buf + off, size - off, &msg, &need);
        if (n < 0) {
            client_cut_log (c, client_weight (c), "bad frame (%s)",
                            strerror (errno));
            usock_client_disconnect (c);
            return -1;
        }
        if (n == 0) {
            if (need > client_frame_max (c)) {
                client_cut_log (c, client_weight (c),
                                "announces a frame of %zu bytes, over the "
                                "%zu byte limit of its role",
                                need, client_frame_max (c));
                usock_client_disconnect (c);
                return -1;
            }
            c->need = need;
            client_partial_begin (c);
            break;
        }
        off += n;
        count++;
        s->units.msgs++;
        list_del (&c->partial); /* a frame completed: its clock stops */
        client_stamp (c, msg);
        s->ops.message (c, msg, s->arg);
        if ((c->closing || c->doomed))
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
    ubuf_consume (c->server, &c->in, n);
    client_recharge (c);
    client_set_paused (c, more);
}

/* The client went away (EOF, or its socket failed): the reaper closes it
 * within the owner's turn budget, like a client cut off.  5,000
 * subscribers that exit at once, each holding a queue of shared frames,
 * were closed in one turn: their queues dropped while reading, their
 * disconnected callbacks from the close callbacks, 6-12 ms of CPU. */
static void client_gone (struct usock_client *c)
{
    if (c->closing || c->doomed)
        return;
    uv_poll_stop (&c->w); /* its socket stays readable (EOF) meanwhile */
    c->events = 0;
    client_doom (c);
}

static void client_read_error (struct usock_client *c, ssize_t n)
{
    if (n < 0 && errno != ECONNRESET)
        server_log (c->server, "client %s (uid %u, pid %d): read: %s", c->uuid,
                    c->cred.userid, (int)c->pid, strerror (errno));
    client_gone (c);
}

/* Grow the input buffer for 'room' more bytes, within the server's
 * limit.  -1 if the client was closed. */
static int client_in_reserve (struct usock_client *c, size_t room)
{
    struct usock_server *s = c->server;
    size_t ncap = ubuf_next_cap (&c->in, room);

    if (ncap > 0) {
        /* make room under the limit before growing: for the new buffer
         * and, unless it is mremap()ed, the old one still held while
         * copying */
        size_t extra = ncap - (c->in.mapped ? c->in.cap : 0);
        s->held += extra;
        server_enforce (s);
        s->held -= extra;
        if ((c->closing || c->doomed))
            return -1;
    }
    if (ubuf_reserve (&c->in, room) < 0) {
        server_log (c->server, "client %s: out of memory, disconnecting",
                    c->uuid);
        usock_client_disconnect (c);
        return -1;
    }
    client_recharge (c);
    server_enforce (c->server);
    return c->closing ? -1 : 0;
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
        if (client_in_reserve (c, left) < 0)
            return;
        memcpy (c->in.data + c->in.len, s->rbuf + done, left);
        c->in.len += left;
    }
    client_set_paused (c, more);
}

/* A partial frame is buffered: read the rest into the client's buffer,
 * growing it only once full, and at most twofold (a frame's claimed length
 * costs memory only as its bytes actually arrive: the buffer is never more
 * than twice what arrived).
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
    if (b->len == b->cap || b->cap - b->len < UBUF_MIN / 4) {
        want = c->need > used ? c->need - used : UBUF_MIN;
        if (want > used && used >= UBUF_MIN)
            want = used;
        if (client_in_reserve (c, want) < 0)
            return;
    }
    /* a big frame arrives READ_MAX at a time: one recv() of many MB into
     * fresh pages took several ms */
    n = recv (c->fd, b->data + b->len,
              b->cap - b->len < READ_MAX ? b->cap - b->len : READ_MAX,
              MSG_DONTWAIT);
    if (n <= 0) {
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        client_read_error (c, n);
        return;
    }
    b->len += n;
    client_deliver_buffered (c);
}

/* A write failed because the peer closed its end (or shut it for
 * reading).  What the peer sent before closing may still wait unread in
 * the socket: a process that sends a last message without waiting for
 * its answer and exits.  Dooming the client here lost that message, so
 * the client only stops being written to (its queue is dropped with it by
 * the reaper) and is read until EOF, which closes it as usual. */
static void client_mute (struct usock_client *c)
{
    c->mute = true;
    list_del (&c->deferred);
    client_update_poll (c);
}

/* Flush c at the next turn: stop watching its writability meanwhile (a
 * level-triggered watch on thousands of writable sockets would report
 * them all on every turn). */
static void client_defer (struct usock_client *c)
{
    struct usock_server *s = c->server;

    if (!list_attached (&c->deferred))
        list_add_tail (&s->deferred, &c->deferred);
    server_idle_start (s);
    client_update_poll (c);
}

/* Write what the socket takes of the send queue.  -1 if c was closed. */
static int client_flush (struct usock_client *c)
{
    struct usock_server *s = c->server;
    struct iovec iov[IOV_BATCH];
    struct msghdr mh = {.msg_iov = iov};
    size_t i;
    ssize_t n;

    /* Past the turn's budget, large frames wait for the next turn (the
     * socket stays writable): a fan-out of large events to thousands of
     * clients is spread over turns, and other clients are served between. */
    if (c->mute)
        return 0;
    if (s->turn_bytes >= TURN_BUDGET && c->qbytes > TURN_SMALL) {
        client_defer (c);
        return 0;
    }

    for (i = 0; i < c->qcount && i < IOV_BATCH; i++) {
        struct frame *f = c->q[(c->qhead + i) % c->qsize];
        size_t off = i == 0 ? c->qoff : 0;
        iov[i].iov_base = f->data + off;
        iov[i].iov_len = f->len - off;
    }
    mh.msg_iovlen = i;
    s->units.flushes++;
    n = sendmsg (c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
        if (errno == EAGAIN || errno == EINTR)
            return 0;
        if (errno == EPIPE || errno == ECONNRESET) {
            client_mute (c);
            return 0;
        }
        server_log (c->server, "client %s (uid %u, pid %d): write: %s", c->uuid,
                    c->cred.userid, (int)c->pid, strerror (errno));
        client_gone (c);
        return -1;
    }
    s->turn_bytes += n;
    queue_consume (c, n);
    client_update_poll (c);
    return 0;
}

static uint64_t read_clock (struct usock_server *s)
{
    return s->policy.turn_clock ? s->policy.turn_clock () : uv_hrtime ();
}

/* Whether a client found readable now waits for the next input turn:
 * the owner's turn budget is spent (and someone was read), or the owner
 * holds the input. */
static bool read_postponed (struct usock_server *s)
{
    if (!s->policy.owner_turns || s->read_deadline == 0)
        return false;
    if (s->read_hold)
        return true;
    return s->turn_reads > 0 && read_clock (s) >= s->read_deadline;
}

/* c is readable but waits for its read on the round-robin list (reading
 * paused meanwhile). */
static void client_wait_read (struct usock_client *c)
{
    struct usock_server *s = c->server;

    c->waiting = true;
    c->wait_turn = s->turn;
    c->paused = true;
    if (!list_attached (&c->ready))
        list_add_tail (&s->ready, &c->ready);
    client_update_poll (c);
}

static void client_poll_cb (uv_poll_t *w, int status, int events)
{
    struct usock_client *c = w->data;

    if (c->doomed) {
        /* the reaper has not come to it yet: stop watching (thousands
         * of doomed sockets may turn readable at once, e.g. when their
         * process exits; closing them here would undo the reaper) */
        uv_poll_stop (&c->w);
        c->events = 0;
        return;
    }
    if (status < 0) {
        /* libuv reports a socket error as a failed poll and stops the
         * watcher: POLLERR, ECONNRESET when the peer closed with bytes
         * of ours unread.  What it sent before closing is still there:
         * read on (the error comes after the data). */
        c->events = 0;
        client_mute (c);
        if (c->closing || c->doomed)
            return;
        events = UV_READABLE;
    }
    if ((events & UV_WRITABLE) && client_flush (c) < 0)
        return;
    if ((events & UV_READABLE) && !c->paused) {
        struct usock_server *s = c->server;
        if (read_postponed (s)) {
            client_wait_read (c);
            return;
        }
        s->turn_reads++;
        s->units.reads++;
        client_read (c);
    }
}

/* Reap until deadline; once all are gone, check the real sum.  1 if work
 * is left. */
static int server_reap_turn (struct usock_server *s, uint64_t deadline)
{
    int more = server_reap (s, deadline);
    if (!more && !s->destroyed)
        server_enforce (s);
    return more;
}

/* Continue clients whose last batch stopped at the limit, one batch each
 * per loop turn.  A client is taken off the list before its callbacks
 * run, so they may disconnect any client (or destroy the server).
 */
static void server_idle_cb (uv_idle_t *w)
{
    struct usock_server *s = w->data;
    struct list_node turn;
    int more = 0;

    /* an owner_turns server's are served by usock_server_read_turn() */
    if (!s->policy.owner_turns)
        list_move_all (&turn, &s->ready);
    else
        list_init (&turn);
    while (!list_empty (&turn)) {
        struct usock_client *c;
        c = list_entry (turn.next, struct usock_client, ready);
        list_del (&c->ready);
        client_deliver_buffered (c);
        if (s->destroyed)
            return;
    }
    if (!s->policy.owner_turns && (!list_empty (&s->dying) || s->graves)) {
        more = server_reap_turn (s, uv_hrtime () + REAP_BUDGET_NS);
        if (s->destroyed)
            return;
    }
    if (!more && (s->policy.owner_turns || list_empty (&s->ready))
        && list_empty (&s->deferred) && list_empty (&s->dying) && !s->graves)
        uv_idle_stop (&s->idle_w);
}

/* The encoding of the shared message, made once. */
static struct frame *shared_frame (struct usock_server *s, size_t size)
{
    struct frame *f = s->share_frame;

    if (!f) {
        if (!(f = frame_create (s, size)))
            return NULL;
        (void)flux_msg_frame_encode (s->share_msg, f->data, size);
        f->len = size;
        f->shared = true;
        s->shared_held += f->cap;
        s->share_frame = f;
    }
    return f;
}

/* Queue the last 'size - sent' bytes of msg's frame.  'enc' holds the
 * encoding if made already: a frame (shared or not: its reference is
 * taken) or NULL (then msg is encoded here; 'sent' must be 0 then).
 */
static int client_queue (struct usock_client *c, const flux_msg_t *msg,
                         size_t size, struct frame *enc, const uint8_t *bytes,
                         size_t sent)
{
    struct usock_server *s = c->server;
    size_t rest = size - sent;
    struct frame *t;

    if (enc) {
        enc->refs++;
        if (queue_push (c, enc) < 0) {
            frame_decref (s, enc);
            return -1;
        }
        if (c->qcount == 1)
            c->qoff = sent;
        if (enc->shared)
            c->sbytes += rest;
    }
    else if ((t = queue_tail (c)) && t->refs == 1 && t->cap - t->len >= rest) {
        if (bytes)
            memcpy (t->data + t->len, bytes + sent, rest);
        else
            (void)flux_msg_frame_encode (msg, t->data + t->len, rest);
        t->len += rest;
    }
    else {
        if (!(t = frame_create (s, rest > FRAME_MIN ? rest : FRAME_MIN)))
            return -1;
        if (bytes)
            memcpy (t->data, bytes + sent, rest);
        else
            (void)flux_msg_frame_encode (msg, t->data, rest);
        t->len = rest;
        if (queue_push (c, t) < 0) {
            frame_decref (s, t);
            return -1;
        }
    }
    c->qbytes += rest;
    return 0;
}

/* Bytes wait for writability: queue behind them (no syscall). */
static int client_enqueue (struct usock_client *c, const flux_msg_t *msg,
                           size_t size, bool shared)
{
    struct usock_server *s = c->server;
    size_t total = client_weight (c) + size;
    struct frame *f = NULL;

    if (c->qcount > 0 && total > s->policy.max_sendq_bytes) {
        client_cut_log (c, client_weight (c),
                        "%zu bytes unread, over the %zu byte send queue "
                        "limit",
                        total, s->policy.max_sendq_bytes);
        client_doom (c);
        errno = EPIPE;
        return -1;
    }
    if (shared && !(f = shared_frame (s, size)))
        return -1;
    return client_queue (c, msg, size, f, NULL, 0);
}

/* Nothing waits: encode (small frames into the shared buffer, a shared
 * message once for all), write what the socket takes and queue the rest.
 */
static int client_send_now (struct usock_client *c, const flux_msg_t *msg,
                            size_t size, bool shared)
{
    struct usock_server *s = c->server;
    struct frame *own = NULL, *enc = NULL;
    const uint8_t *buf;
    ssize_t n;
    int rc = 0;

    if (shared) {
        if (!(enc = shared_frame (s, size)))
            return -1;
        buf = enc->data;
    }
    else if (size <= WBUF_SIZE) {
        (void)flux_msg_frame_encode (msg, s->wbuf, size);
        buf = s->wbuf;
    }
    else {
        if (!(own = frame_create (s, size)))
            return -1;
        (void)flux_msg_frame_encode (msg, own->data, size);
        own->len = size;
        enc = own;
        buf = own->data;
    }
    n = send (c->fd, buf, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0)
        s->turn_bytes += n;
    if (n < 0) {
        if (errno != EAGAIN && errno != EINTR) {
            frame_decref (s, own);
            if (errno == EPIPE || errno == ECONNRESET)
                client_mute (c);
            else
                client_gone (c);
            errno = EPIPE;
            return -1;
        }
        n = 0;
    }
    if ((size_t)n < size
        && client_queue (c, msg, size, enc, enc ? NULL : buf, n) < 0) {
        /* part of a frame may be on the wire: the stream is lost */
        server_log (s, "client %s: out of memory, disconnecting", c->uuid);
        usock_client_disconnect (c);
        errno = ENOMEM;
        rc = -1;
    }
    frame_decref (s, own);
    client_update_poll (c);
    return rc;
}

int usock_client_send (struct usock_client *c, const flux_msg_t *msg)
{
    struct usock_server *s;
    bool shared;
    ssize_t size;
    int rc;

    if (!c || !msg) {
        errno = EINVAL;
        return -1;
    }
    if (c->closing || c->doomed || c->mute) {
        errno = EPIPE;
        return -1;
    }
    s = c->server;
    shared = s->share_msg && msg == s->share_msg;
    if (shared && s->share_frame)
        size = s->share_frame->len; /* encoded once, sized once */
    else if ((size = flux_msg_frame_size (msg)) < 0)
        return -1;
    if (c->qcount > 0)
        rc = client_enqueue (c, msg, size, shared);
    else if (s->turn_bytes >= TURN_BUDGET && size > TURN_SMALL) {
        if ((rc = client_enqueue (c, msg, size, shared)) == 0)
            client_defer (c);
    }
    else
        rc = client_send_now (c, msg, size, shared);
    if (rc == 0) {
        server_enforce (s);
        if ((c->closing || c->doomed)) {
            errno = EPIPE;
            return -1;
        }
    }
    return rc;
}

void usock_server_share (struct usock_server *s, const flux_msg_t *msg)
{
    if (!s || (msg && msg == s->share_msg))
        return; /* already shared: keep its encoding */
    frame_decref (s, s->share_frame);
    s->share_frame = NULL;
    s->share_msg = msg;
}

size_t usock_server_held (struct usock_server *s)
{
    return s ? s->held : 0;
}

int usock_client_charge (struct usock_client *c, ssize_t bytes)
{
    if (!c) {
        errno = EINVAL;
        return -1;
    }
    if (bytes < 0) {
        size_t d = (size_t)-bytes;
        c->state = d > c->state ? 0 : c->state - d;
        client_recharge (c);
        return 0;
    }
    if (c->closing || c->doomed) {
        errno = EPIPE;
        return -1;
    }
    if (client_weight (c) + (size_t)bytes > c->server->policy.max_sendq_bytes) {
        errno = ENOSPC;
        return -1;
    }
    c->state += (size_t)bytes;
    client_recharge (c);
    server_enforce (c->server);
    return 0;
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

pid_t usock_client_pid (struct usock_client *c)
{
    return c ? c->pid : -1;
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

/* One more (delta 1) or one fewer (-1) connection of guest uid. */
static void guest_count (struct usock_server *s, uint32_t uid, int delta)
{
    char key[16];
    unsigned *n;

    snprintf (key, sizeof (key), "%u", (unsigned)uid);
    if (!(n = strmap_get (s->guest_conns, key))) {
        if (delta < 0 || !(n = calloc (1, sizeof (*n)))
            || strmap_put (s->guest_conns, key, n) < 0) {
            free (n);
            return;
        }
    }
    if (delta > 0)
        (*n)++;
    else if (--*n == 0)
        (void)strmap_delete (s->guest_conns, key);
}

static unsigned guest_conns (struct usock_server *s, uint32_t uid)
{
    char key[16];
    unsigned *n;

    snprintf (key, sizeof (key), "%u", (unsigned)uid);
    return (n = strmap_get (s->guest_conns, key)) ? *n : 0;
}

/* Client c is going: it no longer counts for its uid. */
static void guest_uncount (struct usock_client *c)
{
    if (c->counted) {
        c->counted = false;
        guest_count (c->server, c->cred.userid, -1);
    }
}

/* A guest that holds max_guest_conns connections is refused another
 * (EMFILE: it has too many open), one line a second at most. */
static void refuse_busy (struct usock_server *s, int fd, uint32_t uid)
{
    uint8_t byte = EMFILE;
    uint64_t now = uv_now (s->loop);

    s->guest_refused++;
    if (s->guest_refused_logged == 0 || now - s->guest_refused_logged >= 1000) {
        server_log (s,
                    "refused a connection of uid %u: it holds %u "
                    "connections (broker.guest-connection-limit)%s",
                    uid, s->policy.max_guest_conns,
                    s->guest_refused > 1 ? ", and others since the last line"
                                         : "");
        s->guest_refused_logged = now;
        s->guest_refused = 0;
    }
    (void)send (fd, &byte, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    close (fd);
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
    list_init (&c->partial);
    list_init (&c->deferred);
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
    if (!(cred.rolemask & FLUX_ROLE_OWNER)
        && guest_conns (s, uc.uid) >= s->policy.max_guest_conns) {
        refuse_busy (s, fd, uc.uid);
        return;
    }
    if (!(c = client_create (s, fd, cred))) {
        server_log (s, "uid %u: cannot set up client: %s", uc.uid,
                    strerror (errno));
        close (fd);
        return;
    }
    if (!(cred.rolemask & FLUX_ROLE_OWNER)) {
        guest_count (s, uc.uid, 1);
        c->counted = true;
    }
    c->pid = uc.pid;
    c->released = true; /* no disconnected callback before connected */
    /* A fresh socket always takes one byte; failure means the peer left. */
    if (send (fd, &byte, 1, MSG_NOSIGNAL | MSG_DONTWAIT) != 1) {
        usock_client_disconnect (c);
        return;
    }
    client_update_poll (c);
    if ((c->closing || c->doomed))
        return;
    c->released = false;
    if (s->ops.connected)
        s->ops.connected (c, s->arg);
}

/* Flush deferred clients, oldest first, until the clock passes deadline
 * (read after every client, the first always served: one sendmsg() of a
 * full socket's worth took up to 0.5 ms on a loaded machine) or
 * TURN_BUDGET bytes went out this turn.  Those left keep their order,
 * ahead of any deferred since. */
static bool server_flush (struct usock_server *s, uint64_t deadline)
{
    struct list_node turn;
    bool first = true;

    list_move_all (&turn, &s->deferred);
    while (!list_empty (&turn)) {
        struct usock_client *c
            = list_entry (turn.next, struct usock_client, deferred);
        if (s->turn_bytes >= TURN_BUDGET
            || (!first && uv_hrtime () >= deadline)) {
            list_splice_tail (&turn, &s->deferred);
            list_move_all (&s->deferred, &turn);
            break;
        }
        first = false;
        list_del (&c->deferred);
        if (client_flush (c) == 0)
            client_update_poll (c);
    }
    return !list_empty (&s->deferred);
}

bool usock_server_turn (struct usock_server *s, uint64_t deadline)
{
    int more = 0;

    if (!s || s->destroyed)
        return false;
    s->turn_bytes = 0; /* the owner's turn begins */
    /* the cut first (their memory still counts), then at least one
     * deferred client */
    if (!list_empty (&s->dying) || s->graves)
        more = server_reap_turn (s, deadline);
    if (s->destroyed)
        return false;
    return server_flush (s, deadline) || more;
}

/* Serve the clients that wait for a read, or whose last batch stopped
 * at its limit, oldest first, until the clock passes deadline (the
 * first always served).  Those left keep their place, ahead of any that
 * begin waiting later in the turn. */
bool usock_server_read_turn (struct usock_server *s, uint64_t deadline,
                             unsigned room)
{
    struct list_node *n, turn;
    unsigned waiting = 0;

    if (!s || s->destroyed)
        return false;
    if (room > 0)
        s->turn++; /* read_wait_max counts the turns that read */
    s->turn_reads = 0;
    s->read_deadline = deadline ? deadline : 1;
    s->read_hold = room == 0;
    /* while clients wait, each delivers its share of the room a turn, so
     * that all are served in it: one with a single request is not kept
     * behind the batches of many that flood */
    for (n = s->ready.next; n != &s->ready && waiting < USOCK_BATCH;
         n = n->next)
        waiting++;
    if (room > USOCK_BATCH)
        room = USOCK_BATCH;
    s->read_quota = waiting > 1 ? room / waiting : room;
    if (s->read_quota == 0)
        s->read_quota = 1;
    /* a client served goes back to the end of s->ready if it has more:
     * this turn serves only those that waited when it began */
    list_move_all (&turn, &s->ready);
    while (!list_empty (&turn) && !s->destroyed) {
        struct usock_client *c
            = list_entry (turn.next, struct usock_client, ready);
        if (room == 0
            || (s->turn_reads > 0 && read_clock (s) >= s->read_deadline)) {
            /* those left stay first in line */
            list_splice_tail (&turn, &s->ready);
            list_move_all (&s->ready, &turn);
            break;
        }
        list_del (&c->ready);
        s->turn_reads++;
        if (c->waiting) {
            uint64_t waited = s->turn - c->wait_turn;
            if (waited > s->units.read_wait_max)
                s->units.read_wait_max = waited;
            c->waiting = false;
            c->paused = false;
            s->units.reads++;
            client_read (c);
            if (!c->closing && !c->doomed && !c->paused)
                client_update_poll (c);
        }
        else
            client_deliver_buffered (c);
    }
    return !s->destroyed && !list_empty (&s->ready);
}

void usock_server_read_hold (struct usock_server *s, bool hold)
{
    if (s)
        s->read_hold = hold;
}

void usock_server_units (struct usock_server *s, struct usock_units *u,
                         bool clear_max)
{
    if (!s) {
        memset (u, 0, sizeof (*u));
        return;
    }
    *u = s->units;
    if (clear_max)
        s->units.read_wait_max = 0;
}

static void server_turn_cb (uv_prepare_t *w)
{
    struct usock_server *s = w->data;

    if (s->policy.owner_turns)
        return; /* usock_server_turn() begins the turn */
    s->turn_bytes = 0;
    /* TURN_BUDGET bytes or FLUSH_BUDGET_NS, whichever comes first (at
     * the start of a fan-out every socket takes 200 KB, and the kernel's
     * copying of 4 MB took several ms on a loaded machine) */
    (void)server_flush (s, uv_hrtime () + FLUSH_BUDGET_NS);
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
    while (s->map_cached > 0) {
        struct frame *f = s->map_cache[--s->map_cached];
        munmap (f, f->maplen);
    }
    free (s->path);
    free (s->rbuf);
    free (s->wbuf);
    strmap_destroy (s->guest_conns);
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
    if (s->policy.max_guest_conns == 0)
        s->policy.max_guest_conns = usock_guest_conns_default ();
    if (s->policy.max_sendq_bytes == 0)
        s->policy.max_sendq_bytes = USOCK_SENDQ_DEFAULT;
    if (s->policy.max_held_bytes == 0)
        s->policy.max_held_bytes = usock_held_default ();
    if (s->policy.owner_frame_max == 0)
        s->policy.owner_frame_max = FLUX_MSG_FRAME_PREFIX + FLUX_MSG_FRAME_MAX;
    if (s->policy.guest_frame_max == 0)
        s->policy.guest_frame_max = USOCK_GUEST_FRAME_DEFAULT;
    if (s->policy.frame_timeout_ms == 0)
        s->policy.frame_timeout_ms = USOCK_FRAME_TIMEOUT_DEFAULT;
    s->ops = *ops;
    s->arg = arg;
    list_init (&s->clients);
    list_init (&s->closing);
    list_init (&s->ready);
    list_init (&s->partial);
    list_init (&s->deferred);
    list_init (&s->dying);
    if (!(s->path = strdup (path)) || !(s->rbuf = malloc (RBUF_SIZE))
        || !(s->wbuf = malloc (WBUF_SIZE))
        || !(s->guest_conns = strmap_create (free))) {
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
    uv_timer_init (loop, &s->deadline_w);
    uv_prepare_init (loop, &s->turn_w);
    uv_timer_init (loop, &s->cutlog_w);
    s->listen_w.data = s->backoff_w.data = s->idle_w.data = s;
    s->deadline_w.data = s->turn_w.data = s->cutlog_w.data = s;
    s->handles = 6;
    uv_prepare_start (&s->turn_w, server_turn_cb);
    uv_unref ((uv_handle_t *)&s->turn_w);
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
    uv_close ((uv_handle_t *)&s->deadline_w, server_handle_close_cb);
    uv_close ((uv_handle_t *)&s->turn_w, server_handle_close_cb);
    uv_close ((uv_handle_t *)&s->cutlog_w, server_handle_close_cb);
    cutlog_flush (s);
    usock_server_share (s, NULL);
    close (s->fd);
    s->fd = -1;
    /* remove the socket only if nobody replaced it since */
    if (lstat (s->path, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino)
        (void)unlink (s->path);
    while (!list_empty (&s->clients))
        usock_client_disconnect (
            list_entry (s->clients.next, struct usock_client, node));
    while (!list_empty (&s->dying))
        usock_client_disconnect (
            list_entry (s->dying.next, struct usock_client, node));
    while (s->graves) {
        struct grave *g = s->graves;
        s->graves = g->next;
        munmap (g->addr, g->len);
        s->held -= g->len;
        free (g);
    }
    while (s->map_cached > 0) {
        struct frame *f = s->map_cache[--s->map_cached];
        munmap (f, f->maplen);
    }
    s->map_cached_bytes = 0;
    /* Callbacks cannot take clients off this list (only close callbacks
     * do), so the lookahead iteration is safe. */
    list_for_each_safe (pos, tmp, &s->closing)
        client_release (list_entry (pos, struct usock_client, node));
    errno = saved_errno;
}

unsigned usock_guest_conns_default (void)
{
    struct rlimit rl;
    unsigned n = USOCK_GUEST_CONNS_DEFAULT;

    if (getrlimit (RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
        && rl.rlim_cur / 4 < n)
        n = rl.rlim_cur / 4 < 16 ? 16 : (unsigned)(rl.rlim_cur / 4);
    return n;
}

size_t usock_held_default (void)
{
    long pages = sysconf (_SC_PHYS_PAGES);
    long pagesize = sysconf (_SC_PAGESIZE);
    uint64_t limit = USOCK_HELD_FLOOR;

    if (pages > 0 && pagesize > 0)
        limit = (uint64_t)pages * (uint64_t)pagesize / 4;
    if (limit < USOCK_HELD_FLOOR)
        limit = USOCK_HELD_FLOOR;
    if (limit > USOCK_HELD_CEILING)
        limit = USOCK_HELD_CEILING;
    return (size_t)limit;
}

size_t usock_server_client_count (struct usock_server *s)
{
    return s ? s->count : 0;
}
