/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* idhash.h - a map from 64-bit job ids to pointers: open addressing
 * with linear probing and backward-shift deletion, grown by doubling
 * (load at most 1/2), O(1) expected per operation.  Values are not
 * owned.
 */
#ifndef JOB_LIST_IDHASH_H
#define JOB_LIST_IDHASH_H

#include <stddef.h>
#include <stdint.h>

typedef struct idhash idhash_t;

idhash_t *idhash_create (void);
void idhash_destroy (idhash_t *h); /* NULL-safe, keeps errno */

/* Insert id -> val (val not NULL).  EEXIST if id is present, EINVAL,
 * ENOMEM.
 */
int idhash_insert (idhash_t *h, uint64_t id, void *val);

/* The value of id, or NULL. */
void *idhash_lookup (const idhash_t *h, uint64_t id);

/* Remove id and return its value (NULL if absent). */
void *idhash_remove (idhash_t *h, uint64_t id);

size_t idhash_count (const idhash_t *h);

/* Call cb on every entry until it returns non-zero (then returned).
 * cb must not change the map.
 */
int idhash_foreach (const idhash_t *h,
                    int (*cb) (uint64_t id, void *val, void *arg), void *arg);

#endif /* !JOB_LIST_IDHASH_H */
