/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_JOB_SIGN_H
#define FLUX_JOB_SIGN_H
/* J, the signed job request (RFC 15), with mechanism "none" as
 * single-user instances use it (PROTOCOLS.md section 6):
 *   base64(HEADER) "." base64(PAYLOAD) "." "none"
 * HEADER is RFC 38 key-value text: version=i1, mechanism=snone,
 * userid=i<uid>, in any order on decode.  The munge mechanism comes with
 * the multi-user work and will add to this header, not change it.
 */
#include <stddef.h>
#include <stdint.h>
#include "libflux/flux.h"

/* Wrap payload (len bytes, no NUL inside) for userid.  Returns a new
 * string the caller frees, or NULL with errno (EINVAL, ENOMEM). */
char *sign_none_wrap (const void *payload, size_t len, uint32_t userid);

/* Unwrap J.  On success *payload (caller frees; NUL terminated, *len
 * bytes without the NUL), *userid and *mechanism (static string "none")
 * are set.  -1 with errno EINVAL and error->text saying what is wrong
 * ("J has 2 parts, expected 3", "unknown mechanism munge"...). */
int sign_unwrap (const char *J, char **payload, size_t *len, uint32_t *userid,
                 const char **mechanism, flux_error_t *error);

#endif /* !FLUX_JOB_SIGN_H */
