/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* job_attach.c - `flux job attach` and the attach engine that `flux
 * run` and `flux submit --wait|--watch` share (job_attach.h).
 *
 * Three eventlogs are followed with job-info.eventlog-watch:
 *   eventlog             exceptions printed; "start" starts the exec
 *                        watch; "finish" gives the exit code; the end
 *                        ("clean", or --wait-event) finishes the others.
 *   guest.exec.eventlog  "shell.init" {leader-rank, service} starts the
 *                        output watch and stdin; "shell.start" closes
 *                        stdin of the tasks outside --stdin-ranks;
 *                        "complete" starts the output watch if no shell
 *                        ever did (so that what a failing shell wrote
 *                        is seen).
 *   guest.output         header, data, redirect, log (RFC 24).
 *
 * stdin goes to <service>.stdin at nodeid leader-rank, one request in
 * flight at a time: the next chunk is read only once the shell has
 * accepted the previous one, so a fast producer is held back by the
 * pipe, not buffered here.  Pollable inputs (pipes, terminals, sockets)
 * are read when libuv says they are readable; others (regular files,
 * /dev/null) are simply read.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "cmdutil.h"
#include "job_attach.h"
#include "job_attach_pty.h"
#include "jobio.h"
#include "libeventlog/eventlog.h"
#include "libidset/idset.h"

#define STDIN_CHUNK 32768
#define SIGINT_WINDOW_NS 1000000000ULL /* twice within one second: cancel */

struct attach;

/* A guest eventlog: watched, then (after the main eventlog ended) read
 * once from where the watch stopped. */
struct glog {
    struct attach *a;
    const char *path;
    void (*handle) (struct attach *a, double t, const char *name,
                    json_t *context);
    flux_future_t *f; /* its watch or lookup; NULL if its watch failed */
    bool started, done;
    size_t count; /* entries handled */
};

struct attach {
    flux_t *h;
    uv_loop_t *loop;
    struct attach_opts o;
    char *wait_event, *stdin_ranks;
    flux_jobid_t id;
    char jobid[64];
    double t0;
    bool have_t0;
    char *open_line[2]; /* --label-io: a line not ended, stdout/stderr */

    flux_future_t *main_f;
    bool main_canceled, main_done, clean;
    int status; /* finish status, -1 if none */
    bool fatal_exception, shell_init, job_started;
    bool exec_due;    /* "start" seen: the exec log is to be followed */
    bool final_read;  /* both guest logs are being read (final_read) */
    char *finish_msg; /* the finish event's word on the exit code */

    struct glog exec, output;
    json_t *encoding; /* the output header's, or NULL */

    /* stdin */
    int leader_rank;
    char *service;
    bool in_started, in_ready, in_closed, in_pollable, in_data_sent,
        in_eof_sent;
    uv_poll_t *in_poll;
    flux_future_t *in_f;
    int in_flags;        /* stdin's file status flags, restored at the end, */
    bool in_flags_saved; /* since uv_poll_init makes it non-blocking */

    /* pty mode (job_attach_pty.c): shell.init named a session and stdin
     * is a terminal; the session replaces stdin forwarding, and task 0's
     * captured output in guest.output is not printed twice */
    struct attach_pty *pty;
    bool pty_mode, pty_done, detached;
    bool canceled; /* this client canceled the job */
    /* task 0's output until the session confirms the attach, the last
     * PTY_HELD_MAX bytes: printed if the attach fails (the shell ended
     * first), dropped once the session shows it */
    char *pty_held;
    size_t pty_hlen;

    /* signals */
    uv_signal_t *sig[6];
    int nsig;
    uint64_t t_sigint;
};

static void glog_start (struct glog *g);
static void glog_finish (struct glog *g);
static void stdin_stop (struct attach *a);
static void pty_hold (struct attach *a, const char *data, size_t len);
static void pty_release_held (struct attach *a, bool show);
static void stdin_pump (struct attach *a);

int attach_check_stdin_ranks (const char *s)
{
    struct idset *ids;

    if (!s || !strcmp (s, "all"))
        return 0;
    if (!(ids = idset_decode (s)) || idset_empty (ids)) {
        idset_destroy (ids);
        return -1;
    }
    idset_destroy (ids);
    return 0;
}

/* The exit code's word, once: after the output */
static void finish_msg_print (struct attach *a)
{
    if (a->finish_msg) {
        fflush (stdout);
        cmd_warn ("%s", a->finish_msg);
        free (a->finish_msg);
        a->finish_msg = NULL;
    }
}

static void check_done (struct attach *a)
{
    if (!attach_finished (a))
        return;
    finish_msg_print (a);
    stdin_stop (a);
    for (int i = 0; i < a->nsig; i++) {
        flux_uv_close_free ((uv_handle_t *)a->sig[i]);
        a->sig[i] = NULL;
    }
    a->nsig = 0;
}

bool attach_finished (struct attach *a)
{
    return a->main_done && (!a->exec.started || a->exec.done)
           && (!a->output.started || a->output.done)
           && (!a->pty || a->pty_done);
}

static flux_future_t *watch (struct attach *a, const char *path,
                             flux_continuation_f cb, void *arg)
{
    flux_future_t *f;

    if (!(f = flux_rpc_pack (a->h, "job-info.eventlog-watch", FLUX_NODEID_ANY,
                             FLUX_RPC_STREAMING, "{s:I s:s s:i}", "id",
                             (json_int_t)a->id, "path", path, "flags", 0))
        || flux_future_then (f, -1., cb, arg) < 0)
        cmd_die ("watching %s of %s: %s", path, a->jobid, strerror (errno));
    return f;
}

static void watch_cancel (struct attach *a, flux_future_t *f)
{
    flux_future_t *cf;

    cf = flux_rpc_pack (a->h, "job-info.eventlog-watch-cancel", FLUX_NODEID_ANY,
                        FLUX_RPC_NORESPONSE, "{s:i}", "matchtag",
                        (int)flux_rpc_get_matchtag (f));
    if (!cf)
        cmd_die ("job-info.eventlog-watch-cancel: %s", strerror (errno));
    flux_future_destroy (cf);
}

static void print_event (struct attach *a, const char *prefix, double t,
                         const char *name, json_t *context)
{
    char *s = NULL;

    if (context && json_object_size (context) > 0)
        s = json_dumps (context, JSON_COMPACT);
    fprintf (stderr, "%.3fs: %s.%s%s%s\n", t - a->t0, prefix, name,
             s ? " " : "", s ? s : "");
    free (s);
}

/* guest.output */

/* "RANK: " before each line.  A line may come in pieces (flux run -u):
 * open[fd] is the rank whose line on fp is not finished, continued
 * without a label; another rank's data ends it first. */
static void write_labeled (struct attach *a, FILE *fp, const char *rank,
                           const char *data, size_t len)
{
    char **open = &a->open_line[fp == stdout ? 0 : 1];

    if (*open && strcmp (*open, rank) != 0)
        fputc ('\n', fp);
    else if (*open && len > 0) { /* the same rank goes on with its line */
        const char *nl = memchr (data, '\n', len);
        size_t n = nl ? (size_t)(nl - data) + 1 : len;
        fwrite (data, 1, n, fp);
        if (!nl)
            return; /* and it is still not ended */
        data += n;
        len -= n;
    }
    free (*open);
    *open = NULL;
    while (len > 0) {
        const char *nl = memchr (data, '\n', len);
        size_t n = nl ? (size_t)(nl - data) + 1 : len;
        fprintf (fp, "%s: ", rank);
        fwrite (data, 1, n, fp);
        data += n;
        len -= n;
        if (!nl && !(*open = strdup (rank)))
            cmd_die ("out of memory");
    }
}

static void output_event (struct attach *a, double t, const char *name,
                          json_t *context)
{
    flux_error_t error;

    if (!strcmp (name, "header")) {
        json_decref (a->encoding);
        a->encoding = json_incref (json_object_get (context, "encoding"));
    }
    else if (!strcmp (name, "data")) {
        const char *stream, *rank;
        char *data;
        size_t len;
        FILE *fp;

        if (jobio_decode (context, a->encoding, &stream, &rank, &data, &len,
                          NULL, &error)
            < 0) {
            cmd_warn ("%s: malformed output event: %s", a->jobid, error.text);
            return;
        }
        fp = !strcmp (stream, "stdout") ? stdout : stderr;
        if (a->pty_mode && !strcmp (rank, "0")) {
            if (!attach_pty_attached (a->pty)) {
                if (fp == stdout)
                    pty_hold (a, data, len);
            }
            else if (a->pty_held) /* the session shows it */
                pty_release_held (a, false);
            len = 0; /* shown by the pty session */
        }
        if (len > 0) {
            if (a->o.label_io)
                write_labeled (a, fp, rank, data, len);
            else
                fwrite (data, 1, len, fp);
            fflush (fp);
        }
        free (data);
    }
    else if (!strcmp (name, "redirect")) {
        const char *stream, *rank, *path = NULL;
        if (!context
            || json_unpack (context, "{s:s s:s s?s}", "stream", &stream, "rank",
                            &rank, "path", &path)
                   < 0) {
            cmd_warn ("%s: malformed redirect event", a->jobid);
            return;
        }
        if (!a->o.quiet)
            fprintf (stderr, "%s: %s redirected%s%s\n", rank, stream,
                     path ? " to " : "", path ? path : "");
    }
    else if (!strcmp (name, "log")) {
        char *s;
        if (!(s = jobio_log_line (context, t, a->t0, a->o.verbose, &error))) {
            cmd_warn ("%s: malformed log event: %s", a->jobid, error.text);
            return;
        }
        if (!a->o.quiet) {
            fflush (stdout);
            fprintf (stderr, "%s\n", s);
        }
        free (s);
    }
}

/* stdin */

static void stdin_stop (struct attach *a)
{
    if (a->in_closed)
        return;
    a->in_closed = true;
    flux_future_destroy (a->in_f);
    a->in_f = NULL;
    if (a->in_poll) {
        uv_poll_stop (a->in_poll);
        flux_uv_close_free ((uv_handle_t *)a->in_poll);
        a->in_poll = NULL;
    }
    if (a->in_flags_saved)
        (void)fcntl (STDIN_FILENO, F_SETFL, a->in_flags);
}

static void stdin_cb (flux_future_t *f, void *arg)
{
    struct attach *a = arg;

    if (flux_future_get (f, NULL) < 0) {
        int e = errno;
        /* ENOSYS: no stdin service (input from a file, or the shell is
         * gone); EPIPE: every task's stdin is closed.  Neither is worth
         * a word unless data was refused. */
        if (e == ENOSYS) {
            if (a->in_data_sent && !a->o.quiet)
                cmd_warn ("%s: stdin not accepted by the job", a->jobid);
        }
        else if (e != EPIPE && !a->o.quiet)
            cmd_warn ("%s: stdin: %s", a->jobid, future_strerror (f, e));
        stdin_stop (a);
        return;
    }
    flux_future_destroy (f);
    a->in_f = NULL;
    if (a->in_eof_sent)
        stdin_stop (a);
    else
        stdin_pump (a);
}

static void stdin_send (struct attach *a, const char *ranks, const void *buf,
                        size_t len, bool eof)
{
    char topic[512];
    json_t *io;

    if (snprintf (topic, sizeof (topic), "%s.stdin", a->service)
            >= (int)sizeof (topic)
        || !(io = jobio_encode ("stdin", ranks, buf, len, eof)))
        cmd_die ("%s: cannot forward stdin: %s", a->jobid, strerror (errno));
    if (!(a->in_f
          = flux_rpc_pack (a->h, topic, (uint32_t)a->leader_rank, 0, "O", io))
        || flux_future_then (a->in_f, -1., stdin_cb, a) < 0)
        cmd_die ("%s: %s: %s", a->jobid, topic, strerror (errno));
    json_decref (io);
    if (len > 0)
        a->in_data_sent = true;
}

static void stdin_read (struct attach *a)
{
    char buf[STDIN_CHUNK];
    ssize_t n;

    if ((n = read (STDIN_FILENO, buf, sizeof (buf))) < 0) {
        if (errno == EAGAIN || errno == EINTR) {
            stdin_pump (a); /* not readable after all: wait again */
            return;
        }
        if (!a->o.quiet)
            cmd_warn ("stdin: %s", strerror (errno));
        n = 0;
    }
    if (n == 0)
        a->in_eof_sent = true;
    stdin_send (a, a->stdin_ranks, buf, (size_t)n, n == 0);
}

static void stdin_poll_cb (uv_poll_t *p, int status, int events)
{
    struct attach *a = p->data;

    (void)status;
    (void)events;
    uv_poll_stop (p);
    stdin_read (a); /* an error (status < 0) shows as a failed read */
}

/* Read the next chunk once nothing is in flight. */
static void stdin_pump (struct attach *a)
{
    if (a->in_closed || !a->in_ready || a->in_f)
        return;
    if (a->in_pollable) {
        if (uv_poll_start (a->in_poll, UV_READABLE | UV_DISCONNECT,
                           stdin_poll_cb)
            < 0)
            cmd_die ("stdin: cannot poll");
    }
    else
        stdin_read (a);
}

static void stdin_start (struct attach *a)
{
    struct stat st;
    int e;

    if (a->in_started || a->o.read_only || a->o.no_stdin || a->o.no_output)
        return;
    a->in_started = true;
    if (fstat (STDIN_FILENO, &st) < 0) { /* closed: the tasks get EOF */
        a->in_eof_sent = true;
        stdin_send (a, a->stdin_ranks, NULL, 0, true);
        return;
    }
    if ((a->in_flags = fcntl (STDIN_FILENO, F_GETFL)) >= 0)
        a->in_flags_saved = true;
    if (!(a->in_poll = calloc (1, sizeof (*a->in_poll))))
        cmd_die ("out of memory");
    /* uv_poll_init refuses what epoll cannot watch (regular files,
     * /dev/null): those are read without waiting. */
    if ((e = uv_poll_init (a->loop, a->in_poll, STDIN_FILENO)) == 0) {
        a->in_poll->data = a;
        a->in_pollable = true;
    }
    else {
        free (a->in_poll);
        a->in_poll = NULL;
    }
    a->in_ready = !strcmp (a->stdin_ranks, "all");
    stdin_pump (a);
}

/* shell.start with --stdin-ranks: the tasks outside the ranks get EOF
 * first, then stdin flows. */
static void stdin_ranks_start (struct attach *a, json_t *context)
{
    struct idset *all = NULL, *ranks = NULL;
    char *others = NULL;
    long ntasks;

    if (!a->in_started || a->in_ready || a->in_closed)
        return;
    a->in_ready = true;
    ntasks = jobio_taskmap_ntasks (json_object_get (context, "taskmap"));
    if (ntasks < 1 || !(ranks = idset_decode (a->stdin_ranks))
        || !(all = idset_create (0, IDSET_FLAG_AUTOGROW))
        || idset_range_set (all, 0, (unsigned)ntasks - 1) < 0) {
        cmd_warn ("%s: shell.start has no valid taskmap: stdin goes to %s",
                  a->jobid, a->stdin_ranks);
        goto out;
    }
    if (idset_last (ranks) != IDSET_INVALID_ID
        && idset_last (ranks) >= (unsigned)ntasks && !a->o.quiet)
        cmd_warn ("%s: --stdin-ranks=%s: the job has %ld tasks", a->jobid,
                  a->stdin_ranks, ntasks);
    if (idset_subtract (all, ranks) < 0)
        cmd_die ("out of memory");
    if (!idset_empty (all)) {
        if (!(others = idset_encode (all, IDSET_FLAG_RANGE)))
            cmd_die ("out of memory");
        stdin_send (a, others, NULL, 0, true);
        goto out; /* stdin_cb pumps once the shell has it */
    }
out:
    stdin_pump (a);
    free (others);
    idset_destroy (all);
    idset_destroy (ranks);
}

/* pty mode */

#define PTY_HELD_MAX 65536

static void pty_hold (struct attach *a, const char *data, size_t len)
{
    if (len == 0) /* data may be NULL then */
        return;
    if (len >= PTY_HELD_MAX) {
        data += len - PTY_HELD_MAX;
        len = PTY_HELD_MAX;
    }
    if (!a->pty_held && !(a->pty_held = malloc (PTY_HELD_MAX)))
        cmd_die ("out of memory");
    if (a->pty_hlen + len > PTY_HELD_MAX) {
        size_t drop = a->pty_hlen + len - PTY_HELD_MAX;
        memmove (a->pty_held, a->pty_held + drop, a->pty_hlen - drop);
        a->pty_hlen -= drop;
    }
    memcpy (a->pty_held + a->pty_hlen, data, len);
    a->pty_hlen += len;
}

/* Drop what pty_hold() kept, printing it first if SHOW. */
static void pty_release_held (struct attach *a, bool show)
{
    if (show && a->pty_hlen > 0) {
        fwrite (a->pty_held, 1, a->pty_hlen, stdout);
        fflush (stdout);
    }
    free (a->pty_held);
    a->pty_held = NULL;
    a->pty_hlen = 0;
}

/* The detach key: the job goes on; stop following it. */
static void pty_detached (struct attach *a)
{
    a->detached = true;
    fflush (stdout);
    fprintf (stderr, "\r\n[detached: flux job attach %s to reattach]\n",
             a->jobid);
    stdin_stop (a);
    flux_reactor_stop (flux_get_reactor (a->h));
}

static void pty_done_cb (struct attach_pty *p, int errnum, void *arg)
{
    struct attach *a = arg;

    a->pty_done = true;
    if (errnum == 0 && attach_pty_detached (p)) {
        pty_detached (a);
        return;
    }
    if (errnum != 0) { /* what the output eventlog has of task 0 from now */
        a->pty_mode = false;
        pty_release_held (a, !attach_pty_attached (p));
    }
    /* ENOSYS before the attach: the session ended first, and its output
     * is the output eventlog's (pty.capture) */
    if (errnum != 0 && !a->o.quiet
        && (errnum != ENOSYS || attach_pty_attached (p)))
        cmd_warn ("%s: pty: %s (task 0's output: flux job attach %s)", a->jobid,
                  strerror (errnum), a->jobid);
    pty_release_held (a, false);
    check_done (a);
}

/* shell.init named a pty session: attach the terminal to it if stdin is
 * one, else stdin goes to the session's task as usual (.stdin). */
static void pty_start (struct attach *a, const char *session)
{
    if (a->o.read_only || a->o.no_output || a->main_done
        || !attach_pty_usable ()) {
        if (!a->o.no_output && !a->main_done)
            stdin_start (a);
        return;
    }
    if (!(a->pty = attach_pty_create (a->h, (uint32_t)a->leader_rank,
                                      a->service, session, pty_done_cb, a)))
        cmd_die ("%s: pty: %s", a->jobid, strerror (errno));
    a->pty_mode = true;
}

/* guest.exec.eventlog */

static void exec_event (struct attach *a, double t, const char *name,
                        json_t *context)
{
    if (!strcmp (name, "shell.init")) {
        const char *service, *pty = NULL;
        int rank;
        if (!context
            || json_unpack (context, "{s:i s:s s?s}", "leader-rank", &rank,
                            "service", &service, "pty", &pty)
                   < 0
            || rank < 0) {
            cmd_warn ("%s: malformed shell.init event", a->jobid);
        }
        else if (!a->shell_init) {
            a->shell_init = true;
            a->leader_rank = rank;
            if (!(a->service = strdup (service)))
                cmd_die ("out of memory");
            if (pty)
                pty_start (a, pty);
            if (!a->o.no_output) {
                glog_start (&a->output);
                /* stdin is for a job still running, not a replay */
                if (!a->main_done && !pty)
                    stdin_start (a);
            }
        }
    }
    else if (!strcmp (name, "shell.start")) {
        if (strcmp (a->stdin_ranks, "all") != 0)
            stdin_ranks_start (a, context);
    }
    else if (!strcmp (name, "complete")) {
        if (!a->o.no_output)
            glog_start (&a->output);
    }
    else if (!strcmp (name, "log")) {
        const char *rank, *component, *stream, *data;
        size_t len;
        if (context
            && json_unpack (context, "{s:s s:s s:s s:s%}", "rank", &rank,
                            "component", &component, "stream", &stream, "data",
                            &data, &len)
                   == 0) {
            if (!a->o.quiet) {
                fprintf (stderr, "%.3fs: %s[%s]: %s: ", t - a->t0, component,
                         rank, stream);
                fwrite (data, 1, len, stderr);
            }
        }
        return;
    }
    if (a->o.show_exec)
        print_event (a, "exec", t, name, context);
}

/* Guest eventlogs */

static void glog_entry (struct glog *g, json_t *entry)
{
    const char *name;
    json_t *context;
    double t;

    if (eventlog_entry_parse (entry, &t, &name, &context) < 0)
        cmd_die ("%s: invalid %s entry", g->a->jobid, g->path);
    g->count++;
    g->handle (g->a, t, name, context);
}

static void glog_end (struct glog *g)
{
    flux_future_destroy (g->f);
    g->f = NULL;
    g->done = true;
    check_done (g->a);
}

/* Handle the entries of the whole log s that its watch did not deliver;
 * the log is done. */
static void glog_replay (struct glog *g, const char *s)
{
    json_t *log, *entry;
    size_t i;

    if (!(log = eventlog_decode (s)))
        cmd_die ("%s: %s is not a valid eventlog", g->a->jobid, g->path);
    json_array_foreach (log, i, entry)
    {
        if (i >= g->count)
            glog_entry (g, entry);
    }
    json_decref (log);
    flux_future_destroy (g->f);
    g->f = NULL;
    g->done = true;
}

static void glog_lookup_cb (flux_future_t *f, void *arg)
{
    struct glog *g = arg;
    const char *s;

    if (flux_rpc_get_unpack (f, "{s:s}", g->path, &s) < 0) {
        if (errno != ENOENT)
            cmd_warn ("%s: reading %s: %s", g->a->jobid, g->path,
                      future_strerror (f, errno));
        glog_end (g);
        return;
    }
    glog_replay (g, s);
    check_done (g->a);
}

/* The last read of a guest eventlog, from where its watch stopped. */
static void glog_finish (struct glog *g)
{
    flux_future_destroy (g->f);
    if (!(g->f = flux_rpc_pack (g->a->h, "job-info.lookup", FLUX_NODEID_ANY, 0,
                                "{s:I s:[s] s:i}", "id", (json_int_t)g->a->id,
                                "keys", g->path, "flags", 0))
        || flux_future_then (g->f, -1., glog_lookup_cb, g) < 0)
        cmd_die ("reading %s: %s", g->path, strerror (errno));
}

static void glog_watch_cb (flux_future_t *f, void *arg)
{
    struct glog *g = arg;
    const char *line;
    json_t *entry;

    if (flux_rpc_get_unpack (f, "{s:s}", "event", &line) < 0) {
        if (errno == ENODATA && !g->a->main_done)
            glog_end (g); /* job-info ended it: all was sent */
        else if (g->a->main_done)
            glog_finish (g); /* ENOENT there: never written */
        else {
            /* Not there (yet), or the watch broke before the job's end
             * (its guest namespace went away, say): read the log once
             * the job is over (final_read). */
            flux_future_destroy (g->f);
            g->f = NULL;
        }
        return;
    }
    if (!(entry = eventlog_entry_decode (line)))
        cmd_die ("%s: invalid %s entry", g->a->jobid, g->path);
    glog_entry (g, entry);
    json_decref (entry);
    flux_future_reset (f);
}

static void glog_start (struct glog *g)
{
    if (g->started)
        return;
    g->started = true;
    if (g->a->final_read) /* the read under way takes it in */
        return;
    if (g->a->main_done)
        glog_finish (g);
    else
        g->f = watch (g->a, g->path, glog_watch_cb, g);
}

/* Both guest logs, read at once (final_read) */
static void final_read_cb (flux_future_t *f, void *arg)
{
    struct attach *a = arg;
    const char *exec, *output;

    if (flux_rpc_get_unpack (f, "{s:s s:s}", a->exec.path, &exec,
                             a->output.path, &output)
        < 0) {
        /* one is not there (no shell wrote the output): each on its
         * own, the output once the exec log's events start it */
        flux_future_destroy (f);
        glog_finish (&a->exec);
        if (a->output.started)
            glog_finish (&a->output);
        return;
    }
    /* the exec log's shell.init or complete starts the output */
    a->final_read = true;
    glog_replay (&a->exec, exec);
    a->final_read = false;
    if (a->output.started)
        glog_replay (&a->output, output);
    flux_future_destroy (f);
    check_done (a);
}

/* The main eventlog ended: the job is over and its guest logs are final
 * in the primary namespace.  What their watches have not delivered is
 * read at once: one lookup of both logs when the exec log is read, not
 * a lookup of each after its watch's cancel is answered, the output's
 * only once the exec log's "complete" has started it (three round trips
 * in a row at the end of every job, two here fewer).  A watch is
 * canceled and let go: what it still sends goes nowhere. */
static void final_read (struct attach *a, struct glog *logs[2])
{
    bool read[2];
    flux_future_t *f;

    if (a->exec_due) { /* never watched: read here */
        a->exec_due = false;
        a->exec.started = true;
    }

    for (int i = 0; i < 2; i++) {
        struct glog *g = logs[i];
        /* main_end runs once: no final read was asked before */
        read[i] = g->started && !g->done;
        if (read[i] && g->f)
            watch_cancel (a, g->f);
    }
    /* the exec log may start the output: read it too (unless unwanted) */
    if (read[0] && !a->output.done && !a->o.no_output)
        read[1] = true;
    if (!read[0] || !read[1]) {
        for (int i = 0; i < 2; i++)
            if (read[i])
                glog_finish (logs[i]);
        return;
    }
    flux_future_destroy (a->exec.f);
    flux_future_destroy (a->output.f);
    a->exec.f = a->output.f = NULL;
    if (!(f = flux_rpc_pack (a->h, "job-info.lookup", FLUX_NODEID_ANY, 0,
                             "{s:I s:[s s] s:i}", "id", (json_int_t)a->id,
                             "keys", a->exec.path, a->output.path, "flags", 0))
        || flux_future_then (f, -1., final_read_cb, a) < 0)
        cmd_die ("reading %s and %s: %s", a->exec.path, a->output.path,
                 strerror (errno));
}

/* The main eventlog ended: the guest logs are read one last time. */
static void main_end (struct attach *a)
{
    struct glog *logs[] = {&a->exec, &a->output};

    flux_future_destroy (a->main_f);
    a->main_f = NULL;
    a->main_done = true;
    if (a->pty && !a->pty_done) {
        /* the job is over: a session that did not end (its shell died, or
         * the job ended before the attach was answered) ends here, and the
         * terminal is restored.  A session never attached showed nothing:
         * task 0's output is printed from the output eventlog, what was
         * held first. */
        bool attached = attach_pty_attached (a->pty);
        attach_pty_destroy (a->pty);
        a->pty = NULL;
        a->pty_done = true;
        a->pty_mode = attached;
        pty_release_held (a, !attached);
    }
    final_read (a, logs);
    check_done (a);
}

/* eventlog */

static void main_event (struct attach *a, double t, const char *name,
                        json_t *context)
{
    if (!strcmp (name, "exception")) {
        flux_error_t error;
        int severity;
        char *s;
        if (!(s = jobio_exception_line (context, t, a->t0, a->jobid, &severity,
                                        &error))) {
            cmd_warn ("%s: malformed exception event: %s", a->jobid,
                      error.text);
            return;
        }
        if (severity == 0)
            a->fatal_exception = true;
        /* flux submit --wait prints only a fatal one that no shell saw */
        if (!a->o.submit_rules || (severity == 0 && !a->shell_init)) {
            fflush (stdout);
            fprintf (stderr, "%s\n", s);
        }
        free (s);
    }
    else if (!strcmp (name, "start")) {
        a->job_started = true;
        if (!a->o.no_output || a->o.show_exec)
            a->exec_due = true; /* main_cb starts it */
    }
    else if (!strcmp (name, "finish")) {
        flux_error_t msg;
        if (!context || json_unpack (context, "{s:i}", "status", &a->status) < 0
            || a->status < 0)
            cmd_die ("%s: malformed finish event", a->jobid);
        (void)jobio_exit_code (a->status, false, &msg);
        /* said after the output, which a short job's may follow */
        if (msg.text[0] && !a->o.submit_rules && !a->finish_msg
            && !(a->finish_msg = strdup (msg.text)))
            cmd_die ("out of memory");
    }
    else if (!strcmp (name, "clean"))
        a->clean = true;
    if (a->o.show_events && strcmp (name, "exception") != 0)
        print_event (a, "job", t, name, context);
}

static void main_cb (flux_future_t *f, void *arg)
{
    struct attach *a = arg;
    const char *line, *name;
    json_t *entry, *context;
    double t;

    if (flux_rpc_get_unpack (f, "{s:s}", "event", &line) < 0) {
        if (errno == ENODATA) {
            main_end (a);
            return;
        }
        if (errno == ENOENT)
            cmd_die ("Failed to attach to %s: No such job", a->jobid);
        if (errno == EPERM)
            cmd_die ("Failed to attach to %s: that is not your job", a->jobid);
        cmd_die ("%s: %s", a->jobid, future_strerror (f, errno));
    }
    if (a->main_canceled) { /* what comes after the wait event */
        flux_future_reset (f);
        return;
    }
    if (!(entry = eventlog_entry_decode (line))
        || eventlog_entry_parse (entry, &t, &name, &context) < 0)
        cmd_die ("%s: invalid eventlog entry", a->jobid);
    if (!a->have_t0) {
        a->t0 = t;
        a->have_t0 = true;
    }
    main_event (a, t, name, context);
    if (!strcmp (name, a->wait_event) && strcmp (name, "clean") != 0) {
        a->main_canceled = true;
        watch_cancel (a, f);
    }
    json_decref (entry);
    flux_future_reset (f);
    /* The exec log is watched once the events that came with "start"
     * are handled: a short job's arrive in one burst with its end (the
     * job manager holds them), and then the log is only read, with the
     * output, by final_read (no watch set up and canceled at once). */
    if (a->exec_due && !flux_future_is_ready (f)) {
        a->exec_due = false;
        glog_start (&a->exec);
    }
}

int attach_exit_code (struct attach *a)
{
    finish_msg_print (a);
    if (a->o.submit_rules) {
        if (a->status >= 0)
            return jobio_exit_code (a->status, false, NULL);
        return a->fatal_exception ? 1 : 0;
    }
    /* stopped at an earlier --wait-event: no finish is expected */
    if (a->status < 0 && a->main_canceled)
        return a->fatal_exception ? 1 : 0;
    return jobio_exit_code (a->status, a->fatal_exception, NULL);
}

/* signals */

static void raise_cb (flux_future_t *f, void *arg)
{
    (void)arg;
    if (flux_future_get (f, NULL) < 0)
        cmd_warn ("cancel: %s", future_strerror (f, errno));
    flux_future_destroy (f);
}

static void send_cancel (struct attach *a, const char *note)
{
    flux_future_t *f;

    if (!(f = flux_rpc_pack (a->h, "job-manager.raise", FLUX_NODEID_ANY, 0,
                             "{s:I s:s s:i s:s}", "id", (json_int_t)a->id,
                             "type", "cancel", "severity", 0, "note", note))
        || flux_future_then (f, -1., raise_cb, NULL) < 0)
        cmd_die ("canceling %s: %s", a->jobid, strerror (errno));
    a->canceled = true;
}

/* A forwarded signal reaches the tasks of a running job (flux-core's
 * behaviour, the client goes on waiting for the job's end).  A job that
 * does not run yet has no task to take it: SIGTERM or SIGHUP, which ask
 * this client to end, then cancel the job, so that `timeout N flux run`
 * ends a job stuck waiting for resources instead of waiting with it.
 */
static void kill_cb (flux_future_t *f, void *arg)
{
    struct attach *a = arg;
    int signum = (int)(intptr_t)flux_future_aux_get (f, "signum");
    int errnum;

    if (flux_future_get (f, NULL) < 0) {
        errnum = errno;
        if ((signum == SIGTERM || signum == SIGHUP) && errnum == EINVAL
            && a->canceled)
            ; /* a second SIGTERM, SIGHUP: the job is being canceled */
        else if ((signum == SIGTERM || signum == SIGHUP) && errnum == EINVAL
                 && !a->job_started && !a->main_done) {
            char note[64];
            snprintf (note, sizeof (note), "interrupted by %s before it ran",
                      signum == SIGTERM ? "SIGTERM" : "SIGHUP");
            cmd_warn ("%s: not running yet: canceling it", a->jobid);
            send_cancel (a, note);
        }
        else
            cmd_warn ("kill: %s", future_strerror (f, errnum));
    }
    flux_future_destroy (f);
}

static void send_kill (struct attach *a, int signum)
{
    flux_future_t *f;

    if (!(f = flux_rpc_pack (a->h, "job-manager.kill", FLUX_NODEID_ANY, 0,
                             "{s:I s:i}", "id", (json_int_t)a->id, "signum",
                             signum))
        || flux_future_aux_set (f, "signum", (void *)(intptr_t)signum, NULL) < 0
        || flux_future_then (f, -1., kill_cb, a) < 0)
        cmd_die ("sending %s to %s: %s", strsignal (signum), a->jobid,
                 strerror (errno));
}

static void signal_cb (uv_signal_t *w, int signum)
{
    struct attach *a = w->data;
    uint64_t now;

    if (signum != SIGINT) {
        send_kill (a, signum);
        return;
    }
    now = uv_hrtime ();
    if (a->t_sigint != 0 && now - a->t_sigint <= SIGINT_WINDOW_NS) {
        a->t_sigint = 0;
        send_cancel (a, "interrupted by ctrl-C");
        return;
    }
    a->t_sigint = now;
    send_kill (a, SIGINT);
    cmd_warn ("interrupt sent to %s (one more ctrl-C within 1s cancels it)",
              a->jobid);
}

int attach_catch_signals (struct attach *a)
{
    static const int signals[]
        = {SIGINT, SIGTERM, SIGHUP, SIGALRM, SIGUSR1, SIGUSR2};

    for (size_t i = 0; i < sizeof (signals) / sizeof (signals[0]); i++) {
        uv_signal_t *w;
        if (!(w = calloc (1, sizeof (*w))))
            return -1;
        if (uv_signal_init (a->loop, w) < 0) {
            free (w);
            errno = EINVAL;
            return -1;
        }
        w->data = a;
        a->sig[a->nsig++] = w;
        if (uv_signal_start (w, signal_cb, signals[i]) < 0) {
            errno = EINVAL;
            return -1;
        }
        uv_unref ((uv_handle_t *)w); /* the watches keep the loop alive */
    }
    return 0;
}

struct attach *attach_create (flux_t *h, flux_jobid_t id,
                              const struct attach_opts *opts)
{
    struct attach *a;

    if (!(a = calloc (1, sizeof (*a))))
        return NULL;
    a->h = h;
    a->loop = flux_reactor_uv (flux_get_reactor (h));
    a->o = *opts;
    a->id = id;
    a->status = -1;
    if (!(a->wait_event
          = strdup (opts->wait_event ? opts->wait_event : "clean"))
        || !(a->stdin_ranks
             = strdup (opts->stdin_ranks ? opts->stdin_ranks : "all"))
        || flux_job_id_encode (id, "f58", a->jobid, sizeof (a->jobid)) < 0) {
        attach_destroy (a);
        return NULL;
    }
    a->o.wait_event = a->wait_event;
    a->o.stdin_ranks = a->stdin_ranks;
    a->exec = (struct glog){
        .a = a, .path = "guest.exec.eventlog", .handle = exec_event};
    a->output
        = (struct glog){.a = a, .path = "guest.output", .handle = output_event};
    a->main_f = watch (a, "eventlog", main_cb, a);
    return a;
}

void attach_destroy (struct attach *a)
{
    if (a) {
        int saved_errno = errno;
        flux_future_destroy (a->main_f);
        flux_future_destroy (a->exec.f);
        flux_future_destroy (a->output.f);
        stdin_stop (a);
        attach_pty_destroy (a->pty);
        for (int i = 0; i < a->nsig; i++)
            flux_uv_close_free ((uv_handle_t *)a->sig[i]);
        json_decref (a->encoding);
        free (a->open_line[0]);
        free (a->open_line[1]);
        free (a->pty_held);
        free (a->finish_msg);
        free (a->service);
        free (a->wait_event);
        free (a->stdin_ranks);
        free (a);
        errno = saved_errno;
    }
}

/* flux job attach */

static int cmd_attach (int argc, char **argv);

static const char attach_usage[]
    = "Usage: flux job attach [OPTIONS] JOBID\n"
      "Follow a job: print its output, forward stdin and signals to it,\n"
      "and exit with its exit code.\n"
      "  -l, --label-io           Prefix each output line with its task "
      "rank\n"
      "  -E, --show-events        Print the job's events on stderr\n"
      "  -X, --show-exec          Print the job's exec events on stderr\n"
      "  -w, --wait-event=NAME    Stop at event NAME (default clean)\n"
      "  -i, --stdin-ranks=IDSET  Send stdin only to these task ranks\n"
      "                           (default all)\n"
      "  -r, --read-only          Do not forward stdin or signals\n"
      "  -q, --quiet              No warnings, redirect or shell log lines\n"
      "  -v, --verbose            Shell log lines with file:line\n"
      "  -h, --help               Display this message\n";

const struct builtin builtin_job_attach = {
    .name = "attach",
    .summary = "Follow a job's output and forward stdin and signals",
    .usage = attach_usage,
    .main = cmd_attach,
};

/* Follow one job to its end: the attach engine for flux run and flux
 * job attach.  Returns the exit code. */
int attach_run (flux_t *h, flux_jobid_t id, const struct attach_opts *o)
{
    struct attach *a;
    int rc;

    if (!(a = attach_create (h, id, o)))
        cmd_die ("attach: %s", strerror (errno));
    if (!o->read_only && attach_catch_signals (a) < 0)
        cmd_die ("cannot catch signals: %s", strerror (errno));
    if (o->print_jobid) {
        fprintf (stderr, "jobid: %s\n", a->jobid);
        fflush (stderr);
    }
    if (flux_reactor_run (flux_get_reactor (h), 0) < 0)
        cmd_die ("reactor: %s", strerror (errno));
    if (a->detached) { /* the detach key: the job goes on */
        attach_destroy (a);
        return 0;
    }
    if (!attach_finished (a))
        cmd_die ("%s: the watches stopped before the job's end", a->jobid);
    rc = attach_exit_code (a);
    attach_destroy (a);
    fflush (stdout);
    return rc;
}

static int cmd_attach (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"label-io", no_argument, NULL, 'l'},
        {"show-events", no_argument, NULL, 'E'},
        {"show-exec", no_argument, NULL, 'X'},
        {"wait-event", required_argument, NULL, 'w'},
        {"stdin-ranks", required_argument, NULL, 'i'},
        {"read-only", no_argument, NULL, 'r'},
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    struct attach_opts o = {0};
    flux_jobid_t id;
    flux_t *h;
    int c, rc;

    while ((c = cmd_getopt_permute (argc, argv, "lEXw:i:rqv", longopts))
           != -1) {
        switch (c) {
            case 'l':
                o.label_io = true;
                break;
            case 'E':
                o.show_events = true;
                break;
            case 'X':
                o.show_exec = true;
                break;
            case 'w':
                o.wait_event = optarg;
                break;
            case 'i':
                if (attach_check_stdin_ranks (optarg) < 0)
                    cmd_usage_error ("--stdin-ranks=%s: expected all or an "
                                     "idset",
                                     optarg);
                o.stdin_ranks = optarg;
                break;
            case 'r':
                o.read_only = true;
                break;
            case 'q':
                o.quiet = true;
                break;
            case 'v':
                o.verbose = true;
                break;
        }
    }
    if (optind != argc - 1)
        cmd_usage_error ("expected one JOBID");
    if (o.read_only && o.stdin_ranks)
        cmd_usage_error ("--stdin-ranks cannot be used with --read-only");
    if (flux_job_id_parse (argv[optind], &id) < 0)
        cmd_usage_error ("invalid job id %s", argv[optind]);
    h = cmd_open ();
    rc = attach_run (h, id, &o);
    flux_close (h);
    return rc;
}
