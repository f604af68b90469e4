/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* base64.c - strict RFC 4648 base64, as Flux uses for event payloads and
 * signed J. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "base64.h"

static const char alphabet[]
    = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t base64_encoded_size (size_t len)
{
    return (len + 2) / 3 * 4 + 1;
}

size_t base64_decoded_size (size_t len)
{
    return len / 4 * 3 + 3;
}

ssize_t base64_encode (char *dst, size_t size, const void *src, size_t len)
{
    const uint8_t *p = src;
    size_t i, o = 0;

    if (!dst || (!src && len) || size < base64_encoded_size (len)) {
        errno = EINVAL;
        return -1;
    }
    for (i = 0; i + 2 < len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        dst[o++] = alphabet[v >> 18];
        dst[o++] = alphabet[(v >> 12) & 63];
        dst[o++] = alphabet[(v >> 6) & 63];
        dst[o++] = alphabet[v & 63];
    }
    if (i < len) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)p[i + 1] << 8;
        dst[o++] = alphabet[v >> 18];
        dst[o++] = alphabet[(v >> 12) & 63];
        dst[o++] = i + 1 < len ? alphabet[(v >> 6) & 63] : '=';
        dst[o++] = '=';
    }
    dst[o] = '\0';
    return o;
}

/* The value of each byte: 0-63 in the alphabet, 64 for '=', 255 for
 * any other byte. */
/* clang-format off */
static const uint8_t dtab[256] = {
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,  62, 255, 255, 255,  63,
     52,  53,  54,  55,  56,  57,  58,  59,  60,  61, 255, 255, 255,  64, 255, 255,
    255,   0,   1,   2,   3,   4,   5,   6,   7,   8,   9,  10,  11,  12,  13,  14,
     15,  16,  17,  18,  19,  20,  21,  22,  23,  24,  25, 255, 255, 255, 255, 255,
    255,  26,  27,  28,  29,  30,  31,  32,  33,  34,  35,  36,  37,  38,  39,  40,
     41,  42,  43,  44,  45,  46,  47,  48,  49,  50,  51, 255, 255, 255, 255, 255,
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
    255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
};
/* clang-format on */

/* Decode (out NULL: only check) exactly len characters; -1 if they are
 * not strict base64 (see base64.h). */
static ssize_t decode (uint8_t *out, const char *src, size_t len)
{
    const uint8_t *p = (const uint8_t *)src;
    size_t i, o = 0;
    uint32_t a, b, c, d;

    if (len % 4 != 0)
        return -1;
    if (len == 0)
        return 0;
    /* every group but the last: four alphabet characters (a value over
     * 63 is '=' or a stray byte) */
    for (i = 0; i + 4 < len; i += 4) {
        a = dtab[p[i]];
        b = dtab[p[i + 1]];
        c = dtab[p[i + 2]];
        d = dtab[p[i + 3]];
        if ((a | b | c | d) > 63)
            return -1;
        if (out) {
            uint32_t v = a << 18 | b << 12 | c << 6 | d;
            out[o] = (uint8_t)(v >> 16);
            out[o + 1] = (uint8_t)(v >> 8);
            out[o + 2] = (uint8_t)v;
        }
        o += 3;
    }
    /* the last: "xxxx", "xxx=" or "xx==", unused bits zero */
    a = dtab[p[i]];
    b = dtab[p[i + 1]];
    c = dtab[p[i + 2]];
    d = dtab[p[i + 3]];
    if (a > 63 || b > 63 || c > 64 || d > 64 || (c == 64 && d != 64))
        return -1;
    if (c == 64) { /* one byte */
        if (b & 15)
            return -1;
        if (out)
            out[o] = (uint8_t)(a << 2 | b >> 4);
        return o + 1;
    }
    if (d == 64) { /* two bytes */
        if (c & 3)
            return -1;
        if (out) {
            out[o] = (uint8_t)(a << 2 | b >> 4);
            out[o + 1] = (uint8_t)((b & 15) << 4 | c >> 2);
        }
        return o + 2;
    }
    if (out) {
        uint32_t v = a << 18 | b << 12 | c << 6 | d;
        out[o] = (uint8_t)(v >> 16);
        out[o + 1] = (uint8_t)(v >> 8);
        out[o + 2] = (uint8_t)v;
    }
    return o + 3;
}

ssize_t base64_decode (void *dst, size_t size, const char *src, size_t len)
{
    ssize_t n;

    if (!dst || (!src && len) || size < base64_decoded_size (len)
        || (n = decode (dst, src, len)) < 0) {
        errno = EINVAL;
        return -1;
    }
    return n;
}

bool base64_valid (const char *src, size_t len)
{
    return (src || len == 0) && decode (NULL, src, len) >= 0;
}
