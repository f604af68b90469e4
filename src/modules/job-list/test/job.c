/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/job.c - per-job state from RFC 21 events, jobspec and R
 * summaries, and the JSON text of a job.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "job.h"
#include "libeventlog/eventlog.h"
#include "tap.h"

static strpool_t *pool;

/* Apply an event built from name and a json_pack format (or NULL). */
static int ev (struct job *job, double t, const char *name, const char *fmt,
               ...)
{
    json_t *entry, *context = NULL;
    flux_error_t error;
    va_list ap;
    int rc;

    if (fmt) {
        va_start (ap, fmt);
        context = json_vpack_ex (NULL, 0, fmt, ap);
        va_end (ap);
        if (!context)
            BAIL_OUT ("bad test context for %s", name);
    }
    if (!(entry = json_pack ("{s:f s:s}", "timestamp", t, "name", name))
        || (context && json_object_set_new (entry, "context", context) < 0))
        BAIL_OUT ("cannot build event");
    rc = job_apply_event (job, pool, entry, &error);
    if (rc < 0)
        diag ("%s: %s", name, error.text);
    json_decref (entry);
    return rc;
}

/* The job's JSON text, parsed. */
static json_t *encode (const struct job *job, uint64_t mask)
{
    struct jbuf b;
    json_t *o;

    jbuf_init (&b);
    job_encode (job, mask, &b);
    if (!jbuf_get (&b) || !(o = json_loads (b.t.data, 0, NULL)))
        BAIL_OUT ("job_encode made bad JSON: %s",
                  b.t.data ? b.t.data : "(null)");
    jbuf_free (&b);
    return o;
}

/* The job's annotations decoded (NULL if none). */
static json_t *annotations (const struct job *job)
{
    return job->annotations ? json_loads (job->annotations, 0, NULL) : NULL;
}

static struct job *submitted (flux_jobid_t id)
{
    struct job *job = job_create (id);
    if (!job
        || ev (job, 1.0, "submit", "{s:i s:i s:i s:i}", "userid", 100,
               "urgency", 16, "flags", 0, "version", 1)
               != JOB_EVENT_APPLIED)
        BAIL_OUT ("submit failed");
    return job;
}

static void test_lifecycle (void)
{
    struct job *job = job_create (42);
    json_t *o;

    ok (job && job->state == FLUX_JOB_STATE_NEW && job->priority == -1
            && job->ntasks == -1 && job->waitstatus == -1,
        "a new job is NEW with nothing known");
    ok (ev (job, 1.5, "submit", "{s:i s:i s:i s:i}", "userid", 100, "urgency",
            16, "flags", 0, "version",
            1) == JOB_EVENT_APPLIED
            && job->userid == 100 && job->urgency == 16 && job->t_submit == 1.5
            && job->state == FLUX_JOB_STATE_NEW,
        "submit sets userid, urgency and t_submit");
    ok (ev (job, 2., "validate", NULL) == JOB_EVENT_APPLIED
            && job->state == FLUX_JOB_STATE_DEPEND && job->t_depend == 2.,
        "validate: DEPEND, t_depend");
    ok (ev (job, 3., "depend", NULL) == JOB_EVENT_APPLIED
            && job->state == FLUX_JOB_STATE_PRIORITY && job->t_priority == 3.,
        "depend: PRIORITY, t_priority");
    ok (ev (job, 4., "priority", "{s:I}", "priority", (json_int_t)4294967295)
                == JOB_EVENT_APPLIED
            && job->state == FLUX_JOB_STATE_SCHED
            && job->priority == 4294967295LL && job->t_sched == 4.,
        "priority: SCHED with the priority (up to 2^32-1)");
    ok (ev (job, 4.5, "priority", "{s:I}", "priority", (json_int_t)7)
                == JOB_EVENT_APPLIED
            && job->state == FLUX_JOB_STATE_SCHED && job->priority == 7
            && job->t_sched == 4.,
        "a later priority event only changes the priority");
    ok (ev (job, 5., "alloc", "{s:{s:s}}", "annotations",
            "sched.resource_summary", "rank0/core0")
                == JOB_EVENT_APPLIED
            && job->state == FLUX_JOB_STATE_RUN && job->t_run == 5.,
        "alloc: RUN, t_run");
    ok (ev (job, 6., "start", NULL) == JOB_EVENT_IGNORED
            && job->state == FLUX_JOB_STATE_RUN,
        "start is ignored (the job is RUN since alloc)");
    o = encode (job, ATTR_ALL);
    ok (!json_object_get (o, "result") && !json_object_get (o, "success")
            && !json_object_get (o, "exception_occurred")
            && !json_object_get (o, "t_cleanup"),
        "a running job has no result, success, exception_occurred, "
        "t_cleanup");
    json_decref (o);
    ok (ev (job, 7., "finish", "{s:i}", "status", 0) == JOB_EVENT_APPLIED
            && job->state == FLUX_JOB_STATE_CLEANUP && job->t_cleanup == 7.
            && job->waitstatus == 0,
        "finish: CLEANUP, waitstatus");
    ok (ev (job, 8., "release", "{s:s s:b}", "ranks", "all", "final", 1)
                == JOB_EVENT_IGNORED
            && ev (job, 8.5, "free", NULL) == JOB_EVENT_IGNORED,
        "release and free are ignored");
    ok (ev (job, 9., "clean", NULL) == JOB_EVENT_APPLIED
            && job->state == FLUX_JOB_STATE_INACTIVE && job->t_inactive == 9.
            && job->result == FLUX_JOB_RESULT_COMPLETED && job->success,
        "clean: INACTIVE, COMPLETED, success");
    ok (job->states_mask == 127, "states_mask has every state");
    ok (ev (job, 10., "alloc", NULL) == JOB_EVENT_APPLIED
            && job->state == FLUX_JOB_STATE_INACTIVE && job->t_run == 5.,
        "a late alloc does not move an inactive job back");
    o = encode (job, ATTR_ALL);
    ok (json_integer_value (json_object_get (o, "result")) == 1
            && json_is_true (json_object_get (o, "success"))
            && json_is_false (json_object_get (o, "exception_occurred"))
            && !json_object_get (o, "exception_type")
            && json_real_value (json_object_get (o, "t_inactive")) == 9.
            && json_integer_value (json_object_get (o, "id")) == 42
            && json_integer_value (json_object_get (o, "priority")) == 7
            && json_integer_value (json_object_get (o, "state")) == 64,
        "an inactive job has result, success, exception_occurred false");
    json_decref (o);
    job_destroy (job, pool);
}

static void test_results (void)
{
    struct job *job;

    job = submitted (1);
    ev (job, 2., "validate", NULL);
    ev (job, 3., "depend", NULL);
    ev (job, 4., "priority", "{s:I}", "priority", (json_int_t)16);
    ok (ev (job, 5., "exception", "{s:s s:i s:s s:i}", "type", "cancel",
            "severity", 0, "note", "by user", "userid",
            100) == JOB_EVENT_APPLIED
            && job->state == FLUX_JOB_STATE_CLEANUP && job->t_cleanup == 5.
            && job->exception_occurred
            && !strcmp (job->exception_type, "cancel")
            && !strcmp (job->exception_note, "by user"),
        "a severity 0 exception in SCHED: CLEANUP, exception recorded");
    ev (job, 6., "clean", NULL);
    ok (job->result == FLUX_JOB_RESULT_CANCELED && !job->success
            && job->waitstatus == -1 && job->t_run == 0.,
        "canceled before it ran: CANCELED, no waitstatus, no t_run");
    job_destroy (job, pool);

    job = submitted (2);
    ev (job, 2., "validate", NULL);
    ev (job, 3., "alloc", NULL);
    ev (job, 4., "finish", "{s:i}", "status", 256);
    ev (job, 5., "clean", NULL);
    ok (job->result == FLUX_JOB_RESULT_FAILED && !job->success
            && job->waitstatus == 256,
        "nonzero finish status: FAILED");
    job_destroy (job, pool);

    job = submitted (3);
    ev (job, 2., "alloc", NULL);
    ok (ev (job, 3., "exception", "{s:s s:i s:s}", "type", "timeout",
            "severity", 0, "note", "")
            == JOB_EVENT_APPLIED,
        "timeout exception");
    ev (job, 4., "finish", "{s:i}", "status", 9);
    ok (job->t_cleanup == 3.,
        "finish after the exception keeps the CLEANUP time");
    ev (job, 5., "clean", NULL);
    ok (job->result == FLUX_JOB_RESULT_TIMEOUT, "result TIMEOUT");
    job_destroy (job, pool);

    job = submitted (4);
    ev (job, 2., "alloc", NULL);
    ok (ev (job, 3., "exception", "{s:s s:i s:s}", "type", "oom", "severity", 1,
            "note", "soft")
                == JOB_EVENT_APPLIED
            && job->state == FLUX_JOB_STATE_RUN && job->exception_occurred
            && job->exception_severity == 1,
        "a severity 1 exception is recorded but the job keeps running");
    ev (job, 4., "exception", "{s:s s:i}", "type", "exec", "severity", 0);
    ok (!strcmp (job->exception_type, "exec") && job->exception_severity == 0
            && !strcmp (job->exception_note, "")
            && job->state == FLUX_JOB_STATE_CLEANUP,
        "a more severe exception replaces it (note defaults to \"\")");
    ev (job, 5., "exception", "{s:s s:i s:s}", "type", "late", "severity", 0,
        "note", "x");
    ok (!strcmp (job->exception_type, "exec"),
        "an equally severe later exception does not");
    ev (job, 6., "finish", "{s:i}", "status", 0);
    ev (job, 7., "clean", NULL);
    ok (job->result == FLUX_JOB_RESULT_FAILED && !job->success,
        "status 0 after a fatal exec exception: FAILED, not success");
    job_destroy (job, pool);
}

static void test_other_events (void)
{
    struct job *job = submitted (5);
    json_t *o;

    ev (job, 2., "validate", NULL);
    ev (job, 3., "depend", NULL);
    ev (job, 4., "priority", "{s:I}", "priority", (json_int_t)10);
    ok (ev (job, 5., "flux-restart", NULL) == JOB_EVENT_APPLIED
            && job->state == FLUX_JOB_STATE_PRIORITY,
        "flux-restart takes a SCHED job back to PRIORITY");
    ev (job, 6., "priority", "{s:I}", "priority", (json_int_t)11);
    ok (job->state == FLUX_JOB_STATE_SCHED && job->t_sched == 4.,
        "the next priority event makes it SCHED (t_sched is the first)");
    ok (ev (job, 7., "urgency", "{s:i s:i}", "urgency", 0, "userid", 100)
                == JOB_EVENT_APPLIED
            && job->urgency == 0,
        "urgency event");
    errno = 0;
    ok (ev (job, 7., "urgency", "{s:i}", "urgency", 32) < 0 && errno == EPROTO
            && job->urgency == 0,
        "urgency 32 is refused with EPROTO, the job unchanged");
    errno = 0;
    ok (ev (job, 7., "priority", "{s:s}", "priority", "x") < 0
            && errno == EPROTO && job->priority == 11,
        "a priority that is not an integer is refused");
    errno = 0;
    ok (ev (job, 7., "exception", "{s:s s:i}", "type", "x", "severity", 8) < 0
            && errno == EPROTO && !job->exception_occurred,
        "exception severity 8 is refused");
    errno = 0;
    ok (ev (job, 7., "finish", NULL) < 0 && errno == EPROTO,
        "finish without context is refused");

    ok (ev (job, 8., "annotations", "{s:{s:{s:s}}}", "annotations", "sched",
            "reason_pending", "no resources")
                == JOB_EVENT_APPLIED
            && job->annotations,
        "annotations event sets annotations");
    ok (job->annotations
            && !strcmp (job->annotations,
                        "{\"sched\":{\"reason_pending\":\"no resources\"}}"),
        "annotations are kept as compact JSON text");
    o = NULL;
    ok (ev (job, 9., "memo", "{s:s s:i}", "a", "b", "n", 1) == JOB_EVENT_APPLIED
            && (o = annotations (job))
            && json_object_size (json_object_get (o, "user")) == 2
            && json_object_get (o, "sched"),
        "memo adds annotations.user keys and keeps sched");
    json_decref (o);
    o = NULL;
    ok (ev (job, 10., "memo", "{s:n}", "a") == JOB_EVENT_APPLIED
            && (o = annotations (job))
            && json_object_size (json_object_get (o, "user")) == 1,
        "a null memo value deletes the key");
    json_decref (o);
    ok (ev (job, 11., "annotations", "{s:n}", "annotations")
                == JOB_EVENT_APPLIED
            && job->annotations == NULL,
        "annotations null clears all annotations");
    ok (ev (job, 12., "memo", "{s:n}", "zz") == JOB_EVENT_APPLIED
            && job->annotations == NULL,
        "a memo that deletes from nothing leaves no annotations");
    errno = 0;
    ok (ev (job, 12., "annotations", "{s:i}", "annotations", 1) < 0
            && errno == EPROTO,
        "annotations must be an object or null");

    ok (ev (job, 13., "dependency-add", "{s:s}", "description", "after:1")
                == JOB_EVENT_APPLIED
            && ev (job, 13., "dependency-add", "{s:s}", "description",
                   "begin-time=5")
                   == JOB_EVENT_APPLIED
            && ev (job, 13., "dependency-add", "{s:s}", "description",
                   "after:1")
                   == JOB_EVENT_APPLIED
            && json_array_size (job->dependencies) == 2,
        "dependency-add adds each description once");
    ok (ev (job, 14., "dependency-remove", "{s:s}", "description", "after:1")
                == JOB_EVENT_APPLIED
            && json_array_size (job->dependencies) == 1
            && ev (job, 14., "dependency-remove", "{s:s}", "description",
                   "nope")
                   == JOB_EVENT_APPLIED,
        "dependency-remove removes it (an unknown one is ignored)");
    o = encode (job, ATTR_ALL);
    ok (json_array_size (json_object_get (o, "dependencies")) == 1
            && !json_object_get (o, "annotations")
            && json_integer_value (json_object_get (o, "urgency")) == 0,
        "encode shows dependencies, no empty annotations");
    json_decref (o);

    ok (ev (job, 15., "jobspec-update", "{s:f s:s s:s}",
            "attributes.system.duration", 60.0, "attributes.system.queue",
            "batch", "resources.0.count",
            "x") == JOB_EVENT_APPLIED
            && job->duration == 60. && !strcmp (job->queue, "batch"),
        "jobspec-update of attributes.* updates duration and queue");
    ok (ev (job, 15., "jobspec-update", "{s:{s:{s:s}}}", "attributes.system",
            "job", "name", "renamed")
                == JOB_EVENT_APPLIED
            && !strcmp (job->name, "renamed"),
        "jobspec-update of a whole object is applied too");
    ev (job, 16., "alloc", NULL);
    ok (ev (job, 17., "jobspec-update", "{s:f}", "attributes.system.duration",
            1.0) == JOB_EVENT_APPLIED
            && job->duration == 60.,
        "jobspec-update after RUN is not reflected");
    ok (ev (job, 18., "resource-update", "{s:f}", "expiration", 1000.)
                == JOB_EVENT_APPLIED
            && job->expiration == 1000.,
        "resource-update in RUN sets expiration");
    ok (ev (job, 19., "invalidate", NULL) == JOB_EVENT_INVALIDATE,
        "invalidate asks for the job to be dropped");
    ok (ev (job, 20., "debug.something", NULL) == JOB_EVENT_IGNORED,
        "unknown events are ignored");
    {
        json_t *bad = json_pack ("{s:s}", "name", "submit");
        flux_error_t error;
        errno = 0;
        ok (job_apply_event (job, pool, bad, &error) < 0 && errno == EPROTO,
            "an entry without timestamp is EPROTO");
        json_decref (bad);
    }
    errno = 0;
    ok (ev (job, 1., "submit", "{s:i}", "urgency", 1) < 0 && errno == EPROTO
            && job->userid == 100,
        "submit without userid is refused");
    job_destroy (job, pool);
}

static json_t *jobspec (const char *resources, const char *tasks,
                        const char *system)
{
    char text[2048];
    json_t *o;

    snprintf (text, sizeof (text),
              "{\"version\":1,\"resources\":%s,\"tasks\":%s,"
              "\"attributes\":{\"system\":%s}}",
              resources, tasks, system);
    if (!(o = json_loads (text, 0, NULL)))
        BAIL_OUT ("bad test jobspec");
    return o;
}

static json_t *R (const char *rlite, const char *nodelist, double expiration)
{
    char text[1024];
    json_t *o;

    snprintf (text, sizeof (text),
              "{\"version\":1,\"execution\":{\"R_lite\":%s,\"nodelist\":%s,"
              "\"starttime\":1.0,\"expiration\":%f}}",
              rlite, nodelist, expiration);
    if (!(o = json_loads (text, 0, NULL)))
        BAIL_OUT ("bad test R");
    return o;
}

static void test_summary (void)
{
    const char *slot3 = "{\"type\":\"slot\",\"count\":2,\"label\":\"task\","
                        "\"with\":[{\"type\":\"core\",\"count\":3}]}";
    char res[512];
    struct job *job;
    json_t *js, *r;
    flux_error_t error;

    /* node -> slot -> core, per_slot tasks */
    snprintf (res, sizeof (res),
              "[{\"type\":\"node\",\"count\":2,\"with\":[%s]}]", slot3);
    js = jobspec (res,
                  "[{\"command\":[\"/bin/sleep\",\"1\"],\"slot\":\"task\","
                  "\"count\":{\"per_slot\":1}}]",
                  "{\"duration\":0,\"cwd\":\"/tmp\",\"queue\":\"debug\","
                  "\"project\":\"p\",\"bank\":\"b\"}");
    job = submitted (10);
    ok (job_apply_jobspec (job, pool, js, &error) == 0,
        "job_apply_jobspec works");
    ok (job->nnodes == 2 && job->ntasks == 4 && job->ncores == 12,
        "2 nodes x 2 slots x 3 cores, per_slot 1: nnodes 2, ntasks 4, "
        "ncores 12");
    ok (!strcmp (job->name, "sleep") && !strcmp (job->cwd, "/tmp")
            && !strcmp (job->queue, "debug") && !strcmp (job->project, "p")
            && !strcmp (job->bank, "b") && job->duration == 0.,
        "name is the basename of the command; cwd, queue, project, bank, "
        "duration");
    json_decref (js);

    r = R ("[{\"rank\":\"0-1\",\"children\":{\"core\":\"0-3\"}},"
           "{\"rank\":\"3\",\"children\":{\"core\":\"0\"}}]",
           "[\"a[0-1]\",\"a3\"]", 100.5);
    ok (job_apply_R (job, pool, r, &error) == 0, "job_apply_R works");
    ok (job->nnodes == 3 && job->ncores == 9 && !strcmp (job->ranks, "[0-1,3]")
            && !strcmp (job->nodelist, "a[0-1,3]") && job->expiration == 100.5
            && job->ntasks == 4,
        "R: nnodes 3, ncores 9, ranks [0-1,3], nodelist a[0-1,3], "
        "expiration");
    json_decref (r);
    r = R ("[{\"rank\":\"x\",\"children\":{\"core\":\"0\"}}]", "[\"a\"]", 0.);
    errno = 0;
    ok (job_apply_R (job, pool, r, &error) < 0 && errno == EPROTO
            && !strcmp (job->ranks, "[0-1,3]"),
        "a bad rank idset is EPROTO and changes nothing (%s)", error.text);
    json_decref (r);
    r = json_pack ("{s:i}", "version", 2);
    errno = 0;
    ok (job_apply_R (job, pool, r, &error) < 0 && errno == EPROTO,
        "R version 2 is EPROTO");
    json_decref (r);
    js = jobspec (res, "[{\"command\":[\"x\"],\"count\":{\"total\":1}}]", "{}");
    ok (job_apply_jobspec (job, pool, js, &error) == 0 && job->nnodes == 3
            && job->ncores == 9 && job->ntasks == 1,
        "a jobspec after R does not override R's counts");
    json_decref (js);
    job_destroy (job, pool);

    /* exclusive nodes: cores known only from R; tasks total */
    snprintf (res, sizeof (res),
              "[{\"type\":\"node\",\"count\":1,\"exclusive\":true,"
              "\"with\":[%s]}]",
              slot3);
    js = jobspec (res,
                  "[{\"command\":[\"hostname\"],\"slot\":\"task\","
                  "\"count\":{\"total\":5}}]",
                  "{\"duration\":3600,\"job\":{\"name\":\"myjob\"}}");
    job = submitted (11);
    job_apply_jobspec (job, pool, js, &error);
    ok (job->ncores == -1 && job->nnodes == 1 && job->ntasks == 5
            && !strcmp (job->name, "myjob") && job->duration == 3600.,
        "exclusive node: ncores unknown; tasks total 5; job.name wins");
    json_decref (js);
    job_destroy (job, pool);

    /* per-resource node without a node level: ntasks from R */
    js = jobspec ("[{\"type\":\"slot\",\"count\":4,\"label\":\"task\","
                  "\"with\":[{\"type\":\"core\",\"count\":1}]}]",
                  "[{\"command\":[\"x\"],\"slot\":\"task\","
                  "\"count\":{\"per_slot\":1}}]",
                  "{\"shell\":{\"options\":{\"per-resource\":{\"type\":"
                  "\"node\",\"count\":2}}}}");
    job = submitted (12);
    job_apply_jobspec (job, pool, js, &error);
    ok (job->ntasks == -1 && job->ncores == 4 && job->nnodes == -1,
        "per-resource node with no node level: ntasks waits for R");
    r = R ("[{\"rank\":\"0-2\",\"children\":{\"core\":\"0\"}}]", "[\"h[0-2]\"]",
           0.);
    job_apply_R (job, pool, r, &error);
    ok (job->ntasks == 6 && job->nnodes == 3 && job->ncores == 3
            && job->expiration == -1.,
        "R with 3 nodes: ntasks 6 (2 per node); no expiration if 0");
    json_decref (r);
    json_decref (js);
    job_destroy (job, pool);

    js = json_pack ("[]");
    errno = 0;
    job = submitted (13);
    ok (job_apply_jobspec (job, pool, js, &error) < 0 && errno == EPROTO,
        "a jobspec that is not an object is EPROTO");
    json_decref (js);
    js = json_pack ("{s:[{s:[s]}]}", "tasks", "command", "x");
    ok (job_apply_jobspec (job, pool, js, &error) == 0 && job->ntasks == -1
            && !strcmp (job->name, "x"),
        "an odd jobspec leaves unknown counts unset");
    json_decref (js);
    job_destroy (job, pool);
}

static void test_attrs (void)
{
    json_t *a;
    uint64_t mask;
    flux_error_t error;
    struct job *job;
    json_t *o;

    a = json_pack ("[s s s]", "id", "userid", "t_run");
    ok (job_attrs_parse (a, &mask, &error) == 0
            && mask
                   == ((UINT64_C (1) << ATTR_USERID)
                       | (UINT64_C (1) << ATTR_T_RUN)),
        "attrs [id, userid, t_run] parse");
    json_decref (a);
    a = json_pack ("[s s]", "userid", "all");
    ok (job_attrs_parse (a, &mask, &error) == 0 && mask == ATTR_ALL,
        "all means every attribute");
    json_decref (a);
    a = json_pack ("[s]", "bogus");
    errno = 0;
    ok (job_attrs_parse (a, &mask, &error) < 0 && errno == EINVAL
            && !strcmp (error.text, "bogus is not a valid attribute"),
        "an unknown attribute is EINVAL: %s", error.text);
    json_decref (a);
    a = json_pack ("[i]", 1);
    ok (job_attrs_parse (a, &mask, &error) < 0 && errno == EINVAL,
        "a non-string attribute is EINVAL");
    json_decref (a);
    ok (job_attrs_parse (NULL, &mask, &error) < 0 && errno == EINVAL,
        "attrs must be an array");
    ok (!strcmp (job_attr_name (ATTR_DEPENDENCIES), "dependencies")
            && job_attr_name (ATTR_COUNT) == NULL,
        "job_attr_name");

    job = submitted (77);
    a = json_pack ("{s:[{s:[s]}]}", "tasks", "command", "a\"b\\c\n\001");
    job_apply_jobspec (job, pool, a, &error);
    json_decref (a);
    o = encode (job, (UINT64_C (1) << ATTR_NAME) | (UINT64_C (1) << ATTR_T_RUN)
                         | (UINT64_C (1) << ATTR_T_SUBMIT));
    ok (json_object_size (o) == 3
            && !strcmp (json_string_value (json_object_get (o, "name")),
                        "a\"b\\c\n\001")
            && json_is_real (json_object_get (o, "t_submit"))
            && json_real_value (json_object_get (o, "t_submit")) == 1.0,
        "encode escapes strings, writes reals as reals, leaves unset "
        "t_run out");
    json_decref (o);
    job_destroy (job, pool);
}

int main (int argc, char **argv)
{
    plan (NO_PLAN);
    if (!(pool = strpool_create ()))
        BAIL_OUT ("strpool_create");
    test_lifecycle ();
    test_results ();
    test_other_events ();
    test_summary ();
    test_attrs ();
    ok (strpool_count (pool) == 0,
        "every pooled string was returned by job_destroy");
    strpool_destroy (pool);
    done_testing ();
    return 0;
}
