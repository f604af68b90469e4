/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef JOBMGR_START_H
#define JOBMGR_START_H
/* start - the job manager's side of RFC 32 (job execution).
 *
 * An exec service registers with job-manager.exec-hello {service}; a
 * new one overrides the old unless starts are outstanding (then the
 * hello fails, unless the old service is found to be gone: its
 * NAME.ping answers ENOSYS).  Each job that holds resources and has no
 * prolog running gets one streaming <service>.start request (matchtag 0,
 * matched by id) with reattach=true if it had started under an earlier
 * exec service or job manager.  Responses: start, release (partial or
 * final; the final one ends the stream), exception, finish.  An error
 * response or the service's disconnect is fatal to the service: no more
 * starts until a new hello, which reattaches the jobs it had.
 */
#include <jansson.h>

#include "jobmgr.h"

struct start *start_create (struct jobmgr *jm);
void start_destroy (struct start *s);

/* Send the start request for job if it is due and possible.  A reattach
 * (the job's start event is logged) of a job whose finish event is
 * logged too carries, beyond RFC 32, "finish": its wait status: the
 * instance stopped between the finish and the final release, its shells
 * are gone, and the exec service only has to clean up and release. */
void start_check (struct start *s, struct job *job);

void start_hello (struct start *s, const flux_msg_t *msg);
void start_disconnect (struct start *s, const flux_msg_t *msg);
size_t start_pending_count (struct start *s);
/* Unloading: send no more start requests, and run the reactor (at most
 * timeout seconds) until the exec service has answered "start" to every
 * plain start request sent.  A job whose start event is not logged when
 * the job manager goes is replayed by the next one as not started, and
 * started again: if the exec service has finished it meanwhile, it would
 * run twice. */
void start_unload_wait (struct start *s, double timeout);
json_t *start_stats (struct start *s);

#endif /* !JOBMGR_START_H */
