/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_STATS_H
#define FLUX_STATS_H

/* Answering <service>.stats-get the way every module does: an object of
 * the service's own numbers plus the handle's message counters, "tx" and
 * "rx", each {request, response, event, control}.
 */
#include <jansson.h>

#include "handle.h"
#include "message.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Respond to msg with o (taken over: always released) and the counters
 * added.  o NULL means it could not be built: the answer is ENOMEM.
 * A key "tx" or "rx" already in o is replaced.
 */
void flux_stats_respond (flux_t *h, const flux_msg_t *msg, json_t *o);

#ifdef __cplusplus
}
#endif

#endif /* FLUX_STATS_H */
