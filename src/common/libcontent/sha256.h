/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef CONTENT_SHA256_H
#define CONTENT_SHA256_H

/* SHA-256 (FIPS 180-4 section 6.2), incremental.  Internal to libcontent:
 * use blobref.h.  init, any number of updates, then final, which writes
 * the 32-byte digest and leaves the context to be re-initialized.
 */
#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_SIZE 32

struct sha256_ctx {
    uint32_t h[8];
    uint64_t length; /* bytes hashed so far */
    uint8_t block[64];
    size_t used; /* bytes in block */
};

void sha256_init (struct sha256_ctx *ctx);
void sha256_update (struct sha256_ctx *ctx, const void *data, size_t len);
void sha256_final (struct sha256_ctx *ctx, uint8_t digest[SHA256_DIGEST_SIZE]);

#endif /* !CONTENT_SHA256_H */
