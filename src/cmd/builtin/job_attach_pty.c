/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* job_attach_pty.c - the local terminal on a job's pty session
 * (job_attach_pty.h).
 *
 * Keys are read when libuv says stdin is readable and sent with
 * <prefix>.write, one request in flight at a time (the next read waits
 * for the answer, so a paste is held back by the terminal, not queued
 * here).  The session's output arrives on the streaming
 * <prefix>.attach and is written to stdout as it comes.
 *
 * The detach key (ATTACH_PTY_DETACH_KEY, ctrl-]) is not sent: the keys
 * typed before it are, then <prefix>.detach ends this client's attach
 * while the task goes on; the session can be attached again later.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>
#include <uv.h>

#include "libflux/base64.h"

#include "cmdutil.h"
#include "job_attach_pty.h"

#define KEY_CHUNK 4096

struct attach_pty {
    flux_t *h;
    uv_loop_t *loop;
    uint32_t rank;
    char prefix[256];
    attach_pty_done_f cb;
    void *arg;
    flux_future_t *attach_f;
    flux_future_t *write_f;
    uv_poll_t *in_poll;
    uv_signal_t *winch;
    bool in_eof, done;
    bool attached;  /* the session answered {type:"attach"} */
    bool exited;    /* {type:"exit"} came */
    bool detaching; /* the detach key was typed */
    int in_flags;
};

/* One saved terminal mode per process: restored by whoever comes
 * first, the end of the session or exit(). */
static struct termios saved_tio;
static bool tio_saved;
static int saved_in_flags = -1;

static void term_restore (void)
{
    if (tio_saved) {
        (void)tcsetattr (STDIN_FILENO, TCSADRAIN, &saved_tio);
        tio_saved = false;
    }
    if (saved_in_flags >= 0) {
        (void)fcntl (STDIN_FILENO, F_SETFL, saved_in_flags);
        saved_in_flags = -1;
    }
}

static int term_raw (void)
{
    static bool registered;
    struct termios raw;

    if (tcgetattr (STDIN_FILENO, &saved_tio) < 0)
        return -1;
    if (!registered) {
        if (atexit (term_restore) != 0)
            return -1;
        registered = true;
    }
    raw = saved_tio;
    cfmakeraw (&raw);
    if (tcsetattr (STDIN_FILENO, TCSADRAIN, &raw) < 0)
        return -1;
    tio_saved = true;
    return 0;
}

bool attach_pty_usable (void)
{
    struct termios tio;

    return isatty (STDIN_FILENO) && tcgetattr (STDIN_FILENO, &tio) == 0;
}

static void get_size (int *rows, int *cols)
{
    struct winsize ws;

    *rows = *cols = -1;
    if (ioctl (STDIN_FILENO, TIOCGWINSZ, &ws) == 0
        || ioctl (STDOUT_FILENO, TIOCGWINSZ, &ws) == 0) {
        *rows = ws.ws_row;
        *cols = ws.ws_col;
    }
}

/* stdout may share stdin's open file, made non-blocking by the poll */
static void write_all (const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write (STDOUT_FILENO, buf, len);
        if (n < 0) {
            if (errno == EAGAIN) {
                struct pollfd pfd = {.fd = STDOUT_FILENO, .events = POLLOUT};
                (void)poll (&pfd, 1, -1);
                continue;
            }
            if (errno == EINTR)
                continue;
            return; /* stdout is gone: nothing to show it on */
        }
        buf += n;
        len -= (size_t)n;
    }
}

static void stop_input (struct attach_pty *p)
{
    if (p->in_poll) {
        uv_poll_stop (p->in_poll);
        flux_uv_close_free ((uv_handle_t *)p->in_poll);
        p->in_poll = NULL;
    }
    if (p->winch) {
        uv_signal_stop (p->winch);
        flux_uv_close_free ((uv_handle_t *)p->winch);
        p->winch = NULL;
    }
    flux_future_destroy (p->write_f);
    p->write_f = NULL;
}

static void finish (struct attach_pty *p, int errnum)
{
    if (p->done)
        return;
    p->done = true;
    stop_input (p);
    term_restore ();
    if (p->cb)
        p->cb (p, errnum, p->arg);
}

static void attach_cb (flux_future_t *f, void *arg)
{
    struct attach_pty *p = arg;
    const char *type, *data = NULL;
    size_t len = 0;

    if (flux_rpc_get_unpack (f, "{s:s s?s%}", "type", &type, "data", &data,
                             &len)
        < 0) {
        int e = errno == ENODATA ? 0 : errno;
        flux_future_destroy (f); /* it would keep the reactor running */
        p->attach_f = NULL;
        finish (p, e);
        return;
    }
    if (!strcmp (type, "attach"))
        p->attached = true;
    else if (!strcmp (type, "exit"))
        p->exited = true;
    else if (!strcmp (type, "data") && data) {
        size_t size = base64_decoded_size (len) + 1;
        char *buf = malloc (size);
        ssize_t n;
        if (!buf)
            cmd_die ("out of memory");
        if ((n = base64_decode (buf, size, data, len)) < 0)
            cmd_warn ("pty: malformed data from the job");
        else
            write_all (buf, (size_t)n);
        free (buf);
    }
    flux_future_reset (f);
}

static void in_pump (struct attach_pty *p);

static void write_cb (flux_future_t *f, void *arg)
{
    struct attach_pty *p = arg;

    if (flux_future_get (f, NULL) < 0) {
        /* EPIPE: the task exited; its exit comes on the attach */
        if (errno != EPIPE)
            cmd_warn ("pty: %s", future_strerror (f, errno));
        stop_input (p);
        return;
    }
    flux_future_destroy (f);
    p->write_f = NULL;
    in_pump (p);
}

static void send_keys (struct attach_pty *p, const char *buf, size_t len)
{
    size_t size = base64_encoded_size (len) + 1;
    char topic[300], *b64;

    if (!(b64 = malloc (size)) || base64_encode (b64, size, buf, len) < 0)
        cmd_die ("out of memory");
    snprintf (topic, sizeof (topic), "%s.write", p->prefix);
    if (!(p->write_f
          = flux_rpc_pack (p->h, topic, p->rank, 0, "{s:s}", "data", b64))
        || flux_future_then (p->write_f, -1., write_cb, p) < 0)
        cmd_die ("pty: %s: %s", topic, strerror (errno));
    free (b64);
}

static void detach_cb (flux_future_t *f, void *arg)
{
    (void)arg;
    flux_future_destroy (f); /* the attach's ENODATA ends the session */
}

/* Send the keys before the detach key, then ask the session to end our
 * attach; its ENODATA then finishes the session here. */
static void detach (struct attach_pty *p, const char *buf, size_t len)
{
    char topic[300];
    flux_future_t *f;

    if (len > 0)
        send_keys (p, buf, len);
    p->detaching = true;
    stop_input (p);
    snprintf (topic, sizeof (topic), "%s.detach", p->prefix);
    if (!(f = flux_rpc (p->h, topic, NULL, p->rank, 0))
        || flux_future_then (f, -1., detach_cb, NULL) < 0)
        cmd_die ("pty: %s: %s", topic, strerror (errno));
}

static void in_poll_cb (uv_poll_t *w, int status, int events)
{
    struct attach_pty *p = w->data;
    char buf[KEY_CHUNK];
    const char *key;
    ssize_t n;

    (void)status;
    (void)events;
    uv_poll_stop (w);
    if ((n = read (STDIN_FILENO, buf, sizeof (buf))) < 0) {
        if (errno == EAGAIN || errno == EINTR) {
            in_pump (p);
            return;
        }
        n = 0;
    }
    if (n == 0) { /* the terminal hung up: keep showing output */
        p->in_eof = true;
        return;
    }
    if ((key = memchr (buf, ATTACH_PTY_DETACH_KEY, (size_t)n))) {
        detach (p, buf, (size_t)(key - buf));
        return;
    }
    send_keys (p, buf, (size_t)n);
}

static void in_pump (struct attach_pty *p)
{
    if (p->done || p->in_eof || p->write_f || !p->in_poll)
        return;
    if (uv_poll_start (p->in_poll, UV_READABLE | UV_DISCONNECT, in_poll_cb) < 0)
        cmd_die ("pty: cannot poll stdin");
}

static void resize_cb (flux_future_t *f, void *arg)
{
    (void)arg;
    flux_future_destroy (f); /* an error: the session is ending */
}

static void winch_cb (uv_signal_t *w, int signum)
{
    struct attach_pty *p = w->data;
    char topic[300];
    flux_future_t *f;
    int rows, cols;

    (void)signum;
    get_size (&rows, &cols);
    if (rows < 0)
        return;
    snprintf (topic, sizeof (topic), "%s.resize", p->prefix);
    if (!(f = flux_rpc_pack (p->h, topic, p->rank, 0, "{s:i s:i}", "rows", rows,
                             "cols", cols))
        || flux_future_then (f, -1., resize_cb, NULL) < 0)
        flux_future_destroy (f);
}

struct attach_pty *attach_pty_create (flux_t *h, uint32_t rank,
                                      const char *service, const char *session,
                                      attach_pty_done_f cb, void *arg)
{
    struct attach_pty *p;
    char topic[300];
    int rows, cols;

    if (!(p = calloc (1, sizeof (*p))))
        return NULL;
    p->h = h;
    p->loop = flux_reactor_uv (flux_get_reactor (h));
    p->rank = rank;
    p->cb = cb;
    p->arg = arg;
    if (snprintf (p->prefix, sizeof (p->prefix), "%s.%s", service, session)
        >= (int)sizeof (p->prefix)) {
        free (p);
        errno = EINVAL;
        return NULL;
    }
    get_size (&rows, &cols);
    snprintf (topic, sizeof (topic), "%s.attach", p->prefix);
    if (!(p->attach_f
          = rows >= 0
                ? flux_rpc_pack (h, topic, rank, FLUX_RPC_STREAMING,
                                 "{s:i s:i}", "rows", rows, "cols", cols)
                : flux_rpc_pack (h, topic, rank, FLUX_RPC_STREAMING, "{}"))
        || flux_future_then (p->attach_f, -1., attach_cb, p) < 0)
        goto error;
    if (term_raw () < 0)
        goto error;
    saved_in_flags = fcntl (STDIN_FILENO, F_GETFL);
    if (!(p->in_poll = calloc (1, sizeof (*p->in_poll)))
        || uv_poll_init (p->loop, p->in_poll, STDIN_FILENO) < 0) {
        free (p->in_poll);
        p->in_poll = NULL;
        goto error;
    }
    p->in_poll->data = p;
    if (!(p->winch = calloc (1, sizeof (*p->winch)))
        || uv_signal_init (p->loop, p->winch) < 0) {
        free (p->winch);
        p->winch = NULL;
        goto error;
    }
    p->winch->data = p;
    if (uv_signal_start (p->winch, winch_cb, SIGWINCH) < 0)
        goto error;
    uv_unref ((uv_handle_t *)p->winch);
    in_pump (p);
    return p;
error:
    attach_pty_destroy (p);
    errno = errno ? errno : EINVAL;
    return NULL;
}

bool attach_pty_attached (struct attach_pty *p)
{
    return p && p->attached;
}

bool attach_pty_detached (struct attach_pty *p)
{
    return p && p->detaching && !p->exited;
}

void attach_pty_destroy (struct attach_pty *p)
{
    if (p) {
        int saved_errno = errno;
        p->cb = NULL;
        stop_input (p);
        term_restore ();
        flux_future_destroy (p->attach_f);
        free (p);
        errno = saved_errno;
    }
}
