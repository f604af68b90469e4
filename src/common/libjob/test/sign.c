/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/sign.c - J with mechanisms none and munge: the PROTOCOLS.md section 6
 * examples byte for byte, round trips, and every refusal.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libflux/base64.h"
#include "libjob/sign.h"
#include "tap.h"

/* flux-security order, then flux-core's built-in order (PROTOCOLS.md 6) */
#define J_SECURITY                                                   \
    "dmVyc2lvbgBpMQBtZWNoYW5pc20Ac25vbmUAdXNlcmlkAGkxMDAwAA==.e30=." \
    "none"
#define J_BUILTIN                                                    \
    "dmVyc2lvbgBpMQB1c2VyaWQAaTEwMDAAbWVjaGFuaXNtAHNub25lAA==.e30=." \
    "none"

/* J from a raw header of hlen bytes, a payload string and a signature */
static char *make_J (const char *header, size_t hlen, const char *payload,
                     const char *sig)
{
    char h[512], p[512], *J;

    if (base64_encode (h, sizeof (h), header, hlen) < 0
        || base64_encode (p, sizeof (p), payload, strlen (payload)) < 0
        || asprintf (&J, "%s.%s.%s", h, p, sig) < 0)
        BAIL_OUT ("make_J");
    return J;
}

static void test_examples (void)
{
    char *J, *payload = NULL;
    size_t len = 99;
    uint32_t uid = 0;
    const char *mech = NULL;
    flux_error_t error;

    J = sign_none_wrap ("{}", 2, 1000);
    is (J, J_SECURITY, "wrap {} for uid 1000 gives the example, byte for byte");
    free (J);

    ok (sign_unwrap (J_SECURITY, &payload, &len, &uid, &mech, &error) == 0,
        "unwrap the flux-security example");
    ok (payload && !strcmp (payload, "{}") && len == 2 && uid == 1000 && mech
            && !strcmp (mech, "none"),
        "payload {}, uid 1000, mechanism none");
    free (payload);
    payload = NULL;
    uid = 0;
    ok (sign_unwrap (J_BUILTIN, &payload, &len, &uid, &mech, &error) == 0
            && payload && !strcmp (payload, "{}") && uid == 1000,
        "unwrap the built-in order example (any key order)");
    free (payload);
}

static void test_roundtrip (void)
{
    const char *js = "{\"version\":1,\"x\":\"\xc6\x92\"}";
    uint32_t uids[] = {0, 1, 65534, UINT32_MAX};
    char *big = malloc (100001);

    for (size_t i = 0; i < sizeof (uids) / sizeof (uids[0]); i++) {
        char *J = sign_none_wrap (js, strlen (js), uids[i]), *p = NULL;
        size_t len;
        uint32_t uid = 7;
        const char *mech;
        ok (J && sign_unwrap (J, &p, &len, &uid, &mech, NULL) == 0 && p
                && !strcmp (p, js) && len == strlen (js) && uid == uids[i],
            "round trip for uid %u", uids[i]);
        free (J);
        free (p);
    }
    memset (big, 'a', 100000);
    big[100000] = '\0';
    {
        char *J = sign_none_wrap (big, 100000, 5), *p = NULL;
        size_t len = 0;
        uint32_t uid;
        const char *mech;
        ok (J && sign_unwrap (J, &p, &len, &uid, &mech, NULL) == 0
                && len == 100000 && !strcmp (p, big),
            "round trip of a 100 kB payload");
        free (J);
        free (p);
    }
    {
        char *J = sign_none_wrap ("", 0, 5), *p = NULL;
        size_t len = 9;
        uint32_t uid;
        const char *mech;
        ok (J && sign_unwrap (J, &p, &len, &uid, &mech, NULL) == 0 && len == 0
                && p && p[0] == '\0',
            "round trip of an empty payload");
        free (J);
        free (p);
    }
    free (big);
    errno = 0;
    ok (sign_none_wrap ("a\0b", 3, 1) == NULL && errno == EINVAL,
        "wrap refuses a payload with NUL");
    ok (sign_none_wrap (NULL, 3, 1) == NULL && errno == EINVAL,
        "wrap refuses NULL");
}

#define HDR(s) s, sizeof (s) - 1

static void test_refusals (void)
{
    struct {
        const char *header;
        size_t hlen;
        const char *sig;
        const char *err;
    } v[] = {
        {HDR ("version\0i1\0mechanism\0smunge\0userid\0i1000\0"), "sig",
         "J signature is not a MUNGE credential"},
        {HDR ("version\0i1\0mechanism\0smunge\0userid\0i1000\0"),
         "MUNGE:", "J signature is not a MUNGE credential"},
        {HDR ("version\0i1\0mechanism\0smunge\0userid\0i1000\0"),
         "MUNGE:ab.c:", "J has 4 parts, expected 3"},
        {HDR ("version\0i1\0mechanism\0smunge\0userid\0i1000\0"),
         "MUNGE:a!c:", "J signature is not a MUNGE credential"},
        {HDR ("version\0i1\0mechanism\0scurve\0userid\0i1000\0"), "sig",
         "unknown mechanism curve"},
        {HDR ("version\0i1\0mechanism\0snone\0userid\0i1000\0"), "munge",
         "J signature must be 'none' for mechanism none"},
        {HDR ("version\0i2\0mechanism\0snone\0userid\0i1000\0"), "none",
         "J header version must be i1"},
        {HDR ("version\0s1\0mechanism\0snone\0userid\0i1000\0"), "none",
         "J header version must be i1"},
        {HDR ("version\0i1\0mechanism\0snone\0userid\0s1000\0"), "none",
         "J header userid must be an integer"},
        {HDR ("version\0i1\0mechanism\0snone\0userid\0i-5\0"), "none",
         "J header userid must be an integer"},
        {HDR ("version\0i1\0mechanism\0snone\0userid\0i4294967296\0"), "none",
         "J header userid is out of range"},
        {HDR ("version\0i1\0mechanism\0snone\0userid\0i12x\0"), "none",
         "J header userid must be an integer"},
        {HDR ("version\0i1\0mechanism\0snone\0"), "none",
         "J header is missing key 'userid'"},
        {HDR ("version\0i1\0userid\0i1\0"), "none",
         "J header is missing key 'mechanism'"},
        {HDR ("mechanism\0snone\0userid\0i1\0"), "none",
         "J header is missing key 'version'"},
        {HDR ("version\0i1\0mechanism\0snone\0userid\0i1\0userid\0i2\0"),
         "none", "J header has key 'userid' twice"},
        {HDR ("version\0i1\0mechanism\0snone\0userid\0i1\0extra\0s\0"), "none",
         "J header has unknown key 'extra'"},
        {HDR ("version\0i1\0mechanism\0snone\0userid\0i1"), "none",
         "J header is not RFC 38 key-value text"},
        {HDR ("\0i1\0"), "none", "J header is not RFC 38 key-value text"},
        {HDR ("version\0i1\0mechanism\0i5\0userid\0i1\0"), "none",
         "J header mechanism must be a string"},
    };
    for (size_t i = 0; i < sizeof (v) / sizeof (v[0]); i++) {
        char *J = make_J (v[i].header, v[i].hlen, "{}", v[i].sig), *p = NULL;
        size_t len;
        uint32_t uid;
        const char *mech;
        flux_error_t error = {.text = ""};
        errno = 0;
        ok (sign_unwrap (J, &p, &len, &uid, &mech, &error) < 0
                && errno == EINVAL && p == NULL,
            "refused: %s", v[i].err);
        is (error.text, v[i].err, "error text is exact");
        free (J);
    }
}

/* Without munged (FLUX_MUNGE_SOCKET names nothing): signing fails with
 * EPERM and munge's reason; a munge J of the right form unwraps without
 * verification and is refused with EPERM when verified.  Real munge round
 * trips are in t/t2620-multiuser.t, which runs munged. */
static void test_munge_without_munged (void)
{
    flux_error_t error = {.text = ""};
    char *J, *p = NULL;
    size_t len;
    uint32_t uid = 0;
    const char *mech = NULL;
    const char *hdr = "version\0i1\0mechanism\0smunge\0userid\0i1000\0";

    setenv ("FLUX_MUNGE_SOCKET", "/nonexistent/munge.socket", 1);
    errno = 0;
    ok (sign_wrap ("munge", "{}", 2, getuid (), &error) == NULL
            && errno == EPERM && !strncmp (error.text, "munge: ", 7),
        "munge wrap without munged: EPERM (%s)", error.text);
    errno = 0;
    ok (sign_wrap ("munge", "{}", 2, getuid () + 1, &error) == NULL
            && errno == EINVAL,
        "munge wrap for another uid: EINVAL (%s)", error.text);
    errno = 0;
    ok (sign_wrap ("curve", "{}", 2, getuid (), &error) == NULL
            && errno == EINVAL
            && !strcmp (error.text, "unknown signing mechanism curve"),
        "unknown mechanism: EINVAL");
    J = sign_wrap ("none", "{}", 2, 1000, &error);
    ok (J && !strcmp (J, J_SECURITY), "sign_wrap none is sign_none_wrap");
    free (J);

    J = make_J (hdr, 41, "{}", "MUNGE:AAAA:");
    ok (sign_unwrap (J, &p, &len, &uid, &mech, &error) == 0 && uid == 1000
            && mech && !strcmp (mech, "munge") && p && !strcmp (p, "{}"),
        "munge J unwraps without verification");
    free (p);
    p = NULL;
    errno = 0;
    ok (sign_unwrap_ex (J, 0, &p, &len, &uid, &mech, &error) < 0
            && errno == EPERM && p == NULL
            && !strncmp (error.text, "J signature: munge: ", 20),
        "verified, it is refused with EPERM (%s)", error.text);
    errno = 0;
    ok (sign_unwrap_ex (J, 0x10, &p, &len, &uid, &mech, &error) < 0
            && errno == EINVAL,
        "unknown flags: EINVAL");
    free (J);
    unsetenv ("FLUX_MUNGE_SOCKET");
}

static void test_malformed (void)
{
    struct {
        const char *J;
        const char *err;
    } v[] = {
        {"abc.def", "J has 2 parts, expected 3"},
        {"abc", "J has 1 part, expected 3"},
        {"a.b.c.d", "J has 4 parts, expected 3"},
        {"", "J has 1 part, expected 3"},
        {"!!!!.e30=.none", "J header is not valid base64"},
        {"dmVyc2lvbgBpMQBtZWNoYW5pc20Ac25vbmUAdXNlcmlkAGkxMDAwAA==.e30.none",
         "J payload is not valid base64"},
        {"dmVyc2lvbgBpMQBtZWNoYW5pc20Ac25vbmUAdXNlcmlkAGkxMDAwAA==.YQBi.none",
         "J payload contains a NUL byte"},
        {"dmVyc2lvbgBpMQBtZWNoYW5pc20Ac25vbmUAdXNlcmlkAGkxMDAwAA==.e30=.None",
         "J signature must be 'none' for mechanism none"},
        {"dmVyc2lvbgBpMQBtZWNoYW5pc20Ac25vbmUAdXNlcmlkAGkxMDAwAA==.e30=.none ",
         "J signature must be 'none' for mechanism none"},
    };
    for (size_t i = 0; i < sizeof (v) / sizeof (v[0]); i++) {
        char *p = NULL;
        size_t len;
        uint32_t uid;
        const char *mech;
        flux_error_t error = {.text = ""};
        errno = 0;
        ok (sign_unwrap (v[i].J, &p, &len, &uid, &mech, &error) < 0
                && errno == EINVAL,
            "'%s' is refused", v[i].J);
        is (error.text, v[i].err, "error: %s", v[i].err);
    }
    {
        char *p;
        size_t len;
        uint32_t uid;
        const char *mech;
        ok (sign_unwrap (NULL, &p, &len, &uid, &mech, NULL) < 0
                && errno == EINVAL,
            "unwrap NULL fails with EINVAL");
    }
}

int main (int argc, char **argv)
{
    test_examples ();
    test_roundtrip ();
    test_refusals ();
    test_malformed ();
    test_munge_without_munged ();
    done_testing ();
    return 0;
}
