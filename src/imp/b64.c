/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* b64.c - base64 (RFC 4648 section 4) for J. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "b64.h"

static const char alphabet[]
    = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *b64_encode (const void *src, size_t len)
{
    const unsigned char *s = src;
    size_t i, o = 0;
    char *out;

    if (len > (SIZE_MAX - 1) / 4 * 3 - 3
        || !(out = malloc ((len + 2) / 3 * 4 + 1))) {
        errno = ENOMEM;
        return NULL;
    }
    for (i = 0; i + 2 < len; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
        out[o++] = alphabet[v >> 18];
        out[o++] = alphabet[(v >> 12) & 63];
        out[o++] = alphabet[(v >> 6) & 63];
        out[o++] = alphabet[v & 63];
    }
    if (i < len) {
        uint32_t v = (uint32_t)s[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)s[i + 1] << 8;
        out[o++] = alphabet[v >> 18];
        out[o++] = alphabet[(v >> 12) & 63];
        out[o++] = i + 1 < len ? alphabet[(v >> 6) & 63] : '=';
        out[o++] = '=';
    }
    out[o] = '\0';
    return out;
}

static int value (char c)
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

char *b64_decode (const char *src, size_t len, size_t *outlen)
{
    size_t i, o = 0, pad = 0;
    char *out;

    if (len % 4 != 0)
        goto inval;
    if (len > 0 && src[len - 1] == '=')
        pad++;
    if (len > 1 && src[len - 2] == '=')
        pad++;
    if (!(out = malloc (len / 4 * 3 + 1))) {
        errno = ENOMEM;
        return NULL;
    }
    for (i = 0; i < len; i += 4) {
        int v[4];
        int n = 4;
        if (i + 4 == len)
            n -= pad;
        for (int k = 0; k < n; k++) {
            if ((v[k] = value (src[i + k])) < 0) {
                free (out);
                goto inval;
            }
        }
        for (int k = n; k < 4; k++)
            v[k] = 0;
        uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12
                     | (uint32_t)v[2] << 6 | (uint32_t)v[3];
        out[o++] = w >> 16;
        if (n > 2)
            out[o++] = (w >> 8) & 0xff;
        if (n > 3)
            out[o++] = w & 0xff;
        /* bits below the last character must be zero (canonical form) */
        if ((n == 2 && (w & 0xffff)) || (n == 3 && (w & 0xff))) {
            free (out);
            goto inval;
        }
    }
    out[o] = '\0';
    *outlen = o;
    return out;
inval:
    errno = EINVAL;
    return NULL;
}
