/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* jobmgr.c - the job manager's context (see jobmgr.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "depend.h"
#include "event.h"
#include "history.h"
#include "journal.h"
#include "purge.h"
#include "queue.h"
#include "start.h"
#include "wait.h"

int jm_state_index (int state)
{
    for (int i = 0; i < 7; i++) {
        if (state == (1 << i))
            return i;
    }
    return -1;
}

void jobmgr_state_count (struct jobmgr *jm, int state, int delta)
{
    int i = jm_state_index (state);

    if (i >= 0)
        jm->nstate[i] += delta;
}

int jobmgr_count (const struct jobmgr *jm, int statemask)
{
    int n = 0;

    for (int i = 0; i < 7; i++) {
        if (statemask & (1 << i))
            n += jm->nstate[i];
    }
    return n;
}

double jm_now (void)
{
    struct timespec ts;

    clock_gettime (CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void jm_log (struct jobmgr *jm, int severity, const char *fmt, ...)
{
    va_list ap;

    va_start (ap, fmt);
    flux_vlog (jm->h, severity, fmt, ap);
    va_end (ap);
}

void jm_respond_error (struct jobmgr *jm, const flux_msg_t *msg, int errnum,
                       const char *fmt, ...)
{
    char text[256];
    va_list ap;

    if (!fmt) {
        flux_respond_error (jm->h, msg, errnum, NULL);
        return;
    }
    va_start (ap, fmt);
    vsnprintf (text, sizeof (text), fmt, ap);
    va_end (ap);
    flux_respond_error (jm->h, msg, errnum, text);
}

struct tracked {
    struct list_node link;
    flux_future_t *f;
};

static void untrack (void *arg)
{
    struct tracked *t = arg;
    list_del (&t->link);
    free (t);
}

int jm_track (struct jobmgr *jm, flux_future_t *f)
{
    struct tracked *t;

    if (!(t = calloc (1, sizeof (*t))))
        return -1;
    t->f = f;
    list_add_tail (&jm->futures, &t->link);
    if (flux_future_aux_set (f, "jobmgr::tracked", t, untrack) < 0) {
        list_del (&t->link);
        free (t);
        return -1;
    }
    return 0;
}

bool jm_is_owner (const flux_msg_t *msg)
{
    uint32_t rolemask;

    return flux_msg_get_rolemask (msg, &rolemask) == 0
           && (rolemask & FLUX_ROLE_OWNER);
}

struct job *jm_job_for_request (struct jobmgr *jm, const flux_msg_t *msg,
                                flux_jobid_t id)
{
    struct job *job;

    if (!(job = jobtab_lookup (jm->jobs, id))) {
        jm_respond_error (jm, msg, ENOENT, "unknown job id");
        return NULL;
    }
    if (flux_msg_authorize (msg, job->userid) < 0) {
        jm_respond_error (jm, msg, EPERM, "access to job %ju denied",
                          (uintmax_t)id);
        return NULL;
    }
    return job;
}

/* Once per loop iteration, before waiting for I/O: send what the
 * iteration decided, answer the waiters it satisfied, then commit the
 * events it posted (the commit goes last so it carries all of them). */
static void prep_cb (uv_prepare_t *p)
{
    struct jobmgr *jm = p->data;

    alloc_schedule (jm->alloc);
    queue_check (jm->queue);
    event_flush (jm->event);
    while (!list_empty (&jm->doomed)) {
        struct job *job = list_entry (jm->doomed.next, struct job, ilink);
        list_del (&job->ilink);
        job_destroy (job);
    }
}

struct jobmgr *jobmgr_create (flux_t *h)
{
    struct jobmgr *jm;

    if (!(jm = calloc (1, sizeof (*jm))))
        return NULL;
    jm->h = h;
    jm->owner = getuid ();
    list_init (&jm->resources);
    list_init (&jm->doomed);
    list_init (&jm->futures);
    if (!(jm->strings = strpool_create ()) || !(jm->jobs = jobtab_create ())
        || !(jm->event = event_create (jm))
        || !(jm->journal = journal_create (jm))
        || !(jm->alloc = alloc_create (jm)) || !(jm->start = start_create (jm))
        || !(jm->wait = wait_create (jm)) || !(jm->depend = depend_create (jm))
        || !(jm->queue = queue_create (jm))
        || !(jm->history = history_create (jm))
        || !(jm->purge = purge_create (jm))) {
        jobmgr_destroy (jm);
        errno = ENOMEM;
        return NULL;
    }
    return jm;
}

int jobmgr_start (struct jobmgr *jm)
{
    uv_loop_t *loop = flux_reactor_uv (flux_get_reactor (jm->h));

    if (!(jm->prep = calloc (1, sizeof (*jm->prep))))
        return -1;
    uv_prepare_init (loop, jm->prep);
    jm->prep->data = jm;
    uv_prepare_start (jm->prep, prep_cb);
    uv_unref ((uv_handle_t *)jm->prep); /* handlers keep the loop alive */
    return purge_start (jm->purge);
}

void jobmgr_destroy (struct jobmgr *jm)
{
    if (jm) {
        int saved = errno;
        if (jm->prep) {
            uv_prepare_stop (jm->prep);
            flux_uv_close_free ((uv_handle_t *)jm->prep);
        }
        if (jm->jobs) {
            size_t cursor;
            for (struct job *job = jobtab_first (jm->jobs, &cursor); job;
                 job = jobtab_next (jm->jobs, job, &cursor)) {
                if (job->x)
                    depend_cancel (jm->depend, job);
            }
        }
        journal_destroy (jm->journal);
        purge_destroy (jm->purge);
        while (!list_empty (&jm->futures))
            flux_future_destroy (
                list_entry (jm->futures.next, struct tracked, link)->f);
        wait_destroy (jm->wait);
        queue_destroy (jm->queue);
        start_destroy (jm->start);
        event_destroy (jm->event);
        alloc_destroy (jm->alloc);
        depend_destroy (jm->depend);
        history_destroy (jm->history);
        while (!list_empty (&jm->doomed)) {
            struct job *job = list_entry (jm->doomed.next, struct job, ilink);
            list_del (&job->ilink);
            job_destroy (job);
        }
        jobtab_destroy (jm->jobs);
        strpool_destroy (jm->strings); /* after the jobs holding strings */
        free (jm);
        errno = saved;
    }
}
