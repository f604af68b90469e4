/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef BROKER_EVROUTE_H
#define BROKER_EVROUTE_H

/* Which children of a broker want the events of a KVS namespace.
 *
 * Events go down the whole tree, except those whose topic begins with
 * "kvs.namespace-" (setroot, created, removed, error: one per commit of
 * every namespace), which go only to the subtrees where something
 * subscribed to them.  A broker counts, per key, its own subscribers
 * (modules and clients; holder -1) and each child that registered the
 * key (holder 0..nchildren-1); when the count goes from 0 to 1 it
 * registers the key with its parent (broker.sub-add), from 1 to 0 it
 * withdraws it (broker.sub-del).  A subscription is answered once every
 * broker up to rank 0 has it (the requests held here until then), so an
 * event published after a subscribe returned is never missed.
 *
 * The key of a subscription prefix: "kvs.namespace-" for any prefix of
 * it (the empty prefix included: all such events), else the prefix cut
 * after its last '-' ("kvs.namespace-job-12-setroot" and
 * "kvs.namespace-job-12-" give "kvs.namespace-job-12-"): a key may
 * bring more events than asked, never fewer.
 */
#include <stdbool.h>
#include <stddef.h>

#include "libflux/flux.h"

struct evroute;

struct evroute *evroute_create (int nchildren);
void evroute_destroy (struct evroute *r); /* held requests are freed */

/* Whether topic is routed by subscription (else it is broadcast). */
bool evroute_routed (const char *topic);

/* The key of subscription prefix sub into key[size]; false if sub
 * subscribes to no routed topic (nothing to register). */
bool evroute_key (const char *sub, char *key, size_t size);

/* Count one more (less) holder of key: holder -1 is a local subscriber,
 * 0.. a child.  Returns 1 when the broker's count went 0 -> 1, -1 when
 * it went 1 -> 0, 0 otherwise; ref returns -2 on ENOMEM (nothing
 * counted), unref 0 when holder did not hold the key. */
int evroute_ref (struct evroute *r, int holder, const char *key);
int evroute_unref (struct evroute *r, int holder, const char *key);

/* Whether child (index) is to get an event of routed topic. */
bool evroute_wanted (struct evroute *r, int child, const char *topic);

/* Forget every key child held; dropped is called with each key whose
 * count went to 0. */
void evroute_child_clear (struct evroute *r, int child,
                          void (*dropped) (const char *key, void *arg),
                          void *arg);

/* A registration of key with the parent is on its way. */
void evroute_pending (struct evroute *r, const char *key);

/* Hold req (a reference is taken) until the registrations of key on
 * their way are acknowledged: 1 if held, 0 if none is pending (answer
 * now), -1 on ENOMEM. */
int evroute_hold (struct evroute *r, const char *key, const flux_msg_t *req);

/* One registration of key was acknowledged; if none is left pending,
 * release is called with each held request (the callee answers it; the
 * reference is dropped after). */
void evroute_acked (struct evroute *r, const char *key,
                    void (*release) (const flux_msg_t *req, void *arg),
                    void *arg);

/* Call cb with every key this broker holds (count > 0). */
void evroute_foreach (struct evroute *r,
                      void (*cb) (const char *key, void *arg), void *arg);

/* How many keys this broker holds (for broker.stats-get). */
size_t evroute_count (struct evroute *r);

#endif /* !BROKER_EVROUTE_H */
