/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* strsubst.c - see strsubst.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "strsubst.h"

char *strsubst (const char *s, const char *token, const char *value)
{
    size_t tlen, vlen, count = 0;
    const char *p;
    char *out, *q;

    if (!s || !token || !value || !(tlen = strlen (token))) {
        errno = EINVAL;
        return NULL;
    }
    vlen = strlen (value);
    for (p = s; (p = strstr (p, token)); p += tlen)
        count++;
    if (!(out = malloc (strlen (s) - count * tlen + count * vlen + 1)))
        return NULL;
    for (q = out; *s;) {
        if (!strncmp (s, token, tlen)) {
            memcpy (q, value, vlen);
            q += vlen;
            s += tlen;
        }
        else
            *q++ = *s++;
    }
    *q = '\0';
    return out;
}
