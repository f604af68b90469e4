/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_UTIL_MODNAME_H
#define FLUX_UTIL_MODNAME_H

/* The name a broker module loaded from a path gets when none is given:
 * the file name up to its first '.' ("/x/kvs.so" -> "kvs").  One rule
 * for the broker, which names the module, and for the commands that
 * must find it again by that name (flux module reload).
 */
#include <stddef.h>
#include <string.h>

/* The name's first character in path (*base) and its length. */
static inline size_t module_name_of_path (const char *path, const char **base)
{
    const char *slash = strrchr (path, '/');

    *base = slash ? slash + 1 : path;
    return strcspn (*base, ".");
}

#endif /* !FLUX_UTIL_MODNAME_H */
