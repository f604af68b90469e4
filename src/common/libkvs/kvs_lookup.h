/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_KVS_LOOKUP_H
#define FLUX_KVS_LOOKUP_H

/* KVS lookups (PROTOCOLS.md 4).
 *
 * flux_kvs_lookup() sends kvs.lookup {key, flags, namespace}, or, when
 * flags hold FLUX_KVS_WATCH, FLUX_KVS_WAITCREATE or FLUX_KVS_STREAM,
 * kvs-watch.lookup (a streaming RPC when WATCH or STREAM is set).
 * ns NULL means $FLUX_KVS_NAMESPACE, or else "primary".
 * flux_kvs_lookupat() looks key up relative to a snapshot: treeobj is
 * the JSON text of an RFC 11 dirref (flux_kvs_getroot_get_treeobj(),
 * flux_kvs_commit_get_treeobj(), or a TREEOBJ lookup of a directory);
 * it sends kvs.lookup {key, flags, rootdir}.  It takes no WATCH,
 * WAITCREATE or STREAM flag.
 *
 * Flag rules (EINVAL otherwise): WATCH and STREAM exclude each other;
 * WATCH_FULL/UNIQ/APPEND/INITIAL_SENTINEL need WATCH; INITIAL_SENTINEL
 * needs WATCH_APPEND; the remaining bits are one of 0, TREEOBJ, READDIR,
 * READDIR|TREEOBJ, READLINK.
 *
 * The getters below wait for the current response if needed, then read
 * it; they may be called several times and mixed.  What they return
 * stays valid until flux_future_reset() or flux_future_destroy().  A
 * failed response (ENOENT, EISDIR, ENOTDIR, ENOTSUP, EPERM, ENODATA at
 * the end of a stream...) makes every getter fail with that errno; the
 * text, if any, is flux_future_error_string().  EPROTO means the
 * response was malformed; EINVAL that it holds another kind of object
 * than the getter reads.
 *
 * With FLUX_KVS_WATCH_INITIAL_SENTINEL one response has no value: for
 * it flux_kvs_lookup_is_sentinel() is true, get/get_raw return 0 with
 * a NULL value, the other getters fail with EINVAL.
 */
#include <stdbool.h>
#include <stddef.h>

#include "libflux/flux.h"

#include "kvs_dir.h"

#ifdef __cplusplus
extern "C" {
#endif

flux_future_t *flux_kvs_lookup (flux_t *h, const char *ns, int flags,
                                const char *key);
flux_future_t *flux_kvs_lookupat (flux_t *h, int flags, const char *key,
                                  const char *treeobj);

/* The value as a NUL-terminated string; NULL if the value is empty. */
int flux_kvs_lookup_get (flux_future_t *f, const char **value);

/* The value parsed as JSON (any JSON value), unpacked with
 * json_unpack-style fmt.  Strings unpacked stay valid as above.
 * EINVAL if it is not JSON or does not match fmt.
 */
int flux_kvs_lookup_get_unpack (flux_future_t *f, const char *fmt, ...);

/* The raw value and its length; NULL and 0 if empty. */
int flux_kvs_lookup_get_raw (flux_future_t *f, const void **data, size_t *len);

/* The directory of a READDIR lookup (owned by the future). */
int flux_kvs_lookup_get_dir (flux_future_t *f, const flux_kvsdir_t **dir);

/* The RFC 11 object of the response, as compact JSON text with sorted
 * keys (any lookup; with TREEOBJ it is the unconverted dirent).
 */
int flux_kvs_lookup_get_treeobj (flux_future_t *f, const char **treeobj);

/* The target and namespace (NULL if none) of a READLINK lookup. */
int flux_kvs_lookup_get_symlink (flux_future_t *f, const char **ns,
                                 const char **target);

/* True if the current response is the WATCH_INITIAL_SENTINEL (waits). */
bool flux_kvs_lookup_is_sentinel (flux_future_t *f);

/* The key and namespace given to the lookup (NULL with EINVAL if f is
 * not a lookup future; the namespace is NULL for lookupat).
 */
const char *flux_kvs_lookup_get_key (flux_future_t *f);
const char *flux_kvs_lookup_get_namespace (flux_future_t *f);

/* End a WATCH / WAITCREATE / STREAM lookup: sends kvs-watch.cancel
 * {matchtag} (no response).  The stream then ends with ENODATA, which
 * the caller should wait for before destroying f.  EINVAL if f is not
 * such a lookup.
 */
int flux_kvs_lookup_cancel (flux_future_t *f);

#ifdef __cplusplus
}
#endif

#endif /* !FLUX_KVS_LOOKUP_H */
