/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* fluid.c - RFC 19 FLUID generator and string encodings.
 *
 * The generator keeps the last timestamp and sequence number it issued
 * and derives new timestamps from a monotonic clock, so ids only go up.
 * Decoders work on (pointer, length) spans so that fluid_decode_type()
 * can trim whitespace and prefixes without copying.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fluid.h"
#include "utf8.h"

static const char f58_alphabet[]
    = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
#define F58_PREFIX "\xc6\x92" /* U+0192 LATIN SMALL LETTER F WITH HOOK */
#define F58_MAXDIGITS 12      /* 11 suffice for 64 bits; PROTOCOLS.md 7 */
#define KVS_PREFIX "job."

/* Generator
 */

static int monotonic_ms (uint64_t *ms, void *arg)
{
    struct timespec ts;

    if (clock_gettime (CLOCK_MONOTONIC, &ts) < 0)
        return -1;
    *ms = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
    return 0;
}

int fluid_init_clock (struct fluid_generator *gen, uint32_t id,
                      uint64_t timestamp, fluid_clock_f clock, void *arg)
{
    uint64_t base;

    if (!gen || !clock || id > FLUID_ID_MAX
        || timestamp > FLUID_TIMESTAMP_MAX) {
        errno = EINVAL;
        return -1;
    }
    if (clock (&base, arg) < 0)
        return -1;
    gen->id = id;
    gen->seq = -1;
    gen->timestamp = timestamp;
    gen->start = timestamp;
    gen->clock_base = base;
    gen->clock = clock;
    gen->clock_arg = arg;
    return 0;
}

int fluid_init (struct fluid_generator *gen, uint32_t id, uint64_t timestamp)
{
    return fluid_init_clock (gen, id, timestamp, monotonic_ms, NULL);
}

/* The generator's current timestamp: start + time elapsed since init.
 * A clock reading before the base counts as no time elapsed.  A value
 * beyond 40 bits is returned as FLUID_TIMESTAMP_MAX + 1.
 */
static int current_timestamp (struct fluid_generator *gen, uint64_t *tsp)
{
    uint64_t now;
    uint64_t elapsed = 0;

    if (gen->clock (&now, gen->clock_arg) < 0)
        return -1;
    if (now > gen->clock_base)
        elapsed = now - gen->clock_base;
    if (elapsed > FLUID_TIMESTAMP_MAX - gen->start)
        *tsp = FLUID_TIMESTAMP_MAX + 1;
    else
        *tsp = gen->start + elapsed;
    return 0;
}

/* Wait until the generator's clock passes 'last'. */
static int wait_past (struct fluid_generator *gen, uint64_t last, uint64_t *tsp)
{
    const struct timespec pause = {.tv_nsec = 50 * 1000};

    for (;;) {
        if (current_timestamp (gen, tsp) < 0)
            return -1;
        if (*tsp > last)
            return 0;
        nanosleep (&pause, NULL);
    }
}

int fluid_generate (struct fluid_generator *gen, fluid_t *fluid)
{
    uint64_t now, ts;
    int seq;

    if (!gen || !fluid) {
        errno = EINVAL;
        return -1;
    }
    ts = gen->timestamp;
    seq = gen->seq;
    if (current_timestamp (gen, &now) < 0)
        return -1;
    if (now > ts) {
        ts = now;
        seq = 0;
    }
    else if (seq < FLUID_SEQ_MAX)
        seq++;
    else if (now < ts) { /* the clock stepped back: do not wait for it */
        ts++;
        seq = 0;
    }
    else { /* sequence used up within this millisecond */
        if (wait_past (gen, ts, &ts) < 0)
            return -1;
        seq = 0;
    }
    if (ts > FLUID_TIMESTAMP_MAX) {
        errno = EOVERFLOW;
        return -1;
    }
    gen->timestamp = ts;
    gen->seq = seq;
    *fluid = (ts << (FLUID_ID_BITS + FLUID_SEQ_BITS))
             | ((uint64_t)gen->id << FLUID_SEQ_BITS) | (uint64_t)seq;
    return 0;
}

uint64_t fluid_save_timestamp (const struct fluid_generator *gen)
{
    return gen->seq >= 0 ? gen->timestamp + 1 : gen->timestamp;
}

uint64_t fluid_get_timestamp (fluid_t fluid)
{
    return fluid >> (FLUID_ID_BITS + FLUID_SEQ_BITS);
}

uint32_t fluid_get_id (fluid_t fluid)
{
    return (fluid >> FLUID_SEQ_BITS) & FLUID_ID_MAX;
}

uint32_t fluid_get_seq (fluid_t fluid)
{
    return fluid & FLUID_SEQ_MAX;
}

/* Encoding
 */

static int encode_f58 (char *buf, int bufsz, fluid_t fluid, const char *pfx)
{
    char digits[F58_MAXDIGITS];
    int n = 0;

    do {
        digits[n++] = f58_alphabet[fluid % 58];
        fluid /= 58;
    } while (fluid > 0);
    size_t plen = strlen (pfx);
    if ((size_t)bufsz < plen + n + 1) {
        errno = EOVERFLOW;
        return -1;
    }
    memcpy (buf, pfx, plen);
    for (int i = 0; i < n; i++)
        buf[plen + i] = digits[n - 1 - i];
    buf[plen + n] = '\0';
    return 0;
}

int fluid_encode (char *buf, int bufsz, fluid_t fluid,
                  enum fluid_string_type type)
{
    unsigned int g[4] = {
        (fluid >> 48) & 0xffff,
        (fluid >> 32) & 0xffff,
        (fluid >> 16) & 0xffff,
        fluid & 0xffff,
    };
    int n;

    if (!buf || bufsz <= 0) {
        errno = EINVAL;
        return -1;
    }
    switch (type) {
        case FLUID_STRING_DEC:
            n = snprintf (buf, bufsz, "%" PRIu64, fluid);
            break;
        case FLUID_STRING_HEX:
            n = snprintf (buf, bufsz, "0x%" PRIx64, fluid);
            break;
        case FLUID_STRING_DOTHEX:
        case FLUID_STRING_KVS:
            n = snprintf (buf, bufsz, "%s%04x.%04x.%04x.%04x",
                          type == FLUID_STRING_KVS ? KVS_PREFIX : "", g[0],
                          g[1], g[2], g[3]);
            break;
        case FLUID_STRING_F58:
        case FLUID_STRING_F58_PLAIN:
            if (encode_f58 (buf, bufsz, fluid,
                            type == FLUID_STRING_F58 ? F58_PREFIX : "f")
                < 0) {
                buf[0] = '\0';
                return -1;
            }
            return 0;
        default:
            errno = EINVAL;
            return -1;
    }
    if (n >= bufsz) {
        buf[0] = '\0';
        errno = EOVERFLOW;
        return -1;
    }
    return 0;
}

/* Decoding.  Each decoder takes a span and returns false on bad input.
 */

/* Digits of base 10 or 16, at least one, without overflow. */
static bool decode_digits (const char *s, size_t len, int base, fluid_t *fp)
{
    fluid_t v = 0;

    if (len == 0)
        return false;
    for (size_t i = 0; i < len; i++) {
        int d = hexdigit (s[i]);
        if (d < 0 || d >= base || v > (UINT64_MAX - d) / base)
            return false;
        v = v * base + d;
    }
    *fp = v;
    return true;
}

static bool decode_hex (const char *s, size_t len, fluid_t *fp)
{
    if (len < 2 || s[0] != '0' || s[1] != 'x')
        return false;
    return decode_digits (s + 2, len - 2, 16, fp);
}

/* Exactly xxxx.xxxx.xxxx.xxxx */
static bool decode_dothex (const char *s, size_t len, fluid_t *fp)
{
    fluid_t v = 0;

    if (len != 19)
        return false;
    for (size_t i = 0; i < len; i++) {
        if (i % 5 == 4) {
            if (s[i] != '.')
                return false;
            continue;
        }
        int d = hexdigit (s[i]);
        if (d < 0)
            return false;
        v = (v << 4) | (fluid_t)d;
    }
    *fp = v;
    return true;
}

/* Base58 digits after the prefix (the caller has checked the prefix). */
static bool decode_f58_digits (const char *s, size_t len, fluid_t *fp)
{
    fluid_t v = 0;

    if (len == 0 || len > F58_MAXDIGITS)
        return false;
    for (size_t i = 0; i < len; i++) {
        const char *p = s[i] ? strchr (f58_alphabet, s[i]) : NULL;
        if (!p)
            return false;
        fluid_t d = (fluid_t)(p - f58_alphabet);
        if (v > (UINT64_MAX - d) / 58)
            return false;
        v = v * 58 + d;
    }
    *fp = v;
    return true;
}

static bool has_prefix (const char *s, size_t len, const char *pfx)
{
    size_t plen = strlen (pfx);
    return len >= plen && memcmp (s, pfx, plen) == 0;
}

static bool decode_f58 (const char *s, size_t len, fluid_t *fp, bool plain)
{
    const char *pfx = plain ? "f" : F58_PREFIX;
    size_t plen = strlen (pfx);

    if (!has_prefix (s, len, pfx))
        return false;
    return decode_f58_digits (s + plen, len - plen, fp);
}

static bool decode_span (const char *s, size_t len, fluid_t *fp,
                         enum fluid_string_type type)
{
    switch (type) {
        case FLUID_STRING_DEC:
            return decode_digits (s, len, 10, fp);
        case FLUID_STRING_HEX:
            return decode_hex (s, len, fp);
        case FLUID_STRING_DOTHEX:
            return decode_dothex (s, len, fp);
        case FLUID_STRING_KVS:
            if (!has_prefix (s, len, KVS_PREFIX))
                return false;
            return decode_dothex (s + 4, len - 4, fp);
        case FLUID_STRING_F58:
            return decode_f58 (s, len, fp, false);
        case FLUID_STRING_F58_PLAIN:
            return decode_f58 (s, len, fp, true);
    }
    return false;
}

int fluid_decode (const char *s, fluid_t *fluid, enum fluid_string_type type)
{
    fluid_t v;

    if (!s || !fluid || !decode_span (s, strlen (s), &v, type)) {
        errno = EINVAL;
        return -1;
    }
    *fluid = v;
    return 0;
}

static bool is_space (char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
           || c == '\v';
}

/* Pick the form of a trimmed, prefix-stripped span by RFC 19's rules.
 * Returns 0 for the forms we cannot decode (words, emoji).
 */
static enum fluid_string_type detect_type (const char *s, size_t len,
                                           bool job_prefix)
{
    if (memchr (s, '.', len))
        return job_prefix ? FLUID_STRING_KVS : FLUID_STRING_DOTHEX;
    if (memchr (s, '-', len))
        return 0; /* mnemonic words */
    if (has_prefix (s, len, F58_PREFIX))
        return FLUID_STRING_F58;
    if (has_prefix (s, len, "f"))
        return FLUID_STRING_F58_PLAIN;
    if (has_prefix (s, len, "\xf0\x9f"))
        return 0; /* emoji */
    if (has_prefix (s, len, "0x"))
        return FLUID_STRING_HEX;
    return FLUID_STRING_DEC;
}

int fluid_decode_type (const char *s, fluid_t *fluid,
                       enum fluid_string_type *typep)
{
    enum fluid_string_type type;
    bool job_prefix = false;
    size_t len;
    fluid_t v;

    if (!s || !fluid)
        goto inval;
    while (is_space (*s))
        s++;
    len = strlen (s);
    while (len > 0 && is_space (s[len - 1]))
        len--;
    if (has_prefix (s, len, KVS_PREFIX)) {
        s += 4;
        len -= 4;
        job_prefix = true;
    }
    if (len == 0 || !(type = detect_type (s, len, job_prefix)))
        goto inval;
    /* the "job." prefix is already gone: decode KVS form as dothex */
    if (!decode_span (s, len, &v,
                      type == FLUID_STRING_KVS ? FLUID_STRING_DOTHEX : type))
        goto inval;
    *fluid = v;
    if (typep)
        *typep = type;
    return 0;
inval:
    errno = EINVAL;
    return -1;
}

int fluid_parse (const char *s, fluid_t *fluid)
{
    return fluid_decode_type (s, fluid, NULL);
}
