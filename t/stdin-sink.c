/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* stdin-sink - stands in for a job shell's stdin service in tests of
 * flux run / flux job attach (PROTOCOLS-exec.md 3.8).
 * Usage: stdin-sink [-p] [-d MS] READYFILE SERVICE OUTFILE
 * Registers SERVICE, creates READYFILE, and answers SERVICE.stdin: each
 * request is an io object {stream:"stdin", rank:s, data?:s, eof?:b,
 * encoding?:"base64"}; its data (decoded) is appended to OUTFILE and
 * one line "rank=R len=N eof=B encoding=E" to OUTFILE.log.  Each answer
 * waits MS milliseconds (default 10) so that a client sending a second
 * request before the first is answered is seen: the line "overlap" is
 * then logged.  Exits 0 after an EOF for rank "all", an EOF that comes
 * with data, or the second EOF (with --stdin-ranks the EOF for the other
 * tasks comes first).  -p answers every request with EPIPE and exits.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libflux/base64.h"
#include "libflux/flux.h"

struct sink {
    flux_t *h;
    FILE *out, *log;
    bool epipe;
    int delay_ms;
    const flux_msg_t *pending;
    uv_timer_t timer;
    int eofs;
    bool exit_now;
};

static void answer (struct sink *s, const flux_msg_t *msg)
{
    if (s->epipe) {
        if (flux_respond_error (s->h, msg, EPIPE, NULL) < 0)
            perror ("respond");
        s->exit_now = true;
    }
    else if (flux_respond (s->h, msg, NULL) < 0)
        perror ("respond");
    if (s->exit_now)
        flux_reactor_stop (flux_get_reactor (s->h));
}

static void timer_cb (uv_timer_t *t)
{
    struct sink *s = t->data;
    const flux_msg_t *msg = s->pending;

    s->pending = NULL;
    answer (s, msg);
    flux_msg_decref (msg);
}

static void stdin_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    struct sink *s = arg;
    const char *stream, *rank, *data = NULL, *enc = "UTF-8";
    int eof = 0;

    (void)h;
    (void)mh;
    if (flux_request_unpack (msg, NULL, "{s:s s:s s?s s?b s?s}", "stream",
                             &stream, "rank", &rank, "data", &data, "eof", &eof,
                             "encoding", &enc)
            < 0
        || strcmp (stream, "stdin") != 0) {
        fprintf (s->log, "malformed\n");
        flux_respond_error (s->h, msg, EPROTO, NULL);
        return;
    }
    size_t len = 0;
    if (data) {
        if (!strcmp (enc, "base64")) {
            size_t size = base64_decoded_size (strlen (data)) + 1;
            char *buf = malloc (size);
            ssize_t n;
            if (!buf
                || (n = base64_decode (buf, size, data, strlen (data))) < 0) {
                fprintf (s->log, "bad base64\n");
                exit (1);
            }
            fwrite (buf, 1, (size_t)n, s->out);
            len = (size_t)n;
            free (buf);
        }
        else {
            len = strlen (data);
            fwrite (data, 1, len, s->out);
        }
    }
    fprintf (s->log, "rank=%s len=%zu eof=%d encoding=%s\n", rank, len, eof,
             enc);
    fflush (s->out);
    fflush (s->log);
    if (eof && (++s->eofs == 2 || !strcmp (rank, "all") || len > 0))
        s->exit_now = true;
    if (s->pending) {
        fprintf (s->log, "overlap\n");
        answer (s, msg);
        return;
    }
    s->pending = flux_msg_incref (msg);
    uv_timer_start (&s->timer, timer_cb, (uint64_t)s->delay_ms, 0);
}

int main (int argc, char **argv)
{
    struct sink s = {.delay_ms = 10};
    char topic[256], logname[1024];
    flux_msg_handler_t *mh;
    flux_future_t *f;
    FILE *ready;
    int c;

    while ((c = getopt (argc, argv, "pd:")) != -1) {
        if (c == 'p')
            s.epipe = true;
        else if (c == 'd')
            s.delay_ms = atoi (optarg);
        else
            goto usage;
    }
    if (argc - optind != 3)
        goto usage;
    snprintf (logname, sizeof (logname), "%s.log", argv[optind + 2]);
    if (!(s.out = fopen (argv[optind + 2], "w"))
        || !(s.log = fopen (logname, "w"))) {
        perror (argv[optind + 2]);
        return 1;
    }
    if (!(s.h = flux_open (NULL, 0))) {
        perror ("flux_open");
        return 1;
    }
    uv_timer_init (flux_reactor_uv (flux_get_reactor (s.h)), &s.timer);
    s.timer.data = &s;
    snprintf (topic, sizeof (topic), "%s.stdin", argv[optind + 1]);
    struct flux_match match = FLUX_MATCH_REQUEST;
    match.topic_glob = topic;
    if (!(mh = flux_msg_handler_create (s.h, match, stdin_cb, &s))) {
        perror ("handler");
        return 1;
    }
    flux_msg_handler_start (mh);
    if (!(f = flux_service_register (s.h, argv[optind + 1]))
        || flux_future_get (f, NULL) < 0) {
        perror ("service.add");
        return 1;
    }
    flux_future_destroy (f);
    if (!(ready = fopen (argv[optind], "w"))) {
        perror (argv[optind]);
        return 1;
    }
    fclose (ready);
    if (flux_reactor_run (flux_get_reactor (s.h), 0) < 0) {
        perror ("reactor");
        return 1;
    }
    fclose (s.out);
    fclose (s.log);
    flux_msg_handler_destroy (mh);
    flux_close (s.h);
    return 0;
usage:
    fprintf (stderr, "Usage: stdin-sink [-p] [-d MS] READY SERVICE OUT\n");
    return 1;
}
