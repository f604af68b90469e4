/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_FLOG_H
#define FLUX_FLOG_H

/* Logging to the broker's log ring (log.append, PROTOCOLS.md 3).
 *
 * Each call sends one RFC 5424 line "<PRI>1 TIMESTAMP RANK APPNAME PID - -
 * MESSAGE" as a log.append request with no response, so it never blocks
 * and never waits; PRI is Flux's severity << 3 | facility (LOG_USER).
 * RANK is the broker rank of the handle if the "rank" attribute is cached
 * (always so in a module; flux_log never asks the broker), else "-";
 * APPNAME the name set with flux_log_set_appname(), else the module name
 * (aux "flux::name") for a module, else the program name.
 * level is a syslog severity (LOG_ERR, LOG_INFO, ...).  The functions
 * preserve errno and may be called from any callback.
 */
#include <stdarg.h>
#include <syslog.h>

#include "handle.h"

#ifdef __cplusplus
extern "C" {
#endif

void flux_log (flux_t *h, int level, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
void flux_vlog (flux_t *h, int level, const char *fmt, va_list ap);

/* LOG_ERR, with ": strerror(errno)" appended. */
void flux_log_error (flux_t *h, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* The APPNAME of this handle's lines (copied; at most 48 characters). */
int flux_log_set_appname (flux_t *h, const char *name);

#ifdef __cplusplus
}
#endif

#endif /* !FLUX_FLOG_H */
