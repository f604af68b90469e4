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
 * The strays signaled are kept in a small hash set (open addressing,
 * linear probing, backward-shift deletion) so that each gets SIGTERM
 * once and SIGKILL once; a pid leaves the set when it is reaped, before
 * the kernel may give it to another process.
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

#include "reaper.h"

/* How long reaper_finish() waits for strays after their SIGKILL. */
#define GIVEUP_MS 10000

enum phase { PHASE_RUN, PHASE_TERM, PHASE_KILL };

struct slot {
    pid_t pid; /* 0: empty */
    int sent;  /* the last signal sent */
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

    struct slot *set; /* strays signaled */
    size_t set_cap;   /* a power of 2, or 0 */
    size_t set_count;

    char *buf; /* the children file */
    size_t buf_size;
    pid_t *kids;
    size_t nkids, kids_cap;
};

/* For reaper_kill_children(): set once, before any handler needs it. */
static char children_path[64];

/* The set of strays signaled. */

static size_t slot_of (const struct reaper *r, pid_t pid)
{
    return ((size_t)pid * 2654435761u) & (r->set_cap - 1);
}

static struct slot *set_find (struct reaper *r, pid_t pid)
{
    if (r->set_cap == 0)
        return NULL;
    for (size_t i = slot_of (r, pid);; i = (i + 1) & (r->set_cap - 1)) {
        if (r->set[i].pid == pid)
            return &r->set[i];
        if (r->set[i].pid == 0)
            return NULL;
    }
}

static struct slot *set_insert_nogrow (struct reaper *r, pid_t pid)
{
    size_t i = slot_of (r, pid);

    while (r->set[i].pid != 0 && r->set[i].pid != pid)
        i = (i + 1) & (r->set_cap - 1);
    if (r->set[i].pid == 0) {
        r->set[i].pid = pid;
        r->set[i].sent = 0;
        r->set_count++;
    }
    return &r->set[i];
}

/* The slot of pid, added if new (kept at most half full).  NULL on
 * ENOMEM. */
static struct slot *set_get (struct reaper *r, pid_t pid)
{
    struct slot *s;

    if ((s = set_find (r, pid)))
        return s;
    if (2 * (r->set_count + 1) > r->set_cap) {
        size_t oldcap = r->set_cap;
        struct slot *old = r->set;
        size_t cap = oldcap ? 2 * oldcap : 16;
        if (!(r->set = calloc (cap, sizeof (*r->set)))) {
            r->set = old;
            return NULL;
        }
        r->set_cap = cap;
        r->set_count = 0;
        for (size_t i = 0; i < oldcap; i++) {
            if (old[i].pid != 0)
                set_insert_nogrow (r, old[i].pid)->sent = old[i].sent;
        }
        free (old);
    }
    return set_insert_nogrow (r, pid);
}

/* Remove pid; true if it was there. */
static bool set_remove (struct reaper *r, pid_t pid)
{
    struct slot *s = set_find (r, pid);
    size_t i, j, mask = r->set_cap - 1;

    if (!s)
        return false;
    i = (size_t)(s - r->set);
    r->set[i].pid = 0;
    r->set_count--;
    /* move back what probed past the hole */
    for (j = (i + 1) & mask; r->set[j].pid != 0; j = (j + 1) & mask) {
        size_t home = slot_of (r, r->set[j].pid);
        /* j's entry stays if its home lies cyclically in (i, j] */
        if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
            continue;
        r->set[i] = r->set[j];
        r->set[j].pid = 0;
        i = j;
    }
    return true;
}

/* The children file: into r->kids.  -1 with errno. */
static int read_children (struct reaper *r)
{
    size_t len = 0;
    ssize_t n;
    int fd;

    r->nkids = 0;
    if ((fd = open (children_path, O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    for (;;) {
        if (len + 1 >= r->buf_size) {
            size_t size = r->buf_size ? 2 * r->buf_size : 256;
            char *p = realloc (r->buf, size);
            if (!p) {
                close (fd);
                return -1;
            }
            r->buf = p;
            r->buf_size = size;
        }
        n = read (fd, r->buf + len, r->buf_size - len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    close (fd);
    if (n < 0)
        return -1;
    r->buf[len] = '\0';
    for (char *p = r->buf, *end; *p; p = end) {
        long pid = strtol (p, &end, 10);
        if (end == p) {
            end++;
            continue;
        }
        if (pid <= 0 || pid > INT32_MAX)
            continue;
        if (r->nkids == r->kids_cap) {
            size_t cap = r->kids_cap ? 2 * r->kids_cap : 16;
            pid_t *k = realloc (r->kids, cap * sizeof (*k));
            if (!k)
                return -1;
            r->kids = k;
            r->kids_cap = cap;
        }
        r->kids[r->nkids++] = (pid_t)pid;
    }
    return 0;
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
        (void)set_remove (r, pid);
        return true;
    }
    if (si.si_pid != pid)
        return false;
    if (!set_remove (r, pid))
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
    struct slot *s = set_get (r, pid);

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

static void close_cb (uv_handle_t *h)
{
    struct reaper *r = h->data;

    free (r->set);
    free (r->buf);
    free (r->kids);
    free (r);
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
    r->loop = loop;
    r->ops = ops;
    r->arg = arg;
    r->grace_ms = (uint64_t)(grace * 1000. + 0.5);
    r->timer.data = r;
    if ((e = uv_timer_init (loop, &r->timer)) < 0) {
        free (r);
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

/* One pass over the children file: kill_live() each; how many lived. */
static int kill_pass (void)
{
    char buf[256];
    long pid = 0;
    bool digits = false;
    int live = 0;
    ssize_t n;
    int fd;

    if ((fd = open (children_path, O_RDONLY | O_CLOEXEC)) < 0)
        return 0;
    while ((n = read (fd, buf, sizeof (buf))) > 0
           || (n < 0 && errno == EINTR)) {
        for (ssize_t i = 0; i < n; i++) {
            if (buf[i] >= '0' && buf[i] <= '9' && pid < INT32_MAX / 10) {
                pid = pid * 10 + (buf[i] - '0');
                digits = true;
                continue;
            }
            if (digits && pid > 0 && kill_live ((pid_t)pid))
                live++;
            pid = 0;
            digits = false;
        }
    }
    if (digits && pid > 0 && kill_live ((pid_t)pid))
        live++;
    close (fd);
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
