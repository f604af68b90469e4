/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* main.c - the job-exec broker module (rank 0): the exec service of
 * RFC 32.  Wires requests and events to the core in exec.c, then says
 * hello to the job manager (job-manager.exec-hello {service}); a failed
 * hello is fatal, as RFC 32 requires.
 *
 * The service is "job-exec".  The broker routes a module's own name to
 * it, so nothing needs registering when the module is loaded under that
 * name; loaded under another name (flux module load --name=...), the
 * module registers "job-exec" itself (service.add).
 *
 * A reload of the job manager (its job-manager.online event) gets a new
 * hello; the new job manager then sends a reattach start for each job
 * it finds running, which the core adopts (exec.c), so the jobs go on.
 *
 * Arguments (realexec's): kill-timeout=FSD (default 5s: from SIGTERM to
 * SIGKILL, then between SIGKILLs), job-shell=PATH (the job shell the
 * exec agents start, unless the jobspec names one),
 * shell-exit-timeout=FSD (default 30s, 0 for none: how long the other
 * shells may run on once the leader shell has exited, before the job is
 * ended with a fatal exception, as flux-core's exec.shell-exit-timeout).
 * Handed to the
 * implementations as the handle's aux "job-exec::options", a JSON object.
 * Rank 0 only (EINVAL elsewhere).
 */
#include <errno.h>
#include <string.h>
#include <syslog.h>

#include "exec.h"
#include "impl.h"
#include "libflux/flux.h"
#include "libutil/fsd.h"

#define SERVICE "job-exec"

static void start_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    exec_start_request (arg, msg);
}

static void exception_cb (flux_t *h, flux_msg_handler_t *mh,
                          const flux_msg_t *msg, void *arg)
{
    exec_exception_event (arg, msg);
}

static void expiration_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg)
{
    exec_expiration_request (arg, msg);
}

static void critical_ranks_cb (flux_t *h, flux_msg_handler_t *mh,
                               const flux_msg_t *msg, void *arg)
{
    exec_critical_ranks_request (arg, msg);
}

static void stats_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    exec_stats_request (arg, msg);
}

/* kvs.online: the kvs is back. */
static void kvs_online_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg)
{
    exec_kvs_online (arg);
}

static void rehello_continuation (flux_future_t *f, void *arg)
{
    exec_t *x = arg;

    if (flux_future_get (f, NULL) < 0 && errno == ENOSYS) {
        /* gone again (reloaded twice in a row): hello on its next
         * job-manager.online */
        exec_log (x, LOG_WARNING,
                  "job-manager.exec-hello: %s: waiting for the job manager "
                  "to come back",
                  future_strerror (f, errno));
    }
    else if (flux_future_get (f, NULL) < 0) {
        exec_log (x, LOG_ERR, "job-manager.exec-hello: %s",
                  future_strerror (f, errno));
        flux_reactor_stop_error (flux_get_reactor (flux_future_get_flux (f)));
    }
    else
        exec_log (x, LOG_INFO, "the job manager was reloaded: hello again");
    flux_future_destroy (f);
}

/* job-manager.online: the job manager was reloaded (we said hello to its
 * predecessor at start).  A refused hello is fatal, as at start; one the
 * broker answers ENOSYS (the job manager went away again) waits for the
 * next event. */
static void jm_online_cb (flux_t *h, flux_msg_handler_t *mh,
                          const flux_msg_t *msg, void *arg)
{
    exec_t *x = arg;
    flux_future_t *f;

    if (!(f = flux_rpc_pack (h, "job-manager.exec-hello", FLUX_NODEID_ANY, 0,
                             "{s:s}", "service", SERVICE))
        || flux_future_then (f, -1., rehello_continuation, x) < 0) {
        exec_log (x, LOG_ERR, "job-manager.exec-hello: %s", strerror (errno));
        flux_future_destroy (f);
        flux_reactor_stop_error (flux_get_reactor (h));
    }
}

static const struct flux_msg_handler_spec htab[] = {
    {FLUX_MSGTYPE_REQUEST, SERVICE ".start", start_cb, 0},
    {FLUX_MSGTYPE_REQUEST, SERVICE ".expiration", expiration_cb, 0},
    {FLUX_MSGTYPE_REQUEST, SERVICE ".critical-ranks", critical_ranks_cb,
     FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, SERVICE ".stats-get", stats_cb, FLUX_ROLE_USER},
    /* owner only: a guest could otherwise publish a fake cancel */
    {FLUX_MSGTYPE_EVENT, "job-exception", exception_cb, 0},
    {FLUX_MSGTYPE_EVENT, "job-manager.online", jm_online_cb, 0},
    {FLUX_MSGTYPE_EVENT, "kvs.online", kvs_online_cb, 0},
    FLUX_MSGHANDLER_TABLE_END,
};

static int register_service (flux_t *h, exec_t *x)
{
    const char *name = flux_aux_get (h, "flux::name");
    flux_future_t *f;

    if (name && !strcmp (name, SERVICE))
        return 0;
    if (!(f = flux_service_register (h, SERVICE))
        || flux_future_get (f, NULL) < 0) {
        exec_log (x, LOG_ERR, "registering service %s: %s", SERVICE,
                  future_strerror (f, errno));
        flux_future_destroy (f);
        return -1;
    }
    flux_future_destroy (f);
    return 0;
}

static int hello (flux_t *h, exec_t *x)
{
    flux_future_t *f;

    if (!(f = flux_rpc_pack (h, "job-manager.exec-hello", FLUX_NODEID_ANY, 0,
                             "{s:s}", "service", SERVICE))
        || flux_future_get (f, NULL) < 0) {
        exec_log (x, LOG_ERR, "job-manager.exec-hello: %s",
                  future_strerror (f, errno));
        flux_future_destroy (f);
        return -1;
    }
    flux_future_destroy (f);
    return 0;
}

static json_t *parse_args (flux_t *h, int argc, char **argv)
{
    json_t *o = json_object ();
    double d;

    for (int i = 0; o && i < argc; i++) {
        if (!strncmp (argv[i], "kill-timeout=", 13)) {
            if (fsd_parse_duration (argv[i] + 13, &d) < 0 || !(d > 0.)
                || json_object_set_new (o, "kill-timeout", json_real (d)) < 0)
                goto bad;
        }
        else if (!strncmp (argv[i], "shell-exit-timeout=", 19)) {
            if (fsd_parse_duration (argv[i] + 19, &d) < 0
                || json_object_set_new (o, "shell-exit-timeout", json_real (d))
                       < 0)
                goto bad;
        }
        else if (!strncmp (argv[i], "job-shell=", 10) && argv[i][10]) {
            if (json_object_set_new (o, "job-shell", json_string (argv[i] + 10))
                < 0)
                goto bad;
        }
        else
            goto bad;
        continue;
    bad:
        flux_log (h, LOG_ERR, "bad argument %s", argv[i]);
        json_decref (o);
        errno = EINVAL;
        return NULL;
    }
    return o;
}

int mod_main (flux_t *h, int argc, char **argv)
{
    flux_msg_handler_t **handlers = NULL;
    flux_error_t error;
    exec_t *x;
    uint32_t rank;
    int rc = -1;

    json_t *opts;

    if (!(opts = parse_args (h, argc, argv))
        || flux_aux_set (h, "job-exec::options", opts, (flux_free_f)json_decref)
               < 0) {
        json_decref (opts);
        return -1;
    }
    if (flux_get_rank (h, &rank) < 0)
        return -1;
    if (rank != 0) {
        errno = EINVAL; /* the job manager, and so its exec service, is
                           on rank 0 */
        return -1;
    }
    if (!(x = exec_create (h, rank, SERVICE, &error)))
        return -1;
    if (flux_msg_handler_addvec (h, htab, x, &handlers) < 0
        || flux_event_subscribe (h, "job-exception") < 0
        || flux_event_subscribe (h, "job-manager.online") < 0
        || flux_event_subscribe (h, "kvs.online") < 0
        || register_service (h, x) < 0 || hello (h, x) < 0)
        goto done;
    if (flux_reactor_run (flux_get_reactor (h), 0) < 0)
        goto done;
    rc = 0;
done:
    flux_msg_handler_delvec (handlers);
    exec_unloading (x);
    exec_destroy (x);
    return rc;
}
