/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* main.c - the sched-simple broker module (rank 0): registers the "sched"
 * service (RFC 27) and "feasibility", and wires their requests to the
 * engine in engine.c / alloc.c.
 *
 * A reload of the job manager (its job-manager.online event) makes the
 * engine start over from the hello (sched_restart).
 *
 * Arguments: queue-depth=N  limited mode: at most N alloc requests
 *                           outstanding (default SCHED_DEFAULT_QUEUE_DEPTH)
 *            queue-depth=unlimited  unlimited mode
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libflux/flux.h"
#include "libflux/stats.h"
#include "engine.h"

#define HANDLER(name, fn)                                \
    static void name (flux_t *h, flux_msg_handler_t *mh, \
                      const flux_msg_t *msg, void *arg)  \
    {                                                    \
        fn (arg, msg);                                   \
    }

HANDLER (alloc_cb, sched_alloc)
HANDLER (free_cb, sched_free)
HANDLER (cancel_cb, sched_cancel)
HANDLER (prioritize_cb, sched_prioritize)
HANDLER (expiration_cb, sched_expiration)
HANDLER (status_cb, sched_resource_status)
HANDLER (disconnect_cb, sched_disconnect)
HANDLER (feasibility_cb, sched_feasibility)

/* kvs.online: the kvs is back (R commits it refused go again). */
static void kvs_online_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg)
{
    sched_kvs_online (arg);
}

/* job-manager.online: the job manager was reloaded. */
static void jm_online_cb (flux_t *h, flux_msg_handler_t *mh,
                          const flux_msg_t *msg, void *arg)
{
    sched_restart (arg);
}

/* Overrides the default <module>.stats-get: the engine's numbers plus the
 * usual message counters. */
static void stats_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    flux_stats_respond (h, msg, sched_stats (arg));
}

static const struct flux_msg_handler_spec htab[] = {
    {FLUX_MSGTYPE_REQUEST, "sched.alloc", alloc_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "sched.free", free_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "sched.cancel", cancel_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "sched.prioritize", prioritize_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "sched.expiration", expiration_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "sched.disconnect", disconnect_cb, 0},
    {FLUX_MSGTYPE_REQUEST, "sched.resource-status", status_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "feasibility.check", feasibility_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_EVENT, "job-manager.online", jm_online_cb, 0},
    {FLUX_MSGTYPE_EVENT, "kvs.online", kvs_online_cb, 0},
    FLUX_MSGHANDLER_TABLE_END,
};

static int parse_args (int argc, char **argv, int *depth)
{
    for (int i = 0; i < argc; i++) {
        const char *v;
        char *end;
        long n;
        if (strncmp (argv[i], "queue-depth=", 12) != 0)
            goto inval;
        v = argv[i] + 12;
        if (!strcmp (v, "unlimited")) {
            *depth = 0;
            continue;
        }
        errno = 0;
        n = strtol (v, &end, 10);
        if (errno || *end != '\0' || end == v || n < 1 || n > 2147483647)
            goto inval;
        *depth = (int)n;
    }
    return 0;
inval:
    errno = EINVAL;
    return -1;
}

static int service (flux_t *h, const char *name, bool add)
{
    flux_future_t *f = add ? flux_service_register (h, name)
                           : flux_service_unregister (h, name);
    int rc = f ? flux_future_get (f, NULL) : -1;

    flux_future_destroy (f);
    return rc;
}

int mod_main (flux_t *h, int argc, char **argv)
{
    int depth = SCHED_DEFAULT_QUEUE_DEPTH;
    const char *name = flux_aux_get (h, "flux::name");
    struct flux_msg_handler_spec stats[] = {
        {FLUX_MSGTYPE_REQUEST, NULL, stats_cb, FLUX_ROLE_ALL},
        FLUX_MSGHANDLER_TABLE_END,
    };
    flux_msg_handler_t **handlers = NULL, **shandlers = NULL;
    char topic[128];
    bool feasibility = false;
    uint32_t rank;
    sched_t *s;
    int rc = -1;

    if (parse_args (argc, argv, &depth) < 0 || flux_get_rank (h, &rank) < 0)
        return -1;
    if (rank != 0) {
        errno = EINVAL; /* the scheduler runs on rank 0 only */
        return -1;
    }
    if (!(s = sched_create (h, depth)))
        return -1;
    snprintf (topic, sizeof (topic), "%s.stats-get",
              name ? name : "sched-simple");
    stats[0].topic_glob = topic;
    if (service (h, "sched", true) < 0)
        goto done;
    /* optional: another module may already offer it */
    feasibility = service (h, "feasibility", true) == 0;
    if (flux_msg_handler_addvec (h, htab, s, &handlers) < 0
        || flux_msg_handler_addvec (h, stats, s, &shandlers) < 0
        || flux_event_subscribe (h, "job-manager.online") < 0
        || flux_event_subscribe (h, "kvs.online") < 0 || sched_start (s) < 0)
        goto done;
    if (flux_reactor_run (flux_get_reactor (h), 0) < 0)
        goto done;
    rc = 0;
done : {
    int saved_errno = errno;
    flux_msg_handler_delvec (shandlers);
    flux_msg_handler_delvec (handlers);
    sched_destroy (s);
    if (feasibility)
        (void)service (h, "feasibility", false);
    (void)service (h, "sched", false);
    errno = saved_errno;
}
    return rc;
}
