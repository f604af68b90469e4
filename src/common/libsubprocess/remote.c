/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* remote.c - the client side of one remote subprocess (RFC 42 exec).
 *
 * One streaming exec RPC; its responses drive the callbacks.  A
 * callback may destroy the subprocess: the continuation notices (the
 * in_callback / zombie pair) and finishes the destruction when the
 * callback returns.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "subprocess.h"

struct flux_subprocess {
    flux_t *h;
    char *service;
    uint32_t rank;
    flux_future_t *f;
    uint32_t matchtag;
    struct flux_subprocess_ops ops;
    void *arg;
    void *aux;
    pid_t pid;
    bool started, finished, done;
    int status;
    int held_signal; /* raised before started */
    int in_callback;
    bool destroyed; /* destroy() called from a callback */
    bool stdin_closed;
    bool credit; /* exec with OUTPUT_CREDIT: output is credited */
    size_t owed; /* output consumed, not yet credited */
};

static void sp_free (flux_subprocess_t *p)
{
    flux_future_destroy (p->f);
    free (p->service);
    free (p);
}

void flux_subprocess_destroy (flux_subprocess_t *p)
{
    if (p) {
        int saved_errno = errno;
        if (p->in_callback)
            p->destroyed = true;
        else
            sp_free (p);
        errno = saved_errno;
    }
}

static void kill_continuation (flux_future_t *f, void *arg)
{
    flux_future_destroy (f);
}

static int send_kill (flux_subprocess_t *p, int signum)
{
    char topic[160];
    flux_future_t *f;

    snprintf (topic, sizeof (topic), "%s.kill", p->service);
    if (!(f = flux_rpc_pack (p->h, topic, p->rank, 0, "{s:i s:i}", "pid",
                             (int)p->pid, "signum", signum)))
        return -1;
    if (flux_future_then (f, -1., kill_continuation, NULL) < 0) {
        flux_future_destroy (f);
        return -1;
    }
    return 0;
}

/* The end of the stream: on_complete or on_error, once. */
static void finish (flux_subprocess_t *p, int errnum, const char *text)
{
    if (p->done)
        return;
    p->done = true;
    p->in_callback++;
    if (errnum == 0 && p->ops.on_complete)
        p->ops.on_complete (p, p->arg);
    else if (errnum != 0 && p->ops.on_error)
        p->ops.on_error (p, errnum, text, p->arg);
    p->in_callback--;
}

/* An output response that cost bytes was consumed (on_output returned):
 * credit it, a quarter window at a time (the server stops at a window). */
static void credit_output (flux_subprocess_t *p, size_t bytes)
{
    char topic[160];
    flux_future_t *f;

    if (!p->credit || p->destroyed
        || (p->owed += bytes) < SUBPROCESS_OUTPUT_WINDOW / 4)
        return;
    snprintf (topic, sizeof (topic), "%s.output-credit", p->service);
    f = flux_rpc_pack (p->h, topic, p->rank, FLUX_RPC_NORESPONSE, "{s:i s:I}",
                       "matchtag", (int)p->matchtag, "bytes",
                       (json_int_t)p->owed);
    flux_future_destroy (f);
    p->owed = 0;
}

static int handle_output (flux_subprocess_t *p, json_t *io)
{
    const char *stream;
    char *data = NULL;
    size_t len;
    bool eof;

    if (subprocess_io_decode (io, &stream, NULL, &data, &len, &eof) < 0)
        return -1;
    if (p->ops.on_output) {
        if (len > 0)
            p->ops.on_output (p, stream, data, len, false, p->arg);
        if (eof && !p->destroyed)
            p->ops.on_output (p, stream, NULL, 0, true, p->arg);
    }
    credit_output (p, SUBPROCESS_OUTPUT_COST (len));
    free (data);
    return 0;
}

static int handle_credit (flux_subprocess_t *p, json_t *channels)
{
    const char *name;
    json_t *v;

    if (!json_is_object (channels))
        return -1;
    json_object_foreach (channels, name, v)
    {
        if (!json_is_integer (v))
            return -1;
    }
    json_object_foreach (channels, name, v)
    {
        if (p->ops.on_credit && !p->destroyed)
            p->ops.on_credit (p, name, (int)json_integer_value (v), p->arg);
    }
    return 0;
}

/* One response.  -1: protocol error. */
static int handle_response (flux_subprocess_t *p, flux_future_t *f)
{
    const char *type;
    json_t *io = NULL, *channels = NULL, *st = NULL;
    int pid = -1, status = 0;
    bool has_status;

    if (flux_rpc_get_unpack (f, "{s:s s?i s?o s?o s?o}", "type", &type, "pid",
                             &pid, "status", &st, "io", &io, "channels",
                             &channels)
        < 0)
        return -1;
    if ((has_status = json_is_integer (st)))
        status = (int)json_integer_value (st);
    /* "attached" (an attach request) stands for "started" */
    if (!strcmp (type, "started") || !strcmp (type, "attached")) {
        if (pid <= 0 || p->started)
            return -1;
        p->pid = pid;
        p->started = true;
        if (p->held_signal) {
            (void)send_kill (p, p->held_signal);
            p->held_signal = 0;
        }
        if (p->ops.on_started)
            p->ops.on_started (p, p->arg);
    }
    else if (!strcmp (type, "output")) {
        if (!io)
            return -1;
        return handle_output (p, io);
    }
    else if (!strcmp (type, "add-credit")) {
        return handle_credit (p, channels);
    }
    else if (!strcmp (type, "finished")) {
        if (!has_status || p->finished)
            return -1;
        p->finished = true;
        p->status = status;
        if (p->ops.on_finished)
            p->ops.on_finished (p, status, p->arg);
    }
    /* "stopped" and types of later versions: nothing to do */
    return 0;
}

static void exec_continuation (flux_future_t *f, void *arg)
{
    flux_subprocess_t *p = arg;
    int rc;

    if (flux_future_get (f, NULL) < 0) {
        int errnum = errno;
        if (errnum == ENODATA && !p->finished) /* RFC 42: a protocol error */
            finish (p, EPROTO, "stream ended before the process finished");
        else if (errnum == ENODATA)
            finish (p, 0, NULL);
        else
            finish (p, errnum, flux_future_error_string (f));
        goto out;
    }
    p->in_callback++;
    rc = handle_response (p, f);
    p->in_callback--;
    if (p->destroyed)
        goto out;
    if (rc < 0) {
        finish (p, EPROTO, "malformed exec response");
        goto out;
    }
    flux_future_reset (f);
    return;
out:
    if (p->destroyed)
        sp_free (p);
}

/* A remote subprocess of SERVICE on RANK, not yet started or attached. */
static flux_subprocess_t *subprocess_new (flux_t *h, const char *service,
                                          uint32_t rank,
                                          const struct flux_subprocess_ops *ops,
                                          void *arg)
{
    flux_subprocess_t *p;

    if (!(p = calloc (1, sizeof (*p))) || !(p->service = strdup (service))) {
        free (p);
        errno = ENOMEM;
        return NULL;
    }
    p->h = h;
    p->rank = rank;
    p->pid = -1;
    p->arg = arg;
    if (ops)
        p->ops = *ops;
    return p;
}

flux_subprocess_t *flux_rexec (flux_t *h, const char *service, uint32_t rank,
                               const flux_cmd_t *cmd,
                               const struct flux_subprocess_ops *ops, void *arg)
{
    flux_subprocess_t *p;
    char topic[160];
    json_t *o;
    int flags = 0;

    if (!h || !service || strlen (service) > 128 || !cmd
        || flux_cmd_argc (cmd) == 0) {
        errno = EINVAL;
        return NULL;
    }
    if (!(p = subprocess_new (h, service, rank, ops, arg)))
        return NULL;
    if (p->ops.on_output) {
        flags |= SUBPROCESS_REXEC_STDOUT | SUBPROCESS_REXEC_STDERR
                 | SUBPROCESS_REXEC_OUTPUT_CREDIT;
        p->credit = true;
    }
    if (flux_cmd_channel_count (cmd) > 0)
        flags |= SUBPROCESS_REXEC_CHANNEL;
    if (p->ops.on_credit)
        flags |= SUBPROCESS_REXEC_WRITE_CREDIT;
    snprintf (topic, sizeof (topic), "%s.exec", service);
    if (!(o = flux_cmd_tojson (cmd))
        || !(p->f = flux_rpc_pack (h, topic, rank, FLUX_RPC_STREAMING,
                                   "{s:o s:i s:i}", "cmd", o, "flags", flags,
                                   "local_flags", 0))
        || flux_future_then (p->f, -1., exec_continuation, p) < 0) {
        sp_free (p);
        return NULL;
    }
    p->matchtag = flux_rpc_get_matchtag (p->f);
    return p;
}

flux_subprocess_t *flux_rexec_attach (flux_t *h, const char *service,
                                      uint32_t rank, pid_t pid,
                                      const char *label,
                                      const struct flux_subprocess_ops *ops,
                                      void *arg)
{
    flux_subprocess_t *p;
    char topic[160];
    int flags = 0;

    if (!h || !service || strlen (service) > 128 || (pid <= 0 && !label)
        || (label && !*label)) {
        errno = EINVAL;
        return NULL;
    }
    if (!(p = subprocess_new (h, service, rank, ops, arg)))
        return NULL;
    p->stdin_closed = true; /* a background process has none */
    if (p->ops.on_output)
        flags |= SUBPROCESS_REXEC_STDOUT | SUBPROCESS_REXEC_STDERR;
    snprintf (topic, sizeof (topic), "%s.attach", service);
    if (!(p->f = label ? flux_rpc_pack (h, topic, rank, FLUX_RPC_STREAMING,
                                        "{s:i s:s s:i}", "pid", -1, "label",
                                        label, "flags", flags)
                       : flux_rpc_pack (h, topic, rank, FLUX_RPC_STREAMING,
                                        "{s:i s:i}", "pid", (int)pid, "flags",
                                        flags))
        || flux_future_then (p->f, -1., exec_continuation, p) < 0) {
        sp_free (p);
        return NULL;
    }
    p->matchtag = flux_rpc_get_matchtag (p->f);
    return p;
}

int flux_subprocess_write (flux_subprocess_t *p, const char *stream,
                           const void *data, size_t len, bool eof)
{
    char topic[160];
    char rankstr[16];
    json_t *io;
    flux_future_t *f;

    if (!p || !stream || (len > 0 && !data)) {
        errno = EINVAL;
        return -1;
    }
    if (p->done || (!strcmp (stream, "stdin") && p->stdin_closed)) {
        errno = EPIPE;
        return -1;
    }
    snprintf (rankstr, sizeof (rankstr), "%u", p->rank);
    snprintf (topic, sizeof (topic), "%s.write", p->service);
    if (!(io = subprocess_io_encode (stream, rankstr, data, len, eof)))
        return -1;
    if (!(f = flux_rpc_pack (p->h, topic, p->rank, FLUX_RPC_NORESPONSE,
                             "{s:i s:o}", "matchtag", (int)p->matchtag, "io",
                             io)))
        return -1;
    flux_future_destroy (f);
    if (eof && !strcmp (stream, "stdin"))
        p->stdin_closed = true;
    return 0;
}

int flux_subprocess_kill (flux_subprocess_t *p, int signum)
{
    if (!p || signum <= 0 || signum >= NSIG) {
        errno = EINVAL;
        return -1;
    }
    if (p->done || p->finished) {
        errno = ESRCH;
        return -1;
    }
    if (!p->started) {
        p->held_signal = signum;
        return 0;
    }
    return send_kill (p, signum);
}

pid_t flux_subprocess_pid (const flux_subprocess_t *p)
{
    return p ? p->pid : -1;
}

uint32_t flux_subprocess_rank (const flux_subprocess_t *p)
{
    return p ? p->rank : 0;
}

bool flux_subprocess_started (const flux_subprocess_t *p)
{
    return p && p->started;
}

bool flux_subprocess_finished (const flux_subprocess_t *p)
{
    return p && p->finished;
}

int flux_subprocess_status (const flux_subprocess_t *p)
{
    return p ? p->status : 0;
}

bool flux_subprocess_done (const flux_subprocess_t *p)
{
    return p && p->done;
}

void flux_subprocess_aux_set (flux_subprocess_t *p, void *aux)
{
    if (p)
        p->aux = aux;
}

void *flux_subprocess_aux_get (const flux_subprocess_t *p)
{
    return p ? p->aux : NULL;
}
