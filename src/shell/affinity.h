/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_SHELL_AFFINITY_H
#define FLUX_SHELL_AFFINITY_H

/* CPU and GPU binding with hwloc.
 *
 * Option `cpu-affinity`: "on" (default: the shell, hence its tasks, bound
 * to the cores R gives this node), "per-task" (the cores split evenly
 * between the local tasks), "off".  Core ids in R are hwloc logical core
 * indexes.  Cores of R that this machine does not have are left out (with
 * a warning); with none left nothing is bound.
 *
 * Option `gpu-affinity`: "on" (default: CUDA_VISIBLE_DEVICES = the GPU
 * ids of R on this node, -1 if none), "per-task", "off".
 */
#include "libflux/handle.h"

#include "env.h"

struct shell;
struct affinity;

struct affinity *affinity_create (struct shell *shell, flux_error_t *error);
void affinity_destroy (struct affinity *a);

/* Just before spawning local task localid: bind the shell to the task's
 * cores (inherited by the child), set CUDA_VISIBLE_DEVICES in env.
 */
int affinity_task_setup (struct affinity *a, int localid, struct env *env);

/* After the spawn: bind the shell back to all its cores. */
void affinity_task_done (struct affinity *a);

#endif /* !FLUX_SHELL_AFFINITY_H */
