/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_MSGDEQUE_H
#define FLUX_MSGDEQUE_H

/* Internal: a growable ring buffer of message references, used by the
 * handle's requeue list and the loop and msgpipe connectors.
 * Zero-initialize to create; msgdeque_clear() drops every reference and
 * frees the storage.  Not thread-safe: the caller locks if needed.
 * push/pop are O(1) amortized; take (removal from the middle) is O(n).
 */
#include <stdbool.h>
#include <stddef.h>

#include "message.h"

struct msgdeque {
    flux_msg_t **v;
    size_t head, count, cap;
};

/* Add msg (the deque takes the caller's reference) at the head or tail.
 * -1 with ENOMEM on failure (the caller keeps its reference). */
int msgdeque_push (struct msgdeque *q, flux_msg_t *msg, bool head);
/* Remove and return the head, or NULL if empty (caller owns it). */
flux_msg_t *msgdeque_pop (struct msgdeque *q);
/* Entry i (0 = head), i < count; still owned by the deque. */
flux_msg_t *msgdeque_peek (struct msgdeque *q, size_t i);
/* Remove entry i, preserving order (caller owns it). */
flux_msg_t *msgdeque_take (struct msgdeque *q, size_t i);
/* Drop every message and free the storage. */
void msgdeque_clear (struct msgdeque *q);

#endif /* !FLUX_MSGDEQUE_H */
