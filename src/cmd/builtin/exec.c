/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* exec.c - `flux exec`: run a command on broker ranks through their
 * rexec services (RFC 42, PROTOCOLS-exec.md 1.7), with libsubprocess's
 * remote client.
 *
 * One exec per target rank (nodeid = rank).  Output is written as it
 * arrives, optionally prefixed "<rank>: " per line.  Standard input is
 * read once and copied to every rank, no faster than the smallest write
 * credit of the ranks still reading it.  SIGINT and SIGTERM are
 * forwarded.  At the end, unless --quiet, one line per distinct failure
 * goes to stderr ("<idset>: Exit N" or "<idset>: <signal name>"), and the
 * exit code is the largest over the ranks: the exit code, 128+signal, or
 * for a start failure 126 (EPERM, EACCES), 127 (ENOENT), 68
 * (EHOSTUNREACH), else 1.
 *
 * --attach PID|LABEL (flux-core's, PROTOCOLS-exec.md 1.7): instead of
 * starting a command, attach to a background process of one rank's
 * server (rexec "attach"): its output from then on, and its exit code as
 * for a command run here.  Ctrl-C detaches (exit 0): closing the handle
 * makes the server put the process back, unattached.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libidset/idset.h"
#include "libjob/job.h"
#include "libsubprocess/subprocess.h"

#include "cmdutil.h"
#include "sproc.h"

extern char **environ;

static const char usage[]
    = "Usage: flux exec [OPTIONS] COMMAND [ARGS...]\n"
      "Run a command on the broker ranks of this instance.\n"
      "  -r, --rank=IDSET     Ranks to run on (default: all)\n"
      "  -x, --exclude=IDSET  Ranks to leave out\n"
      "  -j, --jobid=ID       Run inside a running job, through its job\n"
      "                       shells, as its user: -r and -x then index\n"
      "                       the job's ranks (0 is its first node)\n"
      "  -d, --dir=PATH       Working directory (default: the current one;\n"
      "                       'none': the broker's)\n"
      "  -l, --label-io       Prefix each output line with '<rank>: '\n"
      "      --bg             Start in the background: print '<rank>: <pid>'\n"
      "                       per rank once started, and exit\n"
      "      --waitable       (with --bg) Keep the exit status until\n"
      "                       'flux sproc wait' collects it\n"
      "      --label=LABEL    Name the process (flux sproc kill|wait LABEL)\n"
      "      --attach=PID|LABEL  Attach to a background process of one\n"
      "                       rank (-r, default: this broker's) instead:\n"
      "                       relay its output, exit with its exit code;\n"
      "                       Ctrl-C detaches\n"
      "  -n, --noinput        Send end-of-file to standard input at once\n"
      "  -q, --quiet          No summary of failures on stderr\n"
      "  -v, --verbose        Say what is started and how it ended\n"
      "      --setopt=NAME=VALUE  Set a subprocess option (repeatable)\n"
      "  -h, --help           Display this message\n";

const struct builtin builtin_exec = {
    .name = "exec",
    .summary = "Run a command on the broker ranks",
    .usage = usage,
    .main = cmd_exec,
};

#define STDIN_CHUNK 65536

struct target {
    struct exec *x;
    uint32_t rank;
    flux_subprocess_t *p;
    long credit;    /* stdin bytes we may send */
    bool stdin_eof; /* EOF sent (or the rank is done) */
    bool bol[2];    /* at the start of a line: stdout, stderr */
    bool settled;   /* started, or done without starting */
    bool done;
    int errnum; /* start failure or lost stream */
    int status; /* bulk: the wait status reported */
};

struct exec {
    flux_t *h;
    flux_reactor_t *r;
    flux_cmd_t *cmd;
    struct target *t;
    int n;
    int running;
    bool label_io, noinput, quiet, verbose;
    /* stdin is /dev/null: EOF goes, without credits, to the ranks still
     * running once every rank has started or ended (most short commands
     * need none then) */
    bool eof_later;
    int settled;
    uv_timer_t eof_timer; /* eof_later: the EOFs wait one loop turn */
    bool eof_timer_init;
    bool attach, detached; /* --attach; Ctrl-C came */
    const char *attach_to; /* its PID|LABEL */
    /* stdin */
    bool stdin_open;
    int stdin_flags; /* fcntl flags of fd 0 before, restored at the end */
    uv_poll_t stdin_poll;
    uv_idle_t stdin_idle;
    bool use_poll, watching;
    /* bulk: one rexec.bulk-exec for every rank (no stdin to forward) */
    flux_future_t *bulk_f;
    size_t bulk_owed; /* output printed, not yet credited to rank 0 */
    bool bulk_answered;
    bool bulk_unsupported; /* ENOSYS or EPERM before any answer: one exec
                              per rank */
    /* signals */
    uv_signal_t sig[2];
    int interrupts;
    double last_interrupt;
};

static void write_all (int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write (fd, data, len);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            return;
        }
        data += n;
        len -= n;
    }
}

static void print_output (struct target *t, const char *stream,
                          const char *data, size_t len, bool eof)
{
    int i = strcmp (stream, "stderr") == 0 ? 1 : 0;
    int fd = i ? STDERR_FILENO : STDOUT_FILENO;
    char prefix[32];
    int plen;

    if (eof || len == 0)
        return;
    if (!t->x->label_io) {
        write_all (fd, data, len);
        return;
    }
    plen = snprintf (prefix, sizeof (prefix), "%u: ", t->rank);
    while (len > 0) {
        const char *nl = memchr (data, '\n', len);
        size_t n = nl ? (size_t)(nl - data) + 1 : len;
        if (t->bol[i])
            write_all (fd, prefix, plen);
        write_all (fd, data, n);
        t->bol[i] = nl != NULL;
        data += n;
        len -= n;
    }
}

static void on_output (flux_subprocess_t *p, const char *stream,
                       const char *data, size_t len, bool eof, void *arg)
{
    (void)p;
    print_output (arg, stream, data, len, eof);
}

/* ---- stdin ---- */

static void stdin_poll_cb (uv_poll_t *w, int status, int events);
static void stdin_idle_cb (uv_idle_t *w);

static void stdin_watch (struct exec *x, bool on)
{
    if (on == x->watching || !x->stdin_open)
        return;
    x->watching = on;
    if (x->use_poll) {
        if (on)
            uv_poll_start (&x->stdin_poll, UV_READABLE, stdin_poll_cb);
        else
            uv_poll_stop (&x->stdin_poll);
    }
    else {
        if (on)
            uv_idle_start (&x->stdin_idle, stdin_idle_cb);
        else
            uv_idle_stop (&x->stdin_idle);
    }
}

static void stdin_close (struct exec *x)
{
    if (!x->stdin_open)
        return;
    stdin_watch (x, false);
    x->stdin_open = false;
    uv_close (x->use_poll ? (uv_handle_t *)&x->stdin_poll
                          : (uv_handle_t *)&x->stdin_idle,
              NULL);
}

/* The smallest credit of the ranks still reading stdin; -1 if none. */
static long min_credit (struct exec *x)
{
    long min = -1;

    for (int i = 0; i < x->n; i++) {
        struct target *t = &x->t[i];
        if (!t->stdin_eof && (min < 0 || t->credit < min))
            min = t->credit;
    }
    return min;
}

static void stdin_send (struct exec *x, const char *data, size_t len, bool eof)
{
    for (int i = 0; i < x->n; i++) {
        struct target *t = &x->t[i];
        if (t->stdin_eof)
            continue;
        if (flux_subprocess_write (t->p, "stdin", data, len, eof) == 0)
            t->credit -= len;
        if (eof)
            t->stdin_eof = true;
    }
}

static void stdin_update (struct exec *x)
{
    long min = min_credit (x);

    if (min < 0)
        stdin_close (x); /* nobody reads it any more */
    else
        stdin_watch (x, min > 0);
}

static void stdin_read (struct exec *x)
{
    char buf[STDIN_CHUNK];
    long min = min_credit (x);
    size_t want = min > STDIN_CHUNK ? STDIN_CHUNK : (size_t)(min > 0 ? min : 0);
    ssize_t n;

    if (want == 0) {
        stdin_update (x);
        return;
    }
    n = read (STDIN_FILENO, buf, want);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        if (n < 0)
            cmd_warn ("reading stdin: %s", strerror (errno));
        stdin_send (x, NULL, 0, true);
        stdin_close (x);
        return;
    }
    stdin_send (x, buf, n, false);
    stdin_update (x);
}

static void stdin_poll_cb (uv_poll_t *w, int status, int events)
{
    stdin_read (w->data);
}

static void stdin_idle_cb (uv_idle_t *w)
{
    stdin_read (w->data);
}

static void stdin_setup (struct exec *x)
{
    uv_loop_t *loop = flux_reactor_uv (x->r);

    x->stdin_flags = fcntl (STDIN_FILENO, F_GETFL);
    if (x->stdin_flags < 0) { /* stdin closed: nothing to send */
        x->noinput = true;
        return;
    }
    if (cmd_stdin_is_null ()) { /* end-of-file at once, as -n */
        x->noinput = true;
        x->eof_later = true;
        return;
    }
    if (uv_poll_init (loop, &x->stdin_poll, STDIN_FILENO) == 0) {
        x->use_poll = true;
        x->stdin_poll.data = x;
    }
    else { /* a regular file or /dev/null: reads never block */
        uv_idle_init (loop, &x->stdin_idle);
        x->stdin_idle.data = x;
    }
    x->stdin_open = true;
}

static void stdin_restore (struct exec *x)
{
    if (x->stdin_flags >= 0)
        (void)fcntl (STDIN_FILENO, F_SETFL, x->stdin_flags);
}

static void on_credit (flux_subprocess_t *p, const char *stream, int bytes,
                       void *arg)
{
    struct target *t = arg;

    if (strcmp (stream, "stdin") != 0)
        return;
    t->credit += bytes;
    stdin_update (t->x);
}

/* ---- the end of each rank ---- */

static void send_eofs (struct exec *x);
static void eof_timer_cb (uv_timer_t *timer)
{
    send_eofs (timer->data);
}

/* t started or ended: once all have, the deferred EOF goes to the ranks
 * still running, in the next loop turn: the answers already read in this
 * one end many ranks first (flux exec -r all true on 64 brokers: 2.6
 * writes instead of 14, each 1-2 hops down the tree). */
static void settle (struct target *t)
{
    struct exec *x = t->x;

    if (t->settled)
        return;
    t->settled = true;
    if (++x->settled < x->n || !x->eof_later)
        return;
    if (uv_timer_init (flux_reactor_uv (x->r), &x->eof_timer) == 0) {
        x->eof_timer_init = true;
        x->eof_timer.data = x;
        if (uv_timer_start (&x->eof_timer, eof_timer_cb, 0, 0) == 0)
            return;
    }
    send_eofs (x);
}

static void send_eofs (struct exec *x)
{
    for (int i = 0; i < x->n; i++) {
        struct target *u = &x->t[i];
        if (!u->done && !u->stdin_eof) {
            (void)flux_subprocess_write (u->p, "stdin", NULL, 0, true);
            u->stdin_eof = true;
        }
    }
}

static void target_done (struct target *t)
{
    struct exec *x = t->x;

    t->done = true;
    t->stdin_eof = true;
    settle (t);
    if (--x->running == 0)
        flux_reactor_stop (x->r);
    else
        stdin_update (x);
}

static void on_started (flux_subprocess_t *p, void *arg)
{
    struct target *t = arg;

    if (t->x->verbose)
        fprintf (stderr, "%s: rank %u: started pid %d\n", cmd_prog (), t->rank,
                 (int)flux_subprocess_pid (p));
    settle (t);
}

static void on_complete (flux_subprocess_t *p, void *arg)
{
    struct target *t = arg;

    if (t->x->verbose)
        fprintf (stderr, "%s: rank %u: completed, status %d\n", cmd_prog (),
                 t->rank, flux_subprocess_status (p));
    target_done (t);
}

static void on_error (flux_subprocess_t *p, int errnum, const char *text,
                      void *arg)
{
    struct target *t = arg;

    t->errnum = errnum;
    if (t->x->attach && !flux_subprocess_started (p))
        fprintf (stderr, "%s: Error: rank %u: attach %s: %s\n", cmd_prog (),
                 t->rank, t->x->attach_to, text ? text : strerror (errnum));
    else if (!flux_subprocess_started (p)) {
        /* the server's text when it names the command (ours: it also
         * says when the working directory is what failed) */
        const char *arg0 = flux_cmd_arg (t->x->cmd, 0);
        size_t n = strlen (arg0);
        if (text && !strncmp (text, arg0, n) && !strncmp (text + n, ": ", 2))
            fprintf (stderr, "%s: Error: rank %u: %s\n", cmd_prog (), t->rank,
                     text);
        else
            fprintf (stderr, "%s: Error: rank %u: %s: %s\n", cmd_prog (),
                     t->rank, arg0, strerror (errnum));
    }
    else
        fprintf (stderr, "%s: Error: rank %u: %s\n", cmd_prog (), t->rank,
                 text ? text : strerror (errnum));
    target_done (t);
}

static const struct flux_subprocess_ops ops = {
    .on_started = on_started,
    .on_output = on_output,
    .on_credit = on_credit,
    .on_complete = on_complete,
    .on_error = on_error,
};

/* Without standard input to forward, no write credits are asked for
 * (exec flags 3, as flux-core's --stdin-flow=off): one response less per
 * rank.  With stdin on /dev/null the EOF waits for every rank's start,
 * as it waited for every rank's first credit before, so that a short
 * command that is done by then costs no write at all. */
static const struct flux_subprocess_ops ops_noinput = {
    .on_started = on_started,
    .on_output = on_output,
    .on_complete = on_complete,
    .on_error = on_error,
};

/* ---- signals ---- */

static char *running_ranks (struct exec *x)
{
    struct idset *ids = idset_create (0, IDSET_FLAG_AUTOGROW);
    char *s;

    for (int i = 0; ids && i < x->n; i++) {
        if (!x->t[i].done)
            (void)idset_set (ids, x->t[i].rank);
    }
    s = ids ? idset_encode (ids, IDSET_FLAG_RANGE | IDSET_FLAG_BRACKETS) : NULL;
    idset_destroy (ids);
    return s;
}

/* ---- every rank at once: rexec.bulk-exec ----
 *
 * With no stdin to forward and more than one rank, one request to rank
 * 0 goes down the tree once, and each subtree's outcomes come back
 * combined (src/modules/rexec/bulk.h): for `flux exec -r all true` on
 * 64 brokers, ~390 message routings instead of ~1,030 (bench/exec64-
 * msgs.sh).  When rank 0 has none, or refuses it (ENOSYS or EPERM before
 * any answer), one RFC 42 exec per rank goes instead. */

/* The output rank 0 sends before it waits for credit (rexec.bulk-credit:
 * src/modules/rexec/bulk.h): the client credits what it printed, so a
 * client whose output is not read (`flux exec -r all yes | sleep 60`)
 * holds the processes, not the brokers' memory. */
#define BULK_WINDOW (256 * 1024)

/* FLUX_EXEC_BULK=0: one exec per rank always (to compare). */
static bool bulk_wanted (void)
{
    const char *s = getenv ("FLUX_EXEC_BULK");

    return !s || strcmp (s, "0") != 0;
}

/* The target of rank (x->t is in rank order), or NULL. */
static struct target *find_target (struct exec *x, unsigned long rank)
{
    int lo = 0, hi = x->n - 1;

    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (x->t[mid].rank == rank)
            return &x->t[mid];
        if (x->t[mid].rank < rank)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

/* The targets of ids not done yet are done, with status or errnum. */
static void bulk_outcome (struct exec *x, const struct idset *ids, int status,
                          int errnum)
{
    for (unsigned int id = idset_first (ids); id != IDSET_INVALID_ID;
         id = idset_next (ids, id)) {
        struct target *t = find_target (x, id);
        if (t && !t->done) {
            t->done = true;
            t->status = status;
            t->errnum = errnum;
            x->running--;
        }
    }
}

/* The ranks with no outcome: each fails with errnum, said once. */
static void bulk_fail_rest (struct exec *x, int errnum, const char *text)
{
    char *s;

    if (x->running == 0)
        return;
    s = running_ranks (x);
    fprintf (stderr, "%s: Error: rank %s: %s\n", cmd_prog (), s ? s : "?",
             text && *text ? text : strerror (errnum));
    for (int i = 0; i < x->n; i++) {
        if (!x->t[i].done) {
            x->t[i].done = true;
            x->t[i].errnum = errnum;
        }
    }
    x->running = 0;
    free (s);
}

/* The ranks with no outcome exited 0 (the end of the stream says so). */
static void bulk_done_rest (struct exec *x)
{
    for (int i = 0; i < x->n; i++) {
        if (!x->t[i].done) {
            x->t[i].done = true;
            x->t[i].status = 0;
            x->running--;
        }
    }
}

static void bulk_output (struct exec *x, const json_t *io)
{
    const char *stream, *rank;
    char *data = NULL, *end;
    size_t len;
    bool eof;
    unsigned long r;
    struct target *t;

    if (!io || subprocess_io_decode (io, &stream, &rank, &data, &len, &eof) < 0)
        return;
    errno = 0;
    r = strtoul (rank, &end, 10);
    if (errno == 0 && *end == '\0' && (t = find_target (x, r)))
        print_output (t, stream, data, len, eof);
    free (data);
}

static void bulk_cb (flux_future_t *f, void *arg)
{
    struct exec *x = arg;
    const char *type, *ranks, *text;
    int status, errnum;
    struct idset *ids = NULL;
    json_t *o;

    if (flux_rpc_get_unpack (f, "o", &o) < 0) {
        errnum = errno;
        /* no bulk-exec (flux-core's broker), or rank 0 refuses a
         * request from another broker's client (guests allowed): one
         * exec per rank, which reaches the other ranks directly */
        if ((errnum == ENOSYS || errnum == EPERM) && !x->bulk_answered)
            x->bulk_unsupported = true;
        else if (errnum == ENODATA) /* the ranks not reported exited 0 */
            bulk_done_rest (x);
        else
            bulk_fail_rest (x, errnum, future_strerror (f, errnum));
        flux_reactor_stop (x->r);
        return;
    }
    x->bulk_answered = true;
    if (json_unpack (o, "{s:s}", "type", &type) < 0)
        goto bad;
    if (!strcmp (type, "output")) {
        const char *str = NULL;
        bulk_output (x, json_object_get (o, "io"));
        /* printed (write_all blocks): rank 0 may send more */
        if (flux_rpc_get (f, &str) == 0 && str)
            x->bulk_owed += strlen (str);
        if (x->bulk_owed >= BULK_WINDOW / 4) {
            flux_future_t *cf = flux_rpc_pack (
                x->h, "rexec.bulk-credit", 0, FLUX_RPC_NORESPONSE, "{s:i s:I}",
                "matchtag", (int)flux_rpc_get_matchtag (f), "bytes",
                (json_int_t)x->bulk_owed);
            if (!cf)
                cmd_warn ("rexec.bulk-credit: %s", strerror (errno));
            flux_future_destroy (cf);
            x->bulk_owed = 0;
        }
    }
    else if (!strcmp (type, "exit")) {
        if (json_unpack (o, "{s:s s:i}", "ranks", &ranks, "status", &status) < 0
            || !(ids = idset_decode (ranks)))
            goto bad;
        bulk_outcome (x, ids, status, 0);
    }
    else if (!strcmp (type, "error")) {
        char *s;
        if (json_unpack (o, "{s:s s:i s:s}", "ranks", &ranks, "errnum", &errnum,
                         "error", &text)
                < 0
            || !(ids = idset_decode (ranks)))
            goto bad;
        s = idset_encode (ids, IDSET_FLAG_RANGE | IDSET_FLAG_BRACKETS);
        if (errnum <= 0)
            errnum = EPROTO;
        fprintf (stderr, "%s: Error: rank %s: %s\n", cmd_prog (), s ? s : ranks,
                 *text ? text : strerror (errnum));
        free (s);
        bulk_outcome (x, ids, 0, errnum);
    }
    idset_destroy (ids);
    flux_future_reset (f);
    return;
bad:
    cmd_warn ("malformed bulk-exec response");
    flux_future_reset (f);
}

/* Run x->cmd on ids with one bulk-exec; -1 if rank 0 has none or
 * refuses it (the targets are then as they were). */
static int run_bulk (struct exec *x, const struct idset *ids)
{
    json_t *cmd = flux_cmd_tojson (x->cmd);
    char *ranks = idset_encode (ids, IDSET_FLAG_RANGE);
    unsigned int id;
    int i;

    if (!cmd || !ranks)
        cmd_die ("out of memory");
    for (i = 0, id = idset_first (ids); id != IDSET_INVALID_ID;
         id = idset_next (ids, id), i++) {
        x->t[i].x = x;
        x->t[i].rank = id;
        x->t[i].bol[0] = x->t[i].bol[1] = true;
        x->t[i].stdin_eof = true;
    }
    x->running = x->n;
    if (!(x->bulk_f
          = flux_rpc_pack (x->h, "rexec.bulk-exec", 0, FLUX_RPC_STREAMING,
                           "{s:O s:i s:s s:i}", "cmd", cmd, "flags",
                           SUBPROCESS_REXEC_STDOUT | SUBPROCESS_REXEC_STDERR,
                           "ranks", ranks, "window", BULK_WINDOW))
        || flux_future_then (x->bulk_f, -1., bulk_cb, x) < 0)
        cmd_die ("exec: %s", strerror (errno));
    json_decref (cmd);
    free (ranks);
    if (flux_reactor_run (x->r, 0) < 0)
        cmd_die ("reactor: %s", strerror (errno));
    if (x->bulk_unsupported) {
        flux_future_destroy (x->bulk_f);
        x->bulk_f = NULL;
        memset (x->t, 0, x->n * sizeof (x->t[0]));
        x->running = 0;
        return -1;
    }
    return 0;
}

static void signal_cb (uv_signal_t *w, int signum)
{
    struct exec *x = w->data;

    if (signum == SIGINT && x->attach) { /* detach: leave it running */
        x->detached = true;
        flux_reactor_stop (x->r);
        return;
    }
    if (signum == SIGINT) {
        double now = flux_reactor_now (x->r);
        if (x->interrupts >= 2 && now - x->last_interrupt < 1.) {
            char *s = running_ranks (x);
            fprintf (stderr, "%s: command still running at exit\n",
                     s ? s : "?");
            free (s);
            stdin_restore (x);
            exit (1);
        }
        if (x->interrupts == 1)
            cmd_warn ("interrupt (Ctrl-C) once more within 1s to exit");
        x->interrupts++;
        x->last_interrupt = now;
    }
    if (x->bulk_f) { /* down the tree, from rank 0 */
        flux_future_t *f = flux_rpc_pack (
            x->h, "rexec.bulk-kill", 0, FLUX_RPC_NORESPONSE, "{s:i s:i}",
            "matchtag", (int)flux_rpc_get_matchtag (x->bulk_f), "signum",
            signum);
        if (!f)
            cmd_warn ("forwarding signal %d: %s", signum, strerror (errno));
        flux_future_destroy (f);
        return;
    }
    for (int i = 0; i < x->n; i++) {
        if (!x->t[i].done)
            (void)flux_subprocess_kill (x->t[i].p, signum);
    }
}

static void signals_setup (struct exec *x)
{
    int signums[2] = {SIGINT, SIGTERM};

    for (int i = 0; i < 2; i++) {
        uv_signal_init (flux_reactor_uv (x->r), &x->sig[i]);
        x->sig[i].data = x;
        uv_signal_start (&x->sig[i], signal_cb, signums[i]);
        uv_unref ((uv_handle_t *)&x->sig[i]);
    }
}

/* ---- setup and summary ---- */

/* --jobid: the job's broker ranks (job-list, once it runs) and its shell
 * service (the shell.init event of its exec.eventlog), as flux-core's
 * flux exec finds them.  Dies with a message when the job does not run.
 */
static struct idset *job_ranks (flux_t *h, const char *jobid, char **service)
{
    flux_jobid_t id;
    flux_future_t *f;
    const char *ranks = NULL, *line;
    int state;
    struct idset *ids;

    if (flux_job_id_parse (jobid, &id) < 0)
        cmd_usage_error ("invalid --jobid '%s'", jobid);
    if (!(f = flux_rpc_pack (h, "job-list.list-id", FLUX_NODEID_ANY, 0,
                             "{s:I s:[ss] s:i}", "id", (json_int_t)id, "attrs",
                             "ranks", "state", "state", FLUX_JOB_STATE_RUN))
        || flux_rpc_get_unpack (f, "{s:{s:i s?s}}", "job", "state", &state,
                                "ranks", &ranks)
               < 0)
        cmd_die ("%s: %s", jobid, future_strerror (f, errno));
    if (state != FLUX_JOB_STATE_RUN || !ranks)
        cmd_die ("%s: the job is not running", jobid);
    if (!(ids = idset_decode (ranks)) || idset_empty (ids))
        cmd_die ("%s: job-list gave malformed ranks '%s'", jobid, ranks);
    flux_future_destroy (f);
    if (!(f = flux_rpc_pack (h, "job-info.eventlog-watch", FLUX_NODEID_ANY,
                             FLUX_RPC_STREAMING, "{s:I s:s s:i}", "id",
                             (json_int_t)id, "path", "guest.exec.eventlog",
                             "flags", 0)))
        cmd_die ("%s: watching exec.eventlog: %s", jobid, strerror (errno));
    *service = NULL;
    while (!*service) {
        json_t *entry = NULL;
        const char *name, *svc;
        if (flux_rpc_get_unpack (f, "{s:s}", "event", &line) < 0) {
            if (errno == ENODATA)
                cmd_die ("%s: the job ended before its shells started", jobid);
            cmd_die ("%s: exec.eventlog: %s", jobid,
                     future_strerror (f, errno));
        }
        if ((entry = json_loads (line, 0, NULL))
            && json_unpack (entry, "{s:s}", "name", &name) == 0
            && !strcmp (name, "shell.init")) {
            if (json_unpack (entry, "{s:{s:s}}", "context", "service", &svc) < 0
                || !(*service = strdup (svc)))
                cmd_die ("%s: malformed shell.init event", jobid);
        }
        json_decref (entry);
        flux_future_reset (f);
    }
    flux_future_t *cf
        = flux_rpc_pack (h, "job-info.eventlog-watch-cancel", FLUX_NODEID_ANY,
                         FLUX_RPC_NORESPONSE, "{s:i}", "matchtag",
                         (int)flux_rpc_get_matchtag (f));
    flux_future_destroy (cf);
    flux_future_destroy (f);
    return ids;
}

/* --rank/--exclude over the job's ranks: indexes 0..n-1 of them. */
static struct idset *index_ranks (struct idset *job, const char *rank,
                                  const char *exclude)
{
    unsigned int n = idset_count (job), i = 0;
    struct idset *want = NULL, *ex = NULL, *ids;

    if (rank && strcmp (rank, "all") != 0 && !(want = idset_decode (rank)))
        cmd_usage_error ("invalid --rank idset '%s'", rank);
    if (want && !idset_empty (want) && idset_last (want) >= n)
        cmd_die ("--rank %s: the job has only %u ranks", rank, n);
    if (exclude && !(ex = idset_decode (exclude)))
        cmd_usage_error ("invalid --exclude idset '%s'", exclude);
    if (!(ids = idset_create (0, IDSET_FLAG_AUTOGROW)))
        cmd_die ("out of memory");
    for (unsigned int r = idset_first (job); r != IDSET_INVALID_ID;
         r = idset_next (job, r), i++) {
        if ((!want || idset_test (want, i)) && (!ex || !idset_test (ex, i))
            && idset_set (ids, r) < 0)
            cmd_die ("out of memory");
    }
    idset_destroy (want);
    idset_destroy (ex);
    if (idset_empty (ids))
        cmd_die ("no ranks to run on");
    return ids;
}

static struct idset *target_ranks (flux_t *h, const char *rank,
                                   const char *exclude)
{
    uint32_t size;
    struct idset *ids, *ex;

    if (flux_get_size (h, &size) < 0)
        cmd_die ("cannot get the instance size: %s", strerror (errno));
    if (!rank || !strcmp (rank, "all")) {
        if (!(ids = idset_create (size, 0))
            || (size > 0 && idset_range_set (ids, 0, size - 1) < 0))
            cmd_die ("out of memory");
    }
    else if (!(ids = idset_decode (rank)))
        cmd_usage_error ("invalid --rank idset '%s'", rank);
    if (!idset_empty (ids) && idset_last (ids) >= size)
        cmd_die ("--rank %s: there are only %u ranks", rank, size);
    if (exclude) {
        if (!(ex = idset_decode (exclude)))
            cmd_usage_error ("invalid --exclude idset '%s'", exclude);
        (void)idset_subtract (ids, ex);
        idset_destroy (ex);
    }
    if (idset_empty (ids))
        cmd_die ("no ranks to run on");
    return ids;
}

/* The attributes a run asks for (the size for "all", security.owner for
 * DBUS_SESSION_BUS_ADDRESS), asked for together: one round trip, not
 * two, before the first exec goes.  Both are immutable; a failure here
 * is left to the later lookup to report. */
static void prefetch_attrs (flux_t *h)
{
    const char *names[2] = {"size", "security.owner"};
    flux_future_t *f[2];
    const char *value;

    for (int i = 0; i < 2; i++)
        f[i] = flux_rpc_pack (h, "attr.get", FLUX_NODEID_ANY, 0, "{s:s}",
                              "name", names[i]);
    for (int i = 0; i < 2; i++) {
        if (f[i] && flux_rpc_get_unpack (f[i], "{s:s}", "value", &value) == 0)
            (void)flux_attr_set_cacheonly (h, names[i], value);
        flux_future_destroy (f[i]);
    }
}

static flux_cmd_t *build_cmd (flux_t *h, int argc, char **argv, const char *dir,
                              char **setopts, int nsetopts)
{
    flux_cmd_t *cmd;
    char cwd[4096];

    if (!(cmd = flux_cmd_create (argc, argv, environ)))
        cmd_die ("building the command: %s", strerror (errno));
    flux_cmd_unsetenv (cmd, "FLUX_PROXY_REMOTE");
    if (!flux_cmd_getenv (cmd, "DBUS_SESSION_BUS_ADDRESS")) {
        const char *owner = flux_attr_get (h, "security.owner");
        char bus[128];
        if (owner) {
            snprintf (bus, sizeof (bus), "unix:path=/run/user/%s/bus", owner);
            (void)flux_cmd_setenv (cmd, "DBUS_SESSION_BUS_ADDRESS", bus, true);
        }
    }
    if (!dir) {
        if (!getcwd (cwd, sizeof (cwd)))
            cmd_die ("getcwd: %s", strerror (errno));
        dir = cwd;
    }
    if (strcmp (dir, "none") != 0 && flux_cmd_setcwd (cmd, dir) < 0)
        cmd_die ("out of memory");
    for (int i = 0; i < nsetopts; i++) {
        char *eq = strchr (setopts[i], '=');
        if (!eq || eq == setopts[i])
            cmd_usage_error ("--setopt: expected NAME=VALUE, got '%s'",
                             setopts[i]);
        *eq = '\0';
        if (flux_cmd_setopt (cmd, setopts[i], eq + 1) < 0)
            cmd_die ("--setopt %s: %s", setopts[i], strerror (errno));
        *eq = '=';
    }
    return cmd;
}

static int start_error_code (int errnum)
{
    switch (errnum) {
        case EPERM:
        case EACCES:
            return 126;
        case ENOENT:
            return 127;
        case EHOSTUNREACH:
            return 68;
        default:
            return 1;
    }
}

/* One line per distinct failure; the exit code. */
static int summarize (struct exec *x)
{
    struct outcome {
        char text[64];
        struct idset *ids;
    } out[64];
    int nout = 0, code = 0;

    for (int i = 0; i < x->n; i++) {
        struct target *t = &x->t[i];
        int status = t->p ? flux_subprocess_status (t->p) : t->status;
        char text[64];
        int c;

        if (t->errnum) {
            c = x->attach ? 1 : start_error_code (t->errnum);
            if (c > code)
                code = c;
            continue; /* said already */
        }
        if (WIFSIGNALED (status)) {
            c = 128 + WTERMSIG (status);
            snprintf (text, sizeof (text), "%s", strsignal (WTERMSIG (status)));
        }
        else {
            c = WEXITSTATUS (status);
            snprintf (text, sizeof (text), "Exit %d", c);
        }
        if (c > code)
            code = c;
        if (c == 0 || x->quiet)
            continue;
        int k;
        for (k = 0; k < nout; k++) {
            if (!strcmp (out[k].text, text))
                break;
        }
        if (k == nout) {
            if (nout == 64)
                continue; /* more distinct outcomes than we list */
            snprintf (out[k].text, sizeof (out[k].text), "%s", text);
            out[k].ids = idset_create (0, IDSET_FLAG_AUTOGROW);
            nout++;
        }
        if (out[k].ids)
            (void)idset_set (out[k].ids, t->rank);
    }
    for (int k = 0; k < nout; k++) {
        char *s = out[k].ids ? idset_encode (
                      out[k].ids, IDSET_FLAG_RANGE | IDSET_FLAG_BRACKETS)
                             : NULL;
        fprintf (stderr, "%s: %s\n", s ? s : "?", out[k].text);
        free (s);
        idset_destroy (out[k].ids);
    }
    return code;
}

/* --attach: the one process of x->attach_to on rank; the exit code. */
static int attach (struct exec *x, const char *service, uint32_t rank)
{
    const char *label = NULL;
    pid_t pid = -1;
    char *end;
    long n;
    int code;

    errno = 0;
    n = strtol (x->attach_to, &end, 10);
    if (*end == '\0' && errno == 0 && n > 0 && n <= INT32_MAX)
        pid = (pid_t)n;
    else
        label = x->attach_to; /* not a number: a label */
    x->n = 1;
    x->noinput = true; /* a background process has no stdin */
    if (!(x->t = calloc (1, sizeof (*x->t))))
        cmd_die ("out of memory");
    x->t[0].x = x;
    x->t[0].rank = rank;
    x->t[0].bol[0] = x->t[0].bol[1] = true;
    x->t[0].stdin_eof = true;
    signals_setup (x);
    if (!(x->t[0].p = flux_rexec_attach (x->h, service, rank, pid, label, &ops,
                                         &x->t[0])))
        cmd_die ("rank %u: attach: %s", rank, strerror (errno));
    x->running = 1;
    if (flux_reactor_run (x->r, 0) < 0)
        cmd_die ("reactor: %s", strerror (errno));
    for (int i = 0; i < 2; i++)
        uv_close ((uv_handle_t *)&x->sig[i], NULL);
    (void)flux_reactor_run (x->r, FLUX_REACTOR_NOWAIT); /* finish closing */
    if (x->detached) {
        if (x->verbose)
            fprintf (stderr, "%s: rank %u: detached from %s\n", cmd_prog (),
                     rank, x->attach_to);
        code = 0;
    }
    else
        code = summarize (x);
    flux_subprocess_destroy (x->t[0].p);
    free (x->t);
    return code;
}

int cmd_exec (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"rank", required_argument, NULL, 'r'},
        {"exclude", required_argument, NULL, 'x'},
        {"jobid", required_argument, NULL, 'j'},
        {"dir", required_argument, NULL, 'd'},
        {"label-io", no_argument, NULL, 'l'},
        {"noinput", no_argument, NULL, 'n'},
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        {"setopt", required_argument, NULL, 'S'},
        {"bg", no_argument, NULL, 'B'},
        {"waitable", no_argument, NULL, 'W'},
        {"label", required_argument, NULL, 'L'},
        {"attach", required_argument, NULL, 'A'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    const char *rank = NULL, *exclude = NULL, *dir = NULL, *jobid = NULL;
    const char *label = NULL;
    bool bg = false, waitable = false;
    char *service = NULL, topic[128] = "rexec";
    char **setopts = calloc (argc, sizeof (char *));
    int nsetopts = 0, c, i, code;
    struct exec x = {.stdin_flags = -1};
    struct idset *ids;
    unsigned int id;

    if (!setopts)
        cmd_die ("out of memory");
    while ((c = cmd_getopt (argc, argv, "r:x:j:d:lnqv", longopts)) != -1) {
        switch (c) {
            case 'r':
                rank = optarg;
                break;
            case 'x':
                exclude = optarg;
                break;
            case 'j':
                jobid = optarg;
                break;
            case 'd':
                dir = optarg;
                break;
            case 'l':
                x.label_io = true;
                break;
            case 'n':
                x.noinput = true;
                break;
            case 'q':
                x.quiet = true;
                break;
            case 'v':
                x.verbose = true;
                break;
            case 'S':
                setopts[nsetopts++] = optarg;
                break;
            case 'B':
                bg = true;
                break;
            case 'W':
                waitable = true;
                break;
            case 'L':
                if (!*optarg)
                    cmd_usage_error ("--label: a label is required");
                label = optarg;
                break;
            case 'A':
                if (!*optarg)
                    cmd_usage_error ("--attach: a pid or a label is required");
                x.attach = true;
                x.attach_to = optarg;
                break;
        }
    }
    if (x.attach && optind != argc)
        cmd_usage_error ("--attach takes no command");
    if (x.attach && (bg || waitable || label))
        cmd_usage_error ("--attach cannot be used with --bg, --waitable or "
                         "--label");
    if (!x.attach && optind == argc)
        cmd_usage_error ("a command is required");
    if (waitable && !bg)
        cmd_usage_error ("--waitable requires --bg");
    x.h = cmd_open ();
    x.r = flux_get_reactor (x.h);
    if (!jobid && !x.attach)
        prefetch_attrs (x.h);
    if (jobid) {
        struct idset *job = job_ranks (x.h, jobid, &service);
        ids = index_ranks (job, rank, exclude);
        idset_destroy (job);
        snprintf (topic, sizeof (topic), "%s.rexec", service);
    }
    else if (x.attach && !rank) { /* this broker's process */
        uint32_t me;
        if (flux_get_rank (x.h, &me) < 0 || !(ids = idset_create (0, 0))
            || idset_set (ids, me) < 0)
            cmd_die ("cannot get this broker's rank: %s", strerror (errno));
    }
    else
        ids = target_ranks (x.h, rank, exclude);
    if (x.attach) {
        if (idset_count (ids) != 1)
            cmd_usage_error ("--attach: one rank is required (-r RANK)");
        code = attach (&x, topic, idset_first (ids));
        idset_destroy (ids);
        free (service);
        free (setopts);
        flux_close (x.h);
        return code;
    }
    x.cmd
        = build_cmd (x.h, argc - optind, argv + optind, dir, setopts, nsetopts);
    if (label && flux_cmd_set_label (x.cmd, label) < 0)
        cmd_die ("--label: %s", strerror (errno));
    if (bg) {
        code = sproc_exec_bg (x.h, topic, ids, x.cmd, waitable);
        flux_cmd_destroy (x.cmd);
        idset_destroy (ids);
        free (service);
        free (setopts);
        flux_close (x.h);
        return code;
    }
    x.n = idset_count (ids);
    if (!(x.t = calloc (x.n, sizeof (*x.t))))
        cmd_die ("out of memory");
    signals_setup (&x);
    if (!x.noinput)
        stdin_setup (&x);
    if (x.noinput && !x.verbose && x.n > 1 && !jobid && bulk_wanted ()
        && run_bulk (&x, ids) == 0)
        goto ended;
    for (i = 0, id = idset_first (ids); id != IDSET_INVALID_ID;
         id = idset_next (ids, id), i++) {
        struct target *t = &x.t[i];
        t->x = &x;
        t->rank = id;
        t->bol[0] = t->bol[1] = true;
        if (!(t->p = flux_rexec (x.h, topic, id, x.cmd,
                                 x.noinput ? &ops_noinput : &ops, t)))
            cmd_die ("rank %u: exec: %s", id, strerror (errno));
        if (x.noinput && !x.eof_later) {
            (void)flux_subprocess_write (t->p, "stdin", NULL, 0, true);
            t->stdin_eof = true;
        }
        x.running++;
    }
    if (flux_reactor_run (x.r, 0) < 0)
        cmd_die ("reactor: %s", strerror (errno));
ended:
    stdin_close (&x);
    stdin_restore (&x);
    for (i = 0; i < 2; i++)
        uv_close ((uv_handle_t *)&x.sig[i], NULL);
    if (x.eof_timer_init)
        uv_close ((uv_handle_t *)&x.eof_timer, NULL);
    (void)flux_reactor_run (x.r, FLUX_REACTOR_NOWAIT); /* finish closing */
    code = summarize (&x);
    for (i = 0; i < x.n; i++)
        flux_subprocess_destroy (x.t[i].p);
    flux_future_destroy (x.bulk_f);
    free (x.t);
    flux_cmd_destroy (x.cmd);
    idset_destroy (ids);
    free (service);
    free (setopts);
    flux_close (x.h);
    return code;
}
