/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef CONTENT_WRITE_H
#define CONTENT_WRITE_H

/* The payload of content-backing.write: the rank-0 content module's
 * writes to its backing store, several blobs and optionally the KVS
 * checkpoint in one request, made durable together (one transaction)
 * and answered with an empty payload or an error.  The digests are the
 * ones the content module computed and are trusted, so the backing store
 * accepts this request only from the module it registered with.
 *
 * Wire format (integers big-endian):
 *   u8  version (1)
 *   u8  flags (bit 0: a checkpoint follows the blobs; bit 1: lazy, the
 *       sender needs no durability for these blobs: the receiver may
 *       answer once they are written, not yet synced, and make them
 *       durable with a later write that is not lazy; a write carrying
 *       a checkpoint is never lazy)
 *   u16 digest size
 *   u32 failures: how many content-backing.write requests the sender has
 *       seen fail; a checkpoint is accepted only if the backing store has
 *       failed exactly that many (else a store it depends on may be lost)
 *   u32 number of blobs, then for each: u32 length, digest, data
 *   with flag bit 0: u32 length, checkpoint value (JSON object text)
 * Nothing may follow.
 *
 * Functions return -1 with errno EINVAL (bad argument), EPROTO
 * (malformed payload) or ENOMEM.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CONTENT_WRITE_VERSION 1

struct content_write_blob {
    const void *digest;
    const void *data;
    size_t len;
};

struct content_write {
    int digest_size;
    uint32_t failures;
    struct content_write_blob *blobs; /* pointers into the payload */
    int nblobs;
    const char *checkpoint; /* NULL if none; not NUL-terminated */
    size_t checkpoint_len;
    bool lazy; /* flag bit 1 (never with a checkpoint) */
};

/* Encode n blobs (digests of digest_size bytes) and an optional
 * checkpoint (NUL-terminated JSON text, or NULL) into a new buffer
 * (free it), *len its size. */
void *content_write_encode (int digest_size,
                            const struct content_write_blob *blobs, int n,
                            const char *checkpoint, uint32_t failures,
                            size_t *len);

/* Decode and check a whole payload: w points into buf, which must
 * outlive it; free w->blobs with content_write_clear().  EPROTO if the
 * payload is malformed or its digest size is not digest_size. */
int content_write_decode (const void *buf, size_t len, int digest_size,
                          struct content_write *w);

/* Mark an encoded payload lazy (see above); EINVAL if it carries a
 * checkpoint or is not one. */
int content_write_set_lazy (void *buf, size_t len);

void content_write_clear (struct content_write *w);

#endif /* !CONTENT_WRITE_H */
