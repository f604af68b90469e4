/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* tap.c - the TAP producer behind tap.h */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"

static int planned = -2; /* -2: no plan () call yet */
static int count;
static int failed;

static void atexit_check (void)
{
    if (planned == NO_PLAN || planned == -2)
        return;
    if (count != planned) {
        fprintf (stderr, "# planned %d tests but ran %d\n", planned, count);
        _exit (255);
    }
    if (failed) {
        fprintf (stderr, "# failed %d of %d tests\n", failed, count);
        _exit (failed > 254 ? 254 : failed);
    }
}

void plan (int n)
{
    fflush (stderr);
    planned = n;
    if (n != NO_PLAN)
        printf ("1..%d\n", n);
    fflush (stdout);
    atexit (atexit_check);
}

void done_testing (void)
{
    printf ("1..%d\n", count);
    fflush (stdout);
    if (failed) {
        fprintf (stderr, "# failed %d of %d tests\n", failed, count);
        exit (failed > 254 ? 254 : failed);
    }
    exit (0);
}

static int vok (const char *file, int line, int cond, const char *fmt,
                va_list ap)
{
    count++;
    printf ("%sok %d - ", cond ? "" : "not ", count);
    vprintf (fmt, ap);
    printf ("\n");
    fflush (stdout);
    if (!cond) {
        failed++;
        fprintf (stderr, "#   Failed test at %s line %d.\n", file, line);
    }
    return cond;
}

int ok_at_loc (const char *file, int line, int cond, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    vok (file, line, cond, fmt, ap);
    va_end (ap);
    return cond;
}

int is_at_loc (const char *file, int line, const char *got, const char *exp,
               const char *fmt, ...)
{
    va_list ap;
    int cond;

    if (!got || !exp)
        cond = (got == exp);
    else
        cond = !strcmp (got, exp);
    va_start (ap, fmt);
    vok (file, line, cond, fmt, ap);
    va_end (ap);
    if (!cond)
        fprintf (stderr, "#          got: '%s'\n#     expected: '%s'\n",
                 got ? got : "(null)", exp ? exp : "(null)");
    return cond;
}

int cmp_ok_at_loc (const char *file, int line, long long a, const char *op,
                   long long b, const char *fmt, ...)
{
    va_list ap;
    int cond;

    if (!strcmp (op, "=="))
        cond = a == b;
    else if (!strcmp (op, "!="))
        cond = a != b;
    else if (!strcmp (op, "<"))
        cond = a < b;
    else if (!strcmp (op, "<="))
        cond = a <= b;
    else if (!strcmp (op, ">"))
        cond = a > b;
    else if (!strcmp (op, ">="))
        cond = a >= b;
    else
        BAIL_OUT ("cmp_ok: unknown operator '%s'", op);
    va_start (ap, fmt);
    vok (file, line, cond, fmt, ap);
    va_end (ap);
    if (!cond)
        fprintf (stderr, "#     %lld %s %lld is false\n", a, op, b);
    return cond;
}

int cmp_mem_at_loc (const char *file, int line, const void *a, const void *b,
                    size_t n, const char *fmt, ...)
{
    va_list ap;
    const unsigned char *pa = a, *pb = b;
    size_t i = 0;
    int cond;

    if (!a || !b)
        cond = (a == b);
    else {
        while (i < n && pa[i] == pb[i])
            i++;
        cond = (i == n);
    }
    va_start (ap, fmt);
    vok (file, line, cond, fmt, ap);
    va_end (ap);
    if (!cond && a && b)
        fprintf (stderr, "#     first difference at byte %zu: %02x != %02x\n",
                 i, pa[i], pb[i]);
    return cond;
}

void skip (int n, const char *fmt, ...)
{
    va_list ap;
    char reason[256];

    va_start (ap, fmt);
    vsnprintf (reason, sizeof (reason), fmt, ap);
    va_end (ap);
    while (n-- > 0)
        printf ("ok %d # skip %s\n", ++count, reason);
    fflush (stdout);
}

void diag (const char *fmt, ...)
{
    va_list ap;
    fflush (stdout);
    fprintf (stderr, "# ");
    va_start (ap, fmt);
    vfprintf (stderr, fmt, ap);
    va_end (ap);
    fprintf (stderr, "\n");
}

void BAIL_OUT (const char *fmt, ...)
{
    va_list ap;
    printf ("Bail out! ");
    va_start (ap, fmt);
    vprintf (fmt, ap);
    va_end (ap);
    printf ("\n");
    fflush (stdout);
    exit (255);
}
