/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* encode.h - fast canonical serialization of tree objects.
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

#endif /* !KVS_ENCODE_H */
