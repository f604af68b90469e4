/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* nsmon.h - what kvs-watch knows about one KVS namespace: its newest root,
 * its owner, and an index of the watchers of that namespace by key, so that
 * a setroot event wakes only the watchers of the keys it names (plus those
 * that asked for WATCH_FULL, plus those waiting for the namespace to be
 * created) without looking at any other watcher.
 *
 * Watchers are represented by a struct nsmon_link embedded in the caller's
 * object; nsmon never allocates or frees them.  Nothing here sends
 * messages: it is driven by the kvs-watch engine and by unit tests.
 */
#ifndef KVS_WATCH_NSMON_H
#define KVS_WATCH_NSMON_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "libflux/list.h"

struct keyent;

/* Embedded in a watcher.  Fields are private to nsmon. */
struct nsmon_link {
    struct list_node keynode;  /* in its key's list, or in the FULL list */
    struct list_node allnode;  /* in the list of every link */
    struct list_node waitnode; /* in the wait-for-namespace list */
    struct keyent *kent;       /* NULL for FULL links */
    void *arg;                 /* the watcher */
};

typedef struct nsmon nsmon_t;

/* Called for each link woken with the arg given to nsmon_add() for it,
 * and the caller's cbarg.
 */
typedef void (*nsmon_wake_f) (void *arg, void *cbarg);

/* Create the monitor of namespace name: no root known (rootseq -1),
 * owner FLUX_USERID_UNKNOWN, generation 0, no links.
 */
nsmon_t *nsmon_create (const char *name);

/* Destroy; links still attached are detached (left pointing at
 * themselves), not freed.  NULL-safe, preserves errno.
 */
void nsmon_destroy (nsmon_t *ns);

const char *nsmon_name (nsmon_t *ns);

/* Attach link for key (already normalized, see kvs_util_normalize_key).
 * A full link is woken by every setroot event whatever its keys.  arg is
 * handed back by the wake functions.  EINVAL if link is already attached
 * or key is NULL, ENOMEM.
 */
int nsmon_add (nsmon_t *ns, struct nsmon_link *link, const char *key, bool full,
               void *arg);

/* Detach link (from the wait list too).  No-op if not attached. */
void nsmon_remove (nsmon_t *ns, struct nsmon_link *link);

/* Number of attached links. */
int nsmon_count (nsmon_t *ns);

/* Number of distinct keys indexed (FULL links not counted). */
int nsmon_key_count (nsmon_t *ns);

/* Park an attached link until the namespace is created
 * (nsmon_wake_waiting).  No-op if already parked.
 */
void nsmon_wait_create (nsmon_t *ns, struct nsmon_link *link);
bool nsmon_is_waiting (const struct nsmon_link *link);
int nsmon_waiting_count (nsmon_t *ns);

/* Wake the links of every key in keys (a JSON array of strings, which
 * are normalized here if they need it; other elements are ignored), then
 * every FULL link.  A link is woken once per matching element.  cb must
 * not detach links other than the one it is called for.  Returns the
 * number of wakeups, or -1 with EINVAL if keys is not an array.
 */
int nsmon_wake_keys (nsmon_t *ns, const json_t *keys, nsmon_wake_f cb,
                     void *cbarg);

/* Unpark every waiting link, calling cb for each after it is unparked. */
void nsmon_wake_waiting (nsmon_t *ns, nsmon_wake_f cb, void *cbarg);

/* Call cb for every attached link; cb may detach the link it is given
 * (and only that one).
 */
void nsmon_foreach (nsmon_t *ns, nsmon_wake_f cb, void *cbarg);

/* Newest root known: rootseq -1 and rootref NULL until one is set.
 * update_root keeps the root with the highest sequence: returns 1 if
 * (seq, ref) replaced it, 0 if it was not newer, -1 with EINVAL/ENOMEM.
 */
int nsmon_rootseq (nsmon_t *ns);
const char *nsmon_rootref (nsmon_t *ns);
int nsmon_update_root (nsmon_t *ns, int seq, const char *ref);

/* Owner userid (FLUX_USERID_UNKNOWN until learned from an event). */
uint32_t nsmon_owner (nsmon_t *ns);
void nsmon_set_owner (nsmon_t *ns, uint32_t owner);

/* A counter bumped by the engine each time an event says the namespace
 * exists (created, setroot), to detect races with lookups in flight.
 */
unsigned int nsmon_gen (nsmon_t *ns);
void nsmon_bump_gen (nsmon_t *ns);

#endif /* !KVS_WATCH_NSMON_H */
