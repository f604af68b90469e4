/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/jobstore.c - the job store: journal responses in, ordered lists
 * and counts out; purge and journal resynchronization.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "jobstore.h"
#include "tap.h"

static jobstore_t *js;
static int notified, dropped;

static void notify (flux_jobid_t id, struct job *job, void *arg)
{
    notified++;
    if (!job)
        dropped++;
}

/* Apply a journal response written as JSON text (printf format). */
static int apply (const char *fmt, ...)
{
    char text[4096];
    va_list ap;
    json_t *o;
    flux_error_t error;
    int rc;

    va_start (ap, fmt);
    vsnprintf (text, sizeof (text), fmt, ap);
    va_end (ap);
    if (!(o = json_loads (text, 0, NULL)))
        BAIL_OUT ("bad test response %s", text);
    rc = jobstore_apply (js, o, &error);
    if (rc < 0)
        diag ("%s", error.text);
    json_decref (o);
    return rc;
}

#define SUBMIT(t, uid)                                                        \
    "{\"timestamp\":" #t ",\"name\":\"submit\",\"context\":{\"userid\":" #uid \
    ",\"urgency\":16,\"flags\":0,\"version\":1}}"
#define EV(t, name) "{\"timestamp\":" #t ",\"name\":\"" name "\"}"
#define PRIO(t, p)       \
    "{\"timestamp\":" #t \
    ",\"name\":\"priority\",\"context\":{\"priority\":" #p "}}"

static void submit (flux_jobid_t id, double t, const char *queue)
{
    char js_text[256];

    snprintf (js_text, sizeof (js_text),
              "{\"tasks\":[{\"command\":[\"a\"]}],\"attributes\":{\"system\":"
              "{\"queue\":\"%s\"}}}",
              queue);
    if (apply ("{\"id\":%ju,\"events\":[{\"timestamp\":%f,\"name\":"
               "\"submit\",\"context\":{\"userid\":1,\"urgency\":16}}],"
               "\"jobspec\":%s}",
               (uintmax_t)id, t, queue ? js_text : "{}")
        < 0)
        BAIL_OUT ("submit %ju failed", (uintmax_t)id);
}

static void event (flux_jobid_t id, double t, const char *name,
                   const char *context)
{
    if (apply ("{\"id\":%ju,\"events\":[{\"timestamp\":%f,\"name\":\"%s\"%s%s%s"
               "}]}",
               (uintmax_t)id, t, name, context ? ",\"context\":" : "",
               context ? context : "", "")
        < 0)
        BAIL_OUT ("event %s for %ju failed", name, (uintmax_t)id);
}

static void to_sched (flux_jobid_t id, double t, int prio)
{
    char c[64];
    event (id, t, "validate", NULL);
    event (id, t, "depend", NULL);
    snprintf (c, sizeof (c), "{\"priority\":%d}", prio);
    event (id, t, "priority", c);
}

/* The ids of a list, in order, as "1,2,3". */
static const char *ids (int which)
{
    static char buf[1024];
    const ordlist_t *l = jobstore_list (js, which);

    buf[0] = '\0';
    for (ordlist_node_t *n = ordlist_first (l); n; n = ordlist_next (n)) {
        struct job *job = ordlist_item (n);
        snprintf (buf + strlen (buf), sizeof (buf) - strlen (buf), "%s%ju",
                  buf[0] ? "," : "", (uintmax_t)job->id);
    }
    return buf;
}

/* A value from job-stats, by json path like "job_states.run". */
static int jstat (const char *key)
{
    json_t *o = jobstore_stats (js), *v = o;
    char cpy[64], *save, *tok;
    int n;

    snprintf (cpy, sizeof (cpy), "%s", key);
    for (tok = strtok_r (cpy, ".", &save); tok && v;
         tok = strtok_r (NULL, ".", &save))
        v = json_object_get (v, tok);
    n = v ? json_integer_value (v) : -1;
    json_decref (o);
    return n;
}

static int queue_stat (const char *queue, const char *key)
{
    json_t *o = jobstore_stats (js), *q, *v = NULL;
    const char *dot = strchr (key, '.');
    size_t i;
    int n;

    json_array_foreach (json_object_get (o, "queues"), i, q)
    {
        if (strcmp (json_string_value (json_object_get (q, "name")), queue))
            continue;
        v = dot ? json_object_get (json_object_get (q, "job_states"), dot + 1)
                : json_object_get (q, key);
    }
    n = v ? json_integer_value (v) : -1;
    json_decref (o);
    return n;
}

static void test_lists (void)
{
    /* pending: 1 (prio 10), 2 (prio 20), 3 (prio 10) */
    submit (1, 1.0, "batch");
    submit (2, 2.0, "batch");
    submit (3, 3.0, NULL);
    submit (4, 4.0, "debug");
    ok (jobstore_count (js) == 4 && !strcmp (ids (LIST_PENDING), ""),
        "NEW jobs are found by id but not listed");
    ok (jstat ("job_states.total") == 0, "NEW jobs are not counted");
    to_sched (1, 5., 10);
    to_sched (2, 5., 20);
    to_sched (3, 5., 10);
    to_sched (4, 5., 5);
    is (ids (LIST_PENDING), "2,1,3,4",
        "pending: highest priority first, then oldest id");
    event (4, 6., "priority", "{\"priority\":30}");
    is (ids (LIST_PENDING), "4,2,1,3", "a new priority moves the job");
    ok (jstat ("job_states.sched") == 4 && jstat ("job_states.total") == 4,
        "4 jobs counted in sched");
    ok (queue_stat ("batch", "job_states.sched") == 2
            && queue_stat ("debug", "job_states.sched") == 1,
        "queue batch has 2 sched jobs, debug 1");

    event (1, 10., "alloc", NULL);
    event (2, 11., "alloc", NULL);
    event (3, 9., "alloc", NULL);
    is (ids (LIST_RUNNING), "2,1,3", "running: most recent t_run first");
    is (ids (LIST_PENDING), "4", "pending keeps the one left");
    event (2, 12., "finish", "{\"status\":0}");
    is (ids (LIST_RUNNING), "2,1,3", "CLEANUP stays in the running list");
    ok (jstat ("job_states.run") == 2 && jstat ("job_states.cleanup") == 1,
        "run 2, cleanup 1");
    event (2, 13., "clean", NULL);
    event (1, 12.5, "exception",
           "{\"type\":\"cancel\",\"severity\":0,\"note\":\"\"}");
    event (1, 14., "clean", NULL);
    event (3, 12.7, "exception",
           "{\"type\":\"timeout\",\"severity\":0,\"note\":\"\"}");
    event (3, 12.8, "finish", "{\"status\":9}");
    event (3, 12.9, "clean", NULL);
    is (ids (LIST_INACTIVE), "1,2,3", "inactive: most recent t_inactive first");
    ok (jstat ("successful") == 1 && jstat ("canceled") == 1
            && jstat ("timeout") == 1 && jstat ("failed") == 0
            && jstat ("job_states.inactive") == 3
            && jstat ("job_states.total") == 4,
        "results counted: 1 successful, 1 canceled, 1 timeout");
    ok (queue_stat ("batch", "successful") == 1
            && queue_stat ("batch", "canceled") == 1
            && queue_stat ("batch", "job_states.inactive") == 2,
        "per-queue results");

    /* jobspec-update moves a pending job to another queue */
    event (4, 15., "jobspec-update", "{\"attributes.system.queue\":\"batch\"}");
    ok (queue_stat ("batch", "job_states.sched") == 1
            && queue_stat ("debug", "job_states.sched") == 0,
        "jobspec-update of the queue moves the job's counts");
}

static void test_drop (void)
{
    int before = dropped;
    int total = jstat ("job_states.total");

    submit (5, 20., NULL);
    event (5, 20.5, "validate", NULL);
    event (5, 21., "invalidate", NULL);
    ok (jobstore_lookup (js, 5) == NULL && dropped == before + 1
            && jstat ("job_states.total") == total,
        "invalidate drops the job (notify with NULL), counts restored");

    errno = 0;
    ok (apply ("{\"id\":99,\"events\":[" EV (1, "alloc") "]}") < 0
            && errno == EPROTO && jobstore_lookup (js, 99) == NULL,
        "an event for an unknown job is EPROTO and creates nothing");
    ok (apply ("{\"id\":99,\"events\":[]}") == 0,
        "an empty event list for an unknown job is fine");
    errno = 0;
    ok (apply ("{\"id\":99}") < 0 && errno == EPROTO,
        "a response without events is EPROTO");
    errno = 0;
    ok (apply ("{\"id\":6,\"events\":[" SUBMIT (
            1, 7) ",{\"name\":\"x\"},"
                  "{\"timestamp\":2,\"name\":\"validate\"}]}")
                < 0
            && errno == EPROTO && jobstore_lookup (js, 6)
            && jobstore_lookup (js, 6)->state == FLUX_JOB_STATE_DEPEND,
        "a bad entry is reported but the others are applied");

    ok (jobstore_purge (js, 2) == 0 && jobstore_lookup (js, 2) == NULL
            && jstat ("inactive_purged") == 1 && jstat ("successful") == 0
            && jstat ("job_states.inactive") == 2
            && queue_stat ("batch", "inactive_purged") == 1,
        "purge drops an inactive job and counts it");
    errno = 0;
    ok (jobstore_purge (js, 4) < 0 && errno == EINVAL,
        "purge of an active job is EINVAL");
    errno = 0;
    ok (jobstore_purge (js, 12345) < 0 && errno == ENOENT,
        "purge of an unknown job is ENOENT");
    is (ids (LIST_INACTIVE), "1,3", "the purged job left the inactive list");
}

static void test_resync (void)
{
    int before = dropped;

    /* the new backlog has job 1 (changed) and job 4, not 3 or 6 */
    jobstore_resync_begin (js);
    ok (apply ("{\"id\":1,\"events\":[" SUBMIT (1, 1) "," EV (
            2, "validate") "," EV (3, "depend") "," PRIO (4, 1) "]}")
            == 0,
        "backlog of job 1 applied");
    ok (jobstore_lookup (js, 1)->state == FLUX_JOB_STATE_SCHED
            && jobstore_lookup (js, 1)->exception_occurred == false,
        "job 1 was rebuilt from its backlog, not merged");
    ok (apply (
            "{\"id\":4,\"events\":[" SUBMIT (4, 1) "," EV (5, "validate") "]}")
            == 0,
        "backlog of job 4 applied");
    event (1, 30., "priority", "{\"priority\":2}");
    jobstore_resync_end (js);
    ok (jobstore_lookup (js, 3) == NULL && jobstore_lookup (js, 6) == NULL
            && dropped == before + 2,
        "resync_end dropped the jobs the backlog did not mention");
    ok (jobstore_count (js) == 2 && jstat ("job_states.total") == 2
            && jstat ("job_states.sched") == 1
            && jstat ("job_states.depend") == 1
            && jstat ("job_states.inactive") == 0 && jstat ("canceled") == 0,
        "counts follow the rebuilt jobs");
    is (ids (LIST_PENDING), "1,4", "pending list rebuilt");
    is (ids (LIST_INACTIVE), "", "inactive list emptied");
}

/* Many jobs: everything stays ordered and counted, quickly. */
static void test_many (void)
{
    enum { N = 20000 };
    struct timespec t0, t1;
    double elapsed;
    int bad = 0;
    double prev = 1e99;

    clock_gettime (CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < N; i++) {
        flux_jobid_t id = 1000 + i;
        if (apply (
                "{\"id\":%ju,\"events\":[" SUBMIT (1, 2) "," EV (
                    2,
                    "validate") "," EV (3,
                                        "depend") "," PRIO (4,
                                                            16) "],\"jobspec\":"
                                                                "{"
                                                                "\"tasks\":[{"
                                                                "\"command\":["
                                                                "\"x\"]}]}}",
                (uintmax_t)id)
            < 0)
            BAIL_OUT ("submit");
        if (apply ("{\"id\":%ju,\"events\":[{\"timestamp\":%d,\"name\":"
                   "\"alloc\"}],\"R\":{\"version\":1,\"execution\":{\"R_lite\":"
                   "[{\"rank\":\"0\",\"children\":{\"core\":\"0\"}}],"
                   "\"nodelist\":[\"h0\"]}}}",
                   (uintmax_t)id, 100 + i % 977)
            < 0)
            BAIL_OUT ("alloc");
        if (i % 2 == 0
            && apply (
                   "{\"id\":%ju,\"events\":[{\"timestamp\":%d,\"name\":"
                   "\"finish\",\"context\":{\"status\":0}},{\"timestamp\":%d,"
                   "\"name\":\"clean\"}]}",
                   (uintmax_t)id, 5000 + i, 5000 + i)
                   < 0)
            BAIL_OUT ("clean");
    }
    clock_gettime (CLOCK_MONOTONIC, &t1);
    elapsed = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    diag ("%d jobs through 3 responses each: %.3fs (%.1f us/response)", N,
          elapsed, elapsed * 1e6 / (3 * N));
    ok (jstat ("job_states.inactive") == N / 2
            && jstat ("job_states.run") == N / 2
            && jstat ("successful") == N / 2,
        "%d inactive and %d running jobs counted", N / 2, N / 2);
    for (ordlist_node_t *n = ordlist_first (jobstore_list (js, LIST_RUNNING));
         n; n = ordlist_next (n)) {
        struct job *job = ordlist_item (n);
        if (job->t_run > prev)
            bad++;
        prev = job->t_run;
    }
    ok (bad == 0 && ordlist_count (jobstore_list (js, LIST_RUNNING)) == N / 2,
        "the running list is in t_run order");
    ok (strpool_count (jobstore_strpool (js)) < 10,
        "shared strings are stored once (%zu in the pool)",
        strpool_count (jobstore_strpool (js)));
}

/* A purge event that overtakes the journal entries of its jobs (they
 * travel by different paths): the jobs are purged when an entry makes
 * them inactive; what no entry claims is forgotten at the next resync.
 */
static void test_early_purge (void)
{
    int purged = jstat ("inactive_purged");
    int before = dropped;

    submit (40, 40., NULL);
    to_sched (40, 40.5, 16);
    event (40, 41., "alloc", NULL);
    errno = 0;
    ok (jobstore_purge (js, 40) < 0 && errno == EINVAL,
        "purge of a job not yet inactive here is EINVAL");
    errno = 0;
    ok (jobstore_purge (js, 41) < 0 && errno == ENOENT,
        "purge of a job not yet seen here is ENOENT");
    event (40, 42., "finish", "{\"status\":0}");
    ok (jobstore_lookup (js, 40) != NULL, "job 40 stays while it cleans up");
    event (40, 43., "clean", NULL);
    ok (jobstore_lookup (js, 40) == NULL && dropped == before + 1
            && jstat ("inactive_purged") == purged + 1,
        "job 40 is purged when its clean event comes");
    /* job 41's backlog arrives whole, already inactive */
    ok (apply (
            "{\"id\":41,\"events\":[" SUBMIT (41, 1) "," EV (2, "validate") "," EV (
                3,
                "depend") "," PRIO (4,
                                    1) "," EV (5,
                                               "alloc") ",{\"timestamp\":6,"
                                                        "\"name\":\"finish\","
                                                        "\"context\":"
                                                        "{\"status\":0}}," EV (
                                                            7, "clean") "]}")
            == 0,
        "job 41's backlog applied");
    ok (jobstore_lookup (js, 41) == NULL
            && jstat ("inactive_purged") == purged + 2,
        "job 41 is purged as its backlog makes it inactive");
    /* a purge no entry claims is forgotten at the next resync */
    (void)jobstore_purge (js, 42);
    jobstore_resync_begin (js);
    jobstore_resync_end (js);
    submit (42, 50., NULL);
    ok (jobstore_lookup (js, 42) != NULL,
        "a job 42 submitted after a resync is not purged by an old event");
}

int main (int argc, char **argv)
{
    plan (NO_PLAN);
    if (!(js = jobstore_create ()))
        BAIL_OUT ("jobstore_create");
    jobstore_set_notify (js, notify, NULL);
    test_lists ();
    test_drop ();
    test_resync ();
    test_early_purge ();
    test_many ();
    ok (notified > 0, "notify was called");
    jobstore_destroy (js);
    done_testing ();
    return 0;
}
