/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef BROKER_LOG_H
#define BROKER_LOG_H

/* The broker log: a bounded ring of RFC 5424 lines, and its services
 * (PROTOCOLS.md 3, Log): log.append (owner, raw text without NUL, a
 * response only when matchtag != 0), log.dmesg (owner, streaming, with
 * follow), log.cancel, log.clear, log.disconnect.
 *
 * Flux's PRI is severity << 3 | (facility & 7).  Entries at or below
 * stderr_level (a severity, LOG_ERR by default) are also printed to stderr.
 * On ranks > 0 appended entries are forwarded upstream as well, so rank 0
 * holds the whole instance's log.
 */
#include <stdarg.h>

#include "libflux/flux.h"

struct brokerlog;

struct brokerlog *brokerlog_create (flux_t *h, uint32_t rank, size_t ring_size);
void brokerlog_destroy (struct brokerlog *log);
void brokerlog_set_stderr_level (struct brokerlog *log, int level);

/* Call tap(line, severity, arg) for each line stored from now on (one tap
 * at a time; NULL removes it).  line is an RFC 5424 line without newline,
 * valid only during the call. */
typedef void (*brokerlog_tap_f) (const char *line, int severity, void *arg);
void brokerlog_set_tap (struct brokerlog *log, brokerlog_tap_f tap, void *arg);

/* The broker's own messages (severity: LOG_ERR, LOG_INFO, ...). */
void brokerlog_msg (struct brokerlog *log, int severity, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

#endif /* !BROKER_LOG_H */
