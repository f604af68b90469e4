/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_JSONEMIT_H
#define FLUX_JSONEMIT_H

/* jsonemit - the JSON encoder behind flux_msg_pack(), also for code that
 * would call json_dumps (JSON_COMPACT) on a hot path.
 *
 * jsonemit (o, flags, &len) returns, in a new malloc'd NUL-terminated
 * buffer, exactly the text json_dumps (o, flags) returns, for flags
 * JSON_COMPACT optionally with JSON_ENCODE_ANY (other flags: EINVAL).
 * Keys in insertion order, "," and ":" without spaces, the same string
 * escapes, integers and reals written the same way.
 *
 * Why not json_dumps: jansson decodes and escapes a string one code
 * point at a time through a callback; strings of plain ASCII are copied
 * here with one memcpy.  Anything unusual (a string that is not valid
 * UTF-8, a real that is not finite, nesting past 2048 levels, which is
 * where a cycle ends up too) is handed to json_dumps itself, so the
 * result is always what jansson would give, failures included.
 *
 * Returns NULL with errno set on failure (ENOMEM, EINVAL).
 *
 * Part of libflux-internal.la, not exported from libflux-core.so
 * (src/common/libflux/Makefile.am).
 */
#include <stddef.h>

#include <jansson.h>

char *jsonemit (const json_t *o, size_t flags, size_t *lenp);

#endif /* !FLUX_JSONEMIT_H */
