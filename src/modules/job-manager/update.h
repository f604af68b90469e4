/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef JOBMGR_UPDATE_H
#define JOBMGR_UPDATE_H
/* update - job-manager.update {id, updates:{"dotted.key":value}} -> {}.
 *
 * Keys that may be updated: attributes.system.duration (a number of
 * seconds, 0 for unlimited), attributes.system.job.name (a string) and
 * anything under attributes.user.  A pending job gets a jobspec-update
 * event.  The duration of a running job (owner only) also moves its
 * expiration: sched.expiration {id, expiration} (ENOSYS counts as done,
 * RFC 27), then resource-update {expiration} and jobspec-update.
 * Limits: a guest may only shorten its job's duration, never lengthen it
 * or make it unlimited (EPERM); the instance owner may do either.
 */
#include "jobmgr.h"

void update_request (struct jobmgr *jm, const flux_msg_t *msg);

#endif /* !JOBMGR_UPDATE_H */
