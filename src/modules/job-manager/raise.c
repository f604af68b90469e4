/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* raise.c - raise, raiseall, kill, killall (see raise.h). */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "action.h"
#include "event.h"
#include "raise.h"

bool raise_type_valid (const char *type)
{
    if (!type || !*type)
        return false;
    for (const char *p = type; *p; p++) {
        if (isspace ((unsigned char)*p) || *p == '=')
            return false;
    }
    return true;
}

static int post_exception (struct jobmgr *jm, struct job *job, const char *type,
                           int severity, const char *note, uint32_t userid,
                           int wait_status)
{
    json_t *ctx = json_pack ("{s:s s:i s:s}", "type", type, "severity",
                             severity, "note", note ? note : "");
    int rc = -1;

    if (!ctx)
        return -1;
    if (userid != jm->owner)
        json_object_set_new (ctx, "userid", json_integer (userid));
    if (wait_status >= 0)
        json_object_set_new (ctx, "wait_status", json_integer (wait_status));
    rc = event_post (jm, job, "exception", 0, ctx, NULL);
    json_decref (ctx);
    return rc;
}

void raise_request (struct jobmgr *jm, const flux_msg_t *msg)
{
    json_int_t id;
    int severity, wait_status = -1;
    const char *type, *note = NULL;
    struct flux_msg_cred cred;
    struct job *job;

    if (flux_request_unpack (msg, NULL, "{s:I s:s s:i s?s s?i}", "id", &id,
                             "type", &type, "severity", &severity, "note",
                             &note, "wait_status", &wait_status)
            < 0
        || flux_msg_get_cred (msg, &cred) < 0) {
        jm_respond_error (jm, msg, EPROTO, "malformed raise request");
        return;
    }
    if (!raise_type_valid (type)) {
        jm_respond_error (jm, msg, EPROTO, "invalid exception type");
        return;
    }
    if (severity < 0 || severity > 7) {
        jm_respond_error (jm, msg, EPROTO, "severity must be in range 0-7");
        return;
    }
    if (!(job = jobtab_lookup (jm->jobs, (flux_jobid_t)id)) || !job->x) {
        jm_respond_error (jm, msg, ENOENT, "unknown or inactive job id");
        return;
    }
    if (flux_msg_cred_authorize (cred, job->userid) < 0) {
        jm_respond_error (jm, msg, EPERM,
                          "guests may only raise exceptions"
                          " on their own jobs");
        return;
    }
    if (post_exception (jm, job, type, severity, note, cred.userid, wait_status)
        < 0) {
        jm_respond_error (jm, msg, errno, "failed to raise exception");
        return;
    }
    flux_respond (jm->h, msg, NULL);
}

/* The active jobs a *all request selects, or NULL (responded). */
static struct job **select_jobs (struct jobmgr *jm, const flux_msg_t *msg,
                                 json_int_t userid, int states, size_t *np)
{
    struct flux_msg_cred cred;
    struct job **jobs, *job;
    size_t n = 0, cursor;
    bool all = (userid == -1 || userid == UINT32_MAX);

    if (flux_msg_get_cred (msg, &cred) < 0) {
        jm_respond_error (jm, msg, EPROTO, NULL);
        return NULL;
    }
    if (!(cred.rolemask & FLUX_ROLE_OWNER)
        && (all || (uint32_t)userid != cred.userid)) {
        jm_respond_error (jm, msg, EPERM,
                          "guests may only act on their own"
                          " jobs");
        return NULL;
    }
    if (!all && (userid < 0 || userid > UINT32_MAX)) {
        jm_respond_error (jm, msg, EPROTO, "invalid userid");
        return NULL;
    }
    if (!(jobs = calloc (jobtab_count (jm->jobs) + 1, sizeof (*jobs)))) {
        jm_respond_error (jm, msg, ENOMEM, NULL);
        return NULL;
    }
    for (job = jobtab_first (jm->jobs, &cursor); job;
         job = jobtab_next (jm->jobs, job, &cursor)) {
        if (job->x && (job->state & states)
            && (all || job->userid == (uint32_t)userid))
            jobs[n++] = job;
    }
    *np = n;
    return jobs;
}

void raiseall_request (struct jobmgr *jm, const flux_msg_t *msg)
{
    int dry_run, states, severity, errors = 0;
    json_int_t userid;
    const char *type, *note = NULL;
    struct flux_msg_cred cred = {0};
    struct job **jobs;
    size_t n, i;

    if (flux_request_unpack (msg, NULL, "{s:b s:I s:i s:i s:s s?s}", "dry_run",
                             &dry_run, "userid", &userid, "states", &states,
                             "severity", &severity, "type", &type, "note",
                             &note)
        < 0) {
        jm_respond_error (jm, msg, EPROTO, "malformed raiseall request");
        return;
    }
    if (!raise_type_valid (type) || severity < 0 || severity > 7
        || (states & ~FLUX_JOB_STATE_ACTIVE)) {
        jm_respond_error (jm, msg, EPROTO, "invalid type, severity or states");
        return;
    }
    if (!(jobs = select_jobs (jm, msg, userid, states, &n)))
        return;
    (void)flux_msg_get_cred (msg, &cred);
    for (i = 0; i < n && !dry_run; i++) {
        if (jobs[i]->x
            && post_exception (jm, jobs[i], type, severity, note, cred.userid,
                               -1)
                   < 0)
            errors++;
    }
    free (jobs);
    flux_respond_pack (jm->h, msg, "{s:i s:i}", "count", (int)n, "errors",
                       errors);
}

/* The sequence number is of no interest: drop the future when done. */
static void published (flux_future_t *f, void *arg)
{
    flux_future_destroy (f);
}

static int publish_kill (struct jobmgr *jm, struct job *job, int signum)
{
    char topic[64];
    flux_future_t *f;

    snprintf (topic, sizeof (topic), "shell-%ju.kill", (uintmax_t)job->id);
    if (!(f = flux_event_publish_pack (jm->h, topic, 0, "{s:i}", "signum",
                                       signum)))
        return -1;
    if (flux_future_then (f, -1, published, NULL) < 0 || jm_track (jm, f) < 0) {
        flux_future_destroy (f);
        return -1;
    }
    return 0;
}

void kill_request (struct jobmgr *jm, const flux_msg_t *msg)
{
    json_int_t id;
    int signum;
    struct job *job;

    if (flux_request_unpack (msg, NULL, "{s:I s:i}", "id", &id, "signum",
                             &signum)
        < 0) {
        jm_respond_error (jm, msg, EPROTO, "malformed kill request");
        return;
    }
    if (signum <= 0 || signum >= NSIG) {
        jm_respond_error (jm, msg, EINVAL, "invalid signal number %d", signum);
        return;
    }
    if (!(job = jobtab_lookup (jm->jobs, (flux_jobid_t)id)) || !job->x) {
        jm_respond_error (jm, msg, EINVAL, "unknown or inactive job id");
        return;
    }
    if (flux_msg_authorize (msg, job->userid) < 0) {
        jm_respond_error (jm, msg, EPERM,
                          "guests may only signal their own"
                          " jobs");
        return;
    }
    if (!(job->state & FLUX_JOB_STATE_RUNNING)) {
        jm_respond_error (jm, msg, EINVAL, "job is not running");
        return;
    }
    if (publish_kill (jm, job, signum) < 0) {
        jm_respond_error (jm, msg, errno, "failed to publish kill event");
        return;
    }
    flux_respond (jm->h, msg, NULL);
}

void killall_request (struct jobmgr *jm, const flux_msg_t *msg)
{
    int dry_run, signum, errors = 0;
    json_int_t userid;
    struct job **jobs;
    size_t n, i;

    if (flux_request_unpack (msg, NULL, "{s:b s:I s:i}", "dry_run", &dry_run,
                             "userid", &userid, "signum", &signum)
        < 0) {
        jm_respond_error (jm, msg, EPROTO, "malformed killall request");
        return;
    }
    if (signum <= 0 || signum >= NSIG) {
        jm_respond_error (jm, msg, EINVAL, "invalid signal number %d", signum);
        return;
    }
    if (!(jobs = select_jobs (jm, msg, userid, FLUX_JOB_STATE_RUNNING, &n)))
        return;
    for (i = 0; i < n && !dry_run; i++) {
        if (publish_kill (jm, jobs[i], signum) < 0)
            errors++;
    }
    free (jobs);
    flux_respond_pack (jm->h, msg, "{s:i s:i}", "count", (int)n, "errors",
                       errors);
}
