/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* engine.c - the engine's life: create/destroy, start-up (resource.acquire,
 * job-manager.sched-hello with the replay of allocated jobs, sched-ready),
 * resource up/down updates, sched.resource-status, feasibility.check and
 * the statistics.  The RFC 27 job requests are in alloc.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "request.h"
#include "engine_private.h"

#define MAX_LOOKUPS 128 /* hello replay: R lookups in flight */

/* To the broker log (flux_log). */
void sched_log (sched_t *s, int severity, const char *fmt, ...)
{
    va_list ap;

    va_start (ap, fmt);
    flux_vlog (s->h, severity, fmt, ap);
    va_end (ap);
}

void sched_job_key (char *buf, size_t size, uint64_t id, const char *name)
{
    snprintf (buf, size, "job.%04x.%04x.%04x.%04x%s%s",
              (unsigned)(id >> 48) & 0xffff, (unsigned)(id >> 32) & 0xffff,
              (unsigned)(id >> 16) & 0xffff, (unsigned)id & 0xffff,
              name ? "." : "", name ? name : "");
}

/* Log, then stop the reactor with an error: the module exits. */
static void fatal (sched_t *s, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
static void fatal (sched_t *s, const char *fmt, ...)
{
    char text[400];
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (text, sizeof (text), fmt, ap);
    va_end (ap);
    sched_log (s, LOG_ERR, "%s", text);
    errno = EPROTO;
    flux_reactor_stop_error (flux_get_reactor (s->h));
}

static void deferred_cb (struct flux_deferred *d)
{
    sched_t *s = (sched_t *)((char *)d - offsetof (struct sched, deferred));
    sched_loop_turn (s);
}

void sched_kick (sched_t *s)
{
    if (!flux_deferred_pending (&s->deferred))
        flux_reactor_defer (flux_get_reactor (s->h), &s->deferred);
}

sched_t *sched_create (flux_t *h, int queue_depth)
{
    sched_t *s;

    if (!h || queue_depth < 0) {
        errno = EINVAL;
        return NULL;
    }
    if (!(s = calloc (1, sizeof (*s))))
        goto nomem;
    s->h = h;
    s->queue_depth = queue_depth;
    s->state = SCHED_ACQUIRING;
    flux_deferred_init (&s->deferred, deferred_cb);
    waitlist_init (&s->kvs_wait, sched_kvs_resend, s);
    if (!(s->jobs = jobtab_create ()) || !(s->queue = jobq_create ()))
        goto nomem;
    return s;
nomem:
    sched_destroy (s);
    errno = ENOMEM;
    return NULL;
}

void sched_destroy (sched_t *s)
{
    if (s) {
        int saved_errno = errno;
        flux_reactor_undefer (&s->deferred);
        flux_future_destroy (s->acquire_f);
        flux_future_destroy (s->hello_f);
        flux_future_destroy (s->ready_f);
        sched_batches_destroy (s);
        jobq_destroy (s->queue);
        jobtab_destroy (s->jobs);
        rlist_destroy (s->rl);
        json_decref (s->all_R);
        free (s->replay);
        free (s);
        errno = saved_errno;
    }
}

bool sched_is_ready (sched_t *s)
{
    return s && s->state == SCHED_READY;
}

/* The job manager went away (a reload, or removed) before it answered
 * f: log it, and wait for its job-manager.online (sched_restart).  The
 * caller clears its pointer to f. */
static void jm_away (sched_t *s, flux_future_t *f, const char *what)
{
    sched_log (s, LOG_WARNING,
               "%s: %s: waiting for the job manager to come back", what,
               future_strerror (f, errno));
    flux_future_destroy (f);
    s->state = SCHED_HELLO;
}

/* sched-ready */

static void ready_cb (flux_future_t *f, void *arg)
{
    sched_t *s = arg;
    int count;

    if (flux_rpc_get_unpack (f, "{s:i}", "count", &count) < 0) {
        if (errno == ENOSYS) {
            jm_away (s, f, "job-manager.sched-ready");
            s->ready_f = NULL;
            return;
        }
        fatal (s, "job-manager.sched-ready: %s", future_strerror (f, errno));
        return;
    }
    s->state = SCHED_READY;
    flux_future_destroy (f);
    s->ready_f = NULL;
    sched_log (s, LOG_DEBUG, "ready: %d jobs hold resources, queue %d",
               jobtab_count (s->jobs), count);
    s->need_schedule = true;
    sched_kick (s);
}

static void send_ready (sched_t *s)
{
    if (s->queue_depth > 0)
        s->ready_f = flux_rpc_pack (s->h, "job-manager.sched-ready",
                                    FLUX_NODEID_ANY, 0, "{s:s s:i}", "mode",
                                    "limited", "limit", s->queue_depth);
    else
        s->ready_f
            = flux_rpc_pack (s->h, "job-manager.sched-ready", FLUX_NODEID_ANY,
                             0, "{s:s}", "mode", "unlimited");
    if (!s->ready_f || flux_future_then (s->ready_f, -1., ready_cb, s) < 0) {
        fatal (s, "job-manager.sched-ready: %s", strerror (errno));
        return;
    }
    s->state = SCHED_READYING;
}

/* hello: replay of the jobs holding resources */

static void lookups_start (sched_t *s);

static void replay_done_maybe (sched_t *s)
{
    if (s->state == SCHED_HELLO && s->hello_done && s->lookups == 0
        && s->replay_next == s->nreplay)
        send_ready (s);
}

static void lookup_cb (flux_future_t *f, void *arg)
{
    sched_t *s = arg;
    struct job *job = flux_future_aux_get (f, "sched::job");
    flux_error_t error;
    struct rlist *alloc;
    json_t *R;

    s->lookups--;
    if (flux_kvs_lookup_get_unpack (f, "o", &R) < 0)
        sched_log (s, LOG_ERR, "hello: job %ju: R lookup failed: %s",
                   (uintmax_t)job->id, future_strerror (f, errno));
    else if (!(alloc = rlist_from_R (R, &error)))
        sched_log (s, LOG_ERR, "hello: job %ju: bad R: %s", (uintmax_t)job->id,
                   error.text);
    else if (job->freed && rlist_remove_ranks (alloc, job->freed) < 0) {
        sched_log (s, LOG_ERR, "hello: job %ju: dropping freed ranks: %s",
                   (uintmax_t)job->id, strerror (errno));
        rlist_destroy (alloc);
    }
    else if (rlist_set_allocated (s->rl, alloc) < 0) {
        sched_log (s, LOG_ERR, "hello: job %ju: cannot mark %s allocated: %s",
                   (uintmax_t)job->id, "its R",
                   errno == EEXIST ? "already allocated to another job"
                                   : "not in the instance's resources");
        rlist_destroy (alloc);
    }
    else
        job->alloc = alloc;
    job->lookup = NULL;
    flux_future_destroy (f);
    lookups_start (s);
    replay_done_maybe (s);
}

static void lookups_start (sched_t *s)
{
    while (s->lookups < MAX_LOOKUPS && s->replay_next < s->nreplay) {
        uint64_t id = s->replay[s->replay_next++];
        struct job *job = jobtab_lookup (s->jobs, id);
        char key[64];
        flux_future_t *f;

        sched_job_key (key, sizeof (key), id, "R");
        if (!job)
            continue;
        if (!(f = flux_kvs_lookup (s->h, KVS_PRIMARY_NAMESPACE, 0, key))
            || flux_future_aux_set (f, "sched::job", job, NULL) < 0
            || flux_future_then (f, -1., lookup_cb, s) < 0) {
            sched_log (s, LOG_ERR, "hello: job %ju: R lookup: %s",
                       (uintmax_t)id, strerror (errno));
            flux_future_destroy (f);
            continue;
        }
        job->lookup = f;
        s->lookups++;
    }
    if (s->replay_next == s->nreplay) {
        s->nreplay = s->replay_next = 0; /* reuse the array */
    }
}

static int replay_push (sched_t *s, uint64_t id)
{
    if (s->nreplay == s->maxreplay) {
        int max = s->maxreplay ? s->maxreplay * 2 : 64;
        uint64_t *v = realloc (s->replay, max * sizeof (*v));
        if (!v)
            return -1;
        s->replay = v;
        s->maxreplay = max;
    }
    s->replay[s->nreplay++] = id;
    return 0;
}

static void hello_cb (flux_future_t *f, void *arg)
{
    sched_t *s = arg;
    json_int_t id, priority;
    int userid;
    const char *freed = NULL;
    struct job *job;

    if (flux_rpc_get_unpack (f, "{s:I s:I s:i s?s}", "id", &id, "priority",
                             &priority, "userid", &userid, "free", &freed)
        < 0) {
        if (errno == ENODATA) {
            s->hello_done = true;
            flux_future_destroy (f);
            s->hello_f = NULL;
            replay_done_maybe (s);
            return;
        }
        if (errno == ENOSYS) {
            jm_away (s, f, "job-manager.sched-hello");
            s->hello_f = NULL;
            return;
        }
        fatal (s, "job-manager.sched-hello: %s", future_strerror (f, errno));
        return;
    }
    if (jobtab_lookup (s->jobs, (uint64_t)id)) {
        sched_log (s, LOG_ERR, "hello: job %ju is listed twice", (uintmax_t)id);
        flux_future_reset (f);
        return;
    }
    if (!(job = job_create ((uint64_t)id, NULL))) {
        fatal (s, "hello: out of memory");
        return;
    }
    job->state = JOB_ALLOCATED;
    job->priority = (uint32_t)priority;
    job->userid = (uint32_t)userid;
    /* partial-ok: the ranks the job manager already freed (RFC 27) */
    if (freed && *freed && !(job->freed = idset_decode (freed)))
        sched_log (s, LOG_ERR,
                   "hello: job %ju: free \"%s\" is not an idset: all of its R"
                   " is taken as allocated",
                   (uintmax_t)id, freed);
    if (jobtab_insert (s->jobs, job) < 0) {
        job_destroy (job);
        fatal (s, "hello: out of memory");
        return;
    }
    if (replay_push (s, job->id) < 0) {
        fatal (s, "hello: out of memory");
        return;
    }
    lookups_start (s);
    flux_future_reset (f);
}

static void send_hello (sched_t *s)
{
    s->state = SCHED_HELLO;
    /* partial-ok: this scheduler takes partial frees and the "free" key of
     * hello responses (RFC 27) */
    if (!(s->hello_f
          = flux_rpc (s->h, "job-manager.sched-hello", "{\"partial-ok\":true}",
                      FLUX_NODEID_ANY, FLUX_RPC_STREAMING))
        || flux_future_then (s->hello_f, -1., hello_cb, s) < 0)
        fatal (s, "job-manager.sched-hello: %s", strerror (errno));
}

static void free_alloc (struct job *job, void *arg)
{
    sched_t *s = arg;

    if (job->alloc)
        (void)rlist_free (s->rl, job->alloc);
}

void sched_restart (sched_t *s)
{
    struct jobtab *jobs;
    struct jobq *queue;

    if (!s || s->state == SCHED_ACQUIRING)
        return;
    if (!(jobs = jobtab_create ()) || !(queue = jobq_create ())) {
        jobtab_destroy (jobs);
        fatal (s, "restart: out of memory");
        return;
    }
    sched_log (s, LOG_INFO,
               "the job manager was reloaded: %d jobs forgotten, hello again",
               jobtab_count (s->jobs));
    flux_future_destroy (s->hello_f);
    s->hello_f = NULL;
    flux_future_destroy (s->ready_f);
    s->ready_f = NULL;
    sched_batches_destroy (s); /* before the jobs they point to */
    jobtab_foreach (s->jobs, free_alloc, s);
    jobq_destroy (s->queue);
    jobtab_destroy (s->jobs); /* and their R lookups in flight */
    s->jobs = jobs;
    s->queue = queue;
    s->nreplay = s->replay_next = s->lookups = 0;
    s->hello_done = false;
    s->need_schedule = false;
    send_hello (s);
}

/* resource.acquire */

static int acquire_first (sched_t *s, flux_future_t *f)
{
    json_t *R;
    const char *up;
    flux_error_t error;

    if (flux_rpc_get_unpack (f, "{s:o s:s}", "resources", &R, "up", &up) < 0) {
        fatal (s, "resource.acquire: %s", future_strerror (f, errno));
        return -1;
    }
    if (!(s->rl = rlist_from_R (R, &error))) {
        fatal (s, "resource.acquire: bad R: %s", error.text);
        return -1;
    }
    if (rlist_mark_down (s->rl, "all") < 0 || rlist_mark_up (s->rl, up) < 0) {
        fatal (s, "resource.acquire: bad up idset \"%s\"", up);
        return -1;
    }
    s->expiration = rlist_expiration (s->rl);
    sched_log (s, LOG_DEBUG, "acquired %d nodes, %d cores, %d gpus (up %s)",
               rlist_nnodes (s->rl), rlist_count_cores (s->rl),
               rlist_count_gpus (s->rl), up);
    send_hello (s);
    return 0;
}

static void acquire_update (sched_t *s, flux_future_t *f)
{
    const char *up = NULL, *down = NULL, *shrink = NULL;
    double expiration = -1.;

    if (flux_rpc_get_unpack (f, "{s?s s?s s?s s?F}", "up", &up, "down", &down,
                             "shrink", &shrink, "expiration", &expiration)
        < 0) {
        fatal (s, "resource.acquire: %s", future_strerror (f, errno));
        return;
    }
    /* shrink targets also appear in down (RFC 28): they are simply down
     * here, and still count when deciding what could ever fit */
    if ((down && rlist_mark_down (s->rl, down) < 0)
        || (shrink && rlist_mark_down (s->rl, shrink) < 0)
        || (up && rlist_mark_up (s->rl, up) < 0))
        sched_log (s, LOG_ERR, "resource.acquire: bad idset in update");
    if (expiration >= 0.)
        s->expiration = expiration;
    if (up) {
        s->need_schedule = true;
        sched_kick (s);
    }
}

static void acquire_cb (flux_future_t *f, void *arg)
{
    sched_t *s = arg;

    if (!s->rl) {
        if (acquire_first (s, f) < 0)
            return;
    }
    else
        acquire_update (s, f);
    flux_future_reset (f);
}

int sched_start (sched_t *s)
{
    if (!s || s->acquire_f) {
        errno = EINVAL;
        return -1;
    }
    if (!(s->acquire_f = flux_rpc (s->h, "resource.acquire", NULL,
                                   FLUX_NODEID_ANY, FLUX_RPC_STREAMING))
        || flux_future_then (s->acquire_f, -1., acquire_cb, s) < 0) {
        flux_future_destroy (s->acquire_f);
        s->acquire_f = NULL;
        return -1;
    }
    return 0;
}

/* status */

void sched_resource_status (sched_t *s, const flux_msg_t *msg)
{
    struct rlist *down = NULL, *alloc = NULL, *all = NULL;
    json_t *down_R = NULL, *alloc_R = NULL;

    if (!s->rl) {
        flux_respond_error (s->h, msg, EAGAIN, "resources not acquired yet");
        return;
    }
    if (!s->all_R && (all = rlist_copy (s->rl)))
        s->all_R = rlist_to_R (all);
    rlist_destroy (all);
    if ((down = rlist_copy_down (s->rl)))
        down_R = rlist_to_R (down);
    if ((alloc = rlist_copy_allocated (s->rl)))
        alloc_R = rlist_to_R (alloc);
    rlist_destroy (down);
    rlist_destroy (alloc);
    if (!s->all_R || !down_R || !alloc_R) {
        json_decref (down_R);
        json_decref (alloc_R);
        flux_respond_error (s->h, msg, ENOMEM, NULL);
        return;
    }
    flux_respond_pack (s->h, msg, "{s:O s:o s:o}", "all", s->all_R, "down",
                       down_R, "allocated", alloc_R);
}

void sched_feasibility (sched_t *s, const flux_msg_t *msg)
{
    struct rlist_request req;
    flux_error_t error;
    json_t *jobspec;
    double duration;

    if (flux_request_unpack (msg, NULL, "{s:o}", "jobspec", &jobspec) < 0) {
        flux_respond_error (s->h, msg, EPROTO,
                            "feasibility.check: expected {jobspec:o}");
        return;
    }
    if (!s->rl) {
        flux_respond_error (s->h, msg, EAGAIN, "resources not acquired yet");
        return;
    }
    if (request_parse (jobspec, &req, &duration, &error) < 0
        || rlist_check (s->rl, &req, &error) < 0) {
        flux_respond_error (s->h, msg, EINVAL, error.text);
        return;
    }
    flux_respond (s->h, msg, NULL);
}

static const char *state_name (enum sched_state state)
{
    switch (state) {
        case SCHED_ACQUIRING:
            return "acquiring";
        case SCHED_HELLO:
            return "hello";
        case SCHED_READYING:
            return "readying";
        case SCHED_READY:
            return "ready";
    }
    return "?";
}

json_t *sched_stats (sched_t *s)
{
    int committing = 0;
    int pending = jobq_count (s->queue);
    json_t *o;

    for (struct batch *b = s->inflight; b; b = b->next)
        committing += b->count;
    if (s->batch)
        committing += s->batch->count;
    o = json_pack (
        "{s:s s:s s:i s:i s:i s:i s:i s:i s:i s:i s:i"
        " s:I s:I s:I s:I s:I s:I s:I s:I s:I s:f s:f}",
        "state", state_name (s->state), "mode",
        s->queue_depth ? "limited" : "unlimited", "queue-depth", s->queue_depth,
        "pending", pending, "committing", committing, "allocated",
        jobtab_count (s->jobs) - pending - committing, "nodes",
        rlist_nnodes (s->rl), "cores", rlist_count_cores (s->rl), "cores-free",
        rlist_avail_cores (s->rl), "gpus", rlist_count_gpus (s->rl),
        "gpus-free", rlist_avail_gpus (s->rl), "allocs",
        (json_int_t)s->stats.allocs, "annotates",
        (json_int_t)s->stats.annotates, "denies", (json_int_t)s->stats.denies,
        "cancels", (json_int_t)s->stats.cancels, "frees",
        (json_int_t)s->stats.frees, "partial-frees",
        (json_int_t)s->stats.partial_frees, "free-errors",
        (json_int_t)s->stats.free_errors, "commits",
        (json_int_t)s->stats.commits, "alloc-tries", (json_int_t)s->stats.tries,
        "alloc-time", s->stats.alloc_time, "commit-time", s->stats.commit_time);
    if (!o)
        errno = ENOMEM;
    return o;
}
