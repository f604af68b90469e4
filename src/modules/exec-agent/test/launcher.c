/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/launcher.c - proc_launch() through the built flux-shell
 * --launcher: a shell forked by it reports its output, start and exit;
 * a kill before the launcher answered is held and sent; kill -9 of the
 * launcher reports its running shell killed and kills it; unload ends a
 * forked shell and the launcher; a request too large is refused; a
 * "launcher" that exits at once has its shell spawned instead.
 *
 * A forked flux-shell that must run a while is given FLUX_URI of a unix
 * socket that listens but never accepts: it blocks in flux_open(). */
#define _GNU_SOURCE 1
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launcher.h"
#include "proc.h"
#include "tap.h"

#define SHELL ABS_TOP_BUILDDIR "/src/shell/flux-shell"

struct report {
    bool started, exited;
    int start_errnum;
    int status;
    int lines;
    char first[256];
};

struct died {
    int calls;
    size_t nlost;
    bool hello;
};

static uv_loop_t loop;

static void start_cb (struct proc *p, int errnum, const char *error, void *arg)
{
    struct report *r = arg;
    (void)p;
    r->started = true;
    r->start_errnum = errnum;
    if (errnum)
        diag ("start failed: %s", error);
}

static void exit_cb (struct proc *p, int status, void *arg)
{
    struct report *r = arg;
    (void)p;
    r->exited = true;
    r->status = status;
}

static void line_cb (struct proc *p, const char *stream, const char *line,
                     void *arg)
{
    struct report *r = arg;
    (void)p;
    (void)stream;
    if (r->lines++ == 0)
        snprintf (r->first, sizeof (r->first), "%s", line);
}

static void died_cb (size_t nlost, bool hello, void *arg)
{
    struct died *d = arg;
    d->calls++;
    d->nlost = nlost;
    d->hello = hello;
}

/* Run the loop until *flag (10 s at most). */
static bool run_until (bool *flag)
{
    for (int i = 0; i < 1000 && !*flag; i++) {
        uv_run (&loop, UV_RUN_NOWAIT);
        if (!*flag)
            usleep (10000);
    }
    return *flag;
}

static bool gone (pid_t pid)
{
    char path[64], buf[256], *s;
    FILE *f;

    for (int i = 0; i < 500; i++) {
        snprintf (path, sizeof (path), "/proc/%d/stat", (int)pid);
        if (!(f = fopen (path, "r")))
            return true;
        s = fgets (buf, sizeof (buf), f);
        fclose (f);
        if (s && (s = strrchr (buf, ')')) && s[2] == 'Z')
            return true;
        usleep (10000);
    }
    return false;
}

static pid_t ppid_of (pid_t pid)
{
    char path[64], buf[256], *s;
    int ppid = -1;
    FILE *f;

    snprintf (path, sizeof (path), "/proc/%d/stat", (int)pid);
    if (!(f = fopen (path, "r")))
        return -1;
    if ((s = fgets (buf, sizeof (buf), f)) && (s = strrchr (buf, ')')))
        (void)sscanf (s + 2, "%*c %d", &ppid);
    fclose (f);
    return ppid;
}

static char sockpath[108];
static char uri[160];

static struct proc *launch (struct launcher *l, char **argv, char **env,
                            struct report *r)
{
    flux_error_t error;
    struct proc *p;

    memset (r, 0, sizeof (*r));
    if (!(p = proc_launch (l, &loop, argv, env, start_cb, exit_cb, line_cb, r,
                           &error)))
        diag ("proc_launch: %s", error.text);
    return p;
}

static void test_output_and_exit (struct launcher *l)
{
    char *argv[] = {SHELL, "--help", NULL};
    char *env[] = {"A=1", NULL};
    struct report r;
    struct proc *p;

    p = launch (l, argv, env, &r);
    ok (p != NULL && !r.started, "proc_launch: starting, no callback yet");
    ok (p && proc_pid (p) == 0 && !proc_exited (p), "no pid yet");
    ok (run_until (&r.started) && r.start_errnum == 0 && proc_forked (p),
        "started by the launcher");
    ok (run_until (&r.exited) && r.status == 0, "flux-shell --help exits 0");
    for (int i = 0; i < 20; i++)
        uv_run (&loop, UV_RUN_NOWAIT);
    ok (!strncmp (r.first, "Usage: flux-shell", 17), "its stdout is read");
    proc_destroy (p);
}

static void test_held_kill (struct launcher *l)
{
    char *argv[] = {SHELL, "1", NULL};
    char *env[] = {uri, "FLUX_KVS_NAMESPACE=job-1", NULL};
    struct report r;
    struct proc *p;
    pid_t pid = 0;

    p = launch (l, argv, env, &r);
    ok (p && proc_kill (p, SIGTERM, true) == 0,
        "a kill of the group before the answer is held");
    ok (run_until (&r.started) && (pid = proc_pid (p)) > 0,
        "the shell started");
    ok (run_until (&r.exited) && r.status == SIGTERM,
        "the held SIGTERM was sent (to the shell's group, or to the shell "
        "before its setsid): killed");
    ok (proc_kill (p, SIGTERM, false) < 0 && errno == ESRCH,
        "proc_kill after the exit: ESRCH");
    proc_destroy (p);
    for (int i = 0; i < 500 && ppid_of (pid) >= 0; i++) {
        uv_run (&loop, UV_RUN_NOWAIT);
        usleep (10000);
    }
    ok (ppid_of (pid) < 0, "it was reaped by the launcher");
}

static void test_launcher_death (struct launcher *l, struct died *d)
{
    char *argv[] = {SHELL, "1", NULL};
    char *env[] = {uri, "FLUX_KVS_NAMESPACE=job-1", NULL};
    struct report r;
    struct proc *p;
    pid_t pid = 0, lpid = launcher_pid (l);

    p = launch (l, argv, env, &r);
    ok (run_until (&r.started) && (pid = proc_pid (p)) > 0
            && ppid_of (pid) == lpid,
        "a forked shell is the launcher's child");
    usleep (100000);
    ok (!r.exited && !gone (pid) == true, "it runs (blocked connecting)");
    ok (kill (lpid, SIGKILL) == 0, "kill -9 of the launcher");
    ok (run_until (&r.exited) && r.status == SIGKILL,
        "the running shell is reported killed");
    ok (d->calls == 1 && d->nlost == 1 && d->hello,
        "died: once, one shell lost");
    ok (launcher_dead (l), "launcher_dead()");
    ok (pid > 0 && gone (pid), "the shell was killed");
    ok (gone (lpid) && ppid_of (lpid) < 0, "the launcher was reaped");
    proc_destroy (p);
    p = launch (l, argv, env, &r);
    ok (p == NULL && (errno == ENOTCONN), "a dead launcher takes no request");
}

static void test_unload (struct launcher *l)
{
    char *argv[] = {SHELL, "1", NULL};
    char *env[] = {uri, "FLUX_KVS_NAMESPACE=job-1", NULL};
    struct report r, r2;
    struct proc *p, *p2;
    pid_t pid = 0, lpid = launcher_pid (l);

    p = launch (l, argv, env, &r);
    ok (run_until (&r.started) && (pid = proc_pid (p)) > 0, "a shell runs");
    p2 = launch (l, argv, env, &r2);
    ok (p2 != NULL, "and one starts");
    ok (proc_terminate_all (&p, 1, 2.) == 0,
        "proc_terminate_all: it ends on SIGTERM");
    proc_destroy (p);
    proc_destroy (p2); /* still starting: killed once it answers */
    launcher_destroy (l);
    ok (!r.exited, "no callback after proc_destroy");
    ok (gone (pid), "the shell is gone");
    ok (ppid_of (lpid) < 0, "the launcher exited and was reaped");
}

static void test_too_large (struct launcher *l)
{
    size_t n = 200 * 1024;
    char *big = malloc (n + 1);
    char *argv[] = {SHELL, big, NULL};
    char *env[] = {NULL};
    struct report r;

    memset (big, 'x', n);
    big[n] = '\0';
    ok (launch (l, argv, env, &r) == NULL && errno == E2BIG,
        "a request larger than LAUNCH_MSG_MAX: E2BIG (the caller spawns)");
    free (big);
}

/* A "launcher" that exits (after a while: the request must go first). */
static void test_not_a_launcher (void)
{
    char *argv[] = {"/bin/echo", "spawned", NULL};
    char *env[] = {NULL};
    char script[128];
    struct died d = {0};
    flux_error_t error;
    struct launcher *l;
    struct report r;
    struct proc *p;
    FILE *f;

    snprintf (script, sizeof (script), "%s.sh", sockpath);
    if (!(f = fopen (script, "w"))
        || fputs ("#!/bin/sh\nsleep 0.2\nexit 1\n", f) < 0 || fclose (f) != 0
        || chmod (script, 0700) < 0)
        BAIL_OUT ("writing %s", script);
    l = launcher_create (&loop, script, proc_launcher_ops (), died_cb, &d,
                         &error);
    ok (l != NULL, "launcher_create of a program that is no launcher");
    if (!l)
        return;
    p = launch (l, argv, env, &r);
    ok (p && run_until (&r.started) && r.start_errnum == 0 && !proc_forked (p),
        "it exits before its hello: the shell is spawned instead");
    ok (d.calls == 1 && !d.hello && d.nlost == 0, "died: no hello");
    ok (run_until (&r.exited) && r.status == 0, "the spawned one exits 0");
    for (int i = 0; i < 20; i++)
        uv_run (&loop, UV_RUN_NOWAIT);
    ok (!strcmp (r.first, "spawned"), "its output is read");
    proc_destroy (p);
    launcher_destroy (l);
    (void)unlink (script);
}

int main (void)
{
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    struct died d = {0};
    flux_error_t error;
    struct launcher *l;
    int lfd;

    plan (NO_PLAN);
    if (access (SHELL, X_OK) < 0) {
        skip (1, "no %s", SHELL);
        done_testing ();
        return 0;
    }
    snprintf (sockpath, sizeof (sockpath), "/tmp/launcher-test.%d",
              (int)getpid ());
    snprintf (uri, sizeof (uri), "FLUX_URI=local://%s", sockpath);
    strcpy (sun.sun_path, sockpath);
    if (uv_loop_init (&loop) < 0
        || (lfd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0
        || bind (lfd, (struct sockaddr *)&sun, sizeof (sun)) < 0
        || listen (lfd, 16) < 0)
        BAIL_OUT ("setting up");

    ok (launcher_create (&loop, SHELL, NULL, NULL, NULL, &error) == NULL
            && errno == EINVAL,
        "launcher_create without ops: EINVAL");
    if (!(l = launcher_create (&loop, SHELL, proc_launcher_ops (), died_cb, &d,
                               &error)))
        BAIL_OUT ("launcher_create: %s", error.text);
    ok (launcher_pid (l) > 0 && !launcher_dead (l), "the launcher runs");
    test_output_and_exit (l);
    test_held_kill (l);
    test_too_large (l);
    test_launcher_death (l, &d);
    launcher_destroy (l);

    d.calls = 0;
    if (!(l = launcher_create (&loop, SHELL, proc_launcher_ops (), died_cb, &d,
                               &error)))
        BAIL_OUT ("launcher_create: %s", error.text);
    test_unload (l);
    ok (d.calls == 0, "an unload is no death");
    test_not_a_launcher ();

    (void)close (lfd);
    (void)unlink (sockpath);
    for (int i = 0; i < 20; i++)
        uv_run (&loop, UV_RUN_NOWAIT);
    ok (uv_loop_close (&loop) == 0, "every handle is closed");
    done_testing ();
    return 0;
}
