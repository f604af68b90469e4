/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef JOBMGR_SUBMIT_H
#define JOBMGR_SUBMIT_H
/* submit - job-manager.submit from job-ingest (PROTOCOLS.md 5.1):
 * {jobs:[{id:I, userid:i, urgency:i, t_submit:f, flags:i, jobspec:o}]}.
 *
 * The batch is checked as a whole first (fail closed: one malformed
 * entry, a duplicate or known id, or a disabled queue refuses the
 * batch, nothing is added).  Then each job is added: its submit event,
 * already in the KVS (written by ingest), goes to the journal, and the
 * job manager posts validate, which moves it on through DEPEND and
 * PRIORITY to SCHED.  The response is empty.
 */
#include "jobmgr.h"

void submit_request (struct jobmgr *jm, const flux_msg_t *msg);

#endif /* !JOBMGR_SUBMIT_H */
