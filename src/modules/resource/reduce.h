/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef RESOURCE_REDUCE_H
#define RESOURCE_REDUCE_H
/* reduce - which ranks are online, and (when discovering) their R
 * fragments, reduced up the TBON.
 *
 * Each rank's resource module holds one streaming `resource.watch`
 * request to each of its TBON children's modules.  A child answers it
 * first with its whole subtree -- {online:idset, R?:Rv1} -- once its own
 * discovery is done and every child of its own has answered (or a grace
 * period has passed), then with changes {online?, R?, offline?} batched
 * per loop turn.  So rank 0 gets O(fanout) messages at start, not
 * O(size).  A child that is lost fails the watch with EHOSTUNREACH (the
 * broker fails requests routed through a lost peer): its whole subtree
 * goes offline.  A module that unloads ends its upstream watch with
 * ECONNRESET.
 *
 * Who starts: a parent sends the watch once it is ready (discovered);
 * a child sends `resource.hello` {rank} (no response) to its parent when
 * it starts, and the parent (re)sends the watch to a child it has no
 * stream with.  One of the two always finds the other loaded.  The watch
 * request is empty, or {R} with the parent's own fragment: a child on
 * the same host takes it as its own instead of loading hwloc again.
 *
 * On rank 0 the changes go to the update callback instead of upstream.
 */
#include <jansson.h>

#include "libflux/flux.h"
#include "libidset/idset.h"

struct reduce;
struct topology;

/* Rank 0: ranks that came online (R: their merged fragment, NULL if none
 * came with them) and ranks that went offline.  Sets are borrowed for the
 * call; either may be empty. */
typedef void (*reduce_update_f) (const struct idset *online, json_t *R,
                                 const struct idset *offline, void *arg);

/* topo: the tree (borrowed: must outlive r).
 * grace: seconds a rank waits for its children before answering its
 * parent without them.  NULL/EINVAL, ENOMEM. */
struct reduce *reduce_create (flux_t *h, uint32_t rank,
                              const struct topology *topo, double grace,
                              reduce_update_f cb, void *arg);
/* Ends the upstream watch with ECONNRESET and drops the child streams. */
void reduce_destroy (struct reduce *r);

/* Send hello to the parent and watches to the children. */
int reduce_start (struct reduce *r);
/* This rank is up: R is its own fragment (NULL when R is configured,
 * i.e. not discovering). */
int reduce_local_ready (struct reduce *r, json_t *R);

/* This rank shares its parent's host: instead of discovering, take the
 * parent's fragment, which comes with the parent's watch (a parent sends
 * its watches once it is ready).  If the watch has none, discover() is
 * called. */
typedef void (*reduce_discover_f) (void *arg);
void reduce_set_adopt (struct reduce *r, reduce_discover_f discover, void *arg);

/* Handlers (owner only) for resource.hello and resource.watch. */
void reduce_hello (struct reduce *r, const flux_msg_t *msg);
void reduce_watch (struct reduce *r, const flux_msg_t *msg);

/* {online:s, children:{rank:state}, hello-rx:i, watch-rx:i, watch-tx:i} */
json_t *reduce_stats (struct reduce *r);

#endif /* !RESOURCE_REDUCE_H */
