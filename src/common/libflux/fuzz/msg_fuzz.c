/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */

/* libFuzzer target for the message decoders (scripts/fuzz.sh builds it).
 *
 * The input is read three ways:
 *  1. as a byte stream of local-connector frames, decoded one after the
 *     other with flux_msg_frame_decode() until it needs more or fails;
 *  2. as the parts of one frame, behind a correct prefix (magic, length =
 *     input size), so that mutations reach the part parser instead of
 *     dying on the length check;
 *  3. as multipart parts for flux_msg_from_parts(): each part is a length
 *     byte and that many bytes (cut short at the end of the input), or a
 *     0xff length byte and then the rest of the input.
 * Every message that decodes must re-encode to exactly the bytes it came
 * from (the encoding is canonical) and survive a second round trip through
 * both wire forms, a copy and the read-only accessors.  Any mismatch
 * aborts, which libFuzzer reports as a crash.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libflux/message.h"

#define MAX_PARTS (FLUX_MSG_MAX_ROUTES + 8)

static void check (bool cond, const char *what)
{
    if (!cond) {
        fprintf (stderr, "msg_fuzz: check failed: %s\n", what);
        abort ();
    }
}

static uint8_t *encode (const flux_msg_t *msg, size_t *lenp)
{
    ssize_t n = flux_msg_frame_size (msg);
    uint8_t *buf;

    check (n >= FLUX_MSG_FRAME_PREFIX + 21, "frame_size");
    check ((buf = malloc (n)) != NULL, "malloc");
    check (flux_msg_frame_encode (msg, buf, n) == n, "frame_encode");
    *lenp = n;
    return buf;
}

/* Run the accessors that read the whole message; none may crash. */
static void touch (const flux_msg_t *msg)
{
    const char *s;
    char *str;
    int count = flux_msg_route_count (msg);

    str = flux_msg_describe (msg);
    check (str != NULL, "describe");
    free (str);
    if (count >= 0) {
        str = flux_msg_route_string (msg);
        check (str != NULL && strlen (str) <= (size_t)count * 9,
               "route_string");
        free (str);
    }
    (void)flux_msg_get_string (msg, &s);
    (void)flux_msg_unpack (msg, "{}");
    (void)flux_msg_unpack (msg, "{s?s}", "k", &s);
}

/* Check that a copy and the multipart form both reproduce frame[len]. */
static void check_same (const flux_msg_t *msg, const uint8_t *frame, size_t len)
{
    struct flux_msg_part parts[MAX_PARTS];
    uint8_t proto[FLUX_MSG_PROTO_SIZE];
    int count = MAX_PARTS;
    flux_msg_t *other;
    uint8_t *buf;
    size_t n;

    check ((other = flux_msg_copy (msg, true)) != NULL, "copy");
    buf = encode (other, &n);
    check (n == len && memcmp (buf, frame, n) == 0, "copy encodes the same");
    free (buf);
    flux_msg_destroy (other);

    check (flux_msg_to_parts (msg, proto, parts, &count) == 0, "to_parts");
    check (count == flux_msg_part_count (msg), "part_count");
    check ((other = flux_msg_from_parts (parts, count)) != NULL,
           "from_parts of to_parts");
    buf = encode (other, &n);
    check (n == len && memcmp (buf, frame, n) == 0, "parts round trip");
    free (buf);
    flux_msg_destroy (other);
}

/* msg was decoded from orig[origlen] (a frame, or NULL if from parts). */
static void roundtrip (const flux_msg_t *msg, const uint8_t *orig,
                       size_t origlen)
{
    flux_msg_t *again = NULL;
    uint8_t *buf;
    size_t n, need = 0;

    buf = encode (msg, &n);
    if (orig)
        check (n == origlen && memcmp (buf, orig, n) == 0,
               "decoded frame re-encodes to the same bytes");
    check (flux_msg_frame_decode (buf, n, &again, &need) == (ssize_t)n,
           "re-encoded frame decodes");
    check (flux_msg_frame_decode (buf, n - 1, &again, &need) == 0 && need == n,
           "re-encoded frame minus one byte needs more");
    check_same (again, buf, n);
    check_same (msg, buf, n);
    touch (msg);
    flux_msg_destroy (again);
    free (buf);
}

static void fuzz_frames (const uint8_t *data, size_t size)
{
    size_t off = 0;

    while (off < size) {
        flux_msg_t *msg = NULL;
        size_t need = 0;
        ssize_t rc;

        errno = 0;
        rc = flux_msg_frame_decode (data + off, size - off, &msg, &need);
        if (rc == 0) {
            check (msg == NULL && need > size - off, "need more");
            break;
        }
        if (rc < 0) {
            check (errno == EPROTO && msg == NULL, "frame error is EPROTO");
            break;
        }
        check ((size_t)rc <= size - off && msg != NULL, "frame consumed");
        roundtrip (msg, data + off, rc);
        flux_msg_destroy (msg);
        off += rc;
    }
}

static void fuzz_body (const uint8_t *data, size_t size)
{
    const uint32_t magic = FLUX_MSG_FRAME_MAGIC;
    uint8_t *buf;
    flux_msg_t *msg = NULL;
    ssize_t rc;

    if (size > FLUX_MSG_FRAME_MAX)
        return;
    check ((buf = malloc (FLUX_MSG_FRAME_PREFIX + size)) != NULL, "malloc");
    memcpy (buf, &magic, 4);
    buf[4] = size >> 24;
    buf[5] = size >> 16;
    buf[6] = size >> 8;
    buf[7] = size;
    if (size > 0)
        memcpy (buf + FLUX_MSG_FRAME_PREFIX, data, size);
    errno = 0;
    rc = flux_msg_frame_decode (buf, FLUX_MSG_FRAME_PREFIX + size, &msg, NULL);
    if (rc < 0)
        check (errno == EPROTO && msg == NULL, "body error is EPROTO");
    else {
        check (rc == (ssize_t)(FLUX_MSG_FRAME_PREFIX + size) && msg != NULL,
               "body decodes whole");
        roundtrip (msg, buf, rc);
    }
    flux_msg_destroy (msg);
    free (buf);
}

static void fuzz_parts (const uint8_t *data, size_t size)
{
    struct flux_msg_part parts[MAX_PARTS + 1];
    struct flux_msg_part out[MAX_PARTS + 1];
    uint8_t proto[FLUX_MSG_PROTO_SIZE];
    int count = 0, n = MAX_PARTS + 1;
    size_t i = 0;
    flux_msg_t *msg;

    while (i < size && count < MAX_PARTS + 1) {
        size_t len = data[i++];
        if (len == 0xff || len > size - i)
            len = size - i;
        parts[count].data = data + i;
        parts[count++].size = len;
        i += len;
    }
    errno = 0;
    if (!(msg = flux_msg_from_parts (parts, count))) {
        check (errno == EPROTO, "from_parts error is EPROTO");
        return;
    }
    /* the multipart form is canonical too: same parts, same bytes */
    check (flux_msg_to_parts (msg, proto, out, &n) == 0 && n == count,
           "to_parts gives back as many parts");
    for (int k = 0; k < count; k++)
        check (
            out[k].size == parts[k].size
                && (out[k].size == 0
                    || memcmp (out[k].data, parts[k].data, out[k].size) == 0),
            "to_parts gives back the same parts");
    roundtrip (msg, NULL, 0);
    flux_msg_destroy (msg);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    fuzz_frames (data, size);
    fuzz_body (data, size);
    fuzz_parts (data, size);
    return 0;
}
