/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* reaper.c - the shell as a child subreaper: find, reap and end the
 * processes its tasks left behind (reaper.h).
 *
 * The shell's children are read from /proc/self/task/<pid>/children
 * (one read; the kernel lists a child there from its fork, or its
 * reparenting, until it is reaped).  Each stray is waited for by pid
 * (waitid P_PID), never with waitpid(-1): the tasks' statuses are taken
 * with waitid(WNOWAIT) by task.c, the rexec server's by pidfd, and
 * libuv's own children by libuv (its SIGCHLD handler waits for the pids
 * of its process handles only, and aborts on an error other than
 * ECHILD), so none of theirs may be taken here.
 *
 * The strays signaled are kept by pid (idtab) so that each gets SIGTERM
 * once and SIGKILL once; a pid leaves the table when it is reaped,
 * before the kernel may give it to another process.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libutil/idtab.h"

#include "reaper.h"

/* How long reaper_finish() waits for strays after their SIGKILL. */
#define GIVEUP_MS 10000

enum phase { PHASE_RUN, PHASE_TERM, PHASE_KILL };

struct stray {
    struct idtab_entry e; /* e.id: its pid */
    int sent;             /* the last signal sent */
};

struct reaper {
    uv_loop_t *loop;
    const struct reaper_ops *ops;
    void *arg;
    uint64_t grace_ms;
    uv_timer_t timer; /* grace period, then the wait after SIGKILL */
    enum phase phase;
    bool finishing; /* reaper_finish() is waiting */
    bool gave_up;
    int live; /* strays alive at the last scan of a sweep */
    struct reaper_stats stats;

    struct idtab *signaled; /* struct stray */

    pid_t *kids; /* the children file, read by scan() */
    size_t nkids, kids_cap;
};

/* For reaper_kill_children(): set once, before any handler needs it. */
static char children_path[64];

/* The strays signaled. */

/* The stray pid, added if new.  NULL on ENOMEM. */
static struct stray *stray_get (struct reaper *r, pid_t pid)
{
    struct idtab_entry *e = idtab_lookup (r->signaled, (uint64_t)pid);
    struct stray *st;

    if (e)
        return (struct stray *)e;
    if (!(st = calloc (1, sizeof (*st))))
        return NULL;
    st->e.id = (uint64_t)pid;
    if (idtab_insert (r->signaled, &st->e) < 0) {
        free (st);
        return NULL;
    }
    return st;
}

/* Forget pid; true if it had been signaled. */
static bool stray_forget (struct reaper *r, pid_t pid)
{
    struct idtab_entry *e = idtab_lookup (r->signaled, (uint64_t)pid);

    if (!e)
        return false;
    idtab_remove (r->signaled, e);
    free (e);
    return true;
}

/* The children file, async-signal-safe (a buffer on the stack): cb with
 * each pid listed.  -1 with errno if the file could not be read, or as
 * cb failed (which stops the reading). */
static int children_foreach (int (*cb) (pid_t pid, void *arg), void *arg)
{
    char buf[256];
    long pid = 0;
    bool digits = false;
    ssize_t n = 0;
    int fd, e, rc = 0;

    if ((fd = open (children_path, O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    while (rc == 0
           && ((n = read (fd, buf, sizeof (buf))) > 0
               || (n < 0 && errno == EINTR))) {
        for (ssize_t i = 0; i < n && rc == 0; i++) {
            if (buf[i] >= '0' && buf[i] <= '9' && pid < INT32_MAX / 10) {
                pid = pid * 10 + (buf[i] - '0');
                digits = true;
                continue;
            }
            if (digits && pid > 0)
                rc = cb ((pid_t)pid, arg);
            pid = 0;
            digits = false;
        }
    }
    if (rc == 0 && n < 0)
        rc = -1;
    else if (rc == 0 && digits && pid > 0)
        rc = cb ((pid_t)pid, arg);
    e = errno;
    close (fd);
    errno = e;
    return rc;
}

static int add_kid (pid_t pid, void *arg)
{
    struct reaper *r = arg;

    if (r->nkids == r->kids_cap) {
        size_t cap = r->kids_cap ? 2 * r->kids_cap : 16;
        pid_t *k = realloc (r->kids, cap * sizeof (*k));
        if (!k)
            return -1;
        r->kids = k;
        r->kids_cap = cap;
    }
    r->kids[r->nkids++] = pid;
    return 0;
}

/* The children file: into r->kids (read whole before any is reaped:
 * reaping one while the file is read could make the read skip another).
 * -1 with errno. */
static int read_children (struct reaper *r)
{
    r->nkids = 0;
    return children_foreach (add_kid, r);
}

/* Reap pid if it exited; true if it did. */
static bool reap (struct reaper *r, pid_t pid)
{
    siginfo_t si;
    int rc;

    do {
        memset (&si, 0, sizeof (si));
        rc = waitid (P_PID, (id_t)pid, &si, WEXITED | WNOHANG);
    } while (rc < 0 && errno == EINTR);
    if (rc < 0) { /* ECHILD: not ours any more */
        (void)stray_forget (r, pid);
        return true;
    }
    if (si.si_pid != pid)
        return false;
    if (!stray_forget (r, pid))
        r->stats.exited++;
    return true;
}

static void signal_stray (pid_t pid, int sig)
{
    /* a stray that leads a group (setsid) takes it along: its pid is
     * that group's id, and cannot name another group while it lives */
    (void)kill (-pid, sig);
    (void)kill (pid, sig);
}

/* SIGTERM once, or SIGKILL once, as the phase says. */
static void end_stray (struct reaper *r, pid_t pid)
{
    int sig = r->phase == PHASE_KILL ? SIGKILL : SIGTERM;
    struct stray *s = stray_get (r, pid);

    if (!s) { /* out of memory: signal it anyway, uncounted */
        signal_stray (pid, sig);
        return;
    }
    if (s->sent == 0)
        r->stats.killed++;
    if (s->sent == sig || s->sent == SIGKILL)
        return;
    if (sig == SIGKILL)
        r->stats.sigkill++;
    s->sent = sig;
    signal_stray (pid, sig);
}

/* One look at the children: reap the strays that exited; once a sweep
 * began, end the live ones.  Sets r->live. */
static void scan (struct reaper *r)
{
    int live = 0;

    if (read_children (r) < 0)
        return;
    for (size_t i = 0; i < r->nkids; i++) {
        pid_t pid = r->kids[i];
        if (r->ops->own && r->ops->own (pid, r->arg))
            continue;
        if (reap (r, pid) || r->phase == PHASE_RUN)
            continue;
        live++;
        end_stray (r, pid);
    }
    r->live = live;
}

static void timer_cb (uv_timer_t *t);

/* After a scan in a sweep: the timer runs while strays live. */
static void arm (struct reaper *r)
{
    if (r->phase == PHASE_RUN)
        return;
    if (r->live == 0)
        (void)uv_timer_stop (&r->timer);
    else if (!uv_is_active ((uv_handle_t *)&r->timer)) {
        /* libuv counts from the time cached at the start of the loop
         * turn, which may be long past here (reaper_finish()) */
        uv_update_time (r->loop);
        (void)uv_timer_start (&r->timer, timer_cb,
                              r->phase == PHASE_TERM ? r->grace_ms : GIVEUP_MS,
                              0);
    }
}

static void timer_cb (uv_timer_t *t)
{
    struct reaper *r = t->data;

    if (r->phase == PHASE_TERM) { /* the grace period is over */
        r->phase = PHASE_KILL;
        scan (r);
    }
    else { /* SIGKILLed GIVEUP_MS ago and still there */
        scan (r);
        if (r->finishing && r->live > 0) {
            r->gave_up = true;
            return;
        }
    }
    arm (r);
}

void reaper_check (struct reaper *r)
{
    if (r) {
        scan (r);
        arm (r);
    }
}

void reaper_sweep (struct reaper *r)
{
    if (r) {
        if (r->phase == PHASE_RUN)
            r->phase = PHASE_TERM;
        reaper_check (r);
    }
}

void reaper_finish (struct reaper *r, struct reaper_stats *stats)
{
    if (!r) {
        if (stats)
            memset (stats, 0, sizeof (*stats));
        return;
    }
    r->finishing = true;
    if (r->phase == PHASE_RUN)
        r->phase = PHASE_TERM;
    /* the loop must wait for them: the timer keeps it alive */
    uv_ref ((uv_handle_t *)&r->timer);
    reaper_check (r);
    /* a stray's death wakes the loop (the caller's SIGCHLD watcher
     * calls reaper_check()), else the timer does */
    while (r->live > 0 && !r->gave_up)
        (void)uv_run (r->loop, UV_RUN_ONCE);
    r->finishing = false;
    (void)uv_timer_stop (&r->timer);
    uv_unref ((uv_handle_t *)&r->timer);
    r->stats.left = r->live;
    if (stats)
        *stats = r->stats;
}

void reaper_get_stats (struct reaper *r, struct reaper_stats *stats)
{
    if (r)
        *stats = r->stats;
    else
        memset (stats, 0, sizeof (*stats));
}

static void free_stray (struct idtab_entry *e, void *arg)
{
    free (e);
}

static void reaper_free (struct reaper *r)
{
    if (r->signaled) {
        idtab_foreach (r->signaled, free_stray, NULL);
        idtab_destroy (r->signaled);
    }
    free (r->kids);
    free (r);
}

static void close_cb (uv_handle_t *h)
{
    reaper_free (h->data);
}

struct reaper *reaper_create (uv_loop_t *loop, const struct reaper_ops *ops,
                              void *arg, double grace)
{
    struct reaper *r;
    char path[sizeof (children_path)];
    int e;

    if (!loop || !ops || grace < 0) {
        errno = EINVAL;
        return NULL;
    }
    /* without the children file the strays could not be found, only
     * left to pile up as zombies: no subreaper then */
    snprintf (path, sizeof (path), "/proc/self/task/%d/children",
              (int)getpid ());
    if (access (path, R_OK) < 0)
        return NULL;
    if (!(r = calloc (1, sizeof (*r))))
        return NULL;
    if (!(r->signaled = idtab_create ())) {
        reaper_free (r);
        return NULL;
    }
    r->loop = loop;
    r->ops = ops;
    r->arg = arg;
    r->grace_ms = (uint64_t)(grace * 1000. + 0.5);
    r->timer.data = r;
    if ((e = uv_timer_init (loop, &r->timer)) < 0) {
        reaper_free (r);
        errno = -e;
        return NULL;
    }
    uv_unref ((uv_handle_t *)&r->timer);
    if (prctl (PR_SET_CHILD_SUBREAPER, 1) < 0) {
        reaper_destroy (r); /* freed once the loop runs its close callbacks */
        return NULL;
    }
    memcpy (children_path, path, sizeof (path));
    return r;
}

void reaper_destroy (struct reaper *r)
{
    if (r) {
        int saved_errno = errno;
        uv_close ((uv_handle_t *)&r->timer, close_cb);
        errno = saved_errno;
    }
}

/* Async-signal-safe from here: open, read, close, kill, waitid,
 * clock_gettime, nanosleep and arithmetic only. */

/* SIGKILL pid and its group unless it is a zombie already; true if it
 * was not. */
static bool kill_live (pid_t pid)
{
    siginfo_t si;

    si.si_pid = 0;
    if (waitid (P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0
        && si.si_pid == pid)
        return false;
    signal_stray (pid, SIGKILL);
    return true;
}

static int kill_one (pid_t pid, void *arg)
{
    if (kill_live (pid))
        (*(int *)arg)++;
    return 0;
}

/* One pass over the children file: kill_live() each; how many lived. */
static int kill_pass (void)
{
    int live = 0;

    (void)children_foreach (kill_one, &live);
    return live;
}

/* Until every child is a zombie (a child's children are handed to us
 * before it becomes one), 500 ms at most: the tasks, just SIGKILLed,
 * leave their strays to the shell as they die. */
void reaper_kill_children (void)
{
    const struct timespec step = {0, 5 * 1000 * 1000};
    struct timespec t0, now;

    if (!children_path[0] || clock_gettime (CLOCK_MONOTONIC, &t0) < 0)
        return;
    while (kill_pass () > 0) {
        if (clock_gettime (CLOCK_MONOTONIC, &now) < 0
            || (now.tv_sec - t0.tv_sec) * 1000
                       + (now.tv_nsec - t0.tv_nsec) / 1000000
                   > 500)
            break;
        (void)nanosleep (&step, NULL);
    }
}
