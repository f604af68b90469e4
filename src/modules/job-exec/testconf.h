/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef JOB_EXEC_TESTCONF_H
#define JOB_EXEC_TESTCONF_H

/* testconf - the simulated-execution knobs of a jobspec,
 * attributes.system.exec.test (an object), as flux-core's testexec reads
 * them, plus one of ours:
 *
 *   run_duration      FSD string ("0.5s", "2m", "inf") or a number of
 *                     seconds >= 0.  Default: attributes.system.duration
 *                     if it is a number > 0, else 0 (finish on the next
 *                     loop turn).
 *   wait_status       the "finish" status, 0..65535 (default 0).
 *   mock_exception    "init" (fail before start) or "run" (fail after
 *                     the start response).
 *   override          bool or int: the job starts only when a
 *                     job-exec.override {event:"start"} request comes;
 *                     then, with run_duration 0 or "inf", it runs until
 *                     a job-exec.override {event:"finish"} or an
 *                     exception.
 *   reattach_finish   bool or int: on reattach, finish at once.
 *   release_per_rank  bool or int (ours): after finish, release the
 *                     job's ranks one per "release" response, final
 *                     last, instead of one release of "all".
 *   release_early     FSD string or number of seconds >= 0 (ours): that
 *                     long after the start, while the job still runs,
 *                     release all its ranks but the last in one
 *                     "release" response (final:false), as a job whose
 *                     other nodes are done would.  Ignored for a job on
 *                     one rank.
 *
 * Any other key, or a value of the wrong type, is an error: a test that
 * misspells a knob should fail loudly, not run as something else.
 */
#include <jansson.h>
#include <stdbool.h>

#include "libflux/flux.h"

enum testconf_mock {
    TESTCONF_MOCK_NONE = 0,
    TESTCONF_MOCK_INIT,
    TESTCONF_MOCK_RUN,
};

struct testconf {
    double run_duration; /* seconds, may be INFINITY */
    int wait_status;
    enum testconf_mock mock;
    bool override;
    bool reattach_finish;
    bool release_per_rank;
    double release_early; /* seconds after start, < 0: never */
};

/* Read the knobs of jobspec into conf.  Returns 1 if
 * attributes.system.exec.test is present and valid, 0 if it is absent
 * (conf untouched), -1 with errno EINVAL and a one-line reason in error
 * if it is present but invalid.
 */
int testconf_parse (json_t *jobspec, struct testconf *conf,
                    flux_error_t *error);

#endif /* !JOB_EXEC_TESTCONF_H */
