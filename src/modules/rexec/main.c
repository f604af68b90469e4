/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* main.c - the rexec broker module (every rank): the RFC 42 subprocess
 * server of libsubprocess under the service name "rexec", which `flux
 * exec` drives.  Every method is owner only (the server's handler table).
 *
 * On rank 0 of an instance that lets guests in ([access]
 * allow-guest-user), a request that did not come from this broker's own
 * clients (no FLUX_ROLE_LOCAL) is refused EPERM, as flux-core does: a
 * guest's job on another node must not reach the owner's processes on
 * rank 0 through a forwarded message.
 *
 * rexec.stats-get adds the server's counters to the message counters,
 * and those of rexec.bulk-exec (bulk.h: one command on many ranks, down
 * the tree once) under "bulk".
 *
 * Shutdown (the broker stops the module, or its reactor stops): new
 * execs are refused ENOSYS, the children get SIGTERM, and the module
 * waits at most 5 s for them; those still running then get SIGKILL and
 * at most 1 s more to be reaped.
 *
 * Arguments: none.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <syslog.h>

#include "libflux/stats.h"
#include "libsubprocess/subprocess.h"

#include "bulk.h"

#define SERVICE "rexec"
#define TERM_TIMEOUT 5.
#define KILL_TIMEOUT 1.

struct rexec {
    subprocess_server_t *srv;
    struct bulk *bulk;
};

static void stats_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    struct rexec *r = arg;
    json_t *o = subprocess_server_stats (r->srv);

    if (o && r->bulk)
        (void)json_object_set_new (o, "bulk", bulk_stats (r->bulk));
    flux_stats_respond (h, msg, o);
}

static const struct flux_msg_handler_spec htab[] = {
    {FLUX_MSGTYPE_REQUEST, SERVICE ".stats-get", stats_cb, FLUX_ROLE_ALL},
    FLUX_MSGHANDLER_TABLE_END,
};

static int register_service (flux_t *h)
{
    const char *name = flux_aux_get (h, "flux::name");
    flux_future_t *f;
    int rc = 0;

    if (name && !strcmp (name, SERVICE))
        return 0;
    if (!(f = flux_service_register (h, SERVICE))
        || flux_future_get (f, NULL) < 0) {
        flux_log_error (h, "registering service %s", SERVICE);
        rc = -1;
    }
    flux_future_destroy (f);
    return rc;
}

static int local_only (const flux_msg_t *msg, void *arg, flux_error_t *error)
{
    struct flux_msg_cred cred;

    if (flux_msg_get_cred (msg, &cred) == 0
        && (cred.rolemask & FLUX_ROLE_LOCAL))
        return 0;
    errno = EPERM;
    return errprintf (error, "Remote rexec requests are not allowed on rank 0");
}

static bool guests_allowed (flux_t *h)
{
    const char *s = flux_attr_get (h, "access.allow-guest-user");

    return s && (!strcmp (s, "1") || !strcmp (s, "true"));
}

static bool none_running (void *arg)
{
    return subprocess_server_running (arg) == 0;
}

/* SIGTERM, wait, SIGKILL, wait. */
static void stop_children (flux_t *h, subprocess_server_t *srv)
{
    flux_reactor_t *r = flux_get_reactor (h);
    int n;

    if ((n = subprocess_server_terminate (srv, SIGTERM)) == 0)
        return;
    flux_log (h, LOG_DEBUG, "shutdown: SIGTERM sent to %d processes", n);
    if (flux_reactor_run_until (r, none_running, srv, TERM_TIMEOUT))
        return;
    n = subprocess_server_terminate (srv, SIGKILL);
    flux_log (h, LOG_ERR, "shutdown: SIGKILL sent to %d processes", n);
    (void)flux_reactor_run_until (r, none_running, srv, KILL_TIMEOUT);
}

int mod_main (flux_t *h, int argc, char **argv)
{
    flux_msg_handler_t **handlers = NULL;
    subprocess_server_t *srv;
    struct rexec r = {0};
    subprocess_server_auth_f check = NULL;
    flux_error_t error;
    const char *uri;
    uint32_t rank;
    int rc = -1;

    if (argc > 0) {
        errno = EINVAL;
        return -1;
    }
    if (flux_get_rank (h, &rank) < 0)
        return -1;
    uri = flux_attr_get (h, "local-uri");
    if (!(srv = subprocess_server_create (h, SERVICE, uri, rank, &error))) {
        flux_log (h, LOG_ERR, "%s", error.text);
        return -1;
    }
    if (rank == 0 && guests_allowed (h)) {
        subprocess_server_set_auth_cb (srv, local_only, NULL);
        check = local_only;
    }
    r.srv = srv;
    if (!(r.bulk = bulk_create (h, srv, check, &error))) {
        flux_log (h, LOG_ERR, "bulk-exec: %s", error.text);
        goto done;
    }
    subprocess_server_set_disconnect_cb (srv, bulk_disconnect, r.bulk);
    if (flux_msg_handler_addvec (h, htab, &r, &handlers) < 0
        || register_service (h) < 0)
        goto done;
    if (flux_reactor_run (flux_get_reactor (h), 0) < 0)
        goto done;
    rc = 0;
done:
    stop_children (h, srv);
    subprocess_server_set_disconnect_cb (srv, NULL, NULL);
    bulk_destroy (r.bulk);
    flux_msg_handler_delvec (handlers);
    subprocess_server_destroy (srv);
    return rc;
}
