/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_SHELL_TASK_H
#define FLUX_SHELL_TASK_H

/* One task of the job on this node: spawned with libuv in the shell's
 * process group, stdout/stderr read into the output module, stdin
 * written from the input module, an optional PMI fd as fd 3.
 */
#include <stdbool.h>
#include <sys/types.h>
#include <uv.h>

#include "env.h"

struct shell;

struct task {
    struct shell *shell;
    int rank;    /* global task rank */
    int localid; /* index on this node */
    uv_process_t proc;
    uv_pipe_t out[2]; /* stdout, stderr */
    bool out_open[2];
    uv_pipe_t in;
    bool in_open;
    int stdin_fd;       /* inherited as stdin instead of a pipe (file), or -1 */
    int pmi_fd;         /* child's end of the PMI socketpair, or -1 */
    char linebuf[4096]; /* partial stdout line */
    size_t linelen;
    pid_t pid;
    bool running;
    bool reaped;
    int wait_status;
    int exit_code; /* exit status or 128+signal */
    int spawn_errno;
    bool counted;  /* exit code taken into the shell's */
    bool finished; /* counted out of shell->nactive */
};

/* Allocate a task (not started). */
struct task *task_create (struct shell *shell, int rank, int localid);
void task_destroy (struct task *t);

/* Spawn argv with env in the current directory; on success the task
 * runs and its output is read.  -1 with errno (the spawn error, e.g.
 * ENOENT, EACCES).
 */
int task_start (struct task *t, char **argv, struct env *env);

/* Send a signal (if running). */
void task_kill (struct task *t, int signum);

/* Write to the task's stdin; len 0 with eof closes it.  -1 with errno
 * EPIPE when stdin is closed.
 */
int task_write_stdin (struct task *t, const char *data, size_t len, bool eof);

/* Close whatever libuv handles of the task are still open (at exit,
 * before task_destroy(); run the loop once for the close callbacks).
 */
void task_close (struct task *t);

/* True once the task was reaped and all its output read. */
bool task_done (const struct task *t);

#endif /* !FLUX_SHELL_TASK_H */
