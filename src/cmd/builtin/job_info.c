/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* job_info.c - `flux job eventlog`, `flux job wait-event`, `flux job
 * info` and `flux job status`: job data through job-info (PROTOCOLS.md
 * 5.3).  The `flux job` group (job.c) lists these members.
 *
 * Events print as flux-core prints them: "TIMESTAMP NAME key=value..."
 * with the context values as compact JSON (text), or the RFC 18 line
 * (json).  Timestamps: raw (seconds), iso (local time), offset (from
 * the first event), human ("[Mon DD HH:MM]" then "[  +S.SSSSSS]"
 * offsets within the same minute).
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>

#include "cmdutil.h"
#include "libeventlog/eventlog.h"
#include "libflux/base64.h"
#include "libjob/job.h"

static int cmd_eventlog (int argc, char **argv);
static int cmd_wait_event (int argc, char **argv);
static int cmd_info (int argc, char **argv);
static int cmd_status (int argc, char **argv);

static const char eventlog_usage[]
    = "Usage: flux job eventlog [OPTIONS] JOBID\n"
      "Print the events of a job.\n"
      "  -f, --format=FORMAT       text (default) or json\n"
      "  -T, --time-format=FORMAT  raw (default), iso, offset, human\n"
      "  -H, --human               Same as --format=text --time-format=human\n"
      "  -p, --path=PATH           Another eventlog: exec, output, input, or\n"
      "                            a path such as guest.exec.eventlog\n"
      "  -F, -w, --follow          Follow the events until the job is "
      "inactive\n"
      "  -h, --help                Display this message\n";

static const char wait_event_usage[]
    = "Usage: flux job wait-event [OPTIONS] JOBID EVENT\n"
      "Wait for an event in a job's eventlog and print it.\n"
      "  -t, --timeout=DURATION    Give up after DURATION without events\n"
      "  -c, --count=N             Wait for the Nth matching event (default "
      "1)\n"
      "  -m, --match-context=KEY=VALUE\n"
      "                            Only an event whose context has KEY=VALUE\n"
      "  -p, --path=PATH           Another eventlog (see flux job eventlog)\n"
      "  -W, --waitcreate          Wait for the eventlog to be created\n"
      "  -v, --verbose             Also print the events before it\n"
      "  -q, --quiet               Do not print the matched event\n"
      "  -f, --format=FORMAT       text (default) or json\n"
      "  -T, --time-format=FORMAT  raw (default), iso, offset, human\n"
      "  -H, --human               Same as --format=text --time-format=human\n"
      "  -h, --help                Display this message\n";

static const char info_usage[]
    = "Usage: flux job info [OPTIONS] JOBID KEY...\n"
      "Print job data: eventlog, jobspec, R, J, guest.exec.eventlog...\n"
      "  -o, --original   jobspec as submitted (from J)\n"
      "  -b, --base       jobspec or R without later updates\n"
      "  -h, --help       Display this message\n";

static const char status_usage[]
    = "Usage: flux job status [OPTIONS] JOBID...\n"
      "Wait for jobs to finish; exit with the largest exit code.\n"
      "  -e, --exception-exit-code=N  Least exit code of a job that had a\n"
      "                               fatal exception (default 1)\n"
      "  -j, --json       Print each job's result events as JSON\n"
      "  -v, --verbose    Say how each job ended\n"
      "  -h, --help       Display this message\n";

const struct builtin builtin_job_eventlog = {
    .name = "eventlog",
    .summary = "Print the events of a job",
    .usage = eventlog_usage,
    .main = cmd_eventlog,
};

const struct builtin builtin_job_wait_event = {
    .name = "wait-event",
    .summary = "Wait for an event of a job",
    .usage = wait_event_usage,
    .main = cmd_wait_event,
};

const struct builtin builtin_job_info = {
    .name = "info",
    .summary = "Print job data (eventlog, jobspec, R, J...)",
    .usage = info_usage,
    .main = cmd_info,
};

const struct builtin builtin_job_status = {
    .name = "status",
    .summary = "Wait for jobs to finish and report their exit codes",
    .usage = status_usage,
    .main = cmd_status,
};

/* Event formatting */

enum { TS_RAW, TS_ISO, TS_OFFSET, TS_HUMAN };

struct evfmt {
    bool json;
    int ts;
    double t0;
    double last_ts;
    struct tm last_tm;
    bool have_last;
};

static void evfmt_set (struct evfmt *e, const char *format,
                       const char *time_format)
{
    if (format) {
        if (!strcasecmp (format, "json"))
            e->json = true;
        else if (strcasecmp (format, "text") != 0)
            cmd_usage_error ("invalid format type '%s'", format);
    }
    if (time_format) {
        if (!strcasecmp (time_format, "raw"))
            e->ts = TS_RAW;
        else if (!strcasecmp (time_format, "iso"))
            e->ts = TS_ISO;
        else if (!strcasecmp (time_format, "offset"))
            e->ts = TS_OFFSET;
        else if (!strcasecmp (time_format, "human")
                 || !strcasecmp (time_format, "reltime"))
            e->ts = TS_HUMAN;
        else
            cmd_usage_error ("invalid time-format type '%s'", time_format);
    }
}

static void timestamp (struct evfmt *e, double t, char *buf, size_t size)
{
    static const char *months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    time_t sec = (time_t)t;
    struct tm tm;

    if (e->t0 == 0.)
        e->t0 = t;
    switch (e->ts) {
        case TS_RAW:
            snprintf (buf, size, "%lf", t);
            break;
        case TS_OFFSET:
            snprintf (buf, size, "%lf", t - e->t0);
            break;
        case TS_ISO: {
            char date[64], tz[16];
            localtime_r (&sec, &tm);
            strftime (date, sizeof (date), "%Y-%m-%dT%H:%M:%S", &tm);
            strftime (tz, sizeof (tz), "%z", &tm);
            if (strlen (tz) == 5) { /* +hhmm -> +hh:mm, Z for UTC */
                if (!strcmp (tz, "+0000"))
                    snprintf (tz, sizeof (tz), "Z");
                else {
                    tz[6] = '\0';
                    tz[5] = tz[4];
                    tz[4] = tz[3];
                    tz[3] = ':';
                }
            }
            snprintf (buf, size, "%s.%06lu%s", date,
                      (unsigned long)((t - sec) * 1e6), tz);
            break;
        }
        case TS_HUMAN:
            localtime_r (&sec, &tm);
            if (e->have_last && tm.tm_year == e->last_tm.tm_year
                && tm.tm_yday == e->last_tm.tm_yday
                && tm.tm_hour == e->last_tm.tm_hour
                && tm.tm_min == e->last_tm.tm_min)
                snprintf (buf, size, "[%+11.6f]", t - e->last_ts);
            else {
                e->last_ts = t;
                e->last_tm = tm;
                e->have_last = true;
                snprintf (buf, size, "[%s%02d %02d:%02d]", months[tm.tm_mon],
                          tm.tm_mday, tm.tm_hour, tm.tm_min);
            }
            break;
    }
}

static void print_entry (struct evfmt *e, json_t *entry)
{
    double t;
    const char *name, *key;
    json_t *context, *value;
    char ts[128];

    if (eventlog_entry_parse (entry, &t, &name, &context) < 0) {
        cmd_warn ("invalid eventlog entry");
        return;
    }
    if (e->t0 == 0.)
        e->t0 = t;
    if (e->json) {
        char *s = eventlog_entry_encode (entry);
        if (s)
            fputs (s, stdout);
        free (s);
        return;
    }
    timestamp (e, t, ts, sizeof (ts));
    printf ("%s %s", ts, name);
    if (context) {
        json_object_foreach (context, key, value)
        {
            char *s = json_dumps (value, JSON_ENCODE_ANY | JSON_COMPACT);
            printf (" %s=%s", key, s ? s : "?");
            free (s);
        }
    }
    printf ("\n");
}

static flux_jobid_t parse_jobid (const char *s)
{
    flux_jobid_t id;
    if (flux_job_id_parse (s, &id) < 0)
        cmd_die ("error parsing jobid: \"%s\"", s);
    return id;
}

/* exec, output, input: shorthands for guest eventlogs */
static const char *eventlog_path (const char *path)
{
    if (!strcmp (path, "exec"))
        return "guest.exec.eventlog";
    if (!strcmp (path, "output"))
        return "guest.output";
    if (!strcmp (path, "input"))
        return "guest.input";
    return path;
}

/* wait-event (and eventlog --follow) */

struct wait {
    const char *jobid;
    const char *path;
    const char *event; /* NULL: print every event (follow) */
    const char *mkey;  /* --match-context key, or NULL */
    const char *mvalue;
    int count;
    double timeout;
    bool waitcreate, verbose, quiet;
};

static bool context_matches (json_t *context, const char *key,
                             const char *value)
{
    json_t *v = json_object_get (context, key);
    char *s;
    bool match;

    if (!v)
        return false;
    if (json_is_string (v) && !strcmp (json_string_value (v), value))
        return true;
    s = json_dumps (v, JSON_ENCODE_ANY | JSON_COMPACT);
    match = s && !strcmp (s, value);
    free (s);
    return match;
}

static int run_wait (struct wait *w, struct evfmt *e)
{
    flux_t *h = cmd_open ();
    flux_future_t *f;
    int matches = 0;
    bool got = false, canceled = false;

    if (!(f = flux_rpc_pack (h, "job-info.eventlog-watch", FLUX_NODEID_ANY,
                             FLUX_RPC_STREAMING, "{s:I s:s s:i}", "id",
                             (json_int_t)parse_jobid (w->jobid), "path",
                             w->path, "flags", w->waitcreate ? 1 : 0)))
        cmd_die ("job-info.eventlog-watch: %s", strerror (errno));
    for (;;) {
        const char *line, *name;
        json_t *entry, *context;
        bool match = false;

        if (flux_future_wait_for (f, canceled ? -1. : w->timeout) < 0) {
            if (errno == ETIMEDOUT)
                cmd_die ("wait-event timeout on event '%s'",
                         w->event ? w->event : "clean");
            cmd_die ("%s", strerror (errno));
        }
        if (flux_rpc_get_unpack (f, "{s:s}", "event", &line) < 0) {
            int errnum = errno;
            if (errnum == ENODATA) {
                if (w->event && !got)
                    cmd_die ("event '%s' never received", w->event);
                break;
            }
            if (errnum == ENOENT) {
                if (!strcmp (w->path, "eventlog"))
                    cmd_die ("job %s not found", w->jobid);
                cmd_die ("eventlog path %s not found", w->path);
            }
            cmd_die ("%s", future_strerror (f, errnum));
        }
        if (canceled) { /* events after the cancel: drop them */
            flux_future_reset (f);
            continue;
        }
        if (!(entry = eventlog_entry_decode (line))
            || eventlog_entry_parse (entry, NULL, &name, &context) < 0)
            cmd_die ("invalid eventlog entry: %s", line);
        if (e->t0 == 0.)
            (void)eventlog_entry_parse (entry, &e->t0, NULL, NULL);
        if (w->event && !strcmp (name, w->event)
            && (!w->mkey
                || (context && context_matches (context, w->mkey, w->mvalue))))
            match = ++matches == w->count;
        if (match) {
            got = true;
            if (!w->quiet)
                print_entry (e, entry);
            fflush (stdout);
            flux_future_t *cf
                = flux_rpc_pack (h, "job-info.eventlog-watch-cancel",
                                 FLUX_NODEID_ANY, FLUX_RPC_NORESPONSE, "{s:i}",
                                 "matchtag", (int)flux_rpc_get_matchtag (f));
            flux_future_destroy (cf);
            canceled = true;
        }
        else if (!w->event || w->verbose)
            print_entry (e, entry);
        json_decref (entry);
        flux_future_reset (f);
    }
    fflush (stdout);
    flux_future_destroy (f);
    flux_close (h);
    return 0;
}

static int cmd_eventlog (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"format", required_argument, NULL, 'f'},
        {"time-format", required_argument, NULL, 'T'},
        {"human", no_argument, NULL, 'H'},
        {"path", required_argument, NULL, 'p'},
        {"follow", no_argument, NULL, 'F'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    const char *format = NULL, *tformat = NULL, *path = "eventlog", *s;
    struct evfmt e = {0};
    bool follow = false;
    flux_future_t *f;
    json_t *log, *entry;
    size_t i;
    int c;

    while ((c = cmd_getopt_permute (argc, argv, "f:T:Hp:Fw", longopts)) != -1) {
        if (c == 'f')
            format = optarg;
        else if (c == 'T')
            tformat = optarg;
        else if (c == 'H')
            format = "text", tformat = "human";
        else if (c == 'p')
            path = optarg;
        else if (c == 'F' || c == 'w')
            follow = true;
    }
    if (optind != argc - 1)
        cmd_usage_error ("expected one JOBID");
    evfmt_set (&e, format, tformat);
    path = eventlog_path (path);
    if (follow) {
        struct wait w = {.jobid = argv[optind],
                         .path = path,
                         .count = 1,
                         .timeout = -1.,
                         .waitcreate = true};
        return run_wait (&w, &e);
    }
    flux_t *h = cmd_open ();
    if (!(f = flux_rpc_pack (
              h, "job-info.lookup", FLUX_NODEID_ANY, 0, "{s:I s:[s] s:i}", "id",
              (json_int_t)parse_jobid (argv[optind]), "keys", path, "flags", 0))
        || flux_rpc_get_unpack (f, "{s:s}", path, &s) < 0) {
        if (errno == ENOENT) {
            if (!strcmp (path, "eventlog"))
                cmd_die ("job %s not found", argv[optind]);
            cmd_die ("eventlog path %s not found", path);
        }
        cmd_die ("%s", f ? future_strerror (f, errno) : strerror (errno));
    }
    if (!(log = eventlog_decode (s)))
        cmd_die ("%s: invalid eventlog", path);
    json_array_foreach (log, i, entry)
    {
        print_entry (&e, entry);
    }
    json_decref (log);
    flux_future_destroy (f);
    flux_close (h);
    return 0;
}

static int cmd_wait_event (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"timeout", required_argument, NULL, 't'},
        {"count", required_argument, NULL, 'c'},
        {"match-context", required_argument, NULL, 'm'},
        {"path", required_argument, NULL, 'p'},
        {"waitcreate", no_argument, NULL, 'W'},
        {"verbose", no_argument, NULL, 'v'},
        {"quiet", no_argument, NULL, 'q'},
        {"format", required_argument, NULL, 'f'},
        {"time-format", required_argument, NULL, 'T'},
        {"human", no_argument, NULL, 'H'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    struct wait w = {.count = 1, .timeout = -1., .path = "eventlog"};
    const char *format = NULL, *tformat = NULL;
    struct evfmt e = {0};
    char *kv = NULL;
    int c, rc;

    while ((c = cmd_getopt_permute (argc, argv, "t:c:m:p:Wvqf:T:H", longopts))
           != -1) {
        switch (c) {
            case 't':
                w.timeout = cmd_parse_duration ("--timeout", optarg);
                break;
            case 'c':
                w.count = cmd_parse_long ("--count", optarg, 1, INT32_MAX);
                break;
            case 'm':
                free (kv);
                if (!(kv = strdup (optarg)) || !strchr (kv, '='))
                    cmd_die ("must specify a context test as key=value");
                *strchr (kv, '=') = '\0';
                w.mkey = kv;
                w.mvalue = kv + strlen (kv) + 1;
                break;
            case 'p':
                w.path = optarg;
                break;
            case 'W':
                w.waitcreate = true;
                break;
            case 'v':
                w.verbose = true;
                break;
            case 'q':
                w.quiet = true;
                break;
            case 'f':
                format = optarg;
                break;
            case 'T':
                tformat = optarg;
                break;
            case 'H':
                format = "text", tformat = "human";
                break;
        }
    }
    if (optind != argc - 2)
        cmd_usage_error ("expected JOBID and EVENT");
    evfmt_set (&e, format, tformat);
    w.jobid = argv[optind];
    w.event = argv[optind + 1];
    w.path = eventlog_path (w.path);
    rc = run_wait (&w, &e);
    free (kv);
    return rc;
}

/* jobspec as submitted: the payload of J (RFC 15: header.payload.sig) */
static char *original_jobspec (const char *J)
{
    const char *p = strchr (J, '.'), *q;
    char *out;
    ssize_t n;

    if (!p || !(q = strchr (p + 1, '.')))
        return NULL;
    if (!(out = malloc (base64_decoded_size (q - p - 1) + 1)))
        return NULL;
    if ((n = base64_decode (out, base64_decoded_size (q - p - 1) + 1, p + 1,
                            q - p - 1))
        < 0) {
        free (out);
        return NULL;
    }
    out[n] = '\0';
    return out;
}

static int cmd_info (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"original", no_argument, NULL, 'o'},
        {"base", no_argument, NULL, 'b'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    bool original = false, base = false;
    json_t *keys, *resp;
    flux_future_t *f;
    flux_t *h;
    int c;

    while ((c = cmd_getopt_permute (argc, argv, "ob", longopts)) != -1) {
        if (c == 'o')
            original = true;
        else if (c == 'b')
            base = true;
    }
    if (optind > argc - 2)
        cmd_usage_error ("expected JOBID and KEY...");
    if (!(keys = json_array ()))
        cmd_die ("out of memory");
    for (int i = optind + 1; i < argc; i++)
        json_array_append_new (
            keys,
            json_string (original && !strcmp (argv[i], "jobspec") ? "J"
                                                                  : argv[i]));
    h = cmd_open ();
    if (!(f = flux_rpc_pack (h, "job-info.lookup", FLUX_NODEID_ANY, 0,
                             "{s:I s:O s:i}", "id",
                             (json_int_t)parse_jobid (argv[optind]), "keys",
                             keys, "flags", base ? 0 : 2))
        || flux_rpc_get_unpack (f, "o", &resp) < 0) {
        if (errno == ENOENT)
            cmd_die ("job %s id or key not found", argv[optind]);
        cmd_die ("%s", f ? future_strerror (f, errno) : strerror (errno));
    }
    for (int i = optind + 1; i < argc; i++) {
        bool orig = original && !strcmp (argv[i], "jobspec");
        const char *s
            = json_string_value (json_object_get (resp, orig ? "J" : argv[i]));
        char *text = NULL;
        if (!s)
            cmd_die ("%s: no value", argv[i]);
        if (orig && !(s = text = original_jobspec (s)))
            cmd_die ("cannot decode J");
        fputs (s, stdout);
        if (!*s || s[strlen (s) - 1] != '\n')
            fputc ('\n', stdout);
        free (text);
    }
    json_decref (keys);
    flux_future_destroy (f);
    flux_close (h);
    return 0;
}

/* status: watch each job's eventlog until clean; exit code as flux-core:
 * the largest of the jobs' exit codes (128+signal for a signal), at
 * least --exception-exit-code for a job that had a fatal exception
 * (PROTOCOLS-exec.md 4.2).
 */
struct jobstat {
    const char *arg;
    flux_future_t *f;
    json_t *events; /* finish and exception events, for --json */
    int status;     /* finish status, -1 if none */
    bool exception;
};

static int cmd_status (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"exception-exit-code", required_argument, NULL, 'e'},
        {"json", no_argument, NULL, 'j'},
        {"verbose", no_argument, NULL, 'v'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    int exc_code = 1, rc = 0, c, n;
    bool json = false, verbose = false;
    struct jobstat *js;
    flux_t *h;

    while ((c = cmd_getopt_permute (argc, argv, "e:jv", longopts)) != -1) {
        if (c == 'e')
            exc_code = cmd_parse_long ("--exception-exit-code", optarg, 0, 255);
        else if (c == 'j')
            json = true;
        else if (c == 'v')
            verbose = true;
    }
    if ((n = argc - optind) < 1)
        cmd_usage_error ("expected JOBID...");
    if (!(js = calloc (n, sizeof (*js))))
        cmd_die ("out of memory");
    h = cmd_open ();
    for (int i = 0; i < n; i++) {
        js[i].arg = argv[optind + i];
        js[i].status = -1;
        js[i].events = json_array ();
        if (!(js[i].f
              = flux_rpc_pack (h, "job-info.eventlog-watch", FLUX_NODEID_ANY,
                               FLUX_RPC_STREAMING, "{s:I s:s s:i}", "id",
                               (json_int_t)parse_jobid (js[i].arg), "path",
                               "eventlog", "flags", 0)))
            cmd_die ("job-info.eventlog-watch: %s", strerror (errno));
    }
    /* one job after the other: the others' events queue meanwhile */
    for (int i = 0; i < n; i++) {
        for (;;) {
            const char *line, *name;
            json_t *entry, *ctx;
            if (flux_rpc_get_unpack (js[i].f, "{s:s}", "event", &line) < 0) {
                if (errno == ENOENT)
                    cmd_die ("job %s not found", js[i].arg);
                if (errno != ENODATA)
                    cmd_die ("%s: %s", js[i].arg,
                             future_strerror (js[i].f, errno));
                break;
            }
            if ((entry = eventlog_entry_decode (line))
                && eventlog_entry_parse (entry, NULL, &name, &ctx) == 0) {
                if (!strcmp (name, "finish"))
                    (void)json_unpack (ctx, "{s:i}", "status", &js[i].status);
                if (!strcmp (name, "exception")) {
                    int sev = 1;
                    (void)json_unpack (ctx, "{s:i}", "severity", &sev);
                    if (sev == 0)
                        js[i].exception = true;
                }
                if (!strcmp (name, "finish") || !strcmp (name, "exception"))
                    json_array_append (js[i].events, entry);
            }
            json_decref (entry);
            flux_future_reset (js[i].f);
        }
    }
    for (int i = 0; i < n; i++) {
        int code;
        if (js[i].status >= 0)
            code = WIFSIGNALED (js[i].status) ? 128 + WTERMSIG (js[i].status)
                                              : WEXITSTATUS (js[i].status);
        else
            code = 0;
        /* a fatal exception: at least --exception-exit-code */
        if (js[i].exception && code < exc_code)
            code = exc_code;
        if (js[i].exception && js[i].status < 0 && verbose)
            fprintf (stderr, "%s: exception\n", js[i].arg);
        else if (verbose)
            fprintf (stderr, "%s: exited with exit code %d\n", js[i].arg, code);
        if (json) {
            char *s = json_dumps (js[i].events, JSON_COMPACT);
            printf ("%s\n", s ? s : "[]");
            free (s);
        }
        if (code > rc)
            rc = code;
        json_decref (js[i].events);
        flux_future_destroy (js[i].f);
    }
    free (js);
    flux_close (h);
    return rc;
}
