/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef JOBMGR_HEAP_H
#define JOBMGR_HEAP_H
/* heap - an indexed binary heap of pointers.
 *
 * The element that compares first (cmp (a, b) < 0 means a before b) is
 * at the top.  Each element learns its position through setidx, so it
 * can be removed or re-positioned in O(log n) after its key changed;
 * an element not in the heap has index HEAP_NONE (set on removal).
 * push, pop, remove and update are O(log n); top and size O(1).
 */
#include <stddef.h>
#include <stdint.h>

#define HEAP_NONE SIZE_MAX

typedef int (*heap_cmp_f) (const void *a, const void *b);
typedef void (*heap_setidx_f) (void *elem, size_t idx);

struct heap;

/* NULL with ENOMEM. */
struct heap *heap_create (heap_cmp_f cmp, heap_setidx_f setidx);
/* Elements are not freed (their index is not reset).  NULL-safe. */
void heap_destroy (struct heap *h);

/* -1 with ENOMEM (the element is then not in the heap). */
int heap_push (struct heap *h, void *elem);
/* NULL if empty. */
void *heap_top (const struct heap *h);
void *heap_pop (struct heap *h);
/* Remove the element at idx (as given to setidx); returns it, or NULL if
 * idx is out of range. */
void *heap_remove (struct heap *h, size_t idx);
/* Restore order after the key of the element at idx changed. */
void heap_update (struct heap *h, size_t idx);
size_t heap_size (const struct heap *h);
/* The element at position idx (0 <= idx < size), in no useful order. */
void *heap_at (const struct heap *h, size_t idx);

#endif /* !JOBMGR_HEAP_H */
