/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* alloc.c - RFC 27, the job manager side (see alloc.h).
 *
 * Bookkeeping per job (struct jobx): qidx (in the queue heap), aidx (in
 * the heap of requests in flight that may be canceled to make room,
 * lowest priority on top), alloc_link (on the list of all requests in
 * flight, which a new scheduler's hello resets), alloc_pending,
 * alloc_canceling, alloc_lookup (allocated, R being read),
 * free_pending and free_unsent.
 *
 * Partial release (RFC 27 with partial-ok, RFC 32 release final:false):
 * jobstate keeps the union of a job's partially released ranks
 * (js.released, replayed from the eventlog at restart).  The scheduler
 * learns of them either from the "free" idset of its hello responses
 * (what was released before it said hello) or from sched.free requests
 * with final:false (what was released since; held in free_unsent until
 * it is ready).  The job's last sched.free has final:true and the R of
 * the ranks not released.  A scheduler without partial-ok hears of
 * none of this and frees the whole R at the end, as before.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "libflux/jsonparse.h"
#include "libflux/jsonemit.h"
#include "action.h"
#include "alloc.h"
#include "event.h"
#include "heap.h"
#include "journal.h"
#include "libeventlog/eventlog.h"
#include "libkvs/kvs.h"
#include "librlist/rlist.h"

enum {
    ALLOC_SUCCESS = 0,
    ALLOC_ANNOTATE = 1,
    ALLOC_DENY = 2,
    ALLOC_CANCEL = 3,
};

struct alloc {
    struct jobmgr *jm;
    struct heap *queue;           /* waiting for sched.alloc: best on top */
    struct heap *pending;         /* in flight, cancelable: worst on top */
    struct list_node outstanding; /* every job with sched.alloc in flight */
    size_t npending;              /* sched.alloc in flight */
    size_t ncanceling;            /* ... of which sched.cancel was sent for */
    bool hello;                   /* sched-hello done */
    bool ready;                   /* sched-ready done, no fatality since */
    bool stopped;                 /* queue stopped by the administrator */
    bool partial_ok;              /* the scheduler said partial-ok at hello */
    int limit;          /* limited mode: max in flight; 0: unlimited */
    json_t *prioritize; /* [[id, priority], ...] to send, or NULL */
    char *sched_uuid;   /* the scheduler's sender, for disconnect */
    struct {
        unsigned long alloc, success, annotate, deny, cancel, free, prioritize,
            cancel_sent, room, free_partial;
    } stats;
};

int alloc_queue_cmp (const void *a, const void *b)
{
    const struct job *ja = a, *jb = b;
    int64_t pa = ja->x->js.priority, pb = jb->x->js.priority;

    if (pa != pb)
        return pa > pb ? -1 : 1;
    if (ja->id != jb->id)
        return ja->id < jb->id ? -1 : 1;
    return 0;
}

static int pending_cmp (const void *a, const void *b)
{
    return alloc_queue_cmp (b, a);
}

static void set_qidx (void *elem, size_t idx)
{
    ((struct job *)elem)->x->qidx = idx;
}

static void set_aidx (void *elem, size_t idx)
{
    ((struct job *)elem)->x->aidx = idx;
}

struct alloc *alloc_create (struct jobmgr *jm)
{
    struct alloc *a;

    if (!(a = calloc (1, sizeof (*a))))
        return NULL;
    a->jm = jm;
    list_init (&a->outstanding);
    if (!(a->queue = heap_create (alloc_queue_cmp, set_qidx))
        || !(a->pending = heap_create (pending_cmp, set_aidx))) {
        alloc_destroy (a);
        errno = ENOMEM;
        return NULL;
    }
    return a;
}

void alloc_destroy (struct alloc *a)
{
    if (a) {
        int saved = errno;
        heap_destroy (a->queue);
        heap_destroy (a->pending);
        json_decref (a->prioritize);
        free (a->sched_uuid);
        free (a);
        errno = saved;
    }
}

/* Send a request with matchtag 0 (RFC 27: matched by job id). */
/* Send a request to the scheduler; its responses (alloc, free) come to
 * the response handlers.  RFC 27's cancel and prioritize have none: they
 * go with noresponse set, so a scheduler's error answer is dropped. */
static int send_request (struct alloc *a, const char *topic, json_t *payload,
                         bool noresponse)
{
    flux_msg_t *msg;
    char *s;
    int rc = -1;

    if (!(s = jsonemit (payload, JSON_COMPACT, NULL)))
        return -1;
    if ((msg = flux_request_encode (topic, s))) {
        if (noresponse)
            (void)flux_msg_set_noresponse (msg);
        rc = flux_send (a->jm->h, msg, 0);
        flux_msg_decref (msg);
    }
    free (s);
    if (rc < 0)
        jm_log (a->jm, LOG_ERR, "%s: %s", topic, strerror (errno));
    return rc;
}

static void suspend (struct alloc *a, const char *why)
{
    if (a->hello || a->ready)
        jm_log (a->jm, strcmp (why, "disconnected") ? LOG_ERR : LOG_INFO,
                "scheduler: %s: suspending scheduling", why);
    a->hello = a->ready = false;
    free (a->sched_uuid);
    a->sched_uuid = NULL;
}

/* The request in flight is over (any final response). */
static void pending_done (struct alloc *a, struct job *job)
{
    struct jobx *x = job->x;

    if (x->aidx != HEAP_NONE)
        (void)heap_remove (a->pending, x->aidx);
    if (list_attached (&x->alloc_link))
        list_del (&x->alloc_link);
    if (x->alloc_canceling)
        a->ncanceling--;
    x->alloc_pending = 0;
    x->alloc_canceling = 0;
    a->npending--;
}

void alloc_enqueue (struct alloc *a, struct job *job)
{
    struct jobx *x = job->x;

    if (x->js.state != FLUX_JOB_STATE_SCHED || x->alloc_pending
        || x->qidx != HEAP_NONE || x->js.priority <= 0)
        return;
    if (heap_push (a->queue, job) < 0)
        jm_log (a->jm, LOG_CRIT, "%ju: alloc queue: out of memory",
                (uintmax_t)job->id);
}

void alloc_cancel (struct alloc *a, struct job *job)
{
    struct jobx *x = job->x;

    if (!x->alloc_pending || x->alloc_canceling || !a->ready)
        return;
    if (x->aidx != HEAP_NONE)
        (void)heap_remove (a->pending, x->aidx);
    json_t *o = json_pack ("{s:I}", "id", (json_int_t)job->id);
    if (o && send_request (a, "sched.cancel", o, true) == 0) {
        x->alloc_canceling = 1;
        a->ncanceling++;
        a->stats.cancel_sent++;
    }
    json_decref (o);
}

void alloc_dequeue (struct alloc *a, struct job *job)
{
    struct jobx *x = job->x;

    if (x->qidx != HEAP_NONE)
        (void)heap_remove (a->queue, x->qidx);
    if (x->alloc_pending)
        alloc_cancel (a, job);
}

void alloc_reprioritize (struct alloc *a, struct job *job)
{
    struct jobx *x = job->x;

    if (x->js.state != FLUX_JOB_STATE_SCHED)
        return;
    if (x->alloc_pending) {
        if (x->js.priority == 0) {
            alloc_cancel (a, job); /* held: no resources */
            return;
        }
        if (x->aidx != HEAP_NONE)
            heap_update (a->pending, x->aidx);
        if (!a->prioritize && !(a->prioritize = json_array ()))
            return;
        json_array_append_new (a->prioritize,
                               json_pack ("[I,I]", (json_int_t)job->id,
                                          (json_int_t)x->js.priority));
    }
    else if (x->qidx != HEAP_NONE) {
        if (x->js.priority == 0)
            (void)heap_remove (a->queue, x->qidx);
        else
            heap_update (a->queue, x->qidx);
    }
    else
        alloc_enqueue (a, job);
}

/* The part of the job's R on ranks (keep=true) or on the other ranks
 * (keep=false), as a new R object; NULL with errno. */
static json_t *R_subset (struct alloc *a, struct job *job,
                         const struct idset *ranks, bool keep)
{
    struct rlist *rl, *part = NULL;
    flux_error_t error;
    json_t *R = NULL;

    if (!(rl = rlist_from_R (job->x->R, &error))) {
        jm_log (a->jm, LOG_ERR, "%ju: R: %s", (uintmax_t)job->id, error.text);
        errno = EINVAL;
        return NULL;
    }
    if (keep)
        part = rlist_copy_ranks (rl, ranks);
    else if (rlist_remove_ranks (rl, ranks) >= 0) {
        part = rl;
        rl = NULL;
    }
    if (part)
        R = rlist_to_R (part);
    rlist_destroy (part);
    rlist_destroy (rl);
    return R;
}

/* Tell a ready partial-ok scheduler about the job's ranks released since
 * its hello (free_unsent). */
static void release_flush (struct alloc *a, struct job *job)
{
    struct jobx *x = job->x;
    json_t *R, *o = NULL;

    if (!x->free_unsent || !a->ready || !a->partial_ok)
        return;
    if (!x->R) {
        /* its R could not be read: the final free names no R either */
        idset_destroy (x->free_unsent);
        x->free_unsent = NULL;
        return;
    }
    if (!(R = R_subset (a, job, x->free_unsent, true))
        || !(o = json_pack ("{s:I s:O s:b}", "id", (json_int_t)job->id, "R", R,
                            "final", 0)))
        jm_log (a->jm, LOG_ERR, "%ju: sched.free (partial): %s",
                (uintmax_t)job->id, strerror (errno ? errno : ENOMEM));
    else if (send_request (a, "sched.free", o, true) == 0) {
        idset_destroy (x->free_unsent);
        x->free_unsent = NULL;
        a->stats.free_partial++;
    }
    json_decref (R);
    json_decref (o);
}

void alloc_release (struct alloc *a, struct job *job, const char *ranks)
{
    struct jobx *x = job->x;
    struct idset *ids;

    if (!a->hello || !a->partial_ok || !x->js.has_resources)
        return; /* the next hello reports js.released */
    if (!(ids = idset_decode (ranks))) {
        jm_log (a->jm, LOG_ERR, "%ju: release: bad ranks %s",
                (uintmax_t)job->id, ranks);
        return;
    }
    if (!x->free_unsent)
        x->free_unsent = ids;
    else {
        if (idset_add (x->free_unsent, ids) < 0)
            jm_log (a->jm, LOG_ERR, "%ju: release: %s", (uintmax_t)job->id,
                    strerror (errno));
        idset_destroy (ids);
    }
    release_flush (a, job);
}

void alloc_free (struct alloc *a, struct job *job)
{
    struct jobx *x = job->x;
    json_t *o, *R = NULL;

    if (!x->js.has_resources || x->free_pending || !a->ready)
        return;
    if (a->partial_ok && x->R && x->js.released) {
        release_flush (a, job); /* in order: the partial frees first */
        R = R_subset (a, job, x->js.released, false);
    }
    if (!R && x->R)
        R = json_incref (x->R); /* final: the scheduler frees what is left */
    if (R)
        o = json_pack ("{s:I s:O s:b}", "id", (json_int_t)job->id, "R", R,
                       "final", 1);
    else
        o = json_pack ("{s:I s:b}", "id", (json_int_t)job->id, "final", 1);
    if (o && send_request (a, "sched.free", o, false) == 0) {
        x->free_pending = 1;
        a->stats.free++;
    }
    json_decref (R);
    json_decref (o);
}

static int send_alloc (struct alloc *a, struct job *job)
{
    struct jobx *x = job->x;
    json_t *jobspec, *o;
    int rc = -1;

    if (!(jobspec = x->jobspec ? job_jobspec (x) : json_null ()))
        return -1;
    o = json_pack ("{s:I s:I s:i s:f s:O}", "id", (json_int_t)job->id,
                   "priority", (json_int_t)x->js.priority, "userid",
                   (int)job->userid, "t_submit", x->js.t_submit, "jobspec",
                   jobspec);
    if (o && (rc = send_request (a, "sched.alloc", o, false)) == 0) {
        x->alloc_pending = 1;
        a->npending++;
        list_add_tail (&a->outstanding, &x->alloc_link);
        if (heap_push (a->pending, job) < 0)
            jm_log (a->jm, LOG_ERR, "pending heap: out of memory");
        a->stats.alloc++;
    }
    json_decref (o);
    json_decref (jobspec);
    return rc;
}

/* Limited mode: cancel requests in flight that waiting jobs outrank.
 * Each request being canceled frees a slot for one of the best waiting
 * jobs, so those are skipped; then the k-th best waiting job is paired
 * with the k-th worst request in flight.  Bounded work per call. */
#define ROOM_MAX 128
static void make_room (struct alloc *a)
{
    struct job *popped[ROOM_MAX];
    size_t skip = a->ncanceling;
    int n = 0;

    if (skip >= ROOM_MAX)
        return;
    while (n < ROOM_MAX && heap_size (a->queue) > 0) {
        struct job *best = heap_top (a->queue), *worst;
        if (skip > 0) {
            popped[n++] = heap_pop (a->queue);
            skip--;
            continue;
        }
        if (!(worst = heap_top (a->pending))
            || alloc_queue_cmp (best, worst) >= 0)
            break;
        popped[n++] = heap_pop (a->queue);
        alloc_cancel (a, worst);
        if (worst->x->aidx != HEAP_NONE)
            break; /* not sent */
        a->stats.room++;
    }
    for (int i = 0; i < n; i++)
        (void)heap_push (a->queue, popped[i]);
}

void alloc_schedule (struct alloc *a)
{
    if (a->prioritize && a->ready) {
        json_t *o = json_pack ("{s:O}", "jobs", a->prioritize);
        if (o && send_request (a, "sched.prioritize", o, true) == 0)
            a->stats.prioritize++;
        json_decref (o);
    }
    json_decref (a->prioritize);
    a->prioritize = NULL;
    if (!a->ready || a->stopped)
        return;
    while (heap_size (a->queue) > 0
           && (a->limit == 0 || a->npending < (size_t)a->limit)) {
        struct job *job = heap_pop (a->queue);
        if (send_alloc (a, job) < 0) {
            (void)heap_push (a->queue, job);
            break;
        }
    }
    if (a->limit > 0 && a->npending >= (size_t)a->limit)
        make_room (a);
}

void alloc_queue_start (struct alloc *a, bool start)
{
    struct list_node *pos, *tmp;

    a->stopped = !start;
    if (start)
        return;
    list_for_each_safe (pos, tmp, &a->outstanding)
    {
        struct jobx *x = list_entry (pos, struct jobx, alloc_link);
        if (x->js.state == FLUX_JOB_STATE_SCHED)
            alloc_cancel (a, x->job);
    }
}

bool alloc_queue_started (struct alloc *a)
{
    return !a->stopped;
}

size_t alloc_queue_length (struct alloc *a)
{
    return heap_size (a->queue);
}

size_t alloc_pending_count (struct alloc *a)
{
    return a->npending;
}

json_t *alloc_stats (struct alloc *a)
{
    return json_pack (
        "{s:b s:b s:b s:s s:i s:I s:I s:{s:I s:I s:I s:I s:I s:I"
        " s:I s:I s:I s:I}}",
        "hello", a->hello, "ready", a->ready, "partial-ok", a->partial_ok,
        "mode", a->limit ? "limited" : "unlimited", "limit", a->limit,
        "queue_length", (json_int_t)heap_size (a->queue), "alloc_pending",
        (json_int_t)a->npending, "sent", "alloc", (json_int_t)a->stats.alloc,
        "success", (json_int_t)a->stats.success, "annotate",
        (json_int_t)a->stats.annotate, "deny", (json_int_t)a->stats.deny,
        "cancel", (json_int_t)a->stats.cancel, "free",
        (json_int_t)a->stats.free, "free_partial",
        (json_int_t)a->stats.free_partial, "prioritize",
        (json_int_t)a->stats.prioritize, "cancel_sent",
        (json_int_t)a->stats.cancel_sent, "room", (json_int_t)a->stats.room);
}

/* Handshake (RFC 27 Hello, Ready) */

static bool same_sender (const flux_msg_t *msg, const char *uuid)
{
    const char *sender = flux_msg_route_first (msg);
    return uuid && sender && !strcmp (sender, uuid);
}

static void set_sender (struct alloc *a, const flux_msg_t *msg)
{
    const char *sender = flux_msg_route_first (msg);

    free (a->sched_uuid);
    a->sched_uuid = sender ? strdup (sender) : NULL;
}

/* A new scheduler: requests sent to the old one are void.  Jobs waiting
 * for an alloc go back to the queue (or on with cleanup); frees will be
 * sent again after ready. */
static void reset_requests (struct alloc *a)
{
    struct list_node *pos, *tmp, *head = &a->outstanding;
    struct job **jobs;
    size_t n = 0, i;

    if (a->npending > 0 && (jobs = calloc (a->npending, sizeof (*jobs)))) {
        list_for_each_safe (pos, tmp, head)
        {
            struct jobx *x = list_entry (pos, struct jobx, alloc_link);
            if (n < a->npending)
                jobs[n++] = x->job;
        }
        for (i = 0; i < n; i++)
            pending_done (a, jobs[i]);
        for (i = 0; i < n; i++) {
            if (jobs[i]->x->js.state == FLUX_JOB_STATE_SCHED)
                alloc_enqueue (a, jobs[i]);
            else
                action_cleanup (a->jm, jobs[i]);
        }
        free (jobs);
    }
    list_for_each_safe (pos, tmp, &a->jm->resources)
    {
        struct jobx *x = list_entry (pos, struct jobx, res_link);
        x->free_pending = 0;
    }
}

/* One hello response: the job, its R, and for a partial-ok scheduler the
 * ranks already released (RFC 27 "free"). */
static int hello_respond (struct alloc *a, const flux_msg_t *msg,
                          struct job *job)
{
    struct jobx *x = job->x;
    char *free_ranks = NULL;
    json_t *o;
    int rc = -1;

    /* the scheduler learns of every release so far from this response */
    idset_destroy (x->free_unsent);
    x->free_unsent = NULL;
    if (!(o = json_pack ("{s:I s:I s:i s:f}", "id", (json_int_t)job->id,
                         "priority", (json_int_t)x->js.priority, "userid",
                         (int)job->userid, "t_submit", x->js.t_submit)))
        goto nomem;
    if (x->R && json_object_set (o, "R", x->R) < 0)
        goto nomem;
    if (a->partial_ok && x->js.released && !idset_empty (x->js.released)) {
        if (!(free_ranks = idset_encode (x->js.released, IDSET_FLAG_RANGE))
            || json_object_set_new (o, "free", json_string (free_ranks)) < 0)
            goto nomem;
    }
    rc = flux_respond_pack (a->jm->h, msg, "O", o);
    goto done;
nomem:
    errno = ENOMEM;
done:
    free (free_ranks);
    json_decref (o);
    return rc;
}

void alloc_hello (struct alloc *a, const flux_msg_t *msg)
{
    struct list_node *pos, *tmp;
    const char *payload = NULL;
    int partial_ok = 0;

    if (!flux_msg_is_streaming (msg)) {
        jm_respond_error (a->jm, msg, EPROTO, "sched-hello must be streaming");
        return;
    }
    if (flux_request_decode (msg, NULL, &payload) < 0
        || (payload
            && flux_request_unpack (msg, NULL, "{s?b}", "partial-ok",
                                    &partial_ok)
                   < 0)) {
        jm_respond_error (a->jm, msg, EPROTO,
                          "sched-hello: expected {partial-ok?:b}");
        return;
    }
    if (a->hello || a->ready)
        jm_log (a->jm, LOG_INFO, "scheduler: a new scheduler says hello");
    a->hello = a->ready = false;
    a->partial_ok = partial_ok;
    reset_requests (a);
    list_for_each_safe (pos, tmp, &a->jm->resources)
    {
        struct jobx *x = list_entry (pos, struct jobx, res_link);
        if (hello_respond (a, msg, x->job) < 0) {
            jm_log (a->jm, LOG_ERR, "sched-hello: %s", strerror (errno));
            flux_respond_error (a->jm->h, msg, errno, NULL);
            return;
        }
    }
    flux_respond_error (a->jm->h, msg, ENODATA, NULL);
    a->hello = true;
    set_sender (a, msg);
}

void alloc_ready (struct alloc *a, const flux_msg_t *msg)
{
    const char *mode;
    int limit = 0;
    struct list_node *pos, *tmp;

    if (flux_request_unpack (msg, NULL, "{s:s s?i}", "mode", &mode, "limit",
                             &limit)
        < 0) {
        jm_respond_error (a->jm, msg, EPROTO, "malformed sched-ready request");
        return;
    }
    if (!strcmp (mode, "unlimited"))
        limit = 0;
    else if (!strcmp (mode, "limited")) {
        if (limit < 1) {
            jm_respond_error (a->jm, msg, EPROTO,
                              "limited mode needs a limit of 1-%d", INT_MAX);
            return;
        }
    }
    else {
        jm_respond_error (a->jm, msg, EPROTO, "unknown scheduler mode %s",
                          mode);
        return;
    }
    if (!a->hello) {
        jm_respond_error (a->jm, msg, EPROTO, "sched-hello must come first");
        return;
    }
    if (flux_respond_pack (a->jm->h, msg, "{s:I}", "count",
                           (json_int_t)heap_size (a->queue))
        < 0)
        jm_log (a->jm, LOG_ERR, "sched-ready: %s", strerror (errno));
    a->limit = limit;
    a->ready = true;
    set_sender (a, msg);
    jm_log (a->jm, LOG_DEBUG, "scheduler: ready, %s", mode);
    /* frees held back while there was no scheduler, partial ones first
     * (action_cleanup only sends requests here: the list does not change
     * under us) */
    list_for_each_safe (pos, tmp, &a->jm->resources)
    {
        struct jobx *x = list_entry (pos, struct jobx, res_link);
        release_flush (a, x->job);
        if (x->js.state == FLUX_JOB_STATE_CLEANUP)
            action_cleanup (a->jm, x->job);
    }
}

void alloc_disconnect (struct alloc *a, const flux_msg_t *msg)
{
    if (same_sender (msg, a->sched_uuid))
        suspend (a, "disconnected");
}

/* Responses */

/* RFC 27 annotation update: dictionaries merge recursively, null
 * removes a key, and a dictionary left empty goes too. */
static int annotations_merge (json_t *dst, json_t *src)
{
    const char *key;
    json_t *val;
    void *tmp;

    json_object_foreach_safe (src, tmp, key, val)
    {
        json_t *cur = json_object_get (dst, key);
        if (json_is_null (val))
            (void)json_object_del (dst, key);
        else if (json_is_object (cur) && json_is_object (val)) {
            if (annotations_merge (cur, val) < 0)
                return -1;
            if (json_object_size (cur) == 0)
                (void)json_object_del (dst, key);
        }
        else if (json_object_set_new (dst, key, json_deep_copy (val)) < 0)
            return -1;
    }
    return 0;
}

static void annotations_journal (struct alloc *a, struct job *job)
{
    json_t *dict = job->x->annotations, *entry;

    entry = eventlog_entry_pack (0., "annotations", "{s:O}", "annotations",
                                 dict ? dict : json_null ());
    if (entry)
        journal_post (a->jm->journal, job, entry, NULL);
    json_decref (entry);
}

static int annotations_update (struct alloc *a, struct job *job, json_t *new)
{
    struct jobx *x = job->x;

    if (!json_is_object (new))
        return -1;
    if (!x->annotations && !(x->annotations = json_object ()))
        return -1;
    if (annotations_merge (x->annotations, new) < 0)
        return -1;
    if (json_object_size (x->annotations) == 0) {
        json_decref (x->annotations);
        x->annotations = NULL;
    }
    return 0;
}

/* The scheduler's annotations do not survive a failed allocation. */
static void annotations_clear (struct alloc *a, struct job *job)
{
    if (job->x->annotations) {
        json_decref (job->x->annotations);
        job->x->annotations = NULL;
        annotations_journal (a, job);
    }
}

static void post_alloc (struct alloc *a, struct job *job)
{
    struct jobx *x = job->x;

    x->alloc_lookup = 0;
    if (x->annotations)
        (void)event_post_pack (a->jm, job, "alloc", 0, "{s:O}", "annotations",
                               x->annotations);
    else
        (void)event_post (a->jm, job, "alloc", 0, NULL, NULL);
}

static void R_lookup_continuation (flux_future_t *f, void *arg)
{
    struct alloc *a = arg;
    struct job *job = flux_future_aux_get (f, "job");
    const char *s;
    json_t *R = NULL;

    if (flux_kvs_lookup_get (f, &s) < 0 || !s
        || !(R = jsonparse (s, strlen (s), NULL, 0)))
        jm_log (a->jm, LOG_ERR, "%ju: R lookup: %s", (uintmax_t)job->id,
                future_strerror (f, errno ? errno : EPROTO));
    flux_future_destroy (f);
    json_decref (job->x->R);
    job->x->R = R;
    post_alloc (a, job);
}

/* Success: R comes in the response (flux-core's newer schedulers; the
 * job manager commits it) or, per RFC 27, is already in the KVS. */
static void alloc_success (struct alloc *a, struct job *job, json_t *R)
{
    struct jobx *x = job->x;
    char key[64];
    flux_future_t *f;

    if (R) {
        json_decref (x->R);
        x->R = json_deep_copy (R);
        (void)event_job_put (a->jm, job, "R", x->R);
        post_alloc (a, job);
        return;
    }
    if (job_kvs_key (key, sizeof (key), job->id, "R") < 0)
        return;
    x->alloc_lookup = 1;
    if (!(f = flux_kvs_lookup (a->jm->h, NULL, 0, key))
        || flux_future_aux_set (f, "job", job, NULL) < 0
        || flux_future_then (f, -1, R_lookup_continuation, a) < 0
        || jm_track (a->jm, f) < 0) {
        jm_log (a->jm, LOG_ERR, "%ju: R lookup: %s", (uintmax_t)job->id,
                strerror (errno));
        flux_future_destroy (f);
        post_alloc (a, job);
    }
}

void alloc_response (struct alloc *a, const flux_msg_t *msg)
{
    json_int_t id;
    int type;
    json_t *annotations = NULL, *R = NULL;
    const char *note = NULL;
    struct job *job;

    if (flux_response_decode (msg, NULL, NULL) < 0) {
        const char *errstr = NULL;
        (void)flux_response_decode_error (msg, &errstr);
        jm_log (a->jm, LOG_ERR, "sched.alloc: %s",
                errstr ? errstr : strerror (errno));
        suspend (a, "sched.alloc failed");
        return;
    }
    if (flux_msg_unpack (msg, "{s:I s:i s?o s?s s?o}", "id", &id, "type", &type,
                         "annotations", &annotations, "note", &note, "R", &R)
        < 0) {
        jm_log (a->jm, LOG_ERR, "sched.alloc: malformed response");
        return;
    }
    if (!(job = jobtab_lookup (a->jm->jobs, (flux_jobid_t)id)) || !job->x
        || !job->x->alloc_pending) {
        jm_log (a->jm, LOG_ERR,
                "sched.alloc: response for %ju, which has"
                " no request in flight",
                (uintmax_t)id);
        return;
    }
    switch (type) {
        case ALLOC_ANNOTATE:
            if (!annotations || annotations_update (a, job, annotations) < 0) {
                jm_log (a->jm, LOG_ERR, "%ju: sched.alloc: bad annotations",
                        (uintmax_t)id);
                return;
            }
            a->stats.annotate++;
            annotations_journal (a, job);
            return;
        case ALLOC_SUCCESS:
            pending_done (a, job);
            a->stats.success++;
            if (annotations) {
                (void)annotations_update (a, job, annotations);
                annotations_journal (a, job);
            }
            alloc_success (a, job, R);
            return;
        case ALLOC_DENY:
            pending_done (a, job);
            a->stats.deny++;
            annotations_clear (a, job);
            (void)action_raise (a->jm, job, "alloc", 0, FLUX_USERID_UNKNOWN,
                                note ? note : "");
            return;
        case ALLOC_CANCEL:
            pending_done (a, job);
            a->stats.cancel++;
            annotations_clear (a, job);
            if (job->x->js.state == FLUX_JOB_STATE_SCHED)
                alloc_enqueue (a, job);
            else
                action_cleanup (a->jm, job);
            return;
    }
    jm_log (a->jm, LOG_ERR, "%ju: sched.alloc: unknown response type %d",
            (uintmax_t)id, type);
}

void free_response (struct alloc *a, const flux_msg_t *msg)
{
    json_int_t id;
    struct job *job;

    if (flux_response_decode (msg, NULL, NULL) < 0) {
        const char *errstr = NULL;
        (void)flux_response_decode_error (msg, &errstr);
        jm_log (a->jm, LOG_ERR, "sched.free: %s",
                errstr ? errstr : strerror (errno));
        suspend (a, "sched.free failed");
        return;
    }
    if (flux_msg_unpack (msg, "{s:I}", "id", &id) < 0) {
        jm_log (a->jm, LOG_ERR, "sched.free: malformed response");
        return;
    }
    if (!(job = jobtab_lookup (a->jm->jobs, (flux_jobid_t)id)) || !job->x
        || !job->x->free_pending) {
        jm_log (a->jm, LOG_ERR,
                "sched.free: response for %ju, which has no"
                " request in flight",
                (uintmax_t)id);
        return;
    }
    job->x->free_pending = 0;
    (void)event_post (a->jm, job, "free", 0, NULL, NULL);
}
