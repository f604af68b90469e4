/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* job_admin.c - members of the `flux job` group about the jobs as a
 * whole rather than one job:
 *
 *   flux job last [N|SLICE]         job-manager.history.get
 *   flux job purge [OPTIONS] [ID...]
 *                                   job-manager.purge / purge-id
 *   flux job stats                  job-list.job-stats
 */
#define _GNU_SOURCE 1
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdutil.h"
#include "libjob/job.h"

static const char last_usage[]
    = "Usage: flux job last [N|SLICE]\n"
      "Print the ids of your most recently submitted jobs, newest first:\n"
      "the last one by default, the last N, or a Python-style SLICE of\n"
      "your jobs from the newest, e.g. \"[:10]\" (the last ten) or\n"
      "\"[-1:]\" (the oldest one still known).\n"
      "  -h, --help          Display this message\n";
static const char purge_usage[]
    = "Usage: flux job purge [OPTIONS] [JOBID...]\n"
      "Remove inactive jobs from the KVS and the job manager, oldest "
      "first:\n"
      "those inactive for longer than --age-limit, those beyond the\n"
      "newest --num-limit, or the JOBIDs given.  Without --force, only\n"
      "say how many would go.\n"
      "      --age-limit=FSD  Purge jobs inactive for longer than FSD\n"
      "      --num-limit=N    Keep only the newest N inactive jobs\n"
      "      --batch=N        Jobs per request (1-10000, default 50)\n"
      "  -f, --force          Do purge\n"
      "  -h, --help           Display this message\n";
static const char stats_usage[]
    = "Usage: flux job stats\n"
      "Print the instance's job counts (by state and result, and per\n"
      "queue) as JSON.\n"
      "  -h, --help          Display this message\n";

static int job_last (int argc, char **argv);
static int job_purge (int argc, char **argv);
static int job_stats (int argc, char **argv);

const struct builtin builtin_job_last
    = {"last", "Print the ids of your last jobs", last_usage, job_last};
const struct builtin builtin_job_purge
    = {"purge", "Remove inactive jobs", purge_usage, job_purge};
const struct builtin builtin_job_stats
    = {"stats", "Print job counts as JSON", stats_usage, job_stats};

static int job_last (int argc, char **argv)
{
    const char *arg = "[:1]";
    char buf[64];
    flux_future_t *f;
    json_t *jobs, *o;
    size_t i;
    flux_t *h;

    cmd_getopt_none (argc, argv);
    if (argc - optind > 1)
        cmd_usage_error ("expected at most one N or SLICE");
    if (optind < argc) {
        arg = argv[optind];
        if (isdigit ((unsigned char)arg[0])) {
            long n = cmd_parse_long ("N", arg, 1, 1L << 40);
            snprintf (buf, sizeof (buf), "[:%ld]", n);
            arg = buf;
        }
    }
    h = cmd_open ();
    if (!(f = flux_rpc_pack (h, "job-manager.history.get", FLUX_NODEID_ANY, 0,
                             "{s:s}", "slice", arg))
        || flux_rpc_get_unpack (f, "{s:o}", "jobs", &jobs) < 0)
        cmd_die ("%s", f ? future_strerror (f, errno) : strerror (errno));
    if (!json_is_array (jobs))
        cmd_die ("job-manager.history.get: malformed response");
    if (json_array_size (jobs) == 0)
        cmd_die ("no jobs in the slice %s", arg);
    json_array_foreach (jobs, i, o)
    {
        if (!json_is_integer (o)
            || flux_job_id_encode ((flux_jobid_t)json_integer_value (o), NULL,
                                   buf, sizeof (buf))
                   < 0)
            cmd_die ("job-manager.history.get: malformed response");
        printf ("%s\n", buf);
    }
    flux_future_destroy (f);
    flux_close (h);
    return 0;
}

/* The job manager's largest purge batch (--batch's bound). */
#define PURGE_BATCH_MAX 10000

/* "purged N inactive jobs", or (not force) how many would be. */
static void purge_report (int count, bool force, bool at_least)
{
    if (force)
        printf ("purged %d inactive job%s\n", count, count == 1 ? "" : "s");
    else
        printf ("%s%d inactive job%s would be purged (use --force)\n",
                at_least ? "at least " : "", count, count == 1 ? "" : "s");
}

/* One job-manager.purge request: the count purged (or, without force,
 * counted).  done: how many earlier batches purged, for the message of
 * a failure. */
static int purge_batch (flux_t *h, double age, long num, int batch, bool force,
                        int done)
{
    flux_future_t *f;
    int count;

    if (!(f = flux_rpc_pack (h, "job-manager.purge", FLUX_NODEID_ANY, 0,
                             "{s:f s:i s:i s:b}", "age_limit", age, "num_limit",
                             (int)num, "batch", batch, "force", force))
        || flux_rpc_get_unpack (f, "{s:i}", "count", &count) < 0) {
        const char *why = f ? future_strerror (f, errno) : strerror (errno);
        if (done > 0)
            cmd_die ("%s (after purging %d)", why, done);
        cmd_die ("%s", why);
    }
    flux_future_destroy (f);
    return count;
}

/* purge-id of each id: 0, or 1 after a message for some. */
static int purge_ids (flux_t *h, int argc, char **argv, bool force)
{
    flux_future_t **fs = calloc (argc, sizeof (*fs));
    int count = 0, rc = 0;

    if (!fs)
        cmd_die ("out of memory");
    for (int i = 0; i < argc; i++) {
        flux_jobid_t id;
        if (flux_job_id_parse (argv[i], &id) < 0)
            cmd_usage_error ("invalid job id %s", argv[i]);
        if (!(fs[i] = flux_rpc_pack (h, "job-manager.purge-id", FLUX_NODEID_ANY,
                                     0, "{s:I s:b}", "id", (json_int_t)id,
                                     "force", force)))
            cmd_die ("%s", strerror (errno));
    }
    for (int i = 0; i < argc; i++) {
        int n;
        if (flux_rpc_get_unpack (fs[i], "{s:i}", "count", &n) < 0) {
            cmd_warn ("%s: %s", argv[i], future_strerror (fs[i], errno));
            rc = 1;
        }
        else
            count += n;
        flux_future_destroy (fs[i]);
    }
    free (fs);
    purge_report (count, force, false);
    return rc;
}

static int job_purge (int argc, char **argv)
{
    enum { OPT_AGE = 256, OPT_NUM, OPT_BATCH };
    static const struct option longopts[] = {
        {"age-limit", required_argument, NULL, OPT_AGE},
        {"num-limit", required_argument, NULL, OPT_NUM},
        {"batch", required_argument, NULL, OPT_BATCH},
        {"force", no_argument, NULL, 'f'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    double age = -1;
    long num = -1, batch = 50;
    bool force = false;
    int c, rc = 0, count, total = 0;
    flux_t *h;

    while ((c = cmd_getopt (argc, argv, "f", longopts)) != -1) {
        if (c == OPT_AGE)
            age = cmd_parse_duration ("--age-limit", optarg);
        else if (c == OPT_NUM)
            num = cmd_parse_long ("--num-limit", optarg, 0, INT32_MAX);
        else if (c == OPT_BATCH)
            batch = cmd_parse_long ("--batch", optarg, 1, PURGE_BATCH_MAX);
        else if (c == 'f')
            force = true;
    }
    if (optind < argc && (age >= 0 || num >= 0))
        cmd_usage_error ("give JOBIDs or --age-limit/--num-limit, not both");
    if (optind == argc && age < 0 && num < 0)
        cmd_usage_error ("give --age-limit, --num-limit or JOBIDs");
    h = cmd_open ();
    if (optind < argc)
        rc = purge_ids (h, argc - optind, argv + optind, force);
    else if (!force) {
        /* nothing goes: one count of up to the largest batch */
        count = purge_batch (h, age, num, PURGE_BATCH_MAX, false, 0);
        purge_report (count, false, count == PURGE_BATCH_MAX);
    }
    else {
        /* batch by batch until a request purges fewer than a batch */
        do {
            count = purge_batch (h, age, num, (int)batch, true, total);
            total += count;
        } while (count == batch);
        purge_report (total, true, false);
    }
    flux_close (h);
    return rc;
}

static int job_stats (int argc, char **argv)
{
    flux_future_t *f;
    const char *s;
    flux_t *h;

    cmd_getopt_none (argc, argv);
    if (optind < argc)
        cmd_usage_error ("expected no arguments");
    h = cmd_open ();
    if (!(f = flux_rpc (h, "job-list.job-stats", "{}", FLUX_NODEID_ANY, 0))
        || flux_rpc_get (f, &s) < 0)
        cmd_die ("%s", f ? future_strerror (f, errno) : strerror (errno));
    if (!s)
        cmd_die ("job-list.job-stats: empty response");
    printf ("%s\n", s);
    flux_future_destroy (f);
    flux_close (h);
    return 0;
}
