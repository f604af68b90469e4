/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef JOB_EXEC_IMPL_H
#define JOB_EXEC_IMPL_H

/* impl.h - the contract between the job-exec core (exec.c) and an
 * execution implementation.
 *
 * The core speaks RFC 32 to the job manager: it takes each <service>.start
 * request, fetches R, keeps the expiration timer, turns job-exception
 * events into cancels, and sends every response.  An implementation makes
 * the job's processes exist (or, for testexec, pretends to) and reports
 * what happens to them through the execjob_*() calls below.
 *
 * Life of a job, as the core drives it:
 *   init    at the start request, each implementation in turn is asked
 *           whether the job is its own (testexec: the jobspec has
 *           attributes.system.exec.test).  The first to claim it owns it.
 *   start   once R is known.  The implementation calls execjob_started()
 *           when the processes run (the "start" response), later
 *           execjob_finish() with their wait status (the "finish"
 *           response), optionally execjob_release() for ranks that are
 *           finished with, and last execjob_done() (the final "release").
 *   kill    deliver a signal to the job's processes (the core sends
 *           SIGALRM at expiration, after the "timeout" exception).
 *   cancel  a fatal exception: stop the job and end it with
 *           execjob_done() (after execjob_finish() if it had started).
 *   exit    the job is gone: free per-job data, disarm timers.  Called
 *           from execjob_done() before it returns.
 *
 * Every execjob_*() call is a no-op once the job is done, so an
 * implementation need not track that itself.  The job object stays
 * valid until the next loop turn after execjob_done().
 */
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "libflux/flux.h"
#include "libidset/idset.h"
#include "libjob/job.h"
#include "timerq.h"

typedef struct exec exec_t;
struct execjob;

struct exec_impl {
    const char *name;
    /* Once, when the core is created: register handlers etc.  *data is
     * this implementation's context (execjob_impl_data()). */
    int (*setup) (exec_t *x, void **data, flux_error_t *error);
    void (*teardown) (void *data);
    /* Return 1 to claim the job (jobspec is borrowed for the call only),
     * 0 to pass, -1 to claim and refuse it: error->text becomes the note
     * of an "exec" exception. */
    int (*init) (struct execjob *job, json_t *jobspec, flux_error_t *error);
    /* R is known (execjob_ranks()).  -1: error->text as for init. */
    int (*start) (struct execjob *job, flux_error_t *error);
    void (*kill) (struct execjob *job, int signum);
    void (*cancel) (struct execjob *job);
    void (*exit) (struct execjob *job);
    /* Optional: statistics for job-exec.stats-get (new reference). */
    json_t *(*stats) (void *data);
};

/* Accessors. */
flux_jobid_t execjob_id (const struct execjob *job);
uint32_t execjob_userid (const struct execjob *job);
bool execjob_reattach (const struct execjob *job);
const struct idset *execjob_ranks (const struct execjob *job); /* from start */
/* R (RFC 20) as the start request carried it or as read from the KVS
 * (borrowed), from start; NULL before. */
json_t *execjob_R (const struct execjob *job);
/* The ranks released so far by execjob_release() (borrowed), or NULL if
 * none were. */
const struct idset *execjob_released (const struct execjob *job);
void *execjob_data (const struct execjob *job);
void execjob_set_data (struct execjob *job, void *data);
void *execjob_impl_data (const struct execjob *job);
const struct exec_impl *execjob_impl (const struct execjob *job);
bool execjob_is_running (const struct execjob *job); /* started, not finished */
exec_t *execjob_exec (const struct execjob *job);

/* Core services for implementations. */
flux_t *exec_handle (exec_t *x);
timerq_t *exec_timerq (exec_t *x);
struct execjob *exec_lookup (exec_t *x, flux_jobid_t id);
void exec_log (exec_t *x, int level, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* Where ranks of the job are, for messages: "node[2-3] (ranks 2-3)", or
 * "ranks 2-3" when R names no hosts (before R is known too).  Always
 * NUL-terminates buf (truncating). */
void execjob_where (const struct execjob *job, const struct idset *ranks,
                    char *buf, size_t size);
/* The same in shell ranks (the index of each in R), as flux-core names a
 * lost non-critical shell: "node[2-3] (shell ranks 2-3)", or "shell
 * rank 2" when R names no hosts. */
void execjob_where_shells (const struct execjob *job, const struct idset *ranks,
                           char *buf, size_t size);
/* The same the other way round, as flux-core names a shell killed by a
 * signal: "shell ranks 2-3 (on node[2-3])", "(on ?)" when R names no
 * hosts. */
void execjob_shells_on (const struct execjob *job, const struct idset *ranks,
                        char *buf, size_t size);

/* Reports.  started: the "start" response (once) and the expiration timer.
 * finish: the "finish" response with status (once).  release: a partial
 * release {ranks, final:false} of ranks that are part of R and not yet
 * released (else -1 with errno EINVAL), the last ones too.  done: the
 * final release of the ranks not yet released ("all" if none were, ""
 * if all were), then the job is forgotten.
 */
void execjob_started (struct execjob *job);
void execjob_finish (struct execjob *job, int status);
int execjob_release (struct execjob *job, const struct idset *ranks);
void execjob_done (struct execjob *job);

/* Append an event to the job's exec.eventlog in its guest namespace
 * (PROTOCOLS-exec.md 2.4: "shell-exit", "log"...); context is a JSON
 * object or NULL, borrowed.  The core posts init/reattach,
 * starting/re-starting, complete and done itself.  Events are batched
 * (10 ms) and committed in order; 0 once the job is done (dropped), -1
 * with errno EINVAL (bad arguments, or before the implementation's
 * start is called) or ENOMEM.
 */
int execjob_event (struct execjob *job, const char *name, json_t *context);

/* A fatal error: an "exec" exception (severity 0) with the formatted
 * note unless an exception was already raised for the job, then cancel
 * (if the implementation's start has been called) or done.
 */
void execjob_fatal (struct execjob *job, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* An exception of type (severity 0) with the formatted note, unless an
 * exception was already raised for the job.  Unlike execjob_fatal(), the
 * implementation is not cancelled: it does what the exception calls for
 * (realexec: node-failure, then its kill sequence).
 */
void execjob_raise (struct execjob *job, const char *type, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* A non-fatal exception (severity 1-7, flux-core's lost non-critical
 * shell is 2): the job manager logs it and the job goes on.  Nothing
 * is sent once a fatal exception was raised, or for a bad severity.
 */
void execjob_raise_nonfatal (struct execjob *job, int severity,
                             const char *type, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));

/* Critical ranks (job-exec.critical-ranks, PROTOCOLS-exec.md 2.1): the
 * job's shell ranks whose loss is fatal, all of them unless the job's
 * owner said otherwise.  execjob_critical: whether any of these broker
 * ranks holds a critical shell rank (true before R is known).
 * execjob_shell_ranks: the shell ranks (the index of each in R) of those
 * broker ranks that are the job's, a new idset; NULL with errno EINVAL
 * before R is known, ENOMEM.
 */
bool execjob_critical (const struct execjob *job, const struct idset *ranks);
struct idset *execjob_shell_ranks (const struct execjob *job,
                                   const struct idset *ranks);

/* The implementations, in the order they are asked to claim a job:
 * testexec takes the jobs with attributes.system.exec.test, realexec
 * (exec agents, real shells) all others. */
extern const struct exec_impl testexec_impl;
extern const struct exec_impl realexec_impl;

#endif /* !JOB_EXEC_IMPL_H */
