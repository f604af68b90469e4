/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* queue.c - queue administration, drain and idle (see queue.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "alloc.h"
#include "event.h"
#include "queue.h"
#include "libkvs/kvs.h"

#define CHECKPOINT_KEY "checkpoint.job-manager"

struct qwaiter {
    struct list_node link;
    const flux_msg_t *msg;
};

struct queue {
    struct jobmgr *jm;
    char *disable_reason; /* NULL: enabled */
    char *stop_reason;    /* while stopped, if one was given */
    bool saved_stopped;   /* the stop to checkpoint (not a nocheckpoint one) */
    struct list_node drain, idle;
};

struct queue *queue_create (struct jobmgr *jm)
{
    struct queue *q;

    if (!(q = calloc (1, sizeof (*q))))
        return NULL;
    q->jm = jm;
    list_init (&q->drain);
    list_init (&q->idle);
    return q;
}

static void waiter_free (struct qwaiter *w)
{
    list_del (&w->link);
    flux_msg_decref (w->msg);
    free (w);
}

static void waiters_end (struct queue *q, struct list_node *head)
{
    while (!list_empty (head)) {
        struct qwaiter *w = list_entry (head->next, struct qwaiter, link);
        flux_respond_error (q->jm->h, w->msg, ENOSYS,
                            "job-manager is unloading");
        waiter_free (w);
    }
}

void queue_destroy (struct queue *q)
{
    if (q) {
        int saved = errno;
        waiters_end (q, &q->drain);
        waiters_end (q, &q->idle);
        free (q->disable_reason);
        free (q->stop_reason);
        free (q);
        errno = saved;
    }
}

const char *queue_disabled_reason (struct queue *q)
{
    return q->disable_reason;
}

static int add_waiter (struct list_node *head, const flux_msg_t *msg)
{
    struct qwaiter *w;

    if (!(w = calloc (1, sizeof (*w))))
        return -1;
    w->msg = flux_msg_incref (msg);
    list_add_tail (head, &w->link);
    return 0;
}

static bool is_idle (struct queue *q)
{
    return jobmgr_count (q->jm, FLUX_JOB_STATE_RUNNING) == 0
           && alloc_pending_count (q->jm->alloc) == 0;
}

void queue_check (struct queue *q)
{
    if (!list_empty (&q->drain)
        && jobmgr_count (q->jm, FLUX_JOB_STATE_ACTIVE | FLUX_JOB_STATE_NEW)
               == 0) {
        while (!list_empty (&q->drain)) {
            struct qwaiter *w
                = list_entry (q->drain.next, struct qwaiter, link);
            if (event_respond_after_commit (q->jm, w->msg, NULL) < 0)
                flux_respond_error (q->jm->h, w->msg, ENOMEM, NULL);
            waiter_free (w);
        }
    }
    if (!list_empty (&q->idle) && is_idle (q)) {
        json_t *o = json_pack ("{s:i}", "pending",
                               jobmgr_count (q->jm, FLUX_JOB_STATE_PENDING));
        while (!list_empty (&q->idle)) {
            struct qwaiter *w = list_entry (q->idle.next, struct qwaiter, link);
            if (event_respond_after_commit (q->jm, w->msg, o) < 0)
                flux_respond_error (q->jm->h, w->msg, ENOMEM, NULL);
            waiter_free (w);
        }
        json_decref (o);
    }
}

/* Requests that may name a queue: there are none. */
static int no_named_queue (struct queue *q, const flux_msg_t *msg,
                           const char *name)
{
    if (name) {
        jm_respond_error (q->jm, msg, EINVAL, "%s: no such queue", name);
        return -1;
    }
    return 0;
}

void queue_list (struct queue *q, const flux_msg_t *msg)
{
    flux_respond_pack (q->jm->h, msg, "{s:[]}", "queues");
}

void queue_status (struct queue *q, const flux_msg_t *msg)
{
    const char *name = NULL;
    json_t *o;

    if (flux_request_unpack (msg, NULL, "{s?s}", "name", &name) < 0) {
        jm_respond_error (q->jm, msg, EPROTO, "malformed queue-status");
        return;
    }
    if (no_named_queue (q, msg, name) < 0)
        return;
    o = json_pack ("{s:b s:b}", "enable", q->disable_reason == NULL, "start",
                   alloc_queue_started (q->jm->alloc));
    if (o && q->disable_reason)
        json_object_set_new (o, "disable_reason",
                             json_string (q->disable_reason));
    if (o && q->stop_reason && !alloc_queue_started (q->jm->alloc))
        json_object_set_new (o, "stop_reason", json_string (q->stop_reason));
    if (!o)
        jm_respond_error (q->jm, msg, ENOMEM, NULL);
    else
        flux_respond_pack (q->jm->h, msg, "O", o);
    json_decref (o);
}

static int set_reason (char **dst, const char *reason)
{
    char *s = NULL;

    if (reason && !(s = strdup (reason)))
        return -1;
    free (*dst);
    *dst = s;
    return 0;
}

/* Record the queue's state in the next eventlog commit. */
static void save (struct queue *q)
{
    json_t *o;

    o = json_pack ("{s:b s:b}", "enable", q->disable_reason == NULL, "start",
                   !q->saved_stopped);
    if (o && q->disable_reason)
        (void)json_object_set_new (o, "disable_reason",
                                   json_string (q->disable_reason));
    if (o && q->saved_stopped && q->stop_reason)
        (void)json_object_set_new (o, "stop_reason",
                                   json_string (q->stop_reason));
    if (o && !(o = json_pack ("{s:i s:[o]}", "version", 1, "queue", o)))
        errno = ENOMEM;
    if (!o || event_kvs_put (q->jm, CHECKPOINT_KEY, o) < 0)
        jm_log (q->jm, LOG_ERR, "%s: cannot save the queue state: %s",
                CHECKPOINT_KEY, strerror (errno));
    json_decref (o);
}

int queue_restore (struct queue *q, flux_error_t *error)
{
    flux_future_t *f;
    const char *s;
    json_t *o = NULL, *queue;
    int enable = 1, start = 1, rc = -1;
    const char *dreason = NULL, *sreason = NULL;

    if (!(f = flux_kvs_lookup (q->jm->h, NULL, 0, CHECKPOINT_KEY)))
        return errprintf (error, "%s: %s", CHECKPOINT_KEY, strerror (errno));
    if (flux_kvs_lookup_get (f, &s) < 0) {
        if (errno == ENOENT)
            rc = 0; /* nothing saved: enabled and started */
        else
            errprintf (error, "%s: %s", CHECKPOINT_KEY,
                       future_strerror (f, errno));
        goto done;
    }
    if (!(o = json_loads (s, 0, NULL))
        || json_unpack (o, "{s:[o]}", "queue", &queue) < 0
        || json_unpack (queue, "{s?b s?b s?s s?s}", "enable", &enable, "start",
                        &start, "disable_reason", &dreason, "stop_reason",
                        &sreason)
               < 0) {
        /* not fatal: the jobs matter more than the queue's state */
        jm_log (q->jm, LOG_ERR, "%s: malformed, ignored", CHECKPOINT_KEY);
        rc = 0;
        goto done;
    }
    if (set_reason (&q->disable_reason, enable    ? NULL
                                        : dreason ? dreason
                                                  : "disabled")
            < 0
        || set_reason (&q->stop_reason, start ? NULL : sreason) < 0) {
        errprintf (error, "out of memory");
        goto done;
    }
    q->saved_stopped = !start;
    alloc_queue_start (q->jm->alloc, start);
    if (!enable || !start)
        jm_log (q->jm, LOG_INFO, "queue restored: %s, %s",
                enable ? "enabled" : "disabled", start ? "started" : "stopped");
    rc = 0;
done:
    json_decref (o);
    flux_future_destroy (f);
    return rc;
}

void queue_enable (struct queue *q, const flux_msg_t *msg)
{
    int enable, all = 0;
    const char *name = NULL, *reason = NULL;

    if (flux_request_unpack (msg, NULL, "{s:b s?b s?s s?s}", "enable", &enable,
                             "all", &all, "name", &name, "reason", &reason)
        < 0) {
        jm_respond_error (q->jm, msg, EPROTO, "malformed queue-enable");
        return;
    }
    if (no_named_queue (q, msg, name) < 0)
        return;
    if (!enable && (!reason || !*reason)) {
        jm_respond_error (q->jm, msg, EINVAL,
                          "a reason is required to disable the queue");
        return;
    }
    if (set_reason (&q->disable_reason, enable ? NULL : reason) < 0) {
        jm_respond_error (q->jm, msg, ENOMEM, NULL);
        return;
    }
    jm_log (q->jm, LOG_INFO, "queue %s%s%s", enable ? "enabled" : "disabled",
            enable ? "" : ": ", enable ? "" : reason);
    save (q);
    flux_respond (q->jm->h, msg, NULL);
}

void queue_start (struct queue *q, const flux_msg_t *msg)
{
    int start, all = 0, nocheckpoint = 0;
    const char *name = NULL, *reason = NULL;

    if (flux_request_unpack (msg, NULL, "{s:b s?b s?s s?s s?b}", "start",
                             &start, "all", &all, "name", &name, "reason",
                             &reason, "nocheckpoint", &nocheckpoint)
        < 0) {
        jm_respond_error (q->jm, msg, EPROTO, "malformed queue-start");
        return;
    }
    if (no_named_queue (q, msg, name) < 0)
        return;
    if (set_reason (&q->stop_reason, start ? NULL : reason) < 0) {
        jm_respond_error (q->jm, msg, ENOMEM, NULL);
        return;
    }
    alloc_queue_start (q->jm->alloc, start);
    jm_log (q->jm, LOG_INFO, "queue %s", start ? "started" : "stopped");
    if (!nocheckpoint || start) {
        q->saved_stopped = !start;
        save (q);
    }
    flux_respond (q->jm->h, msg, NULL);
}

void queue_drain (struct queue *q, const flux_msg_t *msg)
{
    if (add_waiter (&q->drain, msg) < 0)
        jm_respond_error (q->jm, msg, ENOMEM, NULL);
}

void queue_idle (struct queue *q, const flux_msg_t *msg)
{
    if (add_waiter (&q->idle, msg) < 0)
        jm_respond_error (q->jm, msg, ENOMEM, NULL);
}

void queue_alloc_query (struct queue *q, const flux_msg_t *msg)
{
    flux_respond_pack (q->jm->h, msg, "{s:I s:I s:i}", "queue_length",
                       (json_int_t)alloc_queue_length (q->jm->alloc),
                       "alloc_pending",
                       (json_int_t)alloc_pending_count (q->jm->alloc),
                       "running", jobmgr_count (q->jm, FLUX_JOB_STATE_RUNNING));
}

static void drop_from (struct list_node *head, const flux_msg_t *msg)
{
    struct list_node *pos, *tmp;

    list_for_each_safe (pos, tmp, head)
    {
        struct qwaiter *w = list_entry (pos, struct qwaiter, link);
        if (flux_msg_route_match_first (w->msg, msg))
            waiter_free (w);
    }
}

void queue_disconnect (struct queue *q, const flux_msg_t *msg)
{
    drop_from (&q->drain, msg);
    drop_from (&q->idle, msg);
}
