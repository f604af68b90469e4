/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* ingest.c - batches of submitted jobs: ids, one KVS commit, one
 * job-manager.submit, then the answers (see ingest.h).
 *
 * A batch goes through: collecting (ing->current) -> waiting for the id
 * generator (ing->waiting, only before the first getinfo answer) ->
 * committing -> submitting -> [cleaning up after a refusal] -> answered.
 * Started batches sit on ing->inflight so shutdown can wait for them.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "ingest.h"
#include "jobreq.h"
#include "libeventlog/eventlog.h"
#include "libflux/base64.h"
#include "libflux/list.h"
#include "libflux/waitlist.h"
#include "libkvs/kvs.h"
#include "libutil/fluid.h"
#include "libutil/textbuf.h"

/* The request text buffer is kept up to this size between batches. */
#define TEXTBUF_KEEP (16 * 1024 * 1024)

struct batch {
    struct list_node node; /* on ing->waiting or ing->inflight */
    ingest_t *ing;
    struct jobreq **jobs;
    int count;
    bool started;                /* counted in stats.inflight */
    bool ids;                    /* its jobs have their ids */
    struct waitlist_item kvs_wi; /* its commit refused: waits for the kvs */
    uint64_t wait_since;         /* loop time (ms) when it began to wait */
    flux_future_t *f;            /* the commit or RPC in flight */
    int errnum; /* the job manager's refusal, while cleaning up */
    char errstr[160];
};

struct ingest {
    flux_t *h;
    uint32_t rank;
    uint32_t owner;
    int batch_max;
    size_t max_jobspec; /* bytes (job-ingest max-jobspec-size) */
    bool shutting_down;
    struct fluid_generator gen;
    bool gen_ready;
    flux_future_t *getinfo;
    struct batch *current;
    struct list_node waiting;
    struct list_node inflight;
    uv_prepare_t *prep;
    /* batches whose commit the kvs refused (unloading or absent), sent
     * again on kvs.online */
    struct waitlist kvs_wait;
    /* a refused batch waits at most kvs_wait_ms (0: for ever), then its
     * jobs fail: a kvs removed for good must not hold submitters */
    uint64_t kvs_wait_ms;
    uv_timer_t *kvs_timer;
    uv_timer_t *timer;
    unsigned int delay_ms; /* 0: flush at the next loop turn */
    struct textbuf text;   /* request text being written, reused */
    struct {
        unsigned long submitted, rejected, batches;
        int max_batch, inflight;
    } stats;
};

static void ingest_log (ingest_t *ing, int severity, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* To the broker log (flux_log). */
static void ingest_log (ingest_t *ing, int severity, const char *fmt, ...)
{
    va_list ap;

    va_start (ap, fmt);
    flux_vlog (ing->h, severity, fmt, ap);
    va_end (ap);
}

/* Batches
 */

static struct batch *batch_create (ingest_t *ing)
{
    struct batch *b;

    if (!(b = calloc (1, sizeof (*b)))
        || !(b->jobs = calloc (ing->batch_max, sizeof (b->jobs[0])))) {
        free (b);
        return NULL;
    }
    b->ing = ing;
    list_init (&b->node);
    waitlist_item_init (&b->kvs_wi);
    return b;
}

static void batch_destroy (struct batch *b)
{
    if (b) {
        if (list_attached (&b->node))
            list_del (&b->node);
        waitlist_cancel (&b->ing->kvs_wait, &b->kvs_wi);
        flux_future_destroy (b->f);
        for (int i = 0; i < b->count; i++)
            jobreq_destroy (b->jobs[i]);
        free (b->jobs);
        free (b);
    }
}

/* Answer every job with errnum/errstr, then free the batch. */
static void batch_fail (struct batch *b, int errnum, const char *errstr)
{
    ingest_t *ing = b->ing;

    for (int i = 0; i < b->count; i++) {
        if (flux_respond_error (ing->h, b->jobs[i]->msg, errnum, errstr) < 0)
            ingest_log (ing, LOG_ERR, "responding to submit: %s",
                        strerror (errno));
    }
    ing->stats.rejected += b->count;
    if (b->started)
        ing->stats.inflight--;
    batch_destroy (b);
}

static void batch_succeed (struct batch *b)
{
    ingest_t *ing = b->ing;

    for (int i = 0; i < b->count; i++) {
        if (flux_respond_pack (ing->h, b->jobs[i]->msg, "{s:I}", "id",
                               (json_int_t)b->jobs[i]->id)
            < 0)
            ingest_log (ing, LOG_ERR, "responding to submit: %s",
                        strerror (errno));
    }
    ing->stats.submitted += b->count;
    ing->stats.inflight--;
    batch_destroy (b);
}

static void cleanup_cb (flux_future_t *f, void *arg)
{
    struct batch *b = arg;

    b->f = NULL;
    if (flux_future_get (f, NULL) < 0)
        ingest_log (b->ing, LOG_ERR, "unlinking %d refused jobs: %s", b->count,
                    future_strerror (f, errno));
    flux_future_destroy (f);
    batch_fail (b, b->errnum, b->errstr);
}

/* The job manager refused the batch: take the jobs out of the KVS again,
 * then answer with its error.
 */
static void batch_cleanup (struct batch *b, int errnum, const char *errstr)
{
    ingest_t *ing = b->ing;
    flux_kvs_txn_t *txn;
    flux_future_t *f = NULL;
    char key[64];

    b->errnum = errnum;
    snprintf (b->errstr, sizeof (b->errstr), "%s",
              errstr ? errstr : strerror (errnum));
    if ((txn = flux_kvs_txn_create ())) {
        int i;
        for (i = 0; i < b->count; i++) {
            if (flux_job_kvs_key (key, sizeof (key), b->jobs[i]->id, NULL) < 0
                || flux_kvs_txn_unlink (txn, 0, key) < 0)
                break;
        }
        if (i == b->count)
            f = flux_kvs_commit (ing->h, KVS_PRIMARY_NAMESPACE, 0, txn);
        flux_kvs_txn_destroy (txn);
    }
    if (!f || flux_future_then (f, -1, cleanup_cb, b) < 0) {
        ingest_log (ing, LOG_ERR, "unlinking %d refused jobs: %s", b->count,
                    strerror (errno));
        flux_future_destroy (f);
        batch_fail (b, b->errnum, b->errstr);
        return;
    }
    b->f = f;
}

static void submit_cb (flux_future_t *f, void *arg)
{
    struct batch *b = arg;

    b->f = NULL;
    if (flux_future_get (f, NULL) < 0) {
        int errnum = errno;
        const char *errstr = flux_future_error_string (f);
        ingest_log (b->ing, LOG_ERR, "job-manager.submit of %d jobs: %s",
                    b->count, future_strerror (f, errnum));
        batch_cleanup (b, errnum, errstr);
    }
    else
        batch_succeed (b);
    flux_future_destroy (f);
}

/* {jobs:[{id, userid, urgency, t_submit, flags, jobspec}]} as JSON text
 * in ing->text.  Written directly rather than with json_pack: the jobspec
 * text is already one checked JSON object, and re-encoding thousands of
 * them is most of a batch's cost.  t_submit is printed as jansson prints
 * reals (%.17g, with ".0" if it would read as an integer).
 */
static const char *jobs_payload (struct batch *b)
{
    struct textbuf *tb = &b->ing->text;

    textbuf_reset (tb, TEXTBUF_KEEP);
    if (textbuf_printf (tb, "{\"jobs\":[") < 0)
        return NULL;
    for (int i = 0; i < b->count; i++) {
        struct jobreq *job = b->jobs[i];
        char ts[64];

        snprintf (ts, sizeof (ts), "%.17g", job->t_submit);
        if (!strpbrk (ts, ".eE"))
            strcat (ts, ".0");
        if (textbuf_printf (tb,
                            "%s{\"id\":%ju,\"userid\":%u,\"urgency\":%d,"
                            "\"t_submit\":%s,\"flags\":%d,\"jobspec\":",
                            i > 0 ? "," : "", (uintmax_t)job->id,
                            (unsigned)job->userid, job->urgency, ts, job->flags)
                < 0
            || textbuf_append (tb, job->jobspec, strlen (job->jobspec)) < 0
            || textbuf_append (tb, "}", 1) < 0)
            return NULL;
    }
    if (textbuf_append (tb, "]}", 2) < 0)
        return NULL;
    return tb->data;
}

static void batch_commit (struct batch *b);
static void kvs_timer_arm (ingest_t *ing);

static void commit_cb (flux_future_t *f, void *arg)
{
    struct batch *b = arg;
    flux_future_t *f2 = NULL;
    const char *jobs;
    char errbuf[200];

    b->f = NULL;
    if (flux_future_get (f, NULL) < 0 && errno == ENOSYS
        && !b->ing->shutting_down && b->ing->rank == 0) {
        /* the kvs is unloading or absent (nothing applied): the jobs
         * wait, and the commit goes again on kvs.online */
        ingest_log (b->ing, LOG_WARNING,
                    "KVS commit of %d jobs refused (%s): kept until the kvs "
                    "is back",
                    b->count, future_strerror (f, errno));
        flux_future_destroy (f);
        if (!waitlist_refused (&b->ing->kvs_wait, &b->kvs_wi)) {
            b->wait_since
                = uv_now (flux_reactor_uv (flux_get_reactor (b->ing->h)));
            if (!uv_is_active ((uv_handle_t *)b->ing->kvs_timer))
                kvs_timer_arm (b->ing);
        }
        return;
    }
    if (flux_future_get (f, NULL) < 0) {
        int errnum = errno;
        snprintf (errbuf, sizeof (errbuf), "KVS commit failed: %s",
                  future_strerror (f, errnum));
        ingest_log (b->ing, LOG_ERR, "%s", errbuf);
        batch_fail (b, errnum, errbuf);
        flux_future_destroy (f);
        return;
    }
    flux_future_destroy (f);
    if (!(jobs = jobs_payload (b))
        || !(f2 = flux_rpc (b->ing->h, "job-manager.submit", jobs, 0, 0))
        || flux_future_then (f2, -1, submit_cb, b) < 0) {
        int errnum = errno;
        flux_future_destroy (f2);
        batch_cleanup (b, errnum, "job-manager.submit could not be sent");
        return;
    }
    b->f = f2;
}

/* Append the RFC 4648 base64 encoding of len bytes of data. */
static int append_base64 (struct textbuf *tb, const void *data, size_t len)
{
    ssize_t n;

    if (textbuf_reserve (tb, base64_encoded_size (len)) < 0
        || (n
            = base64_encode (tb->data + tb->len, tb->size - tb->len, data, len))
               < 0)
        return -1;
    tb->len += n;
    return 0;
}

/* One op of a kvs.commit request: key set to an RFC 11 val holding len
 * bytes of data (PROTOCOLS.md 4).  Keys here are job keys, which need no
 * JSON escaping; base64 needs none either.
 */
static int put_op (struct textbuf *tb, bool first, const char *key,
                   const void *data, size_t len)
{
    static const char val_tail[] = "\",\"type\":\"val\",\"ver\":1}}";

    if (textbuf_reserve (tb, base64_encoded_size (len) + strlen (key) + 100) < 0
        || textbuf_printf (tb,
                           "%s{\"key\":\"%s\",\"flags\":0,\"dirent\":{"
                           "\"data\":\"",
                           first ? "" : ",", key)
               < 0
        || append_base64 (tb, data, len) < 0
        || textbuf_append (tb, val_tail, sizeof (val_tail) - 1) < 0)
        return -1;
    return 0;
}

/* Job's three keys: J, jobspec, and the eventlog with its submit event. */
static int put_job (struct textbuf *tb, bool first, struct jobreq *job)
{
    char key[80], dir[64], *line = NULL;
    json_t *entry;
    int rc = -1;

    if (flux_job_kvs_key (dir, sizeof (dir), job->id, NULL) < 0)
        return -1;
    if (!(entry
          = eventlog_entry_pack (job->t_submit, "submit", "{s:i s:i s:i s:i}",
                                 "userid", job->userid, "urgency", job->urgency,
                                 "flags", job->flags, "version", 1))
        || !(line = eventlog_entry_encode (entry)))
        goto done;
    snprintf (key, sizeof (key), "%s.J", dir);
    if (put_op (tb, first, key, job->J, strlen (job->J)) < 0)
        goto done;
    snprintf (key, sizeof (key), "%s.jobspec", dir);
    if (put_op (tb, false, key, job->jobspec, strlen (job->jobspec)) < 0)
        goto done;
    snprintf (key, sizeof (key), "%s.eventlog", dir);
    rc = put_op (tb, false, key, line, strlen (line));
done:
    json_decref (entry);
    free (line);
    return rc;
}

/* Assign the ids of batch b and write its kvs.commit request (one
 * transaction for all its jobs) as JSON text in ing->text.  Written
 * directly rather than with libkvs: jansson's encoding of the large
 * base64 strings was most of the cost of a batch.
 */
static const char *commit_payload (struct batch *b)
{
    struct textbuf *tb = &b->ing->text;

    textbuf_reset (tb, TEXTBUF_KEEP);
    if (textbuf_printf (tb, "{\"namespace\":\"%s\",\"flags\":0,\"ops\":[",
                        KVS_PRIMARY_NAMESPACE)
        < 0)
        return NULL;
    for (int i = 0; i < b->count; i++) {
        if ((!b->ids && fluid_generate (&b->ing->gen, &b->jobs[i]->id) < 0)
            || put_job (tb, i == 0, b->jobs[i]) < 0)
            return NULL;
    }
    b->ids = true; /* a commit sent again keeps them */
    if (textbuf_append (tb, "]}", 2) < 0)
        return NULL;
    return tb->data;
}

static void batch_start (struct batch *b)
{
    ingest_t *ing = b->ing;

    list_add_tail (&ing->inflight, &b->node);
    b->started = true;
    ing->stats.inflight++;
    ing->stats.batches++;
    if (b->count > ing->stats.max_batch)
        ing->stats.max_batch = b->count;
    batch_commit (b);
}

/* The batch that has waited for the kvs the longest, if any. */
static struct batch *kvs_wait_oldest (ingest_t *ing)
{
    struct waitlist_item *it = waitlist_first (&ing->kvs_wait);
    return it ? waitlist_entry (it, struct batch, kvs_wi) : NULL;
}

static void kvs_timer_cb (uv_timer_t *w);

/* The timer runs out when the oldest waiting batch has waited enough. */
static void kvs_timer_arm (ingest_t *ing)
{
    uv_loop_t *loop = flux_reactor_uv (flux_get_reactor (ing->h));
    struct batch *b;

    uv_timer_stop (ing->kvs_timer);
    if (ing->kvs_wait_ms > 0 && (b = kvs_wait_oldest (ing))) {
        uint64_t due = b->wait_since + ing->kvs_wait_ms, now = uv_now (loop);
        uv_timer_start (ing->kvs_timer, kvs_timer_cb, due > now ? due - now : 0,
                        0);
    }
}

/* Batches that waited kvs_wait_ms for the kvs fail. */
static void kvs_timer_cb (uv_timer_t *w)
{
    ingest_t *ing = w->data;
    uint64_t now = uv_now (flux_reactor_uv (flux_get_reactor (ing->h)));
    struct batch *b;
    char errbuf[160];

    snprintf (errbuf, sizeof (errbuf),
              "KVS commit failed: the kvs is not loaded (waited %gs for it)",
              ing->kvs_wait_ms / 1000.);
    while ((b = kvs_wait_oldest (ing))
           && b->wait_since + ing->kvs_wait_ms <= now) {
        ingest_log (ing, LOG_ERR, "%s (%d job%s)", errbuf, b->count,
                    b->count == 1 ? "" : "s");
        batch_fail (b, ENOSYS, errbuf); /* takes it off the waitlist */
    }
    kvs_timer_arm (ing);
}

static void kvs_resend (struct waitlist *wl, struct waitlist_item *it,
                        void *arg)
{
    struct batch *b = waitlist_entry (it, struct batch, kvs_wi);

    ingest_log (b->ing, LOG_INFO, "the kvs is back: committing %d jobs again",
                b->count);
    batch_commit (b);
}

void ingest_kvs_online (ingest_t *ing)
{
    uv_timer_stop (ing->kvs_timer);
    waitlist_online (&ing->kvs_wait);
}

/* Send b's kvs.commit (again, after kvs.online: with the same ids). */
static void batch_commit (struct batch *b)
{
    ingest_t *ing = b->ing;
    flux_future_t *f = NULL;
    const char *payload;
    int errnum;

    errno = 0;
    waitlist_sent (&ing->kvs_wait, &b->kvs_wi);
    if (!(payload = commit_payload (b)))
        goto error;
    f = flux_rpc (ing->h, "kvs.commit", payload, FLUX_NODEID_ANY, 0);
    if (!f || flux_future_then (f, -1, commit_cb, b) < 0)
        goto error;
    b->f = f;
    return;
error:
    errnum = errno;
    ingest_log (ing, LOG_ERR, "starting a batch: %s", strerror (errnum));
    flux_future_destroy (f);
    batch_fail (b, errnum, "job-ingest could not start the KVS commit");
}

/* The id generator
 */

static void start_waiting (ingest_t *ing, int errnum)
{
    struct list_node *pos, *tmp;

    list_for_each_safe (pos, tmp, &ing->waiting)
    {
        struct batch *b = list_entry (pos, struct batch, node);
        list_del (&b->node);
        if (ing->gen_ready)
            batch_start (b);
        else
            batch_fail (b, errnum, "job-ingest has no id generator");
    }
}

static void getinfo_cb (flux_future_t *f, void *arg)
{
    ingest_t *ing = arg;
    json_int_t max_jobid = 0;
    uint64_t ts;

    if (flux_rpc_get_unpack (f, "{s:I}", "max_jobid", &max_jobid) == 0
        && max_jobid >= 0)
        ts = fluid_get_timestamp ((fluid_t)max_jobid) + 1;
    else {
        ts = (uint64_t)(eventlog_now () * 1000) - INGEST_EPOCH_MS;
        ingest_log (ing, LOG_WARNING,
                    "job-manager.getinfo: %s: ids start from the wall "
                    "clock",
                    future_strerror (f, errno));
    }
    flux_future_destroy (f);
    ing->getinfo = NULL;
    if (fluid_init (&ing->gen, ing->rank, ts) == 0)
        ing->gen_ready = true;
    else
        ingest_log (ing, LOG_ERR, "fluid_init: %s", strerror (errno));
    start_waiting (ing, errno);
}

static void batch_ready (ingest_t *ing, struct batch *b)
{
    if (ing->gen_ready) {
        batch_start (b);
        return;
    }
    list_add_tail (&ing->waiting, &b->node);
    if (!ing->getinfo) {
        if (!(ing->getinfo
              = flux_rpc (ing->h, "job-manager.getinfo", NULL, 0, 0))
            || flux_future_then (ing->getinfo, -1, getinfo_cb, ing) < 0) {
            int errnum = errno;
            flux_future_destroy (ing->getinfo);
            ing->getinfo = NULL;
            start_waiting (ing, errnum);
        }
    }
}

/* Collecting
 */

static void flush_current (ingest_t *ing)
{
    struct batch *b = ing->current;

    ing->current = NULL;
    uv_prepare_stop (ing->prep);
    uv_timer_stop (ing->timer);
    if (b)
        batch_ready (ing, b);
}

static void prep_cb (uv_prepare_t *w)
{
    flush_current (w->data);
}

static void timer_cb (uv_timer_t *w)
{
    flush_current (w->data);
}

void ingest_submit (ingest_t *ing, const flux_msg_t *msg)
{
    flux_error_t error = {.text = ""};
    struct jobreq *job;
    int errnum;

    if (ing->shutting_down) {
        flux_respond_error (ing->h, msg, ENOSYS, "job-ingest is shutting down");
        return;
    }
    if (!(job = jobreq_create (msg, ing->owner, ing->max_jobspec, &errnum,
                               &error))) {
        ing->stats.rejected++;
        flux_respond_error (ing->h, msg, errnum, error.text);
        return;
    }
    job->t_submit = eventlog_now (); /* to the microsecond, as events */
    if (!ing->current && !(ing->current = batch_create (ing))) {
        jobreq_destroy (job);
        flux_respond_error (ing->h, msg, ENOMEM, NULL);
        return;
    }
    ing->current->jobs[ing->current->count++] = job;
    if (ing->current->count == ing->batch_max)
        flush_current (ing);
    else if (ing->current->count == 1) {
        if (ing->delay_ms > 0)
            uv_timer_start (ing->timer, timer_cb, ing->delay_ms, 0);
        else
            uv_prepare_start (ing->prep, prep_cb);
    }
}

void ingest_shutdown (ingest_t *ing)
{
    ing->shutting_down = true;
    flush_current (ing);
}

void ingest_set_max_jobspec (ingest_t *ing, size_t bytes)
{
    ing->max_jobspec = bytes;
}

void ingest_set_batch_delay (ingest_t *ing, unsigned int ms)
{
    ing->delay_ms = ms;
}

void ingest_set_kvs_wait (ingest_t *ing, double seconds)
{
    ing->kvs_wait_ms = seconds > 0 ? (uint64_t)(seconds * 1000. + 0.5) : 0;
    if (seconds > 0 && ing->kvs_wait_ms == 0)
        ing->kvs_wait_ms = 1;
    kvs_timer_arm (ing);
}

int ingest_busy (ingest_t *ing)
{
    return ing->stats.inflight + (list_empty (&ing->waiting) ? 0 : 1);
}

json_t *ingest_stats (ingest_t *ing)
{
    return json_pack ("{s:I s:I s:I s:i s:i}", "submitted",
                      (json_int_t)ing->stats.submitted, "rejected",
                      (json_int_t)ing->stats.rejected, "batches",
                      (json_int_t)ing->stats.batches, "max_batch",
                      ing->stats.max_batch, "inflight", ing->stats.inflight);
}

ingest_t *ingest_create (flux_t *h, uint32_t rank, uint32_t owner,
                         int batch_max)
{
    ingest_t *ing;

    if (!h || rank > FLUID_ID_MAX || batch_max < 1) {
        errno = EINVAL;
        return NULL;
    }
    if (!(ing = calloc (1, sizeof (*ing))))
        return NULL;
    ing->h = h;
    ing->rank = rank;
    ing->owner = owner;
    ing->batch_max = batch_max;
    ing->max_jobspec = JOBREQ_JOBSPEC_MAX_DEFAULT;
    ing->kvs_wait_ms = (uint64_t)(INGEST_KVS_WAIT_DEFAULT * 1000.);
    list_init (&ing->waiting);
    list_init (&ing->inflight);
    waitlist_init (&ing->kvs_wait, kvs_resend, NULL);
    if (!(ing->prep = calloc (1, sizeof (*ing->prep)))
        || !(ing->timer = calloc (1, sizeof (*ing->timer)))
        || !(ing->kvs_timer = calloc (1, sizeof (*ing->kvs_timer)))
        || uv_prepare_init (flux_reactor_uv (flux_get_reactor (h)), ing->prep)
               < 0) {
        free (ing->prep);
        free (ing->timer);
        free (ing->kvs_timer);
        free (ing);
        errno = ENOMEM;
        return NULL;
    }
    uv_timer_init (flux_reactor_uv (flux_get_reactor (h)), ing->timer);
    uv_timer_init (flux_reactor_uv (flux_get_reactor (h)), ing->kvs_timer);
    ing->prep->data = ing;
    ing->timer->data = ing;
    ing->kvs_timer->data = ing;
    return ing;
}

void ingest_destroy (ingest_t *ing)
{
    if (ing) {
        int saved_errno = errno;
        struct list_node *pos, *tmp;

        if (ing->current)
            batch_fail (ing->current, ENOSYS, "job-ingest is unloading");
        list_for_each_safe (pos, tmp, &ing->waiting)
        {
            batch_fail (list_entry (pos, struct batch, node), ENOSYS,
                        "job-ingest is unloading");
        }
        list_for_each_safe (pos, tmp, &ing->inflight)
        {
            batch_fail (list_entry (pos, struct batch, node), ENOSYS,
                        "job-ingest is unloading");
        }
        flux_future_destroy (ing->getinfo);
        /* the prepare handle is freed by libuv's close callback */
        uv_prepare_stop (ing->prep);
        flux_uv_close_free ((uv_handle_t *)ing->prep);
        uv_timer_stop (ing->timer);
        flux_uv_close_free ((uv_handle_t *)ing->timer);
        uv_timer_stop (ing->kvs_timer);
        flux_uv_close_free ((uv_handle_t *)ing->kvs_timer);
        textbuf_free (&ing->text);
        free (ing);
        errno = saved_errno;
    }
}
