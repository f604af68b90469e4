/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_JOB_JOBSPEC_H
#define FLUX_JOB_JOBSPEC_H
/* Jobspec version 1 (RFC 14 as RFC 25 restricts it): parse, validate,
 * and reduce to the summary every job module needs.
 *
 * Accepted resource shapes (RFC 25): [node ->] slot -> core [, gpu],
 * where node is optional and "count" is an integer >= 1 everywhere;
 * node may carry "exclusive": true; tasks is one entry
 * {command:[s...], slot:"<label>", count:{per_slot:1}|{total:N}}.
 */
#include <jansson.h>
#include "libflux/flux.h"

struct jobspec {
    int nnodes;           /* 0 when no node level */
    int nslots;           /* total slots (per node count times nnodes) */
    int slots_per_node;   /* -1 when no node level */
    int cores_per_slot;   /* >= 1 */
    int gpus_per_slot;    /* >= 0 */
    int exclusive;        /* node level had exclusive:true */
    int ntasks;           /* total tasks */
    double duration;      /* attributes.system.duration, 0 = unlimited */
    const char *name;     /* job-name (attributes.system.job.name, else
                             basename of command[0]), never NULL */
    const char *cwd;      /* attributes.system.cwd or NULL */
    const char *queue;    /* attributes.system.queue or NULL */
    json_t *command;      /* the tasks[0].command array */
    json_t *environment;  /* attributes.system.environment or NULL */
    json_t *dependencies; /* attributes.system.dependencies array or NULL */
    json_t *attributes;   /* the attributes object */
    json_t *jobspec;      /* the whole (owned) */
};

/* Parse and validate jobspec JSON (or YAML when the text does not start
 * with '{').  Returns a new struct jobspec the caller frees with
 * jobspec_destroy(), or NULL with errno EINVAL (ENOMEM) and a one-line
 * error->text that says what is wrong, e.g.
 *   "version 2 is not supported (only version 1)"
 *   "resources: slot count must be an integer >= 1"
 *   "attributes.system.duration must be a number >= 0". */
struct jobspec *jobspec_parse (const char *text, flux_error_t *error);
/* As jobspec_parse() on a decoded object (a reference is taken). */
struct jobspec *jobspec_parse_json (json_t *o, flux_error_t *error);
void jobspec_destroy (struct jobspec *js);

/* YAML (libyaml) text to a JSON value; NULL/EINVAL with error text. */
json_t *jobspec_yaml_to_json (const char *text, flux_error_t *error);

/* Build a jobspec v1 object from the usual command-line shape: ntasks,
 * nodes (0 = unspecified), cores and gpus per task, exclusive, duration
 * (0 = unlimited), the command (argv), cwd, environment (object or NULL).
 * The "slot" gets cores_per_task cores; ntasks slots.  As flux submit. */
json_t *jobspec_from_command (int argc, char **argv, int ntasks, int nnodes,
                              int cores_per_task, int gpus_per_task,
                              int exclusive, double duration,
                              flux_error_t *error);

#endif /* !FLUX_JOB_JOBSPEC_H */
