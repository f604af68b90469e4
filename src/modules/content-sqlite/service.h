/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef CONTENT_SQLITE_SERVICE_H
#define CONTENT_SQLITE_SERVICE_H

/* The content-backing service over a db (db.h): content-backing.load,
 * .store, .checkpoint-get, .checkpoint-put, and content-sqlite.stats-get,
 * owner only.
 *
 * Group commit: the writes (store, checkpoint-put) received in one loop
 * turn share one transaction, committed (fsync) from an idle watcher at
 * the start of the next turn; only then are they answered, in arrival
 * order.  If any write or the commit fails (ENOSPC: disk full), the
 * transaction is rolled back and every write of the batch is answered
 * with that error; the service carries on.  Loads are answered at once.
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

/* Commit and answer the batch in progress, unregister, free.  NULL-safe,
 * preserves errno. */
void sqlite_service_destroy (struct sqlite_service *s);

/* Log to the broker's log ring (RFC 5424 severity).  Preserves errno. */
void sqlite_log (flux_t *h, int severity, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

#endif /* !CONTENT_SQLITE_SERVICE_H */
