/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* job_taskmap.c - `flux job taskmap`: a job's task map (RFC 34), as the
 * leader shell posted it in shell.start of its exec eventlog, or a map
 * given as text; printed in another form, or one question answered
 * (the tasks of a node, the node or host of a task), as flux-core's
 * command does.  Hosts come from R's execution.nodelist, in node order.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdutil.h"
#include "libeventlog/eventlog.h"
#include "libhostlist/hostlist.h"
#include "libidset/idset.h"
#include "libjob/job.h"
#include "libtaskmap/taskmap.h"

static int cmd_taskmap (int argc, char **argv);

static const char usage[]
    = "Usage: flux job taskmap [OPTIONS] JOBID|TASKMAP\n"
      "Print the task map of a job (RFC 34: which of its tasks run on\n"
      "which of its nodes, numbered from 0), or of TASKMAP given as text\n"
      "(JSON or raw), or answer one question about it.\n"
      "      --taskids=NODEID   The task ids on node NODEID (an idset)\n"
      "      --ntasks=NODEID    The number of tasks on node NODEID\n"
      "      --nodeid=TASKID    The node of task TASKID\n"
      "      --hostname=TASKID  The host of task TASKID (of a JOBID)\n"
      "      --to=FORMAT        The map as json (default), raw, pmi,\n"
      "                         multiline (a line \"TASKID: NODEID\" per\n"
      "                         task) or hosts (\"TASKID: HOST\", of a JOBID)\n"
      "  -h, --help             Display this message\n";

const struct builtin builtin_job_taskmap = {
    .name = "taskmap",
    .summary = "Print the task map of a job, or query it",
    .usage = usage,
    .main = cmd_taskmap,
};

enum {
    OPT_TASKIDS = 256,
    OPT_NTASKS,
    OPT_NODEID,
    OPT_HOSTNAME,
    OPT_TO,
};

/* job-info.lookup of one key of job id: its value (a string), in *fp */
static const char *lookup (flux_t *h, flux_jobid_t id, const char *key,
                           const char *arg, flux_future_t **fp)
{
    const char *s;

    if (!(*fp = flux_rpc_pack (h, "job-info.lookup", FLUX_NODEID_ANY, 0,
                               "{s:I s:[s] s:i}", "id", (json_int_t)id, "keys",
                               key, "flags", 0))
        || flux_rpc_get_unpack (*fp, "{s:s}", key, &s) < 0) {
        if (errno == ENOENT)
            cmd_die ("%s: no such job, or it has not started", arg);
        cmd_die ("%s: %s", arg,
                 *fp ? future_strerror (*fp, errno) : strerror (errno));
    }
    return s;
}

/* The map of shell.start in the job's exec eventlog. */
static struct taskmap *job_taskmap (flux_t *h, flux_jobid_t id, const char *arg)
{
    flux_future_t *f;
    const char *s = lookup (h, id, "guest.exec.eventlog", arg, &f);
    json_t *log, *entry;
    struct taskmap *map = NULL;
    flux_error_t error;
    size_t i;

    if (!(log = eventlog_decode (s)))
        cmd_die ("%s: invalid exec eventlog", arg);
    json_array_foreach (log, i, entry)
    {
        const char *name;
        json_t *context, *tm;
        if (eventlog_entry_parse (entry, NULL, &name, &context) == 0
            && !strcmp (name, "shell.start")
            && (tm = json_object_get (context, "taskmap"))) {
            if (!(map = taskmap_decode_json (tm, &error)))
                cmd_die ("%s: the job's task map: %s", arg, error.text);
            break;
        }
    }
    if (!map)
        cmd_die ("%s: the job has no task map yet (its shells have not "
                 "started)",
                 arg);
    json_decref (log);
    flux_future_destroy (f);
    return map;
}

/* The hosts of the job's nodes, in order, from R. */
static struct hostlist *job_hosts (flux_t *h, flux_jobid_t id, const char *arg)
{
    flux_future_t *f;
    const char *s = lookup (h, id, "R", arg, &f);
    json_t *R, *nodelist, *v;
    struct hostlist *hl;
    size_t i;

    if (!(R = json_loads (s, 0, NULL))
        || json_unpack (R, "{s:{s:o}}", "execution", "nodelist", &nodelist) < 0
        || !json_is_array (nodelist))
        cmd_die ("%s: R has no execution.nodelist", arg);
    if (!(hl = hostlist_create ()))
        cmd_die ("out of memory");
    json_array_foreach (nodelist, i, v)
    {
        if (!json_is_string (v)
            || hostlist_append (hl, json_string_value (v)) < 0)
            cmd_die ("%s: R's nodelist is not a list of hostlists", arg);
    }
    json_decref (R);
    flux_future_destroy (f);
    return hl;
}

static const char *host_of (struct hostlist *hl, int nodeid)
{
    const char *host
        = nodeid < hostlist_count (hl) ? hostlist_nth (hl, nodeid) : NULL;
    if (!host)
        cmd_die ("node %d has no host in R", nodeid);
    return host;
}

static int parse_int (const char *opt, const char *s)
{
    return (int)cmd_parse_long (opt, s, 0, INT32_MAX);
}

static int cmd_taskmap (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"taskids", required_argument, NULL, OPT_TASKIDS},
        {"ntasks", required_argument, NULL, OPT_NTASKS},
        {"nodeid", required_argument, NULL, OPT_NODEID},
        {"hostname", required_argument, NULL, OPT_HOSTNAME},
        {"to", required_argument, NULL, OPT_TO},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    int c, query = 0, arg = -1, nq = 0;
    const char *to = NULL, *target;
    flux_jobid_t id;
    bool hosts; /* hosts wanted: R is read */
    flux_t *h = NULL;
    struct taskmap *map;
    struct hostlist *hl = NULL;
    flux_error_t error;
    char *s;

    while ((c = cmd_getopt_permute (argc, argv, "", longopts)) != -1) {
        nq++;
        if (c == OPT_TO)
            to = optarg;
        else {
            query = c;
            arg = parse_int (c == OPT_TASKIDS  ? "--taskids"
                             : c == OPT_NTASKS ? "--ntasks"
                             : c == OPT_NODEID ? "--nodeid"
                                               : "--hostname",
                             optarg);
        }
    }
    if (nq > 1)
        cmd_usage_error ("give one of --taskids, --ntasks, --nodeid, "
                         "--hostname, --to");
    if (to && strcmp (to, "json") && strcmp (to, "raw") && strcmp (to, "pmi")
        && strcmp (to, "multiline") && strcmp (to, "hosts"))
        cmd_usage_error ("--to=%s: expected json, raw, pmi, multiline or "
                         "hosts",
                         to);
    if (optind != argc - 1)
        cmd_usage_error ("expected one JOBID or TASKMAP");
    target = argv[optind];
    hosts = query == OPT_HOSTNAME || (to && !strcmp (to, "hosts"));
    if (flux_job_id_parse (target, &id) == 0) {
        h = cmd_open ();
        map = job_taskmap (h, id, target);
        if (hosts)
            hl = job_hosts (h, id, target);
    }
    else {
        if (!(map = taskmap_decode (target, &error)))
            cmd_die ("%s: neither a job id nor a task map: %s", target,
                     error.text);
        if (hosts)
            cmd_usage_error ("hosts are known only for a JOBID");
    }
    if ((query == OPT_TASKIDS || query == OPT_NTASKS)
        && arg >= taskmap_nnodes (map))
        cmd_die ("node %d: no such node in the map (%d nodes)", arg,
                 taskmap_nnodes (map));
    if (query == OPT_TASKIDS) {
        struct idset *ids = taskmap_taskids (map, arg);
        if (!ids || !(s = idset_encode (ids, IDSET_FLAG_RANGE)))
            cmd_die ("node %d: no such node in the map", arg);
        printf ("%s\n", s);
        free (s);
        idset_destroy (ids);
    }
    else if (query == OPT_NTASKS) {
        int n = taskmap_ntasks (map, arg);
        if (n < 0)
            cmd_die ("node %d: no such node in the map", arg);
        printf ("%d\n", n);
    }
    else if (query == OPT_NODEID || query == OPT_HOSTNAME) {
        int nodeid = taskmap_nodeid (map, arg);
        if (nodeid < 0)
            cmd_die ("task %d: no such task in the map", arg);
        if (query == OPT_NODEID)
            printf ("%d\n", nodeid);
        else
            printf ("%s\n", host_of (hl, nodeid));
    }
    else if (to && (!strcmp (to, "multiline") || !strcmp (to, "hosts"))) {
        int n = taskmap_total_ntasks (map);
        for (int t = 0; t < n; t++) {
            int nodeid = taskmap_nodeid (map, t);
            if (hl)
                printf ("%d: %s\n", t, host_of (hl, nodeid));
            else
                printf ("%d: %d\n", t, nodeid);
        }
    }
    else {
        int flags = !to || !strcmp (to, "json") ? 0
                    : !strcmp (to, "raw")       ? TASKMAP_ENCODE_RAW
                                                : TASKMAP_ENCODE_PMI;
        if (!(s = taskmap_encode (map, flags)))
            cmd_die ("encoding the map: %s", strerror (errno));
        printf ("%s\n", s);
        free (s);
    }
    hostlist_destroy (hl);
    taskmap_destroy (map);
    flux_close (h);
    return 0;
}
