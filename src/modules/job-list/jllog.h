/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* jllog.h - log a line to the broker log from job-list or job-info
 * (log.append, no response; PRI is severity << 3 | facility as in Flux,
 * PROTOCOLS.md 3).
 */
#ifndef JOB_LIST_JLLOG_H
#define JOB_LIST_JLLOG_H

#include <syslog.h>

#include "libflux/flux.h"

void jllog (flux_t *h, uint32_t rank, const char *app, int severity,
            const char *fmt, ...) __attribute__ ((format (printf, 5, 6)));

#endif /* !JOB_LIST_JLLOG_H */
