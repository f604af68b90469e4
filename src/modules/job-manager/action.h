/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef JOBMGR_ACTION_H
#define JOBMGR_ACTION_H
/* action - what the job manager does after each event: the work of the
 * state a job enters (DEPEND: resolve dependencies, PRIORITY: assign a
 * priority, SCHED: queue for the scheduler, RUN: start, CLEANUP: cancel,
 * wait for the exec service, free, clean; INACTIVE: notify and compact)
 * and the reactions to events that do not change state.
 */
#include <jansson.h>

#include "jobmgr.h"

/* Called by event.c after 'name' was applied to job (which was in
 * prev_state before).  May post further events. */
void action_event (struct jobmgr *jm, struct job *job, const char *name,
                   json_t *context, int prev_state);

/* Move a job in CLEANUP forward if nothing blocks it: cancel a pending
 * alloc, wait for the exec service's final release and for epilogs,
 * free resources, then post clean.  Safe to call at any time. */
void action_cleanup (struct jobmgr *jm, struct job *job);

/* Raise an exception on an active job (post the exception event). */
int action_raise (struct jobmgr *jm, struct job *job, const char *type,
                  int severity, uint32_t userid, const char *note);

#endif /* !JOBMGR_ACTION_H */
