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
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libhostlist/hostlist.h"
#include "libutil/monotime.h"
#include "libutil/fsd.h"

#include "cmdutil.h"

static const char usage[] = "Usage: flux overlay COMMAND [OPTIONS]\n"
                            "Show the tree based overlay network.\n";

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
      "      --no-pretty    No indentation or line drawing\n"
      "      --no-ghost     Do not show brokers behind an offline parent\n"
      "  -h, --help         Display this message\n";

static int cmd_overlay_status (int argc, char **argv);

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

static const struct builtin *const members[] = {&overlay_status, NULL};

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
    bool summary, pretty, ghost;
    struct hostlist *hosts;
    bool
        last[MAX_DEPTH]; /* last[k]: the ancestor at level k was a last child */
    int errors;
};

static void print_node (struct status *ctx, int level, int rank,
                        const char *status, double duration, const char *error,
                        double rpc_ms)
{
    const char *host = ctx->hosts ? hostlist_nth (ctx->hosts, rank) : NULL;
    char fsd[64];

    if (ctx->pretty && level > 0) {
        for (int k = 1; k < level && k < MAX_DEPTH; k++)
            fputs (ctx->last[k] ? "   " : "│  ", stdout);
        fputs (ctx->last[level < MAX_DEPTH ? level : 0] ? "└─ " : "├─ ",
               stdout);
    }
    printf ("%d %s: %s", rank, host ? host : "?", status);
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

/* The status entry of child rank in a health response's children. */
static json_t *find_child (json_t *children, int rank)
{
    size_t i;
    json_t *c;

    json_array_foreach (children, i, c)
    {
        if (json_integer_value (json_object_get (c, "rank")) == rank)
            return c;
    }
    return NULL;
}

static void health_walk (struct status *ctx, json_t *topo, int level);

static void child_walk (struct status *ctx, json_t *child, json_t *health,
                        int level)
{
    int rank = json_integer_value (json_object_get (child, "rank"));
    json_t *h = find_child (health, rank);
    const char *status = "unknown", *error = NULL;
    double duration = -1;

    if (h
        && json_unpack (h, "{s:s s?F s?s}", "status", &status, "duration",
                        &duration, "error", &error)
               < 0)
        status = "unknown";
    if (is_online (status)) {
        health_walk (ctx, child, level);
        return;
    }
    print_node (ctx, level, rank, status, duration, error, -1);
    if (ctx->ghost)
        ghost_walk (ctx, child, level, status);
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
    for (size_t i = 0; i < n && !ctx->summary && level + 1 < MAX_DEPTH; i++) {
        ctx->last[level + 1] = i == n - 1;
        child_walk (ctx, json_array_get (children, i), health, level + 1);
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
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    double timeout = 0.5;
    bool timeout_set = false;
    int c;

    while ((c = cmd_getopt (argc, argv, "r:vt:w:", longopts)) != -1) {
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
        }
    }
    if (optind != argc)
        cmd_usage_error ("unexpected argument '%s'", argv[optind]);
    if (ctx->wait && !is_online (ctx->wait) && strcmp (ctx->wait, "lost")
        && strcmp (ctx->wait, "offline"))
        cmd_usage_error ("--wait: unknown state '%s'", ctx->wait);
    ctx->timeout = timeout > 0 && (timeout_set || !ctx->wait) ? timeout : -1;
}

static int cmd_overlay_status (int argc, char **argv)
{
    struct status ctx = {.pretty = true, .ghost = true};
    json_t *topology, *subtree;
    flux_future_t *f;
    const char *s;
    long rank = 0;

    parse_status_args (&ctx, argc, argv, &rank);
    ctx.h = cmd_open ();
    if ((s = flux_attr_get (ctx.h, "hostlist")))
        ctx.hosts = hostlist_decode (s);
    if (!(f
          = flux_rpc_pack (ctx.h, "overlay.topology", 0, 0, "{s:i}", "rank", 0))
        || flux_rpc_get_unpack (f, "o", &topology) < 0)
        cmd_die ("overlay.topology: %s",
                 f ? future_strerror (f, errno) : strerror (errno));
    if (!(subtree = find_subtree (topology, rank)))
        cmd_die ("rank %ld is not in the overlay topology", rank);
    health_walk (&ctx, subtree, 0);
    flux_future_destroy (f);
    hostlist_destroy (ctx.hosts);
    flux_close (ctx.h);
    return ctx.errors ? 1 : 0;
}
