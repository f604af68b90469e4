/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* stdlog.c - encode and decode Flux log entries (RFC 5424 text with
 * Flux's PRI), and the RFC 3339 timestamps they carry.  Used by
 * `flux logger` to build entries and by `flux dmesg` to print them.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stdlog.h"

static const char *severity_names[] = {
    "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
};

int stdlog_pri (int severity, int facility)
{
    if (severity < 0 || severity > 7 || facility < 0 || facility > 7) {
        errno = EINVAL;
        return -1;
    }
    return severity << 3 | facility;
}

int stdlog_severity (int pri)
{
    return (pri >> 3) & 7;
}

int stdlog_facility (int pri)
{
    return pri & 7;
}

const char *stdlog_severity_to_string (int severity)
{
    if (severity < 0 || severity > 7)
        return NULL;
    return severity_names[severity];
}

int stdlog_string_to_severity (const char *s)
{
    if (s) {
        for (int i = 0; i < 8; i++) {
            if (!strcmp (s, severity_names[i]))
                return i;
        }
        if (s[0] >= '0' && s[0] <= '7' && s[1] == '\0')
            return s[0] - '0';
    }
    errno = EINVAL;
    return -1;
}

void stdlog_header_init (struct stdlog_header *hdr)
{
    hdr->pri = STDLOG_INFO << 3 | STDLOG_FACILITY_USER;
    hdr->version = 1;
    strcpy (hdr->timestamp, STDLOG_NILVALUE);
    strcpy (hdr->hostname, STDLOG_NILVALUE);
    strcpy (hdr->appname, STDLOG_NILVALUE);
    strcpy (hdr->procid, STDLOG_NILVALUE);
    strcpy (hdr->msgid, STDLOG_NILVALUE);
}

/* A header field to write: "-" if empty; NULL if not printable ASCII
 * or too long.
 */
static const char *field_out (const char *s, size_t size)
{
    size_t len = strnlen (s, size);

    if (len == size)
        return NULL;
    if (len == 0)
        return STDLOG_NILVALUE;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < 33 || s[i] > 126)
            return NULL;
    }
    return s;
}

ssize_t stdlog_encode (char *buf, size_t size, const struct stdlog_header *hdr,
                       const char *sd, const char *msg)
{
    const char *f[5];
    int n;

    if (!buf || size == 0 || !hdr || hdr->pri < 0 || hdr->pri > 191
        || hdr->version < 1 || hdr->version > 999
        || (sd && strcmp (sd, "-") != 0 && sd[0] != '[')
        || !(f[0] = field_out (hdr->timestamp, sizeof (hdr->timestamp)))
        || !(f[1] = field_out (hdr->hostname, sizeof (hdr->hostname)))
        || !(f[2] = field_out (hdr->appname, sizeof (hdr->appname)))
        || !(f[3] = field_out (hdr->procid, sizeof (hdr->procid)))
        || !(f[4] = field_out (hdr->msgid, sizeof (hdr->msgid)))) {
        errno = EINVAL;
        return -1;
    }
    n = snprintf (buf, size, "<%d>%d %s %s %s %s %s %s%s%s", hdr->pri,
                  hdr->version, f[0], f[1], f[2], f[3], f[4],
                  sd ? sd : STDLOG_NILVALUE, msg && *msg ? " " : "",
                  msg ? msg : "");
    if (n < 0 || (size_t)n >= size) {
        buf[0] = '\0';
        errno = EOVERFLOW;
        return -1;
    }
    return n;
}

struct cursor {
    const char *p;
    const char *end;
};

/* An unsigned decimal of 1..maxdigits digits, no leading zero unless it
 * is "0" itself.
 */
static int get_number (struct cursor *c, int maxdigits, int *val)
{
    int n = 0, v = 0;

    while (c->p < c->end && *c->p >= '0' && *c->p <= '9' && n < maxdigits) {
        if (n == 1 && v == 0)
            return -1;
        v = v * 10 + (*c->p++ - '0');
        n++;
    }
    if (n == 0 || (c->p < c->end && *c->p >= '0' && *c->p <= '9'))
        return -1;
    *val = v;
    return 0;
}

/* A header field: 1..size-1 printable characters, then one space. */
static int get_field (struct cursor *c, char *dst, size_t size)
{
    size_t len = 0;

    while (c->p + len < c->end && c->p[len] != ' ') {
        if (c->p[len] < 33 || c->p[len] > 126 || len == size - 1)
            return -1;
        len++;
    }
    if (len == 0 || c->p + len == c->end)
        return -1;
    memcpy (dst, c->p, len);
    dst[len] = '\0';
    c->p += len + 1;
    return 0;
}

/* STRUCTURED-DATA: "-" or one or more "[...]" elements, where quoted
 * parameter values may contain escaped '"', '\' and ']'.
 */
static int get_sd (struct cursor *c)
{
    if (c->p < c->end && *c->p == '-') {
        c->p++;
        return 0;
    }
    if (c->p >= c->end || *c->p != '[')
        return -1;
    while (c->p < c->end && *c->p == '[') {
        bool quoted = false;
        c->p++;
        while (c->p < c->end && (quoted || *c->p != ']')) {
            if (quoted && *c->p == '\\' && c->p + 1 < c->end)
                c->p++;
            else if (*c->p == '"')
                quoted = !quoted;
            c->p++;
        }
        if (c->p >= c->end)
            return -1;
        c->p++;
    }
    return 0;
}

static int decode_header (struct cursor *c, struct stdlog_header *hdr)
{
    if (c->p >= c->end || *c->p++ != '<' || get_number (c, 3, &hdr->pri) < 0
        || hdr->pri > 191 || c->p >= c->end || *c->p++ != '>'
        || get_number (c, 3, &hdr->version) < 0 || hdr->version == 0
        || c->p >= c->end || *c->p++ != ' ')
        return -1;
    if (get_field (c, hdr->timestamp, sizeof (hdr->timestamp)) < 0
        || get_field (c, hdr->hostname, sizeof (hdr->hostname)) < 0
        || get_field (c, hdr->appname, sizeof (hdr->appname)) < 0
        || get_field (c, hdr->procid, sizeof (hdr->procid)) < 0
        || get_field (c, hdr->msgid, sizeof (hdr->msgid)) < 0)
        return -1;
    return 0;
}

int stdlog_decode (const char *buf, size_t len, struct stdlog_header *hdr,
                   const char **sd, size_t *sdlen, const char **msg,
                   size_t *msglen)
{
    struct cursor c = {.p = buf, .end = buf + len};
    struct stdlog_header h;
    const char *sd_start;
    const char *m;

    if (!buf || !hdr) {
        errno = EINVAL;
        return -1;
    }
    if (decode_header (&c, &h) < 0)
        goto error;
    sd_start = c.p;
    if (get_sd (&c) < 0)
        goto error;
    if (c.p == c.end)
        m = c.end;
    else if (*c.p == ' ')
        m = c.p + 1;
    else
        goto error;
    *hdr = h;
    if (sd)
        *sd = sd_start;
    if (sdlen)
        *sdlen = c.p - sd_start;
    if (msg)
        *msg = m;
    if (msglen)
        *msglen = c.end - m;
    return 0;
error:
    errno = EPROTO;
    return -1;
}

int stdlog_timestamp_format (char *buf, size_t size, const struct timespec *ts)
{
    struct tm tm;
    char s[32];
    int n;

    if (!buf || !ts || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000
        || !gmtime_r (&ts->tv_sec, &tm)
        || strftime (s, sizeof (s), "%Y-%m-%dT%H:%M:%S", &tm) == 0) {
        errno = EINVAL;
        return -1;
    }
    n = snprintf (buf, size, "%s.%06ldZ", s, (long)ts->tv_nsec / 1000);
    if (n < 0 || (size_t)n >= size) {
        if (size > 0)
            buf[0] = '\0';
        errno = EOVERFLOW;
        return -1;
    }
    return 0;
}

/* Exactly n digits. */
static int get_digits (const char **p, int n, int *val)
{
    int v = 0;

    for (int i = 0; i < n; i++) {
        if ((*p)[i] < '0' || (*p)[i] > '9')
            return -1;
        v = v * 10 + ((*p)[i] - '0');
    }
    *p += n;
    *val = v;
    return 0;
}

static int expect (const char **p, const char *chars)
{
    if (**p == '\0' || !strchr (chars, **p))
        return -1;
    (*p)++;
    return 0;
}

static int days_in_month (int year, int mon)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;

    return mon == 2 && leap ? 29 : days[mon - 1];
}

/* Z, or +HH:MM / -HH:MM as seconds east of UTC. */
static int get_offset (const char **p, long *offset)
{
    int sign, hh, mm;

    if (**p == 'Z' || **p == 'z') {
        (*p)++;
        *offset = 0;
        return 0;
    }
    sign = **p == '-' ? -1 : 1;
    if (expect (p, "+-") < 0 || get_digits (p, 2, &hh) < 0
        || expect (p, ":") < 0 || get_digits (p, 2, &mm) < 0 || hh > 23
        || mm > 59)
        return -1;
    *offset = sign * (hh * 3600L + mm * 60L);
    return 0;
}

int stdlog_timestamp_parse (const char *s, struct timespec *ts)
{
    struct tm tm = {0};
    int year, mon, mday, hour, min, sec;
    long nsec = 0, offset;
    time_t t;

    if (!s || !ts || get_digits (&s, 4, &year) < 0 || expect (&s, "-") < 0
        || get_digits (&s, 2, &mon) < 0 || expect (&s, "-") < 0
        || get_digits (&s, 2, &mday) < 0 || expect (&s, "Tt") < 0
        || get_digits (&s, 2, &hour) < 0 || expect (&s, ":") < 0
        || get_digits (&s, 2, &min) < 0 || expect (&s, ":") < 0
        || get_digits (&s, 2, &sec) < 0)
        goto inval;
    if (*s == '.') {
        int n = 0;
        long scale = 100000000;
        for (s++; *s >= '0' && *s <= '9' && n < 9; s++, n++, scale /= 10)
            nsec += (*s - '0') * scale;
        if (n == 0 || (*s >= '0' && *s <= '9'))
            goto inval;
    }
    if (get_offset (&s, &offset) < 0 || *s != '\0' || mon < 1 || mon > 12
        || mday < 1 || mday > days_in_month (year, mon) || hour > 23 || min > 59
        || sec > 60)
        goto inval;
    tm.tm_year = year - 1900;
    tm.tm_mon = mon - 1;
    tm.tm_mday = mday;
    tm.tm_hour = hour;
    tm.tm_min = min;
    tm.tm_sec = sec;
    if ((t = timegm (&tm)) == (time_t)-1 && year != 1969)
        goto inval;
    ts->tv_sec = t - offset;
    ts->tv_nsec = nsec;
    return 0;
inval:
    errno = EINVAL;
    return -1;
}

int stdlog_timestamp_local (char *buf, size_t size, const struct timespec *ts)
{
    struct tm tm;
    char s[32];
    char tz[16] = "Z";
    long off;
    int n;

    if (!buf || !ts || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000
        || !localtime_r (&ts->tv_sec, &tm)
        || strftime (s, sizeof (s), "%Y-%m-%dT%H:%M:%S", &tm) == 0) {
        errno = EINVAL;
        return -1;
    }
    if ((off = tm.tm_gmtoff) != 0) {
        long a = off < 0 ? -off : off;
        snprintf (tz, sizeof (tz), "%c%02ld:%02ld", off < 0 ? '-' : '+',
                  a / 3600, (a % 3600) / 60);
    }
    n = snprintf (buf, size, "%s.%06ld%s", s, (long)ts->tv_nsec / 1000, tz);
    if (n < 0 || (size_t)n >= size) {
        if (size > 0)
            buf[0] = '\0';
        errno = EOVERFLOW;
        return -1;
    }
    return 0;
}
