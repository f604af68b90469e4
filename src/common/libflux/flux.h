/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_CORE_H
#define FLUX_CORE_H

/* libflux: the public client API, one include for all of it.
 *
 *   message.h      RFC 3 messages and their wire encodings
 *   handle.h       flux_t: connectors, send/recv, matchtags, subscriptions
 *   reactor.h      the libuv event loop everything runs on
 *   msg_handler.h  dispatch of received messages to callbacks
 *   future.h       futures, composites and chains
 *   rpc.h          RPCs (RFC 6) on top of futures
 *   response.h     decoding requests, sending responses
 *   event.h        events and service registration
 *   attr.h         broker attributes
 */
#include "attr.h"
#include "event.h"
#include "flog.h"
#include "future.h"
#include "handle.h"
#include "message.h"
#include "msg_handler.h"
#include "reactor.h"
#include "response.h"
#include "rpc.h"

#endif /* !FLUX_CORE_H */
