/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* strpool.h - interned, reference counted strings.
 *
 * Many jobs share their name, cwd, queue, nodelist and ranks strings;
 * job-list keeps one copy of each distinct string.  O(1) expected per
 * operation (a chained hash that grows by doubling).
 */
#ifndef JOB_LIST_STRPOOL_H
#define JOB_LIST_STRPOOL_H

#include <stddef.h>

typedef struct strpool strpool_t;

strpool_t *strpool_create (void);
/* Free the pool and every string left in it.  NULL-safe, keeps errno. */
void strpool_destroy (strpool_t *p);

/* A pooled copy of s with one more reference (s NULL: NULL, no error).
 * NULL with ENOMEM.
 */
const char *strpool_get (strpool_t *p, const char *s);

/* As strpool_get() for the first len bytes of s. */
const char *strpool_getn (strpool_t *p, const char *s, size_t len);

/* Drop one reference to a string returned by strpool_get() (NULL-safe).
 */
void strpool_put (strpool_t *p, const char *s);

/* Number of distinct strings in the pool. */
size_t strpool_count (const strpool_t *p);

#endif /* !JOB_LIST_STRPOOL_H */
