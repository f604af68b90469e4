/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef CONTENT_BLOBREF_H
#define CONTENT_BLOBREF_H

/* Blobrefs (RFC 10 "Address"): the address of a blob in the content
 * store, "<hashtype>-<digest as lower-case hex>", e.g.
 * "sha1-f1d2d2f924e986ac86fdf7b36c94bcdf32beec15".  Hash types: "sha1"
 * (20-byte digest, the default) and "sha256" (32 bytes).
 *
 * A well-formed blobref names a known hash type, has one '-', and exactly
 * twice the digest size in lower-case hex digits after it; anything else
 * (upper case included, since RFC 10 says lower-case) is malformed.
 * Functions return -1 with errno EINVAL on a bad argument or a malformed
 * blobref, EOVERFLOW if an output buffer is too small.  They are pure
 * functions (thread-safe, callable from anywhere).
 */
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BLOBREF_MAX_STRING_SIZE 72 /* "sha256-" + 64 hex + NUL, rounded */
#define BLOBREF_MAX_DIGEST_SIZE 32

/* Digest size of a hash name ("sha1" 20, "sha256" 32), or -1 EINVAL. */
int blobref_hashtype_size (const char *hashtype);

/* Hash data and write the blobref string "<hashtype>-<lowercase hex>"
 * into blobref (NUL-terminated).  data may be NULL if len is 0.
 * Returns 0.
 */
int blobref_hash (const char *hashtype, const void *data, size_t len,
                  char *blobref, size_t blobref_size);

/* Hash data into a raw digest; returns the digest size. */
int blobref_hash_raw (const char *hashtype, const void *data, size_t len,
                      void *hash, size_t hash_size);

/* Blobref string -> raw digest; returns digest size; EINVAL if malformed. */
int blobref_strtohash (const char *blobref, void *hash, size_t size);

/* Raw digest -> blobref string.  len must be hashtype's digest size.
 * Returns 0.
 */
int blobref_hashtostr (const char *hashtype, const void *hash, size_t len,
                       char *blobref, size_t blobref_size);

/* 0 if a well-formed blobref of a known hash type, else -1 EINVAL. */
int blobref_validate (const char *blobref);

/* The hash type of a well-formed blobref, copied into buf ("sha1"...).
 * Returns 0.
 */
int blobref_hashtype (const char *blobref, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* !CONTENT_BLOBREF_H */
