/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_SHELL_HWCORES_H
#define FLUX_SHELL_HWCORES_H

/* The cores of a node and their CPUs: all a shell needs to bind tasks to
 * the cores of R, without loading libhwloc (with libudev and libm), which
 * costs every job's shell more than the binding itself.
 *
 * The exec agent reads them once from its hwloc XML topology (in document
 * order, which is hwloc's logical order: the exporter writes each
 * object's children in order; test/hwcores.c checks it against hwloc's own
 * reading; a core's CPUs are its `cpuset` attribute) and gives each shell
 * the CPUs of its cores of R only, in hwloc's bitmap text (32-bit hex
 * words, most significant first: "0x00000003", "0x00000001,0x00000000"),
 * which the shell puts back with hwcores_create() and hwcores_set().
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

/* A map of ncores cores (logical indexes 0 to ncores - 1), none of which
 * has CPUs yet (hwcores_add refuses them).  NULL with errno. */
struct hwcores *hwcores_create (int ncores);

/* Core i has the CPUs of bitmap (hwloc's bitmap text, not empty).  -1 with
 * EINVAL on a bad index or bitmap. */
int hwcores_set (struct hwcores *hc, int i, const char *bitmap);

int hwcores_count (const struct hwcores *hc);

/* The size in bytes of a CPU set (CPU_ALLOC_SIZE) that holds every CPU
 * of every core. */
size_t hwcores_setsize (const struct hwcores *hc);

/* Add the CPUs of core i (logical index) to set (of hwcores_setsize()
 * bytes).  -1 with EINVAL when there is no core i (or it has no CPUs). */
int hwcores_add (const struct hwcores *hc, int i, cpu_set_t *set);

/* Core i's CPUs as hwloc's bitmap text, in buf of size bytes: its
 * length, or -1 with EINVAL (no core i) or EOVERFLOW (buf too small). */
int hwcores_format (const struct hwcores *hc, int i, char *buf, size_t size);

#endif /* !FLUX_SHELL_HWCORES_H */
