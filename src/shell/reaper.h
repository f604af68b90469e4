/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_SHELL_REAPER_H
#define FLUX_SHELL_REAPER_H

/* The shell as its tasks' child subreaper (PR_SET_CHILD_SUBREAPER): a
 * process of the job whose parent exits is handed to the shell, not to
 * init, even one that left its task's group and session (setsid, a
 * double fork).  Such a child of the shell that is neither a task nor
 * a process the shell started otherwise is a *stray*.  The reaper reaps
 * strays as they exit, and ends them: SIGTERM (to the stray and to the
 * group it leads), SIGKILL after a grace period, until none is left.
 *
 * The caller says which children are its own (waited for elsewhere:
 * tasks, the rexec server's processes).
 *
 * The caller's SIGCHLD watcher calls reaper_check() (or reaper_sweep()):
 * the reaper has none of its own, so that one read of the children
 * serves each SIGCHLD.
 *
 * Cost without strays: one read of /proc/self/task/<pid>/children per
 * reaper_check(), reaper_sweep() and reaper_finish() call; nothing
 * else.  Only children of the calling process's main thread are seen
 * (the thread orphans are handed to): fork from that thread only.
 */
#include <stdbool.h>
#include <sys/types.h>
#include <uv.h>

struct reaper;

struct reaper_ops {
    /* pid is a child the caller waits for itself: never reaped or
     * signaled here */
    bool (*own) (pid_t pid, void *arg);
};

struct reaper_stats {
    int exited;  /* strays reaped that had not been signaled */
    int killed;  /* strays signaled (SIGTERM, or SIGKILL at once) */
    int sigkill; /* of those, how many got SIGKILL (still there after
                    the grace period) */
    int left;    /* still there when reaper_finish() gave up (a process in
                    an uninterruptible sleep) */
};

/* Make the calling process a child subreaper, its timers on loop
 * (grace: seconds from SIGTERM to SIGKILL, >= 0).  NULL with errno
 * (prctl's: EINVAL on a kernel without it; ENOENT without the children
 * file, CONFIG_PROC_CHILDREN).
 */
struct reaper *reaper_create (uv_loop_t *loop, const struct reaper_ops *ops,
                              void *arg, double grace);

/* Free the reaper once the loop ran its timer's close callback (the
 * process stays a subreaper: call reaper_finish() first).  NULL-safe;
 * keeps errno.
 */
void reaper_destroy (struct reaper *r);

/* On SIGCHLD (the caller's watcher): reap the strays that exited;
 * once a sweep began, signal the strays found since (children of a
 * stray that died).
 */
void reaper_check (struct reaper *r);

/* The tasks are gone: end the strays (SIGTERM now, SIGKILL after the
 * grace period), and those found later (children of a stray that
 * died), while the loop runs.  Afterwards the same as reaper_check().
 */
void reaper_sweep (struct reaper *r);

/* The shell's end: end every stray (as reaper_sweep()) and run the
 * loop until all are reaped (grace period, SIGKILL, then 10 s at most;
 * the caller's SIGCHLD watcher must be active).
 * Fills *stats (may be NULL) with the counts since reaper_create().
 */
void reaper_finish (struct reaper *r, struct reaper_stats *stats);

/* The counts so far (r may be NULL: zeros). */
void reaper_get_stats (struct reaper *r, struct reaper_stats *stats);

/* From a signal handler (async-signal-safe), the process about to
 * die: SIGKILL every child of the process whose reaper was created,
 * owned or not, and the group each leads, again as those die and hand
 * their children over, until all are zombies (500 ms at most).  Does
 * nothing before reaper_create().
 */
void reaper_kill_children (void);

#endif /* !FLUX_SHELL_REAPER_H */
