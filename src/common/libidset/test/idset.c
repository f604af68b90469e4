/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/idset.c - RFC 22 idsets: codec, set operations, iteration, scale */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libidset/idset.h"
#include "tap.h"

#define MAX_ID (UINT_MAX - 1)

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd (void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Decode 's' or bail out: for building fixtures.
 */
static struct idset *mkset (const char *s)
{
    struct idset *set = idset_decode (s);
    if (!set)
        BAIL_OUT ("idset_decode (\"%s\") failed: %s", s, strerror (errno));
    return set;
}

/* Return true if encoding 'set' with 'flags' gives 'expected'.
 */
static bool enc_is (const struct idset *set, int flags, const char *expected)
{
    char *s = idset_encode (set, flags);
    bool match = s && !strcmp (s, expected);
    if (!match)
        diag ("encoded '%s', expected '%s'", s ? s : "(null)", expected);
    free (s);
    return match;
}

static void test_create (void)
{
    struct idset *set;

    set = idset_create (0, 0);
    ok (set != NULL, "idset_create (0, 0) works");
    ok (idset_count (set) == 0 && idset_empty (set), "new set is empty");
    cmp_ok (idset_universe_size (set), "==", 0, "universe size is 0");
    ok (enc_is (set, 0, ""), "empty set encodes as \"\"");
    ok (enc_is (set, IDSET_FLAG_BRACKETS | IDSET_FLAG_RANGE, ""),
        "empty set with brackets encodes as \"\"");
    cmp_ok (idset_first (set), "==", IDSET_INVALID_ID, "first of empty set");
    cmp_ok (idset_last (set), "==", IDSET_INVALID_ID, "last of empty set");
    cmp_ok (idset_next (set, 0), "==", IDSET_INVALID_ID, "next of empty set");
    cmp_ok (idset_prev (set, 5), "==", IDSET_INVALID_ID, "prev of empty set");
    idset_destroy (set);

    set = idset_create (100, IDSET_FLAG_AUTOGROW);
    ok (set != NULL, "idset_create (100, IDSET_FLAG_AUTOGROW) works");
    cmp_ok (idset_universe_size (set), "==", 100, "universe size is 100");
    ok (idset_set (set, 1000) == 0 && idset_test (set, 1000),
        "set beyond the universe size grows the set");
    cmp_ok (idset_universe_size (set), "==", 1001, "universe is now 1001");
    idset_destroy (set);

    set = idset_create (4, 0);
    ok (set && idset_set (set, 1u << 30) == 0 && idset_test (set, 1u << 30),
        "growth works without IDSET_FLAG_AUTOGROW too");
    idset_destroy (set);

    errno = 0;
    ok (idset_create (0, IDSET_FLAG_RANGE) == NULL && errno == EINVAL,
        "idset_create with an encode flag fails with EINVAL");
    errno = 0;
    ok (idset_create (0, 0x100) == NULL && errno == EINVAL,
        "idset_create with unknown flags fails with EINVAL");
    if (sizeof (size_t) > sizeof (unsigned int)) {
        errno = 0;
        ok (idset_create ((size_t)UINT_MAX + 1, 0) == NULL && errno == EINVAL,
            "idset_create with size > UINT_MAX fails with EINVAL");
    }
    else
        skip (1, "size_t is 32 bits");
    ok ((set = idset_create (UINT_MAX, 0)) != NULL,
        "idset_create with size UINT_MAX works");
    idset_destroy (set);

    errno = 42;
    idset_destroy (NULL);
    ok (errno == 42, "idset_destroy (NULL) is a no-op preserving errno");
    set = mkset ("1-3");
    errno = 43;
    idset_destroy (set);
    ok (errno == 43, "idset_destroy preserves errno");
}

/* RFC 22 text: "1,2,3,5,6,42", "1-3,5-6,42", "[1-3,5-6,42]" are one set.
 */
static void test_rfc22 (void)
{
    struct idset *a = mkset ("1,2,3,5,6,42");
    struct idset *b = mkset ("1-3,5-6,42");
    struct idset *c = mkset ("[1-3,5-6,42]");

    cmp_ok (idset_count (a), "==", 6, "RFC 22 example has 6 ids");
    ok (idset_equal (a, b) && idset_equal (b, c),
        "RFC 22 list, range and bracket forms decode to the same set");
    ok (enc_is (c, 0, "1,2,3,5,6,42"), "encode without flags lists ids");
    ok (enc_is (a, IDSET_FLAG_RANGE, "1-3,5-6,42"), "encode with RANGE");
    ok (enc_is (a, IDSET_FLAG_RANGE | IDSET_FLAG_BRACKETS, "[1-3,5-6,42]"),
        "encode with RANGE|BRACKETS");
    ok (enc_is (a, IDSET_FLAG_BRACKETS, "[1,2,3,5,6,42]"),
        "encode with BRACKETS");
    idset_destroy (a);
    idset_destroy (b);
    idset_destroy (c);
}

struct codec {
    const char *in;
    size_t count;
    const char *list;  /* flags 0 */
    const char *range; /* IDSET_FLAG_RANGE */
    const char *both;  /* IDSET_FLAG_RANGE | IDSET_FLAG_BRACKETS */
};

static const struct codec good[] = {
    {"", 0, "", "", ""},
    {"[]", 0, "", "", ""},
    {"0", 1, "0", "0", "0"},
    {"1", 1, "1", "1", "1"},
    {"[7]", 1, "7", "7", "7"},
    {"1-5", 5, "1,2,3,4,5", "1-5", "[1-5]"},
    {"1,3,5-7", 5, "1,3,5,6,7", "1,3,5-7", "[1,3,5-7]"},
    {"[1-3,5]", 4, "1,2,3,5", "1-3,5", "[1-3,5]"},
    {"0,1", 2, "0,1", "0-1", "[0-1]"},
    {"1,2,3", 3, "1,2,3", "1-3", "[1-3]"},
    {"1-3,4-5", 5, "1,2,3,4,5", "1-5", "[1-5]"},
    {"1-3,4,6-7,8", 7, "1,2,3,4,6,7,8", "1-4,6-8", "[1-4,6-8]"},
    {"10,20,30", 3, "10,20,30", "10,20,30", "[10,20,30]"},
    {"4294967294", 1, "4294967294", "4294967294", "4294967294"},
    {"4294967293-4294967294", 2, "4294967293,4294967294",
     "4294967293-4294967294", "[4294967293-4294967294]"},
};

static void test_decode_good (void)
{
    for (size_t i = 0; i < sizeof (good) / sizeof (good[0]); i++) {
        const struct codec *t = &good[i];
        struct idset *set = idset_decode (t->in);
        struct idset *again;
        char *s;

        ok (set != NULL, "decode \"%s\" works", t->in);
        if (!set)
            continue;
        cmp_ok (idset_count (set), "==", t->count, "\"%s\" has %zu ids", t->in,
                t->count);
        ok (enc_is (set, 0, t->list), "\"%s\" encodes as \"%s\"", t->in,
            t->list);
        ok (enc_is (set, IDSET_FLAG_RANGE, t->range),
            "\"%s\" encodes with RANGE as \"%s\"", t->in, t->range);
        ok (enc_is (set, IDSET_FLAG_RANGE | IDSET_FLAG_BRACKETS, t->both),
            "\"%s\" encodes with RANGE|BRACKETS as \"%s\"", t->in, t->both);
        s = idset_encode (set, IDSET_FLAG_RANGE | IDSET_FLAG_BRACKETS);
        again = s ? idset_decode (s) : NULL;
        ok (again && idset_equal (set, again),
            "\"%s\" survives an encode/decode round trip", t->in);
        free (s);
        idset_destroy (again);
        idset_destroy (set);
    }
}

static const char *bad[] = {
    " ",
    " 1",
    "1 ",
    "1, 2",
    "1 ,2",
    "1\t",
    "\n",
    "-1",
    "-",
    "1--2",
    "1-",
    "-5",
    "5-1",
    "1-1",
    "3,1",
    "1,1",
    "1-3,2",
    "1-3,3",
    "2-4,1-5",
    "1,",
    ",1",
    ",",
    "1,,2",
    "[1,]",
    "[,1]",
    "01",
    "00",
    "1-02",
    "007",
    "a",
    "1a",
    "0x10",
    "+1",
    "1.5",
    "1e3",
    "[",
    "]",
    "[1",
    "1]",
    "[[1]]",
    "[1-3]]",
    "[[1-3]",
    "[1,[2]]",
    "[ ]",
    "[,]",
    "1[2]",
    "4294967295",
    "4294967296",
    "0-4294967295",
    "99999999999999999999",
    "18446744073709551617",
};

/* Show control characters in test descriptions so TAP lines stay whole.
 */
static const char *visible (const char *s)
{
    static char buf[128];
    size_t len = 0;

    for (; *s && len < sizeof (buf) - 5; s++) {
        if (*s == '\n' || *s == '\t')
            len += snprintf (buf + len, sizeof (buf) - len, "\\%c",
                             *s == '\n' ? 'n' : 't');
        else
            buf[len++] = *s;
    }
    buf[len] = '\0';
    return buf;
}

static void test_decode_bad (void)
{
    idset_error_t error;
    struct idset *set;

    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        memset (&error, 0, sizeof (error));
        errno = 0;
        set = idset_decode_ex (bad[i], -1, 0, 0, &error);
        ok (set == NULL && errno == EINVAL && strlen (error.text) > 0,
            "decode \"%s\" fails with EINVAL: %s", visible (bad[i]),
            error.text);
        idset_destroy (set);
        errno = 0;
        ok (idset_decode (bad[i]) == NULL && errno == EINVAL,
            "idset_decode (\"%s\") fails with EINVAL", visible (bad[i]));
    }
    errno = 0;
    ok (idset_decode (NULL) == NULL && errno == EINVAL,
        "idset_decode (NULL) fails with EINVAL");
    errno = 0;
    ok (idset_decode_ex (NULL, -1, 0, 0, NULL) == NULL && errno == EINVAL,
        "idset_decode_ex (NULL) fails with EINVAL, NULL error is ok");
    ok (idset_decode_ex ("1\0"
                         "2",
                         3, 0, 0, &error)
                == NULL
            && errno == EINVAL,
        "an embedded NUL within len is rejected: %s", error.text);
}

static void test_decode_ex (void)
{
    idset_error_t error;
    struct idset *set;
    const char buf[3] = {'1', '-', '5'}; /* not NUL-terminated */

    set = idset_decode_ex ("1-3,garbage", 3, 0, 0, &error);
    ok (set && enc_is (set, IDSET_FLAG_RANGE, "1-3"),
        "decode_ex stops after len characters");
    idset_destroy (set);
    set = idset_decode_ex ("1-3,garbage", 4, 0, 0, &error);
    ok (set == NULL && errno == EINVAL,
        "decode_ex of \"1-3,\" (trailing comma) fails: %s", error.text);
    set = idset_decode_ex ("1-3", 0, 0, 0, &error);
    ok (set && idset_empty (set), "decode_ex with len 0 is the empty set");
    idset_destroy (set);
    set = idset_decode_ex (buf, sizeof (buf), 0, 0, &error);
    ok (set && idset_count (set) == 5,
        "decode_ex of an unterminated buffer works");
    idset_destroy (set);
    set = idset_decode_ex ("[1-5]", 4, 0, 0, &error);
    ok (set == NULL && errno == EINVAL,
        "decode_ex of \"[1-5\" (cut by len) fails: %s", error.text);

    set = idset_decode_ex ("1-5", -1, -1, 0, &error);
    ok (set && idset_universe_size (set) == 6,
        "decode_ex with size -1 fits the universe to the ids");
    idset_destroy (set);
    set = idset_decode_ex ("", -1, -1, 0, &error);
    ok (set && idset_universe_size (set) == 0 && idset_empty (set),
        "decode_ex of \"\" with size -1 gives an empty set");
    idset_destroy (set);
    set = idset_decode_ex ("1-5", -1, 64, IDSET_FLAG_AUTOGROW, &error);
    ok (set && idset_universe_size (set) == 64,
        "decode_ex with size 64 sets the universe size");
    idset_destroy (set);
    set = idset_decode_ex ("1-500", -1, 64, 0, &error);
    ok (set && idset_universe_size (set) == 501 && idset_count (set) == 500,
        "decode_ex grows the universe past the size hint");
    idset_destroy (set);
    errno = 0;
    error.text[0] = '\0';
    set = idset_decode_ex ("1", -1, 0, IDSET_FLAG_BRACKETS, &error);
    ok (set == NULL && errno == EINVAL && strlen (error.text) > 0,
        "decode_ex with an invalid flag fails: %s", error.text);
}

static void test_set_clear (void)
{
    struct idset *set = idset_create (0, 0);

    if (!set)
        BAIL_OUT ("idset_create failed");
    ok (idset_set (set, 1) == 0 && idset_set (set, 3) == 0, "set 1 and 3");
    ok (enc_is (set, IDSET_FLAG_RANGE, "1,3"), "set is 1,3");
    ok (idset_set (set, 2) == 0 && enc_is (set, IDSET_FLAG_RANGE, "1-3"),
        "set 2 merges into 1-3");
    ok (idset_set (set, 2) == 0 && idset_count (set) == 3,
        "setting a member again is a no-op");
    ok (idset_clear (set, 2) == 0 && enc_is (set, IDSET_FLAG_RANGE, "1,3"),
        "clear 2 splits 1-3");
    ok (idset_clear (set, 2) == 0 && idset_count (set) == 2,
        "clearing a non-member is a no-op");
    ok (idset_clear (set, 1000) == 0 && idset_count (set) == 2,
        "clearing beyond the last id is a no-op");
    ok (idset_range_set (set, 10, 20) == 0
            && enc_is (set, IDSET_FLAG_RANGE, "1,3,10-20"),
        "range_set 10-20");
    ok (idset_range_set (set, 9, 4) == 0
            && enc_is (set, IDSET_FLAG_RANGE, "1,3-20"),
        "range_set 9,4 (reversed) merges with both neighbours");
    cmp_ok (idset_count (set), "==", 19, "count is 19");
    ok (idset_range_clear (set, 5, 7) == 0
            && enc_is (set, IDSET_FLAG_RANGE, "1,3-4,8-20"),
        "range_clear 5-7 splits a range");
    ok (idset_range_set (set, 30, 40) == 0 && idset_range_set (set, 50, 60) == 0
            && idset_range_set (set, 25, 65) == 0
            && enc_is (set, IDSET_FLAG_RANGE, "1,3-4,8-20,25-65"),
        "range_set 25-65 swallows two ranges");
    ok (idset_range_clear (set, 2, 30) == 0
            && enc_is (set, IDSET_FLAG_RANGE, "1,31-65"),
        "range_clear 2-30 removes and trims ranges");
    ok (idset_range_clear (set, 66, 0) == 0 && idset_empty (set),
        "range_clear 66,0 (reversed) empties the set");
    ok (idset_range_set (set, 5, 5) == 0 && idset_count (set) == 1,
        "range_set of a single id works");
    idset_destroy (set);
}

static void test_set_clear_errors (void)
{
    struct idset *set = mkset ("5");

    errno = 0;
    ok (idset_set (set, IDSET_INVALID_ID) < 0 && errno == EINVAL,
        "set IDSET_INVALID_ID fails with EINVAL");
    errno = 0;
    ok (idset_clear (set, IDSET_INVALID_ID) < 0 && errno == EINVAL,
        "clear IDSET_INVALID_ID fails with EINVAL");
    errno = 0;
    ok (idset_range_set (set, 0, IDSET_INVALID_ID) < 0 && errno == EINVAL,
        "range_set up to IDSET_INVALID_ID fails with EINVAL");
    errno = 0;
    ok (idset_range_clear (set, IDSET_INVALID_ID, 1) < 0 && errno == EINVAL,
        "range_clear from IDSET_INVALID_ID fails with EINVAL");
    ok (enc_is (set, IDSET_FLAG_RANGE, "5"), "failed calls left the set alone");
    idset_destroy (set);
}

static void test_set_clear_limits (void)
{
    struct idset *set = mkset ("5");

    errno = 0;
    ok (idset_set (NULL, 1) < 0 && errno == EINVAL, "set on NULL: EINVAL");
    errno = 0;
    ok (idset_clear (NULL, 1) < 0 && errno == EINVAL, "clear on NULL: EINVAL");
    errno = 0;
    ok (idset_range_set (NULL, 1, 2) < 0 && errno == EINVAL,
        "range_set on NULL: EINVAL");
    errno = 0;
    ok (idset_range_clear (NULL, 1, 2) < 0 && errno == EINVAL,
        "range_clear on NULL: EINVAL");
    ok (!idset_test (NULL, 1), "test on NULL is false");
    ok (!idset_test (set, IDSET_INVALID_ID), "test IDSET_INVALID_ID is false");
    ok (idset_count (NULL) == 0 && idset_empty (NULL),
        "NULL set counts 0 and is empty");
    errno = 0;
    ok (idset_encode (NULL, 0) == NULL && errno == EINVAL,
        "encode NULL: EINVAL");
    errno = 0;
    ok (idset_encode (set, IDSET_FLAG_AUTOGROW) == NULL && errno == EINVAL,
        "encode with a non-encode flag: EINVAL");

    /* the top of the id space */
    ok (idset_set (set, MAX_ID) == 0 && idset_test (set, MAX_ID),
        "set UINT_MAX - 1 works");
    cmp_ok (idset_last (set), "==", MAX_ID, "last is UINT_MAX - 1");
    cmp_ok (idset_next (set, MAX_ID - 1), "==", MAX_ID,
            "next (UINT_MAX - 2) is UINT_MAX - 1");
    cmp_ok (idset_next (set, MAX_ID), "==", IDSET_INVALID_ID,
            "next (UINT_MAX - 1) is IDSET_INVALID_ID");
    cmp_ok (idset_universe_size (set), "==", (size_t)UINT_MAX,
            "universe is UINT_MAX");
    ok (idset_range_set (set, 0, MAX_ID) == 0
            && idset_count (set) == (size_t)UINT_MAX,
        "range 0-4294967294 holds UINT_MAX ids");
    ok (enc_is (set, IDSET_FLAG_RANGE, "0-4294967294"), "and encodes so");
    ok (idset_clear (set, 0) == 0 && idset_clear (set, MAX_ID) == 0
            && idset_count (set) == (size_t)UINT_MAX - 2
            && idset_first (set) == 1 && idset_last (set) == MAX_ID - 1,
        "clearing both ends of the full range works");
    idset_destroy (set);
}

static void test_iteration (void)
{
    struct idset *set = mkset ("0,2-4,10,4294967290-4294967294");
    const unsigned int fwd[]
        = {0,          2,          3,          4,          10,
           4294967290, 4294967291, 4294967292, 4294967293, 4294967294};
    size_t n = sizeof (fwd) / sizeof (fwd[0]);
    unsigned int id;
    size_t i;
    bool match;

    i = 0;
    match = true;
    for (id = idset_first (set); id != IDSET_INVALID_ID;
         id = idset_next (set, id)) {
        if (i >= n || fwd[i] != id)
            match = false;
        i++;
    }
    ok (match && i == n, "forward iteration visits every id in order");
    i = n;
    match = true;
    for (id = idset_last (set); id != IDSET_INVALID_ID;
         id = idset_prev (set, id)) {
        if (i == 0 || fwd[i - 1] != id)
            match = false;
        i--;
    }
    ok (match && i == 0, "backward iteration visits every id in order");

    cmp_ok (idset_next (set, 4), "==", 10, "next (4) skips the gap to 10");
    cmp_ok (idset_next (set, 6), "==", 10, "next of a non-member (6) is 10");
    cmp_ok (idset_next (set, 2), "==", 3, "next within a range");
    cmp_ok (idset_prev (set, 10), "==", 4, "prev (10) is 4");
    cmp_ok (idset_prev (set, 7), "==", 4, "prev of a non-member (7) is 4");
    cmp_ok (idset_prev (set, 1), "==", 0, "prev (1) is 0");
    cmp_ok (idset_prev (set, 0), "==", IDSET_INVALID_ID,
            "prev (0) is IDSET_INVALID_ID");
    cmp_ok (idset_prev (set, IDSET_INVALID_ID), "==", MAX_ID,
            "prev (IDSET_INVALID_ID) is the last id");
    cmp_ok (idset_next (set, IDSET_INVALID_ID), "==", IDSET_INVALID_ID,
            "next (IDSET_INVALID_ID) is IDSET_INVALID_ID");
    cmp_ok (idset_next (set, 1000), "==", 4294967290u, "next (1000)");
    cmp_ok (idset_first (NULL), "==", IDSET_INVALID_ID, "first (NULL)");
    cmp_ok (idset_last (NULL), "==", IDSET_INVALID_ID, "last (NULL)");
    cmp_ok (idset_next (NULL, 1), "==", IDSET_INVALID_ID, "next (NULL)");
    cmp_ok (idset_prev (NULL, 1), "==", IDSET_INVALID_ID, "prev (NULL)");

    /* clearing the current id while iterating is allowed */
    for (id = idset_first (set); id != IDSET_INVALID_ID;
         id = idset_next (set, id)) {
        if (id % 2 == 0 && idset_clear (set, id) < 0)
            break;
    }
    ok (enc_is (set, IDSET_FLAG_RANGE, "3,4294967291,4294967293"),
        "clearing the current id during iteration works");
    idset_destroy (set);
}

struct algebra {
    const char *a;
    const char *b;
    const char *a_or_b;
    const char *a_minus_b;
    const char *a_and_b;
};

static const struct algebra algebra[] = {
    {"", "", "", "", ""},
    {"1-5", "", "1-5", "1-5", ""},
    {"", "1-5", "1-5", "", ""},
    {"1-5", "1-5", "1-5", "", "1-5"},
    {"1-5", "3-8", "1-8", "1-2", "3-5"},
    {"1-5", "6-8", "1-8", "1-5", ""},
    {"1-10", "3,5,7", "1-10", "1-2,4,6,8-10", "3,5,7"},
    {"3,5,7", "1-10", "1-10", "", "3,5,7"},
    {"0-3,10-13,20-23", "2-11,22", "0-13,20-23", "0-1,12-13,20-21,23",
     "2-3,10-11,22"},
    {"0,2,4,6,8", "1,3,5,7,9", "0-9", "0,2,4,6,8", ""},
    {"0-4294967294", "1-4294967293", "0-4294967294", "0,4294967294",
     "1-4294967293"},
};

static void test_algebra (void)
{
    for (size_t i = 0; i < sizeof (algebra) / sizeof (algebra[0]); i++) {
        const struct algebra *t = &algebra[i];
        struct idset *a = mkset (t->a);
        struct idset *b = mkset (t->b);
        struct idset *r;
        bool intersects = strlen (t->a_and_b) > 0;

        r = idset_union (a, b);
        ok (r && enc_is (r, IDSET_FLAG_RANGE, t->a_or_b), "union (%s, %s) = %s",
            t->a, t->b, t->a_or_b);
        idset_destroy (r);
        r = idset_difference (a, b);
        ok (r && enc_is (r, IDSET_FLAG_RANGE, t->a_minus_b),
            "difference (%s, %s) = %s", t->a, t->b, t->a_minus_b);
        idset_destroy (r);
        r = idset_intersect (a, b);
        ok (r && enc_is (r, IDSET_FLAG_RANGE, t->a_and_b),
            "intersect (%s, %s) = %s", t->a, t->b, t->a_and_b);
        idset_destroy (r);
        r = idset_intersect (b, a);
        ok (r && enc_is (r, IDSET_FLAG_RANGE, t->a_and_b),
            "intersect (%s, %s) = %s", t->b, t->a, t->a_and_b);
        idset_destroy (r);
        ok (idset_has_intersection (a, b) == intersects
                && idset_has_intersection (b, a) == intersects,
            "has_intersection (%s, %s) is %s", t->a, t->b,
            intersects ? "true" : "false");
        ok (idset_is_subset (a, b) == (strlen (t->a_minus_b) == 0),
            "is_subset (%s, %s) is %s", t->a, t->b,
            strlen (t->a_minus_b) == 0 ? "true" : "false");

        r = idset_copy (a);
        ok (r && idset_add (r, b) == 0
                && enc_is (r, IDSET_FLAG_RANGE, t->a_or_b),
            "add: %s += %s gives %s", t->a, t->b, t->a_or_b);
        idset_destroy (r);
        r = idset_copy (a);
        ok (r && idset_subtract (r, b) == 0
                && enc_is (r, IDSET_FLAG_RANGE, t->a_minus_b),
            "subtract: %s -= %s gives %s", t->a, t->b, t->a_minus_b);
        idset_destroy (r);
        ok (enc_is (a, IDSET_FLAG_RANGE, t->a)
                && enc_is (b, IDSET_FLAG_RANGE, t->b),
            "operands are unchanged");
        idset_destroy (a);
        idset_destroy (b);
    }
}

static void test_algebra_edges (void)
{
    struct idset *a = mkset ("1-5,9");
    struct idset *b = mkset ("1-5,9");
    struct idset *c = mkset ("1-5,8");
    struct idset *r;

    ok (idset_equal (a, b), "equal sets are equal");
    ok (!idset_equal (a, c), "sets with the same count differ");
    ok (!idset_equal (a, NULL) && !idset_equal (NULL, a)
            && !idset_equal (NULL, NULL),
        "equal with NULL is false");
    idset_set (b, 6);
    ok (!idset_equal (a, b), "sets of different counts differ");
    idset_clear (b, 6);
    idset_range_set (b, 100, 200);
    idset_range_clear (b, 100, 200);
    ok (idset_equal (a, b), "equality ignores universe size");

    ok (idset_add (a, a) == 0 && enc_is (a, IDSET_FLAG_RANGE, "1-5,9"),
        "add (a, a) leaves a alone");
    ok (idset_add (a, NULL) == 0 && enc_is (a, IDSET_FLAG_RANGE, "1-5,9"),
        "add (a, NULL) leaves a alone");
    ok (idset_subtract (a, NULL) == 0 && enc_is (a, IDSET_FLAG_RANGE, "1-5,9"),
        "subtract (a, NULL) leaves a alone");
    r = idset_union (a, NULL);
    ok (r && idset_equal (r, a), "union (a, NULL) is a copy of a");
    idset_destroy (r);
    r = idset_difference (a, NULL);
    ok (r && idset_equal (r, a), "difference (a, NULL) is a copy of a");
    idset_destroy (r);
    ok (idset_subtract (b, b) == 0 && idset_empty (b)
            && idset_first (b) == IDSET_INVALID_ID,
        "subtract (b, b) empties b");
    ok (idset_set (b, 3) == 0 && enc_is (b, IDSET_FLAG_RANGE, "3"),
        "an emptied set is usable");

    errno = 0;
    ok (idset_add (NULL, a) < 0 && errno == EINVAL, "add (NULL, a): EINVAL");
    errno = 0;
    ok (idset_subtract (NULL, a) < 0 && errno == EINVAL,
        "subtract (NULL, a): EINVAL");
    errno = 0;
    ok (idset_union (NULL, a) == NULL && errno == EINVAL,
        "union (NULL, a): EINVAL");
    errno = 0;
    ok (idset_difference (NULL, a) == NULL && errno == EINVAL,
        "difference (NULL, a): EINVAL");
    errno = 0;
    ok (idset_intersect (a, NULL) == NULL && errno == EINVAL,
        "intersect (a, NULL): EINVAL");
    ok (!idset_has_intersection (a, NULL), "has_intersection (a, NULL) false");

    /* copies are independent */
    r = idset_copy (a);
    ok (r && idset_equal (r, a), "copy is equal");
    cmp_ok (idset_universe_size (r), "==", idset_universe_size (a),
            "copy has the same universe size");
    idset_set (r, 50);
    ok (!idset_test (a, 50) && idset_test (r, 50),
        "modifying a copy does not touch the original");
    idset_destroy (r);
    errno = 0;
    ok (idset_copy (NULL) == NULL && errno == EINVAL, "copy (NULL): EINVAL");

    idset_destroy (a);
    idset_destroy (b);
    idset_destroy (c);
}

static void test_pool (void)
{
    struct idset *pool = idset_create (0, 0);
    unsigned int id;
    bool match = true;

    if (!pool)
        BAIL_OUT ("idset_create failed");
    for (unsigned int i = 0; i < 10; i++) {
        if (idset_alloc (pool, &id) < 0 || id != i)
            match = false;
    }
    ok (match && idset_count (pool) == 10, "alloc hands out 0..9 in order");
    ok (idset_free (pool, 3) == 0 && idset_free (pool, 7) == 0, "free 3 and 7");
    ok (idset_alloc (pool, &id) == 0 && id == 3, "alloc reuses 3 first");
    ok (idset_alloc (pool, &id) == 0 && id == 7, "then 7");
    ok (idset_alloc (pool, &id) == 0 && id == 10, "then 10");
    errno = 0;
    ok (idset_free (pool, 42) < 0 && errno == ENOENT,
        "freeing an id not in use fails with ENOENT");
    ok (idset_free (pool, 5) == 0, "free 5");
    errno = 0;
    ok (idset_free (pool, 5) < 0 && errno == ENOENT,
        "double free fails with ENOENT");
    errno = 0;
    ok (idset_free (pool, IDSET_INVALID_ID) < 0 && errno == EINVAL,
        "free IDSET_INVALID_ID: EINVAL");
    errno = 0;
    ok (idset_free (NULL, 1) < 0 && errno == EINVAL, "free on NULL: EINVAL");
    errno = 0;
    ok (idset_alloc (NULL, &id) < 0 && errno == EINVAL,
        "alloc on NULL: EINVAL");
    errno = 0;
    ok (idset_alloc (pool, NULL) < 0 && errno == EINVAL,
        "alloc with NULL id: EINVAL");

    idset_range_set (pool, 0, MAX_ID);
    errno = 0;
    ok (idset_alloc (pool, &id) < 0 && errno == ENOSPC,
        "alloc from an exhausted pool fails with ENOSPC");
    ok (idset_free (pool, MAX_ID) == 0 && idset_alloc (pool, &id) == 0
            && id == MAX_ID,
        "alloc returns the only free id, UINT_MAX - 1");
    ok (idset_free (pool, 0) == 0 && idset_alloc (pool, &id) == 0 && id == 0,
        "alloc returns the only free id, 0");
    idset_destroy (pool);
}

/* A million ids, in random order.
 */
static void test_large (void)
{
    const unsigned int n = 1000000;
    unsigned int *order = malloc (n * sizeof (*order));
    struct idset *set = idset_create (0, 0);
    unsigned int id, expect;
    bool match;
    int errors;

    if (!order || !set)
        BAIL_OUT ("out of memory");
    for (unsigned int i = 0; i < n; i++)
        order[i] = i;
    for (unsigned int i = n - 1; i > 0; i--) {
        unsigned int j = rnd () % (i + 1);
        unsigned int tmp = order[i];
        order[i] = order[j];
        order[j] = tmp;
    }
    errors = 0;
    for (unsigned int i = 0; i < n; i++)
        if (idset_set (set, order[i]) < 0)
            errors++;
    ok (errors == 0, "set 1,000,000 ids in random order");
    cmp_ok (idset_count (set), "==", n, "count is 1,000,000");
    ok (enc_is (set, IDSET_FLAG_RANGE, "0-999999"),
        "they merged into the single range 0-999999");
    match = true;
    expect = 0;
    for (id = idset_first (set); id != IDSET_INVALID_ID;
         id = idset_next (set, id))
        if (id != expect++)
            match = false;
    ok (match && expect == n, "forward iteration visits all of them");

    /* clear the even ids in random order: 500,000 ranges */
    errors = 0;
    for (unsigned int i = 0; i < n; i++)
        if (order[i] % 2 == 0 && idset_clear (set, order[i]) < 0)
            errors++;
    ok (errors == 0, "cleared the even ids in random order");
    cmp_ok (idset_count (set), "==", n / 2, "count is 500,000");
    match = true;
    expect = n - 1;
    for (id = idset_last (set); id != IDSET_INVALID_ID;
         id = idset_prev (set, id)) {
        if (id != expect)
            match = false;
        expect -= 2;
    }
    ok (match && expect == UINT_MAX, "backward iteration visits the odd ids");
    match = true;
    for (unsigned int i = 0; i < n; i++)
        if (idset_test (set, order[i]) != (order[i] % 2 == 1))
            match = false;
    ok (match, "test agrees for every id");

    struct idset *evens = idset_create (0, 0);
    for (unsigned int i = 0; i < n; i += 2)
        idset_set (evens, i);
    struct idset *all = idset_union (set, evens);
    ok (all && enc_is (all, IDSET_FLAG_RANGE, "0-999999"),
        "union of 500,000 odd and 500,000 even ids is one range");
    ok (!idset_has_intersection (set, evens),
        "odd and even ids do not intersect");
    ok (idset_subtract (all, set) == 0 && idset_equal (all, evens),
        "all - odd = even");
    idset_destroy (all);
    idset_destroy (evens);
    idset_destroy (set);
    free (order);
}

/* A bitmap implementation would need 256 MiB per set here.
 */
static void test_huge_ranges (void)
{
    enum { NSETS = 1000 };
    struct idset **sets = calloc (NSETS, sizeof (*sets));
    const unsigned int hi = (1u << 31) - 1;
    int errors = 0;

    if (!sets)
        BAIL_OUT ("out of memory");
    for (int i = 0; i < NSETS; i++) {
        if (!(sets[i] = idset_create (0, 0))
            || idset_range_set (sets[i], 0, hi) < 0
            || idset_count (sets[i]) != (size_t)hi + 1
            || idset_clear (sets[i], 1u << 30) < 0)
            errors++;
    }
    ok (errors == 0, "%d sets of 2^31 ids each (minus one) exist at once",
        NSETS);
    ok (enc_is (sets[0], IDSET_FLAG_RANGE,
                "0-1073741823,1073741825-2147483647"),
        "and encode compactly");
    cmp_ok (idset_count (sets[NSETS - 1]), "==", (size_t)hi,
            "count is 2^31 - 1");
    for (int i = 0; i < NSETS; i++)
        idset_destroy (sets[i]);
    free (sets);
}

/* Reference model: a byte per id in [0, N).
 */
#define N 300

static char *encode_model (const char *model)
{
    static char buf[N * 8];
    size_t len = 0;

    buf[0] = '\0';
    for (int i = 0; i < N; i++) {
        int j = i;
        if (!model[i])
            continue;
        while (j + 1 < N && model[j + 1])
            j++;
        len += snprintf (buf + len, sizeof (buf) - len, "%s%d", len ? "," : "",
                         i);
        if (j > i)
            len += snprintf (buf + len, sizeof (buf) - len, "-%d", j);
        i = j;
    }
    return buf;
}

static bool check_model (const struct idset *set, const char *model)
{
    size_t count = 0;
    unsigned int id;

    for (int i = 0; i < N; i++) {
        unsigned int next = IDSET_INVALID_ID, prev = IDSET_INVALID_ID;
        count += model[i];
        if (idset_test (set, i) != (bool)model[i])
            return false;
        for (int j = i + 1; j < N; j++)
            if (model[j]) {
                next = j;
                break;
            }
        for (int j = i - 1; j >= 0; j--)
            if (model[j]) {
                prev = j;
                break;
            }
        if (idset_next (set, i) != next || idset_prev (set, i) != prev)
            return false;
    }
    id = idset_first (set);
    if (count != idset_count (set) || (count == 0) != idset_empty (set)
        || (count > 0 && (id >= N || !model[id])))
        return false;
    return enc_is (set, IDSET_FLAG_RANGE, encode_model (model));
}

static void test_random_model (void)
{
    struct idset *set = idset_create (0, 0);
    char model[N] = {0};
    int failures = 0;

    for (int step = 0; step < 3000; step++) {
        unsigned int lo = rnd () % N;
        unsigned int hi = rnd () % 4 == 0 ? rnd () % N : lo + rnd () % 5;
        int op = rnd () % 4;
        int rc;

        if (hi >= N)
            hi = N - 1;
        if (op < 2)
            hi = lo;
        if (op % 2 == 0)
            rc = lo == hi ? idset_set (set, lo) : idset_range_set (set, lo, hi);
        else
            rc = lo == hi ? idset_clear (set, lo)
                          : idset_range_clear (set, lo, hi);
        if (lo > hi) {
            unsigned int tmp = lo;
            lo = hi;
            hi = tmp;
        }
        for (unsigned int i = lo; i <= hi; i++)
            model[i] = op % 2 == 0;
        if (rc < 0 || (step % 50 == 0 && !check_model (set, model))) {
            diag ("step %d op %d %u-%u", step, op, lo, hi);
            failures++;
            break;
        }
    }
    ok (failures == 0 && check_model (set, model),
        "3000 random set/clear operations agree with a reference model");

    /* set algebra against the model */
    struct idset *other = idset_create (0, 0);
    char omodel[N] = {0};
    char tmp[N];
    for (int i = 0; i < N; i++)
        if (rnd () % 3 == 0) {
            omodel[i] = 1;
            idset_set (other, i);
        }
    struct idset *u = idset_union (set, other);
    struct idset *d = idset_difference (set, other);
    struct idset *x = idset_intersect (set, other);
    for (int i = 0; i < N; i++)
        tmp[i] = model[i] || omodel[i];
    ok (u && check_model (u, tmp), "random union agrees with the model");
    for (int i = 0; i < N; i++)
        tmp[i] = model[i] && !omodel[i];
    ok (d && check_model (d, tmp), "random difference agrees with the model");
    for (int i = 0; i < N; i++)
        tmp[i] = model[i] && omodel[i];
    ok (x && check_model (x, tmp), "random intersect agrees with the model");
    idset_destroy (u);
    idset_destroy (d);
    idset_destroy (x);
    idset_destroy (other);
    idset_destroy (set);
}

int main (int argc, char *argv[])
{
    plan (NO_PLAN);
    test_create ();
    test_rfc22 ();
    test_decode_good ();
    test_decode_bad ();
    test_decode_ex ();
    test_set_clear ();
    test_set_clear_errors ();
    test_set_clear_limits ();
    test_iteration ();
    test_algebra ();
    test_algebra_edges ();
    test_pool ();
    test_large ();
    test_huge_ranges ();
    test_random_model ();
    done_testing ();
    return 0;
}
