/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* urgency.c - job-manager.urgency and priority assignment (urgency.h). */
#include <errno.h>

#include "event.h"
#include "urgency.h"

int64_t priority_calc (int urgency)
{
    if (urgency <= FLUX_JOB_URGENCY_HOLD)
        return FLUX_JOB_PRIORITY_MIN;
    if (urgency >= FLUX_JOB_URGENCY_EXPEDITE)
        return FLUX_JOB_PRIORITY_MAX;
    return urgency;
}

void priority_assign (struct jobmgr *jm, struct job *job)
{
    struct jobstate *js = &job->x->js;
    int64_t priority = priority_calc (js->urgency);

    if (js->state == FLUX_JOB_STATE_PRIORITY
        || (js->state == FLUX_JOB_STATE_SCHED && js->priority != priority))
        (void)event_post_pack (jm, job, "priority", 0, "{s:I}", "priority",
                               (json_int_t)priority);
}

void urgency_request (struct jobmgr *jm, const flux_msg_t *msg)
{
    json_int_t id;
    int urgency, old;
    struct flux_msg_cred cred;
    struct job *job;

    if (flux_request_unpack (msg, NULL, "{s:I s:i}", "id", &id, "urgency",
                             &urgency)
            < 0
        || flux_msg_get_cred (msg, &cred) < 0) {
        jm_respond_error (jm, msg, EPROTO, "malformed urgency request");
        return;
    }
    if (urgency < FLUX_JOB_URGENCY_MIN || urgency > FLUX_JOB_URGENCY_MAX) {
        jm_respond_error (jm, msg, EINVAL, "urgency must be in range 0-31");
        return;
    }
    if (!(job = jobtab_lookup (jm->jobs, (flux_jobid_t)id))) {
        jm_respond_error (jm, msg, EINVAL, "unknown job id");
        return;
    }
    if (flux_msg_cred_authorize (cred, job->userid) < 0) {
        jm_respond_error (jm, msg, EPERM,
                          "guests may only change the"
                          " urgency of their own jobs");
        return;
    }
    if (!job->x) {
        jm_respond_error (jm, msg, EINVAL, "job is inactive");
        return;
    }
    old = job->x->js.urgency;
    if (!(cred.rolemask & FLUX_ROLE_OWNER) && urgency > FLUX_JOB_URGENCY_DEFAULT
        && urgency > old) {
        jm_respond_error (jm, msg, EPERM,
                          "guests may only set urgency in range 0-%d",
                          FLUX_JOB_URGENCY_DEFAULT);
        return;
    }
    if (job->x->js.has_resources || !(job->state & FLUX_JOB_STATE_PENDING)) {
        jm_respond_error (jm, msg, EINVAL,
                          "urgency cannot be changed once resources are"
                          " allocated");
        return;
    }
    if (event_post_pack (jm, job, "urgency", 0, "{s:i s:i}", "urgency", urgency,
                         "userid", (int)cred.userid)
        < 0) {
        jm_respond_error (jm, msg, errno, "failed to post urgency event");
        return;
    }
    flux_respond_pack (jm->h, msg, "{s:i}", "old_urgency", old);
}
