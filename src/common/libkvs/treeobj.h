/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_KVS_TREEOBJ_H
#define FLUX_KVS_TREEOBJ_H

/* RFC 11 tree objects (version 1) as jansson objects.
 *
 * A tree object is {"ver":1, "type":T, "data":D} with exactly these three
 * keys, T one of:
 *   val      D is the base64 (RFC 4648, padded) of an opaque value
 *   valref   D is an array of one or more blobrefs whose blobs,
 *            concatenated, are the value
 *   dir      D maps entry names to tree objects
 *   dirref   D is an array of exactly one blobref (RFC 11: "limited to
 *            one") naming a serialized dir
 *   symlink  D is {"target":s, "namespace"?:s}, both non-empty
 *   hdir     D is {"size":n, "func":f, "bucket":[n slots]}: a big dir
 *            split by the hash f of its names into n buckets, each slot
 *            null (no entry) or a dirref of a dir or of another hdir
 *            that holds the names of that bucket (see below)
 * Dir entry names are non-empty and contain no '.'.  An hdir is only
 * ever stored on its own (the object behind a dirref): it is not valid
 * as a dir entry, nor inline in a bucket.
 *
 * Hdir buckets: the only func is "fnv1a32": a name's bucket is the 32-bit
 * FNV-1a hash of its bytes modulo size.  A bucket's own hdir (when that
 * bucket grew big too) uses another size, coprime with the sizes above
 * it, so that the names of one bucket spread over the next level's.
 * Readers need not know that: they follow size and func at each level.
 *
 * "Borrowed" means no new reference: valid while the parent object lives
 * and is not modified.  Functions returning json_t * without "borrowed"
 * return a new reference.  Errors are -1 / NULL with errno: EINVAL for a
 * bad argument or an object that is not a valid tree object of the
 * expected type, ENOENT for a missing dir entry, ENOMEM.  Nothing here
 * keeps state: every function may be called from any callback.
 */
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Constructors.  create_valref/create_dirref with blobref NULL make an
 * object with an empty array, to be filled with treeobj_append_blobref()
 * (such an object does not validate until it has a blobref).  ns may be
 * NULL for a symlink within the current namespace.
 */
json_t *treeobj_create_val (const void *data, size_t len);
json_t *treeobj_create_valref (const char *blobref);
json_t *treeobj_create_dir (void);
json_t *treeobj_create_dirref (const char *blobref);
json_t *treeobj_create_symlink (const char *ns, const char *target);

/* Check obj against RFC 11 and the rules above.  A dir's entries are
 * checked too, recursively.  Blobrefs must pass blobref_validate().
 * Returns 0, or -1 with errno EINVAL.
 */
int treeobj_validate (const json_t *obj);

/* The type name ("val", "dir", ...) if obj looks like a tree object (an
 * object with a known string "type"), else NULL with EINVAL.  The is_*
 * tests look at the type only; they are false for NULL.
 */
const char *treeobj_get_type (const json_t *obj);
bool treeobj_is_val (const json_t *obj);
bool treeobj_is_valref (const json_t *obj);
bool treeobj_is_dir (const json_t *obj);
bool treeobj_is_dirref (const json_t *obj);
bool treeobj_is_symlink (const json_t *obj);
bool treeobj_is_hdir (const json_t *obj);

/* The "data" member (borrowed), or NULL with EINVAL. */
json_t *treeobj_get_data (const json_t *obj);

/* Decode a val into a new buffer of *len bytes plus a NUL (so text
 * values can be used as C strings); the caller frees *data.  An empty
 * value gives a 1-byte buffer "" and *len 0.  EINVAL if obj is not a
 * val or its base64 is malformed.
 */
int treeobj_decode_val (const json_t *obj, void **data, size_t *len);

/* Number of entries of a dir, of blobrefs of a valref/dirref; 1 for a
 * val or symlink.  -1 with EINVAL if obj is not a tree object or is an
 * hdir (whose entries are in its buckets: count those).
 */
int treeobj_get_count (const json_t *obj);

/* Blobref number index (from 0) of a valref/dirref (borrowed), or NULL
 * with EINVAL (wrong type, index out of range).
 */
const char *treeobj_get_blobref (const json_t *obj, int index);

/* Append a blobref to a valref/dirref.  EINVAL if obj has another type
 * or blobref is malformed.
 */
int treeobj_append_blobref (json_t *obj, const char *blobref);

/* Dir entries.  get_entry returns the entry (borrowed) or NULL with
 * ENOENT; insert_entry adds or replaces name with obj2 (incref'd);
 * delete_entry fails with ENOENT if name is absent.  EINVAL if obj is
 * not a dir, name is empty or contains '.', or obj2 is not a tree
 * object.
 */
json_t *treeobj_get_entry (const json_t *obj, const char *name);
int treeobj_insert_entry (json_t *obj, const char *name, json_t *obj2);
int treeobj_delete_entry (json_t *obj, const char *name);

/* The target and namespace of a symlink (borrowed; *ns is NULL when the
 * symlink has no namespace).  Either pointer may be NULL.  EINVAL if obj
 * is not a valid symlink.
 */
int treeobj_get_symlink (const json_t *obj, const char **ns,
                         const char **target);

/* Hdirs.  create_hdir makes one of size buckets (1 to
 * TREEOBJ_HDIR_MAX_SIZE), all empty, hashed with func (NULL: the
 * default, "fnv1a32").  hdir_size gives the number of buckets;
 * hdir_index the bucket that holds name (-1 with EINVAL if obj is not an
 * hdir with a known func or name is invalid); get_bucket the bucket's
 * object (borrowed), NULL with ENOENT when it is empty; set_bucket puts
 * obj2 (incref'd; NULL empties it) in bucket index: a stored hdir holds
 * dirrefs only, a writer may hold other objects there while it builds
 * one.  EINVAL for a bad argument.
 */
#define TREEOBJ_HDIR_MAX_SIZE 65536
json_t *treeobj_create_hdir (int size, const char *func);
int treeobj_hdir_size (const json_t *obj);
int treeobj_hdir_index (const json_t *obj, const char *name);
json_t *treeobj_hdir_get_bucket (const json_t *obj, int index);
/* The hdir's array of size slots (borrowed; each null or a tree object):
 * to visit every slot without checking the hdir again for each. */
json_t *treeobj_hdir_get_buckets (const json_t *obj);
int treeobj_hdir_set_bucket (json_t *obj, int index, json_t *obj2);

/* The 32-bit FNV-1a hash of len bytes (the hdir func "fnv1a32"). */
uint32_t treeobj_fnv1a32 (const void *data, size_t len);

/* copy: a new top-level object and a new "data" container, sharing the
 * entries of a dir with obj (so entries can be inserted or deleted in
 * the copy without touching obj); an hdir's copy has its own bucket
 * array, sharing the buckets.  deep_copy copies everything.
 */
json_t *treeobj_copy (const json_t *obj);
json_t *treeobj_deep_copy (const json_t *obj);

/* Parse JSON text (NUL-terminated, or size bytes) into a tree object and
 * validate it.  NULL with EINVAL for malformed JSON (including duplicate
 * keys) or an invalid tree object: a server answers that with EPROTO.
 */
json_t *treeobj_decode (const char *buf);
json_t *treeobj_decodeb (const char *buf, size_t size);

/* Serialize compactly with sorted keys: the form that is hashed and
 * stored.  The caller frees the result.  EINVAL if obj is not a tree
 * object.
 */
char *treeobj_encode (const json_t *obj);

/* The blobref ("<hashtype>-<hex>") of treeobj_encode (obj), without a
 * trailing NUL, hashed with hashtype ("sha1", "sha256").  The empty dir
 * hashes to sha1-c0a9faf907dda6216fd73bf81d0b3b21a1a8cb91.  Returns 0,
 * or -1 with EINVAL (bad object, unknown hashtype, size too small).
 */
int treeobj_hash (const char *hashtype, const json_t *obj, char *blobref,
                  size_t size);

#ifdef __cplusplus
}
#endif

#endif /* !FLUX_KVS_TREEOBJ_H */
