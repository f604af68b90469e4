/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/jobstate.c - the RFC 21 state machine: events, contexts, replay */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobstate.h"
#include "libeventlog/eventlog.h"
#include "tap.h"

#define SUBMIT "{\"urgency\":16,\"userid\":42,\"flags\":0,\"version\":1}"

/* Build an eventlog from name/context pairs (context may be NULL);
 * timestamps are 1, 2, 3 ... */
static char *mklog (const char *pairs[])
{
    char *log = NULL;

    for (int i = 0; pairs[i]; i += 2) {
        json_t *e = eventlog_entry_create (i / 2 + 1, pairs[i], pairs[i + 1]);
        char *line = eventlog_entry_encode (e);
        if (!e || !line || eventlog_append (&log, line) < 0)
            BAIL_OUT ("cannot build eventlog");
        free (line);
        json_decref (e);
    }
    return log;
}

static int apply (struct jobstate *js, const char *name, const char *ctx,
                  flux_error_t *error)
{
    json_t *o = ctx ? json_loads (ctx, 0, NULL) : NULL;
    int rc;

    if (ctx && !o)
        BAIL_OUT ("bad test context %s", ctx);
    rc = jobstate_apply (js, 100., name, o, error);
    json_decref (o);
    return rc;
}

static void test_normal_life (void)
{
    const char *ev[] = {
        "submit",
        SUBMIT,
        "validate",
        NULL,
        "depend",
        NULL,
        "priority",
        "{\"priority\":16}",
        "alloc",
        "{\"annotations\":{\"sched\":{\"resource_summary\":\"rank0\"}}}",
        "start",
        NULL,
        "release",
        "{\"ranks\":\"all\",\"final\":true}",
        "finish",
        "{\"status\":0}",
        "free",
        NULL,
        "clean",
        NULL,
        NULL,
    };
    char *log = mklog (ev);
    struct jobstate js;
    flux_error_t error;
    char buf[128];

    ok (jobstate_replay (&js, log, &error) == 0, "replay of a normal life");
    ok (js.state == FLUX_JOB_STATE_INACTIVE, "ends INACTIVE");
    ok (js.userid == 42 && js.urgency == 16 && js.priority == 16,
        "userid, urgency and priority are kept");
    ok (js.t_submit == 1. && js.t_run == 5. && js.t_clean == 10.,
        "t_submit, t_run and t_clean are the event timestamps");
    ok (js.started && js.finished && js.release_final && !js.has_resources,
        "started, finished, released, freed");
    ok (jobstate_result (&js) == FLUX_JOB_RESULT_COMPLETED
            && jobstate_success (&js),
        "result COMPLETED, success");
    jobstate_errstr (&js, buf, sizeof (buf));
    is (buf, "", "no error string");
    ok (js.nevents == 10, "10 events applied");
    jobstate_clear (&js);
    free (log);
}

/* Each step of the state machine, one event at a time. */
static void test_transitions (void)
{
    struct jobstate js;
    flux_error_t error;

    jobstate_init (&js);
    ok (apply (&js, "validate", NULL, &error) < 0 && errno == EINVAL,
        "validate before submit is refused");
    ok (apply (&js, "debug.foo", NULL, &error) < 0,
        "even an unknown event is refused before submit");
    ok (apply (&js, "submit", SUBMIT, &error) == 0
            && js.state == FLUX_JOB_STATE_NEW,
        "submit: NEW");
    ok (apply (&js, "submit", SUBMIT, &error) < 0, "a second submit fails");
    ok (apply (&js, "depend", NULL, &error) < 0
            && js.state == FLUX_JOB_STATE_NEW,
        "depend in NEW is refused, state unchanged");
    is (error.text, "depend is not allowed in state NEW",
        "with a reason naming the state");
    ok (apply (&js, "validate", NULL, &error) == 0
            && js.state == FLUX_JOB_STATE_DEPEND,
        "validate: DEPEND");
    ok (apply (&js, "priority", "{\"priority\":1}", &error) < 0,
        "priority in DEPEND is refused");
    ok (apply (&js, "depend", NULL, &error) == 0
            && js.state == FLUX_JOB_STATE_PRIORITY,
        "depend: PRIORITY");
    ok (apply (&js, "alloc", NULL, &error) < 0, "alloc in PRIORITY fails");
    ok (apply (&js, "priority", "{\"priority\":4294967296}", &error) < 0,
        "priority above 4294967295 is refused");
    ok (apply (&js, "priority", "{\"priority\":-1}", &error) < 0,
        "negative priority is refused");
    ok (apply (&js, "priority", "{}", &error) < 0,
        "priority without its key is refused");
    ok (apply (&js, "priority", "{\"priority\":4294967295}", &error) == 0
            && js.state == FLUX_JOB_STATE_SCHED && js.priority == 4294967295LL,
        "priority: SCHED with the maximum priority");
    ok (apply (&js, "priority", "{\"priority\":7}", &error) == 0
            && js.state == FLUX_JOB_STATE_SCHED && js.priority == 7,
        "priority in SCHED: new priority, same state");
    ok (apply (&js, "flux-restart", NULL, &error) == 0
            && js.state == FLUX_JOB_STATE_PRIORITY,
        "flux-restart in SCHED: back to PRIORITY");
    ok (apply (&js, "priority", "{\"priority\":7}", &error) == 0
            && apply (&js, "urgency", "{\"urgency\":3,\"userid\":42}", &error)
                   == 0
            && js.urgency == 3,
        "urgency changes the urgency");
    ok (apply (&js, "urgency", "{\"urgency\":32,\"userid\":42}", &error) < 0,
        "urgency 32 is refused");
    ok (apply (&js, "start", NULL, &error) < 0, "start in SCHED fails");
    ok (apply (&js, "alloc", "{\"annotations\":3}", &error) < 0,
        "alloc with non-object annotations fails");
    ok (apply (&js, "alloc", NULL, &error) == 0
            && js.state == FLUX_JOB_STATE_RUN && js.has_resources,
        "alloc: RUN, holding resources");
    ok (apply (&js, "flux-restart", NULL, &error) == 0
            && js.state == FLUX_JOB_STATE_RUN,
        "flux-restart in RUN changes nothing");
    ok (apply (&js, "prolog-start", "{\"description\":\"p\"}", &error) == 0
            && js.prolog_active == 1,
        "prolog-start counts an active prolog");
    ok (apply (&js, "prolog-finish", "{\"description\":\"p\"}", &error) < 0,
        "prolog-finish needs a status");
    ok (apply (&js, "prolog-finish", "{\"description\":\"p\",\"status\":0}",
               &error)
                == 0
            && js.prolog_active == 0,
        "prolog-finish ends it");
    ok (apply (&js, "prolog-finish", "{\"description\":\"p\",\"status\":0}",
               &error)
            < 0,
        "prolog-finish without a prolog fails");
    ok (apply (&js, "start", NULL, &error) == 0 && js.started,
        "start: started");
    ok (apply (&js, "start", NULL, &error) < 0, "a second start fails");
    ok (apply (&js, "prolog-start", "{\"description\":\"p\"}", &error) < 0,
        "prolog-start after start fails");
    ok (apply (&js, "release", "{\"ranks\":\"0\",\"final\":false}", &error) == 0
            && !js.release_final,
        "partial release");
    ok (js.released && idset_count (js.released) == 1
            && idset_test (js.released, 0),
        "partial release: its ranks are kept");
    ok (apply (&js, "release", "{\"ranks\":\"2-3\",\"final\":false}", &error)
                == 0
            && idset_count (js.released) == 3,
        "a second partial release adds its ranks");
    ok (apply (&js, "release", "{\"ranks\":\"x\",\"final\":false}", &error) < 0
            && idset_count (js.released) == 3,
        "a partial release whose ranks are not an idset fails");
    ok (apply (&js, "release", "{\"ranks\":\"0\"}", &error) < 0,
        "release without final fails");
    ok (apply (&js, "free", NULL, &error) < 0, "free in RUN fails");
    ok (apply (&js, "finish", "{\"status\":256}", &error) == 0
            && js.state == FLUX_JOB_STATE_CLEANUP && js.status == 256,
        "finish: CLEANUP with the status");
    ok (apply (&js, "finish", "{\"status\":0}", &error) < 0,
        "a second finish fails");
    ok (apply (&js, "clean", NULL, &error) < 0,
        "clean while holding resources fails");
    ok (apply (&js, "epilog-start", "{\"description\":\"e\"}", &error) == 0
            && js.epilog_active == 1,
        "epilog-start in CLEANUP");
    ok (apply (&js, "epilog-finish", "{\"description\":\"e\",\"status\":0}",
               &error)
                == 0
            && js.epilog_active == 0,
        "epilog-finish");
    ok (apply (&js, "release", "{\"ranks\":\"1\",\"final\":true}", &error) == 0
            && js.release_final && idset_count (js.released) == 3,
        "final release (the partially released ranks are kept)");
    ok (apply (&js, "release", "{\"ranks\":\"1\",\"final\":true}", &error) < 0,
        "release after the final one fails");
    ok (apply (&js, "free", "{\"x\":1}", &error) < 0,
        "free with a non-empty context fails");
    ok (apply (&js, "free", "{}", &error) == 0 && !js.has_resources,
        "free (empty context)");
    ok (apply (&js, "clean", NULL, &error) == 0
            && js.state == FLUX_JOB_STATE_INACTIVE,
        "clean: INACTIVE");
    ok (apply (&js, "debug.x", NULL, &error) < 0
            && apply (&js, "exception",
                      "{\"type\":\"x\",\"severity\":0,\"note\":\"\"}", &error)
                   < 0,
        "nothing but memo after INACTIVE");
    ok (jobstate_result (&js) == FLUX_JOB_RESULT_FAILED
            && !jobstate_success (&js),
        "exit code 1: FAILED");
    char buf[128];
    jobstate_errstr (&js, buf, sizeof (buf));
    is (buf, "task(s) exited with exit code 1", "error string");
    jobstate_clear (&js);
}

static void test_exceptions (void)
{
    const char *ev[] = {
        "submit",    SUBMIT,
        "validate",  NULL,
        "depend",    NULL,
        "priority",  "{\"priority\":16}",
        "exception", "{\"type\":\"test\",\"severity\":1,\"note\":\"minor\"}",
        NULL,
    };
    char *log = mklog (ev);
    struct jobstate js;
    flux_error_t error;
    char buf[128];

    ok (jobstate_replay (&js, log, &error) == 0
            && js.state == FLUX_JOB_STATE_SCHED && !js.fatal,
        "a severity 1 exception does not change state");
    ok (apply (&js, "exception", "{\"type\":\"cancel\",\"severity\":8}", &error)
            < 0,
        "severity 8 is refused");
    ok (apply (&js, "exception", "{\"type\":\"\",\"severity\":0}", &error) < 0,
        "an empty type is refused");
    ok (apply (&js, "exception", "{\"severity\":0}", &error) < 0,
        "an exception without type is refused");
    ok (apply (&js, "exception",
               "{\"type\":\"cancel\",\"severity\":0,\"note\":\"by me\","
               "\"userid\":42}",
               &error)
                == 0
            && js.state == FLUX_JOB_STATE_CLEANUP && js.fatal,
        "a severity 0 exception in SCHED: CLEANUP");
    ok (apply (&js, "exception", "{\"type\":\"timeout\",\"severity\":0}",
               &error)
                == 0
            && !strcmp (js.exc_type, "cancel"),
        "a second fatal exception is allowed, the first one counts");
    ok (apply (&js, "alloc", NULL, &error) == 0 && js.has_resources
            && js.state == FLUX_JOB_STATE_CLEANUP,
        "alloc in CLEANUP (a race with cancel) holds resources, no RUN");
    ok (apply (&js, "free", NULL, &error) == 0
            && apply (&js, "clean", NULL, &error) == 0,
        "free, clean");
    ok (jobstate_result (&js) == FLUX_JOB_RESULT_CANCELED, "result CANCELED");
    jobstate_errstr (&js, buf, sizeof (buf));
    is (buf, "Fatal exception type=cancel by me", "error string");
    jobstate_clear (&js);
    free (log);

    /* a job killed by a timeout exception */
    const char *ev2[] = {
        "submit",    SUBMIT,
        "validate",  NULL,
        "depend",    NULL,
        "priority",  "{\"priority\":1}",
        "alloc",     NULL,
        "start",     NULL,
        "exception", "{\"type\":\"timeout\",\"severity\":0,\"note\":\"\"}",
        "finish",    "{\"status\":9}",
        "release",   "{\"ranks\":\"all\",\"final\":true}",
        "free",      NULL,
        "clean",     NULL,
        NULL,
    };
    log = mklog (ev2);
    ok (jobstate_replay (&js, log, &error) == 0
            && js.state == FLUX_JOB_STATE_INACTIVE,
        "replay of a job that timed out");
    ok (jobstate_result (&js) == FLUX_JOB_RESULT_TIMEOUT,
        "result TIMEOUT (the exception wins over the status)");
    jobstate_clear (&js);
    free (log);

    /* killed by a signal, no exception */
    jobstate_init (&js);
    js.finished = true;
    js.status = SIGKILL;
    js.state = FLUX_JOB_STATE_INACTIVE;
    jobstate_errstr (&js, buf, sizeof (buf));
    ok (strstr (buf, "task(s) ") == buf && strlen (buf) > 9,
        "a signal gives \"task(s) <signal>\": %s", buf);
    ok (jobstate_result (&js) == FLUX_JOB_RESULT_FAILED, "and FAILED");

    /* exception in NEW, DEPEND */
    jobstate_init (&js);
    ok (apply (&js, "submit", SUBMIT, &error) == 0
            && apply (&js, "exception", "{\"type\":\"x\",\"severity\":0}",
                      &error)
                   == 0
            && js.state == FLUX_JOB_STATE_CLEANUP && !strcmp (js.exc_note, ""),
        "an exception without note in NEW: CLEANUP, empty note");
    ok (apply (&js, "clean", NULL, &error) == 0
            && jobstate_result (&js) == FLUX_JOB_RESULT_FAILED,
        "clean: FAILED");
    jobstate_clear (&js);
}

static void test_dependencies (void)
{
    struct jobstate js;
    flux_error_t error;

    jobstate_init (&js);
    apply (&js, "submit", SUBMIT, &error);
    apply (&js, "validate", NULL, &error);
    ok (apply (&js, "dependency-add", "{}", &error) < 0,
        "dependency-add without description fails");
    ok (apply (&js, "dependency-add", "{\"description\":\"a\"}", &error) == 0
            && apply (&js, "dependency-add", "{\"description\":\"b\"}", &error)
                   == 0
            && json_object_size (js.deps) == 2,
        "two dependencies outstanding");
    ok (apply (&js, "dependency-add", "{\"description\":\"a\"}", &error) == 0
            && json_object_size (js.deps) == 2,
        "adding an outstanding one again changes nothing (RFC 26)");
    ok (apply (&js, "depend", NULL, &error) < 0,
        "depend while dependencies are outstanding fails");
    ok (apply (&js, "dependency-remove", "{\"description\":\"c\"}", &error) < 0
            && errno == ENOENT,
        "removing an unknown dependency fails (ENOENT)");
    ok (apply (&js, "dependency-remove", "{\"description\":\"a\"}", &error)
            == 0,
        "remove a");
    ok (apply (&js, "dependency-add", "{\"description\":\"a\"}", &error) < 0
            && errno == EEXIST,
        "adding a satisfied dependency again fails (EEXIST)");
    ok (apply (&js, "dependency-remove", "{\"description\":\"b\"}", &error) == 0
            && apply (&js, "depend", NULL, &error) == 0
            && js.state == FLUX_JOB_STATE_PRIORITY,
        "remove b, depend: PRIORITY");
    ok (apply (&js, "dependency-add", "{\"description\":\"d\"}", &error) < 0,
        "dependency-add after DEPEND fails");
    jobstate_clear (&js);
}

static void test_other_events (void)
{
    struct jobstate js;
    flux_error_t error;

    jobstate_init (&js);
    apply (&js, "submit", SUBMIT, &error);
    ok (apply (&js, "memo", "{\"a\":1,\"b\":2}", &error) == 0
            && json_object_size (js.memo) == 2,
        "memo sets keys");
    ok (apply (&js, "memo", "{\"a\":null,\"b\":3}", &error) == 0
            && json_object_size (js.memo) == 1
            && json_integer_value (json_object_get (js.memo, "b")) == 3,
        "memo: null removes, a value replaces");
    ok (apply (&js, "memo", "{}", &error) < 0, "an empty memo fails");
    ok (apply (&js, "jobspec-update", "{\"attributes.system.duration\":60}",
               &error)
                == 0
            && apply (&js, "jobspec-update",
                      "{\"attributes.system.duration\":90,"
                      "\"attributes.system.job.name\":\"x\"}",
                      &error)
                   == 0
            && json_object_size (js.updates) == 2,
        "jobspec-update accumulates, later values win");
    ok (apply (&js, "jobspec-update", "{\"a..b\":1}", &error) < 0
            && apply (&js, "jobspec-update", "{\".a\":1}", &error) < 0
            && apply (&js, "jobspec-update", "{}", &error) < 0,
        "malformed or empty jobspec-update fails");
    ok (apply (&js, "set-flags", "{\"flags\":[\"waitable\",\"debug\",\"x\"]}",
               &error)
                == 0
            && js.flags == (FLUX_JOB_WAITABLE | FLUX_JOB_DEBUG),
        "set-flags sets known flags");
    ok (apply (&js, "set-flags", "{\"flags\":\"waitable\"}", &error) < 0,
        "set-flags needs an array");
    ok (apply (&js, "resource-update", "{\"expiration\":10}", &error) < 0,
        "resource-update without resources fails");
    ok (apply (&js, "debug.anything", "{\"x\":1}", &error) == 0,
        "events RFC 21 does not name are accepted");
    ok (apply (&js, "invalidate", NULL, &error) == 0
            && js.state == FLUX_JOB_STATE_INACTIVE && js.invalid,
        "invalidate in NEW: INACTIVE, invalid");
    jobstate_clear (&js);

    jobstate_init (&js);
    ok (apply (&js, "submit",
               "{\"urgency\":16,\"userid\":42,\"flags\":0,\"version\":2}",
               &error)
            < 0,
        "eventlog version 2 is refused");
    ok (apply (&js, "submit", "{\"urgency\":16,\"flags\":0,\"version\":1}",
               &error)
            < 0,
        "submit without userid is refused");
    ok (apply (&js, "submit",
               "{\"urgency\":40,\"userid\":42,\"flags\":0,\"version\":1}",
               &error)
            < 0,
        "submit with urgency 40 is refused");
    jobstate_clear (&js);
}

static void test_replay_errors (void)
{
    struct jobstate js;
    flux_error_t error;
    const char *bad[] = {"submit", SUBMIT, "alloc", NULL, NULL};
    char *log;

    ok (jobstate_replay (&js, "not json\n", &error) < 0 && errno == EPROTO,
        "a malformed eventlog fails with EPROTO");
    ok (jobstate_replay (&js, "", &error) < 0 && errno == EPROTO,
        "an empty eventlog fails with EPROTO");
    log = mklog (bad);
    ok (jobstate_replay (&js, log, &error) < 0 && errno == EINVAL,
        "an impossible sequence fails with EINVAL");
    is (error.text, "event 2 (alloc): alloc is not allowed in state NEW",
        "the reason names the event");
    free (log);
    const char *nosubmit[] = {"validate", NULL, NULL};
    log = mklog (nosubmit);
    ok (jobstate_replay (&js, log, &error) < 0, "a log must start with submit");
    free (log);
}

int main (int argc, char **argv)
{
    plan (NO_PLAN);
    test_normal_life ();
    test_transitions ();
    test_exceptions ();
    test_dependencies ();
    test_other_events ();
    test_replay_errors ();
    ok (!strcmp (jobstate_name (FLUX_JOB_STATE_CLEANUP), "CLEANUP")
            && !strcmp (jobstate_name (3), "?"),
        "state names");
    done_testing ();
    return 0;
}
