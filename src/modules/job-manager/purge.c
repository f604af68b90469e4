/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* purge.c - purging inactive jobs (see purge.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "event.h"
#include "history.h"
#include "libutil/fsd.h"
#include "purge.h"

#define PURGE_BATCH_MAX 10000
#define PURGE_RETRY_MS 1000 /* after an automatic purge ran out of memory */

struct purge {
    struct jobmgr *jm;
    flux_future_t *config; /* streaming config.get */
    double age_limit;      /* seconds, -1: none */
    json_int_t num_limit;  /* -1: none */
    uv_timer_t *timer;     /* the next automatic purge */
    bool inflight;         /* an automatic purge is being committed */
};

struct purged {
    const flux_msg_t *msg; /* NULL: an automatic purge */
    json_t *ids;
};

static void purge_kick (struct purge *p);

static void published (flux_future_t *f, void *arg)
{
    struct jobmgr *jm = arg;

    if (flux_future_get (f, NULL) < 0)
        jm_log (jm, LOG_ERR, "publish job-purge-inactive: %s",
                future_strerror (f, errno));
    flux_future_destroy (f);
}

/* The removals are committed: announce them, then answer. */
static void committed (struct jobmgr *jm, void *arg, int errnum)
{
    struct purged *p = arg;
    flux_future_t *f;

    if (errnum && p->msg)
        flux_respond_error (jm->h, p->msg, errnum, "purge commit failed");
    else if (errnum)
        jm_log (jm, LOG_ERR, "automatic purge: commit failed: %s",
                strerror (errnum));
    else {
        if (!(f = flux_event_publish_pack (jm->h, "job-purge-inactive", 0,
                                           "{s:O}", "jobs", p->ids))
            || flux_future_then (f, -1, published, jm) < 0
            || jm_track (jm, f) < 0) {
            jm_log (jm, LOG_ERR, "publish job-purge-inactive: %s",
                    strerror (errno));
            flux_future_destroy (f);
        }
        if (p->msg)
            flux_respond_pack (jm->h, p->msg, "{s:i}", "count",
                               (int)json_array_size (p->ids));
    }
    if (!p->msg) {
        jm->purge->inflight = false;
        purge_kick (jm->purge);
    }
    flux_msg_decref (p->msg);
    json_decref (p->ids);
    free (p);
}

static int purge_job (struct jobmgr *jm, struct job *job, json_t *ids)
{
    char key[64];

    if (job_kvs_key (key, sizeof (key), job->id, NULL) < 0
        || event_kvs_put (jm, key, NULL) < 0
        || json_array_append_new (ids, json_integer ((json_int_t)job->id)) < 0)
        return -1;
    jobmgr_state_count (jm, FLUX_JOB_STATE_INACTIVE, -1);
    jobtab_remove (jm->jobs, job);
    history_remove (jm->history, job);
    job_destroy (job);
    return 0;
}

/* Answer msg (NULL: an automatic purge) once the removals are
 * committed.  -1 if that cannot be arranged (msg was answered). */
static int finish (struct jobmgr *jm, const flux_msg_t *msg, json_t *ids)
{
    struct purged *p;

    if (!(p = calloc (1, sizeof (*p)))) {
        if (msg)
            jm_respond_error (jm, msg, ENOMEM, NULL);
        json_decref (ids);
        return -1;
    }
    p->msg = flux_msg_incref (msg);
    p->ids = ids;
    if (event_after_commit (jm, committed, p) < 0) {
        if (msg)
            jm_respond_error (jm, msg, ENOMEM, NULL);
        flux_msg_decref (p->msg);
        json_decref (ids);
        free (p);
        return -1;
    }
    return 0;
}

/* Select (and with force, purge into ids) the inactive jobs over the
 * limits, oldest first, at most batch.  The count, or -1 with errno. */
static int purge_select (struct jobmgr *jm, double age_limit,
                         json_int_t num_limit, int batch, bool force,
                         json_t *ids)
{
    double now = jm_now ();
    size_t inactive = jobtab_inactive_count (jm->jobs);
    struct job *job, *next;
    int count = 0;

    for (job = jobtab_inactive_first (jm->jobs); job && count < batch;
         job = next) {
        next = jobtab_inactive_next (jm->jobs, job);
        bool old = age_limit >= 0 && now - job->t_inactive > age_limit;
        bool many
            = num_limit >= 0 && inactive - (size_t)count > (size_t)num_limit;
        if (!old && !many)
            break;
        if (force && purge_job (jm, job, ids) < 0)
            return -1;
        count++;
    }
    return count;
}

void purge_request (struct jobmgr *jm, const flux_msg_t *msg)
{
    double age_limit = -1;
    int num_limit = -1, batch = 50, force = 0, count;
    json_t *ids;

    if (flux_request_unpack (msg, NULL, "{s?F s?i s?i s?b}", "age_limit",
                             &age_limit, "num_limit", &num_limit, "batch",
                             &batch, "force", &force)
        < 0) {
        jm_respond_error (jm, msg, EPROTO, "malformed purge request");
        return;
    }
    if (batch < 1 || batch > PURGE_BATCH_MAX) {
        jm_respond_error (jm, msg, EINVAL, "batch must be in range 1-%d",
                          PURGE_BATCH_MAX);
        return;
    }
    if (!(ids = json_array ())) {
        jm_respond_error (jm, msg, ENOMEM, NULL);
        return;
    }
    if ((count = purge_select (jm, age_limit, num_limit, batch, force, ids))
        < 0) {
        jm_respond_error (jm, msg, errno, "purge failed");
        json_decref (ids);
        return;
    }
    if (!force) {
        json_decref (ids);
        flux_respond_pack (jm->h, msg, "{s:i}", "count", count);
        return;
    }
    (void)finish (jm, msg, ids);
}

void purge_id_request (struct jobmgr *jm, const flux_msg_t *msg)
{
    json_int_t id;
    int force = 0;
    struct job *job;
    json_t *ids;

    if (flux_request_unpack (msg, NULL, "{s:I s?b}", "id", &id, "force", &force)
        < 0) {
        jm_respond_error (jm, msg, EPROTO, "malformed purge-id request");
        return;
    }
    if (!(job = jobtab_lookup (jm->jobs, (flux_jobid_t)id))) {
        jm_respond_error (jm, msg, ENOENT, "unknown job id");
        return;
    }
    if (job->x) {
        jm_respond_error (jm, msg, EINVAL, "cannot purge an active job");
        return;
    }
    if (!force) {
        flux_respond_pack (jm->h, msg, "{s:i}", "count", 1);
        return;
    }
    if (!(ids = json_array ()) || purge_job (jm, job, ids) < 0) {
        jm_respond_error (jm, msg, errno ? errno : ENOMEM, "purge failed");
        json_decref (ids);
        return;
    }
    (void)finish (jm, msg, ids);
}

/* ---- automatic purge ---- */

static void timer_cb (uv_timer_t *t)
{
    struct purge *p = t->data;
    struct jobmgr *jm = p->jm;
    json_t *ids;
    int count;

    if (p->inflight || jm->shutdown)
        return;
    if (!(ids = json_array ())) {
        jm_log (jm, LOG_ERR, "automatic purge: out of memory");
        return;
    }
    count = purge_select (jm, p->age_limit, p->num_limit, PURGE_AUTO_BATCH,
                          true, ids);
    if (count < 0)
        jm_log (jm, LOG_ERR, "automatic purge: %s", strerror (errno));
    if (json_array_size (ids) == 0) {
        json_decref (ids);
        if (count < 0) /* out of memory: not again at once */
            uv_timer_start (p->timer, timer_cb, PURGE_RETRY_MS, 0);
        else /* nothing was due after all (the clock moved) */
            purge_kick (p);
        return;
    }
    jm_log (jm, LOG_DEBUG, "automatic purge of %zu inactive jobs",
            json_array_size (ids));
    /* the removals are in the KVS batch either way; if the announcement
     * could not be arranged, go on later */
    if (finish (jm, NULL, ids) == 0)
        p->inflight = true;
    else
        uv_timer_start (p->timer, timer_cb, PURGE_RETRY_MS, 0);
}

/* Arm the timer for the next job over a limit (now, if one is). */
static void purge_kick (struct purge *p)
{
    struct jobmgr *jm = p->jm;
    struct job *oldest;
    double delay;

    if (!p->timer || p->inflight)
        return;
    oldest = jobtab_inactive_first (jm->jobs);
    if (p->num_limit >= 0
        && jobtab_inactive_count (jm->jobs) > (size_t)p->num_limit)
        delay = 0;
    else if (p->age_limit >= 0 && oldest)
        delay = oldest->t_inactive + p->age_limit - jm_now ();
    else {
        uv_timer_stop (p->timer);
        return;
    }
    if (delay < 0)
        delay = 0;
    /* a millisecond late rather than early: "longer than" the limit */
    uv_timer_start (
        p->timer, timer_cb,
        delay > 4e9 ? (uint64_t)4e12 : (uint64_t)ceil (delay * 1e3) + 1, 0);
}

void purge_inactive_added (struct purge *p)
{
    if (p && p->timer && !p->inflight
        && ((p->num_limit >= 0
             && jobtab_inactive_count (p->jm->jobs) > (size_t)p->num_limit)
            || !uv_is_active ((uv_handle_t *)p->timer)))
        purge_kick (p);
}

/* Read job-manager.inactive-{age,num}-limit; an invalid value is logged
 * and the previous one kept. */
static void apply_config (struct purge *p, json_t *conf)
{
    json_t *jmconf = json_object_get (conf, "job-manager");
    json_t *age = json_object_get (jmconf, "inactive-age-limit");
    json_t *num = json_object_get (jmconf, "inactive-num-limit");
    double d;

    if (!age)
        p->age_limit = -1;
    else if (!json_is_string (age)
             || fsd_parse_duration (json_string_value (age), &d) < 0)
        jm_log (p->jm, LOG_ERR,
                "config: job-manager.inactive-age-limit: expected a duration "
                "(FSD) string; keeping the previous value");
    else
        p->age_limit = isinf (d) ? -1 : d;
    if (!num)
        p->num_limit = -1;
    else if (!json_is_integer (num) || json_integer_value (num) < 0)
        jm_log (p->jm, LOG_ERR,
                "config: job-manager.inactive-num-limit: expected an integer "
                ">= 0; keeping the previous value");
    else
        p->num_limit = json_integer_value (num);
    if (p->age_limit < 0 && p->num_limit < 0)
        uv_timer_stop (p->timer);
    else
        purge_kick (p);
}

static void config_cb (flux_future_t *f, void *arg)
{
    struct purge *p = arg;
    json_t *conf;

    if (flux_rpc_get_unpack (f, "o", &conf) < 0) {
        if (errno != ENOSYS)
            jm_log (p->jm, LOG_ERR, "config.get: %s",
                    future_strerror (f, errno));
        flux_future_destroy (f);
        p->config = NULL;
        return;
    }
    apply_config (p, conf);
    flux_future_reset (f);
}

struct purge *purge_create (struct jobmgr *jm)
{
    struct purge *p;

    if (!(p = calloc (1, sizeof (*p))))
        return NULL;
    p->jm = jm;
    p->age_limit = -1;
    p->num_limit = -1;
    return p;
}

int purge_start (struct purge *p)
{
    uv_loop_t *loop = flux_reactor_uv (flux_get_reactor (p->jm->h));

    if (!(p->timer = calloc (1, sizeof (*p->timer))))
        return -1;
    uv_timer_init (loop, p->timer);
    p->timer->data = p;
    uv_unref ((uv_handle_t *)p->timer);
    if (!(p->config = flux_rpc (p->jm->h, "config.get", NULL, FLUX_NODEID_ANY,
                                FLUX_RPC_STREAMING))
        || flux_future_then (p->config, -1., config_cb, p) < 0) {
        flux_future_destroy (p->config);
        p->config = NULL;
        return -1;
    }
    return 0;
}

void purge_destroy (struct purge *p)
{
    if (p) {
        int saved = errno;
        flux_future_destroy (p->config);
        if (p->timer) {
            uv_timer_stop (p->timer);
            flux_uv_close_free ((uv_handle_t *)p->timer);
        }
        free (p);
        errno = saved;
    }
}
