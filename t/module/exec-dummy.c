/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* exec-dummy - an RFC 32 exec service for the job manager tests.
 *
 * It says job-manager.exec-hello with its own module name as the
 * service (a failed hello is fatal, as RFC 32 says) and answers
 * <name>.start for simulated jobs: start, then after run_duration
 * (attributes.system.exec.test.run_duration, an FSD string or a number;
 * default 0) finish and a final release.  A severity 0 job-exception
 * event stops a running job: finish with status 9 (SIGKILL), release.
 * A start with reattach=true finishes at once with status 0.
 *
 * attributes.system.exec.test may also hold knobs:
 *   status: N                 the finish status (default 0)
 *   exception: {type, severity, note?}  raised right after start
 *   partial: true             release rank 0 (final=false) before the
 *                             final release of "all"
 *   repeat-partial: true      ... and that partial release twice (as
 *                             job-exec may after a reattach)
 *   hang: true                never finish unless canceled or told to
 *                             (exec-dummy.finish)
 *   nostart: true             skip the start response
 *   error: true               answer with a conventional error (fatal
 *                             to the exec service, RFC 32)
 *   release-first: true       send the final release before finish
 *                             (a protocol violation)
 *   linger: true              finish, but hold the final release until
 *                             exec-dummy.finish (as if the instance
 *                             stopped between the two)
 * A reattach carrying "finish" (the job manager heard the job's finish)
 * finishes with that status and is counted as "heard".
 *
 * exec-dummy.stats -> {running:[id...], counters}
 * exec-dummy.finish {id, status} ends a running job now.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <jansson.h>

#include "libflux/flux.h"
#include "libflux/list.h"
#include "libutil/fsd.h"

struct exec;

struct sjob {
    struct list_node link;
    struct exec *e;
    uint64_t id;
    const flux_msg_t *msg; /* the start request */
    uv_timer_t *timer;
    int status;
    int partial; /* json_unpack "b" stores an int */
    int repeat_partial;
    int release_first;
    int linger;
    int lingering; /* finish said, final release held */
};

struct exec {
    flux_t *h;
    const char *name;
    struct list_node jobs;
    int njobs;
    struct {
        int start, reattach, heard, finish, killed, error;
        int with_R;   /* start requests that carried R (RFC 32) */
        int with_env; /* ... and a jobspec with an environment */
    } count;
};

static int respond (struct sjob *j, const char *type, json_t *data)
{
    int rc = flux_respond_pack (j->e->h, j->msg, "{s:I s:s s:O}", "id",
                                (json_int_t)j->id, "type", type, "data", data);
    json_decref (data);
    return rc;
}

static void timer_free (uv_handle_t *h)
{
    free (h);
}

static void sjob_destroy (struct sjob *j)
{
    list_del (&j->link);
    j->e->njobs--;
    if (j->timer)
        uv_close ((uv_handle_t *)j->timer, timer_free);
    flux_msg_decref (j->msg);
    free (j);
}

/* finish and release; the job is then gone */
static void finish (struct sjob *j, int status)
{
    if (j->lingering) {
        respond (j, "release",
                 json_pack ("{s:s s:b}", "ranks", "all", "final", 1));
        sjob_destroy (j);
        return;
    }
    if (j->linger) {
        respond (j, "finish", json_pack ("{s:i}", "status", status));
        j->e->count.finish++;
        j->lingering = 1;
        return;
    }
    if (j->release_first)
        respond (j, "release",
                 json_pack ("{s:s s:b}", "ranks", "all", "final", 1));
    respond (j, "finish", json_pack ("{s:i}", "status", status));
    for (int i = 0; i < (j->partial ? 1 + (j->repeat_partial != 0) : 0); i++)
        respond (j, "release",
                 json_pack ("{s:s s:b}", "ranks", "0", "final", 0));
    if (!j->release_first)
        respond (j, "release",
                 json_pack ("{s:s s:b}", "ranks", "all", "final", 1));
    j->e->count.finish++;
    sjob_destroy (j);
}

static void timer_cb (uv_timer_t *t)
{
    struct sjob *j = t->data;
    finish (j, j->status);
}

static struct sjob *find (struct exec *e, uint64_t id)
{
    struct list_node *pos, *tmp;

    list_for_each_safe (pos, tmp, &e->jobs)
    {
        struct sjob *j = list_entry (pos, struct sjob, link);
        if (j->id == id)
            return j;
    }
    return NULL;
}

static double run_duration (json_t *test)
{
    json_t *v = json_object_get (test, "run_duration");
    double d = 0;

    if (json_is_number (v))
        d = json_number_value (v);
    else if (json_is_string (v)
             && fsd_parse_duration (json_string_value (v), &d) < 0)
        d = 0;
    return d;
}

static void start_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    struct exec *e = arg;
    json_int_t id;
    int userid, reattach, hang = 0, nostart = 0, error = 0, heard = -1;
    json_t *jobspec, *test = NULL, *exc = NULL, *R = NULL;
    struct sjob *j;

    if (flux_request_unpack (msg, NULL, "{s:I s:i s:o s:b s?o s?i}", "id", &id,
                             "userid", &userid, "jobspec", &jobspec, "reattach",
                             &reattach, "R", &R, "finish", &heard)
        < 0)
        return;
    if (json_is_object (R) && json_object_get (R, "execution"))
        e->count.with_R++;
    {
        json_t *env = NULL;
        (void)json_unpack (jobspec, "{s:{s:{s:o}}}", "attributes", "system",
                           "environment", &env);
        if (json_is_object (env))
            e->count.with_env++;
    }
    (void)json_unpack (jobspec, "{s:{s:{s:{s:o}}}}", "attributes", "system",
                       "exec", "test", &test);
    (void)json_unpack (test, "{s?b s?b s?b s?o}", "hang", &hang, "nostart",
                       &nostart, "error", &error, "exception", &exc);
    if (error) {
        e->count.error++;
        flux_respond_error (h, msg, EIO, "exec-dummy: injected error");
        return;
    }
    if (!(j = calloc (1, sizeof (*j))))
        return;
    j->e = e;
    j->id = id;
    j->msg = flux_msg_incref (msg);
    list_add_tail (&e->jobs, &j->link);
    e->njobs++;
    e->count.start++;
    if (reattach) {
        e->count.reattach++;
        if (heard >= 0)
            e->count.heard++;
        finish (j, heard >= 0 ? heard : 0);
        return;
    }
    (void)json_unpack (test, "{s?i s?b s?b s?b s?b}", "status", &j->status,
                       "partial", &j->partial, "repeat-partial",
                       &j->repeat_partial, "release-first", &j->release_first,
                       "linger", &j->linger);
    if (!nostart)
        respond (j, "start", json_object ());
    if (exc)
        respond (j, "exception", json_incref (exc));
    if (hang)
        return;
    if (!(j->timer = calloc (1, sizeof (*j->timer))))
        return;
    uv_timer_init (flux_reactor_uv (flux_get_reactor (h)), j->timer);
    j->timer->data = j;
    uv_timer_start (j->timer, timer_cb, (uint64_t)(run_duration (test) * 1000.),
                    0);
}

static void exception_cb (flux_t *h, flux_msg_handler_t *mh,
                          const flux_msg_t *msg, void *arg)
{
    struct exec *e = arg;
    json_int_t id;
    int severity;
    struct sjob *j;

    if (flux_event_unpack (msg, NULL, "{s:I s:i}", "id", &id, "severity",
                           &severity)
            < 0
        || severity != 0 || !(j = find (e, (uint64_t)id)) || j->lingering)
        return;
    e->count.killed++;
    finish (j, 9); /* the wait status of a task killed by SIGKILL */
}

static void finish_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    struct exec *e = arg;
    json_int_t id;
    int status = 0;
    struct sjob *j;

    if (flux_request_unpack (msg, NULL, "{s:I s?i}", "id", &id, "status",
                             &status)
        < 0) {
        flux_respond_error (h, msg, EPROTO, NULL);
        return;
    }
    if (!(j = find (e, (uint64_t)id))) {
        flux_respond_error (h, msg, ENOENT, "no such job running");
        return;
    }
    finish (j, status);
    flux_respond (h, msg, NULL);
}

static void stats_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                      void *arg)
{
    struct exec *e = arg;
    json_t *running = json_array ();
    struct list_node *pos, *tmp;

    list_for_each_safe (pos, tmp, &e->jobs)
    {
        struct sjob *j = list_entry (pos, struct sjob, link);
        json_array_append_new (running, json_integer ((json_int_t)j->id));
    }
    flux_respond_pack (h, msg, "{s:o s:{s:i s:i s:i s:i s:i s:i s:i s:i}}",
                       "running", running, "count", "start", e->count.start,
                       "reattach", e->count.reattach, "heard", e->count.heard,
                       "finish", e->count.finish, "killed", e->count.killed,
                       "error", e->count.error, "with_R", e->count.with_R,
                       "with_env", e->count.with_env);
}

int mod_main (flux_t *h, int argc, char **argv)
{
    struct exec e = {.h = h};
    char start[128], stats[128], fin[128];
    struct flux_msg_handler_spec htab[] = {
        {FLUX_MSGTYPE_REQUEST, start, start_cb, 0},
        {FLUX_MSGTYPE_REQUEST, stats, stats_cb, FLUX_ROLE_USER},
        {FLUX_MSGTYPE_REQUEST, fin, finish_cb, 0},
        {FLUX_MSGTYPE_EVENT, "job-exception", exception_cb, 0},
        FLUX_MSGHANDLER_TABLE_END,
    };
    flux_msg_handler_t **handlers = NULL;
    flux_future_t *f = NULL;
    int rc = -1;

    list_init (&e.jobs);
    e.name = flux_aux_get (h, "flux::name");
    snprintf (start, sizeof (start), "%s.start", e.name);
    snprintf (stats, sizeof (stats), "%s.stats", e.name);
    snprintf (fin, sizeof (fin), "%s.finish", e.name);
    if (flux_event_subscribe (h, "job-exception") < 0
        || flux_msg_handler_addvec (h, htab, &e, &handlers) < 0)
        goto done;
    /* RFC 32: a failed hello is fatal */
    if (!(f = flux_rpc_pack (h, "job-manager.exec-hello", 0, 0, "{s:s}",
                             "service", e.name))
        || flux_future_get (f, NULL) < 0) {
        flux_log (h, LOG_ERR, "exec-hello: %s",
                  f ? future_strerror (f, errno) : strerror (errno));
        goto done;
    }
    if (flux_reactor_run (flux_get_reactor (h), 0) < 0)
        goto done;
    rc = 0;
done:
    flux_future_destroy (f);
    while (!list_empty (&e.jobs))
        sjob_destroy (list_entry (e.jobs.next, struct sjob, link));
    flux_msg_handler_delvec (handlers);
    return rc;
}
