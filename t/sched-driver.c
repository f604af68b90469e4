/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* sched-driver - plays the job manager's side of RFC 27 so a scheduler can
 * be tested before (or without) the real job-manager.
 *
 * Usage: sched-driver [-n] [-t SECS] [-r READYFILE] [-j ID:RFILE]... SCRIPT
 *
 * It registers the service "job-manager" (so no job-manager module may be
 * loaded), writes the R of each -j job to job.<id>.R, touches READYFILE,
 * and waits for the scheduler: each job-manager.sched-hello is answered
 * with the jobs holding resources (the -j ones and those allocated since,
 * not yet freed), each sched-ready with {count} and the line
 * "ready MODE LIMIT".  In limited mode at most LIMIT alloc requests are
 * outstanding (the rest wait here, in order); after a new hello, the
 * requests left unanswered by the old scheduler are sent again.
 *
 * After the first ready, SCRIPT runs, one command per line ('#' comments):
 *   alloc ID PRIO SPEC   SPEC: "N=2,s=1,c=4,g=1,x,t=60" (nodes, slots per
 *                        node or in all, cores and gpus per slot,
 *                        exclusive, duration) or "@FILE" (jobspec JSON)
 *   wait ID EVENT        until ID has had EVENT: success annotate deny
 *                        cancel free error
 *   free ID | cancel ID | prioritize ID=PRIO[,ID=PRIO...]
 *   expiration ID SECS   sched.expiration to starttime + SECS; prints
 *                        "ID expiration ok" or "ID expiration error: ..."
 *   R ID                 prints "ID R SUMMARY duration=D" (D: expiration
 *                        minus starttime, 0 if none) from the KVS
 *   status               prints "status all=.. down=.. allocated=.."
 *   hello                wait for the next hello/ready (after a reload)
 *   sh COMMAND           run COMMAND with sh -c; prints "sh: exit N" if
 *                        it fails
 *   echo TEXT            prints TEXT
 *   elapsed              prints "elapsed SECS" since the last ready or
 *                        elapsed (for measurements, not for comparisons)
 * Responses print as they arrive: "ID success SUMMARY" (only if R was
 * already in the KVS, else "ID success-without-R"; "ID success-R-mismatch"
 * if the response carries an R that is not the one in the KVS; -n skips that
 * lookup and prints "ID success SUMMARY"), "ID annotate REASON", "ID deny
 * NOTE", "ID cancel", "ID free", "ID error ERRNO TEXT". Exit 0 at the end of
 * SCRIPT, 1 on timeout (default 60 s) or error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libflux/flux.h"
#include "libkvs/kvs.h"

#include "jm-driver.h"
#include "librlist/rlist.h"

enum { EV_SUCCESS, EV_ANNOTATE, EV_DENY, EV_CANCEL, EV_FREE, EV_ERROR, EV_N };
static const char *evname[]
    = {"success", "annotate", "deny", "cancel", "free", "error"};

enum { J_NEW, J_QUEUED, J_SENT, J_ALLOCATED, J_DONE };

struct job {
    uint64_t id;
    unsigned int priority;
    int state;
    json_t *jobspec;
    int ev[EV_N];
};

static flux_t *h;
static struct job *jobs;
static int njobs, maxjobs;
static char **lines;
static int nlines, cursor;
static int limit = -1; /* -1: unlimited or not ready yet */
static int outstanding;
static int hellos, readies, waiting_ready = -1;
static bool ready;
static bool no_R_check;
static double mark;

static double now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static struct job *job_get (uint64_t id, bool create)
{
    for (int i = 0; i < njobs; i++)
        if (jobs[i].id == id)
            return &jobs[i];
    if (!create)
        return NULL;
    if (njobs == maxjobs) {
        maxjobs = maxjobs ? maxjobs * 2 : 256;
        if (!(jobs = realloc (jobs, maxjobs * sizeof (*jobs))))
            die ("out of memory");
    }
    memset (&jobs[njobs], 0, sizeof (jobs[0]));
    jobs[njobs].id = id;
    return &jobs[njobs++];
}

static void key_of (char *buf, size_t size, uint64_t id)
{
    snprintf (buf, size, "job.%04x.%04x.%04x.%04x.R",
              (unsigned)(id >> 48) & 0xffff, (unsigned)(id >> 32) & 0xffff,
              (unsigned)(id >> 16) & 0xffff, (unsigned)id & 0xffff);
}

/* R of a job from the KVS (new reference) or NULL. */
static json_t *lookup_R (uint64_t id)
{
    char key[64];
    flux_future_t *f;
    json_t *R = NULL, *o;

    key_of (key, sizeof (key), id);
    if ((f = flux_kvs_lookup (h, NULL, 0, key))
        && flux_kvs_lookup_get_unpack (f, "o", &o) == 0)
        R = json_incref (o);
    flux_future_destroy (f);
    return R;
}

static char *summary (json_t *R)
{
    struct rlist *rl = rlist_from_R (R, NULL);
    char *s = rl ? rlist_dumps (rl) : NULL;
    rlist_destroy (rl);
    return s ? s : strdup ("?");
}

/* ---- sending ---- */

static void send_req (const char *topic, json_t *o)
{
    char *s = json_dumps (o, JSON_COMPACT);
    flux_msg_t *msg = s ? flux_request_encode (topic, s) : NULL;

    if (!msg || flux_send (h, msg, 0) < 0)
        die ("sending %s: %s", topic, strerror (errno));
    flux_msg_decref (msg);
    free (s);
    json_decref (o);
}

static void send_alloc (struct job *job)
{
    send_req ("sched.alloc",
              json_pack ("{s:I s:I s:i s:f s:O}", "id", (json_int_t)job->id,
                         "priority", (json_int_t)job->priority, "userid",
                         (int)getuid (), "t_submit", 1.0, "jobspec",
                         job->jobspec));
    job->state = J_SENT;
    outstanding++;
}

/* Send queued allocs while the limit allows, in the order given. */
static void pump (void)
{
    if (!ready)
        return;
    for (int i = 0; i < njobs; i++) {
        if (limit >= 0 && outstanding >= limit)
            break;
        if (jobs[i].state == J_QUEUED)
            send_alloc (&jobs[i]);
    }
}

/* ---- the script ---- */

static json_t *jobspec_of (const char *spec)
{
    int N = 0, slots = 1, c = 1, g = 0, x = 0;
    double t = 0.;
    char *cpy, *tok, *save = NULL;
    json_t *with, *slot, *res;

    if (spec[0] == '@') {
        json_error_t e;
        json_t *o = json_load_file (spec + 1, 0, &e);
        if (!o)
            die ("%s: %s", spec + 1, e.text);
        return o;
    }
    if (!(cpy = strdup (spec)))
        die ("out of memory");
    for (tok = strtok_r (cpy, ",", &save); tok;
         tok = strtok_r (NULL, ",", &save)) {
        if (!strncmp (tok, "N=", 2))
            N = atoi (tok + 2);
        else if (!strncmp (tok, "s=", 2))
            slots = atoi (tok + 2);
        else if (!strncmp (tok, "c=", 2))
            c = atoi (tok + 2);
        else if (!strncmp (tok, "g=", 2))
            g = atoi (tok + 2);
        else if (!strcmp (tok, "x"))
            x = 1;
        else if (!strncmp (tok, "t=", 2))
            t = atof (tok + 2);
        else
            die ("bad spec element '%s'", tok);
    }
    free (cpy);
    with = json_pack ("[{s:s s:i}]", "type", "core", "count", c);
    if (g > 0)
        json_array_append_new (
            with, json_pack ("{s:s s:i}", "type", "gpu", "count", g));
    slot = json_pack ("{s:s s:i s:s s:o}", "type", "slot", "count", slots,
                      "label", "task", "with", with);
    if (N > 0)
        res = json_pack ("[{s:s s:i s:b s:[o]}]", "type", "node", "count", N,
                         "exclusive", x, "with", slot);
    else
        res = json_pack ("[o]", slot);
    return json_pack ("{s:i s:o s:[{s:[s] s:s s:{s:i}}] s:{s:{s:f}}}",
                      "version", 1, "resources", res, "tasks", "command",
                      "true", "slot", "task", "count", "per_slot", 1,
                      "attributes", "system", "duration", t);
}

static void cmd_expiration (uint64_t id, double secs)
{
    json_t *R = lookup_R (id);
    double start = 0.;
    flux_future_t *f;

    if (R)
        json_unpack (R, "{s:{s:F}}", "execution", "starttime", &start);
    json_decref (R);
    f = flux_rpc_pack (h, "sched.expiration", FLUX_NODEID_ANY, 0, "{s:I s:f}",
                       "id", (json_int_t)id, "expiration", start + secs);
    if (f && flux_rpc_get (f, NULL) == 0)
        printf ("%ju expiration ok\n", (uintmax_t)id);
    else
        printf ("%ju expiration error: %s\n", (uintmax_t)id,
                future_strerror (f, errno));
    flux_future_destroy (f);
}

static void cmd_R (uint64_t id)
{
    json_t *R = lookup_R (id);
    double start = 0., end = 0.;
    char *s;

    if (!R) {
        printf ("%ju R none\n", (uintmax_t)id);
        return;
    }
    json_unpack (R, "{s:{s?F s?F}}", "execution", "starttime", &start,
                 "expiration", &end);
    s = summary (R);
    printf ("%ju R %s duration=%g\n", (uintmax_t)id, s,
            end > 0. ? end - start : 0.);
    free (s);
    json_decref (R);
}

static void cmd_status (void)
{
    flux_future_t *f
        = flux_rpc (h, "sched.resource-status", NULL, FLUX_NODEID_ANY, 0);
    json_t *all, *down, *alloc;
    char *a, *d, *al;

    if (!f
        || flux_rpc_get_unpack (f, "{s:o s:o s:o}", "all", &all, "down", &down,
                                "allocated", &alloc)
               < 0)
        die ("sched.resource-status: %s", future_strerror (f, errno));
    a = summary (all);
    d = summary (down);
    al = summary (alloc);
    printf ("status all=%s down=%s allocated=%s\n", a, d, al);
    free (a);
    free (d);
    free (al);
    flux_future_destroy (f);
}

/* Run one line; false if it must wait. */
static bool run_line (char *line)
{
    char cmd[32] = "", arg2[64] = "", rest[4096] = "";
    unsigned long long id = 0;
    int n = sscanf (line, "%31s %llu %63s %4095[^\n]", cmd, &id, arg2, rest);

    if (n < 1 || cmd[0] == '#')
        return true;
    if (!strcmp (cmd, "alloc") && n == 4) {
        struct job *job = job_get (id, true);
        job->priority = strtoul (arg2, NULL, 10);
        json_decref (job->jobspec);
        job->jobspec = jobspec_of (rest);
        memset (job->ev, 0, sizeof (job->ev));
        job->state = J_QUEUED;
        pump ();
    }
    else if (!strcmp (cmd, "wait") && n == 3) {
        struct job *job = job_get (id, true);
        int e;
        for (e = 0; e < EV_N; e++)
            if (!strcmp (evname[e], arg2))
                break;
        if (e == EV_N)
            die ("unknown event %s", arg2);
        return job->ev[e] > 0;
    }
    else if (!strcmp (cmd, "free") && n == 2)
        send_req ("sched.free",
                  json_pack ("{s:I s:b}", "id", (json_int_t)id, "final", 1));
    else if (!strcmp (cmd, "cancel") && n == 2)
        send_req ("sched.cancel", json_pack ("{s:I}", "id", (json_int_t)id));
    else if (!strcmp (cmd, "prioritize")) {
        json_t *a = json_array ();
        char *tok, *save = NULL;
        sscanf (line, "%*s %4095s", rest);
        for (tok = strtok_r (rest, ",", &save); tok;
             tok = strtok_r (NULL, ",", &save)) {
            unsigned long long jid, prio;
            struct job *job;
            if (sscanf (tok, "%llu=%llu", &jid, &prio) != 2)
                die ("bad prioritize element %s", tok);
            if ((job = job_get (jid, false)))
                job->priority = prio;
            json_array_append_new (
                a, json_pack ("[I,I]", (json_int_t)jid, (json_int_t)prio));
        }
        send_req ("sched.prioritize", json_pack ("{s:o}", "jobs", a));
    }
    else if (!strcmp (cmd, "expiration") && n == 3)
        cmd_expiration (id, atof (arg2));
    else if (!strcmp (cmd, "R") && n == 2)
        cmd_R (id);
    else if (!strcmp (cmd, "status"))
        cmd_status ();
    else if (!strcmp (cmd, "hello")) {
        if (waiting_ready < 0)
            waiting_ready = readies;
        if (readies == waiting_ready)
            return false;
        waiting_ready = -1;
    }
    else if (!strcmp (cmd, "sh")) {
        int rc;
        fflush (stdout);
        rc = system (line + 3);
        if (rc != 0)
            printf ("sh: exit %d\n", WIFEXITED (rc) ? WEXITSTATUS (rc) : -1);
    }
    else if (!strcmp (cmd, "echo"))
        printf ("%s\n", line + 5);
    else if (!strcmp (cmd, "elapsed")) {
        double t = now ();
        printf ("elapsed %.6f\n", t - mark);
        mark = t;
    }
    else
        die ("bad script line: %s", line);
    return true;
}

static void advance (void)
{
    while (ready && cursor < nlines) {
        if (!run_line (lines[cursor]))
            return;
        cursor++;
    }
    if (cursor == nlines)
        flux_reactor_stop (flux_get_reactor (h));
}

/* ---- the job-manager side ---- */

static void hello_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    hellos++;
    ready = false;
    outstanding = 0;
    for (int i = 0; i < njobs; i++) {
        struct job *job = &jobs[i];
        if (job->state == J_ALLOCATED)
            flux_respond_pack (h, msg, "{s:I s:I s:i s:f}", "id",
                               (json_int_t)job->id, "priority",
                               (json_int_t)job->priority, "userid",
                               (int)getuid (), "t_submit", 1.0);
        else if (job->state == J_SENT)
            job->state = J_QUEUED; /* the old scheduler took it along */
    }
    flux_respond_error (h, msg, ENODATA, NULL);
}

static void ready_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    const char *mode;
    int lim = -1, count = 0;

    if (flux_request_unpack (msg, NULL, "{s:s s?i}", "mode", &mode, "limit",
                             &lim)
        < 0) {
        flux_respond_error (h, msg, EPROTO, "expected {mode:s limit?:i}");
        return;
    }
    for (int i = 0; i < njobs; i++)
        if (jobs[i].state == J_QUEUED)
            count++;
    flux_respond_pack (h, msg, "{s:i}", "count", count);
    printf ("ready %s %d\n", mode, lim);
    limit = !strcmp (mode, "limited") ? lim : -1;
    ready = true;
    readies++;
    mark = now ();
    pump ();
    advance ();
}

static void ignore_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
}

static void event (struct job *job, int ev)
{
    job->ev[ev]++;
    if (ev == EV_SUCCESS || ev == EV_DENY || ev == EV_CANCEL
        || ev == EV_ERROR) {
        if (job->state == J_SENT && outstanding > 0)
            outstanding--;
        job->state = ev == EV_SUCCESS ? J_ALLOCATED : J_DONE;
    }
    if (ev == EV_FREE)
        job->state = J_DONE;
    pump ();
    advance ();
}

static void alloc_rsp_cb (flux_t *h, flux_msg_handler_t *mh,
                          const flux_msg_t *msg, void *arg)
{
    json_int_t id;
    int type, errnum = 0;
    json_t *ann = NULL, *rspR = NULL;
    const char *note = NULL, *sum = NULL, *reason = NULL;
    struct job *job;

    if (flux_msg_get_errnum (msg, &errnum) == 0 && errnum != 0) {
        const char *text = NULL;
        flux_response_decode_error (msg, &text);
        printf ("? error %d %s\n", errnum, text ? text : strerror (errnum));
        return;
    }
    if (flux_msg_unpack (msg, "{s:I s:i s?o s?s s?o}", "id", &id, "type", &type,
                         "annotations", &ann, "note", &note, "R", &rspR)
            < 0
        || !(job = job_get (id, false)) || type < 0 || type > 3) {
        printf ("? malformed sched.alloc response\n");
        return;
    }
    if (ann)
        json_unpack (ann, "{s?{s?s s?s}}", "sched", "resource_summary", &sum,
                     "reason_pending", &reason);
    switch (type) {
        case 0: {
            json_t *R = no_R_check ? NULL : lookup_R (job->id);
            /* an R in the response must be the one in the KVS */
            printf ("%ju %s %s\n", (uintmax_t)id,
                    R && rspR && !json_equal (R, rspR) ? "success-R-mismatch"
                    : R || no_R_check                  ? "success"
                                                       : "success-without-R",
                    sum ? sum : "-");
            json_decref (R);
            event (job, EV_SUCCESS);
            break;
        }
        case 1:
            printf ("%ju annotate %s\n", (uintmax_t)id, reason ? reason : "-");
            event (job, EV_ANNOTATE);
            break;
        case 2:
            printf ("%ju deny %s\n", (uintmax_t)id, note ? note : "-");
            event (job, EV_DENY);
            break;
        case 3:
            printf ("%ju cancel\n", (uintmax_t)id);
            event (job, EV_CANCEL);
            break;
    }
}

static void free_rsp_cb (flux_t *h, flux_msg_handler_t *mh,
                         const flux_msg_t *msg, void *arg)
{
    json_int_t id;
    int errnum = 0;
    struct job *job;

    if (flux_msg_get_errnum (msg, &errnum) == 0 && errnum != 0) {
        printf ("? error %d %s\n", errnum, strerror (errnum));
        return;
    }
    if (flux_msg_unpack (msg, "{s:I}", "id", &id) < 0
        || !(job = job_get (id, true))) {
        printf ("? malformed sched.free response\n");
        return;
    }
    printf ("%ju free\n", (uintmax_t)id);
    event (job, EV_FREE);
}

static void timeout_cb (uv_timer_t *t)
{
    die ("timeout at script line %d: %s", cursor + 1,
         cursor < nlines ? lines[cursor] : "(waiting for the scheduler)");
}

/* -j ID:RFILE: the job holds R already. */
static void preallocate (const char *arg)
{
    char *end, key[64];
    uint64_t id = strtoull (arg, &end, 10);
    json_error_t e;
    json_t *R;
    flux_kvs_txn_t *txn;
    flux_future_t *f;
    struct job *job;

    if (*end != ':' || !(R = json_load_file (end + 1, 0, &e)))
        die ("-j %s: expected ID:RFILE", arg);
    key_of (key, sizeof (key), id);
    if (!(txn = flux_kvs_txn_create ())
        || flux_kvs_txn_pack (txn, 0, key, "O", R) < 0
        || !(f = flux_kvs_commit (h, NULL, 0, txn))
        || flux_future_get (f, NULL) < 0)
        die ("writing %s: %s", key, strerror (errno));
    flux_future_destroy (f);
    flux_kvs_txn_destroy (txn);
    json_decref (R);
    job = job_get (id, true);
    job->state = J_ALLOCATED;
    job->priority = 16;
}

int main (int argc, char **argv)
{
    const struct flux_msg_handler_spec htab[] = {
        {FLUX_MSGTYPE_REQUEST, "job-manager.sched-hello", hello_cb, 0},
        {FLUX_MSGTYPE_REQUEST, "job-manager.sched-ready", ready_cb, 0},
        {FLUX_MSGTYPE_REQUEST, "job-manager.disconnect", ignore_cb, 0},
        {FLUX_MSGTYPE_RESPONSE, "sched.alloc", alloc_rsp_cb, 0},
        {FLUX_MSGTYPE_RESPONSE, "sched.free", free_rsp_cb, 0},
        FLUX_MSGHANDLER_TABLE_END,
    };
    flux_msg_handler_t **handlers;
    const char *readyfile = NULL;
    double timeout = 60.;
    uv_timer_t timer;
    int c;

    jm_driver_name = "sched-driver";
    setvbuf (stdout, NULL, _IOLBF, 0);
    if (!(h = flux_open (NULL, 0)))
        die ("flux_open: %s", strerror (errno));
    while ((c = getopt (argc, argv, "nt:r:j:")) != -1) {
        if (c == 'n')
            no_R_check = true;
        else if (c == 't')
            timeout = atof (optarg);
        else if (c == 'r')
            readyfile = optarg;
        else if (c == 'j')
            preallocate (optarg);
        else
            die ("Usage: sched-driver [-n] [-t SECS] [-r READYFILE] "
                 "[-j ID:RFILE]... SCRIPT");
    }
    if (optind != argc - 1)
        die ("Usage: sched-driver [-n] [-t SECS] [-r READYFILE] "
             "[-j ID:RFILE]... SCRIPT");
    jm_driver_read_script (argv[optind], &lines, &nlines);
    if (flux_msg_handler_addvec (h, htab, NULL, &handlers) < 0)
        die ("flux_msg_handler_addvec: %s", strerror (errno));
    jm_driver_register (h, readyfile);
    uv_timer_init (flux_reactor_uv (flux_get_reactor (h)), &timer);
    uv_timer_start (&timer, timeout_cb, (uint64_t)(timeout * 1000), 0);
    uv_unref ((uv_handle_t *)&timer);
    if (flux_reactor_run (flux_get_reactor (h), 0) < 0)
        die ("reactor: %s", strerror (errno));
    flux_msg_handler_delvec (handlers);
    for (int i = 0; i < njobs; i++)
        json_decref (jobs[i].jobspec);
    free (jobs);
    jm_driver_free_script (lines, nlines);
    uv_close ((uv_handle_t *)&timer, NULL);
    flux_close (h);
    return 0;
}
