/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* cancel.c - `flux cancel [OPTIONS] [JOBID...]`: raise a severity 0
 * "cancel" exception on jobs (job-manager.raise, one RPC per job, all in
 * flight at once), or with --all on every matching active job
 * (job-manager.raiseall, PROTOCOLS.md 5.2).
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <jansson.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmdutil.h"
#include "libjob/job.h"

static const char usage[]
    = "Usage: flux cancel [OPTIONS] [JOBID...]\n"
      "Cancel jobs: raise a fatal exception of type \"cancel\".\n"
      "  -m, --message=NOTE  Attach NOTE to the exception\n"
      "  -A, --all           Cancel all of your active jobs (see -u, -S)\n"
      "  -u, --user=USER     With --all: jobs of USER (name, uid or \"all\")\n"
      "  -S, --states=LIST   With --all: states to cancel (comma list of\n"
      "                      depend, priority, sched, run, cleanup, pending,\n"
      "                      running, active; default pending,running)\n"
      "  -n, --dry-run       With --all: only count the jobs\n"
      "  -q, --quiet         With --all: print nothing on success\n"
      "  -h, --help          Display this message\n";

const struct builtin builtin_cancel = {
    .name = "cancel",
    .summary = "Cancel jobs",
    .usage = usage,
    .main = cmd_cancel,
};

static int parse_states (const char *list)
{
    static const struct {
        const char *name;
        int mask;
    } names[] = {
        {"depend", FLUX_JOB_STATE_DEPEND},
        {"priority", FLUX_JOB_STATE_PRIORITY},
        {"sched", FLUX_JOB_STATE_SCHED},
        {"run", FLUX_JOB_STATE_RUN},
        {"cleanup", FLUX_JOB_STATE_CLEANUP},
        {"pending", FLUX_JOB_STATE_PENDING},
        {"running", FLUX_JOB_STATE_RUNNING},
        {"active", FLUX_JOB_STATE_ACTIVE},
    };
    char *copy = strdup (list), *tok, *save = NULL;
    int mask = 0;

    if (!copy)
        cmd_die ("out of memory");
    for (tok = strtok_r (copy, ",", &save); tok;
         tok = strtok_r (NULL, ",", &save)) {
        size_t i;
        for (i = 0; i < sizeof (names) / sizeof (names[0]); i++) {
            if (!strcasecmp (tok, names[i].name))
                break;
        }
        if (i == sizeof (names) / sizeof (names[0]))
            cmd_usage_error ("invalid state %s", tok);
        mask |= names[i].mask;
    }
    free (copy);
    return mask;
}

static long parse_user (const char *s)
{
    struct passwd *pw;
    char *end;
    long uid;

    if (!strcmp (s, "all"))
        return -1;
    uid = strtol (s, &end, 10);
    if (*s && *end == '\0' && uid >= 0)
        return uid;
    if (!(pw = getpwnam (s)))
        cmd_usage_error ("unknown user %s", s);
    return pw->pw_uid;
}

static int cancel_all (flux_t *h, const char *note, long userid, int states,
                       bool dry_run, bool quiet)
{
    flux_future_t *f;
    int count, errors;
    json_t *o;

    o = json_pack ("{s:b s:I s:i s:i s:s}", "dry_run", dry_run, "userid",
                   (json_int_t)userid, "states", states, "severity", 0, "type",
                   "cancel");
    if (o && note)
        json_object_set_new (o, "note", json_string (note));
    if (!o
        || !(f = flux_rpc_pack (h, "job-manager.raiseall", FLUX_NODEID_ANY, 0,
                                "O", o))
        || flux_rpc_get_unpack (f, "{s:i s:i}", "count", &count, "errors",
                                &errors)
               < 0)
        cmd_die ("%s", o && f ? future_strerror (f, errno) : strerror (errno));
    json_decref (o);
    flux_future_destroy (f);
    if (dry_run)
        printf ("flux-cancel: Would cancel %d job%s\n", count,
                count == 1 ? "" : "s");
    else if (!quiet || errors)
        fprintf (errors ? stderr : stdout,
                 "flux-cancel: Canceled %d job%s (%d error%s)\n", count,
                 count == 1 ? "" : "s", errors, errors == 1 ? "" : "s");
    return errors ? 1 : 0;
}

static int cancel_ids (flux_t *h, const char *note, int argc, char **argv)
{
    flux_future_t **f;
    flux_jobid_t id;
    int rc = 0;

    if (argc <= 0 || !(f = calloc ((size_t)argc, sizeof (*f))))
        cmd_die ("out of memory");
    for (int i = 0; i < argc; i++) {
        if (flux_job_id_parse (argv[i], &id) < 0)
            cmd_usage_error ("invalid job id %s", argv[i]);
    }
    for (int i = 0; i < argc; i++) {
        (void)flux_job_id_parse (argv[i], &id);
        if (note)
            f[i]
                = flux_rpc_pack (h, "job-manager.raise", FLUX_NODEID_ANY, 0,
                                 "{s:I s:s s:i s:s}", "id", (json_int_t)id,
                                 "type", "cancel", "severity", 0, "note", note);
        else
            f[i] = flux_rpc_pack (h, "job-manager.raise", FLUX_NODEID_ANY, 0,
                                  "{s:I s:s s:i}", "id", (json_int_t)id, "type",
                                  "cancel", "severity", 0);
        if (!f[i])
            cmd_die ("%s: %s", argv[i], strerror (errno));
    }
    for (int i = 0; i < argc; i++) {
        if (flux_future_get (f[i], NULL) < 0) {
            cmd_warn ("%s: %s", argv[i], future_strerror (f[i], errno));
            rc = 1;
        }
        flux_future_destroy (f[i]);
    }
    free (f);
    return rc;
}

int cmd_cancel (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"message", required_argument, NULL, 'm'},
        {"all", no_argument, NULL, 'A'},
        {"user", required_argument, NULL, 'u'},
        {"states", required_argument, NULL, 'S'},
        {"dry-run", no_argument, NULL, 'n'},
        {"quiet", no_argument, NULL, 'q'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    const char *note = NULL, *user = NULL, *states = NULL;
    bool all = false, dry_run = false, quiet = false;
    long userid;
    int c, rc;
    flux_t *h;

    while ((c = cmd_getopt_permute (argc, argv, "m:Au:S:nq", longopts)) != -1) {
        switch (c) {
            case 'm':
                note = optarg;
                break;
            case 'A':
                all = true;
                break;
            case 'u':
                user = optarg;
                break;
            case 'S':
                states = optarg;
                break;
            case 'n':
                dry_run = true;
                break;
            case 'q':
                quiet = true;
                break;
        }
    }
    if (all && optind < argc)
        cmd_usage_error ("job ids may not be given with --all");
    if (!all && optind == argc)
        cmd_usage_error ("specify job ids or --all");
    if (!all && (user || states || dry_run))
        cmd_usage_error ("--user, --states and --dry-run go with --all");
    userid = user ? parse_user (user) : (long)getuid ();
    h = cmd_open ();
    if (all)
        rc = cancel_all (h, note, userid,
                         states
                             ? parse_states (states)
                             : FLUX_JOB_STATE_PENDING | FLUX_JOB_STATE_RUNNING,
                         dry_run, quiet);
    else
        rc = cancel_ids (h, note, argc - optind, argv + optind);
    flux_close (h);
    return rc;
}
