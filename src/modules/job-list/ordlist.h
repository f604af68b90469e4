/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* ordlist.h - an ordered list of items (a doubly linked skip list).
 *
 * Items are kept sorted by a comparison function that must be a total
 * order (break ties, e.g. by job id).  Insert is O(log n) expected;
 * removal through the node returned by insert is O(1) expected (no
 * search, so the item's keys may have changed since it was inserted);
 * walking the list in order is O(1) per item.  The list does not own
 * the items.
 */
#ifndef JOB_LIST_ORDLIST_H
#define JOB_LIST_ORDLIST_H

#include <stddef.h>

typedef struct ordlist ordlist_t;
typedef struct ordlist_node ordlist_node_t;

/* <0 if a sorts before b, >0 after, 0 only for the same item. */
typedef int (*ordlist_cmp_f) (const void *a, const void *b);

/* Create an empty list.  seed makes the node levels reproducible.
 * EINVAL (cmp NULL), ENOMEM.
 */
ordlist_t *ordlist_create (ordlist_cmp_f cmp, unsigned int seed);

/* Free the list and its nodes (not the items).  NULL-safe, keeps errno. */
void ordlist_destroy (ordlist_t *l);

/* Insert item in order; returns its node, or NULL with ENOMEM (or
 * EINVAL).  Items that compare equal are kept in insertion order, after
 * the existing ones.
 */
ordlist_node_t *ordlist_insert (ordlist_t *l, void *item);

/* Unlink and free a node of l.  NULL-safe. */
void ordlist_remove (ordlist_t *l, ordlist_node_t *node);

/* In-order walk: the first node (NULL if empty), the next one (NULL at
 * the end), the item of a node.  The list must not change while a walk
 * is under way.
 */
ordlist_node_t *ordlist_first (const ordlist_t *l);
ordlist_node_t *ordlist_next (const ordlist_node_t *node);
void *ordlist_item (const ordlist_node_t *node);

size_t ordlist_count (const ordlist_t *l);

#endif /* !JOB_LIST_ORDLIST_H */
