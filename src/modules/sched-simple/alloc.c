/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* alloc.c - the RFC 27 job requests: alloc (queue, first fit, batched R
 * commit, then SUCCESS), cancel, prioritize, free (whole or partial),
 * expiration, and the scheduling turn run once per loop iteration.
 *
 * sched.alloc and sched.free responses always carry errnum 0 and the job
 * id (RFC 27); a conventional error response is sent only for a request
 * so malformed that its id is unknown, or for a protocol violation.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "request.h"
#include "libutil/monotime.h"
#include "engine_private.h"

enum {
    ALLOC_SUCCESS = 0,
    ALLOC_ANNOTATE = 1,
    ALLOC_DENY = 2,
    ALLOC_CANCEL = 3,
};

static double now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void respond_deny (sched_t *s, const flux_msg_t *msg, uint64_t id,
                          const char *note)
{
    s->stats.denies++;
    if (flux_respond_pack (s->h, msg, "{s:I s:i s:s}", "id", (json_int_t)id,
                           "type", ALLOC_DENY, "note", note)
        < 0)
        sched_log (s, LOG_ERR, "sched.alloc: responding: %s", strerror (errno));
}

static void respond_annotate (sched_t *s, struct job *job, const char *reason)
{
    s->stats.annotates++;
    if (flux_respond_pack (s->h, job->msg, "{s:I s:i s:{s:{s:s}}}", "id",
                           (json_int_t)job->id, "type", ALLOC_ANNOTATE,
                           "annotations", "sched", "reason_pending", reason)
        < 0)
        sched_log (s, LOG_ERR, "sched.alloc: responding: %s", strerror (errno));
}

/* Success, once R is in the KVS (RFC 27).  R goes in the response too,
 * as flux-core's schedulers send it, so the job manager need not look it
 * up before it can start the job. */
static void respond_success (sched_t *s, struct job *job, json_t *R)
{
    char *summary = rlist_dumps (job->alloc);
    json_t *sched
        = json_pack ("{s:s}", "resource_summary", summary ? summary : "");

    /* drop the pending reason (a null value removes the key, RFC 27) */
    if (sched && job->annotated)
        json_object_set_new (sched, "reason_pending", json_null ());
    if (!sched
        || flux_respond_pack (s->h, job->msg, "{s:I s:i s:{s:o} s:O}", "id",
                              (json_int_t)job->id, "type", ALLOC_SUCCESS,
                              "annotations", "sched", sched, "R", R)
               < 0)
        sched_log (s, LOG_ERR, "sched.alloc: responding: %s", strerror (errno));
    free (summary);
    s->stats.allocs++;
}

/* Forget a job: out of the queue and the table, destroyed. */
static void job_forget (sched_t *s, struct job *job)
{
    jobq_remove (s->queue, job);
    jobtab_remove (s->jobs, job->id);
    job_destroy (job);
}

/* batches */

static void batch_destroy (struct batch *b)
{
    if (b) {
        flux_future_destroy (b->f);
        flux_kvs_txn_destroy (b->txn);
        for (int i = 0; i < b->count; i++)
            json_decref (b->R[i]);
        free (b->R);
        free (b->jobs);
        free (b);
    }
}

void sched_batches_destroy (sched_t *s)
{
    while (s->inflight) {
        struct batch *b = s->inflight;
        s->inflight = b->next;
        waitlist_cancel (&s->kvs_wait, &b->kvs_wi);
        batch_destroy (b);
    }
    batch_destroy (s->batch);
    s->batch = NULL;
}

static int batch_send (sched_t *s, struct batch *b);

static void commit_cb (flux_future_t *f, void *arg)
{
    struct batch *b = arg;
    sched_t *s = flux_future_aux_get (f, "sched::sched");
    int rc = flux_future_get (f, NULL);
    const char *why = rc < 0 ? future_strerror (f, errno) : NULL;

    if (rc < 0 && errno == ENOSYS) {
        /* the kvs is unloading or absent and applied nothing: keep the
         * batch, and send it again on kvs.online (sched_kvs_online) */
        sched_log (s, LOG_WARNING,
                   "committing R of %d jobs refused (%s): kept until the kvs "
                   "is back",
                   b->count, why);
        flux_future_destroy (b->f);
        b->f = NULL;
        (void)waitlist_refused (&s->kvs_wait, &b->kvs_wi);
        return;
    }
    s->stats.commit_time += monotime () - b->t_sent;
    if (rc < 0)
        sched_log (s, LOG_ERR, "committing R of %d jobs failed: %s", b->count,
                   why);
    for (int i = 0; i < b->count; i++) {
        struct job *job = b->jobs[i];
        if (rc == 0) {
            respond_success (s, job, b->R[i]);
            job->state = JOB_ALLOCATED;
            flux_msg_decref (job->msg);
            job->msg = NULL;
        }
        else {
            char note[256];
            snprintf (note, sizeof (note),
                      "scheduler could not write R to the KVS: %s", why);
            (void)rlist_free (s->rl, job->alloc);
            respond_deny (s, job->msg, job->id, note);
            job_forget (s, job);
            s->need_schedule = true;
        }
    }
    if (b->prev)
        b->prev->next = b->next;
    else
        s->inflight = b->next;
    if (b->next)
        b->next->prev = b->prev;
    batch_destroy (b); /* destroys f */
    if (s->need_schedule)
        sched_kick (s);
}

/* Send b's commit (again, after kvs.online); on failure to send, b fails
 * through commit_cb on a later turn.  LAZY (libkvs/kvs.h): answered once
 * applied, not after an fsync.  R committed is what RFC 27 asks before
 * SUCCESS; its durability matters only once the job manager's alloc
 * event is durable, and that commit comes after this one, so its
 * checkpoint covers R (the job manager writes R there again anyway). */
static int batch_send (sched_t *s, struct batch *b)
{
    b->t_sent = monotime ();
    waitlist_sent (&s->kvs_wait, &b->kvs_wi);
    if (!(b->f = flux_kvs_commit (s->h, KVS_PRIMARY_NAMESPACE, FLUX_KVS_LAZY,
                                  b->txn))
        || flux_future_aux_set (b->f, "sched::sched", s, NULL) < 0
        || flux_future_then (b->f, -1., commit_cb, b) < 0) {
        /* fail the batch through the same path, on a later turn */
        flux_future_destroy (b->f);
        if (!(b->f = flux_future_create (NULL, NULL))) {
            sched_log (s, LOG_CRIT, "cannot commit R: out of memory");
            return -1;
        }
        flux_future_set_flux (b->f, s->h);
        flux_future_aux_set (b->f, "sched::sched", s, NULL);
        flux_future_fulfill_error (b->f, errno ? errno : ENOMEM,
                                   "kvs.commit could not be sent");
        (void)flux_future_then (b->f, -1., commit_cb, b);
    }
    return 0;
}

static void batch_commit (sched_t *s)
{
    struct batch *b = s->batch;

    if (!b)
        return;
    s->batch = NULL;
    s->stats.commits++;
    if (batch_send (s, b) < 0) {
        batch_destroy (b);
        return;
    }
    b->next = s->inflight;
    if (s->inflight)
        s->inflight->prev = b;
    s->inflight = b;
}

/* A batch refused by the kvs goes again (waitlist callback). */
void sched_kvs_resend (struct waitlist *wl, struct waitlist_item *it, void *arg)
{
    struct batch *b = waitlist_entry (it, struct batch, kvs_wi);
    sched_t *s = arg;

    sched_log (s, LOG_INFO, "the kvs is back: committing R of %d jobs again",
               b->count);
    (void)batch_send (s, b);
}

void sched_kvs_online (sched_t *s)
{
    waitlist_online (&s->kvs_wait);
}

/* Put the job's R in the current batch.  -1/ENOMEM. */
static int batch_add (sched_t *s, struct job *job)
{
    struct batch *b = s->batch;
    char key[64];
    json_t *R;

    if (!b) {
        if (!(b = calloc (1, sizeof (*b))) || !(b->txn = flux_kvs_txn_create ())
            || !(b->jobs = calloc (SCHED_MAX_BATCH, sizeof (b->jobs[0])))
            || !(b->R = calloc (SCHED_MAX_BATCH, sizeof (b->R[0])))) {
            batch_destroy (b);
            errno = ENOMEM;
            return -1;
        }
        b->max = SCHED_MAX_BATCH;
        waitlist_item_init (&b->kvs_wi);
        s->batch = b;
    }
    sched_job_key (key, sizeof (key), job->id, "R");
    if (!(R = rlist_to_R (job->alloc))
        || flux_kvs_txn_pack (b->txn, 0, key, "O", R) < 0) {
        json_decref (R);
        errno = ENOMEM;
        return -1;
    }
    b->R[b->count] = R;
    b->jobs[b->count++] = job;
    if (b->count == b->max)
        batch_commit (s);
    return 0;
}

/* scheduling */

static void set_times (sched_t *s, struct job *job)
{
    double t = now ();
    double expiration = job->duration > 0. ? t + job->duration : 0.;

    if (s->expiration > 0. && (expiration == 0. || expiration > s->expiration))
        expiration = s->expiration;
    if (expiration > 0. && expiration <= t)
        expiration = t + 1e-6; /* the instance is about to expire */
    rlist_set_times (job->alloc, t, expiration);
}

/* Try the head of the queue until it is empty or the head does not fit. */
static void schedule (sched_t *s)
{
    struct job *job;

    while ((job = jobq_first (s->queue))) {
        flux_error_t error;
        double t0 = monotime ();
        struct rlist *alloc = rlist_alloc_ex (s->rl, &job->req, &error);
        int errnum = errno;

        s->stats.alloc_time += monotime () - t0;
        s->stats.tries++;
        if (alloc) {
            jobq_remove (s->queue, job);
            job->alloc = alloc;
            job->state = JOB_COMMITTING;
            set_times (s, job);
            if (batch_add (s, job) < 0) {
                (void)rlist_free (s->rl, alloc);
                respond_deny (s, job->msg, job->id,
                              "scheduler is out of memory");
                job_forget (s, job);
            }
            continue;
        }
        if (errnum == ENOSPC) {
            if (!job->annotated) {
                respond_annotate (s, job, error.text);
                job->annotated = true;
            }
            break;
        }
        if (errnum == ENOMEM) {
            sched_log (s, LOG_ERR, "allocation: out of memory");
            break;
        }
        respond_deny (s, job->msg, job->id, error.text);
        job_forget (s, job);
    }
}

void sched_loop_turn (sched_t *s)
{
    if (s->need_schedule && s->state == SCHED_READY) {
        s->need_schedule = false;
        schedule (s);
    }
    batch_commit (s);
}

/* requests */

void sched_alloc (sched_t *s, const flux_msg_t *msg)
{
    json_int_t id, priority;
    int userid;
    json_t *jobspec;
    struct job *job;
    flux_error_t error;

    if (flux_request_unpack (msg, NULL, "{s:I s:I s:i s:o}", "id", &id,
                             "priority", &priority, "userid", &userid,
                             "jobspec", &jobspec)
            < 0
        || id < 0 || priority < 0 || priority > UINT32_MAX) {
        flux_respond_error (s->h, msg, EPROTO,
                            "sched.alloc: expected {id:I priority:I "
                            "userid:i jobspec:o}");
        return;
    }
    if (jobtab_lookup (s->jobs, (uint64_t)id)) {
        flux_respond_error (s->h, msg, EEXIST,
                            "sched.alloc: the job already has an alloc "
                            "request or resources");
        return;
    }
    if (!(job = job_create ((uint64_t)id, msg))) {
        flux_respond_error (s->h, msg, ENOMEM, NULL);
        return;
    }
    job->priority = (uint32_t)priority;
    job->userid = (uint32_t)userid;
    job->state = JOB_PENDING;
    if (request_parse (jobspec, &job->req, &job->duration, &error) < 0
        || (s->rl && rlist_check (s->rl, &job->req, &error) < 0)) {
        char note[200];
        if (errno == EOVERFLOW)
            snprintf (note, sizeof (note), "%s", error.text);
        else
            snprintf (note, sizeof (note), "invalid jobspec: %s", error.text);
        respond_deny (s, msg, job->id, note);
        job_destroy (job);
        return;
    }
    if (jobtab_insert (s->jobs, job) < 0 || jobq_push (s->queue, job) < 0) {
        jobtab_remove (s->jobs, job->id);
        job_destroy (job);
        flux_respond_error (s->h, msg, ENOMEM, NULL);
        return;
    }
    if (jobq_first (s->queue) == job) {
        s->need_schedule = true;
        sched_kick (s);
    }
}

void sched_cancel (sched_t *s, const flux_msg_t *msg)
{
    json_int_t id;
    struct job *job;

    if (flux_request_unpack (msg, NULL, "{s:I}", "id", &id) < 0) {
        sched_log (s, LOG_ERR, "malformed sched.cancel dropped");
        /* (RFC 27 has no response: one is dropped for the job manager's
         * no-response request, and tells any other sender) */
        flux_respond_error (s->h, msg, EPROTO, "malformed sched.cancel");
        return;
    }
    if (!(job = jobtab_lookup (s->jobs, (uint64_t)id))
        || job->state != JOB_PENDING)
        return; /* nothing pending: ignored (RFC 27) */
    if (jobq_first (s->queue) == job) {
        s->need_schedule = true;
        sched_kick (s);
    }
    s->stats.cancels++;
    if (flux_respond_pack (s->h, job->msg, "{s:I s:i}", "id", id, "type",
                           ALLOC_CANCEL)
        < 0)
        sched_log (s, LOG_ERR, "sched.alloc: responding: %s", strerror (errno));
    job_forget (s, job);
}

void sched_prioritize (sched_t *s, const flux_msg_t *msg)
{
    struct job *head = jobq_first (s->queue);
    json_t *jobs, *entry;
    size_t index;

    if (flux_request_unpack (msg, NULL, "{s:o}", "jobs", &jobs) < 0
        || !json_is_array (jobs)) {
        sched_log (s, LOG_ERR, "malformed sched.prioritize dropped");
        flux_respond_error (s->h, msg, EPROTO, "malformed sched.prioritize");
        return;
    }
    json_array_foreach (jobs, index, entry)
    {
        json_int_t id, priority;
        struct job *job;
        if (json_unpack (entry, "[II]", &id, &priority) < 0 || priority < 0
            || priority > UINT32_MAX) {
            sched_log (s, LOG_ERR, "sched.prioritize: entry %zu malformed",
                       index);
            continue;
        }
        if (!(job = jobtab_lookup (s->jobs, (uint64_t)id))
            || job->state != JOB_PENDING)
            continue; /* not pending: ignored (RFC 27) */
        job->priority = (uint32_t)priority;
        jobq_reorder (s->queue, job);
    }
    if (jobq_first (s->queue) != head) {
        s->need_schedule = true;
        sched_kick (s);
    }
}

/* The ranks of R, or of an rlist, as an idset; NULL with errno. */
static struct idset *rlist_rankset (const struct rlist *rl)
{
    char *str = rlist_ranks (rl);
    struct idset *ids = str ? idset_decode (str) : NULL;

    free (str);
    return ids;
}

/* Check that the ranks of R (maybe none) are all held by job; fill
 * *ranksp with them.
 * 0, or -1 with the reason in error. */
static int held_ranks (struct job *job, json_t *R, struct idset **ranksp,
                       flux_error_t *error)
{
    struct rlist *rl;
    struct idset *ranks = NULL, *held = NULL, *extra = NULL;
    flux_error_t e;
    int rc = -1;

    if (!(rl = rlist_from_R (R, &e))) {
        errprintf (error, "bad R: %s", e.text);
        return -1;
    }
    if (!(ranks = rlist_rankset (rl)) || !(held = rlist_rankset (job->alloc))
        || !(extra = idset_difference (ranks, held))) {
        errprintf (error, "out of memory");
        goto done;
    }
    if (!idset_empty (extra)) {
        char *str = idset_encode (extra, IDSET_FLAG_RANGE);
        errprintf (error,
                   "rank(s) %s not held by the job (never allocated to it, "
                   "or already freed)",
                   str ? str : "?");
        free (str);
        goto done;
    }
    *ranksp = ranks;
    ranks = NULL;
    rc = 0;
done:
    rlist_destroy (rl);
    idset_destroy (ranks);
    idset_destroy (held);
    idset_destroy (extra);
    return rc;
}

/* A partial free: return the resources the job holds on the ranks of R
 * (RFC 27: a rank is never split over several frees) to the pool.
 * 0, or -1 with the reason in error (nothing freed). */
static int free_part (sched_t *s, struct job *job, json_t *R,
                      flux_error_t *error)
{
    struct idset *ranks = NULL;
    struct rlist *part = NULL;
    int rc = -1;

    if (!job->alloc)
        return errprintf (error, "its R could not be read at hello");
    if (held_ranks (job, R, &ranks, error) < 0)
        return -1;
    if (idset_empty (ranks)) {
        errprintf (error, "R names no ranks");
        goto done;
    }
    if (!(part = rlist_copy_ranks (job->alloc, ranks))) {
        errprintf (error, "out of memory");
        goto done;
    }
    if (rlist_free (s->rl, part) < 0) {
        errprintf (error, "its resources are not allocated here: %s",
                   strerror (errno));
        goto done;
    }
    (void)rlist_remove_ranks (job->alloc, ranks);
    rc = 0;
done:
    rlist_destroy (part);
    idset_destroy (ranks);
    return rc;
}

/* The final free: return all the job still holds and forget it. */
static void free_all (sched_t *s, struct job *job)
{
    if (job->alloc && rlist_free (s->rl, job->alloc) < 0)
        sched_log (s, LOG_ERR, "sched.free: job %ju: %s", (uintmax_t)job->id,
                   strerror (errno));
    jobtab_remove (s->jobs, job->id);
    job_destroy (job);
}

/* sched.free {id, R?, final?}.  A final free (final:true) returns
 * everything the job still holds, whatever R says; any other is partial,
 * as RFC 27 says ("if absent or false, more free requests are
 * forthcoming"; our job manager always sends final): it returns only
 * the ranks of R, which it must have and which must all be held by the
 * job.  Freed resources are scheduled on the next loop turn.
 * Errors (unknown job, bad R, ranks not held) are logged and counted
 * (free-errors), and answered with an error, except for a final free,
 * which the job manager waits for: that gets {id} as always. */
void sched_free (sched_t *s, const flux_msg_t *msg)
{
    json_int_t id;
    json_t *R = NULL;
    int final = 0; /* RFC 27: absent is false */
    struct job *job;
    flux_error_t error;
    bool freed = false;

    if (flux_request_unpack (msg, NULL, "{s:I s?o s?b}", "id", &id, "R", &R,
                             "final", &final)
            < 0
        || (!final && !R)) {
        s->stats.free_errors++;
        flux_respond_error (s->h, msg, EPROTO,
                            "sched.free: expected {id:I R?:o final?:b}, with R"
                            " unless final is true");
        return;
    }
    job = jobtab_lookup (s->jobs, (uint64_t)id);
    if (!job || job->state != JOB_ALLOCATED) {
        s->stats.free_errors++;
        sched_log (s, LOG_ERR, "sched.free: job %ju holds no resources",
                   (uintmax_t)id);
        if (!final) {
            flux_respond_error (s->h, msg, ENOENT,
                                "sched.free: the job holds no resources");
            return;
        }
    }
    else if (!final) {
        if (free_part (s, job, R, &error) < 0) {
            s->stats.free_errors++;
            sched_log (s, LOG_ERR,
                       "sched.free: job %ju: partial free refused: %s",
                       (uintmax_t)id, error.text);
            flux_respond_error (s->h, msg, EINVAL, error.text);
            return;
        }
        s->stats.partial_frees++;
        freed = true;
    }
    else {
        struct idset *ranks = NULL;
        if (R && job->alloc && held_ranks (job, R, &ranks, &error) < 0) {
            s->stats.free_errors++;
            sched_log (s, LOG_ERR,
                       "sched.free: job %ju: final free: %s; freeing what the "
                       "job holds",
                       (uintmax_t)id, error.text);
        }
        idset_destroy (ranks);
        free_all (s, job);
        s->stats.frees++;
        freed = true;
    }
    if (freed) {
        s->need_schedule = true;
        sched_kick (s);
    }
    if (flux_respond_pack (s->h, msg, "{s:I}", "id", id) < 0)
        sched_log (s, LOG_ERR, "sched.free: responding: %s", strerror (errno));
}

void sched_expiration (sched_t *s, const flux_msg_t *msg)
{
    json_int_t id;
    double expiration;
    struct job *job;

    if (flux_request_unpack (msg, NULL, "{s:I s:F}", "id", &id, "expiration",
                             &expiration)
        < 0) {
        flux_respond_error (s->h, msg, EPROTO,
                            "sched.expiration: expected {id:I expiration:F}");
        return;
    }
    if (!(job = jobtab_lookup (s->jobs, (uint64_t)id))
        || job->state != JOB_ALLOCATED || !job->alloc) {
        flux_respond_error (s->h, msg, ENOENT, "job has no allocation");
        return;
    }
    if (expiration < 0.
        || (expiration > 0. && expiration <= rlist_starttime (job->alloc))) {
        flux_respond_error (s->h, msg, EINVAL,
                            "expiration must be after the starttime");
        return;
    }
    rlist_set_times (job->alloc, rlist_starttime (job->alloc), expiration);
    flux_respond (s->h, msg, NULL);
}

/* sched.disconnect: the job manager went away; its pending requests are
 * dropped (allocated jobs keep their resources). */
void sched_disconnect (sched_t *s, const flux_msg_t *msg)
{
    struct job **drop;
    int count = jobq_count (s->queue), n = 0;

    if (count == 0 || !(drop = calloc (count, sizeof (*drop))))
        return;
    for (int i = 0; i < count; i++) {
        struct job *job = jobq_at (s->queue, i);
        if (flux_msg_route_match_first (job->msg, msg))
            drop[n++] = job;
    }
    for (int i = 0; i < n; i++)
        job_forget (s, drop[i]);
    free (drop);
    if (n > 0) {
        sched_log (s, LOG_DEBUG, "disconnect: dropped %d pending jobs", n);
        s->need_schedule = true;
        sched_kick (s);
    }
}
