/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_SHELL_HWCORES_H
#define FLUX_SHELL_HWCORES_H

/* The cores of an hwloc XML topology and their CPUs, read from the text
 * without hwloc: all the shell needs to bind tasks to the cores of R,
 * and loading libhwloc (with libudev and libm) costs every job's shell
 * more than the binding itself.
 *
 * Cores come in document order, which is hwloc's logical order (the
 * exporter writes each object's children in order; test/hwcores.c checks
 * it against hwloc's own reading).  A core's CPUs are its `cpuset`
 * attribute (hwloc's bitmap text: 32-bit hex words, most significant
 * first).
 */
#include <sched.h>
#include <stddef.h>

#include "libflux/handle.h"

struct hwcores;

/* Parse xml.  NULL with error->text on malformed input (a Core without a
 * finite cpuset, a CPU beyond HWCORES_MAX_CPUS).
 */
#define HWCORES_MAX_CPUS 65536
struct hwcores *hwcores_parse (const char *xml, flux_error_t *error);
void hwcores_destroy (struct hwcores *hc);

int hwcores_count (const struct hwcores *hc);

/* The size in bytes of a CPU set (CPU_ALLOC_SIZE) that holds every CPU
 * of every core. */
size_t hwcores_setsize (const struct hwcores *hc);

/* Add the CPUs of core i (logical index) to set (of hwcores_setsize()
 * bytes).  -1 with EINVAL when there is no core i. */
int hwcores_add (const struct hwcores *hc, int i, cpu_set_t *set);

#endif /* !FLUX_SHELL_HWCORES_H */
