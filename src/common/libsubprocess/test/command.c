/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/command.c - flux_cmd_t, its JSON form and its decoder's errors,
 * the buffer options, and I/O objects. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "libsubprocess/subprocess.h"
#include "tap.h"

static void test_build (void)
{
    char *argv[] = {"echo", "hi", NULL};
    char *env[] = {"A=1", "B=x=y", "junk", NULL};
    flux_cmd_t *cmd, *cpy;
    char **e;

    ok ((cmd = flux_cmd_create (2, argv, env)) != NULL, "flux_cmd_create");
    cmp_ok (flux_cmd_argc (cmd), "==", 2, "argc 2");
    is (flux_cmd_arg (cmd, 1), "hi", "arg 1");
    ok (flux_cmd_arg (cmd, 2) == NULL, "arg past the end is NULL");
    is (flux_cmd_getenv (cmd, "B"), "x=y", "env value with =");
    cmp_ok (flux_cmd_env_count (cmd), "==", 2, "a word without = is left out");
    ok (flux_cmd_setenv (cmd, "A", "2", false) == 0
            && !strcmp (flux_cmd_getenv (cmd, "A"), "1"),
        "setenv without overwrite keeps the value");
    ok (flux_cmd_setenv (cmd, "A", "2", true) == 0
            && !strcmp (flux_cmd_getenv (cmd, "A"), "2"),
        "setenv with overwrite replaces it");
    flux_cmd_unsetenv (cmd, "A");
    ok (flux_cmd_getenv (cmd, "A") == NULL, "unsetenv");
    ok ((e = flux_cmd_env_expand (cmd)) && e[0] && !strcmp (e[0], "B=x=y")
            && !e[1],
        "env_expand");
    flux_cmd_env_free (e);
    ok (flux_cmd_add_channel (cmd, "CH") == 0, "add_channel");
    errno = 0;
    ok (flux_cmd_add_channel (cmd, "CH") < 0 && errno == EEXIST,
        "a channel twice: EEXIST");
    errno = 0;
    ok (flux_cmd_set_label (cmd, "") < 0 && errno == EINVAL,
        "an empty label: EINVAL");
    ok (flux_cmd_set_label (cmd, "L") == 0 && flux_cmd_setcwd (cmd, "/tmp") == 0
            && flux_cmd_setopt (cmd, "stdout_BUFSIZE", "8") == 0,
        "label, cwd, opt");
    ok ((cpy = flux_cmd_copy (cmd)) && !strcmp (flux_cmd_getcwd (cpy), "/tmp")
            && !strcmp (flux_cmd_get_label (cpy), "L")
            && !strcmp (flux_cmd_channel (cpy, 0), "CH")
            && !strcmp (flux_cmd_getopt (cpy, "stdout_BUFSIZE"), "8"),
        "copy keeps everything");
    flux_cmd_destroy (cpy);
    flux_cmd_destroy (cmd);
}

static void test_json (void)
{
    char *argv[] = {"ls", NULL};
    flux_cmd_t *cmd, *cmd2;
    json_t *o;
    flux_error_t error;

    cmd = flux_cmd_create (0, NULL, NULL);
    ok ((o = flux_cmd_tojson (cmd)) != NULL, "tojson of an empty command");
    ok (!json_object_get (o, "cmdline") && !json_object_get (o, "env")
            && json_is_object (json_object_get (o, "opts"))
            && json_is_array (json_object_get (o, "channels"))
            && json_is_array (json_object_get (o, "msgchan"))
            && !json_object_get (o, "cwd") && !json_object_get (o, "label"),
        "empty cmdline and env are left out, opts channels msgchan are not");
    errno = 0;
    ok (!flux_cmd_fromjson (o, &error) && errno == EPROTO
            && !strcmp (error.text, "error parsing command string"),
        "decoding it fails: error parsing command string");
    json_object_set_new (o, "cmdline", json_array ());
    json_object_set_new (o, "env", json_object ());
    errno = 0;
    ok (!flux_cmd_fromjson (o, &error) && errno == EPROTO
            && !strcmp (error.text, "command string is empty"),
        "an empty cmdline: command string is empty");
    json_decref (o);
    flux_cmd_destroy (cmd);

    cmd = flux_cmd_create (1, argv, NULL);
    flux_cmd_setenv (cmd, "X", "1", true);
    flux_cmd_setcwd (cmd, "/");
    flux_cmd_set_label (cmd, "lab");
    flux_cmd_add_channel (cmd, "PMI_FD");
    o = flux_cmd_tojson (cmd);
    ok ((cmd2 = flux_cmd_fromjson (o, &error)) != NULL, "round trip decodes");
    ok (cmd2 && !strcmp (flux_cmd_arg (cmd2, 0), "ls")
            && !strcmp (flux_cmd_getenv (cmd2, "X"), "1")
            && !strcmp (flux_cmd_getcwd (cmd2), "/")
            && !strcmp (flux_cmd_get_label (cmd2), "lab")
            && !strcmp (flux_cmd_channel (cmd2, 0), "PMI_FD"),
        "round trip keeps every field");
    flux_cmd_destroy (cmd2);
    json_object_set_new (o, "unknown", json_integer (1));
    ok ((cmd2 = flux_cmd_fromjson (o, NULL)) != NULL,
        "unknown keys are ignored");
    flux_cmd_destroy (cmd2);
    json_decref (o);
    flux_cmd_destroy (cmd);

    const char *bad[] = {
        "{}",
        "{\"cmdline\":[\"a\"],\"env\":{},\"opts\":{}}",
        "{\"cmdline\":[1],\"env\":{},\"opts\":{},\"channels\":[]}",
        "{\"cmdline\":\"a\",\"env\":{},\"opts\":{},\"channels\":[]}",
        "{\"cmdline\":[\"a\"],\"env\":{\"A\":1},\"opts\":{},\"channels\":[]}",
        "{\"cmdline\":[\"a\"],\"env\":{},\"opts\":[],\"channels\":[]}",
        "{\"cmdline\":[\"a\"],\"env\":{},\"opts\":{},\"channels\":[2]}",
        "{\"cmdline\":[\"a\"],\"env\":{},\"opts\":{},\"channels\":[\"a=b\"]}",
        "{\"cmdline\":[\"a\"],\"env\":{},\"opts\":{},\"channels\":[\"C\",\"C\"]"
        "}",
        "{\"cmdline\":[\"a\"],\"env\":{},\"opts\":{},\"channels\":[],"
        "\"cwd\":1}",
        "{\"cmdline\":[\"a\"],\"env\":{},\"opts\":{},\"channels\":[],"
        "\"label\":\"\"}",
        "{\"cmdline\":[\"a\"],\"env\":{},\"opts\":{},\"channels\":[],"
        "\"msgchan\":[{\"name\":\"x\"}]}",
        NULL,
    };
    for (int i = 0; bad[i]; i++) {
        json_t *b = json_loads (bad[i], 0, NULL);
        errno = 0;
        ok (b && !flux_cmd_fromjson (b, &error) && errno == EPROTO
                && !strcmp (error.text, "error parsing command string"),
            "rejected with EPROTO: %s", bad[i]);
        json_decref (b);
    }
    ok (!flux_cmd_fromjson (NULL, NULL) && errno == EPROTO, "NULL: EPROTO");
}

static void test_opts (void)
{
    char *argv[] = {"x", NULL};
    flux_cmd_t *cmd = flux_cmd_create (1, argv, NULL);
    int size;
    bool line;
    struct {
        const char *s;
        int size;
        int errnum;
    } t[] = {
        {"4096", 4096, 0},    {"64k", 65536, 0},
        {"2M", 2097152, 0},   {"1G", 1073741824, 0},
        {"0", 0, EINVAL},     {"-1", 0, EINVAL},
        {"12x", 0, EINVAL},   {"", 0, EINVAL},
        {"2G", 0, EOVERFLOW}, {"99999999999999999999", 0, EOVERFLOW},
    };

    ok (subprocess_cmd_bufsize (cmd, "stdin", &size, NULL) == 0
            && size == SUBPROCESS_DEFAULT_BUFSIZE,
        "BUFSIZE defaults to 4 MiB");
    for (size_t i = 0; i < sizeof (t) / sizeof (t[0]); i++) {
        flux_cmd_setopt (cmd, "stdin_BUFSIZE", t[i].s);
        errno = 0;
        size = -1;
        int rc = subprocess_cmd_bufsize (cmd, "stdin", &size, NULL);
        if (t[i].errnum == 0)
            ok (rc == 0 && size == t[i].size, "BUFSIZE %s is %d", t[i].s,
                t[i].size);
        else
            ok (rc < 0 && errno == t[i].errnum, "BUFSIZE '%s' fails with %s",
                t[i].s, strerror (t[i].errnum));
    }
    ok (subprocess_cmd_line_buffer (cmd, "stdout", &line, NULL) == 0 && line,
        "LINE_BUFFER defaults to true");
    flux_cmd_setopt (cmd, "stdout_LINE_BUFFER", "false");
    ok (subprocess_cmd_line_buffer (cmd, "stdout", &line, NULL) == 0 && !line,
        "LINE_BUFFER false");
    flux_cmd_setopt (cmd, "stdout_LINE_BUFFER", "no");
    errno = 0;
    ok (subprocess_cmd_line_buffer (cmd, "stdout", &line, NULL) < 0
            && errno == EINVAL,
        "LINE_BUFFER no: EINVAL");
    flux_cmd_destroy (cmd);
}

static void test_io (void)
{
    json_t *io;
    const char *stream, *rank;
    char *data;
    size_t len;
    bool eof;
    const char bin[] = {'a', (char)0xff, 'b', '\n'};

    ok (subprocess_utf8_valid ("h\xc3\xa9llo", 6), "UTF-8 accepted");
    ok (!subprocess_utf8_valid ("\xff", 1), "0xff refused");
    ok (!subprocess_utf8_valid ("\xc0\xaf", 2), "overlong refused");
    ok (!subprocess_utf8_valid ("\xed\xa0\x80", 3), "surrogate refused");
    ok (!subprocess_utf8_valid ("\xc3", 1), "truncated refused");

    io = subprocess_io_encode ("stdout", "3", "hi\n", 3, false);
    ok (io && !strcmp (json_string_value (json_object_get (io, "data")), "hi\n")
            && !json_object_get (io, "encoding")
            && !strcmp (json_string_value (json_object_get (io, "rank")), "3")
            && !json_object_get (io, "eof"),
        "UTF-8 data is a plain string");
    json_decref (io);
    io = subprocess_io_encode ("stderr", "0", bin, sizeof (bin), true);
    ok (io
            && !strcmp (json_string_value (json_object_get (io, "encoding")),
                        "base64")
            && json_is_true (json_object_get (io, "eof")),
        "other bytes are base64, with eof");
    ok (subprocess_io_decode (io, &stream, &rank, &data, &len, &eof) == 0
            && !strcmp (stream, "stderr") && len == sizeof (bin)
            && !memcmp (data, bin, len) && eof,
        "and decode back to the same bytes");
    free (data);
    json_decref (io);
    io = json_pack ("{s:s s:s s:s s:s}", "stream", "stdout", "rank", "0",
                    "data", "!!!", "encoding", "base64");
    errno = 0;
    ok (subprocess_io_decode (io, NULL, NULL, &data, &len, NULL) < 0
            && errno == EPROTO,
        "bad base64: EPROTO");
    json_decref (io);
    io = json_pack ("{s:s s:s}", "stream", "stdout", "rank", "0");
    ok (subprocess_io_decode (io, NULL, NULL, &data, &len, &eof) == 0
            && data == NULL && len == 0 && !eof,
        "no data, no eof");
    json_decref (io);
    io = json_pack ("{s:s s:i}", "stream", "stdout", "rank", 0);
    errno = 0;
    ok (subprocess_io_decode (io, NULL, NULL, NULL, NULL, NULL) < 0
            && errno == EPROTO,
        "rank not a string: EPROTO");
    json_decref (io);
}

int main (int argc, char **argv)
{
    plan (NO_PLAN);
    test_build ();
    test_json ();
    test_opts ();
    test_io ();
    done_testing ();
    return 0;
}
