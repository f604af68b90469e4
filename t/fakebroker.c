/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* fakebroker.c - a stand-in broker for testing the flux commands before
 * (and independently of) the real one.
 *
 * Usage: fakebroker SOCKET
 *
 * Listens on the unix socket SOCKET, writes the accept byte 0 to each
 * client (PROTOCOLS.md 1.1) and speaks to it over fd:// with libflux.
 * It serves, per PROTOCOLS.md sections 2-3: attr.get/list/set/rm,
 * broker.ping, log.append/dmesg/cancel/clear, event.subscribe/
 * unsubscribe/publish, state-machine.get, module.list/load/remove,
 * kvs.stats-get, overlay.topology/health (a canned 5-rank tree: 1 and 3
 * full, 2 lost) and shutdown.start.  Test hooks: badping.ping answers
 * with an extra key, padping.ping changes the pad.  Anything else gets
 * ENOSYS.  Exits on SIGTERM, or after 120 s as a safety net.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "libflux/base64.h"
#include "libflux/flux.h"

#define RING_MAX 100

struct conn {
    flux_t *h;
    uv_poll_t poll;
    json_t *subs; /* event topic prefixes */
    struct conn *next;
};

struct follower {
    struct conn *c;
    const flux_msg_t *req;
    struct follower *next;
};

static struct {
    uv_loop_t *loop;
    json_t *attrs;
    json_t *ring;
    json_t *mods;
    struct conn *conns;
    struct follower *followers;
    int seq;
    double start;
} fb;

static void die (const char *what)
{
    fprintf (stderr, "fakebroker: %s: %s\n", what, strerror (errno));
    exit (1);
}

static double now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void respond_errno (struct conn *c, const flux_msg_t *msg, int e,
                           const char *text)
{
    if (flux_respond_error (c->h, msg, e, text) < 0)
        fprintf (stderr, "fakebroker: respond: %s\n", strerror (errno));
}

/* attr.get / attr.list / attr.set / attr.rm */
static void attr_cb (struct conn *c, const flux_msg_t *msg, const char *topic)
{
    const char *name, *value;
    json_t *v;

    if (!strcmp (topic, "attr.list")) {
        json_t *names = json_array ();
        const char *key;
        json_object_foreach (fb.attrs, key, v)
            json_array_append_new (names, json_string (key));
        flux_respond_pack (c->h, msg, "{s:o}", "names", names);
        return;
    }
    if (!strcmp (topic, "attr.set")) {
        if (flux_request_unpack (msg, NULL, "{s:s s:s}", "name", &name, "value",
                                 &value)
            < 0)
            return respond_errno (c, msg, EPROTO, NULL);
        if (!json_object_get (fb.attrs, name))
            return respond_errno (c, msg, ENOENT, "unknown attribute");
        json_object_set_new (fb.attrs, name, json_string (value));
        flux_respond (c->h, msg, NULL);
        return;
    }
    if (flux_request_unpack (msg, NULL, "{s:s}", "name", &name) < 0)
        return respond_errno (c, msg, EPROTO, NULL);
    if (!(v = json_object_get (fb.attrs, name)))
        return respond_errno (c, msg, ENOENT, NULL);
    if (!strcmp (topic, "attr.rm")) {
        json_object_del (fb.attrs, name);
        flux_respond (c->h, msg, NULL);
        return;
    }
    flux_respond_pack (c->h, msg, "{s:s s:i}", "value", json_string_value (v),
                       "flags", 0);
}

/* NAME.ping: echo the request plus route, userid, rolemask, rank. */
static void ping_cb (struct conn *c, const flux_msg_t *msg, const char *topic)
{
    struct flux_msg_cred cred = {0};
    char *rs = flux_msg_route_string (msg);
    char route[512];
    json_t *o;

    if (flux_msg_unpack (msg, "o", &o) < 0 || !(o = json_deep_copy (o)))
        return respond_errno (c, msg, EPROTO, NULL);
    snprintf (route, sizeof (route), "%s%sfakebrkr", rs ? rs : "",
              rs && *rs ? "!" : "");
    flux_msg_get_cred (msg, &cred);
    json_object_set_new (o, "route", json_string (route));
    json_object_set_new (o, "userid", json_integer (cred.userid));
    json_object_set_new (o, "rolemask", json_integer (cred.rolemask));
    json_object_set_new (o, "rank", json_integer (0));
    if (!strcmp (topic, "badping.ping"))
        json_object_set_new (o, "extra", json_true ());
    if (!strcmp (topic, "padping.ping"))
        json_object_set_new (o, "pad", json_string ("changed"));
    flux_respond_pack (c->h, msg, "o", o);
    free (rs);
}

static void log_add (const char *line, size_t len)
{
    json_array_append_new (fb.ring, json_stringn (line, len));
    if (json_array_size (fb.ring) > RING_MAX)
        json_array_remove (fb.ring, 0);
    for (struct follower *f = fb.followers; f; f = f->next) {
        char *s = strndup (line, len);
        flux_respond (f->c->h, f->req, s);
        free (s);
    }
}

/* log.append: raw text, no NUL, one entry per line; respond only when
 * the request has a matchtag.
 */
static void log_append_cb (struct conn *c, const flux_msg_t *msg)
{
    const char *data;
    size_t len;
    uint32_t tag = 0;

    if (flux_request_decode_raw (msg, NULL, (const void **)&data, &len) < 0
        || (len > 0 && memchr (data, '\0', len)))
        return respond_errno (c, msg, EPROTO, NULL);
    while (len > 0) {
        const char *nl = memchr (data, '\n', len);
        size_t n = nl ? (size_t)(nl - data) : len;
        if (n > 0)
            log_add (data, n);
        data += n + (nl ? 1 : 0);
        len -= n + (nl ? 1 : 0);
    }
    if (flux_msg_get_matchtag (msg, &tag) == 0 && tag != 0)
        flux_respond (c->h, msg, NULL);
}

static void log_dmesg_cb (struct conn *c, const flux_msg_t *msg)
{
    int follow, nobacklog = 0;
    size_t i;
    json_t *v;

    if (!flux_msg_is_streaming (msg))
        return respond_errno (c, msg, EPROTO, "streaming required");
    if (flux_request_unpack (msg, NULL, "{s:b s?b}", "follow", &follow,
                             "nobacklog", &nobacklog)
        < 0)
        return respond_errno (c, msg, EPROTO, NULL);
    if (!nobacklog) {
        json_array_foreach (fb.ring, i, v)
            flux_respond (c->h, msg, json_string_value (v));
    }
    if (!follow)
        return respond_errno (c, msg, ENODATA, NULL);
    struct follower *f = calloc (1, sizeof (*f));
    f->c = c;
    f->req = flux_msg_incref (msg);
    f->next = fb.followers;
    fb.followers = f;
}

/* Remove followers of c (all if msg is NULL, else the one msg cancels). */
static void followers_drop (struct conn *c, const flux_msg_t *cancel)
{
    struct follower **fp = &fb.followers;
    uint32_t tag = 0, ftag;

    if (cancel
        && flux_request_unpack (cancel, NULL, "{s:i}", "matchtag", &tag) < 0)
        return;
    while (*fp) {
        struct follower *f = *fp;
        if (f->c == c
            && (!cancel
                || (flux_msg_get_matchtag (f->req, &ftag) == 0
                    && ftag == tag))) {
            if (cancel)
                respond_errno (c, f->req, ENODATA, NULL);
            *fp = f->next;
            flux_msg_decref (f->req);
            free (f);
        }
        else
            fp = &f->next;
    }
}

static void event_publish_cb (struct conn *c, const flux_msg_t *msg)
{
    const char *topic, *payload = NULL;
    struct flux_msg_cred cred;
    char buf[8192];
    ssize_t len = 0;
    flux_msg_t *ev;
    int flags;

    if (flux_request_unpack (msg, NULL, "{s:s s:i s?s}", "topic", &topic,
                             "flags", &flags, "payload", &payload)
            < 0
        || (flags & ~FLUX_MSGFLAG_PRIVATE)
        || (payload
            && (len
                = base64_decode (buf, sizeof (buf), payload, strlen (payload)))
                   < 0))
        return respond_errno (c, msg, EPROTO, NULL);
    if (!(ev = flux_event_encode_raw (topic, payload ? buf : NULL, len)))
        return respond_errno (c, msg, errno, NULL);
    flux_msg_get_cred (msg, &cred);
    flux_msg_set_cred (ev, cred);
    flux_msg_set_seq (ev, ++fb.seq);
    if (flags)
        flux_msg_set_private (ev);
    for (struct conn *k = fb.conns; k; k = k->next) {
        size_t i;
        json_t *v;
        json_array_foreach (k->subs, i, v)
        {
            const char *p = json_string_value (v);
            if (!strncmp (topic, p, strlen (p))) {
                flux_send (k->h, ev, 0);
                break;
            }
        }
    }
    flux_msg_destroy (ev);
    flux_respond_pack (c->h, msg, "{s:i}", "seq", fb.seq);
}

static void subscribe_cb (struct conn *c, const flux_msg_t *msg, bool sub)
{
    const char *topic;
    size_t i;
    json_t *v;

    if (flux_request_unpack (msg, NULL, "{s:s}", "topic", &topic) < 0)
        return respond_errno (c, msg, EPROTO, NULL);
    if (sub)
        json_array_append_new (c->subs, json_string (topic));
    else {
        json_array_foreach (c->subs, i, v)
        {
            if (!strcmp (json_string_value (v), topic))
                break;
        }
        if (i == json_array_size (c->subs))
            return respond_errno (c, msg, ENOENT, NULL);
        json_array_remove (c->subs, i);
    }
    flux_respond (c->h, msg, NULL);
}

static void module_cb (struct conn *c, const flux_msg_t *msg, const char *topic)
{
    const char *path, *name = NULL;
    json_t *args;
    size_t i;
    json_t *m;

    if (!strcmp (topic, "module.list")) {
        flux_respond_pack (c->h, msg, "{s:O}", "mods", fb.mods);
        return;
    }
    if (!strcmp (topic, "module.load")) {
        if (flux_request_unpack (msg, NULL, "{s:s s:o s?s}", "path", &path,
                                 "args", &args, "name", &name)
            < 0)
            return respond_errno (c, msg, EPROTO, NULL);
        if (strstr (path, "nosuch"))
            return respond_errno (c, msg, ENOENT, "module not found");
        json_array_append_new (
            fb.mods, json_pack ("{s:s s:s s:i s:i s:[] s:O}", "name",
                                name ? name : path, "path", path, "idle", 0,
                                "status", 1, "services", "args", args));
        flux_respond (c->h, msg, NULL);
        return;
    }
    if (flux_request_unpack (msg, NULL, "{s:s}", "name", &name) < 0)
        return respond_errno (c, msg, EPROTO, NULL);
    json_array_foreach (fb.mods, i, m)
    {
        if (!strcmp (json_string_value (json_object_get (m, "name")), name)) {
            json_array_remove (fb.mods, i);
            flux_respond (c->h, msg, NULL);
            return;
        }
    }
    respond_errno (c, msg, ENOENT, NULL);
}

/* Tree 0 -> {1 -> {3}, 2 -> {4}}; 1 and 3 are full, 2 is lost. */
static void overlay_cb (struct conn *c, const flux_msg_t *msg,
                        const char *topic)
{
    uint32_t nodeid = FLUX_NODEID_ANY;

    if (!strcmp (topic, "overlay.topology")) {
        flux_respond_pack (c->h, msg,
                           "{s:i s:i s:[{s:i s:i s:[{s:i s:i s:[]}]}"
                           " {s:i s:i s:[{s:i s:i s:[]}]}]}",
                           "rank", 0, "size", 5, "children", "rank", 1, "size",
                           2, "children", "rank", 3, "size", 1, "children",
                           "rank", 2, "size", 2, "children", "rank", 4, "size",
                           1, "children");
        return;
    }
    flux_msg_get_nodeid (msg, &nodeid);
    if (nodeid == 0 || nodeid == FLUX_NODEID_ANY)
        flux_respond_pack (c->h, msg,
                           "{s:i s:s s:f s:[{s:i s:s s:f}"
                           " {s:i s:s s:f s:s}]}",
                           "rank", 0, "status", "partial", "duration", 90.0,
                           "children", "rank", 1, "status", "full", "duration",
                           80.0, "rank", 2, "status", "lost", "duration", 30.0,
                           "error", "lost connection");
    else if (nodeid == 1)
        flux_respond_pack (c->h, msg, "{s:i s:s s:f s:[{s:i s:s s:f}]}", "rank",
                           1, "status", "full", "duration", 80.0, "children",
                           "rank", 3, "status", "full", "duration", 70.0);
    else if (nodeid == 3)
        flux_respond_pack (c->h, msg, "{s:i s:s s:f s:[]}", "rank", 3, "status",
                           "full", "duration", 70.0, "children");
    else
        respond_errno (c, msg, EHOSTUNREACH, NULL);
}

static void shutdown_cb (struct conn *c, const flux_msg_t *msg)
{
    if (!flux_msg_is_streaming (msg)) {
        flux_respond (c->h, msg, NULL);
        return;
    }
    flux_respond_pack (c->h, msg, "{s:s}", "log",
                       "broker.info[0]: shutdown started\n");
    respond_errno (c, msg, ENODATA, NULL);
}

static void request_cb (struct conn *c, const flux_msg_t *msg)
{
    const char *topic;

    if (flux_msg_get_topic (msg, &topic) < 0)
        return;
    if (!strncmp (topic, "attr.", 5))
        attr_cb (c, msg, topic);
    else if (!strcmp (topic, "broker.ping") || !strcmp (topic, "kvs.ping")
             || !strcmp (topic, "badping.ping")
             || !strcmp (topic, "padping.ping"))
        ping_cb (c, msg, topic);
    else if (!strcmp (topic, "log.append"))
        log_append_cb (c, msg);
    else if (!strcmp (topic, "log.dmesg"))
        log_dmesg_cb (c, msg);
    else if (!strcmp (topic, "log.cancel"))
        followers_drop (c, msg);
    else if (!strcmp (topic, "log.clear")) {
        json_array_clear (fb.ring);
        flux_respond (c->h, msg, NULL);
    }
    else if (!strcmp (topic, "event.publish"))
        event_publish_cb (c, msg);
    else if (!strcmp (topic, "event.subscribe"))
        subscribe_cb (c, msg, true);
    else if (!strcmp (topic, "event.unsubscribe"))
        subscribe_cb (c, msg, false);
    else if (!strcmp (topic, "state-machine.get"))
        flux_respond_pack (c->h, msg, "{s:s s:f}", "state", "run", "duration",
                           now () - fb.start);
    else if (!strncmp (topic, "module.", 7))
        module_cb (c, msg, topic);
    else if (!strcmp (topic, "kvs.stats-get"))
        flux_respond_pack (c->h, msg, "{s:{s:i} s:{s:i}}", "tx", "request", 7,
                           "rx", "request", 3);
    else if (!strncmp (topic, "overlay.", 8))
        overlay_cb (c, msg, topic);
    else if (!strcmp (topic, "shutdown.start"))
        shutdown_cb (c, msg);
    else
        respond_errno (c, msg, ENOSYS, NULL);
}

static void conn_close_cb (uv_handle_t *h)
{
    struct conn *c = h->data;

    flux_close (c->h);
    json_decref (c->subs);
    free (c);
}

static void conn_destroy (struct conn *c)
{
    struct conn **cp = &fb.conns;

    while (*cp && *cp != c)
        cp = &(*cp)->next;
    if (*cp)
        *cp = c->next;
    followers_drop (c, NULL);
    uv_close ((uv_handle_t *)&c->poll, conn_close_cb);
}

static void conn_cb (uv_poll_t *p, int status, int events)
{
    struct conn *c = p->data;
    flux_msg_t *msg;
    int type;

    while ((msg = flux_recv (c->h, FLUX_O_NONBLOCK))) {
        if (flux_msg_get_type (msg, &type) == 0 && type == FLUX_MSGTYPE_REQUEST)
            request_cb (c, msg);
        flux_msg_destroy (msg);
    }
    if (errno != EWOULDBLOCK && errno != EAGAIN)
        conn_destroy (c);
}

static void accept_cb (uv_poll_t *p, int status, int events)
{
    int lfd = *(int *)p->data;
    struct conn *c;
    char uri[32];
    int fd;

    if ((fd = accept4 (lfd, NULL, NULL, SOCK_CLOEXEC)) < 0)
        return;
    if (write (fd, "", 1) != 1 || !(c = calloc (1, sizeof (*c)))) {
        close (fd);
        return;
    }
    snprintf (uri, sizeof (uri), "fd://%d", fd);
    if (!(c->h = flux_open (uri, 0)))
        die ("flux_open fd://");
    c->subs = json_array ();
    c->poll.data = c;
    uv_poll_init (fb.loop, &c->poll, flux_pollfd (c->h));
    uv_poll_start (&c->poll, UV_READABLE | UV_DISCONNECT, conn_cb);
    c->next = fb.conns;
    fb.conns = c;
}

static void stop_cb (uv_signal_t *s, int signum)
{
    uv_stop (fb.loop);
}

static void timeout_cb (uv_timer_t *t)
{
    fprintf (stderr, "fakebroker: lifetime exceeded, exiting\n");
    uv_stop (fb.loop);
}

static void attrs_init (void)
{
    char buf[64];

    fb.attrs = json_object ();
    json_object_set_new (fb.attrs, "rank", json_string ("0"));
    json_object_set_new (fb.attrs, "size", json_string ("1"));
    json_object_set_new (fb.attrs, "hostlist", json_string ("fake[0-4]"));
    json_object_set_new (fb.attrs, "instance-level", json_string ("0"));
    json_object_set_new (fb.attrs, "log-level", json_string ("6"));
    snprintf (buf, sizeof (buf), "%d", (int)getuid ());
    json_object_set_new (fb.attrs, "security.owner", json_string (buf));
    snprintf (buf, sizeof (buf), "%.6f", fb.start - 90);
    json_object_set_new (fb.attrs, "broker.starttime", json_string (buf));
}

int main (int argc, char **argv)
{
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    uv_poll_t lpoll;
    uv_signal_t sigterm;
    uv_timer_t timer;
    int lfd;

    if (argc != 2 || strlen (argv[1]) >= sizeof (sun.sun_path)) {
        fprintf (stderr, "Usage: fakebroker SOCKET\n");
        return 1;
    }
    fb.loop = uv_default_loop ();
    fb.start = now ();
    fb.ring = json_array ();
    fb.mods = json_pack (
        "[{s:s s:s s:i s:i s:[ss] s:i s:i}"
        " {s:s s:s s:f s:i s:[s] s:i s:i}]",
        "name", "kvs", "path", "/lib/flux/kvs.so", "idle", 3, "status", 1,
        "services", "kvs", "kvs-watch", "sendqueue", 0, "recvqueue", 2, "name",
        "connector-local", "path", "builtin", "idle", 150.5, "status", 1,
        "services", "connector-local", "sendqueue", 0, "recvqueue", 0);
    attrs_init ();
    strcpy (sun.sun_path, argv[1]);
    unlink (argv[1]);
    if ((lfd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0
        || bind (lfd, (struct sockaddr *)&sun, sizeof (sun)) < 0
        || listen (lfd, 64) < 0)
        die (argv[1]);
    signal (SIGPIPE, SIG_IGN);
    lpoll.data = &lfd;
    uv_poll_init (fb.loop, &lpoll, lfd);
    uv_poll_start (&lpoll, UV_READABLE, accept_cb);
    uv_signal_init (fb.loop, &sigterm);
    uv_signal_start (&sigterm, stop_cb, SIGTERM);
    uv_timer_init (fb.loop, &timer);
    uv_timer_start (&timer, timeout_cb, 120 * 1000, 0);
    uv_run (fb.loop, UV_RUN_DEFAULT);
    unlink (argv[1]);
    return 0;
}
