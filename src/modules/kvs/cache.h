/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* cache.h - the kvs object cache: blobref -> blob, decoded on demand as
 * an RFC 11 tree object.
 *
 * Blobs are immutable, so an entry never changes once it has data.  An
 * operation that finds a blob missing parks itself with cache_wait(): the
 * cache starts ONE load per blobref (through the load function given at
 * creation) however many operations wait for it, and calls every waiter
 * when the blob arrives (cache_load_response) or the load fails.  A
 * loaded blob is hash-checked against its blobref first: a mismatch fails
 * the waiters with ENOTRECOVERABLE and stores nothing.
 *
 * Entries inserted by a commit are "dirty" until their store completes
 * (one count per pending store); dirty entries, entries with a load in
 * flight or waiters, and held entries (cache_hold) are never expired.
 * Clean entries are expired least recently used first when the cache
 * holds more than max_entries or max_bytes.
 *
 * Pointers returned by cache_get_* are borrowed: they stay valid until
 * the next call that may add entries (cache_wait, cache_insert_*), which
 * may expire the least recently used clean entries.  Hold a reference
 * (json_incref) to keep an object longer.
 */
#ifndef KVS_CACHE_H
#define KVS_CACHE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "libcontent/blobref.h"

struct cache;

/* Start loading ref; return an opaque handle of the load in flight (or
 * NULL with errno set if it could not start).  The load's result must be
 * given back with cache_load_response().  The cache frees the handle
 * with cache_free_f once the response was given, or at cache_destroy().
 */
typedef void *(*cache_load_f) (const char *ref, void *arg);
typedef void (*cache_free_f) (void *handle);

/* A waiter: errnum is 0 when the blob is in the cache, else the error
 * of the load (ENOENT, ENOTRECOVERABLE, ...); ref is the blob waited for
 * (valid during the call).  Waiters run in the order they were
 * registered; they may call any cache function.
 */
typedef void (*cache_wait_f) (int errnum, const char *ref, void *arg);

struct cache_stats {
    size_t count;   /* entries */
    size_t dirty;   /* entries with stores pending */
    size_t bytes;   /* memory counted: 200 per entry, its blob, and 6x the
                     * encoded size of a decoded object */
    size_t loading; /* loads in flight */
    unsigned long loads, hits, misses, expired;
    unsigned long aged; /* of the expired, those cache_age() expired */
};

/* Create a cache holding at most max_entries entries and max_bytes as
 * struct cache_stats counts them (0: no bound).
 */
struct cache *cache_create (size_t max_entries, size_t max_bytes,
                            cache_load_f load, cache_free_f free_handle,
                            void *arg);

/* Destroy the cache: loads in flight are freed with free_handle and
 * their waiters are dropped WITHOUT being called.  NULL-safe, preserves
 * errno.
 */
void cache_destroy (struct cache *c);

/* The decoded tree object of ref (borrowed), or NULL with errno ENOENT
 * (not in the cache: wait for it) or ENOTRECOVERABLE (the blob is not a
 * valid tree object).
 */
json_t *cache_get_treeobj (struct cache *c, const char *ref);

/* The raw bytes of ref (borrowed), or -1 with errno ENOENT (not cached,
 * or cached only as an object inserted by a commit: wait for it).
 */
int cache_get_raw (struct cache *c, const char *ref, const void **data,
                   size_t *len);

struct blob;

/* The blob of ref (borrowed: blob_incref() it to keep it past the next
 * call that may expire entries), or NULL with errno ENOENT (not cached,
 * or only as an object). */
struct blob *cache_get_blob (struct cache *c, const char *ref);

/* Park: call cb (errnum, arg) when ref has been loaded or has failed to
 * load, starting a load unless one is already in flight for ref.  Call
 * it only after a miss.  Returns 0, or -1 with errno (EINVAL: malformed
 * blobref; the load function's error) and then cb will not be called.
 */
int cache_wait (struct cache *c, const char *ref, cache_wait_f cb, void *arg);

/* The result of the load of ref: errnum 0 with the blob, or the error.
 * The blob is checked against ref and copied; data may be freed as soon
 * as this returns.  Frees the load handle, then calls the waiters.
 * A response for a ref with no load in flight is ignored.
 */
void cache_load_response (struct cache *c, const char *ref, int errnum,
                          const void *data, size_t len);

/* Insert an object or a raw blob created locally (by a commit) under
 * ref, which the caller computed (size: the object's encoded size).  If dirty,
 * the entry is not expired until cache_clear_dirty() is called once for this
 * insert.  obj gets a new reference (the caller must not modify it afterwards).
 * An existing entry is kept and completed with what it lacks.
 */
int cache_insert_treeobj (struct cache *c, const char *ref, json_t *obj,
                          size_t size, bool dirty);
int cache_insert_raw (struct cache *c, const char *ref, const void *data,
                      size_t len, bool dirty);
/* Like cache_insert_raw(), sharing b (a new reference) instead of a copy. */
int cache_insert_blob (struct cache *c, const char *ref, struct blob *b,
                       bool dirty);

/* Keep ref (cached, with its blob or object) from expiring until
 * cache_release() is called as many times: what a commit loaded must
 * still be there when it is applied again, even if the commit needs more
 * than the bounds allow.  Returns 0, or -1 with errno ENOENT. */
int cache_hold (struct cache *c, const char *ref);
void cache_release (struct cache *c, const char *ref);

/* The holds of one operation (a commit batch, a lookup): what it loaded,
 * kept until it completes.  Zero-initialized before use. */
struct cache_holds {
    char (*ref)[BLOBREF_MAX_STRING_SIZE];
    int n, max;
};

/* Hold ref for h; nothing if ref is not cached or memory is short (it
 * may then expire and be loaded again). */
void cache_holds_add (struct cache *c, struct cache_holds *h, const char *ref);

/* Release every hold of h and free its memory (h may be used again). */
void cache_holds_release (struct cache *c, struct cache_holds *h);

/* One pending store of ref completed; stored tells if it succeeded. */
void cache_clear_dirty (struct cache *c, const char *ref, bool stored);

/* Make ref (if cached and not in use) the first to expire: a value a
 * commit just stored is rarely read back by the KVS itself, and the
 * directories the next commits must update are worth more room. */
void cache_demote (struct cache *c, const char *ref);

/* True if ref is cached, no store of it is pending, and it is known to
 * be in the content store (it was loaded from there or stored).
 */
bool cache_is_clean (struct cache *c, const char *ref);

/* ref is a directory version that a commit replaced: it will most
 * likely never be read again, but identical directories share a blob,
 * so it may be.  Expire it before anything else, and in any case once
 * the replaced versions hold more than a few MiB (unless it is used
 * again meanwhile).  One in use (its store pending) is so once it is
 * no longer in use. */
void cache_forget (struct cache *c, const char *ref);

/* Expire clean entries (LRU first) down to the bound. */
void cache_expire (struct cache *c);

/* One tick of the cache's clock (the caller's timer: the cache reads no
 * clock): expire the clean entries last used more than max_age ticks
 * ago, an entry used between two ticks being 1 tick old after the
 * second (max_age 0: every clean entry not used since the previous
 * call).  An entry in use does not age; its age counts from when it
 * was last in use.  A demoted entry goes at the next tick.  Costs one
 * step per entry expired, plus one. */
void cache_age (struct cache *c, unsigned int max_age);

void cache_get_stats (struct cache *c, struct cache_stats *st);

#endif /* !KVS_CACHE_H */
