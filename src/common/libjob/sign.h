/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_JOB_SIGN_H
#define FLUX_JOB_SIGN_H
/* J, the signed job request (RFC 15, PROTOCOLS.md section 6 and
 * PROTOCOLS-exec.md 5.6):
 *   base64(HEADER) "." base64(PAYLOAD) "." SIGNATURE
 * HEADER is RFC 38 key-value text: version=i1, mechanism=s<mech>,
 * userid=i<uid>, in any order on decode.  Mechanisms:
 *   none   SIGNATURE is "none" (single-user instances: the owner's jobs)
 *   munge  SIGNATURE is a MUNGE credential whose payload is the byte 1
 *          (SHA-256) and SHA-256("<b64 header>.<b64 payload>"), 33 bytes,
 *          as flux-security's sign_munge writes it.
 * The munge socket is libmunge's default unless FLUX_MUNGE_SOCKET names
 * another (tests run their own munged).
 */
#include <stddef.h>
#include <stdint.h>
#include "libflux/flux.h"

/* Wrap payload (len bytes, no NUL inside) for userid.  Returns a new
 * string the caller frees, or NULL with errno (EINVAL, ENOMEM). */
char *sign_none_wrap (const void *payload, size_t len, uint32_t userid);

/* Wrap payload for the calling user with mechanism "none" or "munge"
 * (munge: the credential carries the real uid of the caller, which must
 * be userid).  Returns a new string the caller frees, or NULL with errno
 * and error->text (EINVAL: bad argument or mechanism; EPERM: munge
 * refused to encode, e.g. munged is not running).
 */
char *sign_wrap (const char *mechanism, const void *payload, size_t len,
                 uint32_t userid, flux_error_t *error);

enum {
    SIGN_NOVERIFY = 1, /* check the form of the signature, not its truth */
};

/* Unwrap J as sign_unwrap() does, and unless flags has SIGN_NOVERIFY,
 * verify the signature: for munge, the credential decodes (a replay is
 * fine: the same J is decoded by ingest and by every node's IMP), is not
 * expired, its uid is the header's userid and its payload the hash of
 * J's first two parts.  Mechanism none verifies trivially: whether a
 * "none" J may be accepted is the caller's policy (only from the
 * instance owner).  -1 with errno EINVAL (malformed) or EPERM (the
 * signature does not verify), and error->text.
 */
int sign_unwrap_ex (const char *J, int flags, char **payload, size_t *len,
                    uint32_t *userid, const char **mechanism,
                    flux_error_t *error);

/* Unwrap J.  On success *payload (caller frees; NUL terminated, *len
 * bytes without the NUL), *userid and *mechanism (a static string, "none"
 * or "munge") are set.  The signature's form is checked, not its truth
 * (SIGN_NOVERIFY).  -1 with errno EINVAL and error->text saying what is
 * wrong ("J has 2 parts, expected 3", "unknown mechanism curve"...). */
int sign_unwrap (const char *J, char **payload, size_t *len, uint32_t *userid,
                 const char **mechanism, flux_error_t *error);

#endif /* !FLUX_JOB_SIGN_H */
