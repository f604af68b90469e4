/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/testconf.c - parsing attributes.system.exec.test. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "tap.h"
#include "testconf.h"

/* jobspec with attributes.system = {<system>} */
static int parse (const char *system, struct testconf *conf,
                  flux_error_t *error)
{
    char buf[1024];
    json_error_t e;
    json_t *jobspec;
    int rc;

    snprintf (buf, sizeof (buf),
              "{\"version\":1,\"resources\":[],\"tasks\":[],"
              "\"attributes\":{\"system\":{%s}}}",
              system);
    if (!(jobspec = json_loads (buf, 0, &e)))
        BAIL_OUT ("bad test JSON: %s: %s", buf, e.text);
    memset (error, 0, sizeof (*error));
    rc = testconf_parse (jobspec, conf, error);
    json_decref (jobspec);
    return rc;
}

static void good (void)
{
    struct testconf c;
    flux_error_t error;

    ok (parse ("\"duration\":60", &c, &error) == 0,
        "no exec.test: 0 (not a simulated job)");
    ok (parse ("\"exec\":{\"bulkexec\":{}}", &c, &error) == 0,
        "exec without test: 0");

    ok (parse ("\"exec\":{\"test\":{}}", &c, &error) == 1,
        "an empty test object: 1");
    ok (c.run_duration == 0. && c.wait_status == 0 && !c.override
            && !c.reattach_finish && !c.release_per_rank && c.release_early < 0.
            && c.mock == TESTCONF_MOCK_NONE,
        "defaults: run_duration 0, status 0, no flags, no mock, no early "
        "release");
    ok (parse ("\"exec\":{\"test\":{\"release_early\":\"0.5s\"}}", &c, &error)
                == 1
            && c.release_early == 0.5,
        "release_early FSD \"0.5s\"");
    ok (parse ("\"exec\":{\"test\":{\"release_early\":0}}", &c, &error) == 1
            && c.release_early == 0.,
        "release_early 0 (at the start)");

    ok (parse ("\"duration\":30,\"exec\":{\"test\":{}}", &c, &error) == 1
            && c.run_duration == 30.,
        "run_duration defaults to attributes.system.duration");
    ok (parse ("\"duration\":30,\"exec\":{\"test\":{\"run_duration\":"
               "\"0.5s\"}}",
               &c, &error)
                == 1
            && c.run_duration == 0.5,
        "run_duration FSD \"0.5s\" overrides it");
    ok (parse ("\"exec\":{\"test\":{\"run_duration\":\"2m\"}}", &c, &error) == 1
            && c.run_duration == 120.,
        "run_duration \"2m\" is 120 s");
    ok (parse ("\"exec\":{\"test\":{\"run_duration\":0.25}}", &c, &error) == 1
            && c.run_duration == 0.25,
        "run_duration may be a number");
    ok (parse ("\"exec\":{\"test\":{\"run_duration\":3}}", &c, &error) == 1
            && c.run_duration == 3.,
        "run_duration may be an integer");
    ok (parse ("\"exec\":{\"test\":{\"run_duration\":\"inf\"}}", &c, &error)
                == 1
            && isinf (c.run_duration),
        "run_duration \"inf\"");
    ok (parse ("\"exec\":{\"test\":{\"wait_status\":256,\"mock_exception\":"
               "\"run\",\"override\":1,\"reattach_finish\":true,"
               "\"release_per_rank\":1}}",
               &c, &error)
                == 1
            && c.wait_status == 256 && c.mock == TESTCONF_MOCK_RUN && c.override
            && c.reattach_finish && c.release_per_rank,
        "every knob");
    ok (parse ("\"exec\":{\"test\":{\"override\":0,\"mock_exception\":"
               "\"init\"}}",
               &c, &error)
                == 1
            && !c.override && c.mock == TESTCONF_MOCK_INIT,
        "override 0 is off; mock init");
}

static void bad (const char *system, const char *why)
{
    struct testconf c;
    flux_error_t error;

    c.wait_status = 77;
    errno = 0;
    ok (parse (system, &c, &error) < 0 && errno == EINVAL
            && !strncmp (error.text, "attributes.system.exec.test", 27)
            && c.wait_status == 77,
        "%s: EINVAL, conf untouched (%s)", why, error.text);
}

int main (int argc, char **argv)
{
    flux_error_t error;
    struct testconf c;

    plan (NO_PLAN);
    good ();
    bad ("\"exec\":{\"test\":1}", "test not an object");
    bad ("\"exec\":{\"test\":{\"run_duration\":\"soon\"}}", "bad FSD");
    bad ("\"exec\":{\"test\":{\"run_duration\":\"-1s\"}}", "negative FSD");
    bad ("\"exec\":{\"test\":{\"run_duration\":-1}}", "negative number");
    bad ("\"exec\":{\"test\":{\"run_duration\":true}}", "boolean duration");
    bad ("\"exec\":{\"test\":{\"wait_status\":\"0\"}}", "string status");
    bad ("\"exec\":{\"test\":{\"wait_status\":65536}}", "status > 65535");
    bad ("\"exec\":{\"test\":{\"wait_status\":-1}}", "negative status");
    bad ("\"exec\":{\"test\":{\"mock_exception\":\"later\"}}",
         "unknown mock site");
    bad ("\"exec\":{\"test\":{\"override\":\"yes\"}}", "string override");
    bad ("\"exec\":{\"test\":{\"override\":-1}}", "negative override");
    bad ("\"exec\":{\"test\":{\"release_per_rank\":[]}}",
         "array release_per_rank");
    bad ("\"exec\":{\"test\":{\"release_early\":\"inf\"}}",
         "release_early inf");
    bad ("\"exec\":{\"test\":{\"release_early\":-2}}",
         "negative release_early");
    bad ("\"exec\":{\"test\":{\"release_early\":\"soon\"}}",
         "bad release_early FSD");
    bad ("\"exec\":{\"test\":{\"run_duraton\":\"1s\"}}", "misspelled key");
    errno = 0;
    ok (testconf_parse (NULL, &c, &error) < 0 && errno == EINVAL,
        "NULL jobspec: EINVAL");
    done_testing ();
    return 0;
}
