/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_UTIL_MONOTIME_H
#define FLUX_UTIL_MONOTIME_H

/* Seconds on the monotonic clock, for timeouts and for timing work.
 * Header only: libflux, the broker's modules and the commands each use
 * it without linking libutil.
 */
#include <time.h>

static inline double monotime (void)
{
    struct timespec ts;

    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#endif /* !FLUX_UTIL_MONOTIME_H */
