/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_CMD_SPROC_H
#define FLUX_CMD_SPROC_H

#include <stdbool.h>

#include "libflux/flux.h"
#include "libidset/idset.h"
#include "libsubprocess/subprocess.h"

/* `flux exec --bg`: start cmd in the background (a non-streaming
 * SERVICE.exec, flux-core's flux_rexec_bg) on each of ranks, waitable if
 * asked; print "<rank>: <pid>" for each, in rank order, once all have
 * answered, or "flux-exec: Error: rank N: CMD: <error>" on stderr.
 * Returns 0 if every one started, else 1 (the exit code).
 */
int sproc_exec_bg (flux_t *h, const char *service, const struct idset *ranks,
                   const flux_cmd_t *cmd, bool waitable);

#endif /* !FLUX_CMD_SPROC_H */
