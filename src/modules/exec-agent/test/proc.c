/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/proc.c - proc_terminate_all(): at unload, shells that exit on
 * SIGTERM are waited for within the grace, one that ignores it is left
 * for proc_destroy(), whose SIGKILL to its group ends it.  The task
 * groups a shell reports on its stdout get SIGKILL when it dies by a
 * signal, not when it exits. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc.h"
#include "tap.h"

extern char **environ;

static double now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void exit_cb (struct proc *p, int status, void *arg)
{
    (void)p;
    (void)status;
    (void)arg;
}

static struct proc *spawn (uv_loop_t *loop, const char *script)
{
    char *argv[] = {"/bin/sh", "-c", (char *)script, NULL};
    flux_error_t error;
    struct proc *p
        = proc_spawn (loop, argv, environ, exit_cb, NULL, NULL, &error);
    if (!p)
        diag ("proc_spawn: %s", error.text);
    return p;
}

/* pid is gone or a zombie. */
static bool dead_now (pid_t pid)
{
    char path[64], buf[256];
    FILE *fp;
    char *s;

    snprintf (path, sizeof (path), "/proc/%d/stat", (int)pid);
    if (!(fp = fopen (path, "r")))
        return true;
    s = fgets (buf, sizeof (buf), fp);
    fclose (fp);
    return s && (s = strrchr (buf, ')')) && s[1] == ' ' && s[2] == 'Z';
}

/* Wait (at most 5 s) until pid is gone or a zombie. */
static bool dead (pid_t pid)
{
    for (int i = 0; i < 500; i++) {
        if (dead_now (pid))
            return true;
        usleep (10000);
    }
    return false;
}

struct report {
    pid_t pgid; /* from the line "pgid N" */
    int lines;  /* lines handed to the log callback */
    char last[128];
    int status;
    bool exited;
};

static void report_exit_cb (struct proc *p, int status, void *arg)
{
    struct report *r = arg;
    (void)p;
    r->status = status;
    r->exited = true;
}

static void report_line_cb (struct proc *p, const char *stream,
                            const char *line, void *arg)
{
    struct report *r = arg;
    long n;
    (void)p;
    (void)stream;
    r->lines++;
    snprintf (r->last, sizeof (r->last), "%s", line);
    if (sscanf (line, "pgid %ld", &n) == 1)
        r->pgid = (pid_t)n;
}

/* A "shell" that starts a session of its own (a task's group), reports
 * it with SHELL_TASK_GROUP_TAG, then ends with END (a shell command);
 * run until it exited and its pipes closed; the group's pid in r.  */
static void run_reporter (uv_loop_t *loop, const char *end, struct report *r)
{
    char script[1024];
    char *argv[] = {"/bin/sh", "-c", script, NULL};
    flux_error_t error;
    struct proc *p;

    /* the group exists once the child's pgrp (field 5) is its pid */
    snprintf (script, sizeof (script),
              "setsid sleep 30 </dev/null >/dev/null 2>&1 & c=$!; "
              "while test \"$(cut -d\" \" -f5 /proc/$c/stat)\" != $c; do "
              ":; done; echo pgid $c; echo \"flux-shell: task group $c\"; "
              "echo \"flux-shell: task group 1x\"; %s",
              end);
    memset (r, 0, sizeof (*r));
    if (!(p = proc_spawn (loop, argv, environ, report_exit_cb, report_line_cb,
                          r, &error))) {
        diag ("proc_spawn: %s", error.text);
        return;
    }
    for (int i = 0; i < 500 && !r->exited; i++)
        uv_run (loop, UV_RUN_ONCE);
    for (int i = 0; i < 50; i++) /* the pipes' last lines */
        uv_run (loop, UV_RUN_NOWAIT);
    proc_destroy (p);
}

static void test_groups (uv_loop_t *loop)
{
    struct report r;

    run_reporter (loop, "kill -9 $$", &r);
    ok (r.exited && r.status == SIGKILL, "a shell killed by SIGKILL");
    ok (r.pgid > 1, "it reported a task group (%d)", (int)r.pgid);
    ok (r.pgid > 1 && dead (r.pgid), "the group got SIGKILL");
    ok (r.lines == 2 && strstr (r.last, "task group 1x"),
        "a malformed report is logged as any line");
    if (r.pgid > 1)
        (void)waitpid (r.pgid, NULL, WNOHANG);

    run_reporter (loop, "exit 0", &r);
    ok (r.exited && r.status == 0, "a shell that exits");
    ok (r.pgid > 1 && !dead_now (r.pgid),
        "the group it reported is left alone (the shell's job)");
    if (r.pgid > 1)
        (void)kill (-r.pgid, SIGKILL);
}

int main (void)
{
    uv_loop_t loop;
    struct proc *procs[3];
    pid_t pids[2];
    double t0, t;

    plan (NO_PLAN);
    uv_loop_init (&loop);

    ok (proc_terminate_all (NULL, 0, 1.) == 0,
        "no shells: nothing to wait for");

    procs[0] = spawn (&loop, "exec sleep 30");
    procs[1] = spawn (&loop, "trap '' TERM; sleep 30; sleep 30");
    procs[2] = NULL;
    ok (procs[0] && procs[1], "two shells started");
    if (!procs[0] || !procs[1])
        BAIL_OUT ("cannot spawn");
    pids[0] = proc_pid (procs[0]);
    pids[1] = proc_pid (procs[1]);
    usleep (100000); /* let the trap be set */

    t0 = now ();
    ok (proc_terminate_all (procs, 3, 0.5) == 1,
        "SIGTERM: one shell exits, the one ignoring it is left");
    t = now () - t0;
    ok (t >= 0.4 && t < 5., "the grace was waited for (%.3fs)", t);
    ok (dead (pids[0]), "the first shell is gone");
    ok (!dead_now (pids[1]), "the second still runs");

    proc_destroy (procs[0]);
    proc_destroy (procs[1]);
    ok (dead (pids[1]), "proc_destroy killed the second (its group)");
    (void)waitpid (pids[1], NULL, 0);
    (void)waitpid (pids[0], NULL, WNOHANG);

    procs[0] = spawn (&loop, "exec sleep 30");
    t0 = now ();
    ok (procs[0] && proc_terminate_all (procs, 1, 5.) == 0,
        "a shell that exits on SIGTERM: none left");
    t = now () - t0;
    ok (t < 4., "no wait for the whole grace (%.3fs)", t);
    pids[0] = procs[0] ? proc_pid (procs[0]) : -1;
    proc_destroy (procs[0]); /* reaps it */
    ok (pids[0] > 0 && waitpid (pids[0], NULL, WNOHANG) < 0 && errno == ECHILD,
        "proc_destroy reaped the shell that exited during the grace");

    test_groups (&loop);

    uv_run (&loop, UV_RUN_NOWAIT); /* close the handles */
    uv_loop_close (&loop);
    done_testing ();
}
