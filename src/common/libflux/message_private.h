/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_MESSAGE_PRIVATE_H
#define FLUX_MESSAGE_PRIVATE_H

/* Layout of flux_msg_t, shared by the message*.c files of libflux.
 * Not for use outside libflux.
 *
 * One allocation holds the struct, a short topic, a few route ids and,
 * for decoded or copied messages, the payload (in tail[]).  Longer topics,
 * route stacks and payloads set later get their own buffers.
 *
 * Invariants: the TOPIC, PAYLOAD and ROUTE flag bits say whether the part
 * is present; topic is always NUL-terminated (topic_len bytes, no NUL
 * inside); route ids are stored bottom (original sender, index 0) to top
 * (newest hop) as NUL-terminated strings back to back in pool, so push and
 * pop work at the end of both arrays.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "message.h"

#define MSG_TOPIC_INLINE 64
#define MSG_ROUTES_INLINE 4
#define MSG_POOL_INLINE 152 /* four 36-char UUIDs with their NULs */
#define MSG_ROUTE_ID_MAX 255
#define MSG_POOL_MAX (FLUX_MSG_MAX_ROUTES * (MSG_ROUTE_ID_MAX + 1))
#define MSG_ERRTEXT_SIZE 160

struct msg_route {
    uint16_t off; /* offset of the id in pool */
    uint8_t len;  /* strlen of the id, 1..255 */
};

struct flux_msg {
    int refcount; /* atomic: __atomic builtins only */
    uint8_t type;
    uint8_t flags;
    bool payload_heap; /* payload is its own malloc block */
    uint32_t userid;
    uint32_t rolemask;
    uint32_t aux1; /* nodeid / errnum / sequence / control type */
    uint32_t aux2; /* matchtag / matchtag / unused / control status */

    char *topic; /* topic_inline or malloc */
    size_t topic_len;

    uint8_t *payload; /* NULL if empty, else tail or malloc */
    size_t payload_size;

    json_t *json;  /* parsed payload for unpack; atomic install */
    char *errtext; /* last pack/unpack error; atomic install */

    struct msg_route *routes; /* routes_inline or malloc */
    char *pool;               /* pool_inline or malloc */
    uint16_t route_count;
    uint16_t route_cap;
    uint16_t pool_len;
    uint16_t pool_cap;

    struct msg_route routes_inline[MSG_ROUTES_INLINE];
    char pool_inline[MSG_POOL_INLINE];
    char topic_inline[MSG_TOPIC_INLINE];
    uint8_t tail[];
};

static inline bool msg__type_valid (int type)
{
    return type == FLUX_MSGTYPE_REQUEST || type == FLUX_MSGTYPE_RESPONSE
           || type == FLUX_MSGTYPE_EVENT || type == FLUX_MSGTYPE_CONTROL;
}

/* What RFC 3 forbids: routes on control messages, topic and payload on
 * control messages.  RFC 3 also says an event has no route delimiter, but
 * flux-core sends and delivers events with FLAG_ROUTE set (a client's raw
 * `flux event pub` has an empty stack; its broker delivers events with
 * route ids), so a route stack on an event is accepted (PROTOCOLS 1.3).
 */
static inline bool msg__flags_valid (int type, uint8_t flags)
{
    if (type == FLUX_MSGTYPE_CONTROL && (flags & FLUX_MSGFLAG_ROUTE))
        return false;
    if (type == FLUX_MSGTYPE_CONTROL
        && (flags & (FLUX_MSGFLAG_TOPIC | FLUX_MSGFLAG_PAYLOAD)))
        return false;
    return true;
}

/* Allocate a message of a valid type with 'extra' bytes of tail[],
 * reference count 1, no parts and the create() defaults.
 */
flux_msg_t *msg__alloc (int type, size_t extra);

/* Make room for 'count' route ids using 'pool' bytes (NULs included).
 * count <= FLUX_MSG_MAX_ROUTES, pool <= MSG_POOL_MAX.
 */
int msg__routes_reserve (flux_msg_t *msg, size_t count, size_t pool);

/* Push an id of 'len' bytes (1..255, no NUL) on top of the stack
 * (unchecked: callers validate).  id may point into the message's pool.
 */
int msg__route_append (flux_msg_t *msg, const char *id, size_t len);

/* Drop the payload part (and the cached JSON object). */
void msg__payload_clear (flux_msg_t *msg);

/* Install buf (a malloc block, or NULL if size is 0) as the payload part,
 * replacing any previous one.
 */
void msg__payload_take (flux_msg_t *msg, void *buf, size_t size);

/* Replace the topic with len bytes at s (no NUL inside; s may alias the
 * current topic) and set the TOPIC flag.
 */
int msg__topic_set (flux_msg_t *msg, const char *s, size_t len);

#endif /* !FLUX_MESSAGE_PRIVATE_H */
