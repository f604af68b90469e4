/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/job.c - state and result names, job id forms (PROTOCOLS.md 7),
 * KVS keys (RFC 16).
 */
#include <errno.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include "libjob/job.h"
#include "tap.h"

static void test_states (void)
{
    static const struct {
        int state;
        const char *name, *letter;
    } v[] = {
        {FLUX_JOB_STATE_NEW, "NEW", "N"},
        {FLUX_JOB_STATE_DEPEND, "DEPEND", "D"},
        {FLUX_JOB_STATE_PRIORITY, "PRIORITY", "P"},
        {FLUX_JOB_STATE_SCHED, "SCHED", "S"},
        {FLUX_JOB_STATE_RUN, "RUN", "R"},
        {FLUX_JOB_STATE_CLEANUP, "CLEANUP", "C"},
        {FLUX_JOB_STATE_INACTIVE, "INACTIVE", "I"},
    };
    int state;

    for (size_t i = 0; i < sizeof (v) / sizeof (v[0]); i++) {
        is (flux_job_statetostr (v[i].state, 0), v[i].name, "state %d is %s",
            v[i].state, v[i].name);
        is (flux_job_statetostr (v[i].state, 1), v[i].letter,
            "state %d is %s (single)", v[i].state, v[i].letter);
        state = 0;
        ok (flux_job_strtostate (v[i].name, &state) == 0 && state == v[i].state,
            "strtostate %s", v[i].name);
    }
    ok (flux_job_strtostate ("sched", &state) == 0
            && state == FLUX_JOB_STATE_SCHED,
        "strtostate is case insensitive");
    ok (flux_job_strtostate ("i", &state) == 0
            && state == FLUX_JOB_STATE_INACTIVE,
        "strtostate takes a lower case letter");
    errno = 0;
    ok (flux_job_strtostate ("RUNNING", &state) < 0 && errno == EINVAL,
        "strtostate RUNNING fails with EINVAL");
    ok (flux_job_strtostate (NULL, &state) < 0 && errno == EINVAL,
        "strtostate NULL fails with EINVAL");
    is (flux_job_statetostr (3, 0), "?", "a mask is not a state");
    is (flux_job_statetostr (0, 1), "?", "0 is not a state");
    ok (FLUX_JOB_STATE_PENDING
                == (FLUX_JOB_STATE_DEPEND | FLUX_JOB_STATE_PRIORITY
                    | FLUX_JOB_STATE_SCHED)
            && FLUX_JOB_STATE_RUNNING
                   == (FLUX_JOB_STATE_RUN | FLUX_JOB_STATE_CLEANUP)
            && FLUX_JOB_STATE_ACTIVE == 62,
        "masks are PENDING 14, RUNNING 48, ACTIVE 62");
}

static void test_results (void)
{
    static const struct {
        int result;
        const char *name, *abbrev;
    } v[] = {
        {FLUX_JOB_RESULT_COMPLETED, "COMPLETED", "CD"},
        {FLUX_JOB_RESULT_FAILED, "FAILED", "F"},
        {FLUX_JOB_RESULT_CANCELED, "CANCELED", "CA"},
        {FLUX_JOB_RESULT_TIMEOUT, "TIMEOUT", "TO"},
    };
    int r;

    for (size_t i = 0; i < sizeof (v) / sizeof (v[0]); i++) {
        is (flux_job_resulttostr (v[i].result, 0), v[i].name, "result %s",
            v[i].name);
        is (flux_job_resulttostr (v[i].result, 1), v[i].abbrev, "result %s",
            v[i].abbrev);
        ok (flux_job_strtoresult (v[i].abbrev, &r) == 0 && r == v[i].result,
            "strtoresult %s", v[i].abbrev);
    }
    ok (flux_job_strtoresult ("canceled", &r) == 0
            && r == FLUX_JOB_RESULT_CANCELED,
        "strtoresult is case insensitive");
    ok (flux_job_strtoresult ("CANCELLED", &r) < 0 && errno == EINVAL,
        "strtoresult CANCELLED fails");
    is (flux_job_resulttostr (0, 0), "?", "0 is not a result");
}

#define ID UINT64_C (6731191091817518)

static void test_id_encode (void)
{
    static const struct {
        const char *enc, *s;
    } v[] = {
        {"dec", "6731191091817518"},       {"hex", "0x17e9fb8df16c2e"},
        {"dothex", "0017.e9fb.8df1.6c2e"}, {"kvs", "job.0017.e9fb.8df1.6c2e"},
        {"f58plain", "fuZZybuNNy"},
    };
    char buf[32];

    unsetenv ("FLUX_F58_FORCE_ASCII");
    for (size_t i = 0; i < sizeof (v) / sizeof (v[0]); i++) {
        ok (flux_job_id_encode (ID, v[i].enc, buf, sizeof (buf)) == 0,
            "encode %s works", v[i].enc);
        is (buf, v[i].s, "%s is %s", v[i].enc, v[i].s);
    }
    setlocale (LC_CTYPE, "C");
    ok (flux_job_id_encode (ID, "f58", buf, sizeof (buf)) == 0
            && !strcmp (buf, "fuZZybuNNy"),
        "f58 under the C locale uses ASCII f");
    if (setlocale (LC_CTYPE, "C.UTF-8")
        || setlocale (LC_CTYPE, "en_US.UTF-8")) {
        ok (flux_job_id_encode (ID, "f58", buf, sizeof (buf)) == 0
                && !strcmp (buf, "\xc6\x92uZZybuNNy"),
            "f58 under a UTF-8 locale uses U+0192");
        ok (flux_job_id_encode (ID, NULL, buf, sizeof (buf)) == 0
                && !strcmp (buf, "\xc6\x92uZZybuNNy"),
            "NULL encoding is f58");
        setenv ("FLUX_F58_FORCE_ASCII", "1", 1);
        ok (flux_job_id_encode (ID, "f58", buf, sizeof (buf)) == 0
                && !strcmp (buf, "fuZZybuNNy"),
            "FLUX_F58_FORCE_ASCII forces f");
        unsetenv ("FLUX_F58_FORCE_ASCII");
        ok (flux_job_id_encode (0, "f58", buf, sizeof (buf)) == 0
                && !strcmp (buf, "\xc6\x92"
                                 "1"),
            "0 encodes as U+0192 1");
        setlocale (LC_CTYPE, "C");
    }
    else
        skip (4, "no UTF-8 locale");
    ok (flux_job_id_encode (0, "f58plain", buf, sizeof (buf)) == 0
            && !strcmp (buf, "f1"),
        "0 encodes as f1");
    ok (flux_job_id_encode (ID, "words", buf, sizeof (buf)) < 0
            && errno == EINVAL,
        "unknown encoding fails with EINVAL");
    ok (flux_job_id_encode (ID, "dec", buf, 4) < 0 && errno == EOVERFLOW,
        "a short buffer fails with EOVERFLOW");
    ok (flux_job_id_encode (UINT64_MAX, "kvs", buf, sizeof (buf)) == 0
            && !strcmp (buf, "job.ffff.ffff.ffff.ffff"),
        "32 bytes hold the longest id");
}

static void test_id_parse (void)
{
    static const char *good[] = {
        "6731191091817518",    "0x17e9fb8df16c2e",
        "0017.e9fb.8df1.6c2e", "job.0017.e9fb.8df1.6c2e",
        "fuZZybuNNy",          "\xc6\x92uZZybuNNy",
        "  fuZZybuNNy",        "6731191091817518  ",
        "\t0x17E9FB8DF16C2E",
    };
    static const char *bad[] = {
        "",
        "   ",
        "f",
        "f0",
        "fuZZybuNNyl",
        "x12",
        "12a",
        "0x",
        "0017.e9fb",
        "job.",
        "-1",
        "hungry-hippo",
        "0xfffffffffffffffff",
        "fIIIIII",
    };
    flux_jobid_t id;

    for (size_t i = 0; i < sizeof (good) / sizeof (good[0]); i++) {
        id = 0;
        ok (flux_job_id_parse (good[i], &id) == 0 && id == ID, "parse '%s'",
            good[i]);
    }
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        errno = 0;
        ok (flux_job_id_parse (bad[i], &id) < 0 && errno == EINVAL,
            "parse '%s' fails with EINVAL", bad[i]);
    }
    ok (flux_job_id_parse ("f1", &id) == 0 && id == 0, "f1 is 0");
    ok (flux_job_id_parse ("18446744073709551615", &id) == 0
            && id == UINT64_MAX,
        "2^64-1 parses");
    ok (flux_job_id_parse (NULL, &id) < 0 && errno == EINVAL, "NULL fails");
}

static void test_kvs (void)
{
    char buf[64];

    ok (flux_job_kvs_key (buf, sizeof (buf), ID, NULL) == 0
            && !strcmp (buf, "job.0017.e9fb.8df1.6c2e"),
        "kvs key of the job directory");
    ok (flux_job_kvs_key (buf, sizeof (buf), ID, "eventlog") == 0
            && !strcmp (buf, "job.0017.e9fb.8df1.6c2e.eventlog"),
        "kvs key of the eventlog");
    ok (flux_job_kvs_key (buf, sizeof (buf), 1, "R") == 0
            && !strcmp (buf, "job.0000.0000.0000.0001.R"),
        "kvs key of id 1");
    ok (flux_job_kvs_key (buf, 24, ID, "eventlog") < 0 && errno == EOVERFLOW,
        "kvs key overflow fails with EOVERFLOW");
    ok (flux_job_kvs_key (buf, 23, ID, NULL) < 0 && errno == EOVERFLOW,
        "kvs key needs room for the NUL");
    ok (flux_job_kvs_namespace (buf, sizeof (buf), ID) == 0
            && !strcmp (buf, "job-6731191091817518"),
        "guest namespace is job-<decimal>");
    ok (flux_job_kvs_namespace (buf, 8, ID) < 0 && errno == EOVERFLOW,
        "namespace overflow fails with EOVERFLOW");
}

int main (int argc, char **argv)
{
    test_states ();
    test_results ();
    test_id_encode ();
    test_id_parse ();
    test_kvs ();
    done_testing ();
    return 0;
}
