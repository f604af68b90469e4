/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Unit tests for the handle, dispatch, RPCs, responses and events:
 * over loop:// in-process, and over a real unix socket to a forked server
 * (fd:// on the server side, local:// and fd:// on the client side).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "libflux/flux.h"
#include "tap.h"

/* ---- a server, run in a child process ---- */

static void echo_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    const char *s;
    if (flux_request_decode (msg, NULL, &s) < 0)
        flux_respond_error (h, msg, errno, "decode failed");
    else
        flux_respond (h, msg, s);
}

/* responds {"n":i} for i in 0..count-1, then ENODATA */
static void stream_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    int count, i;
    if (!flux_msg_is_streaming (msg)) {
        flux_respond_error (h, msg, EPROTO, "streaming required");
        return;
    }
    if (flux_request_unpack (msg, NULL, "{s:i}", "count", &count) < 0) {
        flux_respond_error (h, msg, EPROTO, NULL);
        return;
    }
    for (i = 0; i < count; i++)
        flux_respond_pack (h, msg, "{s:i}", "n", i);
    flux_respond_error (h, msg, ENODATA, NULL);
}

static void fail_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    flux_respond_error (h, msg, EHOSTUNREACH, "it is far away");
}

/* publish an event to the client first, then answer */
static void evfirst_cb (flux_t *h, flux_msg_handler_t *mh,
                        const flux_msg_t *msg, void *arg)
{
    flux_msg_t *ev = flux_event_encode ("test.event", "payload");
    flux_send (h, ev, 0);
    flux_msg_destroy (ev);
    flux_respond (h, msg, "after-event");
}

static void attr_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    const char *name;
    if (flux_request_unpack (msg, NULL, "{s:s}", "name", &name) < 0)
        flux_respond_error (h, msg, EPROTO, NULL);
    else if (!strcmp (name, "rank"))
        flux_respond_pack (h, msg, "{s:s s:i}", "value", "3", "flags", 1);
    else
        flux_respond_error (h, msg, ENOENT, NULL);
}

/* report how the request arrived */
static void whoami_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    uint32_t nodeid = 0, userid = 0, rolemask = 0;
    flux_msg_get_nodeid (msg, &nodeid);
    flux_msg_get_userid (msg, &userid);
    flux_msg_get_rolemask (msg, &rolemask);
    flux_respond_pack (h, msg, "{s:I s:b s:I s:I}", "nodeid",
                       (json_int_t)nodeid, "upstream",
                       flux_msg_has_flag (msg, FLUX_MSGFLAG_UPSTREAM), "userid",
                       (json_int_t)userid, "rolemask", (json_int_t)rolemask);
}

static void quit_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    flux_reactor_stop (flux_get_reactor (h));
}

static void silent_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    /* never answers */
}

static const struct flux_msg_handler_spec server_htab[] = {
    {FLUX_MSGTYPE_REQUEST, "echo*", echo_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "stream", stream_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "fail", fail_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "evfirst", evfirst_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "attr.get", attr_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "whoami", whoami_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "silent", silent_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "quit", quit_cb, 0},
    FLUX_MSGHANDLER_TABLE_END,
};

static void serve_fd (int fd)
{
    char uri[64];
    flux_t *h;
    flux_msg_handler_t **handlers;

    snprintf (uri, sizeof (uri), "fd://%d", fd);
    if (!(h = flux_open (uri, 0))
        || flux_msg_handler_addvec (h, server_htab, NULL, &handlers) < 0)
        _exit (1);
    flux_reactor_run (flux_get_reactor (h), 0);
    flux_msg_handler_delvec (handlers);
    flux_close (h);
    _exit (0);
}

/* Fork a server on one end of a socketpair; return the other end. */
static pid_t start_server (int *clientfd)
{
    int sv[2];
    pid_t pid;

    if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        BAIL_OUT ("socketpair: %s", strerror (errno));
    if ((pid = fork ()) < 0)
        BAIL_OUT ("fork: %s", strerror (errno));
    if (pid == 0) {
        close (sv[0]);
        serve_fd (sv[1]);
    }
    close (sv[1]);
    *clientfd = sv[0];
    return pid;
}

static int wait_server (pid_t pid)
{
    int status;
    if (waitpid (pid, &status, 0) < 0)
        return -1;
    return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
}

static flux_t *open_fd (int fd)
{
    char uri[64];
    snprintf (uri, sizeof (uri), "fd://%d", fd);
    return flux_open (uri, 0);
}

/* ---- tests over a socket ---- */

static void test_sync_rpc (void)
{
    int fd;
    pid_t pid = start_server (&fd);
    flux_t *h = open_fd (fd);
    flux_future_t *f, *f2;
    const char *s;
    uint32_t rank;
    flux_msg_t *msg;
    int count, n, i, errors;
    json_int_t nodeid, userid;
    int upstream;

    ok (h != NULL, "fd:// handle opened");
    ok ((f = flux_rpc (h, "echo.hi", "hello", FLUX_NODEID_ANY, 0)) != NULL,
        "flux_rpc sent");
    ok (flux_rpc_get (f, &s) == 0 && !strcmp (s, "hello"),
        "synchronous rpc_get returns the echo");
    ok (flux_rpc_get_matchtag (f) == 1, "first rpc used matchtag 1");
    flux_future_destroy (f);
    f = flux_rpc (h, "echo.hi", NULL, FLUX_NODEID_ANY, 0);
    ok (flux_rpc_get_matchtag (f) == 1,
        "matchtag 1 is reused after the final response");
    ok (flux_rpc_get (f, &s) == 0 && s == NULL, "empty payload echoes as NULL");
    flux_future_destroy (f);

    f = flux_rpc (h, "fail", NULL, FLUX_NODEID_ANY, 0);
    errno = 0;
    ok (flux_rpc_get (f, &s) < 0 && errno == EHOSTUNREACH,
        "error response fails get with its errnum");
    is (flux_future_error_string (f), "it is far away",
        "error response text reaches the caller");
    flux_future_destroy (f);

    f = flux_rpc (h, "nosuch.method", NULL, FLUX_NODEID_ANY, 0);
    errno = 0;
    ok (flux_rpc_get (f, NULL) < 0 && errno == ENOSYS,
        "request no handler matches gets ENOSYS");
    flux_future_destroy (f);

    /* streaming */
    f = flux_rpc_pack (h, "stream", FLUX_NODEID_ANY, FLUX_RPC_STREAMING,
                       "{s:i}", "count", 5);
    count = 0;
    errors = 0;
    for (i = 0; i < 6; i++) {
        if (flux_rpc_get_unpack (f, "{s:i}", "n", &n) < 0)
            break;
        if (n != count)
            errors++;
        count++;
        flux_future_reset (f);
    }
    ok (count == 5 && errors == 0, "streaming RPC got 5 responses in order");
    ok (errno == ENODATA, "stream ended with ENODATA");
    flux_future_destroy (f);
    f = flux_rpc_pack (h, "stream", FLUX_NODEID_ANY, 0, "{s:i}", "count", 1);
    errno = 0;
    ok (flux_rpc_get (f, NULL) < 0 && errno == EPROTO,
        "streaming service rejects non-streaming request with EPROTO");
    flux_future_destroy (f);

    /* messages that arrive during a synchronous wait are kept */
    f = flux_rpc (h, "evfirst", NULL, FLUX_NODEID_ANY, 0);
    ok (flux_rpc_get (f, &s) == 0 && !strcmp (s, "after-event"),
        "rpc completes although an event arrived first");
    flux_future_destroy (f);
    ok ((msg = flux_recv (h, FLUX_O_NONBLOCK)) != NULL,
        "the event was requeued for later");
    ok (flux_event_decode (msg, &s, NULL) == 0 && !strcmp (s, "test.event"),
        "and it is the event");
    flux_msg_destroy (msg);

    /* a finished RPC destroyed after its tag was reused must not take the
     * tag away from the newer RPC */
    f = flux_rpc (h, "echo", "first", FLUX_NODEID_ANY, 0);
    flux_rpc_get (f, NULL);
    f2 = flux_rpc (h, "echo", "second", FLUX_NODEID_ANY, 0);
    ok (flux_rpc_get_matchtag (f2) == flux_rpc_get_matchtag (f),
        "a new rpc reuses the tag of a finished one");
    flux_future_destroy (f);
    ok (flux_future_wait_for (f2, 5.0) == 0 && flux_rpc_get (f2, &s) == 0
            && !strcmp (s, "second"),
        "destroying the finished rpc leaves the newer one its response");
    flux_future_destroy (f2);

    /* an abandoned RPC keeps its matchtag until its response arrives */
    f = flux_rpc (h, "silent", NULL, FLUX_NODEID_ANY, 0);
    ok (flux_rpc_get_matchtag (f) == 1, "silent rpc has matchtag 1");
    errno = 0;
    ok (flux_future_wait_for (f, 0.05) < 0 && errno == ETIMEDOUT,
        "wait_for times out");
    flux_future_destroy (f);
    f = flux_rpc (h, "echo", "x", FLUX_NODEID_ANY, 0);
    ok (flux_rpc_get_matchtag (f) == 2,
        "the orphaned matchtag 1 is not reused");
    flux_rpc_get (f, NULL);
    flux_future_destroy (f);

    /* attributes and FLUX_NODEID_UPSTREAM */
    ok (flux_get_rank (h, &rank) == 0 && rank == 3,
        "flux_get_rank reads the rank attribute");
    ok (flux_attr_get (h, "nosuch") == NULL && errno == ENOENT,
        "unknown attribute fails with ENOENT");
    f = flux_rpc (h, "whoami", NULL, FLUX_NODEID_UPSTREAM, 0);
    ok (flux_rpc_get_unpack (f, "{s:I s:b}", "nodeid", &nodeid, "upstream",
                             &upstream)
                == 0
            && nodeid == 3 && upstream,
        "NODEID_UPSTREAM sends nodeid=rank with the UPSTREAM flag");
    flux_future_destroy (f);
    f = flux_rpc (h, "whoami", NULL, 7, 0);
    ok (flux_rpc_get_unpack (f, "{s:I s:b s:I}", "nodeid", &nodeid, "upstream",
                             &upstream, "userid", &userid)
                == 0
            && nodeid == 7 && !upstream && (uint32_t)userid == getuid (),
        "explicit nodeid is sent as is; fd:// stamped the peer's userid");
    flux_future_destroy (f);

    /* noresponse */
    f = flux_rpc (h, "echo", "x", FLUX_NODEID_ANY, FLUX_RPC_NORESPONSE);
    ok (f && flux_future_is_ready (f) && flux_future_get (f, NULL) == 0,
        "NORESPONSE rpc is fulfilled at once");
    ok (flux_rpc_get_matchtag (f) == FLUX_MATCHTAG_NONE,
        "NORESPONSE rpc uses no matchtag");
    flux_future_destroy (f);

    /* composite of two RPCs, waited synchronously */
    f = flux_future_wait_all_create ();
    flux_future_push (f, "a", flux_rpc (h, "echo", "A", FLUX_NODEID_ANY, 0));
    flux_future_push (f, "b", flux_rpc (h, "echo", "B", FLUX_NODEID_ANY, 0));
    ok (flux_future_get (f, NULL) == 0, "wait_all of two rpcs: get works");
    f2 = flux_future_get_child (f, "b");
    ok (flux_rpc_get (f2, &s) == 0 && !strcmp (s, "B"),
        "child b has its own response");
    flux_future_destroy (f);

    errno = 0;
    ok (flux_rpc (h, "echo", NULL, FLUX_NODEID_ANY,
                  FLUX_RPC_NORESPONSE | FLUX_RPC_STREAMING)
                == NULL
            && errno == EINVAL,
        "NORESPONSE|STREAMING is EINVAL");

    /* the server goes away with an RPC in flight */
    f = flux_rpc (h, "silent", NULL, FLUX_NODEID_ANY, 0);
    f2 = flux_rpc (h, "quit", NULL, FLUX_NODEID_ANY, FLUX_RPC_NORESPONSE);
    errno = 0;
    ok (flux_future_get (f, NULL) < 0 && errno == ECONNRESET,
        "rpc in flight fails with ECONNRESET when the server exits");
    flux_future_destroy (f);
    flux_future_destroy (f2);
    ok (wait_server (pid) == 0, "server exited cleanly");
    flux_close (h);
}

/* ---- async RPCs over a socket ---- */

static int async_count;

static void async_echo_cb (flux_future_t *f, void *arg)
{
    const char *s;
    if (flux_rpc_get (f, &s) == 0 && !strcmp (s, arg))
        async_count++;
    flux_future_destroy (f);
}

static int stream_seen;
static int stream_end_errno;

static void async_stream_cb (flux_future_t *f, void *arg)
{
    int n;
    if (flux_rpc_get_unpack (f, "{s:i}", "n", &n) < 0) {
        stream_end_errno = errno;
        flux_future_destroy (f);
        return;
    }
    stream_seen++;
    flux_future_reset (f);
}

static void timeout_cb (flux_future_t *f, void *arg)
{
    int *errp = arg;
    *errp = flux_future_get (f, NULL) < 0 ? errno : 0;
    flux_future_destroy (f);
}

static void test_async_rpc (void)
{
    int fd, i, tmo_errno = 0;
    pid_t pid = start_server (&fd);
    flux_t *h = open_fd (fd);
    flux_reactor_t *r = flux_get_reactor (h);
    static char *words[] = {"one", "two", "three", "four", "five"};
    flux_future_t *f;

    async_count = 0;
    for (i = 0; i < 100; i++) {
        f = flux_rpc (h, "echo", words[i % 5], FLUX_NODEID_ANY, 0);
        if (flux_future_then (f, -1, async_echo_cb, words[i % 5]) < 0)
            break;
    }
    f = flux_rpc_pack (h, "stream", FLUX_NODEID_ANY, FLUX_RPC_STREAMING,
                       "{s:i}", "count", 10);
    flux_future_then (f, -1, async_stream_cb, NULL);
    f = flux_rpc (h, "silent", NULL, FLUX_NODEID_ANY, 0);
    flux_future_then (f, 0.05, timeout_cb, &tmo_errno);
    ok (flux_reactor_run (r, 0) == 0,
        "reactor returns once every continuation destroyed its future");
    ok (async_count == 100, "100 concurrent RPCs answered (%d)", async_count);
    ok (stream_seen == 10 && stream_end_errno == ENODATA,
        "async streaming RPC: 10 responses then ENODATA");
    ok (tmo_errno == ETIMEDOUT, "then with a timeout: ETIMEDOUT");
    ok (flux_matchtag_avail (h) >= UINT32_MAX - 200,
        "matchtags returned to the pool");

    f = flux_rpc (h, "quit", NULL, FLUX_NODEID_ANY, FLUX_RPC_NORESPONSE);
    flux_future_destroy (f);
    ok (wait_server (pid) == 0, "server exited cleanly");
    flux_close (h);
}

/* ---- local:// with the accept byte ---- */

/* Serve one connection on path: accept, write accept_byte after
 * delay_us, then (0) serve it. */
static pid_t start_listener (const char *path, unsigned char accept_byte,
                             useconds_t delay_us)
{
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    int lfd, cfd;
    pid_t pid;

    strncpy (sun.sun_path, path, sizeof (sun.sun_path) - 1);
    unlink (path);
    if ((lfd = socket (AF_UNIX, SOCK_STREAM, 0)) < 0
        || bind (lfd, (struct sockaddr *)&sun, sizeof (sun)) < 0
        || listen (lfd, 4) < 0)
        BAIL_OUT ("listen %s: %s", path, strerror (errno));
    if ((pid = fork ()) == 0) {
        if ((cfd = accept (lfd, NULL, NULL)) < 0)
            _exit (1);
        close (lfd);
        if (delay_us)
            usleep (delay_us);
        if (write (cfd, &accept_byte, 1) != 1)
            _exit (1);
        if (accept_byte != 0)
            _exit (0);
        serve_fd (cfd);
    }
    close (lfd);
    return pid;
}

/* A socket path of size bytes that no other test run uses. */
static void temp_socket (char *sock, size_t size)
{
    char path[] = "/tmp/flux-handle-test.XXXXXX";
    int fd = mkstemp (path);

    if (fd < 0)
        BAIL_OUT ("mkstemp: %s", strerror (errno));
    close (fd);
    unlink (path);
    snprintf (sock, size, "%s.sock", path);
}

/* Tell the server of h (process pid) to quit, check it exits cleanly,
 * close h. */
static void stop_server (flux_t *h, pid_t pid)
{
    flux_future_t *f;

    f = flux_rpc (h, "quit", NULL, FLUX_NODEID_ANY, FLUX_RPC_NORESPONSE);
    flux_future_destroy (f);
    ok (wait_server (pid) == 0, "server exited");
    flux_close (h);
}

static void test_local (void)
{
    char sock[128], uri[160];
    flux_error_t error;
    flux_t *h;
    flux_future_t *f;
    const char *s;
    pid_t pid;

    temp_socket (sock, sizeof (sock));
    snprintf (uri, sizeof (uri), "  local://%s  ", sock);

    pid = start_listener (sock, 0, 0);
    ok ((h = flux_open_ex (uri, 0, &error)) != NULL,
        "local:// connects and reads the accept byte");
    f = flux_rpc (h, "echo", "over local", FLUX_NODEID_ANY, 0);
    ok (flux_rpc_get (f, &s) == 0 && !strcmp (s, "over local"),
        "rpc over local:// works");
    flux_future_destroy (f);
    stop_server (h, pid);

    pid = start_listener (sock, EPERM, 0);
    errno = 0;
    ok (flux_open_ex (uri, 0, &error) == NULL && errno == EPERM,
        "a nonzero accept byte refuses the connection with that errno");
    ok (strstr (error.text, "refused") != NULL, "with a clear message: %s",
        error.text);
    wait_server (pid);
    unlink (sock);

    setenv ("FLUX_LOCAL_CONNECTOR_RETRY_COUNT", "1", 1);
    errno = 0;
    ok (flux_open_ex (uri, 0, &error) == NULL && errno == ENOENT,
        "no socket: ENOENT after retries");
    ok (strstr (error.text, "cannot connect") != NULL, "error: %s", error.text);
    unsetenv ("FLUX_LOCAL_CONNECTOR_RETRY_COUNT");
    errno = 0;
    ok (flux_open_ex ("bogus://x", 0, &error) == NULL && errno == EINVAL,
        "unknown scheme: EINVAL (%s)", error.text);
    ok (flux_open_ex ("nonsense", 0, &error) == NULL && errno == EINVAL,
        "URI without scheme: EINVAL (%s)", error.text);
    unsetenv ("FLUX_URI");
    ok (flux_open_ex (NULL, 0, &error) == NULL && errno == EINVAL,
        "NULL URI without FLUX_URI: EINVAL (%s)", error.text);
}

/* FLUX_O_EARLY: the open returns before the accept byte comes; it is
 * read as the first byte of the stream, by a blocking receive and by the
 * reactor (pollevents) alike; a refusal fails the first RPC. */
static void early_then_cb (flux_future_t *f, void *arg)
{
    const char *s;
    *(int *)arg = (flux_rpc_get (f, &s) == 0 && !strcmp (s, "late")) ? 1 : -1;
    flux_reactor_stop (flux_future_get_reactor (f));
}

static void test_local_early (void)
{
    char sock[128], uri[160];
    flux_error_t error;
    flux_t *h;
    flux_future_t *f;
    const char *s;
    pid_t pid;
    int got = 0;

    temp_socket (sock, sizeof (sock));
    snprintf (uri, sizeof (uri), "local://%s", sock);

    /* the byte comes 100 ms after the connection */
    pid = start_listener (sock, 0, 100000);
    ok ((h = flux_open_ex (uri, FLUX_O_EARLY, &error)) != NULL,
        "FLUX_O_EARLY: local:// opens before the accept byte comes");
    ok ((flux_pollevents (h) & (FLUX_POLLIN | FLUX_POLLERR)) == 0,
        "nothing to receive yet");
    f = flux_rpc (h, "echo", "early", FLUX_NODEID_ANY, 0);
    ok (flux_rpc_get (f, &s) == 0 && !strcmp (s, "early"),
        "an rpc sent at once is answered after the accept byte");
    flux_future_destroy (f);
    f = flux_rpc (h, "echo", "late", FLUX_NODEID_ANY, 0);
    ok (f && flux_future_then (f, 5., early_then_cb, &got) == 0
            && flux_reactor_run (flux_get_reactor (h), 0) >= 0 && got == 1,
        "and the next through the reactor");
    flux_future_destroy (f);
    stop_server (h, pid);

    /* the same through the reactor first: the byte and the answer may
     * come in one read */
    pid = start_listener (sock, 0, 0);
    got = 0;
    ok ((h = flux_open_ex (uri, FLUX_O_EARLY, &error)) != NULL
            && (f = flux_rpc (h, "echo", "late", FLUX_NODEID_ANY, 0))
            && flux_future_then (f, 5., early_then_cb, &got) == 0
            && flux_reactor_run (flux_get_reactor (h), 0) >= 0 && got == 1,
        "FLUX_O_EARLY: a first rpc answered through the reactor");
    flux_future_destroy (f);
    stop_server (h, pid);

    pid = start_listener (sock, EPERM, 50000);
    ok ((h = flux_open_ex (uri, FLUX_O_EARLY, &error)) != NULL,
        "FLUX_O_EARLY: a refused connection opens");
    errno = 0;
    f = flux_rpc (h, "echo", "refused", FLUX_NODEID_ANY, 0);
    ok (flux_rpc_get (f, &s) < 0 && errno == EPERM,
        "its first rpc fails with the broker's errno");
    flux_future_destroy (f);
    errno = 0;
    ok (flux_recv (h, FLUX_O_NONBLOCK) == NULL && errno == EPERM,
        "and so does every later receive");
    wait_server (pid);
    flux_close (h);
    unlink (sock);
}

/* ---- loop:// in-process ---- */

static int events_a, events_b;

static void event_a_cb (flux_t *h, flux_msg_handler_t *mh,
                        const flux_msg_t *msg, void *arg)
{
    events_a++;
}

static void event_b_cb (flux_t *h, flux_msg_handler_t *mh,
                        const flux_msg_t *msg, void *arg)
{
    events_b++;
    if (events_b == 2)
        flux_msg_handler_destroy (arg ? *(flux_msg_handler_t **)arg : NULL);
}

static void loop_done_cb (flux_future_t *f, void *arg)
{
    int *result = arg;
    *result = flux_future_get (f, NULL) < 0 ? errno : 0;
    /* the service handlers keep the loop alive: stop it */
    flux_reactor_stop (flux_future_get_reactor (f));
    flux_future_destroy (f);
}

static void test_loop (void)
{
    flux_t *h = flux_open ("loop://", 0);
    flux_msg_handler_t **handlers, *ha, *hb;
    flux_reactor_t *r = flux_get_reactor (h);
    flux_future_t *f;
    flux_msg_t *msg;
    int result = -1, i;
    struct flux_match m = FLUX_MATCH_EVENT;

    ok (h != NULL, "loop:// opened");
    ok (flux_msg_handler_addvec (h, server_htab, NULL, &handlers) == 0,
        "server handlers registered on the loop handle");
    f = flux_rpc (h, "echo", "x", FLUX_NODEID_ANY, 0);
    flux_future_then (f, -1, loop_done_cb, &result);
    flux_reactor_run (r, 0);
    ok (result == 0, "rpc to a service on the same loop handle works");

    /* EPERM for a guest */
    msg = flux_request_encode ("echo", "x");
    flux_msg_set_userid (msg, 4242);
    flux_msg_set_rolemask (msg, FLUX_ROLE_USER);
    f = flux_rpc_message (h, msg, FLUX_NODEID_ANY, 0);
    flux_msg_destroy (msg);
    result = -1;
    flux_future_then (f, -1, loop_done_cb, &result);
    flux_reactor_run (r, 0);
    ok (result == EPERM, "guest request to an owner-only handler: EPERM");
    flux_msg_handler_delvec (handlers);

    /* events go to every matching handler */
    m.topic_glob = "ev.*";
    ha = flux_msg_handler_create (h, m, event_a_cb, NULL);
    m.topic_glob = "ev.b";
    hb = flux_msg_handler_create (h, m, event_b_cb, &ha);
    flux_msg_handler_start (ha);
    flux_msg_handler_start (hb);
    ok (flux_event_subscribe (h, "ev.") == 0, "subscribe works on loop");
    for (i = 0; i < 3; i++) {
        msg = flux_event_encode ("ev.b", NULL);
        flux_send (h, msg, 0);
        flux_msg_destroy (msg);
    }
    msg = flux_event_encode ("ev.a", NULL);
    flux_send (h, msg, 0);
    flux_msg_destroy (msg);
    flux_reactor_run (r, FLUX_REACTOR_NOWAIT);
    ok (events_b == 3, "handler b got its 3 events");
    ok (events_a == 1,
        "handler a got the first ev.b, then was destroyed by b's callback "
        "(a=%d)",
        events_a);
    flux_msg_handler_destroy (hb);

    ok (flux_matchtag_alloc (h) != FLUX_MATCHTAG_NONE, "matchtag_alloc works");
    ok (flux_aux_set (h, "k", strdup ("v"), free) == 0
            && !strcmp (flux_aux_get (h, "k"), "v"),
        "aux set/get");
    ok (flux_aux_get (h, "none") == NULL && errno == ENOENT,
        "aux_get of a missing key: ENOENT");
    flux_close (h);
}

/* ---- events as flux-core's broker delivers them ---- */

/* clang-format off */
/* A flux-core broker delivers events with FLAG_ROUTE set and route ids on
 * the stack.  Event "foo.bar", payload {"a":1} + NUL, flags 0x0b =
 * topic|payload|route, one route id (36-byte UUID), userid 1000, rolemask
 * 5, seq 7.  Parts: 37 + 1 + 8 + 9 + 21 = 76 = 0x4c bytes.
 */
static const char routed_event[] =
    "\x12\x00\xee\xff" "\x00\x00\x00\x4c"
    "\x24" "5e2b1c44-9a0f-4c1e-8b7d-3f6a2e9c0d11"
    "\x00"
    "\x07" "foo.bar"
    "\x08" "{\"a\":1}" "\x00"
    "\x14" "\x8e\x01\x04\x0b" "\x00\x00\x03\xe8" "\x00\x00\x00\x05"
           "\x00\x00\x00\x07" "\x00\x00\x00\x00";
/* clang-format on */

static int routed_a;
static uint32_t routed_seq;

static void routed_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    if (flux_event_unpack (msg, NULL, "{s:i}", "a", &routed_a) < 0)
        routed_a = -1;
    (void)flux_msg_get_seq (msg, &routed_seq);
    flux_reactor_stop (flux_get_reactor (h));
}

static void test_routed_event (void)
{
    int sv[2];
    flux_t *h;
    struct flux_msg_handler_spec htab[] = {
        {FLUX_MSGTYPE_EVENT, "foo.*", routed_cb, 0},
        FLUX_MSGHANDLER_TABLE_END,
    };
    flux_msg_handler_t **handlers = NULL;
    char buf[sizeof (routed_event)];

    if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        BAIL_OUT ("socketpair: %s", strerror (errno));
    memcpy (buf, routed_event, sizeof (routed_event) - 1);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    memcpy (buf, "\xff\xee\x00\x12", 4);
#endif
    ok (write (sv[1], buf, sizeof (routed_event) - 1)
            == (ssize_t)sizeof (routed_event) - 1,
        "routed event: wrote flux-core's frame");
    h = open_fd (sv[0]);
    ok (h != NULL && flux_msg_handler_addvec (h, htab, NULL, &handlers) == 0,
        "routed event: handle and event handler");
    ok (flux_reactor_run (flux_get_reactor (h), 0) == 0 && routed_a == 1
            && routed_seq == 7,
        "routed event is delivered to the event handler, payload and seq "
        "intact");
    flux_msg_handler_delvec (handlers);
    flux_close (h);
    close (sv[1]);
}

/* ---- a lost connection is an error ---- */

static void never_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
}

static void test_lost_connection (void)
{
    int sv[2];
    flux_t *h;
    struct flux_msg_handler_spec htab[] = {
        {FLUX_MSGTYPE_EVENT, "foo.*", never_cb, 0},
        FLUX_MSGHANDLER_TABLE_END,
    };
    flux_msg_handler_t **handlers = NULL;
    int rc;

    if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        BAIL_OUT ("socketpair: %s", strerror (errno));
    h = open_fd (sv[0]);
    ok (h != NULL && flux_msg_handler_addvec (h, htab, NULL, &handlers) == 0,
        "lost connection: handle with a started event handler");
    close (sv[1]); /* the broker goes away */
    errno = 0;
    rc = flux_reactor_run (flux_get_reactor (h), 0);
    ok (rc < 0 && errno == ECONNRESET,
        "reactor_run fails with ECONNRESET when the connection is lost");
    diag ("rc=%d errno=%s", rc, strerror (errno));
    flux_msg_handler_delvec (handlers);
    flux_close (h);
}

/* ---- ssh:// through a fake ssh ---- */

/* Write an executable script PATH with BODY after "#!/bin/sh\n". */
static void write_script (const char *path, const char *body)
{
    FILE *fp = fopen (path, "w");
    if (!fp || fprintf (fp, "#!/bin/sh\n%s", body) < 0 || fclose (fp) != 0
        || chmod (path, 0700) < 0)
        BAIL_OUT ("%s: %s", path, strerror (errno));
}

static char *read_line (const char *path, char *buf, size_t size)
{
    FILE *fp = fopen (path, "r");
    buf[0] = '\0';
    if (fp) {
        if (fgets (buf, size, fp))
            buf[strcspn (buf, "\n")] = '\0';
        fclose (fp);
    }
    return buf;
}

static void test_ssh (void)
{
    char dir[] = "/tmp/flux-handle-ssh.XXXXXX";
    char ssh[128], args[128], body[512], line[512], exe[4096];
    flux_error_t error;
    flux_future_t *f;
    const char *s;
    ssize_t n;
    flux_t *h;

    if (!mkdtemp (dir))
        BAIL_OUT ("mkdtemp: %s", strerror (errno));
    if ((n = readlink ("/proc/self/exe", exe, sizeof (exe) - 1)) < 0)
        BAIL_OUT ("readlink: %s", strerror (errno));
    exe[n] = '\0';
    snprintf (ssh, sizeof (ssh), "%s/ssh", dir);
    snprintf (args, sizeof (args), "%s/args", dir);
    setenv ("FLUX_SSH", ssh, 1);
    setenv ("FLUX_SSH_RCMD", "/opt/flux", 1);

    errno = 0;
    ok (flux_open_ex ("ssh://host", 0, &error) == NULL && errno == EINVAL
            && strstr (error.text, "expected ssh://"),
        "ssh:// without a path: EINVAL (%s)", error.text);
    ok (flux_open_ex ("ssh://host:0/x", 0, &error) == NULL && errno == EINVAL
            && strstr (error.text, "bad port"),
        "port 0: EINVAL (%s)", error.text);
    ok (flux_open_ex ("ssh://host:65536/x", 0, &error) == NULL
            && strstr (error.text, "bad port"),
        "port 65536: EINVAL (%s)", error.text);
    ok (flux_open_ex ("ssh://-oProxyCommand=x/x", 0, &error) == NULL
            && errno == EINVAL && strstr (error.text, "bad host"),
        "a host that ssh would take as an option: EINVAL (%s)", error.text);
    ok (flux_open_ex ("ssh://alice@/x", 0, &error) == NULL && errno == EINVAL,
        "an empty host: EINVAL (%s)", error.text);

    /* the fake ssh records its arguments, writes the accept byte and
     * serves the handle's requests on its stdin (= stdout) */
    snprintf (body, sizeof (body),
              "echo \"$@\" >%s\nprintf '\\000'\nexec %s --serve-stdin\n", args,
              exe);
    write_script (ssh, body);
    h = flux_open_ex ("ssh://alice@hostx:2222/tmp/it's/local-0", 0, &error);
    if (!h)
        BAIL_OUT ("ssh:// through FLUX_SSH: %s", error.text);
    ok (h != NULL, "ssh:// opens through FLUX_SSH");
    f = flux_rpc (h, "echo", "over ssh", FLUX_NODEID_ANY, 0);
    ok (flux_rpc_get (f, &s) == 0 && !strcmp (s, "over ssh"),
        "an rpc goes through ssh's stdin and stdout");
    flux_future_destroy (f);
    is (read_line (args, line, sizeof (line)),
        "-p 2222 alice@hostx /opt/flux relay '/tmp/it'\\''s/local-0'",
        "ssh gets -p PORT USER@HOST and FLUX_SSH_RCMD relay 'PATH'");
    f = flux_rpc (h, "quit", NULL, FLUX_NODEID_ANY, FLUX_RPC_NORESPONSE);
    flux_future_destroy (f);
    flux_close (h);
    ok (waitpid (-1, NULL, WNOHANG) < 0 && errno == ECHILD,
        "flux_close reaped the ssh process");

    write_script (ssh, "exit 255\n");
    errno = 0;
    ok (flux_open_ex ("ssh://hostx/x", 0, &error) == NULL && errno == ECONNRESET
            && strstr (error.text, "no answer from flux relay on hostx"),
        "ssh that fails: ECONNRESET (%s)", error.text);
    write_script (ssh, "printf '\\001'\n");
    errno = 0;
    ok (flux_open_ex ("ssh://hostx/x", 0, &error) == NULL && errno == EPERM
            && strstr (error.text, "refused"),
        "a nonzero accept byte through ssh: that errno (%s)", error.text);
    ok (waitpid (-1, NULL, WNOHANG) < 0 && errno == ECHILD,
        "failed opens leave no child");
    setenv ("FLUX_SSH", "/nonexistent/ssh", 1);
    errno = 0;
    h = flux_open_ex ("ssh://hostx/x", 0, &error);
    /* posix_spawn reports the exec failure, except under valgrind, whose
     * spawn cannot: then ssh "answers" nothing */
    ok (h == NULL
            && ((errno == ENOENT
                 && strstr (error.text, "cannot run /nonexistent/ssh"))
                || (errno == ECONNRESET && strstr (error.text, "no answer"))),
        "FLUX_SSH that cannot run fails (%s)", error.text);
    ok (waitpid (-1, NULL, WNOHANG) < 0 && errno == ECHILD,
        "and leaves no child");
    unsetenv ("FLUX_SSH");
    unsetenv ("FLUX_SSH_RCMD");
    unlink (ssh);
    unlink (args);
    rmdir (dir);
}

int main (int argc, char *argv[])
{
    if (argc == 2 && !strcmp (argv[1], "--serve-stdin")) {
        serve_fd (STDIN_FILENO); /* the fake ssh's remote end */
        return 1;
    }
    plan (NO_PLAN);
    signal (SIGPIPE, SIG_IGN);
    test_sync_rpc ();
    test_async_rpc ();
    test_local ();
    test_local_early ();
    test_loop ();
    test_routed_event ();
    test_lost_connection ();
    test_ssh ();
    done_testing ();
}
