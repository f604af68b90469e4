/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* blob.h - immutable blobs shared by reference, and the entry index of
 * directory blobs in canonical form.
 *
 * A blob is what the content store holds: the cache keeps loaded and
 * committed blobs as these, and a batch (apply.c) keeps a reference on
 * the ones it builds on, however the cache expires meanwhile.
 *
 * A directory blob in canonical form (what kvs_encode() and jansson's
 * compact sorted dump produce) is
 *     {"data":{"k1":V1,"k2":V2,...},"type":"dir","ver":1}
 * with its names in byte order.  Its index lists where each entry starts,
 * so that a commit changing a few entries of a big directory finds them
 * by binary search, decodes only those, and writes the new blob by
 * copying the untouched runs of entries as they are (encode.h), instead
 * of decoding, copying, sorting and encoding every entry.  Blobs that are
 * not in that form (names with escapes, other spacing or order: written
 * by another program) are not indexed; callers fall back to decoding
 * them whole.
 */
#ifndef KVS_BLOB_H
#define KVS_BLOB_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct blob {
    int refs;
    size_t len;
    int n;         /* entries (indexed dirs) */
    int index;     /* 0: not looked at yet, 1: indexed, -1: not indexable */
    uint32_t *off; /* indexed dirs: n + 1 offsets, see blob_dir_entry() */
    char data[];   /* len bytes, then a NUL */
};

/* A new blob holding a copy of data (NULL if len is 0), refs 1. */
struct blob *blob_create (const void *data, size_t len);

/* Take data, a malloc'ed buffer of len + 1 bytes (data[len] is set to
 * NUL), into a new blob (freed on failure too).  off (n + 1 offsets, or
 * NULL) is taken too: it must index data as blob_dir_index() would. */
struct blob *blob_create_take (char *data, size_t len, uint32_t *off, int n);

/* The offset of a blob's bytes in its allocation. */
#define BLOB_HDR offsetof (struct blob, data)

/* Like blob_create_take(), but mem (malloc'ed) already holds the len
 * bytes at mem + BLOB_HDR, with room for a NUL after them: no copy. */
struct blob *blob_from_buffer (char *mem, size_t len, uint32_t *off, int n);

struct blob *blob_incref (struct blob *b);
/* NULL-safe, preserves errno. */
void blob_decref (struct blob *b);

/* Index b if it is a directory in canonical form.  Returns 0 if it is
 * (b->n entries indexed), -1 if not.  Done once; cheap afterwards. */
int blob_dir_index (struct blob *b);

/* Entry i (0 <= i < n) of an indexed dir spans data[off[i]] ... up to
 * data[off[i + 1] - 2] inclusive: off[i + 1] - 1 is the ',' after it or
 * the '}' closing the entries.  Entries i..j-1 are one run of bytes
 * from off[i] to off[j] - 1 (exclusive). */

/* The position of name in an indexed dir: the index of the first entry
 * whose name is not less than name; *found tells if it is name. */
int blob_dir_find (const struct blob *b, const char *name, bool *found);

/* Entry i's name (not NUL-terminated: *len bytes). */
const char *blob_dir_name (const struct blob *b, int i, size_t *len);

/* Entry i's value, decoded and checked (a new reference), or NULL with
 * errno ENOTRECOVERABLE if it is not a valid tree object, ENOMEM. */
json_t *blob_dir_value (const struct blob *b, int i);

/* Compare entry i's name to name in byte order, as strcmp (entry, name)
 * would. */
int blob_dir_namecmp (const struct blob *b, int i, const char *name);

#endif /* !KVS_BLOB_H */
