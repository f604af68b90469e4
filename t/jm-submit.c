/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* jm-submit - test helper: submit jobs straight to the job manager, as
 * job-ingest would (PROTOCOLS.md 5.1): write job.<id>.jobspec and
 * job.<id>.eventlog (the submit event) in one KVS commit per batch, then
 * send job-manager.submit {jobs:[...]} for the batch.  Prints each id
 * (decimal) unless -q.
 *
 * Usage: jm-submit [-n COUNT] [-b BATCH] [-u URGENCY] [-f FLAGS]
 *                  [-U USERID] [-d RUN_DURATION] [-q] [JOBSPEC]
 *   JOBSPEC   JSON text of the jobspec, or @FILE (default: one core,
 *             attributes.system.exec.test.run_duration = -d, "0s")
 *   -U        userid to claim in the submit event (default getuid())
 * Ids come from a FLUID generator with id 16383 (job-ingest's are
 * smaller) whose clock starts just after the timestamp of the job
 * manager's max_jobid, so ids grow over successive runs and stay small
 * (below 2^53, which tools such as jq 1.6 need).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "libeventlog/eventlog.h"
#include "libflux/flux.h"
#include "libkvs/kvs.h"
#include "libutil/fluid.h"

static double now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static json_t *load_jobspec (const char *arg, const char *duration)
{
    json_error_t e;
    json_t *o;

    if (!arg)
        return json_pack ("{s:i s:[{s:s s:i s:s s:[{s:s s:i}]}]"
                          " s:[{s:[s] s:s s:{s:i}}]"
                          " s:{s:{s:i s:{s:{s:s}}}}}",
                          "version", 1, "resources", "type", "slot", "count", 1,
                          "label", "task", "with", "type", "core", "count", 1,
                          "tasks", "command", "true", "slot", "task", "count",
                          "per_slot", 1, "attributes", "system", "duration", 0,
                          "exec", "test", "run_duration", duration);
    if (arg[0] == '@')
        o = json_load_file (arg + 1, 0, &e);
    else
        o = json_loads (arg, 0, &e);
    if (!o || !json_is_object (o)) {
        fprintf (stderr, "jm-submit: bad jobspec: %s\n",
                 o ? "not an object" : e.text);
        exit (1);
    }
    return o;
}

static void die (const char *what, flux_future_t *f)
{
    fprintf (stderr, "jm-submit: %s: %s\n", what,
             f ? future_strerror (f, errno) : strerror (errno));
    exit (1);
}

int main (int argc, char **argv)
{
    long count = 1, batch = 1024, urgency = 16, flags = 0;
    long userid = getuid ();
    const char *duration = "0s";
    bool quiet = false;
    struct fluid_generator gen;
    json_t *jobspec;
    char *jobspec_s;
    flux_t *h;
    int c;

    while ((c = getopt (argc, argv, "n:b:u:f:U:d:q")) != -1) {
        switch (c) {
            case 'n':
                count = strtol (optarg, NULL, 10);
                break;
            case 'b':
                batch = strtol (optarg, NULL, 10);
                break;
            case 'u':
                urgency = strtol (optarg, NULL, 10);
                break;
            case 'f':
                flags = strtol (optarg, NULL, 10);
                break;
            case 'U':
                userid = strtol (optarg, NULL, 10);
                break;
            case 'd':
                duration = optarg;
                break;
            case 'q':
                quiet = true;
                break;
            default:
                fprintf (stderr, "Usage: jm-submit [-n COUNT] [-b BATCH] "
                                 "[-u URGENCY] [-f FLAGS] [-U USERID] "
                                 "[-d DURATION] [-q] [JOBSPEC]\n");
                return 1;
        }
    }
    if (count < 1 || batch < 1)
        return 1;
    jobspec = load_jobspec (optind < argc ? argv[optind] : NULL, duration);
    if (!(jobspec_s = json_dumps (jobspec, JSON_COMPACT)))
        return 1;
    if (!(h = flux_open (NULL, 0)))
        die ("flux_open", NULL);
    {
        flux_future_t *f;
        json_int_t max;
        if (!(f = flux_rpc (h, "job-manager.getinfo", "{}", FLUX_NODEID_ANY, 0))
            || flux_rpc_get_unpack (f, "{s:I}", "max_jobid", &max) < 0)
            die ("job-manager.getinfo", f);
        flux_future_destroy (f);
        if (fluid_init (&gen, 16383, fluid_get_timestamp ((fluid_t)max) + 1)
            < 0)
            die ("fluid_init", NULL);
    }
    for (long done = 0; done < count;) {
        long n = count - done < batch ? count - done : batch;
        flux_kvs_txn_t *txn = flux_kvs_txn_create ();
        json_t *jobs = json_array ();
        fluid_t *ids = calloc (n, sizeof (*ids));
        flux_future_t *f;

        for (long i = 0; i < n; i++) {
            char dir[FLUID_STRING_MAX], key[80], *line;
            double t = now ();
            json_t *ev;
            if (fluid_generate (&gen, &ids[i]) < 0
                || fluid_encode (dir, sizeof (dir), ids[i], FLUID_STRING_KVS)
                       < 0)
                die ("fluid", NULL);
            ev = eventlog_entry_pack (
                t, "submit", "{s:i s:i s:i s:i}", "urgency", (int)urgency,
                "userid", (int)userid, "flags", (int)flags, "version", 1);
            line = eventlog_entry_encode (ev);
            snprintf (key, sizeof (key), "%s.eventlog", dir);
            if (!line || flux_kvs_txn_put (txn, 0, key, line) < 0)
                die ("txn", NULL);
            snprintf (key, sizeof (key), "%s.jobspec", dir);
            if (flux_kvs_txn_put (txn, 0, key, jobspec_s) < 0)
                die ("txn", NULL);
            json_array_append_new (
                jobs, json_pack ("{s:I s:i s:i s:f s:i s:O}", "id",
                                 (json_int_t)ids[i], "userid", (int)userid,
                                 "urgency", (int)urgency, "t_submit", t,
                                 "flags", (int)flags, "jobspec", jobspec));
            free (line);
            json_decref (ev);
        }
        if (!(f = flux_kvs_commit (h, NULL, 0, txn))
            || flux_future_get (f, NULL) < 0)
            die ("kvs commit", f);
        flux_future_destroy (f);
        if (!(f = flux_rpc_pack (h, "job-manager.submit", 0, 0, "{s:O}", "jobs",
                                 jobs))
            || flux_future_get (f, NULL) < 0)
            die ("job-manager.submit", f);
        flux_future_destroy (f);
        for (long i = 0; i < n && !quiet; i++)
            printf ("%ju\n", (uintmax_t)ids[i]);
        free (ids);
        json_decref (jobs);
        flux_kvs_txn_destroy (txn);
        done += n;
    }
    json_decref (jobspec);
    free (jobspec_s);
    flux_close (h);
    return 0;
}
