/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_KVS_H
#define FLUX_KVS_H

/* The KVS client API (named as flux-core's libkvs), speaking the wire
 * protocol of PROTOCOLS.md section 4 to the kvs and kvs-watch modules.
 *
 *   kvs_txn.h     building transactions
 *   kvs_lookup.h  lookups, watches, snapshots
 *   kvs_dir.h     directories returned by lookups
 *   this file     flags, commit, getroot, versions, namespaces, copy/move
 *
 * Every function taking a namespace ns treats NULL as $FLUX_KVS_NAMESPACE,
 * or "primary" when that is unset.  Futures follow future.h: destroy
 * them when done; getters wait if needed.  Errors are -1/NULL with
 * errno (EINVAL for bad arguments, ENOMEM; server errors pass through).
 */
#include <stdbool.h>
#include <stdint.h>

#include "libflux/flux.h"

#include "kvs_dir.h"
#include "kvs_lookup.h"
#include "kvs_txn.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KVS_PRIMARY_NAMESPACE "primary"

/* Lookup flags, and FLUX_KVS_APPEND for put operations. */
enum kvs_op {
    FLUX_KVS_READDIR = 1,
    FLUX_KVS_READLINK = 2,
    FLUX_KVS_WATCH = 4,
    FLUX_KVS_WAITCREATE = 8,
    FLUX_KVS_TREEOBJ = 16,
    FLUX_KVS_APPEND = 32,
    FLUX_KVS_WATCH_FULL = 64,
    FLUX_KVS_WATCH_UNIQ = 128,
    FLUX_KVS_WATCH_APPEND = 256,
    FLUX_KVS_STREAM = 512,
    FLUX_KVS_WATCH_INITIAL_SENTINEL = 1024,
};

/* Commit flags.  TXN_COMPACT is applied here and not sent: appends to a
 * key are merged into the previous put or append of the same key when no
 * operation in between touches that key, a parent or a child of it.
 *
 * A commit to the primary namespace is answered once it is durable (its
 * root checkpointed), SYNC or not.  LAZY (not in flux-core) asks for
 * less: the answer comes once the commit is applied (its blobs are
 * written to the content service behind it), and it becomes durable
 * with the next commit that is not LAZY and is applied after it
 * (whose checkpoint covers every root before it) or when the kvs unloads.
 * A broker that dies before that loses it.  For a write that a later
 * durable commit makes matter: the scheduler's R, which counts only once
 * the job manager's alloc event, committed after it, is durable.  A LAZY
 * commit does not wait for the fsync of durable commits queued with it,
 * nor, mostly, of one in flight: it may be applied ahead of other
 * senders' commits not yet answered (never ahead of an earlier commit of
 * its own sender).
 * Other namespaces are never checkpointed: LAZY changes nothing there.
 */
enum kvs_commit_flags {
    FLUX_KVS_NO_MERGE = 1,
    FLUX_KVS_TXN_COMPACT = 2,
    FLUX_KVS_SYNC = 4,
    FLUX_KVS_LAZY = 8,
};

/* The namespace used for ns NULL. */
const char *flux_kvs_default_namespace (void);

/* Commit txn (kvs.commit {namespace, flags, ops}).  The future is
 * fulfilled once the transaction is applied (with SYNC: also
 * checkpointed).  txn may be destroyed as soon as this returns.
 */
flux_future_t *flux_kvs_commit (flux_t *h, const char *ns, int flags,
                                flux_kvs_txn_t *txn);
/* The new root: blobref, RFC 11 dirref text (for lookupat), sequence. */
int flux_kvs_commit_get_rootref (flux_future_t *f, const char **rootref);
int flux_kvs_commit_get_treeobj (flux_future_t *f, const char **treeobj);
int flux_kvs_commit_get_sequence (flux_future_t *f, int *rootseq);

/* The current root of a namespace (kvs.getroot).  flags must be 0. */
flux_future_t *flux_kvs_getroot (flux_t *h, const char *ns, int flags);
int flux_kvs_getroot_get_treeobj (flux_future_t *f, const char **treeobj);
int flux_kvs_getroot_get_blobref (flux_future_t *f, const char **blobref);
int flux_kvs_getroot_get_sequence (flux_future_t *f, int *rootseq);
int flux_kvs_getroot_get_owner (flux_future_t *f, uint32_t *owner);

/* Synchronous: the current root sequence of ns; wait until it reaches
 * version (kvs.wait-version).
 */
int flux_kvs_get_version (flux_t *h, const char *ns, int *version);
int flux_kvs_wait_version (flux_t *h, const char *ns, int version);

/* Namespaces (owner only, served on rank 0).  create computes the root
 * as the blobref (hash: the content.hash attribute, default sha1) of an
 * empty dir; the content store must already hold that blob (the kvs
 * module stores it at start).  create_with takes an existing rootref
 * instead.  owner FLUX_USERID_UNKNOWN means the instance owner.  flags
 * must be 0.  remove of an absent namespace succeeds.
 */
flux_future_t *flux_kvs_namespace_create (flux_t *h, const char *ns,
                                          uint32_t owner, int flags);
flux_future_t *flux_kvs_namespace_create_with (flux_t *h, const char *ns,
                                               const char *rootref,
                                               uint32_t owner, int flags);
flux_future_t *flux_kvs_namespace_remove (flux_t *h, const char *ns);
/* kvs.namespace-list; read the response with flux_rpc_get_unpack()
 * "{s:o}", "namespaces" (an array of {namespace, owner, flags}).
 */
flux_future_t *flux_kvs_namespace_list (flux_t *h);

/* Copy srckey (as its RFC 11 object: a directory is copied by
 * reference, not recursively) to dstkey; move also unlinks srckey
 * afterwards (a second commit).  commit_flags go to the commits.  The
 * future is fulfilled with the result of the last commit.
 */
flux_future_t *flux_kvs_copy (flux_t *h, const char *srcns, const char *srckey,
                              const char *dstns, const char *dstkey,
                              int commit_flags);
flux_future_t *flux_kvs_move (flux_t *h, const char *srcns, const char *srckey,
                              const char *dstns, const char *dstkey,
                              int commit_flags);

#ifdef __cplusplus
}
#endif

#endif /* !FLUX_KVS_H */
