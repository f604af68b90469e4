/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef JOB_EXEC_EXEC_H
#define JOB_EXEC_EXEC_H

/* exec - the job-exec core: the exec service side of RFC 32.
 *
 * main.c routes messages here; unit tests do the same over loop://.
 *
 *   <service>.start (owner, streaming)
 *       {id:I, userid:i, jobspec:o, reattach:b, R?:o}.  One stream per
 *       job; responses {id, type, data} with matchtag 0 and errnum 0:
 *       start {}, release {ranks, final}, exception {severity, type,
 *       note}, finish {status}; the final release ends the stream.  R is
 *       read from job.<id>.R unless the request carries it (newer
 *       flux-core job managers do).  A malformed request, one without
 *       the streaming flag, or a second start for an active job without
 *       reattach is answered with a conventional error (EPROTO, EEXIST),
 *       which RFC 32 makes fatal to the service in the job manager's eyes.
 *       A reattach start for a job still active here adopts it (the job
 *       manager restarted while job-exec stayed).
 *   job-exception event {id, type, severity, ...}: severity 0 cancels the
 *       job if it is active here.
 *   job-exec.expiration (owner) {id:I, expiration:F} -> {}: R's
 *       expiration changed (0: none); ENOENT, EINVAL.
 *   job-exec.critical-ranks (user, job owner) {id:I, ranks:s} -> {}:
 *       the shell ranks (0..nnodes-1) whose loss is fatal; ENOENT, EPERM,
 *       EINVAL.
 *   job-exec.stats-get -> counters and per-implementation stats.
 *
 * Guest namespace (guestns.h): once R is known, the core creates the
 * job's namespace job-<id>, links job.<id>.guest to it and commits init
 * (reattach) to its exec.eventlog before the implementation's start is
 * called; starting (re-starting) as it is called; complete {status} with
 * the finish; when the implementation is done, done, the namespace's
 * final root at job.<id>.guest, the namespace removed, and only then the
 * final release.  A failure to set it up is an exec exception.  On
 * unload the namespaces of running jobs are left in place: the reattach
 * start of a reloaded job-exec adopts them.
 *
 * Expiration: when a job starts, a timer is set for R's expiration,
 * shifted by the delay between R's starttime and the start (as flux-core
 * does, so a busy system does not eat into a job's time; not on
 * reattach).  When it fires: exception {type:"timeout", severity:0,
 * note:"resource allocation expired"}, then the implementation is sent
 * SIGALRM (testexec finishes with wait status 14).
 */
#include <jansson.h>
#include <stdint.h>

#include "libflux/flux.h"

typedef struct exec exec_t;

/* Create the core on h and set up every implementation.  rank is this
 * broker's (for log lines); service is the name topics are answered under
 * (informational: routing is main.c's).  NULL with errno and a reason in
 * error.
 */
exec_t *exec_create (flux_t *h, uint32_t rank, const char *service,
                     flux_error_t *error);

/* Forget every job without responding (their streams are left to the job
 * manager, which will reattach them) and tear down.  NULL-safe.
 */
void exec_destroy (exec_t *x);

/* The module is unloading (the reactor has stopped): graft the guest
 * namespaces of running jobs to job.<id>.guest (synchronous, bounded).
 * Call before exec_destroy(). */
void exec_unloading (exec_t *x);

void exec_start_request (exec_t *x, const flux_msg_t *msg);
void exec_exception_event (exec_t *x, const flux_msg_t *msg);
void exec_expiration_request (exec_t *x, const flux_msg_t *msg);
void exec_critical_ranks_request (exec_t *x, const flux_msg_t *msg);
void exec_stats_request (exec_t *x, const flux_msg_t *msg);
/* The kvs announced itself (kvs.online): the jobs whose R lookup it
 * refused with ENOSYS (unloading or absent) read R again. */
void exec_kvs_online (exec_t *x);

/* Number of jobs active here. */
size_t exec_job_count (exec_t *x);

#endif /* !JOB_EXEC_EXEC_H */
