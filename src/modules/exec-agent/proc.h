/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef EXEC_AGENT_PROC_H
#define EXEC_AGENT_PROC_H

/* proc - one job shell started by the agent (posix_spawn): a process group
 * leader (a session of its own), cwd /, stdin /dev/null, stdout and
 * stderr read line by line and handed to a log callback.
 *
 * Life: proc_spawn() -> exit_cb (status, once, from the reactor) ->
 * pipes drain -> proc_destroy() by the owner (any time; pipes still open
 * are closed, and the handles are freed once libuv is done with them).
 * At the shell's exit the rest of its process group gets SIGKILL, so that
 * no stray process of the job keeps running (or keeps the pipes open).
 * The lines "<SHELL_TASK_GROUP_TAG><pgid>" on its stdout (shell/killsig.h)
 * are not logged: they name its tasks' groups, which get SIGKILL too if
 * the shell dies by a signal (not through the IMP: proc_set_imp()).
 *
 * proc_launch(): the same, the shell forked by the shell launcher
 * (launcher.h) instead of spawned; it is "starting" until the launcher
 * answers (start_cb), and its exit status comes from the launcher.
 */
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <uv.h>

#include "libflux/flux.h"

struct proc;
struct launcher;

typedef void (*proc_exit_f) (struct proc *p, int status, void *arg);
/* proc_launch(): errnum 0, the shell runs (proc_pid() is set); else it
 * never ran (error: the reason) and exit_cb never comes. */
typedef void (*proc_start_f) (struct proc *p, int errnum, const char *error,
                              void *arg);
/* stream is "stdout" or "stderr"; line has no newline. */
typedef void (*proc_line_f) (struct proc *p, const char *stream,
                             const char *line, void *arg);

/* Start argv[0] with argv and env (NULL-terminated; argv[0] a path).
 * NULL with errno (the spawn error, e.g. ENOENT, EACCES) and a reason in
 * error. */
struct proc *proc_spawn (uv_loop_t *loop, char **argv, char **env,
                         proc_exit_f exit_cb, proc_line_f line_cb, void *arg,
                         flux_error_t *error);

/* As proc_spawn(), but the shell is forked by the launcher l (created
 * with proc_launcher_ops()): start_cb follows, from the reactor (never
 * inside this call).  Should the launcher fail to fork it, it is
 * posix_spawned instead before start_cb.  Until start_cb, proc_pid() is
 * 0 and proc_kill() holds its signals (sent at the start).  NULL with
 * errno when the request cannot go (E2BIG: argv and env exceed
 * LAUNCH_MSG_MAX; EAGAIN: the launcher's socket is full; EPIPE,
 * ENOTCONN: the launcher is gone): the caller spawns it. */
struct proc *proc_launch (struct launcher *l, uv_loop_t *loop, char **argv,
                          char **env, proc_start_f start_cb,
                          proc_exit_f exit_cb, proc_line_f line_cb, void *arg,
                          flux_error_t *error);

/* The callbacks to give launcher_create() for proc_launch(). */
const struct launcher_ops *proc_launcher_ops (void);

/* Close what is left and free (the uv handles once closed).  NULL-safe.
 * Callbacks never run after this. */
void proc_destroy (struct proc *p);

/* Unload: SIGTERM to each of the n shells still running (the shell
 * passes it to its tasks; through the IMP, the IMP to its shell), then
 * wait for them to exit, at most grace seconds, blocking (for when the
 * reactor no longer runs); those still running then get
 * SHELL_KILL_SIGNAL (they SIGKILL their tasks' groups and themselves,
 * shell/killsig.h) and at most 1 s more.  proc_destroy() then kills what
 * is left of each, SIGKILL to its process group (SIGUSR1 to the IMP).  Entries
 * may be NULL.  Returns how many were still running after the grace. */
size_t proc_terminate_all (struct proc **procs, size_t n, double grace);

/* Send signum to the shell, or to its whole process group.  -1 with
 * errno (ESRCH: exited).  The first SIGKILL to the group is
 * SHELL_KILL_SIGNAL to the shell instead (shell/killsig.h: the tasks are
 * in groups of their own, the shell kills them and itself); the next
 * one is the SIGKILL of the shell's group.  For a process marked with
 * proc_set_imp(), the signal goes to the IMP only (it forwards it to the shell
 * it started, which runs as another user in a session or cgroup of its own),
 * and SIGKILL becomes SIGUSR1, the IMP's SIGKILL surrogate: it kills the
 * shell's whole cgroup or process group (PROTOCOLS-exec.md 5.3). */
int proc_kill (struct proc *p, int signum, bool pgrp);

/* Mark p as a flux-imp process (see proc_kill); proc_destroy() then
 * sends it SIGUSR1 instead of SIGKILL to its group. */
void proc_set_imp (struct proc *p);

pid_t proc_pid (const struct proc *p);
bool proc_exited (const struct proc *p);

/* True if it runs as a fork of the launcher (not spawned). */
bool proc_forked (const struct proc *p);

#endif /* !EXEC_AGENT_PROC_H */
