/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* realexec.c - real execution: every job without
 * attributes.system.exec.test runs its job shells through the exec agents
 * (src/modules/exec-agent, doc/guide/exec.md).
 *
 * Start: R is read from job.<id>.R (the core decodes it but keeps only
 * what it needs); the jobspec is the one of the start request, which the
 * job manager sends whole.  One streaming exec-agent.start goes to the
 * agent of rank 0, which takes it down the tree; its responses are
 * already combined per subtree:
 *   started  once every rank started: execjob_started() ("start")
 *   exited   a partial release of those ranks (several per response),
 *            until the last ones: finish with the largest wait status,
 *            then the final release (execjob_done)
 *   failed   a shell could not start: an "exec" exception with the
 *            agent's reason, the rest of the job killed; or, with a
 *            signal status, shells killed by a signal (signaled())
 *   lost     brokers lost: a "node-failure" exception naming the hosts
 *            and ranks ("node failure on node[2-3] (ranks 2-3)"),
 *            the rest killed; or, when none of them holds a critical
 *            shell rank (job-exec.critical-ranks), a severity 2
 *            "node-failure" and the job goes on (flux-core's lost
 *            shell), unless the agent saw the loss before the start
 *            barriers were through (status 1: fatal, the other shells
 *            cannot start their tasks); the lost ranks count as
 *            finished (status 0)
 *            and are released with the others (the resource module has
 *            marked them down, so the scheduler does not hand them out)
 *   ENODATA  every rank accounted for (any that is not counts as lost)
 *
 * Kill sequence (cancel): SIGTERM to each shell, then every kill-timeout
 * (module option, default 5 s) SIGKILL to each shell's process group,
 * until the job ends.  The expiration (the core raises "timeout" and
 * calls kill with SIGALRM) first sends SIGALRM to the shells, which pass
 * it to their tasks (exit 142, as flux-core's); the echoed exception then
 * starts the sequence above.
 *
 * Shell exit timeout: once the leader shell (the job's first rank) has
 * exited, the others get shell-exit-timeout (module option, default 30 s,
 * 0 for none) to exit too, then the job ends with a fatal exception
 * naming where shells are still active.
 *
 * Reattach (job-exec reloaded while shells run): the start goes to the
 * agent with reattach:true; the agent re-binds its stream and replays what
 * happened meanwhile, so the job goes on as if nothing happened.
 *
 * Module options (job-exec kill-timeout=FSD job-shell=PATH) come from
 * main.c through the handle's aux "job-exec::options".
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <syslog.h>

#include "impl.h"
#include "libkvs/kvs.h"
#include "libutil/fluid.h"
#include "libutil/fsd.h"

#define DEFAULT_KILL_TIMEOUT 5.
#define DEFAULT_SHELL_EXIT_TIMEOUT 30.

struct realexec {
    exec_t *x;
    double kill_timeout;
    double shell_exit_timeout; /* 0: none */
    char *job_shell;           /* NULL: the agents' default */
    struct {
        unsigned long jobs, started, release, failed, lost, kill, reattach;
        unsigned long lost_noncritical, signaled;
    } stats;
};

struct realjob {
    struct execjob *job;
    struct realexec *re;
    json_t *jobspec;
    json_t *R;             /* for hostnames in messages */
    flux_future_t *f_R;    /* job.<id>.R lookup */
    flux_future_t *f;      /* the agents' stream */
    flux_future_t *f_kill; /* the last kill sent */
    struct idset *started, *finished;
    int status;
    bool started_sent, exception, killing;
    struct tq_entry killt;
    struct tq_entry exitt; /* shell-exit-timeout */
};

static struct realjob *container_of_killt (struct tq_entry *e)
{
    return (struct realjob *)((char *)e - offsetof (struct realjob, killt));
}

static struct realjob *container_of_exitt (struct tq_entry *e)
{
    return (struct realjob *)((char *)e - offsetof (struct realjob, exitt));
}

static const char *jobstr (struct realjob *rj)
{
    static __thread char buf[32];
    snprintf (buf, sizeof (buf), "%ju", (uintmax_t)execjob_id (rj->job));
    return buf;
}

/* ---- the kill sequence ---- */

static void kill_continuation (flux_future_t *f, void *arg)
{
    struct realjob *rj = arg;

    if (flux_future_get (f, NULL) < 0 && errno != ENOENT)
        exec_log (rj->re->x, LOG_DEBUG, "%s: exec-agent.kill: %s", jobstr (rj),
                  future_strerror (f, errno));
    if (rj->f_kill == f)
        rj->f_kill = NULL;
    flux_future_destroy (f);
}

static void send_kill (struct realjob *rj, int signum, bool pgrp)
{
    flux_t *h = exec_handle (rj->re->x);

    rj->re->stats.kill++;
    flux_future_destroy (rj->f_kill);
    if (!(rj->f_kill = flux_rpc_pack (
              h, "exec-agent.kill", 0, 0, "{s:I s:i s:b}", "id",
              (json_int_t)execjob_id (rj->job), "signum", signum, "pgrp", pgrp))
        || flux_future_then (rj->f_kill, -1., kill_continuation, rj) < 0) {
        exec_log (rj->re->x, LOG_ERR, "%s: exec-agent.kill: %s", jobstr (rj),
                  strerror (errno));
        flux_future_destroy (rj->f_kill);
        rj->f_kill = NULL;
    }
}

static void killt_cb (struct tq_entry *e)
{
    struct realjob *rj = container_of_killt (e);

    send_kill (rj, SIGKILL, true);
    (void)timerq_arm (exec_timerq (rj->re->x), &rj->killt,
                      rj->re->kill_timeout);
}

static void kill_begin (struct realjob *rj)
{
    rj->exception = true;
    if (rj->killing || !rj->f)
        return;
    rj->killing = true;
    send_kill (rj, SIGTERM, false);
    if (timerq_arm (exec_timerq (rj->re->x), &rj->killt, rj->re->kill_timeout)
        < 0)
        exec_log (rj->re->x, LOG_ERR, "%s: arming the kill timer: %s",
                  jobstr (rj), strerror (errno));
}

/* The leader shell exited shell-exit-timeout ago and others still run. */
static void exitt_cb (struct tq_entry *e)
{
    struct realjob *rj = container_of_exitt (e);
    struct idset *rest;
    char buf[200] = "some ranks";
    char fsd[64];

    if (rj->exception)
        return;
    if ((rest = idset_difference (execjob_ranks (rj->job), rj->finished))) {
        execjob_where (rj->job, rest, buf, sizeof (buf));
        idset_destroy (rest);
    }
    if (fsd_format_duration (fsd, sizeof (fsd), rj->re->shell_exit_timeout) < 0)
        snprintf (fsd, sizeof (fsd), "%gs", rj->re->shell_exit_timeout);
    rj->exception = true;
    execjob_fatal (rj->job,
                   "job shells still active on %s %s after leader shell exit",
                   buf, fsd);
}

/* ---- progress ---- */

/* All ranks finished: finish (if the job started) and the final release. */
static void complete (struct realjob *rj)
{
    int status = rj->status;

    if (rj->started_sent) {
        if (status == 0 && rj->exception)
            status = 1 << 8; /* as flux-core: a job with a fatal exception
                                did not succeed */
        execjob_finish (rj->job, status);
    }
    execjob_done (rj->job); /* frees rj */
}

/* ranks finished (exited, failed, lost): release them, or end the job. */
static void finished (struct realjob *rj, struct idset *ranks, int status)
{
    const struct idset *all = execjob_ranks (rj->job);
    struct idset *fresh;

    if (status > rj->status)
        rj->status = status;
    if (!(fresh = idset_difference (ranks, rj->finished))
        || idset_add (rj->finished, fresh) < 0) {
        idset_destroy (fresh);
        execjob_fatal (rj->job, "out of memory");
        return;
    }
    if (idset_count (rj->finished) >= idset_count (all)) {
        /* The last ranks are free as soon as their shells are gone: the
         * final release waits for the guest namespace's copy (a synced
         * commit), and the scheduler may hand them out meanwhile. */
        if (!idset_empty (fresh)) {
            if (execjob_release (rj->job, fresh) < 0)
                exec_log (rj->re->x, LOG_ERR, "%s: release: %s", jobstr (rj),
                          strerror (errno));
            else
                rj->re->stats.release++;
        }
        idset_destroy (fresh);
        complete (rj);
        return;
    }
    if (!rj->exception && rj->re->shell_exit_timeout > 0.
        && idset_test (fresh, idset_first (all))
        && timerq_arm (exec_timerq (rj->re->x), &rj->exitt,
                       rj->re->shell_exit_timeout)
               < 0)
        exec_log (rj->re->x, LOG_ERR, "%s: arming shell-exit-timeout: %s",
                  jobstr (rj), strerror (errno));
    if (!idset_empty (fresh)) {
        if (execjob_release (rj->job, fresh) < 0)
            exec_log (rj->re->x, LOG_ERR, "%s: partial release: %s",
                      jobstr (rj), strerror (errno));
        else
            rj->re->stats.release++;
    }
    idset_destroy (fresh);
}

static void started (struct realjob *rj, struct idset *ranks)
{
    const struct idset *all = execjob_ranks (rj->job);

    if (idset_add (rj->started, ranks) < 0)
        return;
    if (!rj->started_sent && idset_count (rj->started) >= idset_count (all)) {
        rj->started_sent = true;
        rj->re->stats.started++;
        execjob_started (rj->job);
    }
}

/* The stream is gone (error, or ended early): what has not finished is
 * lost.  Frees rj. */
static void stream_gone (struct realjob *rj, const char *why)
{
    struct idset *rest;

    flux_future_destroy (rj->f);
    rj->f = NULL;
    timerq_disarm (exec_timerq (rj->re->x), &rj->killt);
    if (!rj->exception) {
        rj->exception = true;
        execjob_fatal (rj->job, "exec-agent: %s", why); /* cancel: below */
        return;
    }
    if ((rest = idset_difference (execjob_ranks (rj->job), rj->finished))) {
        finished (rj, rest, 0);
        idset_destroy (rest);
    }
    else
        complete (rj);
}

/* As flux-core's job-exec: tell the leader shell (on the job's first
 * rank) that a shell is lost, `<uid>-shell-<f58plain>.exception
 * {type:"lost-shell", severity, shell_rank, message}`, so that it stops
 * waiting for that shell's output.  The answer is not waited for.
 */
static void tell_leader_lost (struct realjob *rj, const struct idset *shells,
                              int severity, const char *message)
{
    flux_t *h = exec_handle (rj->re->x);
    unsigned int leader = idset_first (execjob_ranks (rj->job));
    char id[FLUID_STRING_MAX], topic[128];

    if (!shells || idset_test (shells, 0) /* the leader itself is lost */
        || fluid_encode (id, sizeof (id), execjob_id (rj->job),
                         FLUID_STRING_F58_PLAIN)
               < 0)
        return;
    snprintf (topic, sizeof (topic), "%u-shell-%s.exception",
              (unsigned)execjob_userid (rj->job), id);
    for (unsigned int r = idset_first (shells); r != IDSET_INVALID_ID;
         r = idset_next (shells, r)) {
        flux_future_t *f = flux_rpc_pack (
            h, topic, leader, FLUX_RPC_NORESPONSE, "{s:s s:i s:i s:s}", "type",
            "lost-shell", "severity", severity, "shell_rank", (int)r, "message",
            message);
        if (!f)
            exec_log (rj->re->x, LOG_ERR, "%ju: telling the leader shell: %s",
                      (uintmax_t)execjob_id (rj->job), strerror (errno));
        flux_future_destroy (f);
    }
}

/* Lost ranks that hold no critical shell rank (job-exec.critical-ranks,
 * as a sub-instance sets them: its rank 0 and tree interior): as
 * flux-core, a "node-failure" exception of severity 2 naming the shell
 * ranks; the job goes on, and the lost ranks are released as finished
 * (status 0) by the caller.
 */
static void lost_noncritical (struct realjob *rj, struct idset *ranks)
{
    struct idset *shell = execjob_shell_ranks (rj->job, ranks);
    char where[200], msg[256];

    rj->re->stats.lost_noncritical++;
    execjob_where_shells (rj->job, ranks, where, sizeof (where));
    snprintf (msg, sizeof (msg), "node failure on %s", where);
    execjob_raise_nonfatal (rj->job, 2, "node-failure", "%s", msg);
    tell_leader_lost (rj, shell, 2, msg);
    idset_destroy (shell);
}

/* Shells killed by a signal while their brokers live (the agent reports
 * them as failed with a signal status): as flux-core, the leader is told
 * (lost-shell: it stops waiting for their output) unless it is among
 * them or already done, and "shell rank N (on HOST): SIGNAL" is a fatal
 * exec exception when one of them is the leader or a critical rank, else
 * a severity 2 node-failure and the job goes on.  Their status counts in
 * the job's (the caller).
 */
static void signaled (struct realjob *rj, struct idset *ranks, int status)
{
    unsigned int leader = idset_first (execjob_ranks (rj->job));
    bool has_leader = idset_test (ranks, leader);
    struct idset *shells = execjob_shell_ranks (rj->job, ranks);
    bool fatal = has_leader || execjob_critical (rj->job, ranks);
    char where[200], msg[256];

    rj->re->stats.signaled++;
    execjob_shells_on (rj->job, ranks, where, sizeof (where));
    snprintf (msg, sizeof (msg), "%s: %s", where,
              strsignal (WTERMSIG (status)));
    if (!has_leader && !rj->killing && !idset_test (rj->finished, leader))
        tell_leader_lost (rj, shells, fatal ? 0 : 2, msg);
    if (!rj->exception) {
        if (fatal) {
            rj->exception = true;
            execjob_fatal (rj->job, "%s", msg); /* the core cancels */
        }
        else
            execjob_raise_nonfatal (rj->job, 2, "node-failure", "%s", msg);
    }
    idset_destroy (shells);
}

/* Brokers lost.  early: the agent that saw it had not let the job's
 * shells through their start barriers, so the lost shells never ran
 * their tasks and the others cannot start theirs (their barrier fails):
 * the job cannot go on even if the ranks were not critical.
 */
static void lost (struct realjob *rj, struct idset *ranks, bool early)
{
    struct idset *shell;
    char buf[200];

    rj->re->stats.lost++;
    if (!rj->exception && !early && !execjob_critical (rj->job, ranks)) {
        lost_noncritical (rj, ranks);
        return;
    }
    if (!rj->exception) {
        rj->exception = true;
        execjob_where (rj->job, ranks, buf, sizeof (buf));
        execjob_raise (rj->job, "node-failure", "node failure on %s%s", buf,
                       early ? " before the job's tasks started" : "");
    }
    /* the job is killed, but its leader would wait for the lost shells'
     * last output until the kill sequence's SIGKILL (losing what it has
     * not written): tell it, as for a non-critical loss */
    if ((shell = execjob_shell_ranks (rj->job, ranks))) {
        char msg[256];
        execjob_where (rj->job, ranks, buf, sizeof (buf));
        snprintf (msg, sizeof (msg), "node failure on %s", buf);
        tell_leader_lost (rj, shell, 0, msg);
        idset_destroy (shell);
    }
    kill_begin (rj);
}

static void agent_continuation (flux_future_t *f, void *arg)
{
    struct realjob *rj = arg;
    const char *type, *ranks, *error = NULL;
    char typebuf[16], errbuf[256];
    int status = 0;
    struct idset *ids;

    if (flux_rpc_get_unpack (f, "{s:s s:s s?i s?s}", "type", &type, "ranks",
                             &ranks, "status", &status, "error", &error)
        < 0) {
        char why[256];
        if (errno == ENODATA)
            snprintf (why, sizeof (why),
                      "the stream ended with ranks "
                      "unaccounted for");
        else
            snprintf (why, sizeof (why), "%s", future_strerror (f, errno));
        stream_gone (rj, why);
        return;
    }
    if (!(ids = idset_decode (ranks))
        || !idset_has_intersection (ids, execjob_ranks (rj->job))) {
        exec_log (rj->re->x, LOG_ERR,
                  "%s: malformed %s response from the agent", jobstr (rj),
                  type);
        idset_destroy (ids);
        flux_future_reset (f);
        return;
    }
    /* the strings go with the response: copy them before the reset */
    snprintf (typebuf, sizeof (typebuf), "%s", type);
    snprintf (errbuf, sizeof (errbuf), "%s", error ? error : "shell failed");
    flux_future_reset (f);
    if (!strcmp (typebuf, "started"))
        started (rj, ids);
    else if (!strcmp (typebuf, "exited"))
        finished (rj, ids, status);
    else if (!strcmp (typebuf, "failed") && WIFSIGNALED (status)) {
        signaled (rj, ids, status);
        finished (rj, ids, status);
    }
    else if (!strcmp (typebuf, "failed")) {
        rj->re->stats.failed++;
        if (!rj->exception) {
            rj->exception = true;
            execjob_fatal (rj->job, "%s", errbuf);
            /* the core called cancel: the kill sequence is on */
        }
        finished (rj, ids, status);
    }
    else if (!strcmp (typebuf, "lost")) {
        lost (rj, ids, status != 0);
        finished (rj, ids, 0);
    }
    else
        exec_log (rj->re->x, LOG_ERR, "%s: unknown response type %s",
                  jobstr (rj), typebuf);
    idset_destroy (ids); /* rj may be gone, ids is ours */
}

/* ---- start ---- */

static int send_start (struct realjob *rj, json_t *R, flux_error_t *error)
{
    struct realexec *re = rj->re;
    flux_t *h = exec_handle (re->x);
    char *ranks = NULL;
    json_t *opts;

    if (!(ranks = idset_encode (execjob_ranks (rj->job), IDSET_FLAG_RANGE))
        || !(opts = json_pack ("{s:f}", "kill-timeout", re->kill_timeout))
        || (re->job_shell
            && json_object_set_new (opts, "job-shell",
                                    json_string (re->job_shell))
                   < 0)) {
        free (ranks);
        return errprintf (error, "out of memory");
    }
    rj->f = flux_rpc_pack (h, "exec-agent.start", 0, FLUX_RPC_STREAMING,
                           "{s:I s:i s:s s:O s:O s:b s:o}", "id",
                           (json_int_t)execjob_id (rj->job), "userid",
                           (int)execjob_userid (rj->job), "ranks", ranks, "R",
                           R, "jobspec", rj->jobspec, "reattach",
                           execjob_reattach (rj->job), "opts", opts);
    free (ranks);
    if (!rj->f || flux_future_then (rj->f, -1., agent_continuation, rj) < 0) {
        flux_future_destroy (rj->f);
        rj->f = NULL;
        return errprintf (error, "exec-agent.start: %s", strerror (errno));
    }
    if (execjob_reattach (rj->job))
        re->stats.reattach++;
    return 0;
}

static void R_continuation (flux_future_t *f, void *arg)
{
    struct realjob *rj = arg;
    flux_error_t error;
    json_t *R;

    rj->f_R = NULL;
    if (flux_kvs_lookup_get_unpack (f, "o", &R) < 0) {
        execjob_fatal (rj->job, "reading R: %s", future_strerror (f, errno));
        flux_future_destroy (f);
        return;
    }
    rj->R = json_incref (R);
    if (send_start (rj, R, &error) < 0)
        execjob_fatal (rj->job, "%s", error.text);
    flux_future_destroy (f);
}

static int realexec_start (struct execjob *job, flux_error_t *error)
{
    struct realjob *rj = execjob_data (job);
    char key[FLUID_STRING_MAX + 8];
    json_t *R;

    /* R as the job manager sent it (it is what the scheduler committed):
     * no KVS lookup per job */
    if ((R = execjob_R (job))) {
        rj->R = json_incref (R);
        return send_start (rj, R, error);
    }
    if (fluid_encode (key, sizeof (key), execjob_id (job), FLUID_STRING_KVS)
        < 0)
        return errprintf (error, "encoding the job id: %s", strerror (errno));
    strcat (key, ".R");
    if (!(rj->f_R = flux_kvs_lookup (exec_handle (rj->re->x), NULL, 0, key))
        || flux_future_then (rj->f_R, -1., R_continuation, rj) < 0) {
        flux_future_destroy (rj->f_R);
        rj->f_R = NULL;
        return errprintf (error, "reading R: %s", strerror (errno));
    }
    return 0;
}

static int realexec_init (struct execjob *job, json_t *jobspec,
                          flux_error_t *error)
{
    struct realexec *re = execjob_impl_data (job);
    struct realjob *rj;
    json_t *shell = NULL;

    if (json_unpack (jobspec, "{s:{s:{s:{s:o}}}}", "attributes", "system",
                     "exec", "job_shell", &shell)
            == 0
        && (!json_is_string (shell) || !*json_string_value (shell)))
        return errprintf (error, "attributes.system.exec.job_shell must be "
                                 "a path");
    if (!(rj = calloc (1, sizeof (*rj)))
        || !(rj->started = idset_create (0, IDSET_FLAG_AUTOGROW))
        || !(rj->finished = idset_create (0, IDSET_FLAG_AUTOGROW))) {
        if (rj) {
            idset_destroy (rj->started);
            free (rj);
        }
        return errprintf (error, "out of memory");
    }
    rj->job = job;
    rj->re = re;
    rj->jobspec = json_incref (jobspec);
    tq_entry_init (&rj->killt, killt_cb);
    tq_entry_init (&rj->exitt, exitt_cb);
    execjob_set_data (job, rj);
    re->stats.jobs++;
    return 1;
}

/* The core's expiration (SIGALRM, after the "timeout" exception): the
 * signal goes to the shells, which pass it to their tasks; the echoed
 * exception then cancels (kill_begin).  SIGTERM or SIGKILL starts the
 * kill sequence at once.
 */
static void realexec_kill (struct execjob *job, int signum)
{
    struct realjob *rj = execjob_data (job);

    if (!rj)
        return;
    rj->exception = true;
    if (signum == SIGTERM || signum == SIGKILL || signum <= 0)
        kill_begin (rj);
    else if (rj->f && !rj->killing)
        send_kill (rj, signum, false);
}

static void realexec_cancel (struct execjob *job)
{
    struct realjob *rj = execjob_data (job);

    if (!rj) {
        execjob_done (job);
        return;
    }
    rj->exception = true;
    if (!rj->f) {
        /* nothing runs: R not read yet, or the stream is gone */
        struct idset *rest;
        if (rj->f_R
            || !(rest = idset_difference (execjob_ranks (job), rj->finished))) {
            execjob_done (job);
            return;
        }
        finished (rj, rest, 0);
        idset_destroy (rest);
        return;
    }
    kill_begin (rj);
}

static void realexec_exit (struct execjob *job)
{
    struct realjob *rj = execjob_data (job);

    if (rj) {
        timerq_disarm (exec_timerq (rj->re->x), &rj->killt);
        timerq_disarm (exec_timerq (rj->re->x), &rj->exitt);
        flux_future_destroy (rj->f_R);
        flux_future_destroy (rj->f);
        flux_future_destroy (rj->f_kill);
        idset_destroy (rj->started);
        idset_destroy (rj->finished);
        json_decref (rj->jobspec);
        json_decref (rj->R);
        free (rj);
    }
}

static int realexec_setup (exec_t *x, void **data, flux_error_t *error)
{
    struct realexec *re;
    json_t *opts = flux_aux_get (exec_handle (x), "job-exec::options");
    const char *shell = NULL;
    double kill_timeout = DEFAULT_KILL_TIMEOUT;
    double shell_exit_timeout = DEFAULT_SHELL_EXIT_TIMEOUT;

    if (opts
        && json_unpack (opts, "{s?F s?s s?F}", "kill-timeout", &kill_timeout,
                        "job-shell", &shell, "shell-exit-timeout",
                        &shell_exit_timeout)
               < 0)
        return errprintf (error, "realexec: malformed options");
    if (!(re = calloc (1, sizeof (*re)))
        || (shell && !(re->job_shell = strdup (shell)))) {
        free (re);
        return errprintf (error, "out of memory");
    }
    re->x = x;
    re->kill_timeout = kill_timeout;
    re->shell_exit_timeout = shell_exit_timeout;
    *data = re;
    return 0;
}

static void realexec_teardown (void *data)
{
    struct realexec *re = data;

    if (re) {
        free (re->job_shell);
        free (re);
    }
}

static json_t *realexec_stats (void *data)
{
    struct realexec *re = data;

    return json_pack (
        "{s:f s:f s:I s:I s:I s:I s:I s:I s:I s:I s:I}", "kill-timeout",
        re->kill_timeout, "shell-exit-timeout", re->shell_exit_timeout, "jobs",
        (json_int_t)re->stats.jobs, "started", (json_int_t)re->stats.started,
        "release", (json_int_t)re->stats.release, "failed",
        (json_int_t)re->stats.failed, "lost", (json_int_t)re->stats.lost,
        "kill", (json_int_t)re->stats.kill, "reattach",
        (json_int_t)re->stats.reattach, "lost-noncritical",
        (json_int_t)re->stats.lost_noncritical, "signaled",
        (json_int_t)re->stats.signaled);
}

const struct exec_impl realexec_impl = {
    .name = "realexec",
    .setup = realexec_setup,
    .teardown = realexec_teardown,
    .init = realexec_init,
    .start = realexec_start,
    .kill = realexec_kill,
    .cancel = realexec_cancel,
    .exit = realexec_exit,
    .stats = realexec_stats,
};
