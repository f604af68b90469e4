/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */

/* libFuzzer target for the broker's message handling (scripts/fuzz.sh
 * builds it): the router and the broker's own services, in process.
 *
 * Each input gets a fresh broker context, built from the same pieces as
 * flux-broker's main() (attributes, log, self pipe, router, built-in
 * services, state machine, local socket server, and an overlay with no
 * peer when size > 1) but without PMI, rundir or initial program.
 *
 * Input: one configuration byte, then local-connector frames decoded one
 * after the other (flux_msg_frame_decode) until one needs more bytes or
 * fails; at most MAX_MSGS.  The configuration byte selects
 *   bits 0-1  where the messages come from: a local client of the owner,
 *             a local guest client (the owner is then another uid), a
 *             child broker or the parent broker over the overlay (injected
 *             into router_from_overlay() as the overlay would deliver them:
 *             its own control messages dropped, the child's rank pushed as
 *             the newest route of requests and responses);
 *   bits 2-3  rank/size: 0/1, 0/4, 1/4 or 1/8 (fanout 2); the overlay
 *             modes move to a rank that has such a peer;
 *   bits 4-5  broker state: run; join (not yet online) if bit 4 is set;
 *             quorum (waiting for broker.ready from its children) if only
 *             bit 5 is set and the rank is not 0 (rank 0 would then start
 *             an initial program);
 *   bit 6     at the end, the overlay reports a peer lost (the first child
 *             if there is one, else the parent), as when a link dies.
 * module.load requests are dropped: they would dlopen() paths the fuzzer
 * makes up.
 *
 * After the messages, a sync request (attr.get) is sent on the same local
 * connection (a new one if the broker hung up on it); its answer means
 * every earlier message was routed and handled (the socket and the self
 * pipe are FIFO).  Then the broker enters its exit state, the client
 * disconnects and the broker is torn down.  Crashes, sanitizer reports,
 * leaks (the teardown must free everything) and a sync request that is
 * never answered abort the run.  With ROUTER_FUZZ_VERBOSE set, what the
 * client receives is printed (useful when replaying one input).
 */

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "broker.h"
#include "methods.h"
#include "module.h"
#include "overlay/overlay.h"
#include "overlay/topology.h"

#define MAX_MSGS 64
#define MAX_TURNS 20000
#define SYNC_TAG 0x7ff0f00du

enum mode { FROM_OWNER = 0, FROM_GUEST = 1, FROM_CHILD = 2, FROM_PARENT = 3 };

static const struct {
    uint32_t rank, size;
} topologies[] = {{0, 1}, {0, 4}, {1, 4}, {1, 8}};

static char sockdir[96];
static char sockpath[108]; /* sizeof sun_path */
static bool verbose;

struct client {
    int fd;
    uint8_t *buf;
    size_t len, cap;
    bool eof;
    bool synced;
};

static void check (bool cond, const char *what)
{
    if (!cond) {
        fprintf (stderr, "router_fuzz: check failed: %s (errno %d)\n", what,
                 errno);
        abort ();
    }
}

static void remove_sockdir (void)
{
    (void)unlink (sockpath);
    (void)rmdir (sockdir);
}

int LLVMFuzzerInitialize (int *argc, char ***argv)
{
    const char *tmp = getenv ("TMPDIR");

    /* a socket path must fit sun_path */
    if (!tmp || !*tmp || strlen (tmp) > 64)
        tmp = "/tmp";
    snprintf (sockdir, sizeof (sockdir), "%s/router_fuzz.XXXXXX", tmp);
    check (mkdtemp (sockdir) != NULL, "mkdtemp");
    snprintf (sockpath, sizeof (sockpath), "%s/local", sockdir);
    atexit (remove_sockdir);
    verbose = getenv ("ROUTER_FUZZ_VERBOSE") != NULL;
    return 0;
}

/* ---- the broker context ---- */

static void add_attr (struct broker *b, const char *name, const char *value)
{
    check (attr_add (b->attrs, name, value, ATTR_IMMUTABLE) == 0, name);
}

static void broker_setup (struct broker *b, uint32_t rank, uint32_t size,
                          bool guest, enum broker_state state)
{
    struct overlay_config cfg = {.rank = rank, .size = size};
    char buf[64];

    memset (b, 0, sizeof (*b));
    check ((b->topo = topology_create ("kary:2", size, NULL)) != NULL,
           "topology");
    cfg.topo = b->topo;
    /* as a guest, our uid is not the owner's: the socket makes us USER */
    b->owner = getuid () + (guest ? 1 : 0);
    b->rank = rank;
    b->size = size;
    b->state = STATE_LOAD_BUILTINS;
    snprintf (b->rankstr, sizeof (b->rankstr), "%u", rank);
    check (method_uuid (b->uuid, sizeof (b->uuid)) == 0, "uuid");
    check ((b->attrs = attr_create ()) != NULL, "attr_create");
    add_attr (b, "rank", b->rankstr);
    snprintf (buf, sizeof (buf), "%u", size);
    add_attr (b, "size", buf);
    add_attr (b, "rundir", sockdir);
    add_attr (b, "hostlist", "fuzz");
    snprintf (buf, sizeof (buf), "%u", b->owner);
    add_attr (b, "security.owner", buf);
    if (guest)
        add_attr (b, "access.allow-guest-user", "1");
    check ((b->reactor = flux_reactor_create (0)) != NULL, "reactor");
    b->loop = flux_reactor_uv (b->reactor);
    b->starttime = uv_now (b->loop) / 1000.;
    check ((b->self_pipe = flux_msgpipe_create ()) != NULL, "msgpipe");
    check ((b->h = flux_msgpipe_open (b->self_pipe, 1, 0)) != NULL, "h");
    check (flux_set_reactor (b->h, b->reactor) == 0, "set_reactor");
    check ((b->log = brokerlog_create (b->h, rank, 64)) != NULL, "log");
    brokerlog_set_stderr_level (b->log, -1); /* keep the fuzzer's output */
    check (attr_register_services (b->attrs, b->h) == 0, "attr services");
    check (router_init (b) == 0, "router_init");
    check (builtin_register (b) == 0, "builtin_register");
    check (state_machine_init (b) == 0, "state_machine_init");
    if (size > 1) {
        /* an overlay whose peers never connect: sends to them fail */
        check (
            (b->overlay = overlay_create (b->reactor, &cfg, NULL, NULL, NULL))
                != NULL,
            "overlay_create");
        overlay_set_log (b->overlay, NULL, NULL);
    }
    check (router_usock_start (b, sockpath) == 0, "usock");
    /* Set, not entered: entering run would start rank 0's initial
     * program, and join would wait for a parent. */
    b->state = state;
}

static void close_cb (uv_handle_t *h, void *arg)
{
    if (!uv_is_closing (h))
        uv_close (h, NULL);
}

/* In the order of flux-broker's teardown. */
static void broker_teardown (struct broker *b)
{
    overlay_destroy (b->overlay);
    state_machine_fini (b);
    builtin_unregister (b);
    brokerlog_destroy (b->log);
    attr_unregister_services (b->attrs);
    router_fini (b);
    for (size_t i = 0; i < b->nmodules; i++)
        module_destroy (b->modules[i]);
    free (b->modules);
    flux_close (b->h);
    flux_msgpipe_decref (b->self_pipe);
    attr_destroy (b->attrs);
    topology_destroy (b->topo);
    uv_walk (b->loop, close_cb, NULL);
    uv_run (b->loop, UV_RUN_DEFAULT);
    flux_reactor_destroy (b->reactor);
}

/* ---- a local client, on the real socket ---- */

static bool is_sync_response (const flux_msg_t *msg)
{
    const char *topic;
    uint32_t tag;
    int type;

    return flux_msg_get_type (msg, &type) == 0 && type == FLUX_MSGTYPE_RESPONSE
           && flux_msg_get_matchtag (msg, &tag) == 0 && tag == SYNC_TAG
           && flux_msg_get_topic (msg, &topic) == 0
           && !strcmp (topic, "attr.get");
}

/* ROUTER_FUZZ_VERBOSE=1: print what the client receives (to replay). */
static void trace (const flux_msg_t *msg)
{
    char *s = flux_msg_describe (msg);
    const char *payload = NULL;

    (void)flux_msg_get_string (msg, &payload);
    fprintf (stderr, "router_fuzz: client got %s %s\n", s ? s : "?",
             payload ? payload : "");
    free (s);
}

/* Read what the broker sent; keep only whether the sync was answered. */
static void client_read (struct client *c)
{
    for (;;) {
        ssize_t n;
        size_t off = 0;

        if (c->cap - c->len < 4096) {
            c->cap = c->cap ? c->cap * 2 : 65536;
            check ((c->buf = realloc (c->buf, c->cap)) != NULL, "realloc");
        }
        n = read (c->fd, c->buf + c->len, c->cap - c->len);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
            c->eof = true;
            return;
        }
        if (n < 0)
            return;
        c->len += n;
        for (;;) {
            flux_msg_t *msg = NULL;
            size_t need = 0;
            ssize_t rc = flux_msg_frame_decode (c->buf + off, c->len - off,
                                                &msg, &need);
            if (rc <= 0) {
                /* the broker only sends well-formed frames */
                check (rc == 0, "frame from the broker decodes");
                break;
            }
            if (verbose)
                trace (msg);
            if (is_sync_response (msg))
                c->synced = true;
            flux_msg_destroy (msg);
            off += rc;
        }
        memmove (c->buf, c->buf + off, c->len - off);
        c->len -= off;
    }
}

static void turn (struct broker *b, struct client *c)
{
    uv_run (b->loop, UV_RUN_NOWAIT);
    if (!c->eof)
        client_read (c);
}

static void client_connect (struct broker *b, struct client *c)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    uint8_t byte;
    int turns = 0;
    ssize_t n;

    memset (c, 0, sizeof (*c));
    snprintf (sa.sun_path, sizeof (sa.sun_path), "%s", sockpath);
    check ((c->fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0,
           "socket");
    check (connect (c->fd, (struct sockaddr *)&sa, sizeof (sa)) == 0,
           "connect");
    check (fcntl (c->fd, F_SETFL, O_NONBLOCK) == 0, "nonblock");
    /* the broker accepts and sends one byte: 0 = welcome */
    while ((n = read (c->fd, &byte, 1)) < 0 && errno == EAGAIN) {
        check (++turns < MAX_TURNS, "accept byte arrives");
        uv_run (b->loop, UV_RUN_NOWAIT);
    }
    check (n == 1 && byte == 0, "accepted");
}

static void client_send (struct broker *b, struct client *c, const uint8_t *buf,
                         size_t len)
{
    int turns = 0;

    while (len > 0 && !c->eof) {
        ssize_t n = write (c->fd, buf, len);
        if (n < 0) {
            if (errno == EPIPE || errno == ECONNRESET) {
                c->eof = true;
                return;
            }
            check (errno == EAGAIN || errno == EINTR, "write");
            check (++turns < MAX_TURNS, "socket drains");
            turn (b, c);
            continue;
        }
        buf += n;
        len -= n;
    }
}

static void client_send_msg (struct broker *b, struct client *c,
                             const flux_msg_t *msg)
{
    ssize_t n = flux_msg_frame_size (msg);
    uint8_t *buf = NULL;

    check (n > 0 && (buf = malloc (n)) != NULL, "frame_size");
    check (flux_msg_frame_encode (msg, buf, n) == n, "frame_encode");
    client_send (b, c, buf, n);
    free (buf);
}

static void client_close (struct client *c)
{
    close (c->fd);
    free (c->buf);
}

/* ---- the overlay's side of router_from_overlay() ---- */

static void from_overlay (struct broker *b, flux_msg_t *msg, enum mode mode,
                          int index)
{
    int type, ctype, status;
    uint32_t peer;
    char id[16];

    /* the overlay keeps its own control messages */
    if (flux_msg_get_type (msg, &type) == 0 && type == FLUX_MSGTYPE_CONTROL
        && flux_msg_get_control (msg, &ctype, &status) == 0 && ctype >= 0
        && ctype <= OVERLAY_CONTROL_RESERVED) {
        flux_msg_decref (msg);
        return;
    }
    if (mode == FROM_PARENT) {
        peer = (uint32_t)topology_parent (b->topo, b->rank);
        router_from_overlay (b, msg, OVERLAY_UPSTREAM, peer);
        return;
    }
    peer = b->children[index % b->nchildren];
    snprintf (id, sizeof (id), "%u", peer);
    if (flux_msg_has_flag (msg, FLUX_MSGFLAG_ROUTE)
        && flux_msg_route_push (msg, id) < 0) {
        flux_msg_decref (msg); /* the overlay drops it too */
        return;
    }
    router_from_overlay (b, msg, OVERLAY_DOWNSTREAM, peer);
}

static bool dropped (const flux_msg_t *msg)
{
    const char *topic;
    int type;

    return flux_msg_get_type (msg, &type) == 0 && type == FLUX_MSGTYPE_REQUEST
           && flux_msg_get_topic (msg, &topic) == 0
           && !strncmp (topic, "module.load", 11);
}

static void sync_wait (struct broker *b, struct client *c)
{
    flux_msg_t *req;
    int turns = 0;

    check ((req = flux_msg_create (FLUX_MSGTYPE_REQUEST)) != NULL,
           "sync request");
    flux_msg_route_enable (req);
    check (flux_msg_set_topic (req, "attr.get") == 0
               && flux_msg_pack (req, "{s:s}", "name", "rank") == 0
               && flux_msg_set_nodeid (req, FLUX_NODEID_ANY) == 0
               && flux_msg_set_matchtag (req, SYNC_TAG) == 0,
           "sync request");
    client_send_msg (b, c, req);
    flux_msg_destroy (req);
    while (!c->synced && !c->eof) {
        check (++turns < MAX_TURNS, "the sync request is answered");
        turn (b, c);
    }
    check (c->synced, "the connection stays up for a valid request");
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    struct broker broker, *b = &broker;
    struct client client, *c = &client;
    enum mode mode;
    enum broker_state state;
    unsigned t;
    size_t off = 1;
    int count = 0;

    if (size < 1)
        return 0;
    mode = data[0] & 3;
    t = (data[0] >> 2) & 3;
    if (mode == FROM_CHILD && topologies[t].size == 1)
        t = 1; /* rank 0 of 4 has children */
    if (mode == FROM_PARENT && topologies[t].rank == 0)
        t = 2; /* rank 1 of 4 has a parent */
    if (data[0] & 0x10)
        state = STATE_JOIN;
    else if ((data[0] & 0x20) && topologies[t].rank > 0)
        state = STATE_QUORUM;
    else
        state = STATE_RUN;
    broker_setup (b, topologies[t].rank, topologies[t].size, mode == FROM_GUEST,
                  state);
    client_connect (b, c);

    while (off < size && count < MAX_MSGS) {
        flux_msg_t *msg = NULL;
        size_t need = 0;
        ssize_t n = flux_msg_frame_decode (data + off, size - off, &msg, &need);

        if (n <= 0)
            break;
        if (dropped (msg))
            flux_msg_decref (msg);
        else if (mode == FROM_OWNER || mode == FROM_GUEST) {
            client_send (b, c, data + off, n);
            flux_msg_decref (msg);
        }
        else
            from_overlay (b, msg, mode, count);
        off += n;
        count++;
        turn (b, c);
    }
    /* the broker may have hung up on that connection: sync on a new one */
    if (c->eof) {
        client_close (c);
        client_connect (b, c);
    }
    sync_wait (b, c);
    if ((data[0] & 0x40) && b->size > 1) {
        uint32_t peer = b->nchildren > 0
                            ? b->children[0]
                            : (uint32_t)topology_parent (b->topo, b->rank);
        broker_peer_status (b, peer, OVERLAY_PEER_LOST, "fuzz: link cut");
        turn (b, c);
    }
    /* the broker's last state before teardown, as in flux-broker (this
     * answers what still waits for a state, e.g. state-machine.wait) */
    state_enter (b, STATE_EXIT);
    for (int i = 0; i < 4; i++)
        turn (b, c);
    client_close (c);
    for (int i = 0; i < 4; i++)
        uv_run (b->loop, UV_RUN_NOWAIT);
    broker_teardown (b);
    return 0;
}
