/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef UTIL_IDTAB_H
#define UTIL_IDTAB_H

/* idtab - objects by a 64-bit id (job-exec's and the exec agents' jobs):
 * an intrusive chained hash table (each object embeds a struct
 * idtab_entry).  Lookup, insert and
 * remove are O(1) on average; the bucket array doubles when the load
 * passes 1 and never shrinks below its initial size.  Nothing is
 * allocated per entry.
 */
#include <stddef.h>
#include <stdint.h>

struct idtab_entry {
    uint64_t id;
    struct idtab_entry *next;
};

struct idtab;

/* Create an empty table.  NULL with errno ENOMEM. */
struct idtab *idtab_create (void);

/* Free the table (not the entries).  NULL-safe, keeps errno. */
void idtab_destroy (struct idtab *t);

/* Insert e (e->id set by the caller).  -1 with errno EEXIST if an entry
 * with that id is present, ENOMEM if growing failed (e is then not
 * inserted).
 */
int idtab_insert (struct idtab *t, struct idtab_entry *e);

/* The entry with this id, or NULL. */
struct idtab_entry *idtab_lookup (struct idtab *t, uint64_t id);

/* Remove e if it is in the table (no-op otherwise). */
void idtab_remove (struct idtab *t, struct idtab_entry *e);

size_t idtab_count (const struct idtab *t);

/* Call fn on every entry.  fn may remove (and free) the entry it is
 * given, but must not insert or remove any other. */
void idtab_foreach (struct idtab *t,
                    void (*fn) (struct idtab_entry *e, void *arg), void *arg);

#endif /* !UTIL_IDTAB_H */
