/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* toml.h - a strict TOML v1.0 reader that produces a jansson object.
 *
 * Every TOML 1.0 construct is read: tables, dotted keys, arrays of
 * tables, inline tables, basic and literal strings (one-line and
 * multi-line, every escape), integers (decimal, 0x, 0o, 0b, with
 * underscores), floats (exponents, inf, nan), booleans, arrays (of mixed
 * types, as TOML 1.0 allows) and dates/times.
 *
 * How TOML values map to JSON:
 *   string, boolean, table, array   the same JSON type
 *   integer                         a JSON integer (64 bits, as TOML)
 *   float                           a JSON real; inf, +inf, -inf and nan
 *                                   (which JSON cannot hold) become the
 *                                   strings "inf", "-inf" and "nan"
 *   date, time, date-time           the string as written, checked
 *                                   (e.g. "1979-05-27T07:32:00Z")
 * A key containing U+0000 is refused (a JSON object key cannot hold it).
 *
 * Whatever TOML forbids is an error: a key or table defined twice, a
 * table extended by dotted keys after its [header] (or the reverse),
 * a value added to an inline table or to a static array, invalid
 * UTF-8, control characters, leading zeros, integer overflow, and so on.
 * Arrays and inline tables nest at most TOML_MAX_DEPTH deep.
 */
#ifndef FLUX_LIBUTIL_TOML_H
#define FLUX_LIBUTIL_TOML_H

#include <stddef.h>
#include <jansson.h>

#define TOML_MAX_DEPTH 100

typedef struct {
    int line;       /* 1-based line of the error, 0 when not from the text */
    int column;     /* 1-based column (in characters) */
    char text[160]; /* the reason, without the position */
} toml_error_t;

/* Parse len bytes of TOML text (a NUL byte in it is an error).
 * Returns a new JSON object (the caller owns the reference), or NULL with
 * errno EINVAL and error (if not NULL) filled with the position and the
 * reason, or NULL with errno ENOMEM.  Reentrant: no global state.
 */
json_t *toml_parse (const char *text, size_t len, toml_error_t *error);

#endif /* !FLUX_LIBUTIL_TOML_H */
