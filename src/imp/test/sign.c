/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/sign.c - flux-imp's J: base64, decode (the PROTOCOLS.md section 6
 * example byte for byte), the munge checks without munged, refusals.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "b64.h"
#include "sha256.h"
#include "sign.h"
#include "tap.h"

#define J_SECURITY                                                   \
    "dmVyc2lvbgBpMQBtZWNoYW5pc20Ac25vbmUAdXNlcmlkAGkxMDAwAA==.e30=." \
    "none"
#define J_BUILTIN                                                    \
    "dmVyc2lvbgBpMQB1c2VyaWQAaTEwMDAAbWVjaGFuaXNtAHNub25lAA==.e30=." \
    "none"

static char *make_J (const char *header, size_t hlen, const char *payload,
                     const char *sig)
{
    char *h = b64_encode (header, hlen);
    char *p = b64_encode (payload, strlen (payload));
    char *J;
    if (asprintf (&J, "%s.%s.%s", h, p, sig) < 0)
        J = NULL;
    free (h);
    free (p);
    return J;
}

static void test_b64 (void)
{
    static const char *v[][2] = {{"", ""},
                                 {"f", "Zg=="},
                                 {"fo", "Zm8="},
                                 {"foo", "Zm9v"},
                                 {"foob", "Zm9vYg=="},
                                 {"fooba", "Zm9vYmE="},
                                 {"foobar", "Zm9vYmFy"}};
    for (size_t i = 0; i < sizeof (v) / sizeof (v[0]); i++) {
        char *s = b64_encode (v[i][0], strlen (v[i][0]));
        size_t len;
        char *d = b64_decode (v[i][1], strlen (v[i][1]), &len);
        is (s, v[i][1], "b64_encode (%s) is RFC 4648's vector", v[i][0]);
        ok (d && len == strlen (v[i][0]) && !strcmp (d, v[i][0]),
            "b64_decode (%s) round trips", v[i][1]);
        free (s);
        free (d);
    }
    size_t len;
    ok (!b64_decode ("Zg=", 3, &len), "b64_decode refuses a bad length");
    ok (!b64_decode ("Zh==", 4, &len), "b64_decode refuses non-zero pad bits");
    ok (!b64_decode ("Z!==", 4, &len), "b64_decode refuses a bad character");
    ok (!b64_decode ("Zg==Zg==", 8, &len), "b64_decode refuses inner padding");
}

static void test_decode (void)
{
    struct imp_j j;
    struct imp_err e = {{0}};

    ok (imp_j_decode (J_SECURITY, &j, &e) == 0 && j.userid == 1000
            && !strcmp (j.mechanism, "none") && !strcmp (j.payload, "{}"),
        "decode: flux-security's header order");
    imp_j_clear (&j);
    ok (imp_j_decode (J_BUILTIN, &j, &e) == 0 && j.userid == 1000,
        "decode: flux-core's built-in header order");
    imp_j_clear (&j);

    struct {
        const char *h;
        size_t hlen;
        const char *sig;
        const char *why;
    } bad[] = {
        {"version\0i2\0mechanism\0snone\0userid\0i1\0", 37, "none",
         "version 2"},
        {"version\0i1\0mechanism\0snone\0", 28, "none", "no userid"},
        {"version\0i1\0mechanism\0snone\0userid\0i1\0x\0i1\0", 42, "none",
         "an unknown key"},
        {"version\0i1\0mechanism\0scurve\0userid\0i1\0", 38, "x", "curve"},
        {"version\0i1\0mechanism\0snone\0userid\0s1\0", 37, "none",
         "a string userid"},
        {"version\0i1\0mechanism\0snone\0userid\0i99999999999\0", 47, "none",
         "an out of range userid"},
        {"version\0i1\0mechanism\0snone\0userid\0i1\0", 37, "munge",
         "none with a signature"},
        {"version\0i1\0mechanism\0smunge\0userid\0i1\0", 38, "",
         "munge without a signature"},
        {"version\0i1\0version\0i1\0mechanism\0snone\0userid\0i1\0", 48, "none",
         "a repeated key"},
        {"version\0i1", 10, "none", "a truncated header"},
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        char *J = make_J (bad[i].h, bad[i].hlen, "{}", bad[i].sig);
        ok (imp_j_decode (J, &j, &e) < 0, "decode refuses %s: %s", bad[i].why,
            e.text);
        free (J);
    }
    ok (imp_j_decode ("a.b", &j, &e) < 0 && strstr (e.text, "3 parts"),
        "decode refuses 2 parts");
    ok (imp_j_decode ("a.b.c.d", &j, &e) < 0, "decode refuses 4 parts");
    ok (imp_j_decode (NULL, &j, &e) < 0, "decode refuses NULL");
    ok (imp_j_decode ("!!!!.e30=.none", &j, &e) < 0,
        "decode refuses a bad base64 header");
}

static void test_check_munge (void)
{
    struct imp_err e = {{0}};
    struct imp_j j;
    struct sha256_ctx ctx;
    unsigned char cred[IMP_MUNGE_PAYLOAD_SIZE];
    const char *dot2;
    char *J;
    time_t now = 1000000;

    J = make_J ("version\0i1\0mechanism\0smunge\0userid\0i1001\0", 41,
                "{\"version\":1}", "MUNGE:xyz");
    ok (imp_j_decode (J, &j, &e) == 0 && j.userid == 1001, "decode a munge J");
    dot2 = strrchr (J, '.');
    cred[0] = 1;
    sha256_init (&ctx);
    sha256_update (&ctx, J, dot2 - J);
    sha256_final (&ctx, cred + 1);
    ok (imp_j_check_munge (&j, cred, sizeof (cred), 1001, now - 10, 300, now,
                           &e)
            == 0,
        "check_munge: the right hash, uid and time pass");
    ok (imp_j_check_munge (&j, cred, sizeof (cred), 1002, now, 300, now, &e) < 0
            && strstr (e.text, "uid mismatch"),
        "check_munge: a credential of another uid is refused: %s", e.text);
    ok (imp_j_check_munge (&j, cred, sizeof (cred), 1001, now - 301, 300, now,
                           &e)
                < 0
            && strstr (e.text, "expired"),
        "check_munge: older than max-ttl is refused: %s", e.text);
    ok (imp_j_check_munge (&j, cred, sizeof (cred) - 1, 1001, now, 300, now, &e)
            < 0,
        "check_munge: a short payload is refused");
    cred[0] = 2;
    ok (imp_j_check_munge (&j, cred, sizeof (cred), 1001, now, 300, now, &e)
            < 0,
        "check_munge: another hash type is refused");
    cred[0] = 1;
    cred[5] ^= 1;
    ok (imp_j_check_munge (&j, cred, sizeof (cred), 1001, now, 300, now, &e) < 0
            && strstr (e.text, "does not match"),
        "check_munge: a hash of other content is refused");
    imp_j_clear (&j);
    free (J);
}

static void test_verify_none (void)
{
    struct imp_err e = {{0}};
    struct imp_j j;
    uint32_t uid = 0;
    char *J = imp_j_wrap ("none", "{}", 2, 1000, NULL, 0, &e);

    is (J, J_SECURITY, "wrap none gives flux-security's J");
    ok (imp_j_decode (J, &j, &e) == 0, "decode it");
    ok (imp_j_verify (&j, true, false, NULL, 300, 1000, &uid, &e) < 0
            && strstr (e.text, "allowed-types"),
        "verify: none refused unless allowed: %s", e.text);
    ok (imp_j_verify (&j, true, true, NULL, 300, 1001, &uid, &e) < 0,
        "verify: none from another user than the caller refused");
    ok (imp_j_verify (&j, false, true, NULL, 300, 1000, &uid, &e) == 0
            && uid == 1000,
        "verify: none from the caller passes when allowed");
    imp_j_clear (&j);
    free (J);
    ok (!imp_j_wrap ("none", "a\0b", 3, 1, NULL, 0, &e),
        "wrap refuses a payload with a NUL");
    ok (!imp_j_wrap ("curve", "{}", 2, 1, NULL, 0, &e),
        "wrap refuses an unknown mechanism");
}

int main (int argc, char *argv[])
{
    plan (NO_PLAN);
    test_b64 ();
    test_decode ();
    test_check_munge ();
    test_verify_none ();
    done_testing ();
    return 0;
}
