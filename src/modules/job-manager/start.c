/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* start.c - RFC 32, the job manager side (see start.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "libflux/jsonemit.h"
#include "librlist/rlist.h"
#include "action.h"
#include "event.h"
#include "start.h"

struct start {
    struct jobmgr *jm;
    char *service;           /* registered exec service, or NULL */
    char *uuid;              /* its sender, for disconnect */
    flux_msg_handler_t *mh;  /* responses to <service>.start */
    size_t npending;         /* jobs with start_pending */
    size_t nunanswered;      /* jobs with start_unanswered */
    bool unloading;          /* no new start requests */
    const flux_msg_t *hello; /* a hello waiting for the old one's ping */
    flux_future_t *ping;
    struct {
        unsigned long start, reattach, started, release, exception, finish;
    } stats;
};

static void response_cb (flux_t *h, flux_msg_handler_t *mh,
                         const flux_msg_t *msg, void *arg);

struct start *start_create (struct jobmgr *jm)
{
    struct start *s;

    if (!(s = calloc (1, sizeof (*s))))
        return NULL;
    s->jm = jm;
    return s;
}

void start_destroy (struct start *s)
{
    if (s) {
        int saved = errno;
        flux_msg_handler_destroy (s->mh);
        flux_future_destroy (s->ping);
        if (s->hello) {
            flux_respond_error (s->jm->h, s->hello, ENOSYS, NULL);
            flux_msg_decref (s->hello);
        }
        free (s->service);
        free (s->uuid);
        free (s);
        errno = saved;
    }
}

size_t start_pending_count (struct start *s)
{
    return s->npending;
}

static bool all_answered (void *arg)
{
    struct start *s = arg;
    return s->nunanswered == 0 || !s->service;
}

void start_unload_wait (struct start *s, double timeout)
{
    s->unloading = true;
    if (all_answered (s))
        return;
    jm_log (s->jm, LOG_INFO,
            "unloading: waiting for %s to answer %zu start request(s)",
            s->service, s->nunanswered);
    if (!flux_reactor_run_until (flux_get_reactor (s->jm->h), all_answered, s,
                                 timeout)
        && s->nunanswered > 0)
        jm_log (s->jm, LOG_WARNING,
                "unloading: %zu start request(s) still unanswered: the next "
                "job manager will start those jobs again",
                s->nunanswered);
}

void start_check (struct start *s, struct job *job)
{
    struct jobx *x = job->x;
    bool reattach;
    char topic[256];
    json_t *o, *jobspec;
    flux_msg_t *msg = NULL;
    char *str = NULL;

    if (!s->service || s->unloading || !x || x->start_pending
        || !x->js.has_resources || x->js.release_final
        || x->js.prolog_active > 0)
        return;
    if (x->js.state == FLUX_JOB_STATE_CLEANUP && !x->js.started)
        return; /* never started: nothing for the exec service to do */
    if (x->js.state != FLUX_JOB_STATE_RUN
        && x->js.state != FLUX_JOB_STATE_CLEANUP)
        return;
    reattach = x->js.started;
    snprintf (topic, sizeof (topic), "%s.start", s->service);
    /* RFC 32: R is required; the job manager holds it from the alloc
     * (or from the KVS after a restart), so the exec service needs no
     * KVS lookup per job */
    jobspec = job_jobspec_full (x);
    o = json_pack ("{s:I s:i s:O s:b s:O*}", "id", (json_int_t)job->id,
                   "userid", (int)job->userid, "jobspec",
                   jobspec ? jobspec : json_null (), "reattach", reattach, "R",
                   x->R);
    json_decref (jobspec);
    /* A reattach of a job whose finish was heard (the instance stopped
     * before its final release): the exec service need not look for its
     * shells, which are gone; it cleans up and releases. */
    if (o && reattach && x->js.finished
        && json_object_set_new (o, "finish", json_integer (x->js.status)) < 0) {
        json_decref (o);
        o = NULL;
    }
    if (!o || !(str = jsonemit (o, JSON_COMPACT, NULL))
        || !(msg = flux_request_encode (topic, str))
        || flux_msg_set_streaming (msg) < 0 || flux_send (s->jm->h, msg, 0) < 0)
        jm_log (s->jm, LOG_ERR, "%ju: %s: %s", (uintmax_t)job->id, topic,
                strerror (errno));
    else {
        x->start_pending = 1;
        s->npending++;
        if (!reattach) {
            x->start_unanswered = 1;
            s->nunanswered++;
        }
        s->stats.start++;
        if (reattach)
            s->stats.reattach++;
    }
    flux_msg_decref (msg);
    free (str);
    json_decref (o);
}

/* Apply fn to every job holding resources (collected first: fn may post
 * events that change the list). */
static void foreach_resource_job (struct start *s,
                                  void (*fn) (struct start *s, struct job *job))
{
    struct list_node *pos, *tmp, *head = &s->jm->resources;
    size_t n = 0, i = 0;
    struct job **jobs;

    list_for_each_safe (pos, tmp, head) n++;
    if (n == 0 || !(jobs = calloc (n, sizeof (*jobs))))
        return;
    list_for_each_safe (pos, tmp, head) jobs[i++]
        = list_entry (pos, struct jobx, res_link)->job;
    for (i = 0; i < n; i++) {
        if (jobs[i]->x)
            fn (s, jobs[i]);
    }
    free (jobs);
}

/* The exec service answered "start" for job, or will not any more. */
static void start_answered (struct start *s, struct job *job)
{
    if (job->x->start_unanswered) {
        job->x->start_unanswered = 0;
        s->nunanswered--;
    }
}

static void forget_start (struct start *s, struct job *job)
{
    start_answered (s, job);
    if (job->x->start_pending) {
        job->x->start_pending = 0;
        s->npending--;
        /* a job that never started can now be freed */
        action_cleanup (s->jm, job);
    }
}

/* The exec service is gone or broken: its streams will not end. */
static void service_lost (struct start *s, const char *why)
{
    if (!s->service)
        return;
    jm_log (s->jm, strcmp (why, "disconnected") ? LOG_ERR : LOG_INFO,
            "exec service %s: %s", s->service, why);
    flux_msg_handler_destroy (s->mh);
    s->mh = NULL;
    free (s->service);
    s->service = NULL;
    free (s->uuid);
    s->uuid = NULL;
    foreach_resource_job (s, forget_start);
}

static void start_job (struct start *s, struct job *job)
{
    start_check (s, job);
}

static int register_service (struct start *s, const flux_msg_t *msg,
                             const char *service)
{
    struct flux_match match = FLUX_MATCH_RESPONSE;
    char topic[256];
    const char *sender = flux_msg_route_first (msg);
    flux_msg_handler_t *mh;
    char *name, *uuid = NULL;

    snprintf (topic, sizeof (topic), "%s.start", service);
    match.topic_glob = topic;
    if (!(name = strdup (service)) || (sender && !(uuid = strdup (sender)))
        || !(mh = flux_msg_handler_create (s->jm->h, match, response_cb, s))) {
        free (name);
        free (uuid);
        return -1;
    }
    flux_msg_handler_destroy (s->mh);
    free (s->service);
    free (s->uuid);
    s->mh = mh;
    s->service = name;
    s->uuid = uuid;
    flux_msg_handler_start (mh);
    return 0;
}

static void hello_finish (struct start *s, const flux_msg_t *msg)
{
    const char *service;

    if (flux_request_unpack (msg, NULL, "{s:s}", "service", &service) < 0
        || register_service (s, msg, service) < 0) {
        jm_respond_error (s->jm, msg, errno, "exec-hello failed");
        return;
    }
    if (flux_respond (s->jm->h, msg, NULL) < 0)
        jm_log (s->jm, LOG_ERR, "exec-hello: %s", strerror (errno));
    jm_log (s->jm, LOG_DEBUG, "exec service %s registered", service);
    foreach_resource_job (s, start_job);
}

static void ping_continuation (flux_future_t *f, void *arg)
{
    struct start *s = arg;
    const flux_msg_t *hello = s->hello;

    s->hello = NULL;
    s->ping = NULL;
    if (flux_future_get (f, NULL) < 0 && errno == ENOSYS)
        service_lost (s, "it is gone");
    flux_future_destroy (f);
    if (s->npending > 0)
        jm_respond_error (s->jm, hello, EINVAL,
                          "%zu jobs have start requests outstanding with"
                          " exec service %s",
                          s->npending, s->service ? s->service : "?");
    else
        hello_finish (s, hello);
    flux_msg_decref (hello);
}

static bool valid_name (const char *name)
{
    if (!*name || strlen (name) > 200)
        return false;
    for (const char *p = name; *p; p++) {
        if (isspace ((unsigned char)*p) || !isprint ((unsigned char)*p))
            return false;
    }
    return true;
}

void start_hello (struct start *s, const flux_msg_t *msg)
{
    const char *service;
    char topic[256];

    if (flux_request_unpack (msg, NULL, "{s:s}", "service", &service) < 0
        || !valid_name (service)) {
        jm_respond_error (s->jm, msg, EPROTO, "malformed exec-hello request");
        return;
    }
    /* a service name has one owner at a time: the same name saying
     * hello again is a new instance, and the old one's streams are void */
    if (s->service && !strcmp (service, s->service) && s->npending > 0)
        service_lost (s, "replaced by a new instance");
    if (s->npending == 0) {
        hello_finish (s, msg);
        return;
    }
    if (s->hello) {
        jm_respond_error (s->jm, msg, EAGAIN, "another exec-hello is pending");
        return;
    }
    /* starts are outstanding: refuse, unless their service is gone */
    snprintf (topic, sizeof (topic), "%s.ping", s->service);
    if (!(s->ping = flux_rpc (s->jm->h, topic, "{}", FLUX_NODEID_ANY, 0))
        || flux_future_then (s->ping, 5., ping_continuation, s) < 0) {
        flux_future_destroy (s->ping);
        s->ping = NULL;
        jm_respond_error (s->jm, msg, errno, "exec-hello failed");
        return;
    }
    s->hello = flux_msg_incref (msg);
}

void start_disconnect (struct start *s, const flux_msg_t *msg)
{
    const char *sender = flux_msg_route_first (msg);

    if (s->uuid && sender && !strcmp (sender, s->uuid))
        service_lost (s, "disconnected");
}

/* A partial release must name ranks of R not released before (RFC 32),
 * or the scheduler would be told to free what the job does not hold.
 * 0; 1 when every rank named was released before (job-exec repeats what
 * it cannot know was heard, after a reattach): nothing to do; or -1 with
 * the reason in error. */
static int check_partial (struct job *job, const char *ranks,
                          flux_error_t *error)
{
    struct jobx *x = job->x;
    struct idset *ids, *held = NULL;
    struct rlist *rl = NULL;
    char *s = NULL;
    int rc = -1;

    if (!(ids = idset_decode (ranks)) || idset_empty (ids)) {
        errprintf (error, "ranks \"%s\" is not a non-empty idset", ranks);
        goto done;
    }
    if (x->js.released && idset_has_intersection (ids, x->js.released)) {
        errprintf (error, "ranks %s were already released", ranks);
        if (idset_is_subset (ids, x->js.released))
            rc = 1;
        goto done;
    }
    if (x->R) {
        if (!(rl = rlist_from_R (x->R, error)) || !(s = rlist_ranks (rl))
            || !(held = idset_decode (s))) {
            errprintf (error, "the job's R cannot be read");
            goto done;
        }
        if (!idset_is_subset (ids, held)) {
            errprintf (error, "ranks %s are not all in the job's R (%s)", ranks,
                       s);
            goto done;
        }
    }
    rc = 0;
done:
    idset_destroy (ids);
    idset_destroy (held);
    rlist_destroy (rl);
    free (s);
    return rc;
}

static void release (struct start *s, struct job *job, json_t *data)
{
    const char *ranks;
    int final, rc;
    flux_error_t error;

    if (!data
        || json_unpack (data, "{s:s s:b}", "ranks", &ranks, "final", &final)
               < 0) {
        jm_log (s->jm, LOG_ERR, "%ju: start: malformed release",
                (uintmax_t)job->id);
        return;
    }
    if (!final && (rc = check_partial (job, ranks, &error)) != 0) {
        jm_log (s->jm, rc > 0 ? LOG_DEBUG : LOG_ERR,
                "%ju: start: release ignored: %s (those ranks are freed with"
                " the final release)",
                (uintmax_t)job->id, error.text);
        return;
    }
    if (final) {
        start_answered (s, job);
        job->x->start_pending = 0;
        s->npending--;
    }
    s->stats.release++;
    if (event_post_pack (s->jm, job, "release", 0, "{s:s s:b}", "ranks", ranks,
                         "final", final)
        < 0)
        return;
    if (final && job->x && job->x->js.state == FLUX_JOB_STATE_RUN)
        (void)action_raise (s->jm, job, "exec", 0, FLUX_USERID_UNKNOWN,
                            "exec service released resources of a job that"
                            " did not finish");
}

static void exception (struct start *s, struct job *job, json_t *data)
{
    const char *type, *note = "";
    int severity;

    if (!data
        || json_unpack (data, "{s:i s:s s?s}", "severity", &severity, "type",
                        &type, "note", &note)
               < 0
        || severity < 0 || severity > 7 || !*type) {
        jm_log (s->jm, LOG_ERR, "%ju: start: malformed exception",
                (uintmax_t)job->id);
        return;
    }
    s->stats.exception++;
    (void)action_raise (s->jm, job, type, severity, FLUX_USERID_UNKNOWN, note);
}

static void response_cb (flux_t *h, flux_msg_handler_t *mh,
                         const flux_msg_t *msg, void *arg)
{
    struct start *s = arg;
    json_int_t id;
    const char *type;
    json_t *data = NULL;
    struct job *job;
    int status;

    if (flux_response_decode (msg, NULL, NULL) < 0) {
        const char *errstr = NULL;
        char why[256];
        (void)flux_response_decode_error (msg, &errstr);
        snprintf (why, sizeof (why), "start failed: %s",
                  errstr ? errstr : strerror (errno));
        service_lost (s, why);
        return;
    }
    if (flux_msg_unpack (msg, "{s:I s:s s?o}", "id", &id, "type", &type, "data",
                         &data)
        < 0) {
        jm_log (s->jm, LOG_ERR, "start: malformed response");
        return;
    }
    if (!(job = jobtab_lookup (s->jm->jobs, (flux_jobid_t)id)) || !job->x
        || !job->x->start_pending) {
        jm_log (s->jm, LOG_ERR,
                "start: %s response for %ju, which has no"
                " start request outstanding",
                type, (uintmax_t)id);
        return;
    }
    if (!strcmp (type, "start")) {
        start_answered (s, job);
        s->stats.started++;
        if (!job->x->js.started)
            (void)event_post (s->jm, job, "start", 0, NULL, NULL);
    }
    else if (!strcmp (type, "release"))
        release (s, job, data);
    else if (!strcmp (type, "exception"))
        exception (s, job, data);
    else if (!strcmp (type, "finish")) {
        if (!data || json_unpack (data, "{s:i}", "status", &status) < 0) {
            jm_log (s->jm, LOG_ERR, "%ju: start: malformed finish",
                    (uintmax_t)id);
            return;
        }
        /* after a reload, job-exec says again what the last job manager
         * may have missed: a finish already in the eventlog is not news */
        if (job->x->js.finished)
            return;
        s->stats.finish++;
        (void)event_post_pack (s->jm, job, "finish", 0, "{s:i}", "status",
                               status);
    }
    else
        jm_log (s->jm, LOG_ERR, "%ju: start: unknown response type %s",
                (uintmax_t)id, type);
}

json_t *start_stats (struct start *s)
{
    return json_pack (
        "{s:s? s:I s:{s:I s:I s:I s:I s:I s:I}}", "service", s->service,
        "pending", (json_int_t)s->npending, "count", "start",
        (json_int_t)s->stats.start, "reattach", (json_int_t)s->stats.reattach,
        "started", (json_int_t)s->stats.started, "release",
        (json_int_t)s->stats.release, "exception",
        (json_int_t)s->stats.exception, "finish", (json_int_t)s->stats.finish);
}
