/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* job_control.c - members of the `flux job` group that act on jobs
 * through the job manager (PROTOCOLS.md 5.2):
 *
 *   flux job urgency [-v] ID URGENCY     job-manager.urgency
 *   flux job raise [-s SEV] [-t TYPE] ID [NOTE...]
 *                                        job-manager.raise
 *   flux job cancel ID [NOTE...]         raise type=cancel severity=0
 *   flux job kill [-s SIGNAL] ID...      job-manager.kill
 *   flux job wait [-a] [-v] [ID]         job-manager.wait (WAITABLE jobs)
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdutil.h"
#include "libjob/job.h"

static const char urgency_usage[]
    = "Usage: flux job urgency [OPTIONS] JOBID URGENCY\n"
      "Set the urgency (0-31, or hold, default, expedite) of a pending "
      "job.\n"
      "  -v, --verbose       Print the old urgency\n"
      "  -h, --help          Display this message\n";
static const char raise_usage[]
    = "Usage: flux job raise [OPTIONS] JOBID [NOTE...]\n"
      "Raise an exception on a job.\n"
      "  -s, --severity=N    Severity 0-7 (default 0: fatal)\n"
      "  -t, --type=TYPE     Exception type (default cancel)\n"
      "  -h, --help          Display this message\n";
static const char cancel_usage[]
    = "Usage: flux job cancel JOBID [NOTE...]\n"
      "Cancel a job (a fatal \"cancel\" exception).\n"
      "  -h, --help          Display this message\n";
static const char kill_usage[]
    = "Usage: flux job kill [OPTIONS] JOBID...\n"
      "Send a signal to the tasks of running jobs.\n"
      "  -s, --signal=SIG    Signal name or number (default SIGTERM)\n"
      "  -h, --help          Display this message\n";
static const char wait_usage[]
    = "Usage: flux job wait [OPTIONS] [JOBID]\n"
      "Wait for a job submitted with the waitable flag to finish and\n"
      "exit with its success (any such job if JOBID is omitted): 0 if it\n"
      "succeeded, 1 if not, 2 if there was no waitable job.\n"
      "  -a, --all           Wait for all waitable jobs\n"
      "  -v, --verbose       With --all, a line for each job, not just\n"
      "                      the failed ones\n"
      "  -h, --help          Display this message\n";

static int job_urgency (int argc, char **argv);
static int job_raise (int argc, char **argv);
static int job_cancel (int argc, char **argv);
static int job_kill (int argc, char **argv);
static int job_wait (int argc, char **argv);

const struct builtin builtin_job_urgency = {
    "urgency", "Set the urgency of a pending job", urgency_usage, job_urgency};
const struct builtin builtin_job_raise
    = {"raise", "Raise an exception on a job", raise_usage, job_raise};
const struct builtin builtin_job_cancel
    = {"cancel", "Cancel a job", cancel_usage, job_cancel};
const struct builtin builtin_job_kill
    = {"kill", "Send a signal to running jobs", kill_usage, job_kill};
const struct builtin builtin_job_wait
    = {"wait", "Wait for waitable jobs to finish", wait_usage, job_wait};

static flux_jobid_t parse_id (const char *s)
{
    flux_jobid_t id;

    if (flux_job_id_parse (s, &id) < 0)
        cmd_usage_error ("invalid job id %s", s);
    return id;
}

static int job_urgency (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"verbose", no_argument, NULL, 'v'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    bool verbose = false;
    flux_jobid_t id;
    int c, urgency, old;
    const char *u;
    flux_future_t *f;
    flux_t *h;

    while ((c = cmd_getopt (argc, argv, "v", longopts)) != -1) {
        if (c == 'v')
            verbose = true;
    }
    if (argc - optind != 2)
        cmd_usage_error ("expected JOBID URGENCY");
    id = parse_id (argv[optind]);
    u = argv[optind + 1];
    urgency = cmd_parse_urgency ("URGENCY", u);
    h = cmd_open ();
    if (!(f = flux_rpc_pack (h, "job-manager.urgency", FLUX_NODEID_ANY, 0,
                             "{s:I s:i}", "id", (json_int_t)id, "urgency",
                             urgency))
        || flux_rpc_get_unpack (f, "{s:i}", "old_urgency", &old) < 0)
        cmd_die ("%s: %s", argv[optind],
                 f ? future_strerror (f, errno) : strerror (errno));
    if (verbose)
        printf ("%s: urgency changed from %d to %d\n", argv[optind], old,
                urgency);
    flux_future_destroy (f);
    flux_close (h);
    return 0;
}

static int raise_one (flux_jobid_t id, const char *idstr, const char *type,
                      int severity, const char *note)
{
    flux_t *h = cmd_open ();
    flux_future_t *f;
    json_t *o;

    o = json_pack ("{s:I s:s s:i}", "id", (json_int_t)id, "type", type,
                   "severity", severity);
    if (o && note)
        json_object_set_new (o, "note", json_string (note));
    if (!o
        || !(f = flux_rpc_pack (h, "job-manager.raise", FLUX_NODEID_ANY, 0, "O",
                                o))
        || flux_future_get (f, NULL) < 0)
        cmd_die ("%s: %s", idstr,
                 o && f ? future_strerror (f, errno) : strerror (errno));
    json_decref (o);
    flux_future_destroy (f);
    flux_close (h);
    return 0;
}

static int job_raise (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"severity", required_argument, NULL, 's'},
        {"type", required_argument, NULL, 't'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    int c, severity = 0, rc;
    const char *type = "cancel";
    char *note;

    while ((c = cmd_getopt (argc, argv, "s:t:", longopts)) != -1) {
        if (c == 's')
            severity = (int)cmd_parse_long ("--severity", optarg, 0, 7);
        if (c == 't')
            type = optarg;
    }
    if (optind == argc)
        cmd_usage_error ("missing JOBID");
    note = cmd_join_words (argc - optind - 1, argv + optind + 1);
    rc = raise_one (parse_id (argv[optind]), argv[optind], type, severity,
                    note);
    free (note);
    return rc;
}

static int job_cancel (int argc, char **argv)
{
    char *note;
    int rc;

    cmd_getopt_none (argc, argv);
    if (optind == argc)
        cmd_usage_error ("missing JOBID");
    note = cmd_join_words (argc - optind - 1, argv + optind + 1);
    rc = raise_one (parse_id (argv[optind]), argv[optind], "cancel", 0, note);
    free (note);
    return rc;
}

static int job_kill (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"signal", required_argument, NULL, 's'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    int c, signum = SIGTERM, rc = 0;
    size_t n;
    flux_future_t **f;
    flux_t *h;

    while ((c = cmd_getopt_permute (argc, argv, "s:", longopts)) != -1) {
        if (c == 's' && (signum = cmd_parse_signal (optarg)) < 0)
            cmd_usage_error ("invalid signal %s", optarg);
    }
    if (optind >= argc)
        cmd_usage_error ("missing JOBID");
    n = (size_t)(argc - optind);
    for (size_t i = 0; i < n; i++)
        (void)parse_id (argv[optind + i]);
    if (!(f = calloc ((size_t)n, sizeof (*f))))
        cmd_die ("out of memory");
    h = cmd_open ();
    for (size_t i = 0; i < n; i++) {
        flux_jobid_t id = parse_id (argv[optind + i]);
        if (!(f[i] = flux_rpc_pack (h, "job-manager.kill", FLUX_NODEID_ANY, 0,
                                    "{s:I s:i}", "id", (json_int_t)id, "signum",
                                    signum)))
            cmd_die ("%s: %s", argv[optind + i], strerror (errno));
    }
    for (size_t i = 0; i < n; i++) {
        if (flux_future_get (f[i], NULL) < 0) {
            cmd_warn ("%s: %s", argv[optind + i],
                      future_strerror (f[i], errno));
            rc = 1;
        }
        flux_future_destroy (f[i]);
    }
    free (f);
    flux_close (h);
    return rc;
}

/* Wait for one job (id, or any waitable one); 0 if it succeeded, 1 if it
 * failed, -1 (errno set, ECHILD) if there was nothing to wait for (said
 * on stderr unless all).  As flux-core's: waiting for one job prints
 * the id of the one waited for when none was given (failed or not) and
 * a failure's error as the command's; with --all (all) each failure, and
 * with -v (verbose) each success, is a line "ID: what happened".
 */
static int wait_one (flux_t *h, flux_jobid_t id, bool all, bool verbose)
{
    flux_future_t *f;
    json_int_t got;
    int success;
    const char *errstr;
    char buf[32];

    if (!(f = flux_rpc_pack (h, "job-manager.wait", FLUX_NODEID_ANY, 0, "{s:I}",
                             "id", (json_int_t)id)))
        cmd_die ("wait: %s", strerror (errno));
    if (flux_rpc_get_unpack (f, "{s:I s:b s:s}", "id", &got, "success",
                             &success, "errstr", &errstr)
        < 0) {
        int e = errno;
        if (e == ECHILD) {
            if (!all)
                fprintf (stderr, "%s: %s\n", cmd_prog (),
                         future_strerror (f, e));
            flux_future_destroy (f);
            errno = ECHILD;
            return -1;
        }
        cmd_die ("%s", future_strerror (f, e));
    }
    if (flux_job_id_encode ((flux_jobid_t)got, NULL, buf, sizeof (buf)) < 0)
        snprintf (buf, sizeof (buf), "%ju", (uintmax_t)got);
    if (all) {
        if (!success)
            fprintf (stderr, "%s: %s\n", buf, errstr);
        else if (verbose)
            fprintf (stderr, "%s: job completed successfully\n", buf);
    }
    else {
        if (id == FLUX_JOBID_ANY)
            printf ("%s\n", buf);
        if (!success)
            fprintf (stderr, "%s: %s\n", cmd_prog (), errstr);
    }
    flux_future_destroy (f);
    return success ? 0 : 1;
}

static int job_wait (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"all", no_argument, NULL, 'a'},
        {"verbose", no_argument, NULL, 'v'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    bool all = false, verbose = false;
    flux_jobid_t id = FLUX_JOBID_ANY;
    int c, rc = 0, r;
    flux_t *h;

    while ((c = cmd_getopt_permute (argc, argv, "av", longopts)) != -1) {
        if (c == 'a')
            all = true;
        if (c == 'v')
            verbose = true;
    }
    if (argc - optind > 1 || (all && argc - optind == 1))
        cmd_usage_error ("expected at most one JOBID, and none with --all");
    if (optind < argc)
        id = parse_id (argv[optind]);
    h = cmd_open ();
    if (!all) {
        if ((rc = wait_one (h, id, false, verbose)) < 0)
            rc = 2; /* nothing to wait for, as flux-core */
    }
    else {
        while ((r = wait_one (h, FLUX_JOBID_ANY, true, verbose)) >= 0) {
            if (r > 0)
                rc = 1;
        }
    }
    flux_close (h);
    return rc;
}
