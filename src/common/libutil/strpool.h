/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* strpool.h - interned, reference counted strings.
 *
 * Many jobs share their strings (name, cwd, nodelist, ranks in job-list;
 * the jobspec and environment text of jobs submitted together in the
 * job manager); a pool keeps one copy of each distinct string.  O(1)
 * expected per operation (a chained hash that grows by doubling).  Not
 * thread safe: one pool per thread.
 */
#ifndef LIBUTIL_STRPOOL_H
#define LIBUTIL_STRPOOL_H

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

#endif /* !LIBUTIL_STRPOOL_H */
