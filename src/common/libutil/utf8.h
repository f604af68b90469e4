/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* utf8.h - the UTF-8 and hex-digit pieces every JSON scanner here needs
 * (libflux's jsonparse/jsonemit, flux jobs' job-list reader) and the
 * check of what may travel as a JSON string (KVS keys, job and
 * subprocess output), in one place.  Header only, like fnv.h.
 */
#ifndef FLUX_UTIL_UTF8_H
#define FLUX_UTIL_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* The value of hex digit c, or -1. */
static inline int hexdigit (int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Write code point cp (at most U+10FFFF) as UTF-8 at out; returns the
 * bytes written (1-4). */
static inline size_t utf8_encode (char *out, unsigned cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* The length of the valid multibyte sequence at s (s < end, *s >= 0x80),
 * or 0 if it is not one: no overlong forms, no surrogates, nothing above
 * U+10FFFF (what jansson accepts). */
static inline size_t utf8_seqlen (const unsigned char *s,
                                  const unsigned char *end)
{
    unsigned c = s[0];
    size_t n, i;

    if (c < 0xC2)
        return 0;
    n = c < 0xE0 ? 2 : c < 0xF0 ? 3 : c < 0xF5 ? 4 : 0;
    if (n == 0 || (size_t)(end - s) < n)
        return 0;
    for (i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] >= 0xA0)
        || (c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] >= 0x90))
        return 0;
    return n;
}

/* True if the len bytes at s are valid UTF-8 by utf8_seqlen's rules.  A
 * NUL byte is valid (a caller that cannot carry one checks for it). */
static inline bool utf8_valid (const void *s, size_t len)
{
    const unsigned char *p = s;
    const unsigned char *end = p + len;

    while (p < end) {
        size_t n = *p < 0x80 ? 1 : utf8_seqlen (p, end);
        if (n == 0)
            return false;
        p += n;
    }
    return true;
}

#endif /* !FLUX_UTIL_UTF8_H */
