/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef JOBMGR_DEPEND_H
#define JOBMGR_DEPEND_H
/* depend - job dependencies (RFC 26): after, afterany, afterok,
 * afternotok and begin-time, from attributes.system.dependencies.
 *
 * When a job enters DEPEND, each dependency not yet satisfied is posted
 * as dependency-add "<scheme>=<value>"; as each is satisfied, the
 * matching dependency-remove follows, and once none is outstanding,
 * depend.  A dependency that can never be satisfied (unknown or
 * inaccessible job, antecedent failed/succeeded against the scheme,
 * unknown scheme) raises a fatal exception of type "depend".  After a
 * restart the same descriptions are computed again: those already added
 * are not posted twice (RFC 26), those already removed count as met.
 *
 * A job waiting on another is linked to it (both ways), so an
 * antecedent's start or end touches only its own dependents.
 */
#include <jansson.h>

#include "jobmgr.h"

enum {
    DEP_AFTER = 1,
    DEP_AFTERANY,
    DEP_AFTEROK,
    DEP_AFTERNOTOK,
    DEP_BEGIN_TIME,
};

struct depinfo {
    int scheme;      /* DEP_* */
    flux_jobid_t id; /* antecedent (after*) */
    double begin;    /* begin-time */
    char desc[160];  /* "<scheme>=<value>" */
};

/* Parse one RFC 26 dependency object {scheme, value, ...} (pure).
 * -1 with EINVAL and the reason in error. */
int depend_parse (json_t *dep, struct depinfo *info, flux_error_t *error);

struct depend *depend_create (struct jobmgr *jm);
void depend_destroy (struct depend *d);

/* A job is in DEPEND: resolve its dependencies; post depend when none
 * remains outstanding. */
void depend_check (struct depend *d, struct job *job);

/* The antecedent 'job' started (state RUN) or became INACTIVE. */
void depend_notify (struct depend *d, struct job *job, int state);

/* The job no longer waits (it left DEPEND): unlink it, stop timers. */
void depend_cancel (struct depend *d, struct job *job);

#endif /* !JOBMGR_DEPEND_H */
