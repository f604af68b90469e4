/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* joblist.c - the job-list service engine (see joblist.h).
 *
 * A listing walks the pending, running and inactive lists in order and
 * stops after max_entries matches; lists the constraint cannot match
 * are skipped, and with "since" the inactive walk stops at the first
 * job that became inactive before it.  The response text is written
 * directly (jbuf.h), not built as jansson objects.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "constraint.h"
#include "idhash.h"
#include "jbuf.h"
#include <syslog.h>
#include "joblist.h"
#include "journal.h"
#include "libflux/list.h"
#include "libjob/job.h"
#include "libkvs/kvs.h"

#define MAX_DEFERRED 1024
#define MAX_WAITERS 8192
#define MAX_WATCHERS 1024
#define CHUNK 1000         /* jobs per response of a streaming list */
#define STATS_INTERVAL 0.1 /* streaming job-stats: at most this often */
#define BUF_KEEP (1 << 20) /* response buffer kept between requests */

typedef void (*handler_f) (joblist_t *jl, const flux_msg_t *msg);

struct deferred {
    const flux_msg_t *msg;
    handler_f cb;
};

struct waiter {
    struct list_node all;
    struct waiter *next; /* same id */
    joblist_t *jl;
    const flux_msg_t *msg;
    flux_jobid_t id;
    int state;
    uint64_t attrs;
    flux_future_t *lookup; /* does job.<id>.eventlog exist? */
};

struct watcher {
    struct list_node all;
    const flux_msg_t *msg;
};

struct joblist {
    flux_t *h;
    uint32_t rank;
    bool private_mode;
    jobstore_t *js;
    journal_t *journal;
    struct deferred deferred[MAX_DEFERRED];
    int ndeferred;
    idhash_t *waiting; /* id -> first waiter */
    struct list_node waiters;
    int nwaiters;
    struct list_node watchers;
    int nwatchers;
    flux_future_t *stats_timer;
    struct jbuf buf;
};

static void notify_cb (flux_jobid_t id, struct job *job, void *arg);

static bool is_guest (const flux_msg_t *msg, uint32_t *userid)
{
    struct flux_msg_cred cred = {FLUX_USERID_UNKNOWN, 0};

    (void)flux_msg_get_cred (msg, &cred);
    if (userid)
        *userid = cred.userid;
    return !(cred.rolemask & FLUX_ROLE_OWNER);
}

/* In private mode a guest sees only its own jobs. */
static bool hidden (joblist_t *jl, const flux_msg_t *msg, const struct job *job)
{
    uint32_t userid;
    return jl->private_mode && is_guest (msg, &userid) && job->userid != userid;
}

static void respond_error (joblist_t *jl, const flux_msg_t *msg, int errnum,
                           const char *text)
{
    if (flux_respond_error (jl->h, msg, errnum, text) < 0)
        flux_log (jl->h, LOG_ERR, "respond: %s", strerror (errno));
}

static void respond_text (joblist_t *jl, const flux_msg_t *msg)
{
    const char *s = jbuf_get (&jl->buf);

    if (!s) {
        respond_error (jl, msg, errno, NULL);
        return;
    }
    if (flux_respond (jl->h, msg, s) < 0)
        flux_log (jl->h, LOG_ERR, "respond: %s", strerror (errno));
}

/* Hold a request until the first journal backlog is in (true if held). */
static bool defer (joblist_t *jl, const flux_msg_t *msg, handler_f cb)
{
    if (journal_synced (jl->journal) || jl->ndeferred == MAX_DEFERRED)
        return false;
    jl->deferred[jl->ndeferred].msg = flux_msg_incref (msg);
    jl->deferred[jl->ndeferred].cb = cb;
    jl->ndeferred++;
    return true;
}

static void synced_cb (void *arg)
{
    joblist_t *jl = arg;
    int n = jl->ndeferred;

    jl->ndeferred = 0;
    for (int i = 0; i < n; i++) {
        jl->deferred[i].cb (jl, jl->deferred[i].msg);
        flux_msg_decref (jl->deferred[i].msg);
    }
}

joblist_t *joblist_create (flux_t *h, uint32_t rank, bool private_mode)
{
    joblist_t *jl;

    if (!(jl = calloc (1, sizeof (*jl))))
        return NULL;
    jl->h = h;
    jl->rank = rank;
    jl->private_mode = private_mode;
    list_init (&jl->waiters);
    list_init (&jl->watchers);
    jbuf_init (&jl->buf);
    if (!(jl->js = jobstore_create ()) || !(jl->waiting = idhash_create ()))
        goto error;
    jobstore_set_notify (jl->js, notify_cb, jl);
    if (!(jl->journal = journal_create (h, rank, jl->js, synced_cb, jl)))
        goto error;
    return jl;
error:
    joblist_destroy (jl);
    return NULL;
}

static void waiter_destroy (struct waiter *w);
static void watcher_destroy (joblist_t *jl, struct watcher *wt);

void joblist_destroy (joblist_t *jl)
{
    if (jl) {
        int saved_errno = errno;
        struct list_node *pos, *tmp;
        const char *text = "job-list is unloading";

        for (int i = 0; i < jl->ndeferred; i++) {
            respond_error (jl, jl->deferred[i].msg, ENOSYS, text);
            flux_msg_decref (jl->deferred[i].msg);
        }
        list_for_each_safe (pos, tmp, &jl->waiters)
        {
            struct waiter *w = list_entry (pos, struct waiter, all);
            respond_error (jl, w->msg, ENOSYS, text);
            waiter_destroy (w);
        }
        list_for_each_safe (pos, tmp, &jl->watchers)
        {
            struct watcher *wt = list_entry (pos, struct watcher, all);
            respond_error (jl, wt->msg, ENOSYS, text);
            watcher_destroy (jl, wt);
        }
        flux_future_destroy (jl->stats_timer);
        journal_destroy (jl->journal);
        jobstore_destroy (jl->js);
        idhash_destroy (jl->waiting);
        jbuf_free (&jl->buf);
        free (jl);
        errno = saved_errno;
    }
}

/* job-list.list */

static void send_chunk (joblist_t *jl, const flux_msg_t *msg)
{
    jbuf_rawz (&jl->buf, "]}");
    respond_text (jl, msg);
    jbuf_reset (&jl->buf);
    jbuf_rawz (&jl->buf, "{\"jobs\":[");
}

void joblist_list (joblist_t *jl, const flux_msg_t *msg)
{
    static const int list_states[]
        = {0, FLUX_JOB_STATE_PENDING, FLUX_JOB_STATE_RUNNING,
           FLUX_JOB_STATE_INACTIVE};
    int max_entries, count = 0, inchunk = 0, states;
    json_t *attrs, *constraint = NULL;
    double since = 0.;
    uint64_t mask;
    struct constraint *c;
    flux_error_t error;
    bool streaming = flux_msg_is_streaming (msg);
    bool restrict_user = false;
    uint32_t userid = 0;

    if (defer (jl, msg, joblist_list))
        return;
    if (flux_request_unpack (msg, NULL, "{s:i s:o s?F s?o}", "max_entries",
                             &max_entries, "attrs", &attrs, "since", &since,
                             "constraint", &constraint)
            < 0
        || max_entries < 0 || since < 0.) {
        respond_error (jl, msg, EPROTO,
                       "expected {max_entries:i>=0, attrs:[s], since?:f>=0, "
                       "constraint?:o}");
        return;
    }
    if (job_attrs_parse (attrs, &mask, &error) < 0
        || !(c = constraint_create (constraint, &error))) {
        respond_error (jl, msg, errno, errno == ENOMEM ? NULL : error.text);
        return;
    }
    if (jl->private_mode && is_guest (msg, &userid))
        restrict_user = true;
    states = constraint_states (c);
    jbuf_reset (&jl->buf);
    jbuf_rawz (&jl->buf,
               streaming ? "{\"version\":1,\"jobs\":[" : "{\"jobs\":[");
    for (int l = LIST_PENDING; l <= LIST_INACTIVE; l++) {
        if (!(states & list_states[l]))
            continue;
        for (ordlist_node_t *n = ordlist_first (jobstore_list (jl->js, l)); n;
             n = ordlist_next (n)) {
            struct job *job = ordlist_item (n);
            if (l == LIST_INACTIVE && since > 0. && job->t_inactive <= since)
                break;
            if ((restrict_user && job->userid != userid)
                || !constraint_match (c, job))
                continue;
            if (inchunk++ > 0)
                jbuf_char (&jl->buf, ',');
            job_encode (job, mask, &jl->buf);
            if (max_entries > 0 && ++count >= max_entries)
                goto done;
            if (streaming && inchunk == CHUNK) {
                send_chunk (jl, msg);
                inchunk = 0;
            }
        }
    }
done:
    constraint_destroy (c);
    jbuf_rawz (&jl->buf, "]}");
    respond_text (jl, msg);
    if (streaming)
        respond_error (jl, msg, ENODATA, NULL);
    if (jl->buf.t.size > BUF_KEEP) /* do not hold a huge listing's buffer */
        jbuf_free (&jl->buf);
}

/* job-list.list-id */

static bool reached (const struct job *job, int state)
{
    return state == 0 || (job->states_mask & state)
           || job->state == FLUX_JOB_STATE_INACTIVE;
}

static void respond_job (joblist_t *jl, const flux_msg_t *msg,
                         const struct job *job, uint64_t attrs)
{
    jbuf_reset (&jl->buf);
    jbuf_rawz (&jl->buf, "{\"job\":");
    job_encode (job, attrs, &jl->buf);
    jbuf_char (&jl->buf, '}');
    respond_text (jl, msg);
}

static void waiter_destroy (struct waiter *w)
{
    if (w) {
        joblist_t *jl = w->jl;
        struct waiter *head = idhash_lookup (jl->waiting, w->id);
        if (head == w) {
            (void)idhash_remove (jl->waiting, w->id);
            if (w->next)
                (void)idhash_insert (jl->waiting, w->id, w->next);
        }
        else {
            while (head && head->next != w)
                head = head->next;
            if (head)
                head->next = w->next;
        }
        list_del (&w->all);
        jl->nwaiters--;
        flux_future_destroy (w->lookup);
        flux_msg_decref (w->msg);
        free (w);
    }
}

static void lookup_cb (flux_future_t *f, void *arg)
{
    struct waiter *w = arg;
    int rc = flux_kvs_lookup_get (f, NULL);
    int errnum = errno;

    flux_future_destroy (f);
    w->lookup = NULL;
    /* the job exists (or appeared meanwhile): keep waiting for it */
    if (rc == 0 || jobstore_lookup (w->jl->js, w->id))
        return;
    respond_error (w->jl, w->msg, errnum,
                   errnum == ENOENT ? "unknown job id" : NULL);
    waiter_destroy (w);
}

static int waiter_add (joblist_t *jl, const flux_msg_t *msg, flux_jobid_t id,
                       int state, uint64_t attrs, bool check_kvs)
{
    struct waiter *w;
    char key[64];

    if (jl->nwaiters >= MAX_WAITERS) {
        errno = EAGAIN;
        return -1;
    }
    if (!(w = calloc (1, sizeof (*w))))
        return -1;
    w->jl = jl;
    w->id = id;
    w->state = state;
    w->attrs = attrs;
    w->msg = flux_msg_incref (msg);
    list_add_tail (&jl->waiters, &w->all);
    jl->nwaiters++;
    if ((w->next = idhash_remove (jl->waiting, id)))
        (void)idhash_insert (jl->waiting, id, w); /* slot just freed */
    else if (idhash_insert (jl->waiting, id, w) < 0) {
        list_del (&w->all);
        jl->nwaiters--;
        flux_msg_decref (w->msg);
        free (w);
        return -1;
    }
    if (check_kvs
        && (flux_job_kvs_key (key, sizeof (key), id, "eventlog") < 0
            || !(w->lookup = flux_kvs_lookup (jl->h, NULL, 0, key))
            || flux_future_then (w->lookup, -1., lookup_cb, w) < 0)) {
        waiter_destroy (w);
        return -1;
    }
    return 0;
}

void joblist_list_id (joblist_t *jl, const flux_msg_t *msg)
{
    json_int_t id;
    json_t *attrs;
    int state = 0;
    uint64_t mask;
    flux_error_t error;
    struct job *job;

    if (defer (jl, msg, joblist_list_id))
        return;
    if (flux_request_unpack (msg, NULL, "{s:I s:o s?i}", "id", &id, "attrs",
                             &attrs, "state", &state)
        < 0) {
        respond_error (jl, msg, EPROTO, "expected {id:I, attrs:[s], state?:i}");
        return;
    }
    if (state < 0 || state > FLUX_JOB_STATE_INACTIVE * 2 - 1) {
        respond_error (jl, msg, EINVAL, "invalid job state");
        return;
    }
    if (job_attrs_parse (attrs, &mask, &error) < 0) {
        respond_error (jl, msg, EINVAL, error.text);
        return;
    }
    job = jobstore_lookup (jl->js, (flux_jobid_t)id);
    if (job && hidden (jl, msg, job)) {
        respond_error (jl, msg, ENOENT, "unknown job id");
        return;
    }
    if (job && reached (job, state)) {
        respond_job (jl, msg, job, mask);
        return;
    }
    if (waiter_add (jl, msg, (flux_jobid_t)id, state, mask, job == NULL) < 0)
        respond_error (jl, msg, errno,
                       errno == EAGAIN ? "too many list-id requests waiting"
                                       : NULL);
}

/* A job changed or was dropped: answer its waiters, wake stats watchers. */
static void stats_timer_cb (flux_future_t *f, void *arg);

static void notify_cb (flux_jobid_t id, struct job *job, void *arg)
{
    joblist_t *jl = arg;
    struct waiter *w = idhash_lookup (jl->waiting, id);

    while (w) {
        struct waiter *next = w->next;
        if (!job || hidden (jl, w->msg, job)) {
            if (!w->lookup) { /* else the kvs lookup decides */
                respond_error (jl, w->msg, ENOENT, "unknown job id");
                waiter_destroy (w);
            }
        }
        else if (reached (job, w->state)) {
            respond_job (jl, w->msg, job, w->attrs);
            waiter_destroy (w);
        }
        w = next;
    }
    if (jl->nwatchers > 0 && !jl->stats_timer
        && (jl->stats_timer = flux_future_create (NULL, NULL))) {
        flux_future_set_flux (jl->stats_timer, jl->h);
        if (flux_future_then (jl->stats_timer, STATS_INTERVAL, stats_timer_cb,
                              jl)
            < 0) {
            flux_future_destroy (jl->stats_timer);
            jl->stats_timer = NULL;
        }
    }
}

/* job-list.list-attrs */

void joblist_list_attrs (joblist_t *jl, const flux_msg_t *msg)
{
    json_t *a = json_array ();

    for (int i = 0; a && i < ATTR_COUNT; i++) {
        if (json_array_append_new (a, json_string (job_attr_name (i))) < 0) {
            json_decref (a);
            a = NULL;
        }
    }
    if (!a || flux_respond_pack (jl->h, msg, "{s:o}", "attrs", a) < 0)
        respond_error (jl, msg, ENOMEM, NULL);
}

/* job-list.job-stats */

static void respond_stats (joblist_t *jl, const flux_msg_t *msg)
{
    json_t *o = jobstore_stats (jl->js);

    if (!o || flux_respond_pack (jl->h, msg, "o", o) < 0)
        respond_error (jl, msg, ENOMEM, NULL);
}

static void watcher_destroy (joblist_t *jl, struct watcher *wt)
{
    list_del (&wt->all);
    jl->nwatchers--;
    flux_msg_decref (wt->msg);
    free (wt);
}

static void stats_timer_cb (flux_future_t *f, void *arg)
{
    joblist_t *jl = arg;
    struct list_node *pos, *tmp;

    flux_future_destroy (jl->stats_timer);
    jl->stats_timer = NULL;
    list_for_each_safe (pos, tmp, &jl->watchers)
    {
        respond_stats (jl, list_entry (pos, struct watcher, all)->msg);
    }
}

void joblist_job_stats (joblist_t *jl, const flux_msg_t *msg)
{
    struct watcher *wt;

    if (defer (jl, msg, joblist_job_stats))
        return;
    if (jl->private_mode && is_guest (msg, NULL)) {
        respond_error (jl, msg, EPERM,
                       "job-stats is for the instance owner in private mode");
        return;
    }
    respond_stats (jl, msg);
    if (!flux_msg_is_streaming (msg))
        return;
    if (jl->nwatchers >= MAX_WATCHERS || !(wt = calloc (1, sizeof (*wt)))) {
        respond_error (jl, msg, EAGAIN, "too many job-stats watchers");
        return;
    }
    wt->msg = flux_msg_incref (msg);
    list_add_tail (&jl->watchers, &wt->all);
    jl->nwatchers++;
}

/* Same sender and matchtag, and allowed to cancel it. */
static bool cancel_matches (const flux_msg_t *req, const flux_msg_t *cancel,
                            uint32_t matchtag)
{
    uint32_t tag;
    struct flux_msg_cred cred;

    return flux_msg_get_matchtag (req, &tag) == 0 && tag == matchtag
           && flux_msg_route_match_first (req, cancel)
           && flux_msg_get_cred (cancel, &cred) == 0
           && (cred.rolemask & FLUX_ROLE_OWNER
               || flux_msg_authorize (req, cred.userid) == 0);
}

void joblist_job_stats_cancel (joblist_t *jl, const flux_msg_t *msg)
{
    struct list_node *pos, *tmp;
    int matchtag;

    if (flux_request_unpack (msg, NULL, "{s:i}", "matchtag", &matchtag) < 0)
        return; /* NORESPONSE */
    list_for_each_safe (pos, tmp, &jl->watchers)
    {
        struct watcher *wt = list_entry (pos, struct watcher, all);
        if (cancel_matches (wt->msg, msg, matchtag)) {
            respond_error (jl, wt->msg, ENODATA, NULL);
            watcher_destroy (jl, wt);
        }
    }
}

/* Is req from the sender disconnect msg names (its first route), and
 * could msg's credentials have cancelled it? */
static bool same_sender (const flux_msg_t *req, const flux_msg_t *msg)
{
    uint32_t userid;

    return flux_msg_route_match_first (req, msg)
           && flux_msg_get_userid (req, &userid) == 0
           && flux_msg_authorize (msg, userid) == 0;
}

/* job-list.disconnect: drop everything the sender left behind. */
void joblist_disconnect (joblist_t *jl, const flux_msg_t *msg)
{
    struct list_node *pos, *tmp;
    int n = 0;

    list_for_each_safe (pos, tmp, &jl->waiters)
    {
        struct waiter *w = list_entry (pos, struct waiter, all);
        if (same_sender (w->msg, msg))
            waiter_destroy (w);
    }
    list_for_each_safe (pos, tmp, &jl->watchers)
    {
        struct watcher *wt = list_entry (pos, struct watcher, all);
        if (same_sender (wt->msg, msg))
            watcher_destroy (jl, wt);
    }
    for (int i = 0; i < jl->ndeferred; i++) {
        if (same_sender (jl->deferred[i].msg, msg))
            flux_msg_decref (jl->deferred[i].msg);
        else
            jl->deferred[n++] = jl->deferred[i];
    }
    jl->ndeferred = n;
}

void joblist_purge_event (joblist_t *jl, const flux_msg_t *msg)
{
    json_t *jobs, *v;
    size_t i;

    if (flux_event_unpack (msg, NULL, "{s:o}", "jobs", &jobs) < 0
        || !json_is_array (jobs)) {
        flux_log (jl->h, LOG_ERR, "malformed job-purge-inactive event");
        return;
    }
    json_array_foreach (jobs, i, v)
    {
        if (json_is_integer (v))
            (void)jobstore_purge (jl->js, (flux_jobid_t)json_integer_value (v));
    }
}

json_t *joblist_stats (joblist_t *jl)
{
    json_t *journal = journal_stats (jl->journal);

    return json_pack (
        "{s:i s:i s:i s:i s:i s:i s:i s:i s:o*}", "jobs",
        (int)jobstore_count (jl->js), "pending",
        (int)ordlist_count (jobstore_list (jl->js, LIST_PENDING)), "running",
        (int)ordlist_count (jobstore_list (jl->js, LIST_RUNNING)), "inactive",
        (int)ordlist_count (jobstore_list (jl->js, LIST_INACTIVE)), "strings",
        (int)strpool_count (jobstore_strpool (jl->js)), "waiters", jl->nwaiters,
        "stats-watchers", jl->nwatchers, "deferred", jl->ndeferred, "journal",
        journal);
}

jobstore_t *joblist_store (joblist_t *jl)
{
    return jl->js;
}
