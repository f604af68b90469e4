/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Tests for jobio: exit codes from finish status, RFC 24 io objects, the
 * lines attach prints for log events and exceptions, taskmap sizes. */
#define _GNU_SOURCE 1
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "jobio.h"
#include "tap.h"

/* wait statuses built by hand, as a job shell's would be */
#define EXITED(n) ((n) << 8)
#define SIGNALED(n) (n)

static void test_exit_code (void)
{
    flux_error_t msg;

    ok (WIFEXITED (EXITED (3)) && WIFSIGNALED (SIGNALED (9)),
        "test wait statuses are what they say");
    cmp_ok (jobio_exit_code (EXITED (0), false, &msg), "==", 0, "exit 0 is 0");
    is (msg.text, "", "no message for 0");
    cmp_ok (jobio_exit_code (EXITED (0), true, &msg), "==", 1,
            "exit 0 with a fatal exception is 1");
    cmp_ok (jobio_exit_code (EXITED (3), false, &msg), "==", 3, "exit 3 is 3");
    is (msg.text, "task(s) exited with exit code 3", "message for exit 3");
    cmp_ok (jobio_exit_code (EXITED (3), true, &msg), "==", 3,
            "exit 3 with a fatal exception is still 3");
    cmp_ok (jobio_exit_code (SIGNALED (SIGKILL), false, &msg), "==", 137,
            "signaled shell: 128+9");
    is (msg.text, "job shell Killed", "message for a signaled shell");
    cmp_ok (jobio_exit_code (EXITED (128 + SIGTERM), false, &msg), "==", 143,
            "shell exit 143 (task signaled) is 143");
    is (msg.text, "task(s) Terminated", "message for a signaled task");
    cmp_ok (jobio_exit_code (EXITED (127), false, &msg), "==", 127,
            "command not found is 127");
    cmp_ok (jobio_exit_code (-1, false, &msg), "==", 1, "no finish is 1");
    is (msg.text, "", "no message without a finish");
    cmp_ok (jobio_exit_code (-1, true, NULL), "==", 1,
            "no finish, fatal exception is 1; msg may be NULL");
}

static void check_roundtrip (const char *what, const char *data, size_t len,
                             bool expect_b64)
{
    json_t *o = jobio_encode ("stdout", "3", data, len, false);
    const char *stream, *rank, *enc = NULL;
    char *out = NULL;
    size_t olen;
    bool eof = true;
    flux_error_t error;

    ok (o != NULL, "%s: encode works", what);
    (void)json_unpack (o, "{s?s}", "encoding", &enc);
    ok ((enc != NULL) == expect_b64, "%s: %s", what,
        expect_b64 ? "base64" : "plain text");
    ok (jobio_decode (o, NULL, &stream, &rank, &out, &olen, &eof, &error) == 0,
        "%s: decode works", what);
    ok (olen == len && out && memcmp (out, data, len) == 0,
        "%s: data round trips", what);
    ok (!strcmp (stream, "stdout") && !strcmp (rank, "3") && !eof,
        "%s: stream, rank, eof round trip", what);
    free (out);
    json_decref (o);
}

static void test_io (void)
{
    flux_error_t error;
    const char *stream, *rank;
    char *data;
    size_t len;
    bool eof;
    json_t *o, *hdr;

    check_roundtrip ("ascii", "hello\n", 6, false);
    check_roundtrip ("utf-8", "\xc6\x92 ok\n", 6, false);
    check_roundtrip ("latin-1 byte", "caf\xe9\n", 5, true);
    check_roundtrip ("NUL byte", "a\0b", 3, true);
    check_roundtrip ("split sequence", "x\xc6", 2, true);
    check_roundtrip ("surrogate", "\xed\xa0\x80", 3, true);

    o = jobio_encode ("stdin", "all", NULL, 0, true);
    ok (o && json_object_get (o, "data") == NULL
            && json_is_true (json_object_get (o, "eof")),
        "eof only: no data, eof true");
    ok (jobio_decode (o, NULL, &stream, &rank, &data, &len, &eof, &error) == 0
            && data == NULL && len == 0 && eof && !strcmp (rank, "all"),
        "eof only decodes");
    json_decref (o);

    ok (jobio_encode ("stdin", "all", NULL, 3, false) == NULL,
        "encode: length without data fails");

    /* the header's default encoding applies when the event has none */
    o = json_pack ("{s:s s:s s:s}", "stream", "stdout", "rank", "0", "data",
                   "aGk=");
    hdr = json_pack ("{s:s s:s}", "stdout", "base64", "stderr", "UTF-8");
    ok (jobio_decode (o, hdr, &stream, &rank, &data, &len, &eof, &error) == 0
            && len == 2 && !memcmp (data, "hi", 2),
        "header encoding base64 is used");
    free (data);
    ok (jobio_decode (o, NULL, &stream, &rank, &data, &len, &eof, &error) == 0
            && len == 4 && !memcmp (data, "aGk=", 4),
        "without a header the data is text");
    free (data);
    json_decref (hdr);
    json_decref (o);

    o = json_pack ("{s:s s:s s:s s:s}", "stream", "stdout", "rank", "0", "data",
                   "!!!", "encoding", "base64");
    ok (jobio_decode (o, NULL, &stream, &rank, &data, &len, &eof, &error) < 0,
        "bad base64 fails");
    diag ("%s", error.text);
    json_decref (o);
    o = json_pack ("{s:s s:s s:s s:s}", "stream", "stdout", "rank", "0", "data",
                   "x", "encoding", "rot13");
    ok (jobio_decode (o, NULL, &stream, &rank, &data, &len, &eof, &error) < 0
            && strstr (error.text, "rot13"),
        "unknown encoding fails");
    json_decref (o);
    o = json_pack ("{s:s s:i}", "stream", "stdout", "rank", 0);
    ok (jobio_decode (o, NULL, &stream, &rank, &data, &len, &eof, &error) < 0,
        "integer rank fails");
    json_decref (o);
    o = json_pack ("{s:s s:s s:i}", "stream", "stdout", "rank", "0", "data", 3);
    ok (jobio_decode (o, NULL, &stream, &rank, &data, &len, &eof, &error) < 0,
        "integer data fails");
    json_decref (o);
    ok (jobio_decode (NULL, NULL, &stream, &rank, &data, &len, &eof, &error)
            < 0,
        "NULL context fails");
}

static void test_lines (void)
{
    flux_error_t error;
    json_t *o;
    char *s;
    int sev = -1;

    o = json_pack ("{s:i s:i s:s s:s s:s s:i}", "rank", 1, "level", 3,
                   "message", "oops", "component", "input", "file", "in.c",
                   "line", 42);
    s = jobio_log_line (o, 12.5, 10.0, false, &error);
    is (s, "2.500s: flux-shell[1]: ERROR: input: oops", "log line");
    free (s);
    s = jobio_log_line (o, 12.5, 10.0, true, &error);
    is (s, "2.500s: flux-shell[1]: ERROR: input: in.c:42: oops",
        "verbose log line has file:line");
    free (s);
    json_decref (o);

    o = json_pack ("{s:i s:s}", "level", 5, "message", "note");
    s = jobio_log_line (o, 1.0, 1.0, false, &error);
    is (s, "0.000s: flux-shell: note",
        "NOTICE without rank or component: no labels");
    free (s);
    json_decref (o);

    o = json_pack ("{s:i s:s}", "level", 8, "message", "x");
    ok (jobio_log_line (o, 1.0, 1.0, false, &error) == NULL,
        "level 8 is refused");
    json_decref (o);
    o = json_pack ("{s:s}", "message", "x");
    ok (jobio_log_line (o, 1.0, 1.0, false, &error) == NULL,
        "no level is refused");
    json_decref (o);

    o = json_pack ("{s:s s:i s:s}", "type", "cancel", "severity", 0, "note",
                   "interrupted by ctrl-C");
    s = jobio_exception_line (o, 3.25, 1.0, "f2", &sev, &error);
    is (s,
        "2.250s: job.exception f2 type=cancel severity=0 "
        "interrupted by ctrl-C",
        "exception line");
    cmp_ok (sev, "==", 0, "severity returned");
    free (s);
    json_decref (o);
    o = json_pack ("{s:s}", "type", "cancel");
    ok (jobio_exception_line (o, 1, 1, "f2", NULL, &error) == NULL,
        "exception without severity is refused");
    json_decref (o);
}

static void test_taskmap (void)
{
    json_t *o;

    o = json_pack ("{s:i s:[[iiii][iiii]]}", "version", 1, "map", 0, 2, 4, 1, 2,
                   1, 1, 3);
    cmp_ok (jobio_taskmap_ntasks (o), "==", 11, "2x4 + 1x1x3 = 11 tasks");
    json_decref (o);
    o = json_pack ("{s:i s:[[iii]]}", "version", 1, "map", 0, 1, 1);
    cmp_ok (jobio_taskmap_ntasks (o), "==", -1, "short entry is malformed");
    json_decref (o);
    o = json_pack ("{s:i s:[[iiii]]}", "version", 2, "map", 0, 1, 1, 1);
    cmp_ok (jobio_taskmap_ntasks (o), "==", -1, "version 2 is refused");
    json_decref (o);
    o = json_pack ("{s:i s:[[iiii]]}", "version", 1, "map", 0, 0, 1, 1);
    cmp_ok (jobio_taskmap_ntasks (o), "==", -1, "0 nodes is malformed");
    json_decref (o);
    o = json_pack ("{s:i s:[[iIII]]}", "version", 1, "map", 0,
                   (json_int_t)1 << 30, (json_int_t)1 << 30, (json_int_t)1);
    cmp_ok (jobio_taskmap_ntasks (o), "==", -1, "2^60 tasks is refused");
    json_decref (o);
    cmp_ok (jobio_taskmap_ntasks (NULL), "==", -1, "NULL is malformed");
}

int main (void)
{
    plan (NO_PLAN);
    test_exit_code ();
    test_io ();
    test_lines ();
    test_taskmap ();
    done_testing ();
    return 0;
}
