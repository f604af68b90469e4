/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* heap.c - indexed binary heap (see heap.h). */
#include <errno.h>
#include <stdlib.h>

#include "heap.h"

struct heap {
    void **v;
    size_t size, alloc;
    heap_cmp_f cmp;
    heap_setidx_f setidx;
};

struct heap *heap_create (heap_cmp_f cmp, heap_setidx_f setidx)
{
    struct heap *h;

    if (!cmp || !setidx) {
        errno = EINVAL;
        return NULL;
    }
    if (!(h = calloc (1, sizeof (*h))))
        return NULL;
    h->cmp = cmp;
    h->setidx = setidx;
    return h;
}

void heap_destroy (struct heap *h)
{
    if (h) {
        int saved = errno;
        free (h->v);
        free (h);
        errno = saved;
    }
}

static void place (struct heap *h, size_t i, void *elem)
{
    h->v[i] = elem;
    h->setidx (elem, i);
}

static void sift_up (struct heap *h, size_t i)
{
    void *elem = h->v[i];

    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (h->cmp (elem, h->v[parent]) >= 0)
            break;
        place (h, i, h->v[parent]);
        i = parent;
    }
    place (h, i, elem);
}

static void sift_down (struct heap *h, size_t i)
{
    void *elem = h->v[i];

    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= h->size)
            break;
        if (child + 1 < h->size && h->cmp (h->v[child + 1], h->v[child]) < 0)
            child++;
        if (h->cmp (h->v[child], elem) >= 0)
            break;
        place (h, i, h->v[child]);
        i = child;
    }
    place (h, i, elem);
}

int heap_push (struct heap *h, void *elem)
{
    if (h->size == h->alloc) {
        size_t n = h->alloc ? h->alloc * 2 : 64;
        void **v = realloc (h->v, n * sizeof (*v));
        if (!v)
            return -1;
        h->v = v;
        h->alloc = n;
    }
    h->v[h->size++] = elem;
    sift_up (h, h->size - 1);
    return 0;
}

void *heap_top (const struct heap *h)
{
    return h->size > 0 ? h->v[0] : NULL;
}

void *heap_remove (struct heap *h, size_t idx)
{
    void *elem;

    if (idx >= h->size)
        return NULL;
    elem = h->v[idx];
    h->size--;
    if (idx < h->size) {
        h->v[idx] = h->v[h->size];
        heap_update (h, idx);
    }
    h->setidx (elem, HEAP_NONE);
    return elem;
}

void *heap_pop (struct heap *h)
{
    return heap_remove (h, 0);
}

void heap_update (struct heap *h, size_t idx)
{
    if (idx >= h->size)
        return;
    if (idx > 0 && h->cmp (h->v[idx], h->v[(idx - 1) / 2]) < 0)
        sift_up (h, idx);
    else
        sift_down (h, idx);
}

size_t heap_size (const struct heap *h)
{
    return h->size;
}

void *heap_at (const struct heap *h, size_t idx)
{
    return idx < h->size ? h->v[idx] : NULL;
}
