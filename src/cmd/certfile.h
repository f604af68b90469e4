/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_CMD_CERTFILE_H
#define FLUX_CMD_CERTFILE_H

/* CURVE certificate files as czmq's zcert writes them (a ZPL text file:
 * a "metadata" section, then "curve" with public-key and secret-key in
 * Z85), and the Z85 encoding itself (ZeroMQ RFC 32).  The overlay loads
 * these files with czmq's zcert_load(); `flux keygen` writes them.
 */
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CERT_KEY_SIZE 32     /* CURVE25519 key, bytes */
#define CERT_KEY_Z85_SIZE 41 /* its Z85 text, with NUL */

/* Encode len bytes (a multiple of 4) into dst as Z85, NUL-terminated;
 * dstsize must be >= len * 5 / 4 + 1.  Returns the text length, or -1
 * with EINVAL.
 */
ssize_t z85_encode (char *dst, size_t dstsize, const uint8_t *src, size_t len);

/* Decode Z85 text src (length a multiple of 5, Z85 alphabet only, each
 * group at most 0xFFFFFFFF) into dst (dstsize >= strlen (src) * 4 / 5).
 * Returns the byte count, or -1 with EINVAL.
 */
ssize_t z85_decode (uint8_t *dst, size_t dstsize, const char *src);

/* Write a secret certificate (public and secret key) to path, readable
 * by its owner only (mode 0600), replacing any file there atomically.
 * meta: NULL or a NULL-terminated list of key, value pairs for the
 * metadata section; keys are ZPL names (letters, digits and $-_@.&+/),
 * values may not contain '"', '\\' or control characters.  Returns 0,
 * or -1 with errno: EINVAL (bad arguments or metadata), or the error of
 * creating or writing the file (ENOENT, EACCES, ...); no file is left
 * behind on failure.
 */
int certfile_write_secret (const char *path, const uint8_t pub[CERT_KEY_SIZE],
                           const uint8_t sec[CERT_KEY_SIZE],
                           const char *const *meta);

#ifdef __cplusplus
}
#endif

#endif /* !FLUX_CMD_CERTFILE_H */
