/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* restart.c - reload jobs from the KVS (see restart.h).
 *
 * The walk is a FIFO of lookups to make and a window of up to WINDOW
 * lookups in flight; the oldest is waited for (synchronously: other
 * responses reach their futures meanwhile, requests are kept for the
 * reactor) and may add lookups of its own (a directory's children, an
 * active job's jobspec and R).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "libflux/jsonparse.h"
#include "action.h"
#include "alloc.h"
#include "depend.h"
#include "event.h"
#include "history.h"
#include "libeventlog/eventlog.h"
#include "libkvs/kvs.h"
#include "libutil/fluid.h"
#include "restart.h"
#include "start.h"
#include "urgency.h"
#include "wait.h"

#define WINDOW 256

enum { RQ_DIR, RQ_EVENTLOG, RQ_JOBSPEC, RQ_R };

struct rq {
    int type;
    int level; /* RQ_DIR: 0 for "job", 3 for job.A.B.C */
    char key[96];
    flux_jobid_t id;
    struct job *job;
    flux_future_t *f;
};

struct walk {
    struct jobmgr *jm;
    struct rq *todo; /* FIFO */
    size_t todo_head, todo_count, todo_alloc;
    struct rq ring[WINDOW];
    size_t head, count;
    struct job **inactive;
    size_t ninactive, inactive_alloc;
    int loaded;
};

static int push (struct walk *w, int type, int level, const char *key,
                 flux_jobid_t id, struct job *job)
{
    struct rq *rq;

    if (w->todo_head + w->todo_count == w->todo_alloc) {
        if (w->todo_head > 0) { /* compact first */
            memmove (w->todo, w->todo + w->todo_head,
                     w->todo_count * sizeof (*w->todo));
            w->todo_head = 0;
        }
        if (w->todo_count == w->todo_alloc) {
            size_t n = w->todo_alloc ? w->todo_alloc * 2 : 256;
            struct rq *t = realloc (w->todo, n * sizeof (*t));
            if (!t)
                return -1;
            w->todo = t;
            w->todo_alloc = n;
        }
    }
    rq = &w->todo[w->todo_head + w->todo_count++];
    memset (rq, 0, sizeof (*rq));
    rq->type = type;
    rq->level = level;
    snprintf (rq->key, sizeof (rq->key), "%s", key);
    rq->id = id;
    rq->job = job;
    return 0;
}

static bool is_hex4 (const char *s)
{
    if (strlen (s) != 4)
        return false;
    for (int i = 0; i < 4; i++) {
        if (!isxdigit ((unsigned char)s[i]))
            return false;
    }
    return true;
}

static void got_dir (struct walk *w, struct rq *rq)
{
    const flux_kvsdir_t *dir;
    flux_kvsitr_t *itr;
    const char *name;
    char key[96];

    if (flux_kvs_lookup_get_dir (rq->f, &dir) < 0) {
        if (errno != ENOENT)
            jm_log (w->jm, LOG_ERR, "restart: %s: %s", rq->key,
                    future_strerror (rq->f, errno));
        return;
    }
    if (!(itr = flux_kvsitr_create (dir)))
        return;
    while ((name = flux_kvsitr_next (itr))) {
        if (!is_hex4 (name)) {
            jm_log (w->jm, LOG_WARNING, "restart: ignoring %s.%s", rq->key,
                    name);
            continue;
        }
        snprintf (key, sizeof (key), "%s.%s", rq->key, name);
        if (rq->level < 3)
            (void)push (w, RQ_DIR, rq->level + 1, key, 0, NULL);
        else {
            fluid_t id;
            char dothex[32], evkey[112];
            snprintf (dothex, sizeof (dothex), "%s", key + 4); /* "job." */
            if (fluid_decode (dothex, &id, FLUID_STRING_DOTHEX) < 0)
                continue;
            snprintf (evkey, sizeof (evkey), "%s.eventlog", key);
            (void)push (w, RQ_EVENTLOG, 0, evkey, id, NULL);
        }
    }
    flux_kvsitr_destroy (itr);
}

static void got_eventlog (struct walk *w, struct rq *rq)
{
    const char *s;
    json_t *log = NULL;
    struct jobstate js;
    flux_error_t error;
    struct job *job = NULL;
    char key[96];

    if (flux_kvs_lookup_get (rq->f, &s) < 0 || !s
        || !(log = eventlog_decode (s))) {
        jm_log (w->jm, LOG_ERR, "restart: %s: %s", rq->key,
                s ? "malformed eventlog" : future_strerror (rq->f, errno));
        return;
    }
    if (jobstate_replay_array (&js, log, &error) < 0) {
        jm_log (w->jm, LOG_ERR, "restart: job %ju: %s: skipping it",
                (uintmax_t)rq->id, error.text);
        goto done;
    }
    if (js.invalid) {
        /* RFC 21: an invalidated job is removed (it was not yet) */
        if (job_kvs_key (key, sizeof (key), rq->id, NULL) == 0)
            (void)event_kvs_put (w->jm, key, NULL);
        jobstate_clear (&js);
        goto done;
    }
    if (js.state == FLUX_JOB_STATE_INACTIVE) {
        job = job_create_inactive (rq->id, &js);
        jobstate_clear (&js);
    }
    else if ((job = job_create (rq->id))) {
        job->x->js = js; /* ownership moves */
        job->userid = js.userid;
        job->state = js.state;
        job->flags = js.flags;
        job->t_submit = js.t_submit;
        if (job_eventlog_set (job->x, log) < 0)
            jm_log (w->jm, LOG_ERR, "restart: job %ju: eventlog: %s",
                    (uintmax_t)rq->id, strerror (errno));
    }
    else
        jobstate_clear (&js);
    if (!job || jobtab_insert (w->jm->jobs, job) < 0) {
        jm_log (w->jm, LOG_ERR, "restart: job %ju: %s", (uintmax_t)rq->id,
                strerror (errno));
        job_destroy (job);
        goto done;
    }
    w->loaded++;
    history_add (w->jm->history, job);
    jobmgr_state_count (w->jm, job->state, 1);
    if (job->id > w->jm->max_jobid)
        w->jm->max_jobid = job->id;
    if (!job->x) {
        if (w->ninactive == w->inactive_alloc) {
            size_t n = w->inactive_alloc ? w->inactive_alloc * 2 : 256;
            struct job **a = realloc (w->inactive, n * sizeof (*a));
            if (!a)
                goto done;
            w->inactive = a;
            w->inactive_alloc = n;
        }
        w->inactive[w->ninactive++] = job;
        goto done;
    }
    if (job_kvs_key (key, sizeof (key), job->id, "jobspec") == 0)
        (void)push (w, RQ_JOBSPEC, 0, key, job->id, job);
    if (job->x->js.has_resources
        && job_kvs_key (key, sizeof (key), job->id, "R") == 0)
        (void)push (w, RQ_R, 0, key, job->id, job);
done:
    json_decref (log);
}

static void got_object (struct walk *w, struct rq *rq)
{
    const char *s;
    json_t *o;

    if (flux_kvs_lookup_get (rq->f, &s) < 0 || !s
        || !(o = jsonparse (s, strlen (s), NULL, 0))) {
        jm_log (w->jm, LOG_ERR, "restart: %s: %s", rq->key,
                future_strerror (rq->f, errno ? errno : EPROTO));
        return;
    }
    if (rq->type == RQ_R) {
        json_decref (rq->job->x->R);
        rq->job->x->R = o;
        return;
    }
    if (rq->job->x->js.updates
        && job_jobspec_update (o, rq->job->x->js.updates) < 0)
        jm_log (w->jm, LOG_ERR, "restart: %s: jobspec-update failed", rq->key);
    if (job_jobspec_set (rq->job->x, w->jm->strings, o) < 0)
        jm_log (w->jm, LOG_ERR, "restart: %s: %s", rq->key, strerror (errno));
    json_decref (o);
}

static int issue (struct walk *w)
{
    struct rq *rq = &w->ring[(w->head + w->count) % WINDOW];

    *rq = w->todo[w->todo_head++];
    w->todo_count--;
    rq->f = flux_kvs_lookup (
        w->jm->h, NULL, rq->type == RQ_DIR ? FLUX_KVS_READDIR : 0, rq->key);
    if (!rq->f)
        return -1;
    w->count++;
    return 0;
}

static int jobcmp (const void *a, const void *b)
{
    const struct job *ja = *(struct job *const *)a;
    const struct job *jb = *(struct job *const *)b;

    if (ja->t_inactive != jb->t_inactive)
        return ja->t_inactive < jb->t_inactive ? -1 : 1;
    return ja->id < jb->id ? -1 : ja->id > jb->id;
}

int restart_from_kvs (struct jobmgr *jm, flux_error_t *error)
{
    struct walk w = {.jm = jm};
    int rc = -1;

    if (push (&w, RQ_DIR, 0, "job", 0, NULL) < 0)
        goto nomem;
    while (w.todo_count > 0 || w.count > 0) {
        while (w.count < WINDOW && w.todo_count > 0) {
            if (issue (&w) < 0) {
                errprintf (error, "KVS lookup: %s", strerror (errno));
                goto done;
            }
        }
        struct rq *rq = &w.ring[w.head];
        (void)flux_future_wait_for (rq->f, -1);
        if (rq->type == RQ_DIR)
            got_dir (&w, rq);
        else if (rq->type == RQ_EVENTLOG)
            got_eventlog (&w, rq);
        else
            got_object (&w, rq);
        flux_future_destroy (rq->f);
        w.head = (w.head + 1) % WINDOW;
        w.count--;
    }
    if (w.ninactive > 0)
        qsort (w.inactive, w.ninactive, sizeof (w.inactive[0]), jobcmp);
    for (size_t i = 0; i < w.ninactive; i++)
        jobtab_inactive_add (jm->jobs, w.inactive[i]);
    if (w.loaded > 0)
        jm->restarted = true;
    rc = w.loaded;
    goto done;
nomem:
    errprintf (error, "out of memory");
done:
    while (w.count > 0) {
        flux_future_destroy (w.ring[w.head].f);
        w.head = (w.head + 1) % WINDOW;
        w.count--;
    }
    free (w.todo);
    free (w.inactive);
    return rc;
}

static int idcmp (const void *a, const void *b)
{
    const struct job *ja = *(struct job *const *)a;
    const struct job *jb = *(struct job *const *)b;

    return ja->id < jb->id ? -1 : ja->id > jb->id;
}

static void continue_job (struct jobmgr *jm, struct job *job)
{
    struct jobx *x = job->x;

    wait_flags_changed (jm->wait, job);
    if (x->js.has_resources)
        list_add_tail (&jm->resources, &x->res_link);
    switch (x->js.state) {
        case FLUX_JOB_STATE_NEW:
            (void)event_post (jm, job, "validate", 0, NULL, NULL);
            break;
        case FLUX_JOB_STATE_DEPEND:
            depend_check (jm->depend, job);
            break;
        case FLUX_JOB_STATE_PRIORITY:
            priority_assign (jm, job);
            break;
        case FLUX_JOB_STATE_SCHED:
            (void)event_post (jm, job, "flux-restart", 0, NULL, NULL);
            break;
        case FLUX_JOB_STATE_RUN:
            x->reattach = x->js.started;
            start_check (jm->start, job);
            break;
        case FLUX_JOB_STATE_CLEANUP:
            x->reattach = x->js.started;
            action_cleanup (jm, job);
            break;
    }
}

void restart_continue (struct jobmgr *jm)
{
    struct job **jobs, *job;
    size_t n = 0, i, cursor;

    if (jobtab_count (jm->jobs) == jobtab_inactive_count (jm->jobs))
        return;
    if (!(jobs = calloc (jobtab_count (jm->jobs), sizeof (*jobs)))) {
        jm_log (jm, LOG_CRIT, "restart: out of memory");
        return;
    }
    for (job = jobtab_first (jm->jobs, &cursor); job;
         job = jobtab_next (jm->jobs, job, &cursor)) {
        if (job->x)
            jobs[n++] = job;
    }
    /* oldest first, so that antecedents are placed before dependents */
    qsort (jobs, n, sizeof (jobs[0]), idcmp);
    for (i = 0; i < n; i++) {
        if (jobs[i]->x)
            continue_job (jm, jobs[i]);
    }
    free (jobs);
}
