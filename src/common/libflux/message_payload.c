/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */

/* Message payload: raw bytes, NUL-terminated strings and JSON objects.
 * unpack parses once and caches the object in the message; the cache and
 * the error text are installed with compare-and-swap because unpack works
 * on a const (possibly shared) message.
 */

#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "jsonemit.h"
#include "jsonparse.h"
#include "message.h"
#include "message_private.h"

static void json_cache_clear (flux_msg_t *msg)
{
    if (msg->json) {
        json_decref (msg->json);
        msg->json = NULL;
    }
}

void msg__payload_clear (flux_msg_t *msg)
{
    if (msg->payload_heap)
        free (msg->payload);
    msg->payload = NULL;
    msg->payload_size = 0;
    msg->payload_heap = false;
    msg->flags &= ~FLUX_MSGFLAG_PAYLOAD;
    json_cache_clear (msg);
}

void msg__payload_take (flux_msg_t *msg, void *buf, size_t size)
{
    msg__payload_clear (msg);
    msg->payload = buf;
    msg->payload_size = size;
    msg->payload_heap = buf != NULL;
    msg->flags |= FLUX_MSGFLAG_PAYLOAD;
}

int flux_msg_set_payload (flux_msg_t *msg, const void *buf, size_t size)
{
    void *copy = NULL;

    if (!msg || msg->type == FLUX_MSGTYPE_CONTROL || (!buf && size > 0)) {
        errno = EINVAL;
        return -1;
    }
    if (!buf) {
        msg__payload_clear (msg);
        return 0;
    }
    if (size > 0) {
        if (!(copy = malloc (size)))
            return -1;
        memcpy (copy, buf, size); /* buf may alias the old payload */
    }
    msg__payload_take (msg, copy, size);
    return 0;
}

int flux_msg_get_payload (const flux_msg_t *msg, const void **buf, size_t *size)
{
    if (!msg) {
        errno = EINVAL;
        return -1;
    }
    if (!(msg->flags & FLUX_MSGFLAG_PAYLOAD)) {
        errno = EPROTO;
        return -1;
    }
    if (buf)
        *buf = msg->payload;
    if (size)
        *size = msg->payload_size;
    return 0;
}

bool flux_msg_has_payload (const flux_msg_t *msg)
{
    return msg && (msg->flags & FLUX_MSGFLAG_PAYLOAD);
}

int flux_msg_set_string (flux_msg_t *msg, const char *s)
{
    return flux_msg_set_payload (msg, s, s ? strlen (s) + 1 : 0);
}

int flux_msg_get_string (const flux_msg_t *msg, const char **s)
{
    if (!msg || !s) {
        errno = EINVAL;
        return -1;
    }
    if (!(msg->flags & FLUX_MSGFLAG_PAYLOAD)) {
        *s = NULL;
        return 0;
    }
    if (msg->payload_size == 0 || msg->payload[msg->payload_size - 1] != '\0'
        || memchr (msg->payload, '\0', msg->payload_size - 1)) {
        errno = EPROTO;
        return -1;
    }
    *s = (const char *)msg->payload;
    return 0;
}

/* JSON payload.  The cache and the error buffer are set through a const
 * message, so both are installed with compare-and-swap: concurrent
 * readers of a shared message never leak or free each other's objects.
 */

static void set_error (const flux_msg_t *const_msg, const char *text)
{
    flux_msg_t *msg = (flux_msg_t *)const_msg;
    char *buf = __atomic_load_n (&msg->errtext, __ATOMIC_ACQUIRE);

    if (!buf) {
        char *expected = NULL;
        if (!(buf = malloc (MSG_ERRTEXT_SIZE)))
            return; /* the text is best effort */
        if (!__atomic_compare_exchange_n (&msg->errtext, &expected, buf, false,
                                          __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            free (buf);
            buf = expected;
        }
    }
    snprintf (buf, MSG_ERRTEXT_SIZE, "%s", text);
}

const char *flux_msg_last_error (const flux_msg_t *msg)
{
    const char *text;

    if (!msg)
        return "";
    text = __atomic_load_n (&msg->errtext, __ATOMIC_ACQUIRE);
    return text ? text : "";
}

static json_t *json_parse (const flux_msg_t *msg)
{
    char err[160];
    json_t *o;
    size_t n = msg->payload_size;

    if (!(msg->flags & FLUX_MSGFLAG_PAYLOAD)) {
        set_error (msg, "message has no payload");
        goto error;
    }
    if (n == 0 || msg->payload[n - 1] != '\0') {
        set_error (msg, "payload is not NUL-terminated");
        goto error;
    }
    /* jsonparse.h: what json_loadb accepts, 5-10x faster */
    if (!(o
          = jsonparse ((const char *)msg->payload, n - 1, err, sizeof (err)))) {
        set_error (msg, err);
        goto error;
    }
    if (!json_is_object (o)) {
        json_decref (o);
        set_error (msg, "payload is not a JSON object");
        goto error;
    }
    return o;
error:
    errno = EPROTO;
    return NULL;
}

static json_t *json_cached (const flux_msg_t *const_msg)
{
    flux_msg_t *msg = (flux_msg_t *)const_msg;
    json_t *o = __atomic_load_n (&msg->json, __ATOMIC_ACQUIRE);
    json_t *expected = NULL;

    if (o)
        return o;
    if (!(o = json_parse (msg)))
        return NULL;
    if (!__atomic_compare_exchange_n (&msg->json, &expected, o, false,
                                      __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        json_decref (o);
        o = expected;
    }
    return o;
}

int flux_msg_vunpack (const flux_msg_t *msg, const char *fmt, va_list ap)
{
    json_error_t err;
    json_t *o;

    if (!msg || !fmt) {
        errno = EINVAL;
        return -1;
    }
    if (!(o = json_cached (msg)))
        return -1;
    if (json_vunpack_ex (o, &err, 0, fmt, ap) < 0) {
        set_error (msg, err.text);
        errno = EPROTO;
        return -1;
    }
    return 0;
}

int flux_msg_unpack (const flux_msg_t *msg, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start (ap, fmt);
    rc = flux_msg_vunpack (msg, fmt, ap);
    va_end (ap);
    return rc;
}

int flux_msg_vpack (flux_msg_t *msg, const char *fmt, va_list ap)
{
    json_error_t err;
    json_t *o;
    char *text;
    size_t len;

    if (!msg || !fmt || msg->type == FLUX_MSGTYPE_CONTROL) {
        errno = EINVAL;
        return -1;
    }
    if (!(o = json_vpack_ex (&err, 0, fmt, ap))) {
        set_error (msg, err.text);
        errno = EINVAL;
        return -1;
    }
    if (!json_is_object (o)) {
        json_decref (o);
        set_error (msg, "payload is not a JSON object");
        errno = EINVAL;
        return -1;
    }
    /* jsonemit.h: what json_dumps writes, faster; one malloc'd block
     * with its NUL, which the message takes over */
    if (!(text = jsonemit (o, JSON_COMPACT, &len))) {
        json_decref (o);
        set_error (msg, "JSON encoding failed");
        errno = ENOMEM;
        return -1;
    }
    json_decref (o);
    msg__payload_take (msg, text, len + 1);
    return 0;
}

int flux_msg_pack (flux_msg_t *msg, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start (ap, fmt);
    rc = flux_msg_vpack (msg, fmt, ap);
    va_end (ap);
    return rc;
}
