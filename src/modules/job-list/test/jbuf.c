/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/jbuf.c - the JSON text writer: numbers read back exactly,
 * strings are escaped, errors are sticky.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jbuf.h"
#include "tap.h"

static const char *real (double d)
{
    static struct jbuf b;
    jbuf_free (&b);
    jbuf_real (&b, d);
    return jbuf_get (&b);
}

int main (int argc, char **argv)
{
    struct jbuf b;
    int bad = 0;
    json_t *o;

    plan (NO_PLAN);
    is (real (0.), "0.0", "0.0");
    is (real (60.), "60.0", "an integral real keeps .0");
    is (real (1700000000.123456), "1700000000.123456",
        "a timestamp with microseconds");
    is (real (1.5), "1.5", "trailing zeros are dropped");
    is (real (-2.25), "-2.25", "negative");
    is (real (1e300), "1.0000000000000001e+300", "large: %%.17g");
    srand (3);
    for (int i = 0; i < 200000; i++) {
        double d;
        if (i % 2)
            d = 1.6e9 + (rand () % 100000000) / 1e6 * (i % 7 ? 1 : 3.3);
        else
            d = rand () / (double)RAND_MAX * pow (10, rand () % 24 - 6);
        if (strtod (real (d), NULL) != d)
            bad++;
    }
    ok (bad == 0, "200000 random reals read back exactly (%d did not)", bad);

    jbuf_init (&b);
    jbuf_char (&b, '[');
    jbuf_int (&b, -42);
    jbuf_char (&b, ',');
    jbuf_int (&b, INT64_MIN);
    jbuf_char (&b, ',');
    jbuf_uint (&b, UINT64_MAX);
    jbuf_char (&b, ',');
    jbuf_str (&b, "a\"b\\c\n\t\001\x7f\xc3\xa9");
    jbuf_char (&b, ',');
    jbuf_bool (&b, 1);
    jbuf_char (&b, ']');
    is (jbuf_get (&b),
        "[-42,-9223372036854775808,18446744073709551615,"
        "\"a\\\"b\\\\c\\n\\t\\u0001\x7f\xc3\xa9\",true]",
        "integers, escaped string, bool");
    /* (jansson refuses integers above INT64_MAX: parse from the string) */
    o = json_loads (strstr (jbuf_get (&b), ",\"") + 1,
                    JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK, NULL);
    ok (o && !strcmp (json_string_value (o), "a\"b\\c\n\t\001\x7f\xc3\xa9"),
        "jansson reads the string back");
    json_decref (o);
    jbuf_reset (&b);
    jbuf_real (&b, NAN);
    jbuf_int (&b, 1);
    errno = 0;
    ok (jbuf_error (&b) == EDOM && jbuf_get (&b) == NULL && errno == EDOM,
        "a NaN is a sticky EDOM error");
    jbuf_free (&b);
    done_testing ();
    return 0;
}
