/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_RPC_H
#define FLUX_RPC_H

/* Remote procedure calls (RFC 6).
 *
 * flux_rpc() sends a request and returns a future fulfilled by each
 * response.  nodeid is a rank, FLUX_NODEID_ANY, or FLUX_NODEID_UPSTREAM
 * (this broker's rank with the UPSTREAM flag: the request goes to the
 * next broker up that offers the service).
 *
 * Flags:
 *   FLUX_RPC_NORESPONSE  no response is expected; the future is fulfilled
 *                        at once with success (matchtag NONE is sent)
 *   FLUX_RPC_STREAMING   the service answers with zero or more responses
 *                        ended by an error (ENODATA on success); call
 *                        flux_future_reset() after each one
 *
 * A matchtag is allocated per RPC and returned to the pool after the final
 * response (a non-streaming response, or any error).  If the future is
 * destroyed earlier, the tag stays reserved until that response arrives.
 * If the connection is lost, every RPC in flight fails with ECONNRESET.
 */
#include <stdint.h>

#include "future.h"
#include "handle.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    FLUX_RPC_NORESPONSE = 1,
    FLUX_RPC_STREAMING = 2,
};

flux_future_t *flux_rpc (flux_t *h, const char *topic, const char *s,
                         uint32_t nodeid, int flags);
flux_future_t *flux_rpc_raw (flux_t *h, const char *topic, const void *data,
                             size_t len, uint32_t nodeid, int flags);
flux_future_t *flux_rpc_pack (flux_t *h, const char *topic, uint32_t nodeid,
                              int flags, const char *fmt, ...);
/* Send a prepared request message (its topic, payload and flags are used;
 * nodeid and matchtag are set here). */
flux_future_t *flux_rpc_message (flux_t *h, const flux_msg_t *msg,
                                 uint32_t nodeid, int flags);

/* Result accessors: wait if needed; -1 with errno = the response's errnum
 * on error (the text is flux_future_error_string()).  *s is NULL if the
 * response has no payload.  Pointers stay valid until reset/destroy.
 */
int flux_rpc_get (flux_future_t *f, const char **s);
int flux_rpc_get_raw (flux_future_t *f, const void **data, size_t *len);
int flux_rpc_get_unpack (flux_future_t *f, const char *fmt, ...);
/* The response message itself. */
int flux_future_get_msg (flux_future_t *f, const flux_msg_t **msg);

uint32_t flux_rpc_get_matchtag (flux_future_t *f);
uint32_t flux_rpc_get_nodeid (flux_future_t *f);

#ifdef __cplusplus
}
#endif

#endif /* !FLUX_RPC_H */
