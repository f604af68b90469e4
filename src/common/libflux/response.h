/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_RESPONSE_H
#define FLUX_RESPONSE_H

/* Requests and responses on the server side (RFC 6), and decoding
 * helpers.
 *
 * A response copies the request's route stack, topic and matchtag and
 * keeps its STREAMING flag.  Responding to a request that carries
 * FLUX_MSGFLAG_NORESPONSE sends nothing and succeeds.  An error response
 * carries the errnum and, optionally, a one-line NUL-terminated text.
 * All functions return 0 on success or -1 with errno set; the flux_t
 * ones may fail with the connector's errors.
 */
#include <stdarg.h>

#include "handle.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Decode a request.  topic and s may be NULL; *s is NULL if the request
 * has no payload.  EPROTO if msg is not a request or the payload is not a
 * string.
 */
int flux_request_decode (const flux_msg_t *msg, const char **topic,
                         const char **s);
int flux_request_decode_raw (const flux_msg_t *msg, const char **topic,
                             const void **data, size_t *len);
/* Decode the JSON object payload of a request (EPROTO if absent, not an
 * object, or not matching fmt).
 */
int flux_request_unpack (const flux_msg_t *msg, const char **topic,
                         const char *fmt, ...);

/* Build a request (nodeid ANY, matchtag NONE, ROUTE enabled, empty stack).
 * s / data may be NULL for no payload.
 */
flux_msg_t *flux_request_encode (const char *topic, const char *s);
flux_msg_t *flux_request_encode_raw (const char *topic, const void *data,
                                     size_t len);

/* Build the response skeleton for a request (no payload). */
flux_msg_t *flux_response_derive (const flux_msg_t *request, int errnum);

/* Decode a response.  If it carries an error, fail with errno = errnum.
 * *s is NULL if there is no payload.
 */
int flux_response_decode (const flux_msg_t *msg, const char **topic,
                          const char **s);
int flux_response_decode_raw (const flux_msg_t *msg, const char **topic,
                              const void **data, size_t *len);
/* The error text of an error response; ENOENT if it has none, EINVAL if
 * it is not an error response.
 */
int flux_response_decode_error (const flux_msg_t *msg, const char **errstr);

/* Respond with a string payload (s may be NULL: no payload). */
int flux_respond (flux_t *h, const flux_msg_t *request, const char *s);
int flux_respond_raw (flux_t *h, const flux_msg_t *request, const void *data,
                      size_t len);
int flux_respond_pack (flux_t *h, const flux_msg_t *request, const char *fmt,
                       ...);
/* Respond with an error.  errnum 0 is replaced by EINVAL; errstr may be
 * NULL.
 */
int flux_respond_error (flux_t *h, const flux_msg_t *request, int errnum,
                        const char *errstr);

#ifdef __cplusplus
}
#endif

#endif /* !FLUX_RESPONSE_H */
