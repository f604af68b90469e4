/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* journal.h - job-list's consumer of job-manager.events-journal
 * (PROTOCOLS.md 5.2).
 *
 * It asks for the full journal (inactive jobs included), feeds every
 * response to the job store, and calls synced() when the sentinel
 * {id:-1} has been seen.  If the stream ends (job-manager unloaded:
 * ENODATA; not loaded: ENOSYS; any other error) it asks again after a
 * delay that doubles from 0.05 s up to 1 s, and the new stream's backlog
 * resynchronizes the store (jobstore_resync_*).  The first failure also
 * counts as "synced" so that job-list answers with what it has instead
 * of holding requests while there is no job manager.
 */
#ifndef JOB_LIST_JOURNAL_H
#define JOB_LIST_JOURNAL_H

#include <jansson.h>
#include <stdbool.h>

#include "jobstore.h"
#include "libflux/flux.h"

typedef struct journal journal_t;
typedef void (*journal_synced_f) (void *arg);

/* Start consuming.  synced (may be NULL) is called after each sentinel
 * and after the first failure.  ENOMEM, or the errno of the first send.
 */
journal_t *journal_create (flux_t *h, uint32_t rank, jobstore_t *js,
                           journal_synced_f synced, void *arg);
void journal_destroy (journal_t *j); /* NULL-safe, keeps errno */

/* True once the first backlog was loaded (or the first attempt failed). */
bool journal_synced (journal_t *j);

/* {connected:b, streams:i, responses:i, errors:i} (new reference) */
json_t *journal_stats (journal_t *j);

#endif /* !JOB_LIST_JOURNAL_H */
