/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* main.c - flux-broker: set up, run the state machine, tear down.
 *
 * States (PROTOCOLS.md 3): join (wait for the parent) -> init (rc1) ->
 * quorum (wait for every child's subtree to be up) -> run (rank 0 runs
 * the initial program) -> cleanup -> shutdown (rc3: unload modules) ->
 * finalize (wait for the children to leave) -> goodbye -> exit.
 * Leaves leave first, rank 0 last, so nothing is left behind.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "boot.h"
#include "broker.h"
#include "methods.h"
#include "module.h"
#include "overlay/overlay.h"
#include "overlay/topology.h"

static const char *state_names[] = {
    "load-builtins", "join",    "config-sync",     "init",
    "quorum",        "run",     "cleanup",         "shutdown",
    "finalize",      "goodbye", "unload-builtins", "exit",
};

const char *state_name (enum broker_state s)
{
    return (s >= 0 && s <= STATE_EXIT) ? state_names[s] : "unknown";
}

static void state_enter (struct broker *b, enum broker_state s);

/* ---- child processes: rc1 and the initial program ---- */

static void proc_close_cb (uv_handle_t *h)
{
    free (h);
}

static void initial_exit_cb (uv_process_t *p, int64_t status, int sig)
{
    struct broker *b = p->data;
    int rc = sig ? 128 + sig : (int)status;

    b->init_proc = NULL;
    uv_close ((uv_handle_t *)p, proc_close_cb);
    if (b->state == STATE_INIT) { /* rc1 */
        if (rc != 0) {
            brokerlog_msg (b->log, LOG_ERR, "rc1 exited with status %d", rc);
            broker_shutdown (b, rc);
            return;
        }
        state_enter (b, STATE_QUORUM);
        return;
    }
    if (rc != 0)
        brokerlog_msg (b->log, LOG_INFO, "initial program exited with %d", rc);
    broker_shutdown (b, rc);
}

static int spawn (struct broker *b, char **argv)
{
    uv_process_options_t opts = {0};
    uv_stdio_container_t stdio[3];
    int i, rc;

    if (!(b->init_proc = calloc (1, sizeof (*b->init_proc))))
        return -1;
    for (i = 0; i < 3; i++) {
        stdio[i].flags = UV_INHERIT_FD;
        stdio[i].data.fd = i;
    }
    opts.file = argv[0];
    opts.args = argv;
    opts.exit_cb = initial_exit_cb;
    opts.stdio = stdio;
    opts.stdio_count = 3;
    b->init_proc->data = b;
    if ((rc = uv_spawn (b->loop, b->init_proc, &opts)) < 0) {
        fprintf (stderr, "flux-broker: %s: %s\n", argv[0], uv_strerror (rc));
        uv_close ((uv_handle_t *)b->init_proc, proc_close_cb);
        b->init_proc = NULL;
        errno = -rc;
        return -1;
    }
    return 0;
}

/* ---- state machine ---- */

static void send_ready (struct broker *b)
{
    int64_t parent = topology_parent (b->rank, b->size, b->fanout);
    flux_future_t *f;

    f = flux_rpc_pack (b->h, "broker.ready", (uint32_t)parent,
                       FLUX_RPC_NORESPONSE, "{s:i}", "rank", (int)b->rank);
    flux_future_destroy (f);
}

static int children_ready;

static void ready_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    struct broker *b = arg;

    children_ready++;
    if (b->state == STATE_QUORUM && children_ready >= b->nchildren)
        state_enter (b, STATE_RUN);
}

static void run_initial_program (struct broker *b)
{
    char *shell_argv[] = {getenv ("SHELL"), NULL};

    if (b->rank != 0)
        return;
    if (!b->initial_program) {
        if (!shell_argv[0])
            shell_argv[0] = "/bin/sh";
        if (spawn (b, shell_argv) < 0)
            broker_shutdown (b, 1);
        return;
    }
    if (spawn (b, b->initial_program) < 0)
        broker_shutdown (b, 127);
}

static void stop_modules (struct broker *b)
{
    size_t i;
    for (i = b->nmodules; i > 0; i--)
        (void)module_stop (b->modules[i - 1]);
}

static void state_enter (struct broker *b, enum broker_state s)
{
    const char *rc1;

    if (s <= b->state && s != STATE_LOAD_BUILTINS)
        return;
    b->state = s;
    builtin_state_changed (b);
    switch (s) {
        case STATE_JOIN:
            if (b->rank == 0 || b->parent_online)
                state_enter (b, STATE_INIT);
            break;
        case STATE_INIT:
            rc1 = attr_get (b->attrs, "broker.rc1_path", NULL);
            if (rc1 && *rc1) {
                char *argv[] = {(char *)rc1, NULL};
                if (spawn (b, argv) < 0)
                    broker_shutdown (b, 1);
            }
            else
                state_enter (b, STATE_QUORUM);
            break;
        case STATE_QUORUM:
            if (children_ready >= b->nchildren)
                state_enter (b, STATE_RUN);
            break;
        case STATE_RUN:
            if (b->rank > 0)
                send_ready (b);
            else
                run_initial_program (b);
            break;
        case STATE_CLEANUP:
            if (b->rank == 0) {
                flux_msg_t *ev = flux_event_encode ("broker.shutdown", NULL);
                if (ev)
                    (void)router_publish (b, ev);
            }
            state_enter (b, STATE_SHUTDOWN);
            break;
        case STATE_SHUTDOWN:
            stop_modules (b);
            if (b->nmodules == 0)
                state_enter (b, STATE_FINALIZE);
            break;
        case STATE_FINALIZE:
            if (b->children_online == 0)
                state_enter (b, STATE_GOODBYE);
            break;
        case STATE_GOODBYE:
            state_enter (b, STATE_EXIT);
            break;
        case STATE_EXIT:
            flux_reactor_stop (b->reactor);
            break;
        default:
            break;
    }
}

void broker_shutdown (struct broker *b, int exit_rc)
{
    if (b->shutdown_requested)
        return;
    b->shutdown_requested = 1;
    b->exit_rc = exit_rc;
    if (b->init_proc)
        uv_process_kill (b->init_proc, SIGTERM);
    state_enter (b, STATE_CLEANUP);
}

static void shutdown_event_cb (flux_t *h, flux_msg_handler_t *mh,
                               const flux_msg_t *msg, void *arg)
{
    struct broker *b = arg;
    if (b->rank > 0)
        broker_shutdown (b, 0);
}

/* Modules exiting during shutdown let it proceed (checked each turn). */
static void shutdown_check_cb (uv_check_t *w)
{
    struct broker *b = w->data;
    if (b->state == STATE_SHUTDOWN && b->nmodules == 0)
        state_enter (b, STATE_FINALIZE);
}

void broker_peer_status (struct broker *b, uint32_t peer, int status,
                         const char *error)
{
    int64_t parent = topology_parent (b->rank, b->size, b->fanout);

    if ((int64_t)peer == parent) {
        if (status == OVERLAY_PEER_ONLINE) {
            b->parent_online = 1;
            if (b->state == STATE_JOIN)
                state_enter (b, STATE_INIT);
        }
        else if (status == OVERLAY_PEER_LOST) {
            b->parent_online = 0;
            if (b->state < STATE_FINALIZE)
                brokerlog_msg (b->log, LOG_ERR, "parent lost: %s",
                               error ? error : "connection lost");
            /* nothing above us: leave now, children follow */
            b->exit_rc = b->shutdown_requested ? b->exit_rc : 1;
            b->shutdown_requested = 1;
            stop_modules (b);
            state_enter (b, STATE_EXIT);
        }
        return;
    }
    if (status == OVERLAY_PEER_ONLINE)
        b->children_online++;
    else if (status == OVERLAY_PEER_LOST || status == OVERLAY_PEER_OFFLINE) {
        if (b->children_online > 0)
            b->children_online--;
        router_child_lost (b, peer);
        if (b->state < STATE_SHUTDOWN)
            brokerlog_msg (b->log, LOG_ERR, "broker on rank %u lost: %s", peer,
                           error ? error : "connection lost");
        if (b->state == STATE_FINALIZE && b->children_online == 0)
            state_enter (b, STATE_GOODBYE);
    }
    else if (status == OVERLAY_PEER_TORPID)
        brokerlog_msg (b->log, LOG_WARNING, "broker on rank %u is torpid",
                       peer);
}

/* ---- setup ---- */

static void usage (FILE *f)
{
    fprintf (f, "Usage: flux-broker [OPTIONS] [INITIAL-PROGRAM [ARGS...]]\n"
                "Run one Flux broker.  Under a PMI-1 launcher (PMI_FD set) it\n"
                "joins the other brokers of the instance; otherwise it is a\n"
                "singleton instance.  Rank 0 runs INITIAL-PROGRAM (default:\n"
                "$SHELL) and the instance exits with its status.\n"
                "  -S, --setattr=NAME=VALUE  set a broker attribute\n"
                "  -h, --help                show this help\n");
}

static int parse_args (struct broker *b, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"setattr", required_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},
        {"verbose", no_argument, NULL, 'v'},
        {NULL, 0, NULL, 0},
    };
    int c;

    while ((c = getopt_long (argc, argv, "+S:hv", longopts, NULL)) != -1) {
        char *eq;
        switch (c) {
            case 'S':
                if (!(eq = strchr (optarg, '=')) || eq == optarg) {
                    fprintf (stderr, "flux-broker: -S expects NAME=VALUE\n");
                    return -1;
                }
                *eq = '\0';
                if (attr_set_user (b->attrs, optarg, eq + 1, true, false) < 0) {
                    fprintf (stderr, "flux-broker: %s: %s\n", optarg,
                             strerror (errno));
                    return -1;
                }
                break;
            case 'h':
                usage (stdout);
                exit (0);
            case 'v':
                break;
            default:
                usage (stderr);
                return -1;
        }
    }
    if (optind < argc)
        b->initial_program = argv + optind;
    return 0;
}

static int make_rundir (struct broker *b)
{
    const char *rundir = attr_get (b->attrs, "rundir", NULL);
    char tmpl[] = "/tmp/flux-XXXXXX";

    if (rundir) {
        if (mkdir (rundir, 0700) < 0 && errno != EEXIST)
            return -1;
        return 0;
    }
    if (!mkdtemp (tmpl))
        return -1;
    attr_add (b->attrs, "broker.rundir-cleanup", "1", ATTR_READONLY);
    return attr_add (b->attrs, "rundir", tmpl, ATTR_IMMUTABLE);
}

static int set_attrs (struct broker *b, struct boot_info *info)
{
    char buf[64], uri[4200];
    const char *rundir = attr_get (b->attrs, "rundir", NULL);
    const char *parent_uri = getenv ("FLUX_URI");
    int rc = 0;

#define SETNUM(name, val)                                                     \
    do {                                                                      \
        snprintf (buf, sizeof (buf), "%lld", (long long)(val));               \
        rc |= attr_add (b->attrs, name, buf, ATTR_IMMUTABLE | ATTR_READONLY); \
    } while (0)
    SETNUM ("rank", b->rank);
    SETNUM ("size", b->size);
    SETNUM ("tbon.fanout", b->fanout);
    SETNUM ("tbon.level", topology_level (b->rank, b->size, b->fanout));
    SETNUM ("tbon.maxlevel", topology_maxlevel (b->size, b->fanout));
    SETNUM ("tbon.descendants",
            topology_descendants (b->rank, b->size, b->fanout));
    SETNUM ("broker.pid", getpid ());
    SETNUM ("security.owner", b->owner);
#undef SETNUM
    {
        struct timespec ts; /* wall clock: flux uptime shows it as a date */
        clock_gettime (CLOCK_REALTIME, &ts);
        snprintf (buf, sizeof (buf), "%.6f", ts.tv_sec + ts.tv_nsec * 1e-9);
    }
    rc |= attr_add (b->attrs, "broker.starttime", buf, ATTR_IMMUTABLE);
    snprintf (uri, sizeof (uri), "local://%s/local-%u", rundir, b->rank);
    rc |= attr_add (b->attrs, "local-uri", uri, ATTR_IMMUTABLE);
    if (parent_uri && !attr_get (b->attrs, "parent-uri", NULL))
        rc |= attr_add (b->attrs, "parent-uri", parent_uri, ATTR_IMMUTABLE);
    if (!attr_get (b->attrs, "instance-level", NULL))
        rc |= attr_add (b->attrs, "instance-level", "0", ATTR_IMMUTABLE);
    rc |= attr_add (b->attrs, "version", PACKAGE_VERSION, ATTR_IMMUTABLE);
    rc |= attr_add (b->attrs, "hostlist", info->hostlist, ATTR_IMMUTABLE);
    if (!attr_get (b->attrs, "log-stderr-level", NULL))
        rc |= attr_add (b->attrs, "log-stderr-level", "3", ATTR_RUNTIME);
    return rc ? -1 : 0;
}

static void overlay_recv_cb (struct overlay *ov, flux_msg_t *msg,
                             enum overlay_where where, uint32_t peer_rank,
                             void *arg)
{
    router_from_overlay (arg, msg, where, peer_rank);
}

static void overlay_status_cb (struct overlay *ov, uint32_t peer_rank,
                               enum overlay_peer_status status,
                               const char *error, void *arg)
{
    broker_peer_status (arg, peer_rank, status, error);
}

static int authorize_cb (void *arg, uint32_t rank, const char *pubkey)
{
    struct broker *b = arg;
    return overlay_authorize (b->overlay, rank, pubkey);
}

static double attr_double (struct broker *b, const char *name, double dflt)
{
    const char *s = attr_get (b->attrs, name, NULL);
    char *end;
    double d;

    if (!s)
        return dflt;
    d = strtod (s, &end);
    return (*end || d < 0) ? dflt : d;
}

static int overlay_setup (struct broker *b, struct boot_info *info)
{
    struct overlay_config cfg = {
        .rank = b->rank,
        .size = b->size,
        .fanout = b->fanout,
        .heartbeat = attr_double (b, "tbon.heartbeat", 1.0),
        .torpid_max = attr_double (b, "tbon.torpid_max", 30.0),
        .lost_max = attr_double (b, "tbon.lost_max", 10.0),
    };
    const char *endpoint = attr_get (b->attrs, "tbon.endpoint", NULL);
    char uri[4200];
    flux_error_t error;

    if (b->size == 1)
        return 0;
    if (!(b->overlay = overlay_create (b->reactor, &cfg, overlay_recv_cb,
                                       overlay_status_cb, b)))
        return -1;
    info->authorize = authorize_cb;
    info->arg = b;
    if (b->nchildren > 0) {
        if (endpoint)
            snprintf (uri, sizeof (uri), "%s", endpoint);
        else
            snprintf (uri, sizeof (uri), "ipc://%s/tbon",
                      attr_get (b->attrs, "rundir", NULL));
        if (overlay_bind (b->overlay, uri) < 0) {
            fprintf (stderr, "flux-broker: cannot bind %s: %s\n", uri,
                     strerror (errno));
            return -1;
        }
    }
    if (boot_pmi_exchange (
            info, b->nchildren > 0 ? overlay_get_bind_uri (b->overlay) : NULL,
            overlay_get_pubkey (b->overlay), &error)
        < 0) {
        fprintf (stderr, "flux-broker: %s\n", error.text);
        return -1;
    }
    if (b->rank > 0
        && overlay_connect (b->overlay, info->parent_uri, info->parent_pubkey)
               < 0) {
        fprintf (stderr, "flux-broker: cannot connect to %s: %s\n",
                 info->parent_uri, strerror (errno));
        return -1;
    }
    return 0;
}

static void signal_cb (uv_signal_t *w, int signum)
{
    struct broker *b = w->data;

    if (b->state >= STATE_EXIT)
        return;
    brokerlog_msg (b->log, LOG_INFO, "caught signal %d", signum);
    if (b->rank == 0 || b->size == 1)
        broker_shutdown (b, 128 + signum);
    else {
        stop_modules (b);
        b->exit_rc = 128 + signum;
        state_enter (b, STATE_EXIT);
    }
}

static const struct flux_msg_handler_spec main_htab[] = {
    {FLUX_MSGTYPE_REQUEST, "broker.ready", ready_cb, 0},
    {FLUX_MSGTYPE_EVENT, "broker.shutdown", shutdown_event_cb, 0},
    FLUX_MSGHANDLER_TABLE_END,
};

static void close_walk_cb (uv_handle_t *h, void *arg)
{
    if (!uv_is_closing (h))
        uv_close (h, NULL);
}

int main (int argc, char **argv)
{
    struct broker broker = {0}, *b = &broker;
    struct boot_info info = {0};
    flux_msg_handler_t **handlers = NULL;
    uv_signal_t sigterm, sigint;
    uv_check_t check;
    flux_error_t error;
    const char *s;
    char path[4200];
    int rc = 1;

    signal (SIGPIPE, SIG_IGN);
    b->owner = getuid ();
    b->fanout = 2;
    b->state = STATE_LOAD_BUILTINS;
    if (method_uuid (b->uuid, sizeof (b->uuid)) < 0) {
        fprintf (stderr, "flux-broker: cannot generate a UUID\n");
        return 1;
    }
    if (!(b->attrs = attr_create ()) || parse_args (b, argc, argv) < 0)
        return 1;
    if ((s = attr_get (b->attrs, "tbon.fanout", NULL)))
        b->fanout = atoi (s) > 0 ? atoi (s) : 2;
    if (boot_pmi_open (&info, &error) < 0) {
        fprintf (stderr, "flux-broker: %s\n", error.text);
        return 1;
    }
    b->rank = info.rank;
    b->size = info.size;
    info.fanout = b->fanout;
    snprintf (b->rankstr, sizeof (b->rankstr), "%u", b->rank);
    if (!(b->reactor = flux_reactor_create (0)))
        return 1;
    b->loop = flux_reactor_uv (b->reactor);
    b->starttime = uv_now (b->loop) / 1000.;
    if (make_rundir (b) < 0) {
        fprintf (stderr, "flux-broker: rundir: %s\n", strerror (errno));
        return 1;
    }
    if (!(b->self_pipe = flux_msgpipe_create ())
        || !(b->h = flux_msgpipe_open (b->self_pipe, 1, 0))
        || flux_set_reactor (b->h, b->reactor) < 0
        || !(b->log = brokerlog_create (b->h, b->rank, 1024))
        || attr_register_services (b->attrs, b->h) < 0 || router_init (b) < 0
        || builtin_register (b) < 0
        || flux_msg_handler_addvec (b->h, main_htab, b, &handlers) < 0)
        goto done;
    if (overlay_setup (b, &info) < 0 || set_attrs (b, &info) < 0)
        goto done;
    boot_pmi_close (&info);
    snprintf (path, sizeof (path), "%s/local-%u",
              attr_get (b->attrs, "rundir", NULL), b->rank);
    if (router_usock_start (b, path) < 0)
        goto done;
    setenv ("FLUX_URI", attr_get (b->attrs, "local-uri", NULL), 1);
    uv_signal_init (b->loop, &sigterm);
    uv_signal_init (b->loop, &sigint);
    sigterm.data = sigint.data = b;
    uv_signal_start (&sigterm, signal_cb, SIGTERM);
    uv_signal_start (&sigint, signal_cb, SIGINT);
    uv_check_init (b->loop, &check);
    check.data = b;
    uv_check_start (&check, shutdown_check_cb);
    uv_unref ((uv_handle_t *)&check);

    state_enter (b, STATE_JOIN);
    flux_reactor_run (b->reactor, 0);
    rc = b->exit_rc;
    uv_signal_stop (&sigterm);
    uv_signal_stop (&sigint);
done:
    boot_pmi_close (&info);
    overlay_destroy (b->overlay);
    flux_msg_handler_delvec (handlers);
    builtin_unregister (b);
    brokerlog_destroy (b->log);
    b->log = NULL;
    attr_unregister_services (b->attrs);
    router_fini (b);
    for (size_t i = 0; i < b->nmodules; i++)
        module_destroy (b->modules[i]);
    free (b->modules);
    flux_close (b->h);
    flux_msgpipe_decref (b->self_pipe);
    if ((s = attr_get (b->attrs, "broker.rundir-cleanup", NULL))) {
        char cmd[4400];
        snprintf (cmd, sizeof (cmd), "rm -rf '%s'",
                  attr_get (b->attrs, "rundir", NULL));
        if (system (cmd) != 0) {
            /* best effort */
        }
    }
    attr_destroy (b->attrs);
    if (b->loop) {
        uv_walk (b->loop, close_walk_cb, NULL);
        uv_run (b->loop, UV_RUN_DEFAULT);
    }
    flux_reactor_destroy (b->reactor);
    return rc;
}
