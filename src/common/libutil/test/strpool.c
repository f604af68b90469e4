/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/strpool.c - interned strings */
#include <stdio.h>
#include <string.h>

#include "libutil/strpool.h"
#include "tap.h"

int main (int argc, char **argv)
{
    strpool_t *p;
    const char *a, *b, *c;
    char buf[32];

    plan (NO_PLAN);

    ok ((p = strpool_create ()) != NULL, "strpool_create works");
    ok (strpool_get (p, NULL) == NULL, "get of NULL is NULL");
    a = strpool_get (p, "hello");
    b = strpool_get (p, "hello");
    ok (a && a == b && !strcmp (a, "hello"),
        "the same text gives the same pointer");
    ok (strpool_count (p) == 1, "one distinct string");
    c = strpool_getn (p, "hello world", 5);
    ok (c == a, "getn of a prefix finds the same string");
    ok (strpool_getn (p, "hell", 4) != a && strpool_count (p) == 2,
        "a shorter string is another entry");
    strpool_put (p, NULL);
    strpool_put (p, a);
    strpool_put (p, b);
    ok (strpool_count (p) == 2, "hello stays while a reference is left");
    strpool_put (p, c);
    ok (strpool_count (p) == 1, "the last put frees it");
    for (int i = 0; i < 10000; i++) {
        snprintf (buf, sizeof (buf), "s%d", i % 1000);
        if (!strpool_get (p, buf))
            BAIL_OUT ("get failed");
    }
    ok (strpool_count (p) == 1001, "10000 gets of 1000 texts keep 1000 copies");
    snprintf (buf, sizeof (buf), "s%d", 999);
    a = strpool_get (p, buf);
    ok (a && !strcmp (a, "s999"), "strings are found after the pool grew");
    strpool_destroy (p);
    strpool_destroy (NULL);
    pass ("strpool_destroy frees what is left and accepts NULL");
    done_testing ();
    return 0;
}
