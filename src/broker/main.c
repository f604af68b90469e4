/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* main.c - flux-broker: set up, run the state machine, tear down.
 *
 * The states themselves are in state.c.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <ftw.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "boot.h"
#include "boot_config.h"
#include "boot_pmi.h"
#include "broker.h"
#include "conf.h"
#include "libutil/fsd.h"
#include "methods.h"
#include "module.h"
#include "overlay/overlay.h"
#include "overlay/topology.h"
#include "parent.h"

/* ---- setup ---- */

static void usage (FILE *f)
{
    fprintf (f,
             "Usage: flux-broker [OPTIONS] [INITIAL-PROGRAM [ARGS...]]\n"
             "Run one Flux broker.  Under a PMI-1 launcher (PMI_FD set) it\n"
             "joins the other brokers of the instance; otherwise it is a\n"
             "singleton instance.  Rank 0 runs INITIAL-PROGRAM (default:\n"
             "$SHELL) and the instance exits with its status.\n"
             "  -c, --config-path=PATH    read the configuration from PATH:\n"
             "                            a JSON or YAML file, or a directory\n"
             "                            of *.json, *.yaml, *.yml files\n"
             "  -S, --setattr=NAME=VALUE  set a broker attribute\n"
             "  -h, --help                show this help\n");
}

static int parse_args (struct broker *b, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"setattr", required_argument, NULL, 'S'},
        {"config-path", required_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {"verbose", no_argument, NULL, 'v'},
        {NULL, 0, NULL, 0},
    };
    int c;

    while ((c = getopt_long (argc, argv, "+S:c:hv", longopts, NULL)) != -1) {
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
            case 'c':
                if (attr_set_user (b->attrs, "config.path", optarg, true, false)
                    < 0) {
                    fprintf (stderr, "flux-broker: config.path: %s\n",
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

/* The rundir holds unix sockets, whose path is at most 107 bytes: a
 * TMPDIR so long that "local-RANK" would not fit is passed over. */
#define RUNDIR_TMPDIR_MAX 64

/* The rundir is the owner's (0700), but when guests are allowed they
 * must reach the local socket in it: 0711 lets them reach a file they
 * know the name of, not list the directory; every file in it has its own
 * least mode (the socket 0666, the rest 0600).  A rundir that exists
 * already is left as it is: its mode is the administrator's. */
static int rundir_mode (struct broker *b)
{
    const char *s = attr_get (b->attrs, "access.allow-guest-user", NULL);

    return s && (!strcmp (s, "1") || !strcmp (s, "true")) ? 0711 : 0700;
}

/* A directory given to the broker that exists already must be one it
 * can create files in. */
static int check_dir (const char *what, const char *path, flux_error_t *error)
{
    struct stat st;

    if (stat (path, &st) < 0)
        return errprintf (error, "%s %s: %s", what, path, strerror (errno));
    if (!S_ISDIR (st.st_mode)) {
        errno = ENOTDIR;
        return errprintf (error, "%s %s: not a directory", what, path);
    }
    if (access (path, W_OK | X_OK) < 0)
        return errprintf (error, "%s %s: cannot create files in it: %s", what,
                          path, strerror (errno));
    return 0;
}

static int make_rundir (struct broker *b, flux_error_t *error)
{
    const char *rundir = attr_get (b->attrs, "rundir", NULL);
    const char *tmpdir = getenv ("TMPDIR");
    char tmpl[RUNDIR_TMPDIR_MAX + 16];

    if (rundir) {
        if (mkdir (rundir, 0700) < 0) {
            if (errno != EEXIST)
                return errprintf (error, "cannot create rundir %s: %s", rundir,
                                  strerror (errno));
            return check_dir ("rundir", rundir, error);
        }
        if (chmod (rundir, rundir_mode (b)) < 0)
            return errprintf (error, "chmod rundir %s: %s", rundir,
                              strerror (errno));
        return 0;
    }
    if (!tmpdir || *tmpdir != '/' || strlen (tmpdir) > RUNDIR_TMPDIR_MAX)
        tmpdir = "/tmp";
    snprintf (tmpl, sizeof (tmpl), "%s/flux-XXXXXX", tmpdir);
    if (!mkdtemp (tmpl))
        return errprintf (error, "cannot create a rundir in %s: %s", tmpdir,
                          strerror (errno));
    if (chmod (tmpl, rundir_mode (b)) < 0)
        return errprintf (error, "chmod rundir %s: %s", tmpl, strerror (errno));
    if (attr_add (b->attrs, "broker.rundir-cleanup", "1", ATTR_READONLY) < 0
        || attr_add (b->attrs, "rundir", tmpl, ATTR_IMMUTABLE) < 0) {
        (void)rmdir (tmpl);
        return errprintf (error, "rundir: %s", strerror (errno));
    }
    return 0;
}

/* statedir (optional) holds what must survive a restart (the content
 * store); create it if asked for. */
static int make_statedir (struct broker *b, flux_error_t *error)
{
    const char *statedir = attr_get (b->attrs, "statedir", NULL);

    if (!statedir)
        return 0;
    if (mkdir (statedir, 0700) < 0) {
        if (errno != EEXIST)
            return errprintf (error, "cannot create statedir %s: %s", statedir,
                              strerror (errno));
        return check_dir ("statedir", statedir, error);
    }
    return 0;
}

/* Modules are found in conf.module_path: in the build tree, every
 * src/modules/NAME/.libs; installed, FLUX_MODULE_DIR.  The broker is in
 * the build tree if it is src/broker/flux-broker (or the binary behind a
 * libtool wrapper script of that name, in .libs). */
static char *default_module_path (void)
{
    char exe[4096], *path = NULL;
    ssize_t n = readlink ("/proc/self/exe", exe, sizeof (exe) - 1);
    const char *intree[] = {
        ABS_TOP_BUILDDIR "/src/broker/.libs/flux-broker",
        ABS_TOP_BUILDDIR "/src/broker/.libs/lt-flux-broker",
        ABS_TOP_BUILDDIR "/src/broker/flux-broker",
    };
    bool found = false;
    DIR *dir;
    struct dirent *d;
    size_t len = 0;

    if (n >= 0) {
        exe[n] = '\0';
        for (size_t i = 0; i < sizeof (intree) / sizeof (intree[0]); i++)
            if (!strcmp (exe, intree[i]))
                found = true;
    }
    if (!found)
        return strdup (FLUX_MODULE_DIR);
    if (!(dir = opendir (ABS_TOP_BUILDDIR "/src/modules")))
        return strdup (FLUX_MODULE_DIR);
    while ((d = readdir (dir))) {
        size_t add = strlen (ABS_TOP_BUILDDIR) + strlen (d->d_name) + 32;
        char *np;
        if (d->d_name[0] == '.' || d->d_type != DT_DIR
            || !(np = realloc (path, len + add)))
            continue;
        path = np;
        len += sprintf (path + len, "%s%s/src/modules/%s/.libs", len ? ":" : "",
                        ABS_TOP_BUILDDIR, d->d_name);
    }
    closedir (dir);
    return path ? path : strdup (FLUX_MODULE_DIR);
}

static int set_defaults (struct broker *b)
{
    char *path;
    int rc = 0;

    if (!attr_get (b->attrs, "conf.module_path", NULL)) {
        if (!(path = default_module_path ()))
            return -1;
        rc |= attr_add (b->attrs, "conf.module_path", path, 0);
        free (path);
    }
    if (!attr_get (b->attrs, "broker.modules", NULL))
        rc |= attr_add (b->attrs, "broker.modules", DEFAULT_MODULES, 0);
    if (!attr_get (b->attrs, "content.hash", NULL))
        rc |= attr_add (b->attrs, "content.hash", "sha1", ATTR_IMMUTABLE);
    return rc ? -1 : 0;
}

/* log-stderr-level: messages of this severity or more urgent (0-7) that
 * this broker logs are copied to its stderr. */
static int stderr_level_hook (const char *name, const char *value, void *arg)
{
    struct broker *b = arg;
    char *end;
    long level = strtol (value ? value : "", &end, 10);

    if (!value || end == value || *end != '\0' || level < 0 || level > 7) {
        errno = EINVAL;
        return -1;
    }
    brokerlog_set_stderr_level (b->log, (int)level);
    return 0;
}

/* broker.module-stop-timeout: how long a shutdown waits for each module
 * before abandoning it (FSD; 0 or inf: for ever). */
static int module_stop_timeout_hook (const char *name, const char *value,
                                     void *arg)
{
    struct broker *b = arg;
    double t;

    if (!value || fsd_parse_duration (value, &t) < 0) {
        errno = EINVAL;
        return -1;
    }
    b->module_stop_timeout = (t == 0 || t >= 1e9) ? -1. : t;
    return 0;
}

/* A duration attribute stored as seconds in the double at arg (FSD; 0 or
 * inf: for ever, stored as -1): broker.finalize-timeout and
 * broker.quorum-warn. */
static int duration_hook (const char *name, const char *value, void *arg)
{
    double *dst = arg;
    double t;

    if (!value || fsd_parse_duration (value, &t) < 0) {
        errno = EINVAL;
        return -1;
    }
    *dst = (t == 0 || t >= 1e9) ? -1. : t;
    return 0;
}

/* Add the runtime duration attribute name (dflt unless given with -S)
 * and keep *dst in step with it.  -1 (with a message) if the value is not
 * a duration. */
static int duration_attr (struct broker *b, const char *name, const char *dflt,
                          double *dst)
{
    const char *s = attr_get (b->attrs, name, NULL);

    if (attr_add (b->attrs, name, s ? s : dflt, ATTR_RUNTIME) < 0)
        return -1;
    if (attr_set_hook (b->attrs, name, duration_hook, dst) < 0) {
        fprintf (stderr, "flux-broker: %s must be a duration (FSD), e.g. %s\n",
                 name, dflt);
        return -1;
    }
    return 0;
}

/* An instance launched as a job (RFC 8): the job shell's PMI serves
 * flux.instance-level, the shell's environment names the job and the
 * parent's guest namespace.  The namespace must not leak into the
 * sub-instance's commands, which use their own primary namespace. */
static int set_instance_attrs (struct broker *b, struct boot_info *info)
{
    const char *ns = getenv ("FLUX_KVS_NAMESPACE");
    const char *jobid = getenv ("FLUX_JOB_ID");
    char buf[16];
    int rc = 0;

    if (!attr_get (b->attrs, "instance-level", NULL)) {
        snprintf (buf, sizeof (buf), "%d", info->instance_level);
        rc |= attr_add (b->attrs, "instance-level", buf, ATTR_IMMUTABLE);
    }
    if (info->instance_level > 0 && jobid
        && !attr_get (b->attrs, "jobid", NULL))
        rc |= attr_add (b->attrs, "jobid", jobid, ATTR_IMMUTABLE);
    if (ns && !attr_get (b->attrs, "parent-kvs-namespace", NULL))
        rc |= attr_add (b->attrs, "parent-kvs-namespace", ns, ATTR_IMMUTABLE);
    unsetenv ("FLUX_KVS_NAMESPACE");
    return rc;
}

static int set_attrs (struct broker *b, struct boot_info *info)
{
    char buf[64], uri[4200];
    const char *rundir = attr_get (b->attrs, "rundir", NULL);
    const char *parent_uri = getenv ("FLUX_URI");
    const char *s;
    int rc = 0;

#define SETNUM(name, val)                                                     \
    do {                                                                      \
        snprintf (buf, sizeof (buf), "%lld", (long long)(val));               \
        rc |= attr_add (b->attrs, name, buf, ATTR_IMMUTABLE | ATTR_READONLY); \
    } while (0)
    SETNUM ("rank", b->rank);
    SETNUM ("size", b->size);
    rc |= attr_add (b->attrs, "tbon.topo", topology_spec (b->topo),
                    ATTR_IMMUTABLE | ATTR_READONLY);
    if (!strncmp (topology_spec (b->topo), "kary:", 5))
        rc |= attr_add (b->attrs, "tbon.fanout", topology_spec (b->topo) + 5,
                        ATTR_IMMUTABLE | ATTR_READONLY);
    SETNUM ("tbon.level", topology_level (b->topo, b->rank));
    SETNUM ("tbon.maxlevel", topology_maxlevel (b->topo));
    SETNUM ("tbon.descendants", topology_descendants (b->topo, b->rank));
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
    rc |= set_instance_attrs (b, info);
    rc |= attr_add (b->attrs, "version", PACKAGE_VERSION, ATTR_IMMUTABLE);
    rc |= attr_add (b->attrs, "hostlist", info->hostlist ? info->hostlist : "",
                    ATTR_IMMUTABLE);
    s = attr_get (b->attrs, "log-stderr-level", NULL);
    rc |= attr_add (b->attrs, "log-stderr-level", s ? s : "3", ATTR_RUNTIME);
    if (rc == 0
        && attr_set_hook (b->attrs, "log-stderr-level", stderr_level_hook, b)
               < 0) {
        fprintf (stderr, "flux-broker: log-stderr-level must be 0-7\n");
        return -1;
    }
    s = attr_get (b->attrs, "broker.module-stop-timeout", NULL);
    rc |= attr_add (b->attrs, "broker.module-stop-timeout", s ? s : "30s",
                    ATTR_RUNTIME);
    if (rc == 0
        && attr_set_hook (b->attrs, "broker.module-stop-timeout",
                          module_stop_timeout_hook, b)
               < 0) {
        fprintf (stderr, "flux-broker: broker.module-stop-timeout must be a "
                         "duration (FSD), e.g. 30s\n");
        return -1;
    }
    s = attr_get (b->attrs, "broker.module-group", NULL);
    rc |= attr_add (b->attrs, "broker.module-group",
                    s ? s : DEFAULT_MODULE_GROUP, ATTR_IMMUTABLE);
    if (rc == 0
        && module_group_set (attr_get (b->attrs, "broker.module-group", NULL))
               < 0) {
        fprintf (stderr, "flux-broker: broker.module-group: %s\n",
                 strerror (errno));
        return -1;
    }
    if (rc == 0
        && (duration_attr (b, "broker.finalize-timeout", "30s",
                           &b->finalize_timeout)
                < 0
            || duration_attr (b, "broker.quorum-warn", "60s", &b->quorum_warn)
                   < 0))
        return -1;
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

/* What the overlay notices about its peers goes to the broker's log
 * (flux dmesg; stderr only from log-stderr-level up), not to stderr. */
static void overlay_log_cb (struct overlay *ov, int level, const char *msg,
                            void *arg)
{
    struct broker *b = arg;
    brokerlog_msg (b->log, level, "overlay: %s", msg);
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

/* Config-file bootstrap: the shared certificate, bind to this host's bind
 * URI if it has children, admit the shared key, connect to the parent's
 * connect URI.  No exchange: everything is in the config. */
static int overlay_setup_config (struct broker *b)
{
    const char *pub = boot_config_pubkey (b->bootconf);
    const char *sec = boot_config_seckey (b->bootconf);
    char uri[1024];
    flux_error_t error;

    if (!pub || !sec || overlay_set_cert (b->overlay, pub, sec) < 0
        || overlay_authorize (b->overlay, OVERLAY_ANY_RANK, pub) < 0) {
        fprintf (stderr, "flux-broker: bootstrap.curve_cert: bad key pair\n");
        return -1;
    }
    if (b->nchildren > 0) {
        if (boot_config_bind_uri (b->bootconf, b->rank, uri, sizeof (uri),
                                  &error)
            < 0) {
            fprintf (stderr, "flux-broker: %s\n", error.text);
            return -1;
        }
        if (overlay_bind (b->overlay, uri) < 0) {
            fprintf (stderr, "flux-broker: cannot bind %s: %s\n", uri,
                     strerror (errno));
            return -1;
        }
        if (attr_add (b->attrs, "tbon.endpoint",
                      overlay_get_bind_uri (b->overlay), ATTR_IMMUTABLE)
            < 0)
            return -1;
    }
    if (b->rank > 0) {
        uint32_t parent = (uint32_t)topology_parent (b->topo, b->rank);
        if (boot_config_connect_uri (b->bootconf, parent, uri, sizeof (uri),
                                     &error)
            < 0) {
            fprintf (stderr, "flux-broker: %s\n", error.text);
            return -1;
        }
        if (overlay_connect (b->overlay, uri, pub) < 0) {
            fprintf (stderr, "flux-broker: cannot connect to %s: %s\n", uri,
                     strerror (errno));
            return -1;
        }
    }
    return 0;
}

/* A tbon time in seconds: the attribute tbon.NAME, else the config's
 * [tbon] NAME, else its [tbon] ALIAS (flux-core's key for the same
 * purpose: a flux-core site's config sets those), else dflt.  A config
 * value is a number of seconds or an FSD string ("1.5s", "2m").
 */
static int tbon_seconds (struct broker *b, const char *name, const char *alias,
                         double dflt, double *dst)
{
    char attr[64];
    json_t *tbon = b->config ? json_object_get (b->config, "tbon") : NULL;
    json_t *v = NULL;
    const char *key = name;

    snprintf (attr, sizeof (attr), "tbon.%s", name);
    if (attr_get (b->attrs, attr, NULL) || !tbon) {
        *dst = attr_double (b, attr, dflt);
        return 0;
    }
    if (!(v = json_object_get (tbon, name)) && alias
        && (v = json_object_get (tbon, alias)))
        key = alias;
    if (!v)
        *dst = dflt;
    else if (json_is_number (v) && json_number_value (v) >= 0)
        *dst = json_number_value (v);
    else if (!json_is_string (v)
             || fsd_parse_duration (json_string_value (v), dst) < 0) {
        fprintf (stderr,
                 "flux-broker: config tbon.%s must be a duration"
                 " (seconds, or FSD such as \"30s\")\n",
                 key);
        return -1;
    }
    return 0;
}

static int overlay_setup (struct broker *b, struct boot_info *info)
{
    struct overlay_config cfg = {
        .rank = b->rank,
        .size = b->size,
        .topo = b->topo,
    };
    /* flux-core: torpid_min is its keepalive period, tcp_user_timeout
     * how long an unanswered peer may stay before its link is dropped */
    if (tbon_seconds (b, "heartbeat", "torpid_min", 1.0, &cfg.heartbeat) < 0
        || tbon_seconds (b, "torpid_max", NULL, 30.0, &cfg.torpid_max) < 0
        || tbon_seconds (b, "lost_max", "tcp_user_timeout", 10.0, &cfg.lost_max)
               < 0)
        return -1;
    const char *endpoint = attr_get (b->attrs, "tbon.endpoint", NULL);
    char uri[4200];

    if (broker_bytes_attr (b, "tbon.sendq-limit", 256u * 1024 * 1024, 64 * 1024,
                           &cfg.sendq_max)
        < 0)
        return -1;
    flux_error_t error;

    if (b->size == 1)
        return 0;
    if (!(b->overlay = overlay_create (b->reactor, &cfg, overlay_recv_cb,
                                       overlay_status_cb, b)))
        return -1;
    overlay_set_log (b->overlay, overlay_log_cb, b);
    if (b->bootconf)
        return overlay_setup_config (b);
    info->authorize = authorize_cb;
    info->arg = b;
    if (b->nchildren > 0) {
        char addr[64];
        if (endpoint)
            snprintf (uri, sizeof (uri), "%s", endpoint);
        else if (info->nnodes > 1
                 && bootx_tcp_address (addr, sizeof (addr)) == 0)
            /* the launch spans hosts (a job of several nodes, srun -N2):
             * children on other hosts cannot reach an ipc socket */
            snprintf (uri, sizeof (uri), "tcp://%s:*", addr);
        else
            /* one per broker: brokers given the same rundir
             * (-Srundir=DIR) must not bind each other's socket */
            snprintf (uri, sizeof (uri), "ipc://%s/tbon-%u",
                      attr_get (b->attrs, "rundir", NULL), b->rank);
        if (overlay_bind (b->overlay, uri) < 0) {
            fprintf (stderr, "flux-broker: cannot bind %s: %s\n", uri,
                     strerror (errno));
            return -1;
        }
        /* the endpoint as bound: a wildcard port ("tcp://host:*") becomes
         * the port the kernel chose */
        if (attr_add (b->attrs, "tbon.endpoint",
                      overlay_get_bind_uri (b->overlay), ATTR_IMMUTABLE)
            < 0)
            return -1;
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
    if (b->state == STATE_FINALIZE) {
        /* the modules are gone: a signal stops waiting for the children */
        brokerlog_msg (b->log, LOG_ERR,
                       "finalize: leaving without %d child broker(s)",
                       state_children_up (b));
        if (b->exit_rc == 0)
            b->exit_rc = 128 + signum;
        state_enter (b, STATE_GOODBYE);
    }
    else if (b->rank == 0 || b->size == 1)
        broker_shutdown (b, 128 + signum);
    else if (signum == SIGTERM && attr_get (b->attrs, "jobid", NULL)) {
        /* a sub-instance: its job shells send SIGTERM to every broker;
         * rank 0 ends the jobs, then shuts down through the tree.  Were
         * this rank to leave now, the shells of its jobs (sub-instances
         * among them) would be orphaned.  SIGKILL follows if need be. */
        brokerlog_msg (b->log, LOG_INFO, "rank 0 shuts the instance down");
    }
    else {
        state_stop_all_modules (b);
        b->exit_rc = 128 + signum;
        state_enter (b, STATE_EXIT);
    }
}

static void close_walk_cb (uv_handle_t *h, void *arg)
{
    if (!uv_is_closing (h))
        uv_close (h, NULL);
}

static int rm_cb (const char *path, const struct stat *sb, int flag,
                  struct FTW *ftw)
{
    (void)remove (path); /* best effort: depth first, files then dirs */
    return 0;
}

/* The temporary rundir (not one given with -Srundir) goes at exit. */
static void remove_rundir (struct broker *b)
{
    const char *rundir = attr_get (b->attrs, "rundir", NULL);

    if (rundir && attr_get (b->attrs, "broker.rundir-cleanup", NULL))
        (void)nftw (rundir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

/* The tree's spec: the tbon.topo attribute, else the config's tbon.topo,
 * else tbon.fanout=K (attribute, then config) as kary:K, else flux-core's
 * default kary:32.  -1 with a message if a value is not a string/number. */
static int topo_spec (struct broker *b, char *buf, size_t len)
{
    const char *s;
    json_t *tbon = b->config ? json_object_get (b->config, "tbon") : NULL;
    json_t *v;

    if ((s = attr_get (b->attrs, "tbon.topo", NULL)))
        snprintf (buf, len, "%s", s);
    else if (tbon && (v = json_object_get (tbon, "topo"))) {
        if (!json_is_string (v)) {
            fprintf (stderr, "flux-broker: config tbon.topo must be a string"
                             " (kary:N, binomial or custom)\n");
            return -1;
        }
        snprintf (buf, len, "%s", json_string_value (v));
    }
    else if ((s = attr_get (b->attrs, "tbon.fanout", NULL)))
        snprintf (buf, len, "kary:%s", s);
    else if (tbon && (v = json_object_get (tbon, "fanout"))) {
        if (!json_is_integer (v) || json_integer_value (v) < 0) {
            fprintf (stderr, "flux-broker: config tbon.fanout must be an"
                             " integer >= 0\n");
            return -1;
        }
        snprintf (buf, len, "kary:%d", (int)json_integer_value (v));
    }
    else if (b->bootconf && boot_config_has_parents (b->bootconf))
        snprintf (buf, len, "custom"); /* the hosts gave parents */
    else
        snprintf (buf, len, "kary:32");
    return 0;
}

/* The tree for spec: custom comes from the config's bootstrap hosts. */
static struct topology *topo_create (struct broker *b, const char *spec,
                                     flux_error_t *error)
{
    if (!strcmp (spec, "custom")) {
        if (!b->bootconf || !boot_config_has_parents (b->bootconf)) {
            errprintf (error, "tbon.topo custom: needs a config file whose"
                              " bootstrap hosts name their parent");
            return NULL;
        }
        return topology_create_custom (
            b->size, boot_config_parents (b->bootconf), error);
    }
    return topology_create (spec, b->size, error);
}

/* Rank and size from the config's bootstrap hosts (boot_config.h), the
 * broker's hostname being the hostname attribute or gethostname(). */
static int boot_from_config (struct broker *b, struct boot_info *info,
                             flux_error_t *error)
{
    const char *name = attr_get (b->attrs, "hostname", NULL);
    char host[256];

    if (!name) {
        if (gethostname (host, sizeof (host)) < 0)
            return errprintf (error, "gethostname: %s", strerror (errno));
        host[sizeof (host) - 1] = '\0';
        name = host;
    }
    if (!(b->bootconf = boot_config_create (b->config, name, error)))
        return -1;
    info->rank = boot_config_rank (b->bootconf);
    info->size = boot_config_size (b->bootconf);
    free (info->hostlist);
    if (!(info->hostlist = strdup (boot_config_hostlist (b->bootconf))))
        return errprintf (error, "bootstrap: out of memory");
    return 0;
}

/* Rank, size, reactor, rundir, the internal handle and its services. */
static int setup_core (struct broker *b, struct boot_info *info)
{
    flux_error_t error;
    char spec[64];

    info->methods = attr_get (b->attrs, "broker.boot-method", NULL);
    info->hostlist_chunks_max = -1;
    {
        const char *v
            = attr_get (b->attrs, "broker.boot-hostlist-chunks", NULL);
        char *end;
        long n = v ? strtol (v, &end, 10) : -1;
        if (v && (!*v || *end || n < 0 || n > BOOTX_HOSTLIST_CHUNKS_MAX)) {
            fprintf (stderr,
                     "flux-broker: invalid value for "
                     "broker.boot-hostlist-chunks='%s' (0-%d)\n",
                     v, BOOTX_HOSTLIST_CHUNKS_MAX);
            return -1;
        }
        if (v)
            info->hostlist_chunks_max = (int)n;
    }
    if (boot_config_enabled (b->config)) {
        if (boot_from_config (b, info, &error) < 0) {
            fprintf (stderr, "flux-broker: %s\n", error.text);
            return -1;
        }
    }
    else if (boot_pmi_open (info, &error) < 0) {
        /* nothing to tear down yet (no reactor, no rundir) */
        fprintf (stderr, "flux-broker: %s\n", error.text);
        exit (1);
    }
    if (topo_spec (b, spec, sizeof (spec)) < 0)
        return -1;
    b->rank = info->rank;
    b->size = info->size;
    if (!(b->topo = topo_create (b, spec, &error))) {
        fprintf (stderr, "flux-broker: %s\n", error.text);
        return -1;
    }
    info->topo = b->topo;
    snprintf (b->rankstr, sizeof (b->rankstr), "%u", b->rank);
    if (!(b->reactor = flux_reactor_create (0)))
        return -1;
    b->loop = flux_reactor_uv (b->reactor);
    b->starttime = uv_now (b->loop) / 1000.;
    b->state_time = b->starttime; /* load-builtins began here */
    if (make_rundir (b, &error) < 0 || make_statedir (b, &error) < 0) {
        fprintf (stderr, "flux-broker: %s\n", error.text);
        return -1;
    }
    if (!(b->self_pipe = flux_msgpipe_create ())
        || !(b->h = flux_msgpipe_open (b->self_pipe, 1, 0))
        || flux_set_reactor (b->h, b->reactor) < 0
        || !(b->log = brokerlog_create (b->h, b->rank, 1024))
        || attr_register_services (b->attrs, b->h) < 0 || router_init (b) < 0
        || builtin_register (b) < 0 || conf_register (b) < 0
        || state_machine_init (b) < 0)
        return -1;
    return 0;
}

/* The overlay, the attributes that depend on it, the local socket. */
static int setup_network (struct broker *b, struct boot_info *info)
{
    char path[4200];

    if (overlay_setup (b, info) < 0 || set_attrs (b, info) < 0
        || set_defaults (b) < 0 || parent_critical_ranks_attr (b) < 0)
        return -1;
    boot_pmi_close (info);
    snprintf (path, sizeof (path), "%s/local-%u",
              attr_get (b->attrs, "rundir", NULL), b->rank);
    if (router_usock_start (b, path) < 0)
        return -1;
    setenv ("FLUX_URI", attr_get (b->attrs, "local-uri", NULL), 1);
    return 0;
}

static void teardown (struct broker *b, struct boot_info *info)
{
    boot_pmi_close (info);
    if (!b->h) { /* setup_core failed early: no handles to close */
        json_decref (b->config);
        b->config = NULL;
        remove_rundir (b);
        attr_destroy (b->attrs);
        topology_destroy (b->topo);
        boot_config_destroy (b->bootconf);
        flux_reactor_destroy (b->reactor);
        return;
    }
    overlay_destroy (b->overlay);
    b->overlay = NULL;
    state_machine_fini (b);
    builtin_unregister (b);
    conf_unregister (b);
    brokerlog_destroy (b->log);
    b->log = NULL;
    attr_unregister_services (b->attrs);
    router_fini (b);
    /* only after an emergency stop (signal, lost parent) are modules
     * left: they were told to stop, and get module-stop-timeout */
    for (size_t i = 0; i < b->nmodules; i++) {
        if (!module_destroy_wait (b->modules[i], b->module_stop_timeout))
            fprintf (stderr,
                     "flux-broker: module %s did not stop: left running\n",
                     module_name (b->modules[i]));
    }
    free (b->modules);
    flux_close (b->h);
    flux_msgpipe_decref (b->self_pipe);
    remove_rundir (b);
    attr_destroy (b->attrs);
    topology_destroy (b->topo);
    boot_config_destroy (b->bootconf);
    if (b->loop) {
        uv_walk (b->loop, close_walk_cb, NULL);
        uv_run (b->loop, UV_RUN_DEFAULT);
    }
    flux_reactor_destroy (b->reactor);
}

#if HAVE_JEMALLOC
/* jemalloc's options, read when it starts (MALLOC_CONF in the environment
 * still overrides them).  By default it keeps 4 arenas per CPU, and the
 * broker's dozen threads spread over them, each arena keeping the pages
 * its threads freed: one arena kept the broker's peak RSS after 1,000
 * simulated jobs 8-10 MB lower (58-61 -> 51 MiB), with simulated jobs and
 * durable KVS commits as fast (the job manager alone, bench/jm-throughput,
 * 10% slower: 6,100 against 6,800 jobs/s).  Pages freed are given back
 * after 1 s instead of 10 s (dirty) plus 10 s (muzzy): after 1,000 real
 * jobs the peak RSS was 54.7-56.4 MiB against 55.7-64.9 MiB, in 4 runs
 * each alternated, with the broker's CPU per job within the noise. */
const char *malloc_conf = "narenas:1,dirty_decay_ms:1000,muzzy_decay_ms:0";
#endif

/* Every client and peer holds an fd of the broker: its soft limit on
 * open files is raised to the hard one (as flux-core's broker does), so
 * that an instance started under a login's 1024 (flux alloc now passes
 * the user's limits to the brokers it starts) serves as many as the
 * system allows.  What the broker starts gets the job's own limits
 * (the shell's rlimit option) or, for flux exec, the broker's. */
static void raise_nofile (void)
{
    struct rlimit rl;

    if (getrlimit (RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit (RLIMIT_NOFILE, &rl);
    }
}

int main (int argc, char **argv)
{
    struct broker broker = {0}, *b = &broker;
    struct boot_info info = {0};
    uv_signal_t sigterm, sigint;
    int rc = 1;

    signal (SIGPIPE, SIG_IGN);
    raise_nofile ();
    b->owner = getuid ();
    b->module_stop_timeout = 30.;
    b->finalize_timeout = 30.;
    b->quorum_warn = 60.;
    b->state = STATE_LOAD_BUILTINS;
    if (method_uuid (b->uuid, sizeof (b->uuid)) < 0) {
        fprintf (stderr, "flux-broker: cannot generate a UUID\n");
        return 1;
    }
    if (!(b->attrs = attr_create ()) || parse_args (b, argc, argv) < 0
        || conf_init (b) < 0) {
        json_decref (b->config);
        attr_destroy (b->attrs);
        return 1;
    }
    if (setup_core (b, &info) < 0 || setup_network (b, &info) < 0)
        goto done;
    uv_signal_init (b->loop, &sigterm);
    uv_signal_init (b->loop, &sigint);
    sigterm.data = sigint.data = b;
    uv_signal_start (&sigterm, signal_cb, SIGTERM);
    uv_signal_start (&sigint, signal_cb, SIGINT);

    state_enter (b, STATE_JOIN);
    flux_reactor_run (b->reactor, 0);
    rc = b->exit_rc;
    uv_signal_stop (&sigterm);
    uv_signal_stop (&sigint);
done:
    teardown (b, &info);
    return rc;
}
