/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* testconf.c - attributes.system.exec.test (see testconf.h). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "libutil/fsd.h"
#include "testconf.h"

#define PREFIX "attributes.system.exec.test"

static int inval (flux_error_t *error, const char *key, const char *what)
{
    errprintf (error, PREFIX ".%s %s", key, what);
    errno = EINVAL;
    return -1;
}

static int get_flag (json_t *o, const char *key, bool *flag,
                     flux_error_t *error)
{
    if (json_is_boolean (o))
        *flag = json_is_true (o);
    else if (json_is_integer (o) && json_integer_value (o) >= 0)
        *flag = json_integer_value (o) != 0;
    else
        return inval (error, key, "must be a boolean or an integer >= 0");
    return 0;
}

static int get_duration (json_t *o, const char *key, double *d,
                         flux_error_t *error)
{
    if (json_is_string (o)) {
        if (fsd_parse_duration (json_string_value (o), d) < 0)
            return inval (error, key, "is not a duration (FSD, e.g. \"0.5s\")");
    }
    else if (json_is_number (o)) {
        *d = json_number_value (o);
        if (!(*d >= 0.) || !isfinite (*d))
            return inval (error, key, "must be >= 0");
    }
    else
        return inval (error, key, "must be an FSD string or a number");
    return 0;
}

static int get_mock (json_t *o, enum testconf_mock *mock, flux_error_t *error)
{
    const char *s = json_string_value (o);

    if (s && !strcmp (s, "init"))
        *mock = TESTCONF_MOCK_INIT;
    else if (s && !strcmp (s, "run"))
        *mock = TESTCONF_MOCK_RUN;
    else
        return inval (error, "mock_exception", "must be \"init\" or \"run\"");
    return 0;
}

static int get_key (const char *key, json_t *val, struct testconf *c,
                    flux_error_t *error)
{
    if (!strcmp (key, "run_duration"))
        return get_duration (val, key, &c->run_duration, error);
    if (!strcmp (key, "release_early")) {
        if (get_duration (val, key, &c->release_early, error) < 0)
            return -1;
        if (!isfinite (c->release_early))
            return inval (error, key, "must be finite");
        return 0;
    }
    if (!strcmp (key, "wait_status")) {
        if (!json_is_integer (val) || json_integer_value (val) < 0
            || json_integer_value (val) > 0xffff)
            return inval (error, key, "must be an integer 0..65535");
        c->wait_status = (int)json_integer_value (val);
        return 0;
    }
    if (!strcmp (key, "mock_exception"))
        return get_mock (val, &c->mock, error);
    if (!strcmp (key, "override"))
        return get_flag (val, key, &c->override, error);
    if (!strcmp (key, "reattach_finish"))
        return get_flag (val, key, &c->reattach_finish, error);
    if (!strcmp (key, "release_per_rank"))
        return get_flag (val, key, &c->release_per_rank, error);
    return inval (error, key, "is not a known key");
}

int testconf_parse (json_t *jobspec, struct testconf *conf, flux_error_t *error)
{
    json_t *system, *test, *val;
    struct testconf c = {.release_early = -1.};
    const char *key;

    if (!jobspec || !conf) {
        errno = EINVAL;
        return errprintf (error, "testconf: missing argument");
    }
    system
        = json_object_get (json_object_get (jobspec, "attributes"), "system");
    test = json_object_get (json_object_get (system, "exec"), "test");
    if (!test)
        return 0;
    if (!json_is_object (test)) {
        errprintf (error, PREFIX " must be an object");
        errno = EINVAL;
        return -1;
    }
    val = json_object_get (system, "duration");
    if (json_is_number (val) && json_number_value (val) > 0.
        && isfinite (json_number_value (val)))
        c.run_duration = json_number_value (val);
    json_object_foreach (test, key, val)
    {
        if (get_key (key, val, &c, error) < 0)
            return -1;
    }
    *conf = c;
    return 1;
}
