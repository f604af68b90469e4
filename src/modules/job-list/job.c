/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* job.c - per-job state from RFC 21 events (see job.h).
 *
 * States only move forward (NEW < DEPEND < ... < INACTIVE, the bit
 * values are ordered), except flux-restart, which takes a SCHED job
 * back to PRIORITY.  A severity 0 exception or finish moves an active
 * job to CLEANUP; clean makes it INACTIVE and fixes its result.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "libeventlog/eventlog.h"

struct job *job_create (flux_jobid_t id)
{
    struct job *job;

    if (!(job = calloc (1, sizeof (*job))))
        return NULL;
    job->id = id;
    job->userid = FLUX_USERID_UNKNOWN;
    job->urgency = -1;
    job->priority = -1;
    job->state = FLUX_JOB_STATE_NEW;
    job->states_mask = FLUX_JOB_STATE_NEW;
    job->ntasks = job->ncores = job->nnodes = -1;
    job->duration = -1.;
    job->expiration = -1.;
    job->waitstatus = -1;
    return job;
}

void job_destroy (struct job *job, strpool_t *pool)
{
    if (job) {
        int saved_errno = errno;
        strpool_put (pool, job->name);
        strpool_put (pool, job->cwd);
        strpool_put (pool, job->queue);
        strpool_put (pool, job->project);
        strpool_put (pool, job->bank);
        strpool_put (pool, job->ranks);
        strpool_put (pool, job->nodelist);
        strpool_put (pool, job->exception_type);
        free (job->exception_note);
        free (job->annotations);
        json_decref (job->dependencies);
        free (job);
        errno = saved_errno;
    }
}

static void set_state (struct job *job, int state, double t)
{
    job->state = state;
    job->states_mask |= state;
    switch (state) {
        case FLUX_JOB_STATE_DEPEND:
            job->t_depend = t;
            break;
        case FLUX_JOB_STATE_PRIORITY:
            if (job->t_priority == 0.)
                job->t_priority = t;
            break;
        case FLUX_JOB_STATE_SCHED:
            if (job->t_sched == 0.)
                job->t_sched = t;
            break;
        case FLUX_JOB_STATE_RUN:
            job->t_run = t;
            break;
        case FLUX_JOB_STATE_CLEANUP:
            job->t_cleanup = t;
            break;
        case FLUX_JOB_STATE_INACTIVE:
            job->t_inactive = t;
            break;
    }
}

/* Move forward to state (no-op if the job is already there or past). */
static void advance (struct job *job, int state, double t)
{
    if (state > job->state)
        set_state (job, state, t);
}

static void finish_result (struct job *job)
{
    bool fatal = job->exception_occurred && job->exception_severity == 0;

    job->success = job->waitstatus == 0 && !fatal;
    if (job->success)
        job->result = FLUX_JOB_RESULT_COMPLETED;
    else if (fatal && !strcmp (job->exception_type, "cancel"))
        job->result = FLUX_JOB_RESULT_CANCELED;
    else if (fatal && !strcmp (job->exception_type, "timeout"))
        job->result = FLUX_JOB_RESULT_TIMEOUT;
    else
        job->result = FLUX_JOB_RESULT_FAILED;
}

static int bad_context (flux_error_t *error, const char *name, const char *what)
{
    errprintf (error, "%s event: %s", name, what);
    errno = EPROTO;
    return -1;
}

static int exception_event (struct job *job, strpool_t *pool, double t,
                            json_t *c, flux_error_t *error)
{
    const char *type, *note = "", *pooled;
    char *cpy;
    int severity;

    if (!c
        || json_unpack (c, "{s:s s:i s?s}", "type", &type, "severity",
                        &severity, "note", &note)
               < 0
        || severity < 0 || severity > 7)
        return bad_context (error, "exception",
                            "context needs type:s, severity:i 0-7, note?:s");
    /* keep the most severe, the first of equals */
    if (!job->exception_occurred || severity < job->exception_severity) {
        if (!(pooled = strpool_get (pool, type)))
            return -1;
        if (!(cpy = strdup (note))) {
            strpool_put (pool, pooled);
            return -1;
        }
        strpool_put (pool, job->exception_type);
        free (job->exception_note);
        job->exception_type = pooled;
        job->exception_note = cpy;
        job->exception_severity = severity;
        job->exception_occurred = true;
    }
    if (severity == 0 && job->state < FLUX_JOB_STATE_CLEANUP)
        set_state (job, FLUX_JOB_STATE_CLEANUP, t);
    return JOB_EVENT_APPLIED;
}

/* Keep a (an object, or NULL) as the job's annotations text. */
static int annotations_set (struct job *job, const json_t *a)
{
    char *s = NULL;

    if (a && json_object_size (a) > 0 && !(s = json_dumps (a, JSON_COMPACT))) {
        errno = ENOMEM;
        return -1;
    }
    free (job->annotations);
    job->annotations = s;
    return 0;
}

static int annotations_event (struct job *job, json_t *c, flux_error_t *error)
{
    json_t *a;

    if (!c || json_unpack (c, "{s:o}", "annotations", &a) < 0
        || !(json_is_object (a) || json_is_null (a)))
        return bad_context (error, "annotations",
                            "context needs annotations:object|null");
    if (annotations_set (job, json_is_object (a) ? a : NULL) < 0)
        return -1;
    return JOB_EVENT_APPLIED;
}

/* memo: merge the context into annotations.user; null deletes a key. */
static int memo_event (struct job *job, json_t *c, flux_error_t *error)
{
    json_t *a, *user, *value;
    const char *key;

    if (!c || !json_is_object (c))
        return bad_context (error, "memo", "context must be an object");
    a = job->annotations ? json_loads (job->annotations, 0, NULL)
                         : json_object ();
    if (!a)
        goto nomem;
    user = json_object_get (a, "user");
    if (!json_is_object (user)) {
        if (json_object_set_new (a, "user", (user = json_object ())) < 0
            || !user)
            goto nomem;
    }
    json_object_foreach (c, key, value)
    {
        if (json_is_null (value))
            (void)json_object_del (user, key);
        else if (json_object_set (user, key, value) < 0)
            goto nomem;
    }
    if (json_object_size (user) == 0)
        (void)json_object_del (a, "user");
    if (annotations_set (job, a) < 0)
        goto nomem;
    json_decref (a);
    return JOB_EVENT_APPLIED;
nomem:
    json_decref (a);
    errno = ENOMEM;
    return -1;
}

static int dependency_event (struct job *job, const char *name, json_t *c,
                             flux_error_t *error)
{
    const char *desc;
    bool add = !strcmp (name, "dependency-add");
    size_t i;
    json_t *v;

    if (!c || json_unpack (c, "{s:s}", "description", &desc) < 0)
        return bad_context (error, name, "context needs description:s");
    if (!job->dependencies && !(job->dependencies = json_array ())) {
        errno = ENOMEM;
        return -1;
    }
    json_array_foreach (job->dependencies, i, v)
    {
        if (!strcmp (json_string_value (v), desc)) {
            if (!add)
                (void)json_array_remove (job->dependencies, i);
            return JOB_EVENT_APPLIED;
        }
    }
    if (add
        && json_array_append_new (job->dependencies, json_string (desc)) < 0) {
        errno = ENOMEM;
        return -1;
    }
    return JOB_EVENT_APPLIED;
}

int job_apply_event (struct job *job, strpool_t *pool, json_t *entry,
                     flux_error_t *error)
{
    double t;
    const char *name;
    json_t *c = NULL;
    int i, status;
    json_int_t prio;

    if (eventlog_entry_parse (entry, &t, &name, &c) < 0) {
        errprintf (error, "malformed eventlog entry");
        errno = EPROTO;
        return -1;
    }
    if (!strcmp (name, "submit")) {
        if (!c
            || json_unpack (c, "{s:i s:i}", "userid", &i, "urgency", &status)
                   < 0)
            return bad_context (error, name,
                                "context needs userid:i, urgency:i");
        job->userid = (uint32_t)i;
        job->urgency = status;
        job->t_submit = t;
    }
    else if (!strcmp (name, "validate"))
        advance (job, FLUX_JOB_STATE_DEPEND, t);
    else if (!strcmp (name, "invalidate"))
        return JOB_EVENT_INVALIDATE;
    else if (!strcmp (name, "depend"))
        advance (job, FLUX_JOB_STATE_PRIORITY, t);
    else if (!strcmp (name, "priority")) {
        if (!c || json_unpack (c, "{s:I}", "priority", &prio) < 0 || prio < 0
            || prio > FLUX_JOB_PRIORITY_MAX)
            return bad_context (error, name, "context needs priority:I");
        job->priority = prio;
        if (job->state == FLUX_JOB_STATE_PRIORITY)
            set_state (job, FLUX_JOB_STATE_SCHED, t);
    }
    else if (!strcmp (name, "flux-restart")) {
        if (job->state == FLUX_JOB_STATE_SCHED)
            set_state (job, FLUX_JOB_STATE_PRIORITY, t);
    }
    else if (!strcmp (name, "urgency")) {
        if (!c || json_unpack (c, "{s:i}", "urgency", &i) < 0 || i < 0
            || i > FLUX_JOB_URGENCY_MAX)
            return bad_context (error, name, "context needs urgency:i 0-31");
        job->urgency = i;
    }
    else if (!strcmp (name, "alloc"))
        advance (job, FLUX_JOB_STATE_RUN, t);
    else if (!strcmp (name, "exception"))
        return exception_event (job, pool, t, c, error);
    else if (!strcmp (name, "finish")) {
        if (!c || json_unpack (c, "{s:i}", "status", &status) < 0)
            return bad_context (error, name, "context needs status:i");
        job->waitstatus = status;
        advance (job, FLUX_JOB_STATE_CLEANUP, t);
    }
    else if (!strcmp (name, "clean")) {
        if (job->state < FLUX_JOB_STATE_INACTIVE) {
            set_state (job, FLUX_JOB_STATE_INACTIVE, t);
            finish_result (job);
        }
    }
    else if (!strcmp (name, "annotations"))
        return annotations_event (job, c, error);
    else if (!strcmp (name, "memo"))
        return memo_event (job, c, error);
    else if (!strcmp (name, "dependency-add")
             || !strcmp (name, "dependency-remove"))
        return dependency_event (job, name, c, error);
    else if (!strcmp (name, "jobspec-update")) {
        if (!c || !json_is_object (c))
            return bad_context (error, name, "context must be an object");
        if (job->state < FLUX_JOB_STATE_RUN)
            return job_jobspec_update (job, pool, c, error);
    }
    else if (!strcmp (name, "resource-update")) {
        double exp;
        if (!c || json_unpack (c, "{s:F}", "expiration", &exp) < 0)
            return bad_context (error, name, "context needs expiration:n");
        if (job->state == FLUX_JOB_STATE_RUN)
            job->expiration = exp;
    }
    else
        return JOB_EVENT_IGNORED;
    return JOB_EVENT_APPLIED;
}
