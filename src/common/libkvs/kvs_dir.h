/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_KVS_DIR_H
#define FLUX_KVS_DIR_H

/* A KVS directory as returned by flux_kvs_lookup_get_dir(): the RFC 11
 * dir object of one lookup, with the key it was found under, so that
 * entries can be named and looked up in turn.  Entries are typically
 * dirref/valref/val/symlink objects; isdir() is true for dir and dirref.
 *
 * Objects are reference counted: flux_kvsdir_incref() / destroy().
 * Nothing here talks to the broker.
 */
#include <stdbool.h>

#include "libflux/flux.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct flux_kvsdir flux_kvsdir_t;
typedef struct flux_kvsitr flux_kvsitr_t;

/* Make a directory from the JSON text of an RFC 11 dir (validated).
 * h may be NULL.  rootref is the RFC 11 snapshot (a dirref) the dir was
 * read from, NULL if it came from a namespace's current root.  NULL with
 * EINVAL (json_str not a dir, key NULL) or ENOMEM.
 */
flux_kvsdir_t *flux_kvsdir_create (flux_t *h, const char *rootref,
                                   const char *key, const char *json_str);
/* Drop a reference; NULL-safe, keeps errno. */
void flux_kvsdir_destroy (flux_kvsdir_t *dir);
void flux_kvsdir_incref (flux_kvsdir_t *dir);
/* A new, independent copy. */
flux_kvsdir_t *flux_kvsdir_copy (const flux_kvsdir_t *dir);

/* Number of entries. */
int flux_kvsdir_get_size (const flux_kvsdir_t *dir);
/* Whether entry name exists / is a dir or dirref / is a symlink. */
bool flux_kvsdir_exists (const flux_kvsdir_t *dir, const char *name);
bool flux_kvsdir_isdir (const flux_kvsdir_t *dir, const char *name);
bool flux_kvsdir_issymlink (const flux_kvsdir_t *dir, const char *name);

/* The normalized key of the directory ("." for the root). */
const char *flux_kvsdir_key (const flux_kvsdir_t *dir);
/* The full key of entry name (caller frees); NULL with EINVAL/ENOMEM. */
char *flux_kvsdir_key_at (const flux_kvsdir_t *dir, const char *name);
flux_t *flux_kvsdir_handle (const flux_kvsdir_t *dir);
/* The snapshot dirref given to create, or NULL. */
const char *flux_kvsdir_rootref (const flux_kvsdir_t *dir);

/* Iterate over entry names in sorted (strcmp) order.  The iterator holds
 * a reference to dir.  next() returns NULL at the end.
 */
flux_kvsitr_t *flux_kvsitr_create (const flux_kvsdir_t *dir);
void flux_kvsitr_destroy (flux_kvsitr_t *itr);
const char *flux_kvsitr_next (flux_kvsitr_t *itr);
void flux_kvsitr_rewind (flux_kvsitr_t *itr);

#ifdef __cplusplus
}
#endif

#endif /* !FLUX_KVS_DIR_H */
