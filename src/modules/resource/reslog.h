/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef RESOURCE_RESLOG_H
#define RESOURCE_RESLOG_H
/* reslog - writes resource.eventlog (and resource.R) to the KVS in order.
 *
 * One commit is in flight at a time; events posted meanwhile go into the
 * next transaction together, so the eventlog's order is the order of
 * posting and a burst of drains costs one commit.  A request given with
 * an event is answered (empty success, or the commit's error) once the
 * commit holding the event is done.
 */
#include <jansson.h>

#include "libflux/flux.h"

struct reslog;

struct reslog *reslog_create (flux_t *h);
/* Requests still waiting are answered ECANCELED.  NULL-safe. */
void reslog_destroy (struct reslog *rl);

/* Append entry to resource.eventlog; if R is not NULL, put it under
 * resource.R first, in the same transaction.  msg (may be NULL) is
 * answered when it is committed.  -1 on EINVAL/ENOMEM (msg is then not
 * held: the caller answers it). */
int reslog_post (struct reslog *rl, json_t *entry, json_t *R,
                 const flux_msg_t *msg);

/* Commits done and failed (for stats). */
void reslog_counts (const struct reslog *rl, int *commits, int *errors);

#endif /* !RESOURCE_RESLOG_H */
