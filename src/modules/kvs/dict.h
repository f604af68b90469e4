/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* dict.h - a string-keyed hash map of void pointers for the kvs module
 * (blobrefs in the cache, namespace names).  Chained buckets, grows by
 * doubling, O(1) average.  Keys are copied; values are owned only if a
 * destroy function was given.
 */
#ifndef KVS_DICT_H
#define KVS_DICT_H

#include <stddef.h>

struct dict;
typedef void (*dict_free_f) (void *val);

/* Create an empty map; destroy (may be NULL) is called on values deleted
 * or left in the map when it is destroyed.
 */
struct dict *dict_create (dict_free_f destroy);

/* NULL-safe, preserves errno. */
void dict_destroy (struct dict *d);

/* Insert key -> val.  EEXIST if key is present, EINVAL, ENOMEM. */
int dict_insert (struct dict *d, const char *key, void *val);

/* The value of key, or NULL. */
void *dict_lookup (struct dict *d, const char *key);

/* Remove key and destroy its value.  ENOENT if absent. */
int dict_delete (struct dict *d, const char *key);

/* Remove key and return its value without destroying it (NULL if absent). */
void *dict_take (struct dict *d, const char *key);

size_t dict_count (struct dict *d);

/* Call cb on every entry until it returns non-zero (returned).  cb must
 * not insert or delete.
 */
int dict_foreach (struct dict *d,
                  int (*cb) (const char *key, void *val, void *arg), void *arg);

#endif /* !KVS_DICT_H */
