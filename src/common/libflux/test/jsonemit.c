/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Unit tests for jsonemit: byte for byte what json_dumps (JSON_COMPACT)
 * writes, on hand-picked values and on random documents (strings with
 * escapes, NUL bytes, multibyte and invalid UTF-8, integers at their
 * limits, reals over the whole exponent range).
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "libflux/jsonemit.h"
#include "strpos.h"
#include "tap.h"

/* 0 if jsonemit and json_dumps agree on o (both fail, or same text). */
static int differs (const json_t *o, size_t flags)
{
    size_t len = 0;
    char *a = jsonemit (o, flags, &len);
    char *b = json_dumps (o, flags);
    int rc = 0;

    if (!a != !b)
        rc = 1;
    else if (a && (strcmp (a, b) != 0 || len != strlen (b))) {
        diag ("jsonemit:   %s", a);
        diag ("json_dumps: %s", b);
        rc = 1;
    }
    free (a);
    free (b);
    return rc;
}

static void test_values (void)
{
    static const double reals[] = {
        0.0,   -0.0,        1.0,     -1.5,     0.1,       1e20,
        1e21,  1e-5,        1e-7,    1.5e300,  -2.5e-300, 123456789.0,
        1e100, DBL_MAX,     DBL_MIN, 5e-324,   1.0 / 3,   100.0,
        1e16,  12345678e10, 1e-100,  0.000123, 1e22,      9007199254740993.0};
    static const json_int_t ints[]
        = {0, 1, -1, 42, 9223372036854775807LL, -9223372036854775807LL - 1};
    json_t *o;
    int bad = 0;

    for (size_t i = 0; i < sizeof (reals) / sizeof (reals[0]); i++) {
        o = json_pack ("[f]", reals[i]);
        bad += differs (o, JSON_COMPACT);
        json_decref (o);
        o = json_real (reals[i]);
        bad += differs (o, JSON_COMPACT | JSON_ENCODE_ANY);
        json_decref (o);
    }
    ok (bad == 0, "reals are written the same way");
    bad = 0;
    for (size_t i = 0; i < sizeof (ints) / sizeof (ints[0]); i++) {
        o = json_pack ("{s:I}", "i", ints[i]);
        bad += differs (o, JSON_COMPACT);
        json_decref (o);
    }
    ok (bad == 0, "integers too");
    bad = 0;
    for (int c = 0; c < 256; c++) {
        char s[4] = {'a', (char)c, 'b', 0};
        o = json_array ();
        json_array_append_new (o, json_stringn_nocheck (s, 3));
        bad += differs (o, JSON_COMPACT);
        json_decref (o);
    }
    ok (bad == 0, "every byte value inside a string (invalid UTF-8 too)");
    o = json_pack ("{s:s s:b s:b s:n s:[] s:{}}", "k\"\\\n", "v\t/", "t", 1,
                   "f", 0, "z", "a", "o");
    ok (!differs (o, JSON_COMPACT), "keys with escapes, literals, empties");
    json_decref (o);
    {
        json_t *k = json_object ();
        json_object_setn (k, "a\0b", 3, json_null ());
        ok (!differs (k, JSON_COMPACT), "a key with a NUL byte");
        json_decref (k);
    }
    o = json_string ("scalar");
    errno = 0;
    ok (jsonemit (o, JSON_COMPACT, NULL) == NULL && errno == EINVAL
            && !differs (o, JSON_COMPACT | JSON_ENCODE_ANY),
        "a scalar needs JSON_ENCODE_ANY, as with json_dumps");
    json_decref (o);
    o = json_object ();
    errno = 0;
    ok (jsonemit (o, JSON_INDENT (2), NULL) == NULL && errno == EINVAL,
        "flags other than COMPACT/ENCODE_ANY: EINVAL");
    json_decref (o);
    {
        /* 3000 levels: past the emitter's depth, json_dumps decides */
        json_t *top = json_array (), *a = top;
        for (int i = 0; i < 3000; i++) {
            json_t *b = json_array ();
            json_array_append_new (a, b);
            a = b;
        }
        ok (!differs (top, JSON_COMPACT), "3000 nested arrays: the same");
        json_decref (top);
    }
}

/* Strings are scanned eight bytes at a time: put each kind of byte that
 * must be escaped (or is part of a multibyte sequence, or is invalid) at
 * every position of strings of 0 to 40 bytes. */
static void test_string_positions (void)
{
    static const char *special[] = {
        "\"",   "\\",   "\n",       "\x01",         "\x1f",
        "\x7f", "/",    "\xc3\xa9", "\xe4\xb8\xad", "\xf0\x9f\x98\x80",
        "\xff", "\xc3", NULL,
    };
    char buf[128];
    int bad = 0, n = 0;

    for (int len = 0; len <= 40; len++) {
        for (int pos = 0; pos <= len; pos++) {
            for (int k = 0; special[k]; k++) {
                size_t off = strpos_build (buf, len, pos, special[k]);
                json_t *a;
                /* nocheck: invalid UTF-8 must reach the encoder too */
                if (!(a = json_pack ("[o]", json_stringn_nocheck (buf, off))))
                    BAIL_OUT ("json_pack");
                n++;
                if (differs (a, JSON_COMPACT) && bad++ < 5)
                    diag ("differs: %.*s", (int)off, buf);
                json_decref (a);
            }
        }
    }
    ok (bad == 0,
        "%d strings with a special byte at every position: the same text "
        "(or failure) as json_dumps",
        n);
}

static unsigned long long rng = 0x9E3779B97F4A7C15ULL;

static unsigned rnd (unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

static json_t *random_string (void)
{
    char s[64];
    size_t len = rnd (24), n = 0;

    while (n < len && n + 5 < sizeof (s)) {
        switch (rnd (9)) {
            case 0:
                s[n++] = "\"\\\b\f\n\r\t\x01\x1f/\x7f"[rnd (11)];
                break;
            case 1:
                s[n++] = (char)0xc3;
                s[n++] = (char)(0x80 + rnd (0x40));
                break;
            case 2:
                s[n++] = (char)0xe4;
                s[n++] = (char)(0x80 + rnd (0x40));
                s[n++] = (char)(0x80 + rnd (0x40));
                break;
            case 3:
                s[n++] = (char)0xf0;
                s[n++] = (char)(0x90 + rnd (0x30));
                s[n++] = (char)(0x80 + rnd (0x40));
                s[n++] = (char)(0x80 + rnd (0x40));
                break;
            case 4:
                s[n++] = '\0';
                break;
            default:
                s[n++] = (char)(0x20 + rnd (0x5f));
                break;
        }
    }
    if (rnd (50) == 0) /* now and then, not UTF-8 at all */
        s[rnd ((unsigned)n + 1) % (n ? n : 1)] = (char)0xff;
    return json_stringn_nocheck (s, n);
}

static json_t *random_value (int depth)
{
    switch (depth > 4 ? rnd (6) : rnd (8)) {
        case 0:
            return json_integer ((json_int_t)rnd (2000000) - 1000000);
        case 1:
            return json_real (ldexp ((double)rnd (1u << 30) / (1u << 30),
                                     (int)rnd (2000) - 1000)
                              * (rnd (2) ? 1 : -1));
        case 2:
            return json_real ((double)rnd (100000) / (1 + rnd (1000)));
        case 3:
            return random_string ();
        case 4:
            return rnd (2) ? json_true () : json_false ();
        case 5:
            return json_null ();
        case 6: {
            json_t *a = json_array ();
            for (unsigned i = rnd (5); i > 0; i--)
                json_array_append_new (a, random_value (depth + 1));
            return a;
        }
        default: {
            json_t *o = json_object ();
            for (unsigned i = rnd (5); i > 0; i--) {
                json_t *key = random_string ();
                json_object_setn_new_nocheck (o, json_string_value (key),
                                              json_string_length (key),
                                              random_value (depth + 1));
                json_decref (key);
            }
            return o;
        }
    }
}

static void test_random (void)
{
    int bad = 0;

    for (int i = 0; i < 20000; i++) {
        json_t *o = random_value (0);
        size_t flags = JSON_COMPACT;
        if (!json_is_object (o) && !json_is_array (o))
            flags |= JSON_ENCODE_ANY;
        if (differs (o, flags) && bad++ < 5)
            diag ("document %d differs", i);
        json_decref (o);
    }
    ok (bad == 0, "20000 random values: the same text as json_dumps");
}

int main (void)
{
    plan (NO_PLAN);
    test_values ();
    test_string_positions ();
    test_random ();
    done_testing ();
    return 0;
}
