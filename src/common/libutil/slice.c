/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* slice.c - Python-style slices (see slice.h). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "slice.h"

/* Parse an optional integer that ends at one of the characters in end.
 * *present says whether there was one. */
static int parse_part (const char **sp, const char *end, long *v, bool *present)
{
    const char *s = *sp;
    char *ep;
    long n;

    *present = false;
    for (const char *e = end; *e; e++) {
        if (*s == *e)
            return 0;
    }
    if (!(*s == '-' || *s == '+' || (*s >= '0' && *s <= '9')))
        return -1;
    errno = 0;
    n = strtol (s, &ep, 10);
    if (errno != 0 || ep == s || n == LONG_MIN)
        return -1;
    *v = n;
    *present = true;
    *sp = ep;
    return 0;
}

int slice_parse (struct slice *sl, const char *s)
{
    bool has_step;
    long step = 1;

    if (!sl || !s || *s++ != '[')
        goto inval;
    sl->start = sl->stop = 0;
    if (parse_part (&s, ":", &sl->start, &sl->has_start) < 0 || *s++ != ':'
        || parse_part (&s, ":]", &sl->stop, &sl->has_stop) < 0)
        goto inval;
    if (*s == ':') {
        s++;
        if (parse_part (&s, "]", &step, &has_step) < 0)
            goto inval;
    }
    if (*s++ != ']' || *s != '\0' || step == 0)
        goto inval;
    sl->step = step;
    return 0;
inval:
    errno = EINVAL;
    return -1;
}

/* Clamp an index as Python does for a list of n. */
static long adjust (long i, long n, long step)
{
    if (i < 0) {
        i += n;
        if (i < 0)
            i = step < 0 ? -1 : 0;
    }
    else if (i >= n)
        i = step < 0 ? n - 1 : n;
    return i;
}

size_t slice_apply (const struct slice *sl, size_t len, long *first, long *step)
{
    long n = len > LONG_MAX ? LONG_MAX : (long)len;
    long start, stop, st = sl->step;

    if (st > 0) {
        start = sl->has_start ? adjust (sl->start, n, st) : 0;
        stop = sl->has_stop ? adjust (sl->stop, n, st) : n;
    }
    else {
        start = sl->has_start ? adjust (sl->start, n, st) : n - 1;
        stop = sl->has_stop ? adjust (sl->stop, n, st) : -1;
    }
    *first = start;
    *step = st;
    if (st > 0)
        return start < stop ? (size_t)((stop - start - 1) / st + 1) : 0;
    /* st <= -1: -st cannot overflow (LONG_MIN is refused) */
    return stop < start ? (size_t)((start - stop - 1) / -st + 1) : 0;
}
