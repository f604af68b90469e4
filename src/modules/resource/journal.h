/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef RESOURCE_JOURNAL_H
#define RESOURCE_JOURNAL_H
/* journal - the in-memory resource eventlog and the resource.journal
 * stream (RFC 44).
 *
 * Every resource event (restart, resource-define, drain, undrain, online,
 * offline, ...) is appended here, whether or not it also goes to the KVS.
 * The log keeps at most `max` events: older ones are dropped and the log
 * then starts with a `truncate` event (no context, the timestamp of the
 * last dropped event).  A journal request gets the backlog in one
 * response (with R when it holds resource-define), then the sentinel
 * {events:[]}, then each new event as it is appended.
 */
#include <jansson.h>

#include "libflux/flux.h"

struct journal;

/* max >= 2.  NULL/ENOMEM, EINVAL. */
struct journal *journal_create (flux_t *h, int max);
/* Streams still open are dropped without a response (the module is
 * going away).  NULL-safe. */
void journal_destroy (struct journal *j);

/* Append an event (a reference is taken) and send it to every stream;
 * R (borrowed, may be NULL) rides along when name is resource-define. */
int journal_append (struct journal *j, json_t *entry, json_t *R);

/* resource.journal: EPROTO without FLAG_STREAMING. */
void journal_request (struct journal *j, const flux_msg_t *msg);
/* resource.journal-cancel {matchtag}: ends that stream with ENODATA. */
void journal_cancel (struct journal *j, const flux_msg_t *msg);
/* resource.disconnect: forget the sender's streams. */
void journal_disconnect (struct journal *j, const flux_msg_t *msg);

int journal_count (const struct journal *j);   /* events held */
int journal_streams (const struct journal *j); /* open streams */

#endif /* !RESOURCE_JOURNAL_H */
