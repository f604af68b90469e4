/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* joblist.h - the job-list service (RFC 43, PROTOCOLS.md 5.4).
 *
 * The engine owns the job store and the journal consumer, and answers:
 *   job-list.list        {max_entries:i, attrs:[s], since?:f,
 *                         constraint?:o} -> {jobs:[...]} (with
 *                         FLAG_STREAMING: chunks, version:1 in the
 *                         first, then ENODATA)
 *   job-list.list-id     {id:I, attrs:[s], state?:i} -> {job:{...}};
 *                         waits for an id job-list has not seen yet if
 *                         job.<id>.eventlog exists, and for the job to
 *                         reach state; ENOENT if there is no such job
 *   job-list.list-attrs  -> {attrs:[s]}
 *   job-list.job-stats   -> counts (streaming: again after changes, at
 *                         most every 0.1 s, until job-stats-cancel or
 *                         disconnect)
 * Requests that arrive before the first journal backlog is loaded wait
 * for it (up to 1024 of them).
 *
 * Private mode: guests see only their own jobs (list filters them,
 * list-id answers ENOENT, job-stats EPERM).
 *
 * Like the kvs-watch engine, it never registers handlers itself: the
 * module's main.c feeds it requests and events, so tests drive it over
 * loop:// with a fake job manager on the same handle.
 */
#ifndef JOB_LIST_JOBLIST_H
#define JOB_LIST_JOBLIST_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "jobstore.h"
#include "libflux/flux.h"

typedef struct joblist joblist_t;

/* Create the engine and start the journal.  ENOMEM or a send error. */
joblist_t *joblist_create (flux_t *h, uint32_t rank, bool private_mode);

/* Answer every held or waiting request with ENOSYS ("job-list is
 * unloading") and free everything.  NULL-safe, keeps errno.
 */
void joblist_destroy (joblist_t *jl);

void joblist_list (joblist_t *jl, const flux_msg_t *msg);
void joblist_list_id (joblist_t *jl, const flux_msg_t *msg);
void joblist_list_attrs (joblist_t *jl, const flux_msg_t *msg);
void joblist_job_stats (joblist_t *jl, const flux_msg_t *msg);
void joblist_job_stats_cancel (joblist_t *jl, const flux_msg_t *msg);
void joblist_disconnect (joblist_t *jl, const flux_msg_t *msg);

/* Event job-purge-inactive {jobs:[I]}. */
void joblist_purge_event (joblist_t *jl, const flux_msg_t *msg);

/* {jobs:i, pending:i, running:i, inactive:i, strings:i, waiters:i,
 *  stats-watchers:i, deferred:i, journal:{...}} (new reference)
 */
json_t *joblist_stats (joblist_t *jl);

jobstore_t *joblist_store (joblist_t *jl);

#endif /* !JOB_LIST_JOBLIST_H */
