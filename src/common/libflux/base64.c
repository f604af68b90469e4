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

static int decode_char (char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

ssize_t base64_decode (void *dst, size_t size, const char *src, size_t len)
{
    uint8_t *out = dst;
    size_t i, o = 0;

    if (!dst || (!src && len) || len % 4 != 0
        || size < base64_decoded_size (len))
        goto inval;
    for (i = 0; i < len; i += 4) {
        int a = decode_char (src[i]);
        int b = decode_char (src[i + 1]);
        int c = decode_char (src[i + 2]);
        int d = decode_char (src[i + 3]);
        bool last = (i + 4 == len);
        if (a < 0 || b < 0)
            goto inval;
        if (c < 0 || d < 0) {
            /* padding: only in the last group, "xx==" or "xxx=" */
            if (!last || src[i + 3] != '=')
                goto inval;
            if (c < 0) {
                if (src[i + 2] != '=' || (b & 15))
                    goto inval;
                out[o++] = (uint8_t)(a << 2 | b >> 4);
            }
            else {
                if (c & 3)
                    goto inval;
                out[o++] = (uint8_t)(a << 2 | b >> 4);
                out[o++] = (uint8_t)((b & 15) << 4 | c >> 2);
            }
            break;
        }
        out[o++] = (uint8_t)(a << 2 | b >> 4);
        out[o++] = (uint8_t)((b & 15) << 4 | c >> 2);
        out[o++] = (uint8_t)((c & 3) << 6 | d);
    }
    return o;
inval:
    errno = EINVAL;
    return -1;
}
