/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_CMD_SUBMIT_OPTS_H
#define FLUX_CMD_SUBMIT_OPTS_H

/* submit_opts.h - the options `flux submit` and `flux run` share, and
 * the jobspec built from them.
 *
 * The two commands parse one option table; options that only one of them
 * has are usage errors in the other (--cc, --bcc, --wait, --watch,
 * --quiet are submit's; -v, --wait-event are run's).
 *
 * --output, --error and --input set the shell options flux-core's
 * shell reads (attributes.system.shell.options):
 *   output.stdout = {type:"file", path:PATH}     --output=PATH
 *   output.stderr = {type:"file", path:PATH}     --error=PATH
 *   input.stdin   = {type:"file", path:PATH}     --input=PATH
 * and --label-io sets output.stdout.label = output.stderr.label = true
 * (file output labeled by task rank).  For flux run, --input=IDSET (or
 * "all") is not a file but the task ranks stdin goes to.
 */
#include <jansson.h>
#include <stdbool.h>

#include "libidset/idset.h"

enum submit_mode {
    SUBMIT_MODE_SUBMIT,
    SUBMIT_MODE_RUN,
    SUBMIT_MODE_BATCH, /* flux batch: --wrap, --broker-opts; no COMMAND
                          needed (the script may come on stdin) */
    SUBMIT_MODE_ALLOC, /* flux alloc: -v, --bg, --broker-opts; no COMMAND
                          needed (an interactive shell) */
};

struct submit_opts {
    enum submit_mode mode;
    int ntasks, nnodes, cores, gpus, exclusive;
    double duration;
    int urgency, flags;
    char **env, **setattr, **setopt, **deps;
    int nenv, nsetattr, nsetopt, ndeps;
    const char *cwd, *job_name;
    const char *output, *error, *input; /* file paths, or NULL */
    bool label_io, dry_run;
    /* submit only */
    struct idset *cc;
    bool subst_cc, wait, watch, quiet;
    /* run only */
    int verbose;
    const char *wait_event;
    const char *stdin_ranks; /* --input=IDSET, or NULL */
    /* batch and alloc */
    char **broker_opts;
    int nbroker_opts;
    bool wrap, bg;
};

/* Parse argv for mode (exits with a usage error on bad options);
 * optind is left at COMMAND. */
void submit_opts_parse (int argc, char **argv, enum submit_mode mode,
                        struct submit_opts *o);
void submit_opts_free (struct submit_opts *o);

/* The jobspec for the argc words of argv (COMMAND ARGS...); exits on
 * error. */
json_t *submit_build_jobspec (int argc, char **argv,
                              const struct submit_opts *o);

#endif /* !FLUX_CMD_SUBMIT_OPTS_H */
