/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_MESSAGE_H
#define FLUX_MESSAGE_H

/* Flux messages (RFC 3).
 *
 * A message has a type (request, response, event, control), a fixed
 * 20-byte PROTO header (flags, userid, rolemask, and two type-dependent
 * 32-bit fields), and optional parts: a route stack, a topic string and a
 * payload.  Messages are reference counted: flux_msg_incref() takes a
 * reference, flux_msg_decref()/flux_msg_destroy() drops one.
 *
 * Two wire forms are supported:
 *  - the multipart form (one part per ZeroMQ frame), see flux_msg_to_parts()
 *    and flux_msg_from_parts();
 *  - the framed byte stream of the local connector (unix socket), as
 *    deployed Flux speaks it (PROTOCOLS.md section 1.1): an 8-byte prefix
 *    of magic 0xFFEE0012 in host byte order and a big-endian u32 length of
 *    the encoded parts (prefix excluded), then each part as a 1-byte size
 *    (0..254) or 0xFF and a big-endian u32 size, then its bytes.
 *
 * Part order on the wire: route ids (newest hop first, the original sender
 * last), an empty delimiter part (present iff FLUX_MSGFLAG_ROUTE), the topic
 * (no NUL on the wire), the payload, and last the PROTO part.  Route ids
 * carry no NUL on the wire either.  String and JSON payloads include their
 * terminating NUL.
 *
 * Decoding is strict: anything malformed fails with EPROTO and never reads
 * outside the given buffer.  It enforces what RFC 3 forbids (see
 * flux_msg_from_parts()) but not what it merely requires of senders (a
 * request without a topic decodes); the event "unused" field is kept as
 * received so that re-encoding reproduces the input.  Every message the
 * setters can build encodes to something the decoders accept, and back.
 *
 * Unless noted, functions return 0 on success or -1 with errno set
 * (EINVAL for bad arguments or a field that does not apply to the message
 * type, EPROTO for malformed content, ENOMEM).  Pointers returned by getters
 * point into the message and stay valid until it is modified or destroyed.
 * A message is not thread-safe, but a message no longer modified may be
 * shared read-only between threads once references are taken properly
 * (the reference count is atomic).
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct flux_msg flux_msg_t;

enum {
    FLUX_MSGTYPE_REQUEST = 0x01,
    FLUX_MSGTYPE_RESPONSE = 0x02,
    FLUX_MSGTYPE_EVENT = 0x04,
    FLUX_MSGTYPE_CONTROL = 0x08,
    FLUX_MSGTYPE_ANY = 0x0f,
};

enum {
    FLUX_MSGFLAG_TOPIC = 0x01,      /* message has a topic part */
    FLUX_MSGFLAG_PAYLOAD = 0x02,    /* message has a payload part */
    FLUX_MSGFLAG_NORESPONSE = 0x04, /* request wants no response */
    FLUX_MSGFLAG_ROUTE = 0x08,      /* message has a route stack+delimiter */
    FLUX_MSGFLAG_UPSTREAM = 0x10,   /* request: route upstream of nodeid */
    FLUX_MSGFLAG_PRIVATE = 0x20,    /* event: only to sender and owner */
    FLUX_MSGFLAG_STREAMING = 0x40,  /* part of a streaming RPC */
    FLUX_MSGFLAG_USER1 = 0x80,
};

/* Roles (RFC 12) */
enum {
    FLUX_ROLE_NONE = 0,
    FLUX_ROLE_OWNER = 1,
    FLUX_ROLE_USER = 2,
    FLUX_ROLE_LOCAL = 4,
    FLUX_ROLE_ADMIN = 8,
    FLUX_ROLE_ALL = 0xFFFFFFFF,
};

#define FLUX_USERID_UNKNOWN 0xFFFFFFFFu
#define FLUX_NODEID_ANY 0xFFFFFFFFu
/* API only: nodeid=self + UPSTREAM flag */
#define FLUX_NODEID_UPSTREAM 0xFFFFFFFEu
#define FLUX_MATCHTAG_NONE 0u

#define FLUX_MSG_PROTO_SIZE 20
#define FLUX_MSG_PROTO_MAGIC 0x8E
#define FLUX_MSG_PROTO_VERSION 0x01
#define FLUX_MSG_FRAME_MAGIC 0xFFEE0012u /* local connector prefix */
#define FLUX_MSG_FRAME_PREFIX 8

struct flux_msg_cred {
    uint32_t userid;
    uint32_t rolemask;
};

/* Create a message of 'type' with no parts, userid UNKNOWN, rolemask NONE,
 * the type-dependent fields zero (nodeid is ANY for requests).
 */
flux_msg_t *flux_msg_create (int type);

/* Drop a reference; frees on the last one.  NULL-safe, preserves errno.
 * flux_msg_destroy() is a synonym for flux_msg_decref().
 */
void flux_msg_destroy (flux_msg_t *msg);
void flux_msg_decref (const flux_msg_t *msg);
const flux_msg_t *flux_msg_incref (const flux_msg_t *msg);

/* Deep copy.  If payload is false, the copy has no payload. */
flux_msg_t *flux_msg_copy (const flux_msg_t *msg, bool payload);

/* Type.  set_type resets the two type-dependent fields to the create()
 * defaults, except that a response keeps the matchtag (so a request copy
 * can become its response).  EINVAL if the message carries parts the new
 * type may not have (routes on an event; routes, topic or payload on a
 * control message).
 */
int flux_msg_get_type (const flux_msg_t *msg, int *type);
int flux_msg_set_type (flux_msg_t *msg, int type);
/* Flags.  The TOPIC, PAYLOAD and ROUTE bits always describe the parts
 * present: set_flags() clearing one drops that part, setting one where
 * the part is absent adds an empty one (topic "", zero-length payload,
 * empty route stack).  set_flags() accepts exactly what the decoders
 * accept: EINVAL for ROUTE on events and control, TOPIC or PAYLOAD on
 * control.  The other bits are stored as given.
 */
int flux_msg_get_flags (const flux_msg_t *msg, uint8_t *flags);
int flux_msg_set_flags (flux_msg_t *msg, uint8_t flags);
/* has_flag: true if all bits of flag (non-zero) are set. */
bool flux_msg_has_flag (const flux_msg_t *msg, int flag);
/* set_flag/clear_flag: flag must be a single FLUX_MSGFLAG_* bit (EINVAL);
 * same rules as set_flags().
 */
int flux_msg_set_flag (flux_msg_t *msg, int flag);
int flux_msg_clear_flag (flux_msg_t *msg, int flag);
/* Semantic helpers, EINVAL on the wrong type: private is for events,
 * streaming for requests and responses, noresponse for requests.
 * STREAMING and NORESPONSE exclude each other: setting one clears the
 * other.  The is_ functions return false for NULL.
 */
int flux_msg_set_private (flux_msg_t *msg);
bool flux_msg_is_private (const flux_msg_t *msg);
int flux_msg_set_streaming (flux_msg_t *msg);
bool flux_msg_is_streaming (const flux_msg_t *msg);
int flux_msg_set_noresponse (flux_msg_t *msg);
bool flux_msg_is_noresponse (const flux_msg_t *msg);

/* Topic.  NULL removes the topic part.  EINVAL on control messages.
 * get_topic: EPROTO if there is no topic.
 */
int flux_msg_set_topic (flux_msg_t *msg, const char *topic);
int flux_msg_get_topic (const flux_msg_t *msg, const char **topic);

/* Payload (copied).  Raw bytes: (NULL, 0) removes the payload part;
 * (NULL, n > 0) is EINVAL; a non-NULL buf with size 0 keeps a zero-length
 * payload part with the PAYLOAD flag (as flux-core does), for which
 * get_payload gives *buf NULL and *size 0.  EINVAL on control messages.
 * get_payload on a message without payload fails with EPROTO; buf and
 * size may be NULL.  Setting the payload drops the cached JSON object.
 */
int flux_msg_set_payload (flux_msg_t *msg, const void *buf, size_t size);
int flux_msg_get_payload (const flux_msg_t *msg, const void **buf,
                          size_t *size);
bool flux_msg_has_payload (const flux_msg_t *msg);

/* String payload, stored with its NUL.  NULL removes the payload.
 * get_string: *s is NULL if there is no payload; EPROTO if the payload
 * is not NUL-terminated or contains an interior NUL.
 */
int flux_msg_set_string (flux_msg_t *msg, const char *s);
int flux_msg_get_string (const flux_msg_t *msg, const char **s);

/* JSON payload (jansson pack/unpack format strings).  pack encodes
 * compactly and stores the NUL.  unpack parses the payload (which must be
 * a NUL-terminated JSON object; EPROTO otherwise) and unpacks with
 * json_unpack_ex; the parsed object is cached in the message, so strings
 * unpacked with "s" stay valid as long as the message is not modified.
 * A failed unpack (missing key, wrong type) is EPROTO; a failed pack
 * (bad format, result not an object) is EINVAL.  unpack may run from
 * several threads on a shared message (the cache is installed
 * atomically), but flux_msg_last_error() then belongs to no one thread.
 */
int flux_msg_pack (flux_msg_t *msg, const char *fmt, ...);
int flux_msg_vpack (flux_msg_t *msg, const char *fmt, va_list ap);
int flux_msg_unpack (const flux_msg_t *msg, const char *fmt, ...);
int flux_msg_vunpack (const flux_msg_t *msg, const char *fmt, va_list ap);
/* Text of the last unpack/pack failure on this message, or "" */
const char *flux_msg_last_error (const flux_msg_t *msg);

/* Credentials */
int flux_msg_set_userid (flux_msg_t *msg, uint32_t userid);
int flux_msg_get_userid (const flux_msg_t *msg, uint32_t *userid);
int flux_msg_set_rolemask (flux_msg_t *msg, uint32_t rolemask);
int flux_msg_get_rolemask (const flux_msg_t *msg, uint32_t *rolemask);
int flux_msg_set_cred (flux_msg_t *msg, struct flux_msg_cred cred);
int flux_msg_get_cred (const flux_msg_t *msg, struct flux_msg_cred *cred);
/* Authorize: 0 if cred has OWNER, or cred has USER and cred.userid ==
 * userid and it is not FLUX_USERID_UNKNOWN (as flux-core); else -1 with
 * EPERM.
 */
int flux_msg_cred_authorize (struct flux_msg_cred cred, uint32_t userid);
int flux_msg_authorize (const flux_msg_t *msg, uint32_t userid);

/* Request fields.  set_nodeid: nodeid may be FLUX_NODEID_ANY or a rank
 * (FLUX_NODEID_UPSTREAM is rejected with EINVAL: the handle translates it).
 */
int flux_msg_set_nodeid (flux_msg_t *msg, uint32_t nodeid);
int flux_msg_get_nodeid (const flux_msg_t *msg, uint32_t *nodeid);
/* Request and response */
int flux_msg_set_matchtag (flux_msg_t *msg, uint32_t matchtag);
int flux_msg_get_matchtag (const flux_msg_t *msg, uint32_t *matchtag);
/* Response */
int flux_msg_set_errnum (flux_msg_t *msg, int errnum);
int flux_msg_get_errnum (const flux_msg_t *msg, int *errnum);
/* Event */
int flux_msg_set_seq (flux_msg_t *msg, uint32_t seq);
int flux_msg_get_seq (const flux_msg_t *msg, uint32_t *seq);
/* Control */
int flux_msg_set_control (flux_msg_t *msg, int type, int status);
int flux_msg_get_control (const flux_msg_t *msg, int *type, int *status);

/* Route stack.
 * enable: set FLUX_MSGFLAG_ROUTE (empty stack); no effect on events and
 * control messages, which RFC 3 forbids to carry routes.  disable: clear
 * the flag and all routes; clear: remove all routes, keep the flag.
 * push: add id on top (newest hop); requires ROUTE flag (EPROTO otherwise);
 * id is a non-empty string without NUL, at most 255 bytes (EINVAL);
 * EOVERFLOW if the stack already holds FLUX_MSG_MAX_ROUTES ids.
 * pop: remove the top (newest) hop; EPROTO if flag not set; popping an
 * empty stack is a no-op success.
 * first: the original sender (bottom of stack), last: the newest hop (top);
 * both NULL if the stack is empty.
 * count: number of hops, -1 with EPROTO if the ROUTE flag is not set.
 * route_string: hops from the original sender to the newest joined by '!',
 * each truncated to 8 characters (the `flux ping` form); "" for an empty
 * stack; NULL with EPROTO if the ROUTE flag is not set; caller frees.
 */
void flux_msg_route_enable (flux_msg_t *msg);
void flux_msg_route_disable (flux_msg_t *msg);
void flux_msg_route_clear (flux_msg_t *msg);
int flux_msg_route_push (flux_msg_t *msg, const char *id);
int flux_msg_route_pop (flux_msg_t *msg);
const char *flux_msg_route_first (const flux_msg_t *msg);
const char *flux_msg_route_last (const flux_msg_t *msg);
int flux_msg_route_count (const flux_msg_t *msg);
char *flux_msg_route_string (const flux_msg_t *msg);
/* True if the two messages have the same original sender (route_first),
 * or if neither has one.  False if either is NULL.
 */
bool flux_msg_route_match_first (const flux_msg_t *a, const flux_msg_t *b);

/* Encoding: multipart (ZeroMQ) form.
 * flux_msg_to_parts() fills up to *count entries of parts[] with pointers
 * into msg (valid until msg is modified or destroyed; the PROTO part is
 * written into proto[FLUX_MSG_PROTO_SIZE], supplied by the caller) and sets
 * *count to the number used.  EINVAL if *count is too small;
 * flux_msg_part_count() tells how many are needed.
 */
struct flux_msg_part {
    const void *data;
    size_t size;
};
int flux_msg_part_count (const flux_msg_t *msg);
int flux_msg_to_parts (const flux_msg_t *msg,
                       uint8_t proto[FLUX_MSG_PROTO_SIZE],
                       struct flux_msg_part *parts, int *count);
/* Decode from parts (copied).  EPROTO on anything malformed: missing or
 * short PROTO part, bad magic/version/type (exactly one type bit), flags
 * that do not match the parts present (TOPIC, PAYLOAD and ROUTE each name
 * one part), a non-empty delimiter, extra parts, routes on an event or a
 * control message, topic or payload on a control message, topic
 * containing NUL, a route id that is empty, contains NUL or exceeds 255
 * bytes, more routes than FLUX_MSG_MAX_ROUTES.  EINVAL if count < 0 or a
 * part has NULL data and a non-zero size.
 */
#define FLUX_MSG_MAX_ROUTES 64
flux_msg_t *flux_msg_from_parts (const struct flux_msg_part *parts, int count);

/* Encoding: local connector framing (PROTOCOLS.md 1.1).
 * flux_msg_frame_size() is the total bytes including the 8-byte prefix.
 * flux_msg_frame_encode() writes exactly that many bytes into buf (size
 * must be >= frame_size, else EINVAL) and returns the count written.
 * Both fail with EMSGSIZE if the encoded parts would exceed
 * FLUX_MSG_FRAME_MAX (the decoder would refuse the frame).
 */
ssize_t flux_msg_frame_size (const flux_msg_t *msg);
ssize_t flux_msg_frame_encode (const flux_msg_t *msg, void *buf, size_t size);
/* Decode one frame from the start of buf.
 * Returns the number of bytes consumed (>0) and sets *msgp, or 0 if buf
 * does not yet hold a whole frame (then *need, if non-NULL, is set to the
 * total bytes required when known, else to FLUX_MSG_FRAME_PREFIX), or -1
 * with errno EPROTO if the bytes can never form a valid frame (bad magic,
 * length over FLUX_MSG_FRAME_MAX or too short for a PROTO part, a part
 * overrunning the length, a long size (0xFF + u32) below 255, or anything
 * flux_msg_from_parts() rejects).  The parts must fill the length exactly.
 * EINVAL if msgp is NULL or buf is NULL with size > 0.  The bytes consumed
 * by a successful decode are FLUX_MSG_FRAME_PREFIX + the length field.
 */
#define FLUX_MSG_FRAME_MAX (1u << 30)
ssize_t flux_msg_frame_decode (const void *buf, size_t size, flux_msg_t **msgp,
                               size_t *need);

/* Human readable one-message dump for debugging (caller frees). */
char *flux_msg_describe (const flux_msg_t *msg);

/* Type name: "request", "response", "event", "control", or "unknown" */
const char *flux_msg_typestr (int type);

#ifdef __cplusplus
}
#endif

#endif /* !FLUX_MESSAGE_H */
