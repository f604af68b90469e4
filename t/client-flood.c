/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* client-flood - test helper: clients that misuse the local connector.
 * The broker's socket is taken from FLUX_URI (local://PATH).
 *
 * client-flood subscribe N
 *   Open N connections, subscribe each to every event, and never read.
 *   Prints "ready N" once every subscription is answered, then waits for
 *   SIGUSR1 (at most 600 s), reads what each connection holds and prints
 *   "closed C open O": C connections were closed by the broker.
 * client-flood publish COUNT SIZE [WINDOW]
 *   Publish COUNT events "flood.event" of SIZE bytes (WINDOW, default 8,
 *   in flight at a time, at most 1024); prints "published COUNT" when
 *   every one is acknowledged.
 * client-flood partial N ANNOUNCE SEND TIMEOUT
 *   Open N connections; each announces a frame of ANNOUNCE bytes and
 *   sends at most SEND bytes of it (what the broker takes), then waits.
 *   Prints "closed C of N after S s" once every connection is closed or
 *   TIMEOUT seconds have passed.
 * client-flood answer SERVICE COUNT SIZE
 *   Register SERVICE, print "registered", wait for one request, print
 *   "asked", wait for SIGUSR1 (at most 600 s), then answer that request
 *   COUNT times with SIZE bytes and print "answered COUNT".
 * client-flood victim SERVICE
 *   Send B = kvs.wait-version for a version that never comes (it stays
 *   pending), then A = SERVICE.hello; print "A: PAYLOAD" once A is
 *   answered, then "B: PAYLOAD" if B got an answer within 3 s after A,
 *   else "B: pending".
 * client-flood forge SERVICE
 *   Register SERVICE, print "registered", wait for one request, then
 *   forge an answer to every other matchtag below the request's plus 8
 *   of the same sender (topic kvs.wait-version, rootref "forged"), print
 *   "forged N", answer the request itself {ok:"legit"} and print
 *   "answered".
 * client-flood read COUNT
 *   Subscribe to "flood." events, print "ready", read COUNT of them (as
 *   fast as they come) and print "read COUNT in S s".
 * client-flood sink SERVICE
 *   Register SERVICE, print "registered", then read its requests and
 *   never answer them, until killed.
 * client-flood pending RANK TOPIC COUNT [PAYLOAD]
 *   Send COUNT streaming requests TOPIC to RANK ("any" for any), then
 *   read answers until none came for 1 s (10 s at most; what came is
 *   read as they are sent, too, so that answers do not pile up); print
 *   "answered A refused R" (R of the A answers were errors) and
 *   "refused: TEXT" for the first error, then wait for SIGUSR1 (at most
 *   600 s) and leave.  With CLIENT_FLOOD_ROUTE=ID in the environment,
 *   each request carries the route ID below the one the broker pushes
 *   (a client naming another sender); with CLIENT_FLOOD_TAG0=N, the
 *   matchtags begin at N (else 1).
 * client-flood rawpub COUNT SIZE
 *   Send COUNT events "flood.raw" of SIZE bytes as raw event messages
 *   (no event.publish request: nothing is answered), then ping the
 *   broker and print "sent COUNT", and "dropped D of them" with D from
 *   the broker's count of this client's messages dropped going up
 *   (broker.stats-get "upstream-dropped-clients").
 * Exit 0 on success, 1 on error (with a message on stderr).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "libflux/flux.h"
#include "libflux/local_connect.h"

#define USAGE                                                         \
    "Usage: client-flood subscribe N\n"                               \
    "       client-flood publish COUNT SIZE [WINDOW]\n"               \
    "       client-flood partial N ANNOUNCE SEND TIMEOUT\n"           \
    "       client-flood state subscribe|service|request COUNT LEN\n" \
    "       client-flood answer SERVICE COUNT SIZE\n"                 \
    "       client-flood victim SERVICE\n"                            \
    "       client-flood forge SERVICE\n"                             \
    "       client-flood sink SERVICE\n"                              \
    "       client-flood read COUNT\n"                                \
    "       client-flood pending RANK TOPIC COUNT [PAYLOAD]\n"        \
    "       client-flood rawpub COUNT SIZE\n"

static void die (const char *what)
{
    fprintf (stderr, "client-flood: %s: %s\n", what, strerror (errno));
    exit (1);
}

static double now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long number (const char *s)
{
    char *end;
    long v = strtol (s, &end, 10);

    if (*s == '\0' || *end || v < 0) {
        fprintf (stderr, "client-flood: not a count: %s\n", s);
        exit (1);
    }
    return v;
}

/* As many fds as the hard limit allows. */
static void raise_nofile (void)
{
    struct rlimit rl;

    if (getrlimit (RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit (RLIMIT_NOFILE, &rl);
    }
}

/* Wait up to 10 s for fd to be ready for events. */
static void wait_fd (int fd, short events)
{
    struct pollfd p = {.fd = fd, .events = events};

    if (poll (&p, 1, 10000) <= 0) {
        errno = ETIMEDOUT;
        die ("poll");
    }
}

static void write_all (int fd, const void *buf, size_t len)
{
    const char *p = buf;

    while (len > 0) {
        ssize_t n = write (fd, p, len);
        if (n < 0) {
            if (errno == EAGAIN) {
                wait_fd (fd, POLLOUT);
                continue;
            }
            die ("write");
        }
        p += n;
        len -= n;
    }
}

static void read_all (int fd, void *buf, size_t len)
{
    char *p = buf;

    while (len > 0) {
        ssize_t n = read (fd, p, len);
        if (n == 0) {
            errno = ECONNRESET;
            die ("read");
        }
        if (n < 0) {
            if (errno == EAGAIN) {
                wait_fd (fd, POLLIN);
                continue;
            }
            die ("read");
        }
        p += n;
        len -= n;
    }
}

/* A non-blocking connection to the broker, its accept byte read (waiting
 * at most 10 s for it). */
static int broker_connect (void)
{
    const char *uri = getenv ("FLUX_URI");
    unsigned char byte;
    int fd;

    if (!uri || strncmp (uri, "local://", 8) != 0) {
        fprintf (stderr, "client-flood: FLUX_URI must be local://PATH\n");
        exit (1);
    }
    if ((fd = local_connect (uri + 8)) < 0)
        die ("connect");
    if (fcntl (fd, F_SETFL, O_NONBLOCK) < 0)
        die ("fcntl");
    read_all (fd, &byte, 1);
    if (byte != 0) {
        errno = byte;
        die ("connection refused");
    }
    return fd;
}

static void send_msg (int fd, const flux_msg_t *msg)
{
    ssize_t size = flux_msg_frame_size (msg);
    void *buf;

    if (size < 0 || !(buf = malloc (size)))
        die ("frame");
    if (flux_msg_frame_encode (msg, buf, size) != size)
        die ("frame_encode");
    write_all (fd, buf, size);
    free (buf);
}

/* Read one frame and check it is a successful response. */
static void read_response (int fd)
{
    unsigned char prefix[FLUX_MSG_FRAME_PREFIX];
    flux_msg_t *msg = NULL;
    unsigned char *buf;
    uint32_t len;
    int errnum = 0;

    read_all (fd, prefix, sizeof (prefix));
    len = (uint32_t)prefix[4] << 24 | prefix[5] << 16 | prefix[6] << 8
          | prefix[7];
    if (!(buf = malloc (sizeof (prefix) + len)))
        die ("malloc");
    memcpy (buf, prefix, sizeof (prefix));
    read_all (fd, buf + sizeof (prefix), len);
    if (flux_msg_frame_decode (buf, sizeof (prefix) + len, &msg, NULL) <= 0)
        die ("frame_decode");
    if (flux_msg_get_errnum (msg, &errnum) < 0 || errnum != 0) {
        errno = errnum ? errnum : EPROTO;
        die ("event.subscribe");
    }
    flux_msg_destroy (msg);
    free (buf);
}

/* Read what fd holds: 1 if the broker closed it, 0 if it is still open. */
static int drain (int fd)
{
    static char buf[65536];

    for (;;) {
        ssize_t n = recv (fd, buf, sizeof (buf), MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno == ECONNRESET))
            return 1;
        if (n < 0)
            return errno == EINTR ? drain (fd) : 0;
    }
}

/* Block SIGUSR1 from the start, so that one sent early is not lost;
 * wait_usr1 takes it, waiting at most 600 s. */
static void block_usr1 (sigset_t *set)
{
    sigemptyset (set);
    sigaddset (set, SIGUSR1);
    sigprocmask (SIG_BLOCK, set, NULL);
}

static void wait_usr1 (const sigset_t *set)
{
    struct timespec ts = {.tv_sec = 600};

    (void)sigtimedwait (set, NULL, &ts);
}

static int subscribe (int n)
{
    flux_msg_t *req;
    sigset_t set;
    int *fds = calloc (n, sizeof (*fds));
    int closed = 0;

    if (!fds)
        die ("calloc");
    block_usr1 (&set);
    if (!(req = flux_request_encode ("event.subscribe", "{\"topic\":\"\"}")))
        die ("request");
    for (int i = 0; i < n; i++) {
        fds[i] = broker_connect ();
        send_msg (fds[i], req);
    }
    for (int i = 0; i < n; i++)
        read_response (fds[i]);
    flux_msg_destroy (req);
    printf ("ready %d\n", n);
    fflush (stdout);
    wait_usr1 (&set);
    for (int i = 0; i < n; i++)
        closed += drain (fds[i]);
    printf ("closed %d open %d\n", closed, n - closed);
    for (int i = 0; i < n; i++)
        close (fds[i]);
    free (fds);
    return 0;
}

static int publish (int count, size_t size, int window)
{
    enum { WINDOW = 1024 };
    flux_future_t *f[WINDOW] = {NULL};
    char *pay = malloc (size ? size : 1);
    flux_t *h;

    if (!pay || !(h = flux_open (NULL, 0)))
        die ("flux_open");
    memset (pay, 'x', size);
    if (window < 1 || window > WINDOW)
        die ("publish: WINDOW must be 1..1024");
    for (int i = 0; i < count + window; i++) {
        int slot = i % window;
        if (f[slot]) {
            if (flux_future_get (f[slot], NULL) < 0)
                die ("event.publish");
            flux_future_destroy (f[slot]);
            f[slot] = NULL;
        }
        if (i < count
            && !(f[slot]
                 = flux_event_publish_raw (h, "flood.event", 0, pay, size)))
            die ("flux_event_publish_raw");
    }
    printf ("published %d\n", count);
    flux_close (h);
    free (pay);
    return 0;
}

static int partial (int n, uint32_t announce, size_t send_max, double timeout)
{
    struct pollfd *p = calloc (n, sizeof (*p));
    static char junk[65536];
    unsigned char hdr[FLUX_MSG_FRAME_PREFIX];
    uint32_t magic = FLUX_MSG_FRAME_MAGIC;
    int closed = 0;
    double t0;

    if (!p)
        die ("calloc");
    memcpy (hdr, &magic, 4);
    hdr[4] = announce >> 24;
    hdr[5] = announce >> 16;
    hdr[6] = announce >> 8;
    hdr[7] = announce;
    t0 = now ();
    for (int i = 0; i < n; i++) {
        size_t sent = 0;
        p[i].fd = broker_connect ();
        p[i].events = POLLIN;
        (void)send (p[i].fd, hdr, sizeof (hdr), MSG_NOSIGNAL);
        /* what the broker takes within a second */
        while (sent < send_max && now () - t0 < i + 1.) {
            size_t len = send_max - sent < sizeof (junk) ? send_max - sent
                                                         : sizeof (junk);
            ssize_t k = send (p[i].fd, junk, len, MSG_NOSIGNAL);
            if (k < 0) {
                if (errno == EAGAIN) {
                    struct pollfd w = {.fd = p[i].fd, .events = POLLOUT};
                    (void)poll (&w, 1, 100);
                    continue;
                }
                break; /* closed by the broker */
            }
            sent += k;
        }
    }
    while (closed < n && now () - t0 < timeout) {
        if (poll (p, n, 100) < 0 && errno != EINTR)
            die ("poll");
        for (int i = 0; i < n; i++) {
            if (p[i].fd >= 0 && p[i].revents && drain (p[i].fd)) {
                close (p[i].fd);
                p[i].fd = -1;
                closed++;
            }
        }
    }
    printf ("closed %d of %d after %.1f s\n", closed, n, now () - t0);
    for (int i = 0; i < n; i++)
        if (p[i].fd >= 0)
            close (p[i].fd);
    free (p);
    return 0;
}

static int state (const char *kind, int count, size_t len)
{
    char *name = malloc (len + 32);
    char errtext[256] = "";
    sigset_t set;
    int kept = 0;
    flux_t *h;

    block_usr1 (&set);
    if (!name || !(h = flux_open (NULL, 0)))
        die ("flux_open");
    for (int i = 0; i < count; i++) {
        flux_future_t *f;
        int rc;
        /* the services a guest may register are <userid>-* */
        int n = snprintf (name, len + 32, "%u-%d-", (unsigned)getuid (), i);
        while ((size_t)n < len)
            name[n++] = 'x';
        name[n] = '\0';
        if (!strcmp (kind, "subscribe"))
            f = flux_rpc_pack (h, "event.subscribe", FLUX_NODEID_ANY, 0,
                               "{s:s}", "topic", name);
        else if (!strcmp (kind, "service"))
            f = flux_rpc_pack (h, "service.add", FLUX_NODEID_ANY, 0, "{s:s}",
                               "service", name);
        else {
            strcat (name, ".x");
            f = flux_rpc (h, name, NULL, FLUX_NODEID_ANY, 0);
        }
        if (!f) { /* cut off by the broker */
            snprintf (errtext, sizeof (errtext), "%s", strerror (errno));
            break;
        }
        rc = flux_future_get (f, NULL);
        if (rc == 0 || errno == ENOSYS)
            kept++;
        else if (!errtext[0])
            snprintf (errtext, sizeof (errtext), "%s",
                      future_strerror (f, errno));
        flux_future_destroy (f);
    }
    printf ("kept %d of %d\n", kept, count);
    if (errtext[0])
        printf ("refused: %s\n", errtext);
    fflush (stdout);
    wait_usr1 (&set);
    flux_close (h);
    free (name);
    return 0;
}

/* Register SERVICE on h and print "registered". */
static void add_service (flux_t *h, const char *service)
{
    flux_future_t *f;

    if (!(f = flux_rpc_pack (h, "service.add", FLUX_NODEID_ANY, 0, "{s:s}",
                             "service", service))
        || flux_future_get (f, NULL) < 0)
        die ("service.add");
    flux_future_destroy (f);
    printf ("registered\n");
    fflush (stdout);
}

/* Register SERVICE on h and return the first request that comes (the
 * caller's reference). */
static flux_msg_t *serve_one (flux_t *h, const char *service)
{
    flux_msg_t *req = NULL;

    add_service (h, service);
    while (!req) {
        flux_msg_t *msg = flux_recv (h, 0);
        int type = 0;
        if (!msg)
            die ("flux_recv");
        if (flux_msg_get_type (msg, &type) == 0 && type == FLUX_MSGTYPE_REQUEST)
            req = msg;
        else
            flux_msg_decref (msg);
    }
    return req;
}

static int answer (const char *service, int count, size_t size)
{
    char *pay = calloc (1, size ? size : 1);
    flux_msg_t *req;
    sigset_t set;
    flux_t *h;

    block_usr1 (&set);
    if (!pay || !(h = flux_open (NULL, 0)))
        die ("flux_open");
    req = serve_one (h, service);
    printf ("asked\n");
    fflush (stdout);
    wait_usr1 (&set);
    for (int i = 0; i < count; i++)
        if (flux_respond_raw (h, req, pay, size) < 0)
            die ("flux_respond_raw");
    printf ("answered %d\n", count);
    flux_msg_decref (req);
    flux_close (h);
    free (pay);
    return 0;
}

static int victim (const char *service)
{
    char topic[256];
    const char *s = NULL;
    flux_future_t *a, *b;
    flux_t *h;

    snprintf (topic, sizeof (topic), "%s.hello", service);
    if (!(h = flux_open (NULL, 0)))
        die ("flux_open");
    if (!(b = flux_rpc_pack (h, "kvs.wait-version", FLUX_NODEID_ANY, 0,
                             "{s:i s:s}", "rootseq", 1 << 30, "namespace",
                             "primary"))
        || !(a = flux_rpc_pack (h, topic, FLUX_NODEID_ANY, 0, "{}")))
        die ("flux_rpc_pack");
    if (flux_future_wait_for (a, 60.) < 0 || flux_rpc_get (a, &s) < 0)
        die (topic);
    printf ("A: %s\n", s ? s : "");
    s = NULL;
    if (flux_future_wait_for (b, 3.) < 0)
        printf ("B: pending\n");
    else if (flux_rpc_get (b, &s) < 0)
        printf ("B: error %s\n", strerror (errno));
    else
        printf ("B: %s\n", s ? s : "");
    fflush (stdout);
    flux_future_destroy (a);
    flux_future_destroy (b);
    flux_close (h);
    return 0;
}

static int forge (const char *service)
{
    flux_msg_t *req;
    flux_future_t *f;
    uint32_t tag = 0;
    int n = 0;
    flux_t *h;

    if (!(h = flux_open (NULL, 0)))
        die ("flux_open");
    req = serve_one (h, service);
    if (flux_msg_get_matchtag (req, &tag) < 0)
        die ("flux_msg_get_matchtag");
    /* the sender's other RPCs have nearby matchtags: answer them all */
    for (uint32_t m = 1; m < tag + 8; m++) {
        flux_msg_t *rsp;
        if (m == tag)
            continue;
        if (!(rsp = flux_response_derive (req, 0))
            || flux_msg_set_topic (rsp, "kvs.wait-version") < 0
            || flux_msg_set_matchtag (rsp, m) < 0
            || flux_msg_pack (rsp, "{s:i s:s}", "rootseq", 1 << 30, "rootref",
                              "forged")
                   < 0
            || flux_send (h, rsp, 0) < 0)
            die ("forge");
        flux_msg_decref (rsp);
        n++;
    }
    printf ("forged %d\n", n);
    if (flux_respond_pack (h, req, "{s:s}", "ok", "legit") < 0)
        die ("flux_respond_pack");
    printf ("answered\n");
    fflush (stdout);
    /* stay connected until the answers are routed */
    if ((f = flux_rpc_pack (h, "broker.ping", FLUX_NODEID_ANY, 0, "{}")))
        (void)flux_future_get (f, NULL);
    flux_future_destroy (f);
    flux_msg_decref (req);
    flux_close (h);
    return 0;
}

static flux_t *open_service (const char *service)
{
    flux_t *h;

    if (!(h = flux_open (NULL, 0)))
        die ("flux_open");
    add_service (h, service);
    return h;
}

static int readev (int count)
{
    flux_t *h = flux_open (NULL, 0);
    double t0 = 0;

    if (!h || flux_event_subscribe (h, "flood.") < 0)
        die ("subscribe");
    printf ("ready\n");
    fflush (stdout);
    for (int i = 0; i < count; i++) {
        flux_msg_t *msg = flux_recv (h, 0);
        if (!msg)
            die ("flux_recv");
        if (i == 0)
            t0 = now ();
        flux_msg_decref (msg);
    }
    printf ("read %d in %.3f s\n", count, now () - t0);
    flux_close (h);
    return 0;
}

static int sink (const char *service)
{
    flux_t *h = open_service (service);

    for (;;) {
        flux_msg_t *msg = flux_recv (h, 0);
        if (!msg)
            die ("flux_recv");
        flux_msg_decref (msg);
    }
    return 0;
}

struct tally {
    int answered, refused;
    char errtext[256];
};

/* Read what h holds now (wait up to ms for it); true if anything came. */
static bool tally_read (flux_t *h, struct tally *t, int ms)
{
    struct pollfd p = {.fd = flux_pollfd (h), .events = POLLIN};
    flux_msg_t *msg;
    bool any = false;

    (void)poll (&p, 1, ms);
    while ((msg = flux_recv (h, FLUX_O_NONBLOCK))) {
        const char *text = NULL;
        int errnum = 0;
        t->answered++;
        if (flux_msg_get_errnum (msg, &errnum) == 0 && errnum != 0) {
            t->refused++;
            if (!t->errtext[0]) {
                (void)flux_msg_get_string (msg, &text);
                snprintf (t->errtext, sizeof (t->errtext), "%s: %s",
                          strerror (errnum), text ? text : "");
            }
        }
        flux_msg_decref (msg);
        any = true;
    }
    return any;
}

static int pending (const char *rank, const char *topic, int count,
                    const char *payload)
{
    uint32_t nodeid = FLUX_NODEID_ANY;
    const char *route = getenv ("CLIENT_FLOOD_ROUTE");
    const char *tag0 = getenv ("CLIENT_FLOOD_TAG0");
    uint32_t tag = tag0 ? (uint32_t)number (tag0) : 1;
    struct timespec ts = {.tv_sec = 600};
    struct tally t = {0};
    double t0, last;
    sigset_t set;
    flux_t *h;

    sigemptyset (&set);
    sigaddset (&set, SIGUSR1);
    sigprocmask (SIG_BLOCK, &set, NULL);
    if (strcmp (rank, "any") != 0)
        nodeid = (uint32_t)number (rank);
    if (!(h = flux_open (NULL, 0)))
        die ("flux_open");
    for (int i = 0; i < count; i++) {
        flux_msg_t *req = flux_request_encode (topic, payload);
        if (!req || flux_msg_set_nodeid (req, nodeid) < 0
            || (route
                && (flux_msg_route_enable (req),
                    flux_msg_route_push (req, route) < 0))
            || flux_msg_set_streaming (req) < 0
            || flux_msg_set_matchtag (req, tag + (uint32_t)i) < 0
            || flux_send (h, req, 0) < 0)
            die ("send");
        flux_msg_decref (req);
        if (i % 256 == 255)
            (void)tally_read (h, &t, 0); /* answers do not pile up */
    }
    t0 = last = now ();
    while (now () - last < 1. && now () - t0 < 10.) {
        if (tally_read (h, &t, 100))
            last = now ();
    }
    printf ("answered %d refused %d\n", t.answered, t.refused);
    if (t.errtext[0])
        printf ("refused: %s\n", t.errtext);
    fflush (stdout);
    (void)sigtimedwait (&set, NULL, &ts);
    flux_close (h);
    return 0;
}

static int rawpub (int count, size_t size)
{
    char *pay = malloc (size ? size : 1);
    json_int_t dropped = 0;
    flux_future_t *f;
    json_t *a, *e;
    size_t i;
    flux_t *h;

    if (!pay || !(h = flux_open (NULL, 0)))
        die ("flux_open");
    memset (pay, 'x', size);
    for (int i = 0; i < count; i++) {
        flux_msg_t *ev = flux_event_encode_raw ("flood.raw", pay, size);
        if (!ev || flux_send (h, ev, 0) < 0)
            die ("send event");
        flux_msg_decref (ev);
    }
    /* every event was read by the broker once it answers */
    if (!(f = flux_rpc_pack (h, "broker.ping", FLUX_NODEID_ANY, 0, "{}"))
        || flux_future_get (f, NULL) < 0)
        die ("broker.ping");
    flux_future_destroy (f);
    if (!(f = flux_rpc (h, "broker.stats-get", NULL, FLUX_NODEID_ANY, 0))
        || flux_rpc_get_unpack (f, "{s:o}", "upstream-dropped-clients", &a) < 0)
        die ("broker.stats-get");
    json_array_foreach (a, i, e)
    {
        int pid = 0;
        json_int_t n = 0;
        if (json_unpack (e, "{s:i s:I}", "pid", &pid, "dropped", &n) == 0
            && pid == (int)getpid ())
            dropped = n;
    }
    flux_future_destroy (f);
    printf ("sent %d\n", count);
    printf ("dropped %lld of them\n", (long long)dropped);
    flux_close (h);
    free (pay);
    return 0;
}

int main (int argc, char **argv)
{
    signal (SIGPIPE, SIG_IGN);
    raise_nofile ();
    if (argc == 3 && !strcmp (argv[1], "subscribe"))
        return subscribe (number (argv[2]));
    if ((argc == 4 || argc == 5) && !strcmp (argv[1], "publish"))
        return publish (number (argv[2]), number (argv[3]),
                        argc == 5 ? number (argv[4]) : 8);
    if (argc == 6 && !strcmp (argv[1], "partial"))
        return partial (number (argv[2]), (uint32_t)number (argv[3]),
                        number (argv[4]), number (argv[5]));
    if (argc == 5 && !strcmp (argv[1], "answer"))
        return answer (argv[2], number (argv[3]), number (argv[4]));
    if (argc == 3 && !strcmp (argv[1], "victim"))
        return victim (argv[2]);
    if (argc == 3 && !strcmp (argv[1], "forge"))
        return forge (argv[2]);
    if (argc == 3 && !strcmp (argv[1], "sink"))
        return sink (argv[2]);
    if (argc == 3 && !strcmp (argv[1], "read"))
        return readev (number (argv[2]));
    if ((argc == 5 || argc == 6) && !strcmp (argv[1], "pending"))
        return pending (argv[2], argv[3], number (argv[4]),
                        argc == 6 ? argv[5] : NULL);
    if (argc == 4 && !strcmp (argv[1], "rawpub"))
        return rawpub (number (argv[2]), number (argv[3]));
    if (argc == 5 && !strcmp (argv[1], "state"))
        return state (argv[2], number (argv[3]), number (argv[4]));
    fprintf (stderr, USAGE);
    return 1;
}
