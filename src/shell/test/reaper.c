/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/reaper.c - the child subreaper: orphans handed to this process
 * are reaped as they exit, ended (SIGTERM, SIGKILL after the grace
 * period) by a sweep, never confused with the children it owns. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "reaper.h"
#include "tap.h"

static pid_t owned[8];
static int nowned;
static struct reaper *cur; /* the SIGCHLD watcher's */

static void sigchld_cb (uv_signal_t *h, int signum)
{
    (void)h;
    (void)signum;
    reaper_check (cur);
}

static bool own (pid_t pid, void *arg)
{
    (void)arg;
    for (int i = 0; i < nowned; i++) {
        if (owned[i] == pid)
            return true;
    }
    return false;
}

static const struct reaper_ops ops = {.own = own};

/* The ppid of pid from /proc, or -1. */
static pid_t ppid_of (pid_t pid)
{
    char path[64], line[256];
    pid_t ppid = -1;
    FILE *fp;

    snprintf (path, sizeof (path), "/proc/%d/status", (int)pid);
    if (!(fp = fopen (path, "r")))
        return -1;
    while (fgets (line, sizeof (line), fp)) {
        if (!strncmp (line, "PPid:", 5))
            ppid = (pid_t)atoi (line + 5);
    }
    fclose (fp);
    return ppid;
}

/* An owned child that forks n orphans and exits 7; each orphan calls
 * setsid (if sid), ignores SIGTERM (if ignore_term), then sleeps
 * `life` seconds (0: until killed).  Their pids are read from a pipe;
 * the owned child is waited for here: 7 proves the reaper left it. */
static int make_orphans (int n, bool sid, bool ignore_term, double life,
                         pid_t *pids)
{
    int pfd[2], status;
    pid_t a;

    if (pipe (pfd) < 0 || (a = fork ()) < 0)
        BAIL_OUT ("pipe/fork: %s", strerror (errno));
    if (a == 0) {
        close (pfd[0]);
        for (int i = 0; i < n; i++) {
            pid_t g = fork ();
            if (g == 0) {
                if (sid)
                    (void)setsid ();
                if (ignore_term)
                    (void)signal (SIGTERM, SIG_IGN);
                pid_t me = getpid ();
                (void)!write (pfd[1], &me, sizeof (me));
                close (pfd[1]);
                if (life > 0)
                    usleep ((useconds_t)(life * 1e6));
                else
                    for (;;)
                        pause ();
                _exit (0);
            }
        }
        _exit (7);
    }
    close (pfd[1]);
    owned[nowned++] = a;
    for (int i = 0; i < n; i++) {
        if (read (pfd[0], &pids[i], sizeof (pids[i])) != sizeof (pids[i]))
            BAIL_OUT ("reading an orphan's pid");
    }
    close (pfd[0]);
    /* the reaper may run meanwhile: a's status must still be ours */
    if (waitpid (a, &status, 0) != a)
        BAIL_OUT ("waitpid: %s", strerror (errno));
    nowned--;
    return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

static bool all_gone (pid_t *pids, int n)
{
    for (int i = 0; i < n; i++) {
        if (kill (pids[i], 0) == 0 || errno != ESRCH)
            return false;
    }
    return true;
}

static void tick_cb (uv_timer_t *t)
{
    (void)t;
}

/* Run the loop until cond or 10 s (the reaper's handles do not keep a
 * loop alive: a ticking timer does, as the shell's handles do). */
static bool run_until (uv_loop_t *loop, bool (*cond) (void *), void *arg)
{
    uv_timer_t tick;
    bool done = false;

    uv_timer_init (loop, &tick);
    uv_timer_start (&tick, tick_cb, 10, 10);
    for (int i = 0; i < 1000 && !(done = cond (arg)); i++)
        (void)uv_run (loop, UV_RUN_ONCE);
    uv_close ((uv_handle_t *)&tick, NULL);
    (void)uv_run (loop, UV_RUN_NOWAIT);
    return done;
}

struct reaped {
    struct reaper *r;
    int exited;
};

static bool exited_count (void *arg)
{
    struct reaped *x = arg;
    struct reaper_stats st;

    reaper_get_stats (x->r, &st);
    return st.exited >= x->exited;
}

static double now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct reaper *create (uv_loop_t *loop, double grace)
{
    return (cur = reaper_create (loop, &ops, NULL, grace));
}

static void destroy (uv_loop_t *loop, struct reaper *r)
{
    cur = NULL;
    reaper_destroy (r);
    (void)uv_run (loop, UV_RUN_NOWAIT); /* close callbacks free it */
}

static void test_orphan_exits (uv_loop_t *loop)
{
    struct reaper *r = create (loop, 5.);
    struct reaper_stats st;
    pid_t g[3];
    int subreaper = 0;

    ok (r != NULL, "reaper_create works");
    ok (prctl (PR_GET_CHILD_SUBREAPER, &subreaper) == 0 && subreaper == 1,
        "the process is a child subreaper");
    cmp_ok (make_orphans (3, true, false, 0.1, g), "==", 7,
            "an owned child's exit status is left to its owner");
    ok (ppid_of (g[0]) == getpid () || kill (g[0], 0) < 0,
        "its orphans are handed to us");
    struct reaped x = {r, 3};
    ok (run_until (loop, exited_count, &x), "orphans that exit are reaped");
    ok (all_gone (g, 3), "no zombie is left");
    reaper_get_stats (r, &st);
    ok (st.exited == 3 && st.killed == 0, "3 exited, none killed");
    reaper_finish (r, &st);
    ok (st.killed == 0 && st.left == 0, "reaper_finish with no stray: nothing");
    destroy (loop, r);
}

static bool gone_cb (void *arg)
{
    pid_t *g = arg;
    return all_gone (g, 1);
}

static void test_sweep (uv_loop_t *loop)
{
    struct reaper *r = create (loop, 5.);
    struct reaper_stats st;
    pid_t g[1];

    cmp_ok (make_orphans (1, true, false, 0, g), "==", 7,
            "a stray in a session of its own");
    reaper_check (r);
    ok (kill (g[0], 0) == 0, "before the sweep it lives");
    reaper_sweep (r);
    ok (run_until (loop, gone_cb, g), "the sweep ends it (SIGTERM)");
    reaper_finish (r, &st);
    ok (st.killed == 1 && st.sigkill == 0 && st.left == 0,
        "killed 1, no SIGKILL (killed=%d sigkill=%d)", st.killed, st.sigkill);
    destroy (loop, r);
}

static void test_sigkill (uv_loop_t *loop)
{
    struct reaper *r = create (loop, 0.2);
    struct reaper_stats st;
    pid_t g[2];
    double t0;

    cmp_ok (make_orphans (2, true, true, 0, g), "==", 7,
            "two strays that ignore SIGTERM");
    t0 = now ();
    reaper_finish (r, &st);
    ok (now () - t0 >= 0.19,
        "reaper_finish waited for the grace period (%.3fs)", now () - t0);
    ok (all_gone (g, 2), "both are gone");
    ok (st.killed == 2 && st.sigkill == 2 && st.left == 0,
        "killed 2, both by SIGKILL (killed=%d sigkill=%d left=%d)", st.killed,
        st.sigkill, st.left);
    destroy (loop, r);
}

static void test_many (uv_loop_t *loop)
{
    struct reaper *r = create (loop, 5.);
    struct reaper_stats st;
    pid_t g[40];

    cmp_ok (make_orphans (40, false, false, 0, g), "==", 7,
            "40 strays, in the owned child's group");
    reaper_finish (r, &st);
    ok (all_gone (g, 40), "all 40 are gone");
    ok (st.killed == 40 && st.sigkill == 0 && st.left == 0,
        "killed 40, each counted once (killed=%d)", st.killed);
    destroy (loop, r);
}

static void test_kill_children (uv_loop_t *loop)
{
    struct reaper *r = create (loop, 5.);
    struct reaper_stats st;
    pid_t g[2];

    cmp_ok (make_orphans (2, true, true, 0, g), "==", 7,
            "two strays that ignore SIGTERM");
    reaper_kill_children ();
    ok (kill (g[0], 0) == 0 && kill (g[1], 0) == 0,
        "reaper_kill_children leaves them zombies");
    reaper_check (r);
    ok (all_gone (g, 2), "reaper_check reaps them");
    reaper_get_stats (r, &st);
    ok (st.exited == 2 && st.killed == 0,
        "counted as exited: the reaper did not signal them");
    destroy (loop, r);
    reaper_get_stats (NULL, &st);
    ok (st.killed == 0 && st.exited == 0, "NULL reaper: zero counts");
}

int main (int argc, char **argv)
{
    uv_loop_t loop;

    (void)argc;
    (void)argv;
    plan (NO_PLAN);
    if (access ("/proc/self/task", R_OK) < 0) {
        skip (1, "no /proc");
        done_testing ();
        return 0;
    }
    uv_signal_t sigchld;

    if (uv_loop_init (&loop) < 0 || uv_signal_init (&loop, &sigchld) < 0
        || uv_signal_start (&sigchld, sigchld_cb, SIGCHLD) < 0)
        BAIL_OUT ("uv_loop_init");
    uv_unref ((uv_handle_t *)&sigchld);
    ok (reaper_create (&loop, &ops, NULL, -1.) == NULL && errno == EINVAL,
        "a negative grace period is EINVAL");
    test_orphan_exits (&loop);
    test_sweep (&loop);
    test_sigkill (&loop);
    test_many (&loop);
    test_kill_children (&loop);
    uv_close ((uv_handle_t *)&sigchld, NULL);
    (void)uv_run (&loop, UV_RUN_NOWAIT);
    ok (uv_loop_close (&loop) == 0, "every handle of the reaper is closed");
    done_testing ();
    return 0;
}
