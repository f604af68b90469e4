/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/proc.c - proc_terminate_all(): at unload, shells that exit on
 * SIGTERM are waited for within the grace, one that ignores it is left
 * for proc_destroy(), whose SIGKILL to its group ends it. */
#include <errno.h>
#include <signal.h>
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

    uv_run (&loop, UV_RUN_NOWAIT); /* close the handles */
    uv_loop_close (&loop);
    done_testing ();
}
