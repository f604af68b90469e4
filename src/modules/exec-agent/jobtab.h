/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef EXEC_AGENT_JOBTAB_H
#define EXEC_AGENT_JOBTAB_H

/* jobtab - the jobs an exec agent holds, by id: an intrusive chained hash
 * table (each job embeds a struct jobtab_entry).  Lookup, insert and
 * remove are O(1) on average; the bucket array doubles when the load
 * passes 1 and never shrinks below its initial size.  Nothing is
 * allocated per entry.
 */
#include <stddef.h>
#include <stdint.h>

struct jobtab_entry {
    uint64_t id;
    struct jobtab_entry *next;
};

struct jobtab;

/* Create an empty table.  NULL with errno ENOMEM. */
struct jobtab *jobtab_create (void);

/* Free the table (not the entries).  NULL-safe, keeps errno. */
void jobtab_destroy (struct jobtab *t);

/* Insert e (e->id set by the caller).  -1 with errno EEXIST if an entry
 * with that id is present, ENOMEM if growing failed (e is then not
 * inserted).
 */
int jobtab_insert (struct jobtab *t, struct jobtab_entry *e);

/* The entry with this id, or NULL. */
struct jobtab_entry *jobtab_lookup (struct jobtab *t, uint64_t id);

/* Remove e if it is in the table (no-op otherwise). */
void jobtab_remove (struct jobtab *t, struct jobtab_entry *e);

size_t jobtab_count (const struct jobtab *t);

/* Call fn on every entry (fn must not insert or remove). */
void jobtab_foreach (struct jobtab *t,
                     void (*fn) (struct jobtab_entry *e, void *arg), void *arg);

#endif /* !EXEC_AGENT_JOBTAB_H */
