/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/constraint.c - RFC 43 constraints: parsing and matching */
#include <errno.h>
#include <string.h>

#include "constraint.h"
#include "tap.h"

static strpool_t *pool;

static struct job *mkjob (flux_jobid_t id, uint32_t userid, const char *name,
                          const char *queue, int state, int result)
{
    struct job *job = job_create (id);

    job->userid = userid;
    job->name = strpool_get (pool, name);
    job->queue = strpool_get (pool, queue);
    job->state = state;
    job->result = result;
    job->t_submit = 100. + id;
    if (state >= FLUX_JOB_STATE_RUN)
        job->t_run = 200. + id;
    if (state == FLUX_JOB_STATE_INACTIVE)
        job->t_inactive = 300. + id;
    return job;
}

/* Parse text and match it against job: 1 match, 0 no match, -1 error. */
static int m (const char *text, const struct job *job)
{
    json_t *o = json_loads (text, 0, NULL);
    struct constraint *c;
    flux_error_t error;
    int rc;

    if (!o)
        BAIL_OUT ("bad test constraint %s", text);
    if (!(c = constraint_create (o, &error))) {
        json_decref (o);
        return -1;
    }
    rc = constraint_match (c, job) ? 1 : 0;
    constraint_destroy (c);
    json_decref (o);
    return rc;
}

static int states_of (const char *text)
{
    json_t *o = json_loads (text, 0, NULL);
    struct constraint *c = constraint_create (o, NULL);
    int s = c ? constraint_states (c) : -1;
    constraint_destroy (c);
    json_decref (o);
    return s;
}

/* The error text of a constraint that must fail with EINVAL. */
static const char *err (const char *text)
{
    static flux_error_t error;
    json_t *o = json_loads (text, 0, NULL);
    struct constraint *c;

    if (!o)
        BAIL_OUT ("bad test constraint %s", text);
    errno = 0;
    c = constraint_create (o, &error);
    json_decref (o);
    if (c || errno != EINVAL) {
        constraint_destroy (c);
        return "(no EINVAL)";
    }
    return error.text;
}

int main (int argc, char **argv)
{
    struct job *run, *done, *pend;
    struct constraint *c;

    plan (NO_PLAN);
    pool = strpool_create ();
    pend = mkjob (1, 42, "sleep", NULL, FLUX_JOB_STATE_SCHED, 0);
    run = mkjob (2, 43, "hostname", "batch", FLUX_JOB_STATE_RUN, 0);
    done = mkjob (3, 42, "sleep", "debug", FLUX_JOB_STATE_INACTIVE,
                  FLUX_JOB_RESULT_CANCELED);
    run->nodelist = strpool_get (pool, "node[1-4]");
    run->ranks = strpool_get (pool, "[1-4]");

    ok ((c = constraint_create (NULL, NULL)) && constraint_match (c, pend)
            && constraint_states (c) == 127,
        "a NULL constraint matches everything");
    constraint_destroy (c);
    ok (m ("{}", pend) == 1 && m ("{\"and\":[]}", run) == 1
            && m ("{\"or\":[]}", done) == 1 && m ("{\"not\":[]}", pend) == 0,
        "{} and [] or [] match all; not [] matches nothing");

    ok (m ("{\"userid\":[42]}", pend) == 1 && m ("{\"userid\":[42]}", run) == 0
            && m ("{\"userid\":[1,43]}", run) == 1
            && m ("{\"userid\":[]}", run) == 0,
        "userid");
    ok (m ("{\"name\":[\"sleep\"]}", pend) == 1
            && m ("{\"name\":[\"x\",\"hostname\"]}", run) == 1
            && m ("{\"name\":[\"sleep\"]}", run) == 0,
        "name");
    ok (m ("{\"queue\":[\"batch\"]}", run) == 1
            && m ("{\"queue\":[\"batch\"]}", pend) == 0
            && m ("{\"not\":[{\"queue\":[\"foobar\"]}]}", pend) == 1,
        "queue (a job with no queue matches no queue)");
    ok (m ("{\"states\":[\"sched\"]}", pend) == 1
            && m ("{\"states\":[\"pending\"]}", pend) == 1
            && m ("{\"states\":[\"RUNNING\"]}", run) == 1
            && m ("{\"states\":[\"active\"]}", done) == 0
            && m ("{\"states\":[64]}", done) == 1
            && m ("{\"states\":[\"depend\",\"priority\",\"sched\"]}", pend) == 1
            && m ("{\"states\":[6]}", pend) == 0,
        "states by name (any case, virtual ones too) and by mask");
    ok (m ("{\"results\":[\"canceled\"]}", done) == 1
            && m ("{\"results\":[4]}", done) == 1
            && m ("{\"results\":[\"completed\",\"failed\"]}", done) == 0
            && m ("{\"results\":[15]}", run) == 0,
        "results (only inactive jobs have one)");
    ok (m ("{\"hostlist\":[\"node3\"]}", run) == 1
            && m ("{\"hostlist\":[\"node[5-6]\",\"node1\"]}", run) == 1
            && m ("{\"hostlist\":[\"node5\"]}", run) == 0
            && m ("{\"hostlist\":[\"node1\"]}", pend) == 0,
        "hostlist");
    ok (m ("{\"ranks\":[\"0,4\"]}", run) == 1
            && m ("{\"ranks\":[\"5-9\"]}", run) == 0
            && m ("{\"ranks\":[\"1\"]}", pend) == 0,
        "ranks");
    ok (m ("{\"t_submit\":[\">101.5\"]}", done) == 1
            && m ("{\"t_submit\":[\">=101\"]}", pend) == 1
            && m ("{\"t_submit\":[\">101\"]}", pend) == 0
            && m ("{\"t_submit\":[\"<102\"]}", pend) == 1
            && m ("{\"t_submit\":[\"<=101\"]}", pend) == 1
            && m ("{\"t_run\":[\">0\"]}", pend) == 0
            && m ("{\"t_inactive\":[\">300\",\"<304\"]}", done) == 1
            && m ("{\"t_inactive\":[\">300\",\"<303\"]}", done) == 0,
        "timestamps: > >= < <=, unset never matches, several are all "
        "required");
    ok (m ("{\"and\":[{\"userid\":[42]},{\"t_submit\":[\">946713600.0\"]}]}",
           pend) == 0
            && m ("{\"or\":[{\"states\":[\"run\"]},{\"results\":[\"canceled\"]}"
                  "]}",
                  done)
                   == 1
            && m ("{\"not\":[{\"userid\":[42]},{\"name\":[\"sleep\"]}]}", done)
                   == 0
            && m ("{\"not\":[{\"userid\":[42]},{\"name\":[\"x\"]}]}", done)
                   == 1,
        "and, or, not (not negates the and of its values)");
    ok (m ("{\"userid\":[42],\"name\":[\"sleep\"]}", done) == 1
            && m ("{\"userid\":[42],\"name\":[\"x\"]}", done) == 0,
        "an object with two operators is their and");

    ok (states_of ("{\"states\":[\"pending\"]}") == FLUX_JOB_STATE_PENDING
            && states_of ("{\"and\":[{\"userid\":[1]},{\"states\":[\"run\","
                          "\"inactive\"]}]}")
                   == (FLUX_JOB_STATE_RUN | FLUX_JOB_STATE_INACTIVE)
            && states_of ("{\"or\":[{\"states\":[\"run\"]},{\"results\":[1]}]}")
                   == (FLUX_JOB_STATE_RUN | FLUX_JOB_STATE_INACTIVE)
            && states_of ("{\"not\":[{\"states\":[\"run\"]}]}") == 127
            && states_of ("{\"t_inactive\":[\">1\"]}")
                   == FLUX_JOB_STATE_INACTIVE,
        "constraint_states: the states a match can be in");

    is (err ("[]"), "constraint must be an object", "not an object");
    is (err ("{\"foo\":[1]}"), "unknown constraint operator: foo",
        "unknown operator");
    is (err ("{\"userid\":42}"), "userid operator values must be an array",
        "values not an array");
    is (err ("{\"userid\":[\"42\"]}"), "userid values must be integers",
        "userid not an integer");
    is (err ("{\"name\":[1]}"), "name values must be strings",
        "name not a string");
    is (err ("{\"states\":[\"bogus\"]}"), "invalid states value '\"bogus\"'",
        "unknown state");
    is (err ("{\"results\":[1.5]}"), "invalid results value '1.5'",
        "result neither name nor mask");
    is (err ("{\"t_submit\":[\"100\"]}"),
        "t_submit value needs an operator: >, >=, <, <=", "missing operator");
    is (err ("{\"t_run\":[\">abc\"]}"), "invalid timestamp 'abc'",
        "bad timestamp");
    is (err ("{\"t_run\":[]}"), "t_run needs a comparison value",
        "no timestamp");
    is (err ("{\"hostlist\":[\"node[\"]}"), "invalid hostlist 'node['",
        "bad hostlist");
    is (err ("{\"hostlist\":[\"n[1-2000]\"]}"),
        "too many hosts in hostlist constraint", "hostlist too long");
    is (err ("{\"ranks\":[\"1-\"]}"), "invalid ranks '1-'", "bad ranks");
    is (err ("{\"and\":[{\"or\":[{\"bad\":[]}]}]}"),
        "unknown constraint operator: bad", "errors inside and/or");
    {
        char deep[2048] = "";
        for (int i = 0; i < 40; i++)
            strcat (deep, "{\"and\":[");
        strcat (deep, "{}");
        for (int i = 0; i < 40; i++)
            strcat (deep, "]}");
        is (err (deep), "constraint nested too deeply", "nesting is bounded");
    }
    ok (constraint_state_mask ("Inactive") == 64
            && constraint_state_mask ("x") == 0
            && constraint_result_mask ("cancelled") == 4
            && constraint_result_mask ("TIMEOUT") == 8,
        "constraint_state_mask / constraint_result_mask");

    job_destroy (pend, pool);
    job_destroy (run, pool);
    job_destroy (done, pool);
    ok (strpool_count (pool) == 0, "no string left behind");
    strpool_destroy (pool);
    done_testing ();
    return 0;
}
