/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Unit tests for blobref.c, sha1.c and sha256.c: FIPS 180 / NIST test
 * vectors, incremental hashing against one-shot, sha256 against
 * libsodium for every length around the block boundaries, and malformed
 * blobrefs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "libcontent/blobref.h"
#include "libcontent/sha1.h"
#include "libcontent/sha256.h"
#include "tap.h"

static const char abc448[]
    = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
static const char abc896[]
    = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
      "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";

struct vector {
    const char *hashtype;
    const char *input;
    const char *hex;
};

static const struct vector vectors[] = {
    {"sha1", "", "da39a3ee5e6b4b0d3255bfef95601890afd80709"},
    {"sha1", "abc", "a9993e364706816aba3e25717850c26c9cd0d89d"},
    {"sha1", abc448, "84983e441c3bd26ebaae4aa1f95129e5e54670f1"},
    {"sha1", abc896, "a49b2446a02c645bf419f995b67091253a04a259"},
    {"sha256", "",
     "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
    {"sha256", "abc",
     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
    {"sha256", abc448,
     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
    {"sha256", abc896,
     "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
};

static void test_vectors (void)
{
    char ref[BLOBREF_MAX_STRING_SIZE], exp[BLOBREF_MAX_STRING_SIZE];
    size_t i;

    for (i = 0; i < sizeof (vectors) / sizeof (vectors[0]); i++) {
        const struct vector *v = &vectors[i];
        snprintf (exp, sizeof (exp), "%s-%s", v->hashtype, v->hex);
        ok (blobref_hash (v->hashtype, v->input, strlen (v->input), ref,
                          sizeof (ref))
                    == 0
                && !strcmp (ref, exp),
            "%s of %zu bytes: %s", v->hashtype, strlen (v->input), ref);
    }
}

/* One million 'a' (FIPS 180 long message), one-shot and fed in odd
 * pieces. */
static void test_million (void)
{
    size_t n = 1000000;
    char *buf = malloc (n);
    char ref[BLOBREF_MAX_STRING_SIZE];
    uint8_t d1[20], d2[20], d3[32], d4[32];
    struct sha1_ctx c1;
    struct sha256_ctx c2;
    size_t off, chunk;

    if (!buf)
        BAIL_OUT ("out of memory");
    memset (buf, 'a', n);
    ok (blobref_hash ("sha1", buf, n, ref, sizeof (ref)) == 0
            && !strcmp (ref, "sha1-34aa973cd4c4daa4f61eeb2bdbad27316534016f"),
        "sha1 of a million 'a'");
    ok (blobref_hash ("sha256", buf, n, ref, sizeof (ref)) == 0
            && !strcmp (ref, "sha256-cdc76e5c9914fb9281a1c7e284d73e67f1809a48"
                             "a497200e046d39ccc7112cd0"),
        "sha256 of a million 'a'");

    sha1_init (&c1);
    sha256_init (&c2);
    for (off = 0, chunk = 1; off < n; off += chunk, chunk = chunk % 131 + 7) {
        size_t len = off + chunk > n ? n - off : chunk;
        sha1_update (&c1, buf + off, len);
        sha256_update (&c2, buf + off, len);
    }
    sha1_final (&c1, d1);
    sha256_final (&c2, d3);
    blobref_hash_raw ("sha1", buf, n, d2, sizeof (d2));
    blobref_hash_raw ("sha256", buf, n, d4, sizeof (d4));
    cmp_mem (d1, d2, 20, "sha1 fed in pieces equals one-shot");
    cmp_mem (d3, d4, 32, "sha256 fed in pieces equals one-shot");
    free (buf);
}

/* Lengths 0..300 cover every padding case (one or two final blocks). */
static void test_sodium (void)
{
    uint8_t buf[300], mine[32], theirs[32];
    size_t len;
    int bad = 0;

    for (len = 0; len < sizeof (buf); len++)
        buf[len] = (uint8_t)(len * 7 + 3);
    for (len = 0; len <= sizeof (buf); len++) {
        blobref_hash_raw ("sha256", buf, len, mine, sizeof (mine));
        crypto_hash_sha256 (theirs, buf, len);
        if (memcmp (mine, theirs, 32) != 0) {
            diag ("sha256 differs from libsodium at length %zu", len);
            bad++;
        }
    }
    ok (bad == 0, "sha256 equals libsodium's for lengths 0..300");
}

/* The portable SHA-1 and the one on the CPU's SHA instructions agree on
 * every length through three blocks and on a large pseudo-random buffer
 * fed in odd pieces; the FIPS vectors hold for the portable one too. */
static void test_sha1_paths (void)
{
    size_t n = 100003, len, off, chunk;
    uint8_t *buf = malloc (n), d1[20], d2[20];
    uint32_t x = 12345;
    struct sha1_ctx c;
    int bad = 0;

    if (!buf)
        BAIL_OUT ("out of memory");
    for (len = 0; len < n; len++) {
        x = x * 1103515245 + 12345;
        buf[len] = (uint8_t)(x >> 16);
    }
    sha1_use_accel (false);
    test_vectors ();
    if (!sha1_accel_available ()) {
        skip (2, "this CPU has no SHA instructions");
        sha1_use_accel (true);
        free (buf);
        return;
    }
    for (len = 0; len <= 200; len++) {
        sha1_use_accel (false);
        blobref_hash_raw ("sha1", buf, len, d1, sizeof (d1));
        sha1_use_accel (true);
        blobref_hash_raw ("sha1", buf, len, d2, sizeof (d2));
        if (memcmp (d1, d2, 20) != 0) {
            diag ("sha1 paths differ at length %zu", len);
            bad++;
        }
    }
    ok (bad == 0, "sha1: portable and SHA-instruction paths agree, 0..200");
    sha1_use_accel (false);
    blobref_hash_raw ("sha1", buf, n, d1, sizeof (d1));
    sha1_use_accel (true);
    sha1_init (&c);
    for (off = 0, chunk = 1; off < n; off += chunk, chunk = chunk % 997 + 13)
        sha1_update (&c, buf + off, off + chunk > n ? n - off : chunk);
    sha1_final (&c, d2);
    cmp_mem (d1, d2, 20, "sha1 of 100003 bytes: both paths agree");
    free (buf);
}

static void test_sha1_boundaries (void)
{
    /* sha1 of 55, 56, 63, 64 and 65 bytes of 'a' (sha1sum) */
    static const struct {
        size_t len;
        const char *hex;
    } t[] = {
        {55, "c1c8bbdc22796e28c0e15163d20899b65621d65a"},
        {56, "c2db330f6083854c99d4b5bfb6e8f29f201be699"},
        {63, "03f09f5b158a7a8cdad920bddc29b81c18a551f5"},
        {64, "0098ba824b5c16427bd7a1122a5a442a25ec644d"},
        {65, "11655326c708d70319be2610e8a57d9a5b959d3b"},
    };
    char buf[65], ref[BLOBREF_MAX_STRING_SIZE], exp[BLOBREF_MAX_STRING_SIZE];
    size_t i;

    memset (buf, 'a', sizeof (buf));
    for (i = 0; i < sizeof (t) / sizeof (t[0]); i++) {
        snprintf (exp, sizeof (exp), "sha1-%s", t[i].hex);
        ok (blobref_hash ("sha1", buf, t[i].len, ref, sizeof (ref)) == 0
                && !strcmp (ref, exp),
            "sha1 of %zu 'a': %s", t[i].len, ref);
    }
}

static void test_emptydir (void)
{
    const char *s = "{\"data\":{},\"type\":\"dir\",\"ver\":1}";
    char ref[BLOBREF_MAX_STRING_SIZE];

    ok (blobref_hash ("sha1", s, strlen (s), ref, sizeof (ref)) == 0, "hash "
                                                                      "the "
                                                                      "empty "
                                                                      "dir");
    is (ref, "sha1-c0a9faf907dda6216fd73bf81d0b3b21a1a8cb91",
        "the empty dir treeobj has the blobref flux-core gives it");
}

static void test_conversions (void)
{
    const char *ref1 = "sha1-f1d2d2f924e986ac86fdf7b36c94bcdf32beec15";
    const char *ref256
        = "sha256-"
          "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    uint8_t hash[BLOBREF_MAX_DIGEST_SIZE];
    char ref[BLOBREF_MAX_STRING_SIZE], type[16];

    cmp_ok (blobref_hashtype_size ("sha1"), "==", 20, "sha1 digest: 20 bytes");
    cmp_ok (blobref_hashtype_size ("sha256"), "==", 32, "sha256 digest: 32");
    errno = 0;
    ok (blobref_hashtype_size ("md5") < 0 && errno == EINVAL,
        "unknown hash type: EINVAL");
    errno = 0;
    ok (blobref_hashtype_size (NULL) < 0 && errno == EINVAL, "NULL: EINVAL");

    cmp_ok (blobref_strtohash (ref1, hash, sizeof (hash)), "==", 20,
            "strtohash sha1 returns 20");
    ok (hash[0] == 0xf1 && hash[19] == 0x15, "digest bytes decoded");
    ok (blobref_hashtostr ("sha1", hash, 20, ref, sizeof (ref)) == 0
            && !strcmp (ref, ref1),
        "hashtostr gives the blobref back");
    cmp_ok (blobref_strtohash (ref256, hash, sizeof (hash)), "==", 32,
            "strtohash sha256 returns 32");
    ok (blobref_hashtostr ("sha256", hash, 32, ref, sizeof (ref)) == 0
            && !strcmp (ref, ref256),
        "sha256 round trip");
    ok (blobref_hashtype (ref256, type, sizeof (type)) == 0
            && !strcmp (type, "sha256"),
        "hashtype of a sha256 blobref");

    errno = 0;
    ok (blobref_hashtostr ("sha1", hash, 32, ref, sizeof (ref)) < 0
            && errno == EINVAL,
        "hashtostr with the wrong digest size: EINVAL");
    errno = 0;
    ok (blobref_hashtostr ("sha1", hash, 20, ref, 45) < 0 && errno == EOVERFLOW,
        "hashtostr into a short buffer: EOVERFLOW");
    ok (blobref_hashtostr ("sha1", hash, 20, ref, 46) == 0,
        "hashtostr into a buffer just large enough");
    errno = 0;
    ok (blobref_strtohash (ref256, hash, 20) < 0 && errno == EOVERFLOW,
        "strtohash into a short digest buffer: EOVERFLOW");
    errno = 0;
    ok (blobref_hash_raw ("sha256", "x", 1, hash, 31) < 0 && errno == EOVERFLOW,
        "hash_raw into a short buffer: EOVERFLOW");
    errno = 0;
    ok (blobref_hash ("nope", "x", 1, ref, sizeof (ref)) < 0 && errno == EINVAL,
        "hash with an unknown type: EINVAL");
    ok (blobref_hash ("sha1", NULL, 0, ref, sizeof (ref)) == 0
            && !strcmp (ref, "sha1-da39a3ee5e6b4b0d3255bfef95601890afd80709"),
        "hash of NULL, 0 is the empty blob");
    errno = 0;
    ok (blobref_hash ("sha1", NULL, 1, ref, sizeof (ref)) < 0
            && errno == EINVAL,
        "hash of NULL, 1: EINVAL");
}

static void test_malformed (void)
{
    static const char *bad[] = {
        "",
        "sha1",
        "sha1-",
        "sha1f1d2d2f924e986ac86fdf7b36c94bcdf32beec15",   /* no dash */
        "sha1-f1d2d2f924e986ac86fdf7b36c94bcdf32beec1",   /* short */
        "sha1-f1d2d2f924e986ac86fdf7b36c94bcdf32beec155", /* long */
        "sha1-F1D2D2F924E986AC86FDF7B36C94BCDF32BEEC15",  /* upper case */
        "sha1-f1d2d2f924e986ac86fdf7b36c94bcdf32beec1g",  /* non-hex */
        "sha1-f1d2d2f924e986ac86fdf7b36c94bcdf32beec1 ",
        "md5-f1d2d2f924e986ac86fdf7b36c94bcdf", /* unknown type */
        "SHA1-f1d2d2f924e986ac86fdf7b36c94bcdf32beec15",
        "sha256-f1d2d2f924e986ac86fdf7b36c94bcdf32beec15", /* 20 bytes */
        "-f1d2d2f924e986ac86fdf7b36c94bcdf32beec15",
        "sha1--1d2d2f924e986ac86fdf7b36c94bcdf32beec15",
        "sha1-f1d2d2f924e986ac86fdf7b36c94bcdf32beec15-",
        " sha1-f1d2d2f924e986ac86fdf7b36c94bcdf32beec15",
    };
    uint8_t hash[BLOBREF_MAX_DIGEST_SIZE];
    size_t i;

    for (i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        int rc1, rc2, e1, e2;
        errno = 0;
        rc1 = blobref_validate (bad[i]);
        e1 = errno;
        errno = 0;
        rc2 = blobref_strtohash (bad[i], hash, sizeof (hash));
        e2 = errno;
        ok (rc1 < 0 && e1 == EINVAL && rc2 < 0 && e2 == EINVAL,
            "malformed blobref \"%s\" is rejected", bad[i]);
    }
    errno = 0;
    ok (blobref_validate (NULL) < 0 && errno == EINVAL, "NULL is rejected");
    ok (blobref_validate ("sha1-f1d2d2f924e986ac86fdf7b36c94bcdf32beec15") == 0,
        "a well-formed sha1 blobref validates");
    {
        char s[100] = "sha1-f1d2d2f924e986ac86fdf7b36c94bcdf32beec15";
        s[10] = '\0'; /* embedded NUL: the string simply ends early */
        ok (blobref_validate (s) < 0, "a truncated blobref is rejected");
    }
}

int main (void)
{
    if (sodium_init () < 0)
        BAIL_OUT ("sodium_init failed");
    plan (NO_PLAN);
    test_vectors ();
    test_million ();
    test_sodium ();
    test_sha1_paths ();
    test_sha1_boundaries ();
    test_emptydir ();
    test_conversions ();
    test_malformed ();
    done_testing ();
    return 0;
}
