/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* job.c - job records and the job table (see job.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libflux/jsonemit.h"
#include "libflux/jsonparse.h"
#include "heap.h"
#include "job.h"
#include "libeventlog/eventlog.h"
#include "libutil/fluid.h"

struct job *job_create (flux_jobid_t id)
{
    struct job *job;

    if (!(job = calloc (1, sizeof (*job))))
        return NULL;
    if (!(job->x = calloc (1, sizeof (*job->x)))) {
        job_destroy (job);
        errno = ENOMEM;
        return NULL;
    }
    job->id = id;
    job->x->job = job;
    list_init (&job->ilink);
    jobstate_init (&job->x->js);
    job->x->qidx = HEAP_NONE;
    job->x->aidx = HEAP_NONE;
    list_init (&job->x->alloc_link);
    list_init (&job->x->res_link);
    list_init (&job->x->dependents);
    list_init (&job->x->deplinks);
    return job;
}

/* Fill the compact header from a final jobstate. */
static int set_final (struct job *job, const struct jobstate *js)
{
    job->userid = js->userid;
    job->state = js->state;
    job->flags = js->flags;
    job->t_submit = js->t_submit;
    job->t_inactive = js->t_clean;
    job->result = jobstate_result (js);
    job->success = jobstate_success (js);
    job->started = js->started;
    if (job->flags & FLUX_JOB_WAITABLE) {
        char buf[256];
        jobstate_errstr (js, buf, sizeof (buf));
        if (!(job->errstr = strdup (buf)))
            return -1;
    }
    return 0;
}

struct job *job_create_inactive (flux_jobid_t id, const struct jobstate *js)
{
    struct job *job;

    if (!(job = calloc (1, sizeof (*job))))
        return NULL;
    job->id = id;
    list_init (&job->ilink);
    if (set_final (job, js) < 0) {
        job_destroy (job);
        return NULL;
    }
    return job;
}

static void jobx_destroy (struct jobx *x)
{
    if (x) {
        jobstate_clear (&x->js);
        strpool_put (x->pool, x->jobspec);
        strpool_put (x->pool, x->environment);
        json_decref (x->R);
        free (x->eventlog);
        json_decref (x->annotations);
        idset_destroy (x->free_unsent);
        if (x->begin_timer)
            flux_uv_close_free ((uv_handle_t *)x->begin_timer);
        free (x);
    }
}

void job_destroy (struct job *job)
{
    if (job) {
        int saved = errno;
        jobx_destroy (job->x);
        free (job->errstr);
        free (job);
        errno = saved;
    }
}

void job_compact (struct job *job)
{
    if (!job->x)
        return;
    (void)set_final (job, &job->x->js);
    jobx_destroy (job->x);
    job->x = NULL;
}

json_t *job_jobspec_redacted (const json_t *jobspec)
{
    json_t *attrs, *sys, *copy = NULL, *acopy = NULL, *scopy = NULL;

    attrs = json_object_get (jobspec, "attributes");
    sys = json_object_get (attrs, "system");
    if (!json_object_get (sys, "environment"))
        return json_incref ((json_t *)jobspec);
    if (!(copy = json_copy ((json_t *)jobspec)) || !(acopy = json_copy (attrs))
        || !(scopy = json_copy (sys))
        || json_object_del (scopy, "environment") < 0
        || json_object_set (acopy, "system", scopy) < 0
        || json_object_set (copy, "attributes", acopy) < 0) {
        json_decref (copy);
        copy = NULL;
    }
    json_decref (acopy);
    json_decref (scopy);
    return copy;
}

/* The pooled copy of the dump of o (any: o may be any JSON value). */
static const char *pooled_dump (strpool_t *pool, json_t *o, bool any)
{
    char *s = jsonemit (o, JSON_COMPACT | (any ? JSON_ENCODE_ANY : 0), NULL);
    const char *p = s ? strpool_get (pool, s) : NULL;

    free (s);
    return p;
}

int job_jobspec_set (struct jobx *x, strpool_t *pool, json_t *jobspec)
{
    json_t *env = json_object_get (
        json_object_get (json_object_get (jobspec, "attributes"), "system"),
        "environment");
    const char *text = NULL, *rest_text = NULL;
    json_t *rest;

    if (!pool || (x->pool && x->pool != pool)) {
        errno = EINVAL;
        return -1;
    }
    if (env && !(text = pooled_dump (pool, env, true)))
        goto nomem;
    if (!(rest = job_jobspec_redacted (jobspec)))
        goto nomem;
    rest_text = pooled_dump (pool, rest, false);
    json_decref (rest);
    if (!rest_text)
        goto nomem;
    strpool_put (pool, x->jobspec);
    strpool_put (pool, x->environment);
    x->pool = pool;
    x->jobspec = rest_text;
    x->environment = text;
    return 0;
nomem:
    strpool_put (pool, text);
    errno = ENOMEM;
    return -1;
}

json_t *job_jobspec (const struct jobx *x)
{
    json_t *o;

    if (!x->jobspec) {
        errno = ENOENT;
        return NULL;
    }
    /* jsonparse.h: json_loads, faster (this runs for every start) */
    if (!(o = jsonparse (x->jobspec, strlen (x->jobspec), NULL, 0))) {
        errno = EPROTO; /* only memory can be short: it was dumped here */
        return NULL;
    }
    return o;
}

json_t *job_jobspec_full (const struct jobx *x)
{
    json_t *jobspec, *env, *attrs, *sys;

    if (!(jobspec = job_jobspec (x)) || !x->environment)
        return jobspec;
    /* it is an object whenever the jobspec passed validation, which
     * jsonparse takes; anything else goes to jansson */
    if (!(env = jsonparse (x->environment, strlen (x->environment), NULL, 0))
        && !(env = json_loads (x->environment, JSON_DECODE_ANY, NULL)))
        goto nomem;
    /* the object is our own: set the environment in place */
    if (!(attrs = json_object_get (jobspec, "attributes"))
        && (!(attrs = json_object ())
            || json_object_set_new (jobspec, "attributes", attrs) < 0))
        goto nomem_env;
    if (!(sys = json_object_get (attrs, "system"))
        && (!(sys = json_object ())
            || json_object_set_new (attrs, "system", sys) < 0))
        goto nomem_env;
    if (json_object_set_new (sys, "environment", env) < 0)
        goto nomem;
    return jobspec;
nomem_env:
    json_decref (env);
nomem:
    json_decref (jobspec);
    errno = ENOMEM;
    return NULL;
}

int job_jobspec_apply (struct jobx *x, json_t *updates)
{
    json_t *jobspec;
    const char *text;

    if (!(jobspec = job_jobspec (x)))
        return -1;
    if (job_jobspec_update (jobspec, updates) < 0) {
        json_decref (jobspec);
        return -1;
    }
    text = pooled_dump (x->pool, jobspec, false);
    json_decref (jobspec);
    if (!text) {
        errno = ENOMEM;
        return -1;
    }
    strpool_put (x->pool, x->jobspec);
    x->jobspec = text;
    return 0;
}

int job_eventlog_append (struct jobx *x, const char *line)
{
    size_t len = strlen (line);

    if (x->eventlog_len + len + 1 > x->eventlog_size) {
        /* grow by half again: a finished job has ~10 events */
        size_t size = x->eventlog_size + x->eventlog_size / 2;
        char *nb;
        if (size < x->eventlog_len + len + 1)
            size = x->eventlog_len + len + 1;
        if (!(nb = realloc (x->eventlog, size))) {
            errno = ENOMEM;
            return -1;
        }
        x->eventlog = nb;
        x->eventlog_size = size;
    }
    memcpy (x->eventlog + x->eventlog_len, line, len + 1);
    x->eventlog_len += len;
    return 0;
}

int job_eventlog_set (struct jobx *x, const json_t *log)
{
    char *s;

    if (!(s = eventlog_encode (log)))
        return -1;
    free (x->eventlog);
    x->eventlog = s;
    x->eventlog_len = strlen (s);
    x->eventlog_size = x->eventlog_len + 1;
    return 0;
}

json_t *job_eventlog (const struct jobx *x)
{
    if (!x->eventlog)
        return json_array ();
    return eventlog_decode (x->eventlog);
}

static int set_path (json_t *o, const char *path, json_t *val)
{
    char *copy, *key, *dot;
    int rc = -1;

    if (!(copy = strdup (path)))
        return -1;
    key = copy;
    while ((dot = strchr (key, '.'))) {
        json_t *next;
        *dot = '\0';
        if (!(next = json_object_get (o, key))) {
            if (!(next = json_object ())
                || json_object_set_new (o, key, next) < 0)
                goto done;
        }
        else if (!json_is_object (next)) {
            errno = EINVAL;
            goto done;
        }
        o = next;
        key = dot + 1;
    }
    if (json_object_set (o, key, val) < 0)
        goto done;
    rc = 0;
done:
    free (copy);
    return rc;
}

int job_jobspec_update (json_t *jobspec, json_t *updates)
{
    const char *key;
    json_t *val;

    if (!json_is_object (jobspec) || !json_is_object (updates)) {
        errno = EINVAL;
        return -1;
    }
    json_object_foreach (updates, key, val)
    {
        if (set_path (jobspec, key, val) < 0)
            return -1;
    }
    return 0;
}

int job_kvs_key (char *buf, size_t size, flux_jobid_t id, const char *name)
{
    char dir[FLUID_STRING_MAX];
    int n;

    if (fluid_encode (dir, sizeof (dir), id, FLUID_STRING_KVS) < 0)
        return -1;
    if (name)
        n = snprintf (buf, size, "%s.%s", dir, name);
    else
        n = snprintf (buf, size, "%s", dir);
    if (n < 0 || (size_t)n >= size) {
        errno = EOVERFLOW;
        return -1;
    }
    return 0;
}

/* Job table */

struct jobtab {
    struct job **buckets;
    size_t nbuckets; /* a power of two */
    size_t count;
    struct list_node inactive;
    size_t ninactive;
};

static size_t bucket (const struct jobtab *t, flux_jobid_t id)
{
    /* FLUIDs keep their sequence in the low bits: mix before masking */
    uint64_t h = id * UINT64_C (0x9E3779B97F4A7C15);
    return (size_t)(h >> 32) & (t->nbuckets - 1);
}

struct jobtab *jobtab_create (void)
{
    struct jobtab *t;

    if (!(t = calloc (1, sizeof (*t))))
        return NULL;
    t->nbuckets = 1024;
    if (!(t->buckets = calloc (t->nbuckets, sizeof (t->buckets[0])))) {
        free (t);
        return NULL;
    }
    list_init (&t->inactive);
    return t;
}

void jobtab_destroy (struct jobtab *t)
{
    if (t) {
        int saved = errno;
        for (size_t i = 0; i < t->nbuckets; i++) {
            struct job *job = t->buckets[i];
            while (job) {
                struct job *next = job->hnext;
                job_destroy (job);
                job = next;
            }
        }
        free (t->buckets);
        free (t);
        errno = saved;
    }
}

static int grow (struct jobtab *t)
{
    size_t n = t->nbuckets * 2, old = t->nbuckets;
    struct job **b, **oldb = t->buckets;

    if (!(b = calloc (n, sizeof (*b))))
        return -1;
    t->buckets = b;
    t->nbuckets = n;
    for (size_t i = 0; i < old; i++) {
        struct job *job = oldb[i];
        while (job) {
            struct job *next = job->hnext;
            size_t k = bucket (t, job->id);
            job->hnext = b[k];
            b[k] = job;
            job = next;
        }
    }
    free (oldb);
    return 0;
}

int jobtab_insert (struct jobtab *t, struct job *job)
{
    size_t k;

    if (jobtab_lookup (t, job->id)) {
        errno = EEXIST;
        return -1;
    }
    if (t->count >= t->nbuckets && grow (t) < 0)
        return -1;
    k = bucket (t, job->id);
    job->hnext = t->buckets[k];
    t->buckets[k] = job;
    t->count++;
    return 0;
}

struct job *jobtab_lookup (struct jobtab *t, flux_jobid_t id)
{
    struct job *job = t->buckets[bucket (t, id)];

    while (job && job->id != id)
        job = job->hnext;
    return job;
}

void jobtab_remove (struct jobtab *t, struct job *job)
{
    struct job **pp = &t->buckets[bucket (t, job->id)];

    while (*pp && *pp != job)
        pp = &(*pp)->hnext;
    if (!*pp)
        return;
    *pp = job->hnext;
    job->hnext = NULL;
    t->count--;
    if (list_attached (&job->ilink)) {
        list_del (&job->ilink);
        t->ninactive--;
    }
}

size_t jobtab_count (const struct jobtab *t)
{
    return t->count;
}

void jobtab_inactive_add (struct jobtab *t, struct job *job)
{
    if (!list_attached (&job->ilink)) {
        list_add_tail (&t->inactive, &job->ilink);
        t->ninactive++;
    }
}

struct job *jobtab_inactive_first (struct jobtab *t)
{
    return list_first_entry_or_null (&t->inactive, struct job, ilink);
}

struct job *jobtab_inactive_next (struct jobtab *t, struct job *job)
{
    if (job->ilink.next == &t->inactive)
        return NULL;
    return list_entry (job->ilink.next, struct job, ilink);
}

size_t jobtab_inactive_count (const struct jobtab *t)
{
    return t->ninactive;
}

struct job *jobtab_first (struct jobtab *t, size_t *cursor)
{
    for (size_t i = 0; i < t->nbuckets; i++) {
        if (t->buckets[i]) {
            *cursor = i;
            return t->buckets[i];
        }
    }
    return NULL;
}

struct job *jobtab_next (struct jobtab *t, struct job *job, size_t *cursor)
{
    if (job->hnext)
        return job->hnext;
    for (size_t i = *cursor + 1; i < t->nbuckets; i++) {
        if (t->buckets[i]) {
            *cursor = i;
            return t->buckets[i];
        }
    }
    return NULL;
}
