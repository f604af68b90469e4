/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* topology.c - k-ary tree arithmetic for the overlay.
 *
 * Ranks are numbered breadth-first, so every question about the tree is a
 * little arithmetic on rank numbers.  With k >= 2 the loops below walk
 * one tree level per iteration (O(log_k size)); a chain (k = 1) would make
 * those loops linear, so it gets closed forms instead.
 *
 * Overflow: rank and size are below 2^32 and k below 2^31, so k * rank + k
 * stays below 2^63 and all intermediate values fit in uint64_t.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "topology.h"

static bool valid (uint32_t rank, uint32_t size, int k)
{
    if (size == 0 || rank >= size || k < 1) {
        errno = EINVAL;
        return false;
    }
    return true;
}

int64_t topology_parent (uint32_t rank, uint32_t size, int k)
{
    if (!valid (rank, size, k))
        return -1;
    if (rank == 0)
        return -1;
    return (rank - 1) / (uint32_t)k;
}

int64_t topology_first_child (uint32_t rank, uint32_t size, int k)
{
    if (!valid (rank, size, k))
        return -1;
    uint64_t first = (uint64_t)k * rank + 1;
    if (first >= size)
        return -1;
    return (int64_t)first;
}

int topology_child_count (uint32_t rank, uint32_t size, int k)
{
    if (!valid (rank, size, k))
        return -1;
    uint64_t first = (uint64_t)k * rank + 1;
    if (first >= size)
        return 0;
    uint64_t avail = size - first;
    return avail < (uint64_t)k ? (int)avail : k;
}

int64_t topology_level (uint32_t rank, uint32_t size, int k)
{
    if (!valid (rank, size, k))
        return -1;
    if (k == 1)
        return rank;
    int64_t level = 0;
    while (rank > 0) {
        rank = (rank - 1) / (uint32_t)k;
        level++;
    }
    return level;
}

int64_t topology_maxlevel (uint32_t size, int k)
{
    if (size == 0) {
        errno = EINVAL;
        return -1;
    }
    /* ranks are numbered level by level, so the last one is deepest */
    return topology_level (size - 1, size, k);
}

int64_t topology_descendants (uint32_t rank, uint32_t size, int k)
{
    if (!valid (rank, size, k))
        return -1;
    if (k == 1)
        return (int64_t)size - 1 - rank;
    /* The subtree's ranks at each depth form one contiguous range
     * [lo, hi]; the next depth is [k*lo+1, k*hi+k].  hi is clamped to
     * the last rank so the products never overflow. */
    uint64_t lo = rank, hi = rank, last = size - 1;
    int64_t count = 0;
    for (;;) {
        lo = lo * (uint64_t)k + 1;
        hi = hi * (uint64_t)k + (uint64_t)k;
        if (lo > last)
            break;
        if (hi > last)
            hi = last;
        count += (int64_t)(hi - lo + 1);
    }
    return count;
}

bool topology_in_subtree (uint32_t rank, uint32_t target, uint32_t size, int k)
{
    if (!valid (rank, size, k) || !valid (target, size, k))
        return false;
    if (k == 1)
        return target >= rank;
    /* parents have smaller ranks: climb until at or above rank's number */
    while (target > rank)
        target = (target - 1) / (uint32_t)k;
    return target == rank;
}

int64_t topology_child_toward (uint32_t rank, uint32_t target, uint32_t size,
                               int k)
{
    if (!valid (rank, size, k) || !valid (target, size, k))
        return -1;
    if (target <= rank)
        goto notbelow;
    if (k == 1)
        return (int64_t)rank + 1;
    uint32_t hop = target;
    uint32_t up = (hop - 1) / (uint32_t)k;
    while (up > rank) {
        hop = up;
        up = (hop - 1) / (uint32_t)k;
    }
    if (up != rank)
        goto notbelow;
    return hop;
notbelow:
    errno = EINVAL;
    return -1;
}
