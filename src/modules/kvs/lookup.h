/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* lookup.h - one KVS lookup: a walk of a key from a root dirref through
 * the object cache (RFC 11, PROTOCOLS.md 4).
 *
 * A lookup captures its root at creation.  lookup_run() walks the key
 * component by component, following dirrefs and symlinks (a symlink in
 * the middle of a path always; the last one unless READLINK or TREEOBJ),
 * at most LOOKUP_SYMLINK_MAX symlinks (ELOOP).  A symlink with another
 * namespace continues from that namespace's current root, obtained from
 * the get_root callback (which also decides access).  When an object is
 * not in the cache the run stops with EAGAIN and names what is missing;
 * the caller loads it and calls lookup_run() again, which walks again
 * from the same root: objects are immutable, so that is correct.  A
 * name in an hdir (RFC 11) is found through its bucket, one load per
 * level.
 *
 * Result by the final object and flags:
 *   TREEOBJ             the object as stored (no symlink followed last)
 *   symlink + READLINK  the symlink
 *   READLINK otherwise  EINVAL
 *   dir/dirref          the dir with READDIR (a dirref loaded; an hdir's
 *                       buckets loaded and merged into one dir), else
 *                       EISDIR
 *   val                 the val; ENOTDIR with READDIR
 *   valref              a val of the blobs concatenated; ENOTDIR with READDIR
 * Other errors: ENOENT (no such key, or a path through a value), ELOOP,
 * ENOTRECOVERABLE (corrupt object in the store), and whatever get_root
 * fails with (ENOTSUP, EPERM).
 */
#ifndef KVS_LOOKUP_H
#define KVS_LOOKUP_H

#include <jansson.h>
#include <stddef.h>

#include "cache.h"

#define LOOKUP_SYMLINK_MAX 10

struct lookup;

/* Write the current root blobref of namespace ns into rootref.  Return
 * 0, or -1 with errno: ENOTSUP (no such namespace), EPERM (the requester
 * may not read it), EAGAIN (not known yet here: the lookup reports it
 * with lookup_missing_namespace()).
 */
typedef int (*lookup_root_f) (const char *ns, char *rootref, size_t size,
                              void *arg);

/* Create a lookup of key (normalized here) at root rootref (a dirref's
 * blobref) of namespace ns (NULL for a lookupat snapshot: every symlink
 * with a namespace then goes through get_root).  get_root may be NULL:
 * cross-namespace symlinks then fail with ENOTSUP.  EINVAL for a bad
 * argument.
 */
struct lookup *lookup_create (struct cache *cache, const char *ns,
                              const char *rootref, const char *key, int flags,
                              lookup_root_f get_root, void *arg);

/* NULL-safe, preserves errno. */
void lookup_destroy (struct lookup *l);

/* Run (or re-run) the walk.  0: done, *val is the result (a new
 * reference).  -1 with errno EAGAIN: blocked on missing blobs
 * (lookup_missing_count / lookup_missing_ref) or on a namespace not
 * known here (lookup_missing_namespace); any other errno is the
 * lookup's answer.
 */
int lookup_run (struct lookup *l, json_t **val);

int lookup_missing_count (struct lookup *l);
const char *lookup_missing_ref (struct lookup *l, int index);
const char *lookup_missing_namespace (struct lookup *l);

/* The normalized key, the captured root, and the namespace (NULL for a
 * lookupat snapshot). */
const char *lookup_get_key (struct lookup *l);
const char *lookup_get_rootref (struct lookup *l);
const char *lookup_get_namespace (struct lookup *l);

#endif /* !KVS_LOOKUP_H */
