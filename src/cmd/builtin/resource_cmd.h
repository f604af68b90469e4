/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_CMD_RESOURCE_CMD_H
#define FLUX_CMD_RESOURCE_CMD_H
/* Shared by the files of `flux resource` (resource.c: the group, drain,
 * undrain, R, info; resource_list.c: list and status with --format). */
#include <jansson.h>
#include <stdbool.h>

#include "libflux/flux.h"
#include "librlist/rlist.h"

/* An RPC to rank 0 with no payload; the response object (caller
 * decrefs).  Dies on error unless *errnum is given, then NULL with it. */
json_t *res_rpc (flux_t *h, const char *topic, int *errnum);

/* resource.sched-status, or sched.resource-status if the resource module
 * does not have it (ENOSYS): {all, down, allocated}.  Dies on error. */
json_t *res_sched_status (flux_t *h);

/* An rlist from an R object; dies if it is malformed. */
struct rlist *res_rlist (json_t *R, const char *what);

/* The ranks of rl that are in the idset string ranks, as a new rlist. */
struct rlist *res_subset (const struct rlist *rl, const char *ranks);

/* The free/allocated/down sets of a sched-status response. */
struct res_sets {
    struct rlist *all, *free, *allocated, *down;
};
void res_sets_get (json_t *sched_status, struct res_sets *sets);
void res_sets_free (struct res_sets *sets);

/* Is state in the comma-separated list states ("all" holds every one)? */
bool res_state_in (const char *states, const char *state);
/* A usage error unless every state of the list is in valid (or "all"). */
void res_check_states (const char *states, const char *const valid[]);

/* A --format string: literal text and {field[:[<>^]width]} items. */
struct res_format;
/* Parse fmt; a usage error (exit) if it is malformed or names a field
 * not in fields (NULL-terminated). */
struct res_format *res_format_parse (const char *fmt,
                                     const char *const fields[]);
void res_format_destroy (struct res_format *f);
/* Print the header (field names in upper case) or one row: get returns
 * the value of a field for arg (a string the printer does not free). */
typedef const char *(*res_field_f) (const char *field, void *arg);
void res_format_header (struct res_format *f);
void res_format_row (struct res_format *f, res_field_f get, void *arg);

int cmd_resource_list (int argc, char **argv);
int cmd_resource_status (int argc, char **argv);

#endif /* !FLUX_CMD_RESOURCE_CMD_H */
