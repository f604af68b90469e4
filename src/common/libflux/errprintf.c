/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* errprintf.c - errprintf() (handle.h): a helper of libflux-internal.la,
 * not exported from libflux-core.so (see Makefile.am).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "handle.h"

int errprintf (flux_error_t *error, const char *fmt, ...)
{
    if (error) {
        int saved_errno = errno;
        va_list ap;
        va_start (ap, fmt);
        vsnprintf (error->text, sizeof (error->text), fmt, ap);
        va_end (ap);
        errno = saved_errno;
    }
    return -1;
}
