/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Unit tests for strsubst.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "strsubst.h"
#include "tap.h"

static void check (const char *s, const char *token, const char *value,
                   const char *expect)
{
    char *out = strsubst (s, token, value);

    ok (out && !strcmp (out, expect), "'%s' with %s -> '%s': '%s'", s, token,
        value, out ? out : "(null)");
    free (out);
}

int main (void)
{
    plan (NO_PLAN);
    check ("", "%ID", "f123", "");
    check ("no token", "%ID", "f123", "no token");
    check ("%ID", "%ID", "f123", "f123");
    check ("a %ID b %ID%ID c", "%ID", "x", "a x b xx c");
    check ("{cc}-{cc}", "{cc}", "", "-");
    check ("job-{cc}.out", "{cc}", "1234567890", "job-1234567890.out");
    check ("aaaa", "aa", "b", "bb");
    check ("%I%ID", "%ID", "7", "%I7");
    errno = 0;
    ok (strsubst ("x", "", "y") == NULL && errno == EINVAL,
        "an empty token: EINVAL");
    errno = 0;
    ok (strsubst (NULL, "a", "b") == NULL && errno == EINVAL,
        "NULL string: EINVAL");
    done_testing ();
    return 0;
}
