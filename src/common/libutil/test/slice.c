/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/slice.c - Python-style slices.  The expected selections were
 * computed with Python's own list slicing. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "libutil/slice.h"
#include "tap.h"

static const struct {
    size_t n;
    const char *slice;
    const char *expect; /* indices selected, comma separated */
} cases[] = {
    {0, "[:1]", ""},
    {0, "[:5]", ""},
    {0, "[1:3]", ""},
    {0, "[-1:]", ""},
    {0, "[::-1]", ""},
    {0, "[-2::-1]", ""},
    {0, "[::2]", ""},
    {0, "[1::3]", ""},
    {0, "[:-1]", ""},
    {0, "[5:1:-2]", ""},
    {0, "[-10:10]", ""},
    {0, "[10:-10:-1]", ""},
    {0, "[:]", ""},
    {0, "[::]", ""},
    {0, "[3:3]", ""},
    {0, "[+1:-0]", ""},
    {1, "[:1]", "0"},
    {1, "[:5]", "0"},
    {1, "[1:3]", ""},
    {1, "[-1:]", "0"},
    {1, "[::-1]", "0"},
    {1, "[-2::-1]", ""},
    {1, "[::2]", "0"},
    {1, "[1::3]", ""},
    {1, "[:-1]", ""},
    {1, "[5:1:-2]", ""},
    {1, "[-10:10]", "0"},
    {1, "[10:-10:-1]", "0"},
    {1, "[:]", "0"},
    {1, "[::]", "0"},
    {1, "[3:3]", ""},
    {1, "[+1:-0]", ""},
    {6, "[:1]", "0"},
    {6, "[:5]", "0,1,2,3,4"},
    {6, "[1:3]", "1,2"},
    {6, "[-1:]", "5"},
    {6, "[::-1]", "5,4,3,2,1,0"},
    {6, "[-2::-1]", "4,3,2,1,0"},
    {6, "[::2]", "0,2,4"},
    {6, "[1::3]", "1,4"},
    {6, "[:-1]", "0,1,2,3,4"},
    {6, "[5:1:-2]", "5,3"},
    {6, "[-10:10]", "0,1,2,3,4,5"},
    {6, "[10:-10:-1]", "5,4,3,2,1,0"},
    {6, "[:]", "0,1,2,3,4,5"},
    {6, "[::]", "0,1,2,3,4,5"},
    {6, "[3:3]", ""},
    {6, "[+1:-0]", ""},
};

static const char *bad[] = {
    "",
    "[",
    "]",
    "[]",
    "[1]",
    "[-1]",
    ":1",
    "[:1",
    ":1]",
    "[::0]",
    "[a:]",
    "[:b]",
    "[1:2:3:4]",
    "[ :1]",
    "[1 :2]",
    "[:1] ",
    "[1:2]x",
    "[--1:]",
    "[99999999999999999999:]",
    "[::-9223372036854775808]",
};

static void run (size_t n, const char *s, char *buf, size_t size)
{
    struct slice sl;
    long first, step;
    size_t count, len = 0;

    buf[0] = '\0';
    if (slice_parse (&sl, s) < 0) {
        snprintf (buf, size, "error");
        return;
    }
    count = slice_apply (&sl, n, &first, &step);
    for (size_t i = 0; i < count; i++) {
        long idx = first + (long)i * step;
        if (idx < 0 || (size_t)idx >= n) {
            snprintf (buf, size, "out of range %ld", idx);
            return;
        }
        len += snprintf (buf + len, size - len, "%s%ld", i ? "," : "", idx);
    }
}

int main (int argc, char **argv)
{
    struct slice sl;
    char buf[256];

    plan (NO_PLAN);

    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        const char *slice = cases[i].slice, *expect = cases[i].expect;
        /* (named, so that GCC with UBSan does not see them as maybe
         * NULL in the format below) */
        run (cases[i].n, slice, buf, sizeof (buf));
        ok (!strcmp (buf, expect), "%s of %zu selects [%s]", slice ? slice : "",
            cases[i].n, expect ? expect : "");
        if (strcmp (buf, expect))
            diag ("got [%s]", buf);
    }
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        errno = 0;
        ok (slice_parse (&sl, bad[i]) < 0 && errno == EINVAL,
            "'%s' is refused with EINVAL", bad[i]);
    }
    ok (slice_parse (&sl, NULL) < 0 && errno == EINVAL, "NULL is refused");

    /* a large list: the count is computed, not walked */
    ok (slice_parse (&sl, "[::-3]") == 0, "[::-3] parses");
    {
        long first, step;
        size_t count = slice_apply (&sl, 1000000, &first, &step);
        ok (count == 333334 && first == 999999 && step == -3,
            "[::-3] of 1,000,000 selects 333,334 from the last");
    }
    done_testing ();
}
