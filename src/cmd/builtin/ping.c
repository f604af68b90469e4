/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* ping.c - `flux ping`: measure round trips to a service's ping method
 * (PROTOCOLS.md section 2, default methods).
 *
 * Each request carries {seq, time.tv_sec, time.tv_nsec, pad}; the
 * response must echo exactly those keys, unchanged, plus route, userid,
 * rolemask and rank, and nothing else.  Requests go out every --interval
 * seconds without waiting for responses.  With rank "all", one request
 * per rank is sent for each sequence number and a summary is printed
 * when all have answered.  A failed request to one target ends the
 * command (exit 1); with "all", a rank that fails is reported and the
 * others go on.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libhostlist/hostlist.h"

#include "cmdutil.h"
#include "ping_target.h"

static const char usage[]
    = "Usage: flux ping [OPTIONS] TARGET\n"
      "Measure round-trip latency to a Flux service.  TARGET is SERVICE,\n"
      "RANK!SERVICE, or RANK alone (the broker on RANK), where RANK is a\n"
      "rank, a host name, any, upstream or all.\n"
      "  -c, --count=N      Stop after N requests (default: no limit)\n"
      "  -i, --interval=SEC Delay between requests (default 1.0, 0 allowed)\n"
      "  -p, --pad=BYTES    Add a string of BYTES bytes to each request\n"
      "  -r, --rank=RANK    Send to RANK (TARGET is then a service name)\n"
      "  -u, --userid       Show the userid and rolemask of the request\n"
      "  -h, --help         Display this message\n";

const struct builtin builtin_ping = {
    .name = "ping",
    .summary = "Measure round-trip latency to a Flux service",
    .usage = usage,
    .main = cmd_ping,
};

struct ping {
    flux_t *h;
    struct ping_target target;
    struct hostlist *hosts;
    uv_timer_t timer;
    char *pad;
    long count; /* 0: no limit */
    uint64_t interval_ms;
    bool show_userid;
    uint32_t size; /* ranks to send to per sequence number */
    int sent;
    int errors;
};

/* One sequence number: one request, or one per rank with "all". */
struct ping_seq {
    struct ping *p;
    int seq;
    struct timespec t0;
    uint32_t pending;
    uint32_t received;
    double min, max, sum, sumsq; /* milliseconds */
    char route[256];
    json_int_t userid, rolemask;
};

static double ms_since (const struct timespec *t0)
{
    struct timespec now;

    clock_gettime (CLOCK_MONOTONIC, &now);
    return (now.tv_sec - t0->tv_sec) * 1e3 + (now.tv_nsec - t0->tv_nsec) / 1e6;
}

/* The square root of v > 0 by Newton's method: the flux command does not
 * link libm (one shared library less to map at every start). */
static double root (double v)
{
    double x = v > 1. ? v : 1., prev;

    do {
        prev = x;
        x = (x + v / x) / 2.;
    } while (x < prev);
    return prev;
}

static void seq_print (struct ping_seq *s)
{
    struct ping *p = s->p;
    const char *label = p->target.label;
    bool prefix = *label && strcmp (label, "any") != 0;
    double mean = s->sum / s->received;

    if (p->target.dest == PING_DEST_ALL) {
        double var = s->sumsq / s->received - mean * mean;
        printf ("%s!%s pad=%zu seq=%d time=(%0.3f:%0.3f:%0.3f) ms "
                "stddev %0.3f\n",
                label, p->target.topic, strlen (p->pad), s->seq, s->min, mean,
                s->max, var > 0 ? root (var) : 0.);
    }
    else {
        char u[64] = "";
        if (p->show_userid)
            snprintf (u, sizeof (u), " userid=%" PRIu32 " rolemask=0x%" PRIx32,
                      (uint32_t)s->userid, (uint32_t)s->rolemask);
        printf ("%s%s%s pad=%zu%s seq=%d time=%0.3f ms (%s)\n",
                prefix ? label : "", prefix ? "!" : "", p->target.topic,
                strlen (p->pad), u, s->seq, mean, s->route);
    }
    fflush (stdout);
}

/* Check one response against its request; record the round trip. */
static int check_response (struct ping_seq *s, flux_future_t *f)
{
    json_int_t seq, sec, nsec, userid, rolemask, rank;
    const char *pad, *route;
    double ms;

    if (flux_rpc_get_unpack (f, "{s:I s:I s:I s:s s:s s:I s:I s:I !}", "seq",
                             &seq, "time.tv_sec", &sec, "time.tv_nsec", &nsec,
                             "pad", &pad, "route", &route, "userid", &userid,
                             "rolemask", &rolemask, "rank", &rank)
        < 0)
        return -1;
    if (seq != s->seq || sec != s->t0.tv_sec || nsec != s->t0.tv_nsec
        || strcmp (pad, s->p->pad) != 0) {
        errno = EPROTO;
        return -1;
    }
    ms = ms_since (&s->t0);
    if (s->received == 0 || ms < s->min)
        s->min = ms;
    if (s->received == 0 || ms > s->max)
        s->max = ms;
    s->sum += ms;
    s->sumsq += ms * ms;
    s->received++;
    snprintf (s->route, sizeof (s->route), "%s", route);
    s->userid = userid;
    s->rolemask = rolemask;
    return 0;
}

static void response_cb (flux_future_t *f, void *arg)
{
    struct ping_seq *s = arg;
    struct ping *p = s->p;

    if (check_response (s, f) < 0) {
        const char *label = p->target.label;
        const char *text = errno == EPROTO && !flux_future_error_string (f)
                               ? "response does not echo the request"
                               : future_strerror (f, errno);
        /* one target: its error will not go away by asking again */
        if (p->target.dest != PING_DEST_ALL)
            cmd_die ("%s%s%s: %s", label, *label ? "!" : "", p->target.topic,
                     text);
        cmd_warn ("%s%s%s: %s", label, *label ? "!" : "", p->target.topic,
                  text);
        p->errors++;
    }
    flux_future_destroy (f);
    if (--s->pending == 0) {
        if (s->received > 0)
            seq_print (s);
        free (s);
    }
}

static int send_one (struct ping_seq *s, uint32_t nodeid)
{
    struct ping *p = s->p;
    flux_future_t *f;

    if (!(f = flux_rpc_pack (p->h, p->target.topic, nodeid, 0,
                             "{s:i s:I s:I s:s}", "seq", s->seq, "time.tv_sec",
                             (json_int_t)s->t0.tv_sec, "time.tv_nsec",
                             (json_int_t)s->t0.tv_nsec, "pad", p->pad))
        || flux_future_then (f, -1., response_cb, s) < 0) {
        flux_future_destroy (f);
        return -1;
    }
    s->pending++;
    return 0;
}

static void send_ping (struct ping *p)
{
    struct ping_seq *s = calloc (1, sizeof (*s));

    if (!s)
        cmd_die ("out of memory");
    s->p = p;
    s->seq = p->sent++;
    clock_gettime (CLOCK_MONOTONIC, &s->t0);
    if (p->target.dest == PING_DEST_ALL) {
        for (uint32_t rank = 0; rank < p->size; rank++) {
            if (send_one (s, rank) < 0)
                cmd_die ("%s: %s", p->target.topic, strerror (errno));
        }
    }
    else if (send_one (s, ping_target_nodeid (&p->target)) < 0)
        cmd_die ("%s: %s", p->target.topic, strerror (errno));
}

static void timer_cb (uv_timer_t *t)
{
    struct ping *p = t->data;

    send_ping (p);
    if (p->count == 0 || p->sent < p->count)
        uv_timer_start (t, timer_cb, p->interval_ms, 0);
}

/* Host names through the "hostlist" attribute, fetched on first use. */
static int lookup_host (const char *host, uint32_t *rank, void *arg)
{
    struct ping *p = arg;
    const char *s;
    int i;

    if (!p->hosts) {
        if (!(s = flux_attr_get (p->h, "hostlist"))
            || !(p->hosts = hostlist_decode (s)))
            return -1;
    }
    if ((i = hostlist_find (p->hosts, host)) < 0)
        return -1;
    *rank = i;
    return 0;
}

static void parse_args (struct ping *p, int argc, char **argv,
                        const char **rankopt, size_t *padlen)
{
    static const struct option longopts[] = {
        {"count", required_argument, NULL, 'c'},
        {"interval", required_argument, NULL, 'i'},
        {"pad", required_argument, NULL, 'p'},
        {"rank", required_argument, NULL, 'r'},
        {"userid", no_argument, NULL, 'u'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    int c;

    while ((c = cmd_getopt (argc, argv, "c:i:p:r:u", longopts)) != -1) {
        switch (c) {
            case 'c':
                p->count = cmd_parse_long ("--count", optarg, 0, INT32_MAX);
                break;
            case 'i':
                p->interval_ms
                    = cmd_parse_double ("--interval", optarg, 0.) * 1000 + 0.5;
                break;
            case 'p':
                *padlen = cmd_parse_long ("--pad", optarg, 0, 1 << 30);
                break;
            case 'r':
                *rankopt = optarg;
                break;
            case 'u':
                p->show_userid = true;
                break;
        }
    }
    if (optind != argc - 1)
        cmd_usage_error ("expected one TARGET");
}

int cmd_ping (int argc, char **argv)
{
    struct ping p = {.interval_ms = 1000, .size = 1};
    const char *rankopt = NULL;
    size_t padlen = 0;
    flux_error_t error;

    parse_args (&p, argc, argv, &rankopt, &padlen);
    if (!(p.pad = malloc (padlen + 1)))
        cmd_die ("out of memory");
    memset (p.pad, 'p', padlen);
    p.pad[padlen] = '\0';
    p.h = cmd_open ();
    if (ping_target_parse (argv[optind], rankopt, lookup_host, &p, &p.target,
                           &error)
        < 0)
        cmd_usage_error ("%s", error.text);
    if (p.target.dest == PING_DEST_ALL && flux_get_size (p.h, &p.size) < 0)
        cmd_die ("cannot get instance size: %s", strerror (errno));
    uv_timer_init (flux_reactor_uv (flux_get_reactor (p.h)), &p.timer);
    p.timer.data = &p;
    uv_timer_start (&p.timer, timer_cb, 0, 0);
    if (flux_reactor_run (flux_get_reactor (p.h), 0) < 0)
        cmd_die ("reactor: %s", strerror (errno));
    uv_close ((uv_handle_t *)&p.timer, NULL);
    flux_reactor_run (flux_get_reactor (p.h), FLUX_REACTOR_NOWAIT);
    ping_target_clear (&p.target);
    hostlist_destroy (p.hosts);
    free (p.pad);
    flux_close (p.h);
    return p.errors ? 1 : 0;
}
