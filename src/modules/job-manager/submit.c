/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* submit.c - new jobs from job-ingest (see submit.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "event.h"
#include "history.h"
#include "libeventlog/eventlog.h"
#include "queue.h"
#include "submit.h"
#include "wait.h"

struct entry {
    json_int_t id;
    int userid, urgency, flags;
    double t_submit;
    json_t *jobspec;
};

static int cmp_id (const void *a, const void *b)
{
    const struct entry *ea = a, *eb = b;

    if (ea->id == eb->id)
        return 0;
    return (uint64_t)ea->id < (uint64_t)eb->id ? -1 : 1;
}

/* Decode and check the whole batch.  -1 with the reason in error. */
static int decode (struct jobmgr *jm, json_t *jobs, struct entry *e,
                   flux_error_t *error)
{
    size_t i, n = json_array_size (jobs);
    json_t *o;
    struct entry *sorted;

    json_array_foreach (jobs, i, o)
    {
        if (json_unpack (o, "{s:I s:i s:i s:F s:i s:o}", "id", &e[i].id,
                         "userid", &e[i].userid, "urgency", &e[i].urgency,
                         "t_submit", &e[i].t_submit, "flags", &e[i].flags,
                         "jobspec", &e[i].jobspec)
                < 0
            || !json_is_object (e[i].jobspec) || e[i].userid < 0
            || e[i].t_submit <= 0) {
            errno = EPROTO;
            return errprintf (error, "jobs[%zu] is malformed", i);
        }
        if (e[i].urgency < FLUX_JOB_URGENCY_MIN
            || e[i].urgency > FLUX_JOB_URGENCY_MAX) {
            errno = EPROTO;
            return errprintf (error, "jobs[%zu]: urgency is out of range", i);
        }
        if (jobtab_lookup (jm->jobs, (flux_jobid_t)e[i].id)) {
            errno = EEXIST;
            return errprintf (error, "job %ju already exists",
                              (uintmax_t)e[i].id);
        }
    }
    if (!(sorted = malloc (n * sizeof (*sorted)))) {
        errno = ENOMEM;
        return errprintf (error, "out of memory");
    }
    memcpy (sorted, e, n * sizeof (*sorted));
    qsort (sorted, n, sizeof (*sorted), cmp_id);
    for (i = 1; i < n; i++) {
        if (sorted[i].id == sorted[i - 1].id) {
            uintmax_t dup = (uintmax_t)sorted[i].id;
            free (sorted);
            errno = EEXIST;
            return errprintf (error, "job %ju appears twice", dup);
        }
    }
    free (sorted);
    return 0;
}

/* Add one checked job: journal its submit event, then validate it. */
static int add_job (struct jobmgr *jm, struct entry *e)
{
    struct job *job;
    json_t *entry;
    flux_error_t error;

    if (!(job = job_create ((flux_jobid_t)e->id)))
        return -1;
    job->userid = (uint32_t)e->userid;
    job->t_submit = e->t_submit;
    if (job_jobspec_set (job->x, jm->strings, e->jobspec) < 0
        || jobtab_insert (jm->jobs, job) < 0) {
        job_destroy (job);
        return -1;
    }
    history_add (jm->history, job);
    if ((flux_jobid_t)e->id > jm->max_jobid)
        jm->max_jobid = (flux_jobid_t)e->id;
    entry = eventlog_entry_pack (e->t_submit, "submit", "{s:i s:i s:i s:i}",
                                 "urgency", e->urgency, "userid", e->userid,
                                 "flags", e->flags, "version", 1);
    if (!entry
        || event_post_entry (jm, job, entry, EVENT_NO_COMMIT, &error) < 0) {
        json_decref (entry);
        jobtab_remove (jm->jobs, job);
        history_remove (jm->history, job);
        job_destroy (job);
        return -1;
    }
    json_decref (entry);
    wait_flags_changed (jm->wait, job);
    return event_post (jm, job, "validate", 0, NULL, NULL);
}

void submit_request (struct jobmgr *jm, const flux_msg_t *msg)
{
    json_t *jobs;
    struct entry *e;
    flux_error_t error;
    const char *reason;
    size_t i, n;

    if (flux_request_unpack (msg, NULL, "{s:o}", "jobs", &jobs) < 0
        || !json_is_array (jobs) || (n = json_array_size (jobs)) == 0) {
        jm_respond_error (jm, msg, EPROTO, "malformed submit request");
        return;
    }
    if ((reason = queue_disabled_reason (jm->queue))) {
        jm_respond_error (jm, msg, EINVAL, "job submission is disabled: %s",
                          reason);
        return;
    }
    if (!(e = calloc (n, sizeof (*e)))) {
        jm_respond_error (jm, msg, ENOMEM, NULL);
        return;
    }
    if (decode (jm, jobs, e, &error) < 0) {
        jm_respond_error (jm, msg, errno, "%s", error.text);
        free (e);
        return;
    }
    for (i = 0; i < n; i++) {
        if (add_job (jm, &e[i]) < 0)
            jm_log (jm, LOG_ERR, "submit %ju: %s", (uintmax_t)e[i].id,
                    strerror (errno));
    }
    free (e);
    flux_respond (jm->h, msg, NULL);
}
