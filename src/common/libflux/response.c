/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* response.c - building and decoding requests and responses (RFC 6). */
#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "msg_decode.h"
#include "response.h"

int flux_request_decode (const flux_msg_t *msg, const char **topic,
                         const char **s)
{
    if (msg_check_topic (msg, FLUX_MSGTYPE_REQUEST, topic) < 0)
        return -1;
    return msg_optional_string (msg, s);
}

int flux_request_decode_raw (const flux_msg_t *msg, const char **topic,
                             const void **data, size_t *len)
{
    if (msg_check_topic (msg, FLUX_MSGTYPE_REQUEST, topic) < 0)
        return -1;
    return msg_optional_raw (msg, data, len);
}

int flux_request_unpack (const flux_msg_t *msg, const char **topic,
                         const char *fmt, ...)
{
    va_list ap;
    int rc;

    if (msg_check_topic (msg, FLUX_MSGTYPE_REQUEST, topic) < 0)
        return -1;
    va_start (ap, fmt);
    rc = flux_msg_vunpack (msg, fmt, ap);
    va_end (ap);
    return rc;
}

flux_msg_t *flux_request_encode_raw (const char *topic, const void *data,
                                     size_t len)
{
    flux_msg_t *msg;

    if (!topic || !*topic) {
        errno = EINVAL;
        return NULL;
    }
    if (!(msg = flux_msg_create (FLUX_MSGTYPE_REQUEST)))
        return NULL;
    flux_msg_route_enable (msg);
    if (flux_msg_set_topic (msg, topic) < 0
        || (data && flux_msg_set_payload (msg, data, len) < 0)) {
        flux_msg_destroy (msg);
        return NULL;
    }
    return msg;
}

flux_msg_t *flux_request_encode (const char *topic, const char *s)
{
    return flux_request_encode_raw (topic, s, s ? strlen (s) + 1 : 0);
}

flux_msg_t *flux_response_derive (const flux_msg_t *request, int errnum)
{
    flux_msg_t *msg;
    uint32_t tag;
    bool streaming;

    if (msg_check_type (request, FLUX_MSGTYPE_REQUEST) < 0
        || flux_msg_get_matchtag (request, &tag) < 0)
        return NULL;
    streaming = flux_msg_is_streaming (request);
    if (!(msg = flux_msg_copy (request, false)))
        return NULL;
    if (flux_msg_set_type (msg, FLUX_MSGTYPE_RESPONSE) < 0
        || flux_msg_clear_flag (msg, FLUX_MSGFLAG_UPSTREAM) < 0
        || flux_msg_clear_flag (msg, FLUX_MSGFLAG_NORESPONSE) < 0
        || flux_msg_set_errnum (msg, errnum) < 0
        || flux_msg_set_matchtag (msg, tag) < 0
        || (streaming && flux_msg_set_streaming (msg) < 0)) {
        flux_msg_destroy (msg);
        return NULL;
    }
    return msg;
}

static int response_check (const flux_msg_t *msg, const char **topic)
{
    int errnum;

    if (msg_check_topic (msg, FLUX_MSGTYPE_RESPONSE, topic) < 0
        || flux_msg_get_errnum (msg, &errnum) < 0)
        return -1;
    if (errnum != 0) {
        errno = errnum;
        return -1;
    }
    return 0;
}

int flux_response_decode (const flux_msg_t *msg, const char **topic,
                          const char **s)
{
    if (response_check (msg, topic) < 0)
        return -1;
    return msg_optional_string (msg, s);
}

int flux_response_decode_raw (const flux_msg_t *msg, const char **topic,
                              const void **data, size_t *len)
{
    if (response_check (msg, topic) < 0)
        return -1;
    return msg_optional_raw (msg, data, len);
}

int flux_response_decode_error (const flux_msg_t *msg, const char **errstr)
{
    int errnum;
    const char *s = NULL;

    if (msg_check_type (msg, FLUX_MSGTYPE_RESPONSE) < 0
        || flux_msg_get_errnum (msg, &errnum) < 0)
        return -1;
    if (errnum == 0) {
        errno = EINVAL;
        return -1;
    }
    if (!flux_msg_has_payload (msg) || flux_msg_get_string (msg, &s) < 0
        || !s) {
        errno = ENOENT;
        return -1;
    }
    if (errstr)
        *errstr = s;
    return 0;
}

static int send_response (flux_t *h, const flux_msg_t *request, flux_msg_t *msg)
{
    int rc = flux_send (h, msg, 0);
    flux_msg_destroy (msg);
    return rc;
}

static bool wants_no_response (const flux_msg_t *request)
{
    return flux_msg_is_noresponse (request);
}

int flux_respond_raw (flux_t *h, const flux_msg_t *request, const void *data,
                      size_t len)
{
    flux_msg_t *msg;

    if (!h || msg_check_type (request, FLUX_MSGTYPE_REQUEST) < 0)
        return -1;
    if (wants_no_response (request))
        return 0;
    if (!(msg = flux_response_derive (request, 0)))
        return -1;
    if (data && flux_msg_set_payload (msg, data, len) < 0) {
        flux_msg_destroy (msg);
        return -1;
    }
    return send_response (h, request, msg);
}

int flux_respond (flux_t *h, const flux_msg_t *request, const char *s)
{
    return flux_respond_raw (h, request, s, s ? strlen (s) + 1 : 0);
}

int flux_respond_pack (flux_t *h, const flux_msg_t *request, const char *fmt,
                       ...)
{
    flux_msg_t *msg;
    va_list ap;
    int rc;

    if (!h || msg_check_type (request, FLUX_MSGTYPE_REQUEST) < 0)
        return -1;
    if (wants_no_response (request)) {
        /* "o" arguments are ours whatever happens (as in json_pack):
         * pack them to release them. */
        va_start (ap, fmt);
        json_decref (json_vpack_ex (NULL, 0, fmt, ap));
        va_end (ap);
        return 0;
    }
    if (!(msg = flux_response_derive (request, 0)))
        return -1;
    va_start (ap, fmt);
    rc = flux_msg_vpack (msg, fmt, ap);
    va_end (ap);
    if (rc < 0) {
        flux_msg_destroy (msg);
        return -1;
    }
    return send_response (h, request, msg);
}

int flux_respond_error (flux_t *h, const flux_msg_t *request, int errnum,
                        const char *errstr)
{
    flux_msg_t *msg;

    if (!h || msg_check_type (request, FLUX_MSGTYPE_REQUEST) < 0)
        return -1;
    if (wants_no_response (request))
        return 0;
    if (errnum == 0)
        errnum = EINVAL;
    if (!(msg = flux_response_derive (request, errnum)))
        return -1;
    if (errstr && *errstr && flux_msg_set_string (msg, errstr) < 0) {
        flux_msg_destroy (msg);
        return -1;
    }
    return send_response (h, request, msg);
}
