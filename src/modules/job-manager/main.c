/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* main.c - the job-manager broker module (rank 0): the table of the
 * requests it serves (PROTOCOLS.md 5.2, RFC 27, RFC 32) wired to the
 * engine in libjobmgr.la.  At load it replays the jobs in the KVS
 * (restart.c) before serving requests.
 *
 * Then it publishes the private event "job-manager.online": a scheduler
 * or exec service that had said hello to a job manager before (this one
 * was reloaded) says hello again, so a reload of the job manager alone
 * loses no job (sched-simple and job-exec do; at the first start nobody
 * is listening yet).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "alloc.h"
#include "event.h"
#include "history.h"
#include "info.h"
#include "jobmgr.h"
#include "journal.h"
#include "purge.h"
#include "queue.h"
#include "raise.h"
#include "restart.h"
#include "start.h"
#include "submit.h"
#include "update.h"
#include "urgency.h"
#include "wait.h"

#define HANDLER(name, call)                                   \
    static void name##_cb (flux_t *h, flux_msg_handler_t *mh, \
                           const flux_msg_t *msg, void *arg)  \
    {                                                         \
        struct jobmgr *jm = arg;                              \
        (void)jm;                                             \
        call;                                                 \
    }

HANDLER (submit, submit_request (jm, msg))
HANDLER (sched_hello, alloc_hello (jm->alloc, msg))
HANDLER (sched_ready, alloc_ready (jm->alloc, msg))
HANDLER (alloc_rsp, alloc_response (jm->alloc, msg))
HANDLER (free_rsp, free_response (jm->alloc, msg))
HANDLER (exec_hello, start_hello (jm->start, msg))
HANDLER (raise, raise_request (jm, msg))
HANDLER (raiseall, raiseall_request (jm, msg))
HANDLER (kill, kill_request (jm, msg))
HANDLER (resource_status, resource_status_request (jm, msg))
HANDLER (killall, killall_request (jm, msg))
HANDLER (urgency, urgency_request (jm, msg))
HANDLER (memo, memo_request (jm, msg))
HANDLER (update, update_request (jm, msg))
HANDLER (getattr, getattr_request (jm, msg))
HANDLER (getinfo, getinfo_request (jm, msg))
HANDLER (stats, stats_request (jm, msg))
HANDLER (post_event, post_event_request (jm, msg))
HANDLER (wait, wait_request (jm->wait, msg))
HANDLER (journal, journal_request (jm->journal, msg))
HANDLER (journal_cancel, journal_cancel (jm->journal, msg))
HANDLER (queue_list, queue_list (jm->queue, msg))
HANDLER (queue_status, queue_status (jm->queue, msg))
HANDLER (queue_enable, queue_enable (jm->queue, msg))
HANDLER (queue_start, queue_start (jm->queue, msg))
HANDLER (drain, queue_drain (jm->queue, msg))
HANDLER (idle, queue_idle (jm->queue, msg))
HANDLER (alloc_query, queue_alloc_query (jm->queue, msg))
HANDLER (purge, purge_request (jm, msg))
HANDLER (purge_id, purge_id_request (jm, msg))
HANDLER (history_get, history_get_request (jm->history, msg))

/* A client went away: forget what it was waiting for; if it was the
 * scheduler or the exec service, stop using it. */
static void disconnect_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg)
{
    struct jobmgr *jm = arg;

    journal_disconnect (jm->journal, msg);
    wait_disconnect (jm->wait, msg);
    queue_disconnect (jm->queue, msg);
    alloc_disconnect (jm->alloc, msg);
    start_disconnect (jm->start, msg);
}

/* How long an unloading job manager waits for start answers (s). */
#define START_UNLOAD_WAIT 5.0

#define REQ FLUX_MSGTYPE_REQUEST
#define RSP FLUX_MSGTYPE_RESPONSE
#define OWNER 0
#define USER FLUX_ROLE_USER

/* kvs.online: the kvs is back; a refused commit goes again. */
static void kvs_online_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg)
{
    struct jobmgr *jm = arg;
    event_kvs_online (jm->event);
}

static const struct flux_msg_handler_spec htab[] = {
    {REQ, "job-manager.submit", submit_cb, OWNER},
    {REQ, "job-manager.sched-hello", sched_hello_cb, OWNER},
    {REQ, "job-manager.sched-ready", sched_ready_cb, OWNER},
    {RSP, "sched.alloc", alloc_rsp_cb, OWNER},
    {RSP, "sched.free", free_rsp_cb, OWNER},
    {REQ, "job-manager.exec-hello", exec_hello_cb, OWNER},
    {REQ, "job-manager.raise", raise_cb, USER},
    {REQ, "job-manager.raiseall", raiseall_cb, USER},
    {REQ, "job-manager.kill", kill_cb, USER},
    {REQ, "job-manager.killall", killall_cb, USER},
    {REQ, "job-manager.urgency", urgency_cb, USER},
    {REQ, "job-manager.memo", memo_cb, USER},
    {REQ, "job-manager.update", update_cb, USER},
    {REQ, "job-manager.getattr", getattr_cb, USER},
    {REQ, "job-manager.getinfo", getinfo_cb, USER},
    {REQ, "job-manager.resource-status", resource_status_cb, OWNER},
    {REQ, "job-manager.stats-get", stats_cb, USER},
    {REQ, "job-manager.post-event", post_event_cb, OWNER},
    {REQ, "job-manager.wait", wait_cb, OWNER},
    {REQ, "job-manager.events-journal", journal_cb, OWNER},
    {REQ, "job-manager.events-journal-cancel", journal_cancel_cb, OWNER},
    {REQ, "job-manager.queue-list", queue_list_cb, USER},
    {REQ, "job-manager.queue-status", queue_status_cb, USER},
    {REQ, "job-manager.queue-enable", queue_enable_cb, OWNER},
    {REQ, "job-manager.queue-start", queue_start_cb, OWNER},
    {REQ, "job-manager.drain", drain_cb, OWNER},
    {REQ, "job-manager.idle", idle_cb, OWNER},
    {REQ, "job-manager.alloc-query", alloc_query_cb, USER},
    {REQ, "job-manager.purge", purge_cb, OWNER},
    {REQ, "job-manager.purge-id", purge_id_cb, OWNER},
    {REQ, "job-manager.history.get", history_get_cb, USER},
    {REQ, "job-manager.disconnect", disconnect_cb, FLUX_ROLE_ALL},
    {FLUX_MSGTYPE_EVENT, "kvs.online", kvs_online_cb, OWNER},
    FLUX_MSGHANDLER_TABLE_END,
};

/* Publish job-manager.online (see above).  A failure is logged: the
 * scheduler and exec service then need reloading by hand, as before. */
static void announce (struct jobmgr *jm)
{
    flux_error_t error;

    if (flux_service_announce (jm->h, "job-manager", &error) < 0)
        jm_log (jm, LOG_ERR, "%s", error.text);
}

/* "hold-ms=N" (event_set_hold): N, or -1 if arg is anything else. */
static int parse_hold (const char *arg)
{
    char *end;
    long v;

    if (strncmp (arg, "hold-ms=", 8) != 0)
        return -1;
    errno = 0;
    v = strtol (arg + 8, &end, 10);
    if (errno != 0 || end == arg + 8 || *end != '\0' || v < 0 || v > 60000)
        return -1;
    return (int)v;
}

int mod_main (flux_t *h, int argc, char **argv)
{
    struct jobmgr *jm;
    flux_msg_handler_t **handlers = NULL;
    flux_error_t error;
    int n, rc = -1, hold_ms = -1;

    for (int i = 0; i < argc; i++) {
        if ((hold_ms = parse_hold (argv[i])) < 0) {
            flux_log (h, LOG_ERR,
                      "unknown or bad argument %s (hold-ms=0-60000 is the"
                      " only one)",
                      argv[i]);
            errno = EINVAL;
            return -1;
        }
    }
    if (!(jm = jobmgr_create (h)))
        return -1;
    if (hold_ms >= 0)
        event_set_hold (jm->event, hold_ms);
    if ((n = restart_from_kvs (jm, &error)) < 0) {
        jm_log (jm, LOG_CRIT, "restart: %s", error.text);
        goto done;
    }
    if (n > 0)
        jm_log (jm, LOG_INFO, "restart: %d jobs", n);
    if (queue_restore (jm->queue, &error) < 0) {
        jm_log (jm, LOG_CRIT, "restart: %s", error.text);
        goto done;
    }
    restart_continue (jm);
    if (jobmgr_start (jm) < 0
        || flux_msg_handler_addvec (h, htab, jm, &handlers) < 0
        || flux_event_subscribe (h, "kvs.online") < 0)
        goto done;
    announce (jm);
    if (flux_reactor_run (flux_get_reactor (h), 0) < 0)
        goto done;
    /* unloading: the start answers on their way are waited for, and what
     * was posted must reach the eventlogs */
    start_unload_wait (jm->start, START_UNLOAD_WAIT);
    if (event_flush_sync (jm->event) < 0)
        jm_log (jm, LOG_ERR, "final eventlog commit failed");
    rc = 0;
done:
    flux_msg_handler_delvec (handlers);
    jobmgr_destroy (jm);
    return rc;
}
