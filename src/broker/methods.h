/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef BROKER_METHODS_H
#define BROKER_METHODS_H

/* Default methods shared by the broker's own services and its modules
 * (PROTOCOLS.md 2): NAME.ping and NAME.stats-get answers, and route ids.
 */
#include <stddef.h>
#include <stdint.h>

#include "libflux/flux.h"

/* Answer a ping: the request object echoed with route (sender first,
 * each hop cut to 8 characters, '!'-joined, then our own id), userid,
 * rolemask and rank added.  EPROTO if the payload is not an object. */
void method_ping_respond (flux_t *h, const flux_msg_t *msg, const char *self_id,
                          uint32_t rank);

/* Answer NAME.stats-get with the handle's message counters. */
void method_stats_respond (flux_t *h, const flux_msg_t *msg);

/* A random (version 4) UUID string; size >= 37.  -1 if no randomness
 * could be had (getrandom failed) or size is too small. */
int method_uuid (char *buf, size_t size);

#endif /* !BROKER_METHODS_H */
