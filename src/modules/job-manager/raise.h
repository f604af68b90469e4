/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef JOBMGR_RAISE_H
#define JOBMGR_RAISE_H
/* raise - exceptions and signals from users (PROTOCOLS.md 5.2):
 *
 *   raise    {id, type, severity, note?, wait_status?} -> {}
 *   raiseall {dry_run, userid, states, severity, type, note?}
 *            -> {count, errors}
 *   kill     {id, signum} -> {}  (publishes shell-<id>.kill {signum})
 *   killall  {dry_run, userid, signum} -> {count, errors}
 *
 * Guests act on their own jobs only; userid -1 (all users) is the
 * owner's.  A severity 0 exception moves the job to CLEANUP (action.c);
 * every exception is also published as the event job-exception.
 */
#include "jobmgr.h"

void raise_request (struct jobmgr *jm, const flux_msg_t *msg);
void raiseall_request (struct jobmgr *jm, const flux_msg_t *msg);
void kill_request (struct jobmgr *jm, const flux_msg_t *msg);
void killall_request (struct jobmgr *jm, const flux_msg_t *msg);

/* An exception type: non-empty, no whitespace, no '=' (pure). */
bool raise_type_valid (const char *type);

#endif /* !JOBMGR_RAISE_H */
