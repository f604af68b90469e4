/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* encode.h - fast canonical serialization of tree objects, and of
 * directories as patches of their previous blob.
 *
 * Produces exactly what treeobj_encode() does (jansson, compact, keys
 * sorted: the form that is hashed and stored) but in one pass with one
 * sort per directory: a big directory is re-serialized on every commit
 * that changes it, and jansson's sorted dump costs ~1.6 us per entry.
 * Objects that are not plain RFC 11 tree objects are handed to jansson.
 */
#ifndef KVS_ENCODE_H
#define KVS_ENCODE_H

#include <jansson.h>
#include <stddef.h>

/* Serialize obj; the caller frees the NUL-terminated result (*len bytes
 * without the NUL).  NULL with errno ENOMEM or EINVAL.
 */
char *kvs_encode (const json_t *obj, size_t *len);

struct blob;

/* Serialize a directory as the patch of a base: base is an indexed dir
 * blob (blob.h) or NULL (empty); data is the dir's "data" object holding
 * the entries that replace or add to base's, and JSON null for the names
 * removed from it.  The unchanged runs of base's entries are copied as
 * they are.  The result is indexed unless a name needed escaping.  NULL
 * with errno ENOMEM or EINVAL.
 */
struct blob *kvs_encode_dir (struct blob *base, const json_t *data);

/* Serialize hdir, an owned copy of the stored hdir src whose text
 * (srclen bytes) is srctext: a bucket slot still holding src's object is
 * copied from srctext as it is, only the others are encoded.  NULL
 * (errno EINVAL) if srctext is not the compact text of an hdir of the
 * same size (the caller then uses kvs_encode), or ENOMEM.
 */
char *kvs_encode_hdir_patch (const json_t *hdir, const json_t *src,
                             const char *srctext, size_t srclen, size_t *len);

#endif /* !KVS_ENCODE_H */
