/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_CMD_SUBMIT_OPTS_H
#define FLUX_CMD_SUBMIT_OPTS_H

/* submit_opts.h - the options `flux submit` and `flux run` share, and
 * the jobspec built from them.
 *
 * The two commands parse one option table; options that only one of them
 * has are usage errors in the other (--cc, --bcc, --wait, --watch,
 * --quiet are submit's; -v is run's; both have --wait-event).
 *
 * --output, --error and --input set the shell options flux-core's
 * shell reads (attributes.system.shell.options):
 *   output.stdout = {type:"file", path:PATH}     --output=PATH
 *   output.stderr = {type:"file", path:PATH}     --error=PATH
 *   input.stdin   = {type:"file", path:PATH}     --input=PATH
 * and --label-io sets output.stdout.label = output.stderr.label = true
 * (file output labeled by task rank).  For flux run, --input=IDSET (or
 * "all") is not a file but the task ranks stdin goes to.
 *   taskmap = {scheme:S, value?:V}                --taskmap=S[:V]
 *   rlimit = {NAME: soft limit or -1, ...}        always, --rlimit=RULE
 *   signal = {signum:i, timeleft:f}               --signal=[SIG][@TIME]
 *   output.stdout.buffer.type = "none",
 *   output.batch-timeout = 0.05                   -u, --unbuffered
 * and --begin-time adds the dependency begin-time:SECONDS (RFC 26),
 * --add-file attributes.system.files.NAME (submit_attrs.h).
 * The rlimit option carries the submitter's soft limits as flux-core's
 * CLI does (all but memlock, msgqueue, nice, rtprio, rttime, sigpending),
 * changed by the --rlimit rules.  --tasks-per-node=N with -N M is -n M*N.
 */
#include <jansson.h>
#include <stdbool.h>

#include "libflux/flux.h"
#include "libidset/idset.h"
#include "libjob/job.h"

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
    char **env, **setattr, **setopt, **deps, **rlimit, **files;
    int nenv, nsetattr, nsetopt, ndeps, nrlimit, nfiles;
    int tasks_per_node;  /* --tasks-per-node (sets ntasks), or 0 */
    const char *taskmap; /* --taskmap=SCHEME[:VALUE], or NULL */
    const char *signal;  /* --signal=[SIG][@TIME], or NULL */
    double begin_time;   /* --begin-time, seconds since the epoch, or 0 */
    const char *cwd, *job_name;
    const char *output, *error, *input; /* file paths, or NULL */
    bool label_io, dry_run, unbuffered;
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

/* The --help lines of the options flux run and flux submit share. */
#define SUBMIT_OPTS_HELP                                                     \
    "  -n, --ntasks=N           Number of tasks (default 1)\n"               \
    "  -N, --nodes=N            Number of nodes to spread the tasks on\n"    \
    "      --tasks-per-node=N   N tasks on each node of --nodes (instead\n"  \
    "                           of --ntasks)\n"                              \
    "  -c, --cores-per-task=N   Cores per task (default 1)\n"                \
    "  -g, --gpus-per-task=N    GPUs per task (default 0)\n"                 \
    "  -x, --exclusive          Allocate whole nodes (needs -N)\n"           \
    "  -t, --time-limit=MIN|FSD Time limit: minutes, or a duration such\n"   \
    "                           as 30s, 2h\n"                                \
    "      --urgency=N          Urgency 0-31 (default 16), or hold (0),\n"   \
    "                           default (16), expedite (31)\n"               \
    "      --dependency=URI     Add a dependency, e.g. afterok:ID "          \
    "(repeatable)\n"                                                         \
    "      --begin-time=TIME    Not before TIME: +DURATION, @SECONDS,\n"     \
    "                           YYYY-MM-DD HH:MM[:SS], or HH:MM[:SS]\n"      \
    "  -S, --setattr=KEY[=VAL]  Set attributes.KEY (system. if no prefix)\n" \
    "                           to VAL, JSON if it parses (repeatable)\n"    \
    "  -o, --setopt=OPT[=VAL]   Set the shell option OPT (repeatable)\n"     \
    "      --env=RULE           Environment rule: VAR=VAL, -PATTERN, "       \
    "PATTERN\n"                                                              \
    "                           (repeatable; default: the whole "            \
    "environment)\n"                                                         \
    "      --env-remove=PATTERN Same as --env=-PATTERN\n"                    \
    "      --env-file=FILE      Same as --env=^FILE: the rules of FILE\n"    \
    "      --add-file=[NAME=]ARG  Put file ARG (or the text ARG, with a\n"   \
    "                           newline) in the job's FLUX_JOB_TMPDIR\n"     \
    "                           as NAME: {{tmpdir}}/NAME in COMMAND\n"       \
    "      --cwd=DIR            Working directory (default: the current)\n"  \
    "      --job-name=NAME      Name the job (default: the command)\n"       \
    "      --taskmap=SCHEME[:VALUE]  Map tasks to nodes: block (default),\n" \
    "                           cyclic[:N], manual:MAP (RFC 34)\n"           \
    "  -u, --unbuffered         The tasks' stdout as it comes, not by\n"     \
    "                           lines, and sooner (50ms batches)\n"          \
    "      --signal=[SIG][@TIME]  Send SIG (default SIGUSR1) to the tasks\n" \
    "                           TIME (an FSD, default 60s) before the\n"     \
    "                           time limit\n"                                \
    "      --rlimit=RULE        Resource limits sent with the job: NAME,\n"  \
    "                           -NAME (globs), NAME=VALUE (repeatable;\n"    \
    "                           default: the soft limits but memlock,\n"     \
    "                           msgqueue, nice, rtprio, rttime, sigpending)\n"

/* Parse argv for mode (exits with a usage error on bad options);
 * optind is left at COMMAND. */
void submit_opts_parse (int argc, char **argv, enum submit_mode mode,
                        struct submit_opts *o);
void submit_opts_free (struct submit_opts *o);

/* The FLUX_JOB_* flags named in s, a comma-separated list of waitable,
 * debug and novalidate (--flags of flux submit/run/batch/alloc and flux
 * job submit); exits with a usage error on any other name. */
int submit_parse_flags (const char *s);

/* The jobspec for the argc words of argv (COMMAND ARGS...); exits on
 * error. */
json_t *submit_build_jobspec (int argc, char **argv,
                              const struct submit_opts *o);

/* Submit one job js with o's urgency and flags, as flux run and flux
 * alloc do: the handle opened for it in *hp, its id in *id; dies with a
 * message on failure.  With --dry-run, print js instead and return 1
 * (nothing opened).  Returns 0 once submitted.
 */
int submit_opts_submit_one (json_t *js, const struct submit_opts *o,
                            flux_t **hp, flux_jobid_t *id);

#endif /* !FLUX_CMD_SUBMIT_OPTS_H */
