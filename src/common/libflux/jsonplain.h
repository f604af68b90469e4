/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_JSONPLAIN_H
#define FLUX_JSONPLAIN_H

/* jsonplain - finding the end of a run of plain string bytes, eight at
 * a time (internal: jsonparse.c, jsonemit.c, libjob's submit).
 *
 * A plain byte stands in a JSON string as it is, in both directions:
 * printable ASCII other than '"' and '\\'.  Base64 payloads, which KVS
 * commits carry by the hundred kilobytes, are all plain.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* True if none of the 8 bytes of x needs a look: no '"', no '\\', no
 * control character, no byte >= 0x80.  Each test is exact for the word
 * as a whole (the usual "has a zero byte" trick; the < 0x20 one holds
 * because bytes >= 0x80 are flagged anyway). */
static inline bool json_plain8 (uint64_t x)
{
    const uint64_t ones = 0x0101010101010101ULL;
    const uint64_t highs = 0x8080808080808080ULL;
    uint64_t quote = x ^ 0x2222222222222222ULL;
    uint64_t bslash = x ^ 0x5c5c5c5c5c5c5c5cULL;

    return ((x & highs) | ((x - 0x2020202020202020ULL) & ~x & highs)
            | ((quote - ones) & ~quote & highs)
            | ((bslash - ones) & ~bslash & highs))
           == 0;
}

/* True if byte c is plain. */
static inline bool json_plain1 (unsigned char c)
{
    return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

/* s advanced past every plain byte (at most to end): eight at a time
 * while it can, then one by one. */
static inline const unsigned char *json_plain_skip (const unsigned char *s,
                                                    const unsigned char *end)
{
    while (end - s >= 8) {
        uint64_t x;
        memcpy (&x, s, 8);
        if (!json_plain8 (x))
            break;
        s += 8;
    }
    while (s < end && json_plain1 (*s))
        s++;
    return s;
}

#endif /* !FLUX_JSONPLAIN_H */
