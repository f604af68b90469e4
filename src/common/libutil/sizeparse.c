/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "sizeparse.h"

int size_parse (const char *s, size_t *val)
{
    unsigned long long v;
    int shift = 0;
    char *end;

    if (!s || !val || *s < '0' || *s > '9')
        goto inval;
    errno = 0;
    v = strtoull (s, &end, 10);
    if (errno != 0) {
        errno = ERANGE;
        return -1;
    }
    switch (*end) {
        case 'k':
        case 'K':
            shift = 10;
            end++;
            break;
        case 'M':
            shift = 20;
            end++;
            break;
        case 'G':
            shift = 30;
            end++;
            break;
    }
    if (*end != '\0')
        goto inval;
    if (v > (unsigned long long)SIZE_MAX >> shift) {
        errno = ERANGE;
        return -1;
    }
    *val = (size_t)(v << shift);
    return 0;
inval:
    errno = EINVAL;
    return -1;
}
