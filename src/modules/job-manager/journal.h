/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef JOBMGR_JOURNAL_H
#define JOBMGR_JOURNAL_H
/* journal - job-manager.events-journal (PROTOCOLS.md 5.2).
 *
 * A listener first gets the backlog, one response per active job
 * {id, events, jobspec?, R?} (with "full": the inactive jobs too, read
 * from the KVS a few at a time), then the sentinel {id:-1, events:[]},
 * then one response per event as it is posted, with the (redacted)
 * jobspec attached to submit and R to alloc.  Volatile events that are
 * not in the eventlog (annotations) are journaled too.  allow/deny
 * dictionaries filter by event name.  The stream ends with ENODATA on
 * events-journal-cancel {matchtag}, on disconnect, or when the module
 * unloads.
 */
#include <jansson.h>

#include "jobmgr.h"

struct journal *journal_create (struct jobmgr *jm);
void journal_destroy (struct journal *j);

/* Send an event of job to the listeners.  line: the entry encoded (as
 * eventlog_entry_encode() does, trailing newline allowed), or NULL. */
void journal_post (struct journal *j, struct job *job, json_t *entry,
                   const char *line);

void journal_request (struct journal *j, const flux_msg_t *msg);
void journal_cancel (struct journal *j, const flux_msg_t *msg);
void journal_disconnect (struct journal *j, const flux_msg_t *msg);
int journal_listeners (struct journal *j);

#endif /* !JOBMGR_JOURNAL_H */
