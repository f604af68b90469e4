/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#include <stdarg.h>
#include <stdio.h>

#include "imperr.h"

int imp_errf (struct imp_err *e, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start (ap, fmt);
        vsnprintf (e->text, sizeof (e->text), fmt, ap);
        va_end (ap);
    }
    return -1;
}
