/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* logger.c - `flux logger`: append entries to the broker's log ring.
 *
 * Each line of the message becomes one RFC 5424 entry (Flux PRI,
 * facility user, the broker rank as HOSTNAME, our pid as PROCID) sent as
 * a raw log.append payload without NUL.  log.append answers only
 * requests with a matchtag, so all lines but the last go out without
 * one, and the last is a real RPC: its response, which comes after the
 * broker has handled the earlier lines, tells that the log arrived.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmdutil.h"
#include "stdlog.h"

static const char usage[]
    = "Usage: flux logger [OPTIONS] MESSAGE...\n"
      "Append a message to the broker's log ring buffer (standard input if\n"
      "no MESSAGE is given; one entry per line).\n"
      "  -s, --severity=S   emerg, alert, crit, err, warning, notice, info\n"
      "                     or debug (default: info)\n"
      "  -n, --appname=NAME Application name (default: logger)\n"
      "  -h, --help         Display this message\n";

const struct builtin builtin_logger = {
    .name = "logger",
    .summary = "Append a message to the broker log",
    .usage = usage,
    .main = cmd_logger,
};

/* The MESSAGE words joined by spaces, or standard input. */
static char *read_message (int argc, char **argv)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f;

    if (!(f = open_memstream (&buf, &size)))
        cmd_die ("out of memory");
    if (argc > 0) {
        for (int i = 0; i < argc; i++)
            fprintf (f, "%s%s", i > 0 ? " " : "", argv[i]);
    }
    else {
        char chunk[4096];
        size_t n;
        while ((n = fread (chunk, 1, sizeof (chunk), stdin)) > 0)
            fwrite (chunk, 1, n, f);
        if (ferror (stdin))
            cmd_die ("reading stdin: %s", strerror (errno));
    }
    if (fclose (f) != 0)
        cmd_die ("out of memory");
    return buf;
}

static void send_line (flux_t *h, struct stdlog_header *hdr, const char *line,
                       bool last)
{
    size_t size = strlen (line) + 1024;
    char *buf = malloc (size);
    struct timespec now;
    flux_future_t *f;
    ssize_t len;

    clock_gettime (CLOCK_REALTIME, &now);
    if (!buf
        || stdlog_timestamp_format (hdr->timestamp, sizeof (hdr->timestamp),
                                    &now)
               < 0
        || (len = stdlog_encode (buf, size, hdr, NULL, line)) < 0)
        cmd_die ("cannot encode log entry: %s", strerror (errno));
    if (!(f = flux_rpc_raw (h, "log.append", buf, len, FLUX_NODEID_ANY,
                            last ? 0 : FLUX_RPC_NORESPONSE))
        || flux_future_get (f, NULL) < 0)
        cmd_die ("log.append: %s",
                 f ? future_strerror (f, errno) : strerror (errno));
    flux_future_destroy (f);
    free (buf);
}

int cmd_logger (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"severity", required_argument, NULL, 's'},
        {"appname", required_argument, NULL, 'n'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    struct stdlog_header hdr;
    int severity = STDLOG_INFO;
    const char *appname = "logger";
    char *message, *line, *save = NULL;
    uint32_t rank;
    flux_t *h;
    int c;

    while ((c = cmd_getopt (argc, argv, "s:n:", longopts)) != -1) {
        if (c == 's' && (severity = stdlog_string_to_severity (optarg)) < 0)
            cmd_usage_error ("invalid severity '%s'", optarg);
        if (c == 'n')
            appname = optarg;
    }
    stdlog_header_init (&hdr);
    if (snprintf (hdr.appname, sizeof (hdr.appname), "%s", appname)
            >= (int)sizeof (hdr.appname)
        || strpbrk (appname, " \t\n") || !*appname)
        cmd_usage_error ("invalid appname '%s'", appname);
    message = read_message (argc - optind, argv + optind);
    h = cmd_open ();
    if (flux_get_rank (h, &rank) < 0)
        cmd_die ("cannot get broker rank: %s", strerror (errno));
    hdr.pri = stdlog_pri (severity, STDLOG_FACILITY_USER);
    snprintf (hdr.hostname, sizeof (hdr.hostname), "%u", rank);
    snprintf (hdr.procid, sizeof (hdr.procid), "%d", (int)getpid ());
    line = strtok_r (message, "\n", &save);
    if (!line)
        send_line (h, &hdr, "", true);
    while (line) {
        char *next = strtok_r (NULL, "\n", &save);
        send_line (h, &hdr, line, next == NULL);
        line = next;
    }
    free (message);
    flux_close (h);
    return 0;
}
