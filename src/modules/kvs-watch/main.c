/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* main.c - the kvs-watch broker module (runs on every rank): wires the
 * kvs-watch.* requests and the kvs.namespace-* events to the engine in
 * kvswatch.c.
 *
 * Arguments: max-lookups=N  watchers with a lookup in flight at once
 *                           (default KVSWATCH_DEFAULT_MAX_LOOKUPS).
 *
 * It subscribes to the events of a namespace only while the namespace
 * has watchers (and a few seconds more), so commits to namespaces that
 * nobody watches do not wake it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvswatch.h"
#include "libflux/flux.h"
#include "libflux/stats.h"

static void lookup_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    kvswatch_lookup (arg, msg);
}

static void cancel_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    kvswatch_cancel (arg, msg);
}

static void disconnect_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg)
{
    kvswatch_disconnect (arg, msg);
}

static void event_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    kvswatch_event (arg, msg);
}

static void kvs_online_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg)
{
    kvswatch_kvs_online (arg);
}

/* Overrides the default kvs-watch.stats-get: the engine's numbers plus
 * the usual message counters.
 */
/* Follow a namespace's events: kvs.namespace-<name>-{setroot,created,
 * removed}.  flux_event_subscribe() returns once the broker has the
 * subscription, as kvswatch_set_follow() requires. */
static int follow_call (int (*fn) (flux_t *h, const char *topic), flux_t *h,
                        const char *name)
{
    static const char prefix[] = "kvs.namespace-";
    size_t size = sizeof (prefix) + strlen (name) + 1;
    char *topic;
    int rc;

    if (!(topic = malloc (size)))
        return -1;
    snprintf (topic, size, "%s%s-", prefix, name);
    rc = fn (h, topic);
    int saved_errno = errno;
    free (topic);
    errno = saved_errno;
    return rc;
}

static int subscribe_ns (const char *name, void *arg)
{
    return follow_call (flux_event_subscribe, arg, name);
}

static int unsubscribe_ns (const char *name, void *arg)
{
    return follow_call (flux_event_unsubscribe, arg, name);
}

static void stats_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    flux_stats_respond (h, msg, kvswatch_stats (arg));
}

static const struct flux_msg_handler_spec htab[] = {
    {FLUX_MSGTYPE_REQUEST, "kvs-watch.lookup", lookup_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "kvs-watch.cancel", cancel_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "kvs-watch.disconnect", disconnect_cb,
     FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "kvs-watch.stats-get", stats_cb, FLUX_ROLE_ALL},
    /* owner only: a guest's event could otherwise fake a removal */
    {FLUX_MSGTYPE_EVENT, "kvs.namespace-*", event_cb, 0},
    {FLUX_MSGTYPE_EVENT, "kvs.online", kvs_online_cb, 0},
    FLUX_MSGHANDLER_TABLE_END,
};

static int parse_args (int argc, char **argv, int *max_lookups)
{
    for (int i = 0; i < argc; i++) {
        if (!strncmp (argv[i], "max-lookups=", 12)) {
            char *end;
            long n = strtol (argv[i] + 12, &end, 10);
            if (*end != '\0' || end == argv[i] + 12 || n < 1 || n > 1000000)
                goto inval;
            *max_lookups = (int)n;
        }
        else
            goto inval;
    }
    return 0;
inval:
    errno = EINVAL;
    return -1;
}

int mod_main (flux_t *h, int argc, char **argv)
{
    int max_lookups = KVSWATCH_DEFAULT_MAX_LOOKUPS;
    uint32_t rank;
    kvswatch_t *kw;
    flux_msg_handler_t **handlers = NULL;
    int rc = -1;

    if (parse_args (argc, argv, &max_lookups) < 0
        || flux_get_rank (h, &rank) < 0)
        return -1;
    if (!(kw = kvswatch_create (h, rank, max_lookups)))
        return -1;
    kvswatch_set_follow (kw, subscribe_ns, unsubscribe_ns, h);
    if (flux_msg_handler_addvec (h, htab, kw, &handlers) < 0
        || flux_event_subscribe (h, "kvs.online") < 0)
        goto done;
    if (flux_reactor_run (flux_get_reactor (h), 0) < 0)
        goto done;
    rc = 0;
done:
    flux_msg_handler_delvec (handlers);
    kvswatch_destroy (kw);
    return rc;
}
