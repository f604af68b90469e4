/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef UTIL_IDHASH_H
#define UTIL_IDHASH_H

/* idhash - objects by a 64-bit id (job-exec's and the exec agents' jobs):
 * an intrusive chained hash table (each object embeds a struct
 * idhash_entry).  Lookup, insert and
 * remove are O(1) on average; the bucket array doubles when the load
 * passes 1 and never shrinks below its initial size.  Nothing is
 * allocated per entry.
 */
#include <stddef.h>
#include <stdint.h>

struct idhash_entry {
    uint64_t id;
    struct idhash_entry *next;
};

struct idhash;

/* Create an empty table.  NULL with errno ENOMEM. */
struct idhash *idhash_create (void);

/* Free the table (not the entries).  NULL-safe, keeps errno. */
void idhash_destroy (struct idhash *t);

/* Insert e (e->id set by the caller).  -1 with errno EEXIST if an entry
 * with that id is present, ENOMEM if growing failed (e is then not
 * inserted).
 */
int idhash_insert (struct idhash *t, struct idhash_entry *e);

/* The entry with this id, or NULL. */
struct idhash_entry *idhash_lookup (struct idhash *t, uint64_t id);

/* Remove e if it is in the table (no-op otherwise). */
void idhash_remove (struct idhash *t, struct idhash_entry *e);

size_t idhash_count (const struct idhash *t);

/* Call fn on every entry (fn must not insert or remove). */
void idhash_foreach (struct idhash *t,
                     void (*fn) (struct idhash_entry *e, void *arg), void *arg);

#endif /* !UTIL_IDHASH_H */
