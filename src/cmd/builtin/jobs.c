/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* jobs.c - `flux jobs`: list jobs through job-list (RFC 43).
 *
 * One job-list.list request carries the attributes the output format
 * needs and a constraint built from the options (user, states/results,
 * name, queue) as flux-core's flux jobs builds it; job ids given on the
 * command line are asked with job-list.list-id, all in flight at once.
 * The output is formatted by jobs_format.c and written in one go.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <jansson.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "cmdutil.h"
#include "instance.h"
#include "jobs_format.h"
#include "librlist/rlist.h"
#include "libjob/job.h"
#include "libutil/fsd.h"

static const char usage[]
    = "Usage: flux jobs [OPTIONS] [JOBID...]\n"
      "List pending and running jobs of the current user (or as the\n"
      "options say).\n"
      "  -a                     List jobs in all states (with inactive)\n"
      "  -A                     List jobs of all users (same as --user=all)\n"
      "  -u, --user=USER        Jobs of USER (name, uid, or \"all\")\n"
      "  -f, --filter=STATE|RESULT[,...]\n"
      "                         Jobs in these states or with these results:\n"
      "                         depend, priority, sched, run, cleanup,\n"
      "                         inactive, pending, running, active;\n"
      "                         completed, failed, canceled, timeout\n"
      "      --since=WHEN       Jobs active since WHEN (a timestamp, a date\n"
      "                         like 2024-01-31T12:00, or -DURATION such as\n"
      "                         -6h); implies -a unless --filter is given\n"
      "      --name=NAME        Jobs named NAME\n"
      "      --queue=QUEUE      Jobs in QUEUE\n"
      "  -c, --count=N          At most N jobs (default 1000, 0: all)\n"
      "  -n, --no-header        Do not print the header line\n"
      "  -o, --format=FORMAT    A format string ({field[!conv][:spec]}) or a\n"
      "                         named format: default, deps, long; \"help\"\n"
      "                         lists them (see flux-jobs(1) for fields)\n"
      "      --json             Print the jobs as JSON\n"
      "      --stats            Print a summary of the instance's jobs (or\n"
      "                         QUEUE's, with --queue) before the list\n"
      "      --stats-only       Print only the summary; exit 1 if no job is\n"
      "                         active (pending or running)\n"
      "  -h, --help             Display this message\n";

const struct builtin builtin_jobs = {
    .name = "jobs",
    .summary = "List jobs",
    .usage = usage,
    .main = cmd_jobs,
};

static const struct {
    const char *name;
    const char *description;
    const char *format;
} formats[] = {
    {"default", "Default flux-jobs format string",
     "{id.f58:>12} ?:{queue:<8.8} {username:<8.8} {name:<10.10+} "
     "{status_abbrev:>2.2} {ntasks:>6} {nnodes:>6h} "
     "{contextual_time!F:>8h} {contextual_info}"},
    {"deps", "Show job urgency, priority, and dependencies",
     "{id.f58:>12} ?:{queue:<8.8} {name:<10.10+} {urgency:<3} "
     "{priority:<12} {state:<8.8} {dependencies}"},
    {"long", "Extended job information",
     "{id.f58:>12} ?:{queue:<8.8} {username:<8.8} {name:<10.10+} "
     "{status:>9.9} {ntasks:>6} {nnodes:>6h} "
     "{t_submit!d:%b%d %R::>12} {t_remaining!F:>12h} "
     "{contextual_time!F:>8h} {contextual_info}"},
    {"endreason", "Show why each job ended",
     "{id.f58:>12} ?:{queue:<8.8} {username:<8.8} {name:<10.10+} "
     "{status_abbrev:>2.2} {t_inactive!d:%b%d %R::>12h} {inactive_reason}"},
    {NULL, NULL, NULL},
};

static const struct {
    const char *name;
    int states;
    int results;
} filters[] = {
    {"new", FLUX_JOB_STATE_NEW, 0},
    {"depend", FLUX_JOB_STATE_DEPEND, 0},
    {"priority", FLUX_JOB_STATE_PRIORITY, 0},
    {"sched", FLUX_JOB_STATE_SCHED, 0},
    {"run", FLUX_JOB_STATE_RUN, 0},
    {"cleanup", FLUX_JOB_STATE_CLEANUP, 0},
    {"inactive", FLUX_JOB_STATE_INACTIVE, 0},
    {"pending", FLUX_JOB_STATE_PENDING, 0},
    {"running", FLUX_JOB_STATE_RUNNING, 0},
    {"active", FLUX_JOB_STATE_ACTIVE, 0},
    {"completed", 0, FLUX_JOB_RESULT_COMPLETED},
    {"failed", 0, FLUX_JOB_RESULT_FAILED},
    {"canceled", 0, FLUX_JOB_RESULT_CANCELED},
    {"cancelled", 0, FLUX_JOB_RESULT_CANCELED},
    {"timeout", 0, FLUX_JOB_RESULT_TIMEOUT},
    {NULL, 0, 0},
};

struct opts {
    bool all_states;
    bool header;
    bool json;
    bool filtered;
    bool stats, stats_only;
    const char *user;
    const char *name;
    const char *queue;
    const char *since;
    const char *format;
    int states, results;
    long count;
};

static double now (void)
{
    struct timeval tv;
    gettimeofday (&tv, NULL);
    return tv.tv_sec + tv.tv_usec * 1e-6;
}

static void add_filter (struct opts *o, const char *arg)
{
    char *cpy = strdup (arg), *save = NULL, *tok;

    if (!cpy)
        cmd_die ("out of memory");
    for (tok = strtok_r (cpy, ",", &save); tok;
         tok = strtok_r (NULL, ",", &save)) {
        int i;
        for (i = 0; filters[i].name; i++)
            if (!strcasecmp (filters[i].name, tok))
                break;
        if (!filters[i].name)
            cmd_usage_error ("Invalid filter specified: %s", tok);
        o->states |= filters[i].states;
        o->results |= filters[i].results;
    }
    free (cpy);
}

/* WHEN: -FSD (ago), a number (a timestamp), or a date and time. */
static double parse_since (const char *s)
{
    static const char *fmts[]
        = {"%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M",
           "%Y-%m-%d %H:%M",    "%Y-%m-%d",          NULL};
    double t, d;
    char *end;
    struct tm tm;

    if (s[0] == '-') {
        if (fsd_parse_duration (s + 1, &d) < 0)
            cmd_usage_error ("--since: invalid duration '%s'", s + 1);
        t = now () - d;
    }
    else if (!strcmp (s, "now"))
        t = now ();
    else if ((t = strtod (s, &end)) > 0. && *end == '\0')
        ; /* a timestamp */
    else {
        int i;
        for (i = 0; fmts[i]; i++) {
            const char *p;
            memset (&tm, 0, sizeof (tm));
            if ((p = strptime (s, fmts[i], &tm)) && *p == '\0')
                break;
        }
        if (!fmts[i])
            cmd_usage_error ("--since: invalid time '%s'", s);
        tm.tm_isdst = -1;
        t = mktime (&tm);
    }
    if (t > now ())
        cmd_die ("--since=%s appears to be in the future", s);
    return t;
}

static const char *lookup_format (const char *name)
{
    if (strchr (name, '{'))
        return name;
    if (!strcmp (name, "help")) {
        printf ("\nConfigured flux-jobs output formats:\n\n");
        for (int i = 0; formats[i].name; i++)
            printf ("  %-12s %s\n", formats[i].name, formats[i].description);
        exit (0);
    }
    for (int i = 0; formats[i].name; i++)
        if (!strcmp (formats[i].name, name))
            return formats[i].format;
    cmd_die ("--format: No such format %s", name);
}

/* {"and":[userid?, name?, queue?, states/results]} as flux-core builds. */
static json_t *constraint (struct opts *o)
{
    json_t *and = json_array ();
    json_t *c = json_pack ("{s:o}", "and", and);

    if (!c)
        cmd_die ("out of memory");
    if (strcmp (o->user, "all") != 0) {
        struct passwd *pw;
        char *end;
        long uid = strtol (o->user, &end, 10);
        if ((pw = getpwnam (o->user)))
            uid = pw->pw_uid;
        else if (end == o->user || *end != '\0' || uid < 0)
            cmd_die ("Invalid user %s specified", o->user);
        json_array_append_new (and, json_pack ("{s:[i]}", "userid", (int)uid));
    }
    if (o->name)
        json_array_append_new (and, json_pack ("{s:[s]}", "name", o->name));
    if (o->queue)
        json_array_append_new (and, json_pack ("{s:[s]}", "queue", o->queue));
    if (o->states && o->results)
        json_array_append_new (and, json_pack ("{s:[{s:[i]} {s:[i]}]}", "or",
                                               "states", o->states, "results",
                                               o->results));
    else if (o->states)
        json_array_append_new (and, json_pack ("{s:[i]}", "states", o->states));
    else if (o->results)
        json_array_append_new (and,
                               json_pack ("{s:[i]}", "results", o->results));
    return c;
}

static struct jobs_list *fetch_list (flux_t *h, struct opts *o, json_t *attrs)
{
    flux_future_t *f;
    struct jobs_list *l;
    const char *s;
    double since = o->since ? parse_since (o->since) : 0.;

    if (!(f = flux_rpc_pack (h, "job-list.list", FLUX_NODEID_ANY, 0,
                             "{s:i s:O s:f s:o}", "max_entries", (int)o->count,
                             "attrs", attrs, "since", since, "constraint",
                             constraint (o)))
        || flux_rpc_get (f, &s) < 0)
        cmd_die ("job-list.list: %s",
                 f ? future_strerror (f, errno) : strerror (errno));
    if (!s || !(l = jobs_list_parse (s, strlen (s))))
        cmd_die ("job-list.list: malformed response");
    flux_future_destroy (f);
    return l;
}

/* All list-id requests in flight at once; unknown ids are reported. */
static struct jobs_list *fetch_ids (flux_t *h, int argc, char **argv,
                                    json_t *attrs, int *errors)
{
    flux_future_t **fs = calloc (argc, sizeof (*fs));
    struct textbuf text = {0};
    struct jobs_list *l;
    int n = 0;

    if (!fs)
        cmd_die ("out of memory");
    for (int i = 0; i < argc; i++) {
        flux_jobid_t id;
        if (flux_job_id_parse (argv[i], &id) < 0)
            cmd_die ("invalid JOBID: %s", argv[i]);
        if (!(fs[i] = flux_rpc_pack (h, "job-list.list-id", FLUX_NODEID_ANY, 0,
                                     "{s:I s:O}", "id", (json_int_t)id, "attrs",
                                     attrs)))
            cmd_die ("job-list.list-id: %s", strerror (errno));
    }
    jobs_out_append (&text, "{\"jobs\":[", 9);
    for (int i = 0; i < argc; i++) {
        json_t *job;
        char *s;
        if (flux_rpc_get_unpack (fs[i], "{s:o}", "job", &job) < 0) {
            if (errno == ENOENT)
                fprintf (stderr, "JobID %s unknown\n", argv[i]);
            else
                fprintf (stderr, "flux-jobs: %s: %s\n", argv[i],
                         future_strerror (fs[i], errno));
            (*errors)++;
        }
        else if ((s = json_dumps (job, JSON_COMPACT))) {
            if (n++ > 0)
                jobs_out_append (&text, ",", 1);
            jobs_out_append (&text, s, strlen (s));
            free (s);
        }
        flux_future_destroy (fs[i]);
    }
    jobs_out_append (&text, "]}", 2);
    if (!text.data || !(l = jobs_list_parse (text.data, text.len)))
        cmd_die ("out of memory");
    free (text.data);
    free (fs);
    return l;
}

/* instance.* fields: what one running sub-instance says of itself
 * (job-list.job-stats and the scheduler's view of its resources), as
 * jobs_format.h describes it; NULL if it cannot be reached. */
static json_t *instance_query (const char *uri)
{
    flux_t *ch = NULL;
    flux_future_t *fs = NULL, *fr = NULL;
    json_t *states, *res = NULL, *all, *down, *alloc, *o = NULL, *r;
    struct rlist *rl[5] = {NULL};
    int pending, running, inactive, total, ok, failed, canceled, timeout;
    char *local, stats[128];

    if (!(local = instance_uri_local (uri)))
        return NULL;
    ch = flux_open (local, 0);
    free (local);
    if (!ch
        || !(fs = flux_rpc (ch, "job-list.job-stats", "{}", FLUX_NODEID_ANY, 0))
        || !(fr
             = flux_rpc (ch, "resource.sched-status", NULL, FLUX_NODEID_ANY, 0))
        || flux_future_wait_for (fs, 30.) < 0
        || flux_rpc_get_unpack (fs, "{s:o s:i s:i s:i s:i}", "job_states",
                                &states, "successful", &ok, "failed", &failed,
                                "canceled", &canceled, "timeout", &timeout)
               < 0)
        goto out;
    pending = json_integer_value (json_object_get (states, "depend"))
              + json_integer_value (json_object_get (states, "priority"))
              + json_integer_value (json_object_get (states, "sched"));
    running = json_integer_value (json_object_get (states, "run"))
              + json_integer_value (json_object_get (states, "cleanup"));
    inactive = json_integer_value (json_object_get (states, "inactive"));
    total = json_integer_value (json_object_get (states, "total"));
    snprintf (stats, sizeof (stats), "PD:%d R:%d CD:%d F:%d", pending, running,
              ok, failed + canceled + timeout);
    if (!(o
          = json_pack ("{s:s s:i s:f}", "stats", stats, "total", total,
                       "progress", total > 0 ? (double)inactive / total : 0.)))
        goto out;
    if (flux_rpc_get_unpack (fr, "o", &res) < 0 && errno == ENOSYS) {
        flux_future_destroy (fr);
        if (!(fr = flux_rpc (ch, "sched.resource-status", NULL, FLUX_NODEID_ANY,
                             0))
            || flux_rpc_get_unpack (fr, "o", &res) < 0)
            res = NULL;
    }
    if (!res
        || json_unpack (res, "{s:o s:o s:o}", "all", &all, "down", &down,
                        "allocated", &alloc)
               < 0
        || !(rl[0] = rlist_from_R (all, NULL))
        || !(rl[2] = rlist_from_R (down, NULL))
        || !(rl[3] = rlist_from_R (alloc, NULL))
        || !(rl[1] = rlist_diff (rl[0], rl[2]))
        || !(rl[4] = rlist_diff (rl[1], rl[3])))
        goto out; /* counts of jobs, but no resources */
    {
        static const char *names[] = {"all", "up", "down", "allocated", "free"};
        int cores = rlist_count_cores (rl[0]), gpus = rlist_count_gpus (rl[0]);
        if (!(r = json_object ())
            || json_object_set_new (o, "resources", r) < 0)
            goto out;
        for (int i = 0; i < 5; i++)
            json_object_set_new (r, names[i],
                                 json_pack ("{s:i s:i}", "ncores",
                                            rlist_count_cores (rl[i]), "ngpus",
                                            rlist_count_gpus (rl[i])));
        json_object_set_new (
            o, "utilization",
            json_real (cores > 0 ? (double)rlist_count_cores (rl[3]) / cores
                                 : 0.));
        if (gpus > 0)
            json_object_set_new (
                o, "gpu_utilization",
                json_real ((double)rlist_count_gpus (rl[3]) / gpus));
    }
out:
    for (int i = 0; i < 5; i++)
        rlist_destroy (rl[i]);
    flux_future_destroy (fs);
    flux_future_destroy (fr);
    flux_close (ch);
    return o;
}

/* Fill l->instance for the running jobs that are instances (their
 * memo posted a URI: annotations.user.uri), one at a time. */
static void fetch_instances (struct jobs_list *l)
{
    if (!(l->instance = calloc (l->njobs ? l->njobs : 1, sizeof (json_t *))))
        cmd_die ("out of memory");
    for (size_t j = 0; j < l->njobs; j++) {
        const struct jobs_field *st = jobs_get (l, j, "state");
        const struct jobs_field *an = jobs_get (l, j, "annotations");
        const char *uri = NULL;
        if (!st || st->type != JF_INT || st->i != FLUX_JOB_STATE_RUN || !an
            || an->type != JF_JSON
            || json_unpack (an->json, "{s:{s:s}}", "user", "uri", &uri) < 0)
            continue;
        l->instance[j] = instance_query (uri);
    }
}

static void print_json (struct jobs_list *l, bool single)
{
    double t = now ();
    json_t *out = json_array ();
    char *s;

    for (size_t j = 0; j < l->njobs; j++)
        json_array_append_new (out, jobs_format_json (l, j, t));
    if (single && json_array_size (out) == 1)
        s = json_dumps (json_array_get (out, 0), JSON_COMPACT);
    else {
        json_t *o = json_pack ("{s:O}", "jobs", out);
        s = o ? json_dumps (o, JSON_COMPACT) : NULL;
        json_decref (o);
    }
    if (!s)
        cmd_die ("out of memory");
    printf ("%s\n", s);
    free (s);
    json_decref (out);
}

/* job-list.job-stats (all users' jobs, as in flux-core) */
static flux_future_t *stats_send (flux_t *h)
{
    flux_future_t *f;

    if (!(f = flux_rpc (h, "job-list.job-stats", "{}", FLUX_NODEID_ANY, 0)))
        cmd_die ("job-list.job-stats: %s", strerror (errno));
    return f;
}

/* Print the summary line of the instance's (or queue's) jobs; the
 * number of active jobs is returned. */
static int stats_print (flux_future_t *f, const char *queue)
{
    json_t *o, *queues, *q = NULL, *st;
    int dep = 0, pri = 0, sched = 0, run = 0, cleanup = 0;
    int ok = 0, failed = 0, canceled = 0, timeout = 0, purged = 0;
    size_t i;

    if (flux_rpc_get_unpack (f, "o", &o) < 0)
        cmd_die ("job-list.job-stats: %s", future_strerror (f, errno));
    if (queue) {
        if (json_unpack (o, "{s:o}", "queues", &queues) < 0)
            cmd_die ("job-list.job-stats: malformed response");
        json_array_foreach (queues, i, q)
        {
            const char *name;
            if (json_unpack (q, "{s:s}", "name", &name) == 0
                && !strcmp (name, queue))
                break;
        }
        if (i == json_array_size (queues))
            cmd_die ("--stats: no jobs in queue %s", queue);
        o = q;
    }
    if (json_unpack (o, "{s:o s:i s:i s:i s:i s?i}", "job_states", &st,
                     "successful", &ok, "failed", &failed, "canceled",
                     &canceled, "timeout", &timeout, "inactive_purged", &purged)
            < 0
        || json_unpack (st, "{s:i s:i s:i s:i s:i}", "depend", &dep, "priority",
                        &pri, "sched", &sched, "run", &run, "cleanup", &cleanup)
               < 0)
        cmd_die ("job-list.job-stats: malformed response");
    printf ("%d running, %d completed, %d failed, %d canceled, %d timeout, "
            "%d pending",
            run + cleanup, ok, failed, canceled, timeout, dep + pri + sched);
    if (purged > 0)
        printf (", %d inactive purged", purged);
    printf ("\n");
    return run + cleanup + dep + pri + sched;
}

static void parse_options (int argc, char **argv, struct opts *o)
{
    enum {
        OPT_SINCE = 256,
        OPT_NAME,
        OPT_QUEUE,
        OPT_JSON,
        OPT_STATS,
        OPT_STATS_ONLY
    };
    static const struct option longopts[] = {
        {"user", required_argument, NULL, 'u'},
        {"filter", required_argument, NULL, 'f'},
        {"since", required_argument, NULL, OPT_SINCE},
        {"name", required_argument, NULL, OPT_NAME},
        {"queue", required_argument, NULL, OPT_QUEUE},
        {"count", required_argument, NULL, 'c'},
        {"no-header", no_argument, NULL, 'n'},
        {"suppress-header", no_argument, NULL, 'n'},
        {"format", required_argument, NULL, 'o'},
        {"json", no_argument, NULL, OPT_JSON},
        {"stats", no_argument, NULL, OPT_STATS},
        {"stats-only", no_argument, NULL, OPT_STATS_ONLY},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    static char uid[32];
    int c;

    snprintf (uid, sizeof (uid), "%u", (unsigned)getuid ());
    *o = (struct opts){.header = true, .user = uid, .count = 1000};
    if ((o->format = getenv ("FLUX_JOBS_FORMAT_DEFAULT")) == NULL)
        o->format = "default";
    while ((c = cmd_getopt_permute (argc, argv, "aAu:f:c:no:", longopts))
           != -1) {
        switch (c) {
            case 'a':
                o->all_states = true;
                break;
            case 'A':
                o->user = "all";
                break;
            case 'u':
                o->user = optarg;
                break;
            case 'f':
                add_filter (o, optarg);
                o->filtered = true;
                break;
            case OPT_SINCE:
                o->since = optarg;
                break;
            case OPT_NAME:
                o->name = optarg;
                break;
            case OPT_QUEUE:
                o->queue = optarg;
                break;
            case 'c':
                o->count = cmd_parse_long ("--count", optarg, 0, INT32_MAX);
                break;
            case 'n':
                o->header = false;
                break;
            case 'o':
                o->format = optarg;
                break;
            case OPT_JSON:
                o->json = true;
                break;
            case OPT_STATS:
                o->stats = true;
                break;
            case OPT_STATS_ONLY:
                o->stats_only = true;
                break;
        }
    }
    if (o->since && !o->filtered)
        o->all_states = true;
    if (o->all_states)
        o->states |= FLUX_JOB_STATE_PENDING | FLUX_JOB_STATE_RUNNING
                     | FLUX_JOB_STATE_INACTIVE;
    if (!o->states && !o->results)
        o->states = FLUX_JOB_STATE_PENDING | FLUX_JOB_STATE_RUNNING;
}

int cmd_jobs (int argc, char **argv)
{
    struct opts o;
    struct jobs_format *fmt = NULL;
    flux_error_t error;
    json_t *attrs;
    struct jobs_list *jobs;
    struct textbuf out = {0};
    flux_t *h;
    flux_future_t *fstats = NULL;
    int errors = 0;

    parse_options (argc, argv, &o);
    if (o.stats_only) {
        /* every other option is ignored, as in flux-core */
        flux_future_t *f;
        int active;
        h = cmd_open ();
        f = stats_send (h);
        active = stats_print (f, o.queue);
        flux_future_destroy (f);
        flux_close (h);
        return active > 0 ? 0 : 1;
    }
    if (o.json)
        attrs = json_pack ("[s]", "all");
    else {
        if (!(fmt = jobs_format_create (lookup_format (o.format), &error)))
            cmd_die ("%s", errno == ENOMEM ? strerror (errno) : error.text);
        attrs = jobs_format_attrs (fmt);
    }
    if (!attrs)
        cmd_die ("out of memory");
    h = cmd_open ();
    if (o.stats && !o.json) {
        /* the summary comes first; the list is asked for meanwhile */
        fstats = stats_send (h);
    }
    if (optind < argc)
        jobs = fetch_ids (h, argc - optind, argv + optind, attrs, &errors);
    else
        jobs = fetch_list (h, &o, attrs);
    if (fmt && jobs_format_wants_instance (fmt))
        fetch_instances (jobs);
    if (o.json)
        print_json (jobs, optind + 1 == argc);
    else {
        if (fstats) {
            (void)stats_print (fstats, o.queue);
            flux_future_destroy (fstats);
            fflush (stdout);
        }
        if (jobs_format_run (fmt, jobs, now (), o.header, &out) < 0)
            cmd_die ("%s", strerror (errno));
        if (out.len > 0 && fwrite (out.data, 1, out.len, stdout) != out.len)
            cmd_die ("write: %s", strerror (errno));
    }
    free (out.data);
    jobs_list_destroy (jobs);
    json_decref (attrs);
    jobs_format_destroy (fmt);
    flux_close (h);
    return errors ? 1 : 0;
}
