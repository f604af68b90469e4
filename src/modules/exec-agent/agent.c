/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* agent.c - the exec agent (see agent.h and doc/guide/exec.md).
 *
 * A job here: the upstream start request (NULL while orphaned), the job's
 * share below this broker (reduce.h), one streaming start per child
 * whose subtree holds ranks of the job, the local shell (proc.h) if this
 * rank is in R, and the barrier of the job's shells (barrier.h).
 *
 * Lifetime: a job is freed once its share finished and the end of the
 * stream (ENODATA) went upstream.  An orphaned job (its upstream went
 * away: job-exec was reloaded) stays, shells running, until a reattach
 * start re-binds it; one that finishes while orphaned waits for it too,
 * up to ORPHANS_MAX such jobs.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "agent.h"
#include "barrier.h"
#include "hwxml.h"
#include "launcher.h"
#include "libutil/dirempty.h"
#include "libutil/fluid.h"
#include "libutil/idtab.h"
#include "proc.h"
#include "reduce.h"
#include "shell/killsig.h"
#include "shell/launch.h"
#include "shellcmd.h"
#include "overlay/topology.h"
#include "topo.h"

extern char **environ;

#define ORPHANS_MAX 1000
/* At most this many `rm -rf` of killed shells' tmpdirs at once (beyond:
 * logged, the directory stays) */
#define TMPDIR_REMOVALS_MAX 8
/* Empty tmpdirs kept for the next shells (see tmpdir_lend) */
#define TMPDIR_SPARES_MAX 64

struct child {
    struct ajob *job;
    uint32_t rank;
    struct idset *share;
    flux_future_t *f;
    bool ended;
};

struct ajob {
    struct idtab_entry entry;
    struct agent *a;
    const flux_msg_t *up;  /* upstream start request, NULL: orphaned */
    const flux_msg_t *req; /* the first start request (its payload) */
    uint32_t userid;
    struct idset *ranks;
    char *ranks_str;
    json_t *R, *jobspec, *opts;
    int shell_rank, nshells; /* shell_rank -1: no shell here */
    struct reduce *red;
    struct child *children;
    int nchildren;
    struct proc *proc;
    uv_timer_t *timer;
    bool timer_armed;
    struct barrier *barrier;
    flux_future_t *barrier_f; /* our entry in the parent's barrier */
    size_t barrier_bytes;     /* payload bytes of the entries held */
    char barrier_why[160];    /* why the barrier failed, "": a shell
                                 exited or the job is being killed */
    int barrier_errnum;       /* the errno that goes with barrier_why */
    bool killed;              /* exec-agent.kill was asked for it here */
    bool ended;               /* ENODATA sent, or finished while orphaned */
    bool implicit_ok;         /* the last exits (status 0) go as ENODATA */
    struct {
        unsigned long from_children, to_parent;
    } stats;
};

struct killop {
    struct agent *a;
    const flux_msg_t *msg;
    int pending;
    struct killop *next, *prev;
    int nf;
    flux_future_t *f[]; /* one per child (at most the fanout) */
};

struct agent {
    flux_t *h;
    uv_loop_t *loop;
    struct topo topo;
    uint32_t owner;
    char *uri;
    char *rundir; /* the broker's, for the shells (NULL: none) */
    char *job_shell;
    char *imp;          /* NULL: guests' jobs fail */
    char *helper;       /* FLUX_IMP_EXEC_HELPER without the id */
    struct hwcores *hw; /* this node's cores, for the shells (hwxml.h) */
    bool hw_tried;
    double window;
    double release_window;
    double unload_grace;
    bool verbose;        /* conf->verbose */
    bool use_launcher;   /* the owner's default shells: through the launcher */
    size_t barrier_max;  /* conf->barrier_max */
    size_t barrier_held; /* sum of the jobs' barrier_bytes */
    struct launcher *launcher; /* started at the first such shell */
    bool launcher_logged;      /* a fallback to posix_spawn was logged */
    struct idtab *jobs;
    size_t orphans_done;
    struct killop *killops;
    struct proc *removals[TMPDIR_REMOVALS_MAX]; /* rm -rf of tmpdirs */
    char *spares[TMPDIR_SPARES_MAX];            /* empty tmpdirs, a stack */
    int nspares;
    unsigned long spare_seq;
    struct {
        unsigned long child_requests, child_responses, child_errors;
        unsigned long child_type[REDUCE_NTYPES], child_end;
        unsigned long implicit_exits; /* exited reports said by ENODATA */
        unsigned long sent_type[REDUCE_NTYPES];
        unsigned long shells_started, shells_failed, shells_exited;
        unsigned long shells_forked;    /* by the launcher */
        unsigned long launch_fallbacks; /* eligible, but posix_spawned */
        unsigned long info_given;       /* shell-info in a forked shell's
                                           environment */
        unsigned long info_asked;       /* shell-info requests answered */
        unsigned long launcher_starts, launcher_deaths, launcher_lost;
        unsigned long tmpdirs_removed, tmpdirs_left, tmpdirs_reused;
        unsigned long jobs, reattach, kills, barriers, bad_request;
        unsigned long barriers_too_big;
        size_t barrier_held_max;
    } stats;
};

static void job_flush (struct ajob *job);
static void job_report (struct ajob *job, enum reduce_type type,
                        const struct idset *ranks, int status,
                        const char *error);

/* ---- responses ---- */

static void respond_error (struct agent *a, const flux_msg_t *msg, int errnum,
                           const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));

static void respond_error (struct agent *a, const flux_msg_t *msg, int errnum,
                           const char *fmt, ...)
{
    char buf[256];
    va_list ap;

    if (errnum == EPROTO)
        a->stats.bad_request++;
    if (fmt) {
        va_start (ap, fmt);
        vsnprintf (buf, sizeof (buf), fmt, ap);
        va_end (ap);
    }
    if (flux_respond_error (a->h, msg, errnum, fmt ? buf : NULL) < 0)
        flux_log (a->h, LOG_ERR, "responding: %s", strerror (errno));
}

/* ---- jobs ---- */

static void fail_entry (void *entry, void *arg)
{
    struct ajob *job = arg;
    const flux_msg_t *msg = entry;

    if (job->barrier_why[0])
        respond_error (job->a, msg, job->barrier_errnum, "%s",
                       job->barrier_why);
    else
        respond_error (job->a, msg, EIO,
                       "a shell of job %ju exited or the job "
                       "is being killed",
                       (uintmax_t)job->entry.id);
    flux_msg_decref (msg);
}

/* The entries of job's round are answered or dropped: they no longer
 * count against the agent's barrier_max. */
static void barrier_bytes_drop (struct ajob *job)
{
    job->a->barrier_held -= job->barrier_bytes;
    job->barrier_bytes = 0;
}

/* Answer every entry held with an error (fail_entry), refuse later ones. */
static void job_barrier_fail (struct ajob *job)
{
    barrier_fail (job->barrier, fail_entry, job);
    barrier_bytes_drop (job);
}

static void job_free (struct ajob *job)
{
    if (!job)
        return;
    idtab_remove (job->a->jobs, &job->entry);
    if (job->barrier) {
        job_barrier_fail (job);
        barrier_destroy (job->barrier);
    }
    flux_future_destroy (job->barrier_f);
    for (int i = 0; i < job->nchildren; i++) {
        flux_future_destroy (job->children[i].f);
        idset_destroy (job->children[i].share);
    }
    free (job->children);
    proc_destroy (job->proc);
    if (job->timer)
        flux_uv_close_free ((uv_handle_t *)job->timer);
    reduce_destroy (job->red);
    json_decref (job->R);
    json_decref (job->jobspec);
    json_decref (job->opts);
    free (job->ranks_str);
    idset_destroy (job->ranks);
    flux_msg_decref (job->up);
    flux_msg_decref (job->req);
    free (job);
}

/* The share finished and everything held went up: end the stream. */
static void job_end (struct ajob *job)
{
    struct agent *a = job->a;

    if (job->ended)
        return;
    if (!job->up) {
        /* orphaned: keep the outcome for a reattach, within bounds */
        if (a->orphans_done >= ORPHANS_MAX) {
            flux_log (a->h, LOG_ERR,
                      "%ju: finished while orphaned, and %d such jobs wait "
                      "already: forgotten",
                      (uintmax_t)job->entry.id, ORPHANS_MAX);
            job_free (job);
            return;
        }
        job->ended = true;
        a->orphans_done++;
        return;
    }
    if (flux_respond_error (a->h, job->up, ENODATA, NULL) < 0)
        flux_log (a->h, LOG_ERR, "%ju: end of stream: %s",
                  (uintmax_t)job->entry.id, strerror (errno));
    job_free (job);
}

static void emit_cb (enum reduce_type type, const struct idset *ranks,
                     int status, const char *error, void *arg)
{
    struct ajob *job = arg;
    struct agent *a = job->a;
    char *s;
    int rc;

    if (!job->up)
        return;
    if (job->implicit_ok && type == REDUCE_EXITED && status == 0) {
        a->stats.implicit_exits++;
        return; /* said by the ENODATA that follows (job_flush) */
    }
    if (!(s = idset_encode (ranks, IDSET_FLAG_RANGE))) {
        flux_log (a->h, LOG_ERR, "%ju: encoding ranks: %s",
                  (uintmax_t)job->entry.id, strerror (errno));
        return;
    }
    if (type == REDUCE_STARTED || (type == REDUCE_LOST && status == 0))
        rc = flux_respond_pack (a->h, job->up, "{s:s s:s}", "type",
                                reduce_typestr (type), "ranks", s);
    else if (type == REDUCE_EXITED || type == REDUCE_LOST)
        rc = flux_respond_pack (a->h, job->up, "{s:s s:s s:i}", "type",
                                reduce_typestr (type), "ranks", s, "status",
                                status);
    else
        rc = flux_respond_pack (a->h, job->up, "{s:s s:s s:i s:s}", "type",
                                "failed", "ranks", s, "status", status, "error",
                                error ? error : "");
    if (rc < 0)
        flux_log (a->h, LOG_ERR, "%ju: %s response: %s",
                  (uintmax_t)job->entry.id, reduce_typestr (type),
                  strerror (errno));
    else {
        a->stats.sent_type[type]++;
        job->stats.to_parent++;
    }
    free (s);
}

static void job_flush (struct ajob *job)
{
    if (job->timer_armed) {
        uv_timer_stop (job->timer);
        job->timer_armed = false;
    }
    /* Between agents, the end of the stream (ENODATA) also says that the
     * ranks of the share not reported otherwise exited with status 0, so
     * the usual last report, "exited" with status 0, is not sent: one
     * message fewer up each link of the job's tree.  job-exec on rank 0
     * gets every report, then ENODATA. */
    job->implicit_ok = job->a->topo.parent >= 0 && reduce_finished (job->red);
    reduce_flush (job->red, emit_cb, job);
    if (reduce_finished (job->red))
        job_end (job); /* may free job */
}

static void window_cb (uv_timer_t *t)
{
    struct ajob *job = t->data;

    job->timer_armed = false;
    job_flush (job);
}

/* Something changed: flush now if it completes what the receiver waits
 * for, else within the window. */
static void job_schedule (struct ajob *job)
{
    if (!reduce_held (job->red)) {
        if (reduce_finished (job->red))
            job_end (job);
        return;
    }
    double window = job->a->window;

    /* rank 0: every response about exited ranks becomes a release, a job
     * manager eventlog commit and so a setroot event to every broker;
     * partial exits wait longer there (the last one never waits) */
    if (job->a->topo.parent < 0 && reduce_held_finished_only (job->red)
        && job->a->release_window > window)
        window = job->a->release_window;
    if (reduce_urgent (job->red) || window <= 0.) {
        job_flush (job);
        return;
    }
    if (!job->timer_armed) {
        uint64_t ms = (uint64_t)(window * 1000. + 0.5);
        if (uv_timer_start (job->timer, window_cb, ms ? ms : 1, 0) < 0) {
            job_flush (job);
            return;
        }
        job->timer_armed = true;
    }
}

static void job_report (struct ajob *job, enum reduce_type type,
                        const struct idset *ranks, int status,
                        const char *error)
{
    if (reduce_add (job->red, type, ranks, status, error) < 0) {
        char *s = idset_encode (ranks, IDSET_FLAG_RANGE);
        flux_log (job->a->h, LOG_ERR, "%ju: %s report for ranks %s: %s",
                  (uintmax_t)job->entry.id, reduce_typestr (type), s ? s : "?",
                  strerror (errno));
        free (s);
        return;
    }
    if (type != REDUCE_STARTED && job->barrier)
        job_barrier_fail (job);
    job_schedule (job); /* may free job */
}

static void job_report_rank (struct ajob *job, enum reduce_type type,
                             int status, const char *error)
{
    struct idset *me = idset_create (0, IDSET_FLAG_AUTOGROW);

    if (!me || idset_set (me, job->a->topo.rank) < 0) {
        flux_log (job->a->h, LOG_ERR, "%ju: out of memory",
                  (uintmax_t)job->entry.id);
        idset_destroy (me);
        return;
    }
    job_report (job, type, me, status, error);
    idset_destroy (me);
}

/* ---- what a killed shell leaves ---- */

/* A shell killed by a signal (kill -9, the OOM killer, a crash, the
 * launcher lost) did not remove its FLUX_JOB_TMPDIR, and in a long-lived
 * instance the rundir would fill with them.  The owner's shells make it
 * in the rundir as jobtmp-<shell rank>-<id in f58plain> (src/shell/
 * shell.c); a guest's shell makes it where only it may write, and its
 * own cleanup is the IMP's business.  Empty, as most are: one rmdir.
 * Else `rm -rf` in the background (the tasks may have left any number of
 * files, and this thread serves the agent's messages), at most
 * TMPDIR_REMOVALS_MAX at once. */
static void removal_exit_cb (struct proc *p, int status, void *arg)
{
    struct agent *a = arg;

    for (int i = 0; i < TMPDIR_REMOVALS_MAX; i++) {
        if (a->removals[i] == p) {
            a->removals[i] = NULL;
            break;
        }
    }
    if (status == 0)
        a->stats.tmpdirs_removed++;
    else {
        a->stats.tmpdirs_left++;
        flux_log (a->h, LOG_ERR,
                  "removing a shell's tmpdir: rm exited"
                  " with status %d",
                  status);
    }
    proc_destroy (p);
}

static void removal_line_cb (struct proc *p, const char *stream,
                             const char *line, void *arg)
{
    struct agent *a = arg;

    flux_log (a->h, LOG_ERR, "removing a shell's tmpdir: %s", line);
}

/* Whether the agent looks after the job's shell's FLUX_JOB_TMPDIR (and
 * tells the shell so in shell-info): an owner's job with a shell here,
 * and a rundir to make it in. */
static bool tmpdir_managed (struct ajob *job)
{
    struct agent *a = job->a;

    return a->rundir && a->rundir[0] == '/' && job->userid == a->owner
           && job->shell_rank >= 0;
}

/* The job's shell's FLUX_JOB_TMPDIR as the shell names it in the rundir,
 * if the agent looks after it. */
static bool tmpdir_path (struct ajob *job, char *path, size_t size)
{
    struct agent *a = job->a;
    char id[32];

    return tmpdir_managed (job)
           && fluid_encode (id, sizeof (id), job->entry.id,
                            FLUID_STRING_F58_PLAIN)
                  == 0
           && snprintf (path, size, "%s/jobtmp-%d-%s", a->rundir,
                        job->shell_rank, id)
                  < (int)size;
}

/* A directory of ours at path, never what a symlink points to. */
static bool tmpdir_ours (const char *path, struct stat *sb)
{
    return lstat (path, sb) == 0 && S_ISDIR (sb->st_mode)
           && sb->st_uid == geteuid ();
}

static void remove_tmpdir (struct ajob *job)
{
    struct agent *a = job->a;
    char path[4096];
    struct stat sb;
    int slot = -1;
    flux_error_t error;

    if (!tmpdir_path (job, path, sizeof (path)) || !tmpdir_ours (path, &sb))
        return;
    if (rmdir (path) == 0) {
        a->stats.tmpdirs_removed++;
        return;
    }
    if (errno == ENOTEMPTY || errno == EEXIST) {
        char *argv[]
            = {"/bin/rm", "-rf", "--one-file-system", "--", path, NULL};
        for (int i = 0; i < TMPDIR_REMOVALS_MAX; i++) {
            if (!a->removals[i]) {
                slot = i;
                break;
            }
        }
        if (slot < 0)
            snprintf (error.text, sizeof (error.text), "%d removals running",
                      TMPDIR_REMOVALS_MAX);
        else if ((a->removals[slot]
                  = proc_spawn (a->loop, argv, environ, removal_exit_cb,
                                removal_line_cb, a, &error)))
            return;
    }
    else
        snprintf (error.text, sizeof (error.text), "%s", strerror (errno));
    a->stats.tmpdirs_left++;
    flux_log (a->h, LOG_ERR, "%ju: the shell's tmpdir %s stays: %s",
              (uintmax_t)job->entry.id, path, error.text);
}

/* Making and removing a directory are the dearest of a shell's file
 * system operations (on ext4 an inode to find and free, a block to
 * discard: a quarter of a millisecond here), and every job's shell has
 * its FLUX_JOB_TMPDIR.  So the owner's shells leave their tmpdir empty
 * (shell-info says tmpdir-reuse), the agent renames it to a spare
 * (jobtmp-spare-RANK-N: brokers may share a rundir) at the shell's exit, and
 * renames a spare to the next shell's tmpdir before it starts, which the shell
 * takes since it is a directory of its user that no one else may enter.  A
 * rename costs a tenth of either.  At most TMPDIR_SPARES_MAX spares are kept;
 * the rest, and all at unload, are removed. */
static void tmpdir_lend (struct ajob *job)
{
    struct agent *a = job->a;
    char path[4096];
    struct stat sb;

    if (a->nspares == 0 || !tmpdir_path (job, path, sizeof (path))
        || lstat (path, &sb) == 0)
        return;
    while (a->nspares > 0) {
        char *spare = a->spares[--a->nspares];
        int rc = rename (spare, path);
        free (spare);
        if (rc == 0) {
            a->stats.tmpdirs_reused++;
            return;
        }
    }
}

/* The shell is gone (or never ran): keep its tmpdir as a spare if it is
 * empty and as made (mode 0700), else remove it. */
static void tmpdir_reclaim (struct ajob *job)
{
    struct agent *a = job->a;
    char path[4096];
    char *spare;
    struct stat sb;

    if (!tmpdir_path (job, path, sizeof (path)) || !tmpdir_ours (path, &sb))
        return;
    if ((sb.st_mode & 07777) != 0700 || dir_empty (path) != 1
        || a->nspares == TMPDIR_SPARES_MAX
        || asprintf (&spare, "%s/jobtmp-spare-%u-%lu", a->rundir, a->topo.rank,
                     ++a->spare_seq)
               < 0) {
        remove_tmpdir (job);
        return;
    }
    if (rename (path, spare) < 0) {
        free (spare);
        remove_tmpdir (job);
        return;
    }
    a->spares[a->nspares++] = spare;
}

/* ---- the local shell ---- */

static void shell_exit_cb (struct proc *p, int status, void *arg)
{
    struct ajob *job = arg;

    job->a->stats.shells_exited++;
    /* every log line of a rank > 0 goes up the tree hop by hop to rank
     * 0: two per shell were a sixth of the messages of a -N64 job */
    if (job->a->verbose || status != 0)
        flux_log (job->a->h, LOG_DEBUG, "%ju: shell exited with status %d",
                  (uintmax_t)job->entry.id, status);
    /* Killed by a signal (kill -9, the OOM killer, a crash): the shell
     * did not end its part (its last output never reached the leader).
     * Reported as failed with that status, so that job-exec tells the
     * leader (lost-shell) and raises an exception naming the shell rank,
     * as flux-core does for a shell that exits on a signal.  Before the
     * start barriers were through here (and unless the job is being
     * killed), the other shells cannot start their tasks any more (their
     * barrier fails): that shell failed to start, status 1<<8 and a
     * fatal exception whatever the critical ranks (flux-core: "terminated
     * before first barrier"). */
    if (WIFSIGNALED (status)) {
        bool early = job->nshells > 1 && !job->killed
                     && barrier_last (job->barrier) < 2;
        char msg[128];
        snprintf (msg, sizeof (msg), "rank %u: job shell: %s%s",
                  job->a->topo.rank, strsignal (WTERMSIG (status)),
                  early ? " before the job's tasks started" : "");
        remove_tmpdir (job);
        job_report_rank (job, REDUCE_FAILED, early ? 1 << 8 : status, msg);
        return;
    }
    tmpdir_reclaim (job);
    job_report_rank (job, REDUCE_EXITED, status, NULL);
}

static void shell_line_cb (struct proc *p, const char *stream, const char *line,
                           void *arg)
{
    struct ajob *job = arg;

    /* Not LOG_ERR: the broker would copy each line to the terminal of
     * flux start beside what flux run prints.  A shell's fatal error
     * reaches the user as the job's exec exception; the lines stay in
     * the broker's ring buffer (flux dmesg).
     */
    flux_log (job->a->h, LOG_INFO, "%ju: shell %s: %s",
              (uintmax_t)job->entry.id, stream, line);
}

static const char *job_shell_path (struct ajob *job)
{
    const char *path = NULL;

    if (json_unpack (job->jobspec, "{s:{s:{s:{s:s}}}}", "attributes", "system",
                     "exec", "job_shell", &path)
            == 0
        || json_unpack (job->opts, "{s:s}", "job-shell", &path) == 0)
        return path;
    return job->a->job_shell;
}

static int spawn_status (int errnum)
{
    if (errnum == EPERM || errnum == EACCES)
        return 126 << 8;
    if (errnum == ENOENT)
        return 127 << 8;
    return 1 << 8;
}

/* What exec-agent.shell-info answers about job, whose shell runs here
 * (a new object), or NULL with errno.  cpus: the CPUs of the shell's
 * cores (hwxml.h); broker-rank and rundir: the shell
 * asks its broker for neither (two requests fewer per shell);
 * tmpdir-reuse: leave the tmpdir made in the rundir empty, the agent
 * takes it back (tmpdir_reclaim). */
static json_t *shell_info_object (struct ajob *job)
{
    struct agent *a = job->a;
    json_t *o, *cpus = NULL;

    if (!a->hw_tried) { /* once, at the first shell (not at load) */
        a->hw_tried = true;
        if (!(a->hw = hwxml_cores ()))
            flux_log (a->h, LOG_WARNING,
                      "hwloc: %s: shells will load the topology themselves",
                      strerror (errno));
    }
    if (a->hw && !(cpus = hwxml_job_cpus (a->hw, job->R, a->topo.rank))
        && errno == ENOMEM)
        return NULL;
    if (!(o = json_pack (
              "{s:I s:i s:i s:i s:s s:O s:O s:O s:o* s:I s:s* s:b}", "id",
              (json_int_t)job->entry.id, "userid", (int)job->userid, "rank",
              job->shell_rank, "size", job->nshells, "ranks", job->ranks_str,
              "R", job->R, "jobspec", job->jobspec, "opts", job->opts, "cpus",
              cpus, "broker-rank", (json_int_t)a->topo.rank, "rundir",
              a->rundir, "tmpdir-reuse", tmpdir_managed (job))))
        errno = ENOMEM;
    return o;
}

/* A guest's job (its user is not the instance owner) runs through the
 * IMP: the shell is started as "IMP exec SHELL ID" with FLUX_IMP_EXEC_HELPER
 * naming the command that prints its J; the IMP verifies J and runs the
 * shell as the job's user.  Without exec.imp such a job fails.
 */
static int shell_cmd (struct ajob *job, const char *shell, char ***argv,
                      char ***env, flux_error_t *error)
{
    struct agent *a = job->a;

    if (job->userid == a->owner) {
        *argv = shellcmd_argv (shell, job->entry.id);
        *env = shellcmd_env (environ, a->uri, job->entry.id);
    }
    else if (!a->imp) {
        errno = EPERM;
        return errprintf (error,
                          "the job's user %u is not the instance owner %u, "
                          "and exec.imp is not configured: multi-user "
                          "execution needs the IMP",
                          (unsigned)job->userid, (unsigned)a->owner);
    }
    else if (job->userid == 0) {
        errno = EPERM;
        return errprintf (error, "a job of root is never run through the IMP");
    }
    else {
        *argv = shellcmd_imp_argv (a->imp, shell, job->entry.id);
        *env = shellcmd_imp_env (environ, a->uri, job->entry.id, a->helper);
    }
    if (!*argv || !*env)
        return errprintf (error, "%s", strerror (errno));
    return 0;
}

static void shell_started (struct ajob *job)
{
    struct agent *a = job->a;

    a->stats.shells_started++;
    if (proc_forked (job->proc))
        a->stats.shells_forked++;
    if (a->verbose)
        flux_log (a->h, LOG_DEBUG, "%ju: shell %s started%s, pid %d",
                  (uintmax_t)job->entry.id, job_shell_path (job),
                  job->userid != a->owner   ? " through the IMP"
                  : proc_forked (job->proc) ? " by the launcher"
                                            : "",
                  (int)proc_pid (job->proc));
    job_report_rank (job, REDUCE_STARTED, 0, NULL);
}

static void shell_failed (struct ajob *job, int errnum, const char *text)
{
    struct agent *a = job->a;
    char msg[sizeof (((flux_error_t *)0)->text) + 64];

    a->stats.shells_failed++;
    tmpdir_reclaim (job); /* lent to a shell that never ran */
    snprintf (msg, sizeof (msg), "rank %u: job shell: %s", a->topo.rank, text);
    flux_log (a->h, LOG_ERR, "%ju: %s", (uintmax_t)job->entry.id, msg);
    job_report_rank (job, REDUCE_FAILED, spawn_status (errnum), msg);
}

/* proc_launch(): the launcher answered. */
static void shell_start_cb (struct proc *p, int errnum, const char *error,
                            void *arg)
{
    struct ajob *job = arg;

    if (errnum == 0)
        shell_started (job); /* may free job */
    else
        shell_failed (job, errnum, error); /* may free job */
}

static void launcher_died (size_t nlost, bool hello, void *arg)
{
    struct agent *a = arg;

    a->stats.launcher_deaths++;
    a->stats.launcher_lost += nlost;
    if (!hello) {
        /* not a launcher (or it could not set up): no second try */
        a->use_launcher = false;
        flux_log (a->h, LOG_ERR,
                  "the shell launcher exited at its start: job shells are "
                  "spawned");
        return;
    }
    flux_log (a->h, LOG_ERR,
              "the shell launcher died: %zu running job shell%s lost "
              "(reported killed); a new launcher starts with the next job",
              nlost, nlost == 1 ? "" : "s");
}

/* The launcher for the instance owner's default shells, started at the
 * first (and again after it died), or NULL: spawn the shell. */
static struct launcher *get_launcher (struct agent *a)
{
    flux_error_t error;

    if (a->launcher && launcher_dead (a->launcher)) {
        launcher_destroy (a->launcher); /* not from its own callback */
        a->launcher = NULL;
    }
    if (!a->use_launcher)
        return NULL;
    if (!a->launcher) {
        if (!(a->launcher
              = launcher_create (a->loop, a->job_shell, proc_launcher_ops (),
                                 launcher_died, a, &error))) {
            a->use_launcher = false;
            flux_log (a->h, LOG_ERR, "%s: job shells are spawned", error.text);
            return NULL;
        }
        a->stats.launcher_starts++;
    }
    return a->launcher;
}

/* The instance owner's job with the default shell: forked by the shell
 * launcher (doc/guide/exec.md), else (or if that cannot be asked)
 * spawned. */
static int shell_launch (struct ajob *job, const char *shell, char **argv,
                         char **env)
{
    struct agent *a = job->a;
    struct launcher *l;
    flux_error_t error;
    json_t *info;
    char *s = NULL, **ienv = NULL;
    bool given = false;

    if (job->userid != a->owner || shell != a->job_shell
        || !(l = get_launcher (a)))
        return -1;
    /* the shell's shell-info answer goes with it (SHELL_INFO_ENV), unless
     * that makes the START packet too big: then it asks */
    if ((info = shell_info_object (job))) {
        s = json_dumps (info, JSON_COMPACT);
        json_decref (info);
    }
    if (s && (ienv = shellcmd_env_info (env, a->uri, job->entry.id, s))
        && launch_start_len (argv, ienv) <= LAUNCH_MSG_MAX) {
        env = ienv;
        given = true;
    }
    free (s);
    job->proc = proc_launch (l, a->loop, argv, env, shell_start_cb,
                             shell_exit_cb, shell_line_cb, job, &error);
    free (ienv);
    if (job->proc) {
        if (given)
            a->stats.info_given++;
        return 0;
    }
    a->stats.launch_fallbacks++;
    if (!a->launcher_logged) {
        a->launcher_logged = true;
        flux_log (a->h, LOG_WARNING,
                  "%ju: %s: this shell is spawned (logged "
                  "once)",
                  (uintmax_t)job->entry.id, error.text);
    }
    return -1;
}

static void shell_start (struct ajob *job)
{
    struct agent *a = job->a;
    char **argv = NULL, **env = NULL;
    flux_error_t error;
    const char *shell = job_shell_path (job);
    int errnum;

    if (shell_cmd (job, shell, &argv, &env, &error) < 0)
        goto failed;
    tmpdir_lend (job);
    if (shell_launch (job, shell, argv, env) == 0) {
        free (argv);
        free (env);
        return; /* started or failed: shell_start_cb */
    }
    if (!(job->proc = proc_spawn (a->loop, argv, env, shell_exit_cb,
                                  shell_line_cb, job, &error)))
        goto failed;
    if (job->userid != a->owner)
        proc_set_imp (job->proc);
    free (argv);
    free (env);
    shell_started (job); /* may free job */
    return;
failed:
    errnum = errno;
    free (argv);
    free (env);
    shell_failed (job, errnum, error.text); /* may free job */
}

/* ---- children ---- */

static void child_lost (struct child *c, const char *why)
{
    struct ajob *job = c->job;
    struct idset *lost;

    c->ended = true;
    if (!(lost = reduce_unfinished (job->red, c->share)))
        return;
    if (!idset_empty (lost)) {
        char *s = idset_encode (lost, IDSET_FLAG_RANGE);
        /* status 1: the start barriers (rounds 1 and 2) were not through
         * here, so the lost shells never ran their tasks and the others
         * cannot get past the barrier: the job cannot go on */
        int early = job->nshells > 1 && barrier_last (job->barrier) < 2;
        flux_log (job->a->h, LOG_ERR, "%ju: ranks %s lost (rank %u)%s: %s",
                  (uintmax_t)job->entry.id, s ? s : "?", c->rank,
                  early ? " before the tasks started" : "", why);
        free (s);
        job_report (job, REDUCE_LOST, lost, early, NULL); /* may free job */
    }
    idset_destroy (lost);
}

/* A child's stream ended (ENODATA): the ranks of its share it did not
 * report otherwise exited with status 0 (job_flush). */
static void child_end (struct child *c)
{
    struct ajob *job = c->job;
    struct idset *rest;

    c->ended = true;
    if (!(rest = reduce_unfinished (job->red, c->share))) {
        child_lost (c, "out of memory");
        return;
    }
    if (!idset_empty (rest))
        job_report (job, REDUCE_EXITED, rest, 0, NULL); /* may free job */
    idset_destroy (rest);
}

static void child_cb (flux_future_t *f, void *arg)
{
    struct child *c = arg;
    struct ajob *job = c->job;
    struct agent *a = job->a;
    const char *type, *ranks, *error = NULL;
    int status = 0;
    enum reduce_type t;
    struct idset *ids;

    a->stats.child_responses++;
    job->stats.from_children++;
    if (flux_rpc_get_unpack (f, "{s:s s:s s?i s?s}", "type", &type, "ranks",
                             &ranks, "status", &status, "error", &error)
        < 0) {
        if (errno == ENODATA) {
            a->stats.child_end++;
            child_end (c);
        }
        else {
            a->stats.child_errors++;
            child_lost (c, future_strerror (f, errno));
        }
        return; /* job may be freed */
    }
    if (reduce_type_parse (type, &t) < 0
        || !(ids = idset_decode_ex (ranks, -1, -1, 0, NULL))) {
        a->stats.child_errors++;
        flux_log (a->h, LOG_ERR, "%ju: malformed response from rank %u",
                  (uintmax_t)job->entry.id, c->rank);
        flux_future_reset (f);
        return;
    }
    a->stats.child_type[t]++;
    if (idset_has_intersection (ids, c->share)) {
        struct idset *mine = idset_intersect (ids, c->share);
        char errbuf[256];
        /* error goes with the response: copy it before the reset */
        if (error)
            snprintf (errbuf, sizeof (errbuf), "%s", error);
        flux_future_reset (f);
        if (mine)
            job_report (job, t, mine, status,
                        error ? errbuf : NULL); /* may free job */
        idset_destroy (mine);
    }
    else
        flux_future_reset (f);
    idset_destroy (ids);
}

static int forward (struct ajob *job, const flux_msg_t *msg)
{
    const void *payload;
    size_t len;

    if (flux_msg_get_payload (msg, &payload, &len) < 0)
        return -1;
    for (int i = 0; i < job->nchildren; i++) {
        struct child *c = &job->children[i];
        if (!(c->f = flux_rpc_raw (job->a->h, "exec-agent.start", payload, len,
                                   c->rank, FLUX_RPC_STREAMING))
            || flux_future_then (c->f, -1., child_cb, c) < 0) {
            flux_future_destroy (c->f);
            c->f = NULL;
            c->ended = true;
            return -1;
        }
    }
    return 0;
}

/* ---- start ---- */

static int child_setup (struct ajob *job)
{
    struct topo *t = &job->a->topo;

    if (t->nchildren == 0)
        return 0;
    if (!(job->children = calloc (t->nchildren, sizeof (*job->children))))
        return -1;
    for (int i = 0; i < t->nchildren; i++) {
        uint32_t rank = t->children[i];
        struct idset *share = topo_share (t, rank, job->ranks);
        if (!share)
            return -1;
        if (idset_empty (share)) {
            idset_destroy (share);
            continue;
        }
        job->children[job->nchildren].job = job;
        job->children[job->nchildren].rank = rank;
        job->children[job->nchildren].share = share;
        job->nchildren++;
    }
    return 0;
}

static struct ajob *job_create (struct agent *a, const flux_msg_t *msg,
                                json_int_t id, int userid, struct idset *ranks,
                                json_t *R, json_t *jobspec, json_t *opts,
                                flux_error_t *error)
{
    struct ajob *job;
    struct idset *share = NULL;
    int nentries;

    if (!(job = calloc (1, sizeof (*job)))) {
        idset_destroy (ranks);
        errprintf (error, "out of memory");
        return NULL;
    }
    job->a = a;
    job->entry.id = (uint64_t)id;
    job->userid = (uint32_t)userid;
    job->ranks = ranks;
    job->R = json_incref (R);
    job->jobspec = json_incref (jobspec);
    job->opts = json_incref (opts);
    job->req = flux_msg_incref (msg);
    job->shell_rank = topo_index (&a->topo, ranks);
    job->nshells = (int)idset_count (ranks);
    if (!(share = topo_share (&a->topo, a->topo.rank, ranks))) {
        errprintf (error, "computing the share: %s", strerror (errno));
        goto error;
    }
    if (idset_empty (share)) {
        errno = EINVAL;
        errprintf (error, "no rank of the job is at or below rank %u",
                   a->topo.rank);
        goto error;
    }
    if (!(job->ranks_str = idset_encode (ranks, IDSET_FLAG_RANGE))
        || !(job->red = reduce_create (share)) || child_setup (job) < 0
        || !(job->timer = calloc (1, sizeof (*job->timer)))) {
        errprintf (error, "out of memory");
        goto error;
    }
    idset_destroy (share);
    share = NULL;
    if (uv_timer_init (a->loop, job->timer) < 0) {
        free (job->timer);
        job->timer = NULL;
        errprintf (error, "timer init failed");
        goto error;
    }
    job->timer->data = job;
    nentries = job->nchildren + (job->shell_rank >= 0 ? 1 : 0);
    if (!(job->barrier = barrier_create (nentries))
        || idtab_insert (a->jobs, &job->entry) < 0) {
        errprintf (error, "%s", strerror (errno));
        goto error;
    }
    return job;
error : {
    int saved_errno = errno;
    idset_destroy (share);
    job_free (job);
    errno = saved_errno;
}
    return NULL;
}

static void replay (struct ajob *job)
{
    struct agent *a = job->a;

    a->stats.reattach++;
    if (job->timer_armed) {
        uv_timer_stop (job->timer);
        job->timer_armed = false;
    }
    reduce_replay (job->red, emit_cb, job);
    if (job->ended) {
        job->ended = false;
        a->orphans_done--;
    }
    if (reduce_finished (job->red))
        job_end (job);
}

void agent_start (struct agent *a, const flux_msg_t *msg)
{
    json_int_t id;
    int userid, reattach;
    const char *ranks_s;
    json_t *R, *jobspec, *opts;
    struct idset *ranks;
    idset_error_t e;
    struct ajob *job;
    flux_error_t error;

    if (flux_request_unpack (msg, NULL, "{s:I s:i s:s s:o s:o s:b s:o}", "id",
                             &id, "userid", &userid, "ranks", &ranks_s, "R", &R,
                             "jobspec", &jobspec, "reattach", &reattach, "opts",
                             &opts)
        < 0) {
        respond_error (a, msg, EPROTO,
                       "malformed start: expected {id:I, userid:i, ranks:s, "
                       "R:o, jobspec:o, reattach:b, opts:o}");
        return;
    }
    if (!flux_msg_is_streaming (msg)) {
        respond_error (a, msg, EPROTO, "start requires the streaming flag");
        return;
    }
    if (id < 0 || userid < 0 || !json_is_object (R) || !json_is_object (jobspec)
        || !json_is_object (opts)) {
        respond_error (a, msg, EPROTO,
                       "malformed start: id and userid >= 0, R, jobspec and "
                       "opts objects");
        return;
    }
    if (!(ranks = idset_decode_ex (ranks_s, -1, -1, 0, &e))) {
        respond_error (a, msg, EPROTO, "malformed start: ranks: %s", e.text);
        return;
    }
    if (idset_empty (ranks) || idset_last (ranks) >= a->topo.size) {
        idset_destroy (ranks);
        respond_error (a, msg, EPROTO,
                       "malformed start: ranks must be a non-empty set of "
                       "ranks < %u",
                       a->topo.size);
        return;
    }
    if ((job = (struct ajob *)idtab_lookup (a->jobs, (uint64_t)id))) {
        idset_destroy (ranks);
        if (!reattach) {
            respond_error (a, msg, EEXIST, "job %ju is running here already",
                           (uintmax_t)id);
            return;
        }
        flux_msg_decref (job->up);
        job->up = flux_msg_incref (msg);
        flux_log (a->h, LOG_INFO, "%ju: reattached", (uintmax_t)id);
        replay (job); /* may free job */
        return;
    }
    if (reattach) {
        /* the agent holds every job it started until reattached (bounded),
         * so this broker started after the job did: a restart of the
         * instance, which took the job's shells with it */
        idset_destroy (ranks);
        respond_error (a, msg, ENOENT,
                       "job %ju cannot be reattached: its shells are gone "
                       "(the instance restarted while it ran)",
                       (uintmax_t)id);
        return;
    }
    if (!(job
          = job_create (a, msg, id, userid, ranks, R, jobspec, opts, &error))) {
        respond_error (a, msg, errno, "%s", error.text);
        return;
    }
    a->stats.jobs++;
    job->up = flux_msg_incref (msg);
    if (forward (job, msg) < 0) {
        /* the children that got nothing are lost for this job */
        for (int i = 0; i < job->nchildren; i++) {
            if (!job->children[i].f && job->children[i].ended) {
                uint64_t jid = job->entry.id;
                child_lost (&job->children[i], "forwarding the start failed");
                if (!idtab_lookup (a->jobs, jid))
                    return;
            }
        }
    }
    if (job->shell_rank >= 0)
        shell_start (job); /* may free job */
}

/* ---- kill ---- */

static void killop_free (struct killop *k)
{
    struct agent *a = k->a;

    if (k->prev)
        k->prev->next = k->next;
    else
        a->killops = k->next;
    if (k->next)
        k->next->prev = k->prev;
    for (int i = 0; i < k->nf; i++)
        flux_future_destroy (k->f[i]);
    flux_msg_decref (k->msg);
    free (k);
}

static void killop_done (struct killop *k)
{
    struct agent *a = k->a;

    if (flux_respond (a->h, k->msg, NULL) < 0)
        flux_log (a->h, LOG_ERR, "kill: responding: %s", strerror (errno));
    killop_free (k);
}

static void kill_continuation (flux_future_t *f, void *arg)
{
    struct killop *k = arg;

    for (int i = 0; i < k->nf; i++) {
        if (k->f[i] == f)
            k->f[i] = NULL;
    }
    flux_future_destroy (f);
    if (--k->pending == 0)
        killop_done (k);
}

void agent_kill (struct agent *a, const flux_msg_t *msg)
{
    json_int_t id;
    int signum, pgrp = 0;
    struct ajob *job;
    struct killop *k;

    if (flux_request_unpack (msg, NULL, "{s:I s:i s?b}", "id", &id, "signum",
                             &signum, "pgrp", &pgrp)
            < 0
        || signum <= 0 || signum >= NSIG) {
        respond_error (a, msg, EPROTO,
                       "malformed kill: expected {id:I, signum:i (a signal "
                       "number), pgrp?:b}");
        return;
    }
    if (!(job = (struct ajob *)idtab_lookup (a->jobs, (uint64_t)id))) {
        respond_error (a, msg, ENOENT, "job %ju is not running here",
                       (uintmax_t)id);
        return;
    }
    a->stats.kills++;
    job->killed = true;
    if (job->barrier)
        job_barrier_fail (job);
    if (job->proc && !proc_exited (job->proc)
        && proc_kill (job->proc, signum, pgrp) < 0)
        flux_log (a->h, LOG_ERR, "%ju: kill %d: %s", (uintmax_t)id, signum,
                  strerror (errno));
    if (!(k = calloc (1, sizeof (*k) + job->nchildren * sizeof (k->f[0])))) {
        respond_error (a, msg, ENOMEM, NULL);
        return;
    }
    k->a = a;
    k->msg = flux_msg_incref (msg);
    k->pending = 1; /* ours, dropped below */
    k->next = a->killops;
    if (a->killops)
        a->killops->prev = k;
    a->killops = k;
    for (int i = 0; i < job->nchildren; i++) {
        struct child *c = &job->children[i];
        struct idset *rest;
        flux_future_t *f;
        bool running;
        if (c->ended || !(rest = reduce_unfinished (job->red, c->share)))
            continue;
        running = !idset_empty (rest);
        idset_destroy (rest);
        if (!running)
            continue;
        if ((f = flux_rpc_pack (a->h, "exec-agent.kill", c->rank, 0,
                                "{s:I s:i s:b}", "id", id, "signum", signum,
                                "pgrp", pgrp))
            && flux_future_then (f, -1., kill_continuation, k) == 0) {
            k->f[k->nf++] = f;
            k->pending++;
        }
        else
            flux_future_destroy (f);
    }
    if (--k->pending == 0)
        killop_done (k);
}

/* ---- barrier ---- */

struct release_ctx {
    struct agent *a;
    json_t *data;
};

static void release_entry (void *entry, void *arg)
{
    struct release_ctx *ctx = arg;
    const flux_msg_t *msg = entry;

    if (flux_respond_pack (ctx->a->h, msg, "{s:O}", "data", ctx->data) < 0)
        flux_log (ctx->a->h, LOG_ERR, "barrier: responding: %s",
                  strerror (errno));
    flux_msg_decref (msg);
}

static void barrier_release_all (struct ajob *job, json_t *data)
{
    struct release_ctx ctx = {.a = job->a, .data = data};

    json_incref (data); /* barrier_release() drops the merge */
    (void)barrier_release (job->barrier, release_entry, &ctx);
    json_decref (data);
    barrier_bytes_drop (job);
}

static void parent_barrier_cb (flux_future_t *f, void *arg)
{
    struct ajob *job = arg;
    json_t *data;

    job->barrier_f = NULL;
    if (flux_rpc_get_unpack (f, "{s:o}", "data", &data) < 0
        || !json_is_object (data)) {
        int e = errno;
        const char *why = future_strerror (f, e);
        flux_log (job->a->h, LOG_DEBUG, "%ju: parent barrier: %s",
                  (uintmax_t)job->entry.id, why);
        if (!job->barrier_why[0]) { /* the parent's reason, for the shells */
            snprintf (job->barrier_why, sizeof (job->barrier_why), "%s", why);
            job->barrier_errnum = e;
        }
        job_barrier_fail (job);
    }
    else
        barrier_release_all (job, data);
    flux_future_destroy (f);
}

static void barrier_complete (struct ajob *job)
{
    struct agent *a = job->a;
    json_t *data = barrier_data (job->barrier);

    if (a->topo.parent < 0) {
        barrier_release_all (job, data);
        return;
    }
    if (!(job->barrier_f = flux_rpc_pack (
              a->h, "exec-agent.barrier", (uint32_t)a->topo.parent, 0,
              "{s:I s:i s:O s:i}", "id", (json_int_t)job->entry.id, "seq",
              barrier_seq (job->barrier), "data", data, "rank",
              (int)a->topo.rank))
        || flux_future_then (job->barrier_f, -1., parent_barrier_cb, job) < 0) {
        flux_future_destroy (job->barrier_f);
        job->barrier_f = NULL;
        job->barrier_errnum = errno;
        snprintf (job->barrier_why, sizeof (job->barrier_why),
                  "job %ju: entering the parent's barrier: %s",
                  (uintmax_t)job->entry.id, strerror (errno));
        job_barrier_fail (job);
    }
}

static struct ajob *lookup_authorized (struct agent *a, const flux_msg_t *msg,
                                       json_int_t id)
{
    struct ajob *job = (struct ajob *)idtab_lookup (a->jobs, (uint64_t)id);

    if (!job) {
        respond_error (a, msg, ENOENT, "job %ju is not running here",
                       (uintmax_t)id);
        return NULL;
    }
    if (flux_msg_authorize (msg, job->userid) < 0) {
        respond_error (a, msg, EPERM, "job %ju belongs to another user",
                       (uintmax_t)id);
        return NULL;
    }
    return job;
}

void agent_barrier (struct agent *a, const flux_msg_t *msg)
{
    json_int_t id;
    int seq, rank = -1, rc;
    json_t *data = NULL;
    struct ajob *job;
    size_t size = 0;

    if (flux_request_unpack (msg, NULL, "{s:I s:i s?o s?i}", "id", &id, "seq",
                             &seq, "data", &data, "rank", &rank)
            < 0
        || seq < 0 || (data && !json_is_object (data))) {
        respond_error (a, msg, EPROTO,
                       "malformed barrier: expected {id:I, seq:i (>= 0), "
                       "data?:o}");
        return;
    }
    if (!(job = lookup_authorized (a, msg, id)))
        return;
    a->stats.barriers++;
    if (rank >= 0)
        a->stats.child_requests++;
    (void)flux_msg_get_payload (msg, NULL, &size);
    if (size > a->barrier_max - a->barrier_held) {
        a->stats.barriers_too_big++;
        respond_error (a, msg, E2BIG,
                       "job %ju: barrier data over this broker's limit "
                       "(%zu bytes held, %zu more asked, limit %zu)",
                       (uintmax_t)id, a->barrier_held, size, a->barrier_max);
        if (!job->barrier_why[0]) { /* logged once a job: a user's
                                       entries cannot flood the log */
            flux_log (a->h, LOG_ERR,
                      "%ju: barrier entry of %zu bytes refused: %zu held, "
                      "barrier-max=%zu",
                      (uintmax_t)id, size, a->barrier_held, a->barrier_max);
            snprintf (job->barrier_why, sizeof (job->barrier_why),
                      "job %ju: its shells' barrier data (PMI exchange) is "
                      "over a broker's limit of %zu bytes (exec-agent "
                      "barrier-max)",
                      (uintmax_t)id, a->barrier_max);
            job->barrier_errnum = E2BIG;
        }
        job_barrier_fail (job);
        return;
    }
    if ((rc = barrier_enter (job->barrier, seq, data, (void *)msg)) < 0) {
        if (errno == EIO) { /* failed: answered as the entries held were */
            fail_entry ((void *)flux_msg_incref (msg), job);
            return;
        }
        respond_error (a, msg, errno,
                       errno == EBUSY ? "another barrier round is pending"
                                      : "barrier seq %d is not the next one",
                       seq);
        return;
    }
    flux_msg_incref (msg);
    job->barrier_bytes += size;
    a->barrier_held += size;
    if (a->barrier_held > a->stats.barrier_held_max)
        a->stats.barrier_held_max = a->barrier_held;
    if (rc == 1)
        barrier_complete (job);
}

/* ---- shell-info ---- */

void agent_shell_info (struct agent *a, const flux_msg_t *msg)
{
    json_int_t id;
    struct ajob *job;
    json_t *o;

    if (flux_request_unpack (msg, NULL, "{s:I}", "id", &id) < 0) {
        respond_error (a, msg, EPROTO, "malformed shell-info: expected {id:I}");
        return;
    }
    if (!(job = lookup_authorized (a, msg, id)))
        return;
    if (job->shell_rank < 0) {
        respond_error (a, msg, ENOENT, "job %ju has no shell on rank %u",
                       (uintmax_t)id, a->topo.rank);
        return;
    }
    a->stats.info_asked++;
    if (!(o = shell_info_object (job))
        || flux_respond_pack (a->h, msg, "o", o) < 0)
        flux_log (a->h, LOG_ERR, "shell-info: responding: %s",
                  strerror (errno));
}

/* ---- stats ---- */

struct stats_ctx {
    json_t *jobs;
    size_t active;
};

static void job_stats (struct idtab_entry *e, void *arg)
{
    struct ajob *job = (struct ajob *)e;
    struct stats_ctx *ctx = arg;
    char key[32];
    json_t *o;

    ctx->active++;
    snprintf (key, sizeof (key), "%ju", (uintmax_t)e->id);
    if ((o
         = json_pack ("{s:s s:b s:b s:I s:I s:I s:I}", "ranks", job->ranks_str,
                      "orphaned", job->up == NULL, "ended", job->ended,
                      "from_children", (json_int_t)job->stats.from_children,
                      "to_parent", (json_int_t)job->stats.to_parent,
                      "reduce_in", (json_int_t)reduce_count_in (job->red),
                      "reduce_out", (json_int_t)reduce_count_out (job->red))))
        (void)json_object_set_new (ctx->jobs, key, o);
}

void agent_stats (struct agent *a, const flux_msg_t *msg)
{
    struct stats_ctx ctx = {.jobs = json_object ()};
    json_t *o = NULL, *children, *sent, *shells, *count, *barrier;

    if (ctx.jobs)
        idtab_foreach (a->jobs, job_stats, &ctx);
#define N(x) ((json_int_t)(x))
    children = json_pack (
        "{s:I s:I s:I s:I s:I s:I s:I s:I}", "requests",
        N (a->stats.child_requests), "responses", N (a->stats.child_responses),
        "started", N (a->stats.child_type[REDUCE_STARTED]), "exited",
        N (a->stats.child_type[REDUCE_EXITED]), "failed",
        N (a->stats.child_type[REDUCE_FAILED]), "lost",
        N (a->stats.child_type[REDUCE_LOST]), "end", N (a->stats.child_end),
        "errors", N (a->stats.child_errors));
    sent = json_pack ("{s:I s:I s:I s:I s:I}", "started",
                      N (a->stats.sent_type[REDUCE_STARTED]), "exited",
                      N (a->stats.sent_type[REDUCE_EXITED]), "failed",
                      N (a->stats.sent_type[REDUCE_FAILED]), "lost",
                      N (a->stats.sent_type[REDUCE_LOST]), "exited-by-end",
                      N (a->stats.implicit_exits));
    shells = json_pack (
        "{s:I s:I s:I s:I s:I s:I s:I s:I s:I s:I s:{s:b s:i s:I s:I s:I}}",
        "info-given", N (a->stats.info_given), "info-asked",
        N (a->stats.info_asked), "started", N (a->stats.shells_started),
        "failed", N (a->stats.shells_failed), "exited",
        N (a->stats.shells_exited), "tmpdirs-removed",
        N (a->stats.tmpdirs_removed), "tmpdirs-left", N (a->stats.tmpdirs_left),
        "tmpdirs-reused", N (a->stats.tmpdirs_reused), "forked",
        N (a->stats.shells_forked), "spawned-instead",
        N (a->stats.launch_fallbacks), "launcher", "enabled", a->use_launcher,
        "pid",
        a->launcher && !launcher_dead (a->launcher)
            ? (int)launcher_pid (a->launcher)
            : 0,
        "starts", N (a->stats.launcher_starts), "deaths",
        N (a->stats.launcher_deaths), "lost", N (a->stats.launcher_lost));
    count = json_pack (
        "{s:I s:I s:I s:I s:I s:I s:I}", "jobs", N (a->stats.jobs), "active",
        N (ctx.active), "orphans_done", N (a->orphans_done), "reattach",
        N (a->stats.reattach), "kills", N (a->stats.kills), "barriers",
        N (a->stats.barriers), "bad_request", N (a->stats.bad_request));
    barrier = json_pack ("{s:I s:I s:I s:I}", "held", N (a->barrier_held),
                         "held-max", N (a->stats.barrier_held_max), "limit",
                         N (a->barrier_max), "too-big",
                         N (a->stats.barriers_too_big));
#undef N
    if (ctx.jobs && children && sent && shells && count && barrier)
        o = json_pack ("{s:i s:i s:i s:s s:f s:f s:O s:O s:O s:O s:O s:O}",
                       "rank", (int)a->topo.rank, "size", (int)a->topo.size,
                       "fanout", a->topo.nchildren, "topo",
                       topology_spec (a->topo.tree), "reduce-window", a->window,
                       "release-window", a->release_window, "children",
                       children, "sent", sent, "shells", shells, "count", count,
                       "barrier", barrier, "jobs", ctx.jobs);
    json_decref (children);
    json_decref (sent);
    json_decref (shells);
    json_decref (count);
    json_decref (barrier);
    json_decref (ctx.jobs);
    if (!o) {
        respond_error (a, msg, ENOMEM, NULL);
        return;
    }
    if (flux_respond_pack (a->h, msg, "O", o) < 0)
        flux_log (a->h, LOG_ERR, "stats-get: responding: %s", strerror (errno));
    json_decref (o);
}

/* ---- disconnect ---- */

struct orphan_ctx {
    const flux_msg_t *msg;
    size_t n;
};

static void orphan (struct idtab_entry *e, void *arg)
{
    struct ajob *job = (struct ajob *)e;
    struct orphan_ctx *ctx = arg;

    if (job->up && flux_msg_route_match_first (job->up, ctx->msg)) {
        flux_msg_decref (job->up);
        job->up = NULL;
        ctx->n++;
    }
}

void agent_disconnect (struct agent *a, const flux_msg_t *msg)
{
    struct orphan_ctx ctx = {.msg = msg};

    idtab_foreach (a->jobs, orphan, &ctx);
    if (ctx.n > 0)
        flux_log (a->h, LOG_INFO,
                  "%zu jobs orphaned by a disconnect: their shells go on, "
                  "waiting for a reattach",
                  ctx.n);
}

/* ---- create / destroy ---- */

struct agent *agent_create (flux_t *h, const struct agent_config *conf,
                            flux_error_t *error)
{
    struct agent *a;
    const char *uri, *owner;
    char *end;

    if (!h || !conf || !conf->job_shell || (conf->imp && !conf->helper)) {
        errno = EINVAL;
        errprintf (error, "agent_create: missing argument");
        return NULL;
    }
    if (!(a = calloc (1, sizeof (*a)))) {
        errprintf (error, "out of memory");
        return NULL;
    }
    a->h = h;
    a->loop = flux_reactor_uv (flux_get_reactor (h));
    a->window = conf->window;
    a->release_window = conf->release_window;
    a->unload_grace = conf->unload_grace;
    a->barrier_max = conf->barrier_max;
    a->verbose = conf->verbose;
    a->use_launcher = conf->shell_launcher;
    a->owner = getuid ();
    if ((owner = flux_attr_get (h, "security.owner"))) {
        unsigned long u = strtoul (owner, &end, 10);
        if (end != owner && *end == '\0')
            a->owner = (uint32_t)u;
    }
    if (topo_init_broker (&a->topo, h, error) < 0)
        goto error;
    if ((uri = flux_attr_get (h, "rundir")) && !(a->rundir = strdup (uri))) {
        errprintf (error, "out of memory");
        goto error;
    }
    if (!(uri = flux_attr_get (h, "local-uri"))) {
        errprintf (error, "reading local-uri: %s", strerror (errno));
        goto error;
    }
    if (!(a->uri = strdup (uri)) || !(a->job_shell = strdup (conf->job_shell))
        || (conf->imp && !(a->imp = strdup (conf->imp)))
        || (conf->imp && !(a->helper = strdup (conf->helper)))
        || !(a->jobs = idtab_create ())) {
        errprintf (error, "out of memory");
        goto error;
    }
    return a;
error:
    agent_destroy (a);
    return NULL;
}

static void collect (struct idtab_entry *e, void *arg)
{
    struct ajob ***pp = arg;
    *(*pp)++ = (struct ajob *)e;
}

void agent_destroy (struct agent *a)
{
    if (a) {
        int saved_errno = errno;
        if (a->jobs) {
            size_t n = idtab_count (a->jobs);
            struct ajob **jobs = calloc (n + 1, sizeof (*jobs)), **p = jobs;
            struct proc **procs = calloc (n + 1, sizeof (*procs));
            if (jobs) {
                idtab_foreach (a->jobs, collect, &p);
                /* shells still running at unload (the instance's cleanup
                 * ends its jobs first, so normally none): SIGTERM, a
                 * grace, then job_free() kills what is left */
                if (procs) {
                    for (size_t i = 0; i < n; i++)
                        procs[i] = jobs[i]->proc;
                    if (proc_terminate_all (procs, n, a->unload_grace) > 0)
                        flux_log (a->h, LOG_ERR,
                                  "unloading: shells still running after "
                                  "%.3gs: killed",
                                  a->unload_grace);
                }
                for (size_t i = 0; i < n; i++) {
                    char path[4096];
                    if (jobs[i]->up)
                        respond_error (a, jobs[i]->up, ENOSYS,
                                       "exec-agent on rank %u is unloading",
                                       a->topo.rank);
                    /* a shell told tmpdir-reuse leaves it (emptied) */
                    if (tmpdir_path (jobs[i], path, sizeof (path)))
                        (void)rmdir (path);
                    job_free (jobs[i]);
                }
                free (jobs);
            }
            free (procs);
        }
        /* the shells' processes are gone or killed: the launcher reaps
         * them and exits */
        launcher_destroy (a->launcher);
        for (int i = 0; i < TMPDIR_REMOVALS_MAX; i++)
            proc_destroy (a->removals[i]); /* an rm still running: killed */
        while (a->nspares > 0) {
            char *spare = a->spares[--a->nspares];
            (void)rmdir (spare);
            free (spare);
        }
        while (a->killops) {
            respond_error (a, a->killops->msg, ENOSYS,
                           "exec-agent on rank %u is unloading", a->topo.rank);
            killop_free (a->killops);
        }
        idtab_destroy (a->jobs);
        topo_fini (&a->topo);
        free (a->job_shell);
        free (a->imp);
        free (a->helper);
        hwcores_destroy (a->hw);
        free (a->uri);
        free (a->rundir);
        free (a);
        errno = saved_errno;
    }
}
