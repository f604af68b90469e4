/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* ingest.h - the job-ingest engine (PROTOCOLS.md 5.1).
 *
 * Each job-ingest.submit request is checked on arrival (jobreq.h) and
 * joins the current batch.  A batch is started when the loop turn that
 * collected it ends (a libuv prepare watcher: the next turn begins) or as
 * soon as it holds batch_max jobs.  Starting a batch assigns FLUID ids
 * (generator id = rank), writes job.<id>.{J,jobspec,eventlog} for all its
 * jobs in ONE KVS commit, then sends ONE job-manager.submit
 * {jobs:[{id,userid,urgency,t_submit,flags,jobspec}]} to rank 0, and
 * answers each requester {id} once the job manager has answered.  If the
 * commit fails, every job of the batch gets that error; if the job
 * manager refuses the batch, the job directories are unlinked again and
 * every job gets the job manager's error (a job is never acknowledged
 * unless the job manager has it, and never left behind unacknowledged).
 *
 * Job ids keep increasing across restarts: before the first batch the
 * engine asks job-manager.getinfo for max_jobid and starts its generator
 * one millisecond after that id's timestamp.  If the job manager cannot
 * answer, the timestamp is the wall clock in ms since INGEST_EPOCH (a
 * constant), which is also above every id issued before (ids of either
 * origin), as long as the clock does not go back.
 *
 * Memory is bounded by the requests in flight, which clients bound.
 * The engine sends and receives through h but registers no handlers:
 * main.c feeds it requests, so tests can drive it over loop://.
 */
#ifndef JOB_INGEST_INGEST_H
#define JOB_INGEST_INGEST_H

#include <jansson.h>
#include <stdint.h>

#include "libflux/flux.h"

typedef struct ingest ingest_t;

#define INGEST_BATCH_MAX_DEFAULT 1024
/* How long jobs whose KVS commit was refused wait for the kvs (s). */
#define INGEST_KVS_WAIT_DEFAULT 30.
#define INGEST_EPOCH_MS UINT64_C (1704067200000) /* 2024-01-01T00:00:00Z */

/* Create the engine for broker rank (the FLUID generator id, so at most
 * 16383) of an instance owned by owner.  batch_max >= 1.  EINVAL, ENOMEM.
 */
ingest_t *ingest_create (flux_t *h, uint32_t rank, uint32_t owner,
                         int batch_max);

/* Answer every request still held with ENOSYS and free everything.
 * NULL-safe, preserves errno.
 */
void ingest_destroy (ingest_t *ing);

/* Refuse jobspecs larger than bytes (default JOBREQ_JOBSPEC_MAX_DEFAULT,
 * the module argument max-jobspec-size=BYTES). */
void ingest_set_max_jobspec (ingest_t *ing, size_t bytes);

/* Collect a batch for ms milliseconds after its first job instead of
 * until the end of the loop turn (0, the default).
 */
void ingest_set_batch_delay (ingest_t *ing, unsigned int ms);

/* How long a batch whose commit the kvs refused waits for kvs.online
 * before its jobs fail (ENOSYS, "the kvs is not loaded"): seconds, 0 for
 * ever (default INGEST_KVS_WAIT_DEFAULT).
 */
void ingest_set_kvs_wait (ingest_t *ing, double seconds);

/* job-ingest.submit: answered at once with an error, or held in a batch. */
void ingest_submit (ingest_t *ing, const flux_msg_t *msg);

/* Stop taking jobs (new requests get ENOSYS) and start the batch being
 * collected, so that what was accepted still goes through.
 */
void ingest_shutdown (ingest_t *ing);

/* The kvs announced itself (kvs.online): batches whose commit it refused
 * with ENOSYS (unloading or absent; rank 0 only) go again, with the same
 * job ids, so submissions made during a reload of the kvs succeed (if it
 * comes back within the wait of ingest_set_kvs_wait). */
void ingest_kvs_online (ingest_t *ing);

/* Number of batches started and not yet answered. */
int ingest_busy (ingest_t *ing);

/* {submitted, rejected, batches, max_batch, inflight}: counters since
 * creation.  New reference, NULL with ENOMEM.
 */
json_t *ingest_stats (ingest_t *ing);

#endif /* !JOB_INGEST_INGEST_H */
