/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* log.c - the broker's log ring and log.* services. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

struct follower {
    struct follower *next;
    const flux_msg_t *req;
};

struct brokerlog {
    flux_t *h;
    uint32_t rank;
    char **ring;
    size_t size, head, count; /* oldest at head */
    int stderr_level;
    struct follower *followers;
    brokerlog_tap_f tap;
    void *tap_arg;
    flux_msg_handler_t **handlers;
};

static void ring_push (struct brokerlog *log, char *line)
{
    size_t idx;

    if (log->count == log->size) {
        free (log->ring[log->head]);
        log->ring[log->head] = line;
        log->head = (log->head + 1) % log->size;
        return;
    }
    idx = (log->head + log->count) % log->size;
    log->ring[idx] = line;
    log->count++;
}

/* Parse the severity from "<PRI>1 ..." (PRI = sev<<3 | fac). */
static int line_severity (const char *line)
{
    int pri;
    if (sscanf (line, "<%d>", &pri) != 1 || pri < 0)
        return LOG_INFO;
    return (pri >> 3) & 7;
}

static void store_line (struct brokerlog *log, const char *text, size_t len,
                        bool origin)
{
    struct follower *f;
    char *line;

    if (!(line = strndup (text, len)))
        return;
    /* printed once, by the broker where it was logged */
    if (origin && line_severity (line) <= log->stderr_level)
        fprintf (stderr, "%s\n", line);
    for (f = log->followers; f; f = f->next)
        flux_respond (log->h, f->req, line);
    if (log->tap)
        log->tap (line, line_severity (line), log->tap_arg);
    ring_push (log, line);
}

/* Store each line of text; forward upstream from ranks > 0.
 * origin: logged on this broker (not forwarded from below). */
static void append_text (struct brokerlog *log, const char *text, size_t len,
                         bool forward, bool origin)
{
    size_t start = 0, i;

    for (i = 0; i <= len; i++) {
        if (i == len || text[i] == '\n') {
            if (i > start)
                store_line (log, text + start, i - start, origin);
            start = i + 1;
        }
    }
    if (forward && log->rank > 0) {
        flux_msg_t *msg = flux_request_encode_raw ("log.append", text, len);
        if (msg && flux_msg_set_nodeid (msg, log->rank) == 0
            && flux_msg_set_flag (msg, FLUX_MSGFLAG_UPSTREAM) == 0
            && flux_msg_set_noresponse (msg) == 0)
            (void)flux_send (log->h, msg, 0);
        flux_msg_destroy (msg);
    }
}

void brokerlog_msg (struct brokerlog *log, int severity, const char *fmt, ...)
{
    char ts[64], text[1024], line[1200];
    struct timeval tv;
    struct tm tm;
    va_list ap;
    int n;

    if (!log)
        return;
    gettimeofday (&tv, NULL);
    gmtime_r (&tv.tv_sec, &tm);
    strftime (ts, sizeof (ts), "%Y-%m-%dT%H:%M:%S", &tm);
    va_start (ap, fmt);
    vsnprintf (text, sizeof (text), fmt, ap);
    va_end (ap);
    n = snprintf (line, sizeof (line), "<%d>1 %s.%06ldZ %u broker %d - - %s",
                  (severity & 7) << 3 | (LOG_DAEMON >> 3 & 7), ts,
                  (long)tv.tv_usec, log->rank, (int)getpid (), text);
    if (n > 0)
        append_text (log, line,
                     (size_t)n < sizeof (line) ? (size_t)n : sizeof (line) - 1,
                     true, true);
}

static void append_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    struct brokerlog *log = arg;
    const void *data;
    size_t len;
    uint32_t tag = 0;

    if (flux_request_decode_raw (msg, NULL, &data, &len) < 0 || !data) {
        flux_respond_error (h, msg, EPROTO, "log.append: no log text");
        return;
    }
    /* tolerate a trailing NUL from clients that send strings */
    if (len > 0 && ((const char *)data)[len - 1] == '\0')
        len--;
    if (memchr (data, '\0', len)) {
        flux_respond_error (h, msg, EPROTO, "log.append: NUL in log text");
        return;
    }
    /* every rank on the way up keeps a copy: rank 0 sees all */
    append_text (log, data, len, true,
                 !flux_msg_has_flag (msg, FLUX_MSGFLAG_UPSTREAM));
    (void)flux_msg_get_matchtag (msg, &tag);
    if (tag != FLUX_MATCHTAG_NONE)
        flux_respond (h, msg, NULL);
}

static void dmesg_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    struct brokerlog *log = arg;
    int follow = 0, nobacklog = 0;
    size_t i;

    if (flux_request_unpack (msg, NULL, "{s:b s?b}", "follow", &follow,
                             "nobacklog", &nobacklog)
        < 0) {
        flux_respond_error (h, msg, EPROTO,
                            "log.dmesg: expected {follow:b nobacklog?:b}");
        return;
    }
    if (!flux_msg_is_streaming (msg)) {
        flux_respond_error (h, msg, EPROTO, "log.dmesg requires streaming");
        return;
    }
    if (!nobacklog) {
        for (i = 0; i < log->count; i++)
            flux_respond (h, msg, log->ring[(log->head + i) % log->size]);
    }
    if (follow) {
        struct follower *f = calloc (1, sizeof (*f));
        if (!f) {
            flux_respond_error (h, msg, ENOMEM, NULL);
            return;
        }
        f->req = flux_msg_incref (msg);
        f->next = log->followers;
        log->followers = f;
        return;
    }
    flux_respond_error (h, msg, ENODATA, NULL);
}

/* Remove followers matching (sender, matchtag) — or every request of the
 * sender when matchtag is NONE (disconnect). */
static void drop_followers (struct brokerlog *log, const flux_msg_t *msg,
                            uint32_t matchtag, bool respond)
{
    struct follower **pp = &log->followers, *f;

    while ((f = *pp)) {
        uint32_t tag = 0;
        (void)flux_msg_get_matchtag (f->req, &tag);
        if (flux_msg_route_match_first (f->req, msg)
            && (matchtag == FLUX_MATCHTAG_NONE || tag == matchtag)) {
            *pp = f->next;
            if (respond)
                flux_respond_error (log->h, f->req, ENODATA, NULL);
            flux_msg_decref (f->req);
            free (f);
        }
        else
            pp = &f->next;
    }
}

static void cancel_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    int matchtag;

    if (flux_request_unpack (msg, NULL, "{s:i}", "matchtag", &matchtag) < 0
        || matchtag == 0)
        return; /* NORESPONSE: nothing to say */
    drop_followers (arg, msg, (uint32_t)matchtag, true);
}

static void disconnect_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg)
{
    drop_followers (arg, msg, FLUX_MATCHTAG_NONE, false);
}

static void clear_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    struct brokerlog *log = arg;

    while (log->count > 0) {
        free (log->ring[log->head]);
        log->head = (log->head + 1) % log->size;
        log->count--;
    }
    log->head = 0;
    flux_respond (h, msg, NULL);
}

static void stats_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    struct brokerlog *log = arg;
    flux_respond_pack (h, msg, "{s:i s:i}", "ring-used", (int)log->count,
                       "count", (int)log->count);
}

static const struct flux_msg_handler_spec htab[] = {
    {FLUX_MSGTYPE_REQUEST, "log.append", append_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "log.dmesg", dmesg_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "log.cancel", cancel_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "log.disconnect", disconnect_cb, FLUX_ROLE_ALL},
    {FLUX_MSGTYPE_REQUEST, "log.clear", clear_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "log.stats-get", stats_cb, FLUX_ROLE_ALL},
    FLUX_MSGHANDLER_TABLE_END,
};

struct brokerlog *brokerlog_create (flux_t *h, uint32_t rank, size_t ring_size)
{
    struct brokerlog *log;

    if (!(log = calloc (1, sizeof (*log))))
        return NULL;
    log->h = h;
    log->rank = rank;
    log->size = ring_size ? ring_size : 1024;
    log->stderr_level = LOG_ERR;
    if (!(log->ring = calloc (log->size, sizeof (*log->ring)))
        || flux_msg_handler_addvec (h, htab, log, &log->handlers) < 0) {
        brokerlog_destroy (log);
        return NULL;
    }
    return log;
}

void brokerlog_set_stderr_level (struct brokerlog *log, int level)
{
    if (log)
        log->stderr_level = level;
}

void brokerlog_set_tap (struct brokerlog *log, brokerlog_tap_f tap, void *arg)
{
    if (log) {
        log->tap = tap;
        log->tap_arg = arg;
    }
}

void brokerlog_destroy (struct brokerlog *log)
{
    if (log) {
        int saved_errno = errno;
        struct follower *f;
        flux_msg_handler_delvec (log->handlers);
        while ((f = log->followers)) {
            log->followers = f->next;
            flux_msg_decref (f->req);
            free (f);
        }
        while (log->count > 0) {
            free (log->ring[log->head]);
            log->head = (log->head + 1) % log->size;
            log->count--;
        }
        free (log->ring);
        free (log);
        errno = saved_errno;
    }
}
