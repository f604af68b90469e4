/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* apply.h - apply a batch of commits to a copy of a namespace root.
 *
 * Commits are applied one at a time, in order, to one working copy of
 * the root.  Directories along a key's path are copied on first write
 * (loading dirrefs through the cache), missing intermediate directories
 * are created, then the last component is set, unlinked or appended to.
 * Each commit is all or nothing: every change it makes is logged, and if
 * one of its ops fails (or needs an object that is not cached) the log
 * is played back, so the working copy is exactly as before that commit
 * and the other commits of the batch are unaffected.
 *
 * Op semantics (PROTOCOLS.md 4, RFC 11):
 *  - put: the dirent replaces the key; a val longer than inline_max bytes
 *    is stored as a blob and becomes a valref.
 *  - unlink (NULL dirent): removes the key; a missing key, or a path
 *    through a missing directory or a value, is not an error.
 *  - append (a val): to a missing key, a put; to a val or valref, the key
 *    becomes a valref of the old blob(s) plus a blob of the new data,
 *    and past the first 16 blobs the last ones may be folded into one
 *    (apply.c says when); an empty append to a value changes nothing.
 *    EISDIR on a directory, EOPNOTSUPP on a symlink.
 *  - a path through a value: ENOTDIR.  A symlink in the middle of a path
 *    is followed (its target is a full key in this namespace; another
 *    namespace is EINVAL), at most LOOKUP_SYMLINK_MAX times (ELOOP).
 *  - ENOTRECOVERABLE: an object in the store is not what it should be.
 *
 * apply_finalize() then turns every new or changed directory into a
 * stored blob, bottom up, replacing it with a dirref in its parent
 * (unchanged subtrees keep their dirrefs), and gives the new root.  A
 * directory of more than maxdirent entries is stored as an hdir, whose
 * buckets are loaded and copied like directories when written.  The
 * blobs to store are listed by apply_blob().
 */
#ifndef KVS_APPLY_H
#define KVS_APPLY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "libcontent/blobref.h"
#include "libflux/flux.h"

#include "cache.h"
#include "txn.h"

struct blob;

struct apply_blob {
    char ref[BLOBREF_MAX_STRING_SIZE];
    struct blob *blob; /* the bytes to store (blob.h) */
    const void *data;  /* blob's bytes */
    size_t len;
    bool dir;    /* a directory (else a value) */
    json_t *obj; /* an hdir: the object (borrowed), else NULL */
};

struct apply;

/* Start a batch on the root rootref of namespace ns.  hashtype names
 * the hash of new blobrefs ("sha1"...).  inline_max: vals larger than
 * this become valrefs.  EINVAL for bad arguments.
 */
struct apply *apply_create (struct cache *cache, const char *ns,
                            const char *rootref, const char *hashtype,
                            size_t inline_max);

/* NULL-safe, preserves errno. */
void apply_destroy (struct apply *a);

/* A directory written with more than maxdirent entries is stored as an
 * hdir (RFC 11; apply.c says how); 0 never makes one. */
#define APPLY_MAXDIRENT 256
void apply_set_maxdirent (struct apply *a, int maxdirent);

/* Apply one commit.  0: applied.  -1 with errno: EAGAIN when objects
 * are missing from the cache (apply_missing() names them, up to
 * APPLY_MAX_MISSING, all those the commit's ops ran into; load them and
 * call again), or the commit's error (text in error).  On -1 nothing of
 * the commit is kept.
 */
int apply_txn (struct apply *a, const struct txn *t, flux_error_t *error);

/* The blobrefs apply_txn() needs (index 0 .. count - 1), valid until the
 * next apply_txn(); apply_missing_ref() is the first. */
#define APPLY_MAX_MISSING 1024
int apply_missing_count (struct apply *a);
const char *apply_missing (struct apply *a, int i);
const char *apply_missing_ref (struct apply *a);

/* How many directories the batch has copied (or created) so far: those
 * of its applied commits, none of a commit that failed or must be applied
 * again. */
size_t apply_owned_count (struct apply *a);

/* Serialize every new or changed directory and write the new root's
 * blobref into rootref (the old one if nothing changed).  Call once,
 * after the last apply_txn().
 */
int apply_finalize (struct apply *a, char *rootref, size_t size);

/* Blobs created by the batch (after apply_finalize, all of them). */
int apply_blob_count (struct apply *a);
const struct apply_blob *apply_blob (struct apply *a, int index);

/* The keys of the applied commits' ops, each once, in the order first
 * written (borrowed JSON array of strings).
 */
json_t *apply_keys (struct apply *a);

/* Some op's key went through a symlink (its path depends on more than
 * the directories its key names). */
bool apply_followed_symlink (struct apply *a);

/* After apply_finalize: ref is one of the batch's blobs. */
bool apply_has_blob (struct apply *a, const char *ref);

/* After apply_finalize: the blobrefs of the stored directories the
 * batch replaced with new versions (apply_replaced() gives NULL for one
 * that is still current, or out of range). */
int apply_replaced_count (struct apply *a);
const char *apply_replaced (struct apply *a, int index);

#endif /* !KVS_APPLY_H */
