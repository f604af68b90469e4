/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* eventlog.c - RFC 18 eventlog entries, whole logs and an incremental
 * parser.
 *
 * One validator (entry_check) decides what an entry is; every decoder
 * and encoder goes through it, so the rules live in one place.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eventlog.h"
#include "libflux/jsonemit.h"
#include "libflux/jsonparse.h"

/* Entries
 */

/* Validate an entry; on success fill the outputs.  Returns 0 or -1
 * without setting errno: the caller picks EPROTO or EINVAL.
 */
static int entry_check (const json_t *entry, double *tsp, const char **namep,
                        json_t **contextp)
{
    json_t *ts, *name, *context;
    const char *key;
    json_t *value;

    if (!json_is_object (entry))
        return -1;
    json_object_foreach ((json_t *)entry, key, value)
    {
        if (strcmp (key, "timestamp") != 0 && strcmp (key, "name") != 0
            && strcmp (key, "context") != 0)
            return -1;
    }
    ts = json_object_get (entry, "timestamp");
    name = json_object_get (entry, "name");
    context = json_object_get (entry, "context");
    if (!json_is_number (ts) || !(json_number_value (ts) > 0)
        || !isfinite (json_number_value (ts)))
        return -1;
    if (!json_is_string (name) || json_string_length (name) == 0)
        return -1;
    if (context && !json_is_object (context))
        return -1;
    *tsp = json_number_value (ts);
    *namep = json_string_value (name);
    *contextp = context;
    return 0;
}

int eventlog_entry_parse (const json_t *entry, double *timestamp,
                          const char **name, json_t **context)
{
    double t;
    const char *n;
    json_t *c;

    if (!entry) {
        errno = EINVAL;
        return -1;
    }
    if (entry_check (entry, &t, &n, &c) < 0) {
        errno = EPROTO;
        return -1;
    }
    if (timestamp)
        *timestamp = t;
    if (name)
        *name = n;
    if (context)
        *context = c;
    return 0;
}

double eventlog_now (void)
{
    struct timespec now;
    long long us;

    clock_gettime (CLOCK_REALTIME, &now);
    us = (long long)now.tv_sec * 1000000 + now.tv_nsec / 1000;
    return (double)us / 1e6; /* correctly rounded: nearest to us / 10^6 */
}

/* Build an entry, taking ownership of 'context' (may be NULL). */
static json_t *entry_build (double timestamp, const char *name, json_t *context)
{
    json_t *entry = NULL;
    json_t *jname = NULL;
    int rc;

    if (timestamp == 0)
        timestamp = eventlog_now ();
    /* json_string() fails on invalid UTF-8 */
    if (!(timestamp > 0) || !isfinite (timestamp) || !name || !*name
        || (context && !json_is_object (context))
        || !(jname = json_string (name))) {
        errno = EINVAL;
        goto error;
    }
    if (!(entry = json_object ())
        || json_object_set_new (entry, "timestamp", json_real (timestamp)) < 0)
        goto nomem;
    /* json_object_set_new() takes the value even when it fails */
    rc = json_object_set_new (entry, "name", jname);
    jname = NULL;
    if (rc < 0)
        goto nomem;
    if (context) {
        rc = json_object_set_new (entry, "context", context);
        context = NULL;
        if (rc < 0)
            goto nomem;
    }
    return entry;
nomem:
    errno = ENOMEM;
error:
    json_decref (jname);
    json_decref (context);
    json_decref (entry);
    return NULL;
}

json_t *eventlog_entry_create (double timestamp, const char *name,
                               const char *context)
{
    json_t *o = NULL;

    if (context
        && !(o = jsonparse_ex (context, strlen (context),
                               JSON_REJECT_DUPLICATES, NULL, 0))) {
        errno = EINVAL;
        return NULL;
    }
    return entry_build (timestamp, name, o);
}

json_t *eventlog_entry_pack (double timestamp, const char *name,
                             const char *fmt, ...)
{
    json_t *o = NULL;
    va_list ap;

    if (fmt) {
        va_start (ap, fmt);
        o = json_vpack_ex (NULL, 0, fmt, ap);
        va_end (ap);
        if (!o) {
            errno = EINVAL;
            return NULL;
        }
    }
    return entry_build (timestamp, name, o);
}

/* Decode one line of 'len' bytes, without its newline. */
static json_t *decode_line (const char *s, size_t len)
{
    json_t *entry;
    double t;
    const char *n;
    json_t *c;

    /* a parser would stop at a NUL or read a newline as whitespace;
     * jsonparse builds what json_loadb would, 4-5 times faster */
    if (memchr (s, '\0', len) || memchr (s, '\n', len)
        || !(entry = jsonparse_ex (s, len, JSON_REJECT_DUPLICATES, NULL, 0))) {
        errno = EPROTO;
        return NULL;
    }
    if (entry_check (entry, &t, &n, &c) < 0) {
        json_decref (entry);
        errno = EPROTO;
        return NULL;
    }
    return entry;
}

json_t *eventlog_entry_decode (const char *line)
{
    size_t len;

    if (!line) {
        errno = EINVAL;
        return NULL;
    }
    len = strlen (line);
    if (len == 0 || line[len - 1] != '\n') {
        errno = EPROTO;
        return NULL;
    }
    return decode_line (line, len - 1);
}

char *eventlog_entry_encode (const json_t *entry)
{
    double t;
    const char *n;
    json_t *c, *o;
    char *s, *line;
    size_t len;

    if (entry_check (entry, &t, &n, &c) < 0) {
        errno = EINVAL;
        return NULL;
    }
    /* rebuild to fix the key order; jsonemit writes what json_dumps
     * would, faster (every event of every job is encoded here) */
    if (!(o = json_pack ("{s:f s:s}", "timestamp", t, "name", n))
        || (c && json_object_set (o, "context", c) < 0)
        || !(s = jsonemit (o, JSON_COMPACT, &len))) {
        json_decref (o);
        errno = ENOMEM;
        return NULL;
    }
    json_decref (o);
    if (!(line = realloc (s, len + 2))) {
        free (s);
        errno = ENOMEM;
        return NULL;
    }
    line[len] = '\n';
    line[len + 1] = '\0';
    return line;
}

/* Whole logs
 */

json_t *eventlog_decode (const char *s)
{
    json_t *log, *entry;
    const char *nl;

    if (!s) {
        errno = EINVAL;
        return NULL;
    }
    if (!(log = json_array ())) {
        errno = ENOMEM;
        return NULL;
    }
    while (*s) {
        if (!(nl = strchr (s, '\n'))) {
            errno = EPROTO; /* the last line has no newline */
            goto error;
        }
        if (!(entry = decode_line (s, nl - s)))
            goto error;
        if (json_array_append_new (log, entry) < 0) {
            errno = ENOMEM;
            goto error;
        }
        s = nl + 1;
    }
    return log;
error:
    json_decref (log);
    return NULL;
}

char *eventlog_encode (const json_t *log)
{
    size_t i, len = 0;
    json_t *entry;
    char *s, *line;

    if (!json_is_array (log)) {
        errno = EINVAL;
        return NULL;
    }
    if (!(s = calloc (1, 1))) {
        errno = ENOMEM;
        return NULL;
    }
    json_array_foreach (log, i, entry)
    {
        char *ns;
        size_t n;
        if (!(line = eventlog_entry_encode (entry)))
            goto error;
        n = strlen (line);
        if (!(ns = realloc (s, len + n + 1))) {
            free (line);
            errno = ENOMEM;
            goto error;
        }
        s = ns;
        memcpy (s + len, line, n + 1);
        len += n;
        free (line);
    }
    return s;
error:
    free (s);
    return NULL;
}

int eventlog_append (char **log, const char *line)
{
    json_t *entry;
    size_t loglen, len;
    char *s;

    if (!log || !line) {
        errno = EINVAL;
        return -1;
    }
    loglen = *log ? strlen (*log) : 0;
    if (loglen > 0 && (*log)[loglen - 1] != '\n') {
        errno = EINVAL;
        return -1;
    }
    if (!(entry = eventlog_entry_decode (line)))
        return -1;
    json_decref (entry);
    len = strlen (line);
    if (!(s = realloc (*log, loglen + len + 1))) {
        errno = ENOMEM;
        return -1;
    }
    memcpy (s + loglen, line, len + 1);
    *log = s;
    return 0;
}

/* Incremental parser
 *
 * buf[start..used) holds bytes not yet returned; buf[start..scanned) is
 * known to hold no newline, so each byte is searched once however the
 * input is chunked.
 */

struct eventlog_parser {
    char *buf;
    size_t size;
    size_t start;
    size_t scanned;
    size_t used;
};

eventlog_parser_t *eventlog_parser_create (void)
{
    eventlog_parser_t *p;

    if (!(p = calloc (1, sizeof (*p)))) {
        errno = ENOMEM;
        return NULL;
    }
    return p;
}

void eventlog_parser_destroy (eventlog_parser_t *p)
{
    if (p) {
        int saved_errno = errno;
        free (p->buf);
        free (p);
        errno = saved_errno;
    }
}

/* Make room for 'len' more bytes, first by dropping consumed bytes. */
static int reserve (eventlog_parser_t *p, size_t len)
{
    if (p->start > 0) {
        memmove (p->buf, p->buf + p->start, p->used - p->start);
        p->used -= p->start;
        p->scanned -= p->start;
        p->start = 0;
    }
    if (p->size - p->used < len) {
        size_t size = p->size ? p->size : 256;
        while (size - p->used < len) {
            if (size > SIZE_MAX / 2) {
                errno = ENOMEM;
                return -1;
            }
            size *= 2;
        }
        char *buf = realloc (p->buf, size);
        if (!buf) {
            errno = ENOMEM;
            return -1;
        }
        p->buf = buf;
        p->size = size;
    }
    return 0;
}

int eventlog_parser_feed (eventlog_parser_t *p, const void *data, size_t len)
{
    if (!p || (!data && len > 0)) {
        errno = EINVAL;
        return -1;
    }
    if (len == 0)
        return 0;
    if (p->size - p->used < len && reserve (p, len) < 0)
        return -1;
    memcpy (p->buf + p->used, data, len);
    p->used += len;
    return 0;
}

json_t *eventlog_parser_next (eventlog_parser_t *p)
{
    char *line, *nl;

    if (!p) {
        errno = EINVAL;
        return NULL;
    }
    if (p->scanned == p->used
        || !(nl = memchr (p->buf + p->scanned, '\n', p->used - p->scanned))) {
        p->scanned = p->used;
        errno = EAGAIN;
        return NULL;
    }
    line = p->buf + p->start;
    p->start = p->scanned = nl + 1 - p->buf;
    return decode_line (line, nl - line);
}

size_t eventlog_parser_pending (const eventlog_parser_t *p)
{
    return p ? p->used - p->start : 0;
}
