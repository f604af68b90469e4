/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* job_encode.c - RFC 43 attribute names and the JSON text of a job.
 *
 * An attribute that is not set for a job is left out (RFC 43): e.g.
 * t_run before the job ran, result before it is inactive,
 * exception_occurred before the job reached CLEANUP.
 */
#include <errno.h>
#include <string.h>

#include "job.h"

static const char *const attr_names[ATTR_COUNT] = {
    [ATTR_USERID] = "userid",
    [ATTR_URGENCY] = "urgency",
    [ATTR_PRIORITY] = "priority",
    [ATTR_T_SUBMIT] = "t_submit",
    [ATTR_T_DEPEND] = "t_depend",
    [ATTR_T_PRIORITY] = "t_priority",
    [ATTR_T_SCHED] = "t_sched",
    [ATTR_T_RUN] = "t_run",
    [ATTR_T_CLEANUP] = "t_cleanup",
    [ATTR_T_INACTIVE] = "t_inactive",
    [ATTR_STATE] = "state",
    [ATTR_NAME] = "name",
    [ATTR_CWD] = "cwd",
    [ATTR_QUEUE] = "queue",
    [ATTR_PROJECT] = "project",
    [ATTR_BANK] = "bank",
    [ATTR_NTASKS] = "ntasks",
    [ATTR_NCORES] = "ncores",
    [ATTR_NNODES] = "nnodes",
    [ATTR_RANKS] = "ranks",
    [ATTR_NODELIST] = "nodelist",
    [ATTR_DURATION] = "duration",
    [ATTR_EXPIRATION] = "expiration",
    [ATTR_SUCCESS] = "success",
    [ATTR_RESULT] = "result",
    [ATTR_WAITSTATUS] = "waitstatus",
    [ATTR_EXCEPTION_OCCURRED] = "exception_occurred",
    [ATTR_EXCEPTION_TYPE] = "exception_type",
    [ATTR_EXCEPTION_SEVERITY] = "exception_severity",
    [ATTR_EXCEPTION_NOTE] = "exception_note",
    [ATTR_ANNOTATIONS] = "annotations",
    [ATTR_DEPENDENCIES] = "dependencies",
};

const char *job_attr_name (int attr)
{
    return attr >= 0 && attr < ATTR_COUNT ? attr_names[attr] : NULL;
}

int job_attrs_parse (json_t *attrs, uint64_t *mask, flux_error_t *error)
{
    size_t i;
    json_t *v;
    uint64_t m = 0;

    if (!json_is_array (attrs)) {
        errprintf (error, "attrs must be an array of strings");
        goto inval;
    }
    json_array_foreach (attrs, i, v)
    {
        const char *name = json_string_value (v);
        int a;
        if (!name) {
            errprintf (error, "attrs must be an array of strings");
            goto inval;
        }
        if (!strcmp (name, "all")) {
            m = ATTR_ALL;
            continue;
        }
        if (!strcmp (name, "id"))
            continue;
        for (a = 0; a < ATTR_COUNT; a++)
            if (!strcmp (attr_names[a], name))
                break;
        if (a == ATTR_COUNT) {
            errprintf (error, "%s is not a valid attribute", name);
            goto inval;
        }
        m |= UINT64_C (1) << a;
    }
    *mask = m;
    return 0;
inval:
    errno = EINVAL;
    return -1;
}

static void put_str (struct jbuf *b, int *first, int a, const char *s)
{
    if (s) {
        jbuf_key (b, attr_names[a], first);
        jbuf_str (b, s);
    }
}

static void put_int (struct jbuf *b, int *first, int a, int64_t i)
{
    jbuf_key (b, attr_names[a], first);
    jbuf_int (b, i);
}

static void put_time (struct jbuf *b, int *first, int a, double t)
{
    if (t > 0.) {
        jbuf_key (b, attr_names[a], first);
        jbuf_real (b, t);
    }
}

void job_encode (const struct job *job, uint64_t mask, struct jbuf *b)
{
    int first = 1;

    jbuf_char (b, '{');
    jbuf_key (b, "id", &first);
    jbuf_uint (b, job->id);
    for (int a = 0; a < ATTR_COUNT; a++) {
        if (!(mask & (UINT64_C (1) << a)))
            continue;
        switch (a) {
            case ATTR_USERID:
                if (job->userid != FLUX_USERID_UNKNOWN)
                    put_int (b, &first, a, job->userid);
                break;
            case ATTR_URGENCY:
                if (job->urgency >= 0)
                    put_int (b, &first, a, job->urgency);
                break;
            case ATTR_PRIORITY:
                if (job->priority >= 0)
                    put_int (b, &first, a, job->priority);
                break;
            case ATTR_T_SUBMIT:
                put_time (b, &first, a, job->t_submit);
                break;
            case ATTR_T_DEPEND:
                put_time (b, &first, a, job->t_depend);
                break;
            case ATTR_T_PRIORITY:
                put_time (b, &first, a, job->t_priority);
                break;
            case ATTR_T_SCHED:
                put_time (b, &first, a, job->t_sched);
                break;
            case ATTR_T_RUN:
                put_time (b, &first, a, job->t_run);
                break;
            case ATTR_T_CLEANUP:
                put_time (b, &first, a, job->t_cleanup);
                break;
            case ATTR_T_INACTIVE:
                put_time (b, &first, a, job->t_inactive);
                break;
            case ATTR_STATE:
                put_int (b, &first, a, job->state);
                break;
            case ATTR_NAME:
                put_str (b, &first, a, job->name);
                break;
            case ATTR_CWD:
                put_str (b, &first, a, job->cwd);
                break;
            case ATTR_QUEUE:
                put_str (b, &first, a, job->queue);
                break;
            case ATTR_PROJECT:
                put_str (b, &first, a, job->project);
                break;
            case ATTR_BANK:
                put_str (b, &first, a, job->bank);
                break;
            case ATTR_NTASKS:
                if (job->ntasks >= 0)
                    put_int (b, &first, a, job->ntasks);
                break;
            case ATTR_NCORES:
                if (job->ncores >= 0)
                    put_int (b, &first, a, job->ncores);
                break;
            case ATTR_NNODES:
                if (job->nnodes >= 0)
                    put_int (b, &first, a, job->nnodes);
                break;
            case ATTR_RANKS:
                put_str (b, &first, a, job->ranks);
                break;
            case ATTR_NODELIST:
                put_str (b, &first, a, job->nodelist);
                break;
            case ATTR_DURATION:
                if (job->duration >= 0.) {
                    jbuf_key (b, attr_names[a], &first);
                    jbuf_real (b, job->duration);
                }
                break;
            case ATTR_EXPIRATION:
                put_time (b, &first, a, job->expiration);
                break;
            case ATTR_SUCCESS:
                if (job->state == FLUX_JOB_STATE_INACTIVE) {
                    jbuf_key (b, attr_names[a], &first);
                    jbuf_bool (b, job->success);
                }
                break;
            case ATTR_RESULT:
                if (job->state == FLUX_JOB_STATE_INACTIVE)
                    put_int (b, &first, a, job->result);
                break;
            case ATTR_WAITSTATUS:
                if (job->waitstatus >= 0)
                    put_int (b, &first, a, job->waitstatus);
                break;
            case ATTR_EXCEPTION_OCCURRED:
                if (job->exception_occurred
                    || (job->states_mask & FLUX_JOB_STATE_CLEANUP)) {
                    jbuf_key (b, attr_names[a], &first);
                    jbuf_bool (b, job->exception_occurred);
                }
                break;
            case ATTR_EXCEPTION_TYPE:
                if (job->exception_occurred)
                    put_str (b, &first, a, job->exception_type);
                break;
            case ATTR_EXCEPTION_SEVERITY:
                if (job->exception_occurred)
                    put_int (b, &first, a, job->exception_severity);
                break;
            case ATTR_EXCEPTION_NOTE:
                if (job->exception_occurred)
                    put_str (b, &first, a, job->exception_note);
                break;
            case ATTR_ANNOTATIONS:
                if (job->annotations) {
                    jbuf_key (b, attr_names[a], &first);
                    jbuf_rawz (b, job->annotations);
                }
                break;
            case ATTR_DEPENDENCIES:
                if (job->dependencies) {
                    jbuf_key (b, attr_names[a], &first);
                    jbuf_json (b, job->dependencies);
                }
                break;
        }
    }
    jbuf_char (b, '}');
}
