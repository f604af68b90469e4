/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* event.c - post job events and batch their KVS appends (see event.h).
 *
 * A batch is one KVS transaction plus the callbacks to run once it is
 * committed.  Events are added to the open batch; event_flush() (once
 * per loop iteration) commits it unless a commit is already in flight,
 * in which case the open batch keeps growing and is committed as soon as
 * the one in flight completes.  A failed commit is fatal: the eventlogs
 * would no longer say what the job manager did, so the module stops.
 * Except ENOSYS: the kvs was unloading or absent and applied nothing, so
 * the batch stays in flight, unsent, until kvs.online (a reload of the
 * kvs loses no event).
 *
 * The events of one job in one batch make ONE append: they are gathered
 * per job (struct pend) and written into the transaction when it is
 * committed, or before any other operation is added to it, so the order
 * of the operations is kept.  A job posts several events in a row (submit:
 * validate, depend, priority; the end: finish, release, free, clean), and
 * each append costs the KVS a blob, its hash and a row in the store, and
 * a restart a load.
 *
 * Holding: a job posts its events in bursts a few ms apart: validate,
 * depend and priority at submit, then alloc once the scheduler answers
 * (for a free machine, at once), start as soon as the exec service has
 * started the shells, and for a short job (a /bin/true) finish a few ms
 * later, then release, free and clean, each an answer to the exec
 * service or the scheduler.  Committed as they come, these cost up to
 * six commits (root changes, synced transactions) per job, and the
 * first, in flight when the scheduler commits R, makes that commit (and
 * so the alloc, and the start) wait for its fsync.  So the appends of a
 * job past NEW are held back from the commit, for at most HOLD_MS from
 * the first one held, and carried into the next batch; "clean" ends the
 * hold, so the life of a short job from validate to clean is one append,
 * and a longer one's start one and its end another.  R, when the alloc
 * response carries it, is put in the commit of the job's appends
 * (event_job_put) and is held with them.  The journal has a held event
 * at once and the actions taken on it do not wait for a commit; readers
 * of the eventlog in the KVS see it up to HOLD_MS later (attach waits
 * for clean, which is not held); anything queued with
 * event_after_commit() ends the holds of its batch, as does
 * event_flush_sync (unload).  A broker that dies loses at most HOLD_MS
 * more of a job's events than before: restart takes a job up again from
 * the last event it finds (restart.c; the submit is durable, ingest's).
 * A key that might touch an eventlog (event_kvs_put) writes every pend
 * first, held or not.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "libflux/jsonemit.h"
#include "libflux/waitlist.h"
#include "action.h"
#include "event.h"
#include "journal.h"
#include "libeventlog/eventlog.h"
#include "libkvs/kvs.h"
#include "libutil/textbuf.h"

/* The longest an append of a job in a holding state is held back (ms),
 * by default (event_set_hold) */
#define HOLD_MS 20

struct commit_cb {
    struct commit_cb *next;
    event_commit_f fn;
    void *arg;
};

/* The appends of one job waiting in a batch */
struct pend {
    char key[64];
    struct textbuf text;
    struct job *job;     /* the job, valid while held */
    uint64_t hold_until; /* loop time (ms) the hold ends, 0: not held */
    char *put_key;       /* a put that goes with the appends (R), or NULL */
    char *put_val;
};

static void pend_clear_put (struct pend *p)
{
    free (p->put_key);
    free (p->put_val);
    p->put_key = p->put_val = NULL;
}

struct batch {
    flux_kvs_txn_t *txn;
    unsigned long nops; /* operations, pends included */
    unsigned long nevents;
    struct commit_cb *head, *tail;
    unsigned long seq; /* jobs with x->pend_seq == seq have a pend here */
    struct pend *pends;
    size_t npends, maxpends;
    bool nohold; /* something waits on this batch: write every pend */
};

struct event {
    struct jobmgr *jm;
    struct batch *open;     /* filling */
    struct batch *inflight; /* being committed, or NULL */
    flux_future_t *f;       /* commit future of inflight */
    /* inflight, refused by the kvs (unloading or absent), waits on
     * kvs_wait until kvs.online */
    struct waitlist kvs_wait;
    struct waitlist_item kvs_wi;
    unsigned long commits;
    unsigned long max_batch;
    unsigned long seq;      /* the last batch seq handed out */
    uv_timer_t *hold_timer; /* the end of the earliest hold, or NULL */
    bool nohold;            /* flushing for unload: hold nothing */
    int hold_ms;            /* HOLD_MS unless set */
    unsigned long held;     /* appends carried into a later batch */
};

static struct batch *batch_create (struct event *ev)
{
    struct batch *b;

    if (!(b = calloc (1, sizeof (*b))))
        return NULL;
    if (!(b->txn = flux_kvs_txn_create ())) {
        free (b);
        return NULL;
    }
    b->seq = ++ev->seq;
    return b;
}

static struct pend *pend_new (struct batch *b, struct job *job);
static struct pend *pend_get (struct batch *b, struct job *job);

static bool held (struct event *ev, struct batch *b, const struct pend *p,
                  uint64_t now)
{
    return !ev->nohold && !b->nohold && p->hold_until > now;
}

/* Write the gathered appends into b's transaction, in the order their
 * jobs first posted, and start gathering afresh (a new seq: the jobs
 * that had a pend no longer do).  With next, the held appends are moved
 * there instead (they stay first in it).  -1 if out of memory: fatal. */
static int batch_write_pends (struct event *ev, struct batch *b,
                              struct batch *next, uint64_t now)
{
    for (size_t i = 0; i < b->npends; i++) {
        struct pend *p = &b->pends[i], *q;
        if (next && held (ev, b, p, now)) {
            if (!(q = pend_new (next, p->job)))
                return -1;
            struct textbuf t = q->text; /* swap: no copy */
            q->text = p->text;
            p->text = t;
            q->hold_until = p->hold_until;
            q->put_key = p->put_key; /* moved, not copied */
            q->put_val = p->put_val;
            p->put_key = p->put_val = NULL;
            ev->held++;
            continue;
        }
        if (p->put_key) {
            if (flux_kvs_txn_put (b->txn, 0, p->put_key, p->put_val) < 0)
                return -1;
            pend_clear_put (p);
        }
        if (p->text.len > 0
            && flux_kvs_txn_put_raw (b->txn, FLUX_KVS_APPEND, p->key,
                                     p->text.data, p->text.len)
                   < 0)
            return -1;
    }
    b->npends = 0;
    b->seq = ++ev->seq;
    return 0;
}

/* The number of b's pends held at now, and the earliest end of a hold */
static size_t count_held (struct event *ev, struct batch *b, uint64_t now,
                          uint64_t *until)
{
    size_t n = 0;

    *until = 0;
    for (size_t i = 0; i < b->npends; i++) {
        struct pend *p = &b->pends[i];
        if (held (ev, b, p, now)) {
            if (n++ == 0 || p->hold_until < *until)
                *until = p->hold_until;
        }
    }
    return n;
}

static void hold_timer_cb (uv_timer_t *t)
{
    event_flush (t->data);
}

/* Wake up when the earliest hold ends (holds only ever end earlier than
 * the timer says, by their job's clean: a flush then happens anyway). */
static void hold_arm (struct event *ev, uint64_t until, uint64_t now)
{
    uv_loop_t *loop = flux_reactor_uv (flux_get_reactor (ev->jm->h));

    if (!ev->hold_timer) {
        if (!(ev->hold_timer = calloc (1, sizeof (*ev->hold_timer))))
            return; /* the next flush commits it */
        uv_timer_init (loop, ev->hold_timer);
        ev->hold_timer->data = ev;
        uv_unref ((uv_handle_t *)ev->hold_timer);
    }
    uv_timer_start (ev->hold_timer, hold_timer_cb,
                    until > now ? until - now : 0, 0);
}

/* Run and free the callbacks of b, then b itself. */
static void batch_finish (struct jobmgr *jm, struct batch *b, int errnum)
{
    struct commit_cb *cb;

    if (!b)
        return;
    while ((cb = b->head)) {
        b->head = cb->next;
        if (cb->fn)
            cb->fn (jm, cb->arg, errnum);
        free (cb);
    }
    flux_kvs_txn_destroy (b->txn);
    for (size_t i = 0; i < b->maxpends; i++) {
        textbuf_free (&b->pends[i].text);
        pend_clear_put (&b->pends[i]);
    }
    free (b->pends);
    free (b);
}

static void resend (struct event *ev);
static void kvs_resend (struct waitlist *wl, struct waitlist_item *it,
                        void *arg);

struct event *event_create (struct jobmgr *jm)
{
    struct event *ev;

    if (!(ev = calloc (1, sizeof (*ev))))
        return NULL;
    ev->jm = jm;
    ev->hold_ms = HOLD_MS;
    waitlist_init (&ev->kvs_wait, kvs_resend, ev);
    waitlist_item_init (&ev->kvs_wi);
    if (!(ev->open = batch_create (ev))) {
        free (ev);
        return NULL;
    }
    return ev;
}

void event_destroy (struct event *ev)
{
    if (ev) {
        int saved = errno;
        flux_future_destroy (ev->f);
        if (ev->hold_timer) {
            uv_timer_stop (ev->hold_timer);
            flux_uv_close_free ((uv_handle_t *)ev->hold_timer);
        }
        /* uncommitted work: answer what waits on it with an error */
        batch_finish (ev->jm, ev->inflight, ENOSYS);
        batch_finish (ev->jm, ev->open, ENOSYS);
        free (ev);
        errno = saved;
    }
}

static void commit_continuation (flux_future_t *f, void *arg)
{
    struct event *ev = arg;
    struct batch *b = ev->inflight;
    int errnum = 0;

    if (flux_future_get (f, NULL) < 0) {
        errnum = errno;
        if (errnum == ENOSYS) {
            jm_log (ev->jm, LOG_WARNING,
                    "eventlog commit refused (%s): kept until the kvs is back",
                    future_strerror (f, errno));
            flux_future_destroy (f);
            ev->f = NULL;
            (void)waitlist_refused (&ev->kvs_wait, &ev->kvs_wi);
            return;
        }
        jm_log (ev->jm, LOG_CRIT, "eventlog commit failed: %s",
                future_strerror (f, errno));
    }
    flux_future_destroy (f);
    ev->f = NULL;
    ev->inflight = NULL;
    batch_finish (ev->jm, b, errnum);
    if (errnum) {
        errno = errnum;
        flux_reactor_stop_error (flux_get_reactor (ev->jm->h));
        return;
    }
    event_flush (ev);
}

void event_flush (struct event *ev)
{
    struct batch *b = ev->open, *next;
    uint64_t now, until;
    size_t nheld;

    if (ev->inflight)
        return;
    now = uv_now (flux_reactor_uv (flux_get_reactor (ev->jm->h)));
    nheld = count_held (ev, b, now, &until);
    if (nheld > 0)
        hold_arm (ev, until, now);
    if (b->nops == nheld && !b->head && nheld > 0)
        return; /* only held appends: nothing to commit yet */
    if (b->nops == 0) {
        /* nothing to commit: whatever waited on earlier commits can go */
        struct commit_cb *cb, *head = b->head;
        b->head = b->tail = NULL;
        while ((cb = head)) {
            head = cb->next;
            cb->fn (ev->jm, cb->arg, 0);
            free (cb);
        }
        return;
    }
    if (!(next = batch_create (ev)))
        return; /* try again next loop iteration */
    waitlist_sent (&ev->kvs_wait, &ev->kvs_wi);
    if (batch_write_pends (ev, b, next, now) < 0
        || !(ev->f = flux_kvs_commit (ev->jm->h, NULL, 0, b->txn))
        || flux_future_then (ev->f, -1, commit_continuation, ev) < 0) {
        jm_log (ev->jm, LOG_CRIT, "eventlog commit: %s", strerror (errno));
        flux_future_destroy (ev->f);
        ev->f = NULL;
        batch_finish (ev->jm, next, 0);
        flux_reactor_stop_error (flux_get_reactor (ev->jm->h));
        return;
    }
    ev->commits++;
    if (b->nevents > ev->max_batch)
        ev->max_batch = b->nevents;
    ev->inflight = b;
    ev->open = next;
}

void event_kvs_online (struct event *ev)
{
    waitlist_online (&ev->kvs_wait);
}

static void kvs_resend (struct waitlist *wl, struct waitlist_item *it,
                        void *arg)
{
    resend (arg);
}

static void resend (struct event *ev)
{
    waitlist_cancel (&ev->kvs_wait, &ev->kvs_wi);
    waitlist_sent (&ev->kvs_wait, &ev->kvs_wi);
    if (!(ev->f = flux_kvs_commit (ev->jm->h, NULL, 0, ev->inflight->txn))
        || flux_future_then (ev->f, -1, commit_continuation, ev) < 0) {
        jm_log (ev->jm, LOG_CRIT, "eventlog commit: %s", strerror (errno));
        flux_future_destroy (ev->f);
        ev->f = NULL;
        flux_reactor_stop_error (flux_get_reactor (ev->jm->h));
        return;
    }
    jm_log (ev->jm, LOG_INFO, "the refused eventlog commit is sent again");
}

int event_flush_sync (struct event *ev)
{
    int rc = 0;

    ev->nohold = true; /* unloading: hold nothing back */
    if (waitlist_waiting (&ev->kvs_wi))
        resend (ev); /* the kvs may be back: one more try */
    for (int i = 0; i < 3; i++) {
        if (ev->f) {
            (void)flux_future_wait_for (ev->f, -1);
            flux_future_t *f = ev->f;
            /* run the continuation's work here, synchronously */
            commit_continuation (f, ev);
        }
        else if (ev->open->nops > 0 || ev->open->head)
            event_flush (ev);
        else
            break;
    }
    if (ev->f || waitlist_waiting (&ev->kvs_wi) || ev->open->nops > 0)
        rc = -1;
    return rc;
}

int event_after_commit (struct jobmgr *jm, event_commit_f fn, void *arg)
{
    struct batch *b = jm->event->open;
    struct commit_cb *cb;

    if (!(cb = calloc (1, sizeof (*cb))))
        return -1;
    b->nohold = true; /* fn waits for every event posted so far */
    cb->fn = fn;
    cb->arg = arg;
    if (b->tail)
        b->tail->next = cb;
    else
        b->head = cb;
    b->tail = cb;
    return 0;
}

struct deferred_rsp {
    const flux_msg_t *msg;
    json_t *payload;
};

static void respond_cb (struct jobmgr *jm, void *arg, int errnum)
{
    struct deferred_rsp *r = arg;

    if (errnum)
        flux_respond_error (jm->h, r->msg, errnum, "eventlog commit failed");
    else if (r->payload)
        flux_respond_pack (jm->h, r->msg, "O", r->payload);
    else
        flux_respond (jm->h, r->msg, NULL);
    flux_msg_decref (r->msg);
    json_decref (r->payload);
    free (r);
}

int event_respond_after_commit (struct jobmgr *jm, const flux_msg_t *msg,
                                json_t *payload)
{
    struct deferred_rsp *r;

    if (!(r = calloc (1, sizeof (*r))))
        return -1;
    r->msg = flux_msg_incref (msg);
    r->payload = json_incref (payload);
    if (event_after_commit (jm, respond_cb, r) < 0) {
        flux_msg_decref (r->msg);
        json_decref (r->payload);
        free (r);
        return -1;
    }
    return 0;
}

/* Could an operation on key touch a job's eventlog?  The appends gathered
 * are all to job.A.B.C.D.eventlog keys (job_kvs_key): an operation on a
 * key outside job., or on another entry of a job directory (R, the
 * checkpoint ...), leaves them alone, so they need not be written first.
 * Anything else (a job directory or one above it, an eventlog) might. */
static bool touches_eventlogs (const char *key)
{
    const char *p = key;
    int dots = 0;

    if (strncmp (key, "job", 3) != 0 || (key[3] != '\0' && key[3] != '.'))
        return false;
    while (dots < 5 && (p = strchr (p, '.'))) {
        p++;
        dots++;
    }
    if (dots < 5)
        return true; /* job, or a directory of jobs, or a job */
    return !strncmp (p, "eventlog", 8) && (p[8] == '\0' || p[8] == '.');
}

int event_kvs_put (struct jobmgr *jm, const char *key, json_t *value)
{
    struct batch *b = jm->event->open;
    int rc;

    /* the appends gathered so far come first if they might be affected */
    if (touches_eventlogs (key)
        && batch_write_pends (jm->event, b, NULL, 0) < 0) {
        jm_log (jm, LOG_CRIT, "eventlog append: %s", strerror (errno));
        flux_reactor_stop_error (flux_get_reactor (jm->h));
        return -1;
    }
    if (value) {
        char *s = jsonemit (value, JSON_COMPACT | JSON_ENCODE_ANY, NULL);
        if (!s)
            return -1;
        rc = flux_kvs_txn_put (b->txn, 0, key, s);
        free (s);
    }
    else
        rc = flux_kvs_txn_unlink (b->txn, 0, key);
    if (rc == 0)
        b->nops++;
    return rc;
}

int event_job_put (struct jobmgr *jm, struct job *job, const char *name,
                   json_t *value)
{
    struct batch *b = jm->event->open;
    struct pend *p;
    char key[64], *s;

    if (!job->x || job_kvs_key (key, sizeof (key), job->id, name) < 0
        || !(s = jsonemit (value, JSON_COMPACT | JSON_ENCODE_ANY, NULL)))
        return -1;
    if (!(p = pend_get (b, job))) {
        free (s);
        return -1;
    }
    if (p->put_key && strcmp (p->put_key, key) != 0) {
        /* another key waits: it goes now, ahead of this one */
        if (flux_kvs_txn_put (b->txn, 0, p->put_key, p->put_val) < 0) {
            free (s);
            return -1;
        }
        b->nops++;
    }
    pend_clear_put (p);
    if (!(p->put_key = strdup (key))) {
        free (s);
        return -1;
    }
    p->put_val = s;
    return 0;
}

/* A pend's text buffer is kept for the next pend of its batch, unless it
 * grew larger than this. */
#define PEND_KEEP 4096

/* The job's pend in b, a new one if it has none.  NULL if out of memory. */
static struct pend *pend_get (struct batch *b, struct job *job)
{
    if (job->x->pend_seq == b->seq && job->x->pend_idx < b->npends)
        return &b->pends[job->x->pend_idx];
    return pend_new (b, job);
}

/* A new pend of job's in b (its appends go there from now on). */
static struct pend *pend_new (struct batch *b, struct job *job)
{
    struct pend *p;

    if (b->npends == b->maxpends) {
        size_t n = b->maxpends ? b->maxpends * 2 : 64;
        if (!(p = realloc (b->pends, n * sizeof (*p))))
            return NULL;
        memset (p + b->maxpends, 0, (n - b->maxpends) * sizeof (*p));
        b->pends = p;
        b->maxpends = n;
    }
    p = &b->pends[b->npends];
    if (job_kvs_key (p->key, sizeof (p->key), job->id, "eventlog") < 0)
        return NULL;
    textbuf_reset (&p->text, PEND_KEEP); /* reused from an earlier pend */
    p->job = job;
    p->hold_until = 0;
    pend_clear_put (p); /* NULL already: written or moved */
    job->x->pend_seq = b->seq;
    job->x->pend_idx = b->npends++;
    b->nops++;
    return p;
}

/* Is the job between two events that may come within a few ms: any
 * state but NEW (nothing posted yet) and INACTIVE (clean, the last)? */
static bool holding_state (const struct jobx *x)
{
    return x->js.state != FLUX_JOB_STATE_NEW
           && x->js.state != FLUX_JOB_STATE_INACTIVE;
}

/* Append the entry to the job's eventlog in the open batch (the job's
 * state is already the event's).  A job's first append in a holding
 * state starts a hold, any append in another state ends it. */
static int log_entry (struct event *ev, struct job *job, const char *line)
{
    struct pend *p;
    bool fresh;

    if (!(p = pend_get (ev->open, job)))
        return -1;
    fresh = p->text.len == 0;
    if (textbuf_append (&p->text, line, strlen (line)) < 0)
        return -1;
    if (!holding_state (job->x))
        p->hold_until = 0;
    else if (fresh)
        p->hold_until = uv_now (flux_reactor_uv (flux_get_reactor (ev->jm->h)))
                        + (uint64_t)ev->hold_ms;
    ev->open->nevents++;
    return 0;
}

int event_post_entry (struct jobmgr *jm, struct job *job, json_t *entry,
                      int flags, flux_error_t *error)
{
    double timestamp;
    const char *name;
    json_t *context;
    int prev_state;
    flux_error_t e;
    char *line;

    if (!job->x) {
        errno = EINVAL;
        return errprintf (error, "job is inactive");
    }
    if (eventlog_entry_parse (entry, &timestamp, &name, &context) < 0
        || !(line = eventlog_entry_encode (entry))) {
        if (errno != ENOMEM)
            errno = EINVAL;
        return errprintf (
            error, "%s", errno == EINVAL ? "malformed event" : "out of memory");
    }
    prev_state = job->x->js.state;
    if (jobstate_apply (&job->x->js, timestamp, name, context, &e) < 0) {
        int saved = errno;
        jm_log (jm, LOG_ERR, "%ju: %s: %s", (uintmax_t)job->id, name, e.text);
        errprintf (error, "%s", e.text);
        free (line);
        errno = saved;
        return -1;
    }
    if ((!(flags & EVENT_NO_COMMIT) && log_entry (jm->event, job, line) < 0)
        || job_eventlog_append (job->x, line) < 0) {
        /* the state changed but the log did not: that is fatal */
        jm_log (jm, LOG_CRIT, "%ju: %s: eventlog append: %s",
                (uintmax_t)job->id, name, strerror (errno));
        free (line);
        flux_reactor_stop_error (flux_get_reactor (jm->h));
        return errprintf (error, "out of memory");
    }
    job->flags = job->x->js.flags;
    if (job->x->js.state != prev_state) {
        jobmgr_state_count (jm, prev_state, -1);
        jobmgr_state_count (jm, job->x->js.state, 1);
        job->state = job->x->js.state;
    }
    jm->nevents++;
    journal_post (jm->journal, job, entry, line);
    free (line);
    action_event (jm, job, name, context, prev_state);
    return 0;
}

int event_post (struct jobmgr *jm, struct job *job, const char *name, int flags,
                json_t *context, flux_error_t *error)
{
    json_t *entry;
    int rc;

    if (context)
        entry = eventlog_entry_pack (0., name, "O", context);
    else
        entry = eventlog_entry_pack (0., name, NULL);
    if (!entry) {
        errno = EINVAL;
        return errprintf (error, "cannot encode event %s", name);
    }
    rc = event_post_entry (jm, job, entry, flags, error);
    json_decref (entry);
    return rc;
}

int event_post_pack (struct jobmgr *jm, struct job *job, const char *name,
                     int flags, const char *fmt, ...)
{
    json_t *context = NULL;
    va_list ap;
    int rc;

    if (fmt) {
        va_start (ap, fmt);
        context = json_vpack_ex (NULL, 0, fmt, ap);
        va_end (ap);
        if (!context) {
            errno = EINVAL;
            return -1;
        }
    }
    rc = event_post (jm, job, name, flags, context, NULL);
    json_decref (context);
    return rc;
}

void event_stats (struct event *ev, unsigned long *commits,
                  unsigned long *max_batch)
{
    *commits = ev->commits;
    *max_batch = ev->max_batch;
}

void event_set_hold (struct event *ev, int ms)
{
    if (ev && ms >= 0)
        ev->hold_ms = ms;
}
