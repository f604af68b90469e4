/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* event.c - event messages, publishing through rank 0, subscriptions, and
 * client service registration. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base64.h"
#include "event.h"
#include "handle_private.h"
#include "msg_decode.h"
#include "rpc.h"

flux_msg_t *flux_event_encode_raw (const char *topic, const void *data,
                                   size_t len)
{
    flux_msg_t *msg;

    if (!topic || !*topic) {
        errno = EINVAL;
        return NULL;
    }
    if (!(msg = flux_msg_create (FLUX_MSGTYPE_EVENT)))
        return NULL;
    if (flux_msg_set_topic (msg, topic) < 0
        || (data && flux_msg_set_payload (msg, data, len) < 0)) {
        flux_msg_destroy (msg);
        return NULL;
    }
    return msg;
}

flux_msg_t *flux_event_encode (const char *topic, const char *s)
{
    return flux_event_encode_raw (topic, s, s ? strlen (s) + 1 : 0);
}

flux_msg_t *flux_event_pack (const char *topic, const char *fmt, ...)
{
    flux_msg_t *msg;
    va_list ap;
    int rc;

    if (!(msg = flux_event_encode_raw (topic, NULL, 0)))
        return NULL;
    va_start (ap, fmt);
    rc = flux_msg_vpack (msg, fmt, ap);
    va_end (ap);
    if (rc < 0) {
        flux_msg_destroy (msg);
        return NULL;
    }
    return msg;
}

int flux_event_decode (const flux_msg_t *msg, const char **topic,
                       const char **s)
{
    if (msg_check_topic (msg, FLUX_MSGTYPE_EVENT, topic) < 0)
        return -1;
    return msg_optional_string (msg, s);
}

int flux_event_decode_raw (const flux_msg_t *msg, const char **topic,
                           const void **data, size_t *len)
{
    if (msg_check_topic (msg, FLUX_MSGTYPE_EVENT, topic) < 0)
        return -1;
    return msg_optional_raw (msg, data, len);
}

int flux_event_unpack (const flux_msg_t *msg, const char **topic,
                       const char *fmt, ...)
{
    va_list ap;
    int rc;

    if (msg_check_topic (msg, FLUX_MSGTYPE_EVENT, topic) < 0)
        return -1;
    va_start (ap, fmt);
    rc = flux_msg_vunpack (msg, fmt, ap);
    va_end (ap);
    return rc;
}

flux_future_t *flux_event_publish_raw (flux_t *h, const char *topic, int flags,
                                       const void *data, size_t len)
{
    flux_future_t *f;
    char *b64 = NULL;

    if (!h || !topic || !*topic || (flags & ~FLUX_MSGFLAG_PRIVATE)
        || (!data && len)) {
        errno = EINVAL;
        return NULL;
    }
    if (data) {
        size_t size = base64_encoded_size (len);
        if (!(b64 = malloc (size)))
            return NULL;
        (void)base64_encode (b64, size, data, len);
        f = flux_rpc_pack (h, "event.publish", 0, 0, "{s:s s:i s:s}", "topic",
                           topic, "flags", flags, "payload", b64);
    }
    else
        f = flux_rpc_pack (h, "event.publish", 0, 0, "{s:s s:i}", "topic",
                           topic, "flags", flags);
    free (b64);
    return f;
}

flux_future_t *flux_event_publish (flux_t *h, const char *topic, int flags,
                                   const char *s)
{
    return flux_event_publish_raw (h, topic, flags, s, s ? strlen (s) + 1 : 0);
}

int flux_service_announce (flux_t *h, const char *name, flux_error_t *error)
{
    char topic[256];
    flux_future_t *f;
    int rc = 0;

    if (snprintf (topic, sizeof (topic), "%s.online", name)
        >= (int)sizeof (topic)) {
        errno = EINVAL;
        return errprintf (error, "publish %s.online: name too long", name);
    }
    if (!(f = flux_event_publish (h, topic, FLUX_MSGFLAG_PRIVATE, NULL))
        || flux_future_get (f, NULL) < 0) {
        int saved_errno = errno;
        rc = errprintf (error, "publish %s: %s", topic,
                        f ? future_strerror (f, errno) : strerror (errno));
        errno = saved_errno;
    }
    flux_future_destroy (f);
    return rc;
}

flux_future_t *flux_event_publish_pack (flux_t *h, const char *topic, int flags,
                                        const char *fmt, ...)
{
    flux_future_t *f;
    json_t *o;
    char *s;
    va_list ap;

    va_start (ap, fmt);
    o = json_vpack_ex (NULL, 0, fmt, ap);
    va_end (ap);
    if (!o) {
        errno = EINVAL;
        return NULL;
    }
    s = json_dumps (o, JSON_COMPACT);
    json_decref (o);
    if (!s) {
        errno = ENOMEM;
        return NULL;
    }
    f = flux_event_publish (h, topic, flags, s);
    free (s);
    return f;
}

int flux_event_publish_get_seq (flux_future_t *f, int *seq)
{
    return flux_rpc_get_unpack (f, "{s:i}", "seq", seq);
}

static int subscription_rpc (flux_t *h, const char *topic_name,
                             const char *topic)
{
    flux_future_t *f;
    int rc;

    if (!(f = flux_rpc_pack (h, topic_name, FLUX_NODEID_ANY, 0, "{s:s}",
                             "topic", topic)))
        return -1;
    rc = flux_future_get (f, NULL);
    flux_future_destroy (f);
    return rc;
}

int flux_event_subscribe (flux_t *h, const char *topic)
{
    if (!h || !topic) {
        errno = EINVAL;
        return -1;
    }
    if (h->ops->event_subscribe)
        return h->ops->event_subscribe (h->impl, topic);
    return subscription_rpc (h, "event.subscribe", topic);
}

int flux_event_unsubscribe (flux_t *h, const char *topic)
{
    if (!h || !topic) {
        errno = EINVAL;
        return -1;
    }
    if (h->ops->event_unsubscribe)
        return h->ops->event_unsubscribe (h->impl, topic);
    return subscription_rpc (h, "event.unsubscribe", topic);
}

flux_future_t *flux_service_register (flux_t *h, const char *name)
{
    if (!name || !*name || strchr (name, '.')) {
        errno = EINVAL;
        return NULL;
    }
    return flux_rpc_pack (h, "service.add", FLUX_NODEID_ANY, 0, "{s:s}",
                          "service", name);
}

flux_future_t *flux_service_unregister (flux_t *h, const char *name)
{
    if (!name || !*name) {
        errno = EINVAL;
        return NULL;
    }
    return flux_rpc_pack (h, "service.remove", FLUX_NODEID_ANY, 0, "{s:s}",
                          "service", name);
}
