/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef CONTENT_SQLITE_SERVICE_H
#define CONTENT_SQLITE_SERVICE_H

/* The content-backing service over a db (db.h): content-backing.load,
 * .store, .checkpoint-get, .checkpoint-put, .write, and
 * content-sqlite.stats-get, owner only.  .store hashes what it stores;
 * .write (blobs and the checkpoint in one request, from the content
 * module only) trusts the digests the content module computed;
 * content-sqlite.gc asks for a garbage collection at the next load.
 *
 * Group commit: the writes (store, checkpoint-put, write) received in
 * one loop turn share one transaction, committed (fsync) from an idle
 * watcher at the start of the next turn; only then are they answered, in
 * arrival order.  If any write or the commit fails (ENOSPC: disk full), the
 * transaction is rolled back and every write of the batch is answered
 * with that error; the service carries on.  Loads are answered at once.
 * Once a batch is answered, the WAL is checkpointed into the database
 * file if it holds more than 8 MiB (never within a commit's latency).
 */
#include "libflux/flux.h"

#include "db.h"

struct sqlite_service;

/* Register the handlers on h (the service name content-backing is
 * registered by the caller).  db and dbpath are borrowed. */
struct sqlite_service *sqlite_service_create (flux_t *h, struct db *db,
                                              const char *hashtype,
                                              const char *dbpath,
                                              flux_error_t *error);

/* Accept content-backing.write (libcontent/write.h) from sender, the
 * route id of the content module this store registered with; until then
 * (and from anyone else) it is EPERM.  Resets the count of failed writes
 * the sender and this service keep in step.  EINVAL, ENOMEM. */
int sqlite_service_trust (struct sqlite_service *s, const char *sender);

/* The garbage collection run when the module loaded (gc.h): stats-get
 * reports it as "gc" {kept, before, bytes, file_before, file_after,
 * seconds} or {error}; without a call, "gc" is null. */
struct gc_stats;
void sqlite_service_set_gc (struct sqlite_service *s, const struct gc_stats *st,
                            const char *error);

/* Commit and answer the batch in progress, unregister, free.  NULL-safe,
 * preserves errno. */
void sqlite_service_destroy (struct sqlite_service *s);

#endif /* !CONTENT_SQLITE_SERVICE_H */
