/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_UTIL_FSD_H
#define FLUX_UTIL_FSD_H

/* Flux Standard Duration (RFC 23): a duration written "N[SUFFIX]", where
 * N is a number in a form C99 strtod() accepts, in the range [0:inf],
 * and SUFFIX is one of (case sensitive)
 *
 *     ms  milliseconds    s  seconds    m  minutes    h  hours    d  days
 *
 * defaulting to seconds.  "inf" and "infinity" (any case) mean forever
 * and take no suffix.
 *
 * RFC 23 defines only the input form.  The output of fsd_format_duration()
 * is our choice; it is always a valid FSD string.
 *
 * Both functions use strtod()/snprintf(), so the decimal point is that of
 * the C locale's LC_NUMERIC; Flux programs do not change it.
 */
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Parse the FSD string 's' into *dp (seconds).
 * Strict: no leading or trailing whitespace or other characters, no sign
 * other than '+', no NaN, no negative value (not even -0), no suffix
 * after inf/infinity, and no finite N that overflows to infinity (e.g.
 * "1e999" or "1e308d"); only the words inf/infinity give INFINITY.
 * A value that underflows (e.g. "1e-400") is accepted.
 * Note that strtod() reads hex floats: "0x1d" is 29 seconds, not a day.
 * Returns 0, or -1 with errno EINVAL (*dp is then unchanged).
 */
int fsd_parse_duration (const char *s, double *dp);

/* Format 'duration' (seconds) as an FSD string in buf (len bytes, NUL
 * included), in the largest unit that keeps the value >= 1:
 * "ms" below one second, then "s", "m", "h" and "d".  The value has at
 * most 'precision' (0..15) digits after the decimal point, with trailing
 * zeros and a trailing point dropped; if rounding reaches the next unit,
 * the next unit is used ("59.999" becomes "1m", not "60s").  0 is "0s",
 * INFINITY is "inf".  A duration too small for the precision prints as
 * "0s" (e.g. 1e-6 with precision 2).  Values of 1e15 days or more use
 * exponent notation ("1.16e+20d").
 * Returns 0, or -1 with errno EINVAL (negative or NaN duration, precision
 * out of range, buf NULL or len 0) or EOVERFLOW (buf too small; it then
 * holds an empty string).
 */
int fsd_format_duration_ex (char *buf, size_t len, double duration,
                            int precision);

/* fsd_format_duration_ex() with precision 2: 1.5h, 30s, 500ms, 1.25d. */
int fsd_format_duration (char *buf, size_t len, double duration);

#ifdef __cplusplus
}
#endif

#endif /* !FLUX_UTIL_FSD_H */
