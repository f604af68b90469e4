/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_ATTR_H
#define FLUX_ATTR_H

/* Broker attributes (attr.get / attr.set / attr.list, PROTOCOLS.md 3).
 *
 * flux_attr_get() returns the value as a string owned by the handle; values
 * the broker marks immutable are cached for the life of the handle, others
 * stay valid until the next flux_attr_get() of the same name.
 * Errors: ENOENT (no such attribute), plus RPC errors.
 */
#include <stdint.h>

#include "handle.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FLUX_ATTRFLAG_IMMUTABLE 1

const char *flux_attr_get (flux_t *h, const char *name);
int flux_attr_set (flux_t *h, const char *name, const char *value);
/* The cached value of an immutable attribute, without asking the broker
 * (never blocks, so it is safe anywhere); NULL with ENOENT if not cached. */
const char *flux_attr_peek (flux_t *h, const char *name);

/* Pre-load a value into the cache (as immutable); used by brokers and
 * tests to avoid a round trip.  */
int flux_attr_set_cacheonly (flux_t *h, const char *name, const char *value);

/* "rank" and "size" as integers. */
int flux_get_rank (flux_t *h, uint32_t *rank);
int flux_get_size (flux_t *h, uint32_t *size);

#ifdef __cplusplus
}
#endif

#endif /* !FLUX_ATTR_H */
