/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* purge.c - purging inactive jobs (see purge.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "event.h"
#include "history.h"
#include "purge.h"

#define PURGE_BATCH_MAX 10000

struct purged {
    const flux_msg_t *msg;
    json_t *ids;
};

static void published (flux_future_t *f, void *arg)
{
    struct jobmgr *jm = arg;

    if (flux_future_get (f, NULL) < 0)
        jm_log (jm, LOG_ERR, "publish job-purge-inactive: %s",
                future_strerror (f, errno));
    flux_future_destroy (f);
}

/* The removals are committed: announce them, then answer. */
static void committed (struct jobmgr *jm, void *arg, int errnum)
{
    struct purged *p = arg;
    flux_future_t *f;

    if (errnum)
        flux_respond_error (jm->h, p->msg, errnum, "purge commit failed");
    else {
        if (!(f = flux_event_publish_pack (jm->h, "job-purge-inactive", 0,
                                           "{s:O}", "jobs", p->ids))
            || flux_future_then (f, -1, published, jm) < 0
            || jm_track (jm, f) < 0) {
            jm_log (jm, LOG_ERR, "publish job-purge-inactive: %s",
                    strerror (errno));
            flux_future_destroy (f);
        }
        flux_respond_pack (jm->h, p->msg, "{s:i}", "count",
                           (int)json_array_size (p->ids));
    }
    flux_msg_decref (p->msg);
    json_decref (p->ids);
    free (p);
}

static int purge_job (struct jobmgr *jm, struct job *job, json_t *ids)
{
    char key[64];

    if (job_kvs_key (key, sizeof (key), job->id, NULL) < 0
        || event_kvs_put (jm, key, NULL) < 0
        || json_array_append_new (ids, json_integer ((json_int_t)job->id)) < 0)
        return -1;
    jobmgr_state_count (jm, FLUX_JOB_STATE_INACTIVE, -1);
    jobtab_remove (jm->jobs, job);
    history_remove (jm->history, job);
    job_destroy (job);
    return 0;
}

static void finish (struct jobmgr *jm, const flux_msg_t *msg, json_t *ids)
{
    struct purged *p;

    if (!(p = calloc (1, sizeof (*p)))) {
        jm_respond_error (jm, msg, ENOMEM, NULL);
        json_decref (ids);
        return;
    }
    p->msg = flux_msg_incref (msg);
    p->ids = ids;
    if (event_after_commit (jm, committed, p) < 0) {
        jm_respond_error (jm, msg, ENOMEM, NULL);
        flux_msg_decref (p->msg);
        json_decref (ids);
        free (p);
    }
}

void purge_request (struct jobmgr *jm, const flux_msg_t *msg)
{
    double age_limit = -1, now;
    int num_limit = -1, batch = 50, force = 0, count = 0;
    struct job *job, *next;
    struct timespec ts;
    size_t inactive;
    json_t *ids;

    if (flux_request_unpack (msg, NULL, "{s?F s?i s?i s?b}", "age_limit",
                             &age_limit, "num_limit", &num_limit, "batch",
                             &batch, "force", &force)
        < 0) {
        jm_respond_error (jm, msg, EPROTO, "malformed purge request");
        return;
    }
    if (batch < 1 || batch > PURGE_BATCH_MAX) {
        jm_respond_error (jm, msg, EINVAL, "batch must be in range 1-%d",
                          PURGE_BATCH_MAX);
        return;
    }
    if (!(ids = json_array ())) {
        jm_respond_error (jm, msg, ENOMEM, NULL);
        return;
    }
    clock_gettime (CLOCK_REALTIME, &ts);
    now = ts.tv_sec + ts.tv_nsec * 1e-9;
    inactive = jobtab_inactive_count (jm->jobs);
    for (job = jobtab_inactive_first (jm->jobs); job && count < batch;
         job = next) {
        next = jobtab_inactive_next (jm->jobs, job);
        bool old = age_limit >= 0 && now - job->t_inactive > age_limit;
        bool many
            = num_limit >= 0 && inactive - (size_t)count > (size_t)num_limit;
        if (!old && !many)
            break;
        if (force && purge_job (jm, job, ids) < 0) {
            jm_respond_error (jm, msg, errno, "purge failed");
            json_decref (ids);
            return;
        }
        count++;
    }
    if (!force) {
        json_decref (ids);
        flux_respond_pack (jm->h, msg, "{s:i}", "count", count);
        return;
    }
    finish (jm, msg, ids);
}

void purge_id_request (struct jobmgr *jm, const flux_msg_t *msg)
{
    json_int_t id;
    int force = 0;
    struct job *job;
    json_t *ids;

    if (flux_request_unpack (msg, NULL, "{s:I s?b}", "id", &id, "force", &force)
        < 0) {
        jm_respond_error (jm, msg, EPROTO, "malformed purge-id request");
        return;
    }
    if (!(job = jobtab_lookup (jm->jobs, (flux_jobid_t)id))) {
        jm_respond_error (jm, msg, ENOENT, "unknown job id");
        return;
    }
    if (job->x) {
        jm_respond_error (jm, msg, EINVAL, "cannot purge an active job");
        return;
    }
    if (!force) {
        flux_respond_pack (jm->h, msg, "{s:i}", "count", 1);
        return;
    }
    if (!(ids = json_array ()) || purge_job (jm, job, ids) < 0) {
        jm_respond_error (jm, msg, errno ? errno : ENOMEM, "purge failed");
        json_decref (ids);
        return;
    }
    finish (jm, msg, ids);
}
