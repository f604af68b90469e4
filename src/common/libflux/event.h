/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_EVENT_H
#define FLUX_EVENT_H

/* Events (RFC 3 publish/subscribe).
 *
 * Receive: flux_event_subscribe (h, prefix) in handle.h, then a message
 * handler matching FLUX_MSGTYPE_EVENT.  Publish: flux_event_publish()
 * sends event.publish to rank 0, which assigns the sequence number and
 * distributes the event; the future's result carries the sequence.
 * flags: 0 or FLUX_MSGFLAG_PRIVATE (only the sender and the instance owner
 * receive it).
 */
#include "future.h"
#include "handle.h"

#ifdef __cplusplus
extern "C" {
#endif

flux_msg_t *flux_event_encode (const char *topic, const char *s);
flux_msg_t *flux_event_encode_raw (const char *topic, const void *data,
                                   size_t len);
flux_msg_t *flux_event_pack (const char *topic, const char *fmt, ...);

/* Decode an event; EPROTO if msg is not an event.  *s NULL if no payload. */
int flux_event_decode (const flux_msg_t *msg, const char **topic,
                       const char **s);
int flux_event_decode_raw (const flux_msg_t *msg, const char **topic,
                           const void **data, size_t *len);
int flux_event_unpack (const flux_msg_t *msg, const char **topic,
                       const char *fmt, ...);

flux_future_t *flux_event_publish (flux_t *h, const char *topic, int flags,
                                   const char *s);
flux_future_t *flux_event_publish_raw (flux_t *h, const char *topic, int flags,
                                       const void *data, size_t len);
flux_future_t *flux_event_publish_pack (flux_t *h, const char *topic, int flags,
                                        const char *fmt, ...);
int flux_event_publish_get_seq (flux_future_t *f, int *seq);

/* Announce that the service name runs (again): publish the private event
 * "<name>.online" and wait until rank 0 has taken it.  Clients that keep
 * what a reloading service refused send it again on that event
 * (waitlist.h).  -1 with errno set and error filled if it fails. */
int flux_service_announce (flux_t *h, const char *name, flux_error_t *error);

/* Register / remove a service name for this client (service.add /
 * service.remove): requests "name.*" are then routed to it.  The future
 * is fulfilled when the broker has done it (EEXIST: name taken). */
flux_future_t *flux_service_register (flux_t *h, const char *name);
flux_future_t *flux_service_unregister (flux_t *h, const char *name);

#ifdef __cplusplus
}
#endif

#endif /* !FLUX_EVENT_H */
