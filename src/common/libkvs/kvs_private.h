/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_KVS_PRIVATE_H
#define FLUX_KVS_PRIVATE_H

/* Library-internal helpers of libkvs (also used by its unit tests). */
#include <jansson.h>

#include "libflux/flux.h"

#include "kvs_dir.h"
#include "kvs_txn.h"

/* The operations of txn, an array of {key, flags, dirent} (borrowed). */
json_t *kvs_txn__ops (const flux_kvs_txn_t *txn);

/* Add the operations of src after those of dst (src is unchanged): one
 * commit of dst then does what committing dst and then src would, in
 * one transaction.  -1 with EINVAL (NULL, or dst == src) or ENOMEM.
 */
int kvs_txn__append (flux_kvs_txn_t *dst, const flux_kvs_txn_t *src);

/* A new array holding the operations of txn after FLUX_KVS_TXN_COMPACT
 * (see kvs.h).  NULL with ENOMEM.
 */
json_t *kvs_txn__compact (const flux_kvs_txn_t *txn);

/* As kvs_txn__compact(), and if steps is not NULL, the number of key
 * lookups and updates it took (linear in the operations and their keys'
 * depth: the unit test checks it).
 */
json_t *kvs_txn__compact_steps (const flux_kvs_txn_t *txn, size_t *steps);

/* The RFC 11 dirref text of blobref (compact, sorted keys), cached on f
 * as aux item name and owned by f.  NULL with EPROTO if blobref is
 * malformed, or ENOMEM.
 */
char *kvs__dirref_text (flux_future_t *f, const char *name,
                        const char *blobref);

/* A directory object over dir (an RFC 11 dir, incref'd).  NULL with
 * EINVAL or ENOMEM.
 */
flux_kvsdir_t *kvsdir__create (flux_t *h, const char *rootref, const char *key,
                               json_t *dir);

/* ns, or the default namespace if ns is NULL. */
const char *kvs__namespace (const char *ns);

#endif /* !FLUX_KVS_PRIVATE_H */
