/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* queue.c - `flux queue enable|disable|start|stop|status|drain|idle`:
 * job queue administration through the job manager (PROTOCOLS.md 5.2:
 * queue-enable, queue-start, queue-status, drain, idle).
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdutil.h"

static const char usage[] = "Usage: flux queue COMMAND [OPTIONS] [ARGS...]\n"
                            "Control the job queue.\n";

static const char enable_usage[]
    = "Usage: flux queue enable\n"
      "Accept job submissions.\n"
      "  -h, --help          Display this message\n";
static const char disable_usage[]
    = "Usage: flux queue disable REASON...\n"
      "Refuse job submissions, telling submitters REASON.\n"
      "  -h, --help          Display this message\n";
static const char start_usage[]
    = "Usage: flux queue start\n"
      "Start scheduling: pending jobs may be allocated resources.\n"
      "  -h, --help          Display this message\n";
static const char stop_usage[]
    = "Usage: flux queue stop [OPTIONS] [REASON...]\n"
      "Stop scheduling (submissions are still accepted).  The stop is\n"
      "remembered across a restart of the job manager or the instance.\n"
      "      --nocheckpoint  Do not remember it: start again after a restart\n"
      "  -h, --help          Display this message\n";
static const char status_usage[]
    = "Usage: flux queue status\n"
      "Show whether submission is enabled and scheduling started.\n"
      "  -h, --help          Display this message\n";
static const char drain_usage[]
    = "Usage: flux queue drain [OPTIONS]\n"
      "Wait until no job is active.\n"
      "  -t, --timeout=FSD   Give up after FSD\n"
      "  -h, --help          Display this message\n";
static const char idle_usage[]
    = "Usage: flux queue idle [OPTIONS]\n"
      "Wait until no job is running or being allocated resources.\n"
      "  -t, --timeout=FSD   Give up after FSD\n"
      "  -q, --quiet         Do not print the number of pending jobs\n"
      "  -h, --help          Display this message\n";

static int q_enable (int argc, char **argv);
static int q_disable (int argc, char **argv);
static int q_start (int argc, char **argv);
static int q_stop (int argc, char **argv);
static int q_status (int argc, char **argv);
static int q_drain (int argc, char **argv);
static int q_idle (int argc, char **argv);

const struct builtin builtin_queue = {
    .name = "queue",
    .summary = "Control the job queue",
    .usage = usage,
    .main = cmd_queue,
};

static const struct builtin members_tab[] = {
    {"enable", "Accept job submissions", enable_usage, q_enable},
    {"disable", "Refuse job submissions", disable_usage, q_disable},
    {"start", "Start scheduling", start_usage, q_start},
    {"stop", "Stop scheduling", stop_usage, q_stop},
    {"status", "Show the queue status", status_usage, q_status},
    {"drain", "Wait until no job is active", drain_usage, q_drain},
    {"idle", "Wait until no job runs", idle_usage, q_idle},
};

static const struct builtin *const members[] = {
    &members_tab[0], &members_tab[1], &members_tab[2], &members_tab[3],
    &members_tab[4], &members_tab[5], &members_tab[6], NULL,
};

int cmd_queue (int argc, char **argv)
{
    return cmd_run_group (&builtin_queue, members, argc, argv);
}

/* Send one request with a JSON object payload and wait for it. */
static json_t *call (const char *topic, json_t *payload, double timeout)
{
    flux_t *h = cmd_open ();
    flux_future_t *f;
    const char *s = NULL;
    json_t *o = NULL;
    char *str = json_dumps (payload, JSON_COMPACT);

    if (!str || !(f = flux_rpc (h, topic, str, FLUX_NODEID_ANY, 0)))
        cmd_die ("%s: %s", topic, strerror (errno));
    if (flux_future_wait_for (f, timeout) < 0 && errno == ETIMEDOUT)
        cmd_die ("timeout waiting for %s", topic + strlen ("job-manager."));
    if (flux_rpc_get (f, &s) < 0)
        cmd_die ("%s", future_strerror (f, errno));
    if (s && !(o = json_loads (s, 0, NULL)))
        cmd_die ("%s: malformed response", topic);
    flux_future_destroy (f);
    flux_close (h);
    free (str);
    json_decref (payload);
    return o;
}

static int q_enable (int argc, char **argv)
{
    cmd_getopt_none (argc, argv);
    if (optind < argc)
        cmd_usage_error ("unexpected argument %s", argv[optind]);
    json_decref (call ("job-manager.queue-enable",
                       json_pack ("{s:b s:b}", "enable", 1, "all", 1), -1));
    return 0;
}

static int q_disable (int argc, char **argv)
{
    char *reason;

    cmd_getopt_none (argc, argv);
    if (!(reason = cmd_join_words (argc - optind, argv + optind)))
        cmd_usage_error ("a REASON is required");
    json_decref (call (
        "job-manager.queue-enable",
        json_pack ("{s:b s:b s:s}", "enable", 0, "all", 1, "reason", reason),
        -1));
    free (reason);
    return 0;
}

static int q_start (int argc, char **argv)
{
    cmd_getopt_none (argc, argv);
    if (optind < argc)
        cmd_usage_error ("unexpected argument %s", argv[optind]);
    json_decref (call ("job-manager.queue-start",
                       json_pack ("{s:b s:b}", "start", 1, "all", 1), -1));
    return 0;
}

static const struct option stop_opts[] = {
    {"nocheckpoint", no_argument, NULL, 'N'},
    CMD_OPT_HELP,
    {NULL, 0, NULL, 0},
};

static int q_stop (int argc, char **argv)
{
    char *reason;
    json_t *o;
    int c, nocheckpoint = 0;

    while ((c = cmd_getopt (argc, argv, "", stop_opts)) != -1) {
        if (c == 'N')
            nocheckpoint = 1;
    }
    reason = cmd_join_words (argc - optind, argv + optind);
    o = json_pack ("{s:b s:b s:b}", "start", 0, "all", 1, "nocheckpoint",
                   nocheckpoint);
    if (o && reason)
        json_object_set_new (o, "reason", json_string (reason));
    json_decref (call ("job-manager.queue-start", o, -1));
    free (reason);
    return 0;
}

static int q_status (int argc, char **argv)
{
    const char *dreason = NULL, *sreason = NULL;
    int enable, start;
    json_t *o;

    cmd_getopt_none (argc, argv);
    if (optind < argc)
        cmd_usage_error ("unexpected argument %s", argv[optind]);
    o = call ("job-manager.queue-status", json_object (), -1);
    if (!o
        || json_unpack (o, "{s:b s:b s?s s?s}", "enable", &enable, "start",
                        &start, "disable_reason", &dreason, "stop_reason",
                        &sreason)
               < 0)
        cmd_die ("malformed queue-status response");
    if (enable)
        printf ("Job submission is enabled\n");
    else
        printf ("Job submission is disabled: %s\n", dreason ? dreason : "");
    if (start)
        printf ("Scheduling is started\n");
    else if (sreason)
        printf ("Scheduling is stopped: %s\n", sreason);
    else
        printf ("Scheduling is stopped\n");
    json_decref (o);
    return 0;
}

static const struct option wait_opts[] = {
    {"timeout", required_argument, NULL, 't'},
    {"quiet", no_argument, NULL, 'q'},
    CMD_OPT_HELP,
    {NULL, 0, NULL, 0},
};

static int q_drain (int argc, char **argv)
{
    double timeout = -1;
    int c;

    while ((c = cmd_getopt (argc, argv, "t:", wait_opts)) != -1) {
        if (c == 't')
            timeout = cmd_parse_duration ("--timeout", optarg);
    }
    if (optind < argc)
        cmd_usage_error ("unexpected argument %s", argv[optind]);
    json_decref (call ("job-manager.drain", json_object (), timeout));
    return 0;
}

static int q_idle (int argc, char **argv)
{
    double timeout = -1;
    bool quiet = false;
    int c, pending = 0;
    json_t *o;

    while ((c = cmd_getopt (argc, argv, "t:q", wait_opts)) != -1) {
        if (c == 't')
            timeout = cmd_parse_duration ("--timeout", optarg);
        if (c == 'q')
            quiet = true;
    }
    if (optind < argc)
        cmd_usage_error ("unexpected argument %s", argv[optind]);
    o = call ("job-manager.idle", json_object (), timeout);
    if (!o || json_unpack (o, "{s:i}", "pending", &pending) < 0)
        cmd_die ("malformed idle response");
    if (!quiet)
        printf ("%d pending job%s\n", pending, pending == 1 ? "" : "s");
    json_decref (o);
    return 0;
}
