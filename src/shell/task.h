/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_SHELL_TASK_H
#define FLUX_SHELL_TASK_H

/* One task of the job on this node: forked as the leader of a process
 * group (a session) of its own (but with the shell option nosetpgrp),
 * dying with the shell (PR_SET_PDEATHSIG), stdout/stderr read into the
 * output module, stdin written from the input module, an optional PMI fd
 * as fd 3.  An exited task stays a zombie until task_reap(), so that its
 * pid (its group's id) is not reused while the shell may signal it.
 */
#include <stdbool.h>
#include <sys/types.h>
#include <uv.h>

#include "env.h"

struct shell;

struct task {
    struct shell *shell;
    int rank;         /* global task rank */
    int localid;      /* index on this node */
    uv_pipe_t out[2]; /* stdout, stderr */
    bool out_open[2];
    uv_pipe_t in;
    bool in_open;
    int stdin_fd;       /* inherited as stdin instead of a pipe (file), or -1 */
    int pmi_fd;         /* child's end of the PMI socketpair, or -1 */
    char linebuf[4096]; /* partial stdout line */
    size_t linelen;
    pid_t pid;
    bool own_group; /* set before the start: setsid() (not nosetpgrp) */
    bool running;
    bool reaped; /* exited, its status known (it may still be a zombie) */
    bool zombie; /* exited, not yet waited for (task_reap) */
    int wait_status;
    int exit_code; /* exit status or 128+signal */
    int spawn_errno;
    bool counted;  /* exit code taken into the shell's */
    bool finished; /* counted out of shell->nactive */

    /* A task on a pty (pty.c sets pty_master/pty_slave before the start):
     * stdin, stdout and stderr are the slave, the task leads its own
     * session with the pty as controlling terminal.  The shell reads and
     * writes the master; the output goes to the output module (if
     * pty_capture) and to pty.c (the terminus session, if any). */
    int pty_master, pty_slave; /* -1: no pty */
    bool on_pty;               /* the task runs on a pty */
    bool pty_capture;
    bool pty_open; /* master open and polled */
    uv_poll_t pty_poll;
    char *pty_wbuf; /* bytes not yet written to the master */
    size_t pty_wlen;
};

/* Allocate a task (not started). */
struct task *task_create (struct shell *shell, int rank, int localid);
void task_destroy (struct task *t);

/* Spawn argv with env in the current directory; on success the task
 * runs and its output is read.  -1 with errno (the spawn error, e.g.
 * ENOENT, EACCES).
 */
int task_start (struct task *t, char **argv, struct env *env);

/* Send a signal to the task's process group, while the task is not done
 * (running, or its output still open: a process it started holds it). */
void task_kill (struct task *t, int signum);

/* Send a signal to the task's process group (nosetpgrp: to the task)
 * whatever the task's state (the shell's exit: what the task left behind
 * must not outlive the shell).  Async-signal-safe.  The group id is the
 * task's pid, held by the task (a zombie once it exited) until
 * task_reap(): call this before. */
void task_kill_group (struct task *t, int signum);

/* On SIGCHLD: if the running task exited, take its status (the task
 * becomes done once its output is closed too; shell_task_done() is
 * called).  It stays a zombie. */
void task_check_exit (struct task *t);

/* Wait for an exited task; reap a running one only if it is already
 * gone (the shell's end, after task_kill_group()). */
void task_reap (struct task *t);

/* Write to the task's stdin; len 0 with eof closes it.  -1 with errno
 * EPIPE when stdin is closed.  For a pty task the data goes into the
 * pty (as if typed; at most 1 MiB waits to be written, else ENOSPC) and
 * eof is the terminal's EOF character (^D).
 */
int task_write_stdin (struct task *t, const char *data, size_t len, bool eof);

/* Close whatever libuv handles of the task are still open (at exit,
 * before task_destroy(); run the loop once for the close callbacks).
 */
void task_close (struct task *t);

/* Set the window size of a pty task's terminal (the kernel sends
 * SIGWINCH to its foreground process group).  -1 with errno (ENOTTY:
 * not a pty task). */
int task_pty_resize (struct task *t, int rows, int cols);

/* True once the task was reaped and all its output read. */
bool task_done (const struct task *t);

#endif /* !FLUX_SHELL_TASK_H */
