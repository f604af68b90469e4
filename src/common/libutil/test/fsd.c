/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/fsd.c - Flux Standard Duration (RFC 23) */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "libutil/fsd.h"
#include "tap.h"

static void test_rfc_vectors (void)
{
    /* RFC 23 "Test Vectors", verbatim */
    struct {
        const char *s;
        double d;
    } v[] = {
        {"2ms", 0.002},         {"0.1s", 0.1},     {"30", 30},
        {"1.2h", 4320},         {"5m", 300},       {"0s", 0},
        {"5d", 432000},         {"inf", INFINITY}, {"INF", INFINITY},
        {"infinity", INFINITY},
    };
    for (size_t i = 0; i < sizeof (v) / sizeof (v[0]); i++) {
        double d = -1;
        ok (fsd_parse_duration (v[i].s, &d) == 0 && d == v[i].d,
            "RFC vector %s = %g", v[i].s, v[i].d);
    }
}

static void test_parse_more (void)
{
    struct {
        const char *s;
        double d;
    } v[] = {
        {"1.5m", 90},       {"+5", 5},         {".5s", 0.5},
        {"5.", 5},          {"1e3", 1000},     {"1e3ms", 1},
        {"0.5ms", 0.0005},  {"0d", 0},         {"0ms", 0},
        {"0x10", 16},       {"0x1p1h", 7200},  {"Infinity", INFINITY},
        {"+inf", INFINITY}, {"iNf", INFINITY}, {"1e-400", 0},
        {"24h", 86400},     {"0.25d", 21600},  {"1000000000d", 8.64e13},
    };
    for (size_t i = 0; i < sizeof (v) / sizeof (v[0]); i++) {
        double d = -1;
        ok (fsd_parse_duration (v[i].s, &d) == 0 && d == v[i].d, "%s = %g",
            v[i].s, v[i].d);
    }
    double d;
    errno = EBADF;
    ok (fsd_parse_duration ("1e-400", &d) == 0 && errno == EBADF,
        "success leaves errno alone (even when strtod set ERANGE)");
}

static void test_parse_errors (void)
{
    const char *bad[] = {
        "",     " 5",        "\t5",   "5 ",    "5s ",    "5 s",    "\n",
        "-1",   "-0",        "-0s",   "-inf",  "--5",    "+-5",    "nan",
        "NaN",  "nans",      "-nan",  "5x",    "5S",     "5M",     "5H",
        "5D",   "5MS",       "5Ms",   "5ss",   "5sm",    "5msm",   "5mss",
        "infs", "infinityd", "infms", "inf ",  "in",     "s",      "ms",
        "m",    ".s",        "1e",    "1e999", "1e999s", "1e308d", "1e306h",
        "1,5s", "1.5.s",     "5sec",  "5min",  "0x",     "s5",     "5\xc2\xb5s",
    };
    int nbad = sizeof (bad) / sizeof (bad[0]);
    int failures = 0;

    for (int i = 0; i < nbad; i++) {
        double d = 42;
        errno = 0;
        if (fsd_parse_duration (bad[i], &d) == 0 || errno != EINVAL
            || d != 42) {
            diag ("'%s' was not rejected with EINVAL (got %g)", bad[i], d);
            failures++;
        }
    }
    ok (failures == 0,
        "%d malformed durations fail with EINVAL, output "
        "untouched",
        nbad);
    double d;
    errno = 0;
    ok (fsd_parse_duration (NULL, &d) < 0 && errno == EINVAL,
        "NULL string fails with EINVAL");
    errno = 0;
    ok (fsd_parse_duration ("5", NULL) < 0 && errno == EINVAL,
        "NULL result fails with EINVAL");
}

static void check_format (double d, int precision, const char *expect)
{
    char buf[64];

    ok (fsd_format_duration_ex (buf, sizeof (buf), d, precision) == 0
            && !strcmp (buf, expect),
        "%.17g (precision %d) formats as %s (got %s)", d, precision, expect,
        buf);
}

static void test_format (void)
{
    char buf[64];

    check_format (0, 2, "0s");
    check_format (1, 2, "1s");
    check_format (30, 2, "30s");
    check_format (0.5, 2, "500ms");
    check_format (0.002, 2, "2ms");
    check_format (0.0015, 2, "1.5ms");
    check_format (0.0001, 2, "0.1ms");
    check_format (1e-6, 2, "0s");
    check_format (1e-6, 3, "0.001ms");
    check_format (1.25, 2, "1.25s");
    check_format (60, 2, "1m");
    check_format (90, 2, "1.5m");
    check_format (3600, 2, "1h");
    check_format (5400, 2, "1.5h");
    check_format (86400, 2, "1d");
    check_format (108000, 2, "1.25d");
    check_format (604800, 2, "7d");
    check_format (1234567, 2, "14.29d");
    check_format (INFINITY, 2, "inf");
    check_format (1e20, 2, "1.16e+15d");
    check_format (1e20, 0, "1e+15d");
    /* rounding up into the next unit */
    check_format (0.9999999, 2, "1s");
    check_format (59.999, 2, "1m");
    check_format (3599.999, 2, "1h");
    check_format (86399.9999, 2, "1d");
    check_format (59.6, 0, "1m");
    check_format (59.4, 0, "59s");
    check_format (59.999, 3, "59.999s");
    /* precision */
    check_format (1.23456, 0, "1s");
    check_format (1.23456, 4, "1.2346s");
    check_format (1.0 / 3, 3, "333.333ms");
    check_format (0.1, 15, "100ms");
    check_format (4320, 15, "1.2h");

    ok (fsd_format_duration (buf, sizeof (buf), 5400) == 0
            && !strcmp (buf, "1.5h"),
        "fsd_format_duration uses precision 2: 5400 is 1.5h");
    ok (fsd_format_duration (buf, sizeof (buf), 1.0 / 3) == 0
            && !strcmp (buf, "333.33ms"),
        "fsd_format_duration: 1/3 is 333.33ms");
}

static void test_format_errors (void)
{
    char buf[64];
    struct {
        double d;
        int precision;
    } bad[] = {
        {-1, 2}, {-1e-300, 2}, {-INFINITY, 2}, {NAN, 2}, {1, -1}, {1, 16},
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        errno = 0;
        ok (fsd_format_duration_ex (buf, sizeof (buf), bad[i].d,
                                    bad[i].precision)
                    < 0
                && errno == EINVAL,
            "format %g with precision %d fails with EINVAL", bad[i].d,
            bad[i].precision);
    }
    errno = 0;
    ok (fsd_format_duration (NULL, 10, 1) < 0 && errno == EINVAL,
        "format into NULL fails with EINVAL");
    errno = 0;
    ok (fsd_format_duration (buf, 0, 1) < 0 && errno == EINVAL,
        "format into 0 bytes fails with EINVAL");

    memset (buf, 'x', sizeof (buf));
    errno = 0;
    ok (fsd_format_duration (buf, 4, 5400) < 0 && errno == EOVERFLOW
            && buf[0] == '\0',
        "1.5h in 4 bytes fails with EOVERFLOW and leaves an empty string");
    ok (fsd_format_duration (buf, 5, 5400) == 0 && !strcmp (buf, "1.5h"),
        "1.5h fits in 5 bytes");
    errno = 0;
    ok (fsd_format_duration (buf, 3, INFINITY) < 0 && errno == EOVERFLOW,
        "inf in 3 bytes fails with EOVERFLOW");
    ok (fsd_format_duration (buf, 4, INFINITY) == 0 && !strcmp (buf, "inf"),
        "inf fits in 4 bytes");
}

static uint64_t rng_state = 0x2545f4914f6cdd1dULL;
static double rng_unit (void) /* [0, 1) */
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 0x2545f4914f6cdd1dULL) >> 11) / 0x1p53;
}

/* Format then parse many durations from 1ms to ~30 years. */
static void test_roundtrip (int precision, double tolerance)
{
    int failures = 0;
    const int n = 20000;

    for (int i = 0; i < n; i++) {
        double d = pow (10, -3 + 12 * rng_unit ());
        double got;
        char buf[64];
        if (fsd_format_duration_ex (buf, sizeof (buf), d, precision) < 0
            || fsd_parse_duration (buf, &got) < 0
            || fabs (got - d) > tolerance * d) {
            if (failures++ == 0)
                diag ("%.17g -> '%s' -> %.17g", d, buf, got);
        }
    }
    ok (failures == 0,
        "%d durations round trip at precision %d within "
        "relative error %g",
        n, precision, tolerance);
}

int main (int argc, char *argv[])
{
    plan (NO_PLAN);

    test_rfc_vectors ();
    test_parse_more ();
    test_parse_errors ();
    test_format ();
    test_format_errors ();
    test_roundtrip (2, 0.005 + 1e-12);
    test_roundtrip (0, 0.5 + 1e-12);
    test_roundtrip (15, 1e-12);

    done_testing ();
}
