/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* sched-bench - the sched-simple engine on 1,024 configured nodes of 64
 * cores, over loop:// with the resource module, the job manager and the
 * KVS played in-process (commits are acknowledged, not stored).
 *
 * Usage: sched-bench [-n NODES] [-j JOBS]
 *
 *  burst    JOBS single-node jobs arrive at once (unlimited mode) on an
 *           empty instance: time to the last SUCCESS, and the time spent
 *           in first fit per alloc
 *  pending  the instance is full and JOBS single-node jobs are pending;
 *           jobs are freed one at a time and each free lets the head of
 *           the queue run: time from free to SUCCESS per alloc
 *  cores    JOBS jobs of 1-8 cores (mixed shapes) on an empty instance
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "libflux/flux.h"
#include "libutil/monotime.h"

static flux_t *h;
static flux_reactor_t *r;
static sched_t *s;
static int nodes = 1024;
static int successes, annotates, commits;
static uint64_t last_success;

/* CPU time of this (single-threaded) process: less disturbed than wall
 * time when other work shares the machine */
static double cpu (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void acquire_cb (flux_t *h, flux_msg_handler_t *mh,
                        const flux_msg_t *msg, void *arg)
{
    char ranks[32], hosts[32];
    snprintf (ranks, sizeof (ranks), "0-%d", nodes - 1);
    snprintf (hosts, sizeof (hosts), "node[0-%d]", nodes - 1);
    flux_respond_pack (h, msg, "{s:{s:i s:{s:[{s:s s:{s:s}}] s:[s]}} s:s}",
                       "resources", "version", 1, "execution", "R_lite", "rank",
                       ranks, "children", "core", "0-63", "nodelist", hosts,
                       "up", ranks);
}

static void hello_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    flux_respond_error (h, msg, ENODATA, NULL);
}

static void ready_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    flux_respond_pack (h, msg, "{s:i}", "count", 0);
}

static void commit_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    commits++;
    flux_respond_pack (h, msg, "{s:s s:i}", "rootref", "sha1-0", "rootseq",
                       commits);
}

static void ignore_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
}

#define FEED(name, fn)                                   \
    static void name (flux_t *h, flux_msg_handler_t *mh, \
                      const flux_msg_t *msg, void *arg)  \
    {                                                    \
        fn (s, msg);                                     \
    }
FEED (s_alloc, sched_alloc)
FEED (s_free, sched_free)

static void alloc_rsp_cb (flux_t *h, flux_msg_handler_t *mh,
                          const flux_msg_t *msg, void *arg)
{
    json_int_t id;
    int type;

    if (flux_msg_unpack (msg, "{s:I s:i}", "id", &id, "type", &type) < 0) {
        fprintf (stderr, "bad response\n");
        exit (1);
    }
    if (type == 0) {
        successes++;
        last_success = id;
    }
    else if (type == 1)
        annotates++;
    else {
        fprintf (stderr, "job %ju: unexpected response type %d\n",
                 (uintmax_t)id, type);
        exit (1);
    }
}

static json_t *jobspec (int nnodes, int cores, int x)
{
    json_t *slot
        = json_pack ("{s:s s:i s:s s:[{s:s s:i}]}", "type", "slot", "count", 1,
                     "label", "task", "with", "type", "core", "count", cores);
    json_t *res
        = nnodes > 0 ? json_pack ("[{s:s s:i s:b s:[o]}]", "type", "node",
                                  "count", nnodes, "exclusive", x, "with", slot)
                     : json_pack ("[o]", slot);
    return json_pack ("{s:i s:o s:[{s:[s] s:s s:{s:i}}] s:{s:{s:f}}}",
                      "version", 1, "resources", res, "tasks", "command",
                      "true", "slot", "task", "count", "per_slot", 1,
                      "attributes", "system", "duration", 0.);
}

static void send_json (const char *topic, json_t *o)
{
    char *str = json_dumps (o, JSON_COMPACT);
    flux_msg_t *msg = flux_request_encode (topic, str);
    if (!msg || flux_send (h, msg, 0) < 0) {
        fprintf (stderr, "send %s failed\n", topic);
        exit (1);
    }
    flux_msg_decref (msg);
    free (str);
    json_decref (o);
}

static void alloc (uint64_t id, json_t *js)
{
    send_json ("sched.alloc",
               json_pack ("{s:I s:I s:i s:o}", "id", (json_int_t)id, "priority",
                          (json_int_t)16, "userid", 1, "jobspec", js));
}

static void run_until_successes (int n)
{
    while (successes < n)
        if (flux_reactor_run (r, FLUX_REACTOR_ONCE) < 0) {
            fprintf (stderr, "reactor failed\n");
            exit (1);
        }
}

static void settle (void)
{
    for (int i = 0; i < 100; i++)
        flux_reactor_run (r, FLUX_REACTOR_NOWAIT);
}

static double alloc_time (void)
{
    json_t *o = sched_stats (s);
    double t = 0;
    json_unpack (o, "{s:f}", "alloc-time", &t);
    json_decref (o);
    return t;
}

static void start (void)
{
    if (!(s = sched_create (h, 0)) || sched_start (s) < 0) {
        fprintf (stderr, "sched start failed\n");
        exit (1);
    }
    while (!sched_is_ready (s))
        flux_reactor_run (r, FLUX_REACTOR_ONCE);
    successes = annotates = commits = 0;
}

static void burst (int jobs)
{
    double t0, c0, t, c, a0;

    start ();
    a0 = alloc_time ();
    t0 = monotime ();
    c0 = cpu ();
    for (int i = 1; i <= jobs; i++)
        alloc (i, jobspec (1, 64, 1));
    run_until_successes (jobs);
    t = monotime () - t0;
    c = cpu () - c0;
    printf ("burst:   %d single-node jobs on %d nodes: %.1f ms to the last "
            "success, %.1f us/job wall, %.1f us/job cpu (%d commits); "
            "first fit %.2f us/alloc\n",
            jobs, nodes, t * 1e3, t * 1e6 / jobs, c * 1e6 / jobs, commits,
            (alloc_time () - a0) * 1e6 / jobs);
    sched_destroy (s);
}

static void pending (int jobs)
{
    double t0, t, a0, c0, total = 0;
    int base;

    start ();
    for (int i = 1; i <= nodes; i++)
        alloc (i, jobspec (1, 64, 1));
    run_until_successes (nodes);
    for (int i = 1; i <= jobs; i++)
        alloc (100000 + i, jobspec (1, 64, 1));
    settle ();
    if (annotates != 1 || successes != nodes) {
        fprintf (stderr, "pending: expected a blocked queue\n");
        exit (1);
    }
    a0 = alloc_time ();
    base = successes;
    c0 = cpu ();
    for (int i = 1; i <= jobs; i++) {
        t0 = monotime ();
        send_json ("sched.free", json_pack ("{s:I}", "id", (json_int_t)i));
        run_until_successes (base + i);
        total += monotime () - t0;
    }
    t = total;
    printf ("pending: %d jobs pending on %d full nodes, freed one at a time: "
            "%.1f us wall, %.1f us cpu per free->success; first fit %.2f "
            "us/alloc\n",
            jobs, nodes, t * 1e6 / jobs, (cpu () - c0) * 1e6 / jobs,
            (alloc_time () - a0) * 1e6 / jobs);
    sched_destroy (s);
}

static void cores (int jobs)
{
    double t0, t, a0, c0;

    start ();
    a0 = alloc_time ();
    t0 = monotime ();
    c0 = cpu ();
    for (int i = 1; i <= jobs; i++)
        alloc (i, jobspec (0, 1 + i % 8, 0));
    run_until_successes (jobs);
    t = monotime () - t0;
    printf ("cores:   %d jobs of 1-8 cores: %.1f ms, %.1f us/job wall, %.1f "
            "us/job cpu; first fit %.2f us/alloc\n",
            jobs, t * 1e3, t * 1e6 / jobs, (cpu () - c0) * 1e6 / jobs,
            (alloc_time () - a0) * 1e6 / jobs);
    sched_destroy (s);
}

int main (int argc, char **argv)
{
    const struct flux_msg_handler_spec htab[] = {
        {FLUX_MSGTYPE_REQUEST, "resource.acquire", acquire_cb, 0},
        {FLUX_MSGTYPE_REQUEST, "job-manager.sched-hello", hello_cb, 0},
        {FLUX_MSGTYPE_REQUEST, "job-manager.sched-ready", ready_cb, 0},
        {FLUX_MSGTYPE_REQUEST, "kvs.commit", commit_cb, 0},
        {FLUX_MSGTYPE_REQUEST, "log.append", ignore_cb, 0},
        {FLUX_MSGTYPE_REQUEST, "sched.alloc", s_alloc, 0},
        {FLUX_MSGTYPE_REQUEST, "sched.free", s_free, 0},
        {FLUX_MSGTYPE_RESPONSE, "sched.alloc", alloc_rsp_cb, 0},
        {FLUX_MSGTYPE_RESPONSE, "sched.free", ignore_cb, 0},
        FLUX_MSGHANDLER_TABLE_END,
    };
    flux_msg_handler_t **handlers;
    int jobs = 1000, c;

    while ((c = getopt (argc, argv, "n:j:")) != -1) {
        if (c == 'n')
            nodes = atoi (optarg);
        else if (c == 'j')
            jobs = atoi (optarg);
        else {
            fprintf (stderr, "Usage: sched-bench [-n NODES] [-j JOBS]\n");
            return 1;
        }
    }
    if (nodes < 2 || jobs < 1 || jobs > nodes) {
        fprintf (stderr,
                 "sched-bench: need 2 <= nodes and 1 <= jobs <= nodes\n");
        return 1;
    }
    if (!(h = flux_open ("loop://", 0)) || !(r = flux_get_reactor (h))
        || flux_msg_handler_addvec (h, htab, NULL, &handlers) < 0) {
        fprintf (stderr, "loop:// setup failed\n");
        return 1;
    }
    burst (jobs); /* the first run also warms up the allocator */
    burst (jobs);
    pending (jobs);
    cores (jobs);
    flux_msg_handler_delvec (handlers);
    flux_close (h);
    return 0;
}
