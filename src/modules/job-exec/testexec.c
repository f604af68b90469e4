/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* testexec.c - simulated execution: jobs whose jobspec has
 * attributes.system.exec.test (knobs in testconf.h) "run" for
 * run_duration on a timer, with no processes at all.
 *
 * A run_duration of 0 costs no timer: the job goes on the reactor's
 * deferred list (one idle handler drains it) and finishes on the next
 * loop turn.  Other durations use the core's timer queue.
 *
 * Since there are no shells, testexec plays their part for the events
 * shells would receive: shell-<id>.kill {signum} (from job-manager.kill)
 * ends a running job with that signal as its wait status, when the
 * signal's default action terminates a process; other signals are
 * ignored, as a process with default dispositions would.  A cancel
 * (severity 0 exception) ends a running job with the wait status of
 * SIGKILL, 9.
 *
 * job-exec.override (user, job owner) {jobid:I, event:"start"|"finish",
 * status?:i} -> {}: the test hook of flux-core.  ENOENT (no such job),
 * EPERM, EINVAL (job not in override mode, already running, not
 * running, unknown event).
 *
 * Reattach (the job manager restarted): the job's eventlog gives the
 * time of its "start" event; the job finishes at once if run_duration
 * has elapsed since then (or reattach_finish is set, or no start event
 * is found), else it runs for the time that remains.  An early release
 * (release_early) is not made again if the eventlog holds a partial
 * "release" already; else it comes at its time, or at once if due.
 *
 * Lost ranks: as realexec learns from the exec agents that a broker was
 * lost, testexec watches the broker.online group (a streaming groups.get
 * to rank 0, where job-exec runs).  A rank that leaves it before the
 * instance shuts down (rank 0's owner-sent broker.shutdown event) was
 * lost.  As realexec does, critical ranks decide what follows
 * (job-exec.critical-ranks, all shell ranks by default): a running
 * simulated job that lost a critical shell rank gets a "node-failure"
 * exception and ends at once as if SIGKILLed, releasing all its ranks;
 * one that lost only non-critical ones gets a severity 2 "node-failure"
 * ("node failure on HOST (shell rank N)"), the lost ranks are released
 * at once and the job runs on (if no rank is left, it finishes with
 * status 0).  The resource module marks the lost ranks down, so they are
 * shown down, not allocated.  Only the running jobs are kept in a list
 * for this, so a change costs one pass over them.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "impl.h"
#include "libeventlog/eventlog.h"
#include "libkvs/kvs.h"
#include "libutil/fluid.h"
#include "testconf.h"

struct testexec {
    exec_t *x;
    flux_msg_handler_t **handlers;
    struct testjob *running; /* started and not done: a list */
    flux_future_t *online_f; /* groups.get broker.online, streaming */
    struct idset *online;    /* its members last seen (NULL: not yet) */
    bool shutdown;           /* broker.shutdown seen: a leave is no loss */
    struct {
        unsigned long jobs, timers, immediate, overrides, kills, reattach, lost;
        unsigned long lost_noncritical;
    } stats;
};

struct testjob {
    struct execjob *job;
    struct testexec *te;
    struct testconf conf;
    struct tq_entry timer;
    struct tq_entry release_timer; /* release_early */
    bool released;                 /* the early release was made */
    struct flux_deferred now;
    flux_future_t *f;   /* reattach: eventlog lookup */
    bool waiting;       /* start called, override start not yet received */
    bool go;            /* override start received */
    bool linked;        /* in te->running */
    struct idset *lost; /* non-critical ranks lost (released), or NULL */
    struct testjob *prev, *next;
};

static struct testjob *container_of_timer (struct tq_entry *e)
{
    return (struct testjob *)((char *)e - offsetof (struct testjob, timer));
}

static struct testjob *container_of_release (struct tq_entry *e)
{
    return (struct testjob *)((char *)e
                              - offsetof (struct testjob, release_timer));
}

static struct testjob *container_of_now (struct flux_deferred *d)
{
    return (struct testjob *)((char *)d - offsetof (struct testjob, now));
}

/* True if the default action of signum terminates a process. */
static bool terminates (int signum)
{
    switch (signum) {
        case SIGCHLD:
        case SIGCONT:
        case SIGSTOP:
        case SIGTSTP:
        case SIGTTIN:
        case SIGTTOU:
        case SIGURG:
        case SIGWINCH:
            return false;
        default:
            return signum > 0 && signum < NSIG;
    }
}

static void stop_clock (struct testjob *tj)
{
    timerq_disarm (exec_timerq (tj->te->x), &tj->timer);
    timerq_disarm (exec_timerq (tj->te->x), &tj->release_timer);
    flux_reactor_undefer (&tj->now);
}

/* The job's ranks not lost (released already) to a non-critical loss: a
 * new idset, NULL on ENOMEM or before R is known. */
static struct idset *live_ranks (struct testjob *tj)
{
    const struct idset *ranks = execjob_ranks (tj->job);
    struct idset *live = ranks ? idset_copy (ranks) : NULL;

    if (live && tj->lost && idset_subtract (live, tj->lost) < 0) {
        idset_destroy (live);
        return NULL;
    }
    return live;
}

/* The simulated processes have exited with status: finish, then release
 * (one rank at a time if asked), then the final release.
 */
static void complete (struct testjob *tj, int status)
{
    struct execjob *job = tj->job;
    struct idset *ranks = live_ranks (tj);

    stop_clock (tj);
    execjob_finish (job, status);
    if (tj->conf.release_per_rank && !tj->released && ranks
        && idset_count (ranks) > 1) {
        unsigned int last = idset_last (ranks);
        struct idset *one = idset_create (0, IDSET_FLAG_AUTOGROW);
        for (unsigned int r = idset_first (ranks); one && r != last;
             r = idset_next (ranks, r)) {
            if (idset_set (one, r) < 0 || execjob_release (job, one) < 0
                || idset_clear (one, r) < 0) {
                exec_log (tj->te->x, LOG_ERR, "%ju: release of rank %u: %s",
                          (uintmax_t)execjob_id (job), r, strerror (errno));
                break;
            }
        }
        idset_destroy (one);
    }
    idset_destroy (ranks);
    execjob_done (job); /* frees tj */
}

/* release_early: all ranks but the last go while the job runs. */
static void release_cb (struct tq_entry *e)
{
    struct testjob *tj = container_of_release (e);
    struct idset *some;

    if (tj->released || !execjob_is_running (tj->job))
        return;
    if (!(some = live_ranks (tj)) || idset_count (some) < 2) {
        idset_destroy (some);
        return;
    }
    if (idset_clear (some, idset_last (some)) < 0
        || execjob_release (tj->job, some) < 0)
        exec_log (tj->te->x, LOG_ERR, "%ju: early release: %s",
                  (uintmax_t)execjob_id (tj->job), strerror (errno));
    else
        tj->released = true;
    idset_destroy (some);
}

static void arm_release (struct testjob *tj, double delay)
{
    if (tj->released || tj->conf.release_early < 0.)
        return;
    if (timerq_arm (exec_timerq (tj->te->x), &tj->release_timer,
                    delay > 0. ? delay : 0.)
        < 0)
        exec_log (tj->te->x, LOG_ERR, "%ju: cannot arm the release timer: %s",
                  (uintmax_t)execjob_id (tj->job), strerror (errno));
}

static void timer_cb (struct tq_entry *e)
{
    struct testjob *tj = container_of_timer (e);
    complete (tj, tj->conf.wait_status);
}

static void now_cb (struct flux_deferred *d)
{
    struct testjob *tj = container_of_now (d);
    complete (tj, tj->conf.wait_status);
}

static void link_running (struct testjob *tj)
{
    struct testexec *te = tj->te;

    if (tj->linked)
        return;
    tj->prev = NULL;
    tj->next = te->running;
    if (te->running)
        te->running->prev = tj;
    te->running = tj;
    tj->linked = true;
}

static void unlink_running (struct testjob *tj)
{
    struct testexec *te = tj->te;

    if (!tj->linked)
        return;
    if (tj->prev)
        tj->prev->next = tj->next;
    else
        te->running = tj->next;
    if (tj->next)
        tj->next->prev = tj->prev;
    tj->linked = false;
}

/* Send the start response and set the clock for duration seconds (and
 * release_delay for release_early). */
static void run (struct testjob *tj, double duration, double release_delay)
{
    struct execjob *job = tj->job;

    tj->waiting = false;
    execjob_started (job);
    if (!execjob_is_running (job))
        return; /* it failed (e.g. started after its expiration) */
    link_running (tj);
    if (tj->conf.mock == TESTCONF_MOCK_RUN) {
        execjob_fatal (job, "mock run exception generated");
        return;
    }
    arm_release (tj, release_delay);
    if (isinf (duration) || (tj->conf.override && tj->conf.run_duration <= 0.))
        return; /* until job-exec.override finish, a kill or a cancel */
    if (duration <= 0.) {
        tj->te->stats.immediate++;
        flux_reactor_defer (flux_get_reactor (exec_handle (tj->te->x)),
                            &tj->now);
        return;
    }
    tj->te->stats.timers++;
    if (timerq_arm (exec_timerq (tj->te->x), &tj->timer, duration) < 0)
        execjob_fatal (job, "cannot arm the run timer: %s", strerror (errno));
}

/* ---- reattach ---- */

/* The time of the start event (-1 if none); *released: a partial
 * release event is there. */
static double start_time (const char *eventlog, bool *released)
{
    json_t *log = eventlog ? eventlog_decode (eventlog) : NULL;
    json_t *entry, *context;
    size_t index;
    double t = -1.;

    *released = false;
    json_array_foreach (log, index, entry)
    {
        double timestamp;
        const char *name;
        int final = 1;
        if (eventlog_entry_parse (entry, &timestamp, &name, &context) < 0)
            continue;
        if (!strcmp (name, "start") && t < 0.)
            t = timestamp;
        else if (!strcmp (name, "release")
                 && json_unpack (context, "{s:b}", "final", &final) == 0
                 && !final)
            *released = true;
    }
    json_decref (log);
    return t;
}

static void reattach_continuation (flux_future_t *f, void *arg)
{
    struct testjob *tj = arg;
    const char *eventlog;
    double started, remaining = 0., release_delay = 0.;
    struct timespec ts;
    bool released;

    tj->f = NULL;
    if (flux_kvs_lookup_get (f, &eventlog) < 0) {
        execjob_fatal (tj->job, "reattach: reading the eventlog: %s",
                       future_strerror (f, errno));
        flux_future_destroy (f);
        return;
    }
    started = start_time (eventlog, &released);
    flux_future_destroy (f);
    clock_gettime (CLOCK_REALTIME, &ts);
    if (started > 0. && !tj->conf.reattach_finish) {
        double elapsed = ts.tv_sec + ts.tv_nsec * 1e-9 - started;
        remaining = tj->conf.run_duration - elapsed;
        if (remaining < 0.)
            remaining = 0.;
        release_delay = tj->conf.release_early - elapsed;
    }
    tj->released = released;
    run (tj, isinf (tj->conf.run_duration) ? INFINITY : remaining,
         release_delay);
}

static int reattach (struct testjob *tj, flux_error_t *error)
{
    char key[FLUID_STRING_MAX + 16];
    flux_t *h = exec_handle (tj->te->x);

    tj->te->stats.reattach++;
    if (fluid_encode (key, sizeof (key), execjob_id (tj->job), FLUID_STRING_KVS)
            < 0
        || !strcat (key, ".eventlog")
        || !(tj->f = flux_kvs_lookup (h, NULL, 0, key))
        || flux_future_then (tj->f, -1., reattach_continuation, tj) < 0) {
        flux_future_destroy (tj->f);
        tj->f = NULL;
        return errprintf (error, "reattach: looking up the eventlog: %s",
                          strerror (errno));
    }
    return 0;
}

/* ---- the implementation ---- */

static int testexec_init (struct execjob *job, json_t *jobspec,
                          flux_error_t *error)
{
    struct testexec *te = execjob_impl_data (job);
    struct testconf conf;
    struct testjob *tj;
    int rc;

    if ((rc = testconf_parse (jobspec, &conf, error)) <= 0)
        return rc;
    if (conf.mock == TESTCONF_MOCK_INIT)
        return errprintf (error, "mock initialization exception generated");
    if (!(tj = calloc (1, sizeof (*tj))))
        return errprintf (error, "out of memory");
    tj->job = job;
    tj->te = te;
    tj->conf = conf;
    tq_entry_init (&tj->timer, timer_cb);
    tq_entry_init (&tj->release_timer, release_cb);
    flux_deferred_init (&tj->now, now_cb);
    execjob_set_data (job, tj);
    te->stats.jobs++;
    return 1;
}

static int testexec_start (struct execjob *job, flux_error_t *error)
{
    struct testjob *tj = execjob_data (job);

    if (execjob_reattach (job))
        return reattach (tj, error);
    if (tj->conf.override && !tj->go) {
        tj->waiting = true;
        return 0;
    }
    run (tj, tj->conf.run_duration, tj->conf.release_early);
    return 0;
}

static void testexec_kill (struct execjob *job, int signum)
{
    struct testjob *tj = execjob_data (job);

    if (tj && execjob_is_running (job) && terminates (signum))
        complete (tj, signum); /* wait status of a signaled process */
}

static void testexec_cancel (struct execjob *job)
{
    struct testjob *tj = execjob_data (job);

    if (tj && execjob_is_running (job))
        complete (tj, SIGKILL);
    else
        execjob_done (job); /* nothing ever ran */
}

static void testexec_exit (struct execjob *job)
{
    struct testjob *tj = execjob_data (job);

    if (tj) {
        stop_clock (tj);
        unlink_running (tj);
        flux_future_destroy (tj->f);
        idset_destroy (tj->lost);
        free (tj);
    }
}

/* ---- lost ranks ---- */

/* A job lost ranks gone, none of them holding a critical shell rank:
 * as realexec, a severity 2 node-failure; the lost ranks are released
 * now and the job runs on, or finishes if nothing is left.  -1 if the
 * ranks could not be set aside (the caller then ends the job). */
static int lost_noncritical (struct testjob *tj, const struct idset *gone)
{
    const struct idset *released = execjob_released (tj->job);
    struct idset *live, *rel = NULL;
    char where[200];
    int rc = -1;

    if (!tj->lost && !(tj->lost = idset_create (0, IDSET_FLAG_AUTOGROW)))
        return -1;
    if (idset_add (tj->lost, gone) < 0 || !(live = live_ranks (tj)))
        return -1;
    /* an early release may have let some go already */
    if (!(rel = idset_copy (gone))
        || (released
            && (idset_subtract (rel, released) < 0
                || idset_subtract (live, released) < 0)))
        goto done;
    tj->te->stats.lost_noncritical++;
    execjob_where_shells (tj->job, gone, where, sizeof (where));
    execjob_raise_nonfatal (tj->job, 2, "node-failure", "node failure on %s",
                            where);
    if (idset_empty (live))
        complete (tj, 0); /* nothing left to run: frees tj */
    else if (!idset_empty (rel) && execjob_release (tj->job, rel) < 0)
        exec_log (tj->te->x, LOG_ERR, "%ju: releasing lost ranks: %s",
                  (uintmax_t)execjob_id (tj->job), strerror (errno));
    rc = 0;
done:
    idset_destroy (rel);
    idset_destroy (live);
    return rc;
}

/* ranks were lost: every running job that has one of them ends, or goes
 * on when none of its lost ranks is critical. */
static void lost_ranks (struct testexec *te, const struct idset *ranks)
{
    struct testjob *tj = te->running, *next;

    for (; tj; tj = next) {
        const struct idset *mine = execjob_ranks (tj->job);
        struct idset *gone;
        char where[200] = "lost ranks";

        next = tj->next; /* complete() frees tj */
        if (!mine || !idset_has_intersection (mine, ranks))
            continue;
        te->stats.lost++;
        if ((gone = idset_intersect (mine, ranks)) && tj->lost)
            (void)idset_subtract (gone, tj->lost); /* lost already */
        if (gone && idset_empty (gone)) {
            idset_destroy (gone);
            continue;
        }
        if (gone && !execjob_critical (tj->job, gone)
            && lost_noncritical (tj, gone) == 0) {
            idset_destroy (gone);
            continue;
        }
        if (gone)
            execjob_where (tj->job, gone, where, sizeof (where));
        execjob_raise (tj->job, "node-failure", "node failure on %s", where);
        idset_destroy (gone);
        complete (tj, SIGKILL);
    }
}

static void online_continuation (flux_future_t *f, void *arg)
{
    struct testexec *te = arg;
    const char *members;
    struct idset *now, *gone = NULL;

    if (flux_rpc_get_unpack (f, "{s:s}", "members", &members) < 0) {
        exec_log (te->x, LOG_WARNING,
                  "groups.get broker.online: %s: lost ranks will not end "
                  "simulated jobs",
                  future_strerror (f, errno));
        flux_future_destroy (f);
        te->online_f = NULL;
        return;
    }
    if (!(now = idset_decode (members))) {
        exec_log (te->x, LOG_ERR, "groups.get broker.online: bad members %s",
                  members);
        flux_future_reset (f);
        return;
    }
    if (te->online && !te->shutdown
        && (gone = idset_difference (te->online, now)) && !idset_empty (gone))
        lost_ranks (te, gone);
    idset_destroy (gone);
    idset_destroy (te->online);
    te->online = now;
    flux_future_reset (f);
}

/* From rank 0 as it begins to shut down (owner only: the handler
 * table's role mask), before any broker leaves broker.online. */
static void shutdown_cb (flux_t *h, flux_msg_handler_t *mh,
                         const flux_msg_t *msg, void *arg)
{
    struct testexec *te = arg;

    te->shutdown = true;
}

/* ---- job-exec.override and shell-<id>.kill ---- */

static struct testjob *lookup (struct testexec *te, flux_jobid_t id)
{
    struct execjob *job = exec_lookup (te->x, id);

    if (!job || execjob_impl (job) != &testexec_impl)
        return NULL;
    return execjob_data (job);
}

static void override_cb (flux_t *h, flux_msg_handler_t *mh,
                         const flux_msg_t *msg, void *arg)
{
    struct testexec *te = arg;
    json_int_t id;
    const char *event, *errmsg = NULL;
    int status = 0;
    struct testjob *tj;

    if (flux_request_unpack (msg, NULL, "{s:I s:s s?i !}", "jobid", &id,
                             "event", &event, "status", &status)
        < 0) {
        errmsg = "expected {jobid:I, event:s, status?:i}";
        goto error;
    }
    if (!(tj = lookup (te, (flux_jobid_t)id))) {
        errno = ENOENT;
        errmsg = "Job not found";
        goto error;
    }
    if (flux_msg_authorize (msg, execjob_userid (tj->job)) < 0) {
        errmsg = "Permission denied";
        goto error;
    }
    errno = EINVAL;
    if (!tj->conf.override) {
        errmsg = "Job not in exec override mode";
        goto error;
    }
    te->stats.overrides++;
    if (!strcmp (event, "start")) {
        if (tj->go || execjob_is_running (tj->job)) {
            errmsg = "Job already running";
            goto error;
        }
        tj->go = true;
        if (tj->waiting)
            run (tj, tj->conf.run_duration, tj->conf.release_early);
    }
    else if (!strcmp (event, "finish")) {
        if (!execjob_is_running (tj->job)) {
            errmsg = "Job not running";
            goto error;
        }
        complete (tj, status);
    }
    else {
        errmsg = "Invalid event";
        goto error;
    }
    if (flux_respond (h, msg, NULL) < 0)
        exec_log (te->x, LOG_ERR, "override: responding: %s", strerror (errno));
    return;
error:
    if (flux_respond_error (h, msg, errno, errmsg) < 0)
        exec_log (te->x, LOG_ERR, "override: responding: %s", strerror (errno));
}

static void kill_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    struct testexec *te = arg;
    const char *topic;
    char *end;
    unsigned long long id;
    int signum;
    struct testjob *tj;

    if (flux_event_unpack (msg, &topic, "{s:i}", "signum", &signum) < 0
        || strncmp (topic, "shell-", 6) != 0
        || (id = strtoull (topic + 6, &end, 10), end == topic + 6)
        || strcmp (end, ".kill") != 0) {
        exec_log (te->x, LOG_ERR, "malformed shell kill event");
        return;
    }
    if (!(tj = lookup (te, (flux_jobid_t)id)))
        return; /* not a simulated job of ours */
    te->stats.kills++;
    testexec_kill (tj->job, signum);
}

static const struct flux_msg_handler_spec htab[] = {
    {FLUX_MSGTYPE_REQUEST, "job-exec.override", override_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_EVENT, "shell-*.kill", kill_cb, 0},
    {FLUX_MSGTYPE_EVENT, "broker.shutdown", shutdown_cb, 0},
    FLUX_MSGHANDLER_TABLE_END,
};

static int testexec_setup (exec_t *x, void **data, flux_error_t *error)
{
    struct testexec *te;
    flux_t *h = exec_handle (x);

    if (!(te = calloc (1, sizeof (*te))))
        return errprintf (error, "out of memory");
    te->x = x;
    if (flux_msg_handler_addvec (h, htab, te, &te->handlers) < 0
        || flux_event_subscribe (h, "shell-") < 0
        || flux_event_subscribe (h, "broker.shutdown") < 0) {
        int saved_errno = errno;
        errprintf (error, "testexec: setting up handlers: %s",
                   strerror (errno));
        flux_msg_handler_delvec (te->handlers);
        free (te);
        errno = saved_errno;
        return -1;
    }
    if (!(te->online_f = flux_rpc_pack (h, "groups.get", 0, FLUX_RPC_STREAMING,
                                        "{s:s}", "name", "broker.online"))
        || flux_future_then (te->online_f, -1., online_continuation, te) < 0) {
        exec_log (x, LOG_WARNING,
                  "groups.get broker.online: %s: lost ranks will not end "
                  "simulated jobs",
                  strerror (errno));
        flux_future_destroy (te->online_f);
        te->online_f = NULL;
    }
    *data = te;
    return 0;
}

static void testexec_teardown (void *data)
{
    struct testexec *te = data;

    if (te) {
        flux_msg_handler_delvec (te->handlers);
        flux_future_destroy (te->online_f);
        idset_destroy (te->online);
        free (te);
    }
}

static json_t *testexec_stats (void *data)
{
    struct testexec *te = data;

    return json_pack (
        "{s:I s:I s:I s:I s:I s:I s:I s:I}", "jobs", (json_int_t)te->stats.jobs,
        "timers", (json_int_t)te->stats.timers, "immediate",
        (json_int_t)te->stats.immediate, "overrides",
        (json_int_t)te->stats.overrides, "kills", (json_int_t)te->stats.kills,
        "reattach", (json_int_t)te->stats.reattach, "lost",
        (json_int_t)te->stats.lost, "lost-noncritical",
        (json_int_t)te->stats.lost_noncritical);
}

const struct exec_impl testexec_impl = {
    .name = "testexec",
    .setup = testexec_setup,
    .teardown = testexec_teardown,
    .init = testexec_init,
    .start = testexec_start,
    .kill = testexec_kill,
    .cancel = testexec_cancel,
    .exit = testexec_exit,
    .stats = testexec_stats,
};
