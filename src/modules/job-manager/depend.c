/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* depend.c - RFC 26 dependencies (see depend.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "action.h"
#include "depend.h"
#include "event.h"
#include "libutil/fluid.h"

struct depend {
    struct jobmgr *jm;
    uv_loop_t *loop;
};

/* A dependent job waiting on an antecedent. */
struct deplink {
    struct list_node alink; /* on the antecedent's dependents */
    struct list_node dlink; /* on the dependent's deplinks */
    struct job *dependent;
    flux_jobid_t antecedent;
    int scheme;
    char desc[160];
};

/* A begin-time timer: the uv handle comes first (job.c frees it). */
struct begin {
    uv_timer_t timer;
    struct depend *d;
    struct job *job;
    double begin; /* the begin time, seconds since the epoch */
    char desc[160];
};

static const struct {
    const char *name;
    int scheme;
} schemes[] = {
    {"after", DEP_AFTER},           {"afterany", DEP_AFTERANY},
    {"afterok", DEP_AFTEROK},       {"afternotok", DEP_AFTERNOTOK},
    {"begin-time", DEP_BEGIN_TIME},
};

int depend_parse (json_t *dep, struct depinfo *info, flux_error_t *error)
{
    const char *scheme, *value = NULL;
    json_t *v;
    char buf[64], *end;
    size_t i;
    int n;

    memset (info, 0, sizeof (*info));
    if (!json_is_object (dep)
        || json_unpack (dep, "{s:s s:o}", "scheme", &scheme, "value", &v) < 0)
        goto inval_obj;
    if (json_is_string (v))
        value = json_string_value (v);
    else if (json_is_number (v)) {
        snprintf (buf, sizeof (buf), "%.17g", json_number_value (v));
        value = buf;
    }
    else
        goto inval_obj;
    for (i = 0; i < sizeof (schemes) / sizeof (schemes[0]); i++) {
        if (!strcmp (schemes[i].name, scheme))
            break;
    }
    if (i == sizeof (schemes) / sizeof (schemes[0])) {
        errno = EINVAL;
        return errprintf (error, "dependency scheme \"%s\" is not supported",
                          scheme);
    }
    info->scheme = schemes[i].scheme;
    if (info->scheme == DEP_BEGIN_TIME) {
        errno = 0;
        info->begin = strtod (value, &end);
        if (errno || end == value || *end != '\0' || !isfinite (info->begin)
            || info->begin < 0) {
            errno = EINVAL;
            return errprintf (error, "begin-time: invalid timestamp \"%s\"",
                              value);
        }
    }
    else if (fluid_parse (value, &info->id) < 0) {
        errno = EINVAL;
        return errprintf (error, "%s: invalid job id \"%s\"", scheme, value);
    }
    n = snprintf (info->desc, sizeof (info->desc), "%s=%s", scheme, value);
    if (n < 0 || (size_t)n >= sizeof (info->desc)) {
        errno = EINVAL;
        return errprintf (error, "%s: value is too long", scheme);
    }
    return 0;
inval_obj:
    errno = EINVAL;
    return errprintf (error, "a dependency must be an object with string"
                             " scheme and value");
}

struct depend *depend_create (struct jobmgr *jm)
{
    struct depend *d;

    if (!(d = calloc (1, sizeof (*d))))
        return NULL;
    d->jm = jm;
    d->loop = flux_reactor_uv (flux_get_reactor (jm->h));
    return d;
}

void depend_destroy (struct depend *d)
{
    free (d);
}

static void fail (struct depend *d, struct job *job, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
static void fail (struct depend *d, struct job *job, const char *fmt, ...)
{
    char note[256];
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (note, sizeof (note), fmt, ap);
    va_end (ap);
    (void)action_raise (d->jm, job, "depend", 0, FLUX_USERID_UNKNOWN, note);
}

static bool in_dict (json_t *dict, const char *key)
{
    return dict && json_object_get (dict, key) != NULL;
}

/* Post dependency-add unless it is outstanding already (restart). */
static int add (struct depend *d, struct job *job, const char *desc)
{
    if (in_dict (job->x->js.deps, desc))
        return 0;
    return event_post_pack (d->jm, job, "dependency-add", 0, "{s:s}",
                            "description", desc);
}

static void begin_cb (uv_timer_t *t);

/* Arm b's timer for its begin time, now being now.  libuv counts from
 * the loop's time, cached when the loop turn began, so a timer set late
 * in a long turn fires early by the turn's length: begin_cb checks the
 * clock and arms again if it came before the begin time. */
static void begin_arm (struct begin *b, double now)
{
    double delay = (b->begin - now) * 1000.;

    if (delay > 1e15)
        delay = 1e15;
    uv_timer_start (&b->timer, begin_cb, (uint64_t)delay + 1, 0);
}

static void begin_cb (uv_timer_t *t)
{
    struct begin *b = (struct begin *)t;
    struct job *job = b->job;
    double now = jm_now ();

    if (now < b->begin) {
        begin_arm (b, now);
        return;
    }
    if (job->x && job->x->js.state == FLUX_JOB_STATE_DEPEND
        && in_dict (job->x->js.deps, b->desc))
        (void)event_post_pack (b->d->jm, job, "dependency-remove", 0, "{s:s}",
                               "description", b->desc);
}

static int begin_time (struct depend *d, struct job *job,
                       const struct depinfo *info)
{
    double now = jm_now ();
    struct begin *b;

    if (info->begin <= now)
        return 1; /* satisfied */
    if (job->x->begin_timer) {
        fail (d, job, "only one begin-time dependency is supported");
        return -1;
    }
    if (!(b = calloc (1, sizeof (*b))))
        return -1;
    b->d = d;
    b->job = job;
    b->begin = info->begin;
    snprintf (b->desc, sizeof (b->desc), "%s", info->desc);
    uv_timer_init (d->loop, &b->timer);
    job->x->begin_timer = &b->timer;
    begin_arm (b, now);
    return add (d, job, info->desc) < 0 ? -1 : 0;
}

/* after* on antecedent ant: 1 if met, 0 if waiting (linked), -1 if it
 * never can be (exception raised). */
static int after (struct depend *d, struct job *job, struct job *ant,
                  const struct depinfo *info)
{
    struct deplink *l;

    if (ant->userid != job->userid && job->userid != d->jm->owner) {
        fail (d, job, "%s: permission denied (job belongs to another user)",
              info->desc);
        return -1;
    }
    if (!ant->x) { /* inactive */
        switch (info->scheme) {
            case DEP_AFTER:
                if (ant->started)
                    return 1;
                fail (d, job, "%s: antecedent job never started", info->desc);
                return -1;
            case DEP_AFTERANY:
                return 1;
            case DEP_AFTEROK:
                if (ant->success)
                    return 1;
                fail (d, job, "%s: antecedent job failed", info->desc);
                return -1;
            default:
                if (!ant->success)
                    return 1;
                fail (d, job, "%s: antecedent job succeeded", info->desc);
                return -1;
        }
    }
    if (info->scheme == DEP_AFTER && ant->x->js.started)
        return 1;
    if (!(l = calloc (1, sizeof (*l))))
        return -1;
    l->dependent = job;
    l->antecedent = ant->id;
    l->scheme = info->scheme;
    snprintf (l->desc, sizeof (l->desc), "%s", info->desc);
    list_add_tail (&ant->x->dependents, &l->alink);
    list_add_tail (&job->x->deplinks, &l->dlink);
    return add (d, job, info->desc) < 0 ? -1 : 0;
}

static bool still_depend (struct job *job)
{
    return job->x && job->x->js.state == FLUX_JOB_STATE_DEPEND;
}

/* Resolve the jobspec's dependencies (once).  Returns -1 if the job left
 * DEPEND meanwhile. */
static int resolve (struct depend *d, struct job *job)
{
    json_t *jobspec, *deps, *dep, *met = NULL;
    size_t i;
    struct depinfo info;
    flux_error_t error;

    /* most jobs have none: do not parse the jobspec for them */
    if (!job->x->jobspec || !strstr (job->x->jobspec, "\"dependencies\""))
        return 0;
    if (!(jobspec = job_jobspec (job->x))) {
        fail (d, job, "cannot read the jobspec: %s", strerror (errno));
        return -1;
    }
    deps = json_object_get (
        json_object_get (json_object_get (jobspec, "attributes"), "system"),
        "dependencies");
    if (!deps) {
        json_decref (jobspec);
        return 0;
    }
    if (!json_is_array (deps)) {
        fail (d, job, "attributes.system.dependencies must be an array");
        goto out;
    }
    if (!(met = json_array ()))
        goto out;
    json_array_foreach (deps, i, dep)
    {
        struct job *ant;
        int rc;
        if (depend_parse (dep, &info, &error) < 0) {
            fail (d, job, "%s", error.text);
            goto out;
        }
        if (in_dict (job->x->js.deps_done, info.desc))
            continue;
        if (info.scheme == DEP_BEGIN_TIME)
            rc = begin_time (d, job, &info);
        else if (!(ant = jobtab_lookup (d->jm->jobs, info.id))) {
            fail (d, job, "%s: job not found", info.desc);
            goto out;
        }
        else
            rc = after (d, job, ant, &info);
        if (rc < 0 || !still_depend (job))
            goto out;
        if (rc == 1 && in_dict (job->x->js.deps, info.desc))
            json_array_append_new (met, json_string (info.desc));
    }
    /* met while the job manager was away: remove them now */
    json_array_foreach (met, i, dep)
    {
        if (!still_depend (job))
            break;
        (void)event_post_pack (d->jm, job, "dependency-remove", 0, "{s:O}",
                               "description", dep);
    }
out:
    json_decref (met);
    json_decref (jobspec);
    return still_depend (job) ? 0 : -1;
}

void depend_check (struct depend *d, struct job *job)
{
    struct jobx *x = job->x;

    if (!still_depend (job))
        return;
    if (!x->depend_done) {
        x->depend_done = 1;
        x->depend_busy = 1;
        int rc = resolve (d, job);
        if (job->x)
            job->x->depend_busy = 0;
        if (rc < 0)
            return;
    }
    if (x->depend_busy)
        return;
    if (json_object_size (x->js.deps) == 0)
        (void)event_post (d->jm, job, "depend", 0, NULL, NULL);
}

static void unlink_free (struct deplink *l)
{
    list_del (&l->alink);
    list_del (&l->dlink);
    free (l);
}

void depend_notify (struct depend *d, struct job *ant, int state)
{
    struct list_node todo, *pos, *tmp;

    list_init (&todo);
    list_for_each_safe (pos, tmp, &ant->x->dependents)
    {
        struct deplink *l = list_entry (pos, struct deplink, alink);
        if (state == FLUX_JOB_STATE_INACTIVE || l->scheme == DEP_AFTER) {
            list_del (&l->alink);
            list_add_tail (&todo, &l->alink);
        }
    }
    while (!list_empty (&todo)) {
        struct deplink *l = list_entry (todo.next, struct deplink, alink);
        struct job *job = l->dependent;
        char desc[160];
        int scheme = l->scheme;
        bool ok;
        snprintf (desc, sizeof (desc), "%s", l->desc);
        unlink_free (l);
        if (!still_depend (job))
            continue;
        switch (scheme) {
            case DEP_AFTER:
                ok = (state == FLUX_JOB_STATE_RUN);
                break;
            case DEP_AFTEROK:
                ok = jobstate_success (&ant->x->js);
                break;
            case DEP_AFTERNOTOK:
                ok = !jobstate_success (&ant->x->js);
                break;
            default:
                ok = true;
        }
        if (ok)
            (void)event_post_pack (d->jm, job, "dependency-remove", 0, "{s:s}",
                                   "description", desc);
        else if (scheme == DEP_AFTER)
            fail (d, job, "%s: antecedent job never started", desc);
        else if (scheme == DEP_AFTEROK)
            fail (d, job, "%s: antecedent job failed", desc);
        else
            fail (d, job, "%s: antecedent job succeeded", desc);
    }
}

void depend_cancel (struct depend *d, struct job *job)
{
    struct jobx *x = job->x;

    while (!list_empty (&x->deplinks))
        unlink_free (list_entry (x->deplinks.next, struct deplink, dlink));
    if (x->begin_timer) {
        uv_timer_stop (x->begin_timer);
        flux_uv_close_free ((uv_handle_t *)x->begin_timer);
        x->begin_timer = NULL;
    }
}
