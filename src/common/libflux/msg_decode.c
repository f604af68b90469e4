/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* msg_decode.c - type, topic and optional-payload checks shared by the
 * request, response, event and RPC decoders. */
#include <errno.h>

#include "msg_decode.h"

int msg_check_type (const flux_msg_t *msg, int type)
{
    int t;

    if (!msg) {
        errno = EINVAL;
        return -1;
    }
    if (flux_msg_get_type (msg, &t) < 0)
        return -1;
    if (t != type) {
        errno = EPROTO;
        return -1;
    }
    return 0;
}

int msg_check_topic (const flux_msg_t *msg, int type, const char **topic)
{
    const char *t;

    if (msg_check_type (msg, type) < 0 || flux_msg_get_topic (msg, &t) < 0)
        return -1;
    if (topic)
        *topic = t;
    return 0;
}

int msg_optional_string (const flux_msg_t *msg, const char **s)
{
    const char *str = NULL;

    if (flux_msg_has_payload (msg) && flux_msg_get_string (msg, &str) < 0)
        return -1;
    if (s)
        *s = str;
    return 0;
}

int msg_optional_raw (const flux_msg_t *msg, const void **data, size_t *len)
{
    const void *d = NULL;
    size_t l = 0;

    if (flux_msg_has_payload (msg) && flux_msg_get_payload (msg, &d, &l) < 0)
        return -1;
    if (data)
        *data = d;
    if (len)
        *len = l;
    return 0;
}
