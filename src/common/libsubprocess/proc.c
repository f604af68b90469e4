/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* proc.c - one child of the subprocess server: spawned with vfork in a
 * process group of its own (unless no-setpgrp: setpgrp, as flux-core's;
 * not setsid, which also costs the kernel a scheduler autogroup per
 * process), stdio on pipes read and written through libuv, each channel
 * a socketpair whose child end is passed as NAME=<fd> (a pipe is cheaper
 * to make and to close than a socketpair, but a channel goes both ways).
 * A process that takes no input (a background one, a sink's) gets the
 * server's /dev/null as stdin, opened once.  Not uv_spawn: libuv forks,
 * and a fork of the broker copies its page tables and then tears them
 * down at exec (about a third of the broker's CPU per `flux exec`
 * process, measured); the vfork child runs in the parent's memory until
 * exec (spawn() says why not posix_spawn).
 * The exit is watched with a pidfd (waitpid of that pid only, so libuv's
 * own children elsewhere in the process are left to libuv).
 *
 * Output is read into the server's read buffer (64 KiB, one for all its
 * processes), or behind what a stream holds (the incomplete line a read
 * left) into the stream's own buffer, bounded by <stream>_BUFSIZE: line
 * buffered, one response per line (a line longer than the buffer is
 * sent in buffer-sized pieces); unbuffered, one response per read.
 * Paused (the client's output window is full), a line-buffered stream
 * stops at the line in hand and holds the rest, EOF included, until it
 * is resumed; so a client that stops crediting gets a window and a
 * line, not a window and a read's worth of lines (64 KiB of 2-byte
 * lines is 32K responses).
 * Input writes are bounded the same way: a write that would take more
 * than the buffer size in flight is dropped (and logged); clients that
 * asked for write credits are told each time bytes were written.
 *
 * Lifetime: a proc is freed once released (unlinked from the server) and
 * every libuv handle it owns was closed (close callbacks count down).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"

extern char **environ;

#define OUTPUT_KEEP 8192 /* bytes of output a waitable process keeps */
#define READ_CHUNK 65536 /* the server's read buffer; a stream's grows */

static void proc_free (struct proc *p)
{
    if (p->pidfd >= 0)
        (void)close (p->pidfd);
    for (int i = 0; i < p->nstreams; i++)
        free (p->streams[i].buf);
    free (p->streams);
    flux_msg_decref (p->exec_msg);
    flux_msg_decref (p->client);
    flux_msg_decref (p->wait_msg);
    json_decref (p->output);
    flux_cmd_destroy (p->cmd);
    free (p);
}

static void handle_closed (uv_handle_t *h)
{
    struct proc *p = h->data;

    if (--p->handles == 0 && p->released)
        proc_free (p);
}

static void stream_close (struct stream *st)
{
    if (st->open) {
        st->open = false;
        uv_close ((uv_handle_t *)&st->pipe, handle_closed);
    }
}

static void process_closed (uv_handle_t *h)
{
    struct proc *p = h->data;

    if (p->pidfd >= 0) {
        (void)close (p->pidfd);
        p->pidfd = -1;
    }
    handle_closed (h);
}

static void process_close (struct proc *p)
{
    if (p->process_open) {
        p->process_open = false;
        uv_close ((uv_handle_t *)&p->process, process_closed);
    }
}

void proc_release (struct proc *p)
{
    if (p->released)
        return;
    list_del (&p->resume);
    if (p->s)
        server_unlink (p->s, p);
    p->s = NULL;
    p->released = true;
    for (int i = 0; i < p->nstreams; i++)
        stream_close (&p->streams[i]);
    process_close (p);
    if (p->handles == 0)
        proc_free (p);
}

static void respond (struct proc *p, const flux_msg_t *msg, json_t *o)
{
    if (!o || flux_respond_pack (p->s->h, msg, "O", o) < 0)
        flux_log_error (p->s->h, "%s: error responding", p->s->service);
    json_decref (o);
}

/* Whoever follows the process: its client or its sink. */
static bool followed (struct proc *p)
{
    return p->client || p->sink_open;
}

/* o (a response, taken) to the client or the sink. */
static void to_client (struct proc *p, json_t *o)
{
    if (p->sink_open) {
        if (o)
            p->sink (o, 0, p->sink_arg);
        json_decref (o);
        return;
    }
    respond (p, p->client, o);
}

/* Keep the newest ~OUTPUT_KEEP bytes of output as whole io objects. */
static void keep_output (struct proc *p, json_t *io, size_t len)
{
    if (!p->output && !(p->output = json_array ()))
        return;
    if (json_array_append (p->output, io) < 0)
        return;
    p->output_bytes += len;
    while (p->output_bytes > OUTPUT_KEEP && json_array_size (p->output) > 1) {
        json_t *first = json_array_get (p->output, 0);
        json_t *d = json_object_get (first, "data");
        size_t n = d ? json_string_length (d) : 0;
        p->output_bytes -= n < p->output_bytes ? n : p->output_bytes;
        json_array_remove (p->output, 0);
    }
}

/* Hand one piece of output (or EOF: data NULL) to whoever wants it. */
static void emit (struct stream *st, const char *data, size_t len, bool eof)
{
    struct proc *p = st->p;
    json_t *io;

    if (!(io = subprocess_io_encode (st->name, p->s->rankstr, data, len, eof)))
        return;
    if (p->waitable && len > 0)
        keep_output (p, io, len);
    if (followed (p) && (p->flags & st->flag)) {
        to_client (p, json_pack ("{s:s s:i s:O}", "type", "output", "pid",
                                 (int)p->pid, "io", io));
        if (p->client && (p->flags & SUBPROCESS_REXEC_OUTPUT_CREDIT)
            && (p->out_inflight += SUBPROCESS_OUTPUT_COST (len))
                   >= SUBPROCESS_OUTPUT_WINDOW)
            proc_pause (p, true);
    }
    else if (p->background && !p->client && len > 0) {
        const char *label = flux_cmd_get_label (p->cmd);
        int n = (int)len;
        if (n > 0 && data[n - 1] == '\n')
            n--;
        flux_log (p->s->h, LOG_INFO, "%s[%d]: %.*s",
                  label ? label : flux_cmd_arg (p->cmd, 0), (int)p->pid, n,
                  data);
    }
    json_decref (io);
}

/* Send what data holds: complete lines, then the rest if asked to
 * (unbuffered, EOF) or if it is a buffer full of one line; line by line
 * only while the process is not paused, unless all.  Returns the bytes
 * sent. */
static size_t send_data (struct stream *st, const char *data, size_t len,
                         bool all)
{
    size_t off = 0;
    bool hold = false;
    char *nl;

    if (st->line && st->p->sink) {
        /* a sink's lines go together: one piece per read, cut after the
         * last newline (rexec.bulk-exec; a line per response costs a
         * message per line on every hop of the tree) */
        if (len > 0 && (nl = memrchr (data, '\n', len))) {
            off = nl - data + 1;
            emit (st, data, off, false);
        }
    }
    else if (st->line) {
        /* one line at a time: stop once the client's window is full (the
         * process paused), the rest waits in the stream's buffer */
        while (off < len && !(hold = !all && st->p->paused)
               && (nl = memchr (data + off, '\n', len - off))) {
            size_t n = nl - (data + off) + 1;
            emit (st, data + off, n, false);
            off += n;
        }
    }
    if (off < len && !hold
        && (all || !st->line || len >= (size_t)st->bufsize)) {
        emit (st, data + off, len - off, false);
        off = len;
    }
    return off;
}

/* Send what is buffered (see send_data). */
static void stream_flush (struct stream *st, bool all)
{
    size_t off = send_data (st, st->buf, st->len, all);

    if (off > 0) {
        memmove (st->buf, st->buf + off, st->len - off);
        st->len -= off;
    }
}

/* The stream's buffer can hold len bytes (its bufsize at most). */
static int stream_reserve (struct stream *st, size_t len)
{
    size_t cap = st->cap ? st->cap : READ_CHUNK;
    char *nbuf;

    while (cap < len)
        cap *= 2;
    if (cap > (size_t)st->bufsize)
        cap = st->bufsize;
    if (cap < len) {
        errno = ENOSPC;
        return -1;
    }
    if (cap <= st->cap)
        return 0;
    if (!(nbuf = realloc (st->buf, cap)))
        return -1;
    st->buf = nbuf;
    st->cap = cap;
    return 0;
}

static struct stream *pipe_stream (void *h)
{
    return (struct stream *)((char *)h - offsetof (struct stream, pipe));
}

/* A read goes to the server's buffer when the stream holds nothing (most
 * reads: a stream's own buffer is made only for what a read leaves, an
 * incomplete line), else after what the stream holds. */
static void alloc_cb (uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    struct stream *st = pipe_stream (h);
    subprocess_server_t *s = st->p->s;

    (void)suggested;
    if (st->len == 0 && (s->rbuf || (s->rbuf = malloc (READ_CHUNK)))) {
        buf->base = s->rbuf;
        buf->len = READ_CHUNK < st->bufsize ? READ_CHUNK : st->bufsize;
        return;
    }
    if (st->len == st->cap)
        (void)stream_reserve (st, st->cap + 1);
    if (st->len == st->cap) /* could not grow: make room */
        stream_flush (st, true);
    buf->base = st->buf + st->len;
    buf->len = st->cap - st->len;
}

/* The stream read its EOF: what it holds goes, then the EOF, unless the
 * process is paused meanwhile (resume_cb() calls again). */
static void stream_finish (struct stream *st)
{
    struct proc *p = st->p;

    stream_flush (st, false); /* the complete lines, while not paused */
    if (p->paused)
        return;
    stream_flush (st, true); /* an incomplete last line */
    st->eof_held = false;
    st->read_eof = true;
    emit (st, NULL, 0, true);
    if (st->kind == STREAM_OUTPUT || !st->writable)
        stream_close (st);
    proc_check_done (p);
}

static void read_cb (uv_stream_t *h, ssize_t nread, const uv_buf_t *buf)
{
    struct stream *st = pipe_stream (h);
    struct proc *p = st->p;

    if (nread == 0 || nread == UV_ENOBUFS)
        return;
    if (nread > 0 && buf->base == p->s->rbuf) {
        size_t off = send_data (st, buf->base, nread, false);
        size_t left = (size_t)nread - off;
        /* the rest (an incomplete line) waits in the stream's buffer */
        if (left > 0 && stream_reserve (st, left) < 0)
            (void)send_data (st, buf->base + off, left, true);
        else if (left > 0) {
            memcpy (st->buf, buf->base + off, left);
            st->len = left;
        }
        return;
    }
    if (nread > 0) {
        st->len += nread;
        stream_flush (st, false);
        return;
    }
    /* EOF or error: what is left goes, then the EOF */
    uv_read_stop (h);
    st->reading = false;
    st->eof_held = true;
    stream_finish (st);
}

struct write_req {
    uv_write_t req;
    struct stream *st;
    size_t len;
    char data[];
};

static void write_done (uv_write_t *req, int status)
{
    struct write_req *w = (struct write_req *)req;
    struct stream *st = w->st;
    struct proc *p = st->p;

    st->wpending -= w->len;
    if (status == 0 && !p->released && followed (p)
        && (p->flags & SUBPROCESS_REXEC_WRITE_CREDIT))
        to_client (p, json_pack ("{s:s s:{s:i}}", "type", "add-credit",
                                 "channels", st->name, (int)w->len));
    free (w);
}

static void shutdown_done (uv_shutdown_t *req, int status)
{
    struct stream *st
        = (struct stream *)((char *)req
                            - offsetof (struct stream, shutdown_req));

    if (st->kind == STREAM_STDIN || st->read_eof)
        stream_close (st);
}

void proc_write (struct proc *p, const char *name, const char *data, size_t len,
                 bool eof)
{
    struct stream *st = NULL;

    for (int i = 0; i < p->nstreams; i++) {
        if (p->streams[i].kind != STREAM_OUTPUT
            && !strcmp (p->streams[i].name, name)) {
            st = &p->streams[i];
            break;
        }
    }
    if (!st || !st->writable || !st->open)
        return;
    if (len > 0) {
        struct write_req *w;
        uv_buf_t b;
        if (st->wpending + len > (size_t)st->bufsize) {
            flux_log (p->s->h, LOG_ERR,
                      "%s[%d]: %s: buffer full, %zu bytes dropped",
                      flux_cmd_arg (p->cmd, 0), (int)p->pid, name, len);
        }
        else if ((w = malloc (sizeof (*w) + len))) {
            memcpy (w->data, data, len);
            w->st = st;
            w->len = len;
            b = uv_buf_init (w->data, len);
            if (uv_write (&w->req, (uv_stream_t *)&st->pipe, &b, 1, write_done)
                < 0)
                free (w);
            else
                st->wpending += len;
        }
    }
    if (eof) {
        st->writable = false;
        if (uv_shutdown (&st->shutdown_req, (uv_stream_t *)&st->pipe,
                         shutdown_done)
            == 0)
            st->shutdown = true;
        else if (st->kind == STREAM_STDIN || st->read_eof)
            stream_close (st);
    }
}

/* Each resumed process sends what its streams held (a line at a time,
 * while it is not paused again), then is read again. */
static void resume_cb (uv_idle_t *idle)
{
    subprocess_server_t *s = idle->data;
    struct proc *p;

    while (
        (p = list_first_entry_or_null (&s->resume_list, struct proc, resume))) {
        list_del (&p->resume);
        for (int i = 0; i < p->nstreams && !p->paused && !p->released; i++) {
            struct stream *st = &p->streams[i];
            if (st->eof_held)
                stream_finish (st);
            else if (st->len > 0)
                stream_flush (st, false);
            if (!p->paused && st->reading && st->open)
                (void)uv_read_start ((uv_stream_t *)&st->pipe, alloc_cb,
                                     read_cb);
        }
    }
    uv_idle_stop (idle);
}

/* Flush p's held output on the next loop turn: a resume comes from the
 * client's credit or a sink's owner, who must not be called back from
 * inside it. */
static void resume_later (struct proc *p)
{
    subprocess_server_t *s = p->s;

    if (!s || list_attached (&p->resume))
        return;
    if (!s->resume_idle) {
        if (!(s->resume_idle = calloc (1, sizeof (*s->resume_idle)))
            || uv_idle_init (flux_reactor_uv (flux_get_reactor (s->h)),
                             s->resume_idle)
                   < 0) {
            free (s->resume_idle);
            s->resume_idle = NULL;
            flux_log (s->h, LOG_ERR, "%s: cannot resume output", s->service);
            return;
        }
        s->resume_idle->data = s;
    }
    list_add_tail (&s->resume_list, &p->resume);
    (void)uv_idle_start (s->resume_idle, resume_cb);
}

static void resume_closed (uv_handle_t *h)
{
    free (h);
}

void proc_resume_fini (subprocess_server_t *s)
{
    if (s->resume_idle) {
        uv_close ((uv_handle_t *)s->resume_idle, resume_closed);
        s->resume_idle = NULL;
    }
}

void proc_pause (struct proc *p, bool pause)
{
    bool held = false;

    if (p->paused == pause)
        return;
    p->paused = pause;
    for (int i = 0; i < p->nstreams; i++) {
        struct stream *st = &p->streams[i];
        if (!pause && (st->len > 0 || st->eof_held)) {
            held = true; /* read again once what it holds went */
            continue;
        }
        if (!st->reading || !st->open)
            continue;
        if (pause)
            (void)uv_read_stop ((uv_stream_t *)&st->pipe);
        else
            (void)uv_read_start ((uv_stream_t *)&st->pipe, alloc_cb, read_cb);
    }
    if (held)
        resume_later (p);
}

void proc_output_credit (struct proc *p, size_t bytes)
{
    p->out_inflight -= bytes < p->out_inflight ? bytes : p->out_inflight;
    if (p->out_inflight < SUBPROCESS_OUTPUT_WINDOW)
        proc_pause (p, false);
}

void proc_client_gone (struct proc *p)
{
    flux_msg_decref (p->client);
    p->client = NULL;
    p->out_inflight = 0;
    proc_pause (p, false); /* read to its end, and dropped */
}

int proc_signal (struct proc *p, int signum)
{
    int rc;

    if (p->exited || p->pid <= 0) {
        errno = ESRCH;
        return -1;
    }
    if (p->local_flags & SUBPROCESS_LOCAL_NO_SETPGRP)
        rc = kill (p->pid, signum);
    else if ((rc = killpg (p->pid, signum)) < 0 && errno == ESRCH)
        rc = kill (p->pid, signum); /* not yet in its group */
    return rc;
}

static bool all_read (struct proc *p)
{
    for (int i = 0; i < p->nstreams; i++) {
        if (!p->streams[i].read_eof)
            return false;
    }
    return true;
}

static void send_finished (struct proc *p)
{
    if (followed (p) && !p->finished_sent) {
        to_client (p, json_pack ("{s:s s:i}", "type", "finished", "status",
                                 p->status));
        p->finished_sent = true;
    }
}

void proc_check_done (struct proc *p)
{
    subprocess_server_t *s = p->s;

    if (p->released || !p->exited || !all_read (p))
        return;
    send_finished (p); /* if not sent yet, to whoever follows */
    if (p->sink_open) {
        p->sink_open = false;
        p->sink (NULL, ENODATA, p->sink_arg);
    }
    if (p->client) {
        if (flux_respond_error (s->h, p->client, ENODATA, NULL) < 0)
            flux_log_error (s->h, "%s: error responding", s->service);
        flux_msg_decref (p->client);
        p->client = NULL;
        if (p->background) { /* an attached waitable zombie is reaped */
            proc_release (p);
            return;
        }
    }
    if (p->wait_msg) {
        json_t *o = json_pack ("{s:i}", "status", p->status);
        if (o && p->output && json_array_size (p->output) > 0)
            json_object_set (o, "output", p->output);
        respond (p, p->wait_msg, o);
        proc_release (p);
        return;
    }
    if (!p->waitable)
        proc_release (p);
}

static void exit_cb (uv_poll_t *h, int status, int events)
{
    struct proc *p = h->data;
    int ws;
    pid_t rc;

    /* the pidfd is readable once the child exited (status < 0: cannot
     * poll; wait for it then, rather than leave it running unwatched) */
    rc = waitpid (p->pid, &ws, status < 0 ? 0 : WNOHANG);
    if (rc == 0)
        return; /* not yet */
    if (rc < 0) /* not our child any more: nothing to report */
        ws = 0;
    p->exited = true;
    /* as libuv reported it: the signal number, or the exit code << 8 */
    p->status = WIFSIGNALED (ws) ? WTERMSIG (ws) : WEXITSTATUS (ws) << 8;
    if (p->s)
        p->s->exited++;
    process_close (p);
    send_finished (p);
    proc_check_done (p);
}

void proc_attach (struct proc *p, const flux_msg_t *msg, int flags)
{
    json_t *cmd = flux_cmd_tojson (p->cmd);

    p->client = flux_msg_incref (msg);
    p->flags = flags & ~SUBPROCESS_REXEC_OUTPUT_CREDIT; /* exec only */
    p->finished_sent = false;
    respond (p, msg,
             cmd ? json_pack ("{s:s s:i s:o}", "type", "attached", "pid",
                              (int)p->pid, "cmd", cmd)
                 : NULL);
    for (int i = 0; i < p->nstreams; i++) {
        struct stream *st = &p->streams[i];
        if (st->kind != STREAM_STDIN && st->read_eof)
            emit (st, NULL, 0, true);
    }
    proc_check_done (p);
}

/* ---- spawning ---- */

static int stream_init (struct proc *p, struct stream *st, const char *name,
                        enum stream_kind kind, int flag, flux_error_t *error)
{
    st->p = p;
    st->name = name;
    st->kind = kind;
    st->flag = flag;
    if (subprocess_cmd_bufsize (p->cmd, name, &st->bufsize, error) < 0
        || subprocess_cmd_line_buffer (p->cmd, name, &st->line, error) < 0)
        return -1;
    return 0;
}

static int pipe_open (struct proc *p, struct stream *st)
{
    int rc;

    if ((rc = uv_pipe_init (flux_reactor_uv (flux_get_reactor (p->s->h)),
                            &st->pipe, 0))
        < 0) {
        errno = -rc;
        return -1;
    }
    st->pipe.data = p;
    st->open = true;
    p->handles++;
    return 0;
}

/* The child's environment: the command's (the server's own if empty),
 * FLUX_URI of this broker, none of what belongs to the server's own
 * launcher, and NAME=fd for each channel. */
static int setup_env (struct proc *p)
{
    flux_cmd_t *cmd = p->cmd;
    char fd[16];

    if (flux_cmd_env_count (cmd) == 0) {
        for (int i = 0; environ[i]; i++) {
            const char *eq = strchr (environ[i], '=');
            char *name;
            if (!eq || eq == environ[i])
                continue;
            if (!(name = strndup (environ[i], eq - environ[i])))
                return -1;
            (void)flux_cmd_setenv (cmd, name, eq + 1, true);
            free (name);
        }
    }
    if (p->s->local_uri
        && flux_cmd_setenv (cmd, "FLUX_URI", p->s->local_uri, true) < 0)
        return -1;
    flux_cmd_unsetenv (cmd, "FLUX_PROXY_REMOTE");
    flux_cmd_unsetenv (cmd, "NOTIFY_SOCKET");
    flux_cmd_unsetenv (cmd, "INVOCATION_ID");
    for (int i = 0; i < flux_cmd_channel_count (cmd); i++) {
        snprintf (fd, sizeof (fd), "%d", 3 + i);
        if (flux_cmd_setenv (cmd, flux_cmd_channel (cmd, i), fd, true) < 0)
            return -1;
    }
    return 0;
}

/* st's channel to the child: a socketpair (both ways), or a pipe the
 * parent reads (output) or writes (stdin).  The parent's end is opened as
 * st's pipe, the child's returned in *child; both close-on-exec. */
enum { BOTH_WAYS, CHILD_WRITES, CHILD_READS };

static int stream_open (struct proc *p, struct stream *st, int how, int *child)
{
    int sv[2], mine, theirs;

    if (how == BOTH_WAYS
            ? socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)
            : pipe2 (sv, O_CLOEXEC))
        return -1;
    mine = how == CHILD_READS ? sv[1] : sv[0];
    theirs = how == CHILD_READS ? sv[0] : sv[1];
    if (pipe_open (p, st) < 0) {
        close (sv[0]);
        close (sv[1]);
        return -1;
    }
    if (uv_pipe_open (&st->pipe, mine) < 0) {
        close (sv[0]);
        close (sv[1]);
        errno = EIO;
        return -1;
    }
    *child = theirs;
    return 0;
}

/* Open the parent's ends; child_fds[i] is what the child gets as fd i
 * (-1: its own stdio, -2: /dev/null).  no_input: stdin is /dev/null. */
static int setup_stdio (struct proc *p, int *child_fds, bool no_input)
{
    bool fallthrough = p->local_flags & SUBPROCESS_LOCAL_STDIO_FALLTHROUGH;
    int nch = flux_cmd_channel_count (p->cmd);

    for (int i = 0; i < 3; i++) {
        struct stream *st = &p->streams[i];
        if (fallthrough) {
            child_fds[i] = -1;
            st->read_eof = true;
            continue;
        }
        if (i == 0 && no_input) {
            if (p->s->devnull < 0
                && (p->s->devnull = open ("/dev/null", O_RDONLY | O_CLOEXEC))
                       < 0)
                return -1;
            child_fds[i] = -2; /* EOF at once */
            st->read_eof = true;
            continue;
        }
        if (stream_open (p, st, i == 0 ? CHILD_READS : CHILD_WRITES,
                         &child_fds[i])
            < 0)
            return -1;
        if (i == 0) {
            st->writable = true;
            st->read_eof = true;
        }
        else
            st->reading = true;
    }
    for (int i = 0; i < nch; i++) {
        struct stream *st = &p->streams[3 + i];
        if (stream_open (p, st, BOTH_WAYS, &child_fds[3 + i]) < 0)
            return -1;
        st->reading = true;
        st->writable = true;
    }
    return 0;
}

/* file, searched in the PATH of the child's environment (as execvp in
 * the child would) when it has no slash: a new string, or NULL with
 * errno (ENOENT, EACCES, ENOMEM).  Candidates are built in a buffer on
 * the stack: one stat per directory and no allocation until the match
 * (the search runs for every exec; a PATH of a dozen directories is
 * common). */
static char *resolve (const char *file, char **env)
{
    const char *path = NULL, *dir, *end;
    bool denied = false;
    size_t flen = strlen (file);
    char full[PATH_MAX];

    if (!*file) {
        errno = ENOENT;
        return NULL;
    }
    if (strchr (file, '/'))
        return strdup (file);
    for (int i = 0; env && env[i]; i++) {
        if (!strncmp (env[i], "PATH=", 5)) {
            path = env[i] + 5;
            break;
        }
    }
    if (!path)
        path = "/bin:/usr/bin";
    for (dir = path;; dir = end + 1) {
        size_t dlen;
        struct stat sb;
        end = strchr (dir, ':');
        dlen = end ? (size_t)(end - dir) : strlen (dir);
        if (dlen == 0) { /* an empty entry is the current directory */
            dir = ".";
            dlen = 1;
        }
        if (dlen + 1 + flen < sizeof (full)) {
            memcpy (full, dir, dlen);
            full[dlen] = '/';
            memcpy (full + dlen + 1, file, flen + 1);
            if (stat (full, &sb) == 0 && S_ISREG (sb.st_mode)) {
                if (access (full, X_OK) == 0)
                    return strdup (full);
                denied = true;
            }
        }
        if (!end)
            break;
    }
    errno = denied ? EACCES : ENOENT;
    return NULL;
}

/* What the child does between vfork and exec: system calls only, on
 * its own stack, writing nothing of the parent's memory but *err (the
 * errno of a failure, for the parent).  No handler of the broker's may
 * run in it: every signal is blocked until the classic ones and the
 * real-time ones in rt_reset (not at their default at the server's
 * first spawn; glibc keeps 32 and 33 to itself) are back to default.
 * No signal ignored and no fd but 0..n-1 passes to the program. */
enum { FAILED_EXEC, FAILED_CHDIR, FAILED_SETUP };

static void __attribute__ ((noreturn))
child_exec (const char *path, char **argv, char **env, const char *cwd,
            const int *src, int n, bool own_group, const sigset_t *rt_reset,
            volatile int *err, volatile int *step)
{
    struct sigaction dfl;
    sigset_t none;

    memset (&dfl, 0, sizeof (dfl));
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < 32; sig++) {
        if (sig != SIGKILL && sig != SIGSTOP)
            (void)sigaction (sig, &dfl, NULL);
    }
    for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++) {
        if (sigismember (rt_reset, sig) == 1)
            (void)sigaction (sig, &dfl, NULL);
    }
    *step = FAILED_SETUP;
    if (own_group && setpgid (0, 0) < 0)
        goto fail;
    /* every source is at n or above: no dup2 overwrites a later one */
    for (int i = 0; i < n; i++) {
        if (src[i] >= 0 && dup2 (src[i], i) < 0)
            goto fail;
    }
    /* nothing else passes to the program, not even what the broker
     * inherited without close-on-exec (a kernel without close_range
     * leaves those) */
    (void)close_range (n, ~0U, CLOSE_RANGE_CLOEXEC);
    *step = FAILED_CHDIR;
    if (cwd && chdir (cwd) < 0)
        goto fail;
    *step = FAILED_EXEC;
    sigemptyset (&none);
    (void)sigprocmask (SIG_SETMASK, &none, NULL);
    (void)execve (path, argv, env);
fail:
    *err = errno ? errno : ENOEXEC;
    _exit (127);
}

/* vfork and exec the child: fds 0..n-1 from child_fds (-1: none, -2:
 * the server's /dev/null), a process group of its own unless
 * NO_SETPGRP, every signal default and unblocked, cwd.  vfork, not fork
 * (the broker's page tables are not copied) nor posix_spawn (the same
 * clone, but glibc's also maps a stack for the child and resets all 64
 * signals, about a fifth of rexec's spawn cost): the parent thread waits
 * until the child has exec'ed or failed, so a failure comes back in err
 * with no pipe.  Returns 0 or an errno, with *step the step that failed
 * (FAILED_*). */
static int spawn (struct proc *p, const char *path, char **argv, char **env,
                  const char *cwd, int *child_fds, int n, int *step)
{
    bool own_group = !(p->local_flags & SUBPROCESS_LOCAL_NO_SETPGRP);
    int src[n], moved[n], e = 0;
    volatile int err = 0, failed = FAILED_SETUP;
    sigset_t all, saved;
    pid_t pid;

    *step = FAILED_SETUP;
    for (int i = 0; i < n; i++) {
        src[i] = child_fds[i] == -2 ? p->s->devnull : child_fds[i];
        moved[i] = -1;
    }
    /* a source fd below n could be overwritten by an earlier dup2: move
     * it out of the way first (in the broker they are far above) */
    for (int i = 0; i < n; i++) {
        if (src[i] >= 0 && src[i] < n) {
            if ((moved[i] = fcntl (src[i], F_DUPFD_CLOEXEC, n)) < 0) {
                e = errno;
                goto out;
            }
            src[i] = moved[i];
        }
    }
    if (!p->s->rt_known) {
        /* the real-time signals not at their default (ignored, inherited
         * from whoever started us): children get them back to default */
        sigemptyset (&p->s->rt_reset);
        for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++) {
            struct sigaction sa;
            if (sigaction (sig, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL)
                sigaddset (&p->s->rt_reset, sig);
        }
        p->s->rt_known = true;
    }
    sigfillset (&all);
    if ((e = pthread_sigmask (SIG_SETMASK, &all, &saved)) != 0)
        goto out;
    pid = vfork ();
    if (pid == 0)
        child_exec (path, argv, env, cwd, src, n, own_group, &p->s->rt_reset,
                    &err, &failed);
    e = pid < 0 ? errno : 0;
    (void)pthread_sigmask (SIG_SETMASK, &saved, NULL);
    if (pid > 0 && err != 0) { /* exec failed: reap the child */
        e = err;
        *step = failed;
        while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    else if (pid > 0)
        p->pid = pid;
out:
    for (int i = 0; i < n; i++)
        if (moved[i] >= 0)
            close (moved[i]);
    return e;
}

static int start_reading (struct proc *p)
{
    for (int i = 0; i < p->nstreams; i++) {
        struct stream *st = &p->streams[i];
        int rc;
        if (st->reading
            && (rc
                = uv_read_start ((uv_stream_t *)&st->pipe, alloc_cb, read_cb))
                   < 0) {
            errno = -rc;
            return -1;
        }
    }
    return 0;
}

static int credits_respond (struct proc *p, const flux_msg_t *msg)
{
    json_t *ch = json_object ();

    if (!ch)
        return -1;
    for (int i = 0; i < p->nstreams; i++) {
        struct stream *st = &p->streams[i];
        if (st->writable)
            json_object_set_new (ch, st->name, json_integer (st->bufsize));
    }
    respond (p, msg,
             json_pack ("{s:s s:o}", "type", "add-credit", "channels", ch));
    return 0;
}

static struct proc *proc_create (subprocess_server_t *s, flux_cmd_t *cmd,
                                 int flags, int local_flags, bool background,
                                 flux_error_t *error)
{
    struct proc *p;
    int nch = flux_cmd_channel_count (cmd);

    if (!(p = calloc (1, sizeof (*p)))
        || !(p->streams = calloc (3 + nch, sizeof (*p->streams)))) {
        free (p);
        flux_cmd_destroy (cmd);
        errprintf (error, "out of memory");
        errno = ENOMEM;
        return NULL;
    }
    p->s = s;
    p->cmd = cmd;
    p->flags = flags;
    p->local_flags = local_flags;
    p->background = background;
    p->waitable = flags & SUBPROCESS_REXEC_WAITABLE;
    p->nstreams = 3 + nch;
    p->pidfd = -1;
    list_init (&p->resume);
    p->process.data = p;
    if (stream_init (p, &p->streams[0], "stdin", STREAM_STDIN, 0, error) < 0
        || stream_init (p, &p->streams[1], "stdout", STREAM_OUTPUT,
                        SUBPROCESS_REXEC_STDOUT, error)
               < 0
        || stream_init (p, &p->streams[2], "stderr", STREAM_OUTPUT,
                        SUBPROCESS_REXEC_STDERR, error)
               < 0)
        goto error;
    for (int i = 0; i < nch; i++) {
        if (stream_init (p, &p->streams[3 + i], flux_cmd_channel (cmd, i),
                         STREAM_CHANNEL, SUBPROCESS_REXEC_CHANNEL, error)
            < 0)
            goto error;
    }
    return p;
error:
    p->s = NULL;
    p->released = true;
    proc_free (p);
    return NULL;
}

/* Spawn for the request msg (answered: started, or the error), or with
 * no msg for sink (error set on failure, sink not called). */
static struct proc *spawn_for (subprocess_server_t *s, const flux_msg_t *msg,
                               flux_cmd_t *cmd, int flags, int local_flags,
                               bool background, subprocess_server_sink_f sink,
                               void *arg, flux_error_t *errp)
{
    struct proc *p;
    flux_error_t error;
    int nch = flux_cmd_channel_count (cmd);
    int child_fds[3 + nch];
    char **argv = NULL, **env = NULL, *path = NULL;
    int argc = flux_cmd_argc (cmd), e, errnum, step = FAILED_EXEC;

    for (int i = 0; i < 3 + nch; i++)
        child_fds[i] = -1;
    if (!(p = proc_create (s, cmd, flags, local_flags, background, &error))) {
        errnum = errno;
        s->failed++;
        if (msg)
            flux_respond_error (s->h, msg, errnum, error.text);
        else
            *errp = error;
        errno = errnum;
        return NULL;
    }
    snprintf (error.text, sizeof (error.text), "%s", "");
    if (setup_env (p) < 0 || !(env = flux_cmd_env_expand (cmd))
        || !(argv = calloc (argc + 1, sizeof (*argv))))
        goto error;
    for (int i = 0; i < argc; i++)
        argv[i] = (char *)flux_cmd_arg (cmd, i);
    if (setup_stdio (p, child_fds, background || sink) < 0)
        goto error;
    if (!(path = resolve (argv[0], env))
        || (e = spawn (p, path, argv, env, flux_cmd_getcwd (cmd), child_fds,
                       3 + nch, &step))
               != 0) {
        if (path)
            errno = e;
        if (path && step == FAILED_CHDIR)
            snprintf (error.text, sizeof (error.text),
                      "%s: working directory %s: %s", argv[0],
                      flux_cmd_getcwd (cmd), strerror (errno));
        else
            snprintf (error.text, sizeof (error.text), "%s: %s", argv[0],
                      strerror (errno));
        goto error;
    }
    /* watch it; if that cannot be done it must not run unwatched */
    e = 0;
    if ((p->pidfd = (int)syscall (SYS_pidfd_open, p->pid, 0)) >= 0
        && (e = uv_poll_init (flux_reactor_uv (flux_get_reactor (s->h)),
                              &p->process, p->pidfd))
               == 0) {
        p->process.data = p;
        p->handles++;
        p->process_open = true;
        e = uv_poll_start (&p->process, UV_READABLE, exit_cb);
    }
    if (p->pidfd < 0 || e < 0) {
        errno = p->pidfd < 0 ? errno : -e;
        snprintf (error.text, sizeof (error.text), "%s: watching it: %s",
                  argv[0], strerror (errno));
        if (p->local_flags & SUBPROCESS_LOCAL_NO_SETPGRP)
            (void)kill (p->pid, SIGKILL);
        else
            (void)kill (-p->pid, SIGKILL);
        (void)waitpid (p->pid, NULL, 0);
        if (!p->process_open && p->pidfd >= 0) {
            close (p->pidfd);
            p->pidfd = -1;
        }
        p->pid = 0;
        goto error;
    }
    for (int i = 0; i < 3 + nch; i++)
        if (child_fds[i] >= 0)
            close (child_fds[i]);
    free (path);
    free (argv);
    flux_cmd_env_free (env);
    if (start_reading (p) < 0)
        flux_log_error (s->h, "%s: reading output of pid %d", s->service,
                        (int)p->pid);
    if (!msg) {
        p->sink = sink;
        p->sink_arg = arg;
        p->sink_open = true;
        to_client (
            p, json_pack ("{s:s s:i}", "type", "started", "pid", (int)p->pid));
        return p;
    }
    if (!background) {
        p->exec_msg = flux_msg_incref (msg);
        p->client = flux_msg_incref (msg);
        if (flags & SUBPROCESS_REXEC_WRITE_CREDIT)
            credits_respond (p, msg);
    }
    respond (p, msg,
             json_pack ("{s:s s:i}", "type", "started", "pid", (int)p->pid));
    return p;
error:
    errnum = errno;
    for (int i = 0; i < 3 + nch; i++) {
        if (child_fds[i] >= 0)
            close (child_fds[i]);
    }
    free (path);
    free (argv);
    flux_cmd_env_free (env);
    s->failed++;
    if (!msg) {
        if (!error.text[0])
            snprintf (error.text, sizeof (error.text), "%s", strerror (errnum));
        *errp = error;
    }
    else if (flux_respond_error (s->h, msg, errnum,
                                 error.text[0] ? error.text : NULL)
             < 0)
        flux_log_error (s->h, "%s: error responding", s->service);
    p->s = NULL; /* not linked yet */
    proc_release (p);
    errno = errnum;
    return NULL;
}

struct proc *proc_spawn (subprocess_server_t *s, const flux_msg_t *msg,
                         flux_cmd_t *cmd, int flags, int local_flags,
                         bool background)
{
    return spawn_for (s, msg, cmd, flags, local_flags, background, NULL, NULL,
                      NULL);
}

struct proc *proc_spawn_sink (subprocess_server_t *s, flux_cmd_t *cmd,
                              int flags, subprocess_server_sink_f sink,
                              void *arg, flux_error_t *error)
{
    return spawn_for (s, NULL, cmd, flags, 0, false, sink, arg, error);
}
