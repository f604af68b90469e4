/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_TOPOLOGY_H
#define FLUX_TOPOLOGY_H

/* k-ary tree topology of the overlay: rank 0 is the root; the children of
 * rank r are k*r+1 .. k*r+k (those < size).  Every function is O(1) or
 * O(log size); none scans all ranks.  fanout k >= 1 (k = 1 is a chain).
 * Functions taking a rank return -1 (or false) with EINVAL when rank or
 * size is out of range.
 */
#include <stdbool.h>
#include <stdint.h>

/* Parent of rank (-1 for rank 0, errno left unchanged). */
int64_t topology_parent (uint32_t rank, uint32_t size, int k);

/* Number of direct children, and the first one (children are the
 * consecutive ranks first .. first+count-1; first_child is -1 with errno
 * unchanged for a leaf). */
int topology_child_count (uint32_t rank, uint32_t size, int k);
int64_t topology_first_child (uint32_t rank, uint32_t size, int k);

/* Depth of rank (root is 0) and the depth of the deepest rank.  int64_t
 * because a chain (k = 1) can be deeper than INT_MAX. */
int64_t topology_level (uint32_t rank, uint32_t size, int k);
int64_t topology_maxlevel (uint32_t size, int k);

/* Number of ranks in the subtree below rank (not counting rank). */
int64_t topology_descendants (uint32_t rank, uint32_t size, int k);

/* True if target is in the subtree rooted at rank (rank itself included). */
bool topology_in_subtree (uint32_t rank, uint32_t target, uint32_t size, int k);

/* The direct child of rank whose subtree holds target (a descendant of
 * rank), or -1 with EINVAL if target is not below rank.  This is the next
 * hop for a message going down. */
int64_t topology_child_toward (uint32_t rank, uint32_t target, uint32_t size,
                               int k);

#endif /* !FLUX_TOPOLOGY_H */
