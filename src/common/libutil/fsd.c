/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* fsd.c - Flux Standard Duration (RFC 23) parsing and formatting.
 *
 * Parsing leans on strtod() for N, as the RFC specifies, and adds the
 * checks strtod() does not make: range, suffix, nothing left over.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsd.h"

struct unit {
    const char *suffix;
    double mult; /* seconds per unit */
    double next; /* units per next larger unit (0 for the largest) */
};

static const struct unit units[] = {
    {"ms", 1e-3, 1000}, {"s", 1, 60},    {"m", 60, 60},
    {"h", 3600, 24},    {"d", 86400, 0},
};
#define NUNITS ((int)(sizeof (units) / sizeof (units[0])))

static const struct unit *lookup_suffix (const char *s)
{
    if (*s == '\0')
        return &units[1];
    for (int i = 0; i < NUNITS; i++)
        if (!strcmp (s, units[i].suffix))
            return &units[i];
    return NULL;
}

int fsd_parse_duration (const char *s, double *dp)
{
    const struct unit *u;
    int saved_errno = errno;
    char *end;
    double v;

    /* strtod() would skip whitespace and accept a minus sign */
    if (!s || !dp || *s == '\0' || *s == '-' || strchr (" \t\n\v\f\r", *s))
        goto inval;
    errno = 0;
    v = strtod (s, &end);
    if (end == s || isnan (v) || signbit (v))
        goto inval;
    if (isinf (v)) {
        /* only the words inf/infinity, without suffix, not an overflow */
        if (errno == ERANGE || *end != '\0')
            goto inval;
    }
    else {
        if (!(u = lookup_suffix (end)))
            goto inval;
        /* divide for ms: 1e-3 is inexact, so 2 * 1e-3 != 0.002 in general */
        v = u->mult < 1 ? v / 1000 : v * u->mult;
        if (isinf (v))
            goto inval;
    }
    *dp = v;
    errno = saved_errno;
    return 0;
inval:
    errno = EINVAL;
    return -1;
}

/* Print v with at most 'precision' decimals, dropping trailing zeros. */
static void format_number (char *buf, size_t len, double v, int precision)
{
    if (v >= 1e15) {
        snprintf (buf, len, "%.*e", precision, v);
        return;
    }
    snprintf (buf, len, "%.*f", precision, v);
    if (strchr (buf, '.')) {
        char *p = buf + strlen (buf) - 1;
        while (*p == '0')
            *p-- = '\0';
        if (*p == '.')
            *p = '\0';
    }
}

int fsd_format_duration_ex (char *buf, size_t len, double duration,
                            int precision)
{
    char num[64]; /* < 1e15 with 15 decimals, or %e: well under 64 */
    const char *suffix = "";
    int i = 0;

    if (!buf || len == 0 || isnan (duration) || duration < 0 || precision < 0
        || precision > 15) {
        errno = EINVAL;
        return -1;
    }
    if (isinf (duration))
        snprintf (num, sizeof (num), "inf");
    else {
        while (i < NUNITS - 1 && duration >= units[i + 1].mult)
            i++;
        format_number (num, sizeof (num), duration / units[i].mult, precision);
        /* rounding may reach the next unit: 59.999s -> "60" -> 1m */
        while (i < NUNITS - 1 && strtod (num, NULL) >= units[i].next) {
            i++;
            format_number (num, sizeof (num), duration / units[i].mult,
                           precision);
        }
        suffix = units[i].suffix;
        if (strtod (num, NULL) == 0) {
            snprintf (num, sizeof (num), "0");
            suffix = "s";
        }
    }
    if ((size_t)snprintf (buf, len, "%s%s", num, suffix) >= len) {
        buf[0] = '\0';
        errno = EOVERFLOW;
        return -1;
    }
    return 0;
}

int fsd_format_duration (char *buf, size_t len, double duration)
{
    return fsd_format_duration_ex (buf, len, duration, 2);
}
