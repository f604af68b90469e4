/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* journal.c - the events journal (see journal.h).
 *
 * Events posted while a listener's backlog is still being read from the
 * KVS are queued for it (bounded: past JOURNAL_QUEUE_MAX the stream ends
 * with EOVERFLOW) and sent after its sentinel, so it sees every event
 * exactly once and in order.
 *
 * Live events are sent together at the end of the loop turn that posted
 * them (a deferred call), not one by one: a turn often posts many (the
 * jobs of a committed batch each move on), and sent one by one with
 * other work in between, each woke the listener (job-list) on its own,
 * for a few microseconds of work.  The end of a stream sends what is
 * pending first.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "journal.h"
#include "libeventlog/eventlog.h"
#include "libflux/jsonemit.h"
#include "libflux/jsonparse.h"
#include "libkvs/kvs.h"

#define JOURNAL_QUEUE_MAX 1000000
#define FETCH_MAX 16

struct journal;

struct listener {
    struct list_node link;
    struct journal *j;
    const flux_msg_t *msg;
    json_t *allow, *deny; /* {name:1} or NULL */
    bool live;            /* sentinel sent */
    json_t *queue;        /* payloads waiting for the sentinel */
    flux_jobid_t *ids;    /* inactive jobs still to read (full) */
    size_t nids, next;
    flux_future_t *fetch[FETCH_MAX];
    flux_msg_t **out; /* live responses of this turn, not sent yet */
    size_t nout, capout;
};

struct journal {
    struct jobmgr *jm;
    struct list_node listeners;
    int nlisteners;
    struct flux_deferred flush; /* sends the listeners' out */
};

static void flush_cb (struct flux_deferred *d);

struct journal *journal_create (struct jobmgr *jm)
{
    struct journal *j;

    if (!(j = calloc (1, sizeof (*j))))
        return NULL;
    j->jm = jm;
    list_init (&j->listeners);
    flux_deferred_init (&j->flush, flush_cb);
    return j;
}

/* Send what l's live events of this turn left pending, in order. */
static void listener_flush (struct listener *l)
{
    for (size_t i = 0; i < l->nout; i++) {
        if (flux_send (l->j->jm->h, l->out[i], 0) < 0)
            jm_log (l->j->jm, LOG_ERR, "journal: %s", strerror (errno));
        flux_msg_decref (l->out[i]);
    }
    l->nout = 0;
}

static void flush_cb (struct flux_deferred *d)
{
    struct journal *j
        = (struct journal *)((char *)d - offsetof (struct journal, flush));
    struct list_node *pos;

    for (pos = j->listeners.next; pos != &j->listeners; pos = pos->next)
        listener_flush (list_entry (pos, struct listener, link));
}

static void listener_destroy (struct listener *l)
{
    list_del (&l->link);
    l->j->nlisteners--;
    for (size_t i = 0; i < l->nout; i++)
        flux_msg_decref (l->out[i]);
    free (l->out);
    for (int i = 0; i < FETCH_MAX; i++)
        flux_future_destroy (l->fetch[i]);
    flux_msg_decref (l->msg);
    json_decref (l->allow);
    json_decref (l->deny);
    json_decref (l->queue);
    free (l->ids);
    free (l);
}

/* End a listener's stream with errnum (ENODATA: normal end). */
static void listener_end (struct listener *l, int errnum, const char *errstr)
{
    listener_flush (l);
    flux_respond_error (l->j->jm->h, l->msg, errnum, errstr);
    listener_destroy (l);
}

void journal_destroy (struct journal *j)
{
    if (j) {
        int saved = errno;
        while (!list_empty (&j->listeners))
            listener_end (list_entry (j->listeners.next, struct listener, link),
                          ENODATA, NULL);
        flux_reactor_undefer (&j->flush);
        free (j);
        errno = saved;
    }
}

int journal_listeners (struct journal *j)
{
    return j->nlisteners;
}

static bool allowed (struct listener *l, const char *name)
{
    if (l->allow && !json_object_get (l->allow, name))
        return false;
    if (l->deny && json_object_get (l->deny, name))
        return false;
    return true;
}

/* Send the payload text of an event now (live), or keep it until the
 * backlog has gone out.  -1 if that ended (and freed) the listener. */
static int send_or_queue (struct listener *l, const char *text)
{
    if (l->live) {
        flux_msg_t *rsp;
        if (l->nout == l->capout) {
            size_t cap = l->capout ? l->capout * 2 : 64;
            flux_msg_t **out = realloc (l->out, cap * sizeof (*out));
            if (!out) {
                listener_end (l, ENOMEM, NULL);
                return -1;
            }
            l->out = out;
            l->capout = cap;
        }
        if (!(rsp = flux_response_derive (l->msg, 0))
            || flux_msg_set_string (rsp, text) < 0) {
            flux_msg_decref (rsp);
            jm_log (l->j->jm, LOG_ERR, "journal: %s", strerror (errno));
            return 0;
        }
        l->out[l->nout++] = rsp;
        flux_reactor_defer (flux_get_reactor (l->j->jm->h), &l->j->flush);
        return 0;
    }
    if (json_array_size (l->queue) >= JOURNAL_QUEUE_MAX) {
        listener_end (l, EOVERFLOW, "journal listener fell too far behind");
        return -1;
    }
    (void)json_array_append_new (l->queue, json_string (text));
    return 0;
}

/* The payload of an event, {id, events:[entry], jobspec? (submit),
 * R? (alloc)}, put together from texts at hand: the entry's line (or
 * its encoding), the pooled jobspec text, R encoded.
 * This runs for every event of every job, and the jobspec is already
 * text: decoding it to encode it again cost more than the rest. */
static char *event_payload_text (struct job *job, json_t *entry,
                                 const char *line, const char *name)
{
    const char *jobspec = NULL;
    char *ebuf = NULL, *rbuf = NULL, *text = NULL;
    size_t elen, size;
    char head[64];
    int n;

    if (line)
        elen = strcspn (line, "\n");
    else if ((line = ebuf = jsonemit (entry, JSON_COMPACT, &elen)) == NULL)
        return NULL;
    if (job->x && !strcmp (name, "submit"))
        jobspec = job->x->jobspec;
    if (job->x && !strcmp (name, "alloc") && job->x->R
        && !(rbuf = jsonemit (job->x->R, JSON_COMPACT, NULL)))
        goto done;
    n = snprintf (head, sizeof (head), "{\"id\":%ju,\"events\":[",
                  (uintmax_t)job->id);
    size = n + elen + 2 + (jobspec ? strlen (jobspec) + 11 : 0)
           + (rbuf ? strlen (rbuf) + 5 : 0) + 1;
    if (!(text = malloc (size)))
        goto done;
    snprintf (text, size, "%s%.*s]%s%s%s%s}", head, (int)elen, line,
              jobspec ? ",\"jobspec\":" : "", jobspec ? jobspec : "",
              rbuf ? ",\"R\":" : "", rbuf ? rbuf : "");
done:
    free (ebuf);
    free (rbuf);
    return text;
}

void journal_post (struct journal *j, struct job *job, json_t *entry,
                   const char *line)
{
    struct list_node *pos, *tmp;
    char *text = NULL;
    const char *name;

    if (list_empty (&j->listeners)
        || !(name = json_string_value (json_object_get (entry, "name"))))
        return;
    list_for_each_safe (pos, tmp, &j->listeners)
    {
        struct listener *l = list_entry (pos, struct listener, link);
        if (!allowed (l, name))
            continue;
        if (!text && !(text = event_payload_text (job, entry, line, name)))
            break;
        (void)send_or_queue (l, text); /* the walk is safe if l ends */
    }
    free (text);
}

/* The events of a log that pass the listener's filter. */
static json_t *filter_events (struct listener *l, json_t *events)
{
    json_t *out, *entry;
    size_t i;

    if (!l->allow && !l->deny)
        return json_incref (events);
    if (!(out = json_array ()))
        return NULL;
    json_array_foreach (events, i, entry)
    {
        const char *name = json_string_value (json_object_get (entry, "name"));
        if (name && allowed (l, name))
            json_array_append (out, entry);
    }
    return out;
}

/* Send a job's history: events (array), jobspec (redacted here), R. */
static void send_backlog (struct listener *l, flux_jobid_t id, json_t *events,
                          json_t *jobspec, json_t *R)
{
    json_t *o, *filtered, *redacted = NULL;

    if (!(filtered = filter_events (l, events)))
        return;
    o = json_pack ("{s:I s:o}", "id", (json_int_t)id, "events", filtered);
    if (o && jobspec && (redacted = job_jobspec_redacted (jobspec)))
        (void)json_object_set_new (o, "jobspec", redacted);
    if (o && R)
        (void)json_object_set (o, "R", R);
    if (!o || flux_respond_pack (l->j->jm->h, l->msg, "O", o) < 0)
        jm_log (l->j->jm, LOG_ERR, "journal backlog: %s", strerror (errno));
    json_decref (o);
}

/* Send an active job's history from memory. */
static void send_backlog_active (struct listener *l, struct job *job)
{
    json_t *events, *jobspec = NULL;

    if (!(events = job_eventlog (job->x))
        || (job->x->jobspec && !(jobspec = job_jobspec (job->x)))) {
        jm_log (l->j->jm, LOG_ERR, "journal backlog: %ju: %s",
                (uintmax_t)job->id, strerror (errno));
        json_decref (events);
        return;
    }
    send_backlog (l, job->id, events, jobspec, job->x->R);
    json_decref (events);
    json_decref (jobspec);
}

static void go_live (struct listener *l)
{
    json_t *text;
    size_t i;

    if (flux_respond_pack (l->j->jm->h, l->msg, "{s:i s:[]}", "id", -1,
                           "events")
        < 0)
        jm_log (l->j->jm, LOG_ERR, "journal sentinel: %s", strerror (errno));
    l->live = true;
    json_array_foreach (l->queue, i, text)
    {
        if (send_or_queue (l, json_string_value (text)) < 0)
            return; /* l is gone, and its queue with it */
    }
    json_array_clear (l->queue);
}

static void fetch_next (struct listener *l);

static json_t *child_json (flux_future_t *cf, const char *name)
{
    flux_future_t *f = flux_future_get_child (cf, name);
    const char *s;

    if (!f || flux_kvs_lookup_get (f, &s) < 0 || !s)
        return NULL;
    return jsonparse (s, strlen (s), NULL, 0); /* json_loads, faster */
}

static void fetch_continuation (flux_future_t *cf, void *arg)
{
    struct listener *l = arg;
    flux_jobid_t *id = flux_future_aux_get (cf, "id");
    flux_future_t *ef = flux_future_get_child (cf, "eventlog");
    const char *s;
    json_t *events = NULL, *jobspec, *R;

    for (int i = 0; i < FETCH_MAX; i++) {
        if (l->fetch[i] == cf)
            l->fetch[i] = NULL;
    }
    /* a job purged meanwhile has no eventlog: skip it */
    if (ef && flux_kvs_lookup_get (ef, &s) == 0 && s
        && (events = eventlog_decode (s))) {
        jobspec = child_json (cf, "jobspec");
        R = child_json (cf, "R");
        send_backlog (l, *id, events, jobspec, R);
        json_decref (jobspec);
        json_decref (R);
        json_decref (events);
    }
    flux_future_destroy (cf);
    fetch_next (l);
}

static flux_future_t *fetch_job (struct listener *l, flux_jobid_t id)
{
    static const char *keys[] = {"eventlog", "jobspec", "R"};
    flux_future_t *cf, *f;
    flux_jobid_t *idp;
    char key[64];

    if (!(cf = flux_future_wait_all_create ()))
        return NULL;
    flux_future_set_flux (cf, l->j->jm->h);
    for (int i = 0; i < 3; i++) {
        if (job_kvs_key (key, sizeof (key), id, keys[i]) < 0
            || !(f = flux_kvs_lookup (l->j->jm->h, NULL, 0, key))
            || flux_future_push (cf, keys[i], f) < 0) {
            flux_future_destroy (cf);
            return NULL;
        }
    }
    if (!(idp = malloc (sizeof (*idp)))
        || flux_future_aux_set (cf, "id", idp, free) < 0) {
        free (idp);
        flux_future_destroy (cf);
        return NULL;
    }
    *idp = id;
    if (flux_future_then (cf, -1, fetch_continuation, l) < 0) {
        flux_future_destroy (cf);
        return NULL;
    }
    return cf;
}

/* Keep up to FETCH_MAX inactive jobs being read; go live when done. */
static void fetch_next (struct listener *l)
{
    int busy = 0;

    for (int i = 0; i < FETCH_MAX; i++) {
        if (!l->fetch[i] && l->next < l->nids) {
            if (!(l->fetch[i] = fetch_job (l, l->ids[l->next]))) {
                jm_log (l->j->jm, LOG_ERR, "journal: reading job %ju: %s",
                        (uintmax_t)l->ids[l->next], strerror (errno));
            }
            l->next++;
        }
        if (l->fetch[i])
            busy++;
    }
    if (busy == 0 && l->next >= l->nids && !l->live)
        go_live (l);
}

static int collect_inactive (struct listener *l)
{
    struct jobtab *t = l->j->jm->jobs;
    size_t n = jobtab_inactive_count (t), i = 0;
    struct job *job;

    if (n == 0)
        return 0;
    if (!(l->ids = calloc (n, sizeof (*l->ids))))
        return -1;
    for (job = jobtab_inactive_first (t); job && i < n;
         job = jobtab_inactive_next (t, job))
        l->ids[i++] = job->id;
    l->nids = i;
    return 0;
}

void journal_request (struct journal *j, const flux_msg_t *msg)
{
    struct listener *l;
    int full = 0;
    json_t *allow = NULL, *deny = NULL;
    const char *s = NULL;
    size_t cursor;
    struct job *job;

    if (!flux_msg_is_streaming (msg) || flux_request_decode (msg, NULL, &s) < 0
        || (s
            && flux_request_unpack (msg, NULL, "{s?b s?o s?o}", "full", &full,
                                    "allow", &allow, "deny", &deny)
                   < 0)
        || (allow && !json_is_object (allow))
        || (deny && !json_is_object (deny))) {
        jm_respond_error (j->jm, msg, EPROTO,
                          "malformed events-journal request");
        return;
    }
    if (!(l = calloc (1, sizeof (*l))) || !(l->queue = json_array ())) {
        free (l);
        jm_respond_error (j->jm, msg, ENOMEM, NULL);
        return;
    }
    l->j = j;
    l->msg = flux_msg_incref (msg);
    l->allow = json_incref (allow);
    l->deny = json_incref (deny);
    list_add_tail (&j->listeners, &l->link);
    j->nlisteners++;
    for (job = jobtab_first (j->jm->jobs, &cursor); job;
         job = jobtab_next (j->jm->jobs, job, &cursor)) {
        if (job->x)
            send_backlog_active (l, job);
    }
    if (full && collect_inactive (l) < 0) {
        listener_end (l, ENOMEM, NULL);
        return;
    }
    fetch_next (l);
}

void journal_cancel (struct journal *j, const flux_msg_t *msg)
{
    struct list_node *pos, *tmp;
    int matchtag;
    uint32_t tag;

    if (flux_request_unpack (msg, NULL, "{s:i}", "matchtag", &matchtag) < 0)
        return; /* no response to cancel requests */
    list_for_each_safe (pos, tmp, &j->listeners)
    {
        struct listener *l = list_entry (pos, struct listener, link);
        if (flux_msg_route_match_first (l->msg, msg)
            && flux_msg_get_matchtag (l->msg, &tag) == 0
            && tag == (uint32_t)matchtag)
            listener_end (l, ENODATA, NULL);
    }
}

void journal_disconnect (struct journal *j, const flux_msg_t *msg)
{
    struct list_node *pos, *tmp;

    list_for_each_safe (pos, tmp, &j->listeners)
    {
        struct listener *l = list_entry (pos, struct listener, link);
        if (flux_msg_route_match_first (l->msg, msg))
            listener_destroy (l);
    }
}
