/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Unit tests for the local connector server (usock): creation and the
 * socket file, role assignment and credential stamping (with a forked
 * child running as nobody), libflux clients, fairness, flow control,
 * hostile clients, many clients, and the lifetime rules.
 *
 * Clients are raw non-blocking sockets in this process; every helper that
 * waits for a client socket runs the server's loop meanwhile.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "broker/usock.h"
#include "tap.h"

#define TIMEOUT_MS 10000
#define MAXREC 16384
#define MAXCONN 512
#define NOBODY 65534

struct rec {
    struct usock_client *c;
    uint32_t tag;
    struct flux_msg_cred cred;
};

static struct {
    uv_loop_t loop;
    uv_timer_t tick;
    struct usock_server *s;
    char dir[64];
    char path[96];
    /* what happened */
    int nconn, ndisc, nlog;
    struct usock_client *conn[MAXCONN];
    struct rec rec[MAXREC];
    int nrec;
    flux_msg_t *last;
    char lastlog[256];
    char trace[64]; /* "D" disconnected, "A" aux destroyed */
    /* what the callbacks do */
    int echo; /* 1: send the message back, 2: answer it as an RPC */
    int disconnect_after;
    bool destroy_on_msg;
    bool disconnect_on_connect;
    bool nested_disconnect; /* a disconnected callback ran inside a call */
} T;

/* Server callbacks */

static void connected_cb (struct usock_client *c, void *arg)
{
    if (T.nconn < MAXCONN)
        T.conn[T.nconn] = c;
    T.nconn++;
    if (T.disconnect_on_connect) {
        int before = T.ndisc;
        usock_client_disconnect (c);
        if (T.ndisc != before)
            T.nested_disconnect = true;
    }
}

static void echo (struct usock_client *c, flux_msg_t *msg)
{
    if (T.echo == 1)
        (void)usock_client_send (c, msg);
    else if (T.echo == 2) {
        flux_msg_t *rsp = flux_response_derive (msg, 0);
        const void *data;
        size_t size;
        if (flux_msg_get_payload (msg, &data, &size) == 0)
            flux_msg_set_payload (rsp, data, size);
        (void)usock_client_send (c, rsp);
        flux_msg_destroy (rsp);
    }
}

static void message_cb (struct usock_client *c, flux_msg_t *msg, void *arg)
{
    if (T.nrec < MAXREC) {
        struct rec *r = &T.rec[T.nrec];
        r->c = c;
        r->tag = 0;
        (void)flux_msg_get_matchtag (msg, &r->tag);
        (void)flux_msg_get_cred (msg, &r->cred);
    }
    T.nrec++;
    echo (c, msg);
    flux_msg_destroy (T.last);
    T.last = msg;
    if (T.disconnect_after > 0 && T.nrec == T.disconnect_after) {
        int before = T.ndisc;
        usock_client_disconnect (c);
        usock_client_disconnect (c); /* idempotent */
        if (T.ndisc != before)
            T.nested_disconnect = true;
    }
    if (T.destroy_on_msg) {
        usock_server_destroy (T.s);
        T.s = NULL;
    }
}

static void disconnected_cb (struct usock_client *c, void *arg)
{
    T.ndisc++;
    if (strlen (T.trace) < sizeof (T.trace) - 1)
        strcat (T.trace, "D");
}

static void log_cb (const char *text, void *arg)
{
    T.nlog++;
    snprintf (T.lastlog, sizeof (T.lastlog), "%s", text);
}

static const struct usock_ops ops = {
    .connected = connected_cb,
    .message = message_cb,
    .disconnected = disconnected_cb,
    .log = log_cb,
};

static void reset (void)
{
    T.nconn = T.ndisc = T.nlog = T.nrec = 0;
    T.lastlog[0] = T.trace[0] = '\0';
    flux_msg_destroy (T.last);
    T.last = NULL;
    T.echo = 0;
    T.disconnect_after = 0;
    T.destroy_on_msg = T.disconnect_on_connect = T.nested_disconnect = false;
}

/* Loop driving */

static double now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void tick_cb (uv_timer_t *w)
{
}

/* Run the loop until *counter >= n; false on timeout. */
static bool run_until (int *counter, int n)
{
    double t0 = now_ms ();

    uv_timer_start (&T.tick, tick_cb, 1, 1);
    while (*counter < n && now_ms () - t0 < TIMEOUT_MS)
        uv_run (&T.loop, UV_RUN_ONCE);
    uv_timer_stop (&T.tick);
    return *counter >= n;
}

static void run_for (int ms)
{
    double t0 = now_ms ();

    uv_timer_start (&T.tick, tick_cb, 1, 1);
    while (now_ms () - t0 < ms)
        uv_run (&T.loop, UV_RUN_ONCE);
    uv_timer_stop (&T.tick);
}

/* Wait for a child while serving; its exit status, or -1. */
static int child_wait (pid_t pid)
{
    double t0 = now_ms ();
    int status;

    uv_timer_start (&T.tick, tick_cb, 1, 1);
    while (waitpid (pid, &status, WNOHANG) == 0) {
        if (now_ms () - t0 > 3 * TIMEOUT_MS) {
            kill (pid, SIGKILL);
            waitpid (pid, &status, 0);
            break;
        }
        uv_run (&T.loop, UV_RUN_ONCE);
    }
    uv_timer_stop (&T.tick);
    return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

/* Raw clients: non-blocking sockets, the loop runs while they wait. */

static void pump (int fd, short events)
{
    struct pollfd pfd = {.fd = fd, .events = events};
    uv_run (&T.loop, UV_RUN_NOWAIT);
    (void)poll (&pfd, 1, 1);
}

static int write_all (int fd, const void *buf, size_t len)
{
    const char *p = buf;
    double t0 = now_ms ();

    while (len > 0) {
        ssize_t n = send (fd, p, len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno != EAGAIN && errno != EINTR)
                return -1;
            if (now_ms () - t0 > TIMEOUT_MS) {
                errno = ETIMEDOUT;
                return -1;
            }
            pump (fd, POLLOUT);
            continue;
        }
        p += n;
        len -= n;
    }
    return 0;
}

/* Read exactly len bytes: -1 with ECONNRESET on EOF, ETIMEDOUT. */
static int read_exact (int fd, void *buf, size_t len)
{
    char *p = buf;
    double t0 = now_ms ();

    while (len > 0) {
        ssize_t n = recv (fd, p, len, 0);
        if (n == 0) {
            errno = ECONNRESET;
            return -1;
        }
        if (n < 0) {
            if (errno != EAGAIN && errno != EINTR)
                return -1;
            if (now_ms () - t0 > TIMEOUT_MS) {
                errno = ETIMEDOUT;
                return -1;
            }
            pump (fd, POLLIN);
            continue;
        }
        p += n;
        len -= n;
    }
    return 0;
}

/* True if the peer closed (EOF or reset) within the timeout. */
static bool wait_eof (int fd)
{
    char buf[4096];
    double t0 = now_ms ();

    while (now_ms () - t0 < TIMEOUT_MS) {
        ssize_t n = recv (fd, buf, sizeof (buf), 0);
        if (n == 0 || (n < 0 && errno == ECONNRESET))
            return true;
        if (n < 0 && errno != EAGAIN && errno != EINTR)
            return false;
        if (n < 0)
            pump (fd, POLLIN);
    }
    return false;
}

static int send_frame (int fd, const flux_msg_t *msg)
{
    ssize_t size = flux_msg_frame_size (msg);
    void *buf = malloc (size);
    int rc = -1;

    if (buf && flux_msg_frame_encode (msg, buf, size) == size)
        rc = write_all (fd, buf, size);
    free (buf);
    return rc;
}

static flux_msg_t *read_frame (int fd)
{
    uint8_t prefix[FLUX_MSG_FRAME_PREFIX];
    flux_msg_t *msg = NULL;
    uint8_t *buf;
    uint32_t len;

    if (read_exact (fd, prefix, sizeof (prefix)) < 0)
        return NULL;
    len = (uint32_t)prefix[4] << 24 | prefix[5] << 16 | prefix[6] << 8
          | prefix[7];
    if (!(buf = malloc (sizeof (prefix) + len)))
        return NULL;
    memcpy (buf, prefix, sizeof (prefix));
    if (read_exact (fd, buf + sizeof (prefix), len) == 0
        && flux_msg_frame_decode (buf, sizeof (prefix) + len, &msg, NULL) <= 0)
        msg = NULL;
    free (buf);
    return msg;
}

static int raw_connect (const char *path)
{
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    size_t len = strlen (path);
    int fd;

    if (len >= sizeof (sun.sun_path))
        return -1;
    memcpy (sun.sun_path, path, len + 1);
    fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect (fd, (struct sockaddr *)&sun, sizeof (sun)) < 0
        || fcntl (fd, F_SETFL, O_NONBLOCK) < 0) {
        if (fd >= 0)
            close (fd);
        return -1;
    }
    return fd;
}

/* Connect and read the accept byte: fd, or -1 with errno = refusal errno.
 * *cp (may be NULL) is the server side of the connection.
 */
static int client_open (struct usock_client **cp)
{
    int before = T.nconn;
    uint8_t byte;
    int fd;

    if ((fd = raw_connect (T.path)) < 0)
        return -1;
    if (read_exact (fd, &byte, 1) < 0 || byte != 0) {
        close (fd);
        errno = byte ? byte : errno;
        return -1;
    }
    if (cp) {
        (void)run_until (&T.nconn, before + 1);
        *cp = T.nconn > before ? T.conn[before] : NULL;
    }
    return fd;
}

static flux_msg_t *make_req (const char *topic, uint32_t tag)
{
    flux_msg_t *msg = flux_request_encode (topic, "hello");
    if (!msg || flux_msg_set_matchtag (msg, tag) < 0)
        BAIL_OUT ("cannot build a request");
    return msg;
}

/* Send a request with the given preset credentials; the stamped ones. */
static struct flux_msg_cred send_cred (int fd, struct flux_msg_cred preset)
{
    struct flux_msg_cred got = {0x12345678, 0x12345678};
    flux_msg_t *msg = make_req ("cred.test", 1);
    int n = T.nrec;

    flux_msg_set_cred (msg, preset);
    if (send_frame (fd, msg) == 0 && run_until (&T.nrec, n + 1))
        got = T.rec[n].cred;
    flux_msg_destroy (msg);
    return got;
}

static bool cred_eq (struct flux_msg_cred a, uint32_t userid, uint32_t rolemask)
{
    return a.userid == userid && a.rolemask == rolemask;
}

/* Server lifecycle */

static struct usock_server *server_start (const struct usock_policy *p)
{
    flux_error_t error;

    reset ();
    if (!(T.s = usock_server_create (&T.loop, T.path, p, &ops, NULL, &error)))
        diag ("usock_server_create: %s", error.text);
    return T.s;
}

static void server_stop (void)
{
    usock_server_destroy (T.s);
    T.s = NULL;
    uv_run (&T.loop, UV_RUN_NOWAIT);
}

static struct usock_policy owner_policy (void)
{
    struct usock_policy p = {.owner = getuid ()};
    return p;
}

/* Tests */

static void test_create (void)
{
    struct usock_policy p = owner_policy ();
    struct usock_ops noop = {0};
    char longpath[200];
    flux_error_t error;
    struct stat st;
    mode_t um;
    int fd;

    errno = 0;
    ok (!usock_server_create (NULL, T.path, &p, &ops, NULL, NULL)
            && errno == EINVAL,
        "create with NULL loop: EINVAL");
    errno = 0;
    ok (!usock_server_create (&T.loop, NULL, &p, &ops, NULL, NULL)
            && errno == EINVAL,
        "create with NULL path: EINVAL");
    errno = 0;
    ok (!usock_server_create (&T.loop, "", &p, &ops, NULL, NULL)
            && errno == EINVAL,
        "create with empty path: EINVAL");
    errno = 0;
    ok (!usock_server_create (&T.loop, T.path, NULL, &ops, NULL, NULL)
            && errno == EINVAL,
        "create with NULL policy: EINVAL");
    errno = 0;
    error.text[0] = '\0';
    ok (!usock_server_create (&T.loop, T.path, &p, &noop, NULL, &error)
            && errno == EINVAL && strlen (error.text) > 0,
        "create without a message callback: EINVAL with text");
    memset (longpath, 'x', sizeof (longpath) - 1);
    longpath[0] = '/';
    longpath[sizeof (longpath) - 1] = '\0';
    errno = 0;
    ok (!usock_server_create (&T.loop, longpath, &p, &ops, NULL, &error)
            && errno == ENAMETOOLONG && strstr (error.text, "too long"),
        "path too long for sockaddr_un: ENAMETOOLONG (%s)", error.text);
    errno = 0;
    ok (!usock_server_create (&T.loop, "/nonexistent-dir/sock", &p, &ops, NULL,
                              &error)
            && errno == ENOENT && strstr (error.text, "/nonexistent-dir"),
        "path in a missing directory: ENOENT (%s)", error.text);

    fd = open (T.path, O_CREAT | O_WRONLY, 0600);
    close (fd);
    errno = 0;
    ok (!usock_server_create (&T.loop, T.path, &p, &ops, NULL, &error)
            && errno == EEXIST,
        "path is a regular file: EEXIST (%s)", error.text);
    ok (stat (T.path, &st) == 0 && S_ISREG (st.st_mode),
        "the regular file was left alone");
    unlink (T.path);

    /* a stale socket: bound, then its owner went away */
    {
        struct sockaddr_un sun = {.sun_family = AF_UNIX};
        snprintf (sun.sun_path, sizeof (sun.sun_path), "%s", T.path);
        fd = socket (AF_UNIX, SOCK_STREAM, 0);
        if (bind (fd, (struct sockaddr *)&sun, sizeof (sun)) < 0)
            BAIL_OUT ("bind: %s", strerror (errno));
        close (fd);
    }
    um = umask (077);
    ok (server_start (&p) != NULL, "create replaces a stale socket");
    umask (um);
    ok (stat (T.path, &st) == 0 && S_ISSOCK (st.st_mode)
            && (st.st_mode & 07777) == 0600,
        "socket file is a socket with mode 0600 despite umask 077 (%o)",
        (unsigned)(st.st_mode & 07777));
    ok ((fd = client_open (NULL)) >= 0, "a client connects to it");
    close (fd);
    cmp_ok (usock_server_client_count (NULL), "==", 0,
            "client_count (NULL) is 0");
    errno = 42;
    server_stop ();
    cmp_ok (errno, "==", 42, "destroy preserves errno");
    ok (lstat (T.path, &st) < 0 && errno == ENOENT,
        "destroy removes the socket file");
    errno = 42;
    usock_server_destroy (NULL);
    cmp_ok (errno, "==", 42, "destroy (NULL) is a no-op preserving errno");

    /* destroy leaves a socket that replaced ours alone */
    {
        struct usock_server *first;
        ok ((first = server_start (&p)) != NULL, "create a server");
        ok (server_start (&p) != NULL, "a second server takes over the path");
        usock_server_destroy (first);
        uv_run (&T.loop, UV_RUN_NOWAIT);
        ok (lstat (T.path, &st) == 0 && S_ISSOCK (st.st_mode),
            "destroying the first leaves the second one's socket");
        ok ((fd = client_open (NULL)) >= 0, "the second server still works");
        close (fd);
        server_stop ();
    }
}

static bool uuid_valid (const char *u)
{
    if (!u || strlen (u) != 36)
        return false;
    for (int i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (u[i] != '-')
                return false;
        }
        else if (!strchr ("0123456789abcdef", u[i]))
            return false;
    }
    return u[14] == '4' && strchr ("89ab", u[19]);
}

static void test_owner (void)
{
    struct usock_policy p = owner_policy ();
    uint32_t me = getuid ();
    uint32_t owner = FLUX_ROLE_OWNER | FLUX_ROLE_LOCAL;
    struct usock_client *c1 = NULL, *c2 = NULL;
    struct flux_msg_cred cred;
    flux_msg_t *msg, *got;
    const char *topic, *s;
    int fd1, fd2;

    if (!server_start (&p))
        BAIL_OUT ("cannot create server");
    ok ((fd1 = client_open (&c1)) >= 0 && c1,
        "owner connects: accept byte 0, connected callback");
    ok ((fd2 = client_open (&c2)) >= 0 && c2 && c2 != c1,
        "a second owner connects");
    cmp_ok (usock_server_client_count (T.s), "==", 2, "client_count is 2");
    ok (uuid_valid (usock_client_uuid (c1))
            && uuid_valid (usock_client_uuid (c2)),
        "client UUIDs are 36-char version 4 UUIDs (%s)",
        usock_client_uuid (c1));
    ok (strcmp (usock_client_uuid (c1), usock_client_uuid (c2)) != 0,
        "each connection has its own UUID");
    cred = usock_client_cred (c1);
    ok (cred_eq (cred, me, owner), "client cred is (uid %u, OWNER|LOCAL)", me);

    cred = send_cred (fd1, (struct flux_msg_cred){FLUX_USERID_UNKNOWN, 0});
    ok (cred_eq (cred, me, owner), "owner: unset cred is filled in");
    cred = send_cred (fd1, (struct flux_msg_cred){42, FLUX_ROLE_USER});
    ok (cred_eq (cred, 42, FLUX_ROLE_USER), "owner: preset cred is kept");
    cred = send_cred (fd1, (struct flux_msg_cred){42, 0});
    ok (cred_eq (cred, 42, owner), "owner: only an unset rolemask is filled");
    cred = send_cred (
        fd1, (struct flux_msg_cred){FLUX_USERID_UNKNOWN, FLUX_ROLE_USER});
    ok (cred_eq (cred, me, FLUX_ROLE_USER),
        "owner: only an unset userid is filled");
    ok (T.rec[T.nrec - 1].c == c1, "message callback names its client");
    ok (T.last && flux_request_decode (T.last, &topic, &s) == 0
            && !strcmp (topic, "cred.test") && !strcmp (s, "hello"),
        "message arrives intact");

    msg = make_req ("back.to.you", 77);
    ok (usock_client_send (c2, msg) == 0, "usock_client_send works");
    got = read_frame (fd2);
    ok (got && flux_msg_get_topic (got, &topic) == 0
            && !strcmp (topic, "back.to.you"),
        "client reads the message sent to it");
    flux_msg_destroy (got);
    errno = 0;
    ok (usock_client_send (NULL, msg) < 0 && errno == EINVAL,
        "send to NULL client: EINVAL");
    errno = 0;
    ok (usock_client_send (c2, NULL) < 0 && errno == EINVAL,
        "send of NULL message: EINVAL");

    close (fd1);
    ok (run_until (&T.ndisc, 1), "peer hang-up: disconnected callback");
    cmp_ok (usock_server_client_count (T.s), "==", 1, "client_count is 1");

    usock_client_disconnect (c2);
    cmp_ok (T.ndisc, "==", 1,
            "usock_client_disconnect does not call back from inside");
    cmp_ok (usock_server_client_count (T.s), "==", 0,
            "client no longer counted once disconnecting");
    errno = 0;
    ok (usock_client_send (c2, msg) < 0 && errno == EPIPE,
        "send after disconnect: EPIPE");
    usock_client_disconnect (c2);
    ok (run_until (&T.ndisc, 2), "disconnected callback runs from the loop");
    run_for (5);
    cmp_ok (T.ndisc, "==", 2, "and only once");
    ok (wait_eof (fd2), "the client sees EOF");
    close (fd2);
    usock_client_disconnect (NULL);
    flux_msg_destroy (msg);
    cmp_ok (T.nlog, "==", 0, "nothing was logged");
    server_stop ();
}

static void aux_free (void *val)
{
    if (strlen (T.trace) < sizeof (T.trace) - 1)
        strcat (T.trace, val);
}

static void test_aux (void)
{
    struct usock_policy p = owner_policy ();
    struct usock_client *c;
    int fd;

    if (!server_start (&p))
        BAIL_OUT ("cannot create server");
    fd = client_open (&c);
    ok (usock_client_aux_get (c) == NULL, "aux is NULL at first");
    usock_client_aux_set (c, "X", aux_free);
    ok (usock_client_aux_get (c) == (void *)"X", "aux_get returns the value");
    usock_client_aux_set (c, "A", aux_free);
    is (T.trace, "X", "replacing the value destroys the old one");
    ok (usock_client_aux_get (c) == (void *)"A", "aux_get: the new value");
    ok (usock_client_aux_get (NULL) == NULL, "aux_get (NULL) is NULL");
    usock_client_aux_set (NULL, "Z", aux_free);
    close (fd);
    ok (run_until (&T.ndisc, 1), "client disconnects");
    is (T.trace, "XDA", "aux destroyed once, after the disconnected callback");
    server_stop ();
}

static void test_roles (void)
{
    struct usock_policy p = {.owner = 1234};
    struct usock_client *c;
    struct flux_msg_cred cred;
    int fd;

    if (!server_start (&p))
        BAIL_OUT ("cannot create server");
    errno = 0;
    ok (client_open (NULL) < 0 && errno == EPERM,
        "uid %u is neither owner nor allowed guest: refused with EPERM byte",
        (unsigned)getuid ());
    run_for (5);
    ok (T.nconn == 0 && T.ndisc == 0, "no callbacks for a refused peer");
    ok (T.nlog == 1 && strstr (T.lastlog, "refused"),
        "the refusal is logged (%s)", T.lastlog);
    cmp_ok (usock_server_client_count (T.s), "==", 0, "client_count is 0");
    server_stop ();

    if (getuid () != 0) {
        skip (6, "root policy tests need root");
        return;
    }
    p.allow_root_owner = true;
    if (!server_start (&p))
        BAIL_OUT ("cannot create server");
    ok ((fd = client_open (&c)) >= 0, "allow_root_owner: root is accepted");
    ok (cred_eq (usock_client_cred (c), 0, FLUX_ROLE_OWNER | FLUX_ROLE_LOCAL),
        "allow_root_owner: root is OWNER|LOCAL");
    close (fd);
    server_stop ();

    p.allow_root_owner = false;
    p.allow_guest_user = true;
    p.guest_roles = FLUX_ROLE_ADMIN | FLUX_ROLE_OWNER;
    if (!server_start (&p))
        BAIL_OUT ("cannot create server");
    ok ((fd = client_open (&c)) >= 0, "allow_guest_user: root is a guest");
    ok (cred_eq (usock_client_cred (c), 0,
                 FLUX_ROLE_USER | FLUX_ROLE_ADMIN | FLUX_ROLE_LOCAL),
        "guest is USER|guest_roles|LOCAL, OWNER in guest_roles ignored");
    cred = send_cred (fd, (struct flux_msg_cred){4321, FLUX_ROLE_OWNER});
    ok (cred_eq (cred, 0, FLUX_ROLE_USER | FLUX_ROLE_ADMIN | FLUX_ROLE_LOCAL),
        "guest: preset cred is overwritten");
    cred = send_cred (fd, (struct flux_msg_cred){FLUX_USERID_UNKNOWN, 0});
    ok (cred_eq (cred, 0, FLUX_ROLE_USER | FLUX_ROLE_ADMIN | FLUX_ROLE_LOCAL),
        "guest: unset cred is filled");
    close (fd);
    server_stop ();
}

/* Forked child: become nobody, connect with libflux, send a request with
 * forged OWNER credentials and check what comes back.  Exit codes:
 * 0 accepted and echoed as stamped, 10 refused with EPERM, else failure.
 */
static int guest_child (void)
{
    char uri[160];
    flux_msg_t *msg, *rsp;
    struct flux_msg_cred cred;
    flux_t *h;

    if (setgroups (0, NULL) < 0 || setgid (NOBODY) < 0 || setuid (NOBODY) < 0)
        return 90;
    if (setuid (0) == 0 || getuid () != NOBODY)
        return 91;
    snprintf (uri, sizeof (uri), "local://%s", T.path);
    if (!(h = flux_open (uri, 0)))
        return errno == EPERM ? 10 : errno == EACCES ? 11 : 92;
    msg = flux_request_encode ("guest.hello", "x");
    flux_msg_set_cred (msg, (struct flux_msg_cred){0, FLUX_ROLE_OWNER});
    if (flux_send (h, msg, 0) < 0)
        return 93;
    if (!(rsp = flux_recv (h, 0)))
        return 94;
    if (flux_msg_get_cred (rsp, &cred) < 0 || cred.userid != NOBODY
        || cred.rolemask != (FLUX_ROLE_USER | FLUX_ROLE_LOCAL))
        return 95;
    flux_msg_destroy (rsp);
    flux_msg_destroy (msg);
    flux_close (h);
    return 0;
}

static int run_guest_child (void)
{
    pid_t pid;

    fflush (stdout);
    fflush (stderr);
    if ((pid = fork ()) < 0)
        BAIL_OUT ("fork: %s", strerror (errno));
    if (pid == 0)
        _exit (guest_child ());
    return child_wait (pid);
}

static void test_guest (void)
{
    struct usock_policy p = owner_policy ();
    int rc;

    if (getuid () != 0) {
        skip (8, "guest tests need root to setuid to nobody");
        return;
    }
    if (!server_start (&p))
        BAIL_OUT ("cannot create server");
    rc = run_guest_child ();
    cmp_ok (rc, "==", 11,
            "guest (uid %d) without allow_guest_user: the socket's mode (0600) "
            "refuses it: EACCES",
            NOBODY);
    ok (T.nconn == 0 && T.ndisc == 0, "no callbacks for the refused guest");
    server_stop ();

    /* a guest that reaches the socket all the same (mode changed behind
     * the server's back) is still refused, by its credentials */
    if (!server_start (&p) || chmod (T.path, 0666) < 0)
        BAIL_OUT ("cannot create server");
    rc = run_guest_child ();
    cmp_ok (rc, "==", 10,
            "guest (uid %d) past the mode, without allow_guest_user: EPERM",
            NOBODY);
    ok (T.nconn == 0 && T.ndisc == 0, "no callbacks for the refused guest");
    ok (strstr (T.lastlog, "65534") != NULL, "refusal logged with the uid (%s)",
        T.lastlog);
    server_stop ();

    p.allow_guest_user = true;
    if (!server_start (&p))
        BAIL_OUT ("cannot create server");
    T.echo = 1;
    rc = run_guest_child ();
    cmp_ok (rc, "==", 0,
            "allowed guest connects with libflux, request echoed as stamped");
    ok (T.nrec == 1
            && cred_eq (T.rec[0].cred, NOBODY,
                        FLUX_ROLE_USER | FLUX_ROLE_LOCAL),
        "guest request arrives as (%d, USER|LOCAL), forged OWNER overwritten",
        NOBODY);
    ok (run_until (&T.ndisc, 1), "guest disconnect noticed");
    server_stop ();
}

/* Forked child: n RPCs through libflux; prints the round-trip time. */
static int rpc_child (int n)
{
    char uri[160];
    double t0;
    flux_t *h;

    snprintf (uri, sizeof (uri), "local://%s", T.path);
    if (!(h = flux_open (uri, 0)))
        return 90;
    t0 = now_ms ();
    for (int i = 0; i < n; i++) {
        flux_future_t *f
            = flux_rpc (h, "test.echo", "ping", FLUX_NODEID_ANY, 0);
        const char *s;
        if (!f || flux_rpc_get (f, &s) < 0 || !s || strcmp (s, "ping") != 0)
            return 91;
        flux_future_destroy (f);
    }
    fprintf (stderr, "# %d libflux RPCs: %.1f us per round trip\n", n,
             (now_ms () - t0) * 1e3 / n);
    flux_close (h);
    return 0;
}

static void test_libflux_rpc (void)
{
    struct usock_policy p = owner_policy ();
    pid_t pid;

    if (!server_start (&p))
        BAIL_OUT ("cannot create server");
    T.echo = 2;
    fflush (stdout);
    fflush (stderr);
    if ((pid = fork ()) < 0)
        BAIL_OUT ("fork: %s", strerror (errno));
    if (pid == 0)
        _exit (rpc_child (5000));
    cmp_ok (child_wait (pid), "==", 0, "5000 libflux RPCs round trip");
    cmp_ok (T.nrec, "==", 5000, "server saw 5000 requests");
    ok (T.last && flux_msg_has_flag (T.last, FLUX_MSGFLAG_ROUTE)
            && flux_msg_route_count (T.last) == 0,
        "requests arrive with ROUTE set and an empty stack");
    ok (run_until (&T.ndisc, 1), "libflux client disconnect noticed");
    server_stop ();
}

/* Frames written in one burst: all delivered in order, at most
 * USOCK_BATCH per loop turn, and another client is served in between.
 */
static void test_fairness (void)
{
    struct usock_policy p = owner_policy ();
    struct usock_client *ca, *cb;
    size_t fsize, total;
    uint8_t *burst;
    flux_msg_t *msg;
    int fa, fb, bpos = -1, inorder = 1;
    uint32_t next = 0;

    if (!server_start (&p))
        BAIL_OUT ("cannot create server");
    fa = client_open (&ca);
    fb = client_open (&cb);
    msg = make_req ("burst", 0);
    fsize = flux_msg_frame_size (msg);
    total = fsize * 1000;
    burst = malloc (total);
    for (int i = 0; i < 1000; i++) {
        flux_msg_set_matchtag (msg, i);
        flux_msg_frame_encode (msg, burst + i * fsize, fsize);
    }
    flux_msg_destroy (msg);
    write_all (fa, burst, total);
    uv_run (&T.loop, UV_RUN_NOWAIT);
    cmp_ok (T.nrec, "==", USOCK_BATCH,
            "first loop turn delivers one batch (%d)", USOCK_BATCH);
    uv_run (&T.loop, UV_RUN_NOWAIT);
    cmp_ok (T.nrec, "==", 2 * USOCK_BATCH, "next turn delivers the next");

    msg = make_req ("other", 5000);
    send_frame (fb, msg);
    flux_msg_destroy (msg);
    ok (run_until (&T.nrec, 1001), "all 1001 messages delivered");
    for (int i = 0; i < T.nrec; i++) {
        if (T.rec[i].c == cb)
            bpos = i;
        else if (T.rec[i].c != ca || T.rec[i].tag != next++)
            inorder = 0;
    }
    ok (inorder && next == 1000, "the burst arrived complete and in order");
    /* sent after two batches of the burst: served right after the third */
    ok (bpos >= 0 && bpos <= 3 * USOCK_BATCH,
        "the other client was served before the burst ended (position %d)",
        bpos);
    free (burst);
    close (fa);
    close (fb);
    ok (run_until (&T.ndisc, 2), "both disconnect");
    server_stop ();
}

/* Large messages both ways, and a deep send queue drained later. */
static void test_large (void)
{
    struct usock_policy p = owner_policy ();
    size_t big = 10 * 1024 * 1024;
    struct usock_client *c;
    flux_msg_t *msg, *got;
    const void *data;
    size_t size;
    uint8_t *pay;
    int fd, good = 1, sent = 1;

    if (!server_start (&p))
        BAIL_OUT ("cannot create server");
    fd = client_open (&c);
    pay = malloc (big);
    for (size_t i = 0; i < big; i++)
        pay[i] = (uint8_t)(i * 7 + (i >> 13));
    msg = flux_request_encode_raw ("big.in", pay, big);
    ok (send_frame (fd, msg) == 0 && run_until (&T.nrec, 1),
        "a 10 MiB frame from a client is delivered");
    ok (T.last && flux_msg_get_payload (T.last, &data, &size) == 0
            && size == big && memcmp (data, pay, big) == 0,
        "its payload is intact");

    flux_msg_set_topic (msg, "big.out");
    ok (usock_client_send (c, msg) == 0,
        "sending a 10 MiB message does not block");
    got = read_frame (fd);
    ok (got && flux_msg_get_payload (got, &data, &size) == 0 && size == big
            && memcmp (data, pay, big) == 0,
        "the client reads it intact (partial writes finished from the loop)");
    flux_msg_destroy (got);
    flux_msg_destroy (msg);

    /* 200 x 64 KiB queued while the client does not read */
    for (int i = 0; i < 200; i++) {
        msg = flux_request_encode_raw ("q", pay + i, 65536);
        flux_msg_set_matchtag (msg, i);
        if (usock_client_send (c, msg) < 0)
            sent = 0;
        flux_msg_destroy (msg);
    }
    ok (sent, "200 x 64 KiB queued without the client reading");
    for (int i = 0; i < 200 && good; i++) {
        uint32_t tag;
        got = read_frame (fd);
        if (!got || flux_msg_get_matchtag (got, &tag) < 0 || tag != (uint32_t)i
            || flux_msg_get_payload (got, &data, &size) < 0 || size != 65536
            || memcmp (data, pay + i, size) != 0)
            good = 0;
        flux_msg_destroy (got);
    }
    ok (good, "the client then reads all 200 in order and intact");
    free (pay);
    close (fd);
    ok (run_until (&T.ndisc, 1), "client disconnects");
    server_stop ();
}

static size_t heap_bytes (void)
{
    struct mallinfo2 mi = mallinfo2 ();
    return mi.arena + mi.hblkhd;
}

/* Write bytes as a client, then expect the server to drop it with a log
 * line while a bystander keeps being served.
 */
static void expect_drop (const void *buf, size_t len, const char *what)
{
    struct usock_client *cb;
    flux_msg_t *msg, *got;
    int fd, fb, nrec = T.nrec, ndisc = T.ndisc, nlog = T.nlog;

    fb = client_open (&cb);
    fd = client_open (NULL);
    write_all (fd, buf, len);
    ok (run_until (&T.ndisc, ndisc + 1) && wait_eof (fd),
        "%s: client disconnected", what);
    ok (T.nlog == nlog + 1 && strstr (T.lastlog, "bad frame"),
        "%s: logged (%s)", what, T.lastlog);
    cmp_ok (T.nrec, "==", nrec, "%s: nothing delivered", what);
    msg = make_req ("still.there", 9);
    send_frame (fb, msg);
    got = read_frame (fb);
    ok (got != NULL, "%s: another client is still served", what);
    flux_msg_destroy (got);
    flux_msg_destroy (msg);
    close (fd);
    close (fb);
    (void)run_until (&T.ndisc, ndisc + 2);
}

static void put_prefix (uint8_t *p, uint32_t len)
{
    uint32_t magic = FLUX_MSG_FRAME_MAGIC;
    memcpy (p, &magic, 4);
    p[4] = len >> 24;
    p[5] = len >> 16;
    p[6] = len >> 8;
    p[7] = len;
}

static void test_hostile (void)
{
    struct usock_policy p = owner_policy ();
    uint8_t junk[4096], hdr[8];
    flux_msg_t *msg;
    ssize_t fsize;
    uint8_t *frame;
    size_t heap0;
    int fd, ndisc, nrec;

    if (!server_start (&p))
        BAIL_OUT ("cannot create server");
    T.echo = 1;
    srand (12345);
    for (size_t i = 0; i < sizeof (junk); i++)
        junk[i] = rand ();
    junk[0] = 0xab; /* never a valid magic */
    expect_drop (junk, sizeof (junk), "random bytes");

    put_prefix (hdr, 0xffffffff);
    expect_drop (hdr, sizeof (hdr), "length over the maximum");
    put_prefix (hdr, 3);
    expect_drop (hdr, sizeof (hdr), "length too short for PROTO");
    put_prefix (junk, sizeof (junk) - 8);
    expect_drop (junk, sizeof (junk), "valid prefix, random parts");

    /* a valid frame then garbage: the frame is delivered, then the drop */
    msg = make_req ("good", 1);
    fsize = flux_msg_frame_size (msg);
    frame = malloc (fsize + 16);
    flux_msg_frame_encode (msg, frame, fsize);
    memset (frame + fsize, 0x55, 16);
    fd = client_open (NULL);
    ndisc = T.ndisc;
    nrec = T.nrec;
    write_all (fd, frame, fsize + 16);
    ok (run_until (&T.ndisc, ndisc + 1) && T.nrec == nrec + 1,
        "valid frame then garbage: frame delivered, then disconnected");
    close (fd);

    /* half a frame, then close */
    fd = client_open (NULL);
    ndisc = T.ndisc;
    nrec = T.nrec;
    write_all (fd, frame, fsize / 2);
    run_for (5);
    ok (T.ndisc == ndisc && usock_server_client_count (T.s) == 1,
        "half a frame: server waits for the rest");
    close (fd);
    ok (run_until (&T.ndisc, ndisc + 1) && T.nrec == nrec,
        "half a frame then close: disconnected, nothing delivered");
    free (frame);
    flux_msg_destroy (msg);

    /* a frame claiming 1 GiB costs memory only as bytes arrive */
    {
        size_t chunk = 1024 * 1024;
        uint8_t *buf = calloc (1, chunk);
        struct usock_client *cb;
        flux_msg_t *got;
        int fb = client_open (&cb);

        fd = client_open (NULL);
        ndisc = T.ndisc;
        nrec = T.nrec;
        heap0 = heap_bytes ();
        put_prefix (buf, FLUX_MSG_FRAME_MAX);
        write_all (fd, buf, chunk);
        run_for (20);
        ok (T.ndisc == ndisc, "1 GiB claim: client still connected");
        cmp_ok (heap_bytes () - heap0, "<", 64 * 1024 * 1024,
                "1 GiB claim: server memory grew by less than 64 MiB");
        msg = make_req ("still.there", 9);
        send_frame (fb, msg);
        got = read_frame (fb);
        ok (got != NULL, "1 GiB claim: another client is still served");
        flux_msg_destroy (got);
        flux_msg_destroy (msg);
        close (fd);
        ok (run_until (&T.ndisc, ndisc + 1),
            "1 GiB claim then close: disconnected");
        cmp_ok (T.nrec, "==", nrec + 1,
                "nothing but the bystander's message delivered");
        close (fb);
        free (buf);
        (void)run_until (&T.ndisc, ndisc + 2);
    }

    /* connect and leave before the server accepts */
    ndisc = T.ndisc;
    {
        int nconn = T.nconn;
        fd = raw_connect (T.path);
        close (fd);
        run_for (20);
        ok (T.nconn - nconn == T.ndisc - ndisc
                && usock_server_client_count (T.s) == 0,
            "peer gone before accept: no dangling client");
    }
    server_stop ();
}

/* A client that never reads while the server sends 100 MiB. */
static void test_slow_client (void)
{
    struct usock_policy p = owner_policy ();
    size_t mib = 1024 * 1024;
    struct usock_client *cs, *cb;
    flux_msg_t *msg, *got;
    uint8_t *pay = calloc (1, mib);
    int fs, fb, i, rc = 0, err = 0;

    if (!server_start (&p))
        BAIL_OUT ("cannot create server");
    fs = client_open (&cs);
    fb = client_open (&cb);
    msg = flux_request_encode_raw ("flood", pay, mib);
    for (i = 0; i < 100; i++) {
        if ((rc = usock_client_send (cs, msg)) < 0) {
            err = errno;
            break;
        }
    }
    ok (rc < 0 && err == EPIPE, "send fails with EPIPE once the queue is full");
    ok (i >= 60 && i <= 66,
        "after about 64 MiB (default max_sendq_bytes): %d MiB", i);
    ok (T.nlog == 1 && strstr (T.lastlog, "send queue"),
        "the slow client is logged (%s)", T.lastlog);
    errno = 0;
    ok (usock_client_send (cs, msg) < 0 && errno == EPIPE,
        "further sends: EPIPE");
    cmp_ok (usock_server_client_count (T.s), "==", 1, "client_count is 1");
    ok (run_until (&T.ndisc, 1) && wait_eof (fs),
        "slow client gets its disconnected callback and EOF");
    flux_msg_destroy (msg);
    msg = make_req ("still.there", 9);
    ok (usock_client_send (cb, msg) == 0 && (got = read_frame (fb)) != NULL,
        "the other client is still served");
    flux_msg_destroy (got);
    flux_msg_destroy (msg);
    close (fs);
    close (fb);
    server_stop ();

    /* a small limit, and one message larger than it */
    p.max_sendq_bytes = 100000;
    if (!server_start (&p))
        BAIL_OUT ("cannot create server");
    fs = client_open (&cs);
    msg = flux_request_encode_raw ("flood", pay, mib);
    ok (usock_client_send (cs, msg) == 0,
        "a message over the limit is accepted when nothing is queued");
    errno = 0;
    ok (usock_client_send (cs, msg) < 0 && errno == EPIPE,
        "the next one, with bytes still queued, disconnects: EPIPE");
    ok (run_until (&T.ndisc, 1), "disconnected callback runs");
    flux_msg_destroy (msg);
    close (fs);
    server_stop ();
    free (pay);
}

/* A client that sends a last message and exits without reading what was
 * sent to it: the write that finds it gone (EPIPE) must not lose what it
 * sent first.  Once found on a direct send, once on flushing a queue. */
static void test_last_message (void)
{
    struct usock_policy p = owner_policy ();
    size_t mib = 1024 * 1024;
    uint8_t *pay = calloc (1, mib);
    struct usock_client *c;
    flux_msg_t *msg, *big;
    int fd;

    if (!pay || !server_start (&p))
        BAIL_OUT ("cannot create server");
    fd = client_open (&c);
    msg = make_req ("last.words", 42);
    ok (send_frame (fd, msg) == 0, "a client sends a last message");
    close (fd);
    flux_msg_destroy (msg);
    msg = make_req ("too.late", 1);
    errno = 0;
    ok (c && usock_client_send (c, msg) < 0 && errno == EPIPE,
        "a send to it, before it was read, fails with EPIPE");
    errno = 0;
    ok (c && usock_client_send (c, msg) < 0 && errno == EPIPE,
        "and so does the next one");
    ok (run_until (&T.ndisc, 1), "the client is closed");
    ok (T.nrec == 1 && T.rec[0].tag == 42,
        "its last message was read first (%d read)", T.nrec);
    cmp_ok (T.nlog, "==", 0, "nothing logged: a client leaving is normal");
    flux_msg_destroy (msg);
    server_stop ();

    /* the peer is found gone by a flush of queued bytes */
    if (!server_start (&p))
        BAIL_OUT ("cannot create server");
    fd = client_open (&c);
    big = flux_request_encode_raw ("flood", pay, mib);
    ok (c && usock_client_send (c, big) == 0,
        "1 MiB sent to a client that does not read: queued");
    msg = make_req ("last.words", 43);
    ok (send_frame (fd, msg) == 0, "the client sends a last message");
    close (fd);
    ok (run_until (&T.ndisc, 1), "the client is closed");
    ok (T.nrec == 1 && T.rec[0].tag == 43,
        "its last message was read (%d read)", T.nrec);
    cmp_ok (usock_server_held (T.s), "==", 0, "nothing held after");
    flux_msg_destroy (msg);
    flux_msg_destroy (big);
    server_stop ();

    /* a client that stops reading (shutdown) but keeps sending: every
     * request is still read, the answers are dropped, nothing is held */
    if (!server_start (&p))
        BAIL_OUT ("cannot create server");
    T.echo = 2;
    fd = client_open (&c);
    ok (shutdown (fd, SHUT_RD) == 0, "a client shuts its socket for reading");
    int sent = 0;
    for (int i = 0; i < 2000; i++) {
        msg = make_req ("deaf", i);
        if (send_frame (fd, msg) == 0)
            sent++;
        flux_msg_destroy (msg);
    }
    bool all = run_until (&T.nrec, 2000);
    ok (sent == 2000 && all, "all 2000 requests it sent are read (%d)", T.nrec);
    ok (usock_server_held (T.s) <= 65536,
        "no answer is queued for it (%zu bytes held: its input buffer)",
        usock_server_held (T.s));
    cmp_ok (T.ndisc, "==", 0, "it stays connected while it sends");
    close (fd);
    ok (run_until (&T.ndisc, 1), "closing it disconnects it");
    server_stop ();
    free (pay);
}

/* One message sent to many clients that never read: shared, the frame is
 * held once; the held count returns to zero when the clients go. */
static void test_shared (void)
{
    struct usock_policy p = owner_policy ();
    enum { N = 20, SIZE = 64 * 1024, EVENTS = 40 };
    struct usock_client *cs[N];
    int fds[N], i, k, nok = 0;
    uint8_t *pay = calloc (1, SIZE);
    flux_msg_t *msg;
    size_t held;

    if (!server_start (&p))
        BAIL_OUT ("cannot create server");
    for (i = 0; i < N; i++)
        if ((fds[i] = client_open (&cs[i])) < 0 || !cs[i])
            BAIL_OUT ("cannot connect client %d", i);
    if (!(msg = flux_event_encode_raw ("big.event", pay, SIZE)))
        BAIL_OUT ("cannot build an event");
    /* the sockets take some first: send until every client queues */
    for (k = 0; k < EVENTS; k++) {
        usock_server_share (T.s, msg);
        for (i = 0; i < N; i++)
            nok += usock_client_send (cs[i], msg) == 0;
        usock_server_share (T.s, NULL);
    }
    held = usock_server_held (T.s);
    cmp_ok (nok, "==", N * EVENTS, "every shared send succeeds");
    ok (held >= 8 * SIZE && held < (size_t)(EVENTS + 4) * (SIZE + 64),
        "held memory counts each shared frame once: %zu bytes for %d "
        "clients x %d events of %d",
        held, N, EVENTS, SIZE);
    /* the same sends, not shared, are held once per client */
    for (i = 0; i < N; i++)
        (void)usock_client_send (cs[i], msg);
    ok (usock_server_held (T.s) >= held + (size_t)N * SIZE,
        "unshared, the same message is held per client (%zu bytes)",
        usock_server_held (T.s));
    /* a client reads everything: its frames arrive whole and in order */
    for (k = 0; k < 10; k++) {
        flux_msg_t *got = read_frame (fds[0]);
        const char *topic = NULL;
        if (!got || flux_msg_get_topic (got, &topic) < 0
            || strcmp (topic, "big.event") != 0)
            break;
        flux_msg_destroy (got);
    }
    cmp_ok (k, "==", 10, "a reader gets the shared frames intact");
    for (i = 0; i < N; i++)
        close (fds[i]);
    ok (run_until (&T.ndisc, N), "every client hangs up");
    cmp_ok (usock_server_held (T.s), "==", 0, "nothing is held after");
    flux_msg_destroy (msg);
    server_stop ();
    free (pay);
}

/* Bytes waiting to be read on fd. */
static int unread (int fd)
{
    int n = 0;
    return ioctl (fd, FIONREAD, &n) < 0 ? -1 : n;
}

/* Past the bytes a loop turn may write, sends wait for a later turn:
 * flushed by the server before each poll, or with owner_turns only by
 * usock_server_turn(), oldest first, the first always, then until the
 * deadline.  Clients that never read; returns the index of the first
 * client whose writes were deferred (-1 if none was). */
static int deferred_setup (bool owner_turns, struct usock_client **cs, int *fds,
                           int n, flux_msg_t *msg)
{
    struct usock_policy p = owner_policy ();
    int i;

    p.owner_turns = owner_turns;
    if (!server_start (&p))
        BAIL_OUT ("cannot create server");
    for (i = 0; i < n; i++)
        if ((fds[i] = client_open (&cs[i])) < 0 || !cs[i])
            BAIL_OUT ("cannot connect client %d", i);
    /* one turn: each socket takes ~200 KB of its message until 4 MiB
     * went out; the later ones are not written at all */
    for (i = 0; i < n; i++)
        (void)usock_client_send (cs[i], msg);
    for (i = 0; i < n; i++)
        if (unread (fds[i]) == 0)
            return i;
    return -1;
}

static void deferred_teardown (int *fds, int n)
{
    for (int i = 0; i < n; i++)
        close (fds[i]);
    (void)run_until (&T.ndisc, n);
    server_stop ();
}

static void test_owner_turns (void)
{
    enum { N = 40, SIZE = 256 * 1024 };
    struct usock_client *cs[N];
    int fds[N], first, i, calls = 0;
    uint8_t *pay = calloc (1, SIZE);
    flux_msg_t *msg;
    bool more = true;

    if (!pay || !(msg = flux_event_encode_raw ("big.event", pay, SIZE)))
        BAIL_OUT ("cannot build an event");

    first = deferred_setup (false, cs, fds, N, msg);
    ok (first > 0 && first < N - 1,
        "past the turn's bytes, sends wait for a later turn (from client "
        "%d of %d)",
        first, N);
    /* a few turns do it; a loaded machine may give fewer per 10 ms */
    for (i = 0; i < 500 && unread (fds[N - 1]) == 0; i++)
        run_for (10);
    ok (unread (fds[N - 1]) > 0,
        "by default the server flushes them itself (%d bytes, %d ms)",
        unread (fds[N - 1]), (i + 1) * 10);
    deferred_teardown (fds, N);

    first = deferred_setup (true, cs, fds, N, msg);
    ok (first > 0 && first < N - 1,
        "owner_turns: sends wait from client %d of %d", first, N);
    run_for (50);
    ok (unread (fds[first]) == 0 && unread (fds[N - 1]) == 0,
        "owner_turns: the server does not flush them itself");
    ok (usock_server_turn (T.s, 0) && unread (fds[first]) > 0
            && unread (fds[first + 1]) == 0,
        "a deadline passed already: the oldest is flushed, only it");
    while (more && calls++ < 20) {
        uv_run (&T.loop, UV_RUN_NOWAIT); /* a new turn: its own bytes */
        more = usock_server_turn (T.s, uv_hrtime () + 10000000000ull);
    }
    for (i = first; i < N && unread (fds[i]) > 0; i++)
        ;
    ok (!more && i == N,
        "within a deadline the rest are flushed, turn by turn (%d calls)",
        calls);
    ok (!usock_server_turn (NULL, 0), "usock_server_turn (NULL) does nothing");
    deferred_teardown (fds, N);
    flux_msg_destroy (msg);
    free (pay);
}

/* With owner_turns, a client cut off is closed by usock_server_turn(). */
static void test_owner_reaps (void)
{
    struct usock_policy p = owner_policy ();
    struct usock_client *c;
    flux_msg_t *msg;
    uint8_t *pay = calloc (1, 64 * 1024);
    int fd, n = 0;

    p.owner_turns = true;
    p.max_sendq_bytes = 1024 * 1024;
    if (!pay || !(msg = flux_event_encode_raw ("big.event", pay, 64 * 1024)))
        BAIL_OUT ("cannot build an event");
    if (!server_start (&p) || (fd = client_open (&c)) < 0 || !c)
        BAIL_OUT ("cannot start");
    while (n < 100 && usock_client_send (c, msg) == 0)
        n++;
    ok (n < 100 && T.nlog == 1,
        "owner_turns: a client past its limit is cut "
        "(after %d sends)",
        n);
    run_for (50);
    cmp_ok (T.ndisc, "==", 0,
            "owner_turns: the server does not close it itself");
    /* past its deadline a turn frees one frame: as many turns as it takes */
    while (n-- > 0 && usock_server_turn (T.s, 0))
        ;
    ok (run_until (&T.ndisc, 1), "usock_server_turn closes it");
    close (fd);
    flux_msg_destroy (msg);
    server_stop ();
    free (pay);
}

/* The owner's input turns (usock_server_read_turn), driven as the broker
 * does from a prepare callback, with a clock of the test's own that each
 * message delivered advances by 100: a turn's budget of 1000 is about 10
 * messages. */
static uint64_t fake_ns;
static struct {
    unsigned room;
    int turns;
    int per_turn_max;
    int turn_start;
    bool no_turn; /* read turns only: no usock_server_turn() */
} IN;

static uint64_t fake_clock (void)
{
    return fake_ns;
}

static void input_prep_cb (uv_prepare_t *w)
{
    int got = T.nrec - IN.turn_start;

    if (IN.turns > 0 && got > IN.per_turn_max)
        IN.per_turn_max = got;
    IN.turns++;
    IN.turn_start = T.nrec;
    if (!IN.no_turn)
        (void)usock_server_turn (T.s, 0);
    (void)usock_server_read_turn (T.s, fake_ns + 1000, IN.room);
}

static void input_msg_clock (void)
{
    static int seen;
    if (T.nrec < seen)
        seen = 0;
    fake_ns += 100 * (uint64_t)(T.nrec - seen);
    seen = T.nrec;
}

static void input_check_cb (uv_check_t *w)
{
    input_msg_clock ();
}

static int victim_pos (struct usock_client *v)
{
    for (int i = 0; i < T.nrec && i < MAXREC; i++)
        if (T.rec[i].c == v)
            return i;
    return -1;
}

static void test_owner_input (void)
{
    struct usock_policy p = owner_policy ();
    struct usock_client *cs[8], *cv;
    struct usock_units u;
    uv_prepare_t prep;
    uv_check_t check;
    int fds[8], fv, sent_turn, got_turn = -1, served = 0;
    uint8_t *burst;
    size_t fsize;
    flux_msg_t *msg;

    p.owner_turns = true;
    p.turn_clock = fake_clock;
    if (!server_start (&p))
        BAIL_OUT ("cannot create server");
    for (int i = 0; i < 8; i++)
        if ((fds[i] = client_open (&cs[i])) < 0 || !cs[i])
            BAIL_OUT ("cannot connect");
    if ((fv = client_open (&cv)) < 0 || !cv)
        BAIL_OUT ("cannot connect");
    msg = make_req ("burst", 0);
    fsize = flux_msg_frame_size (msg);
    if (!(burst = malloc (fsize * 500)))
        BAIL_OUT ("out of memory");
    for (int i = 0; i < 500; i++) {
        flux_msg_set_matchtag (msg, i);
        flux_msg_frame_encode (msg, burst + i * fsize, fsize);
    }
    flux_msg_destroy (msg);
    uv_prepare_init (&T.loop, &prep);
    uv_check_init (&T.loop, &check);
    uv_prepare_start (&prep, input_prep_cb);
    uv_check_start (&check, input_check_cb);
    memset (&IN, 0, sizeof (IN));
    IN.room = 64;

    /* no room: nobody is read, everyone waits */
    IN.room = 0;
    for (int i = 0; i < 8; i++)
        write_all (fds[i], burst, fsize * 500);
    for (int i = 0; i < 5; i++)
        uv_run (&T.loop, UV_RUN_NOWAIT);
    cmp_ok (T.nrec, "<=", USOCK_BATCH,
            "no room: at most the first turn's first client is read (%d)",
            T.nrec);
    IN.room = 64;
    for (int i = 0; i < 4; i++)
        uv_run (&T.loop, UV_RUN_NOWAIT);
    IN.per_turn_max = 0;
    usock_server_units (T.s, &u, true);

    msg = make_req ("victim", 9999);
    send_frame (fv, msg);
    flux_msg_destroy (msg);
    sent_turn = IN.turns;
    for (int i = 0; i < 2000 && T.nrec < 4001; i++) {
        uv_run (&T.loop, UV_RUN_NOWAIT);
        if (got_turn < 0 && victim_pos (cv) >= 0)
            got_turn = IN.turns;
    }
    ok (T.nrec == 4001, "all 4,001 messages delivered (%d)", T.nrec);
    ok (got_turn >= 0 && got_turn - sent_turn <= 2,
        "a client's one request, sent during a flood from 8, is read within "
        "a turn of the next (%d turns)",
        got_turn - sent_turn);
    cmp_ok (IN.per_turn_max, "<=", 64 + USOCK_BATCH / 8,
            "a turn reads about its room: at most %d messages",
            IN.per_turn_max);
    for (int i = 0; i < 8; i++) {
        int n = 0;
        for (int k = 0; k < 200 && k < T.nrec; k++)
            if (T.rec[k].c == cs[i])
                n++;
        if (n > 0)
            served++;
    }
    cmp_ok (served, "==", 8, "round robin: every flooder is served early");
    usock_server_units (T.s, &u, true);
    cmp_ok (u.read_wait_max, "<=", 1,
            "no readable client waited more than one turn (%ju)",
            (uintmax_t)u.read_wait_max);

    /* a client that leaves is closed by the owner's turn (the reaper) */
    IN.no_turn = true;
    close (fv);
    run_for (50);
    cmp_ok (T.ndisc, "==", 0,
            "a client that went away is not closed outside the owner's turn");
    (void)usock_server_turn (T.s, 0);
    ok (run_until (&T.ndisc, 1), "usock_server_turn closes it");
    IN.no_turn = false;
    for (int i = 0; i < 8; i++)
        close (fds[i]);
    ok (run_until (&T.ndisc, 9), "the flooders are closed too");
    ok (!usock_server_read_turn (NULL, 0, 1),
        "usock_server_read_turn (NULL) does nothing");
    uv_close ((uv_handle_t *)&prep, NULL);
    uv_close ((uv_handle_t *)&check, NULL);
    free (burst);
    server_stop ();
}

/* A cut client holding many frames is dropped in steps, one step per
 * usock_server_turn() past its deadline (the last reference to a shared
 * frame frees it: thousands at once overran the broker's turn), and its
 * disconnected callback runs in the turn that closes it. */
static void test_owner_reaps_in_steps (void)
{
    struct usock_policy p = owner_policy ();
    enum { SIZE = 64 * 1024 };
    struct usock_client *c;
    uint8_t *pay = calloc (1, SIZE);
    flux_msg_t *msg;
    size_t held, prev;
    int fd, n = 0, turns = 0;
    bool steps = true;

    p.owner_turns = true;
    p.max_sendq_bytes = 8 * 1024 * 1024;
    if (!pay || !(msg = flux_event_encode_raw ("big.event", pay, SIZE)))
        BAIL_OUT ("cannot build an event");
    if (!server_start (&p) || (fd = client_open (&c)) < 0 || !c)
        BAIL_OUT ("cannot start");
    for (;;) {
        int rc;
        usock_server_share (T.s, msg); /* one frame each */
        rc = usock_client_send (c, msg);
        usock_server_share (T.s, NULL);
        if (rc < 0 || n++ > 1000)
            break;
    }
    ok (n > 64 && n < 1000, "a client is cut after %d shared frames", n);
    held = prev = usock_server_held (T.s);
    while (T.ndisc == 0 && turns < 1000) {
        bool more = usock_server_turn (T.s, 0); /* always past deadline */
        size_t now = usock_server_held (T.s);
        turns++;
        if (T.ndisc == 0 && (!more || now >= prev || prev - now > 32 * SIZE))
            steps = false;
        prev = now;
    }
    ok (steps && turns > 3,
        "its %zu bytes are freed a few frames a turn, over %d turns", held,
        turns);
    cmp_ok (T.ndisc, "==", 1,
            "its disconnected callback ran in the turn that closed it");
    ok (wait_eof (fd), "the client sees EOF");
    close (fd);
    flux_msg_destroy (msg);
    server_stop ();
    free (pay);
}

/* Past max_held_bytes the largest holders go first, with a log line; a
 * client that reads keeps being served. */
static void test_held_limit (void)
{
    struct usock_policy p = owner_policy ();
    enum { N = 8, SIZE = 64 * 1024 };
    struct usock_client *cs[N];
    int fds[N], i, k;
    uint8_t *pay = calloc (1, SIZE);
    flux_msg_t *msg;

    p.max_held_bytes = 4 * 1024 * 1024;
    if (!server_start (&p))
        BAIL_OUT ("cannot create server");
    for (i = 0; i < N; i++)
        if ((fds[i] = client_open (&cs[i])) < 0 || !cs[i])
            BAIL_OUT ("cannot connect client %d", i);
    msg = flux_request_encode_raw ("flood", pay, SIZE);
    /* client 0 gets 3 times what the others get, unshared */
    for (k = 0; k < 60; k++) {
        for (i = 0; i < N; i++) {
            int reps = i == 0 ? 3 : 1;
            while (reps-- > 0)
                (void)usock_client_send (cs[i], msg);
        }
        if (usock_server_client_count (T.s) < N)
            break;
    }
    ok (usock_server_client_count (T.s) < N,
        "past the limit a client is cut (after %d rounds)", k);
    /* the cut clients are closed and freed by the reaper, within a few
     * loop turns */
    ok (usock_server_held (T.s) > p.max_held_bytes,
        "at first the cut client's memory is still held (%zu)",
        usock_server_held (T.s));
    for (i = 0; i < 10 && usock_server_held (T.s) > p.max_held_bytes; i++)
        uv_run (&T.loop, UV_RUN_NOWAIT);
    ok (usock_server_held (T.s) <= p.max_held_bytes,
        "held bytes are back under the limit after %d loop turns (%zu)", i,
        usock_server_held (T.s));
    ok (strstr (T.lastlog, "over the") && strstr (T.lastlog, "pid"),
        "logged with uid and pid: %s", T.lastlog);
    ok (run_until (&T.ndisc, 1) && wait_eof (fds[0]),
        "the largest holder went first");
    flux_msg_destroy (msg);
    for (i = 0; i < N; i++)
        close (fds[i]);
    (void)run_until (&T.ndisc, N);
    server_stop ();
    free (pay);
}

/* The user's state for a client (usock_client_charge) counts like its
 * queues: refused past max_sendq_bytes, the largest cut past
 * max_held_bytes, released when the client goes. */
static void test_charge (void)
{
    struct usock_policy p = owner_policy ();
    struct usock_client *c1, *c2;
    int fd1, fd2;

    p.max_sendq_bytes = 1024 * 1024;
    p.max_held_bytes = 1536 * 1024;
    if (!server_start (&p))
        BAIL_OUT ("cannot create server");
    if ((fd1 = client_open (&c1)) < 0 || !c1 || (fd2 = client_open (&c2)) < 0
        || !c2)
        BAIL_OUT ("cannot connect");
    errno = 0;
    ok (usock_client_charge (NULL, 1) < 0 && errno == EINVAL,
        "charge NULL: EINVAL");
    {
        int rc = usock_client_charge (c1, 1000);
        size_t held = usock_server_held (T.s);
        ok (rc == 0 && held >= 1000, "a charge counts in the held bytes (%zu)",
            held);
    }
    ok (usock_client_charge (c1, -1000) == 0, "and may be given back");
    errno = 0;
    ok (usock_client_charge (c1, 2 * 1024 * 1024) < 0 && errno == ENOSPC,
        "past max_sendq_bytes: ENOSPC");
    ok (usock_client_charge (c1, 900 * 1024) == 0
            && usock_server_client_count (T.s) == 2,
        "one client charged 900k");
    ok (usock_client_charge (c2, 700 * 1024) == 0 && run_until (&T.ndisc, 1)
            && wait_eof (fd1),
        "another 700k: past max_held_bytes the largest holder is cut");
    ok (strstr (T.lastlog, "routing state") != NULL, "logged: %s", T.lastlog);
    close (fd1);
    close (fd2);
    (void)run_until (&T.ndisc, 2);
    for (int i = 0; i < 10 && usock_server_held (T.s) > 0; i++)
        uv_run (&T.loop, UV_RUN_NOWAIT);
    cmp_ok (usock_server_held (T.s), "==", 0, "nothing held after");
    server_stop ();
}

/* Clients cut off in a burst: the first few are logged in full, the
 * rest in one summary line per second (the log ring keeps the rest). */
static void test_cut_log (void)
{
    struct usock_policy p = owner_policy ();
    enum { N = 40, SIZE = 64 * 1024 };
    struct usock_client *cs[N];
    int fds[N], i, full;
    uint8_t *pay = calloc (1, SIZE);
    flux_msg_t *msg;

    p.max_sendq_bytes = 4 * SIZE;
    if (!server_start (&p))
        BAIL_OUT ("cannot create server");
    for (i = 0; i < N; i++)
        if ((fds[i] = client_open (&cs[i])) < 0 || !cs[i])
            BAIL_OUT ("cannot connect client %d", i);
    msg = flux_request_encode_raw ("flood", pay, SIZE);
    for (int k = 0; k < 64; k++)
        for (i = 0; i < N; i++)
            (void)usock_client_send (cs[i], msg);
    full = T.nlog;
    ok (full >= 1 && full <= 5, "%d clients cut: %d logged in full", N, full);
    ok (run_until (&T.ndisc, N), "all of them are closed");
    run_for (1200);
    ok (T.nlog == full + 1 && strstr (T.lastlog, "more clients cut"),
        "then one summary line: %s", T.lastlog);
    flux_msg_destroy (msg);
    for (i = 0; i < N; i++)
        close (fds[i]);
    server_stop ();
    free (pay);
}

/* Frames announced over the role's limit are refused before their bytes
 * are read; a frame begun and not finished is cut at the deadline; partial
 * input counts against max_held_bytes. */
static void test_partial (void)
{
    struct usock_policy p = owner_policy ();
    uint8_t hdr[8], *junk = calloc (1, 1 << 20);
    int fd, fd2, n = 0;
    double t0;

    p.owner_frame_max = 1 << 20;
    p.frame_timeout_ms = 300;
    p.max_held_bytes = 8 << 20;
    if (!server_start (&p))
        BAIL_OUT ("cannot create server");
    fd = client_open (NULL);
    put_prefix (hdr, 2 << 20);
    ok (write_all (fd, hdr, sizeof (hdr)) == 0 && run_until (&T.ndisc, 1)
            && wait_eof (fd),
        "a frame announced over the limit: disconnected");
    ok (strstr (T.lastlog, "announces a frame") != NULL, "logged: %s",
        T.lastlog);
    close (fd);

    fd = client_open (NULL);
    put_prefix (hdr, 900000);
    t0 = now_ms ();
    {
        bool cut = write_all (fd, hdr, sizeof (hdr)) == 0
                   && write_all (fd, junk, 1000) == 0 && run_until (&T.ndisc, 2)
                   && wait_eof (fd);
        double dt = now_ms () - t0;
        ok (cut, "half a frame, then silence: disconnected after %.0f ms", dt);
        ok (dt >= 250, "not before the deadline");
    }
    ok (strstr (T.lastlog, "still incomplete") != NULL, "logged: %s",
        T.lastlog);
    close (fd);
    cmp_ok (usock_server_held (T.s), "==", 0, "nothing held after");

    /* 20 partial frames of 900 KB: the held bytes stay bounded */
    p.frame_timeout_ms = 60000;
    p.max_held_bytes = 4 << 20;
    server_stop ();
    if (!server_start (&p))
        BAIL_OUT ("cannot create server");
    fd2 = client_open (NULL);
    for (int i = 0; i < 20; i++) {
        if ((fd = client_open (NULL)) < 0)
            break;
        put_prefix (hdr, 900000);
        (void)write_all (fd, hdr, sizeof (hdr));
        (void)write_all (fd, junk, 800000);
        run_for (5);
        ok (usock_server_held (T.s) <= p.max_held_bytes,
            "partial frame %d: held %zu bytes", i, usock_server_held (T.s));
        n++;
    }
    ok (T.ndisc > 0 && strstr (T.lastlog, "buffered input"),
        "the largest partial frames are cut (%d): %s", T.ndisc, T.lastlog);
    {
        flux_msg_t *msg = make_req ("still.there", 9);
        int before = T.nrec;
        ok (send_frame (fd2, msg) == 0 && run_until (&T.nrec, before + 1),
            "a well-behaved client is still served");
        flux_msg_destroy (msg);
    }
    close (fd2);
    server_stop ();

    /* a guest's limit is its own: the owner's stays the codec's */
    p = (struct usock_policy){.owner = getuid () + 1,
                              .allow_guest_user = true,
                              .guest_frame_max = 64 * 1024};
    if (!server_start (&p))
        BAIL_OUT ("cannot create server");
    fd = client_open (NULL);
    put_prefix (hdr, 70000);
    ok (fd >= 0 && write_all (fd, hdr, sizeof (hdr)) == 0
            && run_until (&T.ndisc, 1) && wait_eof (fd),
        "a guest announcing 70000 bytes over a 64 KiB limit: disconnected");
    ok (strstr (T.lastlog, "over the 65536 byte limit of its role") != NULL,
        "logged: %s", T.lastlog);
    close (fd);
    fd = client_open (NULL);
    {
        uint8_t *pay = calloc (1, 60000);
        flux_msg_t *msg = flux_request_encode_raw ("guest.big", pay, 60000);
        int before = T.nrec;
        ok (send_frame (fd, msg) == 0 && run_until (&T.nrec, before + 1),
            "a guest frame under the limit is delivered");
        flux_msg_destroy (msg);
        free (pay);
    }
    close (fd);
    server_stop ();
    free (junk);
    (void)n;
}

static void test_many (void)
{
    struct usock_policy p = owner_policy ();
    enum { N = 200 };
    int fds[N], nopen = 0, nok = 0;

    if (!server_start (&p))
        BAIL_OUT ("cannot create server");
    T.echo = 1;
    for (int i = 0; i < N; i++) {
        if ((fds[i] = raw_connect (T.path)) >= 0)
            nopen++;
    }
    cmp_ok (nopen, "==", N, "%d clients connect at once", N);
    ok (run_until (&T.nconn, N), "all %d accepted", N);
    cmp_ok (usock_server_client_count (T.s), "==", N, "client_count is %d", N);
    for (int i = 0; i < N; i++) {
        flux_msg_t *msg = make_req ("many", i);
        send_frame (fds[i], msg);
        flux_msg_destroy (msg);
    }
    for (int i = 0; i < N; i++) {
        uint8_t byte = 1;
        uint32_t tag = 0;
        flux_msg_t *got = NULL;
        if (read_exact (fds[i], &byte, 1) == 0 && byte == 0
            && (got = read_frame (fds[i]))
            && flux_msg_get_matchtag (got, &tag) == 0 && tag == (uint32_t)i)
            nok++;
        flux_msg_destroy (got);
    }
    cmp_ok (nok, "==", N, "each client gets its own message echoed");
    for (int i = 0; i < N; i++)
        close (fds[i]);
    ok (run_until (&T.ndisc, N), "all %d disconnects noticed", N);
    cmp_ok (usock_server_client_count (T.s), "==", 0, "client_count is 0");
    server_stop ();
}

static void test_callback_lifetimes (void)
{
    struct usock_policy p = owner_policy ();
    uint8_t byte;
    flux_msg_t *msg;
    ssize_t fsize;
    uint8_t *burst;
    int fd;

    msg = make_req ("x", 0);
    fsize = flux_msg_frame_size (msg);
    burst = malloc (fsize * 10);
    for (int i = 0; i < 10; i++)
        flux_msg_frame_encode (msg, burst + i * fsize, fsize);
    flux_msg_destroy (msg);

    if (!server_start (&p))
        BAIL_OUT ("cannot create server");
    T.disconnect_after = 3;
    fd = client_open (NULL);
    write_all (fd, burst, fsize * 10);
    ok (run_until (&T.ndisc, 1), "disconnect from the message callback");
    cmp_ok (T.nrec, "==", 3, "no message delivered after the disconnect");
    ok (!T.nested_disconnect, "disconnected callback was not nested");
    ok (wait_eof (fd), "the client sees EOF");
    close (fd);
    server_stop ();

    if (!server_start (&p))
        BAIL_OUT ("cannot create server");
    T.disconnect_on_connect = true;
    fd = raw_connect (T.path);
    ok (run_until (&T.ndisc, 1) && T.nconn == 1,
        "disconnect from the connected callback: disconnected runs once");
    ok (!T.nested_disconnect, "and not nested");
    ok (read_exact (fd, &byte, 1) == 0 && byte == 0 && wait_eof (fd),
        "the client got its accept byte, then EOF");
    close (fd);
    server_stop ();

    if (!server_start (&p))
        BAIL_OUT ("cannot create server");
    T.destroy_on_msg = true;
    fd = client_open (NULL);
    write_all (fd, burst, fsize * 10);
    ok (run_until (&T.nrec, 1), "server destroyed from a message callback");
    run_for (10);
    ok (T.nrec == 1 && T.ndisc == 1,
        "one message delivered, disconnected callback ran once");
    ok (wait_eof (fd), "the client sees EOF");
    close (fd);
    free (burst);
}

static void test_destroy_with_clients (void)
{
    struct usock_policy p = owner_policy ();
    struct usock_client *c[4];
    int fd[4];
    struct stat st;

    if (!server_start (&p))
        BAIL_OUT ("cannot create server");
    for (int i = 0; i < 4; i++)
        fd[i] = client_open (&c[i]);
    usock_client_aux_set (c[0], "A", aux_free);
    usock_client_aux_set (c[3], "A", aux_free);
    usock_client_disconnect (c[3]); /* disconnected callback still pending */
    cmp_ok (T.ndisc, "==", 0, "one client closing, not yet notified");
    usock_server_destroy (T.s);
    T.s = NULL;
    cmp_ok (T.ndisc, "==", 4,
            "destroy runs every pending disconnected callback");
    /* c[3] comes first: it was closing already */
    is (T.trace, "DADADD",
        "aux values destroyed during destroy, each right "
        "after its disconnected callback");
    ok (lstat (T.path, &st) < 0 && errno == ENOENT, "socket file removed");
    run_for (5);
    cmp_ok (T.ndisc, "==", 4, "no callbacks after destroy");
    for (int i = 0; i < 4; i++) {
        ok (wait_eof (fd[i]), "client %d sees EOF", i);
        close (fd[i]);
    }
}

/* Out of file descriptors: accepting pauses and resumes. */
static void test_emfile (void)
{
    struct usock_policy p = owner_policy ();
    struct rlimit old, rl;
    int fd, fd2, free_fd;

    if (!server_start (&p))
        BAIL_OUT ("cannot create server");
    fd = raw_connect (T.path);
    free_fd = dup (0);
    close (free_fd);
    getrlimit (RLIMIT_NOFILE, &old);
    rl = old;
    rl.rlim_cur = free_fd;
    if (fd < 0 || setrlimit (RLIMIT_NOFILE, &rl) < 0) {
        skip (3, "cannot lower RLIMIT_NOFILE");
        close (fd);
        server_stop ();
        return;
    }
    run_for (30);
    ok (T.nconn == 0 && strstr (T.lastlog, "pausing"),
        "EMFILE: accepting pauses with a log line (%s)", T.lastlog);
    setrlimit (RLIMIT_NOFILE, &old);
    /* (under valgrind the first connection is lost to its fd check) */
    fd2 = raw_connect (T.path);
    ok (run_until (&T.nconn, 1), "accepting resumes after the backoff");
    ok (T.nlog >= 1 && T.nlog <= 2, "logged without spinning (%d lines)",
        T.nlog);
    close (fd);
    close (fd2);
    server_stop ();
}

int main (int argc, char *argv[])
{
    plan (NO_PLAN);

    signal (SIGPIPE, SIG_IGN);
    snprintf (T.dir, sizeof (T.dir), "/tmp/usock-test.XXXXXX");
    if (!mkdtemp (T.dir) || chmod (T.dir, 0755) < 0)
        BAIL_OUT ("mkdtemp: %s", strerror (errno));
    snprintf (T.path, sizeof (T.path), "%s/local-0", T.dir);
    if (uv_loop_init (&T.loop) < 0 || uv_timer_init (&T.loop, &T.tick) < 0)
        BAIL_OUT ("cannot set up the loop");

    test_create ();
    test_owner ();
    test_aux ();
    test_roles ();
    test_guest ();
    test_libflux_rpc ();
    test_fairness ();
    test_large ();
    test_hostile ();
    test_slow_client ();
    test_last_message ();
    test_shared ();
    test_owner_turns ();
    test_owner_reaps ();
    test_owner_reaps_in_steps ();
    test_owner_input ();
    test_held_limit ();
    test_charge ();
    test_cut_log ();
    test_partial ();
    test_many ();
    test_callback_lifetimes ();
    test_destroy_with_clients ();
    test_emfile ();

    reset ();
    uv_close ((uv_handle_t *)&T.tick, NULL);
    uv_run (&T.loop, UV_RUN_NOWAIT);
    ok (uv_loop_close (&T.loop) == 0,
        "every handle was released: the loop closes");
    rmdir (T.dir);
    done_testing ();
    return 0;
}
