/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* request.h - the part of a jobspec (RFC 14 as RFC 25 restricts it) the
 * scheduler needs: the resource shape as an rlist_request, and the
 * duration.  Shapes: [node ->] slot -> core [, gpu], counts integers
 * >= 1, node may carry exclusive:true.
 */
#ifndef SCHED_SIMPLE_REQUEST_H
#define SCHED_SIMPLE_REQUEST_H

#include <jansson.h>

#include "librlist/rlist.h"
#include "libflux/flux.h"

/* Fill *req and *duration (attributes.system.duration, 0 if absent)
 * from jobspec.  0, or -1 with errno EINVAL and a one-line reason in
 * error (e.g. "resources[0].with[0]: count must be an integer >= 1").
 */
int request_parse (json_t *jobspec, struct rlist_request *req, double *duration,
                   flux_error_t *error);

#endif /* !SCHED_SIMPLE_REQUEST_H */
