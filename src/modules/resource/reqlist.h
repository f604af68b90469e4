/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef RESOURCE_REQLIST_H
#define RESOURCE_REQLIST_H
/* reqlist - requests held by a service: open streams, or requests
 * waiting for the resource set to be defined.  Matches RFC 6 cancel
 * requests ({matchtag}, same sender, authorized) and disconnects (same
 * sender, authorized).  Order of addition is kept.
 */
#include "libflux/flux.h"

struct reqlist;

/* max: the most requests held at once (reqlist_add fails with EAGAIN
 * beyond it); 0 means no limit. */
struct reqlist *reqlist_create (int max);
/* Drops the references; sends nothing. */
void reqlist_destroy (struct reqlist *l);

/* Hold msg (a reference is taken).  EAGAIN if full, ENOMEM. */
int reqlist_add (struct reqlist *l, const flux_msg_t *msg);
int reqlist_count (const struct reqlist *l);

/* Call cb for each held request, oldest first.  cb returns true to drop
 * the request from the list (the list's reference is then released after
 * cb returns). */
typedef bool (*reqlist_f) (const flux_msg_t *msg, void *arg);
void reqlist_foreach (struct reqlist *l, reqlist_f cb, void *arg);

/* Take out the request matched by the cancel request msg ({matchtag:i}):
 * the caller gets the list's reference.  NULL with ENOENT if none, EPROTO
 * if msg is malformed. */
const flux_msg_t *reqlist_cancel (struct reqlist *l, const flux_msg_t *msg);

/* Drop every request of the sender of msg that msg's credentials may
 * speak for.  Returns the number dropped. */
int reqlist_disconnect (struct reqlist *l, const flux_msg_t *msg);

/* Drop every request, first answering each with errnum/errstr. */
void reqlist_fail_all (struct reqlist *l, flux_t *h, int errnum,
                       const char *errstr);

#endif /* !RESOURCE_REQLIST_H */
