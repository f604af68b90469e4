/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_CMD_STDLOG_H
#define FLUX_CMD_STDLOG_H

/* Flux log entries: RFC 5424 syslog text as the broker's log ring holds
 * it (PROTOCOLS.md section 3, Log):
 *
 *   <PRI>VERSION SP TIMESTAMP SP HOSTNAME SP APP-NAME SP PROCID SP MSGID
 *   SP STRUCTURED-DATA [SP MSG]
 *
 * Flux differs from RFC 5424 in one respect: PRI is severity << 3 |
 * (facility & 7), so the severity is PRI >> 3.  HOSTNAME is the sender's
 * broker rank in decimal and TIMESTAMP is UTC with microseconds.
 *
 * Header fields are 1..N printable US-ASCII characters (33-126), "-"
 * meaning "no value"; the limits below are RFC 5424's, plus the NUL.
 * All functions return 0 (or a length) on success, -1 with errno set on
 * failure.
 */
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STDLOG_NILVALUE "-"

enum {
    STDLOG_TIMESTAMP_SIZE = 33,
    STDLOG_HOSTNAME_SIZE = 256,
    STDLOG_APPNAME_SIZE = 49,
    STDLOG_PROCID_SIZE = 129,
    STDLOG_MSGID_SIZE = 33,
};

/* Severities, as syslog(3) numbers them. */
enum {
    STDLOG_EMERG = 0,
    STDLOG_ALERT = 1,
    STDLOG_CRIT = 2,
    STDLOG_ERR = 3,
    STDLOG_WARNING = 4,
    STDLOG_NOTICE = 5,
    STDLOG_INFO = 6,
    STDLOG_DEBUG = 7,
};

#define STDLOG_FACILITY_USER 1 /* LOG_USER >> 3 */

struct stdlog_header {
    int pri;
    int version;
    char timestamp[STDLOG_TIMESTAMP_SIZE];
    char hostname[STDLOG_HOSTNAME_SIZE];
    char appname[STDLOG_APPNAME_SIZE];
    char procid[STDLOG_PROCID_SIZE];
    char msgid[STDLOG_MSGID_SIZE];
};

/* Flux PRI from a severity (0-7) and a facility (0-7): -1 with EINVAL
 * if either is out of range.
 */
int stdlog_pri (int severity, int facility);
/* Severity and facility of a Flux PRI. */
int stdlog_severity (int pri);
int stdlog_facility (int pri);

/* "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug";
 * NULL for an out of range value.  The reverse lookup also accepts a
 * decimal number 0-7; -1 with EINVAL for anything else.
 */
const char *stdlog_severity_to_string (int severity);
int stdlog_string_to_severity (const char *s);

/* Set hdr to PRI (info, user), version 1 and every field "-". */
void stdlog_header_init (struct stdlog_header *hdr);

/* Encode hdr, structured data sd (NULL means "-") and msg (may be NULL
 * or empty: then no MSG part) into buf, NUL-terminated.  Empty header
 * fields are written as "-".  Returns the length (without the NUL).
 * Errors: EINVAL (a field with a character outside 33-126, PRI or
 * version out of range, sd not starting with '['), EOVERFLOW (buf too
 * small; buf then holds "").
 */
ssize_t stdlog_encode (char *buf, size_t size, const struct stdlog_header *hdr,
                       const char *sd, const char *msg);

/* Decode the len bytes at buf.  The header fields are copied into hdr;
 * sd/sdlen and msg/msglen (each pair may be NULL) point into buf: the
 * structured data ("-" or "[...]...") and the message (length 0 if
 * absent).  Fails closed with EPROTO on anything malformed: bad PRI
 * (not 1-3 digits, leading zero, over 191), bad version, a field that is
 * empty, too long or holds a non-printable character, unterminated
 * structured data, or no space before MSG.  EINVAL if buf or hdr is NULL.
 */
int stdlog_decode (const char *buf, size_t len, struct stdlog_header *hdr,
                   const char **sd, size_t *sdlen, const char **msg,
                   size_t *msglen);

/* Format ts as RFC 3339 UTC with microseconds: 2024-01-31T23:59:59.123456Z
 * (size >= STDLOG_TIMESTAMP_SIZE).  EINVAL / EOVERFLOW.
 */
int stdlog_timestamp_format (char *buf, size_t size, const struct timespec *ts);

/* Parse an RFC 3339 timestamp: YYYY-MM-DDTHH:MM:SS, an optional fraction
 * of 1-9 digits, then Z or +HH:MM / -HH:MM.  *ts is the instant (UTC).
 * EINVAL if malformed or out of range.
 */
int stdlog_timestamp_parse (const char *s, struct timespec *ts);

/* Format ts in local time with microseconds and the local UTC offset,
 * e.g. 2024-01-31T15:59:59.123456-08:00, or ...Z when the offset is 0.
 * EINVAL / EOVERFLOW.
 */
int stdlog_timestamp_local (char *buf, size_t size, const struct timespec *ts);

#ifdef __cplusplus
}
#endif

#endif /* !FLUX_CMD_STDLOG_H */
