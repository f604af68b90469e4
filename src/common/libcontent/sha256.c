/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* sha256.c - SHA-256 written from FIPS 180-4: the 64 round constants of
 * section 4.2.2, the initial hash value of 5.3.3, a 64-word message
 * schedule, and the same padding as SHA-1 (section 5.1.1).
 */
#include <string.h>

#include "sha256.h"

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t rotr (uint32_t x, int n)
{
    return (x >> n) | (x << (32 - n));
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

static void sha256_block (uint32_t h[8], const uint8_t *block)
{
    uint32_t w[64];
    uint32_t a, b, c, d, e, f, g, hh;
    int t;

    for (t = 0; t < 16; t++)
        w[t] = load_be32 (block + 4 * t);
    for (t = 16; t < 64; t++) {
        uint32_t s0
            = rotr (w[t - 15], 7) ^ rotr (w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1
            = rotr (w[t - 2], 17) ^ rotr (w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = s1 + w[t - 7] + s0 + w[t - 16];
    }
    a = h[0];
    b = h[1];
    c = h[2];
    d = h[3];
    e = h[4];
    f = h[5];
    g = h[6];
    hh = h[7];
    for (t = 0; t < 64; t++) {
        uint32_t S1 = rotr (e, 6) ^ rotr (e, 11) ^ rotr (e, 25);
        uint32_t ch = (e & f) ^ (~e & g);
        uint32_t t1 = hh + S1 + ch + K[t] + w[t];
        uint32_t S0 = rotr (a, 2) ^ rotr (a, 13) ^ rotr (a, 22);
        uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
        uint32_t t2 = S0 + maj;
        hh = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += hh;
}

void sha256_init (struct sha256_ctx *ctx)
{
    static const uint32_t h0[8]
        = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
           0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

    memcpy (ctx->h, h0, sizeof (h0));
    ctx->length = 0;
    ctx->used = 0;
}

void sha256_update (struct sha256_ctx *ctx, const void *data, size_t len)
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
        sha256_block (ctx->h, ctx->block);
        ctx->used = 0;
    }
    while (len >= 64) {
        sha256_block (ctx->h, p);
        p += 64;
        len -= 64;
    }
    if (len > 0) {
        memcpy (ctx->block, p, len);
        ctx->used = len;
    }
}

void sha256_final (struct sha256_ctx *ctx, uint8_t digest[SHA256_DIGEST_SIZE])
{
    uint64_t bits = ctx->length * 8;
    int i;

    ctx->block[ctx->used++] = 0x80;
    if (ctx->used > 56) {
        memset (ctx->block + ctx->used, 0, 64 - ctx->used);
        sha256_block (ctx->h, ctx->block);
        ctx->used = 0;
    }
    memset (ctx->block + ctx->used, 0, 56 - ctx->used);
    for (i = 0; i < 8; i++)
        ctx->block[56 + i] = bits >> (56 - 8 * i);
    sha256_block (ctx->h, ctx->block);
    for (i = 0; i < 8; i++)
        store_be32 (digest + 4 * i, ctx->h[i]);
    ctx->used = 0;
}
