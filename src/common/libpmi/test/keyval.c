/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/keyval.c - PMI-1 protocol line parsing */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "libpmi/keyval.h"
#include "tap.h"

/* Look up key in kv and compare with exp (NULL: expect ENOENT). */
static void check_str (const struct keyval *kv, const char *key,
                       const char *exp)
{
    const char *val = NULL;
    errno = 0;
    int rc = keyval_get_str (kv, key, &val);
    if (exp)
        ok (rc == 0 && val && !strcmp (val, exp), "%s=%s", key, exp);
    else
        ok (rc < 0 && errno == ENOENT, "%s absent: ENOENT", key);
}

static void test_basic (void)
{
    struct keyval *kv;

    kv = keyval_parse ("cmd=put kvsname=kvs_0 key=k1 value=v1\n");
    ok (kv != NULL, "parse a put request");
    cmp_ok (keyval_count (kv), "==", 4, "4 tuples");
    check_str (kv, "cmd", "put");
    check_str (kv, "kvsname", "kvs_0");
    check_str (kv, "key", "k1");
    check_str (kv, "value", "v1");
    check_str (kv, "msg", NULL);
    check_str (kv, "valu", NULL);
    check_str (kv, "Cmd", NULL);
    keyval_destroy (kv);

    kv = keyval_parse ("cmd=barrier_in");
    ok (kv != NULL && keyval_count (kv) == 1, "newline is optional");
    check_str (kv, "cmd", "barrier_in");
    keyval_destroy (kv);

    /* the caller's buffer is not referenced after parsing */
    char line[] = "cmd=get key=abc\n";
    kv = keyval_parse (line);
    memset (line, 'x', sizeof (line) - 1);
    check_str (kv, "key", "abc");
    keyval_destroy (kv);
}

static void test_order_and_extras (void)
{
    const char *lines[] = {
        "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n",
        "cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=1\n",
        "pmi_subversion=1 rc=0 cmd=response_to_init pmi_version=1\n",
        "  cmd=response_to_init\t rc=0   pmi_version=1 pmi_subversion=1  \n",
        "cmd=response_to_init rc=0 msg=success pmi_version=1 x-y.z=/a/b "
        "pmi_subversion=1\n",
    };
    for (size_t i = 0; i < sizeof (lines) / sizeof (lines[0]); i++) {
        struct keyval *kv = keyval_parse (lines[i]);
        int v = -1, sv = -1, rc = -1;
        const char *cmd = NULL;
        ok (kv != NULL && keyval_get_str (kv, "cmd", &cmd) == 0
                && !strcmp (cmd, "response_to_init")
                && keyval_get_int (kv, "rc", &rc) == 0 && rc == 0
                && keyval_get_int (kv, "pmi_version", &v) == 0 && v == 1
                && keyval_get_int (kv, "pmi_subversion", &sv) == 0 && sv == 1,
            "order/blank/extra-key variant %zu parses the same", i);
        keyval_destroy (kv);
    }
    struct keyval *kv = keyval_parse (lines[4]);
    cmp_ok (keyval_count (kv), "==", 6, "extra keys are kept");
    check_str (kv, "x-y.z", "/a/b");
    keyval_destroy (kv);
}

static void test_values (void)
{
    struct keyval *kv;

    kv = keyval_parse ("cmd=get_result rc=0 value=\n");
    ok (kv != NULL, "empty value at end of line parses");
    check_str (kv, "value", "");
    keyval_destroy (kv);

    kv = keyval_parse ("cmd=put value= key=k\n");
    ok (kv != NULL, "empty value mid-line parses");
    check_str (kv, "value", "");
    check_str (kv, "key", "k");
    keyval_destroy (kv);

    kv = keyval_parse ("cmd=put key=k value=a=b==c\n");
    ok (kv != NULL, "value containing '=' parses");
    check_str (kv, "value", "a=b==c");
    keyval_destroy (kv);

    kv = keyval_parse ("value=(vector,(0,4,2)) x=\\back\\slash");
    check_str (kv, "value", "(vector,(0,4,2))");
    check_str (kv, "x", "\\back\\slash");
    keyval_destroy (kv);

    kv = keyval_parse ("kvsname=\xc6\x92"
                       "4Zz key=k");
    ok (kv != NULL, "UTF-8 bytes accepted");
    check_str (kv, "kvsname",
               "\xc6\x92"
               "4Zz");
    keyval_destroy (kv);
}

static void test_tail (void)
{
    const char *tails[] = {"error_msg", "message", NULL};
    struct keyval *kv;

    kv = keyval_parse_tail ("cmd=abort exitcode=3 error_msg=it broke  "
                            "badly: x=y \n",
                            tails);
    ok (kv != NULL, "tail key: blanks allowed in its value");
    check_str (kv, "error_msg", "it broke  badly: x=y");
    check_str (kv, "exitcode", "3");
    check_str (kv, "x", NULL);
    cmp_ok (keyval_count (kv), "==", 3, "tail ends the tuples");
    keyval_destroy (kv);

    kv = keyval_parse_tail ("cmd=abort message=a b", tails);
    check_str (kv, "message", "a b");
    keyval_destroy (kv);

    kv = keyval_parse_tail ("cmd=abort error_msg=", tails);
    check_str (kv, "error_msg", "");
    keyval_destroy (kv);

    errno = 0;
    ok (keyval_parse_tail ("cmd=abort error_msg=a\rb", tails) == NULL
            && errno == EPROTO,
        "tail value still may not hold control characters");
    errno = 0;
    ok (keyval_parse ("cmd=abort error_msg=a b") == NULL && errno == EPROTO,
        "without tail keys, a blank ends the value: EPROTO");
    errno = 0;
    ok (keyval_parse_tail ("cmd=abort msg=a b", tails) == NULL
            && errno == EPROTO,
        "only the named keys are tails");
}

static void test_malformed (void)
{
    const char *bad[] = {
        "",           "\n",           "   \n",         " \t ",
        "cmd",        "cmd\n",        "cmd=put key",   "=value",
        "cmd=get =x", "cmd=a cmd=b",  "cmd=a x=1 x=1", "cmd=a\nb=c",
        "cmd=a\n\n",  "cmd=a\r\n",    "cmd=a\x01 b=c", "cmd=a b=\x7f",
        "cmd=a\vb=c", "cmd=a b=c\nd",
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        char desc[64];
        snprintf (desc, sizeof (desc), "%s", bad[i]);
        for (char *p = desc; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                *p = '?';
        errno = 0;
        struct keyval *kv = keyval_parse (bad[i]);
        ok (kv == NULL && errno == EPROTO, "malformed \"%s\": EPROTO", desc);
        keyval_destroy (kv);
    }
    errno = 0;
    ok (keyval_parse (NULL) == NULL && errno == EINVAL, "NULL line: EINVAL");
}

static void test_int (void)
{
    struct keyval *kv = keyval_parse (
        "a=0 b=-1 c=+42 d=2147483647 e=-2147483648 f=2147483648 "
        "g=-2147483649 h=1x i= j=- k=0x10 l=1.5 m=99999999999999999999 "
        "n=007");
    int v;

    ok (kv != NULL, "parsed integer test line");
    v = 5;
    ok (keyval_get_int (kv, "a", &v) == 0 && v == 0, "a=0");
    ok (keyval_get_int (kv, "b", &v) == 0 && v == -1, "b=-1");
    ok (keyval_get_int (kv, "c", &v) == 0 && v == 42, "c=+42");
    ok (keyval_get_int (kv, "d", &v) == 0 && v == INT_MAX, "INT_MAX");
    ok (keyval_get_int (kv, "e", &v) == 0 && v == INT_MIN, "INT_MIN");
    ok (keyval_get_int (kv, "n", &v) == 0 && v == 7, "leading zeros");
    const char *bad[] = {"f", "g", "h", "i", "j", "k", "l", "m"};
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        const char *s = "";
        keyval_get_str (kv, bad[i], &s);
        v = 12345;
        errno = 0;
        ok (keyval_get_int (kv, bad[i], &v) < 0 && errno == EPROTO
                && v == 12345,
            "%s=%s: EPROTO, output untouched", bad[i], s);
    }
    errno = 0;
    ok (keyval_get_int (kv, "zz", &v) < 0 && errno == ENOENT,
        "missing int: ENOENT");
    errno = 0;
    ok (keyval_get_int (kv, "a", NULL) < 0 && errno == EINVAL,
        "NULL output: EINVAL");
    keyval_destroy (kv);
}

static void test_args (void)
{
    struct keyval *kv = keyval_parse ("cmd=x");
    const char *s;

    errno = 0;
    ok (keyval_get_str (NULL, "cmd", &s) < 0 && errno == EINVAL,
        "get_str NULL kv: EINVAL");
    errno = 0;
    ok (keyval_get_str (kv, NULL, &s) < 0 && errno == EINVAL,
        "get_str NULL key: EINVAL");
    errno = 0;
    ok (keyval_get_str (kv, "cmd", NULL) < 0 && errno == EINVAL,
        "get_str NULL val: EINVAL");
    errno = 0;
    ok (keyval_count (NULL) < 0 && errno == EINVAL, "count NULL: EINVAL");
    errno = 42;
    keyval_destroy (kv);
    keyval_destroy (NULL);
    ok (errno == 42, "destroy preserves errno and accepts NULL");
}

static void test_valid (void)
{
    ok (keyval_valid_word ("kvs_1"), "word: kvs_1");
    ok (keyval_valid_word ("a.b-c/d:e"), "word: punctuation");
    ok (!keyval_valid_word (""), "word: empty rejected");
    ok (!keyval_valid_word ("a=b"), "word: '=' rejected");
    ok (!keyval_valid_word ("a b"), "word: space rejected");
    ok (!keyval_valid_word ("a\tb"), "word: tab rejected");
    ok (!keyval_valid_word ("a\n"), "word: newline rejected");
    ok (!keyval_valid_word (NULL), "word: NULL rejected");
    ok (keyval_valid_value (""), "value: empty ok");
    ok (keyval_valid_value ("a=b"), "value: '=' ok");
    ok (!keyval_valid_value ("a b"), "value: space rejected");
    ok (!keyval_valid_value ("a\x7f"), "value: DEL rejected");
    ok (!keyval_valid_value ("\r"), "value: CR rejected");
    ok (!keyval_valid_value (NULL), "value: NULL rejected");
}

int main (int argc, char *argv[])
{
    plan (NO_PLAN);
    test_basic ();
    test_order_and_extras ();
    test_values ();
    test_tail ();
    test_malformed ();
    test_int ();
    test_args ();
    test_valid ();
    done_testing ();
    return 0;
}
