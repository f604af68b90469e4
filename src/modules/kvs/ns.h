/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* ns.h - the namespaces a kvs module knows: name, owner, current root.
 *
 * Rank 0 owns every namespace; ranks > 0 track the ones they have seen.
 * A namespace is reference counted so that work in flight (a commit
 * batch) can finish with it after it was removed from the table.  The
 * list heads are for the module's own queues (commits, waiters).
 */
#ifndef KVS_NS_H
#define KVS_NS_H

#include <stdbool.h>
#include <stdint.h>

#include "libcontent/blobref.h"
#include "libflux/list.h"

#define KVS_PRIMARY "primary"

/* The longest namespace name kvs.namespace-create accepts: its events
 * (kvs.namespace-<name>-setroot ...) must fit their topics. */
#define KVS_NAMESPACE_NAME_MAX 255

struct kvs_ns {
    char *name;
    uint32_t owner;
    int flags;
    char rootref[BLOBREF_MAX_STRING_SIZE];
    int rootseq;
    bool removed; /* no longer in the table */
    int refcount;

    struct list_node waiters; /* wait-version requests */
    struct list_node queue;   /* rank 0: commits waiting for a batch */
    int queued;
    struct list_node batches; /* rank 0: batches in flight, oldest first */
    int nbatches;
    bool applying; /* the newest batch is being applied */
    char tent_ref[BLOBREF_MAX_STRING_SIZE]; /* root after the newest batch */
    int tent_seq;
    int linger_target;   /* rank 0: wait for this many queued commits */
    bool linger_expired; /* ... or until the linger timer fired */
    int linger_skip;     /* batches to start without waiting */
    int linger_backoff;  /* linger_skip after the next wait in vain */
    bool paused;         /* setroot-pause: root updates held back */
    char held_ref[BLOBREF_MAX_STRING_SIZE];
    int held_seq; /* -1: nothing held */
    /* rank 0: commits arrived this turn, the batch starts at its end */
    struct list_node settle_link;
    bool settle_pending;
};

struct nstab;

struct nstab *nstab_create (void);

/* Every namespace is marked removed and released.  NULL-safe. */
void nstab_destroy (struct nstab *t);

/* Add a namespace at root (rootref, rootseq).  EEXIST, EINVAL, ENOMEM.
 * The table holds one reference.
 */
struct kvs_ns *nstab_add (struct nstab *t, const char *name, uint32_t owner,
                          int flags, const char *rootref, int rootseq);

/* The namespace called name, or NULL. */
struct kvs_ns *nstab_lookup (struct nstab *t, const char *name);

/* Take ns out of the table (marked removed) and drop the table's
 * reference.
 */
void nstab_remove (struct nstab *t, struct kvs_ns *ns);

int nstab_count (struct nstab *t);

/* Call cb for each namespace until it returns non-zero. */
int nstab_foreach (struct nstab *t, int (*cb) (struct kvs_ns *ns, void *arg),
                   void *arg);

struct kvs_ns *kvs_ns_incref (struct kvs_ns *ns);
void kvs_ns_decref (struct kvs_ns *ns);

/* Set the root, whatever its number (a resync from rank 0).  False if
 * rootref does not fit. */
bool kvs_ns_set_root (struct kvs_ns *ns, const char *rootref, int rootseq);

/* Move the root forward: only if rootseq is newer than the current one.
 * Returns true if the root changed.
 */
bool kvs_ns_advance (struct kvs_ns *ns, const char *rootref, int rootseq);

#endif /* !KVS_NS_H */
