/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* update.c - jobspec and expiration updates (see update.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "update.h"

static int check_updates (json_t *updates, bool *duration, double *value,
                          flux_error_t *error)
{
    const char *key;
    json_t *val;

    *duration = false;
    json_object_foreach (updates, key, val)
    {
        if (!strcmp (key, "attributes.system.duration")) {
            if (!json_is_number (val) || json_number_value (val) < 0
                || !isfinite (json_number_value (val))) {
                errno = EINVAL;
                return errprintf (error, "duration must be a number of"
                                         " seconds >= 0");
            }
            *duration = true;
            *value = json_number_value (val);
        }
        else if (!strcmp (key, "attributes.system.job.name")) {
            if (!json_is_string (val) || !*json_string_value (val)) {
                errno = EINVAL;
                return errprintf (error, "job name must be a non-empty"
                                         " string");
            }
        }
        else if (strncmp (key, "attributes.user.", 16) != 0 || !key[16]
                 || strstr (key, "..") || key[strlen (key) - 1] == '.') {
            errno = EINVAL;
            return errprintf (error, "updating %s is not supported", key);
        }
    }
    return 0;
}

/* The job's current duration (0: unlimited), from its jobspec. */
static double current_duration (struct job *job)
{
    json_t *jobspec = job_jobspec (job->x);
    double d = 0;

    (void)json_unpack (jobspec, "{s:{s:{s:F}}}", "attributes", "system",
                       "duration", &d);
    json_decref (jobspec);
    return d;
}

/* A guest may shorten its job, not lengthen it nor make it unlimited
 * (that is the instance owner's call).  -1 with error set if refused. */
static int check_limits (struct jobmgr *jm, const flux_msg_t *msg,
                         struct job *job, double value, flux_error_t *error)
{
    double cur;

    if (jm_is_owner (msg))
        return 0;
    cur = current_duration (job);
    if (value == 0 && cur > 0)
        return errprintf (error, "only the instance owner may make a job's"
                                 " duration unlimited");
    if (cur > 0 && value > cur)
        return errprintf (error,
                          "only the instance owner may increase a job's"
                          " duration (now %gs)",
                          cur);
    return 0;
}

struct expiration {
    struct jobmgr *jm;
    const flux_msg_t *msg;
    flux_jobid_t id;
    double expiration;
    json_t *updates;
};

static void expiration_free (void *arg)
{
    struct expiration *e = arg;

    flux_msg_decref (e->msg);
    json_decref (e->updates);
    free (e);
}

static void expiration_continuation (flux_future_t *f, void *arg)
{
    struct expiration *e = arg;
    struct job *job;
    flux_error_t error;

    if (flux_future_get (f, NULL) < 0 && errno != ENOSYS) {
        jm_respond_error (e->jm, e->msg, errno, "sched.expiration: %s",
                          future_strerror (f, errno));
        goto done;
    }
    if (!(job = jobtab_lookup (e->jm->jobs, e->id)) || !job->x
        || !job->x->js.has_resources) {
        jm_respond_error (e->jm, e->msg, EINVAL, "job no longer runs");
        goto done;
    }
    if (event_post_pack (e->jm, job, "resource-update", 0, "{s:f}",
                         "expiration", e->expiration)
            < 0
        || event_post (e->jm, job, "jobspec-update", 0, e->updates, &error)
               < 0) {
        jm_respond_error (e->jm, e->msg, errno, "update failed");
        goto done;
    }
    flux_respond (e->jm->h, e->msg, NULL);
done:
    flux_future_destroy (f); /* frees e */
}

static void update_running (struct jobmgr *jm, const flux_msg_t *msg,
                            struct job *job, json_t *updates, double duration)
{
    double starttime = 0;
    struct expiration *e;
    flux_future_t *f;

    (void)json_unpack (job->x->R, "{s:{s:F}}", "execution", "starttime",
                       &starttime);
    if (!(e = calloc (1, sizeof (*e)))) {
        jm_respond_error (jm, msg, ENOMEM, NULL);
        return;
    }
    e->jm = jm;
    e->msg = flux_msg_incref (msg);
    e->id = job->id;
    e->expiration = duration > 0 ? starttime + duration : 0;
    e->updates = json_incref (updates);
    if (!(f = flux_rpc_pack (jm->h, "sched.expiration", FLUX_NODEID_ANY, 0,
                             "{s:I s:f}", "id", (json_int_t)job->id,
                             "expiration", e->expiration))
        || flux_future_aux_set (f, "expiration", e, expiration_free) < 0) {
        jm_respond_error (jm, msg, errno, "sched.expiration failed");
        flux_future_destroy (f);
        expiration_free (e);
        return;
    }
    if (flux_future_then (f, -1, expiration_continuation, e) < 0
        || jm_track (jm, f) < 0) {
        jm_respond_error (jm, msg, errno, "sched.expiration failed");
        flux_future_destroy (f);
    }
}

void update_request (struct jobmgr *jm, const flux_msg_t *msg)
{
    json_int_t id;
    json_t *updates;
    struct job *job;
    flux_error_t error;
    bool duration;
    double value = 0;

    if (flux_request_unpack (msg, NULL, "{s:I s:o}", "id", &id, "updates",
                             &updates)
            < 0
        || !json_is_object (updates) || json_object_size (updates) == 0) {
        jm_respond_error (jm, msg, EPROTO, "malformed update request");
        return;
    }
    if (check_updates (updates, &duration, &value, &error) < 0) {
        jm_respond_error (jm, msg, EINVAL, "%s", error.text);
        return;
    }
    if (!(job = jm_job_for_request (jm, msg, (flux_jobid_t)id)))
        return;
    if (job->x && duration && check_limits (jm, msg, job, value, &error) < 0) {
        jm_respond_error (jm, msg, EPERM, "%s", error.text);
        return;
    }
    if (job->x && (job->state & FLUX_JOB_STATE_PENDING)) {
        if (event_post (jm, job, "jobspec-update", 0, updates, &error) < 0)
            jm_respond_error (jm, msg, errno, "%s", error.text);
        else
            flux_respond (jm->h, msg, NULL);
        return;
    }
    if (!job->x || job->state != FLUX_JOB_STATE_RUN || !duration
        || json_object_size (updates) != 1) {
        jm_respond_error (jm, msg, EINVAL,
                          "only the duration of a running"
                          " job may be updated");
        return;
    }
    if (!jm_is_owner (msg)) {
        jm_respond_error (jm, msg, EPERM,
                          "only the instance owner may"
                          " update a running job");
        return;
    }
    update_running (jm, msg, job, updates, value);
}
