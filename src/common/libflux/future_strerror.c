/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* future_strerror.c - future_strerror() (future.h): a helper of
 * libflux-internal.la over the public API, not exported from
 * libflux-core.so (see Makefile.am).
 */
#include <string.h>

#include "future.h"

const char *future_strerror (flux_future_t *f, int errnum)
{
    const char *s = flux_future_error_string (f);
    return s ? s : strerror (errnum);
}
