/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* constraint.h - RFC 43 job-list constraints (RFC 31 syntax).
 *
 * Operators: userid, name, queue, states, results, hostlist, ranks,
 * t_submit, t_depend, t_run, t_cleanup, t_inactive (each a list of
 * values, any of which may match), and, or, not.  {} and {"and":[]}
 * and {"or":[]} match everything, {"not":[]} nothing.  An object with
 * several operators is the "and" of them.  States and results are names
 * (any case; pending, running and active included) or bit masks;
 * timestamps are strings ">T", ">=T", "<T", "<=T".
 */
#ifndef JOB_LIST_CONSTRAINT_H
#define JOB_LIST_CONSTRAINT_H

#include <jansson.h>
#include <stdbool.h>

#include "job.h"

struct constraint;

/* Parse a constraint object (NULL: match everything).  NULL with errno
 * EINVAL and a one-line error (e.g. "unknown constraint operator: foo")
 * or ENOMEM.
 */
struct constraint *constraint_create (json_t *o, flux_error_t *error);
void constraint_destroy (struct constraint *c);

bool constraint_match (const struct constraint *c, const struct job *job);

/* The job states a matching job can be in (a superset), so a listing
 * can skip whole state lists.
 */
int constraint_states (const struct constraint *c);

/* State / result names as RFC 43 constraints and flux jobs --filter
 * accept them (case-insensitive): the seven states, pending, running,
 * active; completed, failed, canceled (cancelled), timeout.  0 if
 * unknown.
 */
int constraint_state_mask (const char *name);
int constraint_result_mask (const char *name);

#endif /* !JOB_LIST_CONSTRAINT_H */
