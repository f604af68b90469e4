/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_KVS_TXN_H
#define FLUX_KVS_TXN_H

/* KVS transactions: an ordered list of operations committed together
 * with flux_kvs_commit() (kvs.h), all or nothing.
 *
 * Each call appends one operation {key, flags, dirent} (PROTOCOLS.md 4)
 * to txn.  key is normalized (kvs_util.h); it must not be the root
 * ("." or only dots) and must be valid UTF-8, as the JSON it travels in
 * (else EINVAL).  Any existing key or path component in the way of the
 * operation is overwritten when the transaction is applied.  A failed
 * call leaves txn unchanged.  Errors: EINVAL (bad argument or flags),
 * ENOMEM.
 */
#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct flux_kvs_txn flux_kvs_txn_t;

/* Create an empty transaction (NULL with ENOMEM). */
flux_kvs_txn_t *flux_kvs_txn_create (void);
/* Destroy it (NULL-safe, keeps errno). */
void flux_kvs_txn_destroy (flux_kvs_txn_t *txn);
/* Drop all operations. */
int flux_kvs_txn_clear (flux_kvs_txn_t *txn);

/* Set key to the bytes of the string value, without its NUL (value NULL:
 * an empty value).  flags: 0, or FLUX_KVS_APPEND to append to the
 * current value (creating the key if absent).
 */
int flux_kvs_txn_put (flux_kvs_txn_t *txn, int flags, const char *key,
                      const char *value);

/* Set key to the compact JSON text built by json_pack (fmt, ...); flags
 * as for put.
 */
int flux_kvs_txn_pack (flux_kvs_txn_t *txn, int flags, const char *key,
                       const char *fmt, ...);
int flux_kvs_txn_vpack (flux_kvs_txn_t *txn, int flags, const char *key,
                        const char *fmt, va_list ap);

/* Set key to len raw bytes (data may be NULL when len is 0); flags as
 * for put.
 */
int flux_kvs_txn_put_raw (flux_kvs_txn_t *txn, int flags, const char *key,
                          const void *data, size_t len);

/* Set key to an RFC 11 object given as JSON text (validated; e.g. from
 * flux_kvs_lookup_get_treeobj()).  flags must be 0.
 */
int flux_kvs_txn_put_treeobj (flux_kvs_txn_t *txn, int flags, const char *key,
                              const char *treeobj);

/* Set key to an empty directory.  flags must be 0. */
int flux_kvs_txn_mkdir (flux_kvs_txn_t *txn, int flags, const char *key);

/* Remove key (with its contents if a directory); the dirent is null.
 * Unlinking a key that does not exist is not an error.  flags must be 0.
 */
int flux_kvs_txn_unlink (flux_kvs_txn_t *txn, int flags, const char *key);

/* Make key a symlink to target in namespace ns (NULL: the namespace the
 * link is in).  Neither need exist.  flags must be 0.
 */
int flux_kvs_txn_symlink (flux_kvs_txn_t *txn, int flags, const char *key,
                          const char *ns, const char *target);

#ifdef __cplusplus
}
#endif

#endif /* !FLUX_KVS_TXN_H */
