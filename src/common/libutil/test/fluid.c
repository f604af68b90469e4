/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/fluid.c - FLUID generator and encodings (RFC 19) */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "libutil/fluid.h"
#include "tap.h"

#define F "\xc6\x92" /* ƒ */

static const char *typename(enum fluid_string_type type)
{
    switch (type) {
        case FLUID_STRING_DEC:
            return "dec";
        case FLUID_STRING_HEX:
            return "hex";
        case FLUID_STRING_DOTHEX:
            return "dothex";
        case FLUID_STRING_KVS:
            return "kvs";
        case FLUID_STRING_F58:
            return "f58";
        case FLUID_STRING_F58_PLAIN:
            return "f58plain";
    }
    return "?";
}

static const enum fluid_string_type all_types[] = {
    FLUID_STRING_DEC, FLUID_STRING_HEX, FLUID_STRING_DOTHEX,
    FLUID_STRING_KVS, FLUID_STRING_F58, FLUID_STRING_F58_PLAIN,
};
#define NTYPES (sizeof (all_types) / sizeof (all_types[0]))

/* Check encode and strict decode of one value in one form. */
static void check_form (fluid_t v, enum fluid_string_type type,
                        const char *expect)
{
    char buf[FLUID_STRING_MAX];
    fluid_t got = 0;
    enum fluid_string_type gtype = 0;

    ok (fluid_encode (buf, sizeof (buf), v, type) == 0,
        "%s: encode %" PRIu64 " works", typename(type), v);
    is (buf, expect, "%s: %" PRIu64 " encodes as %s", typename(type), v,
        expect);
    ok (fluid_decode (expect, &got, type) == 0 && got == v,
        "%s: %s decodes as %" PRIu64, typename(type), expect, v);
    ok (fluid_decode_type (expect, &got, &gtype) == 0 && got == v
            && gtype == type,
        "%s: %s is detected and parsed", typename(type), expect);
}

static void test_rfc_vectors (void)
{
    fluid_t v;

    /* RFC 19 "Representation" */
    ok (fluid_parse ("6731191091817518", &v) == 0 && v == 6731191091817518ULL,
        "RFC decimal example 6731191091817518 parses");
    check_form (6731191091817518ULL, FLUID_STRING_F58, F "uZZybuNNy");
    check_form (6731191091817518ULL, FLUID_STRING_F58_PLAIN, "fuZZybuNNy");
    check_form (6731191091817518ULL, FLUID_STRING_DEC, "6731191091817518");

    /* F58 examples */
    ok (fluid_parse (F "ZemgA8Bzf", &v) == 0 && v == 0xedaf97d000000ULL,
        "RFC F58 example " F "ZemgA8Bzf is 0xedaf97d000000");
    ok (fluid_parse (F "278oEf7zGf", &v) == 0 && v == 0x1d2de90a000000ULL,
        "RFC F58 example " F "278oEf7zGf is 0x1d2de90a000000");
    check_form (0xedaf97d000000ULL, FLUID_STRING_F58, F "ZemgA8Bzf");
    check_form (0x1d2de90a000000ULL, FLUID_STRING_F58, F "278oEf7zGf");

    /* hex and dothex examples (the same two values) */
    check_form (0x17e9fb8df16c2eULL, FLUID_STRING_HEX, "0x17e9fb8df16c2e");
    check_form (0xedaf97d000000ULL, FLUID_STRING_HEX, "0xedaf97d000000");
    check_form (0x17e9fb8df16c2eULL, FLUID_STRING_DOTHEX,
                "0017.e9fb.8df1.6c2e");
    check_form (0xedaf97d000000ULL, FLUID_STRING_DOTHEX, "000e.daf9.7d00.0000");
    check_form (0x17e9fb8df16c2eULL, FLUID_STRING_KVS,
                "job.0017.e9fb.8df1.6c2e");

    /* mnemonic and emoji examples: recognized, unsupported */
    const char *unsupported[] = {
        "reform-remote-galileo--heart-package-academy",
        "random-idea-yoyo--sugar-printer-academy",
        "\xf0\x9f\x9a\xb9\xf0\x9f\x92\x82\xf0\x9f\x99\x8c"
        "\xf0\x9f\x98\xb3\xf0\x9f\x92\xb1\xf0\x9f\x8f\x83", /* 🚹💂🙌😳💱🏃 */
        "\xf0\x9f\x98\x84\xf0\x9f\x98\xb9",                 /* 😄😹 */
    };
    for (size_t i = 0; i < sizeof (unsupported) / sizeof (unsupported[0]);
         i++) {
        errno = 0;
        v = 42;
        ok (fluid_parse (unsupported[i], &v) < 0 && errno == EINVAL && v == 42,
            "RFC words/emoji example %zu fails with EINVAL, output untouched",
            i);
    }
}

static void test_edges (void)
{
    check_form (0, FLUID_STRING_F58, F "1");
    check_form (0, FLUID_STRING_F58_PLAIN, "f1");
    check_form (0, FLUID_STRING_DEC, "0");
    check_form (0, FLUID_STRING_HEX, "0x0");
    check_form (0, FLUID_STRING_DOTHEX, "0000.0000.0000.0000");
    check_form (0, FLUID_STRING_KVS, "job.0000.0000.0000.0000");
    check_form (57, FLUID_STRING_F58_PLAIN, "fz");
    check_form (58, FLUID_STRING_F58_PLAIN, "f21");
    check_form (UINT64_MAX, FLUID_STRING_F58, F "jpXCZedGfVQ");
    check_form (UINT64_MAX, FLUID_STRING_DEC, "18446744073709551615");
    check_form (UINT64_MAX, FLUID_STRING_HEX, "0xffffffffffffffff");
    check_form (UINT64_MAX, FLUID_STRING_DOTHEX, "ffff.ffff.ffff.ffff");
    check_form (UINT64_MAX, FLUID_STRING_KVS, "job.ffff.ffff.ffff.ffff");
}

/* Deterministic xorshift64* so that failures can be reproduced. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rng (void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dULL;
}

static void test_roundtrip (void)
{
    int errors[NTYPES] = {0};
    int n = 0;

    for (int i = 0; i < 20000; i++) {
        fluid_t v;
        if (i == 0)
            v = 0;
        else if (i == 1)
            v = UINT64_MAX;
        else if (i < 66)
            v = UINT64_C (1) << (i - 2);
        else if (i < 130)
            v = (UINT64_C (1) << (i - 66)) - 1;
        else /* vary the magnitude, not only the bits */
            v = rng () >> (rng () % 64);
        for (size_t t = 0; t < NTYPES; t++) {
            char buf[FLUID_STRING_MAX];
            fluid_t a = ~v, b = ~v;
            enum fluid_string_type type = 0;
            if (fluid_encode (buf, sizeof (buf), v, all_types[t]) < 0
                || fluid_decode (buf, &a, all_types[t]) < 0 || a != v
                || fluid_decode_type (buf, &b, &type) < 0 || b != v
                || type != all_types[t]) {
                if (errors[t]++ == 0)
                    diag ("%s: %" PRIu64 " -> '%s' failed",
                          typename(all_types[t]), v, buf);
            }
        }
        n++;
    }
    for (size_t t = 0; t < NTYPES; t++)
        ok (errors[t] == 0,
            "%s: %d values round trip through encode, "
            "decode and parse",
            typename(all_types[t]), n);
}

static void test_decode_errors (void)
{
    struct {
        const char *s;
        enum fluid_string_type type;
    } bad[] = {
        {"", FLUID_STRING_DEC},
        {"12a", FLUID_STRING_DEC},
        {" 12", FLUID_STRING_DEC},
        {"12 ", FLUID_STRING_DEC},
        {"+12", FLUID_STRING_DEC},
        {"-12", FLUID_STRING_DEC},
        {"0x12", FLUID_STRING_DEC},
        {"18446744073709551616", FLUID_STRING_DEC},
        {"99999999999999999999", FLUID_STRING_DEC},
        {"", FLUID_STRING_HEX},
        {"0x", FLUID_STRING_HEX},
        {"12", FLUID_STRING_HEX},
        {"0X12", FLUID_STRING_HEX},
        {"0x12g", FLUID_STRING_HEX},
        {"0x-1", FLUID_STRING_HEX},
        {"0x10000000000000000", FLUID_STRING_HEX},
        {"", FLUID_STRING_DOTHEX},
        {"0017.e9fb.8df1.6c2", FLUID_STRING_DOTHEX},
        {"0017.e9fb.8df1.6c2e0", FLUID_STRING_DOTHEX},
        {"17.e9fb.8df1.6c2e", FLUID_STRING_DOTHEX},
        {"0017.e9fb.8df1", FLUID_STRING_DOTHEX},
        {"0017:e9fb.8df1.6c2e", FLUID_STRING_DOTHEX},
        {"0017.e9fb.8df1.6c2g", FLUID_STRING_DOTHEX},
        {"00017e9fb.8df1.6c2e", FLUID_STRING_DOTHEX},
        {"job.0017.e9fb.8df1.6c2e", FLUID_STRING_DOTHEX},
        {"0017.e9fb.8df1.6c2e", FLUID_STRING_KVS},
        {"job.", FLUID_STRING_KVS},
        {"job0017.e9fb.8df1.6c2e", FLUID_STRING_KVS},
        {"", FLUID_STRING_F58},
        {F, FLUID_STRING_F58},
        {"fuZZybuNNy", FLUID_STRING_F58},
        {F "uZZybuNNy", FLUID_STRING_F58_PLAIN},
        {"f", FLUID_STRING_F58_PLAIN},
        {"uZZybuNNy", FLUID_STRING_F58_PLAIN},
        {"fuZZybu0Ny", FLUID_STRING_F58_PLAIN}, /* 0 not in alphabet */
        {"fuZZybuONy", FLUID_STRING_F58_PLAIN}, /* O */
        {"fuZZybuINy", FLUID_STRING_F58_PLAIN}, /* I */
        {"fuZZybulNy", FLUID_STRING_F58_PLAIN}, /* l */
        {"fuZZ ybuNNy", FLUID_STRING_F58_PLAIN},
        {"fjpXCZedGfVR", FLUID_STRING_F58_PLAIN},   /* UINT64_MAX + 1 */
        {"fzzzzzzzzzzz", FLUID_STRING_F58_PLAIN},   /* 11 z: too big */
        {"f1111111111111", FLUID_STRING_F58_PLAIN}, /* 13 digits */
        {"0", 0},
        {"0", 99},
    };
    int nbad = sizeof (bad) / sizeof (bad[0]);
    int failures = 0;

    for (int i = 0; i < nbad; i++) {
        fluid_t v = 42;
        errno = 0;
        if (fluid_decode (bad[i].s, &v, bad[i].type) == 0 || errno != EINVAL
            || v != 42) {
            diag ("'%s' as %s: not rejected with EINVAL", bad[i].s,
                  typename(bad[i].type));
            failures++;
        }
    }
    ok (failures == 0,
        "%d malformed strings are rejected by strict decode "
        "with EINVAL",
        nbad);

    fluid_t v;
    ok (fluid_decode ("f111111111111", &v, FLUID_STRING_F58_PLAIN) == 0
            && v == 0,
        "f58: 12 digits (leading zeros) are accepted");
    ok (fluid_decode ("0017.E9FB.8DF1.6C2E", &v, FLUID_STRING_DOTHEX) == 0
            && v == 0x17e9fb8df16c2eULL,
        "dothex: upper case hex digits are accepted");
    ok (fluid_decode ("0x17E9FB8DF16C2E", &v, FLUID_STRING_HEX) == 0
            && v == 0x17e9fb8df16c2eULL,
        "hex: upper case hex digits are accepted");
    ok (fluid_decode ("0x00000000000000000001", &v, FLUID_STRING_HEX) == 0
            && v == 1,
        "hex: leading zeros beyond 16 digits are accepted");
    errno = 0;
    ok (fluid_decode (NULL, &v, FLUID_STRING_DEC) < 0 && errno == EINVAL,
        "decode: NULL string fails with EINVAL");
    errno = 0;
    ok (fluid_decode ("1", NULL, FLUID_STRING_DEC) < 0 && errno == EINVAL,
        "decode: NULL result fails with EINVAL");
}

static void test_parse (void)
{
    struct {
        const char *s;
        fluid_t v;
        enum fluid_string_type type;
    } good[] = {
        {"  \t6731191091817518\n", 6731191091817518ULL, FLUID_STRING_DEC},
        {"\n" F "uZZybuNNy  ", 6731191091817518ULL, FLUID_STRING_F58},
        {" fuZZybuNNy\r\n", 6731191091817518ULL, FLUID_STRING_F58_PLAIN},
        {" 0x17e9fb8df16c2e ", 0x17e9fb8df16c2eULL, FLUID_STRING_HEX},
        {"0017.e9fb.8df1.6c2e", 0x17e9fb8df16c2eULL, FLUID_STRING_DOTHEX},
        {"job.0017.e9fb.8df1.6c2e", 0x17e9fb8df16c2eULL, FLUID_STRING_KVS},
        {" job.0017.e9fb.8df1.6c2e ", 0x17e9fb8df16c2eULL, FLUID_STRING_KVS},
        /* "job." is stripped before the form is chosen */
        {"job.123", 123, FLUID_STRING_DEC},
        {"job." F "uZZybuNNy", 6731191091817518ULL, FLUID_STRING_F58},
        {"job.0x10", 16, FLUID_STRING_HEX},
        {"007", 7, FLUID_STRING_DEC},
    };
    const char *bad[] = {
        "",
        "   ",
        "\t\n",
        "job.",
        " job. ",
        "x",
        "12a",
        "1 2",
        "0x",
        "0X10",
        "+5",
        "-5",
        "1-2",
        "F1",
        "fuZZ0",
        F,
        F "0",
        "f",
        "ff-1",
        "0017.e9fb.8df1",
        "0017.e9fb.8df1.6c2e.",
        "job.job.1",
        "0.1",
        "18446744073709551616",
        "\xc6",
        "\xf0\x9f",
        "1\x01",
        "jobs.1",
    };
    int failures = 0;

    for (size_t i = 0; i < sizeof (good) / sizeof (good[0]); i++) {
        fluid_t v = 0;
        enum fluid_string_type type = 0;
        ok (fluid_decode_type (good[i].s, &v, &type) == 0 && v == good[i].v
                && type == good[i].type,
            "parse '%s' gives %" PRIu64 " as %s", good[i].s, good[i].v,
            typename(good[i].type));
    }
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        fluid_t v = 42;
        enum fluid_string_type type = 0;
        errno = 0;
        if (fluid_decode_type (bad[i], &v, &type) == 0 || errno != EINVAL
            || v != 42 || type != 0) {
            diag ("parse '%s' was not rejected", bad[i]);
            failures++;
        }
    }
    ok (failures == 0, "parse rejects %zu malformed strings with EINVAL",
        sizeof (bad) / sizeof (bad[0]));
    fluid_t v;
    ok (fluid_parse ("  42  ", &v) == 0 && v == 42, "fluid_parse works");
    errno = 0;
    ok (fluid_parse (NULL, &v) < 0 && errno == EINVAL,
        "fluid_parse (NULL) fails with EINVAL");
    errno = 0;
    ok (fluid_parse ("1", NULL) < 0 && errno == EINVAL,
        "fluid_parse with NULL result fails with EINVAL");
}

static void test_encode_errors (void)
{
    char buf[FLUID_STRING_MAX];
    int failures = 0;

    /* every form: exactly the needed size works, one less overflows */
    for (size_t t = 0; t < NTYPES; t++) {
        fluid_t vals[] = {0, 6731191091817518ULL, UINT64_MAX};
        for (size_t i = 0; i < 3; i++) {
            char small[FLUID_STRING_MAX];
            if (fluid_encode (buf, sizeof (buf), vals[i], all_types[t]) < 0) {
                failures++;
                continue;
            }
            int need = strlen (buf) + 1;
            memset (small, 'x', sizeof (small));
            errno = 0;
            if (fluid_encode (small, need - 1, vals[i], all_types[t]) == 0
                || errno != EOVERFLOW || small[0] != '\0')
                failures++;
            if (fluid_encode (small, need, vals[i], all_types[t]) < 0
                || strcmp (small, buf) != 0)
                failures++;
        }
    }
    ok (failures == 0, "encode needs exactly strlen+1 bytes; less gives "
                       "EOVERFLOW and an empty string");
    errno = 0;
    ok (fluid_encode (buf, sizeof (buf), 1, 0) < 0 && errno == EINVAL,
        "encode: type 0 fails with EINVAL");
    errno = 0;
    ok (fluid_encode (buf, sizeof (buf), 1, 99) < 0 && errno == EINVAL,
        "encode: unknown type fails with EINVAL");
    errno = 0;
    ok (fluid_encode (NULL, 10, 1, FLUID_STRING_DEC) < 0 && errno == EINVAL,
        "encode: NULL buffer fails with EINVAL");
    errno = 0;
    ok (fluid_encode (buf, 0, 1, FLUID_STRING_DEC) < 0 && errno == EINVAL,
        "encode: zero size fails with EINVAL");
    errno = 0;
    ok (fluid_encode (buf, -1, 1, FLUID_STRING_DEC) < 0 && errno == EINVAL,
        "encode: negative size fails with EINVAL");
}

static void test_fields (void)
{
    fluid_t v = (UINT64_C (123456789) << 24) | (UINT64_C (16000) << 10) | 999;

    cmp_ok (fluid_get_timestamp (v), "==", 123456789, "get_timestamp");
    cmp_ok (fluid_get_id (v), "==", 16000, "get_id");
    cmp_ok (fluid_get_seq (v), "==", 999, "get_seq");
    cmp_ok (fluid_get_timestamp (UINT64_MAX), "==", FLUID_TIMESTAMP_MAX,
            "get_timestamp of UINT64_MAX is the 40-bit maximum");
    cmp_ok (fluid_get_id (UINT64_MAX), "==", 16383, "id field is 14 bits");
    cmp_ok (fluid_get_seq (UINT64_MAX), "==", 1023, "seq field is 10 bits");
}

/* A fake millisecond clock.  Once 'calls' passes 'advance_after', each
 * read advances it by one ms.  'fail' makes reads fail with EIO.
 */
struct fake_clock {
    uint64_t now;
    int calls;
    int advance_after;
    int fail;
};

static int fake_read (uint64_t *ms, void *arg)
{
    struct fake_clock *c = arg;

    c->calls++;
    if (c->fail) {
        errno = EIO;
        return -1;
    }
    if (c->advance_after > 0 && c->calls > c->advance_after)
        c->now++;
    *ms = c->now;
    return 0;
}

static void test_generator_init (void)
{
    struct fluid_generator gen;
    struct fake_clock c = {.now = 100};

    errno = 0;
    ok (fluid_init (&gen, FLUID_ID_MAX + 1, 0) < 0 && errno == EINVAL,
        "init: id 16384 fails with EINVAL");
    errno = 0;
    ok (fluid_init (&gen, 0, FLUID_TIMESTAMP_MAX + 1) < 0 && errno == EINVAL,
        "init: timestamp beyond 40 bits fails with EINVAL");
    errno = 0;
    ok (fluid_init (NULL, 0, 0) < 0 && errno == EINVAL,
        "init: NULL generator fails with EINVAL");
    errno = 0;
    ok (fluid_init_clock (&gen, 0, 0, NULL, NULL) < 0 && errno == EINVAL,
        "init_clock: NULL clock fails with EINVAL");
    c.fail = 1;
    errno = 0;
    ok (fluid_init_clock (&gen, 0, 0, fake_read, &c) < 0 && errno == EIO,
        "init_clock: a failing clock's errno is passed on");
    ok (fluid_init (&gen, FLUID_ID_MAX, FLUID_TIMESTAMP_MAX) == 0,
        "init: largest id and timestamp are accepted");
    fluid_t v;
    errno = 0;
    ok (fluid_generate (NULL, &v) < 0 && errno == EINVAL,
        "generate: NULL generator fails with EINVAL");
    errno = 0;
    ok (fluid_generate (&gen, NULL) < 0 && errno == EINVAL,
        "generate: NULL result fails with EINVAL");
}

static void test_generator_fake (void)
{
    struct fluid_generator gen;
    struct fake_clock c = {.now = 5000};
    fluid_t v, prev = 0;
    int bad = 0;

    ok (fluid_init_clock (&gen, 77, 12345, fake_read, &c) == 0,
        "init with a stopped fake clock, id 77, start 12345");
    cmp_ok (fluid_save_timestamp (&gen), "==", 12345,
            "save_timestamp before any id is the start");
    for (int i = 0; i < 1024; i++) {
        if (fluid_generate (&gen, &v) < 0 || fluid_get_timestamp (v) != 12345
            || fluid_get_id (v) != 77 || fluid_get_seq (v) != (uint32_t)i
            || (i > 0 && v <= prev))
            bad++;
        prev = v;
    }
    ok (bad == 0, "1024 ids in one ms have sequence 0..1023, same stamp");
    cmp_ok (fluid_save_timestamp (&gen), "==", 12346,
            "save_timestamp is one past the last id's stamp");

    /* the 1025th must wait for the clock: it advances on the next read */
    c.advance_after = c.calls + 1;
    int calls_before = c.calls;
    ok (fluid_generate (&gen, &v) == 0 && v > prev
            && fluid_get_timestamp (v) == 12346 && fluid_get_seq (v) == 0,
        "sequence wrap waits for the next ms and restarts at 0");
    cmp_ok (c.calls - calls_before, "==", 2,
            "the wrap read the clock again instead of bumping the stamp");
    c.advance_after = 0;
    prev = v;

    /* clock failure leaves the generator unchanged */
    c.fail = 1;
    errno = 0;
    ok (fluid_generate (&gen, &v) < 0 && errno == EIO,
        "generate: a failing clock's errno is passed on");
    c.fail = 0;
    ok (fluid_generate (&gen, &v) == 0 && v == prev + 1,
        "after the failure the next id follows the last one");
    prev = v;

    /* clock jumps forward */
    c.now += 10;
    ok (fluid_generate (&gen, &v) == 0 && fluid_get_timestamp (v) == 12356
            && fluid_get_seq (v) == 0,
        "clock forward 10 ms: stamp follows, sequence restarts");
    prev = v;

    /* clock steps back (even before the base): stamps never go back, and
     * a wrap bumps the stamp rather than waiting for the clock */
    c.now = 1000;
    bad = 0;
    calls_before = c.calls;
    for (int i = 0; i < 3000; i++) {
        if (fluid_generate (&gen, &v) < 0 || v <= prev
            || fluid_get_timestamp (v) < 12356 || fluid_get_id (v) != 77)
            bad++;
        prev = v;
    }
    ok (bad == 0, "clock stepped back: 3000 ids still strictly increase");
    cmp_ok (c.calls - calls_before, "==", 3000,
            "no waiting while the clock is behind (one read per id)");
    cmp_ok (fluid_get_timestamp (prev), "==", 12358,
            "the stamp was bumped on each wrap: 12356 -> 12358");
    c.now = 5000 + 12358 - 12345;
    ok (fluid_generate (&gen, &v) == 0 && v == prev + 1,
        "clock catches up to the bumped stamp: sequence continues");
    c.now++;
    ok (fluid_generate (&gen, &v) == 0 && fluid_get_timestamp (v) == 12359
            && fluid_get_seq (v) == 0,
        "clock passes the bumped stamp: stamp follows the clock again");

    /* restart continuity */
    struct fluid_generator gen2;
    uint64_t saved = fluid_save_timestamp (&gen);
    fluid_t v2;
    ok (fluid_init_clock (&gen2, 77, saved, fake_read, &c) == 0
            && fluid_generate (&gen2, &v2) == 0 && v2 > v
            && fluid_get_timestamp (v2) == saved,
        "a generator restarted from save_timestamp issues larger ids");
}

static void test_generator_overflow (void)
{
    struct fluid_generator gen;
    struct fake_clock c = {.now = 0};
    fluid_t v, last = 0;
    int bad = 0;

    c.now = 10;
    ok (fluid_init_clock (&gen, 1, FLUID_TIMESTAMP_MAX - 1, fake_read, &c) == 0,
        "init one ms before the last timestamp");
    c.now = 11;
    for (int i = 0; i < 1024; i++)
        if (fluid_generate (&gen, &last) < 0)
            bad++;
    ok (bad == 0 && fluid_get_timestamp (last) == FLUID_TIMESTAMP_MAX
            && fluid_get_seq (last) == 1023,
        "the last millisecond's 1024 ids are issued");
    c.now = 10; /* stepped back: the bump path overflows */
    errno = 0;
    ok (fluid_generate (&gen, &v) < 0 && errno == EOVERFLOW,
        "with the clock behind, the bump fails with EOVERFLOW");
    c.now = 11;
    c.advance_after = c.calls + 1; /* the wait path overflows too */
    errno = 0;
    ok (fluid_generate (&gen, &v) < 0 && errno == EOVERFLOW,
        "waiting for the next ms fails with EOVERFLOW");
    c.advance_after = 0;
    cmp_ok (fluid_save_timestamp (&gen), "==", FLUID_TIMESTAMP_MAX + 1,
            "failed calls left the generator unchanged");

    c.now = 0;
    ok (fluid_init_clock (&gen, 1, FLUID_TIMESTAMP_MAX - 5, fake_read, &c) == 0,
        "init 5 ms before the end");
    c.now = 6;
    errno = 0;
    ok (fluid_generate (&gen, &v) < 0 && errno == EOVERFLOW,
        "a clock 6 ms later overflows the 40 bits: EOVERFLOW");
    c.now = UINT64_MAX;
    errno = 0;
    ok (fluid_generate (&gen, &v) < 0 && errno == EOVERFLOW,
        "a huge clock jump gives EOVERFLOW, not a wrapped stamp");
}

static uint64_t monotonic_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The real (monotonic) clock: 100k ids. */
static void test_generator_real (void)
{
    struct fluid_generator gen, gen2;
    fluid_t v, prev = 0;
    int nonmono = 0, badid = 0, overfull = 0;
    int per_ms = 0, max_per_ms = 0;
    uint64_t first_ts = 0;
    const int n = 100000;

    uint64_t t0 = monotonic_ms ();
    ok (fluid_init (&gen, 3, 0) == 0, "init with the monotonic clock");
    for (int i = 0; i < n; i++) {
        if (fluid_generate (&gen, &v) < 0) {
            nonmono++;
            break;
        }
        if (i == 0)
            first_ts = fluid_get_timestamp (v);
        if (i > 0 && v <= prev)
            nonmono++;
        if (fluid_get_id (v) != 3)
            badid++;
        if (i > 0 && fluid_get_timestamp (v) == fluid_get_timestamp (prev))
            per_ms++;
        else
            per_ms = 1;
        if (per_ms > max_per_ms)
            max_per_ms = per_ms;
        if (per_ms > 1024)
            overfull++;
        prev = v;
    }
    ok (nonmono == 0, "%d ids strictly increase", n);
    ok (badid == 0, "every id carries generator id 3");
    ok (overfull == 0, "no millisecond has more than 1024 ids (max %d)",
        max_per_ms);
    ok (fluid_get_timestamp (prev) - first_ts >= (uint64_t)n / 1024,
        "100k ids span at least %d ms (the rate limit holds)", n / 1024);
    uint64_t t1 = monotonic_ms ();
    ok (fluid_get_timestamp (prev) <= t1 - t0,
        "the last stamp (%" PRIu64 ") is not ahead of the clock (%" PRIu64
        " ms elapsed): the generator waited rather than bumped",
        fluid_get_timestamp (prev), t1 - t0);

    ok (fluid_init (&gen2, 3, fluid_save_timestamp (&gen)) == 0
            && fluid_generate (&gen2, &v) == 0 && v > prev,
        "restart from save_timestamp continues above the last id");
}

int main (int argc, char *argv[])
{
    plan (NO_PLAN);

    test_rfc_vectors ();
    test_edges ();
    test_roundtrip ();
    test_decode_errors ();
    test_parse ();
    test_encode_errors ();
    test_fields ();
    test_generator_init ();
    test_generator_fake ();
    test_generator_overflow ();
    test_generator_real ();

    done_testing ();
}
