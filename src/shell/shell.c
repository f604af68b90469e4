/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* flux-shell - the job shell: one per node per job, started by the local
 * exec-agent as `flux-shell JOBID`.  It asks its agent for the job
 * (exec-agent.shell-info), maps and starts the local tasks, moves their
 * stdio, serves them PMI, forwards signals, and exits with the largest
 * task exit code.  See doc/man1/flux-shell.1 and doc/guide/exec.md.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "libeventlog/eventlog.h"
#include "libjob/job.h"
#include "libkvs/kvs.h"
#include "libkvs/kvs_private.h"
#include "libsubprocess/subprocess.h"
#include "libutil/dirempty.h"
#include "libutil/fsd.h"
#include "libutil/rlimits.h"

#include "affinity.h"
#include "files.h"
#include "input.h"
#include "kvsretry.h"
#include "launch.h"
#include "killsig.h"
#include "output.h"
#include "pmi.h"
#include "pty.h"
#include "reaper.h"
#include "shell.h"
#include "strays.h"
#include "task.h"
#include "timeleft.h"

static const char *usage_text
    = "Usage: flux-shell [--reconnect] JOBID\n"
      "Run the tasks of job JOBID (decimal) on this node; started by the\n"
      "exec-agent with FLUX_URI and FLUX_KVS_NAMESPACE set.\n"
      "  -h, --help       Show this help\n"
      "      --reconnect  Accepted and ignored\n"
      "Internal: flux-shell --launcher FD serves the exec-agent's shell\n"
      "launcher protocol on FD, forking a shell per request.\n";

/* The longest a job of one shell holds its start-up commit once its
 * tasks started (shell.h, shell_commit_flush): readers of exec.eventlog
 * see shell.init and shell.start up to this much later. */
#define STARTUP_HOLD_MS 20

/* Log messages held for the output eventlog until it starts (shell_log) */
#define MAX_EARLY_LOGS 16

static const int forwarded_signals[]
    = {SIGTERM, SIGINT, SIGALRM, SIGHUP, SIGUSR1, SIGUSR2};

/* What the SHELL_KILL_SIGNAL handler kills, for each started task: its
 * group (-pid), or with nosetpgrp the task (pid), filled before the
 * count grows.  With nosetpgrp the handler then kills the shell's own
 * group, what the tasks started, if the shell leads it (the agent and
 * the IMP make it so). */
static pid_t *task_groups;
static volatile sig_atomic_t ntask_groups;
static volatile sig_atomic_t kill_shell_group;

static const char *level_name (int level)
{
    static const char *names[] = {"EMERG", "ALERT",  "CRIT", "ERROR",
                                  "WARN",  "NOTICE", "INFO", "DEBUG"};
    return level >= 0 && level <= 7 ? names[level] : "?";
}

static void commit_done (flux_future_t *f, void *arg)
{
    struct shell *shell = arg;

    if (flux_future_get (f, NULL) < 0)
        fprintf (stderr, "flux-shell: exec.eventlog commit: %s\n",
                 strerror (errno));
    flux_future_destroy (f);
    shell->commits--;
}

static void commit_needed_done (flux_future_t *f, void *arg)
{
    struct shell *shell = arg;
    const char *what = flux_future_aux_get (f, "shell::what");

    shell->commits--;
    if (flux_future_get (f, NULL) < 0)
        shell_fatal (shell, 1, "%s: %s", what ? what : "commit",
                     strerror (errno));
    flux_future_destroy (f);
}

static int commit_send (struct shell *shell, flux_kvs_txn_t *txn,
                        const char *what, int flags)
{
    flux_future_t *f;

    if (!(f = kvsretry_commit (shell->h, flags, txn))
        || flux_future_aux_set (f, "shell::what", (void *)what, NULL) < 0
        || flux_future_then (f, -1., commit_needed_done, shell) < 0) {
        flux_future_destroy (f);
        return -1;
    }
    shell->commits++;
    return 0;
}

int shell_commit_async (struct shell *shell, flux_kvs_txn_t *txn,
                        const char *what)
{
    if (shell->gathering) {
        if (!shell->startup_txn
            && !(shell->startup_txn = flux_kvs_txn_create ()))
            return -1;
        return kvs_txn__append (shell->startup_txn, txn);
    }
    return commit_send (shell, txn, what, 0);
}

int shell_commit_flush (struct shell *shell)
{
    flux_kvs_txn_t *txn = shell->startup_txn;
    int rc = 0;

    shell->gathering = false;
    shell->startup_txn = NULL;
    if (shell->startup_timer.loop)
        uv_timer_stop (&shell->startup_timer);
    /* compacted: shell.init, shell.start and the first exit make one
     * append to exec.eventlog, the output header and data one to output */
    if (txn && shell->h)
        rc = commit_send (shell, txn, "committing the start-up events",
                          FLUX_KVS_TXN_COMPACT);
    flux_kvs_txn_destroy (txn);
    return rc;
}

static void startup_timer_cb (uv_timer_t *t)
{
    struct shell *shell = t->data;

    if (shell_commit_flush (shell) < 0)
        shell_fatal (shell, 1, "committing the start-up events: %s",
                     strerror (errno));
}

/* A job of one shell, its tasks started: hold the start-up commit
 * (shell.h).  Without a timer, it is sent now. */
static int startup_hold (struct shell *shell)
{
    if (!shell->startup_txn || shell->info->shell_size > 1
        || (!shell->startup_timer.loop
            && uv_timer_init (shell->loop, &shell->startup_timer) < 0))
        return shell_commit_flush (shell);
    shell->startup_timer.data = shell;
    uv_timer_start (&shell->startup_timer, startup_timer_cb, STARTUP_HOLD_MS,
                    0);
    return 0;
}

/* Append line to exec.eventlog without waiting (shell->commits counts
 * what is in flight; shell_finish() waits for them).  Before shell-info
 * has answered, the job may not be running here at all and its guest
 * namespace may never exist: such a commit is sent once, not retried
 * for KVSRETRY_SECONDS (kvsretry.h).
 */
static void append_async (struct shell *shell, const char *line)
{
    flux_kvs_txn_t *txn = flux_kvs_txn_create ();
    flux_future_t *f = NULL;

    (void)shell_commit_flush (shell); /* the log follows what preceded it */
    if (!txn || flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "exec.eventlog", line)
        || !(f = shell->info ? kvsretry_commit (shell->h, 0, txn)
                             : flux_kvs_commit (shell->h, NULL, 0, txn))
        || flux_future_then (f, -1., commit_done, shell) < 0) {
        fprintf (stderr, "flux-shell: exec.eventlog commit: %s\n",
                 strerror (errno));
        flux_future_destroy (f);
    }
    else
        shell->commits++;
    flux_kvs_txn_destroy (txn);
}

void shell_log (struct shell *shell, int level, const char *component,
                const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    json_t *e = NULL;
    char *line = NULL;

    va_start (ap, fmt);
    vsnprintf (msg, sizeof (msg), fmt, ap);
    va_end (ap);
    fprintf (stderr, "flux-shell[%d]: %s: %s: %s\n",
             shell->info ? shell->info->shell_rank : -1, level_name (level),
             component, msg);
    if (!shell->h)
        return;
    /* before shell-info the shell rank is unknown: no "rank" (RFC 24) */
    if (shell->info)
        e = eventlog_entry_pack (0, "log", "{s:i s:i s:s s:s}", "rank",
                                 shell->info->shell_rank, "level", level,
                                 "message", msg, "component", component);
    else
        e = eventlog_entry_pack (0, "log", "{s:i s:s s:s}", "level", level,
                                 "message", msg, "component", component);
    if (e && (line = eventlog_entry_encode (e)))
        append_async (shell, line);
    json_decref (e);
    free (line);
    /* a fatal error (LOG_CRIT: shell_fatal) is the job's exception, which
     * flux run prints: not twice */
    if (level <= LOG_CRIT || level > LOG_NOTICE)
        return;
    if (shell->out_logs == LOGS_TO_OUTPUT)
        output_log_component (shell->out, level, component, msg);
    else if (shell->out_logs == LOGS_HELD) {
        if (!shell->early_logs)
            shell->early_logs = json_array ();
        if (shell->early_logs
            && json_array_size (shell->early_logs) < MAX_EARLY_LOGS)
            (void)json_array_append_new (shell->early_logs,
                                         json_pack ("{s:i s:s s:s}", "level",
                                                    level, "component",
                                                    component, "message", msg));
    }
}

/* The output has started: the log messages held so far go there. */
static void early_logs_flush (struct shell *shell)
{
    size_t i;
    json_t *o;

    shell->out_logs = LOGS_TO_OUTPUT;
    json_array_foreach (shell->early_logs, i, o)
    {
        int level;
        const char *component, *message;
        if (json_unpack (o, "{s:i s:s s:s}", "level", &level, "component",
                         &component, "message", &message)
            == 0)
            output_log_component (shell->out, level, component, message);
    }
    json_decref (shell->early_logs);
    shell->early_logs = NULL;
}

int shell_post_event (struct shell *shell, const char *name, const char *fmt,
                      ...)
{
    flux_kvs_txn_t *txn = NULL;
    flux_future_t *f = NULL;
    json_t *e = NULL, *ctx = NULL;
    char *line = NULL;
    int rc = -1;
    va_list ap;

    if (fmt) {
        va_start (ap, fmt);
        ctx = json_vpack_ex (NULL, 0, fmt, ap);
        va_end (ap);
        if (!ctx) {
            errno = EINVAL;
            return -1;
        }
    }
    if (!(e = eventlog_entry_pack (0, name, ctx ? "O" : NULL, ctx))
        || !(line = eventlog_entry_encode (e))
        || !(txn = flux_kvs_txn_create ())
        || flux_kvs_txn_put (txn, FLUX_KVS_APPEND, "exec.eventlog", line) < 0)
        goto out;
    if (!strcmp (name, "shell.init") || !strcmp (name, "shell.start")) {
        /* not waited for: shell.init goes in the start-up commit with
         * the output and input headers, before the tasks' output;
         * shell.start follows it */
        if (shell_commit_async (shell, txn,
                                name[6] == 'i' ? "posting shell.init"
                                               : "posting shell.start")
            < 0)
            goto out;
    }
    else if (shell_commit_flush (shell) < 0
             || !(f = kvsretry_commit (shell->h, 0, txn))
             || kvsretry_wait (f) < 0 || flux_future_get (f, NULL) < 0)
        goto out;
    rc = 0;
out:
    flux_future_destroy (f);
    flux_kvs_txn_destroy (txn);
    free (line);
    json_decref (e);
    json_decref (ctx);
    return rc;
}

void shell_killall (struct shell *shell, int signum)
{
    for (int i = 0; i < shell->ntasks; i++)
        task_kill (shell->tasks[i], signum);
}

void shell_fatal (struct shell *shell, int code, const char *fmt, ...)
{
    char msg[256];
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (msg, sizeof (msg), fmt, ap);
    va_end (ap);
    shell_log (shell, LOG_CRIT, "shell", "%s", msg);
    if (shell->h) {
        flux_future_t *f;
        f = flux_rpc_pack (shell->h, "job-manager.raise", 0, 0,
                           "{s:I s:s s:i s:s}", "id", (json_int_t)shell->id,
                           "type", "exec", "severity", 0, "note", msg);
        if (!f || flux_future_get (f, NULL) < 0)
            fprintf (stderr, "flux-shell: job-manager.raise: %s\n",
                     strerror (errno));
        flux_future_destroy (f);
    }
    shell_killall (shell, SIGKILL);
    if (!shell->failed || code > shell->exit_code)
        shell->exit_code = code > 0 ? code : 1;
    shell->failed = true;
    if (shell->r)
        flux_reactor_stop (shell->r);
}

/* shell.task-exit marks the first task exit of the job.  Each shell
 * reports its own first exit: the leader posts it, the others send it to
 * the leader (`<service>.task-exit`, no response), which posts the first
 * it hears of.  So the leader gets at most one message per shell.
 */
static void exit_timer_cb (uv_timer_t *t)
{
    struct shell *shell = t->data;
    char fsd[64];

    if (fsd_format_duration (fsd, sizeof (fsd), shell->exit_timeout) < 0)
        snprintf (fsd, sizeof (fsd), "%gs", shell->exit_timeout);
    shell_fatal (shell, 1, "task %d exited and exit-timeout=%s has expired",
                 shell->first_exit_rank, fsd);
}

/* The leader, on the first task exit of the job: exit-on-error and
 * exit-timeout as flux-core's shell does (only while the leader still
 * runs; once it exits, job-exec watches the other shells).
 */
static void first_exit (struct shell *shell, int rank, int exitcode,
                        int signaled)
{
    shell->first_exit_rank = rank;
    if (shell->exit_on_error && (exitcode != 0 || signaled)) {
        shell_fatal (shell, signaled ? 128 + signaled : exitcode,
                     "task %d exited with %s %d and exit-on-error is set", rank,
                     signaled ? "signal" : "exit code",
                     signaled ? signaled : exitcode);
        return;
    }
    if (shell->exit_timeout > 0 && shell->nactive > 0) {
        uv_timer_init (shell->loop, &shell->exit_timer);
        shell->exit_timer.data = shell;
        uv_timer_start (&shell->exit_timer, exit_timer_cb,
                        (uint64_t)(shell->exit_timeout * 1000), 0);
    }
}

static void task_exit_post (struct shell *shell, json_t *ctx)
{
    json_t *e;
    char *line = NULL;
    int rank = -1, exitcode = 0, signaled = 0;

    if (shell->task_exit_posted)
        return;
    if (shell->start2_f) {
        /* shell.start is not posted yet: the first exit follows it */
        if (!shell->held_exit)
            shell->held_exit = json_incref (ctx);
        return;
    }
    shell->task_exit_posted = true;
    (void)json_unpack (ctx, "{s:i s:i s:i}", "rank", &rank, "exitcode",
                       &exitcode, "signaled", &signaled);
    first_exit (shell, rank, exitcode, signaled);
    /* with the output pending (the EOFs of the task's streams, usually
     * read before its SIGCHLD): one commit for both */
    if ((e = eventlog_entry_pack (0, "shell.task-exit", "O", ctx))
        && (line = eventlog_entry_encode (e))) {
        if (!shell->out
            || output_commit_now (shell->out, "exec.eventlog", line) < 0)
            append_async (shell, line);
    }
    json_decref (e);
    free (line);
}

int shell_task_exit_remote (struct shell *shell, json_t *ctx)
{
    const char *state;
    int n[6];

    if (json_unpack (ctx, "{s:i s:i s:s s:i s:i s:i s:i}", "localid", &n[0],
                     "rank", &n[1], "state", &state, "pid", &n[2],
                     "wait_status", &n[3], "signaled", &n[4], "exitcode", &n[5])
        < 0) {
        errno = EPROTO;
        return -1;
    }
    task_exit_post (shell, ctx);
    return 0;
}

static void task_exit_cb (flux_t *h, flux_msg_handler_t *mh,
                          const flux_msg_t *msg, void *arg)
{
    struct shell *shell = arg;
    json_t *ctx;

    (void)mh;
    /* Another user's request is refused, not logged: it would let any
     * user write lines into this job's log.  The shells send with
     * NORESPONSE, so only a stranger waiting for an answer gets one. */
    if (flux_msg_authorize (msg, shell->info->userid) < 0) {
        (void)flux_respond_error (h, msg, EPERM, "job belongs to another user");
        return;
    }
    if (flux_request_unpack (msg, NULL, "o", &ctx) < 0
        || shell_task_exit_remote (shell, ctx) < 0) {
        fprintf (stderr, "flux-shell: malformed task-exit request\n");
        (void)flux_respond_error (h, msg, EPROTO,
                                  "malformed task-exit request");
    }
}

/* How long a non-leader holds its last task's exit report for its final
 * output send when the task's output is still open at its reaping. */
#define TASK_EXIT_HOLD_MS 20

static void send_task_exit (struct shell *shell, json_t *ctx)
{
    flux_future_t *f;
    char topic[128];

    snprintf (topic, sizeof (topic), "%s.task-exit", shell->service);
    f = flux_rpc_pack (shell->h, topic, shell->info->brokers[0],
                       FLUX_RPC_NORESPONSE, "O", ctx);
    flux_future_destroy (f);
}

/* The shell did not end soon after its last task was reaped (a process
 * the task started holds its output open): report the exit now.  Unless
 * that output has closed meanwhile and the shell only waits for barrier
 * 2 (64 shells on a busy node take longer than the timer): then its
 * final output send, at most a barrier later, still carries the report
 * (it was sent separately by 52 of 63 non-leaders of a 64-node job). */
static void task_exit_timer_cb (uv_timer_t *t)
{
    struct shell *shell = t->data;

    if (shell->nactive == 0)
        return;
    if (shell->task_exit_ctx) {
        send_task_exit (shell, shell->task_exit_ctx);
        json_decref (shell->task_exit_ctx);
        shell->task_exit_ctx = NULL;
    }
}

static void report_task_exit (struct shell *shell, struct task *t)
{
    json_t *ctx;

    if (shell->task_exit_sent)
        return;
    shell->task_exit_sent = true;
    if (!(ctx = json_pack (
              "{s:i s:i s:s s:i s:i s:i s:i}", "localid", t->localid, "rank",
              t->rank, "state", "Exited", "pid", (int)t->pid, "wait_status",
              t->wait_status, "signaled",
              WIFSIGNALED (t->wait_status) ? WTERMSIG (t->wait_status) : 0,
              "exitcode",
              WIFEXITED (t->wait_status) ? WEXITSTATUS (t->wait_status) : 0)))
        return;
    if (shell->leader)
        task_exit_post (shell, ctx);
    else if (shell->nactive == 1 && !shell->failed && shell->out) {
        /* the shell's last task: the shell ends once its output closes
         * (at once, usually), and its final output send carries the
         * report, one request to the leader instead of two (63 fewer for
         * a 64-node job); if the output stays open, the timer sends it */
        shell->task_exit_ctx = json_incref (ctx);
        shell->task_exit_timer.data = shell;
        if (!task_done (t)
            && (uv_timer_init (shell->loop, &shell->task_exit_timer) < 0
                || uv_timer_start (&shell->task_exit_timer, task_exit_timer_cb,
                                   TASK_EXIT_HOLD_MS, 0)
                       < 0))
            task_exit_timer_cb (&shell->task_exit_timer);
    }
    else
        send_task_exit (shell, ctx);
    json_decref (ctx);
}

void shell_task_done (struct shell *shell, struct task *t)
{
    if (t->reaped && !t->counted) {
        t->counted = true;
        /* after a fatal error the shell's code stands, not SIGKILL's */
        if (!shell->failed && t->exit_code > shell->exit_code)
            shell->exit_code = t->exit_code;
        report_task_exit (shell, t);
    }
    if (task_done (t) && !t->finished) {
        t->finished = true;
        if (--shell->nactive == 0 && shell->r)
            flux_reactor_stop (shell->r);
    }
}

static flux_future_t *barrier_send (struct shell *shell, int seq, json_t *data)
{
    if (data)
        return flux_rpc_pack (shell->h, "exec-agent.barrier",
                              shell->broker_rank, 0, "{s:I s:i s:O}", "id",
                              (json_int_t)shell->info->id, "seq", seq, "data",
                              data);
    return flux_rpc_pack (shell->h, "exec-agent.barrier", shell->broker_rank, 0,
                          "{s:I s:i}", "id", (json_int_t)shell->info->id, "seq",
                          seq);
}

/* The caller destroyed the future of a held round. */
static void held_fence_gone (void *arg)
{
    struct shell *shell = arg;
    struct held_fence *hf = &shell->held_fence;

    flux_future_destroy (hf->real);
    json_decref (hf->data);
    memset (hf, 0, sizeof (*hf));
}

flux_future_t *shell_barrier_async (struct shell *shell, int seq, json_t *data)
{
    struct held_fence *hf = &shell->held_fence;
    flux_future_t *f;

    if (seq <= 2 || !shell->start2_f)
        return barrier_send (shell, seq, data);
    /* a round after barrier 2, entered before it is through: the agent
     * would refuse it (EBUSY), so it goes once barrier 2 is through */
    if (hf->proxy) {
        errno = EBUSY;
        return NULL;
    }
    if (!(f = flux_future_create (NULL, NULL)))
        return NULL;
    flux_future_set_flux (f, shell->h);
    if (flux_future_aux_set (f, "shell::held", shell, held_fence_gone) < 0) {
        flux_future_destroy (f);
        return NULL;
    }
    hf->proxy = f;
    hf->seq = seq;
    hf->data = json_incref (data);
    return f;
}

static void held_fence_cb (flux_future_t *f, void *arg)
{
    struct shell *shell = arg;
    struct held_fence *hf = &shell->held_fence;

    hf->real = NULL; /* the proxy owns it now */
    if (flux_future_fulfill_with (hf->proxy, f) < 0) {
        flux_future_fulfill_error (hf->proxy, errno, NULL);
        flux_future_destroy (f);
    }
}

/* Barrier 2 is through (errnum 0) or failed: send the held round, or
 * fail it. */
static void held_fence_release (struct shell *shell, int errnum)
{
    struct held_fence *hf = &shell->held_fence;

    if (!hf->proxy || hf->sent)
        return;
    hf->sent = true;
    if (errnum == 0) {
        if ((hf->real = barrier_send (shell, hf->seq, hf->data))
            && flux_future_then (hf->real, -1., held_fence_cb, shell) == 0)
            return;
        errnum = errno;
        flux_future_destroy (hf->real);
        hf->real = NULL;
    }
    flux_future_fulfill_error (hf->proxy, errnum, NULL);
}

json_t *shell_barrier (struct shell *shell, int seq, json_t *data)
{
    flux_future_t *f = shell_barrier_async (shell, seq, data);
    json_t *o = NULL;

    if (f && flux_rpc_get_unpack (f, "{s:o}", "data", &o) == 0)
        json_incref (o);
    flux_future_destroy (f);
    return o;
}

/* Barrier seq (1 or 2) of the start sequence; EIO means the job is being
 * torn down: exit quietly.
 */
static int start_barrier (struct shell *shell, int seq)
{
    json_t *o;

    shell->barrier_seq = seq;
    /* a job of one shell has no other shell to wait for: its agent
     * would answer at once (the PMI fences after these still go to the
     * agent: their sequence numbers only have to grow) */
    if (shell->info->shell_size == 1)
        return 0;
    if (!(o = shell_barrier (shell, seq, NULL))) {
        if (errno != EIO)
            shell_fatal (shell, 1, "barrier %d: %s", seq, strerror (errno));
        else {
            shell_killall (shell, SIGKILL);
            shell->exit_code = 1;
            shell->failed = true;
        }
        return -1;
    }
    json_decref (o);
    return 0;
}

/* After barrier 2 (every task of the job started): stdin flows, the
 * leader posts shell.start, then what was held for it. */
static int start2_finish (struct shell *shell, flux_error_t *error)
{
    input_forward_start (shell->in);
    if (shell->leader) {
        json_t *tm = taskmap_encode_json (shell->info->map, 0);
        if (!tm
            || shell_post_event (shell, "shell.start", "{s:{s:i s:o}}",
                                 "taskmap", "version", 1, "map", tm)
                   < 0)
            return errprintf (error, "posting shell.start: %s",
                              strerror (errno));
    }
    return 0;
}

static void post_held_exit (struct shell *shell)
{
    json_t *ctx = shell->held_exit;

    if (ctx) {
        shell->held_exit = NULL;
        task_exit_post (shell, ctx);
        json_decref (ctx);
    }
}

static void start2_cb (flux_future_t *f, void *arg)
{
    struct shell *shell = arg;
    flux_error_t error;
    json_t *o;
    int errnum = 0;

    if (flux_rpc_get_unpack (f, "{s:o}", "data", &o) < 0)
        errnum = errno;
    flux_future_destroy (f);
    shell->start2_f = NULL;
    held_fence_release (shell, errnum ? EIO : 0);
    if (errnum == EIO) { /* the job is being torn down: exit quietly */
        shell_killall (shell, SIGKILL);
        shell->exit_code = 1;
        shell->failed = true;
    }
    else if (errnum)
        shell_fatal (shell, 1, "barrier 2: %s", strerror (errnum));
    else if (start2_finish (shell, &error) < 0)
        shell_fatal (shell, 1, "%s", error.text);
    post_held_exit (shell);
    /* every task may be done already (shell_run waits for this) */
    if ((shell->failed || shell->nactive == 0) && shell->r)
        flux_reactor_stop (shell->r);
}

/* Enter barrier 2 without waiting for it (a job of one shell has no
 * other to wait for): the tasks run meanwhile, and the barrier's
 * answer comes while the shell follows them. */
static int start2_enter (struct shell *shell, flux_error_t *error)
{
    shell->barrier_seq = 2;
    if (shell->info->shell_size == 1)
        return start2_finish (shell, error);
    if (!(shell->start2_f = barrier_send (shell, 2, NULL))
        || flux_future_then (shell->start2_f, -1., start2_cb, shell) < 0) {
        flux_future_destroy (shell->start2_f);
        shell->start2_f = NULL;
        return errprintf (error, "barrier 2: %s", strerror (errno));
    }
    return 0;
}

static void kill_event_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg)
{
    struct shell *shell = arg;
    int signum;

    (void)h;
    (void)mh;
    if (flux_event_unpack (msg, NULL, "{s:i}", "signum", &signum) < 0
        || signum <= 0 || signum >= NSIG) {
        fprintf (stderr, "flux-shell: malformed kill event\n");
        return;
    }
    shell_killall (shell, signum);
}

/* SHELL_KILL_SIGNAL (killsig.h): the agent's SIGKILL.  A plain handler,
 * not a libuv watcher, so it acts even while the loop does not run. */
static void kill_signal_handler (int signum)
{
    (void)signum;
    for (sig_atomic_t i = 0; i < ntask_groups; i++)
        (void)kill (task_groups[i], SIGKILL);
    reaper_kill_children (); /* and what they leave to the shell */
    if (kill_shell_group)
        (void)kill (0, SIGKILL); /* the shell too */
    (void)raise (SIGKILL);
}

static void sigchld_cb (struct shell *shell)
{
    for (int i = 0; i < shell->ntasks; i++)
        task_check_exit (shell->tasks[i]);
    shell_strays_check (shell);
}

/* The signalfd (start_signals): SIGCHLD checks the tasks, the others
 * are forwarded to them. */
static void signal_cb (uv_poll_t *p, int status, int events)
{
    struct shell *shell = p->data;
    struct signalfd_siginfo si;

    (void)status;
    (void)events;
    while (read (shell->sigfd, &si, sizeof (si)) == (ssize_t)sizeof (si)) {
        if (si.ssi_signo == SIGCHLD)
            sigchld_cb (shell);
        else
            shell_killall (shell, (int)si.ssi_signo);
    }
}

/* Tell the agent a task's group (our stdout is its pipe, killsig.h):
 * should the shell die without killing it, the agent does. */
static void report_group (pid_t pgid)
{
    char line[64];
    int n = snprintf (line, sizeof (line), "%s%d\n", SHELL_TASK_GROUP_TAG,
                      (int)pgid);

    if (write (STDOUT_FILENO, line, (size_t)n) < 0) {
        /* no agent reads it (a shell run by hand): nothing to do */
    }
}

/* The shell-info answer the launcher gave in the environment (killsig.h),
 * taken out of it: 0 (shell->info set), 0 with none given (shell->info
 * NULL: it is asked for), or -1 if it is not a shell-info answer. */
static int given_info (struct shell *shell, flux_error_t *error)
{
    const char *s = getenv (SHELL_INFO_ENV);
    json_error_t jerr;
    json_t *o;

    if (!s)
        return 0;
    o = json_loads (s, 0, &jerr);
    (void)unsetenv (SHELL_INFO_ENV);
    if (!o)
        return errprintf (error, "%s: %s", SHELL_INFO_ENV, jerr.text);
    shell->info = shell_info_create (o, error);
    json_decref (o);
    return shell->info ? 0 : -1;
}

/* The answer to exec-agent.shell-info, asked in connect_broker() (or
 * given: given_info). */
static int get_info (struct shell *shell, flux_future_t *f, uint64_t id,
                     flux_error_t *error)
{
    json_t *o;

    if (!shell->info) {
        if (!f || flux_rpc_get_unpack (f, "o", &o) < 0) {
            errprintf (error, "exec-agent.shell-info: %s",
                       f ? future_strerror (f, errno) : strerror (errno));
            flux_future_destroy (f);
            return -1;
        }
        shell->info = shell_info_create (o, error);
        flux_future_destroy (f);
        if (!shell->info)
            return -1;
    }
    if (shell->info->id != id)
        return errprintf (error, "shell-info is about job %ju",
                          (uintmax_t)shell->info->id);
    return 0;
}

static const char *attr_value (flux_future_t *f)
{
    const char *value;

    if (flux_rpc_get_unpack (f, "{s:s}", "value", &value) < 0)
        return NULL;
    return value;
}

/* Connect, and ask this broker's agent for the job (*info: the agent is
 * on every broker, so FLUX_NODEID_ANY reaches the local one; not asked,
 * *info NULL, when the launcher gave it in the environment: given_info()
 * reads it after, while the broker takes the connection) and the broker
 * for the kill events.  Both requests go out at once; the subscription's
 * answer is checked with the service's, before the tasks start
 * (service_registered), so the set-up does not wait for it.
 */
static int connect_broker (struct shell *shell, uint64_t id,
                           flux_future_t **info, flux_error_t *error)
{
    shell->id = id;
    char topic[64];
    const struct flux_match match
        = {FLUX_MSGTYPE_EVENT, FLUX_MATCHTAG_NONE, topic};
    flux_msg_handler_t *mh;

    /* FLUX_O_EARLY: the requests go out with the connection, not after
     * the broker's accept byte came back (a round trip fewer) */
    if (!(shell->h = flux_open_ex (NULL, FLUX_O_EARLY, error)))
        return -1;
    shell->r = flux_get_reactor (shell->h);
    shell->loop = flux_reactor_uv (shell->r);
    snprintf (topic, sizeof (topic), "shell-%ju.kill", (uintmax_t)id);
    if ((!getenv (SHELL_INFO_ENV)
         && !(*info = flux_rpc_pack (shell->h, "exec-agent.shell-info",
                                     FLUX_NODEID_ANY, 0, "{s:I}", "id",
                                     (json_int_t)id)))
        || !(shell->subscribe_f
             = flux_rpc_pack (shell->h, "event.subscribe", FLUX_NODEID_ANY, 0,
                              "{s:s}", "topic", topic))) {
        return errprintf (error, "connecting: %s", strerror (errno));
    }
    if (!(mh = flux_msg_handler_create (shell->h, match, kill_event_cb, shell)))
        return errprintf (error, "subscribing to %s: %s", topic,
                          strerror (errno));
    flux_msg_handler_start (mh);
    shell->kill_mh = mh;
    return 0;
}

/* The broker's rank and rundir: from shell-info (the agent's), else
 * (an agent that gives neither, e.g. the tests' fake one) asked of the
 * broker, both at once. */
static int broker_ids (struct shell *shell, flux_error_t *error)
{
    flux_future_t *rank_f = NULL, *rundir_f = NULL;
    const char *rank = NULL, *rundir = shell->info->rundir;
    char buf[16];
    int rc = -1;

    if (shell->info->broker_rank >= 0) {
        snprintf (buf, sizeof (buf), "%d", shell->info->broker_rank);
        rank = buf;
    }
    else if (!(rank_f = flux_rpc_pack (shell->h, "attr.get", FLUX_NODEID_ANY, 0,
                                       "{s:s}", "name", "rank"))
             || !(rundir_f
                  = flux_rpc_pack (shell->h, "attr.get", FLUX_NODEID_ANY, 0,
                                   "{s:s}", "name", "rundir"))) {
        errprintf (error, "connecting: %s", strerror (errno));
        goto out;
    }
    else {
        rank = attr_value (rank_f);
        rundir = attr_value (rundir_f);
    }
    /* cached as flux_get_rank() would have it, and parsed by it */
    if (!rank || flux_attr_set_cacheonly (shell->h, "rank", rank) < 0
        || flux_get_rank (shell->h, &shell->broker_rank) < 0) {
        errprintf (error, "getting the broker rank: %s", strerror (errno));
        goto out;
    }
    /* none: FLUX_JOB_TMPDIR goes in /tmp */
    if (rundir && !(shell->rundir = strdup (rundir))) {
        errprintf (error, "out of memory");
        goto out;
    }
    rc = 0;
out:
    flux_future_destroy (rank_f);
    flux_future_destroy (rundir_f);
    return rc;
}

static int setup_ids (struct shell *shell, flux_error_t *error)
{
    struct shell_info *info = shell->info;

    if (flux_job_id_encode (info->id, "f58", shell->jobid_f58,
                            sizeof (shell->jobid_f58))
            < 0
        || flux_job_id_encode (info->id, "f58plain", shell->jobid_plain,
                               sizeof (shell->jobid_plain))
               < 0)
        return errprintf (error, "encoding the job id: %s", strerror (errno));
    snprintf (shell->service, sizeof (shell->service), "%d-shell-%s",
              info->userid, shell->jobid_plain);
    shell->leader = info->shell_rank == 0;
    return 0;
}

/* The broker's local-uri: the agent started the shell with FLUX_URI set
 * to it (saves asking the broker). */
static const char *local_uri (struct shell *shell)
{
    const char *uri = getenv ("FLUX_URI");

    if (uri && !strncmp (uri, "local://", 8))
        return uri;
    return flux_attr_get (shell->h, "local-uri");
}

/* Leader: <service>.exception {type, severity, shell_rank, message?}
 * from job-exec (flux-core's protocol).  "lost-shell": that shell's node
 * was lost; the output of its tasks ends there (the job goes on when the
 * rank was not critical).  A message is logged as a warning.
 */
static void exception_cb (flux_t *h, flux_msg_handler_t *mh,
                          const flux_msg_t *msg, void *arg)
{
    struct shell *shell = arg;
    const char *type, *message = NULL;
    int severity, rank;

    (void)mh;
    if (flux_msg_authorize (msg, shell->info->userid) < 0) {
        (void)flux_respond_error (h, msg, EPERM, "job belongs to another user");
        return;
    }
    if (flux_request_unpack (msg, NULL, "{s:s s:i s:i s?s}", "type", &type,
                             "severity", &severity, "shell_rank", &rank,
                             "message", &message)
        < 0) {
        (void)flux_respond_error (h, msg, EPROTO, "malformed exception");
        return;
    }
    if (message && *message)
        shell_log (shell, LOG_WARNING, "exception", "%s", message);
    if (!strcmp (type, "lost-shell"))
        output_lost_shell (shell->out, rank);
    (void)flux_respond (h, msg, NULL);
}

/* Every shell registers the shell service on its broker, as flux-core's
 * do: the leader answers .stdin (input.c) and .task-exit; every shell
 * serves .rexec, a subprocess server (RFC 42) that runs processes inside
 * the job, as its user (`flux exec --jobid`).  Those processes are
 * killed when the shell exits.
 */
static int register_service (struct shell *shell, flux_error_t *error)
{
    char topic[128];
    flux_msg_handler_t *mh;
    flux_error_t e;

    if (shell->leader) {
        snprintf (topic, sizeof (topic), "%s.task-exit", shell->service);
        if (!(mh = flux_msg_handler_create (
                  shell->h,
                  (struct flux_match){FLUX_MSGTYPE_REQUEST, FLUX_MATCHTAG_NONE,
                                      topic},
                  task_exit_cb, shell)))
            return errprintf (error, "%s: %s", topic, strerror (errno));
        flux_msg_handler_allow_rolemask (mh, FLUX_ROLE_USER);
        flux_msg_handler_start (mh);
        shell->task_exit_mh = mh;
        snprintf (topic, sizeof (topic), "%s.exception", shell->service);
        if (!(mh = flux_msg_handler_create (
                  shell->h,
                  (struct flux_match){FLUX_MSGTYPE_REQUEST, FLUX_MATCHTAG_NONE,
                                      topic},
                  exception_cb, shell)))
            return errprintf (error, "%s: %s", topic, strerror (errno));
        flux_msg_handler_allow_rolemask (mh, FLUX_ROLE_USER);
        flux_msg_handler_start (mh);
        shell->exception_mh = mh;
    }
    /* shells of one job share a broker only in tests (a fake agent):
     * there the leader's registration stands, the others do without */
    if (!shell->leader && shell->broker_rank == shell->info->brokers[0])
        return 0;
    snprintf (topic, sizeof (topic), "%s.rexec", shell->service);
    if (!(shell->rexec = subprocess_server_create (
              shell->h, topic, local_uri (shell), shell->broker_rank, &e))
        || subprocess_server_allow_user (shell->rexec, shell->info->userid) < 0)
        return errprintf (error, "%s: %s", topic,
                          shell->rexec ? strerror (errno) : e.text);
    /* answered while the shell goes on: checked before barrier 1 */
    if (!(shell->service_f = flux_service_register (shell->h, shell->service)))
        return errprintf (error, "registering service %s: %s", shell->service,
                          strerror (errno));
    return 0;
}

/* Take *fp's answer, if it was asked (*fp is then NULL): -1 with "what:
 * the reason" in error if it failed. */
static int answered (flux_future_t **fp, const char *what, flux_error_t *error)
{
    flux_future_t *f = *fp;
    int rc = 0;

    if (!f)
        return 0;
    *fp = NULL;
    if (flux_future_get (f, NULL) < 0)
        rc = errprintf (error, "%s: %s", what, future_strerror (f, errno));
    flux_future_destroy (f);
    return rc;
}

/* The answers to the kill subscription (connect_broker) and to
 * register_service()'s request, before anyone is told of the service
 * (shell.init) and before a task starts. */
static int service_registered (struct shell *shell, flux_error_t *error)
{
    char what[128];

    snprintf (what, sizeof (what), "subscribing to shell-%ju.kill",
              (uintmax_t)shell->id);
    if (answered (&shell->subscribe_f, what, error) < 0)
        return -1;
    snprintf (what, sizeof (what), "registering service %s", shell->service);
    return answered (&shell->service_f, what, error);
}

/* The shell option rlimit: the soft limits each task gets (task.c sets
 * them in the child, before exec: the shell itself keeps its own, so a
 * job's nofile=8 or a cpu limit cannot starve the shell).  One over the
 * hard limit is lowered to it, with a warning. */
static int parse_rlimits (struct shell *shell, flux_error_t *error)
{
    json_t *o = json_object_get (shell->info->options, "rlimit");
    const char *key;
    json_t *val;

    if (!o)
        return 0;
    if (!json_is_object (o))
        return errprintf (error, "shell option rlimit must be an object");
    json_object_foreach (o, key, val)
    {
        struct rlimit rl;
        rlim_t want;
        int i = rlimit_lookup (key, strlen (key));
        if (i < 0 || !json_is_integer (val))
            return errprintf (error,
                              "rlimit.%s: unknown limit or not an "
                              "integer",
                              key);
        if (getrlimit (rlimit_names[i].resource, &rl) < 0)
            return errprintf (error, "getrlimit %s: %s", key, strerror (errno));
        /* -1 means unlimited; only the soft limit is set (within hard) */
        want = json_integer_value (val) < 0 ? RLIM_INFINITY
                                            : (rlim_t)json_integer_value (val);
        if (want == rl.rlim_cur) /* the usual case: the submitter's is ours */
            continue;
        rl.rlim_cur = want;
        if (rl.rlim_max != RLIM_INFINITY
            && (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > rl.rlim_max)) {
            shell_log (shell, LOG_WARNING, "rlimit",
                       "%s: limited to the hard limit %llu", key,
                       (unsigned long long)rl.rlim_max);
            rl.rlim_cur = rl.rlim_max;
        }
        if (shell->nrlimits < SHELL_MAX_RLIMITS) {
            shell->rlimits[shell->nrlimits].resource = rlimit_names[i].resource;
            shell->rlimits[shell->nrlimits++].rl = rl;
        }
    }
    return 0;
}

/* exit-timeout (FSD, a number of seconds, or "none"; default 30s) and
 * exit-on-error (any value but 0/false turns it on).
 */
static int parse_exit_options (struct shell *shell, flux_error_t *error)
{
    json_t *o = shell->info->options;
    json_t *t = json_object_get (o, "exit-timeout");
    json_t *e = json_object_get (o, "exit-on-error");

    shell->exit_timeout = 30.;
    if (t) {
        if (json_is_string (t) && !strcmp (json_string_value (t), "none"))
            shell->exit_timeout = 0.;
        else
            shell->exit_timeout = shell_parse_duration (t);
        if (shell->exit_timeout < 0)
            return errprintf (error, "exit-timeout must be a duration or none");
    }
    shell->exit_on_error = e && !json_is_false (e)
                           && !(json_is_integer (e) && !json_integer_value (e));
    return 0;
}

/* nosetpgrp (flux-core's option): any value but 0/false turns it on. */
static void parse_pgrp_option (struct shell *shell)
{
    json_t *o = json_object_get (shell->info->options, "nosetpgrp");

    shell->nosetpgrp = o && !json_is_false (o)
                       && !(json_is_integer (o) && !json_integer_value (o));
    kill_shell_group = shell->nosetpgrp && getpgrp () == getpid ();
}

/* FLUX_JOB_TMPDIR: in the broker's rundir, as flux-core's shell does,
 * else (a guest's shell may not write there) in $TMPDIR or /tmp.  The
 * rundir is the instance's own: on a busy node a directory operation in
 * /tmp waits for every other process creating files there (the
 * directory's lock: a third of a shell's CPU in perf, with builds
 * beside), and the 64 shells of a 64-broker job on one machine use 64
 * rundirs, not one /tmp. */
/* shell->tmpdir in base: -1 with errno (ENOMEM: shell->tmpdir NULL).
 * *named: it has the predictable name (it may have been there already:
 * the agent lends the owner's shells an empty one, exec-agent
 * tmpdir_lend), not a unique one beside it. */
static int tmpdir_in (struct shell *shell, const char *base, bool *named)
{
    struct stat sb;
    char *name;
    int n;

    if (asprintf (&shell->tmpdir, "%s/jobtmp-%d-%s", base,
                  shell->info->shell_rank, shell->jobid_plain)
        < 0)
        goto nomem;
    *named = true;
    if (mkdir (shell->tmpdir, 0700) == 0)
        return 0;
    if (errno != EEXIST)
        return -1;
    /* The name is predictable (every instance's first job has the same
     * id): use what is there only if it is a directory of ours that no
     * one else may enter (an earlier shell of this job), never a symlink
     * or someone else's; else a unique name beside it. */
    if (lstat (shell->tmpdir, &sb) == 0 && S_ISDIR (sb.st_mode)
        && sb.st_uid == geteuid () && (sb.st_mode & 077) == 0)
        return 0;
    *named = false;
    name = shell->tmpdir;
    n = asprintf (&shell->tmpdir, "%s-XXXXXX", name);
    free (name);
    if (n < 0)
        goto nomem;
    return mkdtemp (shell->tmpdir) ? 0 : -1;
nomem:
    shell->tmpdir = NULL;
    errno = ENOMEM;
    return -1;
}

/* Through the IMP: tell it where FLUX_JOB_TMPDIR is, so that it removes
 * it if this shell is killed (shell/killsig.h); the pipe is closed here,
 * before any task starts, whether or not there is a tmpdir. */
static void tmpdir_tell_imp (const char *tmpdir)
{
    const char *s = getenv (SHELL_IMP_TMPDIR_FD_ENV);
    char *end;
    long fd;
    bool valid;

    if (!s)
        return;
    errno = 0;
    fd = strtol (s, &end, 10);
    valid = !errno && end != s && !*end && fd >= 3 && fd <= INT_MAX;
    (void)unsetenv (SHELL_IMP_TMPDIR_FD_ENV); /* s is gone */
    if (!valid)
        return;
    if (tmpdir)
        (void)write ((int)fd, tmpdir, strlen (tmpdir));
    (void)close ((int)fd);
}

static int tmpdir_create (struct shell *shell, flux_error_t *error)
{
    const char *base = shell->rundir;
    bool named;

    if (base && *base) {
        if (tmpdir_in (shell, base, &named) == 0) {
            shell->tmpdir_keep = named && shell->info->tmpdir_reuse;
            return 0;
        }
        if (!shell->tmpdir)
            return errprintf (error, "out of memory");
        free (shell->tmpdir);
        shell->tmpdir = NULL;
    }
    if (!(base = getenv ("TMPDIR")) || !*base)
        base = "/tmp";
    if (tmpdir_in (shell, base, &named) < 0)
        return shell->tmpdir ? errprintf (error, "FLUX_JOB_TMPDIR %s: %s",
                                          shell->tmpdir, strerror (errno))
                             : errprintf (error, "out of memory");
    return 0;
}

static int make_tmpdir (struct shell *shell, flux_error_t *error)
{
    int rc = tmpdir_create (shell, error);

    tmpdir_tell_imp (rc == 0 ? shell->tmpdir : NULL);
    return rc;
}

static int remove_cb (const char *path, const struct stat *sb, int flag,
                      struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    if ((flag == FTW_DP ? rmdir (path) : unlink (path)) < 0)
        fprintf (stderr, "flux-shell: remove %s: %s\n", path, strerror (errno));
    return 0; /* keep going */
}

/* What the tasks left in a tmpdir that stays. */
static int empty_cb (const char *path, const struct stat *sb, int flag,
                     struct FTW *ftw)
{
    return ftw->level == 0 ? 0 : remove_cb (path, sb, flag, ftw);
}

/* Remove FLUX_JOB_TMPDIR and whatever the tasks left in it (depth
 * first, without following symlinks).  Most jobs leave it empty: one
 * rmdir then, not a walk (open, stat, read, close, unlink, rmdir: a
 * directory operation on a busy disk costs milliseconds, and on one
 * machine running 64 brokers 64 shells do it at once).  One the agent
 * reuses (tmpdir_keep) is only emptied: one look at it, most often.
 */
static void remove_tmpdir (struct shell *shell)
{
    if (!shell->tmpdir)
        return;
    if (shell->tmpdir_keep) {
        if (dir_empty (shell->tmpdir) == 0)
            (void)nftw (shell->tmpdir, empty_cb, 16, FTW_DEPTH | FTW_PHYS);
        return;
    }
    if (rmdir (shell->tmpdir) < 0 && errno != ENOENT)
        (void)nftw (shell->tmpdir, remove_cb, 16, FTW_DEPTH | FTW_PHYS);
}

static struct env *base_env (struct shell *shell)
{
    struct shell_info *info = shell->info;
    struct env *env = env_create ();
    const char *uri = getenv ("FLUX_URI");
    const char *ns = getenv ("FLUX_KVS_NAMESPACE");

    if (!env
        || (info->environment && env_load_json (env, info->environment) < 0)
        || (uri && env_set (env, "FLUX_URI", uri) < 0)
        || (ns && env_set (env, "FLUX_KVS_NAMESPACE", ns) < 0)
        || env_set (env, "FLUX_JOB_ID", shell->jobid_f58) < 0
        || env_setf (env, "FLUX_JOB_SIZE", "%d", info->total_ntasks) < 0
        || env_setf (env, "FLUX_JOB_NNODES", "%d", info->shell_size) < 0
        || env_set (env, "FLUX_JOB_TMPDIR", shell->tmpdir) < 0) {
        env_destroy (env);
        return NULL;
    }
    env_unset (env, "FLUX_PROXY_REMOTE");
    return env;
}

static int create_tasks (struct shell *shell, flux_error_t *error)
{
    struct shell_info *info = shell->info;
    unsigned int id = idset_first (info->taskids);

    if (!(shell->tasks = calloc (info->local_ntasks, sizeof (struct task *)))
        || !(task_groups = calloc (info->local_ntasks, sizeof (pid_t))))
        return errprintf (error, "out of memory");
    for (int i = 0; i < info->local_ntasks; i++) {
        if (!(shell->tasks[i] = task_create (shell, (int)id, i)))
            return errprintf (error, "out of memory");
        shell->ntasks++;
        id = idset_next (info->taskids, id);
    }
    return 0;
}

/* Start every local task; a spawn failure is fatal for the job (the
 * shell exits 126/127 as flux-core's does).
 */
static int start_tasks (struct shell *shell, struct affinity *aff,
                        flux_error_t *error)
{
    struct shell_info *info = shell->info;
    size_t argc = json_array_size (info->command);
    char **argv = calloc (argc + 1, sizeof (char *));
    struct env *base = base_env (shell);
    int rc = -1;

    if (!argv || !base) {
        errprintf (error, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < argc; i++) {
        const char *arg = json_string_value (json_array_get (info->command, i));
        if (!(argv[i] = shell_files_subst (arg, shell->tmpdir))) {
            errprintf (error, "out of memory");
            goto out;
        }
    }
    for (int i = 0; i < shell->ntasks; i++) {
        struct task *t = shell->tasks[i];
        struct env *env = env_copy (base);
        int e;
        if (!env || env_setf (env, "FLUX_TASK_RANK", "%d", t->rank) < 0
            || env_setf (env, "FLUX_TASK_LOCAL_ID", "%d", t->localid) < 0
            || input_task_setup (shell->in, t, error) < 0
            || shell_pty_task_setup (shell->pty, t, env, error) < 0
            || shell_pmi_task_setup (shell->pmi, t, env, error) < 0
            || affinity_task_setup (aff, t->localid, env) < 0) {
            env_destroy (env);
            if (!error->text[0])
                errprintf (error, "task %d: %s", t->rank, strerror (errno));
            goto out;
        }
        t->own_group = !shell->nosetpgrp || t->on_pty;
        e = task_start (t, argv, env);
        affinity_task_done (aff);
        env_destroy (env);
        if (e < 0) {
            errprintf (error, "task %d (%s): %s", t->rank, argv[0],
                       strerror (errno));
            shell->exit_code = t->exit_code;
            goto out;
        }
        shell->nactive++;
        task_groups[ntask_groups] = t->own_group ? -t->pid : t->pid;
        ntask_groups = ntask_groups + 1;
        if (t->own_group)
            report_group (t->pid);
        shell_pmi_task_started (shell->pmi, t);
    }
    rc = 0;
out:
    for (size_t i = 0; argv && i < argc; i++)
        free (argv[i]);
    free (argv);
    env_destroy (base);
    return rc;
}

/* The forwarded signals and SIGCHLD are blocked and read from one
 * signalfd, not one libuv watcher each: libuv's start and close of a
 * watcher is five system calls (its lock pipe, two sigprocmask, the
 * sigaction), 70 for the seven at every shell's start and end.  Blocked
 * from here to the exit, they can never take their default action (the
 * SIGTERM job-exec sends after a fatal error must not kill the shell
 * while it finishes); a task's child clears its mask before it execs
 * (task.c), and the rexec server's children get an empty mask from
 * posix_spawn.  The rexec server watches its children with pidfds, not
 * SIGCHLD.
 */
static int start_signals (struct shell *shell)
{
    struct sigaction sa = {.sa_handler = kill_signal_handler};
    sigset_t set;
    int fd;

    signal (SIGPIPE, SIG_IGN);
    sigfillset (&sa.sa_mask);
    if (sigaction (SHELL_KILL_SIGNAL, &sa, NULL) < 0)
        return -1;
    sigemptyset (&set);
    sigaddset (&set, SIGCHLD);
    for (size_t i = 0; i < 6; i++)
        sigaddset (&set, forwarded_signals[i]);
    if (sigprocmask (SIG_BLOCK, &set, NULL) < 0
        || (fd = signalfd (-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) < 0)
        return -1;
    shell->sigfd = fd;
    shell->sigfd_open = true;
    shell->sigpoll.data = shell;
    if (uv_poll_init (shell->loop, &shell->sigpoll, fd) < 0
        || uv_poll_start (&shell->sigpoll, UV_READABLE, signal_cb) < 0)
        return -1;
    return 0;
}

/* Everything up to barrier 1: the order of flux-core's shell. */
static int shell_init (struct shell *shell, uint64_t id, flux_error_t *error)
{
    const char *cwd;
    flux_future_t *info = NULL;

    /* without it every write would go to the primary namespace */
    if (!getenv ("FLUX_KVS_NAMESPACE"))
        return errprintf (error, "FLUX_KVS_NAMESPACE is not set");
    if (connect_broker (shell, id, &info, error) < 0) {
        flux_future_destroy (info);
        return -1;
    }
    if (given_info (shell, error) < 0)
        return -1;
    if (get_info (shell, info, id, error) < 0 || broker_ids (shell, error) < 0
        || setup_ids (shell, error) < 0 || register_service (shell, error) < 0
        || start_signals (shell) < 0)
        return -1;
    cwd = shell->info->cwd;
    if (cwd && chdir (cwd) < 0)
        return errprintf (error, "Could not change dir to %s: %s", cwd,
                          strerror (errno));
    if (!cwd && chdir ("/tmp") < 0)
        return errprintf (error, "chdir /tmp: %s", strerror (errno));
    parse_pgrp_option (shell);
    if (parse_exit_options (shell, error) < 0
        || parse_rlimits (shell, error) < 0 || make_tmpdir (shell, error) < 0
        || shell_files_stage (shell->info->jobspec, shell->tmpdir, error) < 0
        || create_tasks (shell, error) < 0
        || shell_strays_start (shell, error) < 0)
        return -1;
    if (!(shell->out = output_create (shell, error))
        || !(shell->in = input_create (shell, error))
        || !(shell->pmi = shell_pmi_create (shell, error))
        || !(shell->pty = shell_pty_create (shell, error)))
        return -1;
    return 0;
}

/* shell.init: with an interactive pty, its session and whether its
 * output is captured too (PROTOCOLS-exec.md 3.4). */
static int post_shell_init (struct shell *shell)
{
    const char *pty = shell_pty_session (shell->pty);
    int leader = (int)shell->info->brokers[0];

    if (pty && shell_pty_capture (shell->pty))
        return shell_post_event (shell, "shell.init", "{s:i s:i s:s s:s s:i}",
                                 "leader-rank", leader, "size",
                                 shell->info->shell_size, "service",
                                 shell->service, "pty", pty, "capture", 1);
    if (pty)
        return shell_post_event (shell, "shell.init", "{s:i s:i s:s s:s}",
                                 "leader-rank", leader, "size",
                                 shell->info->shell_size, "service",
                                 shell->service, "pty", pty);
    return shell_post_event (
        shell, "shell.init", "{s:i s:i s:s}", "leader-rank", leader, "size",
        shell->info->shell_size, "service", shell->service);
}

static int shell_start (struct shell *shell, flux_error_t *error)
{
    struct affinity *aff;
    char *map = NULL;
    int rc = -1;

    if (service_registered (shell, error) < 0)
        return -1;
    if (start_barrier (shell, 1) < 0)
        return -1;
    if (shell->leader && post_shell_init (shell) < 0)
        return errprintf (error, "posting shell.init: %s", strerror (errno));
    /* a job of one shell posts shell.start once its tasks are started,
     * before the loop runs: it goes in the start-up commit too (the KVS
     * commits once, not twice; nothing the tasks write is read before) */
    if (shell->info->shell_size > 1 && shell_commit_flush (shell) < 0)
        return errprintf (error, "committing the start-up events: %s",
                          strerror (errno));
    if (output_start (shell->out, error) < 0)
        return -1;
    early_logs_flush (shell);
    if (!(aff = affinity_create (shell, error)))
        return -1;
    if (start_tasks (shell, aff, error) < 0
        || timeleft_start (shell, &shell->timeleft, error) < 0)
        goto out;
    if (input_start (shell->in, error) < 0)
        goto out;
    if (start2_enter (shell, error) < 0)
        goto out;
    if (startup_hold (shell) < 0) {
        errprintf (error, "committing the start-up events: %s",
                   strerror (errno));
        goto out;
    }
    rc = 0;
out:
    free (map);
    affinity_destroy (aff);
    return rc;
}

static void shell_finish (struct shell *shell)
{
    timeleft_destroy (shell->timeleft);
    shell->timeleft = NULL;
    shell_strays_finish (shell);     /* what the tasks left, before the log */
    if (shell->task_exit_timer.loop) /* the final output send reports it */
        uv_timer_stop (&shell->task_exit_timer);
    /* the output first: a held start-up commit takes it along */
    if (shell->out && output_flush (shell->out) < 0)
        fprintf (stderr, "flux-shell: flushing output: %s\n", strerror (errno));
    /* the last output is sent: a later message goes to exec.eventlog only
     * (the leader refuses what a shell sends after its last) */
    shell->out_logs = LOGS_CLOSED;
    if (shell_commit_flush (shell) < 0)
        fprintf (stderr, "flux-shell: committing the start-up events: %s\n",
                 strerror (errno));
    /* the job's end waits for the commits' answer: meanwhile, what needs
     * none (the rexec'd processes, FLUX_JOB_TMPDIR, the tasks' groups) */
    subprocess_server_destroy (shell->rexec); /* SIGKILL to what it runs */
    shell->rexec = NULL;
    remove_tmpdir (shell);
    /* what the tasks left in their groups goes with the shell (the agent
     * kills what is left of the shell's own group) */
    for (int i = 0; i < shell->ntasks; i++)
        task_kill_group (shell->tasks[i], SIGKILL);
    for (int i = 0; i < shell->ntasks; i++)
        task_reap (shell->tasks[i]);
    while (shell->commits > 0 && uv_run (shell->loop, UV_RUN_ONCE) != 0)
        ;
    if (shell->exit_timer.loop)
        uv_close ((uv_handle_t *)&shell->exit_timer, NULL);
    if (shell->task_exit_timer.loop)
        uv_close ((uv_handle_t *)&shell->task_exit_timer, NULL);
    if (shell->startup_timer.loop)
        uv_close ((uv_handle_t *)&shell->startup_timer, NULL);
    /* no more forwarding: the signals stay blocked to the exit (a
     * SIGTERM job-exec sends after a fatal error must not kill the shell
     * while it finishes: its exit code is the job's) */
    if (shell->sigpoll.loop)
        uv_close ((uv_handle_t *)&shell->sigpoll, NULL);
    if (shell->sigfd_open)
        close (shell->sigfd);
    shell->sigfd_open = false;
    flux_future_destroy (shell->service_f);
    flux_future_destroy (shell->subscribe_f);
    shell->subscribe_f = NULL;
    input_destroy (shell->in);
    shell_pmi_destroy (shell->pmi);
    shell_pty_destroy (shell->pty);
    shell->pty = NULL; /* task close callbacks may still look */
    output_destroy (shell->out);
    shell->out = NULL;
    shell->out_logs = LOGS_CLOSED;
    json_decref (shell->early_logs);
    shell->early_logs = NULL;
    for (int i = 0; i < shell->ntasks; i++)
        task_close (shell->tasks[i]);
    if (shell->loop)
        uv_run (shell->loop, UV_RUN_NOWAIT); /* close callbacks */
    for (int i = 0; i < shell->ntasks; i++)
        task_destroy (shell->tasks[i]);
    free (shell->tasks);
    ntask_groups = 0;
    free (task_groups);
    task_groups = NULL;
    free (shell->tmpdir);
    free (shell->rundir);
    json_decref (shell->task_exit_ctx);
    json_decref (shell->held_exit);
    flux_future_destroy (shell->start2_f);
    flux_msg_handler_destroy (shell->kill_mh);
    flux_msg_handler_destroy (shell->task_exit_mh);
    flux_msg_handler_destroy (shell->exception_mh);
    shell_info_destroy (shell->info);
    flux_close (shell->h);
}

static bool tasks_running (struct shell *shell)
{
    for (int i = 0; i < shell->ntasks; i++) {
        if (shell->tasks[i]->running)
            return true;
    }
    return false;
}

static bool isdigit_str (const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return false;
    }
    return true;
}

static int parse_args (int argc, char **argv, uint64_t *id)
{
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},
        {"reconnect", no_argument, NULL, 'R'},
        {NULL, 0, NULL, 0},
    };
    char *end;
    int c;

    while ((c = getopt_long (argc, argv, "h", longopts, NULL)) != -1) {
        if (c == 'h') {
            fputs (usage_text, stdout);
            exit (0);
        }
        if (c != 'R') {
            fputs (usage_text, stderr);
            return -1;
        }
    }
    if (optind != argc - 1 || !isdigit_str (argv[optind])) {
        fputs (usage_text, stderr);
        return -1;
    }
    errno = 0;
    *id = strtoull (argv[optind], &end, 10);
    return errno || *end ? -1 : 0;
}

/* Run until the tasks are done, then (the leader) until every other
 * shell's last output is in.  -1 with errno when the connection to the
 * broker failed (killed, or its node lost): nobody else will ever end
 * the tasks, and the leader can neither write what it holds nor hear
 * from the other shells, so it must not wait for them.
 */
static int shell_run (struct shell *shell)
{
    if (shell->nactive > 0 && !shell->failed
        && flux_reactor_run (shell->r, 0) < 0)
        return -1;
    /* the tasks are done before barrier 2 is through: leaving now would
     * fail the other shells' barrier (start2_cb stops the reactor) */
    if (shell->start2_f && !shell->failed && flux_reactor_run (shell->r, 0) < 0)
        return -1;
    if (!shell->failed && output_wait (shell->out) < 0)
        return -1;
    return 0;
}

/* A job shell: exec'd, or forked by the launcher (launcher.c). */
static int shell_main (int argc, char **argv)
{
    struct shell shell = {0};
    flux_error_t error = {.text = ""};
    uint64_t id;
    uint32_t seed;
    int rc;

    if (parse_args (argc, argv, &id) < 0)
        return 1;
    /* jansson seeds its hash function at the first object from
     * /dev/urandom (open, read, close): one getrandom() does */
    if (getrandom (&seed, sizeof (seed), GRND_NONBLOCK) == sizeof (seed))
        json_object_seed (seed ? seed : 1);
    shell.gathering = true;
    if (shell_init (&shell, id, &error) < 0) {
        shell_fatal (&shell, 1, "%s", error.text);
        goto done;
    }
    if ((rc = shell_start (&shell, &error)) != 0) {
        if (rc < 0 && error.text[0])
            shell_fatal (&shell, shell.exit_code > 0 ? shell.exit_code : 1,
                         "%s", error.text);
        goto wait;
    }
    if (shell_run (&shell) < 0)
        shell_fatal (&shell, 1, "lost the broker: %s", strerror (errno));
wait:
    /* after a fatal error the tasks got SIGKILL: reap them, but do not
     * wait for output that processes they started may still hold */
    while (shell.failed && tasks_running (&shell))
        if (uv_run (shell.loop, UV_RUN_ONCE) == 0)
            break;
done:
    shell_finish (&shell);
    return shell.exit_code;
}

int main (int argc, char **argv)
{
    /* before anything initializes a library: the launcher's children are
     * forks of it (launch.h) */
    if (argc == 3 && !strcmp (argv[1], "--launcher")) {
        char *end;
        long fd = strtol (argv[2], &end, 10);
        if (*end || end == argv[2] || fd < 3 || fd > 65535) {
            fputs (usage_text, stderr);
            return 1;
        }
        return launcher_serve ((int)fd, shell_main, argv);
    }
    return shell_main (argc, argv);
}
