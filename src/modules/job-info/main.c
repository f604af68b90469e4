/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* main.c - the job-info broker module (rank 0): wires the job-info.*
 * requests to the engine in info.c, lookup.c, watch.c and update.c.
 */
#include <errno.h>

#include "info.h"
#include "libflux/flux.h"

static void lookup_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    info_lookup (arg, msg);
}

static void watch_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    info_eventlog_watch (arg, msg);
}

static void watch_cancel_cb (flux_t *h, flux_msg_handler_t *mh,
                             const flux_msg_t *msg, void *arg)
{
    info_eventlog_watch_cancel (arg, msg);
}

static void update_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    info_update_watch (arg, msg);
}

static void update_cancel_cb (flux_t *h, flux_msg_handler_t *mh,
                              const flux_msg_t *msg, void *arg)
{
    info_update_watch_cancel (arg, msg);
}

static void disconnect_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg)
{
    info_disconnect (arg, msg);
}

static void stats_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    json_t *o = info_stats (arg);

    if (!o || flux_respond_pack (h, msg, "o", o) < 0)
        flux_respond_error (h, msg, ENOMEM, NULL);
}

static const struct flux_msg_handler_spec htab[] = {
    {FLUX_MSGTYPE_REQUEST, "job-info.lookup", lookup_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "job-info.eventlog-watch", watch_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "job-info.eventlog-watch-cancel", watch_cancel_cb,
     FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "job-info.update-watch", update_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "job-info.update-lookup", update_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "job-info.update-watch-cancel", update_cancel_cb,
     FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "job-info.disconnect", disconnect_cb,
     FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "job-info.stats-get", stats_cb, FLUX_ROLE_ALL},
    FLUX_MSGHANDLER_TABLE_END,
};

int mod_main (flux_t *h, int argc, char **argv)
{
    uint32_t rank;
    struct info *ctx;
    flux_msg_handler_t **handlers = NULL;
    int rc = -1;

    if (argc > 0) {
        errno = EINVAL;
        return -1;
    }
    if (flux_get_rank (h, &rank) < 0 || !(ctx = info_create (h, rank)))
        return -1;
    if (flux_msg_handler_addvec (h, htab, ctx, &handlers) < 0)
        goto done;
    if (flux_reactor_run (flux_get_reactor (h), 0) < 0)
        goto done;
    rc = 0;
done:
    flux_msg_handler_delvec (handlers);
    info_destroy (ctx);
    return rc;
}
