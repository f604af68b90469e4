/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Unit tests for base64: round trips of every length up to 64 and of
 * random data, the strict rules (length, padding, unused bits, stray
 * bytes) checked against a plain character-by-character reference on
 * every byte value at every position of short inputs, and base64_valid()
 * agreeing with base64_decode() everywhere.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libflux/base64.h"
#include "tap.h"

/* The rules of base64.h spelled out one character at a time. */
static int ref_value (unsigned char c)
{
    const char *alpha
        = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char *p = c ? strchr (alpha, c) : NULL;
    return p ? (int)(p - alpha) : -1;
}

static int ref_decode (uint8_t *out, const char *src, size_t len)
{
    size_t o = 0;

    if (len % 4)
        return -1;
    for (size_t i = 0; i < len; i += 4) {
        int v[4], npad = 0;
        for (int k = 0; k < 4; k++) {
            v[k] = ref_value ((unsigned char)src[i + k]);
            if (v[k] < 0) {
                if (src[i + k] != '=' || i + 4 != len || k < 2)
                    return -1;
                npad++;
                v[k] = 0;
            }
            else if (npad > 0) /* a character after '=' */
                return -1;
        }
        uint32_t w = v[0] << 18 | v[1] << 12 | v[2] << 6 | v[3];
        if ((npad == 1 && (w & 0xff)) || (npad == 2 && (w & 0xffff)))
            return -1; /* unused bits set */
        out[o++] = w >> 16;
        if (npad < 2)
            out[o++] = (w >> 8) & 0xff;
        if (npad < 1)
            out[o++] = w & 0xff;
    }
    return (int)o;
}

/* 0 if base64_decode, base64_valid and the reference agree on s. */
static int agree (const char *s, size_t len)
{
    uint8_t a[64], b[64];
    ssize_t n = base64_decode (a, sizeof (a), s, len);
    int m = ref_decode (b, s, len);

    if ((n < 0) != (m < 0) || base64_valid (s, len) != (n >= 0))
        return -1;
    if (n >= 0 && (n != m || memcmp (a, b, n) != 0))
        return -1;
    return 0;
}

static void test_roundtrip (void)
{
    uint8_t data[4096], back[4096];
    char enc[8192];
    int bad = 0;

    srand (42);
    for (size_t len = 0; len <= 64; len++) {
        for (size_t i = 0; i < len; i++)
            data[i] = (uint8_t)rand ();
        ssize_t e = base64_encode (enc, sizeof (enc), data, len);
        ssize_t d = base64_decode (back, sizeof (back), enc, e);
        if (e < 0 || d != (ssize_t)len || memcmp (data, back, len) != 0
            || !base64_valid (enc, e))
            bad++;
    }
    ok (bad == 0, "every length 0..64 encodes and decodes back");
    for (int k = 0; k < 200; k++) {
        size_t len = rand () % sizeof (data);
        for (size_t i = 0; i < len; i++)
            data[i] = (uint8_t)rand ();
        ssize_t e = base64_encode (enc, sizeof (enc), data, len);
        ssize_t d = base64_decode (back, sizeof (back), enc, e);
        if (d != (ssize_t)len || memcmp (data, back, len) != 0)
            bad++;
    }
    ok (bad == 0, "200 random buffers up to 4 KiB decode back");
}

static void test_strict (void)
{
    /* background characters: alphabet ends, a middle one, the pad */
    const char fill[] = "AQ/z=";
    char s[9];
    int bad = 0, accepted = 0;

    /* every byte value at every position of 4- and 8-character inputs */
    for (size_t len = 4; len <= 8; len += 4) {
        for (size_t pos = 0; pos < len; pos++) {
            for (int c = 0; c < 256; c++) {
                for (int f = 0; f < 5 * 5; f++) {
                    for (size_t k = 0; k < len; k++)
                        s[k] = fill[(f + k * (f / 5 + 1)) % 5];
                    s[pos] = (char)c;
                    s[len] = '\0';
                    if (agree (s, len) < 0) {
                        if (bad++ < 5)
                            diag ("disagree on %zu bytes, byte %d at %zu", len,
                                  c, pos);
                    }
                    else if (base64_valid (s, len))
                        accepted++;
                }
            }
        }
    }
    ok (bad == 0,
        "every byte at every position of 4 and 8 characters: same verdict"
        " and bytes as the reference (%d accepted)",
        accepted);
    ok (agree ("", 0) == 0 && base64_valid ("", 0) && base64_valid (NULL, 0),
        "the empty string is valid");
    ok (!base64_valid ("QQ=", 3) && !base64_valid ("QQ==QQ==", 8)
            && !base64_valid ("QR==", 4) && !base64_valid ("QUF=", 4)
            && base64_valid ("QQ==", 4) && base64_valid ("QUE=", 4),
        "length, padding inside, unused bits");
    errno = 0;
    uint8_t out[8];
    ok (base64_decode (out, 2, "QUFB", 4) < 0 && errno == EINVAL,
        "a destination too small: EINVAL");
}

int main (void)
{
    plan (NO_PLAN);
    test_roundtrip ();
    test_strict ();
    done_testing ();
    return 0;
}
