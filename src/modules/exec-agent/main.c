/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* main.c - the exec-agent broker module, loaded on every rank: the
 * handler table over the agent (agent.h, doc/guide/exec.md).
 *
 * Arguments (key=value):
 *   job-shell=PATH       the default job shell (else the built flux-shell:
 *                        src/shell/flux-shell when the broker runs from
 *                        the build tree, else $libexecdir/flux/flux-shell)
 *   reduce-window=FSD    how long an agent holds reports before passing
 *                        them up (default 2ms; 0: at once)
 *   release-window=FSD   rank 0: how long it holds reports of exited
 *                        ranks while others still run, before they go to
 *                        job-exec as one partial release (default 20ms;
 *                        never shorter than reduce-window)
 *   imp=PATH             the IMP for guests' jobs (else the configuration's
 *                        exec.imp, read at load; without either a job whose
 *                        user is not the instance owner fails)
 *   shell-launcher=0|1   fork the instance owner's job shells (the default
 *                        shell, no job_shell override) from one resident
 *                        `flux-shell --launcher` instead of spawning each
 *                        (doc/guide/exec.md "The shell launcher"); default
 *                        1, or the configuration's exec.shell-launcher;
 *                        0 when job-shell= is given (it may be no
 *                        flux-shell) unless shell-launcher=1 says so
 *   barrier-max=SIZE     the most barrier data (the shells' PMI exchange)
 *                        the agent holds at once, all jobs together, in
 *                        bytes or with k, M, G (default 256M); an entry
 *                        past it fails its job's barrier
 *   unload-grace=FSD     shells still running at unload get SIGTERM, then
 *                        SIGKILL to their process group after this long
 *                        (default 2s; the instance's cleanup normally ends
 *                        every job before the agent unloads)
 *
 * The service is the module's name; exec-agent.disconnect orphans the
 * sender's streams (the jobs keep running: job-exec reloaded).
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "agent.h"
#include "libflux/flux.h"
#include "libutil/fsd.h"
#include "libutil/sizeparse.h"

#define DEFAULT_WINDOW 0.002
#define DEFAULT_RELEASE_WINDOW 0.02
#define DEFAULT_UNLOAD_GRACE 2.0
#define DEFAULT_BARRIER_MAX ((size_t)256 << 20)

static void start_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    agent_start (arg, msg);
}

static void kill_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    agent_kill (arg, msg);
}

static void barrier_cb (flux_t *h, flux_msg_handler_t *mh,
                        const flux_msg_t *msg, void *arg)
{
    agent_barrier (arg, msg);
}

static void shell_info_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg)
{
    agent_shell_info (arg, msg);
}

static void stats_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    agent_stats (arg, msg);
}

static void disconnect_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg)
{
    agent_disconnect (arg, msg);
}

static const struct flux_msg_handler_spec htab[] = {
    {FLUX_MSGTYPE_REQUEST, "exec-agent.start", start_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "exec-agent.kill", kill_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "exec-agent.barrier", barrier_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "exec-agent.shell-info", shell_info_cb,
     FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "exec-agent.stats-get", stats_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "exec-agent.disconnect", disconnect_cb, 0},
    FLUX_MSGHANDLER_TABLE_END,
};

/* The built flux-shell: in the build tree when the broker runs from it. */
static const char *default_shell (void)
{
    static char exe[PATH_MAX];
    ssize_t n = readlink ("/proc/self/exe", exe, sizeof (exe) - 1);
    const char *top = ABS_TOP_BUILDDIR "/";

    if (n > 0 && (exe[n] = '\0', !strncmp (exe, top, strlen (top))))
        return ABS_TOP_BUILDDIR "/src/shell/flux-shell";
    return LIBEXECDIR "/flux/flux-shell";
}

/* The flux command that prints J for the IMP (FLUX_IMP_EXEC_HELPER). */
static const char *default_helper (void)
{
    static char exe[PATH_MAX];
    ssize_t n = readlink ("/proc/self/exe", exe, sizeof (exe) - 1);
    const char *top = ABS_TOP_BUILDDIR "/";

    if (n > 0 && (exe[n] = '\0', !strncmp (exe, top, strlen (top))))
        return ABS_TOP_BUILDDIR "/src/cmd/flux imp_exec_helper";
    return BINDIR "/flux imp_exec_helper";
}

/* exec.imp from the instance configuration (flux-core's key): the IMP
 * that runs guests' shells.  Read once at load; the string is kept in
 * *json for the module's life.  A module argument imp=PATH wins.
 */
static int read_config (flux_t *h, struct agent_config *conf, json_t **json,
                        int *launcher)
{
    flux_future_t *f;
    json_t *o;
    const char *imp = NULL;
    int sl = -1;
    json_error_t jerr;

    if (!(f = flux_rpc (h, "config.get", NULL, FLUX_NODEID_ANY, 0)))
        return -1;
    if (flux_rpc_get_unpack (f, "o", &o) < 0) {
        flux_future_destroy (f);
        return (errno == ENOSYS || errno == ENODATA) ? 0 : -1;
    }
    if (json_unpack_ex (o, &jerr, 0, "{s?{s?s}}", "exec", "imp", &imp) < 0
        || (imp && imp[0] != '/')) {
        flux_log (h, LOG_ERR, "config: exec.imp must be an absolute path");
        flux_future_destroy (f);
        errno = EINVAL;
        return -1;
    }
    if (json_unpack_ex (o, &jerr, 0, "{s?{s?b}}", "exec", "shell-launcher", &sl)
        < 0) {
        flux_log (h, LOG_ERR, "config: exec.shell-launcher must be a boolean");
        flux_future_destroy (f);
        errno = EINVAL;
        return -1;
    }
    if (*launcher < 0)
        *launcher = sl;
    if (imp && !conf->imp) {
        *json = json_incref (o);
        conf->imp = imp;
    }
    flux_future_destroy (f);
    return 0;
}

static int parse_args (flux_t *h, int argc, char **argv,
                       struct agent_config *conf, bool *shell_given,
                       int *launcher)
{
    for (int i = 0; i < argc; i++) {
        if (!strncmp (argv[i], "job-shell=", 10) && argv[i][10]) {
            conf->job_shell = argv[i] + 10;
            *shell_given = true;
        }
        else if (!strcmp (argv[i], "shell-launcher=0")
                 || !strcmp (argv[i], "shell-launcher=1"))
            *launcher = argv[i][15] == '1';
        else if (!strcmp (argv[i], "verbose"))
            conf->verbose = true;
        else if (!strncmp (argv[i], "imp=", 4) && argv[i][4] == '/')
            conf->imp = argv[i] + 4;
        else if (!strncmp (argv[i], "unload-grace=", 13)) {
            if (fsd_parse_duration (argv[i] + 13, &conf->unload_grace) < 0
                || conf->unload_grace > 60.) {
                flux_log (h, LOG_ERR, "unload-grace: bad duration %s",
                          argv[i] + 13);
                errno = EINVAL;
                return -1;
            }
        }
        else if (!strncmp (argv[i], "barrier-max=", 12)) {
            if (size_parse (argv[i] + 12, &conf->barrier_max) < 0) {
                flux_log (h, LOG_ERR, "barrier-max: bad size %s", argv[i] + 12);
                errno = EINVAL;
                return -1;
            }
        }
        else if (!strncmp (argv[i], "reduce-window=", 14)) {
            if (fsd_parse_duration (argv[i] + 14, &conf->window) < 0
                || conf->window > 60.) {
                flux_log (h, LOG_ERR, "reduce-window: bad duration %s",
                          argv[i] + 14);
                errno = EINVAL;
                return -1;
            }
        }
        else if (!strncmp (argv[i], "release-window=", 15)) {
            if (fsd_parse_duration (argv[i] + 15, &conf->release_window) < 0
                || conf->release_window > 60.) {
                flux_log (h, LOG_ERR, "release-window: bad duration %s",
                          argv[i] + 15);
                errno = EINVAL;
                return -1;
            }
        }
        else {
            flux_log (h, LOG_ERR, "unknown argument %s", argv[i]);
            errno = EINVAL;
            return -1;
        }
    }
    return 0;
}

int mod_main (flux_t *h, int argc, char **argv)
{
    struct agent_config conf = {.job_shell = default_shell (),
                                .window = DEFAULT_WINDOW,
                                .release_window = DEFAULT_RELEASE_WINDOW,
                                .unload_grace = DEFAULT_UNLOAD_GRACE,
                                .barrier_max = DEFAULT_BARRIER_MAX,
                                .helper = default_helper ()};
    json_t *config = NULL;
    flux_msg_handler_t **handlers = NULL;
    flux_error_t error;
    struct agent *a;
    bool shell_given = false;
    int launcher = -1; /* not said */
    int rc = -1;

    if (parse_args (h, argc, argv, &conf, &shell_given, &launcher) < 0)
        return -1;
    if (read_config (h, &conf, &config, &launcher) < 0) {
        flux_log (h, LOG_ERR, "config.get: %s", strerror (errno));
        return -1;
    }
    conf.shell_launcher = launcher < 0 ? !shell_given : launcher == 1;
    if (!(a = agent_create (h, &conf, &error))) {
        flux_log (h, LOG_ERR, "%s", error.text);
        json_decref (config);
        return -1;
    }
    if (conf.imp)
        flux_log (h, LOG_DEBUG, "guests' jobs run through %s", conf.imp);
    if (flux_msg_handler_addvec (h, htab, a, &handlers) < 0)
        goto done;
    if (flux_reactor_run (flux_get_reactor (h), 0) < 0)
        goto done;
    rc = 0;
done:
    flux_msg_handler_delvec (handlers);
    agent_destroy (a);
    json_decref (config);
    return rc;
}
