/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* ordlist.c - a doubly linked skip list (see ordlist.h).
 *
 * Each node has 1..MAXLEVEL levels (each further level with probability
 * 1/4); every level is a doubly linked list, so a node can be unlinked
 * without searching for its predecessors.  The head is a node without
 * an item that has every level.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "ordlist.h"

#define MAXLEVEL 16

struct link {
    ordlist_node_t *next;
    ordlist_node_t *prev;
};

struct ordlist_node {
    void *item;
    int level;
    struct link link[];
};

struct ordlist {
    ordlist_cmp_f cmp;
    int level; /* highest level in use, >= 1 */
    size_t count;
    uint32_t rng;
    ordlist_node_t *head;
};

static ordlist_node_t *node_create (void *item, int level)
{
    ordlist_node_t *n;

    if (!(n = calloc (1, sizeof (*n) + level * sizeof (struct link))))
        return NULL;
    n->item = item;
    n->level = level;
    return n;
}

ordlist_t *ordlist_create (ordlist_cmp_f cmp, unsigned int seed)
{
    ordlist_t *l;

    if (!cmp) {
        errno = EINVAL;
        return NULL;
    }
    if (!(l = calloc (1, sizeof (*l))))
        return NULL;
    if (!(l->head = node_create (NULL, MAXLEVEL))) {
        free (l);
        return NULL;
    }
    l->cmp = cmp;
    l->level = 1;
    l->rng = seed ? seed : 0x9e3779b9u;
    return l;
}

void ordlist_destroy (ordlist_t *l)
{
    if (l) {
        int saved_errno = errno;
        ordlist_node_t *n = l->head->link[0].next;
        while (n) {
            ordlist_node_t *next = n->link[0].next;
            free (n);
            n = next;
        }
        free (l->head);
        free (l);
        errno = saved_errno;
    }
}

/* xorshift32 */
static uint32_t next_random (ordlist_t *l)
{
    uint32_t x = l->rng;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    l->rng = x;
    return x;
}

static int random_level (ordlist_t *l)
{
    uint32_t r = next_random (l);
    int level = 1;

    while (level < MAXLEVEL && (r & 3) == 0) {
        level++;
        r >>= 2;
    }
    return level;
}

ordlist_node_t *ordlist_insert (ordlist_t *l, void *item)
{
    ordlist_node_t *update[MAXLEVEL];
    ordlist_node_t *x, *n;
    int level;

    if (!l) {
        errno = EINVAL;
        return NULL;
    }
    x = l->head;
    for (int i = l->level - 1; i >= 0; i--) {
        while (x->link[i].next && l->cmp (x->link[i].next->item, item) <= 0)
            x = x->link[i].next;
        update[i] = x;
    }
    level = random_level (l);
    if (!(n = node_create (item, level)))
        return NULL;
    for (int i = l->level; i < level; i++)
        update[i] = l->head;
    if (level > l->level)
        l->level = level;
    for (int i = 0; i < level; i++) {
        ordlist_node_t *next = update[i]->link[i].next;
        n->link[i].next = next;
        n->link[i].prev = update[i];
        if (next)
            next->link[i].prev = n;
        update[i]->link[i].next = n;
    }
    l->count++;
    return n;
}

void ordlist_remove (ordlist_t *l, ordlist_node_t *n)
{
    if (!l || !n)
        return;
    for (int i = 0; i < n->level; i++) {
        ordlist_node_t *prev = n->link[i].prev;
        ordlist_node_t *next = n->link[i].next;
        prev->link[i].next = next;
        if (next)
            next->link[i].prev = prev;
    }
    while (l->level > 1 && !l->head->link[l->level - 1].next)
        l->level--;
    l->count--;
    free (n);
}

ordlist_node_t *ordlist_first (const ordlist_t *l)
{
    return l ? l->head->link[0].next : NULL;
}

ordlist_node_t *ordlist_next (const ordlist_node_t *n)
{
    return n ? n->link[0].next : NULL;
}

void *ordlist_item (const ordlist_node_t *n)
{
    return n ? n->item : NULL;
}

size_t ordlist_count (const ordlist_t *l)
{
    return l ? l->count : 0;
}
