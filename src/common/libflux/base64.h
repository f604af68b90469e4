/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_BASE64_H
#define FLUX_BASE64_H

/* Base64 (RFC 4648 standard alphabet, '=' padding, no line breaks).
 * Part of libflux-internal.la, not exported from libflux-core.so
 * (src/common/libflux/Makefile.am). */
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Bytes needed to encode len bytes, including the NUL. */
size_t base64_encoded_size (size_t len);
/* Upper bound of bytes decoded from a string of length len. */
size_t base64_decoded_size (size_t len);

/* Encode into dst (size >= base64_encoded_size(len)); NUL-terminates.
 * Returns the string length, or -1 with EINVAL if dst is too small. */
ssize_t base64_encode (char *dst, size_t size, const void *src, size_t len);

/* Decode exactly len characters of src into dst.  Strict: the length must
 * be a multiple of 4, padding only at the end, no other characters, and
 * unused bits of the last group must be zero.  Returns the decoded length,
 * or -1 with EINVAL. */
ssize_t base64_decode (void *dst, size_t size, const char *src, size_t len);

/* True if base64_decode() would accept the len characters of src (no
 * output, no allocation). */
bool base64_valid (const char *src, size_t len);

#endif /* !FLUX_BASE64_H */
