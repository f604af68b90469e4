/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef EXEC_AGENT_AGENT_H
#define EXEC_AGENT_AGENT_H

/* agent - the exec agent of one broker (doc/guide/exec.md): the jobs it
 * holds, their shares, the local shell, the reduction of reports and the
 * barriers.  main.c routes the methods here:
 *
 *   exec-agent.start (owner, streaming) {id:I, userid:i, ranks:s, R:o,
 *       jobspec:o, reattach:b, opts:o} -> {type, ranks, status?, error?}...
 *       then ENODATA.  A reattach start for a job held here re-binds the
 *       stream and replays what happened; for a job not held, ENOENT.
 *   exec-agent.kill (owner) {id:I, signum:i, pgrp?:b} -> {}
 *   exec-agent.barrier (user) {id:I, seq:i, data?:o, rank?:i} -> {data:o}
 *       The requests an agent holds for the rounds in progress, all jobs
 *       together, are at most conf->barrier_max bytes: an entry past it
 *       is refused E2BIG and fails its job's barrier (a job's PMI
 *       exchange cannot make a broker hold more).
 *   exec-agent.shell-info (user) {id:I} -> {id, userid, rank, size, ranks,
 *       R, jobspec, opts}
 *   exec-agent.stats-get (user) -> counters
 *   exec-agent.disconnect: the sender's start streams are orphaned (the
 *       jobs go on, waiting for a reattach).
 */
#include "libflux/flux.h"

struct agent_config {
    const char *job_shell; /* default shell */
    double window;         /* reduction window, seconds */
    double release_window; /* rank 0: window of partial exits, seconds */
    const char *imp;       /* exec.imp: flux-imp for guests' jobs, or NULL */
    const char *helper;    /* the FLUX_IMP_EXEC_HELPER command (no id) */
    double unload_grace;   /* at unload: SIGTERM, then SIGKILL after this */
    bool verbose;          /* log every shell's start and exit (debug) */
    bool shell_launcher;   /* fork the owner's default shells (launch.h) */
    size_t barrier_max;    /* bytes of barrier data held at once, all jobs */
};

struct agent;

/* NULL with errno and a reason in error. */
struct agent *agent_create (flux_t *h, const struct agent_config *conf,
                            flux_error_t *error);

/* Kill every shell still running (SIGTERM, then SIGKILL to its group
 * after conf->unload_grace seconds, blocking), fail every stream upstream
 * with ENOSYS, and free.  NULL-safe. */
void agent_destroy (struct agent *a);

void agent_start (struct agent *a, const flux_msg_t *msg);
void agent_kill (struct agent *a, const flux_msg_t *msg);
void agent_barrier (struct agent *a, const flux_msg_t *msg);
void agent_shell_info (struct agent *a, const flux_msg_t *msg);
void agent_stats (struct agent *a, const flux_msg_t *msg);
void agent_disconnect (struct agent *a, const flux_msg_t *msg);

#endif /* !EXEC_AGENT_AGENT_H */
