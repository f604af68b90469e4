/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef CONTENT_CACHE_H
#define CONTENT_CACHE_H

/* The content cache: blobs keyed by their raw digest (all digests of one
 * cache have the same size), with the bookkeeping the content service
 * needs and nothing that talks to a broker.
 *
 * An entry is either invalid (its blob is being fetched) or valid (it
 * holds the blob).  A valid entry is dirty while it is not yet stored
 * where it must go (upstream, or the backing store on rank 0), else
 * clean.  Each entry made dirty gets the next sequence number (1, 2, ...)
 * so that "everything stored before X" is "every entry with seq <= N".
 *
 * Size accounting counts the bytes of valid entries.  Eviction (purge,
 * drop) removes only valid, clean entries that have no aux pointer
 * attached, least recently used first: entries in use by the service
 * (aux set) and dirty entries are never evicted.
 *
 * Functions that return int give 0 or -1 with errno set; pointers returned
 * by getters stay valid until the entry is removed or evicted.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cache;
struct cache_entry;

typedef void (*cache_release_f) (void *owner);

struct cache_stats {
    int count;   /* entries, valid or not */
    int valid;   /* entries holding their blob */
    int dirty;   /* valid entries not yet stored where they must go */
    size_t size; /* bytes held by valid entries */
};

/* Create an empty cache for digests of digest_size bytes (1..64). */
struct cache *cache_create (size_t digest_size);

/* Free every entry (releasing borrowed blobs).  Aux pointers are not
 * touched: free them first.  NULL-safe, preserves errno. */
void cache_destroy (struct cache *c);

/* The entry for digest, or NULL (no errno). */
struct cache_entry *cache_lookup (struct cache *c, const void *digest);

/* Add an invalid, clean entry for digest.  EEXIST if there is one. */
struct cache_entry *cache_insert (struct cache *c, const void *digest);

/* Remove an entry, whatever its state (the caller has dealt with its aux
 * and knows it is not dirty, or does not care). */
void cache_remove (struct cache *c, struct cache_entry *e);

/* Make an invalid entry valid with a copy of data (data may be NULL if
 * len is 0).  A valid entry is left alone (blobs are immutable).  The
 * entry stays clean: call cache_entry_set_dirty() if it must be stored.
 */
int cache_entry_fill (struct cache *c, struct cache_entry *e, const void *data,
                      size_t len);

/* Like cache_entry_fill() but borrow data: it belongs to owner, which is
 * released with release(owner) when the entry no longer needs it (at once
 * if the entry was already valid; release is not called on failure).
 * Used to keep a message's payload instead of copying it.
 */
int cache_entry_fill_borrow (struct cache *c, struct cache_entry *e,
                             const void *data, size_t len, void *owner,
                             cache_release_f release);

bool cache_entry_valid (const struct cache_entry *e);
const void *cache_entry_digest (const struct cache_entry *e);
/* The blob of a valid entry (NULL, 0 for the empty blob or an invalid
 * entry). */
const void *cache_entry_data (const struct cache_entry *e, size_t *len);

/* Mark a valid entry dirty and give it the next sequence number (EINVAL
 * if invalid; no change if already dirty). */
int cache_entry_set_dirty (struct cache *c, struct cache_entry *e);
/* Mark a dirty entry clean (no change if clean). */
void cache_entry_set_clean (struct cache *c, struct cache_entry *e);
bool cache_entry_dirty (const struct cache_entry *e);
/* The sequence number given when the entry was made dirty (0: never). */
uint64_t cache_entry_seq (const struct cache_entry *e);

/* Mark an entry most recently used. */
void cache_entry_touch (struct cache *c, struct cache_entry *e);

/* A pointer for the user (NULL by default); an entry with one is never
 * evicted. */
void cache_entry_set_aux (struct cache_entry *e, void *aux);
void *cache_entry_aux (const struct cache_entry *e);

/* The last sequence number given (0 if none). */
uint64_t cache_last_seq (const struct cache *c);
/* The sequence number of the oldest dirty entry, 0 if none is dirty. */
uint64_t cache_oldest_dirty (const struct cache *c);
/* Dirty entries oldest first: first, then next until NULL.  The current
 * entry may be made clean during the walk if next was taken before. */
struct cache_entry *cache_dirty_first (struct cache *c);
struct cache_entry *cache_dirty_next (struct cache_entry *e);

/* Evict least recently used evictable entries until at most target bytes
 * are held (or none is left to evict).  Returns the number evicted. */
int cache_purge (struct cache *c, size_t target);
/* Evict every evictable entry.  Returns the number evicted. */
int cache_drop (struct cache *c);

void cache_get_stats (const struct cache *c, struct cache_stats *st);

#endif /* !CONTENT_CACHE_H */
