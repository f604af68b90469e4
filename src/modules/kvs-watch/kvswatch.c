/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* kvswatch.c - the kvs-watch engine: watchers, their lookups and the
 * namespace events that wake them.
 *
 * A watcher is always in one of these states:
 *   idle     nothing to do until an event wakes it (want_seq > last_seq)
 *   queued   on kw->runq, waiting for a lookup slot
 *   busy     holding a slot: its kvs.lookup-plus, then maybe content
 *            loads, are in flight; wakeups only raise want_seq, and one
 *            more lookup follows if it ends up above last_seq
 *   parked   waiting for its namespace to be created (WAITCREATE)
 * Ending a watcher (watcher_end) answers it if asked, detaches it from
 * every index, frees it (and its futures) and releases its slot; callers
 * return right after.
 *
 * Lookups: the first goes to the kvs without a root, so it reflects the
 * kvs's current root (and returns its rootseq/rootref); later ones name
 * the namespace's newest known root (rootdir + rootseq), so each response
 * matches one root.  Events and lookup responses travel different paths,
 * so neither may be assumed to come first: sequence numbers decide.
 *
 * Following: with kvswatch_set_follow(), the events of a namespace are
 * subscribed to before its first watcher's first lookup, and dropped a
 * few seconds after its last watcher went (struct follow), so kvs-watch
 * is not woken by the commits to namespaces nobody watches (the job
 * manager's, the scheduler's ...).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "kvswatch.h"
#include "libcontent/content.h"
#include "libkvs/treeobj.h"
#include "nsmon.h"
#include "strhash.h"
#include "watcher.h"

struct sender {
    struct list_node watchers;
};

/* A namespace whose events are followed (kw->follows, by name). */
struct follow {
    struct list_node idle; /* on kw->idle while it has no watchers */
    double since;          /* when it lost its last watcher */
    char name[];
};

struct kvswatch {
    flux_t *h;
    uint32_t rank;
    strhash_t *namespaces; /* name -> nsmon_t */
    strhash_t *byid;       /* "sender:matchtag" -> struct watcher */
    strhash_t *senders;    /* sender -> struct sender */
    struct list_node runq;
    struct list_node failed; /* lookups that could not be sent */
    /* watchers whose lookup the kvs refused (unloading, or not loaded):
     * looked up again on kvs.online */
    struct waitlist kvs_wait;
    struct flux_deferred reaper;
    strhash_t *follows;     /* name -> struct follow */
    struct list_node idle;  /* follows without watchers, oldest first */
    uv_timer_t *idle_timer; /* unfollows the idle ones when due */
    kvswatch_follow_f sub, unsub;
    void *follow_arg;
    int nwatchers;
    int nqueued;
    int active;
    int max_active;
    bool in_run_queue;
    struct {
        unsigned long lookups;
        unsigned long loads;
        unsigned long responses;
        unsigned long events;
        unsigned long bad_requests;
        unsigned long bad_events;
        unsigned long refused;
        unsigned long follows;
        unsigned long unfollows;
    } stats;
};

static void run_queue (kvswatch_t *kw);
static void schedule (kvswatch_t *kw, struct watcher *w);

static void bad_event (kvswatch_t *kw, const flux_msg_t *msg, const char *why)
{
    const char *topic = "?";

    (void)flux_msg_get_topic (msg, &topic);
    kw->stats.bad_events++;
    flux_log (kw->h, LOG_ERR, "%s: %s", topic, why);
}

/* Indexes */

static void sender_destroy (void *arg)
{
    free (arg);
}

static int sender_add (kvswatch_t *kw, struct watcher *w)
{
    struct sender *s;

    if (!(s = strhash_lookup (kw->senders, w->sender))) {
        if (!(s = calloc (1, sizeof (*s))))
            return -1;
        list_init (&s->watchers);
        if (strhash_insert (kw->senders, w->sender, s) < 0) {
            free (s);
            return -1;
        }
    }
    list_add_tail (&s->watchers, &w->sendernode);
    return 0;
}

static void sender_remove (kvswatch_t *kw, struct watcher *w)
{
    struct sender *s;

    if (!list_attached (&w->sendernode))
        return;
    list_del (&w->sendernode);
    if ((s = strhash_lookup (kw->senders, w->sender))
        && list_empty (&s->watchers))
        (void)strhash_delete (kw->senders, w->sender);
}

static void ns_destroy (void *arg)
{
    nsmon_destroy (arg);
}

/* Free ns once it has no watchers, unless it was already taken out of the
 * table (namespace removal and shutdown free it themselves).
 */
static void follow_idle (kvswatch_t *kw, const char *name);

static void ns_release (kvswatch_t *kw, nsmon_t *ns)
{
    if (ns && nsmon_count (ns) == 0
        && strhash_lookup (kw->namespaces, nsmon_name (ns)) == ns) {
        follow_idle (kw, nsmon_name (ns));
        (void)strhash_delete (kw->namespaces, nsmon_name (ns));
    }
}

/* Following namespaces */

static void follow_free (void *arg)
{
    struct follow *f = arg;
    if (f) {
        list_del (&f->idle);
        free (f);
    }
}

static double loop_now (kvswatch_t *kw)
{
    flux_reactor_t *r = flux_get_reactor (kw->h);
    flux_reactor_now_update (r);
    return flux_reactor_now (r);
}

static void idle_timer_cb (uv_timer_t *t);

/* Let the timer fire when the oldest idle namespace is due. */
static void idle_timer_arm (kvswatch_t *kw)
{
    struct follow *f;
    double due;

    if (!kw->idle_timer || list_empty (&kw->idle))
        return;
    f = list_entry (kw->idle.next, struct follow, idle);
    due = f->since + KVSWATCH_UNFOLLOW_DELAY - loop_now (kw);
    uv_timer_start (kw->idle_timer, idle_timer_cb,
                    due > 0 ? (uint64_t)(due * 1000) + 1 : 0, 0);
}

/* Stop following the namespaces without watchers for long enough. */
static void idle_timer_cb (uv_timer_t *t)
{
    kvswatch_t *kw = t->data;
    double now = loop_now (kw);

    while (!list_empty (&kw->idle)) {
        struct follow *f = list_entry (kw->idle.next, struct follow, idle);
        if (f->since + KVSWATCH_UNFOLLOW_DELAY > now)
            break;
        if (kw->unsub && kw->unsub (f->name, kw->follow_arg) < 0)
            flux_log (kw->h, LOG_ERR, "unsubscribing from %s events: %s",
                      f->name, strerror (errno));
        kw->stats.unfollows++;
        (void)strhash_delete (kw->follows, f->name); /* frees f */
    }
    idle_timer_arm (kw);
}

/* Make sure the events of namespace name are followed (before a
 * watcher's first lookup), and that they stay followed while it has
 * watchers.  -1 with errno if the subscription failed. */
static int follow (kvswatch_t *kw, const char *name)
{
    struct follow *f;

    if (!kw->sub)
        return 0;
    if ((f = strhash_lookup (kw->follows, name))) {
        list_del (&f->idle); /* in use again */
        return 0;
    }
    if (!(f = calloc (1, sizeof (*f) + strlen (name) + 1)))
        return -1;
    list_init (&f->idle);
    strcpy (f->name, name);
    if (kw->sub (name, kw->follow_arg) < 0) {
        int saved_errno = errno;
        free (f);
        errno = saved_errno;
        return -1;
    }
    if (strhash_insert (kw->follows, f->name, f) < 0) {
        int saved_errno = errno;
        if (kw->unsub)
            (void)kw->unsub (name, kw->follow_arg);
        free (f);
        errno = saved_errno;
        return -1;
    }
    kw->stats.follows++;
    return 0;
}

/* Namespace name has no watcher left: unfollow it later. */
static void follow_idle (kvswatch_t *kw, const char *name)
{
    struct follow *f;

    if (!(f = strhash_lookup (kw->follows, name)) || list_attached (&f->idle))
        return;
    f->since = loop_now (kw);
    list_add_tail (&kw->idle, &f->idle);
    if (!uv_is_active ((uv_handle_t *)kw->idle_timer))
        idle_timer_arm (kw);
}

void kvswatch_set_follow (kvswatch_t *kw, kvswatch_follow_f sub,
                          kvswatch_follow_f unsub, void *arg)
{
    if (kw) {
        kw->sub = sub;
        kw->unsub = unsub;
        kw->follow_arg = arg;
    }
}

/* Responses */

static void respond_val (kvswatch_t *kw, struct watcher *w, json_t *val)
{
    if (flux_respond_pack (kw->h, w->req, "{s:O}", "val", val) == 0)
        kw->stats.responses++;
}

static void send_sentinel (kvswatch_t *kw, struct watcher *w)
{
    if ((w->flags & KW_WATCH_INITIAL_SENTINEL) && !w->sentinel_sent) {
        if (flux_respond (kw->h, w->req, NULL) == 0)
            kw->stats.responses++;
        w->sentinel_sent = true;
    }
}

/* End w: answer errnum (0: no answer) unless mute, detach and free it.
 * Never touch w after this.
 */
static void watcher_end (kvswatch_t *kw, struct watcher *w, int errnum,
                         const char *errstr, bool mute)
{
    nsmon_t *ns = w->ns;

    if (!mute && errnum != 0) {
        if (flux_respond_error (kw->h, w->req, errnum, errstr) == 0)
            kw->stats.responses++;
    }
    nsmon_remove (ns, &w->link);
    sender_remove (kw, w);
    waitlist_cancel (&kw->kvs_wait, &w->kvs_wi);
    list_del (&w->runnode); /* run queue or failed list */
    if (w->queued) {
        w->queued = false;
        kw->nqueued--;
    }
    if (strhash_lookup (kw->byid, w->id) == w)
        (void)strhash_take (kw->byid, w->id);
    if (w->busy) {
        w->busy = false;
        kw->active--;
    }
    watcher_destroy (w);
    kw->nwatchers--;
    ns_release (kw, ns);
    run_queue (kw);
}

/* Lookups */

static flux_msg_t *lookup_encode (struct watcher *w, int rootseq,
                                  const char *rootref)
{
    flux_msg_t *msg;
    json_t *rootdir = NULL;
    int rc;

    if (!(msg = flux_request_encode ("kvs.lookup-plus", NULL)))
        return NULL;
    if (rootref) {
        if (!(rootdir = treeobj_create_dirref (rootref)))
            goto error;
        rc = flux_msg_pack (msg, "{s:s s:i s:s s:O s:i}", "key", w->key,
                            "flags", w->lookup_flags, "namespace", w->ns_name,
                            "rootdir", rootdir, "rootseq", rootseq);
    }
    else
        rc = flux_msg_pack (msg, "{s:s s:i s:s}", "key", w->key, "flags",
                            w->lookup_flags, "namespace", w->ns_name);
    /* The kvs checks access with the requester's credentials.  The module
     * runs as the instance owner, so the broker keeps them as set.
     */
    if (rc < 0 || flux_msg_set_cred (msg, w->cred) < 0)
        goto error;
    json_decref (rootdir);
    return msg;
error:
    json_decref (rootdir);
    flux_msg_decref (msg);
    return NULL;
}

static void lookup_continuation (flux_future_t *f, void *arg);

static int start_lookup (kvswatch_t *kw, struct watcher *w)
{
    nsmon_t *ns = w->ns;
    const char *rootref = NULL;
    int rootseq = -1;
    flux_msg_t *msg;
    flux_future_t *f;

    if (!w->initial && nsmon_rootseq (ns) >= 0) {
        rootseq = nsmon_rootseq (ns);
        rootref = nsmon_rootref (ns);
    }
    if (!(msg = lookup_encode (w, rootseq, rootref)))
        return -1;
    f = flux_rpc_message (kw->h, msg, FLUX_NODEID_ANY, 0);
    flux_msg_decref (msg);
    if (!f)
        return -1;
    if (flux_future_then (f, -1., lookup_continuation, w) < 0) {
        flux_future_destroy (f);
        return -1;
    }
    w->lookup_f = f;
    waitlist_sent (&kw->kvs_wait, &w->kvs_wi);
    w->sent_seq = rootseq;
    w->sent_gen = nsmon_gen (ns);
    w->use_root = false;
    w->busy = true;
    kw->active++;
    kw->stats.lookups++;
    return 0;
}

/* True if w has a lookup to do. */
static bool needs_lookup (struct watcher *w)
{
    return w->initial || w->use_root || w->want_seq > w->last_seq;
}

static void schedule (kvswatch_t *kw, struct watcher *w)
{
    if (w->busy || w->queued || w->failed_errno || nsmon_is_waiting (&w->link)
        || waitlist_waiting (&w->kvs_wi) || !needs_lookup (w))
        return;
    list_add_tail (&kw->runq, &w->runnode);
    w->queued = true;
    kw->nqueued++;
    run_queue (kw);
}

static void run_queue (kvswatch_t *kw)
{
    if (kw->in_run_queue)
        return;
    kw->in_run_queue = true;
    while (kw->active < kw->max_active && !list_empty (&kw->runq)) {
        struct watcher *w = list_entry (kw->runq.next, struct watcher, runnode);
        list_del (&w->runnode);
        w->queued = false;
        kw->nqueued--;
        if (start_lookup (kw, w) < 0) {
            /* run_queue may be called while an index is being walked:
             * end w on the next loop turn, not here.
             */
            w->failed_errno = errno ? errno : EIO;
            list_add_tail (&kw->failed, &w->runnode);
            flux_reactor_defer (flux_get_reactor (kw->h), &kw->reaper);
        }
    }
    kw->in_run_queue = false;
}

static void reap_failed (struct flux_deferred *d)
{
    kvswatch_t *kw = (kvswatch_t *)((char *)d - offsetof (kvswatch_t, reaper));

    while (!list_empty (&kw->failed)) {
        struct watcher *w
            = list_entry (kw->failed.next, struct watcher, runnode);
        flux_log (kw->h, LOG_ERR, "%s: sending a lookup failed: %s", w->key,
                  strerror (w->failed_errno));
        watcher_end (kw, w, w->failed_errno, "kvs-watch: sending lookup failed",
                     false);
    }
}

/* w's lookup (and loads) are done: release the slot, go again if a newer
 * root changed the key meanwhile.
 */
static void cycle_end (kvswatch_t *kw, struct watcher *w)
{
    w->busy = false;
    kw->active--;
    schedule (kw, w);
    run_queue (kw);
}

/* Content loads (APPEND, STREAM) */

static void load_continuation (flux_future_t *f, void *arg);

/* Keep up to KW_LOAD_WINDOW loads of w->loadq in flight. */
static int fill_loads (kvswatch_t *kw, struct watcher *w)
{
    size_t n = json_array_size (w->loadq);

    while (w->load_next < n && w->load_next - w->load_done < KW_LOAD_WINDOW) {
        const char *ref
            = json_string_value (json_array_get (w->loadq, w->load_next));
        flux_future_t *f;

        if (!(f = content_load_byblobref (kw->h, ref, 0)))
            return -1;
        if (flux_future_then (f, -1., load_continuation, w) < 0) {
            flux_future_destroy (f);
            return -1;
        }
        w->loads[w->load_next % KW_LOAD_WINDOW] = f;
        w->load_next++;
        kw->stats.loads++;
    }
    return 0;
}

/* The loads are all sent: STREAM ends, APPEND has its initial data. */
static void loads_done (kvswatch_t *kw, struct watcher *w)
{
    json_decref (w->loadq);
    w->loadq = NULL;
    w->load_next = w->load_done = 0;
    if (w->mode == MODE_STREAM) {
        watcher_end (kw, w, ENODATA, NULL, false);
        return;
    }
    send_sentinel (kw, w);
    cycle_end (kw, w);
}

/* Send the loaded blobs in order, as far as they are ready. */
static void load_continuation (flux_future_t *f, void *arg)
{
    struct watcher *w = arg;
    kvswatch_t *kw = w->engine;

    while (w->load_done < w->load_next) {
        size_t slot = w->load_done % KW_LOAD_WINDOW;
        flux_future_t *lf = w->loads[slot];
        const void *buf;
        size_t len;
        json_t *val;

        if (!flux_future_is_ready (lf))
            return;
        if (content_load_get (lf, &buf, &len) < 0) {
            char errbuf[128];
            snprintf (
                errbuf, sizeof (errbuf), "kvs-watch: loading %s: %s",
                json_string_value (json_array_get (w->loadq, w->load_done)),
                future_strerror (lf, errno));
            watcher_end (kw, w, errno, errbuf, false);
            return;
        }
        if (w->at) { /* APPEND: part of it may have been sent already */
            size_t skip;
            if (appendtrack_loaded (w->at, buf, len, &skip) < 0) {
                char errbuf[128];
                snprintf (errbuf, sizeof (errbuf),
                          "%s: value was not appended to", w->key);
                watcher_end (kw, w, errno, errbuf, false);
                return;
            }
            if (skip > 0) {
                buf = (const char *)buf + skip;
                len -= skip;
            }
        }
        if (len > 0 || !w->at) {
            if (!(val = treeobj_create_val (buf, len))) {
                watcher_end (kw, w, ENOMEM, NULL, false);
                return;
            }
            respond_val (kw, w, val);
            json_decref (val);
        }
        flux_future_destroy (lf);
        w->loads[slot] = NULL;
        w->load_done++;
    }
    if (w->load_done < json_array_size (w->loadq)) {
        if (fill_loads (kw, w) < 0)
            watcher_end (kw, w, errno, "kvs-watch: content load failed", false);
        return;
    }
    loads_done (kw, w);
}

/* Start sending the blobs of refs (taken over).  Returns 1 if loads are
 * in flight, 0 if there was nothing to load, -1 if w was ended.
 */
static int start_loads (kvswatch_t *kw, struct watcher *w, json_t *refs)
{
    if (json_array_size (refs) == 0) {
        json_decref (refs);
        return 0;
    }
    w->loadq = refs;
    w->load_next = w->load_done = 0;
    if (fill_loads (kw, w) < 0) {
        watcher_end (kw, w, errno, "kvs-watch: content load failed", false);
        return -1;
    }
    return 1;
}

/* Lookup results, per mode.  Each returns 1 if w is still busy (loads in
 * flight), 0 if its cycle is over, -1 if it was ended.
 */

static int result_watch (kvswatch_t *kw, struct watcher *w, json_t *val)
{
    if ((w->flags & (KW_WATCH_UNIQ | KW_WATCH_FULL))) {
        if (w->responded && json_equal (w->prev, val))
            return 0;
        json_decref (w->prev);
        w->prev = json_incref (val);
    }
    respond_val (kw, w, val);
    w->responded = true;
    return 0;
}

static int result_append (kvswatch_t *kw, struct watcher *w, json_t *val)
{
    json_t *direct, *refs;
    int rc;

    if (appendtrack_update (w->at, val, &direct, &refs) < 0) {
        const char *why = errno == EISDIR ? "key is a directory"
                                          : "value was not appended to";
        char errbuf[128];
        snprintf (errbuf, sizeof (errbuf), "%s: %s", w->key, why);
        watcher_end (kw, w, errno, errbuf, false);
        return -1;
    }
    if (direct) {
        respond_val (kw, w, direct);
        json_decref (direct);
    }
    w->responded = true;
    if ((rc = start_loads (kw, w, refs)) != 0)
        return rc;
    send_sentinel (kw, w);
    return 0;
}

static int result_stream (kvswatch_t *kw, struct watcher *w, json_t *val)
{
    json_t *refs;
    int n, rc;

    w->responded = true;
    if (treeobj_is_val (val)) {
        respond_val (kw, w, val);
        watcher_end (kw, w, ENODATA, NULL, false);
        return -1;
    }
    if (treeobj_is_dir (val) || treeobj_is_dirref (val)) {
        watcher_end (kw, w, EISDIR, NULL, false);
        return -1;
    }
    if (!treeobj_is_valref (val) || (n = treeobj_get_count (val)) < 0) {
        watcher_end (kw, w, EINVAL, "kvs-watch: key is not a value", false);
        return -1;
    }
    if (!(refs = json_array ())) {
        watcher_end (kw, w, ENOMEM, NULL, false);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        const char *ref = treeobj_get_blobref (val, i);
        if (!ref || json_array_append_new (refs, json_string (ref)) < 0) {
            json_decref (refs);
            watcher_end (kw, w, EPROTO, "kvs-watch: malformed valref", false);
            return -1;
        }
    }
    if ((rc = start_loads (kw, w, refs)) == 0) { /* nothing to stream */
        watcher_end (kw, w, ENODATA, NULL, false);
        return -1;
    }
    return rc;
}

static int handle_result (kvswatch_t *kw, struct watcher *w, json_t *val,
                          int errnum, const char *errstr)
{
    nsmon_t *ns = w->ns;
    bool waitcreate = (w->flags & KW_WAITCREATE) && !w->responded;

    if (errnum == ENOTSUP && waitcreate) {
        if (nsmon_gen (ns) != w->sent_gen) {
            /* the namespace appeared while the lookup was in flight */
            if (nsmon_rootseq (ns) >= 0)
                w->use_root = true;
            else
                w->initial = true;
        }
        else
            nsmon_wait_create (ns, &w->link);
        send_sentinel (kw, w);
        return 0;
    }
    if (errnum == ENOENT && waitcreate) {
        send_sentinel (kw, w);
        return 0;
    }
    if (errnum == ENOSYS) {
        /* the kvs is reloading (or not loaded yet), and looked up
         * nothing: the same lookup again once it is back (kvs.online) */
        if (w->sent_seq < 0)
            w->initial = true;
        else
            w->use_root = true;
        kw->stats.refused++;
        (void)waitlist_refused (&kw->kvs_wait, &w->kvs_wi);
        return 0;
    }
    if (errnum != 0) {
        watcher_end (kw, w, errnum, errstr, false);
        return -1;
    }
    if (!watcher_allowed (w, nsmon_owner (ns))) {
        watcher_end (kw, w, EPERM, "namespace belongs to another user", false);
        return -1;
    }
    switch (w->mode) {
        case MODE_ONCE:
            respond_val (kw, w, val);
            watcher_end (kw, w, w->streaming ? ENODATA : 0, NULL, false);
            return -1;
        case MODE_WATCH:
            return result_watch (kw, w, val);
        case MODE_APPEND:
            return result_append (kw, w, val);
        case MODE_STREAM:
            return result_stream (kw, w, val);
    }
    return 0;
}

static void lookup_continuation (flux_future_t *f, void *arg)
{
    struct watcher *w = arg;
    kvswatch_t *kw = w->engine;
    nsmon_t *ns = w->ns;
    json_t *val = NULL;
    int rootseq = -1, errnum = 0, seq;
    const char *rootref = NULL, *errstr = NULL;
    int rc;

    w->lookup_f = NULL; /* f is destroyed here, whatever happens to w */
    if (flux_rpc_get_unpack (f, "{s?o s?i s?s s?i}", "val", &val, "rootseq",
                             &rootseq, "rootref", &rootref, "errno", &errnum)
        < 0) {
        errnum = errno;
        errstr = flux_future_error_string (f);
    }
    else if (errnum == 0 && !val) {
        errnum = EPROTO;
        errstr = "kvs-watch: malformed kvs.lookup-plus response";
    }
    if (rootseq >= 0 && rootref)
        (void)nsmon_update_root (ns, rootseq, rootref);
    seq = rootseq >= 0 ? rootseq : w->sent_seq;
    if (seq > w->last_seq)
        w->last_seq = seq;
    /* The kvs answered from an older root than events already announced:
     * look again at the newest.
     */
    if (w->sent_seq < 0 && seq >= 0 && nsmon_rootseq (ns) > seq
        && nsmon_rootseq (ns) > w->want_seq)
        w->want_seq = nsmon_rootseq (ns);
    w->initial = false; /* handle_result sets it again for a retry */
    rc = handle_result (kw, w, val, errnum, errstr);
    flux_future_destroy (f);
    if (rc == 0)
        cycle_end (kw, w);
}

/* Requests */

void kvswatch_lookup (kvswatch_t *kw, const flux_msg_t *msg)
{
    flux_error_t error;
    struct watcher *w;
    nsmon_t *ns;

    if (!(w = watcher_create (msg, &error))) {
        if (errno == EPROTO || errno == EINVAL)
            kw->stats.bad_requests++;
        (void)flux_respond_error (kw->h, msg, errno, error.text);
        return;
    }
    w->engine = kw;
    if (strhash_lookup (kw->byid, w->id)) {
        (void)flux_respond_error (kw->h, msg, EEXIST,
                                  "kvs-watch: a request with this matchtag "
                                  "is already active");
        watcher_destroy (w);
        return;
    }
    if (follow (kw, w->ns_name) < 0) {
        (void)flux_respond_error (kw->h, msg, errno,
                                  "kvs-watch: cannot follow the namespace's "
                                  "events");
        watcher_destroy (w);
        return;
    }
    if (!(ns = strhash_lookup (kw->namespaces, w->ns_name))) {
        if (!(ns = nsmon_create (w->ns_name))
            || strhash_insert (kw->namespaces, w->ns_name, ns) < 0) {
            nsmon_destroy (ns);
            goto nomem;
        }
    }
    if (!watcher_allowed (w, nsmon_owner (ns))) {
        (void)flux_respond_error (kw->h, msg, EPERM,
                                  "namespace belongs to another user");
        watcher_destroy (w);
        ns_release (kw, ns);
        return;
    }
    if (nsmon_add (ns, &w->link, w->key, (w->flags & KW_WATCH_FULL) != 0, w)
        < 0) {
        ns_release (kw, ns);
        goto nomem;
    }
    w->ns = ns;
    if (strhash_insert (kw->byid, w->id, w) < 0) {
        nsmon_remove (ns, &w->link);
        ns_release (kw, ns);
        goto nomem;
    }
    if (sender_add (kw, w) < 0) {
        (void)strhash_take (kw->byid, w->id);
        nsmon_remove (ns, &w->link);
        ns_release (kw, ns);
        goto nomem;
    }
    kw->nwatchers++;
    schedule (kw, w);
    return;
nomem:
    (void)flux_respond_error (kw->h, msg, ENOMEM, NULL);
    if (!strhash_lookup (kw->namespaces, w->ns_name))
        follow_idle (kw, w->ns_name);
    watcher_destroy (w);
}

void kvswatch_cancel (kvswatch_t *kw, const flux_msg_t *msg)
{
    const char *sender;
    struct flux_msg_cred cred;
    int matchtag;
    struct watcher *w;
    char id[512];

    if (flux_request_unpack (msg, NULL, "{s:i !}", "matchtag", &matchtag) < 0
        || !(sender = flux_msg_route_first (msg))
        || flux_msg_get_cred (msg, &cred) < 0) {
        kw->stats.bad_requests++;
        flux_log (kw->h, LOG_WARNING, "malformed kvs-watch.cancel: %s",
                  flux_msg_last_error (msg));
        return;
    }
    snprintf (id, sizeof (id), "%s:%u", sender, (unsigned)matchtag);
    if (!(w = strhash_lookup (kw->byid, id))
        || flux_msg_cred_authorize (cred, w->cred.userid) < 0)
        return;
    watcher_end (kw, w, ENODATA, NULL, false);
}

void kvswatch_disconnect (kvswatch_t *kw, const flux_msg_t *msg)
{
    const char *sender;
    struct flux_msg_cred cred;
    struct sender *s;
    struct list_node *pos, *tmp;

    if (!(sender = flux_msg_route_first (msg))
        || flux_msg_get_cred (msg, &cred) < 0
        || !(s = strhash_take (kw->senders, sender)))
        return;
    /* s is out of the table: watcher_end leaves it alone.  A disconnect
     * names its sender by its first route: end only the watches its
     * credentials could have cancelled, whoever routed it here. */
    list_for_each_safe (pos, tmp, &s->watchers)
    {
        struct watcher *w = list_entry (pos, struct watcher, sendernode);
        if (flux_msg_cred_authorize (cred, w->cred.userid) < 0) {
            kw->stats.bad_requests++;
            continue;
        }
        watcher_end (kw, w, 0, NULL, true);
    }
    if (!list_empty (&s->watchers)
        && strhash_insert (kw->senders, sender, s) == 0)
        return;
    while (!list_empty (&s->watchers)) /* out of memory: forget them */
        list_del (s->watchers.next);
    sender_destroy (s);
}

/* Events */

struct wakectx {
    kvswatch_t *kw;
    int seq;
};

static void wake_key_cb (void *warg, void *arg)
{
    struct watcher *w = warg;
    struct wakectx *ctx = arg;

    if (ctx->seq > w->want_seq)
        w->want_seq = ctx->seq;
    schedule (ctx->kw, w);
}

static void wake_created_cb (void *warg, void *arg)
{
    struct watcher *w = warg;
    kvswatch_t *kw = arg;

    w->initial = false;
    w->use_root = true;
    schedule (kw, w);
}

static void end_removed_cb (void *warg, void *arg)
{
    struct watcher *w = warg;
    watcher_end (arg, w, ENOTSUP, "namespace was removed", false);
}

static void event_setroot (kvswatch_t *kw, nsmon_t *ns, const flux_msg_t *msg)
{
    int rootseq;
    const char *rootref;
    json_t *keys;
    json_int_t owner = -1;
    struct wakectx ctx = {.kw = kw};

    if (flux_event_unpack (msg, NULL, "{s:i s:s s:o s?I}", "rootseq", &rootseq,
                           "rootref", &rootref, "keys", &keys, "owner", &owner)
            < 0
        || rootseq < 0 || !json_is_array (keys)) {
        bad_event (kw, msg, "malformed setroot event");
        return;
    }
    (void)nsmon_update_root (ns, rootseq, rootref);
    if (owner >= 0 && owner <= 0xFFFFFFFF)
        nsmon_set_owner (ns, (uint32_t)owner);
    nsmon_bump_gen (ns);
    nsmon_wake_waiting (ns, wake_created_cb, kw);
    ctx.seq = rootseq;
    (void)nsmon_wake_keys (ns, keys, wake_key_cb, &ctx);
}

static void event_created (kvswatch_t *kw, nsmon_t *ns, const flux_msg_t *msg)
{
    int rootseq;
    const char *rootref;
    json_int_t owner = -1;

    if (flux_event_unpack (msg, NULL, "{s:i s:s s?I}", "rootseq", &rootseq,
                           "rootref", &rootref, "owner", &owner)
            < 0
        || rootseq < 0) {
        bad_event (kw, msg, "malformed created event");
        return;
    }
    (void)nsmon_update_root (ns, rootseq, rootref);
    if (owner >= 0 && owner <= 0xFFFFFFFF)
        nsmon_set_owner (ns, (uint32_t)owner);
    nsmon_bump_gen (ns);
    nsmon_wake_waiting (ns, wake_created_cb, kw);
}

static void event_removed (kvswatch_t *kw, nsmon_t *ns)
{
    (void)strhash_take (kw->namespaces, nsmon_name (ns));
    nsmon_foreach (ns, end_removed_cb, kw);
    follow_idle (kw, nsmon_name (ns));
    nsmon_destroy (ns);
}

void kvswatch_event (kvswatch_t *kw, const flux_msg_t *msg)
{
    static const char prefix[] = "kvs.namespace-";
    const char *topic, *name, *suffix;
    size_t nlen, tlen;
    nsmon_t *ns;

    kw->stats.events++;
    if (flux_event_unpack (msg, &topic, "{s:s}", "namespace", &name) < 0
        || strncmp (topic, prefix, sizeof (prefix) - 1) != 0) {
        bad_event (kw, msg, "malformed event (no namespace)");
        return;
    }
    /* the topic must be kvs.namespace-<name>-<what> for this payload */
    nlen = strlen (name);
    tlen = strlen (topic);
    if (tlen < sizeof (prefix) - 1 + nlen + 2
        || strncmp (topic + sizeof (prefix) - 1, name, nlen) != 0
        || topic[sizeof (prefix) - 1 + nlen] != '-') {
        bad_event (kw, msg, "event topic does not match its namespace");
        return;
    }
    suffix = topic + sizeof (prefix) - 1 + nlen + 1;
    if (!(ns = strhash_lookup (kw->namespaces, name)))
        return; /* nobody watches it */
    if (!strcmp (suffix, "setroot"))
        event_setroot (kw, ns, msg);
    else if (!strcmp (suffix, "created"))
        event_created (kw, ns, msg);
    else if (!strcmp (suffix, "removed"))
        event_removed (kw, ns);
}

/* Stats */

static int ns_stats_cb (const char *key, void *val, void *arg)
{
    nsmon_t *ns = val;
    json_t *o;

    if (!(o = json_pack ("{s:I s:i s:i s:i s:i}", "owner",
                         (json_int_t)nsmon_owner (ns), "rootseq",
                         nsmon_rootseq (ns), "watchers", nsmon_count (ns),
                         "keys", nsmon_key_count (ns), "waiting",
                         nsmon_waiting_count (ns)))
        || json_object_set_new (arg, key, o) < 0)
        return -1;
    return 0;
}

json_t *kvswatch_stats (kvswatch_t *kw)
{
    json_t *nsobj, *o;

    if (!(nsobj = json_object ()))
        goto nomem;
    if (strhash_foreach (kw->namespaces, ns_stats_cb, nsobj) != 0) {
        json_decref (nsobj);
        goto nomem;
    }
    if (!(o = json_pack (
              "{s:i s:i s:o s:i s:i s:i s:i s:I s:I s:I s:I s:I s:I s:i s:I "
              "s:I s:I}",
              "watchers", kw->nwatchers, "namespace-count",
              (int)strhash_count (kw->namespaces), "namespaces", nsobj,
              "senders", (int)strhash_count (kw->senders), "lookups-active",
              kw->active, "lookups-queued", kw->nqueued, "max-lookups",
              kw->max_active, "lookups", (json_int_t)kw->stats.lookups, "loads",
              (json_int_t)kw->stats.loads, "responses",
              (json_int_t)kw->stats.responses, "events",
              (json_int_t)kw->stats.events, "bad-requests",
              (json_int_t)kw->stats.bad_requests, "bad-events",
              (json_int_t)kw->stats.bad_events, "followed",
              (int)strhash_count (kw->follows), "follows",
              (json_int_t)kw->stats.follows, "unfollows",
              (json_int_t)kw->stats.unfollows, "refused",
              (json_int_t)kw->stats.refused)))
        goto nomem;
    return o;
nomem:
    errno = ENOMEM;
    return NULL;
}

/* Life cycle */

/* A refused watcher's turn again (waitlist). */
static void kvs_resend (struct waitlist *wl, struct waitlist_item *it,
                        void *arg)
{
    schedule (arg, waitlist_entry (it, struct watcher, kvs_wi));
}

void kvswatch_kvs_online (kvswatch_t *kw)
{
    waitlist_online (&kw->kvs_wait);
}

kvswatch_t *kvswatch_create (flux_t *h, uint32_t rank, int max_lookups)
{
    kvswatch_t *kw;

    if (!h || max_lookups < 1) {
        errno = EINVAL;
        return NULL;
    }
    if (!(kw = calloc (1, sizeof (*kw))))
        return NULL;
    kw->h = h;
    kw->rank = rank;
    kw->max_active = max_lookups;
    list_init (&kw->runq);
    list_init (&kw->failed);
    list_init (&kw->idle);
    waitlist_init (&kw->kvs_wait, kvs_resend, kw);
    flux_deferred_init (&kw->reaper, reap_failed);
    if (!(kw->namespaces = strhash_create (ns_destroy))
        || !(kw->byid = strhash_create (NULL))
        || !(kw->senders = strhash_create (sender_destroy))
        || !(kw->follows = strhash_create (follow_free))
        || !(kw->idle_timer = calloc (1, sizeof (*kw->idle_timer)))) {
        kvswatch_destroy (kw);
        errno = ENOMEM;
        return NULL;
    }
    uv_timer_init (flux_reactor_uv (flux_get_reactor (h)), kw->idle_timer);
    uv_unref ((uv_handle_t *)kw->idle_timer); /* never keeps the loop up */
    kw->idle_timer->data = kw;
    return kw;
}

static int collect_name_cb (const char *key, void *val, void *arg)
{
    return json_array_append_new (arg, json_string (key)) < 0 ? -1 : 0;
}

static void end_unloading_cb (void *warg, void *arg)
{
    watcher_end (arg, warg, ENOSYS, "kvs-watch is unloading", false);
}

void kvswatch_destroy (kvswatch_t *kw)
{
    if (kw) {
        int saved_errno = errno;
        json_t *names = json_array ();
        size_t index;
        json_t *value;

        if (names && kw->namespaces
            && strhash_foreach (kw->namespaces, collect_name_cb, names) == 0) {
            kw->max_active = 0; /* start no lookups while ending */
            json_array_foreach (names, index, value)
            {
                nsmon_t *ns
                    = strhash_take (kw->namespaces, json_string_value (value));
                nsmon_foreach (ns, end_unloading_cb, kw);
                nsmon_destroy (ns);
            }
        }
        json_decref (names);
        flux_reactor_undefer (&kw->reaper);
        strhash_destroy (kw->namespaces);
        strhash_destroy (kw->byid);
        strhash_destroy (kw->senders);
        strhash_destroy (kw->follows);
        if (kw->idle_timer && kw->idle_timer->loop)
            flux_uv_close_free ((uv_handle_t *)kw->idle_timer);
        else
            free (kw->idle_timer);
        free (kw);
        errno = saved_errno;
    }
}
