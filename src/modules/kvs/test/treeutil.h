/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* treeutil.h - a fake content store for the kvs unit tests: blobs in
 * memory, and a cache load function whose loads stay pending until the
 * test delivers them (so missing objects can be simulated).
 */
#ifndef KVS_TEST_TREEUTIL_H
#define KVS_TEST_TREEUTIL_H

#include <jansson.h>
#include <stddef.h>

#include "../cache.h"
#include "../lookup.h"

struct fakestore;

struct fakestore *fakestore_create (const char *hashtype);
void fakestore_destroy (struct fakestore *fs);

/* Store bytes / the encoding of a tree object; returns the blobref
 * (owned by the store).
 */
const char *fakestore_put (struct fakestore *fs, const void *data, size_t len);
const char *fakestore_put_obj (struct fakestore *fs, const json_t *obj);

/* Make the blob of ref answer with other bytes (a corrupt store). */
void fakestore_corrupt (struct fakestore *fs, const char *ref, const char *s);

/* A cache whose loads come from fs (and which fakestore_deliver feeds
 * from now on).
 */
struct cache *fakestore_cache (struct fakestore *fs, size_t max);

/* Deliver to c again (a cache made by fakestore_cache). */
void fakestore_set_cache (struct fakestore *fs, struct cache *c);

/* Loads requested and not delivered yet; total loads requested. */
int fakestore_pending (struct fakestore *fs);
int fakestore_loads (struct fakestore *fs);

/* Deliver every pending load (ENOENT for unknown blobs).  Returns how
 * many were delivered.
 */
int fakestore_deliver (struct fakestore *fs);

/* A dirref to obj stored in fs (new reference). */
json_t *fakestore_dirref (struct fakestore *fs, const json_t *dir);

/* Run a lookup to completion, loading what it misses from fs.  Returns
 * lookup_run's result; *rounds (may be NULL) counts the EAGAIN rounds.
 */
int run_lookup (struct fakestore *fs, struct cache *c, struct lookup *l,
                json_t **val, int *rounds);

/* One-shot lookup of key at rootref (namespace "primary"): value as a
 * string (caller frees) or NULL with errno.
 */
char *get_string (struct fakestore *fs, struct cache *c, const char *rootref,
                  const char *key, int flags);

/* A val treeobj of a string. */
json_t *val_str (const char *s);

#endif /* !KVS_TEST_TREEUTIL_H */
