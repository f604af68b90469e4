/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* kvswatch.h - the kvs-watch engine (PROTOCOLS.md 4, kvs-watch.lookup).
 *
 * Watchers are indexed by namespace and normalized key (nsmon.h).  A
 * setroot event wakes only the watchers of the keys it lists, the
 * WATCH_FULL watchers of that namespace and the watchers waiting for the
 * namespace; a woken watcher looks its key up at the newest root with
 * kvs.lookup-plus (with the requester's credentials, so the kvs decides
 * access), one lookup at a time per watcher, so responses go out in
 * order and events that arrive meanwhile are coalesced into one more
 * lookup.  At most max_lookups watchers have a lookup (and its content
 * loads) in flight; the others wait in a FIFO run queue.  APPEND and
 * STREAM watchers fetch the raw valref and load only blobs not yet sent
 * (content.load), a few in flight at a time.
 *
 * The engine sends and receives through h (RPCs to the local kvs and
 * content services, responses to requesters) and never subscribes or
 * registers handlers itself: the module's main.c feeds it the requests and
 * events, and tells it how to follow a namespace's events (see
 * kvswatch_set_follow()), so tests can drive it over loop://.  All
 * functions are called from the reactor thread of h.
 */
#ifndef KVS_WATCH_KVSWATCH_H
#define KVS_WATCH_KVSWATCH_H

#include <jansson.h>
#include <stdint.h>

#include "libflux/flux.h"

typedef struct kvswatch kvswatch_t;

#define KVSWATCH_DEFAULT_MAX_LOOKUPS 128

/* Create the engine.  rank is this broker's (for log lines);
 * max_lookups (>= 1) bounds the watchers with a lookup in flight.
 * EINVAL, ENOMEM.
 */
kvswatch_t *kvswatch_create (flux_t *h, uint32_t rank, int max_lookups);

/* End every watcher with ENOSYS ("kvs-watch is unloading") and free
 * everything.  NULL-safe, preserves errno.
 */
void kvswatch_destroy (kvswatch_t *kw);

/* kvs-watch.lookup: answered with an error (EPROTO, EINVAL, EEXIST for
 * a second request with the same sender and matchtag, ENOMEM) or
 * registered as a watcher.
 */
void kvswatch_lookup (kvswatch_t *kw, const flux_msg_t *msg);

/* kvs-watch.cancel {matchtag:i}: the watcher of the same sender and
 * matchtag (if the canceller's credentials allow) ends with ENODATA.
 * Malformed requests are counted, logged and dropped (NORESPONSE).
 */
void kvswatch_cancel (kvswatch_t *kw, const flux_msg_t *msg);

/* kvs-watch.disconnect: every watcher of the sender is dropped without
 * a response.
 */
void kvswatch_disconnect (kvswatch_t *kw, const flux_msg_t *msg);

/* An event kvs.namespace-<NS>-{setroot,created,removed} (others are
 * ignored; malformed ones are counted, logged and ignored).
 */
void kvswatch_event (kvswatch_t *kw, const flux_msg_t *msg);

/* kvs.online: the kvs runs again.  A lookup the kvs refused with ENOSYS
 * (unloading, or not loaded) does not end its watcher: the watcher
 * waits for this and looks up again (stats "refused" counts them). */
void kvswatch_kvs_online (kvswatch_t *kw);

/* How the engine follows only the namespaces it watches.  sub(name, arg)
 * is called when namespace name gets a watcher and its events are not
 * followed yet, before that watcher's first lookup; it must return only
 * once the events published after it are sure to arrive (a synchronous
 * subscription), 0 on success or -1 with errno set (the watcher is then
 * refused with that errno).  unsub(name, arg) is called once the
 * namespace has had no watcher for KVSWATCH_UNFOLLOW_DELAY seconds
 * (so that watchers coming and going do not subscribe each time); its
 * result is only logged.  Without these (the default) the caller
 * delivers whatever events it gets, as tests over loop:// do.
 */
#define KVSWATCH_UNFOLLOW_DELAY 5.0
typedef int (*kvswatch_follow_f) (const char *name, void *arg);
void kvswatch_set_follow (kvswatch_t *kw, kvswatch_follow_f sub,
                          kvswatch_follow_f unsub, void *arg);

/* Statistics object (new reference), or NULL with ENOMEM:
 * {watchers:i, namespace-count:i, namespaces:{NS:{owner, rootseq,
 * watchers, keys, waiting}}, senders:i, lookups-active:i,
 * lookups-queued:i, max-lookups:i, lookups:i, loads:i, responses:i,
 * events:i, bad-requests:i, bad-events:i, followed:i (namespaces whose
 * events are followed), follows:i, unfollows:i}
 */
json_t *kvswatch_stats (kvswatch_t *kw);

#endif /* !KVS_WATCH_KVSWATCH_H */
