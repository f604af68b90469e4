/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef RESOURCE_ACQUIRE_H
#define RESOURCE_ACQUIRE_H
/* acquire - the scheduler's resource.acquire stream (RFC 28).
 *
 * One acquirer at a time (another gets EBUSY until the first cancels or
 * disconnects).  The first response {resources:R, up:idset} is sent once
 * the resource set is defined (acquire_define), then {up?, down?} for
 * each change (acquire_notify) unless muted (resource.acquire-mute).
 */
#include <jansson.h>

#include "libflux/flux.h"
#include "libidset/idset.h"

struct acquire;

struct acquire *acquire_create (flux_t *h);
/* The stream, if any, is dropped without a response.  NULL-safe. */
void acquire_destroy (struct acquire *a);

/* The resource set is known: R (borrowed) is the scheduler's inventory
 * (excluded targets removed), up the targets available now.  A waiting
 * acquirer gets its first response; later ones get it at once. */
int acquire_define (struct acquire *a, json_t *R, const struct idset *up);
/* Targets that became available / unavailable (either may be NULL or
 * empty; nothing is sent when both are). */
void acquire_notify (struct acquire *a, const struct idset *up,
                     const struct idset *down);

/* Handlers: resource.acquire, resource.acquire-cancel {matchtag},
 * resource.acquire-mute (owner) and the disconnect of a client. */
void acquire_request (struct acquire *a, const flux_msg_t *msg);
void acquire_cancel (struct acquire *a, const flux_msg_t *msg);
void acquire_mute (struct acquire *a, const flux_msg_t *msg);
void acquire_disconnect (struct acquire *a, const flux_msg_t *msg);

/* Whether a scheduler holds the stream (for stats). */
bool acquire_active (const struct acquire *a);

#endif /* !RESOURCE_ACQUIRE_H */
