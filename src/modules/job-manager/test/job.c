/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/job.c - job records, the job table, jobspec helpers */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "libeventlog/eventlog.h"
#include "tap.h"

static void test_table (void)
{
    enum { N = 5000 };
    struct jobtab *t = jobtab_create ();
    struct job *job;
    size_t cursor, seen = 0;
    int found = 0;

    ok (t != NULL && jobtab_count (t) == 0, "an empty table");
    for (int i = 0; i < N; i++) {
        /* FLUID-like ids: sequence in the low bits */
        job = job_create (((flux_jobid_t)(i / 1024) << 24) | (i % 1024));
        if (!job || jobtab_insert (t, job) < 0)
            BAIL_OUT ("insert failed");
    }
    ok (jobtab_count (t) == N, "%d jobs inserted (the table grew)", N);
    job = job_create (5);
    errno = 0;
    ok (jobtab_insert (t, job) < 0 && errno == EEXIST,
        "inserting a known id fails with EEXIST");
    job_destroy (job);
    for (int i = 0; i < N; i++) {
        flux_jobid_t id = ((flux_jobid_t)(i / 1024) << 24) | (i % 1024);
        if ((job = jobtab_lookup (t, id)) && job->id == id)
            found++;
    }
    ok (found == N, "every job is found by id");
    ok (jobtab_lookup (t, 1ULL << 40) == NULL, "an unknown id is not");
    for (job = jobtab_first (t, &cursor); job;
         job = jobtab_next (t, job, &cursor))
        seen++;
    ok (seen == N, "the iterator visits every job once");

    /* inactive order */
    struct job *a = jobtab_lookup (t, 3), *b = jobtab_lookup (t, 1),
               *c = jobtab_lookup (t, 2);
    jobtab_inactive_add (t, a);
    jobtab_inactive_add (t, b);
    jobtab_inactive_add (t, c);
    jobtab_inactive_add (t, a);
    ok (jobtab_inactive_count (t) == 3, "three inactive (no double add)");
    ok (jobtab_inactive_first (t) == a && jobtab_inactive_next (t, a) == b
            && jobtab_inactive_next (t, b) == c
            && jobtab_inactive_next (t, c) == NULL,
        "inactive jobs in the order added");
    jobtab_remove (t, b);
    ok (jobtab_inactive_count (t) == 2 && jobtab_inactive_next (t, a) == c
            && jobtab_lookup (t, 1) == NULL && jobtab_count (t) == N - 1,
        "removal takes a job off the table and the inactive list");
    job_destroy (b);
    jobtab_destroy (t);
}

static void test_compact (void)
{
    struct job *job = job_create (7);
    strpool_t *pool = strpool_create ();
    json_t *empty = json_object ();

    job->x->js.state = FLUX_JOB_STATE_INACTIVE;
    job->x->js.userid = 12;
    job->x->js.flags = FLUX_JOB_WAITABLE;
    job->x->js.finished = true;
    job->x->js.status = 256;
    job->x->js.started = true;
    job->x->js.t_clean = 99.;
    ok (job_jobspec_set (job->x, pool, empty) == 0 && strpool_count (pool) == 1,
        "the jobspec text is pooled");
    job_compact (job);
    ok (job->x == NULL, "compact drops the active part");
    ok (job->userid == 12 && job->state == FLUX_JOB_STATE_INACTIVE
            && job->result == FLUX_JOB_RESULT_FAILED && !job->success
            && job->started && job->t_inactive == 99.,
        "and keeps owner, state, result, started, t_inactive");
    is (job->errstr, "task(s) exited with exit code 1",
        "a waitable job keeps its wait error string");
    job_destroy (job);
    ok (strpool_count (pool) == 0, "the compacted job gave its string back");
    json_decref (empty);
    strpool_destroy (pool);
}

static void test_jobspec (void)
{
    json_t *js
        = json_pack ("{s:{s:{s:{s:s} s:i}} s:i}", "attributes", "system",
                     "environment", "HOME", "/x", "duration", 5, "version", 1);
    json_t *r, *u;
    char key[64];

    r = job_jobspec_redacted (js);
    ok (r != js
            && json_object_get (json_object_get (json_object_get (r, "attr"
                                                                     "ibute"
                                                                     "s"),
                                                 "system"),
                                "environment")
                   == NULL,
        "the redacted jobspec has no environment");
    ok (json_object_get (
            json_object_get (json_object_get (js, "attributes"), "system"),
            "environment")
            != NULL,
        "the original keeps it");
    json_decref (r);
    r = job_jobspec_redacted (r = json_pack ("{s:i}", "version", 1));
    ok (r != NULL, "a jobspec without environment is returned as is");
    json_decref (r);
    json_decref (r);

    u = json_pack ("{s:i s:s}", "attributes.system.duration", 60,
                   "attributes.user.a.b", "c");
    ok (job_jobspec_update (js, u) == 0, "jobspec update works");
    ok (json_integer_value (json_object_get (
            json_object_get (json_object_get (js, "attributes"), "system"),
            "duration"))
            == 60,
        "an existing key is replaced");
    ok (json_object_get (
            json_object_get (
                json_object_get (json_object_get (js, "attributes"), "user"),
                "a"),
            "b")
            != NULL,
        "missing objects on the path are created");
    json_decref (u);
    u = json_pack ("{s:i}", "version.x", 1);
    errno = 0;
    ok (job_jobspec_update (js, u) < 0 && errno == EINVAL,
        "a path through a non-object fails with EINVAL");
    json_decref (u);
    json_decref (js);

    ok (job_kvs_key (key, sizeof (key), 0x17e9fb8df16c2eULL, "eventlog") == 0,
        "job_kvs_key works");
    is (key, "job.0017.e9fb.8df1.6c2e.eventlog", "key of an eventlog");
    ok (job_kvs_key (key, sizeof (key), 1, NULL) == 0, "and of a job dir");
    is (key, "job.0000.0000.0000.0001", "the job dir");
    errno = 0;
    ok (job_kvs_key (key, 10, 1, "R") < 0 && errno == EOVERFLOW,
        "a short buffer gives EOVERFLOW");
}

static void test_jobspec_set (void)
{
    json_t *js = json_pack ("{s:{s:{s:{s:s s:s} s:i}} s:i}", "attributes",
                            "system", "environment", "HOME", "/x", "PATH",
                            "/bin", "duration", 5, "version", 1);
    json_t *plain = json_pack ("{s:i}", "version", 1);
    json_t *update = json_pack ("{s:i}", "attributes.system.duration", 60);
    json_t *bad = json_pack ("{s:i}", "version.x", 2);
    struct job *job = job_create (1), *twin = job_create (9);
    strpool_t *pool = strpool_create (), *other;
    json_t *full, *rest;

    ok (job && job_jobspec_set (job->x, pool, js) == 0, "job_jobspec_set");
    ok (twin && job_jobspec_set (twin->x, pool, js) == 0
            && twin->x->jobspec == job->x->jobspec
            && twin->x->environment == job->x->environment
            && strpool_count (pool) == 2,
        "a job with the same jobspec shares both strings");
    job_destroy (twin);
    ok (strpool_count (pool) == 2 && job->x->jobspec && job->x->environment,
        "destroying one leaves the other's");
    other = strpool_create ();
    ok (job_jobspec_set (job->x, other, js) < 0 && errno == EINVAL
            && strpool_count (other) == 0,
        "a second pool is refused");
    strpool_destroy (other);
    ok (job->x->environment
            && !strcmp (job->x->environment, "{\"HOME\":\"/x\",\"PATH\":"
                                             "\"/bin\"}"),
        "the environment is kept as text");
    ok (job->x->jobspec && !strstr (job->x->jobspec, "environment")
            && !strstr (job->x->jobspec, "HOME"),
        "and not in the jobspec text");
    rest = job_jobspec (job->x);
    ok (rest
            && json_integer_value (json_object_get (
                   json_object_get (json_object_get (rest, "attributes"),
                                    "system"),
                   "duration"))
                   == 5
            && !json_object_get (
                json_object_get (json_object_get (rest, "attributes"),
                                 "system"),
                "environment"),
        "job_jobspec gives the rest back");
    json_decref (rest);
    full = job_jobspec_full (job->x);
    ok (full && json_equal (full, js), "job_jobspec_full gives it all back");
    json_decref (full);
    ok (job_jobspec_apply (job->x, update) == 0
            && (full = job_jobspec_full (job->x))
            && json_integer_value (json_object_get (
                   json_object_get (json_object_get (full, "attributes"),
                                    "system"),
                   "duration"))
                   == 60
            && json_object_get (
                json_object_get (json_object_get (full, "attributes"),
                                 "system"),
                "environment"),
        "job_jobspec_apply changes the text, the environment stays");
    json_decref (full);
    ok (job_jobspec_apply (job->x, bad) < 0 && errno == EINVAL
            && strstr (job->x->jobspec, "\"duration\":60"),
        "a failed update leaves the jobspec as it was");
    ok (json_object_get (
            json_object_get (json_object_get (js, "attributes"), "system"),
            "environment")
            != NULL,
        "the jobspec given is left whole");
    ok (job_jobspec_set (job->x, pool, plain) == 0 && !job->x->environment
            && !strcmp (job->x->jobspec, "{\"version\":1}"),
        "a jobspec without environment is kept whole");
    full = job_jobspec_full (job->x);
    ok (full && json_equal (full, plain), "and comes back whole");
    json_decref (full);
    job_destroy (job);
    job = job_create (2);
    errno = 0;
    ok (job && !job_jobspec_full (job->x) && errno == ENOENT,
        "no jobspec: ENOENT");
    job_destroy (job);
    ok (strpool_count (pool) == 0, "every string went back to the pool");
    strpool_destroy (pool);
    json_decref (plain);
    json_decref (update);
    json_decref (bad);
    json_decref (js);
}

static void test_eventlog (void)
{
    struct job *job = job_create (3);
    json_t *log, *e1 = eventlog_entry_pack (1., "submit", "{s:i}", "userid", 5);
    json_t *e2 = eventlog_entry_pack (2., "validate", NULL);
    char *l1 = eventlog_entry_encode (e1), *l2 = eventlog_entry_encode (e2);

    log = job_eventlog (job->x);
    ok (log && json_array_size (log) == 0, "a new job's eventlog is empty");
    json_decref (log);
    ok (job_eventlog_append (job->x, l1) == 0
            && job_eventlog_append (job->x, l2) == 0,
        "job_eventlog_append works");
    ok (job->x->eventlog
            && strlen (job->x->eventlog) == strlen (l1) + strlen (l2)
            && !strncmp (job->x->eventlog, l1, strlen (l1)),
        "the eventlog text is the lines in order");
    log = job_eventlog (job->x);
    ok (log && json_array_size (log) == 2
            && json_equal (json_array_get (log, 0), e1)
            && json_equal (json_array_get (log, 1), e2),
        "job_eventlog decodes them");
    ok (job_eventlog_set (job->x, log) == 0
            && job->x->eventlog_len == strlen (l1) + strlen (l2),
        "job_eventlog_set replaces the log");
    json_decref (log);
    for (int i = 0; i < 100; i++)
        (void)job_eventlog_append (job->x, l2);
    log = job_eventlog (job->x);
    ok (log && json_array_size (log) == 102, "the log grows");
    json_decref (log);
    free (l1);
    free (l2);
    json_decref (e1);
    json_decref (e2);
    job_destroy (job);
}

int main (int argc, char **argv)
{
    plan (NO_PLAN);
    test_table ();
    test_compact ();
    test_jobspec ();
    test_jobspec_set ();
    test_eventlog ();
    done_testing ();
    return 0;
}
