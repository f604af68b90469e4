/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* sha1.c - SHA-1 written from FIPS 180-4: 512-bit blocks, an 80-word
 * message schedule, four rounds of twenty steps, and the padding of
 * section 5.1.1 (0x80, zeros, the bit length as a big-endian u64).
 */
#include <string.h>

#include "sha1.h"

static inline uint32_t rotl (uint32_t x, int n)
{
    return (x << n) | (x >> (32 - n));
}

static inline uint32_t load_be32 (const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8
           | (uint32_t)p[3];
}

static inline void store_be32 (uint8_t *p, uint32_t x)
{
    p[0] = x >> 24;
    p[1] = x >> 16;
    p[2] = x >> 8;
    p[3] = x;
}

static void sha1_block (uint32_t h[5], const uint8_t *block)
{
    uint32_t w[80];
    uint32_t a, b, c, d, e;
    int t;

    for (t = 0; t < 16; t++)
        w[t] = load_be32 (block + 4 * t);
    for (t = 16; t < 80; t++)
        w[t] = rotl (w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
    a = h[0];
    b = h[1];
    c = h[2];
    d = h[3];
    e = h[4];
    for (t = 0; t < 80; t++) {
        uint32_t f, k, tmp;
        if (t < 20) {
            f = (b & c) | (~b & d); /* Ch */
            k = 0x5a827999;
        }
        else if (t < 40) {
            f = b ^ c ^ d; /* Parity */
            k = 0x6ed9eba1;
        }
        else if (t < 60) {
            f = (b & c) | (b & d) | (c & d); /* Maj */
            k = 0x8f1bbcdc;
        }
        else {
            f = b ^ c ^ d;
            k = 0xca62c1d6;
        }
        tmp = rotl (a, 5) + f + e + k + w[t];
        e = d;
        d = c;
        c = rotl (b, 30);
        b = a;
        a = tmp;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
}

void sha1_init (struct sha1_ctx *ctx)
{
    static const uint32_t h0[5]
        = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};

    memcpy (ctx->h, h0, sizeof (h0));
    ctx->length = 0;
    ctx->used = 0;
}

void sha1_update (struct sha1_ctx *ctx, const void *data, size_t len)
{
    const uint8_t *p = data;

    ctx->length += len;
    if (ctx->used > 0) {
        size_t n = 64 - ctx->used;
        if (n > len)
            n = len;
        memcpy (ctx->block + ctx->used, p, n);
        ctx->used += n;
        p += n;
        len -= n;
        if (ctx->used < 64)
            return;
        sha1_block (ctx->h, ctx->block);
        ctx->used = 0;
    }
    while (len >= 64) {
        sha1_block (ctx->h, p);
        p += 64;
        len -= 64;
    }
    if (len > 0) {
        memcpy (ctx->block, p, len);
        ctx->used = len;
    }
}

void sha1_final (struct sha1_ctx *ctx, uint8_t digest[SHA1_DIGEST_SIZE])
{
    uint64_t bits = ctx->length * 8;
    int i;

    ctx->block[ctx->used++] = 0x80;
    if (ctx->used > 56) {
        memset (ctx->block + ctx->used, 0, 64 - ctx->used);
        sha1_block (ctx->h, ctx->block);
        ctx->used = 0;
    }
    memset (ctx->block + ctx->used, 0, 56 - ctx->used);
    for (i = 0; i < 8; i++)
        ctx->block[56 + i] = bits >> (56 - 8 * i);
    sha1_block (ctx->h, ctx->block);
    for (i = 0; i < 5; i++)
        store_be32 (digest + 4 * i, ctx->h[i]);
    ctx->used = 0;
}
