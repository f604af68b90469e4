/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* main.c - the job-list broker module (rank 0): wires the job-list.*
 * requests and the job-purge-inactive event to the engine in joblist.c.
 *
 * Arguments: private   guests may list only their own jobs (RFC 43
 *                      private mode)
 */
#include <errno.h>
#include <string.h>

#include "joblist.h"
#include "libflux/flux.h"

static void list_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    joblist_list (arg, msg);
}

static void list_id_cb (flux_t *h, flux_msg_handler_t *mh,
                        const flux_msg_t *msg, void *arg)
{
    joblist_list_id (arg, msg);
}

static void list_attrs_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg)
{
    joblist_list_attrs (arg, msg);
}

static void job_stats_cb (flux_t *h, flux_msg_handler_t *mh,
                          const flux_msg_t *msg, void *arg)
{
    joblist_job_stats (arg, msg);
}

static void job_stats_cancel_cb (flux_t *h, flux_msg_handler_t *mh,
                                 const flux_msg_t *msg, void *arg)
{
    joblist_job_stats_cancel (arg, msg);
}

static void disconnect_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg)
{
    joblist_disconnect (arg, msg);
}

static void purge_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    joblist_purge_event (arg, msg);
}

/* job-list.stats-get: the engine's numbers (the default would only
 * count messages).
 */
static void stats_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    json_t *o = joblist_stats (arg);

    if (!o || flux_respond_pack (h, msg, "o", o) < 0)
        flux_respond_error (h, msg, ENOMEM, NULL);
}

static const struct flux_msg_handler_spec htab[] = {
    {FLUX_MSGTYPE_REQUEST, "job-list.list", list_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "job-list.list-id", list_id_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "job-list.list-attrs", list_attrs_cb,
     FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "job-list.job-stats", job_stats_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "job-list.job-stats-cancel", job_stats_cancel_cb,
     FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "job-list.disconnect", disconnect_cb,
     FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "job-list.stats-get", stats_cb, FLUX_ROLE_ALL},
    /* owner only: a guest's event could otherwise drop jobs */
    {FLUX_MSGTYPE_EVENT, "job-purge-inactive", purge_cb, 0},
    FLUX_MSGHANDLER_TABLE_END,
};

int mod_main (flux_t *h, int argc, char **argv)
{
    bool private_mode = false;
    uint32_t rank;
    joblist_t *jl;
    flux_msg_handler_t **handlers = NULL;
    int rc = -1;

    for (int i = 0; i < argc; i++) {
        if (!strcmp (argv[i], "private"))
            private_mode = true;
        else {
            errno = EINVAL;
            return -1;
        }
    }
    if (flux_get_rank (h, &rank) < 0)
        return -1;
    if (!(jl = joblist_create (h, rank, private_mode)))
        return -1;
    if (flux_event_subscribe (h, "job-purge-inactive") < 0
        || flux_msg_handler_addvec (h, htab, jl, &handlers) < 0)
        goto done;
    if (flux_reactor_run (flux_get_reactor (h), 0) < 0)
        goto done;
    rc = 0;
done:
    flux_msg_handler_delvec (handlers);
    joblist_destroy (jl);
    return rc;
}
