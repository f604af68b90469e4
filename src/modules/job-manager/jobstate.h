/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef JOBMGR_JOBSTATE_H
#define JOBMGR_JOBSTATE_H
/* jobstate - the RFC 21 job state machine as a pure function of events.
 *
 * A struct jobstate is what an eventlog says about a job: its state and
 * everything the job manager needs to carry on after replaying it.
 * jobstate_apply() applies one event and is the only code that changes
 * a job's state, both live (event.c) and at restart (restart.c), so
 * replaying an eventlog always yields the state the job manager had.
 *
 * Events are checked strictly: the context keys RFC 21 requires must be
 * present with the right types, and an event the current state does not
 * allow is refused (EINVAL, with text), leaving the jobstate unchanged.
 * Events RFC 21 does not name (debug.*, future extensions) are accepted
 * and change nothing.  No function here touches the network or a clock.
 */
#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "libflux/flux.h"
#include "libidset/idset.h"
#include "libjob/job.h"

struct jobstate {
    int state;        /* FLUX_JOB_STATE_*, 0 before the submit event */
    uint32_t userid;  /* submit */
    int urgency;      /* submit, urgency */
    int64_t priority; /* priority; -1 until the first one */
    int flags;        /* submit flags | set-flags (FLUX_JOB_DEBUG ...) */
    double t_submit;  /* timestamp of submit */
    double t_run;     /* timestamp of alloc, 0 if none */
    double t_clean;   /* timestamp of clean, 0 if none */
    int nevents;      /* events applied */

    bool invalid;           /* invalidate seen */
    bool has_resources;     /* alloc seen, free not yet */
    bool started;           /* start seen */
    bool finished;          /* finish seen */
    bool release_final;     /* a release with final=true seen */
    struct idset *released; /* ranks of the releases with final=false
                             * (RFC 32 partial release), NULL if none */
    int status;             /* finish status (wait status) */
    int prolog_active;      /* prolog-start minus prolog-finish */
    int epilog_active;      /* epilog-start minus epilog-finish */
    double expiration;      /* resource-update expiration, -1 if none */

    /* The first severity 0 exception, if any. */
    bool fatal;
    char *exc_type;
    char *exc_note;

    json_t *deps;      /* {description:true} added, not yet removed */
    json_t *deps_done; /* {description:true} added and removed */
    json_t *updates;   /* {dotted.key:value} from jobspec-update */
    json_t *memo;      /* memo dictionary */
};

void jobstate_init (struct jobstate *js);

/* Free what js holds and re-initialize it. */
void jobstate_clear (struct jobstate *js);

/* Apply one event (its parts).  context may be NULL.  Returns 0, or -1
 * with errno EINVAL and a reason in error (the jobstate is then
 * unchanged).  Strings are copied.
 */
int jobstate_apply (struct jobstate *js, double timestamp, const char *name,
                    json_t *context, flux_error_t *error);

/* Apply an RFC 18 entry (as eventlog_entry_parse() accepts). */
int jobstate_apply_entry (struct jobstate *js, json_t *entry,
                          flux_error_t *error);

/* Replay a whole eventlog (RFC 18 text) into a freshly initialized js.
 * -1 with errno EPROTO (malformed log) or EINVAL (an event refused),
 * and the reason in error ("event N (name): ...").
 */
int jobstate_replay (struct jobstate *js, const char *eventlog,
                     flux_error_t *error);

/* As jobstate_replay() for a decoded log (an array of entries). */
int jobstate_replay_array (struct jobstate *js, json_t *log,
                           flux_error_t *error);

/* Result of a job that reached CLEANUP or INACTIVE:
 * FLUX_JOB_RESULT_* (a fatal exception "cancel" is CANCELED, "timeout"
 * is TIMEOUT, any other FAILED; else COMPLETED if finish status is 0,
 * else FAILED).  0 if the job is not finished in either sense.
 */
int jobstate_result (const struct jobstate *js);

/* True if the job completed: no fatal exception and finish status 0. */
bool jobstate_success (const struct jobstate *js);

/* The one-line reason a job failed, as `flux job wait` prints it
 * ("" on success): "Fatal exception type=T NOTE", "task(s) exited with
 * exit code N", "task(s) Killed".
 */
void jobstate_errstr (const struct jobstate *js, char *buf, size_t size);

/* "NEW" ... "INACTIVE" ("?" if unknown). */
const char *jobstate_name (int state);

/* Names of set-flags flags: "debug", "waitable", "novalidate".
 * Returns the FLUX_JOB_* bit, or 0 if unknown.
 */
int jobstate_flag_bit (const char *name);

#endif /* !JOBMGR_JOBSTATE_H */
