/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_SHELL_H
#define FLUX_SHELL_H

/* The job shell: the state every part of flux-shell shares.  One shell
 * runs per node of a job (doc/guide/exec.md, doc/man1/flux-shell.1).
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <uv.h>

#include "libflux/flux.h"
#include "libkvs/kvs.h"

#include "info.h"

struct task;
struct output;
struct input;
struct shell_pmi;
struct shell_pty;
struct reaper;

#define SHELL_MAX_RLIMITS 16 /* the limits of getrlimit(2) the shell knows */

struct shell {
    flux_t *h;
    flux_reactor_t *r;
    uv_loop_t *loop;
    uint64_t id;
    uint32_t broker_rank;
    struct shell_info *info;
    bool leader;
    char jobid_f58[32];   /* for FLUX_JOB_ID */
    char jobid_plain[32]; /* f58plain: service and PMI kvsname */
    char service[80];     /* <uid>-shell-<f58plain> */
    char *tmpdir;         /* FLUX_JOB_TMPDIR (removed at exit) */
    bool tmpdir_keep;     /* it is the agent's to reuse: emptied, kept */
    char *rundir;         /* the broker's, or NULL */
    struct task **tasks;
    int ntasks;
    int nactive;           /* tasks not yet reaped or with open output */
    int exit_code;         /* largest task exit code so far */
    bool failed;           /* a fatal error: exit_code holds the code */
    bool task_exit_posted; /* leader: shell.task-exit is posted */
    bool task_exit_sent;   /* this shell reported its first exit */
    int first_exit_rank;   /* leader: the task of shell.task-exit */
    double exit_timeout;   /* seconds, 0 = none */
    bool exit_on_error;
    uv_timer_t exit_timer; /* leader: started at the first exit */
    int barrier_seq;       /* last barrier sequence number used */
    struct output *out;
    /* log messages for the output eventlog: held in early_logs
     * [{level, component, message}] until it starts, then sent there,
     * and none once the last output is sent */
    enum { LOGS_HELD = 0, LOGS_TO_OUTPUT, LOGS_CLOSED } out_logs;
    json_t *early_logs;
    struct input *in;
    struct shell_pmi *pmi;
    struct shell_pty *pty; /* pty.c: tasks on a pty, terminus.0 */
    flux_msg_handler_t **handlers;
    int sigfd; /* signalfd: SIGCHLD, the forwarded signals */
    bool sigfd_open;
    uv_poll_t sigpoll; /* SIGCHLD: task_check_exit() on each task */
    bool nosetpgrp;    /* option: tasks stay in the shell's group */
    flux_msg_handler_t *kill_mh;
    flux_msg_handler_t *task_exit_mh;
    flux_msg_handler_t *exception_mh; /* leader: <service>.exception */
    struct subprocess_server *rexec;  /* <service>.rexec */
    flux_future_t *service_f;         /* service.add, until checked */
    flux_future_t *subscribe_f;       /* event.subscribe, until checked */
    int commits;                      /* exec.eventlog commits in flight */
    /* start-up: shell_commit_async() gathers the headers and shell.init
     * here, sent as ONE commit by shell_commit_flush() */
    flux_kvs_txn_t *startup_txn;
    bool gathering;
    uv_timer_t startup_timer;  /* a job of one shell: ends the hold */
    struct reaper *reaper;     /* strays.c: the shell as child subreaper */
    struct timeleft *timeleft; /* timeleft.c: option signal, or NULL */
    /* option rlimit: the soft limits that differ from the shell's, set in
     * each task before it execs */
    struct shell_rlimit {
        int resource;
        struct rlimit rl;
    } rlimits[SHELL_MAX_RLIMITS];
    int nrlimits;

    /* non-leader: the report of its last task's exit, to go with the
     * final output send (output_flush), unless the shell is not done
     * soon (the timer) */
    json_t *task_exit_ctx;
    uv_timer_t task_exit_timer;

    /* the second start barrier (all tasks started) is entered without
     * waiting: the tasks run meanwhile.  Until it is through, the
     * leader holds the first task exit (shell.start goes before it) and
     * a PMI fence is held (the agent takes the rounds in order). */
    flux_future_t *start2_f;
    json_t *held_exit; /* leader: first task-exit context, held */
    struct held_fence {
        flux_future_t *proxy; /* given to the caller */
        flux_future_t *real;  /* the barrier, once sent */
        int seq;
        json_t *data;
        bool sent;
    } held_fence;
};

/* Log a message at level (LOG_ERR...): stderr (the agent logs it), a
 * `log` event in exec.eventlog {rank, level, message, component}, and
 * for ERR, WARNING and NOTICE the same in the output eventlog, where
 * flux run and flux job attach (flux-core's too) print it: once the
 * output has started (all shells ready: after barrier 1), the first few
 * before that held until then.  A fatal error (LOG_CRIT) is not put
 * there: it raises the job's exception, which they print.
 */
void shell_log (struct shell *shell, int level, const char *component,
                const char *fmt, ...) __attribute__ ((format (printf, 4, 5)));

/* Append an event to exec.eventlog of the guest namespace and wait for
 * the commit (but for shell.init and shell.start: sent with
 * shell_commit_async()).  fmt
 * NULL: no context.  -1 with errno.
 */
int shell_post_event (struct shell *shell, const char *name, const char *fmt,
                      ...);

/* Commit txn to the guest namespace without waiting: commits of one
 * shell reach the KVS, and are applied, in the order they were sent.
 * A failure is fatal to the job (shell_fatal, naming what, which must
 * outlive the commit: a string constant).  shell->commits counts it
 * until answered.  -1 with errno if it could not be sent.
 * During start-up (until shell_commit_flush) txn's operations are added
 * to one start-up transaction instead (the caller still owns txn): the
 * output and input headers and shell.init cost the KVS one commit.
 */
int shell_commit_async (struct shell *shell, flux_kvs_txn_t *txn,
                        const char *what);

/* Send the start-up transaction, if any, and stop gathering: every
 * commit the shell sends afterwards follows it.  Called once shell.init
 * is posted, and before any other commit or the shell's end.  -1 with
 * errno if it could not be sent.
 * A job of one shell holds it after its tasks started (shell.start),
 * for STARTUP_HOLD_MS at most: the first commit of its output (usually
 * the task's exit, of a short job) goes in it (output.c), one commit
 * instead of two.  Any other commit, its input, a log, flushes it first.
 */
int shell_commit_flush (struct shell *shell);

/* A fatal error: log it, raise an `exec` exception on the job, kill the
 * tasks and stop; the shell exits with code (>= 1).
 */
void shell_fatal (struct shell *shell, int code, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* A task was reaped or closed its output: the shell ends when none is
 * left active.
 */
void shell_task_done (struct shell *shell, struct task *t);

/* Send signum to every running task. */
void shell_killall (struct shell *shell, int signum);

/* Leader: a task-exit report (the context of shell.task-exit) from
 * another shell; posted if it is the job's first.  -1 EPROTO if ctx is
 * malformed. */
int shell_task_exit_remote (struct shell *shell, json_t *ctx);

/* Enter barrier seq with data (NULL: none), synchronously; the merged
 * data of all shells is returned (new reference) or NULL with errno.
 */
json_t *shell_barrier (struct shell *shell, int seq, json_t *data);

/* Start barrier seq with data asynchronously: the future answers
 * {data:o}.  A round after the start barriers entered while the second
 * is not through yet (a PMI fence of a task that started early) is
 * sent once it is; one such round at a time (else EBUSY).
 */
flux_future_t *shell_barrier_async (struct shell *shell, int seq, json_t *data);

#endif /* !FLUX_SHELL_H */
