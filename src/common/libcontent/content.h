/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef CONTENT_CONTENT_H
#define CONTENT_CONTENT_H

/* Client side of the content service (RFC 10, PROTOCOLS.md 3 and 4).
 *
 * Blobs are addressed by the raw digest of the instance's hash type (the
 * broker attribute content.hash).  All functions return a future (NULL
 * with errno set on failure: EINVAL for bad arguments, ENOMEM, or the
 * errors of flux_rpc) whose accessors below block if needed and return -1
 * with errno set to the service's error: ENOENT (unknown blob or no
 * checkpoint), EPROTO (malformed request or response), EFBIG (blob over
 * the instance's size limit), ENOSYS (no content service, or no backing
 * store for CACHE_BYPASS), EPERM (guest).  Pointers returned by the
 * accessors stay valid until the future is destroyed.  None of them may
 * be used from inside the content module's own handlers synchronously.
 */
#include <jansson.h>
#include <stddef.h>

#include "libflux/flux.h"

#include "write.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    CONTENT_FLAG_CACHE_BYPASS = 1, /* talk to content-backing directly */
    CONTENT_FLAG_UPSTREAM = 2,     /* send to this broker's parent */
};

/* Load a blob by raw hash / by blobref string (nodeid ANY, or upstream
 * with CONTENT_FLAG_UPSTREAM; CACHE_BYPASS goes to content-backing).
 */
flux_future_t *content_load_byhash (flux_t *h, const void *hash, size_t len,
                                    int flags);
flux_future_t *content_load_byblobref (flux_t *h, const char *blobref,
                                       int flags);

/* The loaded blob (*buf NULL and *len 0 for the empty blob). */
int content_load_get (flux_future_t *f, const void **buf, size_t *len);

/* Store a blob (buf may be NULL if len is 0). */
flux_future_t *content_store (flux_t *h, const void *buf, size_t len,
                              int flags);

/* The raw digest of the stored blob (EPROTO if the response is not a
 * digest of a known size). */
int content_store_get_hash (flux_future_t *f, const void **hash, size_t *len);

/* The stored blob's blobref; hashtype is the instance's content.hash
 * (e.g. "sha1"): EPROTO if the digest does not have its size.
 */
int content_store_get_blobref (flux_future_t *f, const char *hashtype,
                               const char **blobref);

/* Checkpoint of the KVS root (PROTOCOLS.md 4, rank 0):
 * value {version:1, rootref:s, sequence:i, timestamp:f}, with timestamp
 * the current time.  The service answers once the checkpoint, and every
 * blob stored before it, is durable.  Use flux_future_get() for the
 * result.
 */
flux_future_t *content_checkpoint_put (flux_t *h, const char *rootref,
                                       int sequence);

/* The same, the value also holding the members of extra (an object,
 * not modified; NULL: none): the kvs keeps its other namespaces there
 * when it unloads. */
flux_future_t *content_checkpoint_put_with (flux_t *h, const char *rootref,
                                            int sequence, json_t *extra);

/* Store n blobs, with the digests the caller computed (digest_size
 * bytes, the instance's hash), and if rootref is not NULL checkpoint it
 * after them, in one request to the content service of rank 0
 * (content.write, write.h): fulfilled (use flux_future_get()) once the
 * blobs are cached, and with a checkpoint once it and every blob stored
 * before it are durable.  EPROTO if a digest does not match its blob,
 * EFBIG, EINVAL. */
flux_future_t *content_write (flux_t *h, int digest_size,
                              const struct content_write_blob *blobs, int n,
                              const char *rootref, int sequence);

/* Fetch the latest checkpoint (ENOENT if none). */
flux_future_t *content_checkpoint_get (flux_t *h);

/* Decode a checkpoint-get response: {value:[obj,...]} (newest first) or a
 * single {value:obj} from older brokers.  EINVAL if the object's version
 * is not 1, ENOENT if the array is empty.
 */
int content_checkpoint_get_rootref (flux_future_t *f, const char **rootref,
                                    int *sequence);

/* The newest checkpoint object of the response, borrowed (valid until
 * f is reset or destroyed): ENOENT if none, EPROTO if not an object. */
int content_checkpoint_get_object (flux_future_t *f, json_t **object);

/* Like content_checkpoint_get_rootref() but also the timestamp. */
int content_checkpoint_get_value (flux_future_t *f, const char **rootref,
                                  int *sequence, double *timestamp);

#ifdef __cplusplus
}
#endif

#endif /* !CONTENT_CONTENT_H */
