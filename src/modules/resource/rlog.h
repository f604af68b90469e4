/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef RESOURCE_RLOG_H
#define RESOURCE_RLOG_H
/* rlog - a line to the broker's log ring (log.append, no response), with
 * the RFC 5424 PRI as Flux writes it (severity << 3 | facility). */
#include <syslog.h>

#include "libflux/flux.h"

void rlog (flux_t *h, int severity, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

#endif /* !RESOURCE_RLOG_H */
