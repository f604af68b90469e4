/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_PMI_UPMI_H
#define FLUX_PMI_UPMI_H

/* upmi - one small interface over the ways a launcher offers PMI.
 *
 * Methods (flux-core's FLUX_PMI_CLIENT_METHODS names):
 *   simple   PMI-1 wire protocol: over PMI_FD (+ PMI_RANK, PMI_SIZE), as
 *            flux start, MPICH hydra and Slurm's pmi2 plugin offer it, or
 *            over PMI_PORT=host:port + PMI_ID (hydra's -pmi-port mode:
 *            connect, "cmd=initack pmiid=ID", then size/rank from the
 *            server's "cmd=set" lines).
 *   pmix     PMIx through libpmix (Open MPI's mpirun, srun --mpi=pmix),
 *            tried only when PMIX_NAMESPACE is set.
 *   single   a singleton: rank 0 of 1.
 *
 * upmi_create() tries each method of a blank-separated list in order and
 * keeps the first that works.  The list is `methods` if not NULL, else
 * $FLUX_PMI_CLIENT_METHODS, else "simple pmix single".  With the default
 * list, "single" is refused when the environment shows a parallel launch
 * (PMI_FD, PMI_PORT, PMI_SIZE > 1, PMIX_NAMESPACE/PMIX_RANK,
 * SLURM_STEP_NUM_TASKS > 1, OMPI_COMM_WORLD_SIZE > 1): N processes each
 * starting alone is never what the user meant.  An explicit list that
 * names "single" is obeyed.  FLUX_PMI_DEBUG=1 traces on stderr each
 * method tried and why it failed; on a refusal the reasons are printed
 * whatever FLUX_PMI_DEBUG says.
 *
 * Keys are per rank: upmi_put() publishes key under the caller's rank,
 * upmi_get() reads key as published by a given rank (the simple method
 * stores "key.rank" in its one KVS; PMIx stores key under the proc).
 * Values become visible to others after upmi_barrier() (commit + fence).
 * Functions return 0 or -1 with errno and error->text.
 */
#include <stddef.h>

#include "libflux/flux.h"

#ifdef __cplusplus
extern "C" {
#endif

struct upmi;

/* A method's implementation (also how a test plugs in its own). */
struct upmi_ops {
    int (*put) (void *impl, const char *key, const char *val,
                flux_error_t *error);
    int (*barrier) (void *impl, flux_error_t *error);
    int (*get) (void *impl, const char *key, int rank, char *buf, size_t len,
                flux_error_t *error);
    int (*abort) (void *impl, int exit_code, const char *msg);
    void (*destroy) (void *impl); /* finalize and free */
};

struct upmi *upmi_create (const char *methods, flux_error_t *error);

/* Wrap an implementation; upmi_destroy() calls ops->destroy (impl).
 * Returns NULL with errno EINVAL or ENOMEM. */
struct upmi *upmi_create_ops (const char *name, const struct upmi_ops *ops,
                              void *impl, int rank, int size);
void upmi_destroy (struct upmi *upmi);

int upmi_rank (struct upmi *upmi);
int upmi_size (struct upmi *upmi);
/* The number of nodes the launch spans, as the method's launcher tells
 * it natively (PMIx: PMIX_NUM_NODES), 0 if it does not; a PMI-1 launcher
 * says it in the PMI_process_mapping key instead (see upmi_get). */
int upmi_nnodes (struct upmi *upmi);
const char *upmi_method (struct upmi *upmi); /* "simple", "pmix", "single" */

/* The longest value the method takes (NUL included): values longer than
 * this must be split by the caller. */
size_t upmi_vallen_max (struct upmi *upmi);

int upmi_put (struct upmi *upmi, const char *key, const char *val,
              flux_error_t *error);
int upmi_barrier (struct upmi *upmi, flux_error_t *error);
/* The value rank put under key; a rank < 0 asks for a job-wide key the
 * launcher itself provides (e.g. flux.instance-level from a job shell). */
int upmi_get (struct upmi *upmi, const char *key, int rank, char *buf,
              size_t len, flux_error_t *error);
/* Ask the launcher to end the whole job (best effort). */
void upmi_abort (struct upmi *upmi, int exit_code, const char *msg);

/* The reason, if any, the environment shows a parallel launch, e.g.
 * "SLURM_STEP_NUM_TASKS=4"; NULL if it does not.  buf holds the text. */
const char *upmi_parallel_launch (char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* !FLUX_PMI_UPMI_H */
