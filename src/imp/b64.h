/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef IMP_B64_H
#define IMP_B64_H
/* RFC 4648 standard base64 with '=' padding and no line breaks, as J
 * uses it (PROTOCOLS.md section 6). */
#include <stddef.h>

/* Encode len bytes into a new NUL-terminated string (NULL on ENOMEM). */
char *b64_encode (const void *src, size_t len);

/* Decode exactly len characters of src (padding required, nothing
 * else allowed) into a new NUL-terminated buffer of *outlen bytes.
 * NULL with errno EINVAL (not base64) or ENOMEM. */
char *b64_decode (const char *src, size_t len, size_t *outlen);

#endif /* !IMP_B64_H */
