/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* kvs_util.c - key normalization, so that "a..b." and "a.b" name the
 * same key on the client and in the kvs modules.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kvs_util.h"

char *kvs_util_normalize_key (const char *key, bool *want_directory)
{
    size_t len, o = 0;
    char *s;

    if (!key) {
        errno = EINVAL;
        return NULL;
    }
    len = strlen (key);
    if (!(s = malloc (len + 2)))
        return NULL;
    for (size_t i = 0; i < len; i++) {
        if (key[i] == '.' && (o == 0 || s[o - 1] == '.'))
            continue; /* leading dot, or a repeat */
        s[o++] = key[i];
    }
    if (o > 0 && s[o - 1] == '.')
        o--;
    if (want_directory)
        *want_directory = o > 0 && len > 0 && key[len - 1] == '.';
    if (o == 0)
        s[o++] = '.';
    s[o] = '\0';
    return s;
}
