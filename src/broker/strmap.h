/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef BROKER_STRMAP_H
#define BROKER_STRMAP_H

/* A string-keyed hash map of void pointers (chained, grows by doubling,
 * O(1) average).  Keys are copied; values are not owned unless a destroy
 * function is given at create.
 */
#include <stddef.h>

struct strmap;
typedef void (*strmap_free_f) (void *val);

struct strmap *strmap_create (strmap_free_f destroy);
void strmap_destroy (struct strmap *m);

/* Insert or replace (a replaced value is destroyed). */
int strmap_put (struct strmap *m, const char *key, void *val);
void *strmap_get (struct strmap *m, const char *key);
/* Remove; the value is destroyed.  ENOENT if absent. */
int strmap_delete (struct strmap *m, const char *key);
/* Remove and return the value without destroying it (NULL if absent). */
void *strmap_take (struct strmap *m, const char *key);
size_t strmap_count (struct strmap *m);

/* Iterate: cb may not modify the map; return non-zero to stop. */
int strmap_foreach (struct strmap *m,
                    int (*cb) (const char *key, void *val, void *arg),
                    void *arg);

#endif /* !BROKER_STRMAP_H */
