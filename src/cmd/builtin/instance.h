/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_CMD_INSTANCE_H
#define FLUX_CMD_INSTANCE_H

/* instance.h - what flux batch, alloc, uri and proxy share: the jobspec
 * of a job that is a Flux instance (RFC 8), and finding a running
 * sub-instance's URI.
 *
 * The jobspec: one `flux broker [BROKER-OPTS] ARGS...` task per node.
 * -N N (default 1) nodes; each node's slot gets the cores of
 * ceil(ntasks/N) tasks of -c cores (ntasks = -n, default N).  Unlike
 * flux-core, -N alone does not imply --exclusive: our shell cannot yet
 * place one task per node of an exclusive allocation (flux run -N2 -x
 * fails the same way).
 *
 * The URI: the sub-instance's rank 0 posts a memo {uri:"ssh://HOST/PATH"}
 * on its job (src/broker/parent.c); it is read from the job's eventlog.
 */
#include <jansson.h>
#include <stdbool.h>

#include "libflux/flux.h"
#include "libjob/job.h"

#include "submit_opts.h"

/* The --help lines of the options flux batch and flux alloc share:
 * the resources, then the job's settings. */
#define INSTANCE_RES_HELP                                                     \
    "  -N, --nodes=N            Nodes (one broker each; default 1)\n"         \
    "  -n, --ntasks=N           Slots (default: one per node); with -c the\n" \
    "                           cores are ceil(N/nodes)*c per node\n"         \
    "  -c, --cores-per-task=N   Cores per slot (default 1)\n"                 \
    "  -g, --gpus-per-task=N    GPUs per slot (default 0)\n"                  \
    "  -x, --exclusive          Whole nodes\n"                                \
    "  -t, --time-limit=MIN|FSD Time limit of the instance\n"
#define INSTANCE_JOB_HELP                                                   \
    "      --broker-opts=OPT    Option for the instance's brokers, e.g.\n"  \
    "                           -Sstatedir=DIR (repeatable)\n"              \
    "      --urgency=N          Urgency 0-31 (default 16)\n"                \
    "      --dependency=URI     Add a dependency (repeatable)\n"            \
    "  -S, --setattr=KEY[=VAL]  Set attributes.KEY (repeatable)\n"          \
    "  -o, --setopt=OPT[=VAL]   Set a shell option (repeatable)\n"          \
    "      --env=RULE           Environment rule (repeatable)\n"            \
    "      --env-remove=PATTERN Same as --env=-PATTERN\n"                   \
    "      --cwd=DIR            Working directory (default: the current)\n" \
    "      --flags=LIST         Comma list of waitable, debug, novalidate\n"

/* The jobspec of flux broker ARGS (argc words; exits on error). */
json_t *instance_build_jobspec (int argc, char **argv, struct submit_opts *o);

/* The URI job id posted (caller frees), following its eventlog: with
 * wait, until the memo appears; without, only the events logged so far.
 * NULL with error set if the job is unknown, has ended, or (without wait)
 * is not running or has no URI yet. */
char *instance_job_uri (flux_t *h, flux_jobid_t id, bool wait,
                        flux_error_t *error);

/* Resolve TARGET: a URI (scheme://...), or a job id path "ID[/ID...]"
 * where each ID is a job of the instance the previous one names (the
 * first one a job of h's instance).  Returns the URI (caller frees) or
 * NULL with error set. */
char *instance_resolve (flux_t *h, const char *target, bool wait,
                        flux_error_t *error);

/* ssh://HOST/PATH -> local://PATH when HOST is this host (or localhost);
 * any other URI is copied.  Caller frees; NULL if out of memory. */
char *instance_uri_local (const char *uri);

#endif /* !FLUX_CMD_INSTANCE_H */
