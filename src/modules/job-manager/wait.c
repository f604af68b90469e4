/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* wait.c - waiting for waitable jobs (see wait.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "wait.h"

struct waiter {
    struct list_node link;
    const flux_msg_t *msg;
    flux_jobid_t id; /* FLUX_JOBID_ANY for any */
};

struct waitq {
    struct jobmgr *jm;
    struct list_node waiters; /* oldest first */
    int nwaiters;
    int nany;              /* waiters for any job */
    int waitables;         /* active waitable jobs */
    flux_jobid_t *zombies; /* ring of zombie ids, oldest first */
    size_t zhead, zcount, zalloc;
};

struct waitq *wait_create (struct jobmgr *jm)
{
    struct waitq *w;

    if (!(w = calloc (1, sizeof (*w))))
        return NULL;
    w->jm = jm;
    list_init (&w->waiters);
    return w;
}

static void waiter_free (struct waitq *w, struct waiter *wt)
{
    list_del (&wt->link);
    w->nwaiters--;
    if (wt->id == FLUX_JOBID_ANY)
        w->nany--;
    flux_msg_decref (wt->msg);
    free (wt);
}

void wait_destroy (struct waitq *w)
{
    if (w) {
        int saved = errno;
        while (!list_empty (&w->waiters)) {
            struct waiter *wt
                = list_entry (w->waiters.next, struct waiter, link);
            flux_respond_error (w->jm->h, wt->msg, ENOSYS,
                                "job-manager is unloading");
            waiter_free (w, wt);
        }
        free (w->zombies);
        free (w);
        errno = saved;
    }
}

int wait_count (struct waitq *w)
{
    return w->nwaiters;
}

void wait_flags_changed (struct waitq *w, struct job *job)
{
    if (job->x && (job->flags & FLUX_JOB_WAITABLE) && !job->x->waitable) {
        job->x->waitable = 1;
        w->waitables++;
    }
}

static int zombie_push (struct waitq *w, flux_jobid_t id)
{
    if (w->zcount == w->zalloc) {
        size_t n = w->zalloc ? w->zalloc * 2 : 64;
        flux_jobid_t *z = malloc (n * sizeof (*z));
        if (!z)
            return -1;
        for (size_t i = 0; i < w->zcount; i++)
            z[i] = w->zombies[(w->zhead + i) % w->zalloc];
        free (w->zombies);
        w->zombies = z;
        w->zalloc = n;
        w->zhead = 0;
    }
    w->zombies[(w->zhead + w->zcount) % w->zalloc] = id;
    w->zcount++;
    return 0;
}

/* The oldest zombie still in the table (purged ones are skipped). */
static struct job *zombie_pop (struct waitq *w)
{
    while (w->zcount > 0) {
        flux_jobid_t id = w->zombies[w->zhead];
        struct job *job;
        w->zhead = (w->zhead + 1) % w->zalloc;
        w->zcount--;
        if ((job = jobtab_lookup (w->jm->jobs, id)) && job->zombie)
            return job;
    }
    return NULL;
}

static void respond (struct waitq *w, const flux_msg_t *msg, flux_jobid_t id,
                     bool success, const char *errstr)
{
    json_t *o = json_pack ("{s:I s:b s:s}", "id", (json_int_t)id, "success",
                           success, "errstr", errstr ? errstr : "");
    if (!o || event_respond_after_commit (w->jm, msg, o) < 0)
        flux_respond_error (w->jm->h, msg, ENOMEM, NULL);
    json_decref (o);
}

void wait_inactive (struct waitq *w, struct job *job)
{
    struct list_node *pos, *tmp;
    struct waiter *found = NULL;
    char errstr[256];

    if (!job->x || !job->x->waitable)
        return;
    job->x->waitable = 0;
    w->waitables--;
    list_for_each_safe (pos, tmp, &w->waiters)
    {
        struct waiter *wt = list_entry (pos, struct waiter, link);
        if (wt->id == job->id) {
            found = wt;
            break;
        }
        if (!found && wt->id == FLUX_JOBID_ANY)
            found = wt;
    }
    if (!found) {
        job->zombie = true;
        if (zombie_push (w, job->id) < 0)
            job->zombie = false;
        return;
    }
    jobstate_errstr (&job->x->js, errstr, sizeof (errstr));
    respond (w, found->msg, job->id, jobstate_success (&job->x->js), errstr);
    waiter_free (w, found);
}

static int add_waiter (struct waitq *w, const flux_msg_t *msg, flux_jobid_t id)
{
    struct waiter *wt;

    if (!(wt = calloc (1, sizeof (*wt))))
        return -1;
    wt->msg = flux_msg_incref (msg);
    wt->id = id;
    list_add_tail (&w->waiters, &wt->link);
    w->nwaiters++;
    if (id == FLUX_JOBID_ANY)
        w->nany++;
    return 0;
}

static bool has_waiter (struct waitq *w, flux_jobid_t id)
{
    struct list_node *pos, *tmp;

    list_for_each_safe (pos, tmp, &w->waiters)
    {
        if (list_entry (pos, struct waiter, link)->id == id)
            return true;
    }
    return false;
}

void wait_request (struct waitq *w, const flux_msg_t *msg)
{
    json_int_t jid;
    flux_jobid_t id;
    struct job *job;

    if (flux_request_unpack (msg, NULL, "{s:I}", "id", &jid) < 0) {
        jm_respond_error (w->jm, msg, EPROTO, "malformed wait request");
        return;
    }
    id = (flux_jobid_t)jid;
    if (id == FLUX_JOBID_ANY) {
        if ((job = zombie_pop (w))) {
            job->zombie = false;
            respond (w, msg, job->id, job->success, job->errstr);
            return;
        }
        /* each active waitable job may satisfy one waiter */
        if (w->waitables - (w->nwaiters - w->nany) <= w->nany) {
            jm_respond_error (w->jm, msg, ECHILD,
                              "there are no waitable"
                              " jobs");
            return;
        }
    }
    else {
        if (!(job = jobtab_lookup (w->jm->jobs, id))
            || !(job->flags & FLUX_JOB_WAITABLE)) {
            jm_respond_error (w->jm, msg, ECHILD, "job is not waitable");
            return;
        }
        if (!job->x) {
            if (!job->zombie) {
                jm_respond_error (w->jm, msg, ECHILD,
                                  "job has already been waited for");
                return;
            }
            job->zombie = false;
            respond (w, msg, job->id, job->success, job->errstr);
            return;
        }
        if (has_waiter (w, id)) {
            jm_respond_error (w->jm, msg, ECHILD, "job already has a waiter");
            return;
        }
    }
    if (add_waiter (w, msg, id) < 0)
        jm_respond_error (w->jm, msg, ENOMEM, NULL);
}

void wait_disconnect (struct waitq *w, const flux_msg_t *msg)
{
    struct list_node *pos, *tmp;

    list_for_each_safe (pos, tmp, &w->waiters)
    {
        struct waiter *wt = list_entry (pos, struct waiter, link);
        if (flux_msg_route_match_first (wt->msg, msg))
            waiter_free (w, wt);
    }
}
