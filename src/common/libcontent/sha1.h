/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef CONTENT_SHA1_H
#define CONTENT_SHA1_H

/* SHA-1 (FIPS 180-4 section 6.1), incremental.  Internal to libcontent:
 * use blobref.h.  init, any number of updates, then final, which writes
 * the 20-byte digest and leaves the context to be re-initialized.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHA1_DIGEST_SIZE 20

struct sha1_ctx {
    uint32_t h[5];
    uint64_t length; /* bytes hashed so far */
    uint8_t block[64];
    size_t used; /* bytes in block */
};

void sha1_init (struct sha1_ctx *ctx);
void sha1_update (struct sha1_ctx *ctx, const void *data, size_t len);
void sha1_final (struct sha1_ctx *ctx, uint8_t digest[SHA1_DIGEST_SIZE]);

/* The CPU's SHA instructions are used when present.  For tests: whether
 * they are, and a switch between them and the portable code (process
 * wide; not for use while other threads hash). */
bool sha1_accel_available (void);
void sha1_use_accel (bool on);

#endif /* !CONTENT_SHA1_H */
