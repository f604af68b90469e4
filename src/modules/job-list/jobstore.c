/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* jobstore.c - the job index, ordered state lists and counts (see
 * jobstore.h).
 *
 * Around every change to a job the store takes the job's contribution
 * out of the counts, lets job.c apply the change, and puts it back, so
 * counts never need a rescan.  The job moves in (or between) the
 * ordered lists only when its list or its sort key changed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "idhash.h"
#include "jobstore.h"
#include "libeventlog/eventlog.h"

#define NSTATES 7 /* NEW..INACTIVE, bit i = 1 << i */

struct counts {
    int state[NSTATES];
    int successful, failed, canceled, timeout, inactive_purged;
};

struct qstats {
    const char *name; /* pooled (one reference held here) */
    struct counts c;
};

/* purge events for jobs not (yet) inactive here, remembered */
#define PURGE_EARLY_MAX 65536

struct jobstore {
    idhash_t *index;
    ordlist_t *lists[4]; /* by LIST_*, [LIST_NONE] unused */
    strpool_t *pool;
    struct counts all;
    struct qstats *queues;
    int nqueues;
    unsigned int gen;
    bool resyncing;
    idhash_t *early; /* purged before their journal entry came */
    jobstore_notify_f notify;
    void *notify_arg;
};

static void purge_job (jobstore_t *js, struct job *job);

static int cmp_id (flux_jobid_t a, flux_jobid_t b)
{
    return a < b ? -1 : a > b ? 1 : 0;
}

static int cmp_pending (const void *a, const void *b)
{
    const struct job *j1 = a, *j2 = b;
    if (j1->priority != j2->priority)
        return j1->priority > j2->priority ? -1 : 1;
    return cmp_id (j1->id, j2->id);
}

static int cmp_running (const void *a, const void *b)
{
    const struct job *j1 = a, *j2 = b;
    if (j1->t_run != j2->t_run)
        return j1->t_run > j2->t_run ? -1 : 1;
    return cmp_id (j2->id, j1->id);
}

static int cmp_inactive (const void *a, const void *b)
{
    const struct job *j1 = a, *j2 = b;
    if (j1->t_inactive != j2->t_inactive)
        return j1->t_inactive > j2->t_inactive ? -1 : 1;
    return cmp_id (j2->id, j1->id);
}

jobstore_t *jobstore_create (void)
{
    jobstore_t *js;

    if (!(js = calloc (1, sizeof (*js))))
        return NULL;
    if (!(js->index = idhash_create ()) || !(js->pool = strpool_create ())
        || !(js->early = idhash_create ())
        || !(js->lists[LIST_PENDING] = ordlist_create (cmp_pending, 1))
        || !(js->lists[LIST_RUNNING] = ordlist_create (cmp_running, 2))
        || !(js->lists[LIST_INACTIVE] = ordlist_create (cmp_inactive, 3))) {
        jobstore_destroy (js);
        return NULL;
    }
    js->gen = 1;
    return js;
}

static int destroy_cb (uint64_t id, void *val, void *arg)
{
    job_destroy (val, arg);
    return 0;
}

void jobstore_destroy (jobstore_t *js)
{
    if (js) {
        int saved_errno = errno;
        idhash_foreach (js->index, destroy_cb, js->pool);
        idhash_destroy (js->index);
        idhash_destroy (js->early);
        for (int i = LIST_PENDING; i <= LIST_INACTIVE; i++)
            ordlist_destroy (js->lists[i]);
        for (int i = 0; i < js->nqueues; i++)
            strpool_put (js->pool, js->queues[i].name);
        free (js->queues);
        strpool_destroy (js->pool);
        free (js);
        errno = saved_errno;
    }
}

void jobstore_set_notify (jobstore_t *js, jobstore_notify_f cb, void *arg)
{
    js->notify = cb;
    js->notify_arg = arg;
}

static int state_index (int state)
{
    int i = 0;
    while (i < NSTATES - 1 && !(state & (1 << i)))
        i++;
    return i;
}

static int list_of (int state)
{
    if (state & FLUX_JOB_STATE_PENDING)
        return LIST_PENDING;
    if (state & FLUX_JOB_STATE_RUNNING)
        return LIST_RUNNING;
    if (state == FLUX_JOB_STATE_INACTIVE)
        return LIST_INACTIVE;
    return LIST_NONE;
}

/* The counts of the job's queue (created on first use; NULL if the job
 * has no queue or memory ran out, which only loses per-queue counts).
 */
static struct counts *queue_counts (jobstore_t *js, const char *queue)
{
    struct qstats *q;

    if (!queue)
        return NULL;
    for (int i = 0; i < js->nqueues; i++)
        if (js->queues[i].name == queue) /* pooled: same text, same pointer */
            return &js->queues[i].c;
    if (!(q = realloc (js->queues, (js->nqueues + 1) * sizeof (*q))))
        return NULL;
    js->queues = q;
    q = &js->queues[js->nqueues++];
    memset (q, 0, sizeof (*q));
    q->name = strpool_get (js->pool, queue); /* the text is pooled already */
    return &q->c;
}

static void counts_add (struct counts *c, const struct job *job, int dir)
{
    if (!c || job->state == FLUX_JOB_STATE_NEW)
        return;
    c->state[state_index (job->state)] += dir;
    if (job->state == FLUX_JOB_STATE_INACTIVE) {
        switch (job->result) {
            case FLUX_JOB_RESULT_COMPLETED:
                c->successful += dir;
                break;
            case FLUX_JOB_RESULT_CANCELED:
                c->canceled += dir;
                break;
            case FLUX_JOB_RESULT_TIMEOUT:
                c->timeout += dir;
                break;
            default:
                c->failed += dir;
                break;
        }
    }
}

static void stats_add (jobstore_t *js, const struct job *job, int dir)
{
    counts_add (&js->all, job, dir);
    counts_add (queue_counts (js, job->queue), job, dir);
}

static void unlist (jobstore_t *js, struct job *job)
{
    if (job->node) {
        ordlist_remove (js->lists[job->list], job->node);
        job->node = NULL;
    }
    job->list = LIST_NONE;
}

/* Put the job in the list of its state (an allocation failure leaves
 * it unlisted: it is still found by id).
 */
static void relist (jobstore_t *js, struct job *job)
{
    int list = list_of (job->state);

    unlist (js, job);
    if (list != LIST_NONE
        && (job->node = ordlist_insert (js->lists[list], job)))
        job->list = list;
}

static void drop (jobstore_t *js, struct job *job, bool notify)
{
    flux_jobid_t id = job->id;

    stats_add (js, job, -1);
    unlist (js, job);
    (void)idhash_remove (js->index, id);
    job_destroy (job, js->pool);
    if (notify && js->notify)
        js->notify (id, NULL, js->notify_arg);
}

struct job *jobstore_lookup (jobstore_t *js, flux_jobid_t id)
{
    return idhash_lookup (js->index, id);
}

static bool first_is_submit (json_t *events)
{
    const char *name;
    return eventlog_entry_parse (json_array_get (events, 0), NULL, &name, NULL)
               == 0
           && !strcmp (name, "submit");
}

static struct job *get_job (jobstore_t *js, flux_jobid_t id, json_t *events)
{
    struct job *job = idhash_lookup (js->index, id);

    /* a backlog entry after a journal restart rebuilds the job */
    if (job && js->resyncing && job->gen != js->gen
        && first_is_submit (events)) {
        drop (js, job, false); /* waiters keep waiting for the rebuild */
        job = NULL;
    }
    if (job)
        return job;
    if (!first_is_submit (events)) {
        errno = ENOENT;
        return NULL;
    }
    if (!(job = job_create (id)))
        return NULL;
    if (idhash_insert (js->index, id, job) < 0) {
        job_destroy (job, js->pool);
        return NULL;
    }
    job->gen = js->gen;
    return job;
}

/* Whether the job's place in the lists may have changed. */
struct key {
    int list;
    int64_t priority;
    double t_run, t_inactive;
};

static void key_get (const struct job *job, struct key *k)
{
    k->list = list_of (job->state);
    k->priority = job->priority;
    k->t_run = job->t_run;
    k->t_inactive = job->t_inactive;
}

static bool key_changed (const struct key *a, const struct key *b)
{
    return a->list != b->list
           || (a->list == LIST_PENDING && a->priority != b->priority)
           || (a->list == LIST_RUNNING && a->t_run != b->t_run)
           || (a->list == LIST_INACTIVE && a->t_inactive != b->t_inactive);
}

int jobstore_apply (jobstore_t *js, json_t *resp, flux_error_t *error)
{
    json_int_t id;
    json_t *events, *jobspec = NULL, *R = NULL, *entry;
    struct job *job;
    struct key before, after;
    flux_error_t e2;
    int rc = 0;
    size_t i;

    if (json_unpack (resp, "{s:I s:o s?o s?o}", "id", &id, "events", &events,
                     "jobspec", &jobspec, "R", &R)
            < 0
        || !json_is_array (events)) {
        errprintf (error, "journal response: expected {id:I, events:[]...}");
        errno = EPROTO;
        return -1;
    }
    if (!(job = get_job (js, (flux_jobid_t)id, events))) {
        if (errno == ENOMEM)
            return -1;
        if (json_array_size (events) == 0)
            return 0;
        errprintf (error, "journal: event for unknown job %ju",
                   (uintmax_t)(flux_jobid_t)id);
        errno = EPROTO;
        return -1;
    }
    job->gen = js->gen;
    key_get (job, &before);
    stats_add (js, job, -1);
    if (jobspec && job_apply_jobspec (job, js->pool, jobspec, &e2) < 0) {
        errprintf (error, "job %ju: %s", (uintmax_t)job->id, e2.text);
        rc = -1;
    }
    if (R && job_apply_R (job, js->pool, R, &e2) < 0 && rc == 0) {
        errprintf (error, "job %ju: %s", (uintmax_t)job->id, e2.text);
        rc = -1;
    }
    json_array_foreach (events, i, entry)
    {
        int n = job_apply_event (job, js->pool, entry, &e2);
        if (n == JOB_EVENT_INVALIDATE) {
            stats_add (js, job, 1); /* drop() takes it out again */
            drop (js, job, true);
            return rc;
        }
        if (n < 0 && rc == 0) {
            errprintf (error, "job %ju: %s", (uintmax_t)job->id, e2.text);
            rc = -1;
        }
    }
    stats_add (js, job, 1);
    key_get (job, &after);
    if (key_changed (&before, &after) || (!job->node && after.list))
        relist (js, job);
    if (job->state == FLUX_JOB_STATE_INACTIVE && idhash_count (js->early) > 0
        && idhash_remove (js->early, job->id)) {
        purge_job (js, job); /* notifies the drop */
        goto done;
    }
    if (js->notify)
        js->notify (job->id, job, js->notify_arg);
done:
    if (rc < 0 && errno != ENOMEM)
        errno = EPROTO;
    return rc;
}

static void purge_job (jobstore_t *js, struct job *job)
{
    struct counts *q;

    js->all.inactive_purged++;
    if ((q = queue_counts (js, job->queue)))
        q->inactive_purged++;
    drop (js, job, true);
}

int jobstore_purge (jobstore_t *js, flux_jobid_t id)
{
    struct job *job = idhash_lookup (js->index, id);

    if (!job || job->state != FLUX_JOB_STATE_INACTIVE) {
        int e = job ? EINVAL : ENOENT;
        /* the event overtook the journal: purge the job when its entry
         * makes it inactive (at most PURGE_EARLY_MAX remembered; the
         * next resync forgets them) */
        if (idhash_count (js->early) < PURGE_EARLY_MAX
            && !idhash_lookup (js->early, id))
            (void)idhash_insert (js->early, id, js);
        errno = e;
        return -1;
    }
    purge_job (js, job);
    return 0;
}

void jobstore_resync_begin (jobstore_t *js)
{
    js->gen++;
    js->resyncing = true;
}

struct stale {
    jobstore_t *js;
    struct job **jobs;
    size_t n, size;
};

static int stale_cb (uint64_t id, void *val, void *arg)
{
    struct stale *st = arg;
    struct job *job = val;

    if (job->gen == st->js->gen)
        return 0;
    if (st->n == st->size) {
        size_t size = st->size ? st->size * 2 : 64;
        struct job **p = realloc (st->jobs, size * sizeof (*p));
        if (!p)
            return -1; /* the rest stays until the next resync */
        st->jobs = p;
        st->size = size;
    }
    st->jobs[st->n++] = job;
    return 0;
}

/* The backlog named every job job-manager still has: an early purge
 * still waiting named a job it no longer has. */
static void forget_early (jobstore_t *js)
{
    idhash_t *h;

    if (idhash_count (js->early) == 0 || !(h = idhash_create ()))
        return;
    idhash_destroy (js->early);
    js->early = h;
}

/* Drop the jobs the new backlog did not mention (purged while
 * job-manager was away).  One walk of the hash per journal restart.
 */
void jobstore_resync_end (jobstore_t *js)
{
    struct stale st = {.js = js};

    js->resyncing = false;
    forget_early (js);
    (void)idhash_foreach (js->index, stale_cb, &st);
    for (size_t i = 0; i < st.n; i++)
        drop (js, st.jobs[i], true);
    free (st.jobs);
}

const ordlist_t *jobstore_list (jobstore_t *js, int which)
{
    return which >= LIST_PENDING && which <= LIST_INACTIVE ? js->lists[which]
                                                           : NULL;
}

size_t jobstore_count (jobstore_t *js)
{
    return idhash_count (js->index);
}

strpool_t *jobstore_strpool (jobstore_t *js)
{
    return js->pool;
}

static json_t *counts_encode (const struct counts *c, const char *name)
{
    static const char *names[NSTATES]
        = {"new", "depend", "priority", "sched", "run", "cleanup", "inactive"};
    json_t *states, *o;
    int total = 0;

    if (!(states = json_object ()))
        return NULL;
    for (int i = 1; i < NSTATES; i++) {
        if (json_object_set_new (states, names[i], json_integer (c->state[i]))
            < 0) {
            json_decref (states);
            return NULL;
        }
        total += c->state[i];
    }
    if (json_object_set_new (states, "total", json_integer (total)) < 0
        || !(o = json_pack ("{s:o s:i s:i s:i s:i s:i}", "job_states", states,
                            "successful", c->successful, "failed", c->failed,
                            "canceled", c->canceled, "timeout", c->timeout,
                            "inactive_purged", c->inactive_purged)))
        return NULL;
    if (name && json_object_set_new (o, "name", json_string (name)) < 0) {
        json_decref (o);
        return NULL;
    }
    return o;
}

json_t *jobstore_stats (jobstore_t *js)
{
    json_t *o, *queues, *q;

    if (!(o = counts_encode (&js->all, NULL)) || !(queues = json_array ())
        || json_object_set_new (o, "queues", queues) < 0)
        goto nomem;
    for (int i = 0; i < js->nqueues; i++) {
        if (!(q = counts_encode (&js->queues[i].c, js->queues[i].name))
            || json_array_append_new (queues, q) < 0)
            goto nomem;
    }
    return o;
nomem:
    json_decref (o);
    errno = ENOMEM;
    return NULL;
}
