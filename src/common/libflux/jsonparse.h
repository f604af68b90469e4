/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_JSONPARSE_H
#define FLUX_JSONPARSE_H

/* jsonparse - the JSON decoder behind flux_msg_unpack() (internal).
 *
 * It builds the same jansson objects that json_loadb (buf, len, 0, ...)
 * builds, and accepts exactly what json_loadb accepts with flags 0: an
 * object or an array at the top, surrounded by whitespace only; strings
 * of valid UTF-8 (no \u0000, no lone surrogates, no raw control
 * characters); integers that fit a json_int_t, finite reals; nesting up
 * to 2048 levels; a repeated object key keeps its last value.  (One
 * difference: json_loadb skips a NUL byte right after a number or a
 * literal, "[0\0]" loads as [0]; here a NUL outside a string is an
 * error.)
 *
 * Why not json_loadb: it copies every character of a string through a
 * growing buffer, one call per byte, before copying it again; KVS commits
 * carry hundreds of kilobytes of base64 in strings.  Here a string with
 * no escapes is scanned in one tight loop and copied once.
 *
 * Returns a new reference, or NULL with a one-line reason in error
 * (position included) when the text is not such a document or memory
 * runs out.
 *
 * Part of libflux-internal.la, not exported from libflux-core.so
 * (src/common/libflux/Makefile.am).
 */
#include <stddef.h>

#include <jansson.h>

json_t *jsonparse (const char *buf, size_t len, char *error, size_t errsize);

/* The same, with flags: 0 or JSON_REJECT_DUPLICATES, which fails on an
 * object with a repeated key as json_loadb does with that flag.  Other
 * flags: EINVAL. */
json_t *jsonparse_ex (const char *buf, size_t len, size_t flags, char *error,
                      size_t errsize);

#endif /* !FLUX_JSONPARSE_H */
