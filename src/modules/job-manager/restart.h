/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef JOBMGR_RESTART_H
#define JOBMGR_RESTART_H
/* restart - rebuild the job table from the KVS when the module loads.
 *
 * The job directory is hashed (RFC 16 with dothex ids):
 * job.XXXX.XXXX.XXXX.XXXX, so it is walked four levels deep.  Every
 * eventlog found is replayed (jobstate_replay); inactive jobs become
 * compact records, active ones get their jobspec (and R if they hold
 * resources) and carry on: NEW jobs are validated, DEPEND jobs resolve
 * their dependencies again, PRIORITY jobs get a priority, SCHED jobs get
 * a flux-restart event (back to PRIORITY, then rescheduled), jobs
 * holding resources are reported at the next sched-hello, and jobs that
 * had started are reattached (start with reattach=true) at exec-hello.
 * The walk keeps many lookups in flight but runs before the module
 * serves requests (requests that arrive meanwhile wait in the handle).
 */
#include "jobmgr.h"

/* Load and replay.  Returns the number of jobs loaded, or -1 with
 * errno and the reason in error. */
int restart_from_kvs (struct jobmgr *jm, flux_error_t *error);

/* Move the loaded active jobs on (after every part is ready). */
void restart_continue (struct jobmgr *jm);

#endif /* !JOBMGR_RESTART_H */
