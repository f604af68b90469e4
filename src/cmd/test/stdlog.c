/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Tests for stdlog: Flux log entry encoding and decoding, timestamps. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stdlog.h"
#include "tap.h"

static void test_severity (void)
{
    cmp_ok (stdlog_pri (STDLOG_ERR, STDLOG_FACILITY_USER), "==", 25,
            "pri(err, user) is 3<<3|1 (Flux order)");
    cmp_ok (stdlog_pri (7, 7), "==", 63, "pri(debug, 7) is 63");
    errno = 0;
    ok (stdlog_pri (8, 0) < 0 && errno == EINVAL, "severity 8: EINVAL");
    errno = 0;
    ok (stdlog_pri (0, 8) < 0 && errno == EINVAL, "facility 8: EINVAL");
    ok (stdlog_pri (-1, 0) < 0, "severity -1 fails");
    cmp_ok (stdlog_severity (25), "==", STDLOG_ERR, "severity of 25 is err");
    cmp_ok (stdlog_facility (25), "==", 1, "facility of 25 is 1");
    cmp_ok (stdlog_severity (8 * 6), "==", STDLOG_INFO,
            "LOG_USER info: PRI 48 is severity 6");
    is (stdlog_severity_to_string (0), "emerg", "0 is emerg");
    is (stdlog_severity_to_string (4), "warning", "4 is warning");
    is (stdlog_severity_to_string (7), "debug", "7 is debug");
    ok (stdlog_severity_to_string (8) == NULL, "8 has no name");
    ok (stdlog_severity_to_string (-1) == NULL, "-1 has no name");
    cmp_ok (stdlog_string_to_severity ("crit"), "==", 2, "crit is 2");
    cmp_ok (stdlog_string_to_severity ("notice"), "==", 5, "notice is 5");
    cmp_ok (stdlog_string_to_severity ("6"), "==", 6, "\"6\" is 6");
    errno = 0;
    ok (stdlog_string_to_severity ("8") < 0 && errno == EINVAL,
        "\"8\" is EINVAL");
    ok (stdlog_string_to_severity ("Err") < 0, "names are case sensitive");
    ok (stdlog_string_to_severity ("") < 0, "empty string fails");
    ok (stdlog_string_to_severity ("66") < 0, "\"66\" fails");
    ok (stdlog_string_to_severity (NULL) < 0, "NULL fails");
}

static void test_encode (void)
{
    struct stdlog_header hdr;
    char buf[512];
    ssize_t n;

    stdlog_header_init (&hdr);
    cmp_ok (hdr.pri, "==", 6 << 3 | 1, "init: info, user");
    n = stdlog_encode (buf, sizeof (buf), &hdr, NULL, "hello");
    is (buf, "<49>1 - - - - - - hello", "encode defaults");
    cmp_ok (n, "==", strlen (buf), "returns the length");

    strcpy (hdr.timestamp, "2024-01-02T03:04:05.000006Z");
    strcpy (hdr.hostname, "3");
    strcpy (hdr.appname, "logger");
    strcpy (hdr.procid, "42");
    hdr.pri = stdlog_pri (STDLOG_ERR, 1);
    stdlog_encode (buf, sizeof (buf), &hdr, "[x@1 a=\"b\"]", "two words");
    is (buf,
        "<25>1 2024-01-02T03:04:05.000006Z 3 logger 42 - [x@1 a=\"b\"] "
        "two words",
        "encode all fields");
    stdlog_encode (buf, sizeof (buf), &hdr, NULL, "");
    is (buf, "<25>1 2024-01-02T03:04:05.000006Z 3 logger 42 - -",
        "empty message: no trailing space");
    hdr.appname[0] = '\0';
    stdlog_encode (buf, sizeof (buf), &hdr, NULL, NULL);
    is (buf, "<25>1 2024-01-02T03:04:05.000006Z 3 - 42 - -",
        "empty field written as -");

    strcpy (hdr.appname, "has space");
    errno = 0;
    ok (stdlog_encode (buf, sizeof (buf), &hdr, NULL, "m") < 0
            && errno == EINVAL,
        "field with a space: EINVAL");
    strcpy (hdr.appname, "tab\t");
    ok (stdlog_encode (buf, sizeof (buf), &hdr, NULL, "m") < 0,
        "field with a tab fails");
    strcpy (hdr.appname, "ok");
    ok (stdlog_encode (buf, sizeof (buf), &hdr, "oops", "m") < 0
            && errno == EINVAL,
        "sd not starting with [: EINVAL");
    hdr.pri = 192;
    ok (stdlog_encode (buf, sizeof (buf), &hdr, NULL, "m") < 0,
        "pri 192 fails");
    hdr.pri = 25;
    hdr.version = 0;
    ok (stdlog_encode (buf, sizeof (buf), &hdr, NULL, "m") < 0,
        "version 0 fails");
    hdr.version = 1;
    errno = 0;
    strcpy (buf, "junk");
    ok (stdlog_encode (buf, 10, &hdr, NULL, "m") < 0 && errno == EOVERFLOW
            && buf[0] == '\0',
        "small buffer: EOVERFLOW, empty string");
    ok (stdlog_encode (buf, 0, &hdr, NULL, "m") < 0 && errno == EINVAL,
        "size 0: EINVAL");
    ok (stdlog_encode (NULL, 10, &hdr, NULL, "m") < 0, "NULL buf fails");
}

static void test_decode_good (void)
{
    const char *s = "<25>1 2024-01-02T03:04:05.000006Z 3 logger 42 - - msg "
                    "with  spaces";
    const char *sd, *msg;
    size_t sdlen, msglen;
    struct stdlog_header hdr;
    char buf[512];

    ok (stdlog_decode (s, strlen (s), &hdr, &sd, &sdlen, &msg, &msglen) == 0,
        "decode a full entry");
    cmp_ok (hdr.pri, "==", 25, "pri");
    cmp_ok (stdlog_severity (hdr.pri), "==", STDLOG_ERR, "severity err");
    cmp_ok (hdr.version, "==", 1, "version");
    is (hdr.timestamp, "2024-01-02T03:04:05.000006Z", "timestamp");
    is (hdr.hostname, "3", "hostname (rank)");
    is (hdr.appname, "logger", "appname");
    is (hdr.procid, "42", "procid");
    is (hdr.msgid, "-", "msgid nil");
    ok (sdlen == 1 && sd[0] == '-', "sd is -");
    ok (msglen == strlen ("msg with  spaces")
            && !strncmp (msg, "msg with  spaces", msglen),
        "msg");

    s = "<0>1 - - - - - [a@1 x=\"q]\\\"\"][b@2]";
    ok (stdlog_decode (s, strlen (s), &hdr, &sd, &sdlen, &msg, &msglen) == 0,
        "decode structured data with escapes, no message");
    ok (sdlen == strlen ("[a@1 x=\"q]\\\"\"][b@2]") && msglen == 0,
        "sd spans both elements, message empty");
    s = "<191>999 - - - - - - ";
    ok (stdlog_decode (s, strlen (s), &hdr, NULL, NULL, &msg, &msglen) == 0
            && hdr.pri == 191 && hdr.version == 999 && msglen == 0,
        "max pri and version, empty message after space");

    /* len, not NUL, bounds the entry */
    s = "<14>1 - - - - - - abcdef";
    ok (stdlog_decode (s, strlen (s) - 3, &hdr, NULL, NULL, &msg, &msglen) == 0
            && msglen == 3,
        "length bounds the message");

    /* round trip */
    stdlog_header_init (&hdr);
    strcpy (hdr.appname, "rt");
    stdlog_encode (buf, sizeof (buf), &hdr, NULL, "round trip");
    struct stdlog_header h2;
    ok (stdlog_decode (buf, strlen (buf), &h2, NULL, NULL, &msg, &msglen) == 0
            && !strcmp (h2.appname, "rt") && h2.pri == hdr.pri && msglen == 10
            && !strncmp (msg, "round trip", 10),
        "encode then decode gives the same entry");
}

static void test_decode_bad (void)
{
    const char *bad[] = {
        "",
        "25>1 - - - - - - m",
        "<>1 - - - - - - m",
        "<025>1 - - - - - - m",
        "<1234>1 - - - - - - m",
        "<192>1 - - - - - - m",
        "<25 >1 - - - - - - m",
        "<25>0 - - - - - - m",
        "<25>01 - - - - - - m",
        "<25>1000 - - - - - - m",
        "<25>1- - - - - - m",
        "<25>1  - - - - - m",
        "<25>1 - - - - -",
        "<25>1 - - - - - -m",
        "<25>1 - - - - - x m",
        "<25>1 - - - - - [unterminated m",
        "<25>1 - - - - - [a]x",
        "<25>1 - - - - - [a=\"]\"",
        "<25>1 - - - -",
    };
    struct stdlog_header hdr;
    char buf[512];

    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        errno = 0;
        ok (stdlog_decode (bad[i], strlen (bad[i]), &hdr, NULL, NULL, NULL,
                           NULL)
                    < 0
                && errno == EPROTO,
            "'%s' fails with EPROTO", bad[i]);
    }
    /* appname longer than 48 characters */
    snprintf (buf, sizeof (buf), "<25>1 - - %s - - - m",
              "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    ok (stdlog_decode (buf, strlen (buf), &hdr, NULL, NULL, NULL, NULL) < 0,
        "49-character appname fails");
    snprintf (buf, sizeof (buf), "<25>1 - - %s - - - m",
              "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    ok (stdlog_decode (buf, strlen (buf), &hdr, NULL, NULL, NULL, NULL) == 0
            && strlen (hdr.appname) == 48,
        "48-character appname is fine");
    strcpy (buf, "<25>1 - h\x01 - - - - m");
    ok (stdlog_decode (buf, strlen (buf), &hdr, NULL, NULL, NULL, NULL) < 0,
        "control character in a field fails");
    errno = 0;
    ok (stdlog_decode (NULL, 0, &hdr, NULL, NULL, NULL, NULL) < 0
            && errno == EINVAL,
        "NULL buf: EINVAL");
    ok (stdlog_decode ("<1>1 - - - - - -", 16, NULL, NULL, NULL, NULL, NULL) < 0
            && errno == EINVAL,
        "NULL hdr: EINVAL");
    strcpy (hdr.appname, "keep");
    stdlog_decode ("<25>1 - - new - - x", 19, &hdr, NULL, NULL, NULL, NULL);
    is (hdr.appname, "keep", "failed decode leaves hdr unchanged");
}

static void test_timestamps (void)
{
    struct timespec ts = {.tv_sec = 1704164645, .tv_nsec = 6789};
    char buf[64];

    ok (stdlog_timestamp_format (buf, sizeof (buf), &ts) == 0,
        "format a timestamp");
    is (buf, "2024-01-02T03:04:05.000006Z", "UTC with microseconds");
    errno = 0;
    ok (stdlog_timestamp_format (buf, 20, &ts) < 0 && errno == EOVERFLOW,
        "small buffer: EOVERFLOW");
    ts.tv_nsec = 1000000000;
    ok (stdlog_timestamp_format (buf, sizeof (buf), &ts) < 0 && errno == EINVAL,
        "tv_nsec out of range: EINVAL");

    ok (stdlog_timestamp_parse ("2024-01-02T03:04:05.000006Z", &ts) == 0
            && ts.tv_sec == 1704164645 && ts.tv_nsec == 6000,
        "parse UTC with microseconds");
    ok (stdlog_timestamp_parse ("2024-01-02T03:04:05Z", &ts) == 0
            && ts.tv_sec == 1704164645 && ts.tv_nsec == 0,
        "parse without fraction");
    ok (stdlog_timestamp_parse ("2024-01-01T19:04:05.5-08:00", &ts) == 0
            && ts.tv_sec == 1704164645 && ts.tv_nsec == 500000000,
        "parse a negative offset");
    ok (stdlog_timestamp_parse ("2024-01-02T08:34:05.123456789+05:30", &ts) == 0
            && ts.tv_sec == 1704164645 && ts.tv_nsec == 123456789,
        "parse a positive offset and nanoseconds");
    ok (stdlog_timestamp_parse ("2024-02-29T00:00:00Z", &ts) == 0,
        "Feb 29 in a leap year");
    const char *bad[] = {
        "2023-02-29T00:00:00Z",
        "2024-13-01T00:00:00Z",
        "2024-01-32T00:00:00Z",
        "2024-01-01T24:00:00Z",
        "2024-01-01T00:60:00Z",
        "2024-01-01T00:00:00",
        "2024-01-01T00:00:00.Z",
        "2024-01-01T00:00:00.1234567890Z",
        "2024-01-01 00:00:00Z",
        "2024-01-01T00:00:00+5:00",
        "2024-01-01T00:00:00+05:60",
        "2024-01-01T00:00:00Zjunk",
        "24-01-01T00:00:00Z",
        "-",
        "",
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        errno = 0;
        ok (stdlog_timestamp_parse (bad[i], &ts) < 0 && errno == EINVAL,
            "'%s' is not a valid timestamp", bad[i]);
    }

    setenv ("TZ", "UTC0", 1);
    tzset ();
    ts.tv_sec = 1704164645;
    ts.tv_nsec = 6000;
    ok (stdlog_timestamp_local (buf, sizeof (buf), &ts) == 0, "local time");
    is (buf, "2024-01-02T03:04:05.000006Z", "local UTC ends in Z");
    setenv ("TZ", "XYZ-5:30", 1);
    tzset ();
    stdlog_timestamp_local (buf, sizeof (buf), &ts);
    is (buf, "2024-01-02T08:34:05.000006+05:30", "local +05:30");
    setenv ("TZ", "ABC8", 1);
    tzset ();
    stdlog_timestamp_local (buf, sizeof (buf), &ts);
    is (buf, "2024-01-01T19:04:05.000006-08:00", "local -08:00");
    ok (stdlog_timestamp_local (buf, 10, &ts) < 0 && errno == EOVERFLOW,
        "local: small buffer is EOVERFLOW");
}

int main (int argc, char **argv)
{
    plan (NO_PLAN);
    test_severity ();
    test_encode ();
    test_decode_good ();
    test_decode_bad ();
    test_timestamps ();
    done_testing ();
    return 0;
}
