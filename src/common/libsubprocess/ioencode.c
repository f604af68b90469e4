/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* ioencode.c - RFC 42 I/O objects {stream, rank, data?, encoding?, eof?}:
 * data that is valid UTF-8 travels as a JSON string, anything else as
 * base64 with encoding "base64" (as flux-core's ioencode does).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libflux/base64.h"
#include "libutil/utf8.h"
#include "subprocess.h"

bool subprocess_utf8_valid (const void *buf, size_t len)
{
    return utf8_valid (buf, len);
}

json_t *subprocess_io_encode (const char *stream, const char *rank,
                              const void *data, size_t len, bool eof)
{
    json_t *o;

    if (!stream || !rank || (len > 0 && !data)) {
        errno = EINVAL;
        return NULL;
    }
    if (!(o = json_pack ("{s:s s:s}", "stream", stream, "rank", rank)))
        goto nomem;
    if (len > 0) {
        json_t *v;
        if (subprocess_utf8_valid (data, len)) {
            if (!(v = json_stringn (data, len))
                || json_object_set_new (o, "data", v) < 0)
                goto nomem;
        }
        else {
            size_t size = base64_encoded_size (len);
            char *b64 = malloc (size);
            if (!b64 || base64_encode (b64, size, data, len) < 0) {
                free (b64);
                goto nomem;
            }
            v = json_string (b64);
            free (b64);
            if (!v || json_object_set_new (o, "data", v) < 0
                || json_object_set_new (o, "encoding", json_string ("base64"))
                       < 0)
                goto nomem;
        }
    }
    if (eof && json_object_set_new (o, "eof", json_true ()) < 0)
        goto nomem;
    return o;
nomem:
    json_decref (o);
    errno = ENOMEM;
    return NULL;
}

int subprocess_io_decode (const json_t *o, const char **stream,
                          const char **rank, char **data, size_t *len,
                          bool *eof)
{
    const char *s, *r, *encoding = NULL;
    json_t *d = NULL;
    int e = 0;
    char *buf = NULL;
    size_t n = 0;

    if (!o
        || json_unpack ((json_t *)o, "{s:s s:s s?o s?s s?b}", "stream", &s,
                        "rank", &r, "data", &d, "encoding", &encoding, "eof",
                        &e)
               < 0
        || (d && !json_is_string (d))
        || (encoding && strcmp (encoding, "base64")
            && strcmp (encoding, "UTF-8")))
        goto proto;
    if (d) {
        const char *str = json_string_value (d);
        size_t slen = json_string_length (d);
        if (encoding && !strcmp (encoding, "base64")) {
            ssize_t got;
            if (!(buf = malloc (base64_decoded_size (slen) + 1)))
                return -1;
            if ((got = base64_decode (buf, base64_decoded_size (slen) + 1, str,
                                      slen))
                < 0) {
                free (buf);
                goto proto;
            }
            n = got;
        }
        else {
            if (!(buf = malloc (slen + 1)))
                return -1;
            memcpy (buf, str, slen);
            n = slen;
        }
        buf[n] = '\0';
    }
    if (stream)
        *stream = s;
    if (rank)
        *rank = r;
    if (eof)
        *eof = e;
    if (len)
        *len = n;
    if (data)
        *data = buf;
    else
        free (buf);
    return 0;
proto:
    errno = EPROTO;
    return -1;
}
