/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_FUTURE_PRIVATE_H
#define FLUX_FUTURE_PRIVATE_H

/* Internal: how specialised futures (RPCs, composites, chains) hook into
 * the generic future.
 */
#include "future.h"

struct future_ops {
    /* called once, at the first then(), to arrange fulfillment through
     * the reactor */
    void (*on_then) (flux_future_t *f);
    /* block until f is ready or timeout (< 0 forever); 0 or -1 */
    int (*wait) (flux_future_t *f, double timeout);
    /* release the implementation */
    void (*destroy) (flux_future_t *f);
};

flux_future_t *future_create_ops (const struct future_ops *ops, void *impl);
void *future_impl (flux_future_t *f);
const struct future_ops *future_get_ops (flux_future_t *f);

/* Seconds left of a timeout that started at 'start' (monotonic clock),
 * or -1 for forever. */
double future_remaining (double start, double timeout);

#endif /* !FLUX_FUTURE_PRIVATE_H */
