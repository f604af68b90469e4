/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */

/* Wire forms of a Flux message: the 20-byte PROTO part (RFC 3), the
 * multipart form (one part per ZeroMQ frame) and the size-prefixed stream
 * of the local connector as flux-core deploys it (PROTOCOLS.md 1.1: host
 * order magic, length without the 8-byte prefix).
 *
 * Encoding allocates nothing: parts point into the message and frames are
 * written into the caller's buffer.  Decoding first validates all parts
 * against the PROTO flags, then makes one allocation for the message and
 * its payload.  Every length read from the input is checked against the
 * bytes actually left before it is used.
 */

#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "message.h"
#include "message_private.h"

/* routes, delimiter, topic, payload, PROTO */
#define MSG_MAX_PARTS (FLUX_MSG_MAX_ROUTES + 4)

#define SHORT_SIZE_MAX 254
#define LONG_SIZE_MARK 0xff

static inline void put_u32 (uint8_t *p, uint32_t v)
{
    p[0] = v >> 24;
    p[1] = v >> 16;
    p[2] = v >> 8;
    p[3] = v;
}

static inline uint32_t get_u32 (const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8
           | (uint32_t)p[3];
}

static void proto_encode (const flux_msg_t *msg, uint8_t *p)
{
    p[0] = FLUX_MSG_PROTO_MAGIC;
    p[1] = FLUX_MSG_PROTO_VERSION;
    p[2] = msg->type;
    p[3] = msg->flags;
    put_u32 (p + 4, msg->userid);
    put_u32 (p + 8, msg->rolemask);
    put_u32 (p + 12, msg->aux1);
    put_u32 (p + 16, msg->aux2);
}

/* Multipart form */

int flux_msg_part_count (const flux_msg_t *msg)
{
    int n = 1;

    if (!msg) {
        errno = EINVAL;
        return -1;
    }
    if ((msg->flags & FLUX_MSGFLAG_ROUTE))
        n += msg->route_count + 1;
    if ((msg->flags & FLUX_MSGFLAG_TOPIC))
        n++;
    if ((msg->flags & FLUX_MSGFLAG_PAYLOAD))
        n++;
    return n;
}

int flux_msg_to_parts (const flux_msg_t *msg,
                       uint8_t proto[FLUX_MSG_PROTO_SIZE],
                       struct flux_msg_part *parts, int *count)
{
    int n = flux_msg_part_count (msg);
    int i = 0;

    if (n < 0 || !proto || !parts || !count || *count < n) {
        errno = EINVAL;
        return -1;
    }
    /* Empty parts get a non-NULL pointer so callers may memcpy freely. */
    if ((msg->flags & FLUX_MSGFLAG_ROUTE)) {
        for (int r = msg->route_count - 1; r >= 0; r--) {
            parts[i].data = msg->pool + msg->routes[r].off;
            parts[i++].size = msg->routes[r].len;
        }
        parts[i].data = proto;
        parts[i++].size = 0;
    }
    if ((msg->flags & FLUX_MSGFLAG_TOPIC)) {
        parts[i].data = msg->topic;
        parts[i++].size = msg->topic_len;
    }
    if ((msg->flags & FLUX_MSGFLAG_PAYLOAD)) {
        parts[i].data = msg->payload ? (const void *)msg->payload : proto;
        parts[i++].size = msg->payload_size;
    }
    proto_encode (msg, proto);
    parts[i].data = proto;
    parts[i++].size = FLUX_MSG_PROTO_SIZE;
    *count = i;
    return 0;
}

/* Validate parts against the PROTO part and build the message.
 * parts[i].data may be NULL only if parts[i].size is 0.
 */
static flux_msg_t *decode_parts (const struct flux_msg_part *parts, int count)
{
    const struct flux_msg_part *topic = NULL;
    const struct flux_msg_part *payload = NULL;
    const uint8_t *p;
    int type, flags, i, nroutes = 0;
    size_t pool = 0;
    flux_msg_t *msg;

    if (count < 1 || count > MSG_MAX_PARTS
        || parts[count - 1].size != FLUX_MSG_PROTO_SIZE)
        goto eproto;
    p = parts[count - 1].data;
    type = p[2];
    flags = p[3];
    if (p[0] != FLUX_MSG_PROTO_MAGIC || p[1] != FLUX_MSG_PROTO_VERSION
        || !msg__type_valid (type) || !msg__flags_valid (type, flags))
        goto eproto;
    i = count - 1;
    if ((flags & FLUX_MSGFLAG_PAYLOAD)) {
        if (i < 1)
            goto eproto;
        payload = &parts[--i];
    }
    if ((flags & FLUX_MSGFLAG_TOPIC)) {
        if (i < 1)
            goto eproto;
        topic = &parts[--i];
        if (topic->size > 0 && memchr (topic->data, '\0', topic->size))
            goto eproto;
    }
    if ((flags & FLUX_MSGFLAG_ROUTE)) {
        if (i < 1 || parts[--i].size != 0)
            goto eproto;
        nroutes = i;
        if (nroutes > FLUX_MSG_MAX_ROUTES)
            goto eproto;
        for (int r = 0; r < nroutes; r++) {
            if (parts[r].size == 0 || parts[r].size > MSG_ROUTE_ID_MAX
                || memchr (parts[r].data, '\0', parts[r].size))
                goto eproto;
            pool += parts[r].size + 1;
        }
    }
    else if (i != 0)
        goto eproto; /* parts not claimed by any flag */

    if (!(msg = msg__alloc (type, payload ? payload->size : 0)))
        return NULL;
    msg->userid = get_u32 (p + 4);
    msg->rolemask = get_u32 (p + 8);
    msg->aux1 = get_u32 (p + 12);
    msg->aux2 = get_u32 (p + 16);
    if (msg__routes_reserve (msg, nroutes, pool) < 0)
        goto error;
    for (int r = nroutes - 1; r >= 0; r--) { /* wire: newest first */
        if (msg__route_append (msg, parts[r].data, parts[r].size) < 0)
            goto error;
    }
    if (topic && msg__topic_set (msg, topic->data, topic->size) < 0)
        goto error;
    if (payload && payload->size > 0) {
        memcpy (msg->tail, payload->data, payload->size);
        msg->payload = msg->tail;
        msg->payload_size = payload->size;
    }
    msg->flags = flags;
    return msg;
eproto:
    errno = EPROTO;
    return NULL;
error:
    flux_msg_destroy (msg);
    return NULL;
}

flux_msg_t *flux_msg_from_parts (const struct flux_msg_part *parts, int count)
{
    if (count < 0 || (count > 0 && !parts)) {
        errno = EINVAL;
        return NULL;
    }
    for (int i = 0; i < count; i++) {
        if (!parts[i].data && parts[i].size > 0) {
            errno = EINVAL;
            return NULL;
        }
    }
    return decode_parts (parts, count);
}

/* Local connector framing */

static inline size_t part_wire_size (size_t n)
{
    return (n <= SHORT_SIZE_MAX ? 1 : 5) + n;
}

static int body_size (const flux_msg_t *msg, size_t *sizep)
{
    size_t size = part_wire_size (FLUX_MSG_PROTO_SIZE);

    if (!msg) {
        errno = EINVAL;
        return -1;
    }
    if ((msg->flags & FLUX_MSGFLAG_ROUTE)) {
        size += part_wire_size (0);
        for (int r = 0; r < msg->route_count; r++)
            size += part_wire_size (msg->routes[r].len);
    }
    /* Each term is bounded before adding so the sum cannot wrap. */
    if (msg->topic_len > FLUX_MSG_FRAME_MAX
        || msg->payload_size > FLUX_MSG_FRAME_MAX)
        goto toobig;
    if ((msg->flags & FLUX_MSGFLAG_TOPIC))
        size += part_wire_size (msg->topic_len);
    if ((msg->flags & FLUX_MSGFLAG_PAYLOAD))
        size += part_wire_size (msg->payload_size);
    if (size > FLUX_MSG_FRAME_MAX)
        goto toobig;
    *sizep = size;
    return 0;
toobig:
    errno = EMSGSIZE;
    return -1;
}

ssize_t flux_msg_frame_size (const flux_msg_t *msg)
{
    size_t size;

    if (body_size (msg, &size) < 0)
        return -1;
    return FLUX_MSG_FRAME_PREFIX + size;
}

static uint8_t *put_part (uint8_t *p, const void *data, size_t n)
{
    if (n <= SHORT_SIZE_MAX)
        *p++ = n;
    else {
        *p++ = LONG_SIZE_MARK;
        put_u32 (p, n);
        p += 4;
    }
    if (n > 0)
        memcpy (p, data, n);
    return p + n;
}

ssize_t flux_msg_frame_encode (const flux_msg_t *msg, void *buf, size_t size)
{
    const uint32_t magic = FLUX_MSG_FRAME_MAGIC;
    uint8_t *p = buf;
    size_t body;

    if (!msg || !buf) {
        errno = EINVAL;
        return -1;
    }
    if (body_size (msg, &body) < 0)
        return -1;
    if (size < FLUX_MSG_FRAME_PREFIX + body) {
        errno = EINVAL;
        return -1;
    }
    memcpy (p, &magic, 4); /* host byte order, as flux-core */
    put_u32 (p + 4, body);
    p += FLUX_MSG_FRAME_PREFIX;
    if ((msg->flags & FLUX_MSGFLAG_ROUTE)) {
        for (int r = msg->route_count - 1; r >= 0; r--)
            p = put_part (p, msg->pool + msg->routes[r].off,
                          msg->routes[r].len);
        p = put_part (p, NULL, 0);
    }
    if ((msg->flags & FLUX_MSGFLAG_TOPIC))
        p = put_part (p, msg->topic, msg->topic_len);
    if ((msg->flags & FLUX_MSGFLAG_PAYLOAD))
        p = put_part (p, msg->payload, msg->payload_size);
    *p++ = FLUX_MSG_PROTO_SIZE;
    proto_encode (msg, p);
    p += FLUX_MSG_PROTO_SIZE;
    return p - (uint8_t *)buf;
}

/* Split len bytes of size-prefixed parts into parts[] (pointing into p).
 * Returns the part count or -1 with EPROTO.
 */
static int split_parts (const uint8_t *p, size_t len,
                        struct flux_msg_part *parts)
{
    const uint8_t *end = p + len;
    int count = 0;

    while (p < end) {
        size_t n = *p++;
        if (n == LONG_SIZE_MARK) {
            if (end - p < 4)
                goto eproto;
            n = get_u32 (p);
            p += 4;
            if (n <= SHORT_SIZE_MAX) /* RFC 3: short parts SHALL be short */
                goto eproto;
        }
        if (n > (size_t)(end - p) || count == MSG_MAX_PARTS)
            goto eproto;
        parts[count].data = p;
        parts[count++].size = n;
        p += n;
    }
    return count;
eproto:
    errno = EPROTO;
    return -1;
}

ssize_t flux_msg_frame_decode (const void *buf, size_t size, flux_msg_t **msgp,
                               size_t *need)
{
    const uint32_t magic = FLUX_MSG_FRAME_MAGIC;
    struct flux_msg_part parts[MSG_MAX_PARTS];
    const uint8_t *p = buf;
    flux_msg_t *msg;
    uint32_t len;
    int count;

    if (!msgp || (!buf && size > 0)) {
        errno = EINVAL;
        return -1;
    }
    /* Refuse a wrong magic as soon as its first byte is in. */
    if (size > 0 && memcmp (p, &magic, size < 4 ? size : 4) != 0)
        goto eproto;
    if (size < FLUX_MSG_FRAME_PREFIX) {
        if (need)
            *need = FLUX_MSG_FRAME_PREFIX;
        return 0;
    }
    len = get_u32 (p + 4);
    if (len > FLUX_MSG_FRAME_MAX || len < 1 + FLUX_MSG_PROTO_SIZE)
        goto eproto;
    if (size - FLUX_MSG_FRAME_PREFIX < len) {
        if (need)
            *need = FLUX_MSG_FRAME_PREFIX + (size_t)len;
        return 0;
    }
    if ((count = split_parts (p + FLUX_MSG_FRAME_PREFIX, len, parts)) < 0)
        return -1;
    if (!(msg = decode_parts (parts, count)))
        return -1;
    *msgp = msg;
    return FLUX_MSG_FRAME_PREFIX + (ssize_t)len;
eproto:
    errno = EPROTO;
    return -1;
}
