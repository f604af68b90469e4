/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_SHELL_INFO_H
#define FLUX_SHELL_INFO_H

/* What a job shell knows of its job: the exec-agent.shell-info answer
 * {id, userid, rank, size, ranks, R, jobspec, opts}, decoded and checked
 * once, with what follows from it: this shell's cores and GPUs (from R's
 * R_lite), the tasks per shell (from the jobspec task count and R) and
 * the task map (block, or the `taskmap` shell option).
 *
 * No I/O here: tests build an info from JSON.
 */
#include <jansson.h>
#include <stdint.h>

#include "libflux/handle.h"
#include "libidset/idset.h"
#include "libtaskmap/taskmap.h"

struct shell_info {
    uint64_t id;
    int userid;
    int shell_rank;
    int shell_size;
    struct idset *ranks;   /* broker ranks of R, in shell rank order */
    unsigned int *brokers; /* broker rank of each shell rank */
    json_t *R;
    json_t *jobspec;
    json_t *opts;        /* agent options (may be an empty object) */
    json_t *cpus;        /* the CPUs of this shell's cores from the agent
                            ({"CORE": "BITMAP"}, hwcores.h), or NULL */
    int broker_rank;     /* the agent's broker rank, or -1 (not given) */
    char *rundir;        /* the broker's rundir from the agent, or NULL */
    bool tmpdir_reuse;   /* leave the tmpdir made in rundir empty: the
                            agent reuses it (exec-agent tmpdir_lend) */
    json_t *command;     /* tasks[0].command (borrowed from jobspec) */
    json_t *environment; /* attributes.system.environment or NULL */
    const char *cwd;     /* attributes.system.cwd or NULL */
    const char *name;    /* job name: attributes.system.job.name or
                            basename of command[0] */
    json_t *options;     /* attributes.system.shell.options (or {}) */
    struct idset *cores; /* this shell's cores in R */
    struct idset *gpus;  /* this shell's GPUs in R (maybe empty) */
    struct taskmap *map;
    int total_ntasks;
    int local_ntasks;
    struct idset *taskids; /* global ids of this shell's tasks */
};

/* Decode the shell-info response object o (a reference is taken on what
 * is kept).  NULL with errno EPROTO/EINVAL and the reason in error.
 */
struct shell_info *shell_info_create (json_t *o, flux_error_t *error);

void shell_info_destroy (struct shell_info *info);

/* Parse a size string ("10M", "1G", "4096", "512k"): bytes, -1/EINVAL.
 * Suffixes k, K, M, G, T are powers of 1024; at most INT64_MAX/2.
 */
int64_t shell_parse_size (const char *s);

/* A shell option that is a duration: a JSON number of seconds or an FSD
 * string ("30s", "2m").  Seconds, or -1 if it is neither or negative. */
double shell_parse_duration (const json_t *o);

#endif /* !FLUX_SHELL_INFO_H */
