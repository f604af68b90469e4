/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* flog.c - flux_log(): one RFC 5424 line per call, sent to the broker's
 * log ring as a log.append request that gets no response. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "attr.h"
#include "flog.h"
#include "message.h"
#include "response.h"

#define APPNAME_KEY "flux::log_appname"

int flux_log_set_appname (flux_t *h, const char *name)
{
    char *s;

    if (!h || !name || !*name || strlen (name) > 48 || strchr (name, ' ')) {
        errno = EINVAL;
        return -1;
    }
    if (!(s = strdup (name)))
        return -1;
    if (flux_aux_set (h, APPNAME_KEY, s, free) < 0) {
        free (s);
        return -1;
    }
    return 0;
}

static const char *appname (flux_t *h)
{
    const char *s;

    if ((s = flux_aux_get (h, APPNAME_KEY))
        || (s = flux_aux_get (h, "flux::name")))
        return s;
    return program_invocation_short_name;
}

void flux_vlog (flux_t *h, int level, const char *fmt, va_list ap)
{
    int saved_errno = errno;
    char ts[32], line[2048];
    struct timeval tv;
    struct tm tm;
    const char *rank;
    flux_msg_t *msg;
    int n, len;

    if (!h || !fmt)
        goto done;
    gettimeofday (&tv, NULL);
    gmtime_r (&tv.tv_sec, &tm);
    strftime (ts, sizeof (ts), "%Y-%m-%dT%H:%M:%S", &tm);
    /* never an RPC here: a log call must not block or reenter */
    if (!(rank = flux_attr_peek (h, "rank")))
        rank = "-";
    n = snprintf (line, sizeof (line), "<%d>1 %s.%06ldZ %s %s %d - - ",
                  (level & 7) << 3 | (LOG_USER >> 3 & 7), ts, (long)tv.tv_usec,
                  rank, appname (h), (int)getpid ());
    if (n < 0 || (size_t)n >= sizeof (line))
        goto done;
    len = vsnprintf (line + n, sizeof (line) - n, fmt, ap);
    if (len < 0)
        goto done;
    len = n + len >= (int)sizeof (line) ? (int)sizeof (line) - 1 : n + len;
    while (len > n && line[len - 1] == '\n') /* one line, no trailer */
        len--;
    if ((msg = flux_request_encode_raw ("log.append", line, len))
        && flux_msg_set_noresponse (msg) == 0)
        (void)flux_send (h, msg, 0);
    flux_msg_decref (msg);
done:
    errno = saved_errno;
}

void flux_log (flux_t *h, int level, const char *fmt, ...)
{
    va_list ap;

    va_start (ap, fmt);
    flux_vlog (h, level, fmt, ap);
    va_end (ap);
}

void flux_log_error (flux_t *h, const char *fmt, ...)
{
    int saved_errno = errno;
    char text[1024];
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (text, sizeof (text), fmt, ap);
    va_end (ap);
    flux_log (h, LOG_ERR, "%s: %s", text, strerror (saved_errno));
    errno = saved_errno;
}
