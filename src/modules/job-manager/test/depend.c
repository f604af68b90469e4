/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/depend.c - RFC 26 dependency parsing */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "depend.h"
#include "raise.h"
#include "tap.h"

static int parse (const char *json, struct depinfo *info, flux_error_t *e)
{
    json_t *o = json_loads (json, 0, NULL);
    int rc;

    if (!o)
        BAIL_OUT ("bad test json %s", json);
    rc = depend_parse (o, info, e);
    json_decref (o);
    return rc;
}

int main (int argc, char **argv)
{
    struct depinfo info;
    flux_error_t e;

    plan (NO_PLAN);
    ok (parse ("{\"scheme\":\"afterany\",\"value\":\"f2oLkTLb\"}", &info, &e)
                == 0
            && info.scheme == DEP_AFTERANY,
        "afterany with an F58 id");
    is (info.desc, "afterany=f2oLkTLb", "description is scheme=value");
    ok (parse ("{\"scheme\":\"after\",\"value\":\"1234\"}", &info, &e) == 0
            && info.scheme == DEP_AFTER && info.id == 1234,
        "after with a decimal id");
    ok (parse ("{\"scheme\":\"afterok\",\"value\":\"0x10\"}", &info, &e) == 0
            && info.scheme == DEP_AFTEROK && info.id == 16,
        "afterok with a hex id");
    ok (parse ("{\"scheme\":\"afternotok\",\"value\":\"0000.0000.0000.0011\"}",
               &info, &e)
                == 0
            && info.scheme == DEP_AFTERNOTOK && info.id == 17,
        "afternotok with a dothex id");
    ok (parse ("{\"scheme\":\"after\",\"value\":\"job.0000.0000.0000.0011\","
               "\"extra\":1}",
               &info, &e)
                == 0
            && info.id == 17,
        "a kvs-form id, and extra keys, are accepted");
    ok (parse ("{\"scheme\":\"begin-time\",\"value\":\"1700000000.5\"}", &info,
               &e)
                == 0
            && info.scheme == DEP_BEGIN_TIME && info.begin == 1700000000.5,
        "begin-time with a string timestamp");
    is (info.desc, "begin-time=1700000000.5", "its description");
    ok (parse ("{\"scheme\":\"begin-time\",\"value\":12.25}", &info, &e) == 0
            && info.begin == 12.25,
        "begin-time with a number");
    ok (parse ("{\"scheme\":\"begin-time\",\"value\":\"soon\"}", &info, &e) < 0
            && errno == EINVAL,
        "begin-time with a bad timestamp fails");
    is (e.text, "begin-time: invalid timestamp \"soon\"", "and says why");
    ok (parse ("{\"scheme\":\"begin-time\",\"value\":\"-5\"}", &info, &e) < 0,
        "a negative begin-time fails");
    ok (parse ("{\"scheme\":\"afterok\",\"value\":\"not-an-id\"}", &info, &e)
            < 0,
        "afterok with a bad id fails");
    is (e.text, "afterok: invalid job id \"not-an-id\"", "and says why");
    ok (parse ("{\"scheme\":\"after\",\"value\":\"\"}", &info, &e) < 0,
        "an empty id fails");
    ok (parse ("{\"scheme\":\"string\",\"value\":\"x\"}", &info, &e) < 0,
        "an unsupported scheme fails");
    is (e.text, "dependency scheme \"string\" is not supported",
        "and says which");
    ok (parse ("{\"scheme\":\"after\"}", &info, &e) < 0
            && parse ("{\"value\":\"1\"}", &info, &e) < 0
            && parse ("[\"after\",\"1\"]", &info, &e) < 0
            && parse ("{\"scheme\":1,\"value\":\"1\"}", &info, &e) < 0
            && parse ("{\"scheme\":\"after\",\"value\":[1]}", &info, &e) < 0,
        "malformed dependency objects fail");

    ok (raise_type_valid ("cancel") && raise_type_valid ("my-type"),
        "exception types: plain words are valid");
    ok (!raise_type_valid ("") && !raise_type_valid ("a b")
            && !raise_type_valid ("a=b") && !raise_type_valid ("a\tb")
            && !raise_type_valid (NULL),
        "empty, whitespace, '=' are not");
    done_testing ();
    return 0;
}
