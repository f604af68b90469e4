/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* resource.c - `flux resource`: the group, drain, undrain, info and R,
 * and the helpers list and status share (resource_list.c).
 *
 * Everything asks rank 0's resource module (PROTOCOLS 5.5):
 * resource.status, resource.sched-status (falling back to the
 * scheduler's sched.resource-status on ENOSYS), resource.drain and
 * resource.undrain.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmdutil.h"
#include "libidset/idset.h"
#include "resource_cmd.h"

static const char usage[] = "Usage: flux resource COMMAND [OPTIONS] [ARGS...]\n"
                            "Show and manage the resources of the instance.\n";

static const char list_usage[]
    = "Usage: flux resource list [OPTIONS]\n"
      "Show free, allocated and down resources.\n"
      "  -s, --states=LIST   States to show: free,allocated,down or all\n"
      "  -o, --format=FMT    Output format, e.g. \"{state} {nnodes}\"; "
      "fields:\n"
      "                      state nnodes ncores ngpus nodelist ranks\n"
      "  -n, --no-header     Do not print the header\n"
      "  -h, --help          Display this message\n";

static const char status_usage[]
    = "Usage: flux resource status [OPTIONS]\n"
      "Show online, offline, drained and excluded execution targets.\n"
      "  -s, --states=LIST   States: avail,online,offline,drained,excluded\n"
      "                      or all (default: every non-empty state)\n"
      "  -o, --format=FMT    Output format; fields: state nnodes ranks\n"
      "                      nodelist\n"
      "  -n, --no-header     Do not print the header\n"
      "  -h, --help          Display this message\n";

static const char info_usage[]
    = "Usage: flux resource info [OPTIONS]\n"
      "Print a one-line summary: \"N Nodes, M Cores, G GPUs\".\n"
      "  -s, --states=LIST   Count only these states: free,allocated,down\n"
      "                      (default: all)\n"
      "  -h, --help          Display this message\n";

static const char drain_usage[]
    = "Usage: flux resource drain [OPTIONS] [TARGETS [REASON...]]\n"
      "Drain TARGETS (an idset of ranks or a hostlist) so that nothing new\n"
      "is scheduled there.  With no TARGETS, list the drained targets.\n"
      "  -f, --force         Overwrite the reason of targets already drained\n"
      "                      (twice: the timestamp too)\n"
      "  -u, --update        Drain only the targets not already drained\n"
      "  -o, --format=FMT    Format of the list; fields: timestamp state\n"
      "                      ranks nnodes reason nodelist\n"
      "  -n, --no-header     Do not print the header of the list\n"
      "  -h, --help          Display this message\n";

static const char undrain_usage[]
    = "Usage: flux resource undrain [OPTIONS] TARGETS [REASON...]\n"
      "Return drained TARGETS to service.\n"
      "  -f, --force         Do not fail if some targets are not drained\n"
      "  -h, --help          Display this message\n";

static const char R_usage[] = "Usage: flux resource R\n"
                              "Print the resource set R (RFC 20) of the\n"
                              "instance, less excluded targets.\n"
                              "  -h, --help          Display this message\n";

static int cmd_resource_info (int argc, char **argv);
static int cmd_resource_drain (int argc, char **argv);
static int cmd_resource_undrain (int argc, char **argv);
static int cmd_resource_R (int argc, char **argv);

const struct builtin builtin_resource = {
    .name = "resource",
    .summary = "Show and manage instance resources",
    .usage = usage,
    .main = cmd_resource,
};

#define MEMBER(n, s, f)                                         \
    {                                                           \
        .name = #n, .summary = s, .usage = n##_usage, .main = f \
    }
static const struct builtin res_list = MEMBER (
    list, "Show free, allocated and down resources", cmd_resource_list);
static const struct builtin res_status = MEMBER (
    status, "Show the state of execution targets", cmd_resource_status);
static const struct builtin res_info
    = MEMBER (info, "One-line resource summary", cmd_resource_info);
static const struct builtin res_drain = MEMBER (
    drain, "Drain targets, or list drained targets", cmd_resource_drain);
static const struct builtin res_undrain
    = MEMBER (undrain, "Undrain targets", cmd_resource_undrain);
static const struct builtin res_R
    = MEMBER (R, "Print the resource set R", cmd_resource_R);

static const struct builtin *const members[] = {
    &res_list, &res_status, &res_info, &res_drain, &res_undrain, &res_R, NULL,
};

int cmd_resource (int argc, char **argv)
{
    return cmd_run_group (&builtin_resource, members, argc, argv);
}

/* ---- shared helpers ---- */

json_t *res_rpc (flux_t *h, const char *topic, int *errnum)
{
    flux_future_t *f = flux_rpc (h, topic, NULL, 0, 0);
    json_t *o = NULL;

    if (!f || flux_rpc_get_unpack (f, "o", &o) < 0) {
        if (!errnum)
            cmd_die ("%s: %s", topic,
                     f ? future_strerror (f, errno) : strerror (errno));
        *errnum = errno;
        flux_future_destroy (f);
        return NULL;
    }
    json_incref (o);
    flux_future_destroy (f);
    return o;
}

json_t *res_sched_status (flux_t *h)
{
    int errnum;
    json_t *o = res_rpc (h, "resource.sched-status", &errnum);

    if (!o && errnum == ENOSYS)
        o = res_rpc (h, "sched.resource-status", NULL);
    else if (!o)
        cmd_die ("resource.sched-status: %s", strerror (errnum));
    return o;
}

struct rlist *res_rlist (json_t *R, const char *what)
{
    flux_error_t error;
    struct rlist *rl = rlist_from_R (R, &error);

    if (!rl)
        cmd_die ("%s: %s", what, error.text);
    return rl;
}

struct rlist *res_subset (const struct rlist *rl, const char *ranks)
{
    struct rlist *cpy = rlist_copy (rl), *out;

    if (!cpy || rlist_mark_up (cpy, "all") < 0
        || rlist_mark_down (cpy, ranks) < 0 || !(out = rlist_copy_down (cpy)))
        cmd_die ("selecting ranks %s: %s", ranks, strerror (errno));
    rlist_destroy (cpy);
    return out;
}

void res_sets_get (json_t *o, struct res_sets *sets)
{
    json_t *all, *down, *alloc;
    struct rlist *up;

    if (json_unpack (o, "{s:o s:o s:o}", "all", &all, "down", &down,
                     "allocated", &alloc)
        < 0)
        cmd_die ("sched-status: expected {all, down, allocated}");
    sets->all = res_rlist (all, "all");
    sets->down = res_rlist (down, "down");
    sets->allocated = res_rlist (alloc, "allocated");
    if (!(up = rlist_diff (sets->all, sets->down))
        || !(sets->free = rlist_diff (up, sets->allocated)))
        cmd_die ("out of memory");
    rlist_destroy (up);
}

void res_sets_free (struct res_sets *sets)
{
    rlist_destroy (sets->all);
    rlist_destroy (sets->free);
    rlist_destroy (sets->allocated);
    rlist_destroy (sets->down);
}

/* ---- info, R ---- */

bool res_state_in (const char *states, const char *state)
{
    size_t len = strlen (state);
    const char *p = states;

    if (!strcmp (states, "all"))
        return true;
    while ((p = strstr (p, state))) {
        if ((p == states || p[-1] == ',') && (p[len] == ',' || !p[len]))
            return true;
        p += len;
    }
    return false;
}

void res_check_states (const char *states, const char *const valid[])
{
    char *copy = strdup (states), *save = NULL, *s;

    if (!copy)
        cmd_die ("out of memory");
    for (s = strtok_r (copy, ",", &save); s; s = strtok_r (NULL, ",", &save)) {
        int i;
        for (i = 0; valid[i]; i++)
            if (!strcmp (s, valid[i]))
                break;
        if (!valid[i] && strcmp (s, "all") != 0)
            cmd_usage_error ("invalid state '%s'", s);
    }
    free (copy);
}

static int cmd_resource_info (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"states", required_argument, NULL, 's'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    static const char *const valid[] = {"free", "allocated", "down", NULL};
    const char *states = "all";
    struct res_sets sets;
    long nodes = 0, cores = 0, gpus = 0;
    json_t *o;
    flux_t *h;
    int c;

    while ((c = cmd_getopt (argc, argv, "s:", longopts)) != -1)
        if (c == 's')
            states = optarg;
    if (optind != argc)
        cmd_usage_error ("unexpected argument '%s'", argv[optind]);
    res_check_states (states, valid);
    h = cmd_open ();
    o = res_sched_status (h);
    res_sets_get (o, &sets);
    if (!strcmp (states, "all")) {
        nodes = rlist_nnodes (sets.all);
        cores = rlist_count_cores (sets.all);
        gpus = rlist_count_gpus (sets.all);
    }
    else {
        struct rlist *v[] = {sets.free, sets.allocated, sets.down};
        for (int i = 0; i < 3; i++) {
            if (!res_state_in (states, valid[i]))
                continue;
            nodes += rlist_nnodes (v[i]);
            cores += rlist_count_cores (v[i]);
            gpus += rlist_count_gpus (v[i]);
        }
    }
    printf ("%ld Node%s, %ld Core%s, %ld GPU%s\n", nodes, nodes == 1 ? "" : "s",
            cores, cores == 1 ? "" : "s", gpus, gpus == 1 ? "" : "s");
    res_sets_free (&sets);
    json_decref (o);
    flux_close (h);
    return 0;
}

static int cmd_resource_R (int argc, char **argv)
{
    json_t *o, *all;
    char *s;
    flux_t *h;

    cmd_getopt_none (argc, argv);
    if (optind != argc)
        cmd_usage_error ("unexpected argument '%s'", argv[optind]);
    h = cmd_open ();
    o = res_sched_status (h);
    if (!(all = json_object_get (o, "all"))
        || !(s = json_dumps (all, JSON_COMPACT)))
        cmd_die ("sched-status: no R in the response");
    printf ("%s\n", s);
    free (s);
    json_decref (o);
    flux_close (h);
    return 0;
}

/* ---- drain, undrain ---- */

static void send_targets (const char *topic, const char *targets,
                          const char *reason, const char *mode)
{
    flux_t *h = cmd_open ();
    json_t *o = json_pack ("{s:s}", "targets", targets);
    flux_future_t *f;

    if (!o
        || (reason
            && json_object_set_new (o, "reason", json_string (reason)) < 0)
        || (mode && json_object_set_new (o, "mode", json_string (mode)) < 0))
        cmd_die ("out of memory");
    if (!(f = flux_rpc_pack (h, topic, 0, 0, "O", o))
        || flux_rpc_get (f, NULL) < 0)
        cmd_die ("%s", f ? future_strerror (f, errno) : strerror (errno));
    flux_future_destroy (f);
    json_decref (o);
    flux_close (h);
}

#define DRAIN_FORMAT \
    "{timestamp:<20} {state:<8} {ranks:<10} {reason:<30} {nodelist}"

/* One line of the drained list. */
struct drain_row {
    struct rlist *sub;
    const char *ranks, *state, *reason;
    double ts;
    char when[64], nnodes[16];
    char *nodelist;
};

static const char *drain_cb (const char *field, void *arg)
{
    struct drain_row *r = arg;

    if (!strcmp (field, "timestamp")) {
        time_t t = (time_t)r->ts;
        struct tm tm;
        if (!r->when[0] && localtime_r (&t, &tm))
            strftime (r->when, sizeof (r->when), "%Y-%m-%dT%H:%M:%S", &tm);
        return r->when;
    }
    if (!strcmp (field, "state"))
        return r->state;
    if (!strcmp (field, "ranks"))
        return r->ranks;
    if (!strcmp (field, "reason"))
        return r->reason;
    if (!strcmp (field, "nnodes")) {
        snprintf (r->nnodes, sizeof (r->nnodes), "%d", rlist_nnodes (r->sub));
        return r->nnodes;
    }
    if (!strcmp (field, "nodelist")) {
        if (!r->nodelist && !(r->nodelist = rlist_nodelist (r->sub)))
            cmd_die ("out of memory");
        return r->nodelist;
    }
    return "";
}

static void drain_line (struct res_format *f, struct rlist *all,
                        const char *ranks, const char *state, double ts,
                        const char *reason)
{
    struct drain_row r = {
        .sub = res_subset (all, ranks),
        .ranks = ranks,
        .state = state,
        .reason = reason,
        .ts = ts,
    };

    res_format_row (f, drain_cb, &r);
    free (r.nodelist);
    rlist_destroy (r.sub);
}

/* The ranks of ids that have something allocated (an idset string). */
static char *allocated_ranks (struct rlist *allocated, struct idset *ids,
                              bool busy)
{
    struct idset *out = idset_create (0, 0);
    char *s, *ar = rlist_ranks (allocated);
    struct idset *a = ar ? idset_decode (ar) : NULL;

    if (!out || !a)
        cmd_die ("out of memory");
    for (unsigned int id = idset_first (ids); id != IDSET_INVALID_ID;
         id = idset_next (ids, id))
        if (idset_test (a, id) == busy && idset_set (out, id) < 0)
            cmd_die ("out of memory");
    s = idset_empty (out) ? NULL : idset_encode (out, IDSET_FLAG_RANGE);
    idset_destroy (out);
    idset_destroy (a);
    free (ar);
    return s;
}

/* flux resource drain with no targets: the drained targets, those with
 * jobs still on them shown as "draining". */
static void list_drained (const char *format, bool no_header)
{
    static const char *const fields[] = {
        "timestamp", "state", "ranks", "nnodes", "reason", "nodelist", NULL,
    };
    struct res_format *f = res_format_parse (format, fields);
    flux_t *h = cmd_open ();
    json_t *st = res_rpc (h, "resource.status", NULL), *drain, *R, *v, *ss;
    struct rlist *all, *allocated = NULL;
    const char *key;
    int errnum;

    if (json_unpack (st, "{s:o s:o}", "R", &R, "drain", &drain) < 0)
        cmd_die ("resource.status: unexpected response");
    all = res_rlist (R, "R");
    if ((ss = res_rpc (h, "resource.sched-status", &errnum))) {
        json_t *a = json_object_get (ss, "allocated");
        allocated = a ? res_rlist (a, "allocated") : NULL;
        json_decref (ss);
    }
    if (!no_header)
        res_format_header (f);
    json_object_foreach (drain, key, v)
    {
        double ts = json_number_value (json_object_get (v, "timestamp"));
        const char *reason = json_string_value (json_object_get (v, "reason"));
        struct idset *ids = idset_decode (key);
        char *busy, *idle;

        if (!ids)
            cmd_die ("resource.status: bad drain idset %s", key);
        busy = allocated ? allocated_ranks (allocated, ids, true) : NULL;
        idle = allocated ? allocated_ranks (allocated, ids, false)
                         : strdup (key);
        if (idle)
            drain_line (f, all, idle, "drained", ts, reason ? reason : "");
        if (busy)
            drain_line (f, all, busy, "draining", ts, reason ? reason : "");
        free (busy);
        free (idle);
        idset_destroy (ids);
    }
    rlist_destroy (allocated);
    rlist_destroy (all);
    json_decref (st);
    res_format_destroy (f);
    flux_close (h);
}

static int cmd_resource_drain (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"force", no_argument, NULL, 'f'},
        {"update", no_argument, NULL, 'u'},
        {"format", required_argument, NULL, 'o'},
        {"no-header", no_argument, NULL, 'n'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    int force = 0, update = 0, c;
    const char *mode = NULL, *format = NULL;
    bool no_header = false;
    char *reason = NULL;

    while ((c = cmd_getopt (argc, argv, "fuo:n", longopts)) != -1) {
        if (c == 'f')
            force++;
        else if (c == 'u')
            update = 1;
        else if (c == 'o')
            format = optarg;
        else if (c == 'n')
            no_header = true;
    }
    if (force && update)
        cmd_usage_error ("--force and --update cannot be used together");
    if (optind == argc) {
        if (force || update)
            cmd_usage_error ("TARGETS are required with --force/--update");
        list_drained (format ? format : DRAIN_FORMAT, no_header);
        return 0;
    }
    if (format || no_header)
        cmd_usage_error ("--format and --no-header only apply to the list");
    if (force)
        mode = force > 1 ? "force-overwrite" : "overwrite";
    else if (update)
        mode = "update";
    if (optind + 1 < argc)
        reason = cmd_join_words (argc - optind - 1, argv + optind + 1);
    send_targets ("resource.drain", argv[optind], reason, mode);
    free (reason);
    return 0;
}

static int cmd_resource_undrain (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"force", no_argument, NULL, 'f'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    bool force = false;
    char *reason = NULL;
    int c;

    while ((c = cmd_getopt (argc, argv, "f", longopts)) != -1)
        if (c == 'f')
            force = true;
    if (optind == argc)
        cmd_usage_error ("missing TARGETS");
    if (optind + 1 < argc)
        reason = cmd_join_words (argc - optind - 1, argv + optind + 1);
    send_targets ("resource.undrain", argv[optind], reason,
                  force ? "force" : NULL);
    free (reason);
    return 0;
}
