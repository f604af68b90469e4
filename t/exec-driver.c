/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* exec-driver - plays the job manager's side of RFC 32 so an exec service
 * (job-exec) can be tested before (or without) the real job-manager.
 *
 * Usage: exec-driver [-t SECS] [-r READYFILE] SCRIPT
 *
 * It registers the service "job-manager" (so no job-manager module may be
 * loaded), touches READYFILE, and waits for job-manager.exec-hello
 * {service} (printing "hello SERVICE"); then SCRIPT runs, one command per
 * line ('#' comments):
 *   R ID RANKS [START EXP]   write job.<ID>.R with R_lite ranks RANKS;
 *                            START and EXP are seconds from now for
 *                            starttime and expiration ("-" or absent:
 *                            unset)
 *   eventlog ID SECS         write job.<ID>.eventlog with a start event
 *                            SECS seconds from now (negative: past)
 *   start ID SYSTEM          job-exec.start with reattach false and a
 *                            jobspec whose attributes.system is the JSON
 *                            object SYSTEM ("{}" for none)
 *   reattach ID SYSTEM       the same with reattach true
 *   raw PAYLOAD | rawns PAYLOAD   send PAYLOAD as a start request, with
 *                            or without the streaming flag
 *   wait ID TEXT             until the responses of ID, as printed by
 *                            "print", contain TEXT (e.g. "release=all!")
 *   waiterr N                until N error responses have been received
 *   print ID                 prints "ID: R1 R2 ..." with each response as
 *                            start, finish=S, release=RANKS[!] (! final),
 *                            exception=TYPE/SEV:NOTE
 *   exception ID TYPE SEV    publish job-exception {id, type, severity}
 *   kill ID SIGNUM           publish shell-ID.kill {signum}
 *   override ID EVENT [STATUS]     job-exec.override, prints the result
 *   expiration ID SECS       job-exec.expiration to now + SECS
 *   critical ID RANKS        job-exec.critical-ranks
 *   sleep SECS | echo TEXT
 *   mark                     remember the time
 *   elapsed MIN MAX          prints "elapsed ok" if MIN <= seconds since
 *                            mark <= MAX, else "elapsed T not in [MIN,MAX]"
 *   bench N [RANKS]          N jobs with run_duration 0 (ids 1000000..),
 *                            R written in one commit first; prints
 *                            "bench N jobs in T s (R jobs/s)" once each
 *                            has ended with start, finish 0, release all
 *   benchR N [RANKS]         the same with R in each start request (as
 *                            newer flux-core job managers send it): no
 *                            KVS lookup in job-exec
 * Error responses to start requests print as "error ERRNUM TEXT".
 * Exit 0 at the end of SCRIPT, 1 on timeout (default 60 s) or error.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libflux/flux.h"
#include "libkvs/kvs.h"

#include "jm-driver.h"

static flux_t *h;
static char service[128] = "job-exec";
static char **lines;
static int nlines, cursor;
static bool hello_done;
static json_t *traces; /* decimal id -> trace string */
static int nerrors;
static double mark;
static uv_timer_t sleeper;
static bool sleeping;
static struct {
    uint64_t base;
    int n, ended, bad;
    double t0;
    bool active;
} bench;

static double now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void key_of (char *buf, size_t size, uint64_t id, const char *name)
{
    snprintf (buf, size, "job.%04x.%04x.%04x.%04x.%s",
              (unsigned)(id >> 48) & 0xffff, (unsigned)(id >> 32) & 0xffff,
              (unsigned)(id >> 16) & 0xffff, (unsigned)id & 0xffff, name);
}

static const char *trace_of (uint64_t id)
{
    char k[32];
    snprintf (k, sizeof (k), "%ju", (uintmax_t)id);
    const char *s = json_string_value (json_object_get (traces, k));
    return s ? s : "";
}

static void trace_add (uint64_t id, const char *what)
{
    char k[32], *s;
    const char *old = trace_of (id);

    snprintf (k, sizeof (k), "%ju", (uintmax_t)id);
    if (asprintf (&s, "%s%s%s", old, *old ? " " : "", what) < 0)
        die ("out of memory");
    json_object_set_new (traces, k, json_string (s));
    free (s);
}

static void advance (void);

/* ---- responses ---- */

static void bench_response (uint64_t id, const char *type, json_t *data)
{
    bool final = json_is_true (json_object_get (data, "final"));
    const char *ranks = json_string_value (json_object_get (data, "ranks"));

    if (!strcmp (type, "exception")
        || (!strcmp (type, "finish")
            && json_integer_value (json_object_get (data, "status")) != 0)
        || (!strcmp (type, "release")
            && (!final || !ranks || strcmp (ranks, "all"))))
        bench.bad++;
    if (!strcmp (type, "release") && final && ++bench.ended == bench.n) {
        double t = now () - bench.t0;
        printf ("bench %d jobs in %.3f s (%.0f jobs/s)%s\n", bench.n, t,
                bench.n / t, bench.bad ? " WITH ERRORS" : "");
        bench.active = false;
    }
}

static void start_rsp_cb (flux_t *h, flux_msg_handler_t *mh,
                          const flux_msg_t *msg, void *arg)
{
    json_int_t id;
    const char *type;
    json_t *data;
    char buf[1024];
    int errnum = 0;

    if (flux_msg_get_errnum (msg, &errnum) == 0 && errnum != 0) {
        const char *text = NULL;
        flux_response_decode_error (msg, &text);
        printf ("error %d %s\n", errnum, text ? text : strerror (errnum));
        nerrors++;
        advance ();
        return;
    }
    if (flux_msg_unpack (msg, "{s:I s:s s:o !}", "id", &id, "type", &type,
                         "data", &data)
        < 0) {
        printf ("malformed start response: %s\n", flux_msg_last_error (msg));
        return;
    }
    if (bench.active && (uint64_t)id >= bench.base
        && (uint64_t)id < bench.base + bench.n) {
        bench_response (id, type, data);
        if (!bench.active)
            advance ();
        return;
    }
    if (!strcmp (type, "start"))
        snprintf (buf, sizeof (buf), "start");
    else if (!strcmp (type, "finish"))
        snprintf (buf, sizeof (buf), "finish=%d",
                  (int)json_integer_value (json_object_get (data, "status")));
    else if (!strcmp (type, "release"))
        snprintf (buf, sizeof (buf), "release=%s%s",
                  json_string_value (json_object_get (data, "ranks")),
                  json_is_true (json_object_get (data, "final")) ? "!" : "");
    else if (!strcmp (type, "exception"))
        snprintf (buf, sizeof (buf), "exception=%s/%d:%s",
                  json_string_value (json_object_get (data, "type")),
                  (int)json_integer_value (json_object_get (data, "severity")),
                  json_string_value (json_object_get (data, "note")));
    else
        snprintf (buf, sizeof (buf), "?%s", type);
    trace_add (id, buf);
    advance ();
}

static void hello_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    const char *name;

    if (flux_request_unpack (msg, NULL, "{s:s}", "service", &name) < 0) {
        flux_respond_error (h, msg, EPROTO, "expected {service:s}");
        return;
    }
    flux_respond (h, msg, NULL);
    printf ("hello %s\n", name);
    snprintf (service, sizeof (service), "%s", name);
    hello_done = true;
    advance ();
}

static void ignore_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
}

/* ---- commands ---- */

static void send_start (const char *payload, bool streaming)
{
    char topic[128];
    flux_msg_t *msg;

    snprintf (topic, sizeof (topic), "%s.start", service);
    if (!(msg = flux_request_encode (topic, payload))
        || (streaming && flux_msg_set_streaming (msg) < 0)
        || flux_send (h, msg, 0) < 0)
        die ("sending %s: %s", topic, strerror (errno));
    flux_msg_decref (msg);
}

static void start_R (uint64_t id, const char *system, bool reattach,
                     const char *R)
{
    json_error_t e;
    json_t *sys = json_loads (system, 0, &e);
    json_t *o;
    char *s;

    if (!sys)
        die ("start %ju: bad SYSTEM JSON: %s", (uintmax_t)id, e.text);
    o = json_pack ("{s:I s:i s:{s:i s:[] s:[] s:{s:o}} s:b}", "id",
                   (json_int_t)id, "userid", (int)getuid (), "jobspec",
                   "version", 1, "resources", "tasks", "attributes", "system",
                   sys, "reattach", reattach);
    if (!o || (R && json_object_set_new (o, "R", json_loads (R, 0, &e)) < 0)
        || !(s = json_dumps (o, JSON_COMPACT)))
        die ("out of memory");
    send_start (s, true);
    free (s);
    json_decref (o);
}

static void start (uint64_t id, const char *system, bool reattach)
{
    start_R (id, system, reattach, NULL);
}

static char *R_string (const char *ranks, double start, double exp)
{
    char *s;
    if (asprintf (&s,
                  "{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"%s\","
                  "\"children\":{\"core\":\"0\"}}],\"nodelist\":[\"n\"],"
                  "\"starttime\":%.6f,\"expiration\":%.6f}}",
                  ranks, start, exp)
        < 0)
        die ("out of memory");
    return s;
}

static void commit (flux_kvs_txn_t *txn)
{
    flux_future_t *f = flux_kvs_commit (h, NULL, 0, txn);
    if (!f || flux_future_get (f, NULL) < 0)
        die ("kvs commit: %s", future_strerror (f, errno));
    flux_future_destroy (f);
    flux_kvs_txn_destroy (txn);
}

static void put (uint64_t id, const char *name, const char *value)
{
    char key[128];
    flux_kvs_txn_t *txn = flux_kvs_txn_create ();

    key_of (key, sizeof (key), id, name);
    if (!txn || flux_kvs_txn_put (txn, 0, key, value) < 0)
        die ("kvs txn: %s", strerror (errno));
    commit (txn);
}

static double offset (const char *s)
{
    return !s || !strcmp (s, "-") ? 0. : now () + atof (s);
}

static void cmd_R (uint64_t id, const char *rest)
{
    char ranks[256] = "", start[64] = "", exp[64] = "";
    int n = sscanf (rest, "%255s %63s %63s", ranks, start, exp);
    char *R;

    if (n < 1)
        die ("R: expected RANKS");
    R = R_string (ranks, n >= 2 ? offset (start) : 0.,
                  n >= 3 ? offset (exp) : 0.);
    put (id, "R", R);
    free (R);
}

static void cmd_eventlog (uint64_t id, const char *rest)
{
    double t = now () + atof (rest);
    char buf[512];

    snprintf (buf, sizeof (buf),
              "{\"timestamp\":%.6f,\"name\":\"submit\",\"context\":"
              "{\"userid\":%d,\"urgency\":16,\"flags\":0,\"version\":1}}\n"
              "{\"timestamp\":%.6f,\"name\":\"start\"}\n",
              t - 1., (int)getuid (), t);
    put (id, "eventlog", buf);
}

static void publish (const char *topic, json_t *o)
{
    flux_future_t *f;
    char *s = json_dumps (o, JSON_COMPACT);

    if (!s || !(f = flux_event_publish (h, topic, 0, s))
        || flux_future_get (f, NULL) < 0)
        die ("publishing %s: %s", topic, strerror (errno));
    flux_future_destroy (f);
    free (s);
    json_decref (o);
}

static void rpc (const char *what, uint64_t id, const char *topic, json_t *o)
{
    char *s = json_dumps (o, JSON_COMPACT);
    flux_future_t *f = s ? flux_rpc (h, topic, s, FLUX_NODEID_ANY, 0) : NULL;

    if (f && flux_rpc_get (f, NULL) == 0)
        printf ("%s %ju: ok\n", what, (uintmax_t)id);
    else
        printf ("%s %ju: error %d %s\n", what, (uintmax_t)id, errno,
                future_strerror (f, errno));
    flux_future_destroy (f);
    free (s);
    json_decref (o);
}

static void cmd_bench (int n, const char *ranks, bool inline_R)
{
    flux_kvs_txn_t *txn = flux_kvs_txn_create ();
    char *R = R_string (ranks && *ranks ? ranks : "0", 0., 0.);
    char key[128];

    bench.base = 1000000;
    bench.n = n;
    bench.ended = bench.bad = 0;
    if (!inline_R) {
        for (int i = 0; i < n; i++) {
            key_of (key, sizeof (key), bench.base + i, "R");
            if (!txn || flux_kvs_txn_put (txn, 0, key, R) < 0)
                die ("kvs txn: %s", strerror (errno));
        }
        commit (txn);
    }
    else
        flux_kvs_txn_destroy (txn);
    bench.active = true;
    bench.t0 = now ();
    /* payloads by snprintf: the driver should cost little next to job-exec */
    for (int i = 0; i < n; i++) {
        char buf[1024];
        snprintf (buf, sizeof (buf),
                  "{\"id\":%ju,\"userid\":%d,\"jobspec\":{\"version\":1,"
                  "\"resources\":[],\"tasks\":[],\"attributes\":{\"system\":"
                  "{\"exec\":{\"test\":{}}}}},\"reattach\":false%s%s}",
                  (uintmax_t)(bench.base + i), (int)getuid (),
                  inline_R ? ",\"R\":" : "", inline_R ? R : "");
        send_start (buf, true);
    }
    free (R);
}

static void sleep_cb (uv_timer_t *t)
{
    sleeping = false;
    cursor++;
    advance ();
}

/* Run one line; false if it must wait. */
static bool run_line (char *line)
{
    char cmd[32] = "", rest[8192] = "";
    unsigned long long id = 0;
    int n = sscanf (line, "%31s %llu %8191[^\n]", cmd, &id, rest);

    if (n < 1 || cmd[0] == '#')
        return true;
    if (!strcmp (cmd, "R") && n == 3)
        cmd_R (id, rest);
    else if (!strcmp (cmd, "eventlog") && n == 3)
        cmd_eventlog (id, rest);
    else if (!strcmp (cmd, "start") && n == 3)
        start (id, rest, false);
    else if (!strcmp (cmd, "reattach") && n == 3)
        start (id, rest, true);
    else if (!strcmp (cmd, "raw") || !strcmp (cmd, "rawns")) {
        const char *p = line + strlen (cmd);
        while (*p == ' ')
            p++;
        send_start (*p ? p : NULL, !strcmp (cmd, "raw"));
    }
    else if (!strcmp (cmd, "wait") && n == 3)
        return strstr (trace_of (id), rest) != NULL;
    else if (!strcmp (cmd, "waiterr") && n >= 2)
        return nerrors >= (int)id;
    else if (!strcmp (cmd, "print") && n == 2)
        printf ("%ju: %s\n", (uintmax_t)id, trace_of (id));
    else if (!strcmp (cmd, "exception") && n == 3) {
        char type[64];
        int sev;
        if (sscanf (rest, "%63s %d", type, &sev) != 2)
            die ("exception: expected TYPE SEV");
        publish ("job-exception",
                 json_pack ("{s:I s:s s:i}", "id", (json_int_t)id, "type", type,
                            "severity", sev));
    }
    else if (!strcmp (cmd, "kill") && n == 3) {
        char topic[64];
        snprintf (topic, sizeof (topic), "shell-%ju.kill", (uintmax_t)id);
        publish (topic, json_pack ("{s:i}", "signum", atoi (rest)));
    }
    else if (!strcmp (cmd, "override") && n >= 3) {
        char event[64];
        int status;
        json_t *o;
        if (sscanf (rest, "%63s %d", event, &status) == 2)
            o = json_pack ("{s:I s:s s:i}", "jobid", (json_int_t)id, "event",
                           event, "status", status);
        else
            o = json_pack ("{s:I s:s}", "jobid", (json_int_t)id, "event",
                           event);
        rpc ("override", id, "job-exec.override", o);
    }
    else if (!strcmp (cmd, "expiration") && n == 3)
        rpc ("expiration", id, "job-exec.expiration",
             json_pack ("{s:I s:f}", "id", (json_int_t)id, "expiration",
                        now () + atof (rest)));
    else if (!strcmp (cmd, "critical") && n == 3)
        rpc ("critical", id, "job-exec.critical-ranks",
             json_pack ("{s:I s:s}", "id", (json_int_t)id, "ranks", rest));
    else if (!strcmp (cmd, "sleep")) {
        double secs = atof (line + 6);
        sleeping = true;
        uv_timer_start (&sleeper, sleep_cb, (uint64_t)(secs * 1000), 0);
        return false;
    }
    else if ((!strcmp (cmd, "bench") || !strcmp (cmd, "benchR")) && n >= 2) {
        if (!bench.active && bench.n == 0) {
            cmd_bench ((int)id, n == 3 ? rest : NULL, !strcmp (cmd, "benchR"));
            return false;
        }
        if (bench.active)
            return false;
        bench.n = 0;
    }
    else if (!strcmp (cmd, "mark"))
        mark = now ();
    else if (!strcmp (cmd, "elapsed")) {
        double lo, hi, t = now () - mark;
        if (sscanf (line + 7, "%lf %lf", &lo, &hi) != 2)
            die ("elapsed: expected MIN MAX");
        if (t >= lo && t <= hi)
            printf ("elapsed ok\n");
        else
            printf ("elapsed %.3f not in [%g,%g]\n", t, lo, hi);
    }
    else if (!strcmp (cmd, "echo"))
        printf ("%s\n", line + 5);
    else
        die ("bad script line: %s", line);
    return true;
}

static void advance (void)
{
    while (hello_done && !sleeping && cursor < nlines) {
        if (!run_line (lines[cursor]))
            return;
        cursor++;
    }
    if (cursor == nlines)
        flux_reactor_stop (flux_get_reactor (h));
}

static void timeout_cb (uv_timer_t *t)
{
    die ("timeout at script line %d: %s", cursor + 1,
         cursor < nlines ? lines[cursor] : "(waiting for exec-hello)");
}

int main (int argc, char **argv)
{
    const struct flux_msg_handler_spec htab[] = {
        {FLUX_MSGTYPE_REQUEST, "job-manager.exec-hello", hello_cb, 0},
        {FLUX_MSGTYPE_REQUEST, "job-manager.disconnect", ignore_cb, 0},
        {FLUX_MSGTYPE_RESPONSE, "*.start", start_rsp_cb, 0},
        FLUX_MSGHANDLER_TABLE_END,
    };
    flux_msg_handler_t **handlers;
    const char *readyfile = NULL;
    double timeout = 60.;
    uv_timer_t timer;
    uv_loop_t *loop;
    int c;

    jm_driver_name = "exec-driver";
    setvbuf (stdout, NULL, _IOLBF, 0);
    if (!(h = flux_open (NULL, 0)) || !(traces = json_object ()))
        die ("flux_open: %s", strerror (errno));
    while ((c = getopt (argc, argv, "t:r:")) != -1) {
        if (c == 't')
            timeout = atof (optarg);
        else if (c == 'r')
            readyfile = optarg;
        else
            die ("Usage: exec-driver [-t SECS] [-r READYFILE] SCRIPT");
    }
    if (optind != argc - 1)
        die ("Usage: exec-driver [-t SECS] [-r READYFILE] SCRIPT");
    jm_driver_read_script (argv[optind], &lines, &nlines);
    if (flux_msg_handler_addvec (h, htab, NULL, &handlers) < 0)
        die ("flux_msg_handler_addvec: %s", strerror (errno));
    jm_driver_register (h, readyfile);
    loop = flux_reactor_uv (flux_get_reactor (h));
    uv_timer_init (loop, &sleeper);
    uv_timer_init (loop, &timer);
    uv_timer_start (&timer, timeout_cb, (uint64_t)(timeout * 1000), 0);
    uv_unref ((uv_handle_t *)&timer);
    if (flux_reactor_run (flux_get_reactor (h), 0) < 0)
        die ("reactor: %s", strerror (errno));
    flux_msg_handler_delvec (handlers);
    jm_driver_free_script (lines, nlines);
    json_decref (traces);
    uv_close ((uv_handle_t *)&timer, NULL);
    uv_close ((uv_handle_t *)&sleeper, NULL);
    flux_close (h);
    return 0;
}
