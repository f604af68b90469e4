/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* pstree.c - `flux pstree`: the jobs of this instance as a tree, each
 * running sub-instance (a job that posted a memo {uri}, see instance.h)
 * expanded into its own jobs, to any depth (RFC 8).
 *
 * As flux-core's: an instance is labeled with its name, any other job
 * with NAME:STATE (one letter); identical leaves next to each other are
 * folded into "N*[LABEL]".  --details=stats adds each sub-instance's own
 * job counts, queried from it (job-list.job-stats): PD pending, R running,
 * CD completed, F failed (or canceled, or timed out).
 *
 * Each level costs one job-list.list (at most PSTREE_MAX_JOBS jobs) and
 * one connection per sub-instance; -L bounds the depth.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdutil.h"
#include "instance.h"

#define PSTREE_MAX_JOBS 10000

static const char usage[]
    = "Usage: flux pstree [OPTIONS]\n"
      "Show the jobs of this instance as a tree: each running sub-instance\n"
      "(flux batch, flux alloc) is expanded into its own jobs.\n"
      "  -a, --all            Include inactive jobs (default: active)\n"
      "  -L, --level=N        Descend at most N levels of sub-instances\n"
      "  -d, --details=stats  Show each instance's job counts: PD pending,\n"
      "                       R running, CD completed, F failed\n"
      "  -h, --help           Display this message\n";

const struct builtin builtin_pstree = {
    .name = "pstree",
    .summary = "Show the tree of jobs and sub-instances",
    .usage = usage,
    .main = cmd_pstree,
};

struct opts {
    bool all, stats;
    int maxlevel;
};

/* "[PD:n R:n CD:n F:n]" of the instance h (caller frees), or NULL. */
static char *stats (flux_t *h)
{
    flux_future_t *f
        = flux_rpc (h, "job-list.job-stats", "{}", FLUX_NODEID_ANY, 0);
    int dep = 0, pri = 0, sched = 0, run = 0, cleanup = 0;
    int ok = 0, failed = 0, canceled = 0, timeout = 0;
    char *s = NULL;

    if (f && flux_future_wait_for (f, 30.) == 0
        && flux_rpc_get_unpack (f, "{s:{s:i s:i s:i s:i s:i} s:i s:i s:i s:i}",
                                "job_states", "depend", &dep, "priority", &pri,
                                "sched", &sched, "run", &run, "cleanup",
                                &cleanup, "successful", &ok, "failed", &failed,
                                "canceled", &canceled, "timeout", &timeout)
               == 0
        && asprintf (&s, "[PD:%d R:%d CD:%d F:%d]", dep + pri + sched,
                     run + cleanup, ok, failed + canceled + timeout)
               < 0)
        s = NULL;
    flux_future_destroy (f);
    return s;
}

static json_t *list_jobs (flux_t *h, bool all)
{
    json_t *jobs = NULL, *o = NULL;
    flux_future_t *f;

    if (!(f = flux_rpc_pack (
              h, "job-list.list", FLUX_NODEID_ANY, 0,
              "{s:i s:[s,s,s,s] s:f s:{s:[i]}}", "max_entries", PSTREE_MAX_JOBS,
              "attrs", "name", "state", "annotations", "t_submit", "since", 0.,
              "constraint", "states",
              all ? FLUX_JOB_STATE_ACTIVE | FLUX_JOB_STATE_INACTIVE
                  : FLUX_JOB_STATE_ACTIVE))
        || flux_future_wait_for (f, 60.) < 0
        || flux_rpc_get_unpack (f, "{s:o}", "jobs", &o) < 0)
        cmd_warn ("job-list.list: %s",
                  f ? future_strerror (f, errno) : strerror (errno));
    else
        jobs = json_incref (o);
    flux_future_destroy (f);
    return jobs;
}

static void print_tree (flux_t *h, const char *prefix, int level,
                        const struct opts *o);

/* The label of job j; *urip: its sub-instance URI if it has one. */
static char *label (json_t *j, const char **urip)
{
    const char *name = "?", *uri = NULL;
    int state = 0;
    char *s;

    (void)json_unpack (j, "{s?s s?i s?{s?{s?s}}}", "name", &name, "state",
                       &state, "annotations", "user", "uri", &uri);
    *urip = state == FLUX_JOB_STATE_RUN ? uri : NULL;
    if (*urip)
        s = strdup (name);
    else if (asprintf (&s, "%s:%s", name, flux_job_statetostr (state, 1)) < 0)
        s = NULL;
    if (!s)
        cmd_die ("out of memory");
    return s;
}

static void print_job (flux_t *h, const char *prefix, bool last,
                       const char *lab, int count, const char *uri, int level,
                       const struct opts *o)
{
    char *sub = NULL, *st = NULL, *local;
    flux_t *ch = NULL;

    if (uri && (local = instance_uri_local (uri))) {
        ch = flux_open (local, 0);
        free (local);
    }
    if (ch && o->stats)
        st = stats (ch);
    if (count > 1)
        printf ("%s%s%d*[%s]\n", prefix, last ? "└── " : "├── ", count, lab);
    else
        printf ("%s%s%s%s%s\n", prefix, last ? "└── " : "├── ", lab,
                st ? " " : "", st ? st : "");
    if (ch && (o->maxlevel < 0 || level < o->maxlevel)) {
        if (asprintf (&sub, "%s%s", prefix, last ? "    " : "│   ") < 0)
            cmd_die ("out of memory");
        print_tree (ch, sub, level + 1, o);
        free (sub);
    }
    free (st);
    flux_close (ch);
}

static void print_tree (flux_t *h, const char *prefix, int level,
                        const struct opts *o)
{
    json_t *jobs = list_jobs (h, o->all);
    size_t n = json_array_size (jobs), i = 0;

    /* job-list answers newest first: show the oldest first */
    while (i < n) {
        const char *uri;
        json_t *j = json_array_get (jobs, n - 1 - i);
        char *lab = label (j, &uri);
        int count = 1;

        /* fold identical leaves that follow */
        while (!uri && i + count < n) {
            const char *u2;
            char *l2 = label (json_array_get (jobs, n - 1 - (i + count)), &u2);
            bool same = !u2 && !strcmp (l2, lab);
            free (l2);
            if (!same)
                break;
            count++;
        }
        print_job (h, prefix, i + count == n, lab, count, uri, level, o);
        free (lab);
        i += count;
    }
    json_decref (jobs);
}

int cmd_pstree (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"all", no_argument, NULL, 'a'},
        {"level", required_argument, NULL, 'L'},
        {"details", required_argument, NULL, 'd'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    struct opts o = {.maxlevel = -1};
    flux_t *h;
    char *st = NULL;
    int c;

    while ((c = cmd_getopt (argc, argv, "aL:d:", longopts)) != -1) {
        switch (c) {
            case 'a':
                o.all = true;
                break;
            case 'L':
                o.maxlevel = (int)cmd_parse_long ("--level", optarg, 0, 1000);
                break;
            case 'd':
                if (strcmp (optarg, "stats") != 0)
                    cmd_usage_error ("--details=%s: only 'stats' is known",
                                     optarg);
                o.stats = true;
                break;
        }
    }
    if (optind != argc)
        cmd_usage_error ("no operands expected");
    h = cmd_open ();
    if (o.stats)
        st = stats (h);
    printf (".%s%s\n", st ? " " : "", st ? st : "");
    free (st);
    print_tree (h, "", 0, &o);
    flux_close (h);
    return 0;
}
