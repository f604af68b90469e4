/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef BROKER_PARENT_H
#define BROKER_PARENT_H

#include "broker.h"

/* When this instance is a job of a parent instance (attributes jobid and
 * parent-uri set), rank 0 tells the parent how to reach it: a memo
 * {uri:"ssh://HOST/RUNDIR/local-0"} on the job (job-manager.memo), which
 * `flux uri JOBID` and `flux proxy JOBID` read from the job's eventlog,
 * as flux-core's do; then its critical ranks (job-exec.critical-ranks).
 * Best effort: a failure is logged, never fatal.
 * Called once, when rank 0 enters RUN, before the initial program.
 */
void parent_post_uri (struct broker *b);

/* The broker.critical-ranks attribute (flux-broker-attributes(7)): the
 * ranks whose loss the parent instance treats as fatal to this one --
 * rank 0 and every rank with children in the tree unless set with -S.
 * parent_post_uri() then tells the parent (job-exec.critical-ranks), so
 * losing a leaf node of a batch job raises a non-fatal node-failure
 * exception and the job goes on.  A value that is not an idset of this
 * instance's ranks is refused: a message on stderr and -1 (EINVAL).
 */
int parent_critical_ranks_attr (struct broker *b);

/* In CLEANUP on rank 0, as flux-core's rc3 does: the modules must not
 * unload under running jobs, or their shells -- sub-instances among them
 * -- would be orphaned or killed without their jobs ending.  An instance
 * run as a job cancels its pending and running jobs
 * (job-manager.raiseall, type cancel); a top-level instance stops its
 * queue (not saved) and cancels its running jobs only, the pending ones
 * staying for a restart (not at all with -Sbroker.cleanup-cancel=0).
 * Then it waits until none runs
 * (job-manager.idle), at most PARENT_CLEANUP_TIMEOUT, before calling
 * done (b).  Without a job-manager, or on other ranks, done (b) is called
 * at once.  done is called exactly once, from this call or from the
 * reactor. */
void parent_cancel_jobs (struct broker *b, void (*done) (struct broker *b));

#endif /* !BROKER_PARENT_H */
