/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* jobstate.c - RFC 21 events applied to a struct jobstate.
 *
 * One function per event, in a table.  Each checks the state it is
 * allowed in and its context, then changes the jobstate; a refused event
 * changes nothing.  Transitions (RFC 21, and flux-restart as flux-core
 * applies it):
 *
 *   submit          -> NEW
 *   validate        NEW -> DEPEND         invalidate  NEW -> INACTIVE
 *   depend          DEPEND -> PRIORITY    (no dependency outstanding)
 *   priority        PRIORITY -> SCHED     (in SCHED: new priority)
 *   flux-restart    SCHED -> PRIORITY     (other states: no change)
 *   alloc           SCHED -> RUN          (in CLEANUP: resources held)
 *   finish          RUN -> CLEANUP
 *   exception sev 0 any active state -> CLEANUP
 *   clean           CLEANUP -> INACTIVE
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "libeventlog/eventlog.h"
#include "jobstate.h"

#define S_NEW FLUX_JOB_STATE_NEW
#define S_DEPEND FLUX_JOB_STATE_DEPEND
#define S_PRIORITY FLUX_JOB_STATE_PRIORITY
#define S_SCHED FLUX_JOB_STATE_SCHED
#define S_RUN FLUX_JOB_STATE_RUN
#define S_CLEANUP FLUX_JOB_STATE_CLEANUP
#define S_INACTIVE FLUX_JOB_STATE_INACTIVE
#define S_ACTIVE (S_NEW | FLUX_JOB_STATE_ACTIVE)

void jobstate_init (struct jobstate *js)
{
    memset (js, 0, sizeof (*js));
    js->priority = -1;
    js->expiration = -1;
}

void jobstate_clear (struct jobstate *js)
{
    free (js->exc_type);
    free (js->exc_note);
    json_decref (js->deps);
    json_decref (js->deps_done);
    json_decref (js->updates);
    json_decref (js->memo);
    idset_destroy (js->released);
    jobstate_init (js);
}

const char *jobstate_name (int state)
{
    switch (state) {
        case S_NEW:
            return "NEW";
        case S_DEPEND:
            return "DEPEND";
        case S_PRIORITY:
            return "PRIORITY";
        case S_SCHED:
            return "SCHED";
        case S_RUN:
            return "RUN";
        case S_CLEANUP:
            return "CLEANUP";
        case S_INACTIVE:
            return "INACTIVE";
    }
    return "?";
}

int jobstate_flag_bit (const char *name)
{
    if (!strcmp (name, "debug"))
        return FLUX_JOB_DEBUG;
    if (!strcmp (name, "waitable"))
        return FLUX_JOB_WAITABLE;
    if (!strcmp (name, "novalidate"))
        return FLUX_JOB_NOVALIDATE;
    return 0;
}

/* An event handler: check, then apply.  ts is the event timestamp. */
typedef int (*apply_f) (struct jobstate *js, double ts, json_t *ctx,
                        flux_error_t *error);

static int bad_context (flux_error_t *error, const char *what)
{
    errno = EINVAL;
    return errprintf (error, "%s", what);
}

static int apply_submit (struct jobstate *js, double ts, json_t *ctx,
                         flux_error_t *error)
{
    int urgency, userid, flags, version;

    if (!ctx
        || json_unpack (ctx, "{s:i s:i s:i s:i}", "urgency", &urgency, "userid",
                        &userid, "flags", &flags, "version", &version)
               < 0)
        return bad_context (error,
                            "context needs urgency, userid, flags, version");
    if (urgency < FLUX_JOB_URGENCY_MIN || urgency > FLUX_JOB_URGENCY_MAX)
        return bad_context (error, "urgency is out of range 0-31");
    if (version != 1)
        return bad_context (error, "unsupported eventlog version");
    if (userid < 0)
        return bad_context (error, "userid is negative");
    js->state = S_NEW;
    js->urgency = urgency;
    js->userid = (uint32_t)userid;
    js->flags = flags;
    js->t_submit = ts;
    return 0;
}

static int apply_validate (struct jobstate *js, double ts, json_t *ctx,
                           flux_error_t *error)
{
    js->state = S_DEPEND;
    return 0;
}

static int apply_invalidate (struct jobstate *js, double ts, json_t *ctx,
                             flux_error_t *error)
{
    js->state = S_INACTIVE;
    js->invalid = true;
    js->t_clean = ts;
    return 0;
}

static int get_description (json_t *ctx, const char **desc, flux_error_t *error)
{
    if (!ctx || json_unpack (ctx, "{s:s}", "description", desc) < 0)
        return bad_context (error, "context needs a description string");
    return 0;
}

static int apply_dependency_add (struct jobstate *js, double ts, json_t *ctx,
                                 flux_error_t *error)
{
    const char *desc;

    if (get_description (ctx, &desc, error) < 0)
        return -1;
    if (js->deps && json_object_get (js->deps, desc))
        return 0; /* RFC 26: a duplicate of an outstanding one is a no-op */
    if (js->deps_done && json_object_get (js->deps_done, desc)) {
        errno = EEXIST;
        return errprintf (error, "dependency %s was already satisfied", desc);
    }
    if (!js->deps && !(js->deps = json_object ()))
        goto nomem;
    if (json_object_set_new (js->deps, desc, json_true ()) < 0)
        goto nomem;
    return 0;
nomem:
    errno = ENOMEM;
    return errprintf (error, "out of memory");
}

static int apply_dependency_remove (struct jobstate *js, double ts, json_t *ctx,
                                    flux_error_t *error)
{
    const char *desc;

    if (get_description (ctx, &desc, error) < 0)
        return -1;
    if (!js->deps || !json_object_get (js->deps, desc)) {
        errno = ENOENT;
        return errprintf (error, "no outstanding dependency %s", desc);
    }
    if ((!js->deps_done && !(js->deps_done = json_object ()))
        || json_object_set_new (js->deps_done, desc, json_true ()) < 0) {
        errno = ENOMEM;
        return errprintf (error, "out of memory");
    }
    (void)json_object_del (js->deps, desc);
    return 0;
}

static int apply_depend (struct jobstate *js, double ts, json_t *ctx,
                         flux_error_t *error)
{
    if (js->deps && json_object_size (js->deps) > 0)
        return bad_context (error, "dependencies are outstanding");
    js->state = S_PRIORITY;
    return 0;
}

static int apply_priority (struct jobstate *js, double ts, json_t *ctx,
                           flux_error_t *error)
{
    json_int_t priority;

    if (!ctx || json_unpack (ctx, "{s:I}", "priority", &priority) < 0)
        return bad_context (error, "context needs an integer priority");
    if (priority < FLUX_JOB_PRIORITY_MIN || priority > FLUX_JOB_PRIORITY_MAX)
        return bad_context (error, "priority is out of range");
    js->priority = priority;
    js->state = S_SCHED;
    return 0;
}

static int apply_urgency (struct jobstate *js, double ts, json_t *ctx,
                          flux_error_t *error)
{
    int urgency, userid;

    if (!ctx
        || json_unpack (ctx, "{s:i s:i}", "urgency", &urgency, "userid",
                        &userid)
               < 0)
        return bad_context (error, "context needs urgency and userid");
    if (urgency < FLUX_JOB_URGENCY_MIN || urgency > FLUX_JOB_URGENCY_MAX)
        return bad_context (error, "urgency is out of range 0-31");
    js->urgency = urgency;
    return 0;
}

static int apply_flux_restart (struct jobstate *js, double ts, json_t *ctx,
                               flux_error_t *error)
{
    if (js->state == S_SCHED)
        js->state = S_PRIORITY;
    return 0;
}

static int apply_alloc (struct jobstate *js, double ts, json_t *ctx,
                        flux_error_t *error)
{
    json_t *annotations = NULL;

    if (ctx && json_unpack (ctx, "{s?o}", "annotations", &annotations) < 0)
        return bad_context (error, "context is not an object");
    if (annotations && !json_is_object (annotations))
        return bad_context (error, "annotations is not an object");
    if (js->has_resources)
        return bad_context (error, "resources are already allocated");
    js->has_resources = true;
    js->t_run = ts;
    if (js->state == S_SCHED)
        js->state = S_RUN;
    return 0;
}

static int apply_prolog_start (struct jobstate *js, double ts, json_t *ctx,
                               flux_error_t *error)
{
    const char *desc;

    if (get_description (ctx, &desc, error) < 0)
        return -1;
    if (js->started)
        return bad_context (error, "the job has already started");
    js->prolog_active++;
    return 0;
}

static int perilog_finish (int *count, json_t *ctx, const char *what,
                           flux_error_t *error)
{
    const char *desc;
    int status;

    if (!ctx
        || json_unpack (ctx, "{s:s s:i}", "description", &desc, "status",
                        &status)
               < 0)
        return bad_context (error, "context needs description and status");
    if (*count == 0) {
        errno = EINVAL;
        return errprintf (error, "no %s is active", what);
    }
    (*count)--;
    return 0;
}

static int apply_prolog_finish (struct jobstate *js, double ts, json_t *ctx,
                                flux_error_t *error)
{
    return perilog_finish (&js->prolog_active, ctx, "prolog", error);
}

static int apply_epilog_start (struct jobstate *js, double ts, json_t *ctx,
                               flux_error_t *error)
{
    const char *desc;

    if (get_description (ctx, &desc, error) < 0)
        return -1;
    js->epilog_active++;
    return 0;
}

static int apply_epilog_finish (struct jobstate *js, double ts, json_t *ctx,
                                flux_error_t *error)
{
    return perilog_finish (&js->epilog_active, ctx, "epilog", error);
}

static int apply_start (struct jobstate *js, double ts, json_t *ctx,
                        flux_error_t *error)
{
    if (!js->has_resources || js->started)
        return bad_context (error, "start needs resources and comes once");
    js->started = true;
    return 0;
}

static int apply_release (struct jobstate *js, double ts, json_t *ctx,
                          flux_error_t *error)
{
    const char *ranks;
    struct idset *ranks_set;
    int final;

    if (!ctx
        || json_unpack (ctx, "{s:s s:b}", "ranks", &ranks, "final", &final) < 0)
        return bad_context (error, "context needs ranks and final");
    if (js->release_final || !js->has_resources)
        return bad_context (error, "no resources left to release");
    if (final) {
        js->release_final = true;
        return 0;
    }
    /* a partial release names its ranks (RFC 32): keep their union */
    if (!(ranks_set = idset_decode (ranks)))
        return bad_context (error, "ranks is not an idset");
    if (!js->released)
        js->released = ranks_set;
    else {
        int rc = idset_add (js->released, ranks_set);
        idset_destroy (ranks_set);
        if (rc < 0)
            return bad_context (error, "out of memory");
    }
    return 0;
}

static int apply_finish (struct jobstate *js, double ts, json_t *ctx,
                         flux_error_t *error)
{
    int status;

    if (!ctx || json_unpack (ctx, "{s:i}", "status", &status) < 0)
        return bad_context (error, "context needs an integer status");
    if (js->finished)
        return bad_context (error, "the job has already finished");
    js->finished = true;
    js->status = status;
    js->state = S_CLEANUP;
    return 0;
}

static int apply_free (struct jobstate *js, double ts, json_t *ctx,
                       flux_error_t *error)
{
    if (ctx && json_object_size (ctx) > 0)
        return bad_context (error, "the context must be empty");
    if (!js->has_resources)
        return bad_context (error, "the job holds no resources");
    js->has_resources = false;
    return 0;
}

static int apply_clean (struct jobstate *js, double ts, json_t *ctx,
                        flux_error_t *error)
{
    if (js->has_resources)
        return bad_context (error, "the job still holds resources");
    js->state = S_INACTIVE;
    js->t_clean = ts;
    return 0;
}

static int apply_exception (struct jobstate *js, double ts, json_t *ctx,
                            flux_error_t *error)
{
    const char *type, *note = "";
    int severity, userid = -1;

    if (!ctx
        || json_unpack (ctx, "{s:s s:i s?s s?i}", "type", &type, "severity",
                        &severity, "note", &note, "userid", &userid)
               < 0)
        return bad_context (error, "context needs type and severity");
    if (severity < 0 || severity > 7)
        return bad_context (error, "severity is out of range 0-7");
    if (*type == '\0')
        return bad_context (error, "type is empty");
    if (severity > 0)
        return 0;
    if (!js->fatal) {
        char *t = strdup (type), *n = strdup (note);
        if (!t || !n) {
            free (t);
            free (n);
            errno = ENOMEM;
            return errprintf (error, "out of memory");
        }
        js->fatal = true;
        js->exc_type = t;
        js->exc_note = n;
    }
    js->state = S_CLEANUP;
    return 0;
}

/* Merge src into dst: a null value removes the key. */
static int dict_update (json_t **dst, json_t *src)
{
    const char *key;
    json_t *val;

    if (!*dst && !(*dst = json_object ()))
        return -1;
    json_object_foreach (src, key, val)
    {
        if (json_is_null (val))
            (void)json_object_del (*dst, key);
        else if (json_object_set (*dst, key, val) < 0)
            return -1;
    }
    return 0;
}

static int apply_memo (struct jobstate *js, double ts, json_t *ctx,
                       flux_error_t *error)
{
    if (!ctx || json_object_size (ctx) == 0)
        return bad_context (error, "memo needs at least one key");
    if (dict_update (&js->memo, ctx) < 0) {
        errno = ENOMEM;
        return errprintf (error, "out of memory");
    }
    return 0;
}

static int apply_jobspec_update (struct jobstate *js, double ts, json_t *ctx,
                                 flux_error_t *error)
{
    const char *key;
    json_t *val;

    if (!ctx || json_object_size (ctx) == 0)
        return bad_context (error, "jobspec-update needs at least one key");
    json_object_foreach (ctx, key, val)
    {
        if (*key == '\0' || *key == '.' || key[strlen (key) - 1] == '.'
            || strstr (key, ".."))
            return bad_context (error, "jobspec-update key is malformed");
    }
    if ((!js->updates && !(js->updates = json_object ()))
        || json_object_update (js->updates, ctx) < 0) {
        errno = ENOMEM;
        return errprintf (error, "out of memory");
    }
    return 0;
}

static int apply_resource_update (struct jobstate *js, double ts, json_t *ctx,
                                  flux_error_t *error)
{
    double expiration;

    if (!ctx || json_unpack (ctx, "{s:F}", "expiration", &expiration) < 0)
        return bad_context (error, "context needs an expiration");
    if (expiration < 0)
        return bad_context (error, "expiration is negative");
    if (!js->has_resources)
        return bad_context (error, "the job holds no resources");
    js->expiration = expiration;
    return 0;
}

static int apply_set_flags (struct jobstate *js, double ts, json_t *ctx,
                            flux_error_t *error)
{
    json_t *flags, *val;
    size_t i;
    int bits = 0;

    if (!ctx || json_unpack (ctx, "{s:o}", "flags", &flags) < 0
        || !json_is_array (flags))
        return bad_context (error, "context needs a flags array");
    json_array_foreach (flags, i, val)
    {
        if (!json_is_string (val))
            return bad_context (error, "flags must be strings");
        bits |= jobstate_flag_bit (json_string_value (val));
    }
    js->flags |= bits;
    return 0;
}

static const struct {
    const char *name;
    int states; /* states the event is allowed in */
    apply_f apply;
} events[] = {
    {"submit", 0, apply_submit},
    {"validate", S_NEW, apply_validate},
    {"invalidate", S_NEW, apply_invalidate},
    {"dependency-add", S_NEW | S_DEPEND, apply_dependency_add},
    {"dependency-remove", S_NEW | S_DEPEND, apply_dependency_remove},
    {"depend", S_DEPEND, apply_depend},
    {"priority", S_PRIORITY | S_SCHED, apply_priority},
    {"urgency", S_ACTIVE, apply_urgency},
    {"flux-restart", S_ACTIVE, apply_flux_restart},
    {"alloc", S_SCHED | S_CLEANUP, apply_alloc},
    {"prolog-start", S_RUN, apply_prolog_start},
    {"prolog-finish", S_RUN | S_CLEANUP, apply_prolog_finish},
    {"start", S_RUN | S_CLEANUP, apply_start},
    {"release", S_RUN | S_CLEANUP, apply_release},
    {"finish", S_RUN | S_CLEANUP, apply_finish},
    {"epilog-start", S_CLEANUP, apply_epilog_start},
    {"epilog-finish", S_CLEANUP, apply_epilog_finish},
    {"free", S_CLEANUP, apply_free},
    {"clean", S_CLEANUP, apply_clean},
    {"exception", S_ACTIVE, apply_exception},
    {"memo", S_ACTIVE | S_INACTIVE, apply_memo},
    {"jobspec-update", S_ACTIVE, apply_jobspec_update},
    {"resource-update", S_RUN | S_CLEANUP, apply_resource_update},
    {"set-flags", S_ACTIVE, apply_set_flags},
};

int jobstate_apply (struct jobstate *js, double timestamp, const char *name,
                    json_t *context, flux_error_t *error)
{
    size_t i;

    if (!js || !name || (context && !json_is_object (context))) {
        errno = EINVAL;
        return errprintf (error, "invalid argument");
    }
    for (i = 0; i < sizeof (events) / sizeof (events[0]); i++) {
        if (!strcmp (events[i].name, name))
            break;
    }
    if (i == sizeof (events) / sizeof (events[0])) {
        /* events RFC 21 does not define MAY appear; they change nothing
         * but must not follow a final state or precede submit */
        if (js->state == 0 || js->state == S_INACTIVE)
            goto badstate;
        js->nevents++;
        return 0;
    }
    if (events[i].states == 0 ? js->state != 0
                              : !(events[i].states & js->state))
        goto badstate;
    if (events[i].apply (js, timestamp, context, error) < 0)
        return -1;
    js->nevents++;
    return 0;
badstate:
    errno = EINVAL;
    return errprintf (error, "%s is not allowed in state %s", name,
                      js->state ? jobstate_name (js->state) : "(none)");
}

int jobstate_apply_entry (struct jobstate *js, json_t *entry,
                          flux_error_t *error)
{
    double timestamp;
    const char *name;
    json_t *context;

    if (eventlog_entry_parse (entry, &timestamp, &name, &context) < 0) {
        errno = EPROTO;
        return errprintf (error, "malformed eventlog entry");
    }
    return jobstate_apply (js, timestamp, name, context, error);
}

int jobstate_replay_array (struct jobstate *js, json_t *log,
                           flux_error_t *error)
{
    json_t *entry;
    size_t i;
    flux_error_t e;

    jobstate_init (js);
    if (!json_is_array (log) || json_array_size (log) == 0) {
        errno = EPROTO;
        return errprintf (error, "empty eventlog");
    }
    json_array_foreach (log, i, entry)
    {
        if (jobstate_apply_entry (js, entry, &e) < 0) {
            int saved = errno;
            const char *name
                = json_string_value (json_object_get (entry, "name"));
            errprintf (error, "event %zu (%s): %s", i + 1, name ? name : "?",
                       e.text);
            jobstate_clear (js);
            errno = saved;
            return -1;
        }
    }
    if (js->state == 0) {
        jobstate_clear (js);
        errno = EPROTO;
        return errprintf (error, "no submit event");
    }
    return 0;
}

int jobstate_replay (struct jobstate *js, const char *eventlog,
                     flux_error_t *error)
{
    json_t *log;
    int rc;

    jobstate_init (js);
    if (!(log = eventlog_decode (eventlog)))
        return errprintf (error, "malformed eventlog");
    rc = jobstate_replay_array (js, log, error);
    json_decref (log);
    return rc;
}

int jobstate_result (const struct jobstate *js)
{
    if (js->fatal) {
        if (!strcmp (js->exc_type, "cancel"))
            return FLUX_JOB_RESULT_CANCELED;
        if (!strcmp (js->exc_type, "timeout"))
            return FLUX_JOB_RESULT_TIMEOUT;
        return FLUX_JOB_RESULT_FAILED;
    }
    if (js->finished)
        return js->status == 0 ? FLUX_JOB_RESULT_COMPLETED
                               : FLUX_JOB_RESULT_FAILED;
    if (js->state == S_CLEANUP || js->state == S_INACTIVE)
        return FLUX_JOB_RESULT_FAILED;
    return 0;
}

bool jobstate_success (const struct jobstate *js)
{
    return !js->fatal && js->finished && js->status == 0;
}

void jobstate_errstr (const struct jobstate *js, char *buf, size_t size)
{
    if (size == 0)
        return;
    buf[0] = '\0';
    if (js->fatal)
        snprintf (buf, size, "Fatal exception type=%s %s", js->exc_type,
                  js->exc_note);
    else if (!js->finished)
        snprintf (buf, size, "job did not run");
    else if (WIFSIGNALED (js->status))
        snprintf (buf, size, "task(s) %s", strsignal (WTERMSIG (js->status)));
    else if (WIFEXITED (js->status) && WEXITSTATUS (js->status) != 0)
        snprintf (buf, size, "task(s) exited with exit code %d",
                  WEXITSTATUS (js->status));
}
