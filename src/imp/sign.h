/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef IMP_SIGN_H
#define IMP_SIGN_H
/* J as flux-security makes it (PROTOCOLS-exec.md section 5.6):
 *   base64(HEADER) "." base64(PAYLOAD) "." SIGNATURE
 * HEADER is RFC 38 key-value text with exactly version=i1,
 * mechanism=s<munge|none> and userid=i<uid>, in any order.
 * munge: SIGNATURE is a MUNGE credential whose payload is the byte 1
 * (SHA-256) then SHA-256("<b64 header>.<b64 payload>"), 33 bytes.
 * none: SIGNATURE is the text "none".
 * No libflux here: flux-imp links libc, libmunge, jansson, libyaml.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "imperr.h"

#define IMP_J_MAX (1024 * 1024)
#define IMP_MUNGE_PAYLOAD_SIZE 33

struct imp_j {
    char mechanism[16]; /* "munge" or "none" */
    uint32_t userid;    /* the header's userid */
    char *payload;      /* the jobspec text, NUL terminated */
    size_t payload_len;
    char *signed_text; /* "<b64 header>.<b64 payload>" */
    size_t signed_len;
    char *signature; /* the third part */
};

/* Split and decode J without verifying it.  -1 with e set on any
 * malformation (never a crash).  imp_j_clear() frees (also after an
 * error). */
int imp_j_decode (const char *J, struct imp_j *j, struct imp_err *e);
void imp_j_clear (struct imp_j *j);

/* The munge checks after munge_decode() succeeded: cred is the
 * credential's payload, cred_uid its uid, encode_time its encode time.
 * Checks the hash type and value, cred_uid == header userid and
 * encode_time + max_ttl >= now.  Pure: unit tested without munged. */
int imp_j_check_munge (const struct imp_j *j, const void *cred, size_t credlen,
                       uint32_t cred_uid, time_t encode_time, int max_ttl,
                       time_t now, struct imp_err *e);

/* Verify J fully: mechanism allowed (allow_munge, allow_none), then for
 * munge munge_decode() through socket (NULL: libmunge's default) and
 * imp_j_check_munge(); for none, header userid == caller.  On success
 * *uid is the job's user. */
int imp_j_verify (const struct imp_j *j, bool allow_munge, bool allow_none,
                  const char *socket, int max_ttl, uint32_t caller,
                  uint32_t *uid, struct imp_err *e);

/* Make J from payload (len bytes, no NUL): header userid = userid.
 * mech "none", or "munge" with a credential from munged at socket
 * (NULL: default) with the given ttl (0: munged's default).  For the
 * test signer; the instance signs with libjob.  NULL with e set. */
char *imp_j_wrap (const char *mech, const void *payload, size_t len,
                  uint32_t userid, const char *socket, int ttl,
                  struct imp_err *e);

#endif /* !IMP_SIGN_H */
