/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */

/* The Flux message object (RFC 3): creation, reference counting and
 * copy, the PROTO header fields (type, flags, credentials, the
 * type-dependent words), the topic and a debug dump.  The payload is in
 * message_payload.c, the route stack in message_route.c, the wire forms
 * in message_codec.c; the layout and its invariants in message_private.h.
 */

#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "message.h"
#include "message_private.h"

#define STRUCTURAL_FLAGS \
    (FLUX_MSGFLAG_TOPIC | FLUX_MSGFLAG_PAYLOAD | FLUX_MSGFLAG_ROUTE)

static void setup_type (flux_msg_t *msg, int type)
{
    msg->type = type;
    switch (type) {
        case FLUX_MSGTYPE_REQUEST:
            msg->aux1 = FLUX_NODEID_ANY;
            msg->aux2 = FLUX_MATCHTAG_NONE;
            break;
        case FLUX_MSGTYPE_RESPONSE:
            msg->aux1 = 0; /* errnum; the matchtag stays */
            break;
        default:
            msg->aux1 = 0;
            msg->aux2 = 0;
            break;
    }
}

flux_msg_t *msg__alloc (int type, size_t extra)
{
    flux_msg_t *msg;

    if (extra > SIZE_MAX - sizeof (*msg)) {
        errno = ENOMEM;
        return NULL;
    }
    if (!(msg = malloc (sizeof (*msg) + extra)))
        return NULL;
    msg->refcount = 1;
    msg->flags = 0;
    msg->payload_heap = false;
    msg->userid = FLUX_USERID_UNKNOWN;
    msg->rolemask = FLUX_ROLE_NONE;
    msg->aux2 = 0;
    setup_type (msg, type);
    msg->topic = msg->topic_inline;
    msg->topic_inline[0] = '\0';
    msg->topic_len = 0;
    msg->payload = NULL;
    msg->payload_size = 0;
    msg->json = NULL;
    msg->errtext = NULL;
    msg->routes = msg->routes_inline;
    msg->pool = msg->pool_inline;
    msg->route_count = 0;
    msg->route_cap = MSG_ROUTES_INLINE;
    msg->pool_len = 0;
    msg->pool_cap = MSG_POOL_INLINE;
    return msg;
}

flux_msg_t *flux_msg_create (int type)
{
    if (!msg__type_valid (type)) {
        errno = EINVAL;
        return NULL;
    }
    return msg__alloc (type, 0);
}

static void msg_free (flux_msg_t *msg)
{
    if (msg->topic != msg->topic_inline)
        free (msg->topic);
    if (msg->payload_heap)
        free (msg->payload);
    json_decref (msg->json);
    free (msg->errtext);
    if (msg->routes != msg->routes_inline)
        free (msg->routes);
    if (msg->pool != msg->pool_inline)
        free (msg->pool);
    free (msg);
}

void flux_msg_decref (const flux_msg_t *const_msg)
{
    flux_msg_t *msg = (flux_msg_t *)const_msg;

    if (msg) {
        int saved_errno = errno;
        if (__atomic_sub_fetch (&msg->refcount, 1, __ATOMIC_ACQ_REL) == 0)
            msg_free (msg);
        errno = saved_errno;
    }
}

void flux_msg_destroy (flux_msg_t *msg)
{
    flux_msg_decref (msg);
}

const flux_msg_t *flux_msg_incref (const flux_msg_t *const_msg)
{
    flux_msg_t *msg = (flux_msg_t *)const_msg;

    if (!msg) {
        errno = EINVAL;
        return NULL;
    }
    __atomic_add_fetch (&msg->refcount, 1, __ATOMIC_RELAXED);
    return msg;
}

static int copy_routes (flux_msg_t *dst, const flux_msg_t *src)
{
    if (msg__routes_reserve (dst, src->route_count, src->pool_len) < 0)
        return -1;
    memcpy (dst->routes, src->routes, src->route_count * sizeof (*src->routes));
    memcpy (dst->pool, src->pool, src->pool_len);
    dst->route_count = src->route_count;
    dst->pool_len = src->pool_len;
    return 0;
}

flux_msg_t *flux_msg_copy (const flux_msg_t *msg, bool payload)
{
    flux_msg_t *cpy;
    uint8_t flags;

    if (!msg) {
        errno = EINVAL;
        return NULL;
    }
    flags = msg->flags;
    if (!payload)
        flags &= ~FLUX_MSGFLAG_PAYLOAD;
    if (!(cpy = msg__alloc (msg->type, payload ? msg->payload_size : 0)))
        return NULL;
    cpy->userid = msg->userid;
    cpy->rolemask = msg->rolemask;
    cpy->aux1 = msg->aux1;
    cpy->aux2 = msg->aux2;
    if ((flags & FLUX_MSGFLAG_TOPIC)
        && msg__topic_set (cpy, msg->topic, msg->topic_len) < 0)
        goto error;
    if ((flags & FLUX_MSGFLAG_ROUTE) && copy_routes (cpy, msg) < 0)
        goto error;
    if ((flags & FLUX_MSGFLAG_PAYLOAD) && msg->payload_size > 0) {
        memcpy (cpy->tail, msg->payload, msg->payload_size);
        cpy->payload = cpy->tail;
        cpy->payload_size = msg->payload_size;
    }
    cpy->flags = flags;
    return cpy;
error:
    flux_msg_destroy (cpy);
    return NULL;
}

/* Type and flags */

int flux_msg_get_type (const flux_msg_t *msg, int *type)
{
    if (!msg || !type) {
        errno = EINVAL;
        return -1;
    }
    *type = msg->type;
    return 0;
}

int flux_msg_set_type (flux_msg_t *msg, int type)
{
    if (!msg || !msg__type_valid (type)
        || !msg__flags_valid (type, msg->flags)) {
        errno = EINVAL;
        return -1;
    }
    setup_type (msg, type);
    return 0;
}

int flux_msg_get_flags (const flux_msg_t *msg, uint8_t *flags)
{
    if (!msg || !flags) {
        errno = EINVAL;
        return -1;
    }
    *flags = msg->flags;
    return 0;
}

static void topic_clear (flux_msg_t *msg)
{
    if (msg->topic != msg->topic_inline)
        free (msg->topic);
    msg->topic = msg->topic_inline;
    msg->topic_inline[0] = '\0';
    msg->topic_len = 0;
    msg->flags &= ~FLUX_MSGFLAG_TOPIC;
}

int flux_msg_set_flags (flux_msg_t *msg, uint8_t flags)
{
    if (!msg || !msg__flags_valid (msg->type, flags)) {
        errno = EINVAL;
        return -1;
    }
    /* None of these can fail: empty parts need no allocation. */
    if (!(flags & FLUX_MSGFLAG_TOPIC))
        topic_clear (msg);
    else if (!(msg->flags & FLUX_MSGFLAG_TOPIC))
        (void)msg__topic_set (msg, "", 0);
    if (!(flags & FLUX_MSGFLAG_PAYLOAD))
        msg__payload_clear (msg);
    else if (!(msg->flags & FLUX_MSGFLAG_PAYLOAD))
        msg__payload_take (msg, NULL, 0);
    if (!(flags & FLUX_MSGFLAG_ROUTE))
        flux_msg_route_clear (msg);
    msg->flags = flags;
    return 0;
}

bool flux_msg_has_flag (const flux_msg_t *msg, int flag)
{
    if (!msg || flag <= 0 || flag > 0xff)
        return false;
    return (msg->flags & flag) == flag;
}

static bool single_flag (int flag)
{
    return flag > 0 && flag <= 0x80 && (flag & (flag - 1)) == 0;
}

int flux_msg_set_flag (flux_msg_t *msg, int flag)
{
    if (!msg || !single_flag (flag)) {
        errno = EINVAL;
        return -1;
    }
    return flux_msg_set_flags (msg, msg->flags | flag);
}

int flux_msg_clear_flag (flux_msg_t *msg, int flag)
{
    if (!msg || !single_flag (flag)) {
        errno = EINVAL;
        return -1;
    }
    return flux_msg_set_flags (msg, msg->flags & ~flag);
}

static int check_type (const flux_msg_t *msg, int types)
{
    if (!msg || !(msg->type & types)) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

int flux_msg_set_private (flux_msg_t *msg)
{
    if (check_type (msg, FLUX_MSGTYPE_EVENT) < 0)
        return -1;
    msg->flags |= FLUX_MSGFLAG_PRIVATE;
    return 0;
}

bool flux_msg_is_private (const flux_msg_t *msg)
{
    return msg && (msg->flags & FLUX_MSGFLAG_PRIVATE);
}

int flux_msg_set_streaming (flux_msg_t *msg)
{
    if (check_type (msg, FLUX_MSGTYPE_REQUEST | FLUX_MSGTYPE_RESPONSE) < 0)
        return -1;
    msg->flags &= ~FLUX_MSGFLAG_NORESPONSE;
    msg->flags |= FLUX_MSGFLAG_STREAMING;
    return 0;
}

bool flux_msg_is_streaming (const flux_msg_t *msg)
{
    return msg && (msg->flags & FLUX_MSGFLAG_STREAMING);
}

int flux_msg_set_noresponse (flux_msg_t *msg)
{
    if (check_type (msg, FLUX_MSGTYPE_REQUEST) < 0)
        return -1;
    msg->flags &= ~FLUX_MSGFLAG_STREAMING;
    msg->flags |= FLUX_MSGFLAG_NORESPONSE;
    return 0;
}

bool flux_msg_is_noresponse (const flux_msg_t *msg)
{
    return msg && (msg->flags & FLUX_MSGFLAG_NORESPONSE);
}

/* Topic */

int msg__topic_set (flux_msg_t *msg, const char *s, size_t len)
{
    char *dst = msg->topic_inline;

    if (len >= MSG_TOPIC_INLINE) {
        if (!(dst = malloc (len + 1)))
            return -1;
    }
    if (len > 0)
        memmove (dst, s, len); /* s may be the current topic */
    dst[len] = '\0';
    if (msg->topic != msg->topic_inline && msg->topic != dst)
        free (msg->topic);
    msg->topic = dst;
    msg->topic_len = len;
    msg->flags |= FLUX_MSGFLAG_TOPIC;
    return 0;
}

int flux_msg_set_topic (flux_msg_t *msg, const char *topic)
{
    if (!msg || msg->type == FLUX_MSGTYPE_CONTROL) {
        errno = EINVAL;
        return -1;
    }
    if (!topic) {
        topic_clear (msg);
        return 0;
    }
    return msg__topic_set (msg, topic, strlen (topic));
}

int flux_msg_get_topic (const flux_msg_t *msg, const char **topic)
{
    if (!msg || !topic) {
        errno = EINVAL;
        return -1;
    }
    if (!(msg->flags & FLUX_MSGFLAG_TOPIC)) {
        errno = EPROTO;
        return -1;
    }
    *topic = msg->topic;
    return 0;
}

/* Credentials */

int flux_msg_set_userid (flux_msg_t *msg, uint32_t userid)
{
    if (!msg) {
        errno = EINVAL;
        return -1;
    }
    msg->userid = userid;
    return 0;
}

int flux_msg_get_userid (const flux_msg_t *msg, uint32_t *userid)
{
    if (!msg || !userid) {
        errno = EINVAL;
        return -1;
    }
    *userid = msg->userid;
    return 0;
}

int flux_msg_set_rolemask (flux_msg_t *msg, uint32_t rolemask)
{
    if (!msg) {
        errno = EINVAL;
        return -1;
    }
    msg->rolemask = rolemask;
    return 0;
}

int flux_msg_get_rolemask (const flux_msg_t *msg, uint32_t *rolemask)
{
    if (!msg || !rolemask) {
        errno = EINVAL;
        return -1;
    }
    *rolemask = msg->rolemask;
    return 0;
}

int flux_msg_set_cred (flux_msg_t *msg, struct flux_msg_cred cred)
{
    if (!msg) {
        errno = EINVAL;
        return -1;
    }
    msg->userid = cred.userid;
    msg->rolemask = cred.rolemask;
    return 0;
}

int flux_msg_get_cred (const flux_msg_t *msg, struct flux_msg_cred *cred)
{
    if (!msg || !cred) {
        errno = EINVAL;
        return -1;
    }
    cred->userid = msg->userid;
    cred->rolemask = msg->rolemask;
    return 0;
}

int flux_msg_cred_authorize (struct flux_msg_cred cred, uint32_t userid)
{
    if ((cred.rolemask & FLUX_ROLE_OWNER))
        return 0;
    if ((cred.rolemask & FLUX_ROLE_USER) && cred.userid != FLUX_USERID_UNKNOWN
        && cred.userid == userid)
        return 0;
    errno = EPERM;
    return -1;
}

int flux_msg_authorize (const flux_msg_t *msg, uint32_t userid)
{
    struct flux_msg_cred cred;

    if (flux_msg_get_cred (msg, &cred) < 0)
        return -1;
    return flux_msg_cred_authorize (cred, userid);
}

/* Type-dependent header fields */

static int set_aux (flux_msg_t *msg, int types, uint32_t *field, uint32_t v)
{
    if (check_type (msg, types) < 0)
        return -1;
    *field = v;
    return 0;
}

static int get_aux (const flux_msg_t *msg, int types, const uint32_t *field,
                    uint32_t *v)
{
    if (check_type (msg, types) < 0 || !v) {
        errno = EINVAL;
        return -1;
    }
    *v = *field;
    return 0;
}

int flux_msg_set_nodeid (flux_msg_t *msg, uint32_t nodeid)
{
    if (nodeid == FLUX_NODEID_UPSTREAM) {
        errno = EINVAL;
        return -1;
    }
    return set_aux (msg, FLUX_MSGTYPE_REQUEST, msg ? &msg->aux1 : NULL, nodeid);
}

int flux_msg_get_nodeid (const flux_msg_t *msg, uint32_t *nodeid)
{
    return get_aux (msg, FLUX_MSGTYPE_REQUEST, msg ? &msg->aux1 : NULL, nodeid);
}

int flux_msg_set_matchtag (flux_msg_t *msg, uint32_t matchtag)
{
    return set_aux (msg, FLUX_MSGTYPE_REQUEST | FLUX_MSGTYPE_RESPONSE,
                    msg ? &msg->aux2 : NULL, matchtag);
}

int flux_msg_get_matchtag (const flux_msg_t *msg, uint32_t *matchtag)
{
    return get_aux (msg, FLUX_MSGTYPE_REQUEST | FLUX_MSGTYPE_RESPONSE,
                    msg ? &msg->aux2 : NULL, matchtag);
}

int flux_msg_set_errnum (flux_msg_t *msg, int errnum)
{
    return set_aux (msg, FLUX_MSGTYPE_RESPONSE, msg ? &msg->aux1 : NULL,
                    (uint32_t)errnum);
}

int flux_msg_get_errnum (const flux_msg_t *msg, int *errnum)
{
    uint32_t v;

    if (!errnum
        || get_aux (msg, FLUX_MSGTYPE_RESPONSE, msg ? &msg->aux1 : NULL, &v)
               < 0) {
        errno = EINVAL;
        return -1;
    }
    *errnum = (int)v;
    return 0;
}

int flux_msg_set_seq (flux_msg_t *msg, uint32_t seq)
{
    return set_aux (msg, FLUX_MSGTYPE_EVENT, msg ? &msg->aux1 : NULL, seq);
}

int flux_msg_get_seq (const flux_msg_t *msg, uint32_t *seq)
{
    return get_aux (msg, FLUX_MSGTYPE_EVENT, msg ? &msg->aux1 : NULL, seq);
}

int flux_msg_set_control (flux_msg_t *msg, int type, int status)
{
    if (check_type (msg, FLUX_MSGTYPE_CONTROL) < 0)
        return -1;
    msg->aux1 = (uint32_t)type;
    msg->aux2 = (uint32_t)status;
    return 0;
}

int flux_msg_get_control (const flux_msg_t *msg, int *type, int *status)
{
    if (check_type (msg, FLUX_MSGTYPE_CONTROL) < 0 || !type || !status) {
        errno = EINVAL;
        return -1;
    }
    *type = (int)msg->aux1;
    *status = (int)msg->aux2;
    return 0;
}
/* Debug dump */

const char *flux_msg_typestr (int type)
{
    switch (type) {
        case FLUX_MSGTYPE_REQUEST:
            return "request";
        case FLUX_MSGTYPE_RESPONSE:
            return "response";
        case FLUX_MSGTYPE_EVENT:
            return "event";
        case FLUX_MSGTYPE_CONTROL:
            return "control";
    }
    return "unknown";
}

static void print_bits (FILE *f, uint32_t bits, const char *const names[],
                        int count)
{
    const char *sep = " ";

    for (int i = 0; i < count; i++) {
        if ((bits & (1u << i))) {
            fprintf (f, "%s%s", sep, names[i]);
            sep = ",";
        }
    }
}

static void describe_header (FILE *f, const flux_msg_t *msg)
{
    static const char *const flagnames[] = {
        "topic",    "payload", "noresponse", "route",
        "upstream", "private", "streaming",  "user1",
    };
    static const char *const rolenames[] = {"owner", "user", "local", "admin"};

    fprintf (f, "type: %s\n", flux_msg_typestr (msg->type));
    fprintf (f, "flags: 0x%02x", msg->flags);
    print_bits (f, msg->flags, flagnames, 8);
    if (msg->userid == FLUX_USERID_UNKNOWN)
        fprintf (f, "\nuserid: unknown\n");
    else
        fprintf (f, "\nuserid: %u\n", (unsigned)msg->userid);
    fprintf (f, "rolemask: 0x%x", (unsigned)msg->rolemask);
    if (msg->rolemask == FLUX_ROLE_ALL)
        fprintf (f, " all");
    else
        print_bits (f, msg->rolemask & 0xf, rolenames, 4);
    fprintf (f, "\n");
}

static void describe_aux (FILE *f, const flux_msg_t *msg)
{
    switch (msg->type) {
        case FLUX_MSGTYPE_REQUEST:
            if (msg->aux1 == FLUX_NODEID_ANY)
                fprintf (f, "nodeid: any\n");
            else
                fprintf (f, "nodeid: %u\n", (unsigned)msg->aux1);
            fprintf (f, "matchtag: %u\n", (unsigned)msg->aux2);
            break;
        case FLUX_MSGTYPE_RESPONSE:
            fprintf (f, "errnum: %d\n", (int)msg->aux1);
            fprintf (f, "matchtag: %u\n", (unsigned)msg->aux2);
            break;
        case FLUX_MSGTYPE_EVENT:
            fprintf (f, "seq: %u\n", (unsigned)msg->aux1);
            if (msg->aux2 != 0)
                fprintf (f, "unused: 0x%x\n", (unsigned)msg->aux2);
            break;
        case FLUX_MSGTYPE_CONTROL:
            fprintf (f, "control-type: %d\n", (int)msg->aux1);
            fprintf (f, "control-status: %d\n", (int)msg->aux2);
            break;
    }
}

static void describe_parts (FILE *f, const flux_msg_t *msg)
{
    const size_t max = 80;
    size_t n = msg->payload_size < max ? msg->payload_size : max;

    if ((msg->flags & FLUX_MSGFLAG_ROUTE)) {
        fprintf (f, "routes: %d\n", msg->route_count);
        for (int i = msg->route_count - 1; i >= 0; i--)
            fprintf (f, "  [%d] %s%s\n", i, msg->pool + msg->routes[i].off,
                     i == 0 ? " (sender)" : "");
    }
    if ((msg->flags & FLUX_MSGFLAG_TOPIC))
        fprintf (f, "topic: %s\n", msg->topic);
    if (!(msg->flags & FLUX_MSGFLAG_PAYLOAD))
        return;
    fprintf (f, "payload: %zu bytes \"", msg->payload_size);
    for (size_t i = 0; i < n; i++) {
        int c = msg->payload[i];
        if (c == '\0')
            fputs ("\\0", f);
        else if (c == '"' || c == '\\')
            fprintf (f, "\\%c", c);
        else if (isprint (c))
            fputc (c, f);
        else
            fprintf (f, "\\x%02x", c);
    }
    fprintf (f, "\"%s\n", n < msg->payload_size ? "..." : "");
}

char *flux_msg_describe (const flux_msg_t *msg)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f;

    if (!msg) {
        errno = EINVAL;
        return NULL;
    }
    if (!(f = open_memstream (&buf, &size)))
        return NULL;
    describe_header (f, msg);
    describe_aux (f, msg);
    describe_parts (f, msg);
    if (ferror (f)) {
        fclose (f);
        free (buf);
        errno = ENOMEM;
        return NULL;
    }
    if (fclose (f) != 0) {
        free (buf);
        errno = ENOMEM;
        return NULL;
    }
    return buf;
}
