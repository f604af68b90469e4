/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* dmesg.c - `flux dmesg`: print or clear the broker's log ring through
 * log.dmesg (streaming) and log.clear (PROTOCOLS.md section 3, Log).
 *
 * Each entry is RFC 5424 text with Flux's PRI (severity << 3 | facility)
 * and is printed as "TIME APP.SEVERITY[RANK]: MESSAGE", the time in local
 * time (ISO 8601) or, with --human, as a minute header followed by
 * offsets.  An entry that does not parse is printed as received.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmdutil.h"
#include "stdlog.h"

static const char usage[]
    = "Usage: flux dmesg [OPTIONS]\n"
      "Print the broker's log ring buffer.\n"
      "  -C, --clear        Clear the ring buffer (print nothing)\n"
      "  -c, --read-clear   Clear the ring buffer after printing it\n"
      "  -f, --follow       Keep printing new entries as they are logged\n"
      "  -n, --new          Print only entries logged from now on\n"
      "  -H, --human        Human readable timestamps\n"
      "  -h, --help         Display this message\n";

const struct builtin builtin_dmesg = {
    .name = "dmesg",
    .summary = "Print or clear the broker log ring buffer",
    .usage = usage,
    .main = cmd_dmesg,
};

struct dmesg {
    bool human;
    struct tm last_tm;    /* minute of the last header (--human) */
    struct timespec last; /* time of the last header (--human) */
    bool have_last;
};

static const char *months[] = {
    "Jan", "Feb", "Mar", "Apr", "May", "Jun",
    "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
};

static bool same_minute (const struct tm *a, const struct tm *b)
{
    return a->tm_year == b->tm_year && a->tm_mon == b->tm_mon
           && a->tm_mday == b->tm_mday && a->tm_hour == b->tm_hour
           && a->tm_min == b->tm_min;
}

/* --human: "[Mon DD HH:MM] " when the minute changes, else the offset
 * in seconds since that header, "[  +1.234567] ".
 */
static void print_human_time (struct dmesg *ctx, const struct timespec *ts)
{
    struct tm tm;

    if (!localtime_r (&ts->tv_sec, &tm))
        return;
    if (ctx->have_last && same_minute (&tm, &ctx->last_tm)) {
        double dt = (ts->tv_sec - ctx->last.tv_sec)
                    + (ts->tv_nsec - ctx->last.tv_nsec) / 1e9;
        printf ("[%+11.6f] ", dt);
        return;
    }
    printf ("[%s%02d %02d:%02d] ", months[tm.tm_mon], tm.tm_mday, tm.tm_hour,
            tm.tm_min);
    ctx->last_tm = tm;
    ctx->last = *ts;
    ctx->have_last = true;
}

static void print_time (struct dmesg *ctx, const char *timestamp)
{
    struct timespec ts;
    char buf[64];

    if (stdlog_timestamp_parse (timestamp, &ts) < 0)
        printf (ctx->human ? "[%s] " : "%s ", timestamp);
    else if (ctx->human)
        print_human_time (ctx, &ts);
    else if (stdlog_timestamp_local (buf, sizeof (buf), &ts) == 0)
        printf ("%s ", buf);
    else
        printf ("%s ", timestamp);
}

static void print_entry (struct dmesg *ctx, const char *buf, size_t len)
{
    struct stdlog_header hdr;
    const char *msg;
    size_t msglen;

    if (stdlog_decode (buf, len, &hdr, NULL, NULL, &msg, &msglen) < 0) {
        printf ("%.*s\n", (int)len, buf);
        return;
    }
    print_time (ctx, hdr.timestamp);
    printf ("%s.%s[%s]: %.*s\n", hdr.appname,
            stdlog_severity_to_string (stdlog_severity (hdr.pri)), hdr.hostname,
            (int)msglen, msg);
}

static void dmesg_read (flux_t *h, struct dmesg *ctx, bool follow,
                        bool nobacklog)
{
    flux_future_t *f;
    const void *data;
    size_t len;

    if (!(f = flux_rpc_pack (h, "log.dmesg", FLUX_NODEID_ANY,
                             FLUX_RPC_STREAMING, "{s:b s:b}", "follow", follow,
                             "nobacklog", nobacklog)))
        cmd_die ("log.dmesg: %s", strerror (errno));
    while (flux_rpc_get_raw (f, &data, &len) == 0) {
        if (!data)
            data = "";
        /* string payloads carry their NUL */
        if (len > 0 && ((const char *)data)[len - 1] == '\0')
            len--;
        print_entry (ctx, data, len);
        fflush (stdout);
        flux_future_reset (f);
    }
    if (errno != ENODATA)
        cmd_die ("log.dmesg: %s", future_strerror (f, errno));
    flux_future_destroy (f);
}

static void dmesg_clear (flux_t *h)
{
    flux_future_t *f;

    if (!(f = flux_rpc (h, "log.clear", NULL, FLUX_NODEID_ANY, 0))
        || flux_rpc_get (f, NULL) < 0)
        cmd_die ("log.clear: %s",
                 f ? future_strerror (f, errno) : strerror (errno));
    flux_future_destroy (f);
}

int cmd_dmesg (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"clear", no_argument, NULL, 'C'},
        {"read-clear", no_argument, NULL, 'c'},
        {"follow", no_argument, NULL, 'f'},
        {"new", no_argument, NULL, 'n'},
        {"human", no_argument, NULL, 'H'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    struct dmesg ctx = {0};
    bool clear = false, read_clear = false, follow = false, new = false;
    flux_t *h;
    int c;

    while ((c = cmd_getopt (argc, argv, "CcfnH", longopts)) != -1) {
        switch (c) {
            case 'C':
                clear = true;
                break;
            case 'c':
                read_clear = true;
                break;
            case 'f':
                follow = true;
                break;
            case 'n':
                new = true;
                break;
            case 'H':
                ctx.human = true;
                break;
        }
    }
    if (optind != argc)
        cmd_usage_error ("unexpected argument '%s'", argv[optind]);
    if (clear && (follow || new))
        cmd_usage_error ("--clear cannot be used with --follow or --new");
    tzset ();
    h = cmd_open ();
    if (!clear)
        dmesg_read (h, &ctx, follow, new);
    if (clear || read_clear)
        dmesg_clear (h);
    flux_close (h);
    return 0;
}
