/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* action.c - the job manager's reaction to each event (see action.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "action.h"
#include "alloc.h"
#include "depend.h"
#include "event.h"
#include "history.h"
#include "purge.h"
#include "start.h"
#include "urgency.h"
#include "wait.h"

int action_raise (struct jobmgr *jm, struct job *job, const char *type,
                  int severity, uint32_t userid, const char *note)
{
    if (userid != FLUX_USERID_UNKNOWN && userid != jm->owner)
        return event_post_pack (jm, job, "exception", 0, "{s:s s:i s:i s:s}",
                                "type", type, "severity", severity, "userid",
                                (int)userid, "note", note ? note : "");
    return event_post_pack (jm, job, "exception", 0, "{s:s s:i s:s}", "type",
                            type, "severity", severity, "note",
                            note ? note : "");
}

void action_cleanup (struct jobmgr *jm, struct job *job)
{
    struct jobx *x = job->x;

    if (!x || x->js.state != FLUX_JOB_STATE_CLEANUP)
        return;
    if (x->alloc_pending) {
        alloc_cancel (jm->alloc, job);
        return; /* the CANCEL (or SUCCESS) response comes back here */
    }
    if (x->alloc_lookup)
        return; /* allocated: R is being read, the alloc event follows */
    if (x->start_pending)
        return; /* the exec service ends with a final release */
    if (x->js.started && !x->js.release_final && x->js.has_resources)
        return; /* started before a restart: the exec service releases */
    if (x->js.prolog_active > 0 || x->js.epilog_active > 0)
        return;
    if (x->js.has_resources) {
        alloc_free (jm->alloc, job);
        return; /* the free event comes back here */
    }
    (void)event_post (jm, job, "clean", 0, NULL, NULL);
}

/* The job left state 'prev' (to CLEANUP, by an exception). */
static void leave_state (struct jobmgr *jm, struct job *job, int prev)
{
    switch (prev) {
        case FLUX_JOB_STATE_DEPEND:
            depend_cancel (jm->depend, job);
            break;
        case FLUX_JOB_STATE_SCHED:
            alloc_dequeue (jm->alloc, job);
            break;
    }
}

/* The job is INACTIVE: tell those waiting, then keep only its record. */
static void job_inactive (struct jobmgr *jm, struct job *job)
{
    depend_notify (jm->depend, job, FLUX_JOB_STATE_INACTIVE);
    depend_cancel (jm->depend, job);
    if (list_attached (&job->x->res_link))
        list_del (&job->x->res_link);
    if (job->x->js.invalid) {
        char key[64];
        /* RFC 21: the job, eventlog included, is removed at once */
        if (job_kvs_key (key, sizeof (key), job->id, NULL) == 0)
            (void)event_kvs_put (jm, key, NULL);
        jobmgr_state_count (jm, FLUX_JOB_STATE_INACTIVE, -1);
        jobtab_remove (jm->jobs, job);
        history_remove (jm->history, job);
        list_add_tail (&jm->doomed, &job->ilink);
        return;
    }
    wait_inactive (jm->wait, job);
    job_compact (job);
    jobtab_inactive_add (jm->jobs, job);
    purge_inactive_added (jm->purge);
}

static void publish_cb (flux_future_t *f, void *arg)
{
    struct jobmgr *jm = arg;

    if (flux_future_get (f, NULL) < 0)
        jm_log (jm, LOG_ERR, "publish job-exception: %s",
                future_strerror (f, errno));
    flux_future_destroy (f);
}

/* Tell the instance (job-exec, shells) about an exception. */
static void publish_exception (struct jobmgr *jm, struct job *job,
                               json_t *context)
{
    const char *type = "";
    int severity = 0, wait_status = -1;
    flux_future_t *f;

    (void)json_unpack (context, "{s:s s:i s?i}", "type", &type, "severity",
                       &severity, "wait_status", &wait_status);
    if (wait_status >= 0)
        f = flux_event_publish_pack (
            jm->h, "job-exception", 0, "{s:I s:s s:i s:i}", "id",
            (json_int_t)job->id, "type", type, "severity", severity,
            "wait_status", wait_status);
    else
        f = flux_event_publish_pack (jm->h, "job-exception", 0, "{s:I s:s s:i}",
                                     "id", (json_int_t)job->id, "type", type,
                                     "severity", severity);
    if (!f || flux_future_then (f, -1, publish_cb, jm) < 0
        || jm_track (jm, f) < 0) {
        jm_log (jm, LOG_ERR, "publish job-exception: %s", strerror (errno));
        flux_future_destroy (f);
    }
}

/* A prolog or epilog finished: a failure is a fatal exception. */
static void perilog_finished (struct jobmgr *jm, struct job *job,
                              json_t *context, const char *type)
{
    int status = 0;
    const char *desc = "";
    char note[256];

    (void)json_unpack (context, "{s:s s:i}", "description", &desc, "status",
                       &status);
    if (status == 0)
        return;
    snprintf (note, sizeof (note), "%s %s failed with status=%d", type, desc,
              status);
    (void)action_raise (jm, job, type, 0, FLUX_USERID_UNKNOWN, note);
}

static void enter_state (struct jobmgr *jm, struct job *job, int prev)
{
    switch (job->x->js.state) {
        case FLUX_JOB_STATE_DEPEND:
            depend_check (jm->depend, job);
            break;
        case FLUX_JOB_STATE_PRIORITY:
            if (prev == FLUX_JOB_STATE_SCHED)
                alloc_dequeue (jm->alloc, job);
            priority_assign (jm, job);
            break;
        case FLUX_JOB_STATE_SCHED:
            alloc_enqueue (jm->alloc, job);
            break;
        case FLUX_JOB_STATE_RUN:
            start_check (jm->start, job);
            break;
        case FLUX_JOB_STATE_CLEANUP:
            leave_state (jm, job, prev);
            action_cleanup (jm, job);
            break;
        case FLUX_JOB_STATE_INACTIVE:
            job_inactive (jm, job);
            break;
    }
}

void action_event (struct jobmgr *jm, struct job *job, const char *name,
                   json_t *context, int prev_state)
{
    struct jobx *x = job->x;
    int state = x->js.state;

    if (!strcmp (name, "exception"))
        publish_exception (jm, job, context);
    else if (!strcmp (name, "alloc")) {
        if (!list_attached (&x->res_link))
            list_add_tail (&jm->resources, &x->res_link);
    }
    else if (!strcmp (name, "free")) {
        if (list_attached (&x->res_link))
            list_del (&x->res_link);
    }
    else if (!strcmp (name, "release")) {
        const char *ranks;
        int final = 1;
        if (json_unpack (context, "{s:s s:b}", "ranks", &ranks, "final", &final)
                == 0
            && !final)
            alloc_release (jm->alloc, job, ranks);
    }
    else if (!strcmp (name, "start"))
        depend_notify (jm->depend, job, FLUX_JOB_STATE_RUN);
    else if (!strcmp (name, "set-flags"))
        wait_flags_changed (jm->wait, job);
    else if (!strcmp (name, "jobspec-update") && x->jobspec) {
        if (job_jobspec_apply (x, context) < 0)
            jm_log (jm, LOG_ERR, "%ju: jobspec-update: %s", (uintmax_t)job->id,
                    strerror (errno));
    }
    else if (!strcmp (name, "resource-update")) {
        json_t *exec = json_object_get (x->R, "execution");
        if (exec)
            (void)json_object_set (exec, "expiration",
                                   json_object_get (context, "expiration"));
    }
    if (state != prev_state) {
        enter_state (jm, job, prev_state);
        return;
    }
    /* events that keep the state */
    if (!strcmp (name, "priority"))
        alloc_reprioritize (jm->alloc, job);
    else if (!strcmp (name, "urgency")) {
        if (state == FLUX_JOB_STATE_SCHED)
            priority_assign (jm, job);
    }
    else if (!strcmp (name, "dependency-remove")) {
        if (state == FLUX_JOB_STATE_DEPEND)
            depend_check (jm->depend, job);
    }
    else if (!strcmp (name, "prolog-finish")) {
        perilog_finished (jm, job, context, "prolog");
        if (job->x && job->x->js.state == FLUX_JOB_STATE_RUN)
            start_check (jm->start, job);
        else
            action_cleanup (jm, job);
    }
    else if (!strcmp (name, "epilog-finish")) {
        perilog_finished (jm, job, context, "epilog");
        action_cleanup (jm, job);
    }
    else if (!strcmp (name, "alloc") || !strcmp (name, "release")
             || !strcmp (name, "free"))
        action_cleanup (jm, job);
}
