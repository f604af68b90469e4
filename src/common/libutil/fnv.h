/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* fnv.h - the 32-bit FNV-1a hash, for hash tables and RFC 11 hdir
 * buckets ("fnv1a32"), in one place.  Header only: the libraries and
 * modules that use it need not link libutil for it.
 */
#ifndef FLUX_UTIL_FNV_H
#define FLUX_UTIL_FNV_H

#include <stddef.h>
#include <stdint.h>

#define FNV1A32_BASIS 2166136261u
#define FNV1A32_PRIME 16777619u

/* The hash of len bytes at data. */
static inline uint32_t fnv1a32 (const void *data, size_t len)
{
    const unsigned char *p = data;
    uint32_t h = FNV1A32_BASIS;

    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= FNV1A32_PRIME;
    }
    return h;
}

/* The hash of the NUL-terminated string s (without its NUL). */
static inline uint32_t fnv1a32_str (const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    uint32_t h = FNV1A32_BASIS;

    while (*p) {
        h ^= *p++;
        h *= FNV1A32_PRIME;
    }
    return h;
}

#endif /* !FLUX_UTIL_FNV_H */
