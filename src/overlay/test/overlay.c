/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Tests for overlay.c: real brokers' overlays in one process and one
 * reactor over ipc:// and tcp://, a hand-driven ZeroMQ peer for the wire
 * protocol (hello checks, malformed input, identity rules), health
 * (torpid, lost by silence, lost by disconnect, rejoin), and a forked
 * child killed with SIGKILL.  Every wait is bounded by a uv_timer, and an
 * alarm() aborts the whole program if something still hangs.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "tap.h"
#include "libflux/flux.h"
#include "overlay/overlay.h"
#include "overlay/topology.h"

/* Topologies for the configs below (kary:k of size), made once each and
 * kept until the end of main. */
static struct topology *topos[64];
static int ntopos;

static const struct topology *T (uint32_t size, int k)
{
    char spec[32];

    if (size == 0 || k < 1)
        return NULL;
    snprintf (spec, sizeof (spec), "kary:%d", k);
    for (int i = 0; i < ntopos; i++) {
        if (topology_size (topos[i]) == size
            && !strcmp (topology_spec (topos[i]), spec))
            return topos[i];
    }
    if (ntopos == 64)
        BAIL_OUT ("too many topologies");
    topos[ntopos] = topology_create (spec, size, NULL);
    return topos[ntopos++];
}

static void topos_destroy (void)
{
    while (ntopos > 0)
        topology_destroy (topos[--ntopos]);
}

#define MAXPEER 8
#define MAXRX 2048
#define TIMEOUT 5.0 /* for what should happen in milliseconds */

static flux_reactor_t *r;
static char tmpdir[1024];

/* A broker's overlay and what its callbacks saw. */
struct node {
    struct overlay *ov;
    uint32_t rank;
    uint32_t parent_rank; /* index of the parent's status in the arrays */
    char id_str[16];
    char history[MAXPEER][256]; /* "online torpid online lost" */
    char error[MAXPEER][256];
    int nstatus[MAXPEER];
    enum overlay_peer_status last[MAXPEER]; /* last reported */
    flux_msg_t *rx[MAXRX];
    enum overlay_where rx_where[MAXRX];
    uint32_t rx_peer[MAXRX];
    int nrx;
    int nlog;
    char lastlog[256];
    char logs[4096]; /* all log lines, as long as they fit */
};

static const char *stname (enum overlay_peer_status st)
{
    switch (st) {
        case OVERLAY_PEER_OFFLINE:
            return "offline";
        case OVERLAY_PEER_ONLINE:
            return "online";
        case OVERLAY_PEER_TORPID:
            return "torpid";
        case OVERLAY_PEER_LOST:
            return "lost";
    }
    return "?";
}

static void status_cb (struct overlay *ov, uint32_t peer,
                       enum overlay_peer_status st, const char *error,
                       void *arg)
{
    struct node *n = arg;
    if (peer >= MAXPEER)
        BAIL_OUT ("status for unexpected rank %u", peer);
    size_t len = strlen (n->history[peer]);
    snprintf (n->history[peer] + len, sizeof (n->history[peer]) - len, "%s%s",
              len ? " " : "", stname (st));
    snprintf (n->error[peer], sizeof (n->error[peer]), "%s",
              error ? error : "");
    n->nstatus[peer]++;
    n->last[peer] = st;
    if (st == OVERLAY_PEER_LOST && !error)
        diag ("rank %u: LOST reported without a reason", n->rank);
}

static void recv_cb (struct overlay *ov, flux_msg_t *msg,
                     enum overlay_where where, uint32_t peer, void *arg)
{
    struct node *n = arg;
    if (n->nrx == MAXRX) {
        flux_msg_decref (msg);
        return;
    }
    n->rx[n->nrx] = msg;
    n->rx_where[n->nrx] = where;
    n->rx_peer[n->nrx] = peer;
    n->nrx++;
}

static void log_cb (struct overlay *ov, int level, const char *msg, void *arg)
{
    struct node *n = arg;
    n->nlog++;
    snprintf (n->lastlog, sizeof (n->lastlog), "%s", msg);
    size_t len = strlen (n->logs);
    snprintf (n->logs + len, sizeof (n->logs) - len, "%s\n", msg);
    if (getenv ("OVERLAY_TEST_VERBOSE"))
        diag ("log rank %u: %s", n->rank, msg);
}

static void node_clear_rx (struct node *n)
{
    for (int i = 0; i < n->nrx; i++)
        flux_msg_decref (n->rx[i]);
    n->nrx = 0;
}

static bool node_create (struct node *n, uint32_t rank, uint32_t size,
                         int fanout, double hb, double torpid, double lost)
{
    struct overlay_config cfg = {
        .rank = rank,
        .size = size,
        .topo = T (size, fanout),
        .heartbeat = hb,
        .torpid_max = torpid,
        .lost_max = lost,
    };
    memset (n, 0, sizeof (*n));
    n->rank = rank;
    snprintf (n->id_str, sizeof (n->id_str), "%u", rank);
    n->parent_rank = rank > 0 ? (rank - 1) / (uint32_t)fanout : 0;
    if (!(n->ov = overlay_create (r, &cfg, recv_cb, status_cb, n)))
        return false;
    overlay_set_log (n->ov, log_cb, n);
    return true;
}

static void node_destroy (struct node *n)
{
    overlay_destroy (n->ov);
    n->ov = NULL;
    node_clear_rx (n);
}

/* Bounded waits */

static uv_timer_t wait_timer;
static bool timed_out;

static void wait_timeout_cb (uv_timer_t *t)
{
    timed_out = true;
}

static double monotime (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef bool (*pred_f) (void *arg);

/* Run the reactor until pred is true (true) or secs pass (false). */
static bool wait_for (pred_f pred, void *arg, double secs)
{
    bool result;

    timed_out = false;
    uv_timer_start (&wait_timer, wait_timeout_cb, (uint64_t)(secs * 1000), 0);
    while (!(result = pred (arg)) && !timed_out)
        flux_reactor_run (r, FLUX_REACTOR_ONCE);
    uv_timer_stop (&wait_timer);
    return result;
}

struct status_wait {
    struct node *n;
    uint32_t peer;
    enum overlay_peer_status st;
};

static bool status_pred (void *arg)
{
    struct status_wait *w = arg;
    uint32_t i = w->peer == w->n->rank ? w->n->parent_rank : w->peer;
    return w->n->nstatus[i] > 0 && w->n->last[i] == w->st;
}

/* Wait until the last status n reported for peer is st (peer == n->rank
 * means its parent). */
static bool wait_status (struct node *n, uint32_t peer,
                         enum overlay_peer_status st, double secs)
{
    struct status_wait w = {n, peer, st};
    return wait_for (status_pred, &w, secs);
}

static bool wait_parent (struct node *n, enum overlay_peer_status st,
                         double secs)
{
    return wait_status (n, n->rank, st, secs);
}

struct rx_wait {
    struct node *n;
    int count;
};

static bool rx_pred (void *arg)
{
    struct rx_wait *w = arg;
    return w->n->nrx >= w->count;
}

static bool wait_rx (struct node *n, int count, double secs)
{
    struct rx_wait w = {n, count};
    return wait_for (rx_pred, &w, secs);
}

/* Build a tree: parent p (rank 0) bound at uri, children c[0..nc-1]
 * (ranks 1..nc) authorized and connected; all ONLINE both ways. */
static bool tree_connect (struct node *p, struct node *c, int nc)
{
    for (int i = 0; i < nc; i++) {
        if (overlay_authorize (p->ov, c[i].rank, overlay_get_pubkey (c[i].ov))
                < 0
            || overlay_connect (c[i].ov, overlay_get_bind_uri (p->ov),
                                overlay_get_pubkey (p->ov))
                   < 0)
            return false;
    }
    for (int i = 0; i < nc; i++) {
        if (!wait_status (p, c[i].rank, OVERLAY_PEER_ONLINE, TIMEOUT)
            || !wait_parent (&c[i], OVERLAY_PEER_ONLINE, TIMEOUT))
            return false;
    }
    return true;
}

/* Messages */

static flux_msg_t *request (const char *topic, uint32_t matchtag,
                            const char *route)
{
    flux_msg_t *msg = flux_msg_create (FLUX_MSGTYPE_REQUEST);
    if (!msg || flux_msg_set_topic (msg, topic) < 0
        || flux_msg_pack (msg, "{s:s s:i}", "topic", topic, "tag",
                          (int)matchtag)
               < 0
        || flux_msg_set_matchtag (msg, matchtag) < 0
        || flux_msg_set_nodeid (msg, 0) < 0
        || flux_msg_set_userid (msg, 4242) < 0
        || flux_msg_set_rolemask (msg, FLUX_ROLE_USER) < 0)
        BAIL_OUT ("cannot build request");
    flux_msg_route_enable (msg);
    if (route && flux_msg_route_push (msg, route) < 0)
        BAIL_OUT ("cannot push route");
    return msg;
}

static flux_msg_t *event (const char *topic, uint32_t seq)
{
    flux_msg_t *msg = flux_msg_create (FLUX_MSGTYPE_EVENT);
    if (!msg || flux_msg_set_topic (msg, topic) < 0
        || flux_msg_set_seq (msg, seq) < 0
        || flux_msg_set_string (msg, "event payload") < 0)
        BAIL_OUT ("cannot build event");
    return msg;
}

static flux_msg_t *control (int type, int status)
{
    flux_msg_t *msg = flux_msg_create (FLUX_MSGTYPE_CONTROL);
    if (!msg || flux_msg_set_control (msg, type, status) < 0)
        BAIL_OUT ("cannot build control message");
    return msg;
}

static bool same_topic (const flux_msg_t *msg, const char *topic)
{
    const char *t;
    return flux_msg_get_topic (msg, &t) == 0 && !strcmp (t, topic);
}

static int msgtype (const flux_msg_t *msg)
{
    int type = -1;
    (void)flux_msg_get_type (msg, &type);
    return type;
}

/* Send msg and check the sender's copy is unchanged. */
static int send_intact (int (*send) (struct overlay *, const flux_msg_t *),
                        struct overlay *ov, const flux_msg_t *msg)
{
    char *before = flux_msg_describe (msg);
    int rc = send (ov, msg);
    char *after = flux_msg_describe (msg);
    if (!before || !after || strcmp (before, after) != 0) {
        diag ("message changed by send");
        rc = -2;
    }
    free (before);
    free (after);
    return rc;
}

static uint32_t send_child_rank;

static int send_child_wrap (struct overlay *ov, const flux_msg_t *msg)
{
    return overlay_send_child (ov, send_child_rank, msg);
}

static int send_child_intact (struct overlay *ov, uint32_t rank,
                              const flux_msg_t *msg)
{
    send_child_rank = rank;
    return send_intact (send_child_wrap, ov, msg);
}

/* Argument checking and the simple error paths */

static void test_create_args (void)
{
    struct overlay_config good = {.rank = 0, .size = 4, .topo = T (4, 3)};
    struct overlay_config bad[] = {
        {.rank = 0, .size = 0, .topo = T (0, 2)},
        {.rank = 4, .size = 4, .topo = T (4, 2)},
        {.rank = 0, .size = 4, .topo = T (4, 0)},
        {.rank = 0, .size = 4, .topo = T (4, 2), .heartbeat = -1},
        {.rank = 0, .size = 4, .topo = T (4, 2), .torpid_max = -1},
        {.rank = 0, .size = 4, .topo = T (4, 2), .lost_max = -0.5},
        {.rank = 0, .size = 4, .topo = T (4, 2), .heartbeat = NAN},
        {.rank = 0, .size = 4, .topo = T (4, 2), .lost_max = INFINITY},
    };
    struct overlay *ov;

    errno = 0;
    ok (overlay_create (NULL, &good, NULL, NULL, NULL) == NULL
            && errno == EINVAL,
        "create with no reactor fails with EINVAL");
    errno = 0;
    ok (overlay_create (r, NULL, NULL, NULL, NULL) == NULL && errno == EINVAL,
        "create with no config fails with EINVAL");
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        errno = 0;
        ov = overlay_create (r, &bad[i], NULL, NULL, NULL);
        ok (ov == NULL && errno == EINVAL, "bad config %zu fails with EINVAL",
            i);
        overlay_destroy (ov);
    }
    ok ((ov = overlay_create (r, &good, NULL, NULL, NULL)) != NULL,
        "create with NULL callbacks and default times works");
    ok (overlay_get_pubkey (ov) && strlen (overlay_get_pubkey (ov)) == 40,
        "a 40 character public key was generated");
    ok (overlay_get_bind_uri (ov) == NULL, "no bind uri before bind");
    errno = 1234;
    overlay_destroy (ov);
    overlay_destroy (NULL);
    ok (errno == 1234, "destroy (also of NULL) preserves errno");
}

static void test_cert_and_authorize (void)
{
    char pub[41], sec[41], pub2[41], sec2[41];
    struct node n;

    zmq_curve_keypair (pub, sec);
    zmq_curve_keypair (pub2, sec2);
    if (!node_create (&n, 0, 8, 2, 0, 0, 0))
        BAIL_OUT ("overlay_create failed");
    errno = 0;
    ok (overlay_set_cert (n.ov, pub, sec2) < 0 && errno == EINVAL,
        "set_cert with a mismatched pair fails with EINVAL");
    errno = 0;
    ok (overlay_set_cert (n.ov, "short", sec) < 0 && errno == EINVAL,
        "set_cert with a short key fails with EINVAL");
    errno = 0;
    ok (overlay_set_cert (n.ov, pub, NULL) < 0 && errno == EINVAL,
        "set_cert with a NULL key fails with EINVAL");
    ok (overlay_set_cert (n.ov, pub, sec) == 0
            && !strcmp (overlay_get_pubkey (n.ov), pub),
        "set_cert with a valid pair works and get_pubkey returns it");

    errno = 0;
    ok (overlay_authorize (n.ov, 8, pub2) < 0 && errno == EINVAL,
        "authorize rank >= size fails with EINVAL");
    errno = 0;
    ok (overlay_authorize (n.ov, 1, "not-a-z85-key-not-a-z85-key-not-a-z85-k")
                < 0
            && errno == EINVAL,
        "authorize a key that is not Z85 fails with EINVAL");
    ok (overlay_authorize (n.ov, 1, pub2) == 0, "authorize rank 1 works");
    ok (overlay_authorize (n.ov, 1, pub2) == 0,
        "authorizing the same rank and key again works");
    errno = 0;
    ok (overlay_authorize (n.ov, 2, pub2) < 0 && errno == EEXIST,
        "authorizing the key for another rank fails with EEXIST");
    ok (overlay_authorize (n.ov, 1, pub) == 0,
        "authorizing another key for rank 1 replaces the first");
    ok (overlay_authorize (n.ov, 2, pub2) == 0,
        "so the first key is then free for rank 2");
    ok (overlay_authorize (n.ov, 5, sec) == 0,
        "a rank that is not a child may be authorized");
    node_destroy (&n);
}

static void test_send_and_connect_args (struct node *p, struct node *leaf,
                                        const char *uri, const char *pub,
                                        const char *sec)
{
    double since = -1;

    errno = 0;
    ok (overlay_connect (p->ov, uri, pub) < 0 && errno == EINVAL,
        "connect on rank 0 fails with EINVAL");
    errno = 0;
    ok (overlay_connect (leaf->ov, uri, "bogus") < 0 && errno == EINVAL,
        "connect with a bad server key fails with EINVAL");
    errno = 0;
    ok (overlay_connect (leaf->ov, NULL, pub) < 0 && errno == EINVAL,
        "connect without uri fails with EINVAL");
    flux_msg_t *msg = request ("a.b", 1, NULL);
    errno = 0;
    ok (overlay_send_parent (leaf->ov, msg) < 0 && errno == EHOSTUNREACH,
        "send_parent before connect fails with EHOSTUNREACH");
    errno = 0;
    ok (overlay_send_child (p->ov, 1, msg) < 0 && errno == EHOSTUNREACH,
        "send_child to an offline child fails with EHOSTUNREACH");
    errno = 0;
    ok (overlay_send_child (p->ov, 3, NULL) < 0 && errno == EINVAL,
        "send_child of NULL fails with EINVAL");
    errno = 0;
    ok (overlay_send_child (p->ov, 0, msg) < 0 && errno == EINVAL,
        "send_child to itself fails with EINVAL");
    errno = 0;
    ok (overlay_send_child (leaf->ov, 1, msg) < 0 && errno == EINVAL,
        "send_child from a leaf fails with EINVAL");
    errno = 0;
    ok (overlay_disconnect_child (p->ov, 1, NULL) < 0 && errno == EHOSTUNREACH,
        "disconnect_child of an offline child fails with EHOSTUNREACH");
    errno = 0;
    ok (overlay_disconnect_child (p->ov, 7, NULL) < 0 && errno == EINVAL,
        "disconnect_child of a non-child fails with EINVAL");
    flux_msg_decref (msg);
    ok (overlay_child_status (p->ov, 2, &since) == OVERLAY_PEER_OFFLINE
            && since > 0,
        "a child starts OFFLINE, with a time");
    ok (overlay_child_status (p->ov, 9, &since) == OVERLAY_PEER_OFFLINE
            && since == 0,
        "a non-child reads OFFLINE with since 0");
    ok (overlay_parent_status (p->ov) == OVERLAY_PEER_OFFLINE,
        "rank 0's parent reads OFFLINE");
    ok (overlay_connect (leaf->ov, uri, overlay_get_pubkey (p->ov)) == 0,
        "connect works (the key is not authorized)");
    errno = 0;
    ok (overlay_connect (leaf->ov, uri, overlay_get_pubkey (p->ov)) < 0
            && errno == EBUSY,
        "connecting again while not LOST fails with EBUSY");
    errno = 0;
    ok (overlay_set_cert (leaf->ov, pub, sec) < 0 && errno == EBUSY,
        "set_cert after connect fails with EBUSY");
    ok (wait_parent (leaf, OVERLAY_PEER_LOST, TIMEOUT),
        "the unauthorized child reports its parent LOST");
    ok (strstr (leaf->error[leaf->parent_rank], "refused our key") != NULL,
        "with the reason: %s", leaf->error[leaf->parent_rank]);
    ok (strstr (p->logs, "refused unknown key") != NULL,
        "the parent logged the refusal");
    ok (p->history[3][0] == '\0', "the parent reported nothing for rank 3");
}

static void test_bind_connect_args (void)
{
    struct node p, leaf;
    char uri[PATH_MAX + 16], pub[41], sec[41];
    int rc, e;

    zmq_curve_keypair (pub, sec);
    if (!node_create (&p, 0, 4, 3, 0, 0, 0)
        || !node_create (&leaf, 3, 4, 3, 0, 0, 0))
        BAIL_OUT ("overlay_create failed");
    errno = 0;
    ok (overlay_bind (leaf.ov, "tcp://127.0.0.1:*") < 0 && errno == EINVAL,
        "bind on a rank without children fails with EINVAL");
    errno = 0;
    rc = overlay_bind (p.ov, "nonsense://x");
    e = errno;
    ok (rc < 0 && e != 0, "bind to an unknown transport fails (%s)",
        strerror (e));
    ok (overlay_get_bind_uri (p.ov) == NULL, "and leaves no bind uri");
    snprintf (uri, sizeof (uri), "ipc://%s/args", tmpdir);
    ok (overlay_bind (p.ov, uri) == 0, "then bind to ipc works");
    is (overlay_get_bind_uri (p.ov), uri, "bind uri is the ipc endpoint");
    errno = 0;
    ok (overlay_bind (p.ov, uri) < 0 && errno == EBUSY,
        "binding twice fails with EBUSY");
    errno = 0;
    ok (overlay_set_cert (p.ov, pub, sec) < 0 && errno == EBUSY,
        "set_cert after bind fails with EBUSY");
    test_send_and_connect_args (&p, &leaf, uri, pub, sec);
    node_destroy (&leaf);
    node_destroy (&p);
}

/* A parent and three children: messages both ways */

static void check_request_up (struct node *p, struct node *c)
{
    flux_msg_t *msg = request ("svc.up", 7, "client-a");
    const flux_msg_t *got;
    uint32_t tag = 0, userid = 0, rolemask = 0, nodeid = 1;
    const char *s = NULL;

    node_clear_rx (p);
    ok (send_intact (overlay_send_parent, c->ov, msg) == 0,
        "rank %u: send_parent of a request works, message untouched", c->rank);
    ok (wait_rx (p, 1, TIMEOUT), "the parent received it");
    if (p->nrx < 1) {
        flux_msg_decref (msg);
        return;
    }
    got = p->rx[0];
    ok (p->rx_where[0] == OVERLAY_DOWNSTREAM && p->rx_peer[0] == c->rank,
        "from DOWNSTREAM rank %u", c->rank);
    ok (msgtype (got) == FLUX_MSGTYPE_REQUEST && same_topic (got, "svc.up"),
        "a request with topic svc.up");
    ok (flux_msg_unpack (got, "{s:s}", "topic", &s) == 0 && s
            && !strcmp (s, "svc.up"),
        "payload intact");
    ok (flux_msg_get_matchtag (got, &tag) == 0 && tag == 7
            && flux_msg_get_userid (got, &userid) == 0 && userid == 4242
            && flux_msg_get_rolemask (got, &rolemask) == 0
            && rolemask == FLUX_ROLE_USER
            && flux_msg_get_nodeid (got, &nodeid) == 0 && nodeid == 0,
        "matchtag, nodeid and credentials intact");
    ok (flux_msg_route_count (got) == 2
            && !strcmp (flux_msg_route_first (got), "client-a")
            && !strcmp (flux_msg_route_last (got), c->id_str),
        "routes: the sender's rank was pushed on the stack (%s)",
        flux_msg_route_last (got) ? flux_msg_route_last (got) : "none");
    flux_msg_decref (msg);
    node_clear_rx (p);
}

static void check_response_down_and_up (struct node *p, struct node *c)
{
    flux_msg_t *msg = request ("svc.down", 9, "client-b");
    const flux_msg_t *got;
    int errnum = -1;

    if (flux_msg_set_type (msg, FLUX_MSGTYPE_RESPONSE) < 0
        || flux_msg_set_errnum (msg, ENOENT) < 0)
        BAIL_OUT ("cannot make a response");
    node_clear_rx (c);
    ok (send_child_intact (p->ov, c->rank, msg) == 0,
        "send_child of a response to rank %u works, message untouched",
        c->rank);
    ok (wait_rx (c, 1, TIMEOUT), "the child received it");
    if (c->nrx >= 1) {
        got = c->rx[0];
        ok (c->rx_where[0] == OVERLAY_UPSTREAM && c->rx_peer[0] == 0,
            "from UPSTREAM rank 0");
        ok (msgtype (got) == FLUX_MSGTYPE_RESPONSE
                && same_topic (got, "svc.down")
                && flux_msg_get_errnum (got, &errnum) == 0 && errnum == ENOENT,
            "a response with topic and errnum intact");
        ok (flux_msg_route_count (got) == 1
                && !strcmp (flux_msg_route_first (got), "client-b"),
            "the route stack arrives as given");
    }
    /* and the same response back up: the child's rank becomes the
     * newest hop, which the broker pops */
    node_clear_rx (p);
    ok (overlay_send_parent (c->ov, msg) == 0, "the child sends it back up");
    ok (wait_rx (p, 1, TIMEOUT), "the parent received it");
    if (p->nrx >= 1) {
        got = p->rx[0];
        ok (msgtype (got) == FLUX_MSGTYPE_RESPONSE
                && flux_msg_route_count (got) == 2
                && !strcmp (flux_msg_route_last (got), c->id_str),
            "a response from a child has its rank as newest hop");
        ok (flux_msg_route_pop (p->rx[0]) == 0
                && flux_msg_route_count (got) == 1
                && !strcmp (flux_msg_route_last (got), "client-b"),
            "popping it restores the route stack");
    }
    flux_msg_decref (msg);
    node_clear_rx (p);
    node_clear_rx (c);
}

static void check_events (struct node *p, struct node *c, int nc)
{
    flux_msg_t *ev = event ("heartbeat.pulse", 42);
    uint32_t seq = 0;
    const char *s = NULL;
    int good = 0;

    for (int i = 0; i < nc; i++) {
        node_clear_rx (&c[i]);
        if (send_child_intact (p->ov, c[i].rank, ev) < 0)
            diag ("send event to %u: %s", c[i].rank, strerror (errno));
    }
    for (int i = 0; i < nc; i++) {
        if (wait_rx (&c[i], 1, TIMEOUT)
            && msgtype (c[i].rx[0]) == FLUX_MSGTYPE_EVENT
            && same_topic (c[i].rx[0], "heartbeat.pulse")
            && !flux_msg_has_flag (c[i].rx[0], FLUX_MSGFLAG_ROUTE)
            && flux_msg_get_seq (c[i].rx[0], &seq) == 0 && seq == 42
            && flux_msg_get_string (c[i].rx[0], &s) == 0 && s
            && !strcmp (s, "event payload"))
            good++;
        node_clear_rx (&c[i]);
    }
    cmp_ok (good, "==", nc, "an event sent to each child arrives intact");

    node_clear_rx (p);
    ok (overlay_send_parent (c[1].ov, ev) == 0, "a child sends an event up");
    ok (wait_rx (p, 1, TIMEOUT) && msgtype (p->rx[0]) == FLUX_MSGTYPE_EVENT
            && !flux_msg_has_flag (p->rx[0], FLUX_MSGFLAG_ROUTE)
            && p->rx_peer[0] == c[1].rank,
        "it arrives without routes: the identity frame was consumed");
    node_clear_rx (p);
    flux_msg_decref (ev);
}

static void check_control (struct node *p, struct node *c)
{
    flux_msg_t *ctl = control (100, 5);
    flux_msg_t *own = control (OVERLAY_CONTROL_HEARTBEAT, 0);
    int type = -1, status = -1;

    node_clear_rx (p);
    node_clear_rx (c);
    ok (overlay_send_parent (c->ov, ctl) == 0
            && overlay_send_child (p->ov, c->rank, ctl) == 0,
        "control messages of a non-overlay type are sent both ways");
    ok (wait_rx (p, 1, TIMEOUT) && wait_rx (c, 1, TIMEOUT)
            && flux_msg_get_control (p->rx[0], &type, &status) == 0
            && type == 100 && status == 5
            && flux_msg_get_control (c->rx[0], &type, &status) == 0
            && type == 100 && status == 5,
        "and are delivered with type and status intact");
    errno = 0;
    ok (overlay_send_parent (c->ov, own) < 0 && errno == EINVAL,
        "sending an overlay control type fails with EINVAL");
    errno = 0;
    ok (overlay_send_child (p->ov, c->rank, own) < 0 && errno == EINVAL,
        "also downstream");
    node_clear_rx (p);
    node_clear_rx (c);
    flux_msg_decref (ctl);
    flux_msg_decref (own);
}

/* Many messages back to back: nothing lost, order kept, the loop keeps
 * draining past its per-turn batch. */
static void check_bulk (struct node *p, struct node *c)
{
    const int count = 1000;
    int sent = 0, inorder = 0;
    uint32_t tag;

    node_clear_rx (p);
    node_clear_rx (c);
    for (int i = 0; i < count; i++) {
        flux_msg_t *msg = request ("bulk.up", (uint32_t)i, "client");
        if (overlay_send_parent (c->ov, msg) == 0
            && overlay_send_child (p->ov, c->rank, msg) == 0)
            sent++;
        flux_msg_decref (msg);
    }
    cmp_ok (sent, "==", count, "%d messages sent each way", count);
    ok (wait_rx (p, count, TIMEOUT) && wait_rx (c, count, TIMEOUT),
        "all arrived");
    for (int i = 0; i < p->nrx && i < c->nrx; i++) {
        if (flux_msg_get_matchtag (p->rx[i], &tag) == 0 && tag == (uint32_t)i
            && flux_msg_get_matchtag (c->rx[i], &tag) == 0
            && tag == (uint32_t)i)
            inorder++;
    }
    cmp_ok (inorder, "==", count, "in order");
    node_clear_rx (p);
    node_clear_rx (c);
}

static void check_disconnect_child (struct node *p, struct node *c)
{
    flux_msg_t *msg = request ("a.b", 1, NULL);
    int before = p->nstatus[c->rank];
    double since = 0;

    ok (overlay_disconnect_child (p->ov, c->rank, "maintenance") == 0,
        "disconnect_child of rank %u works", c->rank);
    ok (overlay_child_status (p->ov, c->rank, &since) == OVERLAY_PEER_LOST
            && since > 0,
        "the child reads LOST at once");
    ok (p->nstatus[c->rank] == before,
        "but is not reported from inside the call");
    ok (wait_status (p, c->rank, OVERLAY_PEER_LOST, TIMEOUT)
            && p->nstatus[c->rank] == before + 1
            && !strcmp (p->error[c->rank], "maintenance"),
        "it is reported LOST on a later loop turn, with the reason");
    ok (wait_parent (c, OVERLAY_PEER_LOST, TIMEOUT)
            && strstr (c->error[c->parent_rank], "disconnected by parent"),
        "the child reports its parent LOST: %s", c->error[c->parent_rank]);
    errno = 0;
    ok (overlay_send_child (p->ov, c->rank, msg) < 0 && errno == EHOSTUNREACH,
        "send_child to it fails with EHOSTUNREACH");
    errno = 0;
    ok (overlay_send_parent (c->ov, msg) < 0 && errno == EHOSTUNREACH,
        "and its send_parent fails with EHOSTUNREACH");
    ok (overlay_connect (c->ov, overlay_get_bind_uri (p->ov),
                         overlay_get_pubkey (p->ov))
                == 0
            && overlay_parent_status (c->ov) == OVERLAY_PEER_OFFLINE,
        "the child may connect again after LOST (OFFLINE until welcome)");
    ok (wait_status (p, c->rank, OVERLAY_PEER_ONLINE, TIMEOUT)
            && wait_parent (c, OVERLAY_PEER_ONLINE, TIMEOUT),
        "it says hello again and is ONLINE both ways");
    is (p->history[c->rank], "online lost online",
        "parent saw rank %u: online lost online", c->rank);
    is (c->history[c->parent_rank], "online lost online",
        "child saw its parent: online lost online");
    flux_msg_decref (msg);
}

static void test_tree (const char *transport)
{
    struct node p, c[3];
    char uri[PATH_MAX + 16];
    const char *bound;

    diag ("tree over %s", transport);
    if (!strcmp (transport, "tcp"))
        snprintf (uri, sizeof (uri), "tcp://127.0.0.1:*");
    else
        snprintf (uri, sizeof (uri), "ipc://%s/tbon-0", tmpdir);
    /* heartbeats every 100s: no timer wakes the loop, so a socket left
     * undrained after a ZMQ_FD edge would stall these tests */
    if (!node_create (&p, 0, 4, 3, 100, 1000, 0))
        BAIL_OUT ("overlay_create failed");
    ok (overlay_bind (p.ov, uri) == 0, "%s: parent binds %s", transport, uri);
    bound = overlay_get_bind_uri (p.ov);
    ok (bound && strncmp (bound, uri, 6) == 0 && !strchr (bound, '*'),
        "bind uri is resolved: %s", bound ? bound : "(null)");
    for (int i = 0; i < 3; i++) {
        if (!node_create (&c[i], (uint32_t)i + 1, 4, 3, 100, 1000, 0))
            BAIL_OUT ("overlay_create failed");
    }
    ok (tree_connect (&p, c, 3), "three children are ONLINE both ways");
    for (int i = 0; i < 3; i++) {
        if (strcmp (p.history[i + 1], "online")
            || strcmp (c[i].history[0], "online"))
            diag ("history: parent saw %s, child %d saw %s", p.history[i + 1],
                  i + 1, c[i].history[0]);
    }
    ok (!strcmp (p.history[1], "online") && !strcmp (p.history[2], "online")
            && !strcmp (p.history[3], "online"),
        "each child was reported ONLINE once");
    check_request_up (&p, &c[0]);
    check_response_down_and_up (&p, &c[2]);
    check_events (&p, c, 3);
    check_control (&p, &c[1]);
    check_bulk (&p, &c[0]);
    check_disconnect_child (&p, &c[2]);
    ok (overlay_child_status (p.ov, 1, NULL) == OVERLAY_PEER_ONLINE
            && overlay_child_status (p.ov, 2, NULL) == OVERLAY_PEER_ONLINE,
        "the other children stayed ONLINE");
    for (int i = 0; i < 3; i++)
        node_destroy (&c[i]);
    node_destroy (&p);
}

/* Refusals by real overlays */

static void test_refusals (void)
{
    struct node p, w, g, x, ok1;
    char uri[PATH_MAX + 16], k3pub[41], k3sec[41], wrong[41], junk[41];

    diag ("refusals");
    zmq_curve_keypair (k3pub, k3sec);
    zmq_curve_keypair (wrong, junk);
    snprintf (uri, sizeof (uri), "ipc://%s/refuse-0", tmpdir);
    /* size 5, fanout 3: ranks 1..3 are children of 0, rank 4 of 1 */
    if (!node_create (&p, 0, 5, 3, 0.1, 10, 0)
        || !node_create (&w, 2, 5, 3, 0.1, 10, 0)
        || !node_create (&g, 4, 5, 3, 0.1, 10, 0)
        || !node_create (&x, 3, 5, 3, 0.1, 10, 0)
        || !node_create (&ok1, 1, 5, 3, 0.1, 10, 0)
        || overlay_bind (p.ov, uri) < 0)
        BAIL_OUT ("cannot set up refusal test");

    /* rank 2 presenting the key authorized for rank 3 */
    ok (overlay_authorize (p.ov, 3, k3pub) == 0
            && overlay_set_cert (w.ov, k3pub, k3sec) == 0
            && overlay_connect (w.ov, uri, overlay_get_pubkey (p.ov)) == 0,
        "rank 2 connects with rank 3's key");
    ok (wait_parent (&w, OVERLAY_PEER_LOST, TIMEOUT)
            && strstr (w.error[w.parent_rank], "another rank"),
        "it is refused: %s", w.error[w.parent_rank]);

    /* rank 4 is authorized but is not a child of rank 0 */
    ok (overlay_authorize (p.ov, 4, overlay_get_pubkey (g.ov)) == 0
            && overlay_connect (g.ov, uri, overlay_get_pubkey (p.ov)) == 0,
        "rank 4 (a grandchild) connects to rank 0");
    ok (wait_parent (&g, OVERLAY_PEER_LOST, TIMEOUT)
            && strstr (g.error[g.parent_rank], "not a child"),
        "it is refused: %s", g.error[g.parent_rank]);

    /* rank 3, authorized, but with the wrong server key */
    ok (overlay_authorize (p.ov, 3, overlay_get_pubkey (x.ov)) == 0
            && overlay_connect (x.ov, uri, wrong) == 0,
        "rank 3 connects expecting the wrong server key");
    ok (wait_parent (&x, OVERLAY_PEER_LOST, TIMEOUT),
        "it reports its parent LOST: %s", x.error[x.parent_rank]);

    ok (p.history[1][0] == '\0' && p.history[2][0] == '\0'
            && p.history[3][0] == '\0',
        "the parent reported no child ONLINE");
    ok (tree_connect (&p, &ok1, 1), "afterwards a proper rank 1 comes ONLINE");
    node_destroy (&ok1);
    node_destroy (&x);
    node_destroy (&g);
    node_destroy (&w);
    node_destroy (&p);
}

/* A hand-driven peer speaking the wire protocol directly */

struct raw {
    void *ctx;
    void *zs;
};

static bool raw_open (struct raw *rw, const char *id, const char *uri,
                      const char *server_key, const char *pub, const char *sec)
{
    int zero = 0;

    memset (rw, 0, sizeof (*rw));
    if (!(rw->ctx = zmq_ctx_new ())
        || !(rw->zs = zmq_socket (rw->ctx, ZMQ_DEALER))
        || zmq_setsockopt (rw->zs, ZMQ_LINGER, &zero, sizeof (zero)) < 0
        || zmq_setsockopt (rw->zs, ZMQ_ROUTING_ID, id, strlen (id)) < 0
        || zmq_setsockopt (rw->zs, ZMQ_CURVE_SERVERKEY, server_key, 40) < 0
        || zmq_setsockopt (rw->zs, ZMQ_CURVE_PUBLICKEY, pub, 40) < 0
        || zmq_setsockopt (rw->zs, ZMQ_CURVE_SECRETKEY, sec, 40) < 0
        || zmq_connect (rw->zs, uri) < 0)
        return false;
    return true;
}

static void raw_close (struct raw *rw)
{
    if (rw->zs)
        zmq_close (rw->zs);
    if (rw->ctx)
        zmq_ctx_term (rw->ctx);
    memset (rw, 0, sizeof (*rw));
}

static int raw_send (struct raw *rw, const flux_msg_t *msg)
{
    uint8_t proto[FLUX_MSG_PROTO_SIZE];
    struct flux_msg_part parts[8];
    int count = 8;

    if (flux_msg_to_parts (msg, proto, parts, &count) < 0)
        return -1;
    for (int i = 0; i < count; i++) {
        if (zmq_send (rw->zs, parts[i].data, parts[i].size,
                      i < count - 1 ? ZMQ_SNDMORE : 0)
            < 0)
            return -1;
    }
    return 0;
}

static int raw_send_hello (struct raw *rw, int version)
{
    flux_msg_t *msg = control (OVERLAY_CONTROL_HELLO, version);
    int rc = raw_send (rw, msg);
    flux_msg_decref (msg);
    return rc;
}

/* Receive one message other than a heartbeat on the raw peer within
 * secs, running the reactor meanwhile.  NULL on timeout. */
static flux_msg_t *raw_recv (struct raw *rw, double secs)
{
    double deadline = monotime () + secs;
    zmq_pollitem_t item = {.socket = rw->zs, .events = ZMQ_POLLIN};

    while (monotime () < deadline) {
        flux_reactor_run (r, FLUX_REACTOR_NOWAIT);
        if (zmq_poll (&item, 1, 5) == 1) {
            zmq_msg_t f[8];
            struct flux_msg_part parts[8];
            int n = 0, more = 1;
            while (more && n < 8) {
                zmq_msg_init (&f[n]);
                if (zmq_msg_recv (&f[n], rw->zs, 0) < 0)
                    BAIL_OUT ("raw recv: %s", zmq_strerror (errno));
                more = zmq_msg_more (&f[n]);
                parts[n].data = zmq_msg_data (&f[n]);
                parts[n].size = zmq_msg_size (&f[n]);
                n++;
            }
            flux_msg_t *msg = flux_msg_from_parts (parts, n);
            for (int i = 0; i < n; i++)
                zmq_msg_close (&f[i]);
            int type, status;
            if (msg && flux_msg_get_control (msg, &type, &status) == 0
                && type == OVERLAY_CONTROL_HEARTBEAT) {
                flux_msg_decref (msg); /* heartbeats are not news */
                continue;
            }
            return msg;
        }
    }
    return NULL;
}

/* Expect a control message (type, status) on the raw peer. */
static bool raw_expect (struct raw *rw, int type, int status)
{
    flux_msg_t *msg = raw_recv (rw, TIMEOUT);
    int t = -1, s = -1;
    bool result = msg && flux_msg_get_control (msg, &t, &s) == 0 && t == type
                  && s == status;
    if (!result)
        diag ("expected control %d/%d, got %s %d/%d", type, status,
              msg ? "control" : "nothing", t, s);
    flux_msg_decref (msg);
    return result;
}

static bool raw_expect_nothing (struct raw *rw, double secs)
{
    flux_msg_t *msg = raw_recv (rw, secs);
    flux_msg_decref (msg);
    return msg == NULL;
}

/* Before hello: traffic refused, bad versions refused, then a welcome. */
static void raw_hello (struct node *p, struct raw *rw)
{
    flux_msg_t *msg = request ("early.bird", 1, "x");

    ok (raw_send (rw, msg) == 0
            && raw_expect (rw, OVERLAY_CONTROL_DISCONNECT,
                           OVERLAY_DISCONNECT_NOTONLINE),
        "raw: a request before hello is answered DISCONNECT (NOTONLINE)");
    ok (p->nrx == 0, "and not delivered");
    ok (raw_send_hello (rw, OVERLAY_PROTOCOL_VERSION + 98) == 0
            && raw_expect (rw, OVERLAY_CONTROL_DISCONNECT,
                           OVERLAY_DISCONNECT_VERSION),
        "raw: hello with the wrong version is answered DISCONNECT (VERSION)");
    ok (p->nstatus[2] == 0
            && overlay_child_status (p->ov, 2, NULL) == OVERLAY_PEER_OFFLINE,
        "the child stays OFFLINE");
    ok (raw_send_hello (rw, OVERLAY_PROTOCOL_VERSION) == 0
            && raw_expect (rw, OVERLAY_CONTROL_WELCOME,
                           OVERLAY_PROTOCOL_VERSION),
        "raw: a proper hello is answered WELCOME (version)");
    ok (wait_status (p, 2, OVERLAY_PEER_ONLINE, TIMEOUT),
        "the parent reports rank 2 ONLINE");
    flux_msg_decref (msg);
}

/* Malformed input is logged and dropped; the link survives. */
static void raw_garbage (struct node *p, struct raw *rw)
{
    uint8_t zeros[FLUX_MSG_PROTO_SIZE] = {0};
    flux_msg_t *ev = event ("after.garbage", 3);
    int nlog = p->nlog, sent = 0;

    node_clear_rx (p);
    if (zmq_send (rw->zs, "junk", 4, 0) == 4)
        sent++;
    if (zmq_send (rw->zs, zeros, sizeof (zeros), 0) == sizeof (zeros))
        sent++;
    for (int i = 0; i < 99; i++)
        (void)zmq_send (rw->zs, "x", 1, ZMQ_SNDMORE);
    if (zmq_send (rw->zs, "x", 1, 0) == 1)
        sent++;
    if (zmq_send (rw->zs, "", 0, 0) == 0)
        sent++;
    cmp_ok (sent, "==", 4, "raw: sent 4 malformed messages");
    ok (raw_send (rw, ev) == 0 && wait_rx (p, 1, TIMEOUT),
        "a good event sent after them arrives");
    cmp_ok (p->nlog - nlog, "==", 4, "each malformed message was logged");
    diag ("last log: %s", p->lastlog);
    ok (p->nrx == 1 && msgtype (p->rx[0]) == FLUX_MSGTYPE_EVENT
            && same_topic (p->rx[0], "after.garbage")
            && !flux_msg_has_flag (p->rx[0], FLUX_MSGFLAG_ROUTE),
        "only the event was delivered, without routes");
    ok (overlay_child_status (p->ov, 2, NULL) == OVERLAY_PEER_ONLINE,
        "the child is still ONLINE");
    node_clear_rx (p);
    flux_msg_decref (ev);
}

/* Requests with and without a route stack from the raw peer. */
static void raw_routes (struct node *p, struct raw *rw)
{
    flux_msg_t *req = request ("raw.req", 5, "x");
    flux_msg_t *bare = request ("raw.bare", 6, NULL);

    node_clear_rx (p);
    ok (raw_send (rw, req) == 0 && raw_send (rw, bare) == 0
            && wait_rx (p, 2, TIMEOUT),
        "raw: two requests arrive");
    if (p->nrx == 2) {
        ok (flux_msg_route_count (p->rx[0]) == 2
                && !strcmp (flux_msg_route_first (p->rx[0]), "x")
                && !strcmp (flux_msg_route_last (p->rx[0]), "2"),
            "the identity is pushed on top of the given routes");
        ok (flux_msg_route_count (p->rx[1]) == 1
                && !strcmp (flux_msg_route_first (p->rx[1]), "2"),
            "an empty route stack gets the identity as only hop");
    }
    node_clear_rx (p);
    flux_msg_decref (req);
    flux_msg_decref (bare);
}

/* Peers lying about who they are. */
static void raw_impostors (struct node *p, const char *uri, const char *pub,
                           const char *sec)
{
    struct raw rw;
    flux_msg_t *req = request ("impostor", 1, NULL);
    const char *server = overlay_get_pubkey (p->ov);

    ok (raw_open (&rw, "3", uri, server, pub, sec)
            && raw_send_hello (&rw, 1) == 0
            && raw_expect (&rw, OVERLAY_CONTROL_DISCONNECT,
                           OVERLAY_DISCONNECT_BADKEY),
        "raw: routing id 3 with rank 2's key is answered DISCONNECT (BADKEY)");
    raw_close (&rw);
    ok (raw_open (&rw, "7", uri, server, pub, sec)
            && raw_send_hello (&rw, 1) == 0
            && raw_expect (&rw, OVERLAY_CONTROL_DISCONNECT,
                           OVERLAY_DISCONNECT_NOTCHILD),
        "raw: routing id 7 is answered DISCONNECT (NOTCHILD)");
    raw_close (&rw);
    int nlog = p->nlog;
    ok (raw_open (&rw, "junk", uri, server, pub, sec)
            && raw_send_hello (&rw, 1) == 0 && raw_expect_nothing (&rw, 0.3),
        "raw: a routing id that is not a rank gets no answer");
    ok (p->nlog > nlog, "but is logged: %s", p->lastlog);
    raw_close (&rw);
    ok (p->history[3][0] == '\0', "no status was reported for rank 3");

    /* a second connection taking over rank 2's routing id (handover) */
    ok (raw_open (&rw, "2", uri, server, pub, sec) && raw_send (&rw, req) == 0
            && raw_expect (&rw, OVERLAY_CONTROL_DISCONNECT,
                           OVERLAY_DISCONNECT_NOTONLINE),
        "raw: a new connection as rank 2 without hello is refused");
    ok (wait_status (p, 2, OVERLAY_PEER_LOST, TIMEOUT)
            && strstr (p->error[2], "without hello"),
        "and rank 2 is reported LOST: %s", p->error[2]);
    ok (raw_send_hello (&rw, 1) == 0
            && raw_expect (&rw, OVERLAY_CONTROL_WELCOME, 1)
            && wait_status (p, 2, OVERLAY_PEER_ONLINE, TIMEOUT),
        "after hello it is ONLINE again");
    is (p->history[2], "online lost online", "rank 2 history");
    raw_close (&rw);
    flux_msg_decref (req);
}

static void test_raw_peer (void)
{
    struct node p;
    struct raw rw;
    char uri[PATH_MAX + 16], pub[41], sec[41];

    diag ("raw peer");
    zmq_curve_keypair (pub, sec);
    snprintf (uri, sizeof (uri), "ipc://%s/raw-0", tmpdir);
    if (!node_create (&p, 0, 4, 3, 0.1, 10, 0) || overlay_bind (p.ov, uri) < 0
        || overlay_authorize (p.ov, 2, pub) < 0)
        BAIL_OUT ("cannot set up raw peer test");
    if (!raw_open (&rw, "2", uri, overlay_get_pubkey (p.ov), pub, sec))
        BAIL_OUT ("cannot open raw peer");
    raw_hello (&p, &rw);
    raw_garbage (&p, &rw);
    raw_routes (&p, &rw);
    raw_impostors (&p, uri, pub, sec);
    raw_close (&rw);
    node_destroy (&p);
}

/* Health: torpid both ways, lost by silence, rejoin */

static void test_torpid_child (void)
{
    struct node p, c;
    char uri[PATH_MAX + 16];
    double t0;
    flux_msg_t *msg = request ("wake.up", 1, NULL);

    snprintf (uri, sizeof (uri), "ipc://%s/torpid-0", tmpdir);
    /* the child never sends heartbeats (period 100s) */
    if (!node_create (&p, 0, 2, 1, 0.05, 0.25, 0)
        || !node_create (&c, 1, 2, 1, 100, 100, 0)
        || overlay_bind (p.ov, uri) < 0)
        BAIL_OUT ("cannot set up torpid test");
    ok (tree_connect (&p, &c, 1), "torpid: a silent child comes ONLINE");
    t0 = monotime ();
    ok (wait_status (&p, 1, OVERLAY_PEER_TORPID, TIMEOUT),
        "the parent reports it TORPID");
    ok (monotime () - t0 >= 0.2, "not before torpid_max (%.3fs)",
        monotime () - t0);
    ok (overlay_send_child (p.ov, 1, msg) == 0,
        "a TORPID child can still be sent to");
    ok (wait_rx (&c, 1, TIMEOUT), "and receives");
    ok (overlay_send_parent (c.ov, msg) == 0
            && wait_status (&p, 1, OVERLAY_PEER_ONLINE, TIMEOUT),
        "a message from the child makes it ONLINE again");
    is (p.history[1], "online torpid online", "history online torpid online");
    ok (p.nrx == 1 && same_topic (p.rx[0], "wake.up"),
        "and the message is delivered");
    flux_msg_decref (msg);
    node_destroy (&c);
    node_destroy (&p);
}

static void test_torpid_parent (void)
{
    struct node p, c;
    char uri[PATH_MAX + 16];
    flux_msg_t *ev = event ("wake.up", 1);

    snprintf (uri, sizeof (uri), "ipc://%s/torpid-1", tmpdir);
    /* the parent never sends heartbeats; the child gives up after 0.8s */
    if (!node_create (&p, 0, 2, 1, 100, 100, 0)
        || !node_create (&c, 1, 2, 1, 0.05, 0.25, 0.8)
        || overlay_bind (p.ov, uri) < 0)
        BAIL_OUT ("cannot set up torpid test");
    ok (tree_connect (&p, &c, 1), "torpid: a silent parent accepts a child");
    ok (wait_parent (&c, OVERLAY_PEER_TORPID, TIMEOUT),
        "the child reports its parent TORPID");
    ok (overlay_send_child (p.ov, 1, ev) == 0
            && wait_parent (&c, OVERLAY_PEER_ONLINE, TIMEOUT),
        "a message from the parent makes it ONLINE again");
    ok (wait_parent (&c, OVERLAY_PEER_LOST, TIMEOUT)
            && strstr (c.error[0], "no message from parent"),
        "after lost_max of silence the parent is LOST: %s", c.error[0]);
    ok (!strncmp (c.history[0], "online torpid online", 20),
        "child history: %s", c.history[0]);
    ok (wait_status (&p, 1, OVERLAY_PEER_LOST, TIMEOUT)
            && !strcmp (p.error[1], "connection closed"),
        "the child hung up, so the parent reports it LOST: %s", p.error[1]);
    flux_msg_decref (ev);
    node_destroy (&c);
    node_destroy (&p);
}

static void test_lost_silence (void)
{
    struct node p, c, h;
    char uri[PATH_MAX + 16], nobody[PATH_MAX + 16];
    flux_msg_t *msg = request ("a.b", 1, NULL);
    double t0;

    snprintf (uri, sizeof (uri), "ipc://%s/silence-0", tmpdir);
    snprintf (nobody, sizeof (nobody), "ipc://%s/nobody", tmpdir);
    if (!node_create (&p, 0, 2, 1, 0.05, 0.1, 0.4)
        || !node_create (&c, 1, 2, 1, 100, 100, 0)
        || !node_create (&h, 1, 2, 1, 0.05, 1, 0.3)
        || overlay_bind (p.ov, uri) < 0)
        BAIL_OUT ("cannot set up silence test");
    ok (tree_connect (&p, &c, 1), "silence: a silent child comes ONLINE");
    t0 = monotime ();
    ok (wait_status (&p, 1, OVERLAY_PEER_LOST, TIMEOUT)
            && strstr (p.error[1], "no message for"),
        "the parent reports it LOST: %s", p.error[1]);
    ok (monotime () - t0 >= 0.3 && monotime () - t0 < 2.0,
        "after about lost_max (%.3fs)", monotime () - t0);
    ok (wait_parent (&c, OVERLAY_PEER_LOST, TIMEOUT)
            && strstr (c.error[0], "heard nothing"),
        "the child was told and reports its parent LOST: %s", c.error[0]);
    errno = 0;
    ok (overlay_send_child (p.ov, 1, msg) < 0 && errno == EHOSTUNREACH,
        "send_child to the lost child fails with EHOSTUNREACH");
    errno = 0;
    ok (overlay_send_parent (c.ov, msg) < 0 && errno == EHOSTUNREACH,
        "the child's send_parent fails with EHOSTUNREACH");
    ok (overlay_connect (c.ov, uri, overlay_get_pubkey (p.ov)) == 0
            && wait_status (&p, 1, OVERLAY_PEER_ONLINE, TIMEOUT)
            && wait_parent (&c, OVERLAY_PEER_ONLINE, TIMEOUT),
        "the child says hello again and rejoins");
    is (p.history[1], "online torpid lost online", "parent history");

    ok (overlay_connect (h.ov, nobody, overlay_get_pubkey (p.ov)) == 0
            && wait_parent (&h, OVERLAY_PEER_LOST, TIMEOUT)
            && strstr (h.error[0], "no answer to hello"),
        "a child whose parent never answers reports it LOST: %s", h.error[0]);
    flux_msg_decref (msg);
    node_destroy (&h);
    node_destroy (&c);
    node_destroy (&p);
}

/* Health: loss noticed from the connection (lost_max 0: never by silence) */

static bool node_with_cert (struct node *n, uint32_t rank, const char *pub,
                            const char *sec)
{
    return node_create (n, rank, 4, 3, 0.1, 10, 0)
           && overlay_set_cert (n->ov, pub, sec) == 0;
}

static void test_lost_disconnect (void)
{
    struct node p, c1, c2;
    char uri[PATH_MAX + 16], pub1[41], sec1[41], pub2[41], sec2[41];
    flux_msg_t *msg = request ("a.b", 1, NULL);
    double t0;

    zmq_curve_keypair (pub1, sec1);
    zmq_curve_keypair (pub2, sec2);
    snprintf (uri, sizeof (uri), "ipc://%s/disconnect-0", tmpdir);
    if (!node_create (&p, 0, 4, 3, 0.1, 10, 0) || overlay_bind (p.ov, uri) < 0
        || !node_with_cert (&c1, 1, pub1, sec1)
        || !node_with_cert (&c2, 2, pub2, sec2))
        BAIL_OUT ("cannot set up disconnect test");
    ok (tree_connect (&p, &c1, 1) && tree_connect (&p, &c2, 1),
        "disconnect: two children ONLINE");
    node_destroy (&c1);
    t0 = monotime ();
    ok (wait_status (&p, 1, OVERLAY_PEER_LOST, TIMEOUT)
            && !strcmp (p.error[1], "connection closed"),
        "destroying a child makes the parent report it LOST: %s", p.error[1]);
    ok (monotime () - t0 < 2.0, "promptly (%.3fs)", monotime () - t0);
    errno = 0;
    ok (overlay_send_child (p.ov, 1, msg) < 0 && errno == EHOSTUNREACH,
        "send_child to it fails with EHOSTUNREACH");
    ok (overlay_child_status (p.ov, 2, NULL) == OVERLAY_PEER_ONLINE,
        "the other child is still ONLINE");

    ok (node_with_cert (&c1, 1, pub1, sec1) && tree_connect (&p, &c1, 1),
        "a restarted rank 1 rejoins");
    is (p.history[1], "online lost online", "rank 1 history");

    /* restart rank 2 before the parent can notice it went away */
    node_destroy (&c2);
    ok (node_with_cert (&c2, 2, pub2, sec2)
            && overlay_connect (c2.ov, uri, overlay_get_pubkey (p.ov)) == 0
            && wait_parent (&c2, OVERLAY_PEER_ONLINE, TIMEOUT)
            && wait_status (&p, 2, OVERLAY_PEER_ONLINE, TIMEOUT),
        "a rank 2 restarted at once rejoins");
    is (p.history[2], "online lost online", "rank 2 history");

    /* the child's pipe vanishes while the parent still thinks it ONLINE */
    node_destroy (&c1);
    usleep (200000);
    errno = 0;
    ok (overlay_send_child (p.ov, 1, msg) < 0 && errno == EHOSTUNREACH,
        "send_child to a child that just vanished fails with EHOSTUNREACH");
    ok (wait_status (&p, 1, OVERLAY_PEER_LOST, TIMEOUT),
        "and it is reported LOST");
    is (p.history[1], "online lost online lost", "rank 1 history");

    node_destroy (&p);
    ok (wait_parent (&c2, OVERLAY_PEER_LOST, TIMEOUT)
            && !strcmp (c2.error[0], "connection to parent closed"),
        "destroying the parent makes the child report it LOST: %s",
        c2.error[0]);
    flux_msg_decref (msg);
    node_destroy (&c2);
}

/* Across processes: a forked child killed with SIGKILL */

struct forked {
    pid_t pid;
    char uri[PATH_MAX + 16];
    char ppub[41], psec[41], cpub[41], csec[41];
};

static void forked_child_main (struct forked *f)
{
    struct overlay_config cfg
        = {.rank = 1, .size = 2, .topo = T (2, 1), .heartbeat = 0.1};
    flux_reactor_t *cr;
    struct overlay *ov;

    alarm (30); /* never outlive the test */
    if (!(cr = flux_reactor_create (0))
        || !(ov = overlay_create (cr, &cfg, NULL, NULL, NULL))
        || overlay_set_cert (ov, f->cpub, f->csec) < 0
        || overlay_connect (ov, f->uri, f->ppub) < 0)
        _exit (1);
    flux_reactor_run (cr, 0); /* until killed */
    _exit (0);
}

/* Fork before anything else exists: the child gets no zmq context or
 * loop of ours to trip over. */
static void fork_child (struct forked *f)
{
    snprintf (f->uri, sizeof (f->uri), "ipc://%s/fork-0", tmpdir);
    zmq_curve_keypair (f->ppub, f->psec);
    zmq_curve_keypair (f->cpub, f->csec);
    fflush (stdout);
    fflush (stderr);
    if ((f->pid = fork ()) < 0)
        BAIL_OUT ("fork: %s", strerror (errno));
    if (f->pid == 0)
        forked_child_main (f);
}

static void test_forked_sigkill (struct forked *f)
{
    struct node p;
    int status = 0;
    double t0;

    diag ("forked child");
    if (!node_create (&p, 0, 2, 1, 0.1, 10, 0)
        || overlay_set_cert (p.ov, f->ppub, f->psec) < 0
        || overlay_authorize (p.ov, 1, f->cpub) < 0
        || overlay_bind (p.ov, f->uri) < 0)
        BAIL_OUT ("cannot set up fork test");
    ok (wait_status (&p, 1, OVERLAY_PEER_ONLINE, 2 * TIMEOUT),
        "fork: the child process comes ONLINE");
    kill (f->pid, SIGKILL);
    t0 = monotime ();
    ok (wait_status (&p, 1, OVERLAY_PEER_LOST, TIMEOUT)
            && !strcmp (p.error[1], "connection closed"),
        "after SIGKILL the parent reports it LOST: %s", p.error[1]);
    ok (monotime () - t0 < 2.0, "promptly (%.3fs, lost_max is 0)",
        monotime () - t0);
    ok (waitpid (f->pid, &status, 0) == f->pid && WIFSIGNALED (status)
            && WTERMSIG (status) == SIGKILL,
        "the child died of SIGKILL");
    node_destroy (&p);
}

static void watchdog (int sig)
{
    static const char msg[] = "Bail out! watchdog: test hung\n";
    if (write (STDOUT_FILENO, msg, sizeof (msg) - 1) < 0)
        _exit (2);
    _exit (1);
}

static void cleanup_tmpdir (void)
{
    const char *names[]
        = {"args",     "tbon-0",    "refuse-0",     "raw-0", "torpid-0",
           "torpid-1", "silence-0", "disconnect-0", "fork-0"};
    char path[PATH_MAX + 32];

    for (size_t i = 0; i < sizeof (names) / sizeof (names[0]); i++) {
        snprintf (path, sizeof (path), "%s/%s", tmpdir, names[i]);
        (void)unlink (path);
    }
    if (rmdir (tmpdir) < 0)
        diag ("rmdir %s: %s", tmpdir, strerror (errno));
}

int main (int argc, char *argv[])
{
    struct forked f;
    const char *t = getenv ("TMPDIR");

    plan (NO_PLAN);
    signal (SIGALRM, watchdog);
    alarm (120);
    snprintf (tmpdir, sizeof (tmpdir), "%s/overlay-test.XXXXXX",
              t ? t : "/tmp");
    if (!mkdtemp (tmpdir))
        BAIL_OUT ("mkdtemp: %s", strerror (errno));
    fork_child (&f);
    if (!(r = flux_reactor_create (0)))
        BAIL_OUT ("flux_reactor_create failed");
    uv_timer_init (flux_reactor_uv (r), &wait_timer);

    test_forked_sigkill (&f);
    test_create_args ();
    test_cert_and_authorize ();
    test_bind_connect_args ();
    test_tree ("ipc");
    test_tree ("tcp");
    test_refusals ();
    test_raw_peer ();
    test_torpid_child ();
    test_torpid_parent ();
    test_lost_silence ();
    test_lost_disconnect ();

    uv_close ((uv_handle_t *)&wait_timer, NULL);
    flux_reactor_destroy (r);
    cleanup_tmpdir ();
    topos_destroy ();
    done_testing ();
    return 0;
}
