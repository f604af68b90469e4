/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Unit tests for jsonparse: it must accept exactly what jansson's
 * json_loadb (flags 0) accepts and build equal objects.  Hand-picked
 * cases, then random documents dumped by jansson in several styles, then
 * the same documents with random damage, each compared with json_loadb.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "libflux/jsonparse.h"
#include "strpos.h"
#include "tap.h"

/* 0: same verdict and equal objects with these flags (0 or
 * JSON_REJECT_DUPLICATES); else a description in why. */
static int differs_flags (const char *s, size_t len, size_t flags, char *why,
                          size_t size)
{
    char err[160];
    json_t *a = flags ? jsonparse_ex (s, len, flags, err, sizeof (err))
                      : jsonparse (s, len, err, sizeof (err));
    json_t *b = json_loadb (s, len, flags, NULL);
    int rc = 0;

    if (!a != !b) {
        snprintf (why, size, "jsonparse %s, jansson %s (%s)",
                  a ? "accepts" : "refuses", b ? "accepts" : "refuses",
                  a ? "" : err);
        rc = 1;
    }
    else if (a && !json_equal (a, b)) {
        snprintf (why, size, "different objects");
        rc = 1;
    }
    else if (!a && err[0] == '\0') {
        snprintf (why, size, "refused without an error text");
        rc = 1;
    }
    json_decref (a);
    json_decref (b);
    return rc;
}

/* Both without flags and with JSON_REJECT_DUPLICATES. */
static int differs (const char *s, size_t len, char *why, size_t size)
{
    if (differs_flags (s, len, 0, why, size))
        return 1;
    if (differs_flags (s, len, JSON_REJECT_DUPLICATES, why, size)) {
        size_t n = strlen (why);
        snprintf (why + n, size - n, " (rejecting duplicates)");
        return 1;
    }
    return 0;
}

static const char *cases[] = {
    "{}",
    "[]",
    " \t\r\n{ } \n",
    "{\"a\":1}",
    "[1,2,3]",
    "[true,false,null]",
    "{\"a\":{\"b\":[{},[],\"\"]}}",
    "{\"a\":1,\"a\":2}",
    "{\"a\":{\"b\":1,\"c\":2,\"b\":3}}",
    "[{\"x\":1},{\"x\":2}]",
    "{\"a\\u0062\":1,\"ab\":2}",
    "[-0]",
    "[0]",
    "[-1]",
    "[9223372036854775807]",
    "[-9223372036854775808]",
    "[9223372036854775808]",
    "[-9223372036854775809]",
    "[1.5]",
    "[-1.5e10]",
    "[1E-400]",
    "[1e400]",
    "[-1e400]",
    "[0.0]",
    "[1.0e+2]",
    "[12345678901234567890123456789.5]",
    "[01]",
    "[1.]",
    "[.5]",
    "[-]",
    "[1e]",
    "[1e+]",
    "[+1]",
    "[0x10]",
    "[Infinity]",
    "[NaN]",
    "[tru]",
    "[truex]",
    "[nul]",
    "[\"a\\\"b\"]",
    "[\"\\\\\\/\\b\\f\\n\\r\\t\"]",
    "[\"\\u0041\\u00e9\\u4e2d\"]",
    "[\"\\ud83d\\ude00\"]",
    "[\"\\ud83d\"]",
    "[\"\\ude00\"]",
    "[\"\\ud83d\\u0041\"]",
    "[\"\\u0000\"]",
    "[\"\\u12\"]",
    "[\"\\x41\"]",
    "[\"\\\"]",
    "[\"abc]",
    "[\"a\tb\"]",
    "[\"a\nb\"]",
    "[\"\xc3\xa9\"]",
    "[\"\xe4\xb8\xad\"]",
    "[\"\xf0\x9f\x98\x80\"]",
    "[\"\xc3\"]",
    "[\"\xc0\x80\"]",
    "[\"\xe0\x80\x80\"]",
    "[\"\xed\xa0\x80\"]",
    "[\"\xf4\x90\x80\x80\"]",
    "[\"\xf5\x80\x80\x80\"]",
    "[\"\xff\"]",
    "[\"\x80\"]",
    "{\"\\u00e9\":1}",
    "{\"k\\\"q\":[1,{\"x\\n\":2}]}",
    "{\"a\":1,}",
    "[1,]",
    "[,1]",
    "{,}",
    "{\"a\"}",
    "{\"a\":}",
    "{1:2}",
    "{\"a\" 1}",
    "[1 2]",
    "{} {}",
    "{}x",
    "1",
    "\"s\"",
    "true",
    "null",
    "",
    "   ",
    "[",
    "{",
    "]",
    "}",
    "[[[]]]",
    "{\"a\":[1,2,{\"b\":null}],\"c\":"
    "\"d\"}",
    NULL,
};

static void test_cases (void)
{
    char why[256];
    int bad = 0;

    for (int i = 0; cases[i]; i++) {
        if (differs (cases[i], strlen (cases[i]), why, sizeof (why))) {
            diag ("%s: %s", cases[i], why);
            bad++;
        }
    }
    ok (bad == 0, "hand-picked documents: same verdict as json_loadb");
    {
        /* a NUL byte inside the given length */
        const char s[] = "[\"a\0b\"]";
        ok (!differs (s, sizeof (s) - 1, why, sizeof (why)),
            "a NUL byte inside the text is refused like json_loadb");
    }
    {
        /* nesting: 2048 levels are fine, 2049 are not */
        for (int depth = 2047; depth <= 2050; depth++) {
            char *s = malloc (2 * depth + 1);
            json_t *o;
            memset (s, '[', depth);
            memset (s + depth, ']', depth);
            s[2 * depth] = '\0';
            o = jsonparse (s, 2 * depth, NULL, 0);
            ok (!differs (s, 2 * depth, why, sizeof (why)),
                "%d nested arrays: same verdict (%s)", depth,
                o ? "accepted" : "refused");
            json_decref (o);
            free (s);
        }
    }
    {
        char err[160];
        json_t *o = jsonparse ("{\"a\":}", 6, err, sizeof (err));
        ok (o == NULL && strstr (err, "offset 5") != NULL,
            "the error says where: %s", err);
    }
}

/* Long strings are scanned eight bytes at a time: put each kind of byte
 * that needs a look at every position of strings of 0 to 40 bytes, so
 * that it falls in every place of a word and in the tail. */
static void test_string_positions (void)
{
    static const char *special[] = {
        "\\\"",             /* an escaped quote */
        "\\\\",             /* an escaped backslash */
        "\\u00e9",          /* a \u escape */
        "\x01",             /* a raw control character: refused */
        "\x7f",             /* DEL: allowed as it is */
        "\xc3\xa9",         /* two-byte UTF-8 */
        "\xe4\xb8\xad",     /* three bytes */
        "\xf0\x9f\x98\x80", /* four bytes */
        "\xff",             /* invalid UTF-8 */
        "\xc3",             /* a truncated sequence */
        "\"",               /* the end of the string, early */
        NULL,
    };
    char buf[128], why[256];
    int bad = 0, n = 0;

    for (int len = 0; len <= 40; len++) {
        for (int pos = 0; pos <= len; pos++) {
            for (int k = 0; special[k]; k++) {
                size_t off = 2;
                buf[0] = '[';
                buf[1] = '"';
                off += strpos_build (buf + 2, len, pos, special[k]);
                buf[off++] = '"';
                buf[off++] = ']';
                n++;
                if (differs (buf, off, why, sizeof (why))) {
                    if (bad++ < 5)
                        diag ("%.*s: %s", (int)off, buf, why);
                }
            }
        }
    }
    ok (bad == 0,
        "%d strings with a special byte at every position: same verdict "
        "and value as json_loadb",
        n);
}

static unsigned long long rng = 88172645463325252ULL;

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
    size_t len = rnd (20), n = 0;

    while (n < len && n + 5 < sizeof (s)) {
        switch (rnd (8)) {
            case 0: /* characters that must be escaped */
                s[n++] = "\"\\\b\f\n\r\t\x01\x1f/"[rnd (10)];
                break;
            case 1: /* two-byte UTF-8 */
                s[n++] = (char)0xc3;
                s[n++] = (char)(0x80 + rnd (0x40));
                break;
            case 2: /* three bytes */
                s[n++] = (char)0xe4;
                s[n++] = (char)(0x80 + rnd (0x40));
                s[n++] = (char)(0x80 + rnd (0x40));
                break;
            case 3: /* four bytes (an astral code point) */
                s[n++] = (char)0xf0;
                s[n++] = (char)(0x90 + rnd (0x30));
                s[n++] = (char)(0x80 + rnd (0x40));
                s[n++] = (char)(0x80 + rnd (0x40));
                break;
            default:
                s[n++] = (char)(0x20 + rnd (0x5f));
                break;
        }
    }
    return json_stringn (s, n);
}

static json_t *random_value (int depth)
{
    unsigned k = depth > 4 ? rnd (6) : rnd (8);

    switch (k) {
        case 0:
            return json_integer ((json_int_t)rnd (1000) - 500);
        case 1: {
            static const json_int_t edge[] = {0,
                                              1,
                                              -1,
                                              9223372036854775807LL,
                                              -9223372036854775807LL - 1,
                                              4294967296LL};
            return json_integer (edge[rnd (6)]);
        }
        case 2:
            return json_real ((double)rnd (100000) / 7.0 - 5000);
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
                json_object_set_new (o, json_string_value (key),
                                     random_value (depth + 1));
                json_decref (key);
            }
            return o;
        }
    }
}

static void test_random (void)
{
    static const size_t styles[]
        = {JSON_COMPACT, JSON_INDENT (2), JSON_ENSURE_ASCII | JSON_COMPACT,
           JSON_ENSURE_ASCII | JSON_INDENT (1) | JSON_SORT_KEYS};
    int bad = 0, badmut = 0, accepted = 0, refused = 0;
    char why[256];

    for (int i = 0; i < 3000; i++) {
        json_t *doc = rnd (2) ? json_array () : json_object ();
        char *s;
        size_t len;

        for (unsigned j = rnd (6); j > 0; j--) {
            if (json_is_array (doc))
                json_array_append_new (doc, random_value (1));
            else {
                char key[16];
                snprintf (key, sizeof (key), "k%u", rnd (10));
                json_object_set_new (doc, key, random_value (1));
            }
        }
        if (!(s = json_dumps (doc, styles[i % 4])))
            BAIL_OUT ("json_dumps");
        len = strlen (s);
        {
            char err[160];
            json_t *o = jsonparse (s, len, err, sizeof (err));
            if (!o || !json_equal (o, doc)) {
                if (bad++ < 5)
                    diag ("%s: %s", s, o ? "not equal" : err);
            }
            json_decref (o);
        }
        for (int m = 0; m < 8; m++) {
            char *t = malloc (len + 8);
            size_t tlen = len;
            memcpy (t, s, len);
            for (unsigned d = 1 + rnd (3); d > 0 && tlen > 0; d--) {
                static const char junk[] = "{}[],:\"\\ 0123456789-+.eEtrufalsn"
                                           "u\x01\x7f\xc3\xa9\xe4\xf0\xff";
                size_t at = rnd ((unsigned)tlen);
                switch (rnd (3)) {
                    case 0:
                        t[at] = junk[rnd (sizeof (junk) - 1)];
                        break;
                    case 1:
                        memmove (t + at + 1, t + at, tlen - at);
                        t[at] = junk[rnd (sizeof (junk) - 1)];
                        tlen++;
                        break;
                    default:
                        memmove (t + at, t + at + 1, tlen - at - 1);
                        tlen--;
                        break;
                }
            }
            if (differs (t, tlen, why, sizeof (why))) {
                if (badmut++ < 5)
                    diag ("%.*s: %s", (int)tlen, t, why);
            }
            else {
                json_t *o = jsonparse (t, tlen, NULL, 0);
                if (o)
                    accepted++;
                else
                    refused++;
                json_decref (o);
            }
            free (t);
        }
        free (s);
        json_decref (doc);
    }
    ok (bad == 0,
        "3000 random documents in 4 styles decode to what was dumped");
    ok (badmut == 0,
        "24000 damaged documents: same verdict and objects as json_loadb"
        " (%d accepted, %d refused)",
        accepted, refused);
}

static void test_flags (void)
{
    char err[160];
    json_t *o;

    o = jsonparse_ex ("{\"a\":1,\"a\":2}", 13, JSON_REJECT_DUPLICATES, err,
                      sizeof (err));
    ok (o == NULL && strstr (err, "duplicate object key"),
        "jsonparse_ex rejects a repeated key: %s", err);
    json_decref (o);
    errno = 0;
    o = jsonparse_ex ("{}", 2, JSON_DECODE_ANY, err, sizeof (err));
    ok (o == NULL && errno == EINVAL, "jsonparse_ex refuses other flags");
    json_decref (o);
}

int main (void)
{
    plan (NO_PLAN);
    test_cases ();
    test_string_positions ();
    test_flags ();
    test_random ();
    done_testing ();
    return 0;
}
