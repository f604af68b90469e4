/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* output.c - task stdout/stderr into the guest `output` eventlog (RFC 24)
 * with a per-shell share of the job-wide limit, or into files.
 *
 * Only the leader shell writes `output`, as flux-core's does: the other
 * shells send their encoded events to it (`<service>.output`, one
 * request in flight per shell, what comes meanwhile goes in the next),
 * so a job commits output once per batch, not once per shell: every
 * commit to the guest namespace is a setroot event to every broker.
 * The leader appends its own and the received events to one KVS
 * transaction committed in batches (every 0.2 s, or at once past 1 MiB),
 * one commit in flight at a time.  What is pending on either side is
 * bounded by the share (limit / shells) plus the EOF and log events, so
 * memory stays bounded whatever the tasks write.
 *
 * The leader writes the EOFs of many tasks as one entry per stream: the
 * EOFs it holds go at the start of its next commit with an idset `rank`
 * (RFC 24), after every data entry of those tasks.  A 64-node job's
 * `output` then ends with 2 EOF entries, not 128, and each reader of it
 * (flux run, flux job attach) is sent 2 events, not 128.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "libeventlog/eventlog.h"
#include "libflux/flux.h"
#include "libflux/base64.h"
#include "libidset/idset.h"
#include "libkvs/kvs.h"
#include "libutil/strsubst.h"
#include "libutil/utf8.h"

#include "kvsretry.h"
#include "output.h"
#include "shell.h"

#define BATCH_SECONDS 0.2 /* default output.batch-timeout */
#define BATCH_BYTES (1024 * 1024)
/* A non-leader holds its tasks' events this long (at most the batch
 * timeout), or until this many bytes, before it sends them to the
 * leader: a short task's output then goes with its EOFs and exit in the
 * shell's last send, one request instead of two round trips, the last
 * of which the shell's end had to wait for.  The leader commits them
 * only every batch timeout anyway. */
#define SEND_HOLD_MS 20
#define SEND_BYTES (64 * 1024)
#define DEFAULT_LIMIT (10 * 1024 * 1024)
#define MAX_LIMIT (1024LL * 1024 * 1024)

static const char *stream_name[2] = {"stdout", "stderr"};

struct stream {
    int64_t written; /* bytes of data events put into the KVS */
    int64_t kept;    /* bytes of task data in them (bounded by the share) */
    int64_t dropped; /* bytes over the share */
    bool warned;
    int fd;     /* redirected to a file, else -1 */
    char *path; /* rendered file path */
    bool line;  /* output.<stream>.buffer.type line (stdout's default) */
};

struct output {
    struct shell *shell;
    int64_t limit;     /* job-wide, per stream */
    int64_t share;     /* this shell's part of it */
    bool append;       /* output.mode append */
    uint64_t batch_ms; /* output.batch-timeout */
    struct stream s[2];
    flux_kvs_txn_t *txn;
    size_t pending; /* bytes in txn */
    flux_future_t *commit;
    bool urgent_commit; /* commit what is pending once commit is answered */
    uv_timer_t *timer;  /* closed with flux_uv_close_free() */
    char topic[128];    /* <service>.output */
    /* non-leader: events not yet sent to the leader, the send in flight;
     * urgent: buf holds more than EOFs (which wait for the final send) */
    char *buf;
    size_t buflen, bufcap;
    bool urgent;
    flux_future_t *send;
    bool send_failed;
    /* leader: the handler, and what each other shell sent */
    flux_msg_handler_t *mh;
    eventlog_parser_t *parser;
    int64_t *received; /* bytes, by shell rank */
    bool *done;        /* the shell sent its last events, by shell rank */
    int ndone;
    struct idset *eof[2]; /* leader: task EOFs held for the next commit */
    bool waiting;         /* output_wait() runs the loop */
};

static void commit_start (struct output *out);

static void timer_cb (uv_timer_t *t)
{
    commit_start (t->data);
}

static void send_start (struct output *out, bool last);

static void send_timer_cb (uv_timer_t *t)
{
    send_start (t->data, false);
}

/* Append an encoded eventlog line: the leader to the output transaction,
 * the others to what goes to the leader next.  hold: a non-leader's EOF,
 * which goes with the next send that data or a log starts, else with the
 * final one (output_flush): a task that exits sends one request to the
 * leader, not one per stream plus the last (each a message up the tree
 * and back, 63 of them for a 64-node job).
 */
static void append_line_hold (struct output *out, const char *line, bool hold)
{
    size_t len = strlen (line);

    if (!out->shell->leader) {
        if (out->buflen + len + 1 > out->bufcap) {
            size_t cap = out->bufcap ? out->bufcap : 4096;
            char *p;
            while (cap < out->buflen + len + 1)
                cap *= 2;
            if (!(p = realloc (out->buf, cap))) {
                fprintf (stderr, "flux-shell: output: %s\n", strerror (errno));
                return;
            }
            out->buf = p;
            out->bufcap = cap;
        }
        memcpy (out->buf + out->buflen, line, len + 1);
        out->buflen += len;
        if (!hold) {
            out->urgent = true;
            if (out->buflen >= SEND_BYTES)
                send_start (out, false);
            else if (!out->send && !uv_is_active ((uv_handle_t *)out->timer))
                uv_timer_start (out->timer, send_timer_cb,
                                out->batch_ms < SEND_HOLD_MS ? out->batch_ms
                                                             : SEND_HOLD_MS,
                                0);
        }
        return;
    }
    if (flux_kvs_txn_put (out->txn, FLUX_KVS_APPEND, "output", line) < 0) {
        fprintf (stderr, "flux-shell: output: %s\n", strerror (errno));
        return;
    }
    out->pending += len;
    if (out->pending >= BATCH_BYTES)
        commit_start (out);
    else if (!uv_is_active ((uv_handle_t *)out->timer))
        uv_timer_start (out->timer, timer_cb, out->batch_ms, 0);
}

static void append_line (struct output *out, const char *line)
{
    append_line_hold (out, line, false);
}

/* Append an entry (reference stolen). */
static int append_entry_hold (struct output *out, json_t *entry, bool hold)
{
    char *line;

    if (!entry)
        return -1;
    line = eventlog_entry_encode (entry);
    json_decref (entry);
    if (!line)
        return -1;
    append_line_hold (out, line, hold);
    free (line);
    return 0;
}

static int append_entry (struct output *out, json_t *entry)
{
    return append_entry_hold (out, entry, false);
}

/* ranks into *set, made at the first: 0, or -1 with errno. */
static int ranks_add (struct idset **set, const struct idset *ranks)
{
    if (!*set && !(*set = idset_create (0, IDSET_FLAG_AUTOGROW)))
        return -1;
    return idset_add (*set, ranks);
}

/* Leader: hold the EOF of ranks on stream for the next commit (counted
 * as one pending byte, so that a commit is due for it). */
static void eof_hold (struct output *out, int stream, const struct idset *ranks)
{
    if (ranks_add (&out->eof[stream], ranks) < 0) {
        fprintf (stderr, "flux-shell: output: %s\n", strerror (errno));
        return;
    }
    out->pending++;
    if (!uv_is_active ((uv_handle_t *)out->timer))
        uv_timer_start (out->timer, timer_cb, out->batch_ms, 0);
}

/* Leader: the held EOFs into the transaction about to be committed, one
 * entry per stream. */
static void eof_flush (struct output *out)
{
    for (int i = 0; i < 2; i++) {
        char *ranks, *line = NULL;
        json_t *entry = NULL;

        if (!out->eof[i] || idset_count (out->eof[i]) == 0)
            continue;
        if (!(ranks = idset_encode (out->eof[i], IDSET_FLAG_RANGE))
            || !(entry = eventlog_entry_pack (0, "data", "{s:s s:s s:b}",
                                              "stream", stream_name[i], "rank",
                                              ranks, "eof", 1))
            || !(line = eventlog_entry_encode (entry))
            || flux_kvs_txn_put (out->txn, FLUX_KVS_APPEND, "output", line) < 0)
            fprintf (stderr, "flux-shell: output: EOF: %s\n", strerror (errno));
        else
            out->pending += strlen (line);
        free (line);
        json_decref (entry);
        free (ranks);
        idset_destroy (out->eof[i]);
        out->eof[i] = NULL;
    }
}

static void commit_cb (flux_future_t *f, void *arg)
{
    struct output *out = arg;

    if (flux_future_get (f, NULL) < 0)
        fprintf (stderr, "flux-shell: output commit: %s\n", strerror (errno));
    flux_future_destroy (f);
    out->commit = NULL;
    if (out->pending >= BATCH_BYTES || (out->urgent_commit && out->pending > 0))
        commit_start (out);
    else if (out->pending > 0 && !uv_is_active ((uv_handle_t *)out->timer))
        uv_timer_start (out->timer, timer_cb, out->batch_ms, 0);
}

/* The start-up commit is held (a job of one shell, shell.h): what is
 * pending goes in it, after the output header, and it is sent: one
 * commit.  False if it is not held (or could not be joined). */
static bool join_startup (struct output *out)
{
    if (!out->shell->gathering)
        return false;
    eof_flush (out);
    if (shell_commit_async (out->shell, out->txn, "committing output") < 0)
        return false;
    flux_kvs_txn_clear (out->txn);
    out->pending = 0;
    if (shell_commit_flush (out->shell) < 0)
        shell_fatal (out->shell, 1, "committing the start-up events: %s",
                     strerror (errno));
    return true;
}

/* Commit what is pending unless a commit is in flight (its completion
 * starts the next one).
 */
static void commit_start (struct output *out)
{
    flux_kvs_txn_t *txn;

    if (out->commit || out->pending == 0)
        return;
    out->urgent_commit = false;
    uv_timer_stop (out->timer);
    if (join_startup (out))
        return;
    (void)shell_commit_flush (out->shell); /* the header goes first */
    eof_flush (out);
    if (!(txn = flux_kvs_txn_create ()))
        return;
    if (!(out->commit
          = kvsretry_commit (out->shell->h, FLUX_KVS_TXN_COMPACT, out->txn))
        || flux_future_then (out->commit, -1., commit_cb, out) < 0) {
        fprintf (stderr, "flux-shell: output commit: %s\n", strerror (errno));
        flux_future_destroy (out->commit);
        out->commit = NULL;
    }
    flux_kvs_txn_destroy (out->txn);
    out->txn = txn;
    out->pending = 0;
}

/* Non-leader: the send to the leader is answered once the leader holds
 * the events; the next one carries what came meanwhile.
 */
static void send_cb (flux_future_t *f, void *arg)
{
    struct output *out = arg;

    if (flux_future_get (f, NULL) < 0 && !out->send_failed) {
        out->send_failed = true;
        fprintf (stderr, "flux-shell: output to the leader shell: %s\n",
                 future_strerror (f, errno));
    }
    flux_future_destroy (f);
    out->send = NULL;
    send_start (out, false);
}

/* Send what is pending unless a send is in flight (its answer sends the
 * rest).  last: the final send (output_flush), sent without a response.
 */
static void send_start (struct output *out, bool last)
{
    struct shell *shell = out->shell;
    int flags = last ? FLUX_RPC_NORESPONSE : 0;

    if (out->send || (!last && (out->buflen == 0 || !out->urgent)))
        return;
    uv_timer_stop (out->timer);
    if (last && shell->task_exit_ctx)
        out->send = flux_rpc_pack (
            shell->h, out->topic, shell->info->brokers[0], flags,
            "{s:i s:s% s:b s:O}", "shell_rank", shell->info->shell_rank,
            "events", out->buf ? out->buf : "", out->buflen, "last", last,
            "task-exit", shell->task_exit_ctx);
    else
        out->send = flux_rpc_pack (
            shell->h, out->topic, shell->info->brokers[0], flags,
            "{s:i s:s% s:b}", "shell_rank", shell->info->shell_rank, "events",
            out->buf ? out->buf : "", out->buflen, "last", last);
    if (!out->send
        || (!last && flux_future_then (out->send, -1., send_cb, out) < 0)) {
        fprintf (stderr, "flux-shell: output to the leader shell: %s\n",
                 strerror (errno));
        flux_future_destroy (out->send);
        out->send = NULL;
    }
    out->buflen = 0;
    out->urgent = false;
}

/* What one other shell may send in all: its two streams' bound (see
 * output_write) plus room for EOF and log events.
 */
static int64_t client_bound (struct output *out)
{
    return 2 * (2 * out->share + 65536) + 4 * 1024 * 1024;
}

/* A data entry that is the EOF of one stream and nothing else: its
 * stream index and ranks (a new idset); -1 if the entry is something
 * else; -2 if it is such an EOF but not of stdout or stderr, or its rank
 * is not an idset of task ranks below ntasks. */
static int eof_only (json_t *context, int ntasks, struct idset **ranks)
{
    const char *stream = NULL, *rank = NULL;
    json_t *eof = context ? json_object_get (context, "eof") : NULL;

    *ranks = NULL;
    if (!json_is_true (eof) || json_object_get (context, "data"))
        return -1;
    if (json_unpack (context, "{s:s s:s}", "stream", &stream, "rank", &rank) < 0
        || !(*ranks = idset_decode (rank)) || idset_count (*ranks) == 0
        || idset_last (*ranks) >= (unsigned)ntasks)
        goto bad;
    if (!strcmp (stream, "stdout"))
        return 0;
    if (!strcmp (stream, "stderr"))
        return 1;
bad:
    idset_destroy (*ranks);
    *ranks = NULL;
    return -2;
}

/* Another shell's events: each must be a `data` or `log` entry, whole
 * lines only (-1 otherwise).  Their EOFs go in eofs (new idsets, by
 * stream), the rest in *keep (malloc'd, the lines as they came). */
static int parse_events (const char *events, size_t len, int ntasks,
                         char **keep, struct idset *eofs[2])
{
    char *k = malloc (len + 1);
    size_t klen = 0, off = 0;

    eofs[0] = eofs[1] = NULL;
    if (!k)
        return -1;
    while (off < len) {
        const char *nl = memchr (events + off, '\n', len - off);
        size_t n = nl ? (size_t)(nl - (events + off)) + 1 : 0;
        const char *name = NULL;
        json_t *e = NULL, *context = NULL;
        struct idset *ranks = NULL;
        int stream;
        char *line;

        if (!nl || !(line = strndup (events + off, n)))
            goto error; /* not a whole line */
        off += n;
        e = eventlog_entry_decode (line);
        free (line);
        if (!e || eventlog_entry_parse (e, NULL, &name, &context) < 0
            || (strcmp (name, "data") && strcmp (name, "log"))) {
            json_decref (e);
            goto error;
        }
        stream
            = strcmp (name, "data") ? -1 : eof_only (context, ntasks, &ranks);
        if (stream == -2) {
            json_decref (e);
            goto error;
        }
        if (stream >= 0) {
            int rc = ranks_add (&eofs[stream], ranks);
            idset_destroy (ranks);
            if (rc < 0) {
                json_decref (e);
                goto error;
            }
        }
        else {
            memcpy (k + klen, events + off - n, n);
            klen += n;
        }
        json_decref (e);
    }
    k[klen] = '\0';
    *keep = k;
    return 0;
error:
    idset_destroy (eofs[0]);
    idset_destroy (eofs[1]);
    eofs[0] = eofs[1] = NULL;
    free (k);
    return -1;
}

/* Leader: <service>.output {shell_rank:i, events:s, last:b,
 * task-exit?:o} from another shell of the job, appended to `output` in
 * the order received.  task-exit: that shell's first task exit, sent
 * with its last output when that task was its last (shell.c).
 */
static void output_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    struct output *out = arg;
    const char *events;
    size_t len;
    json_t *task_exit = NULL;
    int rank, last, errnum = EPROTO;
    const char *errmsg = "malformed output request";
    char *keep = NULL;
    struct idset *eofs[2] = {NULL, NULL};

    (void)mh;
    if (flux_msg_authorize (msg, out->shell->info->userid) < 0) {
        errnum = EPERM;
        errmsg = "only the job's user may write its output";
        goto error;
    }
    if (flux_request_unpack (msg, NULL, "{s:i s:s% s:b s?o}", "shell_rank",
                             &rank, "events", &events, &len, "last", &last,
                             "task-exit", &task_exit)
            < 0
        || rank < 1 || rank >= out->shell->info->shell_size
        || strlen (events) != len
        || (len > 0
            && parse_events (events, len, out->shell->info->total_ntasks, &keep,
                             eofs)
                   < 0))
        goto error;
    if (out->done[rank]) {
        errmsg = "that shell's output has ended";
        goto error;
    }
    if (out->received[rank] + (int64_t)len > client_bound (out)) {
        errnum = ENOSPC;
        errmsg = "that shell sent more than its share of output";
        goto error;
    }
    if (task_exit
        && (!last || shell_task_exit_remote (out->shell, task_exit) < 0)) {
        errmsg = "malformed task-exit in output request";
        goto error;
    }
    out->received[rank] += len;
    if (keep && *keep)
        append_line (out, keep);
    for (int i = 0; i < 2; i++) {
        if (eofs[i])
            eof_hold (out, i, eofs[i]);
    }
    if (last) {
        out->done[rank] = true;
        out->ndone++;
    }
    if (flux_respond (h, msg, NULL) < 0)
        fprintf (stderr, "flux-shell: output: respond: %s\n", strerror (errno));
    goto done;
error:
    if (flux_msg_is_noresponse (msg)) /* a shell's last send: say it here */
        fprintf (stderr, "flux-shell: output from another shell: %s\n", errmsg);
    else if (flux_respond_error (h, msg, errnum, errmsg) < 0)
        fprintf (stderr, "flux-shell: output: respond: %s\n", strerror (errno));
done:
    free (keep);
    idset_destroy (eofs[0]);
    idset_destroy (eofs[1]);
}

void output_log_component (struct output *out, int level, const char *component,
                           const char *msg)
{
    if (out)
        (void)append_entry (
            out,
            eventlog_entry_pack (0, "log", "{s:i s:i s:s s:s}", "rank",
                                 out->shell->info->shell_rank, "level", level,
                                 "message", msg, "component", component));
}

static void write_file (struct output *out, int stream, const char *data,
                        size_t len)
{
    struct stream *s = &out->s[stream];

    while (len > 0) {
        ssize_t n = write (s->fd, data, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (!s->warned) {
                s->warned = true;
                shell_log (out->shell, LOG_ERR, "output", "%s: write %s: %s",
                           stream_name[stream], s->path, strerror (errno));
            }
            return;
        }
        data += n;
        len -= n;
    }
}

static void format_limit (int64_t v, char *buf, size_t size)
{
    if (v % (1024 * 1024 * 1024) == 0)
        snprintf (buf, size, "%lldG", (long long)(v >> 30));
    else if (v % (1024 * 1024) == 0)
        snprintf (buf, size, "%lldM", (long long)(v >> 20));
    else if (v % 1024 == 0)
        snprintf (buf, size, "%lldk", (long long)(v >> 10));
    else
        snprintf (buf, size, "%lld", (long long)v);
}

void output_write (struct output *out, int rank, int stream, const char *data,
                   size_t len)
{
    struct stream *s = &out->s[stream];
    char rankstr[16];
    json_t *entry;
    char *line;

    if (len == 0)
        return;
    if (s->fd >= 0) {
        write_file (out, stream, data, len);
        return;
    }
    if (s->warned && s->dropped > 0) {
        s->dropped += len;
        return;
    }
    snprintf (rankstr, sizeof (rankstr), "%d", rank);
    if (!memchr (data, '\0', len) && utf8_valid (data, len))
        entry = eventlog_entry_pack (0, "data", "{s:s s:s s:s%}", "stream",
                                     stream_name[stream], "rank", rankstr,
                                     "data", data, len);
    else {
        size_t size = base64_encoded_size (len);
        char *b = malloc (size);
        if (!b || base64_encode (b, size, data, len) < 0) {
            free (b);
            return;
        }
        entry = eventlog_entry_pack (0, "data", "{s:s s:s s:s s:s}", "stream",
                                     stream_name[stream], "rank", rankstr,
                                     "data", b, "encoding", "base64");
        free (b);
    }
    if (!entry || !(line = eventlog_entry_encode (entry))) {
        json_decref (entry);
        fprintf (stderr, "flux-shell: output: %s\n", strerror (errno));
        return;
    }
    json_decref (entry);
    /* the share counts task data, as flux-core's output.limit does; the
     * encoded events (base64, one per read) are bounded as well, at twice
     * the share, so tiny writes cannot fill the KVS with event overhead */
    if (s->kept + (int64_t)len > out->share
        || s->written + (int64_t)strlen (line) > 2 * out->share + 65536) {
        s->dropped += len;
        free (line);
        if (!s->warned) {
            char lim[32], msg[160];
            int n;
            s->warned = true;
            format_limit (out->limit, lim, sizeof (lim));
            n = snprintf (msg, sizeof (msg),
                          "%s will be truncated, %s limit "
                          "exceeded",
                          stream_name[stream], lim);
            if (out->shell->info->shell_size > 1 && n > 0
                && (size_t)n < sizeof (msg))
                snprintf (msg + n, sizeof (msg) - n,
                          " (%lld bytes for each of %d shells)",
                          (long long)out->share, out->shell->info->shell_size);
            shell_log (out->shell, LOG_WARNING, "output", "%s", msg);
        }
        return;
    }
    s->written += strlen (line);
    s->kept += len;
    append_line (out, line);
    free (line);
}

void output_eof (struct output *out, int rank, int stream)
{
    char rankstr[16];

    if (out->s[stream].fd >= 0)
        return;
    if (out->shell->leader) {
        struct idset *ids = idset_create (0, IDSET_FLAG_AUTOGROW);
        if (ids && idset_set (ids, rank) == 0)
            eof_hold (out, stream, ids);
        idset_destroy (ids);
        return;
    }
    snprintf (rankstr, sizeof (rankstr), "%d", rank);
    (void)append_entry_hold (out,
                             eventlog_entry_pack (0, "data", "{s:s s:s s:b}",
                                                  "stream", stream_name[stream],
                                                  "rank", rankstr, "eof", 1),
                             true);
}

static char *render (struct shell *shell, const char *tmpl)
{
    char *a = strsubst (tmpl, "{{id}}", shell->jobid_f58);
    char *b = a ? strsubst (a, "{{jobid}}", shell->jobid_f58) : NULL;
    char *c = b ? strsubst (b, "{{name}}", shell->info->name) : NULL;

    free (a);
    free (b);
    return c;
}

static int open_file (struct output *out, int stream, bool create,
                      flux_error_t *error)
{
    struct stream *s = &out->s[stream];
    int flags = O_WRONLY | O_APPEND | O_CLOEXEC;

    if (!s->path)
        return 0;
    if (stream == OUTPUT_STDERR && out->s[0].path
        && !strcmp (s->path, out->s[0].path)) {
        if ((s->fd = dup (out->s[0].fd)) < 0)
            return errprintf (error, "dup: %s", strerror (errno));
        return 0;
    }
    if (create)
        flags |= O_CREAT | (out->append ? 0 : O_TRUNC);
    if ((s->fd = open (s->path, flags, 0666)) < 0)
        return errprintf (error, "%s: %s", s->path, strerror (errno));
    return 0;
}

static int parse_options (struct output *out, flux_error_t *error)
{
    struct shell *shell = out->shell;
    json_t *o = json_object_get (shell->info->options, "output");
    json_t *lim = NULL, *bt = NULL;
    const char *mode = NULL;

    out->limit = DEFAULT_LIMIT;
    out->batch_ms = (uint64_t)(BATCH_SECONDS * 1000);
    out->s[0].line = true;
    if (!o)
        return 0;
    for (int i = 0; i < 2; i++) {
        const char *path = NULL, *type = NULL, *buffer = NULL;
        json_t *so = json_object_get (o, stream_name[i]);
        if (so
            && json_unpack (so, "{s?s s?s s?{s?s}}", "type", &type, "path",
                            &path, "buffer", "type", &buffer)
                   < 0) {
            errprintf (error,
                       "output.%s: type, path and buffer.type must be "
                       "strings",
                       stream_name[i]);
            goto inval;
        }
        if (buffer && strcmp (buffer, "none")
            && (i == OUTPUT_STDERR || strcmp (buffer, "line"))) {
            errprintf (error, "output.%s.buffer.type must be %s",
                       stream_name[i],
                       i == OUTPUT_STDERR ? "none (stderr is not buffered)"
                                          : "line or none");
            goto inval;
        }
        if (buffer)
            out->s[i].line = !strcmp (buffer, "line");
        if (type && strcmp (type, "file") && strcmp (type, "kvs")) {
            errprintf (error, "output.%s.type must be file or kvs",
                       stream_name[i]);
            goto inval;
        }
        if (path && (!type || !strcmp (type, "file"))
            && !(out->s[i].path = render (shell, path)))
            return -1;
    }
    /* stderr follows a redirected stdout unless given its own place */
    if (out->s[0].path && !out->s[1].path
        && !json_object_get (o, stream_name[1])
        && !(out->s[1].path = strdup (out->s[0].path)))
        return -1;
    if (json_unpack (o, "{s?o s?s s?o}", "limit", &lim, "mode", &mode,
                     "batch-timeout", &bt)
        < 0)
        goto bad;
    if (bt) {
        double sec = shell_parse_duration (bt);
        if (sec < 0. || sec > 60.) {
            errprintf (error, "output.batch-timeout must be a duration of at "
                              "most 60s");
            goto inval;
        }
        out->batch_ms = (uint64_t)(sec * 1000.);
    }
    if (mode && strcmp (mode, "truncate") && strcmp (mode, "append")) {
        errprintf (error, "output.mode must be truncate or append");
        goto inval;
    }
    out->append = mode && !strcmp (mode, "append");
    if (lim) {
        if (json_is_integer (lim))
            out->limit = json_integer_value (lim);
        else if (json_is_string (lim))
            out->limit = shell_parse_size (json_string_value (lim));
        else
            out->limit = -1;
        if (out->limit < 0 || out->limit > MAX_LIMIT) {
            errprintf (error, "output.limit must be a size up to 1G");
            goto inval;
        }
    }
    return 0;
bad:
    errprintf (error, "malformed output options");
inval:
    errno = EINVAL;
    return -1;
}

static int write_header (struct output *out, flux_error_t *error)
{
    struct shell *shell = out->shell;
    int n = shell->info->total_ntasks;
    flux_kvs_txn_t *txn = flux_kvs_txn_create ();
    char *ranks = NULL;
    int rc = -1;
    json_t *e;
    char *line = NULL;

    e = eventlog_entry_pack (0, "header", "{s:i s:{s:s s:s} s:{s:i s:i} s:{}}",
                             "version", 1, "encoding", "stdout", "UTF-8",
                             "stderr", "UTF-8", "count", "stdout", n, "stderr",
                             n, "options");
    if (!txn || !e || !(line = eventlog_entry_encode (e))
        || flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "output", line) < 0)
        goto out;
    json_decref (e);
    e = NULL;
    for (int i = 0; i < 2; i++) {
        if (!out->s[i].path)
            continue;
        if (!ranks) {
            struct idset *all = idset_create (0, IDSET_FLAG_AUTOGROW);
            if (!all || idset_range_set (all, 0, n - 1) < 0
                || !(ranks = idset_encode (all, IDSET_FLAG_RANGE
                                                    | IDSET_FLAG_BRACKETS))) {
                idset_destroy (all);
                goto out;
            }
            idset_destroy (all);
        }
        free (line);
        line = NULL;
        if (!(e = eventlog_entry_pack (0, "redirect", "{s:s s:s s:s}", "stream",
                                       stream_name[i], "rank", ranks, "path",
                                       out->s[i].path))
            || !(line = eventlog_entry_encode (e))
            || flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "output", line) < 0)
            goto out;
        json_decref (e);
        e = NULL;
    }
    if (shell_commit_async (shell, txn, "writing the output header") < 0)
        goto out;
    rc = 0;
out:
    if (rc < 0)
        errprintf (error, "writing the output header: %s", strerror (errno));
    json_decref (e);
    free (line);
    free (ranks);
    flux_kvs_txn_destroy (txn);
    return rc;
}

struct output *output_create (struct shell *shell, flux_error_t *error)
{
    struct output *out = calloc (1, sizeof (*out));

    if (!out)
        return NULL;
    out->shell = shell;
    out->s[0].fd = out->s[1].fd = -1;
    if (!(out->timer = calloc (1, sizeof (*out->timer)))) {
        free (out);
        return NULL;
    }
    uv_timer_init (shell->loop, out->timer);
    out->timer->data = out;
    if (!(out->txn = flux_kvs_txn_create ()))
        goto error;
    if (parse_options (out, error) < 0)
        goto error;
    out->share = out->limit / shell->info->shell_size;
    snprintf (out->topic, sizeof (out->topic), "%s.output", shell->service);
    if (shell->leader && shell->info->shell_size > 1) {
        int n = shell->info->shell_size;
        if (!(out->received = calloc (n, sizeof (out->received[0])))
            || !(out->done = calloc (n, sizeof (out->done[0]))))
            goto error;
        if (!(out->mh = flux_msg_handler_create (
                  shell->h,
                  (struct flux_match){FLUX_MSGTYPE_REQUEST, FLUX_MATCHTAG_NONE,
                                      out->topic},
                  output_cb, out))) {
            errprintf (error, "%s: %s", out->topic, strerror (errno));
            goto error;
        }
        flux_msg_handler_allow_rolemask (out->mh, FLUX_ROLE_USER);
        flux_msg_handler_start (out->mh);
    }
    if (shell->leader) {
        for (int i = 0; i < 2; i++) {
            if (open_file (out, i, true, error) < 0)
                goto error;
        }
        if (write_header (out, error) < 0)
            goto error;
    }
    return out;
error:
    output_destroy (out);
    return NULL;
}

bool output_line_buffered (struct output *out, int stream)
{
    return out->s[stream].line;
}

int output_start (struct output *out, flux_error_t *error)
{
    if (out->shell->leader)
        return 0;
    for (int i = 0; i < 2; i++) {
        if (open_file (out, i, false, error) < 0)
            return -1;
    }
    return 0;
}

int output_flush (struct output *out)
{
    int rc = 0;

    if (!out)
        return 0;
    for (int i = 0; i < 2; i++) {
        struct stream *s = &out->s[i];
        if (s->dropped > 0) {
            char msg[160];
            snprintf (msg, sizeof (msg), "%s: %lld of %lld bytes truncated",
                      stream_name[i], (long long)s->dropped,
                      (long long)(s->dropped + s->kept));
            shell_log (out->shell, LOG_WARNING, "output", "%s", msg);
            s->dropped = 0;
        }
    }
    if (!out->shell->leader) {
        /* the send in flight first (one at a time: the leader's bound);
         * the last one is not waited for: the connector has written it
         * when send_start returns, the broker forwards what it read
         * even once the shell is gone, and the leader waits for it
         * before it ends the job (and logs what it refuses).  So this
         * shell ends a round trip to the leader sooner, and with it its
         * exit report up the tree. */
        if (out->send) {
            (void)flux_future_get (out->send, NULL);
            flux_future_destroy (out->send);
            out->send = NULL;
        }
        send_start (out, true);
        if (!out->send) {
            fprintf (stderr, "flux-shell: output to the leader shell: %s\n",
                     strerror (errno));
            rc = -1;
        }
        flux_future_destroy (out->send);
        out->send = NULL;
        return rc;
    }
    uv_timer_stop (out->timer);
    if (!out->commit && out->pending > 0 && join_startup (out))
        return rc;
    if (out->commit) {
        if (kvsretry_wait (out->commit) < 0
            || flux_future_get (out->commit, NULL) < 0)
            rc = -1;
        flux_future_destroy (out->commit);
        out->commit = NULL;
    }
    eof_flush (out);
    if (out->pending > 0) {
        flux_future_t *f
            = kvsretry_commit (out->shell->h, FLUX_KVS_TXN_COMPACT, out->txn);
        if (!f || kvsretry_wait (f) < 0 || flux_future_get (f, NULL) < 0)
            rc = -1;
        flux_future_destroy (f);
        flux_kvs_txn_clear (out->txn);
        out->pending = 0;
    }
    return rc;
}

int output_commit_now (struct output *out, const char *key, const char *line)
{
    if (!out || !out->shell->leader || !key || !line) {
        errno = EINVAL;
        return -1;
    }
    if (flux_kvs_txn_put (out->txn, FLUX_KVS_APPEND, key, line) < 0)
        return -1;
    out->pending += strlen (line);
    out->urgent_commit = true;
    /* after the I/O callbacks of this loop turn (a task's EOFs are often
     * read in the turn that reads its SIGCHLD), or once the commit in
     * flight is answered; if the loop stops first, output_flush()
     * commits it */
    if (!out->commit)
        uv_timer_start (out->timer, timer_cb, 0, 0);
    return 0;
}

int output_wait (struct output *out)
{
    if (!out || !out->mh)
        return 0;
    while (out->ndone < out->shell->info->shell_size - 1 && !out->shell->failed
           && uv_loop_alive (out->shell->loop)) {
        if (flux_reactor_run (out->shell->r, FLUX_REACTOR_ONCE) < 0)
            return -1;
    }
    return 0;
}

void output_lost_shell (struct output *out, int rank)
{
    if (!out || !out->mh || rank < 1 || rank >= out->shell->info->shell_size
        || out->done[rank])
        return;
    out->done[rank] = true;
    out->ndone++;
}

void output_destroy (struct output *out)
{
    if (out) {
        int saved_errno = errno;
        uv_timer_stop (out->timer);
        flux_uv_close_free ((uv_handle_t *)out->timer);
        flux_future_destroy (out->commit);
        flux_future_destroy (out->send);
        flux_msg_handler_destroy (out->mh);
        flux_kvs_txn_destroy (out->txn);
        free (out->buf);
        free (out->received);
        free (out->done);
        idset_destroy (out->eof[0]);
        idset_destroy (out->eof[1]);
        for (int i = 0; i < 2; i++) {
            if (out->s[i].fd >= 0)
                close (out->s[i].fd);
            free (out->s[i].path);
        }
        free (out);
        errno = saved_errno;
    }
}
