/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* rlog.c - log.append from the resource module. */
#include <stdarg.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "rlog.h"

void rlog (flux_t *h, int severity, const char *fmt, ...)
{
    char ts[64], text[512], line[700];
    struct timeval tv;
    struct tm tm;
    uint32_t rank = 0;
    va_list ap;
    flux_msg_t *msg;
    int n;

    (void)flux_get_rank (h, &rank);
    gettimeofday (&tv, NULL);
    gmtime_r (&tv.tv_sec, &tm);
    strftime (ts, sizeof (ts), "%Y-%m-%dT%H:%M:%S", &tm);
    va_start (ap, fmt);
    vsnprintf (text, sizeof (text), fmt, ap);
    va_end (ap);
    n = snprintf (line, sizeof (line), "<%d>1 %s.%06ldZ %u resource %d - - %s",
                  (severity & 7) << 3 | (LOG_DAEMON >> 3 & 7), ts,
                  (long)tv.tv_usec, (unsigned)rank, (int)getpid (), text);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof (line))
        n = sizeof (line) - 1;
    if ((msg = flux_request_encode_raw ("log.append", line, n))
        && flux_msg_set_noresponse (msg) == 0)
        (void)flux_send (h, msg, 0);
    flux_msg_decref (msg);
}
