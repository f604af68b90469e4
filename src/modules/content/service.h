/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef CONTENT_SERVICE_H
#define CONTENT_SERVICE_H

/* The content service of one broker (RFC 10): content.load, .validate,
 * .store, .flush, .dropcache, .stats-get, .register-backing,
 * .unregister-backing, .checkpoint-get and .checkpoint-put, all owner
 * only, over a cache (cache.h); and on rank 0 content.write, the KVS's
 * blobs and checkpoint in one request (libcontent/write.h).
 *
 * Rank > 0: misses are loaded from the parent; stores are written to the
 * parent and answered when it has answered.  Rank 0: stores are answered
 * from the cache at once; with a backing store registered every new blob
 * is written through to it, in arrival order, and a checkpoint-put is
 * answered only after the checkpoint and every blob stored before it are
 * durable (api-contracts.md, ordering contract).  A backing store that
 * registers with "write" gets the blobs of a loop turn and the
 * checkpoint in one content-backing.write, made durable in one
 * transaction (writer.c), and blobs that no checkpoint waits for are
 * held a little (lazy_delay) to join the next one; any other gets
 * content-backing.store for each blob and the checkpoint once they are all
 * durable.  Without a backing store blobs and the checkpoint stay in memory.
 */
#include <stddef.h>
#include <stdint.h>

#include "libflux/flux.h"

struct content_config {
    const char *hashtype;   /* "sha1" or "sha256" */
    uint32_t rank;          /* this broker's rank */
    size_t purge_target;    /* bytes of clean blobs kept at most */
    size_t blob_size_limit; /* larger stores get EFBIG */
    int write_limit;        /* writes in flight at most */
    /* Rank 0, batching backing store: blobs with no checkpoint or flush
     * behind them (lazy writes) wait up to lazy_delay seconds, or until
     * lazy_bytes are queued, to ride on the next durable write.  0: sent
     * at the next loop turn. */
    double lazy_delay;
    size_t lazy_bytes;
};

struct content_service;

/* Create the service and register its handlers on h.  EINVAL (with text)
 * for a bad configuration. */
struct content_service *content_service_create (
    flux_t *h, const struct content_config *cfg, flux_error_t *error);

/* Unregister, answer every request still held with ENOSYS, free.
 * Dirty blobs are lost (logged).  NULL-safe, preserves errno. */
void content_service_destroy (struct content_service *svc);

/* Rank 0: a backing store module is loaded, and will register (this
 * module was reloaded under it): until it does, checkpoints wait for it
 * instead of living in memory.  Cleared by its registration, or by an
 * unregistration. */
void content_service_expect_backing (struct content_service *svc);

#endif /* !CONTENT_SERVICE_H */
