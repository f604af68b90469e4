/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_BROKER_TRACE_H
#define FLUX_BROKER_TRACE_H

/* The streaming requests of overlay.trace and module.trace (owner), as
 * flux-core's: each asks for a response per message that crosses one of
 * the broker's doors (an overlay link, a module's queue) and matches it.
 *
 * Request {typemask:i, topic_glob:s, nodeid?:i, names?:[s], full?:b}:
 * the message types wanted (FLUX_MSGTYPE_* bits), an fnmatch(3) pattern
 * of topics, the overlay peer (-1 or absent: any), the module names
 * (absent or empty: any), and whether to send payloads.
 *
 * Response {timestamp:f (wall clock), prefix:s ("tx": the broker sent
 * it, "rx": the broker received it), rank:i (the overlay peer, -1 for a
 * module), name:s|null (the module), type:i, topic:s (for a control
 * message its kind and status, "heartbeat 0"), payload_size:i,
 * payload:o|null (with full, a JSON payload), errnum:i, errstr:s (with
 * full, an error response's text)}.
 *
 * Messages whose topic is that of a trace request itself are not traced:
 * a tracer's own answers would be traced for ever.  At most TRACE_MAX
 * requests per set.  Every function runs in the broker's thread.
 */
#include <stdbool.h>
#include <stdint.h>

#include "libflux/flux.h"

#define TRACE_MAX 64

struct trace_set;

/* A set of trace requests for topic (the request topic, never traced). */
struct trace_set *trace_set_create (const char *topic);
void trace_set_destroy (struct trace_set *ts);

/* Take request msg: 0, or -1 with errno (EPROTO: bad payload or not
 * streaming, EAGAIN: TRACE_MAX reached, ENOMEM) and *why a message for
 * the requester.  The caller answers errors; the set answers the rest. */
int trace_set_add (struct trace_set *ts, const flux_msg_t *msg,
                   const char **why);

/* A requester went away: drop its requests (by their first route). */
void trace_set_disconnect (struct trace_set *ts, const flux_msg_t *msg);

/* How many requests the set holds: nothing to trace when 0. */
size_t trace_set_count (const struct trace_set *ts);

/* msg crossed a door: answer every request of ts it matches, on h.
 * rank: the overlay peer, or -1; name: the module, or NULL. */
void trace_set_emit (struct trace_set *ts, flux_t *h, bool tx, int64_t rank,
                     const char *name, const flux_msg_t *msg);

#endif /* !FLUX_BROKER_TRACE_H */
