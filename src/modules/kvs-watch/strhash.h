/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* strhash.h - a string-keyed hash map of void pointers for kvs-watch:
 * chained buckets, grows by doubling, O(1) average per operation.  Keys
 * are copied; values are owned only if a destroy function was given.
 */
#ifndef KVS_WATCH_STRHASH_H
#define KVS_WATCH_STRHASH_H

#include <stddef.h>

typedef struct strhash strhash_t;
typedef void (*strhash_free_f) (void *val);

/* Create an empty map.  destroy (may be NULL) is called on values that
 * are deleted, replaced, or left in the map when it is destroyed.
 */
strhash_t *strhash_create (strhash_free_f destroy);

/* Destroy the map and its remaining values.  NULL-safe, preserves errno. */
void strhash_destroy (strhash_t *m);

/* Insert key -> val.  EEXIST if key is present (nothing changes),
 * EINVAL for a NULL key, ENOMEM.
 */
int strhash_insert (strhash_t *m, const char *key, void *val);

/* The value of key, or NULL if absent. */
void *strhash_lookup (strhash_t *m, const char *key);

/* Remove key and destroy its value.  ENOENT if absent. */
int strhash_delete (strhash_t *m, const char *key);

/* Remove key and return its value without destroying it (NULL if
 * absent).
 */
void *strhash_take (strhash_t *m, const char *key);

size_t strhash_count (strhash_t *m);

/* Call cb for every entry (in no particular order) until it returns
 * non-zero, which is then returned.  cb must not modify the map.
 */
int strhash_foreach (strhash_t *m,
                     int (*cb) (const char *key, void *val, void *arg),
                     void *arg);

#endif /* !KVS_WATCH_STRHASH_H */
