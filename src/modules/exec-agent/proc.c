/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* proc.c - a job shell process and its output (see proc.h).
 *
 * posix_spawn, not uv_spawn: libuv forks, and a fork of the broker copies
 * its page tables (tens of MiB mapped, many threads), then every page the
 * broker writes before the child's exec is copied again and the child
 * unmaps it all at exec: about a third of the broker's CPU per real job.
 * glibc's posix_spawn runs the child in the parent's memory until exec
 * (CLONE_VM|CLONE_VFORK) and reports an exec failure as its result.  The
 * exit comes through a pidfd: readable once the process is a zombie, then
 * waitpid reaps it (libuv reaps only the processes it spawned).
 *
 * The shell's tasks lead process groups of their own: the shell reports
 * each on its stdout (shell/killsig.h, SHELL_TASK_GROUP_TAG), and when
 * the shell dies by a signal (it then did not kill them itself) they get
 * SIGKILL here.  Not for a shell run through the IMP: its line could
 * name any process of the instance owner, and the IMP does it there.
 *
 * proc_launch(): the shell is forked by the shell launcher (launcher.h)
 * instead, a child of the launcher, not of the broker.  Its exit status
 * comes in the launcher's message (not waitpid), while the zombie still
 * holds the shell's pid and group id; exited() kills the strays as for a
 * spawned shell, then the launcher is asked to reap it.  Until the
 * launcher answered the request (pid 0) signals wait in p->held.  The
 * proc lives on, even destroyed, as long as the launcher holds it.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libflux/coop.h"
#include "launcher.h"
#include "proc.h"
#include "shell/killsig.h"
#include "shell/launch.h"

#define LINE_MAX_BYTES 4096
#define GROUPS_MAX 65536 /* task groups recorded per shell */
#define HELD_MAX 8       /* signals held while the launcher has not answered */

struct pipe_ctx {
    uv_pipe_t pipe;
    struct proc *p;
    const char *name;
    bool open;
    size_t len;
    char buf[LINE_MAX_BYTES + 1];
};

struct proc {
    uv_poll_t process; /* on pidfd */
    int pidfd;
    bool process_open;
    bool exited;
    bool destroyed;
    bool imp; /* flux-imp: signal it, never its group (proc_kill) */
    bool exited_unwatched; /* a zombie seen by proc_terminate_all() */
    bool kill_asked;       /* sent SHELL_KILL_SIGNAL (proc_kill) */
    bool kill_groups;      /* died by a signal: groups reported get SIGKILL */
    pid_t pid;
    pid_t *groups; /* the task groups the shell reported */
    size_t ngroups, groups_cap;
    struct pipe_ctx out, err;
    proc_exit_f exit_cb;
    proc_line_f line_cb;
    void *arg;
    /* proc_launch() */
    struct launcher *launcher;
    uv_loop_t *loop;
    bool starting;  /* the request is not answered yet */
    bool launched;  /* the launcher holds it (until reaped, or lost) */
    bool forked;    /* it runs as a fork of the launcher */
    int wout, werr; /* the pipes' write ends, until started */
    void *req;      /* the START packet, for a spawn instead */
    size_t req_len;
    proc_start_f start_cb;
    struct {
        int signum;
        bool pgrp;
    } held[HELD_MAX];
    int nheld;
};

static void close_fd (int *fd)
{
    if (*fd >= 0) {
        (void)close (*fd);
        *fd = -1;
    }
}

/* Free once every handle is closed (and the launcher let it go). */
static void maybe_free (struct proc *p)
{
    if (p->destroyed && !p->process_open && !p->out.open && !p->err.open
        && !p->launched) {
        close_fd (&p->wout);
        close_fd (&p->werr);
        if (!p->process_open)
            close_fd (&p->pidfd);
        free (p->req);
        free (p->groups);
        free (p);
    }
}

static void kill_groups (struct proc *p)
{
    for (size_t i = 0; i < p->ngroups; i++)
        (void)kill (-p->groups[i], SIGKILL);
}

/* A line "<SHELL_TASK_GROUP_TAG><pgid>" on the shell's stdout: true if
 * it is one (taken, not logged). */
static bool group_line (struct proc *p, const char *line)
{
    size_t taglen = strlen (SHELL_TASK_GROUP_TAG);
    char *end;
    long pgid;

    if (strncmp (line, SHELL_TASK_GROUP_TAG, taglen) != 0)
        return false;
    if (p->imp)
        return true; /* dropped: the IMP kills them (killsig.h) */
    errno = 0;
    pgid = strtol (line + taglen, &end, 10);
    if (errno || end == line + taglen || *end || pgid <= 1 || pgid > INT_MAX)
        return false;
    if (p->ngroups == p->groups_cap) {
        size_t cap = p->groups_cap ? p->groups_cap * 2 : 4;
        pid_t *g;
        if (cap > GROUPS_MAX || !(g = realloc (p->groups, cap * sizeof (*g))))
            return false; /* logged as any line: cannot be killed here */
        p->groups = g;
        p->groups_cap = cap;
    }
    p->groups[p->ngroups++] = (pid_t)pgid;
    if (p->kill_groups) /* the line came after the shell died */
        (void)kill (-(pid_t)pgid, SIGKILL);
    return true;
}

static void pipe_close_cb (uv_handle_t *h)
{
    struct pipe_ctx *pc = h->data;
    pc->open = false;
    maybe_free (pc->p);
}

static void process_close_cb (uv_handle_t *h)
{
    struct proc *p = h->data;
    p->process_open = false;
    if (p->pidfd >= 0)
        (void)close (p->pidfd);
    p->pidfd = -1;
    maybe_free (p);
}

static void emit (struct pipe_ctx *pc)
{
    pc->buf[pc->len] = '\0';
    if (pc == &pc->p->out && group_line (pc->p, pc->buf))
        ;
    else if (pc->p->line_cb && !pc->p->destroyed)
        pc->p->line_cb (pc->p, pc->name, pc->buf, pc->p->arg);
    pc->len = 0;
}

static void alloc_cb (uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    struct pipe_ctx *pc = h->data;
    buf->base = pc->buf + pc->len;
    buf->len = LINE_MAX_BYTES - pc->len;
}

static void pipe_shut (struct pipe_ctx *pc)
{
    if (pc->open && !uv_is_closing ((uv_handle_t *)&pc->pipe)) {
        uv_read_stop ((uv_stream_t *)&pc->pipe);
        uv_close ((uv_handle_t *)&pc->pipe, pipe_close_cb);
    }
}

static void read_cb (uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    struct pipe_ctx *pc = s->data;

    if (n < 0) {
        if (pc->len > 0)
            emit (pc);
        pipe_shut (pc);
        return;
    }
    /* the bytes were read in place, at buf->base == pc->buf + pc->len */
    pc->len += (size_t)n;
    for (;;) {
        char *nl = memchr (pc->buf, '\n', pc->len);
        size_t rest;
        if (!nl)
            break;
        *nl = '\0';
        rest = pc->len - (size_t)(nl - pc->buf) - 1;
        pc->len = (size_t)(nl - pc->buf);
        emit (pc);
        memmove (pc->buf, nl + 1, rest);
        pc->len = rest;
    }
    if (pc->len == LINE_MAX_BYTES)
        emit (pc); /* a very long line: in pieces */
}

/* The shell exited with status, its zombie not reaped yet. */
static void exited (struct proc *p, int status)
{
    p->exited = true;
    /* strays of the shell's group go with it; the groups of its tasks
     * too if it died without killing them (a signal: kill -9 from
     * outside, the OOM killer, a crash, or the end of the kill sequence).
     * The shell held their ids (zombies) until now: the race left is
     * with init reaping them and the pid counter wrapping around */
    (void)kill (-p->pid, SIGKILL);
    if (WIFSIGNALED (status) && !p->imp) {
        p->kill_groups = true;
        kill_groups (p);
    }
}

/* The owner's exit callback: the last thing done with p (it may free p). */
static void report_exit (struct proc *p, int status)
{
    if (p->exit_cb && !p->destroyed)
        p->exit_cb (p,
                    WIFSIGNALED (status) ? WTERMSIG (status)
                                         : WEXITSTATUS (status) << 8,
                    p->arg);
}

static void exit_cb (uv_poll_t *h, int uvstatus, int events)
{
    struct proc *p = h->data;
    int status;
    pid_t rc;

    do {
        rc = waitpid (p->pid, &status, WNOHANG);
    } while (rc < 0 && errno == EINTR);
    if (rc == 0)
        return; /* not yet (a spurious wakeup) */
    if (rc < 0)
        status = 1 << 8; /* cannot happen: it is our child */
    exited (p, status);
    uv_close ((uv_handle_t *)&p->process, process_close_cb);
    report_exit (p, status);
}

/* A pipe for one of the shell's output streams: the read end stays here
 * (a libuv pipe), the write end is returned for the child. */
static int pipe_init (uv_loop_t *loop, struct proc *p, struct pipe_ctx *pc,
                      const char *name, int *wfd)
{
    int fds[2];
    int e;

    pc->p = p;
    pc->name = name;
    if (pipe2 (fds, O_CLOEXEC) < 0)
        return -1;
    if ((e = uv_pipe_init (loop, &pc->pipe, 0)) < 0) {
        close (fds[0]);
        close (fds[1]);
        errno = -e;
        return -1;
    }
    pc->pipe.data = pc;
    pc->open = true;
    if ((e = uv_pipe_open (&pc->pipe, fds[0])) < 0) {
        close (fds[0]);
        close (fds[1]);
        errno = -e;
        return -1;
    }
    *wfd = fds[1];
    return 0;
}

static int spawn (pid_t *pid, char **argv, char **env, int out, int err)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none, all;
    int e;

    sigemptyset (&none);
    sigfillset (&all);
    if ((e = posix_spawn_file_actions_init (&fa)) != 0)
        return e;
    if ((e = posix_spawnattr_init (&attr)) != 0) {
        posix_spawn_file_actions_destroy (&fa);
        return e;
    }
    if ((e
         = posix_spawn_file_actions_addopen (&fa, 0, "/dev/null", O_RDONLY, 0))
            != 0
        || (e = posix_spawn_file_actions_adddup2 (&fa, out, 1)) != 0
        || (e = posix_spawn_file_actions_adddup2 (&fa, err, 2)) != 0
        || (e = posix_spawn_file_actions_addchdir_np (&fa, "/")) != 0
        || (e = posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETSID
                                                     | POSIX_SPAWN_SETSIGMASK
                                                     | POSIX_SPAWN_SETSIGDEF))
               != 0
        || (e = posix_spawnattr_setsigmask (&attr, &none)) != 0
        || (e = posix_spawnattr_setsigdefault (&attr, &all)) != 0)
        goto done;
    e = posix_spawn (pid, argv[0], &fa, &attr, argv, env);
done:
    posix_spawnattr_destroy (&attr);
    posix_spawn_file_actions_destroy (&fa);
    return e;
}

/* Watch the exit of the spawned child p->pid (a pidfd); if that fails it
 * is killed and reaped: it must not run unwatched. */
static int watch (struct proc *p, uv_loop_t *loop, const char *name,
                  flux_error_t *error)
{
    int e = 0;

    if ((p->pidfd = (int)syscall (SYS_pidfd_open, p->pid, 0)) < 0
        || (e = uv_poll_init (loop, &p->process, p->pidfd)) < 0) {
        int saved_errno = p->pidfd < 0 ? errno : -e;
        (void)kill (-p->pid, SIGKILL);
        (void)waitpid (p->pid, NULL, 0);
        errno = saved_errno;
        return errprintf (error, "%s: watching the process: %s", name,
                          strerror (errno));
    }
    p->process.data = p;
    p->process_open = true;
    if ((e = uv_poll_start (&p->process, UV_READABLE, exit_cb)) < 0) {
        (void)kill (-p->pid, SIGKILL);
        (void)waitpid (p->pid, NULL, 0);
        errno = -e;
        return errprintf (error, "%s: watching the process: %s", name,
                          uv_strerror (e));
    }
    return 0;
}

static void read_start (struct proc *p)
{
    if (uv_read_start ((uv_stream_t *)&p->out.pipe, alloc_cb, read_cb) < 0
        || uv_read_start ((uv_stream_t *)&p->err.pipe, alloc_cb, read_cb) < 0) {
        /* the shell runs: it is reported normally, its output is lost */
        pipe_shut (&p->out);
        pipe_shut (&p->err);
    }
}

static struct proc *proc_new (proc_exit_f exit_cb_fn, proc_line_f line_cb,
                              void *arg)
{
    struct proc *p = calloc (1, sizeof (*p));

    if (p) {
        p->pidfd = p->wout = p->werr = -1;
        p->exit_cb = exit_cb_fn;
        p->line_cb = line_cb;
        p->arg = arg;
    }
    return p;
}

/* proc_spawn() or proc_launch() failed: undo, free (errno kept). */
static void proc_abort (struct proc *p)
{
    int saved_errno = errno;

    p->destroyed = true;
    p->launched = false;
    pipe_shut (&p->out);
    pipe_shut (&p->err);
    if (p->process_open)
        uv_close ((uv_handle_t *)&p->process, process_close_cb);
    else
        close_fd (&p->pidfd);
    maybe_free (p);
    errno = saved_errno;
}

struct proc *proc_spawn (uv_loop_t *loop, char **argv, char **env,
                         proc_exit_f exit_cb_fn, proc_line_f line_cb, void *arg,
                         flux_error_t *error)
{
    struct proc *p;
    int out = -1, err = -1;
    int e;

    if (!(p = proc_new (exit_cb_fn, line_cb, arg))) {
        errprintf (error, "out of memory");
        return NULL;
    }
    if (pipe_init (loop, p, &p->out, "stdout", &out) < 0
        || pipe_init (loop, p, &p->err, "stderr", &err) < 0) {
        errprintf (error, "pipe: %s", strerror (errno));
        goto error;
    }
    if ((e = spawn (&p->pid, argv, env, out, err)) != 0) {
        errno = e;
        /* the text as libuv gave it before (t2520 looks for it) */
        errprintf (error, "%s: %s", argv[0], uv_strerror (-e));
        goto error;
    }
    (void)close (out);
    (void)close (err);
    out = err = -1;
    if (watch (p, loop, argv[0], error) < 0)
        goto error;
    read_start (p);
    return p;
error:
    close_fd (&out);
    close_fd (&err);
    proc_abort (p);
    return NULL;
}

/* ---- through the launcher ---- */

/* The owner's start callback: the last thing done with p. */
static void report_start (struct proc *p, int errnum, const char *text)
{
    if (errnum)
        p->exited = true; /* never ran: nothing to signal or wait for */
    if (p->start_cb && !p->destroyed)
        p->start_cb (p, errnum, text, p->arg);
}

/* The launcher could not fork it, or died before it read the request:
 * posix_spawn it as proc_spawn() does. */
static void spawn_instead (struct proc *p)
{
    struct launch_hdr hdr;
    char **argv, **env;
    flux_error_t error;
    int e;

    if (launch_decode_start (p->req, p->req_len, &hdr, &argv, &env) < 0) {
        errprintf (&error, "decoding the command: %s", strerror (errno));
        e = errno;
    }
    else {
        if ((e = spawn (&p->pid, argv, env, p->wout, p->werr)) != 0)
            errprintf (&error, "%s: %s", argv[0], uv_strerror (-e));
        else if (watch (p, p->loop, argv[0], &error) < 0) {
            e = errno;
            p->pid = 0;
        }
        free (argv);
    }
    close_fd (&p->wout);
    close_fd (&p->werr);
    free (p->req);
    p->req = NULL;
    report_start (p, e, e ? error.text : NULL);
}

static void launched_started (void *ctx, pid_t pid, int pidfd, int errnum)
{
    struct proc *p = ctx;

    p->starting = false;
    if (errnum == 0) {
        p->pid = pid;
        p->pidfd = pidfd;
        p->forked = true;
        close_fd (&p->wout);
        close_fd (&p->werr);
        free (p->req);
        p->req = NULL;
        if (p->destroyed) { /* started for nobody: the exit frees it */
            (void)syscall (SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
            return;
        }
        for (int i = 0; i < p->nheld; i++)
            (void)proc_kill (p, p->held[i].signum, p->held[i].pgrp);
        report_start (p, 0, NULL);
        return;
    }
    p->launched = false;
    if (p->destroyed) {
        maybe_free (p);
        return;
    }
    if (errnum == ECONNRESET) { /* it may have forked it: not twice */
        close_fd (&p->wout);
        close_fd (&p->werr);
        report_start (p, errnum, "the shell launcher died before it answered");
        return;
    }
    spawn_instead (p);
}

static void launched_exited (void *ctx, int status)
{
    struct proc *p = ctx;

    exited (p, status);
    launcher_reap (p->launcher, p->pid); /* after the kills */
    p->launched = false;
    close_fd (&p->pidfd);
    if (p->destroyed) {
        maybe_free (p);
        return;
    }
    report_exit (p, status);
}

static void launched_lost (void *ctx)
{
    struct proc *p = ctx;

    p->launched = false;
    if (!p->exited) {
        /* nobody will report its exit: it must not run on (the pidfd
         * names it safely, even reparented) */
        if (p->pidfd >= 0)
            (void)syscall (SYS_pidfd_send_signal, p->pidfd, SIGKILL, NULL, 0);
        exited (p, SIGKILL);
    }
    close_fd (&p->pidfd);
    if (p->destroyed) {
        maybe_free (p);
        return;
    }
    report_exit (p, SIGKILL);
}

static const struct launcher_ops ops = {
    .started = launched_started,
    .exited = launched_exited,
    .lost = launched_lost,
};

const struct launcher_ops *proc_launcher_ops (void)
{
    return &ops;
}

struct proc *proc_launch (struct launcher *l, uv_loop_t *loop, char **argv,
                          char **env, proc_start_f start_cb,
                          proc_exit_f exit_cb_fn, proc_line_f line_cb,
                          void *arg, flux_error_t *error)
{
    struct proc *p;
    ssize_t n;

    if (!(p = proc_new (exit_cb_fn, line_cb, arg))) {
        errprintf (error, "out of memory");
        return NULL;
    }
    p->launcher = l;
    p->loop = loop;
    p->start_cb = start_cb;
    p->req_len = launch_start_len (argv, env);
    if (p->req_len > LAUNCH_MSG_MAX) {
        errno = E2BIG;
        errprintf (error, "the command and environment are too large");
        goto error;
    }
    if (!(p->req = malloc (p->req_len))
        || (n = launch_encode_start (p->req, p->req_len, 0, argv, env)) < 0) {
        errprintf (error, "encoding the request: %s", strerror (errno));
        goto error;
    }
    if (pipe_init (loop, p, &p->out, "stdout", &p->wout) < 0
        || pipe_init (loop, p, &p->err, "stderr", &p->werr) < 0) {
        errprintf (error, "pipe: %s", strerror (errno));
        goto error;
    }
    if (launcher_start (l, p->req, p->req_len, p->wout, p->werr, p) < 0) {
        errprintf (error, "the shell launcher: %s", strerror (errno));
        goto error;
    }
    p->starting = true;
    p->launched = true;
    read_start (p);
    return p;
error:
    proc_abort (p);
    return NULL;
}

void proc_destroy (struct proc *p)
{
    if (p) {
        int saved_errno = errno;
        p->destroyed = true;
        pipe_shut (&p->out);
        pipe_shut (&p->err);
        if (p->process_open && !p->exited
            && !uv_is_closing ((uv_handle_t *)&p->process)) {
            /* the owner is going (unload): the job goes with it; a
             * shell that exited is reaped here, its strays killed */
            if (!p->imp) {
                (void)kill (-p->pid, SIGKILL);
                if (!p->exited_unwatched) /* else it killed them */
                    kill_groups (p);
            }
            else if (!p->exited_unwatched)
                (void)kill (p->pid, SIGUSR1);
            if (p->exited_unwatched) /* after the kill: the zombie holds
                                        the group id until then */
                (void)waitpid (p->pid, NULL, WNOHANG);
            uv_close ((uv_handle_t *)&p->process, process_close_cb);
        }
        else if (p->launched && !p->starting && !p->exited) {
            /* the same; the launcher reaps it once it reported the exit
             * (launched_exited() then frees p), or at its end */
            (void)kill (-p->pid, SIGKILL);
            if (!p->exited_unwatched)
                kill_groups (p);
        }
        close_fd (&p->wout); /* a start for nobody: launched_started() */
        close_fd (&p->werr);
        maybe_free (p);
        errno = saved_errno;
    }
}

static double now_mono (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Wait on the pidfds in fds until deadline or until none is left. */
static void wait_exits (struct proc **procs, struct pollfd *fds, size_t n,
                        size_t *live, double deadline)
{
    while (*live > 0) {
        double left = deadline - now_mono ();
        int rc;
        if (left <= 0.)
            break;
        /* the module may share its thread (broker.module-group): the
         * others run meanwhile, the kvs that the shells' last commits
         * wait for among them */
        rc = flux_coop_poll (fds, n, (int)(left * 1000.) + 1);
        if (rc < 0 && errno != EINTR)
            break;
        for (size_t i = 0; rc > 0 && i < n; i++) {
            if (fds[i].fd >= 0 && fds[i].revents) {
                procs[i]->exited_unwatched = true;
                fds[i].fd = -1;
                (*live)--;
            }
        }
    }
}

size_t proc_terminate_all (struct proc **procs, size_t n, double grace)
{
    struct pollfd *fds;
    size_t live = 0, left;

    if (n == 0 || !(fds = calloc (n, sizeof (*fds))))
        return n; /* nothing to wait for, or proc_destroy() kills at once */
    for (size_t i = 0; i < n; i++) {
        struct proc *p = procs[i];
        fds[i].fd = -1;
        if (!p || p->exited || p->starting || p->pidfd < 0)
            continue;
        /* the shell passes SIGTERM to its tasks (the IMP to its shell) */
        (void)kill (p->pid, SIGTERM);
        fds[i].fd = p->pidfd;
        fds[i].events = POLLIN;
        live++;
    }
    /* the reactor no longer runs: wait here, on the pidfds (readable once
     * the process is a zombie; proc_destroy() leaves those alone) */
    wait_exits (procs, fds, n, &live, now_mono () + grace);
    left = live;
    if (live > 0) {
        /* the tasks lead groups of their own, out of reach of
         * proc_destroy()'s killpg(): the shells kill them (killsig.h) */
        for (size_t i = 0; i < n; i++) {
            if (fds[i].fd >= 0 && !procs[i]->imp)
                (void)kill (procs[i]->pid, SHELL_KILL_SIGNAL);
        }
        wait_exits (procs, fds, n, &live, now_mono () + 1.);
    }
    free (fds);
    return left;
}

int proc_kill (struct proc *p, int signum, bool pgrp)
{
    if (p->starting) { /* sent once the launcher answered */
        int i = p->nheld < HELD_MAX ? p->nheld++ : HELD_MAX - 1;
        p->held[i].signum = signum;
        p->held[i].pgrp = pgrp;
        return 0;
    }
    if (p->exited || p->pid <= 0) {
        errno = ESRCH;
        return -1;
    }
    if (p->imp)
        return kill (p->pid, signum == SIGKILL ? SIGUSR1 : signum);
    if (signum == SIGKILL && pgrp && !p->kill_asked) {
        /* its tasks lead process groups of their own: the shell SIGKILLs
         * them and itself (killsig.h); a shell still there at the next
         * step (job-exec repeats it every kill-timeout) gets this */
        p->kill_asked = true;
        return kill (p->pid, SHELL_KILL_SIGNAL);
    }
    if (!pgrp || kill (-p->pid, signum) == 0)
        return pgrp ? 0 : kill (p->pid, signum);
    if (errno == ESRCH && p->forked)
        /* just forked, the shell has not run setsid() yet (no group of
         * its own, no task): the launcher answers before the child runs */
        return kill (p->pid, signum);
    return -1;
}

void proc_set_imp (struct proc *p)
{
    if (p)
        p->imp = true;
}

pid_t proc_pid (const struct proc *p)
{
    return p->pid;
}

bool proc_exited (const struct proc *p)
{
    return p->exited;
}

bool proc_forked (const struct proc *p)
{
    return p->forked;
}
