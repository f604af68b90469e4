/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef BROKER_PARENT_H
#define BROKER_PARENT_H

#include "broker.h"

/* When this instance is a job of a parent instance (attributes jobid and
 * parent-uri set), rank 0 tells the parent how to reach it: a memo
 * {uri:"ssh://HOST/RUNDIR/local-0"} on the job (job-manager.memo), which
 * `flux uri JOBID` and `flux proxy JOBID` read from the job's eventlog,
 * as flux-core's do.  Best effort: a failure is logged, never fatal.
 * Called once, when rank 0 enters RUN, before the initial program.
 */
void parent_post_uri (struct broker *b);

#endif /* !BROKER_PARENT_H */
