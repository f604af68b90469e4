/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* exec.c - the job-exec core: RFC 32 streams, R, expiration, exceptions
 * (see exec.h), over the implementations of impl.h.
 */
#include <errno.h>
#include <limits.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "exec.h"
#include "guestns.h"
#include "impl.h"
#include "libutil/idtab.h"
#include "libflux/waitlist.h"
#include "libeventlog/eventlog.h"
#include "libkvs/kvs.h"
#include "libutil/fluid.h"
#include "rset.h"

static const struct exec_impl *impls[] = {
    &testexec_impl,
    &realexec_impl,
    NULL,
};
#define NIMPLS (sizeof (impls) / sizeof (impls[0]) - 1)

#define NOT_IMPLEMENTED \
    "real execution is not implemented yet (issue: execution)"

struct exec {
    flux_t *h;
    flux_reactor_t *r;
    uint32_t rank;
    char *service;
    struct idtab *jobs;
    timerq_t *tq;
    guestns_t *gs;
    void *impl_data[NIMPLS];
    bool impl_setup[NIMPLS];
    struct execjob *zombies; /* done, freed on the next loop turn */
    struct flux_deferred reaper;
    size_t fetching, running;
    /* jobs whose R lookup the kvs refused (unloading or absent), read
     * again on kvs.online */
    struct waitlist kvs_wait;
    struct {
        unsigned long start, reattach, adopt, started, finish, release,
            exception, timeout, cancel, bad_request;
    } stats;
};

struct execjob {
    struct idtab_entry entry; /* entry.id is the job id */
    exec_t *x;
    uint32_t userid;
    flux_msg_t *req; /* the start request, without its payload */
    const struct exec_impl *impl;
    void *impl_data;
    void *data;
    struct rset R; /* R.ranks is NULL until R is known */
    json_t *Rjson; /* R itself, as sent or read, once known */
    flux_future_t *f;
    struct tq_entry expire;
    double exp_shift;       /* seconds from R's starttime to the start */
    double exp_update;      /* job-exec.expiration before R was known, or -1 */
    struct idset *critical; /* NULL: all ranks */
    struct idset *released; /* partially released ranks, NULL: none */
    struct waitlist_item kvs_wi; /* R lookup refused: waits for the kvs */
    struct guest *guest;         /* the guest namespace, from begin() */
    int status;                  /* the finish status, once finished */
    int heard_status; /* reattach: the finish the job manager heard, or -1 */
    unsigned reattach : 1, started : 1, running : 1, finished : 1,
        exception : 1, done : 1, impl_exited : 1, said_start : 1,
        start_held : 1;
    /* responses after a start held for the guest symlink (release_held) */
    struct held *held, **held_tail;
    struct execjob *next_zombie;
};

/* ---- logging ---- */

void exec_log (exec_t *x, int level, const char *fmt, ...)
{
    va_list ap;

    va_start (ap, fmt);
    flux_vlog (x->h, level, fmt, ap);
    va_end (ap);
}

/* ---- accessors ---- */

flux_jobid_t execjob_id (const struct execjob *job)
{
    return job->entry.id;
}

uint32_t execjob_userid (const struct execjob *job)
{
    return job->userid;
}

bool execjob_reattach (const struct execjob *job)
{
    return job->reattach;
}

const struct idset *execjob_ranks (const struct execjob *job)
{
    return job->R.ranks;
}

json_t *execjob_R (const struct execjob *job)
{
    return job->Rjson;
}

void *execjob_data (const struct execjob *job)
{
    return job->data;
}

void execjob_set_data (struct execjob *job, void *data)
{
    job->data = data;
}

void *execjob_impl_data (const struct execjob *job)
{
    return job->impl_data;
}

const struct idset *execjob_released (const struct execjob *job)
{
    return job->released;
}

void execjob_where (const struct execjob *job, const struct idset *ranks,
                    char *buf, size_t size)
{
    char *hosts = job->R.R ? rset_hosts (job->R.R, ranks) : NULL;
    char *ids = idset_encode (ranks, IDSET_FLAG_RANGE);
    const char *s = idset_count (ranks) > 1 ? "s" : "";

    if (hosts)
        snprintf (buf, size, "%s (rank%s %s)", hosts, s, ids ? ids : "?");
    else
        snprintf (buf, size, "rank%s %s", s, ids ? ids : "?");
    free (hosts);
    free (ids);
}

/* For the two texts below: the hosts of ranks (NULL if R names none),
 * their shell ranks encoded (NULL if they cannot be told), and "s" if
 * there is more than one.  The caller frees *hosts and *ids. */
static void shells_of (const struct execjob *job, const struct idset *ranks,
                       char **hosts, char **ids, const char **plural)
{
    struct idset *shell = execjob_shell_ranks (job, ranks);

    *hosts = job->R.R ? rset_hosts (job->R.R, ranks) : NULL;
    *ids = shell ? idset_encode (shell, IDSET_FLAG_RANGE) : NULL;
    *plural = shell && idset_count (shell) > 1 ? "s" : "";
    idset_destroy (shell);
}

void execjob_where_shells (const struct execjob *job, const struct idset *ranks,
                           char *buf, size_t size)
{
    char *hosts, *ids;
    const char *s;

    shells_of (job, ranks, &hosts, &ids, &s);
    if (hosts)
        snprintf (buf, size, "%s (shell rank%s %s)", hosts, s, ids ? ids : "?");
    else
        snprintf (buf, size, "shell rank%s %s", s, ids ? ids : "?");
    free (hosts);
    free (ids);
}

void execjob_shells_on (const struct execjob *job, const struct idset *ranks,
                        char *buf, size_t size)
{
    char *hosts, *ids;
    const char *s;

    shells_of (job, ranks, &hosts, &ids, &s);
    snprintf (buf, size, "shell rank%s %s (on %s)", s, ids ? ids : "?",
              hosts ? hosts : "?");
    free (hosts);
    free (ids);
}

const struct exec_impl *execjob_impl (const struct execjob *job)
{
    return job->impl;
}

bool execjob_is_running (const struct execjob *job)
{
    return job->running && !job->done;
}

exec_t *execjob_exec (const struct execjob *job)
{
    return job->x;
}

flux_t *exec_handle (exec_t *x)
{
    return x->h;
}

timerq_t *exec_timerq (exec_t *x)
{
    return x->tq;
}

/* Any job in the table, including those done whose guest namespace is
 * being closed before their final release. */
static struct execjob *lookup_any (exec_t *x, flux_jobid_t id)
{
    struct idtab_entry *e = idtab_lookup (x->jobs, id);
    return e ? (struct execjob *)e : NULL;
}

/* For implementations: a done job is gone. */
struct execjob *exec_lookup (exec_t *x, flux_jobid_t id)
{
    struct execjob *job = lookup_any (x, id);
    return job && !job->done ? job : NULL;
}

size_t exec_job_count (exec_t *x)
{
    return idtab_count (x->jobs);
}

/* ---- responses (RFC 32: matchtag and errnum of the request, id in the
 * payload) ---- */

/* A response held until the start can be said, in order. */
struct held {
    struct held *next;
    char s[];
};

static int send_response (struct execjob *job, const char *s)
{
    struct held *h;

    if (!job->start_held)
        return flux_respond (job->x->h, job->req, s);
    if (!(h = malloc (sizeof (*h) + strlen (s) + 1)))
        return -1;
    strcpy (h->s, s);
    h->next = NULL;
    if (!job->held)
        job->held_tail = &job->held;
    *job->held_tail = h;
    job->held_tail = &h->next;
    return 0;
}

static void held_clear (struct execjob *job)
{
    while (job->held) {
        struct held *h = job->held;
        job->held = h->next;
        free (h);
    }
}

static void respond (struct execjob *job, const char *type, const char *data)
{
    char buf[256], *s = buf;
    int n;

    n = snprintf (buf, sizeof (buf),
                  "{\"id\":%" PRIu64 ",\"type\":\"%s\",\"data\":%s}",
                  (uint64_t)job->entry.id, type, data);
    if (n >= (int)sizeof (buf)) {
        if (!(s = malloc (n + 1)))
            goto error;
        snprintf (s, n + 1, "{\"id\":%" PRIu64 ",\"type\":\"%s\",\"data\":%s}",
                  (uint64_t)job->entry.id, type, data);
    }
    if (n < 0 || send_response (job, s) < 0)
        goto error;
    if (s != buf)
        free (s);
    return;
error:
    exec_log (job->x, LOG_ERR, "%ju: %s response: %s", (uintmax_t)job->entry.id,
              type, strerror (errno));
    if (s != buf)
        free (s);
}

static void respond_exception_sev (struct execjob *job, int severity,
                                   const char *type, const char *note)
{
    json_t *o;
    char *s = NULL;

    job->x->stats.exception++;
    if (!(o = json_pack ("{s:I s:s s:{s:i s:s s:s}}", "id",
                         (json_int_t)job->entry.id, "type", "exception", "data",
                         "severity", severity, "type", type, "note", note))
        || !(s = json_dumps (o, JSON_COMPACT)) || send_response (job, s) < 0)
        exec_log (job->x, LOG_ERR, "%ju: exception response: %s",
                  (uintmax_t)job->entry.id, strerror (errno ? errno : ENOMEM));
    json_decref (o);
    free (s);
    exec_log (job->x, LOG_INFO, "%ju: exception type=%s severity=%d: %s",
              (uintmax_t)job->entry.id, type, severity, note);
}

static void respond_exception (struct execjob *job, const char *type,
                               const char *note)
{
    respond_exception_sev (job, 0, type, note);
}

/* ---- exec.eventlog ---- */

/* Append an event to the job's exec.eventlog (context: a new reference
 * or NULL).  A failure here is a failure to allocate: logged. */
static void post (struct execjob *job, const char *name, json_t *context)
{
    if (job->guest && guest_post (job->guest, name, context) < 0)
        exec_log (job->x, LOG_ERR, "%ju: exec.eventlog %s: %s",
                  (uintmax_t)job->entry.id, name, strerror (errno));
    json_decref (context);
}

int execjob_event (struct execjob *job, const char *name, json_t *context)
{
    if (!job || !name || !*name || (context && !json_is_object (context))) {
        errno = EINVAL;
        return -1;
    }
    if (job->done)
        return 0;
    if (!job->guest || !job->started) {
        errno = EINVAL;
        return -1;
    }
    return guest_post (job->guest, name, context);
}

/* ---- expiration ---- */

static void arm_expiration (struct execjob *job)
{
    double expiration = job->R.expiration, offset;

    if (!job->running || !(expiration > 0.)) {
        timerq_disarm (job->x->tq, &job->expire);
        return;
    }
    offset = expiration + job->exp_shift - eventlog_now ();
    if (offset < 0.)
        offset = 0.;
    if (timerq_arm (job->x->tq, &job->expire, offset) < 0)
        execjob_fatal (job, "cannot arm the expiration timer: %s",
                       strerror (errno));
}

static void expire_cb (struct tq_entry *e)
{
    struct execjob *job
        = (struct execjob *)((char *)e - offsetof (struct execjob, expire));

    if (job->done || !job->running)
        return;
    job->x->stats.timeout++;
    job->exception = 1;
    respond_exception (job, "timeout", "resource allocation expired");
    job->impl->kill (job, SIGALRM);
}

/* ---- reports from implementations ---- */

void execjob_started (struct execjob *job)
{
    if (job->done || job->running || job->finished)
        return;
    job->running = 1;
    job->x->running++;
    job->x->stats.started++;
    if (!job->reattach && job->R.starttime > 0.) {
        job->exp_shift = eventlog_now () - job->R.starttime;
        if (job->exp_shift < 0.)
            job->exp_shift = 0.;
    }
    if (!guest_is_linked (job->guest))
        job->start_held = 1; /* said once job.<id>.guest is in (guest_cb) */
    else {
        job->said_start = 1;
        respond (job, "start", "{}");
    }
    arm_expiration (job);
}

/* The guest symlink is committed (or failed, and said so): the start,
 * then what followed it. */
static void release_held (struct execjob *job)
{
    if (!job->start_held || !job->req)
        return;
    job->start_held = 0;
    job->said_start = 1;
    respond (job, "start", "{}");
    while (job->held) {
        struct held *h = job->held;
        job->held = h->next;
        if (flux_respond (job->x->h, job->req, h->s) < 0)
            exec_log (job->x, LOG_ERR, "%ju: response: %s",
                      (uintmax_t)job->entry.id, strerror (errno));
        free (h);
    }
}

static void stop_running (struct execjob *job)
{
    if (job->running) {
        job->running = 0;
        job->x->running--;
    }
    timerq_disarm (job->x->tq, &job->expire);
}

void execjob_finish (struct execjob *job, int status)
{
    char data[64];

    if (job->done || job->finished)
        return;
    job->finished = 1;
    job->status = status;
    stop_running (job);
    job->x->stats.finish++;
    post (job, "complete", json_pack ("{s:i}", "status", status));
    snprintf (data, sizeof (data), "{\"status\":%d}", status);
    respond (job, "finish", data);
}

int execjob_release (struct execjob *job, const struct idset *ranks)
{
    struct idset *rest = NULL;
    char *s = NULL, *data = NULL;
    int rc = -1;

    if (job->done)
        return 0;
    if (!job->R.ranks || !ranks || idset_empty (ranks)) {
        errno = EINVAL;
        return -1;
    }
    if (!(rest = idset_difference (ranks, job->R.ranks)) || !idset_empty (rest)
        || (job->released && idset_has_intersection (ranks, job->released))) {
        errno = rest ? EINVAL : errno;
        goto done;
    }
    idset_destroy (rest);
    if (!(rest = idset_difference (job->R.ranks, ranks))
        || (job->released && idset_subtract (rest, job->released) < 0))
        goto done;
    if ((!job->released
         && !(job->released = idset_create (0, IDSET_FLAG_AUTOGROW)))
        || !(s = idset_encode (ranks, IDSET_FLAG_RANGE))
        || !(data = malloc (strlen (s) + 32)))
        goto done;
    if (idset_add (job->released, ranks) < 0)
        goto done;
    sprintf (data, "{\"ranks\":\"%s\",\"final\":false}", s);
    job->x->stats.release++;
    respond (job, "release", data);
    rc = 0;
done:
    idset_destroy (rest);
    free (s);
    free (data);
    return rc;
}

static void reap_cb (struct flux_deferred *d)
{
    exec_t *x = (exec_t *)((char *)d - offsetof (struct exec, reaper));

    while (x->zombies) {
        struct execjob *job = x->zombies;
        x->zombies = job->next_zombie;
        free (job);
    }
}

static void impl_exit (struct execjob *job)
{
    if (job->impl && job->impl->exit && !job->impl_exited) {
        job->impl_exited = 1;
        job->impl->exit (job);
    }
    job->data = NULL;
}

/* Free what the job holds, but not the job itself. */
static void job_clear (struct execjob *job)
{
    waitlist_cancel (&job->x->kvs_wait, &job->kvs_wi);
    if (job->f) {
        flux_future_destroy (job->f);
        job->f = NULL;
        job->x->fetching--;
    }
    stop_running (job);
    idtab_remove (job->x->jobs, &job->entry);
    impl_exit (job);
    guest_destroy (job->guest);
    job->guest = NULL;
    flux_msg_decref (job->req);
    job->req = NULL;
    rset_clear (&job->R);
    json_decref (job->Rjson);
    idset_destroy (job->critical);
    job->critical = NULL;
    idset_destroy (job->released);
    job->released = NULL;
    held_clear (job);
}

/* The final release, then the job is forgotten. */
static void final_release (struct execjob *job)
{
    char *s = NULL, *data = NULL;
    struct idset *rest = NULL;

    release_held (job); /* start and finish go before the release */
    if (job->released && job->R.ranks
        && (rest = idset_difference (job->R.ranks, job->released))
        && (s = idset_encode (rest, IDSET_FLAG_RANGE))
        && (data = malloc (strlen (s) + 32)))
        sprintf (data, "{\"ranks\":\"%s\",\"final\":true}", s);
    job->x->stats.release++;
    respond (job, "release",
             data ? data : "{\"ranks\":\"all\",\"final\":true}");
    idset_destroy (rest);
    free (s);
    free (data);
    job_clear (job);
    /* callers up the stack may still hold the pointer: free it later */
    job->next_zombie = job->x->zombies;
    job->x->zombies = job;
    flux_reactor_defer (job->x->r, &job->x->reaper);
}

/* The implementation is finished with the job: it is forgotten by the
 * implementation now, and released once its guest namespace is closed
 * (done, copied to job.<id>.guest, its removal sent: guest_cb). */
void execjob_done (struct execjob *job)
{
    if (job->done)
        return;
    job->done = 1;
    stop_running (job);
    impl_exit (job);
    if (job->guest) {
        int rc = guest_close (job->guest);
        if (rc == 0)
            return;
        if (rc < 0)
            exec_log (job->x, LOG_ERR, "%ju: closing the guest namespace: %s",
                      (uintmax_t)job->entry.id, strerror (errno));
    }
    final_release (job);
}

void execjob_fatal (struct execjob *job, const char *fmt, ...)
{
    char note[256];
    va_list ap;

    if (job->done)
        return;
    va_start (ap, fmt);
    vsnprintf (note, sizeof (note), fmt, ap);
    va_end (ap);
    if (!job->exception) {
        job->exception = 1;
        respond_exception (job, "exec", note);
    }
    if (job->started && job->impl)
        job->impl->cancel (job);
    else
        execjob_done (job);
}

void execjob_raise (struct execjob *job, const char *type, const char *fmt, ...)
{
    char note[256];
    va_list ap;

    if (job->done || job->exception)
        return;
    va_start (ap, fmt);
    vsnprintf (note, sizeof (note), fmt, ap);
    va_end (ap);
    job->exception = 1;
    respond_exception (job, type, note);
}

void execjob_raise_nonfatal (struct execjob *job, int severity,
                             const char *type, const char *fmt, ...)
{
    char note[256];
    va_list ap;

    if (job->done || job->exception || severity < 1 || severity > 7)
        return;
    va_start (ap, fmt);
    vsnprintf (note, sizeof (note), fmt, ap);
    va_end (ap);
    respond_exception_sev (job, severity, type, note);
}

struct idset *execjob_shell_ranks (const struct execjob *job,
                                   const struct idset *ranks)
{
    struct idset *ids;
    unsigned int r, want, index = 0;

    if (!job->R.ranks || !ranks) {
        errno = EINVAL;
        return NULL;
    }
    if (!(ids = idset_create (0, IDSET_FLAG_AUTOGROW)))
        return NULL;
    /* both walks ascending: one pass over R's ranks */
    r = idset_first (job->R.ranks);
    for (want = idset_first (ranks); want != IDSET_INVALID_ID;
         want = idset_next (ranks, want)) {
        while (r != IDSET_INVALID_ID && r < want) {
            r = idset_next (job->R.ranks, r);
            index++;
        }
        if (r != want)
            continue; /* not a rank of the job */
        if (idset_set (ids, index) < 0) {
            idset_destroy (ids);
            return NULL;
        }
    }
    return ids;
}

bool execjob_critical (const struct execjob *job, const struct idset *ranks)
{
    struct idset *shell;
    bool critical;

    if (!job->critical)
        return true;
    if (!(shell = execjob_shell_ranks (job, ranks)))
        return true; /* cannot tell: the safe answer */
    critical = idset_has_intersection (shell, job->critical);
    idset_destroy (shell);
    return critical;
}

/* ---- start ---- */

static void start_impl (struct execjob *job)
{
    flux_error_t error;

    job->started = 1;
    if (job->reattach) /* a new job's "starting" went with "init" */
        post (job, "re-starting", NULL);
    if (job->impl->start (job, &error) < 0)
        execjob_fatal (job, "%s", error.text);
}

/* The status of the last "complete" in an exec.eventlog: 0, or -1 if
 * there is none. */
static int complete_status (const char *eventlog, int *status)
{
    json_t *log = eventlog ? eventlog_decode (eventlog) : NULL;
    json_t *entry, *context;
    size_t index;
    int rc = -1;

    json_array_foreach (log, index, entry)
    {
        const char *name;
        if (eventlog_entry_parse (entry, NULL, &name, &context) == 0
            && !strcmp (name, "complete")
            && json_unpack (context, "{s:i}", "status", status) == 0)
            rc = 0;
    }
    json_decref (log);
    return rc;
}

static void finished_continuation (flux_future_t *f, void *arg)
{
    struct execjob *job = arg;
    const char *eventlog = NULL;
    int status;
    bool found;

    job->f = NULL;
    found = flux_kvs_lookup_get (f, &eventlog) == 0
            && complete_status (eventlog, &status) == 0;
    flux_future_destroy (f);
    if (!found) {
        if (job->heard_status < 0) {
            start_impl (job); /* a graft of a job that was running */
            return;
        }
        /* the job manager heard the finish, but the namespace holding
         * "complete" was lost (the instance stopped before its copy) */
        status = job->heard_status;
        post (job, "complete", json_pack ("{s:i}", "status", status));
    }
    exec_log (job->x, LOG_INFO,
              "%ju: reattach: its shells completed (status %d) while no job "
              "manager heard the end: finished again",
              (uintmax_t)job->entry.id, status);
    job->started = 1;
    job->finished = 1;
    job->status = status;
    {
        char data[64];
        snprintf (data, sizeof (data), "{\"status\":%d}", status);
        respond (job, "finish", data); /* ignored if already heard */
    }
    execjob_done (job);
}

/* A reattach found job.<id>.guest a copy (guest_was_copied), or the job
 * manager says it heard the job's finish: if the exec.eventlog holds
 * "complete" (else: if the job manager heard the finish), the job's
 * shells finished while its finish or final release went unheard (the
 * job manager was away, or the instance stopped): the shells are gone,
 * so asking the agents for them would fail the job.  It is finished
 * again with the status it had, and released.  Otherwise (a graft of a
 * running job) the reattach goes on as usual. */
static void check_finished (struct execjob *job)
{
    flux_future_t *f;

    if (!(f = flux_kvs_lookup (job->x->h, guest_namespace (job->guest), 0,
                               "exec.eventlog"))
        || flux_future_then (f, -1., finished_continuation, job) < 0) {
        flux_future_destroy (f);
        start_impl (job);
        return;
    }
    job->f = f;
}

static void guest_cb (struct guest *g, enum guest_event ev, int errnum,
                      const char *errstr, void *arg)
{
    struct execjob *job = arg;

    switch (ev) {
        case GUEST_OPENED:
            if (errnum)
                execjob_fatal (job, "guest namespace: %s", errstr);
            else if (!job->done) {
                if (job->reattach
                    && (guest_was_copied (g) || job->heard_status >= 0))
                    check_finished (job);
                else
                    start_impl (job);
            }
            break;
        case GUEST_LINKED:
            release_held (job);
            break;
        case GUEST_ERROR: {
            bool linked = guest_is_linked (g);
            if (job->done && !job->exception) {
                /* a new job's namespace failed after the job ended (its
                 * shells start without waiting for it): an exception
                 * all the same (RFC 32: at any point) */
                char note[320];
                snprintf (note, sizeof (note), "exec.eventlog: %s", errstr);
                job->exception = 1;
                respond_exception (job, "exec", note);
            }
            else
                execjob_fatal (job, "exec.eventlog: %s", errstr);
            if (linked)
                release_held (job); /* the link failed: go on without */
            break;
        }
        case GUEST_CLOSED:
            final_release (job);
            break;
    }
}

/* R is known: open the guest namespace (init committed), then start. */
static void begin (struct execjob *job)
{
    if (job->exp_update >= 0.)
        job->R.expiration = job->exp_update;
    if (job->critical
        && idset_last (job->critical) >= idset_count (job->R.ranks)) {
        idset_destroy (job->critical);
        job->critical = NULL;
    }
    if (!(job->guest = guest_create (job->x->gs, job->entry.id, job->userid,
                                     guest_cb, job))
        || guest_open (job->guest, job->reattach) < 0)
        execjob_fatal (job, "guest namespace: %s", strerror (errno));
}

static int fetch_R (struct execjob *job);

static void fetch_R_continuation (flux_future_t *f, void *arg)
{
    struct execjob *job = arg;
    flux_error_t error;
    json_t *R;

    job->f = NULL;
    job->x->fetching--;
    if (flux_kvs_lookup_get_unpack (f, "o", &R) < 0) {
        if (errno == ENOSYS) {
            /* the kvs is unloading or absent: ask again on kvs.online (at
             * once if a new kvs is already up) */
            exec_t *x = job->x;
            if (waitlist_count (&x->kvs_wait) == 0)
                exec_log (x, LOG_WARNING,
                          "reading R: %s: waiting for the kvs to come back",
                          future_strerror (f, errno));
            flux_future_destroy (f);
            (void)waitlist_refused (&x->kvs_wait, &job->kvs_wi);
            return;
        }
        execjob_fatal (job, "reading R: %s", future_strerror (f, errno));
        flux_future_destroy (f);
        return;
    }
    if (rset_decode (R, &job->R, &error) < 0) {
        flux_future_destroy (f);
        execjob_fatal (job, "%s", error.text);
        return;
    }
    job->Rjson = json_incref (R);
    flux_future_destroy (f);
    begin (job);
}

static int fetch_R (struct execjob *job)
{
    char key[FLUID_STRING_MAX + 8];

    if (fluid_encode (key, sizeof (key), job->entry.id, FLUID_STRING_KVS) < 0)
        return -1;
    strcat (key, ".R");
    waitlist_sent (&job->x->kvs_wait, &job->kvs_wi);
    if (!(job->f = flux_kvs_lookup (job->x->h, NULL, 0, key)))
        return -1;
    if (flux_future_then (job->f, -1., fetch_R_continuation, job) < 0) {
        flux_future_destroy (job->f);
        job->f = NULL;
        return -1;
    }
    job->x->fetching++;
    return 0;
}

/* A reattach start for a job still active here, or a start from a new
 * job manager: the job manager restarted and lost the old stream.  Answer
 * on the new one from now on, and say again what the old one may not have
 * logged before it went: the start, and the finish of a job whose shells
 * are gone but whose resources are not released yet.  The job manager
 * ignores what it has already logged.
 */
static void adopt (struct execjob *job, const flux_msg_t *msg)
{
    flux_msg_t *req;

    if (!(req = flux_msg_copy (msg, false))) {
        flux_respond_error (job->x->h, msg, errno, NULL);
        return;
    }
    flux_msg_decref (job->req);
    job->req = req;
    job->reattach = 1;
    job->x->stats.adopt++;
    if (job->said_start)
        respond (job, "start", "{}");
    if (job->finished && !job->start_held) {
        char data[64];
        snprintf (data, sizeof (data), "{\"status\":%d}", job->status);
        respond (job, "finish", data);
    }
}

static int claim (struct execjob *job, json_t *jobspec)
{
    flux_error_t error;

    for (size_t i = 0; i < NIMPLS; i++) {
        int rc;
        job->impl_data = job->x->impl_data[i];
        if ((rc = impls[i]->init (job, jobspec, &error)) < 0) {
            job->impl_data = NULL;
            execjob_fatal (job, "%s", error.text);
            return -1;
        }
        if (rc > 0) {
            job->impl = impls[i];
            return 0;
        }
    }
    job->impl_data = NULL;
    execjob_fatal (job, NOT_IMPLEMENTED);
    return -1;
}

static struct execjob *job_create (exec_t *x, const flux_msg_t *msg,
                                   json_int_t id, int userid, bool reattach)
{
    struct execjob *job;

    if (!(job = calloc (1, sizeof (*job))))
        return NULL;
    job->x = x;
    job->entry.id = (uint64_t)id;
    job->userid = (uint32_t)userid;
    job->reattach = reattach;
    job->exp_update = -1.;
    job->heard_status = -1;
    tq_entry_init (&job->expire, expire_cb);
    waitlist_item_init (&job->kvs_wi);
    if (!(job->req = flux_msg_copy (msg, false))
        || idtab_insert (x->jobs, &job->entry) < 0) {
        int saved_errno = errno;
        flux_msg_decref (job->req);
        free (job);
        errno = saved_errno;
        return NULL;
    }
    return job;
}

void exec_start_request (exec_t *x, const flux_msg_t *msg)
{
    json_int_t id;
    int userid, reattach;
    json_t *jobspec, *R = NULL, *finish = NULL;
    struct execjob *job;
    flux_error_t error;
    char errbuf[256];
    const char *errmsg = NULL;

    if (flux_msg_unpack (msg, "{s:I s:i s:o s:b s?o s?o !}", "id", &id,
                         "userid", &userid, "jobspec", &jobspec, "reattach",
                         &reattach, "R", &R, "finish", &finish)
        < 0) {
        snprintf (errbuf, sizeof (errbuf), "malformed start request: %s",
                  flux_msg_last_error (msg));
        errmsg = errbuf;
        errno = EPROTO;
        goto error;
    }
    if (id < 0 || !json_is_object (jobspec) || (R && !json_is_object (R))
        || (finish
            && (!json_is_integer (finish) || json_integer_value (finish) < 0
                || json_integer_value (finish) > INT_MAX || !reattach))) {
        errmsg = "malformed start request: id must be >= 0, jobspec and R"
                 " objects, finish a status >= 0 on reattach only";
        errno = EPROTO;
        goto error;
    }
    if (!flux_msg_is_streaming (msg)) {
        errmsg = "start requires the streaming flag";
        errno = EPROTO;
        goto error;
    }
    if ((job = lookup_any (x, (flux_jobid_t)id))) {
        /* a reattach start, or a start from another sender than the one
         * that started the job (a job manager reloaded before it logged
         * the start event replays the job as not started): the new job
         * manager takes the job over */
        if (reattach || !flux_msg_route_match_first (job->req, msg)) {
            adopt (job, msg);
            return;
        }
        snprintf (errbuf, sizeof (errbuf),
                  "job %ju has a start request already", (uintmax_t)id);
        errmsg = errbuf;
        errno = EEXIST;
        goto error;
    }
    if (!(job = job_create (x, msg, id, userid, reattach)))
        goto error;
    if (finish)
        job->heard_status = (int)json_integer_value (finish);
    x->stats.start++;
    if (reattach)
        x->stats.reattach++;
    if (claim (job, jobspec) < 0)
        return;
    if (R) {
        if (rset_decode (R, &job->R, &error) < 0)
            execjob_fatal (job, "%s", error.text);
        else {
            job->Rjson = json_incref (R);
            begin (job);
        }
    }
    else if (fetch_R (job) < 0)
        execjob_fatal (job, "fetching R: %s", strerror (errno));
    return;
error:
    x->stats.bad_request++;
    if (errmsg)
        exec_log (x, LOG_ERR, "start: %s", errmsg);
    if (flux_respond_error (x->h, msg, errno, errmsg) < 0)
        exec_log (x, LOG_ERR, "start: responding: %s", strerror (errno));
}

/* ---- the kvs back (kvs.online) ---- */

static void kvs_refetch (struct waitlist *wl, struct waitlist_item *it,
                         void *arg)
{
    struct execjob *job = waitlist_entry (it, struct execjob, kvs_wi);

    if (fetch_R (job) < 0)
        execjob_fatal (job, "fetching R: %s", strerror (errno));
}

void exec_kvs_online (exec_t *x)
{
    size_t n = waitlist_count (&x->kvs_wait);

    if (n > 0)
        exec_log (x, LOG_INFO, "the kvs is back: reading R of %zu jobs again",
                  n);
    waitlist_online (&x->kvs_wait);
    guestns_kvs_online (x->gs);
}

/* ---- exceptions, expiration updates, critical ranks ---- */

void exec_exception_event (exec_t *x, const flux_msg_t *msg)
{
    json_int_t id;
    const char *type;
    int severity;
    struct execjob *job;

    if (flux_event_unpack (msg, NULL, "{s:I s:s s:i}", "id", &id, "type", &type,
                           "severity", &severity)
        < 0) {
        exec_log (x, LOG_ERR, "malformed job-exception event: %s",
                  flux_msg_last_error (msg));
        return;
    }
    if (severity != 0 || !(job = exec_lookup (x, (flux_jobid_t)id)))
        return; /* not here, or done (its release follows) */
    x->stats.cancel++;
    job->exception = 1; /* the job manager knows: no exception response */
    if (job->started)
        job->impl->cancel (job);
    else
        execjob_done (job);
}

void exec_expiration_request (exec_t *x, const flux_msg_t *msg)
{
    json_int_t id;
    double expiration;
    struct execjob *job;
    const char *errmsg = NULL;

    if (flux_request_unpack (msg, NULL, "{s:I s:F !}", "id", &id, "expiration",
                             &expiration)
        < 0) {
        errmsg = "expected {id:I, expiration:F}";
        goto error;
    }
    if (!(expiration >= 0.) || expiration > 1e12) {
        errno = EINVAL;
        errmsg = "expiration must be a time >= 0";
        goto error;
    }
    if (!(job = exec_lookup (x, (flux_jobid_t)id))) {
        errno = ENOENT;
        errmsg = "job is not active in job-exec";
        goto error;
    }
    if (!job->R.ranks)
        job->exp_update = expiration;
    else {
        job->R.expiration = expiration;
        arm_expiration (job);
    }
    exec_log (x, LOG_DEBUG, "%ju: expiration updated to %.3f", (uintmax_t)id,
              expiration);
    if (flux_respond (x->h, msg, NULL) < 0)
        exec_log (x, LOG_ERR, "expiration: responding: %s", strerror (errno));
    return;
error:
    if (errno == EPROTO)
        x->stats.bad_request++;
    if (flux_respond_error (x->h, msg, errno, errmsg) < 0)
        exec_log (x, LOG_ERR, "expiration: responding: %s", strerror (errno));
}

void exec_critical_ranks_request (exec_t *x, const flux_msg_t *msg)
{
    json_int_t id;
    const char *ranks;
    struct execjob *job;
    struct idset *ids;
    idset_error_t e;
    char errbuf[200];
    const char *errmsg = NULL;

    if (flux_request_unpack (msg, NULL, "{s:I s:s !}", "id", &id, "ranks",
                             &ranks)
        < 0) {
        errmsg = "expected {id:I, ranks:s}";
        x->stats.bad_request++;
        goto error;
    }
    if (!(job = exec_lookup (x, (flux_jobid_t)id))) {
        errno = ENOENT;
        errmsg = "job is not active in job-exec";
        goto error;
    }
    if (flux_msg_authorize (msg, job->userid) < 0) {
        errmsg = "guests may only set the critical ranks of their own jobs";
        goto error;
    }
    if (!(ids = idset_decode_ex (ranks, -1, -1, 0, &e))) {
        snprintf (errbuf, sizeof (errbuf), "ranks: %s", e.text);
        errmsg = errbuf;
        goto error;
    }
    if (job->R.ranks && !idset_empty (ids)
        && idset_last (ids) >= idset_count (job->R.ranks)) {
        snprintf (errbuf, sizeof (errbuf),
                  "ranks: the job has shell ranks 0-%zu only",
                  idset_count (job->R.ranks) - 1);
        errmsg = errbuf;
        idset_destroy (ids);
        errno = EINVAL;
        goto error;
    }
    idset_destroy (job->critical);
    job->critical = ids;
    if (flux_respond (x->h, msg, NULL) < 0)
        exec_log (x, LOG_ERR, "critical-ranks: responding: %s",
                  strerror (errno));
    return;
error:
    if (flux_respond_error (x->h, msg, errno, errmsg) < 0)
        exec_log (x, LOG_ERR, "critical-ranks: responding: %s",
                  strerror (errno));
}

void exec_stats_request (exec_t *x, const flux_msg_t *msg)
{
    json_t *o, *impl;

    if (!(o = json_pack ("{s:s s:{s:I s:I s:I} s:{s:I s:I s:I s:I s:I s:I"
                         " s:I s:I s:I s:I}}",
                         "service", x->service, "jobs", "active",
                         (json_int_t)idtab_count (x->jobs), "fetching",
                         (json_int_t)x->fetching, "running",
                         (json_int_t)x->running, "count", "start",
                         (json_int_t)x->stats.start, "reattach",
                         (json_int_t)x->stats.reattach, "adopt",
                         (json_int_t)x->stats.adopt, "started",
                         (json_int_t)x->stats.started, "finish",
                         (json_int_t)x->stats.finish, "release",
                         (json_int_t)x->stats.release, "exception",
                         (json_int_t)x->stats.exception, "timeout",
                         (json_int_t)x->stats.timeout, "cancel",
                         (json_int_t)x->stats.cancel, "bad_request",
                         (json_int_t)x->stats.bad_request))
        || !(impl = json_object ())
        || json_object_set_new (o, "implementations", impl) < 0)
        goto nomem;
    {
        const struct guestns_stats *g = guestns_stats (x->gs);
        json_t *gst = json_pack (
            "{s:I s:I s:I s:I s:I s:I s:I s:I s:I}", "opened",
            (json_int_t)g->opened, "closed", (json_int_t)g->closed, "adopted",
            (json_int_t)g->adopted, "restored", (json_int_t)g->restored,
            "commits", (json_int_t)g->commits, "events", (json_int_t)g->events,
            "primary_commits", (json_int_t)g->primary_commits, "primary_ops",
            (json_int_t)g->primary_ops, "errors", (json_int_t)g->errors);
        if (!gst || json_object_set_new (o, "guest", gst) < 0)
            goto nomem;
    }
    for (size_t i = 0; i < NIMPLS; i++) {
        json_t *s = impls[i]->stats ? impls[i]->stats (x->impl_data[i])
                                    : json_object ();
        if (!s || json_object_set_new (impl, impls[i]->name, s) < 0)
            goto nomem;
    }
    if (flux_respond_pack (x->h, msg, "O", o) < 0)
        exec_log (x, LOG_ERR, "stats-get: responding: %s", strerror (errno));
    json_decref (o);
    return;
nomem:
    json_decref (o);
    flux_respond_error (x->h, msg, ENOMEM, NULL);
}

/* ---- create / destroy ---- */

void exec_unloading (exec_t *x)
{
    if (x && exec_job_count (x) > 0)
        (void)guestns_graft (x->gs, 10.);
}

exec_t *exec_create (flux_t *h, uint32_t rank, const char *service,
                     flux_error_t *error)
{
    exec_t *x;

    if (!h || !service) {
        errno = EINVAL;
        errprintf (error, "exec_create: missing argument");
        return NULL;
    }
    if (!(x = calloc (1, sizeof (*x))))
        goto nomem;
    x->h = h;
    x->r = flux_get_reactor (h);
    x->rank = rank;
    flux_deferred_init (&x->reaper, reap_cb);
    waitlist_init (&x->kvs_wait, kvs_refetch, x);
    if (!(x->service = strdup (service)) || !(x->jobs = idtab_create ())
        || !(x->tq = timerq_create (flux_reactor_uv (x->r)))
        || !(x->gs = guestns_create (h, x->tq)))
        goto nomem;
    for (size_t i = 0; i < NIMPLS; i++) {
        if (impls[i]->setup
            && impls[i]->setup (x, &x->impl_data[i], error) < 0) {
            exec_destroy (x);
            return NULL;
        }
        x->impl_setup[i] = true;
    }
    return x;
nomem:
    errprintf (error, "out of memory");
    exec_destroy (x);
    errno = ENOMEM;
    return NULL;
}

static void forget (struct idtab_entry *e, void *arg)
{
    struct execjob ***pp = arg;
    *(*pp)++ = (struct execjob *)e;
}

void exec_destroy (exec_t *x)
{
    if (x) {
        int saved_errno = errno;
        if (x->jobs) {
            size_t n = idtab_count (x->jobs);
            struct execjob **jobs = calloc (n + 1, sizeof (*jobs));
            struct execjob **p = jobs;
            if (jobs) {
                idtab_foreach (x->jobs, forget, &p);
                for (size_t i = 0; i < n; i++) {
                    if (jobs[i]->done) {
                        /* closing its guest namespace: release it now,
                         * leaving the namespace as it is */
                        exec_log (x, LOG_WARNING,
                                  "%ju: unloading: released before its "
                                  "guest namespace %s was closed",
                                  (uintmax_t)jobs[i]->entry.id,
                                  guest_namespace (jobs[i]->guest));
                        final_release (jobs[i]);
                        continue;
                    }
                    job_clear (jobs[i]);
                    free (jobs[i]);
                }
                free (jobs);
            }
        }
        flux_reactor_undefer (&x->reaper);
        reap_cb (&x->reaper);
        for (size_t i = 0; i < NIMPLS; i++) {
            if (x->impl_setup[i] && impls[i]->teardown)
                impls[i]->teardown (x->impl_data[i]);
        }
        guestns_destroy (x->gs);
        timerq_destroy (x->tq);
        idtab_destroy (x->jobs);
        free (x->service);
        free (x);
        errno = saved_errno;
    }
}
