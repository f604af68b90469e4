/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* info.c - getattr, getinfo, stats-get, memo, post-event (info.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "libflux/jsonparse.h"
#include "alloc.h"
#include "event.h"
#include "librlist/rlist.h"

#include "info.h"
#include "journal.h"
#include "libeventlog/eventlog.h"
#include "libkvs/kvs.h"
#include "start.h"
#include "wait.h"

static bool known_attr (const char *name)
{
    return !strcmp (name, "jobspec") || !strcmp (name, "R")
           || !strcmp (name, "eventlog");
}

/* An attribute of an active job from memory (NULL with errno). */
static json_t *active_attr (struct job *job, const char *name)
{
    if (!strcmp (name, "jobspec"))
        return job->x->jobspec ? job_jobspec (job->x) : NULL;
    if (!strcmp (name, "R"))
        return json_incref (job->x->R);
    return json_string (job->x->eventlog ? job->x->eventlog : "");
}

static void lookup_continuation (flux_future_t *cf, void *arg)
{
    struct jobmgr *jm = arg;
    const flux_msg_t *msg = flux_future_aux_get (cf, "msg");
    const char *name, *s;
    json_t *o = json_object (), *val;

    for (name = flux_future_first_child (cf); name && o;
         name = flux_future_next_child (cf)) {
        flux_future_t *f = flux_future_get_child (cf, name);
        if (flux_kvs_lookup_get (f, &s) < 0 || !s) {
            jm_respond_error (jm, msg, errno ? errno : ENOENT, "%s: not found",
                              name);
            goto done;
        }
        if (!strcmp (name, "eventlog"))
            val = json_string (s);
        else if ((val = jsonparse (s, strlen (s), NULL, 0))
                 && !strcmp (name, "jobspec")) {
            json_t *r = job_jobspec_redacted (val);
            json_decref (val);
            val = r;
        }
        if (!val || json_object_set_new (o, name, val) < 0) {
            jm_respond_error (jm, msg, EPROTO, "%s: malformed", name);
            goto done;
        }
    }
    if (!o)
        jm_respond_error (jm, msg, ENOMEM, NULL);
    else
        flux_respond_pack (jm->h, msg, "O", o);
done:
    json_decref (o);
    flux_future_destroy (cf);
}

static void msg_free (void *arg)
{
    flux_msg_decref (arg);
}

static void getattr_inactive (struct jobmgr *jm, const flux_msg_t *msg,
                              struct job *job, json_t *attrs)
{
    flux_future_t *cf, *f;
    json_t *a;
    size_t i;
    char key[96];

    if (!(cf = flux_future_wait_all_create ()))
        goto error;
    flux_future_set_flux (cf, jm->h);
    json_array_foreach (attrs, i, a)
    {
        const char *name = json_string_value (a);
        if (flux_future_get_child (cf, name))
            continue;
        if (job_kvs_key (key, sizeof (key), job->id, name) < 0
            || !(f = flux_kvs_lookup (jm->h, NULL, 0, key))
            || flux_future_push (cf, name, f) < 0)
            goto error;
    }
    if (flux_future_aux_set (cf, "msg", (void *)flux_msg_incref (msg), msg_free)
        < 0) {
        flux_msg_decref (msg);
        goto error;
    }
    if (flux_future_then (cf, -1, lookup_continuation, jm) < 0
        || jm_track (jm, cf) < 0)
        goto error;
    return;
error:
    jm_respond_error (jm, msg, errno, "getattr failed");
    flux_future_destroy (cf);
}

void getattr_request (struct jobmgr *jm, const flux_msg_t *msg)
{
    json_int_t id;
    json_t *attrs, *a, *o;
    size_t i;
    struct job *job;

    if (flux_request_unpack (msg, NULL, "{s:I s:o}", "id", &id, "attrs", &attrs)
            < 0
        || !json_is_array (attrs)) {
        jm_respond_error (jm, msg, EPROTO, "malformed getattr request");
        return;
    }
    json_array_foreach (attrs, i, a)
    {
        if (!json_is_string (a) || !known_attr (json_string_value (a))) {
            jm_respond_error (jm, msg, ENOENT, "unknown attribute");
            return;
        }
    }
    if (!(job = jm_job_for_request (jm, msg, (flux_jobid_t)id)))
        return;
    if (!job->x) {
        getattr_inactive (jm, msg, job, attrs);
        return;
    }
    if (!(o = json_object ())) {
        jm_respond_error (jm, msg, ENOMEM, NULL);
        return;
    }
    json_array_foreach (attrs, i, a)
    {
        const char *name = json_string_value (a);
        json_t *val = active_attr (job, name);
        if (!val) {
            jm_respond_error (jm, msg, ENOENT, "%s: not available", name);
            json_decref (o);
            return;
        }
        json_object_set_new (o, name, val);
    }
    flux_respond_pack (jm->h, msg, "O", o);
    json_decref (o);
}

void getinfo_request (struct jobmgr *jm, const flux_msg_t *msg)
{
    flux_respond_pack (jm->h, msg, "{s:I}", "max_jobid",
                       (json_int_t)jm->max_jobid);
}

void resource_status_request (struct jobmgr *jm, const flux_msg_t *msg)
{
    struct rlist *all = NULL;
    struct list_node *pos, *tmp;
    json_t *R = NULL;
    flux_error_t error;

    if (!(all = rlist_create ())) {
        jm_respond_error (jm, msg, ENOMEM, NULL);
        return;
    }
    /* the union of the R of every job holding resources: O(jobs holding
     * resources x their ranks), on demand only */
    list_for_each_safe (pos, tmp, &jm->resources)
    {
        struct jobx *x = list_entry (pos, struct jobx, res_link);
        struct rlist *rl;

        if (!x->R)
            continue;
        if (!(rl = rlist_from_R (x->R, &error))) {
            jm_log (jm, LOG_ERR, "resource-status: a job's R: %s", error.text);
            continue;
        }
        /* partially released ranks are no longer allocated */
        if ((x->js.released && rlist_remove_ranks (rl, x->js.released) < 0)
            || rlist_add (all, rl) < 0) {
            rlist_destroy (rl);
            rlist_destroy (all);
            jm_respond_error (jm, msg, ENOMEM, NULL);
            return;
        }
        rlist_destroy (rl);
    }
    if (!(R = rlist_to_R (all))
        || flux_respond_pack (jm->h, msg, "{s:o}", "allocated", R) < 0)
        jm_log (jm, LOG_ERR, "resource-status: responding: %s",
                strerror (errno));
    rlist_destroy (all);
}

void stats_request (struct jobmgr *jm, const flux_msg_t *msg)
{
    unsigned long commits, max_batch;
    json_t *o;

    event_stats (jm->event, &commits, &max_batch);
    o = json_pack (
        "{s:{s:i s:I} s:i s:i s:I s:{s:{} s:{}}"
        " s:{s:i s:i s:i s:i s:i s:i s:i}"
        " s:o s:o s:{s:I s:I} s:i}",
        "journal", "listeners", journal_listeners (jm->journal), "events",
        (json_int_t)jm->nevents, "active_jobs",
        jobmgr_count (jm, FLUX_JOB_STATE_ACTIVE | FLUX_JOB_STATE_NEW),
        "inactive_jobs", jobmgr_count (jm, FLUX_JOB_STATE_INACTIVE),
        "max_jobid", (json_int_t)jm->max_jobid, "housekeeping", "running",
        "config", "states", "new", jobmgr_count (jm, FLUX_JOB_STATE_NEW),
        "depend", jobmgr_count (jm, FLUX_JOB_STATE_DEPEND), "priority",
        jobmgr_count (jm, FLUX_JOB_STATE_PRIORITY), "sched",
        jobmgr_count (jm, FLUX_JOB_STATE_SCHED), "run",
        jobmgr_count (jm, FLUX_JOB_STATE_RUN), "cleanup",
        jobmgr_count (jm, FLUX_JOB_STATE_CLEANUP), "inactive",
        jobmgr_count (jm, FLUX_JOB_STATE_INACTIVE), "alloc",
        alloc_stats (jm->alloc), "exec", start_stats (jm->start), "kvs",
        "commits", (json_int_t)commits, "max_batch", (json_int_t)max_batch,
        "waiters", wait_count (jm->wait));
    if (!o)
        jm_respond_error (jm, msg, ENOMEM, NULL);
    else
        flux_respond_pack (jm->h, msg, "O", o);
    json_decref (o);
}

void memo_request (struct jobmgr *jm, const flux_msg_t *msg)
{
    json_int_t id;
    json_t *memo;
    int volatile_ = 0;
    struct job *job;
    flux_error_t error;

    if (flux_request_unpack (msg, NULL, "{s:I s:o s?b}", "id", &id, "memo",
                             &memo, "volatile", &volatile_)
            < 0
        || !json_is_object (memo) || json_object_size (memo) == 0) {
        jm_respond_error (jm, msg, EPROTO, "malformed memo request");
        return;
    }
    if (!(job = jm_job_for_request (jm, msg, (flux_jobid_t)id)))
        return;
    if (!job->x) {
        jm_respond_error (jm, msg, EINVAL, "job is inactive");
        return;
    }
    if (event_post (jm, job, "memo", volatile_ ? EVENT_NO_COMMIT : 0, memo,
                    &error)
        < 0) {
        jm_respond_error (jm, msg, errno, "%s", error.text);
        return;
    }
    /* A memo is answered once it is in the job's eventlog (not held with
     * the appends of a running job): a sub-instance posts its uri this
     * way before it runs its initial program, and `flux uri` reads it
     * from the eventlog as soon as that program runs. */
    if (volatile_)
        flux_respond (jm->h, msg, NULL);
    else if (event_respond_after_commit (jm, msg, NULL) < 0)
        jm_respond_error (jm, msg, errno, NULL);
}

static bool postable (const char *name)
{
    static const char *names[] = {
        "prolog-start",   "prolog-finish",     "epilog-start", "epilog-finish",
        "dependency-add", "dependency-remove", "set-flags",    NULL,
    };
    if (!strncmp (name, "debug.", 6) && name[6] != '\0')
        return true;
    for (int i = 0; names[i]; i++) {
        if (!strcmp (names[i], name))
            return true;
    }
    return false;
}

void post_event_request (struct jobmgr *jm, const flux_msg_t *msg)
{
    json_int_t id;
    const char *name;
    json_t *context = NULL;
    struct job *job;
    flux_error_t error;

    if (flux_request_unpack (msg, NULL, "{s:I s:s s?o}", "id", &id, "name",
                             &name, "context", &context)
            < 0
        || (context && !json_is_object (context))) {
        jm_respond_error (jm, msg, EPROTO, "malformed post-event request");
        return;
    }
    if (!postable (name)) {
        jm_respond_error (jm, msg, EINVAL, "event %s may not be posted", name);
        return;
    }
    if (!(job = jobtab_lookup (jm->jobs, (flux_jobid_t)id)) || !job->x) {
        jm_respond_error (jm, msg, ENOENT, "unknown or inactive job id");
        return;
    }
    if (event_post (jm, job, name, 0, context, &error) < 0) {
        jm_respond_error (jm, msg, errno, "%s", error.text);
        return;
    }
    flux_respond (jm->h, msg, NULL);
}
