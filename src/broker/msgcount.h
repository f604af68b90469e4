/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef BROKER_MSGCOUNT_H
#define BROKER_MSGCOUNT_H

/* Counts of the messages a broker routes, by where they came from, type
 * and topic: what one job costs the brokers of a big instance, message
 * by message (bench/exec64-msgs.sh).  Off unless the broker was started
 * with FLUX_BROKER_MSGCOUNT set in its environment: a hash lookup per
 * message is not for every broker.
 */
#include <jansson.h>

#include "libflux/flux.h"

struct msgcount;

/* NULL (errno 0) if counting is off, or on error. */
struct msgcount *msgcount_create (void);
void msgcount_destroy (struct msgcount *mc);

/* Count msg, which came from `from` ("parent", "child", "module",
 * "client", "self").  mc may be NULL (a no-op). */
void msgcount_add (struct msgcount *mc, const char *from,
                   const flux_msg_t *msg);

/* The counts as {"FROM TYPE TOPIC": n}, or NULL if off; clear zeroes
 * them afterwards. */
json_t *msgcount_json (struct msgcount *mc, bool clear);

#endif /* !BROKER_MSGCOUNT_H */
