/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Unit tests for toml.c: each TOML 1.0 construct read into the JSON
 * expected, and each error with its line:column and reason.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toml.h"
#include "tap.h"

/* text parsed, as compact JSON with sorted keys, or "L:C: reason" */
static char *parse (const char *text, size_t len)
{
    toml_error_t error;
    json_t *o = toml_parse (text, len, &error);
    char *s;

    if (!o) {
        if (asprintf (&s, "%d:%d: %s%s", error.line, error.column, error.text,
                      errno == EINVAL ? "" : " (errno not EINVAL)")
            < 0)
            BAIL_OUT ("out of memory");
        return s;
    }
    s = json_dumps (o, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    json_decref (o);
    if (!s)
        BAIL_OUT ("json_dumps failed");
    return s;
}

/* text with control characters escaped, for a test's name (static) */
static const char *show (const char *text)
{
    static char out[512];
    size_t n = 0;

    for (const unsigned char *p = (const unsigned char *)text;
         *p && n + 5 < sizeof (out); p++) {
        if (*p < 0x20 || *p == 0x7f || *p == '#')
            n += (size_t)snprintf (out + n, sizeof (out) - n, "\\x%02x", *p);
        else
            out[n++] = (char)*p;
    }
    out[n] = '\0';
    return out;
}

static void good (const char *text, const char *expect)
{
    char *got = parse (text, strlen (text));
    ok (!strcmp (got, expect), "%s -> %s", show (text), expect);
    if (strcmp (got, expect))
        diag ("got %s", got);
    free (got);
}

/* expect is "L:C: reason" */
static void bad (const char *text, const char *expect)
{
    char *got = parse (text, strlen (text));
    ok (!strcmp (got, expect), "%s: error %s", show (text), expect);
    if (strcmp (got, expect))
        diag ("got %s", got);
    free (got);
}

static void test_tables (void)
{
    good ("", "{}");
    good ("# only a comment\n\n   \t\n", "{}");
    good ("a = 1\r\nb = 2\r\n", "{\"a\":1,\"b\":2}");
    good ("[t]\nk = 'v'\n", "{\"t\":{\"k\":\"v\"}}");
    good ("[ a . b . c ]\nx = 1\n", "{\"a\":{\"b\":{\"c\":{\"x\":1}}}}");
    good ("[a.b]\n[a]\nx = 1\n", "{\"a\":{\"b\":{},\"x\":1}}");
    good ("[\"q x\".'y z']\n", "{\"q x\":{\"y z\":{}}}");
    good ("a.b.c = 1\na.d = 2\n", "{\"a\":{\"b\":{\"c\":1},\"d\":2}}");
    good ("3.14 = 'pi'\n", "{\"3\":{\"14\":\"pi\"}}");
    good ("[f]\napple.color = 'red'\n[f.apple.texture]\nsmooth = true\n",
          "{\"f\":{\"apple\":{\"color\":\"red\",\"texture\":{\"smooth\":true}}}"
          "}");
    good ("[[p]]\nn = 1\n[[p]]\n[[p]]\nn = 3\n",
          "{\"p\":[{\"n\":1},{},{\"n\":3}]}");
    good ("[[f]]\nn = 'a'\n[f.x]\nc = 1\n[[f.v]]\nn = 'b'\n[[f]]\nn = 'c'\n",
          "{\"f\":[{\"n\":\"a\",\"v\":[{\"n\":\"b\"}],\"x\":{\"c\":1}},"
          "{\"n\":\"c\"}]}");
    good ("a = 1 # comment\n[t] # comment\n", "{\"a\":1,\"t\":{}}");
    good ("[a.b.c]\n[a]\nb.d = 1\n[a.b.e]\n",
          "{\"a\":{\"b\":{\"c\":{},\"d\":1,\"e\":{}}}}");
    good ("bare_key-1 = 1\n\"\" = 2\n", "{\"\":2,\"bare_key-1\":1}");
}

static void test_strings (void)
{
    good ("s = \"a\\tb\\n\\\"\\\\\\b\\f\\r\"",
          "{\"s\":\"a\\tb\\n\\\"\\\\\\b\\f\\r\"}");
    good ("s = \"\\u00e9\\U0001F600\"", "{\"s\":\"\xc3\xa9\xf0\x9f\x98\x80\"}");
    good ("s = \"\\u0000\"", "{\"s\":\"\\u0000\"}");
    good ("s = 'C:\\path\\\"x'", "{\"s\":\"C:\\\\path\\\\\\\"x\"}");
    good ("s = \"\"\"\nline1\nline2\"\"\"", "{\"s\":\"line1\\nline2\"}");
    good ("s = \"\"\"\r\none \\\n   \n  two\"\"\"", "{\"s\":\"one two\"}");
    good ("s = \"\"\"a \\   \r\n  b\"\"\"", "{\"s\":\"a b\"}");
    good ("s = \"\"\"q \"\" q\"\"\"\"\"", "{\"s\":\"q \\\"\\\" q\\\"\\\"\"}");
    good ("s = '''\nraw \\n 'x' ''\n'''", "{\"s\":\"raw \\\\n 'x' ''\\n\"}");
    good ("s = ''''x'''", "{\"s\":\"'x\"}");
    good ("s = \"tab\tok\"", "{\"s\":\"tab\\tok\"}");
    good ("s = \"\xc3\xa9t\xc3\xa9\"", "{\"s\":\"\xc3\xa9t\xc3\xa9\"}");
    good ("\"k\\u0041\" = 1", "{\"kA\":1}");
}

static void test_numbers (void)
{
    good ("a = 0\nb = +17\nc = -5\nd = 1_000_000",
          "{\"a\":0,\"b\":17,\"c\":-5,\"d\":1000000}");
    good ("a = 0xDEAD_beef\nb = 0o755\nc = 0b1101_0110",
          "{\"a\":3735928559,\"b\":493,\"c\":214}");
    good ("a = 9223372036854775807\nb = -9223372036854775808",
          "{\"a\":9223372036854775807,\"b\":-9223372036854775808}");
    good ("a = 0x7fffffffffffffff", "{\"a\":9223372036854775807}");
    good ("a = 3.5\nb = -0.25\nc = 5e+2\nd = 1E-2\ne = 6.5e0_1\nf = 1_0.2_5",
          "{\"a\":3.5,\"b\":-0.25,\"c\":500.0,\"d\":0.01,\"e\":65.0,"
          "\"f\":10.25}");
    good ("a = 0.0\nb = -0.0\nc = 0e0\nd = 1e007",
          "{\"a\":0.0,\"b\":-0.0,"
          "\"c\":0.0,\"d\":10000000.0}");
    good ("a = inf\nb = +inf\nc = -inf\nd = nan\ne = -nan\nf = +nan",
          "{\"a\":\"inf\",\"b\":\"inf\",\"c\":\"-inf\",\"d\":\"nan\","
          "\"e\":\"nan\",\"f\":\"nan\"}");
    good ("t = true\nf = false", "{\"f\":false,\"t\":true}");
}

static void test_dates (void)
{
    good ("a = 1979-05-27T07:32:00Z\nb = 1979-05-27T00:32:00-07:00\n"
          "c = 1979-05-27 00:32:00.999999+05:30",
          "{\"a\":\"1979-05-27T07:32:00Z\",\"b\":\"1979-05-27T00:32:00-07:00\","
          "\"c\":\"1979-05-27 00:32:00.999999+05:30\"}");
    good ("a = 1979-05-27T07:32:00\nb = 1979-05-27\nc = 07:32:00\n"
          "d = 00:32:00.5\ne = 2024-02-29 # leap",
          "{\"a\":\"1979-05-27T07:32:00\",\"b\":\"1979-05-27\","
          "\"c\":\"07:32:00\",\"d\":\"00:32:00.5\",\"e\":\"2024-02-29\"}");
    good ("a = [1979-05-27, 07:32:00]",
          "{\"a\":[\"1979-05-27\",\"07:32:00\"]}");
}

static void test_arrays (void)
{
    good ("a = []\nb = [ 1, 2, 3, ]\nc = [[1, 2], ['a', \"b\"]]",
          "{\"a\":[],\"b\":[1,2,3],\"c\":[[1,2],[\"a\",\"b\"]]}");
    good ("a = [1, 'two', 3.0, true, [], {x = 1}]",
          "{\"a\":[1,\"two\",3.0,true,[],{\"x\":1}]}");
    good ("a = [ # comment\n  1, # one\n\n  2 # two\n  , # c\n]",
          "{\"a\":[1,2]}");
}

static void test_inline (void)
{
    good ("t = {}\nu = { a = 1, b.c = 'x', b.d = [ 2 ] }",
          "{\"t\":{},\"u\":{\"a\":1,\"b\":{\"c\":\"x\",\"d\":[2]}}}");
    good ("p = { n = { f = 'T', l = 'P' } }",
          "{\"p\":{\"n\":{\"f\":\"T\",\"l\":\"P\"}}}");
    good ("hosts = [\n  { host = \"test[1-3]\" },\n  { host = \"x\", "
          "bind = \"tcp://eth0:8050\" },\n]",
          "{\"hosts\":[{\"host\":\"test[1-3]\"},"
          "{\"bind\":\"tcp://eth0:8050\",\"host\":\"x\"}]}");
}

static void test_redefinition (void)
{
    bad ("a = 1\na = 2", "2:1: a is defined twice");
    bad ("a = 1\n\"a\" = 2", "2:1: a is defined twice");
    bad ("[t]\n[t]", "2:2: table t is defined twice");
    bad ("[t.x]\n[t]\n[t]", "3:2: table t is defined twice");
    bad ("[f]\napple.color = 1\n[f.apple]",
         "3:2: table f.apple is defined twice (first by dotted keys)");
    bad ("a.b = 1\n[a]",
         "2:2: table a is defined twice (first by dotted keys)");
    bad (
        "[a.b.c]\nz = 9\n[a]\nb.c.t = 1",
        "4:1: b.c is already defined as a table: dotted keys cannot add to it");
    bad ("[a.b.c.d]\nz = 9\n[a]\nb.c.d.k.t = 1",
         "4:1: b.c.d is already defined as a table: dotted keys cannot add to "
         "it");
    bad ("[a.b.c]\n[a]\nb.d = 1\n[a.b]",
         "4:2: table a.b is defined twice (first by dotted keys)");
    bad ("[t]\nx = 1\n[t.x]", "3:2: t.x is already defined as a value");
    bad ("a = 1\na.b = 2", "2:1: a is already defined as a value");
    bad ("a = {b = 1}\na.c = 2",
         "2:1: a is already defined as a table: dotted keys cannot add to it");
    bad ("a = {b = 1}\n[a]",
         "2:2: table a is defined twice (first as an inline table)");
    bad ("a = {b = 1}\n[a.c]",
         "2:2: a is an inline table: it cannot be extended");
    bad ("a = {b = 1, b = 2}", "1:13: b is defined twice");
    bad ("a = [1]\n[[a]]", "2:3: a is already defined and is not an array of "
                           "tables");
    bad ("[[a]]\n[a]", "2:2: a is already defined as an array of tables");
    bad ("[a]\n[[a]]", "2:3: a is already defined and is not an array of "
                       "tables");
    bad ("a = [{b = 1}]\n[a.c]", "2:2: a is already defined as a value");
}

static void test_errors (void)
{
    bad ("a = ", "1:5: expected a value");
    bad ("a", "1:2: expected '=' after a key");
    bad ("= 1", "1:1: expected a key");
    bad ("a = 1 b = 2", "1:7: expected the end of the line after a key/value");
    bad ("a = 1\n\nb = \"open", "3:5: an unterminated string");
    bad ("a = \"x\ny\"", "1:5: an unterminated string");
    bad ("a = 'x\ny'", "1:5: an unterminated string");
    bad ("a = \"\"\"x", "1:5: an unterminated string");
    bad ("a = \"\\q\"", "1:6: an invalid escape sequence");
    bad ("a = \"\\e\"", "1:6: an invalid escape sequence");
    bad ("a = \"\\u12\"", "1:6: \\u needs 4 hexadecimal digits");
    bad ("a = \"\\uD800\"", "1:6: \\uD800 is not a Unicode scalar value");
    bad ("a = \"\\U00110000\"",
         "1:6: \\U00110000 is not a Unicode scalar value");
    bad ("a = \"x\x01\"", "1:7: a control character in a string");
    bad ("a = 'x\x7f'", "1:7: a control character in a string");
    bad ("# c \x01\n", "1:5: a control character in a comment");
    bad ("a = \"\"\"x\"\"\"\"\"\"",
         "1:9: too many quotes at the end of a string");
    bad ("\"\"\"k\"\"\" = 1", "1:1: a multi-line string cannot be a key");
    bad ("\"\\u0000\" = 1", "1:1: a key may not contain U+0000");
    bad ("a = 1\rb = 2", "1:6: a carriage return not followed by a newline");
    bad ("a = 'x\xc3'", "1:7: invalid UTF-8");
    bad ("a = '\xc0\xaf'", "1:6: invalid UTF-8");
    bad ("a = '\xed\xa0\x80'", "1:6: invalid UTF-8");
    bad ("a = 01", "1:5: a leading zero in a number");
    bad ("a = -01.5", "1:5: a leading zero in a number");
    bad ("a = 0_1", "1:5: a leading zero in a number");
    bad ("a = 1__0", "1:5: an invalid number");
    bad ("a = 1_", "1:5: an invalid number");
    bad ("a = _1", "1:5: an invalid value");
    bad ("a = 1.", "1:5: an invalid number");
    bad ("a = .5", "1:5: an invalid value");
    bad ("a = 1e", "1:5: an invalid number");
    bad ("a = 1.2.3", "1:5: an invalid number");
    bad ("a = 0xG", "1:5: an invalid number");
    bad ("a = 0b102", "1:5: an invalid number");
    bad ("a = +0x10", "1:5: a sign before a hexadecimal integer");
    bad ("a = 9223372036854775808", "1:5: an integer out of range");
    bad ("a = -9223372036854775809", "1:5: an integer out of range");
    bad ("a = 0x8000000000000000", "1:5: an integer out of range");
    bad ("a = 1e400", "1:5: a float out of range");
    bad ("a = infinity", "1:5: an invalid number");
    bad ("a = True", "1:5: an invalid value");
    bad ("a = truely", "1:5: an invalid value");
    bad ("a = 1979-13-01", "1:5: an invalid date");
    bad ("a = 2023-02-29", "1:5: an invalid date");
    bad ("a = 1979-05-27T25:00:00", "1:5: an invalid time");
    bad ("a = 1979-05-27T07:32", "1:5: an invalid time");
    bad ("a = 07:32:00.", "1:5: an invalid time");
    bad ("a = 1979-05-27T07:32:00+7:00", "1:5: an invalid time offset");
    bad ("a = 1979-05-27x", "1:5: an invalid date or time");
    bad ("a = [1 2]", "1:8: expected ',' or ']' in an array");
    bad ("a = [1,,2]", "1:8: an invalid value");
    bad ("a = [1,\n2", "2:2: an unterminated array");
    bad ("a = {b = 1,}", "1:12: a trailing comma in an inline table");
    bad ("a = {b = 1\n}", "1:11: expected ',' or '}' in an inline table");
    bad ("a = {b = 1 c = 2}", "1:12: expected ',' or '}' in an inline table");
    bad ("[a", "1:3: expected ']' to end a table header");
    bad ("[[a]", "1:4: expected ']]' to end a table header");
    bad ("[[a] ]", "1:4: expected ']]' to end a table header");
    bad ("[]", "1:2: expected a key");
    bad ("[a] b = 1", "1:5: expected the end of the line after a table header");
    bad ("a.", "1:3: expected a key");
    bad ("a = 'x' 'y'", "1:9: expected the end of the line after a key/value");
}

static void test_limits (void)
{
    char deep[4 * TOML_MAX_DEPTH + 16], *p = deep;
    char *got;

    p += sprintf (p, "a = ");
    for (int i = 0; i < TOML_MAX_DEPTH - 1; i++)
        *p++ = '[';
    for (int i = 0; i < TOML_MAX_DEPTH - 1; i++)
        *p++ = ']';
    *p = '\0';
    got = parse (deep, strlen (deep));
    ok (got[0] == '{', "arrays nested %d deep are read", TOML_MAX_DEPTH - 1);
    free (got);

    p = deep + sprintf (deep, "a = ");
    for (int i = 0; i < TOML_MAX_DEPTH + 1; i++)
        *p++ = '[';
    *p = '\0';
    got = parse (deep, strlen (deep));
    ok (strstr (got, "nested more than 100 deep") != NULL,
        "arrays nested deeper are refused: %s", got);
    free (got);

    p = deep + sprintf (deep, "a = ");
    for (int i = 0; i < TOML_MAX_DEPTH + 1; i++)
        p += sprintf (p, "{b=");
    got = parse (deep, strlen (deep));
    ok (strstr (got, "nested more than 100 deep") != NULL,
        "inline tables nested deeper are refused: %s", got);
    free (got);

    p = deep;
    *p++ = '[';
    for (int i = 0; i < TOML_MAX_DEPTH + 1; i++)
        p += sprintf (p, "a.");
    sprintf (p, "a]");
    got = parse (deep, strlen (deep));
    ok (strstr (got, "a key of more than 100 parts") != NULL,
        "a header of too many parts is refused: %s", got);
    free (got);

    got = parse ("a = 1\0b = 2", 11);
    ok (!strcmp (got, "1:6: a NUL byte"), "a NUL byte is refused: %s", got);
    free (got);

    json_t *o = toml_parse (NULL, 0, NULL);
    ok (o && json_object_size (o) == 0, "NULL text of length 0 is empty");
    json_decref (o);
    errno = 0;
    ok (!toml_parse ("a =", 3, NULL) && errno == EINVAL,
        "an error without an error buffer: EINVAL");
    got = parse ("x = 1\n  y = 'a\xc3\xa9\xc3\xa9' z", 21);
    ok (!strcmp (got, "2:13: expected the end of the line after a key/value"),
        "columns count characters, not bytes: %s", got);
    free (got);
}

int main (void)
{
    plan (NO_PLAN);
    test_tables ();
    test_strings ();
    test_numbers ();
    test_dates ();
    test_arrays ();
    test_inline ();
    test_redefinition ();
    test_errors ();
    test_limits ();
    done_testing ();
    return 0;
}
