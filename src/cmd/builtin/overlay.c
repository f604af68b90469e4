/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* overlay.c - `flux overlay status`: draw the tree based overlay network
 * (PROTOCOLS.md section 3, Overlay).
 *
 * The tree shape comes from overlay.topology on rank 0; each online
 * broker is then asked for overlay.health, which also reports how it
 * sees its children.  Children that are not online are printed with the
 * status their parent reports, and their subtrees (which cannot be asked)
 * as "ghosts" with that same status.  One line per broker:
 *   0 host0: full
 *   ├─ 1 host1: full
 *   └─ 2 host2: lost
 * --down shows only what is not full (and asks nothing of full brokers),
 * --highlight marks brokers and their ancestors, --color colors statuses.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libhostlist/hostlist.h"
#include "libidset/idset.h"
#include "libutil/monotime.h"
#include "libutil/fsd.h"

#include "cmdutil.h"

static const char usage[] = "Usage: flux overlay COMMAND [OPTIONS]\n"
                            "Show and manage the tree based overlay network.\n";

static const char status_usage[]
    = "Usage: flux overlay status [OPTIONS]\n"
      "Show the status of each broker of the overlay network tree.\n"
      "  -r, --rank=N       Show the subtree rooted at rank N (default 0)\n"
      "  -v, --verbose      Show time in state (twice: also RPC times)\n"
      "  -t, --timeout=FSD  RPC timeout, 0 for none (default 0.5s, none\n"
      "                     with --wait)\n"
      "  -w, --wait=STATE   Wait until the subtree is in STATE (full,\n"
      "                     partial, degraded, lost, offline)\n"
      "      --summary      Show only the root of the subtree\n"
      "      --down         Show only the subtrees that are not full\n"
      "      --no-pretty    No indentation or line drawing\n"
      "      --no-ghost     Do not show brokers behind an offline parent\n"
      "  -L, --color[=WHEN]  Color statuses: always (without WHEN), never\n"
      "                     or auto (default: when stdout is a terminal)\n"
      "  -H, --highlight=TARGET  Mark the brokers of TARGET (ranks or\n"
      "                     hosts) and their ancestors\n"
      "  -h, --help         Display this message\n";

static const char lookup_usage[]
    = "Usage: flux overlay lookup TARGET\n"
      "Translate ranks to hostnames, or hostnames to ranks: TARGET is an\n"
      "idset (0-3) or a hostlist (node[0-3]).\n"
      "  -h, --help         Display this message\n";

static const char parentof_usage[]
    = "Usage: flux overlay parentof RANK\n"
      "Print the rank of the parent of broker RANK in the overlay tree.\n"
      "  -h, --help         Display this message\n";

static const char disconnect_usage[]
    = "Usage: flux overlay disconnect [OPTIONS] TARGET\n"
      "Ask the parent of TARGET (a rank or a hostname) to drop it: TARGET\n"
      "and the brokers below it are lost to the instance, and their jobs\n"
      "get a node-failure exception.  For a broker that hangs.\n"
      "  -r, --parent=RANK  The parent to ask (default: from the topology)\n"
      "  -h, --help         Display this message\n";

static const char errors_usage[]
    = "Usage: flux overlay errors [OPTIONS]\n"
      "Summarize why brokers are lost or offline: one line per error, with\n"
      "the hosts it applies to.\n"
      "  -t, --timeout=FSD  RPC timeout, 0 for none (default 0.5s)\n"
      "  -h, --help         Display this message\n";

static int cmd_overlay_status (int argc, char **argv);
static int cmd_overlay_errors (int argc, char **argv);
static int cmd_overlay_lookup (int argc, char **argv);
static int cmd_overlay_parentof (int argc, char **argv);
static int cmd_overlay_disconnect (int argc, char **argv);

const struct builtin builtin_overlay = {
    .name = "overlay",
    .summary = "Show the overlay network status",
    .usage = usage,
    .main = cmd_overlay,
};

static const struct builtin overlay_status = {
    "status",
    "Show overlay network status",
    status_usage,
    cmd_overlay_status,
};

static const struct builtin overlay_errors = {
    "errors",
    "Summarize why brokers are lost or offline",
    errors_usage,
    cmd_overlay_errors,
};

static const struct builtin overlay_lookup = {
    "lookup",
    "Translate ranks to hostnames and back",
    lookup_usage,
    cmd_overlay_lookup,
};

static const struct builtin overlay_parentof = {
    "parentof",
    "Print the parent rank of a broker",
    parentof_usage,
    cmd_overlay_parentof,
};

static const struct builtin overlay_disconnect = {
    "disconnect",
    "Disconnect a broker and its subtree from the instance",
    disconnect_usage,
    cmd_overlay_disconnect,
};

extern const struct builtin overlay_trace; /* trace.c */

static const struct builtin *const members[] = {&overlay_status,
                                                &overlay_errors,
                                                &overlay_lookup,
                                                &overlay_parentof,
                                                &overlay_disconnect,
                                                &overlay_trace,
                                                NULL};

int cmd_overlay (int argc, char **argv)
{
    return cmd_run_group (&builtin_overlay, members, argc, argv);
}

enum { MAX_DEPTH = 128 };

struct status {
    flux_t *h;
    int verbose;
    double timeout; /* < 0: none */
    const char *wait;
    bool summary, pretty, ghost, down, color;
    const char *highlight_arg;
    struct idset *highlight; /* the targets of --highlight and ancestors */
    struct hostlist *hosts;
    bool
        last[MAX_DEPTH]; /* last[k]: the ancestor at level k was a last child */
    int errors;
};

/* The ANSI color of a status: green when all is well, yellow when part
 * of a subtree is missing, red when a broker is lost or unreachable. */
static const char *status_color (const char *status)
{
    if (!strcmp (status, "full"))
        return "\033[32m";
    if (!strcmp (status, "partial") || !strcmp (status, "offline"))
        return "\033[33m";
    return "\033[31m"; /* degraded, lost, unknown */
}

static void print_node (struct status *ctx, int level, int rank,
                        const char *status, double duration, const char *error,
                        double rpc_ms)
{
    const char *host = ctx->hosts ? hostlist_nth (ctx->hosts, rank) : NULL;
    bool mark = ctx->highlight && idset_test (ctx->highlight, rank);
    char fsd[64];

    if (ctx->pretty && level > 0) {
        for (int k = 1; k < level && k < MAX_DEPTH; k++)
            fputs (ctx->last[k] ? "   " : "│  ", stdout);
        fputs (ctx->last[level < MAX_DEPTH ? level : 0] ? "└─ " : "├─ ",
               stdout);
    }
    /* a highlighted broker: in reverse video, or between << >> */
    if (mark)
        fputs (ctx->color ? "\033[7m" : "<<", stdout);
    printf ("%d %s", rank, host ? host : "?");
    if (mark)
        fputs (ctx->color ? "\033[0m" : ">>", stdout);
    if (ctx->color)
        printf (": %s%s\033[0m", status_color (status), status);
    else
        printf (": %s", status);
    if (ctx->verbose >= 1 && duration > 0
        && fsd_format_duration (fsd, sizeof (fsd), duration) == 0)
        printf (" for %s", fsd);
    if (error && *error)
        printf (" %s", error);
    if (ctx->verbose >= 2 && rpc_ms >= 0)
        printf (" (%.3f ms)", rpc_ms);
    printf ("\n");
}

static bool is_online (const char *status)
{
    return !strcmp (status, "full") || !strcmp (status, "partial")
           || !strcmp (status, "degraded");
}

/* overlay.health on rank, waiting for --wait STATE if wait is set. */
static flux_future_t *health_rpc (struct status *ctx, int rank, bool wait)
{
    double start = monotime ();
    const char *status;
    flux_future_t *f;

    if (!(f = flux_rpc (ctx->h, "overlay.health", NULL, rank,
                        wait ? FLUX_RPC_STREAMING : 0)))
        return NULL;
    for (;;) {
        double left = -1.;
        if (ctx->timeout >= 0) {
            left = ctx->timeout - (monotime () - start);
            if (left < 0)
                left = 0;
        }
        if (flux_future_wait_for (f, left) < 0) {
            flux_future_destroy (f); /* not fulfilled: errno ETIMEDOUT */
            return NULL;
        }
        if (flux_rpc_get_unpack (f, "{s:s}", "status", &status) < 0 || !wait
            || !strcmp (ctx->wait, status))
            return f; /* ready: the caller decodes it or its error */
        flux_future_reset (f);
    }
}

static void ghost_walk (struct status *ctx, json_t *topo, int level,
                        const char *status)
{
    json_t *children = json_object_get (topo, "children");
    size_t n = json_array_size (children);

    for (size_t i = 0; i < n && level + 1 < MAX_DEPTH; i++) {
        json_t *child = json_array_get (children, i);
        ctx->last[level + 1] = i == n - 1;
        print_node (ctx, level + 1,
                    json_integer_value (json_object_get (child, "rank")),
                    status, -1, NULL, -1);
        ghost_walk (ctx, child, level + 1, status);
    }
}

/* The status entry of child rank in a health response's children.  The
 * broker lists its children in the order of the topology: entry hint
 * (the child's index there) is looked at first, so that a broker with k
 * children costs O(k), not O(k^2) (rank 0 of a flat tree of 10,000). */
static json_t *find_child (json_t *children, int rank, size_t hint)
{
    size_t i;
    json_t *c = json_array_get (children, hint);

    if (c && json_integer_value (json_object_get (c, "rank")) == rank)
        return c;
    json_array_foreach (children, i, c)
    {
        if (json_integer_value (json_object_get (c, "rank")) == rank)
            return c;
    }
    return NULL;
}

static void health_walk (struct status *ctx, json_t *topo, int level);

/* The status of child rank as its parent's health response says. */
static const char *child_status (json_t *health, int rank, size_t hint,
                                 double *duration, const char **error)
{
    json_t *h = find_child (health, rank, hint);
    const char *status = "unknown";

    if (h
        && json_unpack (h, "{s:s s?F s?s}", "status", &status, "duration",
                        duration, "error", error)
               < 0)
        status = "unknown";
    return status;
}

static void child_walk (struct status *ctx, json_t *child, size_t index,
                        json_t *health, int level)
{
    int rank = json_integer_value (json_object_get (child, "rank"));
    const char *error = NULL;
    double duration = -1;
    const char *status = child_status (health, rank, index, &duration, &error);

    if (is_online (status)) {
        health_walk (ctx, child, level);
        return;
    }
    print_node (ctx, level, rank, status, duration, error, -1);
    if (ctx->ghost)
        ghost_walk (ctx, child, level, status);
}

/* Whether --down hides child (a subtree of the topology, its index-th). */
static bool hidden (struct status *ctx, json_t *child, size_t index,
                    json_t *health)
{
    int rank = json_integer_value (json_object_get (child, "rank"));
    const char *error;
    double duration;

    return ctx->down
           && !strcmp (child_status (health, rank, index, &duration, &error),
                       "full");
}

static void health_walk (struct status *ctx, json_t *topo, int level)
{
    int rank = json_integer_value (json_object_get (topo, "rank"));
    json_t *children = json_object_get (topo, "children");
    size_t n = json_array_size (children);
    double start = monotime ();
    json_t *health = NULL;
    const char *status;
    double duration;
    flux_future_t *f;

    /* --wait applies to the root of the subtree shown */
    if (!(f = health_rpc (ctx, rank, ctx->wait && level == 0))
        || flux_rpc_get_unpack (f, "{s:s s:F s:o}", "status", &status,
                                "duration", &duration, "children", &health)
               < 0) {
        print_node (ctx, level, rank, "unknown", -1,
                    f ? future_strerror (f, errno) : strerror (errno), -1);
        ctx->errors++;
        flux_future_destroy (f);
        if (ctx->ghost && !ctx->summary)
            ghost_walk (ctx, topo, level, "unknown");
        return;
    }
    print_node (ctx, level, rank, status, duration, NULL,
                (monotime () - start) * 1e3);
    /* with --down, a full child is neither shown nor asked: the last
     * child drawn is the last one not full */
    size_t last = n;
    for (size_t i = 0; i < n; i++) {
        if (!hidden (ctx, json_array_get (children, i), i, health))
            last = i;
    }
    for (size_t i = 0;
         i <= last && last < n && !ctx->summary && level + 1 < MAX_DEPTH; i++) {
        json_t *c = json_array_get (children, i);
        if (hidden (ctx, c, i, health))
            continue;
        ctx->last[level + 1] = i == last;
        child_walk (ctx, c, i, health, level + 1);
    }
    flux_future_destroy (f);
}

/* The subtree of topo rooted at rank, or NULL. */
static json_t *find_subtree (json_t *topo, int rank)
{
    json_t *children = json_object_get (topo, "children");
    json_t *found;
    size_t i;
    json_t *c;

    if (json_integer_value (json_object_get (topo, "rank")) == rank)
        return topo;
    json_array_foreach (children, i, c)
    {
        if ((found = find_subtree (c, rank)))
            return found;
    }
    return NULL;
}

static struct hostlist *get_hosts (flux_t *h, uint32_t *size);
static struct idset *parse_target (struct hostlist *hosts, uint32_t size,
                                   const char *target);

/* The whole tree from rank 0 (overlay.topology); json_decref() it. */
static json_t *get_topology (flux_t *h)
{
    json_t *topology;
    flux_future_t *f;

    if (!(f = flux_rpc_pack (h, "overlay.topology", 0, 0, "{s:i}", "rank", 0))
        || flux_rpc_get_unpack (f, "o", &topology) < 0)
        cmd_die ("overlay.topology: %s",
                 f ? future_strerror (f, errno) : strerror (errno));
    json_incref (topology);
    flux_future_destroy (f);
    return topology;
}

static void parse_status_args (struct status *ctx, int argc, char **argv,
                               long *rank)
{
    static const struct option longopts[] = {
        {"rank", required_argument, NULL, 'r'},
        {"verbose", no_argument, NULL, 'v'},
        {"timeout", required_argument, NULL, 't'},
        {"wait", required_argument, NULL, 'w'},
        {"summary", no_argument, NULL, 'S'},
        {"no-pretty", no_argument, NULL, 'P'},
        {"no-ghost", no_argument, NULL, 'G'},
        {"down", no_argument, NULL, 'D'},
        {"color", optional_argument, NULL, 'L'},
        {"highlight", required_argument, NULL, 'H'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    double timeout = 0.5;
    bool timeout_set = false;
    int c;

    while ((c = cmd_getopt (argc, argv, "r:vt:w:L::H:", longopts)) != -1) {
        switch (c) {
            case 'r':
                *rank = cmd_parse_long ("--rank", optarg, 0, INT32_MAX);
                break;
            case 'v':
                ctx->verbose++;
                break;
            case 't':
                timeout = cmd_parse_duration ("--timeout", optarg);
                timeout_set = true;
                break;
            case 'w':
                ctx->wait = optarg;
                break;
            case 'S':
                ctx->summary = true;
                break;
            case 'P':
                ctx->pretty = false;
                break;
            case 'G':
                ctx->ghost = false;
                break;
            case 'D':
                ctx->down = true;
                break;
            case 'L':
                ctx->color = cmd_parse_color ("--color", optarg);
                break;
            case 'H':
                ctx->highlight_arg = optarg;
                break;
        }
    }
    if (optind != argc)
        cmd_usage_error ("unexpected argument '%s'", argv[optind]);
    if (ctx->wait && !is_online (ctx->wait) && strcmp (ctx->wait, "lost")
        && strcmp (ctx->wait, "offline"))
        cmd_usage_error ("--wait: unknown state '%s'", ctx->wait);
    ctx->timeout = timeout > 0 && (timeout_set || !ctx->wait) ? timeout : -1;
}

/* Add the rank of topo to out if its subtree holds a rank of targets;
 * true if it does. */
static bool mark_ancestors (json_t *topo, const struct idset *targets,
                            struct idset *out)
{
    int rank = json_integer_value (json_object_get (topo, "rank"));
    json_t *children = json_object_get (topo, "children");
    bool found = idset_test (targets, rank);
    size_t i;
    json_t *c;

    json_array_foreach (children, i, c)
    {
        if (mark_ancestors (c, targets, out))
            found = true;
    }
    if (found && idset_set (out, rank) < 0)
        cmd_die ("out of memory");
    return found;
}

/* The brokers --highlight marks: its targets and their ancestors. */
static struct idset *highlight_set (struct status *ctx, json_t *topology)
{
    struct hostlist *hosts;
    struct idset *targets, *out;
    uint32_t size;

    hosts = get_hosts (ctx->h, &size);
    targets = parse_target (hosts, size, ctx->highlight_arg);
    if (!(out = idset_create (size, 0)))
        cmd_die ("out of memory");
    (void)mark_ancestors (topology, targets, out);
    idset_destroy (targets);
    hostlist_destroy (hosts);
    return out;
}

static int cmd_overlay_status (int argc, char **argv)
{
    struct status ctx = {.pretty = true, .ghost = true};
    json_t *topology, *subtree;
    const char *s;
    long rank = 0;

    ctx.color = cmd_parse_color ("--color", "auto");

    parse_status_args (&ctx, argc, argv, &rank);
    ctx.h = cmd_open ();
    if ((s = flux_attr_get (ctx.h, "hostlist")))
        ctx.hosts = hostlist_decode (s);
    topology = get_topology (ctx.h);
    if (!(subtree = find_subtree (topology, rank)))
        cmd_die ("rank %ld is not in the overlay topology", rank);
    if (ctx.highlight_arg)
        ctx.highlight = highlight_set (&ctx, topology);
    health_walk (&ctx, subtree, 0);
    idset_destroy (ctx.highlight);
    json_decref (topology);
    hostlist_destroy (ctx.hosts);
    flux_close (ctx.h);
    return ctx.errors ? 1 : 0;
}

/* lookup, parentof, disconnect */

/* The instance's hostlist (one host per rank) and size. */
static struct hostlist *get_hosts (flux_t *h, uint32_t *size)
{
    struct hostlist *hosts;
    const char *s;

    if (flux_get_size (h, size) < 0)
        cmd_die ("size: %s", strerror (errno));
    if (!(s = flux_attr_get (h, "hostlist")) || !(hosts = hostlist_decode (s)))
        cmd_die ("hostlist: %s", strerror (errno));
    return hosts;
}

/* The ranks whose host is in the hostlist target, or NULL if none. */
static struct idset *ranks_of_hosts (struct hostlist *hosts, uint32_t size,
                                     const char *target)
{
    struct hostlist *want = hostlist_decode (target);
    json_t *set = json_object (); /* the hosts of target, as a hash set */
    struct idset *ids = idset_create (0, IDSET_FLAG_AUTOGROW);
    const char *host;

    if (!want || hostlist_count (want) == 0)
        cmd_usage_error ("'%s' is neither an idset nor a hostlist", target);
    if (!set || !ids)
        cmd_die ("out of memory");
    for (host = hostlist_first (want); host; host = hostlist_next (want))
        if (json_object_set (set, host, json_true ()) < 0)
            cmd_die ("out of memory");
    for (uint32_t r = 0; r < size; r++) {
        if ((host = hostlist_nth (hosts, (int)r)) && json_object_get (set, host)
            && idset_set (ids, r) < 0)
            cmd_die ("out of memory");
    }
    hostlist_destroy (want);
    json_decref (set);
    if (idset_empty (ids)) {
        idset_destroy (ids);
        return NULL;
    }
    return ids;
}

/* TARGET of lookup and disconnect: an idset of ranks of this instance,
 * else a hostlist of its hosts; the ranks it names. */
static struct idset *parse_target (struct hostlist *hosts, uint32_t size,
                                   const char *target)
{
    struct idset *ids;

    if ((ids = idset_decode (target))) {
        if (idset_empty (ids) || idset_last (ids) >= size)
            cmd_die ("%s: the ranks of this instance are 0-%u", target,
                     size - 1);
        return ids;
    }
    if (!(ids = ranks_of_hosts (hosts, size, target)))
        cmd_die ("%s: no such host in this instance", target);
    return ids;
}

static int cmd_overlay_lookup (int argc, char **argv)
{
    struct hostlist *hosts, *out;
    struct idset *ids;
    const char *target;
    bool by_rank;
    uint32_t size;
    char *s;
    flux_t *h;

    cmd_getopt_none (argc, argv);
    if (optind != argc - 1)
        cmd_usage_error ("expected one TARGET");
    target = argv[optind];
    h = cmd_open ();
    hosts = get_hosts (h, &size);
    by_rank = (ids = idset_decode (target)) != NULL;
    idset_destroy (ids);
    ids = parse_target (hosts, size, target);
    if (by_rank) { /* ranks: their hostnames */
        if (!(out = hostlist_create ()))
            cmd_die ("out of memory");
        for (unsigned int r = idset_first (ids); r != IDSET_INVALID_ID;
             r = idset_next (ids, r))
            if (hostlist_append (out, hostlist_nth (hosts, (int)r)) < 0)
                cmd_die ("out of memory");
        s = hostlist_encode (out);
        hostlist_destroy (out);
    }
    else /* hostnames: their ranks */
        s = idset_encode (ids, IDSET_FLAG_RANGE);
    if (!s)
        cmd_die ("out of memory");
    printf ("%s\n", s);
    free (s);
    idset_destroy (ids);
    hostlist_destroy (hosts);
    flux_close (h);
    return 0;
}

/* The rank of the parent of rank in topo (rooted at parent), or -1. */
static long find_parent (json_t *topo, long rank)
{
    json_t *children = json_object_get (topo, "children");
    json_t *c;
    size_t i;
    long p;

    json_array_foreach (children, i, c)
    {
        if (json_integer_value (json_object_get (c, "rank")) == rank)
            return (long)json_integer_value (json_object_get (topo, "rank"));
        if ((p = find_parent (c, rank)) >= 0)
            return p;
    }
    return -1;
}

/* The parent of rank, from the topology rank 0 reports. */
static long parent_of (flux_t *h, long rank)
{
    json_t *topology = get_topology (h);
    long parent;

    parent = find_parent (topology, rank);
    json_decref (topology);
    if (parent < 0)
        cmd_die ("rank %ld has no parent: it is the root of the tree", rank);
    return parent;
}

static int cmd_overlay_parentof (int argc, char **argv)
{
    uint32_t size;
    long rank;
    flux_t *h;

    cmd_getopt_none (argc, argv);
    if (optind != argc - 1)
        cmd_usage_error ("expected one RANK");
    h = cmd_open ();
    if (flux_get_size (h, &size) < 0)
        cmd_die ("size: %s", strerror (errno));
    rank = cmd_parse_long ("RANK", argv[optind], 0, (long)size - 1);
    printf ("%ld\n", parent_of (h, rank));
    flux_close (h);
    return 0;
}

static int cmd_overlay_disconnect (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"parent", required_argument, NULL, 'r'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    struct hostlist *hosts;
    struct idset *ids;
    flux_future_t *f;
    long parent = -1, rank;
    uint32_t size;
    flux_t *h;
    int c;

    while ((c = cmd_getopt (argc, argv, "r:", longopts)) != -1) {
        if (c == 'r')
            parent = cmd_parse_long ("--parent", optarg, 0, INT32_MAX);
    }
    if (optind != argc - 1)
        cmd_usage_error ("expected one TARGET");
    h = cmd_open ();
    hosts = get_hosts (h, &size);
    ids = parse_target (hosts, size, argv[optind]);
    if (idset_count (ids) != 1)
        cmd_die ("%s names %zu brokers: give one rank", argv[optind],
                 idset_count (ids));
    rank = (long)idset_first (ids);
    if (parent < 0)
        parent = parent_of (h, rank);
    fprintf (stderr,
             "flux-overlay: asking %s (rank %ld) to disconnect child %s "
             "(rank %ld)\n",
             parent < size ? hostlist_nth (hosts, (int)parent) : "?", parent,
             hostlist_nth (hosts, (int)rank), rank);
    if (!(f = flux_rpc_pack (h, "overlay.disconnect-subtree", (uint32_t)parent,
                             0, "{s:i}", "rank", (int)rank))
        || flux_future_get (f, NULL) < 0)
        cmd_die ("%s", f ? future_strerror (f, errno) : strerror (errno));
    flux_future_destroy (f);
    idset_destroy (ids);
    hostlist_destroy (hosts);
    flux_close (h);
    return 0;
}

/* errors */

struct errors {
    struct status st;   /* for health_rpc(): h, timeout */
    json_t *groups;     /* [{error, ranks}], in the order first met */
    struct idset **ids; /* ids[i]: the ranks of groups[i] */
};

/* Add rank to the group of error text. */
static void errors_add (struct errors *e, const char *error, uint32_t rank)
{
    size_t n = json_array_size (e->groups), i;

    for (i = 0; i < n; i++)
        if (!strcmp (json_string_value (json_array_get (e->groups, i)), error))
            break;
    if (i == n) {
        struct idset **ids = realloc (e->ids, (n + 1) * sizeof (*ids));
        if (!ids || !(e->ids = ids)
            || !(ids[n] = idset_create (0, IDSET_FLAG_AUTOGROW))
            || json_array_append_new (e->groups, json_string (error)) < 0)
            cmd_die ("out of memory");
    }
    if (idset_set (e->ids[i], rank) < 0)
        cmd_die ("out of memory");
}

/* The brokers below a lost one lost their parent. */
static void errors_ghosts (struct errors *e, json_t *topo)
{
    json_t *children = json_object_get (topo, "children");
    json_t *c;
    size_t i;

    json_array_foreach (children, i, c)
    {
        errors_add (e, "lost parent",
                    (uint32_t)json_integer_value (json_object_get (c, "rank")));
        errors_ghosts (e, c);
    }
}

/* Ask each broker that is up how its children are, and record why those
 * that are not online went. */
static void errors_walk (struct errors *e, json_t *topo)
{
    int rank = json_integer_value (json_object_get (topo, "rank"));
    json_t *children = json_object_get (topo, "children");
    json_t *health, *c;
    flux_future_t *f;
    size_t i;

    if (!(f = health_rpc (&e->st, rank, false))
        || flux_rpc_get_unpack (f, "{s:o}", "children", &health) < 0) {
        errors_add (e, f ? future_strerror (f, errno) : strerror (errno),
                    (uint32_t)rank);
        flux_future_destroy (f);
        return;
    }
    json_array_foreach (children, i, c)
    {
        int r = json_integer_value (json_object_get (c, "rank"));
        const char *error = NULL;
        double duration;
        const char *status = child_status (health, r, i, &duration, &error);

        if (is_online (status))
            errors_walk (e, c);
        else if (!strcmp (status, "lost") || error) {
            errors_add (e, error ? error : status, (uint32_t)r);
            if (!strcmp (status, "lost"))
                errors_ghosts (e, c);
        }
    }
    flux_future_destroy (f);
}

static int cmd_overlay_errors (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"timeout", required_argument, NULL, 't'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    struct errors e = {.st = {.timeout = 0.5}};
    struct hostlist *hosts;
    json_t *topology;
    uint32_t size;
    int c;

    while ((c = cmd_getopt (argc, argv, "t:", longopts)) != -1) {
        if (c == 't') {
            double t = cmd_parse_duration ("--timeout", optarg);
            e.st.timeout = t > 0 ? t : -1;
        }
    }
    if (optind != argc)
        cmd_usage_error ("unexpected argument '%s'", argv[optind]);
    e.st.h = cmd_open ();
    hosts = get_hosts (e.st.h, &size);
    if (!(e.groups = json_array ()))
        cmd_die ("out of memory");
    topology = get_topology (e.st.h);
    errors_walk (&e, topology);
    json_decref (topology);
    for (size_t i = 0; i < json_array_size (e.groups); i++) {
        struct hostlist *hl = hostlist_create ();
        char *s;

        if (!hl)
            cmd_die ("out of memory");
        for (unsigned int r = idset_first (e.ids[i]); r != IDSET_INVALID_ID;
             r = idset_next (e.ids[i], r))
            if (hostlist_append (hl,
                                 r < size ? hostlist_nth (hosts, (int)r) : "?")
                < 0)
                cmd_die ("out of memory");
        if (!(s = hostlist_encode (hl)))
            cmd_die ("out of memory");
        printf ("%s: %s\n", s,
                json_string_value (json_array_get (e.groups, i)));
        free (s);
        hostlist_destroy (hl);
        idset_destroy (e.ids[i]);
    }
    free (e.ids);
    json_decref (e.groups);
    hostlist_destroy (hosts);
    flux_close (e.st.h);
    return 0;
}
