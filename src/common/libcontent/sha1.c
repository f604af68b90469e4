/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* sha1.c - SHA-1 written from FIPS 180-4: 512-bit blocks, four rounds of
 * twenty steps, and the padding of section 5.1.1 (0x80, zeros, the bit
 * length as a big-endian u64).
 *
 * Two block functions: a portable one (steps unrolled, the message
 * schedule kept in a 16-word ring as section 6.1.3 allows), and on x86-64
 * CPUs with the SHA extensions one built on SHA1RNDS4/SHA1NEXTE/SHA1MSG1/
 * SHA1MSG2, chosen once at run time (CPUID leaf 7, EBX bit 29).  The
 * portable one does ~0.5 GB/s, the other ~1.5-2 GB/s: big KVS
 * directories are hashed on every commit.
 */
#include <stdbool.h>
#include <string.h>

#include "sha1.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define HAVE_SHANI_CODE 1
#endif

typedef void (*blocks_f) (uint32_t h[5], const uint8_t *p, size_t n);

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

/* Portable: W(t) for t >= 16 overwrites w[t & 15] (section 6.1.3). */
#define W(t)                                                  \
    (w[(t)&15] = rotl (w[((t) + 13) & 15] ^ w[((t) + 8) & 15] \
                           ^ w[((t) + 2) & 15] ^ w[(t)&15],   \
                       1))
#define CH(b, c, d) ((d) ^ ((b) & ((c) ^ (d))))
#define PAR(b, c, d) ((b) ^ (c) ^ (d))
#define MAJ(b, c, d) (((b) & (c)) | ((d) & ((b) | (c))))
/* one step with the roles of a..e rotated instead of the values moved */
#define STEP(f, k, a, b, c, d, e, x)                          \
    do {                                                      \
        (e) += rotl ((a), 5) + f ((b), (c), (d)) + (k) + (x); \
        (b) = rotl ((b), 30);                                 \
    } while (0)
#define FIVE(f, k, t, X)                         \
    do {                                         \
        STEP (f, k, a, b, c, d, e, X (t));       \
        STEP (f, k, e, a, b, c, d, X ((t) + 1)); \
        STEP (f, k, d, e, a, b, c, X ((t) + 2)); \
        STEP (f, k, c, d, e, a, b, X ((t) + 3)); \
        STEP (f, k, b, c, d, e, a, X ((t) + 4)); \
    } while (0)
#define W0(t) (w[t])

static void blocks_portable (uint32_t h[5], const uint8_t *p, size_t n)
{
    uint32_t w[16];

    for (; n > 0; n--, p += 64) {
        uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];

        for (int t = 0; t < 16; t++)
            w[t] = load_be32 (p + 4 * t);
        FIVE (CH, 0x5a827999, 0, W0);
        FIVE (CH, 0x5a827999, 5, W0);
        FIVE (CH, 0x5a827999, 10, W0);
        STEP (CH, 0x5a827999, a, b, c, d, e, w[15]);
        STEP (CH, 0x5a827999, e, a, b, c, d, W (16));
        STEP (CH, 0x5a827999, d, e, a, b, c, W (17));
        STEP (CH, 0x5a827999, c, d, e, a, b, W (18));
        STEP (CH, 0x5a827999, b, c, d, e, a, W (19));
        FIVE (PAR, 0x6ed9eba1, 20, W);
        FIVE (PAR, 0x6ed9eba1, 25, W);
        FIVE (PAR, 0x6ed9eba1, 30, W);
        FIVE (PAR, 0x6ed9eba1, 35, W);
        FIVE (MAJ, 0x8f1bbcdc, 40, W);
        FIVE (MAJ, 0x8f1bbcdc, 45, W);
        FIVE (MAJ, 0x8f1bbcdc, 50, W);
        FIVE (MAJ, 0x8f1bbcdc, 55, W);
        FIVE (PAR, 0xca62c1d6, 60, W);
        FIVE (PAR, 0xca62c1d6, 65, W);
        FIVE (PAR, 0xca62c1d6, 70, W);
        FIVE (PAR, 0xca62c1d6, 75, W);
        h[0] += a;
        h[1] += b;
        h[2] += c;
        h[3] += d;
        h[4] += e;
    }
}

#ifdef HAVE_SHANI_CODE
/* The SHA extensions work on four steps at once.  ABCD holds a in its
 * highest lane; the E operand of SHA1RNDS4 is W(t..t+3) with e added to
 * the highest lane, and SHA1NEXTE derives that e (rotl30 of the a of
 * four steps before) from the ABCD saved before the previous four.
 * Message groups: M(i) = MSG2 (MSG1 (M(i-4), M(i-3)) ^ M(i-2), M(i-1)).
 */
#define SHANI __attribute__ ((target ("sha,sse4.1")))

/* Four steps of group i (i > 0) with function f: m is M(i). */
#define RNDS(f, m)                                  \
    do {                                            \
        e1 = _mm_sha1nexte_epu32 (e0, (m));         \
        e0 = abcd;                                  \
        abcd = _mm_sha1rnds4_epu32 (abcd, e1, (f)); \
    } while (0)
/* The next message group into m0, from m0..m3 = M(i-4)..M(i-1). */
#define SCHED(m0, m1, m2, m3)    \
    ((m0) = _mm_sha1msg2_epu32 ( \
         _mm_xor_si128 (_mm_sha1msg1_epu32 ((m0), (m1)), (m2)), (m3)))

SHANI static void blocks_shani (uint32_t h[5], const uint8_t *p, size_t n)
{
    const __m128i bswap
        = _mm_set_epi64x (0x0001020304050607ULL, 0x08090a0b0c0d0e0fULL);
    __m128i abcd, e_in, abcd_save, e0, e1, m0, m1, m2, m3;

    abcd = _mm_shuffle_epi32 (_mm_loadu_si128 ((const __m128i *)h), 0x1b);
    e_in = _mm_set_epi32 ((int)h[4], 0, 0, 0);
    for (; n > 0; n--, p += 64) {
        abcd_save = abcd;
        m0 = _mm_shuffle_epi8 (_mm_loadu_si128 ((const __m128i *)p), bswap);
        m1 = _mm_shuffle_epi8 (_mm_loadu_si128 ((const __m128i *)(p + 16)),
                               bswap);
        m2 = _mm_shuffle_epi8 (_mm_loadu_si128 ((const __m128i *)(p + 32)),
                               bswap);
        m3 = _mm_shuffle_epi8 (_mm_loadu_si128 ((const __m128i *)(p + 48)),
                               bswap);
        /* group 0: e comes from the state */
        e1 = _mm_add_epi32 (e_in, m0);
        e0 = abcd;
        abcd = _mm_sha1rnds4_epu32 (abcd, e1, 0);
        RNDS (0, m1);
        RNDS (0, m2);
        RNDS (0, m3);
        /* groups 4..19 */
        RNDS (0, SCHED (m0, m1, m2, m3));
        RNDS (1, SCHED (m1, m2, m3, m0));
        RNDS (1, SCHED (m2, m3, m0, m1));
        RNDS (1, SCHED (m3, m0, m1, m2));
        RNDS (1, SCHED (m0, m1, m2, m3));
        RNDS (1, SCHED (m1, m2, m3, m0));
        RNDS (2, SCHED (m2, m3, m0, m1));
        RNDS (2, SCHED (m3, m0, m1, m2));
        RNDS (2, SCHED (m0, m1, m2, m3));
        RNDS (2, SCHED (m1, m2, m3, m0));
        RNDS (2, SCHED (m2, m3, m0, m1));
        RNDS (3, SCHED (m3, m0, m1, m2));
        RNDS (3, SCHED (m0, m1, m2, m3));
        RNDS (3, SCHED (m1, m2, m3, m0));
        RNDS (3, SCHED (m2, m3, m0, m1));
        RNDS (3, SCHED (m3, m0, m1, m2));
        /* the feed-forward: e from the last saved ABCD, plus e_in */
        e_in = _mm_sha1nexte_epu32 (e0, e_in);
        abcd = _mm_add_epi32 (abcd, abcd_save);
    }
    _mm_storeu_si128 ((__m128i *)h, _mm_shuffle_epi32 (abcd, 0x1b));
    h[4] = (uint32_t)_mm_extract_epi32 (e_in, 3);
}

static bool cpu_has_shani (void)
{
    unsigned int a, b, c, d;

    if (!__get_cpuid (1, &a, &b, &c, &d) || !(c & bit_SSE4_1)
        || !(c & bit_SSSE3))
        return false;
    if (!__get_cpuid_count (7, 0, &a, &b, &c, &d))
        return false;
    return (b & (1u << 29)) != 0; /* SHA */
}
#endif /* HAVE_SHANI_CODE */

static blocks_f blocks_impl;

static blocks_f get_blocks (void)
{
    blocks_f f = __atomic_load_n (&blocks_impl, __ATOMIC_RELAXED);

    if (!f) {
        f = blocks_portable;
#ifdef HAVE_SHANI_CODE
        if (cpu_has_shani ())
            f = blocks_shani;
#endif
        __atomic_store_n (&blocks_impl, f, __ATOMIC_RELAXED);
    }
    return f;
}

bool sha1_accel_available (void)
{
#ifdef HAVE_SHANI_CODE
    return cpu_has_shani ();
#else
    return false;
#endif
}

void sha1_use_accel (bool on)
{
    blocks_f f = blocks_portable;

#ifdef HAVE_SHANI_CODE
    if (on && cpu_has_shani ())
        f = blocks_shani;
#endif
    __atomic_store_n (&blocks_impl, f, __ATOMIC_RELAXED);
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
    blocks_f blocks = get_blocks ();

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
        blocks (ctx->h, ctx->block, 1);
        ctx->used = 0;
    }
    if (len >= 64) {
        blocks (ctx->h, p, len / 64);
        p += len & ~(size_t)63;
        len &= 63;
    }
    if (len > 0) {
        memcpy (ctx->block, p, len);
        ctx->used = len;
    }
}

void sha1_final (struct sha1_ctx *ctx, uint8_t digest[SHA1_DIGEST_SIZE])
{
    uint64_t bits = ctx->length * 8;
    blocks_f blocks = get_blocks ();
    int i;

    ctx->block[ctx->used++] = 0x80;
    if (ctx->used > 56) {
        memset (ctx->block + ctx->used, 0, 64 - ctx->used);
        blocks (ctx->h, ctx->block, 1);
        ctx->used = 0;
    }
    memset (ctx->block + ctx->used, 0, 56 - ctx->used);
    for (i = 0; i < 8; i++)
        ctx->block[56 + i] = bits >> (56 - 8 * i);
    blocks (ctx->h, ctx->block, 1);
    for (i = 0; i < 5; i++)
        store_be32 (digest + 4 * i, ctx->h[i]);
    ctx->used = 0;
}
