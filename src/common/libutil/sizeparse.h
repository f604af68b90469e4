/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef UTIL_SIZEPARSE_H
#define UTIL_SIZEPARSE_H

/* sizeparse - a byte count as written in module arguments and broker
 * attributes (content.blob-size-limit=1G): decimal digits, then
 * optionally k or K (KiB), M (MiB) or G (GiB), and nothing else.
 */
#include <stddef.h>

/* 0 with *val set, or -1 with errno EINVAL (not such a size: empty,
 * signed, other characters) or ERANGE (does not fit in a size_t). */
int size_parse (const char *s, size_t *val);

#endif /* !UTIL_SIZEPARSE_H */
