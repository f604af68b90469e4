/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_LIST_H
#define FLUX_LIST_H

/* Internal: an intrusive circular doubly-linked list.
 * Embed a struct list_node in each element; a struct list_node also serves
 * as the list head.  All operations are O(1).  A node not on any list is
 * kept "detached" (pointing at itself) so list_del() is always safe.
 */
#include <stdbool.h>
#include <stddef.h>

struct list_node {
    struct list_node *next, *prev;
};

static inline void list_init (struct list_node *n)
{
    n->next = n->prev = n;
}

static inline bool list_empty (const struct list_node *head)
{
    return head->next == head;
}

static inline bool list_attached (const struct list_node *n)
{
    return n->next != n;
}

static inline void list_insert_between (struct list_node *n,
                                        struct list_node *prev,
                                        struct list_node *next)
{
    n->prev = prev;
    n->next = next;
    prev->next = n;
    next->prev = n;
}

/* Add n at the tail (before head) */
static inline void list_add_tail (struct list_node *head, struct list_node *n)
{
    list_insert_between (n, head->prev, head);
}

/* Add n at the front (after head) */
static inline void list_add_head (struct list_node *head, struct list_node *n)
{
    list_insert_between (n, head, head->next);
}

static inline void list_del (struct list_node *n)
{
    n->prev->next = n->next;
    n->next->prev = n->prev;
    list_init (n);
}

/* Move every node of the list at from to the empty list at to, in order,
 * leaving from empty. */
static inline void list_move_all (struct list_node *to, struct list_node *from)
{
    list_init (to);
    if (!list_empty (from)) {
        to->next = from->next;
        to->prev = from->prev;
        to->next->prev = to;
        to->prev->next = to;
        list_init (from);
    }
}

/* Append every node of the list at from to the tail of the list at to,
 * in order, leaving from empty (constant time). */
static inline void list_splice_tail (struct list_node *to,
                                     struct list_node *from)
{
    if (!list_empty (from)) {
        struct list_node *first = from->next, *last = from->prev;
        first->prev = to->prev;
        to->prev->next = first;
        last->next = to;
        to->prev = last;
        list_init (from);
    }
}

#define list_entry(ptr, type, member) \
    ((type *)((char *)(ptr)-offsetof (type, member)))

#define list_first_entry_or_null(head, type, member) \
    (list_empty (head) ? NULL : list_entry ((head)->next, type, member))

/* Iterate; safe against removal of the current node (uses a lookahead). */
#define list_for_each_safe(pos, tmp, head)                   \
    for (pos = (head)->next, tmp = pos->next; pos != (head); \
         pos = tmp, tmp = pos->next)

#endif /* !FLUX_LIST_H */
