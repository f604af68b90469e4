/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */

/* Unit tests for the Flux message library (RFC 3 and PROTOCOLS.md 1.1).
 *
 * The wire vectors below were written out byte by byte from RFC 3 and
 * PROTOCOLS.md 1.1, not produced by the code under test: each is checked
 * in both directions (encode and compare, decode and check every field).
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "libflux/message.h"
#include "tap.h"

/* Hand-written vectors.  Frames start with the magic 0xFFEE0012 in host
 * byte order (written here as on x86-64, fixed up by wire() on big-endian
 * hosts), then the big-endian length of the parts, prefix excluded.
 */

/* clang-format off */
#define UUID "5e2b1c44-9a0f-4c1e-8b7d-3f6a2e9c0d11" /* 36 bytes */

/* Request: routes sender UUID, newest "0"; topic "kvs.lookup"; payload
 * {"key":"a.b"} + NUL (14 bytes); flags 0x4b = topic|payload|route|
 * streaming; userid 1000; rolemask 5 = owner|local; nodeid ANY;
 * matchtag 42.  Parts: 2 + 37 + 1 + 11 + 15 + 21 = 87 = 0x57 bytes.
 */
static const char req_frame[] =
    "\x12\x00\xee\xff" "\x00\x00\x00\x57"
    "\x01" "0"
    "\x24" UUID
    "\x00"
    "\x0a" "kvs.lookup"
    "\x0e" "{\"key\":\"a.b\"}" "\x00"
    "\x14" "\x8e\x01\x01\x4b" "\x00\x00\x03\xe8" "\x00\x00\x00\x05"
           "\xff\xff\xff\xff" "\x00\x00\x00\x2a";
static const char req_proto[] =
    "\x8e\x01\x01\x4b" "\x00\x00\x03\xe8" "\x00\x00\x00\x05"
    "\xff\xff\xff\xff" "\x00\x00\x00\x2a";

/* Response: empty route stack; topic "kvs.lookup"; payload "not found"
 * + NUL; flags 0x0b = topic|payload|route; userid 1000; rolemask 2 = user;
 * errnum 2; matchtag 42.  Parts: 1 + 11 + 11 + 21 = 44 = 0x2c bytes.
 */
static const char resp_frame[] =
    "\x12\x00\xee\xff" "\x00\x00\x00\x2c"
    "\x00"
    "\x0a" "kvs.lookup"
    "\x0a" "not found" "\x00"
    "\x14" "\x8e\x01\x02\x0b" "\x00\x00\x03\xe8" "\x00\x00\x00\x02"
           "\x00\x00\x00\x02" "\x00\x00\x00\x2a";

/* Event: topic "job.state"; flags 0x21 = topic|private; userid 1001;
 * rolemask 2; sequence 0x00010203; unused 0.  Parts: 10 + 21 = 31.
 */
static const char event_frame[] =
    "\x12\x00\xee\xff" "\x00\x00\x00\x1f"
    "\x09" "job.state"
    "\x14" "\x8e\x01\x04\x21" "\x00\x00\x03\xe9" "\x00\x00\x00\x02"
           "\x00\x01\x02\x03" "\x00\x00\x00\x00";

/* Control: flags 0; userid unknown; rolemask 0; type 1; status -1. */
static const char control_frame[] =
    "\x12\x00\xee\xff" "\x00\x00\x00\x15"
    "\x14" "\x8e\x01\x08\x00" "\xff\xff\xff\xff" "\x00\x00\x00\x00"
           "\x00\x00\x00\x01" "\xff\xff\xff\xff";

/* Events with topic "big" and an N-byte payload; flags 0x03; userid
 * unknown; rolemask 0; seq 1.  Parts: 4 + size part + N + 21.
 *   254:   short size 0xfe, parts 4+1+254+21 = 280 = 0x118
 *   255:   long size ff 00 00 00 ff, parts 4+5+255+21 = 285 = 0x11d
 *   70000: long size ff 00 01 11 70, parts 4+5+70000+21 = 70030 = 0x1118e
 */
static const char big254_head[] =
    "\x12\x00\xee\xff" "\x00\x00\x01\x18" "\x03" "big" "\xfe";
static const char big255_head[] =
    "\x12\x00\xee\xff" "\x00\x00\x01\x1d" "\x03" "big" "\xff\x00\x00\x00\xff";
static const char big70000_head[] =
    "\x12\x00\xee\xff" "\x00\x01\x11\x8e" "\x03" "big" "\xff\x00\x01\x11\x70";
static const char big_tail[] =
    "\x14" "\x8e\x01\x04\x03" "\xff\xff\xff\xff" "\x00\x00\x00\x00"
           "\x00\x00\x00\x01" "\x00\x00\x00\x00";

/* clang-format on */

#define LIT(a) (a), (sizeof (a) - 1)

/* Copy a literal frame, fixing the host-order magic on big-endian hosts. */
static uint8_t *wire (const char *lit, size_t len)
{
    uint8_t *buf = malloc (len);
    if (!buf)
        BAIL_OUT ("out of memory");
    memcpy (buf, lit, len);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    if (len >= 4)
        memcpy (buf, "\xff\xee\x00\x12", 4);
#endif
    return buf;
}

static uint8_t big_byte (size_t i)
{
    return (uint8_t)(i * 7 + 3);
}

static uint8_t *big_wire (const char *head, size_t headlen, size_t n,
                          size_t *lenp)
{
    size_t tail = sizeof (big_tail) - 1;
    uint8_t *buf = malloc (headlen + n + tail);

    if (!buf)
        BAIL_OUT ("out of memory");
    memcpy (buf, head, headlen);
    for (size_t i = 0; i < n; i++)
        buf[headlen + i] = big_byte (i);
    memcpy (buf + headlen + n, big_tail, tail);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    memcpy (buf, "\xff\xee\x00\x12", 4);
#endif
    *lenp = headlen + n + tail;
    return buf;
}

/* A test-side encoder for malformed frames: parts get short sizes below
 * 255 and long sizes otherwise, and the prefix has the right magic and
 * length, unless the caller patches the result.
 */
static size_t mkframe (uint8_t *buf, const struct flux_msg_part *parts, int n)
{
    size_t off = 8;

    buf[0] = 0x12; /* x86-64 order; fixed below on big-endian */
    buf[1] = 0x00;
    buf[2] = 0xee;
    buf[3] = 0xff;
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    memcpy (buf, "\xff\xee\x00\x12", 4);
#endif
    for (int i = 0; i < n; i++) {
        size_t s = parts[i].size;
        if (s < 255)
            buf[off++] = s;
        else {
            buf[off++] = 0xff;
            buf[off++] = s >> 24;
            buf[off++] = s >> 16;
            buf[off++] = s >> 8;
            buf[off++] = s;
        }
        if (s)
            memcpy (buf + off, parts[i].data, s);
        off += s;
    }
    buf[4] = (off - 8) >> 24;
    buf[5] = (off - 8) >> 16;
    buf[6] = (off - 8) >> 8;
    buf[7] = (off - 8);
    return off;
}

static void mkproto (uint8_t *p, int type, int flags)
{
    memset (p, 0, 20);
    p[0] = 0x8e;
    p[1] = 0x01;
    p[2] = type;
    p[3] = flags;
}

/* Both decoders must refuse these parts with EPROTO. */
static void reject_parts (const struct flux_msg_part *parts, int n,
                          const char *what)
{
    static uint8_t buf[80000];
    flux_msg_t *msg = NULL;
    ssize_t rc;
    size_t len;

    errno = 0;
    msg = flux_msg_from_parts (parts, n);
    ok (msg == NULL && errno == EPROTO, "from_parts rejects %s", what);
    flux_msg_destroy (msg);
    msg = NULL;
    len = mkframe (buf, parts, n);
    errno = 0;
    rc = flux_msg_frame_decode (buf, len, &msg, NULL);
    ok (rc == -1 && errno == EPROTO && msg == NULL, "frame_decode rejects %s",
        what);
    flux_msg_destroy (msg);
}

static void accept_parts (const struct flux_msg_part *parts, int n,
                          const char *what)
{
    static uint8_t buf[80000];
    flux_msg_t *msg = NULL;
    ssize_t rc;
    size_t len;

    msg = flux_msg_from_parts (parts, n);
    ok (msg != NULL, "from_parts accepts %s", what);
    flux_msg_destroy (msg);
    msg = NULL;
    len = mkframe (buf, parts, n);
    rc = flux_msg_frame_decode (buf, len, &msg, NULL);
    ok (rc == (ssize_t)len && msg != NULL, "frame_decode accepts %s", what);
    flux_msg_destroy (msg);
}

static flux_msg_t *decode_all (const uint8_t *buf, size_t len)
{
    flux_msg_t *msg = NULL;
    ssize_t rc = flux_msg_frame_decode (buf, len, &msg, NULL);

    if (rc != (ssize_t)len) {
        diag ("frame_decode returned %zd (errno %d), want %zu", rc, errno, len);
        flux_msg_destroy (msg);
        return NULL;
    }
    return msg;
}

/* Encode msg as a frame and compare it byte for byte with want. */
static void check_encode (const flux_msg_t *msg, const uint8_t *want,
                          size_t len, const char *name)
{
    uint8_t *buf = malloc (len + 16);
    ssize_t n;

    if (!buf)
        BAIL_OUT ("out of memory");
    cmp_ok (flux_msg_frame_size (msg), "==", len, "%s: frame_size is %zu", name,
            len);
    n = flux_msg_frame_encode (msg, buf, len + 16);
    cmp_ok (n, "==", len, "%s: frame_encode writes %zu bytes", name, len);
    if (n == (ssize_t)len)
        cmp_mem (buf, want, len, "%s: encoded bytes match the vector", name);
    else
        fail ("%s: encoded bytes match the vector", name);
    errno = 0;
    ok (flux_msg_frame_encode (msg, buf, len - 1) < 0 && errno == EINVAL,
        "%s: frame_encode into a buffer 1 byte short fails with EINVAL", name);
    free (buf);
}

/* Compare the multipart form of msg with the expected parts. */
static void check_parts (const flux_msg_t *msg,
                         const struct flux_msg_part *want, int n,
                         const char *name)
{
    struct flux_msg_part parts[8];
    uint8_t proto[FLUX_MSG_PROTO_SIZE];
    int count = n - 1;
    flux_msg_t *back;

    cmp_ok (flux_msg_part_count (msg), "==", n, "%s: part_count is %d", name,
            n);
    errno = 0;
    ok (flux_msg_to_parts (msg, proto, parts, &count) < 0 && errno == EINVAL,
        "%s: to_parts with *count one short fails with EINVAL", name);
    count = 8;
    ok (flux_msg_to_parts (msg, proto, parts, &count) == 0 && count == n,
        "%s: to_parts gives %d parts", name, n);
    for (int i = 0; i < n && i < count; i++) {
        ok (parts[i].size == want[i].size && parts[i].data != NULL
                && memcmp (parts[i].data, want[i].data, want[i].size) == 0,
            "%s: part %d matches (%zu bytes)", name, i, want[i].size);
    }
    back = flux_msg_from_parts (want, n);
    ok (back != NULL, "%s: from_parts decodes the expected parts", name);
    if (back) {
        uint8_t a[256], b[256];
        ssize_t na = flux_msg_frame_encode (msg, a, sizeof (a));
        ssize_t nb = flux_msg_frame_encode (back, b, sizeof (b));
        ok (na > 0 && na == nb && memcmp (a, b, na) == 0,
            "%s: from_parts result equals the original", name);
    }
    flux_msg_destroy (back);
}

static void test_vector_request (void)
{
    uint8_t *want = wire (LIT (req_frame));
    size_t len = sizeof (req_frame) - 1;
    const struct flux_msg_part parts[] = {
        {"0", 1},
        {UUID, 36},
        {"", 0},
        {"kvs.lookup", 10},
        {"{\"key\":\"a.b\"}", 14},
        {req_proto, 20},
    };
    flux_msg_t *msg;
    const char *s;
    const void *buf;
    size_t size;
    uint32_t u;
    int type;
    uint8_t flags;

    cmp_ok (len, "==", 8 + 0x57, "request vector: literal is 95 bytes");
    /* build and encode */
    if (!(msg = flux_msg_create (FLUX_MSGTYPE_REQUEST)))
        BAIL_OUT ("flux_msg_create failed");
    flux_msg_route_enable (msg);
    ok (flux_msg_route_push (msg, UUID) == 0
            && flux_msg_route_push (msg, "0") == 0,
        "request: pushed two routes");
    ok (flux_msg_set_topic (msg, "kvs.lookup") == 0
            && flux_msg_pack (msg, "{s:s}", "key", "a.b") == 0
            && flux_msg_set_streaming (msg) == 0
            && flux_msg_set_userid (msg, 1000) == 0
            && flux_msg_set_rolemask (msg, FLUX_ROLE_OWNER | FLUX_ROLE_LOCAL)
                   == 0
            && flux_msg_set_matchtag (msg, 42) == 0,
        "request: set topic, JSON payload, streaming, cred, matchtag");
    check_encode (msg, want, len, "request");
    check_parts (msg, parts, 6, "request");
    flux_msg_destroy (msg);

    /* decode and check every field */
    if (!(msg = decode_all (want, len)))
        BAIL_OUT ("request vector does not decode");
    ok (flux_msg_get_type (msg, &type) == 0 && type == FLUX_MSGTYPE_REQUEST,
        "request decoded: type request");
    ok (flux_msg_get_flags (msg, &flags) == 0 && flags == 0x4b,
        "request decoded: flags 0x4b");
    ok (flux_msg_get_userid (msg, &u) == 0 && u == 1000,
        "request decoded: userid 1000");
    ok (flux_msg_get_rolemask (msg, &u) == 0 && u == 5,
        "request decoded: rolemask 5");
    ok (flux_msg_get_nodeid (msg, &u) == 0 && u == FLUX_NODEID_ANY,
        "request decoded: nodeid ANY");
    ok (flux_msg_get_matchtag (msg, &u) == 0 && u == 42,
        "request decoded: matchtag 42");
    cmp_ok (flux_msg_route_count (msg), "==", 2, "request decoded: 2 routes");
    is (flux_msg_route_first (msg), UUID, "request decoded: sender is first");
    is (flux_msg_route_last (msg), "0", "request decoded: newest is last");
    ok (flux_msg_get_topic (msg, &s) == 0 && s && !strcmp (s, "kvs.lookup"),
        "request decoded: topic kvs.lookup");
    ok (flux_msg_get_payload (msg, &buf, &size) == 0 && size == 14
            && !memcmp (buf, "{\"key\":\"a.b\"}", 14),
        "request decoded: payload is 14 bytes with the NUL");
    s = NULL;
    ok (flux_msg_unpack (msg, "{s:s}", "key", &s) == 0 && s
            && !strcmp (s, "a.b"),
        "request decoded: payload unpacks");
    ok (flux_msg_is_streaming (msg) && !flux_msg_is_noresponse (msg)
            && !flux_msg_is_private (msg),
        "request decoded: streaming only");
    flux_msg_destroy (msg);
    free (want);
}

static void test_vector_response (void)
{
    uint8_t *want = wire (LIT (resp_frame));
    size_t len = sizeof (resp_frame) - 1;
    flux_msg_t *msg;
    const char *s;
    uint32_t u;
    int type, e;
    uint8_t flags;

    cmp_ok (len, "==", 8 + 0x2c, "response vector: literal is 52 bytes");
    if (!(msg = flux_msg_create (FLUX_MSGTYPE_RESPONSE)))
        BAIL_OUT ("flux_msg_create failed");
    flux_msg_route_enable (msg);
    ok (flux_msg_set_topic (msg, "kvs.lookup") == 0
            && flux_msg_set_string (msg, "not found") == 0
            && flux_msg_set_errnum (msg, 2) == 0
            && flux_msg_set_matchtag (msg, 42) == 0
            && flux_msg_set_cred (msg, (struct flux_msg_cred){1000, 2}) == 0,
        "response: built");
    check_encode (msg, want, len, "response");
    flux_msg_destroy (msg);

    if (!(msg = decode_all (want, len)))
        BAIL_OUT ("response vector does not decode");
    ok (flux_msg_get_type (msg, &type) == 0 && type == FLUX_MSGTYPE_RESPONSE,
        "response decoded: type response");
    ok (flux_msg_get_flags (msg, &flags) == 0 && flags == 0x0b,
        "response decoded: flags 0x0b");
    ok (flux_msg_get_errnum (msg, &e) == 0 && e == 2,
        "response decoded: errnum 2");
    ok (flux_msg_get_matchtag (msg, &u) == 0 && u == 42,
        "response decoded: matchtag 42");
    ok (flux_msg_get_userid (msg, &u) == 0 && u == 1000,
        "response decoded: userid 1000");
    ok (flux_msg_get_rolemask (msg, &u) == 0 && u == FLUX_ROLE_USER,
        "response decoded: rolemask user");
    cmp_ok (flux_msg_route_count (msg), "==", 0,
            "response decoded: route flag with an empty stack");
    ok (flux_msg_get_string (msg, &s) == 0 && s && !strcmp (s, "not found"),
        "response decoded: string payload");
    ok (flux_msg_get_topic (msg, &s) == 0 && !strcmp (s, "kvs.lookup"),
        "response decoded: topic");
    flux_msg_destroy (msg);
    free (want);
}

static void test_vector_event (void)
{
    uint8_t *want = wire (LIT (event_frame));
    size_t len = sizeof (event_frame) - 1;
    flux_msg_t *msg;
    const char *s;
    uint32_t u;
    int type;
    uint8_t flags;

    cmp_ok (len, "==", 8 + 0x1f, "event vector: literal is 39 bytes");
    if (!(msg = flux_msg_create (FLUX_MSGTYPE_EVENT)))
        BAIL_OUT ("flux_msg_create failed");
    ok (flux_msg_set_topic (msg, "job.state") == 0
            && flux_msg_set_private (msg) == 0
            && flux_msg_set_seq (msg, 0x00010203) == 0
            && flux_msg_set_userid (msg, 1001) == 0
            && flux_msg_set_rolemask (msg, FLUX_ROLE_USER) == 0,
        "event: built");
    check_encode (msg, want, len, "event");
    flux_msg_destroy (msg);

    if (!(msg = decode_all (want, len)))
        BAIL_OUT ("event vector does not decode");
    ok (flux_msg_get_type (msg, &type) == 0 && type == FLUX_MSGTYPE_EVENT,
        "event decoded: type event");
    ok (flux_msg_get_flags (msg, &flags) == 0 && flags == 0x21,
        "event decoded: flags 0x21");
    ok (flux_msg_is_private (msg), "event decoded: private");
    ok (flux_msg_get_seq (msg, &u) == 0 && u == 0x00010203,
        "event decoded: seq 0x00010203");
    ok (flux_msg_get_userid (msg, &u) == 0 && u == 1001,
        "event decoded: userid 1001");
    ok (flux_msg_get_rolemask (msg, &u) == 0 && u == FLUX_ROLE_USER,
        "event decoded: rolemask user");
    ok (flux_msg_get_topic (msg, &s) == 0 && !strcmp (s, "job.state"),
        "event decoded: topic");
    ok (!flux_msg_has_payload (msg), "event decoded: no payload");
    errno = 0;
    ok (flux_msg_route_count (msg) < 0 && errno == EPROTO,
        "event decoded: no route stack (EPROTO)");
    flux_msg_destroy (msg);
    free (want);
}

static void test_vector_control (void)
{
    uint8_t *want = wire (LIT (control_frame));
    size_t len = sizeof (control_frame) - 1;
    const struct flux_msg_part parts[] = {{control_frame + 9, 20}};
    flux_msg_t *msg;
    uint32_t u;
    int type, ctype, status;
    uint8_t flags;

    cmp_ok (len, "==", 8 + 0x15, "control vector: literal is 29 bytes");
    if (!(msg = flux_msg_create (FLUX_MSGTYPE_CONTROL)))
        BAIL_OUT ("flux_msg_create failed");
    ok (flux_msg_set_control (msg, 1, -1) == 0, "control: built");
    check_encode (msg, want, len, "control");
    check_parts (msg, parts, 1, "control");
    flux_msg_destroy (msg);

    if (!(msg = decode_all (want, len)))
        BAIL_OUT ("control vector does not decode");
    ok (flux_msg_get_type (msg, &type) == 0 && type == FLUX_MSGTYPE_CONTROL,
        "control decoded: type control");
    ok (flux_msg_get_flags (msg, &flags) == 0 && flags == 0,
        "control decoded: flags 0");
    ok (flux_msg_get_control (msg, &ctype, &status) == 0 && ctype == 1
            && status == -1,
        "control decoded: type 1 status -1");
    ok (flux_msg_get_userid (msg, &u) == 0 && u == FLUX_USERID_UNKNOWN,
        "control decoded: userid unknown");
    ok (flux_msg_get_rolemask (msg, &u) == 0 && u == FLUX_ROLE_NONE,
        "control decoded: rolemask none");
    flux_msg_destroy (msg);
    free (want);
}

static void test_vector_big (const char *head, size_t headlen, size_t n)
{
    size_t len;
    uint8_t *want = big_wire (head, headlen, n, &len);
    uint8_t *payload = malloc (n);
    struct flux_msg_part parts[3];
    uint8_t proto[FLUX_MSG_PROTO_SIZE];
    int count = 3;
    flux_msg_t *msg;
    const void *buf;
    size_t size;
    uint32_t seq;

    if (!payload)
        BAIL_OUT ("out of memory");
    for (size_t i = 0; i < n; i++)
        payload[i] = big_byte (i);
    if (!(msg = flux_msg_create (FLUX_MSGTYPE_EVENT)))
        BAIL_OUT ("flux_msg_create failed");
    ok (flux_msg_set_topic (msg, "big") == 0
            && flux_msg_set_payload (msg, payload, n) == 0
            && flux_msg_set_seq (msg, 1) == 0,
        "%zu-byte payload: built", n);
    check_encode (msg, want, len,
                  n == 254   ? "payload 254"
                  : n == 255 ? "payload 255"
                             : "payload 70000");
    ok (flux_msg_to_parts (msg, proto, parts, &count) == 0 && count == 3
            && parts[1].size == n && !memcmp (parts[1].data, payload, n)
            && !memcmp (parts[2].data, big_tail + 1, 20),
        "%zu-byte payload: to_parts", n);
    flux_msg_destroy (msg);

    if (!(msg = decode_all (want, len)))
        BAIL_OUT ("%zu-byte payload vector does not decode", n);
    ok (flux_msg_get_payload (msg, &buf, &size) == 0 && size == n
            && !memcmp (buf, payload, n),
        "%zu-byte payload: decoded payload intact", n);
    ok (flux_msg_get_seq (msg, &seq) == 0 && seq == 1,
        "%zu-byte payload: decoded seq", n);
    flux_msg_destroy (msg);
    free (payload);
    free (want);
}

static void test_vectors (void)
{
    test_vector_request ();
    test_vector_response ();
    test_vector_event ();
    test_vector_control ();
    test_vector_big (LIT (big254_head), 254);
    test_vector_big (LIT (big255_head), 255);
    test_vector_big (LIT (big70000_head), 70000);
}

static void test_create (void)
{
    const int types[] = {FLUX_MSGTYPE_REQUEST, FLUX_MSGTYPE_RESPONSE,
                         FLUX_MSGTYPE_EVENT, FLUX_MSGTYPE_CONTROL};
    const int bad[] = {0, 3, 5, 0x10, FLUX_MSGTYPE_ANY, -1};

    for (size_t i = 0; i < sizeof (types) / sizeof (types[0]); i++) {
        flux_msg_t *msg = flux_msg_create (types[i]);
        struct flux_msg_cred cred = {0, 1};
        uint8_t flags = 0xff;
        int type = 0;
        const char *name = flux_msg_typestr (types[i]);

        ok (msg != NULL, "create %s", name);
        if (!msg)
            continue;
        ok (flux_msg_get_type (msg, &type) == 0 && type == types[i],
            "%s: get_type", name);
        ok (flux_msg_get_flags (msg, &flags) == 0 && flags == 0, "%s: no flags",
            name);
        ok (flux_msg_get_cred (msg, &cred) == 0
                && cred.userid == FLUX_USERID_UNKNOWN
                && cred.rolemask == FLUX_ROLE_NONE,
            "%s: userid unknown, rolemask none", name);
        cmp_ok (flux_msg_part_count (msg), "==", 1, "%s: one part", name);
        ok (!flux_msg_has_payload (msg), "%s: no payload", name);
        flux_msg_destroy (msg);
    }
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        errno = 0;
        ok (flux_msg_create (bad[i]) == NULL && errno == EINVAL,
            "create type %d fails with EINVAL", bad[i]);
    }
    is (flux_msg_typestr (FLUX_MSGTYPE_REQUEST), "request", "typestr request");
    is (flux_msg_typestr (FLUX_MSGTYPE_RESPONSE), "response",
        "typestr response");
    is (flux_msg_typestr (FLUX_MSGTYPE_EVENT), "event", "typestr event");
    is (flux_msg_typestr (FLUX_MSGTYPE_CONTROL), "control", "typestr control");
    is (flux_msg_typestr (3), "unknown", "typestr 3 is unknown");
}

static void test_refcount (void)
{
    flux_msg_t *msg = flux_msg_create (FLUX_MSGTYPE_EVENT);
    const flux_msg_t *ref;
    const char *topic;

    ref = flux_msg_incref (msg);
    ok (ref == msg, "incref returns the message");
    ok (flux_msg_set_topic (msg, "a.b") == 0, "set topic");
    flux_msg_decref (msg);
    ok (flux_msg_get_topic (ref, &topic) == 0 && !strcmp (topic, "a.b"),
        "message survives one decref of two references");
    flux_msg_incref (ref);
    flux_msg_destroy ((flux_msg_t *)ref);
    flux_msg_decref (ref); /* last one: freed (valgrind checks) */
    errno = 0;
    ok (flux_msg_incref (NULL) == NULL && errno == EINVAL,
        "incref NULL fails with EINVAL");
    errno = 42;
    flux_msg_destroy (NULL);
    flux_msg_decref (NULL);
    ok (errno == 42, "destroy/decref NULL are no-ops preserving errno");
    msg = flux_msg_create (FLUX_MSGTYPE_REQUEST);
    errno = 43;
    flux_msg_destroy (msg);
    ok (errno == 43, "destroy preserves errno");
}

/* Every type-specific setter and getter fails with EINVAL on m unless it
 * applies to m's type.
 */
static void check_wrong_type (flux_msg_t *m)
{
    uint32_t u;
    int i1, i2, t;
    const char *name;

    flux_msg_get_type (m, &t);
    name = flux_msg_typestr (t);
    if (t != FLUX_MSGTYPE_REQUEST) {
        errno = 0;
        ok (flux_msg_set_nodeid (m, 1) < 0 && errno == EINVAL,
            "%s: set_nodeid EINVAL", name);
        errno = 0;
        ok (flux_msg_get_nodeid (m, &u) < 0 && errno == EINVAL,
            "%s: get_nodeid EINVAL", name);
        errno = 0;
        ok (flux_msg_set_noresponse (m) < 0 && errno == EINVAL,
            "%s: set_noresponse EINVAL", name);
    }
    if (t != FLUX_MSGTYPE_REQUEST && t != FLUX_MSGTYPE_RESPONSE) {
        errno = 0;
        ok (flux_msg_set_matchtag (m, 1) < 0 && errno == EINVAL,
            "%s: set_matchtag EINVAL", name);
        errno = 0;
        ok (flux_msg_get_matchtag (m, &u) < 0 && errno == EINVAL,
            "%s: get_matchtag EINVAL", name);
        errno = 0;
        ok (flux_msg_set_streaming (m) < 0 && errno == EINVAL,
            "%s: set_streaming EINVAL", name);
    }
    if (t != FLUX_MSGTYPE_RESPONSE) {
        errno = 0;
        ok (flux_msg_set_errnum (m, 1) < 0 && errno == EINVAL,
            "%s: set_errnum EINVAL", name);
        errno = 0;
        ok (flux_msg_get_errnum (m, &i1) < 0 && errno == EINVAL,
            "%s: get_errnum EINVAL", name);
    }
    if (t != FLUX_MSGTYPE_EVENT) {
        errno = 0;
        ok (flux_msg_set_seq (m, 1) < 0 && errno == EINVAL,
            "%s: set_seq EINVAL", name);
        errno = 0;
        ok (flux_msg_get_seq (m, &u) < 0 && errno == EINVAL,
            "%s: get_seq EINVAL", name);
        errno = 0;
        ok (flux_msg_set_private (m) < 0 && errno == EINVAL,
            "%s: set_private EINVAL", name);
    }
    if (t != FLUX_MSGTYPE_CONTROL) {
        errno = 0;
        ok (flux_msg_set_control (m, 1, 1) < 0 && errno == EINVAL,
            "%s: set_control EINVAL", name);
        errno = 0;
        ok (flux_msg_get_control (m, &i1, &i2) < 0 && errno == EINVAL,
            "%s: get_control EINVAL", name);
    }
    else {
        errno = 0;
        ok (flux_msg_set_topic (m, "x") < 0 && errno == EINVAL,
            "control: set_topic EINVAL");
        errno = 0;
        ok (flux_msg_set_payload (m, "x", 1) < 0 && errno == EINVAL,
            "control: set_payload EINVAL");
        errno = 0;
        ok (flux_msg_set_string (m, "x") < 0 && errno == EINVAL,
            "control: set_string EINVAL");
        errno = 0;
        ok (flux_msg_pack (m, "{}") < 0 && errno == EINVAL,
            "control: pack EINVAL");
        flux_msg_route_enable (m);
        ok (!flux_msg_has_flag (m, FLUX_MSGFLAG_ROUTE),
            "control: route_enable has no effect");
    }
}

static void test_fields (void)
{
    flux_msg_t *req = flux_msg_create (FLUX_MSGTYPE_REQUEST);
    flux_msg_t *rsp = flux_msg_create (FLUX_MSGTYPE_RESPONSE);
    flux_msg_t *ev = flux_msg_create (FLUX_MSGTYPE_EVENT);
    flux_msg_t *ctl = flux_msg_create (FLUX_MSGTYPE_CONTROL);
    flux_msg_t *all[] = {req, rsp, ev, ctl};
    uint32_t u;
    int i1, i2;

    /* defaults */
    ok (flux_msg_get_nodeid (req, &u) == 0 && u == FLUX_NODEID_ANY,
        "request: nodeid defaults to ANY");
    ok (flux_msg_get_matchtag (req, &u) == 0 && u == FLUX_MATCHTAG_NONE,
        "request: matchtag defaults to NONE");
    ok (flux_msg_get_errnum (rsp, &i1) == 0 && i1 == 0,
        "response: errnum defaults to 0");
    ok (flux_msg_get_seq (ev, &u) == 0 && u == 0, "event: seq defaults to 0");
    ok (flux_msg_get_control (ctl, &i1, &i2) == 0 && i1 == 0 && i2 == 0,
        "control: type/status default to 0");

    /* set and get */
    ok (flux_msg_set_nodeid (req, 7) == 0 && flux_msg_get_nodeid (req, &u) == 0
            && u == 7,
        "request: nodeid 7");
    ok (flux_msg_set_nodeid (req, FLUX_NODEID_ANY) == 0
            && flux_msg_get_nodeid (req, &u) == 0 && u == FLUX_NODEID_ANY,
        "request: nodeid ANY");
    errno = 0;
    ok (flux_msg_set_nodeid (req, FLUX_NODEID_UPSTREAM) < 0 && errno == EINVAL,
        "request: nodeid UPSTREAM fails with EINVAL");
    ok (flux_msg_set_matchtag (req, 0xdeadbeef) == 0
            && flux_msg_get_matchtag (req, &u) == 0 && u == 0xdeadbeef,
        "request: matchtag");
    ok (flux_msg_set_matchtag (rsp, 9) == 0
            && flux_msg_get_matchtag (rsp, &u) == 0 && u == 9,
        "response: matchtag");
    ok (flux_msg_set_errnum (rsp, 113) == 0
            && flux_msg_get_errnum (rsp, &i1) == 0 && i1 == 113,
        "response: errnum");
    ok (flux_msg_set_seq (ev, 0xffffffff) == 0 && flux_msg_get_seq (ev, &u) == 0
            && u == 0xffffffff,
        "event: seq");
    ok (flux_msg_set_control (ctl, -5, 77) == 0
            && flux_msg_get_control (ctl, &i1, &i2) == 0 && i1 == -5
            && i2 == 77,
        "control: type/status");

    /* wrong type: EINVAL for every setter and getter */
    for (int i = 0; i < 4; i++)
        check_wrong_type (all[i]);
    flux_msg_route_enable (ev);
    ok (flux_msg_has_flag (ev, FLUX_MSGFLAG_ROUTE),
        "event: route_enable sets the flag (flux-core routes events)");
    flux_msg_route_disable (ev);

    /* NULL arguments */
    errno = 0;
    ok (flux_msg_get_nodeid (req, NULL) < 0 && errno == EINVAL,
        "get_nodeid NULL out fails with EINVAL");
    errno = 0;
    ok (flux_msg_get_type (NULL, &i1) < 0 && errno == EINVAL,
        "get_type NULL msg fails with EINVAL");
    errno = 0;
    ok (flux_msg_set_userid (NULL, 1) < 0 && errno == EINVAL,
        "set_userid NULL msg fails with EINVAL");
    errno = 0;
    ok (flux_msg_get_errnum (NULL, &i1) < 0 && errno == EINVAL,
        "get_errnum NULL msg fails with EINVAL");
    errno = 0;
    ok (flux_msg_set_seq (NULL, 1) < 0 && errno == EINVAL,
        "set_seq NULL msg fails with EINVAL");

    for (int i = 0; i < 4; i++)
        flux_msg_destroy (all[i]);
}

static void test_set_type (void)
{
    flux_msg_t *msg = flux_msg_create (FLUX_MSGTYPE_REQUEST);
    uint32_t u;
    int e, type;

    flux_msg_set_nodeid (msg, 3);
    flux_msg_set_matchtag (msg, 99);
    flux_msg_route_enable (msg);
    flux_msg_route_push (msg, "client");
    flux_msg_set_topic (msg, "svc.method");
    ok (flux_msg_set_type (msg, FLUX_MSGTYPE_RESPONSE) == 0,
        "set_type request -> response");
    ok (flux_msg_get_matchtag (msg, &u) == 0 && u == 99,
        "response keeps the request matchtag");
    ok (flux_msg_get_errnum (msg, &e) == 0 && e == 0,
        "response errnum reset to 0");
    is (flux_msg_route_first (msg), "client", "response keeps the routes");
    errno = 0;
    ok (flux_msg_set_type (msg, FLUX_MSGTYPE_CONTROL) < 0 && errno == EINVAL,
        "set_type to control with routes fails with EINVAL");
    ok (flux_msg_get_type (msg, &type) == 0 && type == FLUX_MSGTYPE_RESPONSE,
        "failed set_type leaves the type");
    ok (flux_msg_set_type (msg, FLUX_MSGTYPE_REQUEST) == 0
            && flux_msg_get_nodeid (msg, &u) == 0 && u == FLUX_NODEID_ANY
            && flux_msg_get_matchtag (msg, &u) == 0 && u == 0,
        "set_type request resets nodeid ANY, matchtag NONE");
    flux_msg_route_disable (msg);
    ok (flux_msg_set_type (msg, FLUX_MSGTYPE_EVENT) == 0
            && flux_msg_get_seq (msg, &u) == 0 && u == 0,
        "set_type event once routes are gone; seq 0");
    errno = 0;
    ok (flux_msg_set_type (msg, FLUX_MSGTYPE_CONTROL) < 0 && errno == EINVAL,
        "set_type control with a topic fails with EINVAL");
    flux_msg_set_topic (msg, NULL);
    ok (flux_msg_set_type (msg, FLUX_MSGTYPE_CONTROL) == 0,
        "set_type control once the topic is gone");
    errno = 0;
    ok (flux_msg_set_type (msg, 0x03) < 0 && errno == EINVAL,
        "set_type 3 fails with EINVAL");
    flux_msg_destroy (msg);
}

static void test_flags (void)
{
    flux_msg_t *msg = flux_msg_create (FLUX_MSGTYPE_REQUEST);
    flux_msg_t *ev = flux_msg_create (FLUX_MSGTYPE_EVENT);
    flux_msg_t *ctl = flux_msg_create (FLUX_MSGTYPE_CONTROL);
    const char *s;
    const void *buf;
    size_t size;
    uint8_t flags;

    ok (flux_msg_set_noresponse (msg) == 0 && flux_msg_is_noresponse (msg),
        "set_noresponse");
    ok (flux_msg_set_streaming (msg) == 0 && flux_msg_is_streaming (msg)
            && !flux_msg_is_noresponse (msg),
        "set_streaming clears noresponse");
    ok (flux_msg_set_noresponse (msg) == 0 && !flux_msg_is_streaming (msg),
        "set_noresponse clears streaming");
    ok (!flux_msg_is_private (NULL) && !flux_msg_is_streaming (NULL)
            && !flux_msg_is_noresponse (NULL) && !flux_msg_has_payload (NULL),
        "is_* on NULL are false");
    ok (flux_msg_set_private (ev) == 0 && flux_msg_is_private (ev),
        "event: set_private");

    /* structural bits are authoritative */
    ok (flux_msg_set_flags (msg, FLUX_MSGFLAG_TOPIC | FLUX_MSGFLAG_PAYLOAD
                                     | FLUX_MSGFLAG_ROUTE | FLUX_MSGFLAG_USER1)
            == 0,
        "set_flags topic|payload|route|user1");
    ok (flux_msg_get_topic (msg, &s) == 0 && !strcmp (s, ""),
        "TOPIC flag alone gives an empty topic");
    ok (flux_msg_get_payload (msg, &buf, &size) == 0 && size == 0
            && buf == NULL,
        "PAYLOAD flag alone gives a zero-length payload");
    cmp_ok (flux_msg_route_count (msg), "==", 0,
            "ROUTE flag alone gives an empty stack");
    cmp_ok (flux_msg_part_count (msg), "==", 4, "4 parts");
    ok (flux_msg_has_flag (msg, FLUX_MSGFLAG_USER1)
            && flux_msg_has_flag (msg, FLUX_MSGFLAG_TOPIC | FLUX_MSGFLAG_ROUTE)
            && !flux_msg_has_flag (msg, FLUX_MSGFLAG_UPSTREAM)
            && !flux_msg_has_flag (msg, 0),
        "has_flag");
    flux_msg_set_topic (msg, "x.y");
    flux_msg_set_string (msg, "hello");
    flux_msg_route_push (msg, "id1");
    ok (flux_msg_set_flags (msg, FLUX_MSGFLAG_UPSTREAM) == 0
            && flux_msg_get_flags (msg, &flags) == 0
            && flags == FLUX_MSGFLAG_UPSTREAM,
        "set_flags upstream only");
    errno = 0;
    ok (flux_msg_get_topic (msg, &s) < 0 && errno == EPROTO,
        "clearing TOPIC dropped the topic (get_topic EPROTO)");
    ok (!flux_msg_has_payload (msg), "clearing PAYLOAD dropped the payload");
    errno = 0;
    ok (flux_msg_route_count (msg) < 0 && errno == EPROTO,
        "clearing ROUTE dropped the stack");
    ok (flux_msg_set_flag (msg, FLUX_MSGFLAG_ROUTE) == 0
            && flux_msg_route_count (msg) == 0,
        "set_flag ROUTE enables an empty stack");
    ok (flux_msg_clear_flag (msg, FLUX_MSGFLAG_UPSTREAM) == 0
            && !flux_msg_has_flag (msg, FLUX_MSGFLAG_UPSTREAM),
        "clear_flag UPSTREAM");
    errno = 0;
    ok (flux_msg_set_flag (msg, 0x03) < 0 && errno == EINVAL,
        "set_flag with two bits fails with EINVAL");
    errno = 0;
    ok (flux_msg_set_flag (msg, 0) < 0 && errno == EINVAL,
        "set_flag 0 fails with EINVAL");
    errno = 0;
    ok (flux_msg_clear_flag (msg, 0x100) < 0 && errno == EINVAL,
        "clear_flag 0x100 fails with EINVAL");
    ok (flux_msg_set_flags (msg, FLUX_MSGFLAG_PRIVATE) == 0,
        "set_flags accepts PRIVATE on a request (as the decoder does)");

    /* flux-core sends and delivers events with FLAG_ROUTE (PROTOCOLS 1.3) */
    ok (flux_msg_set_flag (ev, FLUX_MSGFLAG_ROUTE) == 0
            && flux_msg_route_count (ev) == 0 && flux_msg_is_private (ev),
        "event: set_flag ROUTE gives an empty stack (as flux-core sends)");
    ok (flux_msg_clear_flag (ev, FLUX_MSGFLAG_ROUTE) == 0
            && !flux_msg_has_flag (ev, FLUX_MSGFLAG_ROUTE),
        "event: clear_flag ROUTE");
    errno = 0;
    ok (flux_msg_set_flags (ctl, FLUX_MSGFLAG_ROUTE) < 0 && errno == EINVAL,
        "control: set_flags ROUTE fails with EINVAL");
    ok (flux_msg_is_private (ev), "event: still private");
    errno = 0;
    ok (flux_msg_set_flags (ctl, FLUX_MSGFLAG_TOPIC) < 0 && errno == EINVAL,
        "control: set_flags TOPIC fails with EINVAL");
    errno = 0;
    ok (flux_msg_set_flags (ctl, FLUX_MSGFLAG_PAYLOAD) < 0 && errno == EINVAL,
        "control: set_flags PAYLOAD fails with EINVAL");
    ok (flux_msg_set_flags (ctl, FLUX_MSGFLAG_USER1) == 0,
        "control: set_flags USER1");
    errno = 0;
    ok (flux_msg_set_flags (NULL, 0) < 0 && errno == EINVAL,
        "set_flags NULL fails with EINVAL");
    errno = 0;
    ok (flux_msg_get_flags (msg, NULL) < 0 && errno == EINVAL,
        "get_flags NULL out fails with EINVAL");
    flux_msg_destroy (msg);
    flux_msg_destroy (ev);
    flux_msg_destroy (ctl);
}

static void test_topic (void)
{
    flux_msg_t *msg = flux_msg_create (FLUX_MSGTYPE_EVENT);
    char longtopic[300];
    const char *s;

    errno = 0;
    ok (flux_msg_get_topic (msg, &s) < 0 && errno == EPROTO,
        "get_topic without topic fails with EPROTO");
    ok (flux_msg_set_topic (msg, "a") == 0 && flux_msg_get_topic (msg, &s) == 0
            && !strcmp (s, "a"),
        "short topic");
    memset (longtopic, 't', sizeof (longtopic) - 1);
    longtopic[sizeof (longtopic) - 1] = '\0';
    ok (flux_msg_set_topic (msg, longtopic) == 0
            && flux_msg_get_topic (msg, &s) == 0 && !strcmp (s, longtopic),
        "299-byte topic (heap)");
    ok (flux_msg_set_topic (msg, s + 200) == 0
            && flux_msg_get_topic (msg, &s) == 0 && strlen (s) == 99,
        "set_topic from a suffix of the current topic");
    ok (flux_msg_set_topic (msg, s + 90) == 0
            && flux_msg_get_topic (msg, &s) == 0 && strlen (s) == 9,
        "set_topic from a suffix, moving to inline storage");
    ok (flux_msg_set_topic (msg, s + 1) == 0
            && flux_msg_get_topic (msg, &s) == 0 && !strcmp (s, "tttttttt"),
        "set_topic from an overlapping inline suffix");
    ok (flux_msg_set_topic (msg, "") == 0 && flux_msg_get_topic (msg, &s) == 0
            && !strcmp (s, "") && flux_msg_has_flag (msg, FLUX_MSGFLAG_TOPIC),
        "empty topic keeps the TOPIC flag");
    ok (flux_msg_set_topic (msg, NULL) == 0
            && !flux_msg_has_flag (msg, FLUX_MSGFLAG_TOPIC),
        "set_topic NULL removes the topic");
    errno = 0;
    ok (flux_msg_get_topic (msg, NULL) < 0 && errno == EINVAL,
        "get_topic NULL out fails with EINVAL");
    errno = 0;
    ok (flux_msg_set_topic (NULL, "a") < 0 && errno == EINVAL,
        "set_topic NULL msg fails with EINVAL");
    flux_msg_destroy (msg);
}

static void test_payload (void)
{
    flux_msg_t *msg = flux_msg_create (FLUX_MSGTYPE_REQUEST);
    const void *buf;
    const char *s;
    size_t size;

    errno = 0;
    ok (flux_msg_get_payload (msg, &buf, &size) < 0 && errno == EPROTO,
        "get_payload without payload fails with EPROTO");
    ok (flux_msg_get_string (msg, &s) == 0 && s == NULL,
        "get_string without payload gives NULL");
    ok (flux_msg_set_payload (msg, "\x01\x00\x02", 3) == 0
            && flux_msg_get_payload (msg, &buf, &size) == 0 && size == 3
            && !memcmp (buf, "\x01\x00\x02", 3),
        "raw payload with a NUL inside");
    ok (flux_msg_get_payload (msg, NULL, NULL) == 0,
        "get_payload with NULL outputs");
    errno = 0;
    ok (flux_msg_get_string (msg, &s) < 0 && errno == EPROTO,
        "get_string on a non-terminated payload fails with EPROTO");
    ok (flux_msg_set_payload (msg, "ab\0cd", 6) == 0, "payload ab NUL cd NUL");
    errno = 0;
    ok (flux_msg_get_string (msg, &s) < 0 && errno == EPROTO,
        "get_string with an interior NUL fails with EPROTO");
    ok (flux_msg_set_payload (msg, "abc", 3) == 0, "payload abc, no NUL");
    errno = 0;
    ok (flux_msg_get_string (msg, &s) < 0 && errno == EPROTO,
        "get_string without the trailing NUL fails with EPROTO");
    ok (flux_msg_get_payload (msg, &buf, &size) == 0
            && flux_msg_set_payload (msg, (const char *)buf + 1, size - 1) == 0
            && flux_msg_get_payload (msg, &buf, &size) == 0 && size == 2
            && !memcmp (buf, "bc", 2),
        "set_payload from the current payload");
    ok (flux_msg_set_string (msg, "hello") == 0
            && flux_msg_get_payload (msg, &buf, &size) == 0 && size == 6
            && flux_msg_get_string (msg, &s) == 0 && !strcmp (s, "hello"),
        "set_string stores the NUL");
    ok (flux_msg_set_string (msg, "") == 0
            && flux_msg_get_payload (msg, &buf, &size) == 0 && size == 1
            && flux_msg_get_string (msg, &s) == 0 && !strcmp (s, ""),
        "empty string is one byte");
    ok (flux_msg_set_payload (msg, "x", 0) == 0 && flux_msg_has_payload (msg)
            && flux_msg_get_payload (msg, &buf, &size) == 0 && size == 0
            && buf == NULL,
        "non-NULL buf with size 0 keeps a zero-length payload");
    errno = 0;
    ok (flux_msg_get_string (msg, &s) < 0 && errno == EPROTO,
        "get_string on a zero-length payload fails with EPROTO");
    cmp_ok (flux_msg_part_count (msg), "==", 2,
            "zero-length payload is a part");
    ok (flux_msg_set_payload (msg, NULL, 0) == 0 && !flux_msg_has_payload (msg),
        "set_payload NULL, 0 removes the payload");
    errno = 0;
    ok (flux_msg_set_payload (msg, NULL, 5) < 0 && errno == EINVAL,
        "set_payload NULL, 5 fails with EINVAL");
    ok (flux_msg_set_string (msg, "x") == 0
            && flux_msg_set_string (msg, NULL) == 0
            && !flux_msg_has_payload (msg),
        "set_string NULL removes the payload");
    errno = 0;
    ok (flux_msg_get_string (msg, NULL) < 0 && errno == EINVAL,
        "get_string NULL out fails with EINVAL");
    errno = 0;
    ok (flux_msg_get_payload (NULL, &buf, &size) < 0 && errno == EINVAL,
        "get_payload NULL msg fails with EINVAL");
    flux_msg_destroy (msg);
}

static void test_json (void)
{
    flux_msg_t *msg = flux_msg_create (FLUX_MSGTYPE_REQUEST);
    const char *s1 = NULL, *s2 = NULL;
    const void *buf;
    size_t size;
    int i = 0;
    json_t *o = NULL;

    is (flux_msg_last_error (msg), "", "last_error starts empty");
    is (flux_msg_last_error (NULL), "", "last_error NULL is empty");
    errno = 0;
    ok (flux_msg_unpack (msg, "{s:i}", "a", &i) < 0 && errno == EPROTO,
        "unpack without payload fails with EPROTO");
    is (flux_msg_last_error (msg), "message has no payload",
        "last_error says why");
    ok (flux_msg_pack (msg, "{s:i s:s}", "a", 1, "b", "x y") == 0,
        "pack {a:1, b:\"x y\"}");
    ok (flux_msg_get_payload (msg, &buf, &size) == 0
            && size == strlen ("{\"a\":1,\"b\":\"x y\"}") + 1
            && !memcmp (buf, "{\"a\":1,\"b\":\"x y\"}", size),
        "pack encodes compactly with the NUL");
    ok (flux_msg_unpack (msg, "{s:i s:s}", "a", &i, "b", &s1) == 0 && i == 1
            && !strcmp (s1, "x y"),
        "unpack");
    ok (flux_msg_unpack (msg, "{s:s}", "b", &s2) == 0 && s1 == s2,
        "second unpack uses the cached object (same string pointer)");
    ok (flux_msg_unpack (msg, "{s:o}", "a", &o) == 0
            && json_integer_value (o) == 1,
        "unpack o");
    errno = 0;
    ok (flux_msg_unpack (msg, "{s:i}", "missing", &i) < 0 && errno == EPROTO,
        "unpack of a missing key fails with EPROTO");
    ok (strlen (flux_msg_last_error (msg)) > 0
            && strstr (flux_msg_last_error (msg), "missing") != NULL,
        "last_error names the key: %s", flux_msg_last_error (msg));
    errno = 0;
    ok (flux_msg_unpack (msg, "{s:i}", "b", &i) < 0 && errno == EPROTO,
        "unpack of the wrong type fails with EPROTO");
    errno = 0;
    ok (flux_msg_unpack (msg, "{s:i !}", "a", &i) < 0 && errno == EPROTO,
        "strict unpack with an extra key fails with EPROTO");
    ok (flux_msg_pack (msg, "{s:i}", "a", 2) == 0
            && flux_msg_unpack (msg, "{s:i}", "a", &i) == 0 && i == 2,
        "pack replaces the payload and the cache");
    ok (flux_msg_set_string (msg, "{\"a\":3}") == 0
            && flux_msg_unpack (msg, "{s:i}", "a", &i) == 0 && i == 3,
        "set_string invalidates the cache");
    ok (flux_msg_set_payload (msg, "{\"a\":3}", 7) == 0, "payload without NUL");
    errno = 0;
    ok (flux_msg_unpack (msg, "{s:i}", "a", &i) < 0 && errno == EPROTO,
        "unpack of a non-terminated payload fails with EPROTO");
    flux_msg_set_string (msg, "[1,2]");
    errno = 0;
    ok (flux_msg_unpack (msg, "[ii]", &i, &i) < 0 && errno == EPROTO,
        "unpack of an array payload fails with EPROTO");
    is (flux_msg_last_error (msg), "payload is not a JSON object",
        "last_error for an array");
    flux_msg_set_string (msg, "{\"a\":1} x");
    errno = 0;
    ok (flux_msg_unpack (msg, "{s:i}", "a", &i) < 0 && errno == EPROTO,
        "unpack with trailing garbage fails with EPROTO");
    flux_msg_set_payload (msg, "{\"a\":1}\0{}", 11);
    errno = 0;
    ok (flux_msg_unpack (msg, "{s:i}", "a", &i) < 0 && errno == EPROTO,
        "unpack with an interior NUL fails with EPROTO");
    flux_msg_set_payload (msg, "{\"a\":\"x\0y\"}", 12);
    errno = 0;
    ok (flux_msg_unpack (msg, "{s:s}", "a", &s1) < 0 && errno == EPROTO,
        "unpack with a NUL inside a string fails with EPROTO");
    flux_msg_set_string (msg, "");
    errno = 0;
    ok (flux_msg_unpack (msg, "{}") < 0 && errno == EPROTO,
        "unpack of an empty string fails with EPROTO");
    errno = 0;
    ok (flux_msg_unpack (msg, NULL) < 0 && errno == EINVAL,
        "unpack NULL fmt fails with EINVAL");
    flux_msg_destroy (msg);
}

static void test_json_pack (void)
{
    flux_msg_t *msg = flux_msg_create (FLUX_MSGTYPE_REQUEST);
    char big[5000];
    const char *s1 = NULL;
    const void *buf;
    size_t size;

    flux_msg_set_string (msg, "");
    errno = 0;
    ok (flux_msg_pack (msg, "[i]", 1) < 0 && errno == EINVAL,
        "pack of an array fails with EINVAL");
    is (flux_msg_last_error (msg), "payload is not a JSON object",
        "last_error for pack of an array");
    errno = 0;
    ok (flux_msg_pack (msg, "{s:i", "a", 1) < 0 && errno == EINVAL,
        "pack with a bad format fails with EINVAL");
    ok (strlen (flux_msg_last_error (msg)) > 0, "last_error: %s",
        flux_msg_last_error (msg));
    ok (flux_msg_get_string (msg, &s1) == 0 && !strcmp (s1, ""),
        "failed pack left the payload alone");
    errno = 0;
    ok (flux_msg_pack (NULL, "{}") < 0 && errno == EINVAL,
        "pack NULL msg fails with EINVAL");
    ok (flux_msg_pack (msg, "{}") == 0
            && flux_msg_get_payload (msg, &buf, &size) == 0 && size == 3
            && !memcmp (buf, "{}", 3),
        "pack {} gives 3 bytes");

    /* a large object crosses the dump buffer growth */
    memset (big, 'q', sizeof (big) - 1);
    big[sizeof (big) - 1] = '\0';
    ok (flux_msg_pack (msg, "{s:s}", "big", big) == 0
            && flux_msg_unpack (msg, "{s:s}", "big", &s1) == 0
            && !strcmp (s1, big),
        "pack/unpack a 5000-byte string");
    flux_msg_destroy (msg);
}

static void test_cred (void)
{
    flux_msg_t *msg = flux_msg_create (FLUX_MSGTYPE_REQUEST);
    struct flux_msg_cred cred;

    ok (flux_msg_set_cred (msg, (struct flux_msg_cred){100, FLUX_ROLE_USER})
                == 0
            && flux_msg_get_cred (msg, &cred) == 0 && cred.userid == 100
            && cred.rolemask == FLUX_ROLE_USER,
        "set_cred/get_cred");
    ok (flux_msg_authorize (msg, 100) == 0, "user authorized for own userid");
    errno = 0;
    ok (flux_msg_authorize (msg, 101) < 0 && errno == EPERM,
        "user not authorized for another userid (EPERM)");
    flux_msg_set_rolemask (msg, FLUX_ROLE_OWNER);
    ok (flux_msg_authorize (msg, 101) == 0, "owner authorized for anyone");
    flux_msg_set_rolemask (msg, FLUX_ROLE_NONE);
    errno = 0;
    ok (flux_msg_authorize (msg, 100) < 0 && errno == EPERM,
        "matching userid without a role is not authorized");
    cred.userid = FLUX_USERID_UNKNOWN;
    cred.rolemask = FLUX_ROLE_USER;
    errno = 0;
    ok (flux_msg_cred_authorize (cred, FLUX_USERID_UNKNOWN) < 0
            && errno == EPERM,
        "unknown userid never matches");
    cred.userid = 5;
    cred.rolemask = FLUX_ROLE_ADMIN | FLUX_ROLE_LOCAL;
    errno = 0;
    ok (flux_msg_cred_authorize (cred, 6) < 0 && errno == EPERM,
        "admin|local is not owner");
    cred.rolemask = FLUX_ROLE_ALL;
    ok (flux_msg_cred_authorize (cred, 6) == 0, "role ALL includes owner");
    errno = 0;
    ok (flux_msg_authorize (NULL, 1) < 0 && errno == EINVAL,
        "authorize NULL fails with EINVAL");
    errno = 0;
    ok (flux_msg_get_cred (msg, NULL) < 0 && errno == EINVAL,
        "get_cred NULL out fails with EINVAL");
    flux_msg_destroy (msg);
}

static void test_routes (void)
{
    flux_msg_t *msg = flux_msg_create (FLUX_MSGTYPE_REQUEST);
    flux_msg_t *other = flux_msg_create (FLUX_MSGTYPE_REQUEST);
    char id[300];
    char *s;

    errno = 0;
    ok (flux_msg_route_push (msg, "a") < 0 && errno == EPROTO,
        "push without the ROUTE flag fails with EPROTO");
    errno = 0;
    ok (flux_msg_route_pop (msg) < 0 && errno == EPROTO,
        "pop without the ROUTE flag fails with EPROTO");
    errno = 0;
    ok (flux_msg_route_count (msg) < 0 && errno == EPROTO,
        "count without the ROUTE flag fails with EPROTO");
    errno = 0;
    ok (flux_msg_route_string (msg) == NULL && errno == EPROTO,
        "route_string without the ROUTE flag fails with EPROTO");
    ok (flux_msg_route_first (msg) == NULL && flux_msg_route_last (msg) == NULL,
        "first/last without the ROUTE flag are NULL");
    flux_msg_route_enable (msg);
    ok (flux_msg_has_flag (msg, FLUX_MSGFLAG_ROUTE)
            && flux_msg_route_count (msg) == 0,
        "route_enable sets the flag, empty stack");
    ok (flux_msg_route_first (msg) == NULL && flux_msg_route_last (msg) == NULL,
        "first/last of an empty stack are NULL");
    s = flux_msg_route_string (msg);
    is (s, "", "route_string of an empty stack is empty");
    free (s);
    ok (flux_msg_route_pop (msg) == 0 && flux_msg_route_count (msg) == 0,
        "pop of an empty stack is a no-op");
    ok (flux_msg_route_push (msg, UUID) == 0
            && flux_msg_route_push (msg, "0") == 0
            && flux_msg_route_push (msg, "a0b1c2d3e4f5") == 0,
        "push three ids");
    cmp_ok (flux_msg_route_count (msg), "==", 3, "count 3");
    is (flux_msg_route_first (msg), UUID, "first is the original sender");
    is (flux_msg_route_last (msg), "a0b1c2d3e4f5", "last is the newest");
    s = flux_msg_route_string (msg);
    is (s, "5e2b1c44!0!a0b1c2d3", "route_string: sender first, 8 chars, '!'");
    free (s);
    ok (flux_msg_route_pop (msg) == 0 && flux_msg_route_count (msg) == 2,
        "pop");
    is (flux_msg_route_last (msg), "0", "pop removed the newest");
    ok (flux_msg_route_push (msg, flux_msg_route_first (msg)) == 0,
        "push an id taken from the stack itself");
    is (flux_msg_route_last (msg), UUID, "pushed copy is intact");
    errno = 0;
    ok (flux_msg_route_push (msg, "") < 0 && errno == EINVAL,
        "push empty id fails with EINVAL");
    memset (id, 'r', 256);
    id[256] = '\0';
    errno = 0;
    ok (flux_msg_route_push (msg, id) < 0 && errno == EINVAL,
        "push 256-byte id fails with EINVAL");
    id[255] = '\0';
    ok (flux_msg_route_push (msg, id) == 0
            && strlen (flux_msg_route_last (msg)) == 255,
        "push 255-byte id");
    errno = 0;
    ok (flux_msg_route_push (msg, NULL) < 0 && errno == EINVAL,
        "push NULL fails with EINVAL");

    /* match_first */
    flux_msg_route_enable (other);
    ok (!flux_msg_route_match_first (msg, other),
        "match_first: one without routes does not match");
    flux_msg_route_push (other, UUID);
    flux_msg_route_push (other, "elsewhere");
    ok (flux_msg_route_match_first (msg, other),
        "match_first: same sender, different hops");
    flux_msg_route_clear (other);
    ok (flux_msg_has_flag (other, FLUX_MSGFLAG_ROUTE)
            && flux_msg_route_count (other) == 0,
        "route_clear keeps the flag");
    flux_msg_route_push (other, "someone");
    ok (!flux_msg_route_match_first (msg, other),
        "match_first: different senders");
    flux_msg_route_disable (other);
    flux_msg_route_disable (msg);
    ok (flux_msg_route_match_first (msg, other),
        "match_first: neither has routes");
    ok (!flux_msg_route_match_first (msg, NULL), "match_first NULL is false");
    ok (!flux_msg_has_flag (msg, FLUX_MSGFLAG_ROUTE),
        "route_disable clears the flag");
    flux_msg_destroy (msg);
    flux_msg_destroy (other);
}

/* Fill to the limit: 64 ids of 255 bytes (the largest pool). */
static void test_routes_limit (void)
{
    flux_msg_t *msg = flux_msg_create (FLUX_MSGTYPE_REQUEST);
    flux_msg_t *back = NULL;
    char id[256];
    uint8_t *buf;
    size_t len;
    char *s;
    int n;

    memset (id, 'r', 255);
    id[255] = '\0';
    flux_msg_route_enable (msg);
    for (n = 0; n < FLUX_MSG_MAX_ROUTES; n++) {
        id[0] = 'A' + n % 26;
        if (flux_msg_route_push (msg, id) < 0)
            break;
    }
    cmp_ok (n, "==", FLUX_MSG_MAX_ROUTES, "pushed 64 ids of 255 bytes");
    errno = 0;
    ok (flux_msg_route_push (msg, "x") < 0 && errno == EOVERFLOW,
        "push 65th id fails with EOVERFLOW");
    len = flux_msg_frame_size (msg);
    if (!(buf = malloc (len)))
        BAIL_OUT ("out of memory");
    ok (flux_msg_frame_encode (msg, buf, len) == (ssize_t)len
            && flux_msg_frame_decode (buf, len, &back, NULL) == (ssize_t)len,
        "64-route message round-trips through a frame");
    ok (back && flux_msg_route_count (back) == 64
            && flux_msg_route_first (back)[0] == 'A'
            && flux_msg_route_last (back)[0] == 'A' + 63 % 26,
        "64 routes in order after decode");
    s = flux_msg_route_string (back);
    ok (s && strlen (s) == 64 * 9 - 1, "route_string of 64 hops");
    free (s);
    flux_msg_destroy (back);
    free (buf);
    for (n = 0; flux_msg_route_count (msg) > 0; n++)
        flux_msg_route_pop (msg);
    cmp_ok (n, "==", 64, "popped 64 ids");
    errno = 0;
    ok (flux_msg_route_count (NULL) < 0 && errno == EINVAL,
        "count NULL fails with EINVAL");
    flux_msg_route_enable (NULL);
    flux_msg_route_disable (NULL);
    flux_msg_route_clear (NULL);
    pass ("route enable/disable/clear accept NULL");
    flux_msg_destroy (msg);
}

static bool same_encoding (const flux_msg_t *a, const flux_msg_t *b)
{
    ssize_t na = flux_msg_frame_size (a);
    ssize_t nb = flux_msg_frame_size (b);
    uint8_t *ba, *bb;
    bool same;

    if (na < 0 || na != nb)
        return false;
    ba = malloc (na);
    bb = malloc (nb);
    same = ba && bb && flux_msg_frame_encode (a, ba, na) == na
           && flux_msg_frame_encode (b, bb, nb) == nb && !memcmp (ba, bb, na);
    free (ba);
    free (bb);
    return same;
}

static void test_copy (void)
{
    uint8_t *want = wire (LIT (req_frame));
    flux_msg_t *msg = decode_all (want, sizeof (req_frame) - 1);
    flux_msg_t *cpy;
    const char *s;
    uint8_t flags;

    if (!msg)
        BAIL_OUT ("request vector does not decode");
    cpy = flux_msg_copy (msg, true);
    ok (cpy != NULL && cpy != msg, "copy with payload");
    ok (same_encoding (msg, cpy), "copy encodes identically");
    flux_msg_route_push (cpy, "extra");
    flux_msg_set_topic (cpy, "changed");
    ok (flux_msg_route_count (msg) == 2 && flux_msg_get_topic (msg, &s) == 0
            && !strcmp (s, "kvs.lookup"),
        "changing the copy leaves the original alone");
    flux_msg_destroy (cpy);
    cpy = flux_msg_copy (msg, false);
    ok (cpy != NULL && !flux_msg_has_payload (cpy)
            && flux_msg_get_flags (cpy, &flags) == 0
            && flags == (0x4b & ~FLUX_MSGFLAG_PAYLOAD),
        "copy without payload clears the PAYLOAD flag only");
    ok (flux_msg_get_topic (cpy, &s) == 0 && !strcmp (s, "kvs.lookup")
            && !strcmp (flux_msg_route_first (cpy), UUID),
        "copy without payload keeps topic and routes");
    ok (flux_msg_has_payload (msg), "original keeps its payload");
    flux_msg_destroy (cpy);
    errno = 0;
    ok (flux_msg_copy (NULL, true) == NULL && errno == EINVAL,
        "copy NULL fails with EINVAL");
    flux_msg_destroy (msg);
    free (want);
}

/* Every proper prefix of a valid frame needs more bytes, never EPROTO. */
static void test_truncation (const uint8_t *buf, size_t len, const char *name)
{
    size_t bad = 0;

    for (size_t n = 0; n < len; n++) {
        flux_msg_t *msg = NULL;
        size_t need = 0;
        size_t want = n < 8 ? 8 : len;
        ssize_t rc = flux_msg_frame_decode (n ? buf : NULL, n, &msg, &need);
        if (rc != 0 || msg != NULL || need != want) {
            if (bad++ == 0)
                diag ("%s truncated to %zu: rc=%zd need=%zu", name, n, rc,
                      need);
            flux_msg_destroy (msg);
        }
    }
    ok (bad == 0, "%s: all %zu truncations need more bytes", name, len);
}

/* Flipping bits anywhere must not crash; whatever still decodes must
 * re-encode to exactly the bytes consumed (the encoding is canonical).
 */
static void test_bitflips (const uint8_t *orig, size_t len, const char *name)
{
    static const uint8_t masks[] = {0x01, 0x10, 0x80, 0xff};
    uint8_t *buf = malloc (len);
    uint8_t *out = malloc (len + 64);
    size_t bad = 0, decoded = 0;

    if (!buf || !out)
        BAIL_OUT ("out of memory");
    for (size_t i = 0; i < len; i++) {
        for (size_t m = 0; m < sizeof (masks); m++) {
            flux_msg_t *msg = NULL;
            ssize_t rc;
            memcpy (buf, orig, len);
            buf[i] ^= masks[m];
            errno = 0;
            rc = flux_msg_frame_decode (buf, len, &msg, NULL);
            if (rc > 0) {
                ssize_t n = flux_msg_frame_encode (msg, out, len + 64);
                decoded++;
                if (n != rc || memcmp (out, buf, n) != 0)
                    bad++;
            }
            else if (rc < 0 && errno != EPROTO)
                bad++;
            flux_msg_destroy (msg);
        }
    }
    ok (bad == 0,
        "%s: bit flips decode canonically or fail with EPROTO "
        "(%zu of %zu decoded)",
        name, decoded, len * sizeof (masks));
    free (buf);
    free (out);
}

static void test_frame_errors (void)
{
    uint8_t *ev = wire (LIT (event_frame));
    size_t evlen = sizeof (event_frame) - 1;
    uint8_t buf[512];
    flux_msg_t *msg = NULL;
    size_t need = 0;

    /* magic */
    memcpy (buf, ev, evlen);
    buf[0] ^= 0x01;
    errno = 0;
    ok (flux_msg_frame_decode (buf, 1, &msg, &need) < 0 && errno == EPROTO,
        "bad magic is refused after one byte");
    errno = 0;
    ok (flux_msg_frame_decode (buf, evlen, &msg, &need) < 0 && errno == EPROTO,
        "bad magic fails with EPROTO");
    memcpy (buf, ev, evlen);
    buf[0] = ev[3];
    buf[1] = ev[2];
    buf[2] = ev[1];
    buf[3] = ev[0];
    errno = 0;
    ok (flux_msg_frame_decode (buf, evlen, &msg, &need) < 0 && errno == EPROTO,
        "magic in the other byte order (RFC 3 text) fails with EPROTO");

    /* length field */
    memcpy (buf, ev, 8);
    memcpy (buf + 4, "\x40\x00\x00\x01", 4);
    errno = 0;
    ok (flux_msg_frame_decode (buf, 8, &msg, &need) < 0 && errno == EPROTO,
        "length FLUX_MSG_FRAME_MAX + 1 fails with EPROTO from the prefix");
    memcpy (buf + 4, "\x40\x00\x00\x00", 4);
    ok (flux_msg_frame_decode (buf, 8, &msg, &need) == 0
            && need == 8 + (size_t)FLUX_MSG_FRAME_MAX,
        "length FLUX_MSG_FRAME_MAX needs 8 + 2^30 bytes");
    memcpy (buf + 4, "\xff\xff\xff\xff", 4);
    errno = 0;
    ok (flux_msg_frame_decode (buf, 8, &msg, &need) < 0 && errno == EPROTO,
        "length 0xffffffff fails with EPROTO");
    memcpy (buf + 4, "\x00\x00\x00\x00", 4);
    errno = 0;
    ok (flux_msg_frame_decode (buf, 8, &msg, &need) < 0 && errno == EPROTO,
        "length 0 fails with EPROTO");
    memcpy (buf + 4, "\x00\x00\x00\x14", 4);
    errno = 0;
    ok (flux_msg_frame_decode (buf, 8, &msg, &need) < 0 && errno == EPROTO,
        "length 20 (shorter than a PROTO part) fails with EPROTO");
    free (ev);
}

/* Well-framed prefixes whose parts are malformed. */
static void test_frame_part_errors (void)
{
    uint8_t *ev = wire (LIT (event_frame));
    size_t evlen = sizeof (event_frame) - 1;
    uint8_t buf[512];
    flux_msg_t *msg = NULL;
    size_t need = 0;

    /* length one short: the PROTO part overruns it */
    memcpy (buf, ev, evlen);
    buf[7] -= 1;
    errno = 0;
    ok (flux_msg_frame_decode (buf, evlen - 1, &msg, &need) < 0
            && errno == EPROTO,
        "part overrunning the declared length fails with EPROTO");
    /* length one long with a stray byte: a trailing empty part */
    memcpy (buf, ev, evlen);
    buf[7] += 1;
    buf[evlen] = 0x00;
    errno = 0;
    ok (flux_msg_frame_decode (buf, evlen + 1, &msg, &need) < 0
            && errno == EPROTO,
        "trailing empty part after PROTO fails with EPROTO");
    buf[evlen] = 0x05;
    errno = 0;
    ok (flux_msg_frame_decode (buf, evlen + 1, &msg, &need) < 0
            && errno == EPROTO,
        "trailing size byte overrunning the length fails with EPROTO");
    /* an extra part after PROTO */
    memcpy (buf, ev, evlen);
    buf[7] += 2;
    buf[evlen] = 0x01;
    buf[evlen + 1] = 'X';
    errno = 0;
    ok (flux_msg_frame_decode (buf, evlen + 2, &msg, &need) < 0
            && errno == EPROTO,
        "extra part after PROTO fails with EPROTO");

    /* a long size below 255: "job.state" as ff 00 00 00 09 */
    memcpy (buf, ev, 8);
    buf[7] += 4;
    memcpy (buf + 8, "\xff\x00\x00\x00\x09", 5);
    memcpy (buf + 13, ev + 9, evlen - 9);
    errno = 0;
    ok (flux_msg_frame_decode (buf, evlen + 4, &msg, &need) < 0
            && errno == EPROTO,
        "long size encoding of a 9-byte part fails with EPROTO");
    /* long size truncated inside the frame: parts "ff 00 00" */
    memcpy (buf, ev, 8);
    memcpy (buf + 4, "\x00\x00\x00\x18", 4);
    memcpy (buf + 8, ev + 8 + 10, 21);
    memcpy (buf + 29, "\xff\x00\x00", 3);
    errno = 0;
    ok (flux_msg_frame_decode (buf, 32, &msg, &need) < 0 && errno == EPROTO,
        "long size cut short by the length fails with EPROTO");
    /* long size 0xffffffff inside a small frame */
    memcpy (buf + 4, "\x00\x00\x00\x1a", 4);
    memcpy (buf + 29, "\xff\xff\xff\xff\xff", 5);
    errno = 0;
    ok (flux_msg_frame_decode (buf, 34, &msg, &need) < 0 && errno == EPROTO,
        "long size 0xffffffff overrunning the length fails with EPROTO");

    errno = 0;
    ok (flux_msg_frame_decode (ev, evlen, NULL, NULL) < 0 && errno == EINVAL,
        "frame_decode NULL msgp fails with EINVAL");
    errno = 0;
    ok (flux_msg_frame_decode (NULL, 5, &msg, NULL) < 0 && errno == EINVAL,
        "frame_decode NULL buf with size fails with EINVAL");
    ok (flux_msg_frame_decode (NULL, 0, &msg, NULL) == 0,
        "frame_decode of nothing needs more");
    errno = 0;
    ok (flux_msg_frame_encode (NULL, buf, sizeof (buf)) < 0 && errno == EINVAL,
        "frame_encode NULL msg fails with EINVAL");
    errno = 0;
    ok (flux_msg_frame_size (NULL) < 0 && errno == EINVAL,
        "frame_size NULL fails with EINVAL");
    free (ev);
}

static void test_part_errors (void)
{
    uint8_t p[21];

    /* PROTO */
    mkproto (p, FLUX_MSGTYPE_EVENT, 0);
    accept_parts ((struct flux_msg_part[]){{p, 20}}, 1, "bare event PROTO");
    reject_parts ((struct flux_msg_part[]){{p, 19}}, 1, "19-byte PROTO");
    p[20] = 0;
    reject_parts ((struct flux_msg_part[]){{p, 21}}, 1, "21-byte PROTO");
    p[0] = 0x8f;
    reject_parts ((struct flux_msg_part[]){{p, 20}}, 1, "PROTO magic 0x8f");
    p[0] = 0x8e;
    p[1] = 2;
    reject_parts ((struct flux_msg_part[]){{p, 20}}, 1, "PROTO version 2");
    p[1] = 0;
    reject_parts ((struct flux_msg_part[]){{p, 20}}, 1, "PROTO version 0");
    p[1] = 1;
    {
        const int badtypes[] = {0, 3, 5, 6, 0x0f, 0x10, 0x80};
        for (size_t i = 0; i < sizeof (badtypes) / sizeof (badtypes[0]); i++) {
            char what[32];
            p[2] = badtypes[i];
            snprintf (what, sizeof (what), "PROTO type 0x%02x", badtypes[i]);
            reject_parts ((struct flux_msg_part[]){{p, 20}}, 1, what);
        }
    }
    /* flags against parts */
    mkproto (p, FLUX_MSGTYPE_EVENT, FLUX_MSGFLAG_TOPIC);
    reject_parts ((struct flux_msg_part[]){{p, 20}}, 1,
                  "TOPIC flag without a topic");
    mkproto (p, FLUX_MSGTYPE_EVENT, 0);
    reject_parts ((struct flux_msg_part[]){{"a.b", 3}, {p, 20}}, 2,
                  "topic without the TOPIC flag");
    mkproto (p, FLUX_MSGTYPE_EVENT, FLUX_MSGFLAG_TOPIC | FLUX_MSGFLAG_PAYLOAD);
    reject_parts ((struct flux_msg_part[]){{"a.b", 3}, {p, 20}}, 2,
                  "PAYLOAD flag with only a topic part");
    accept_parts ((struct flux_msg_part[]){{"a.b", 3}, {"", 0}, {p, 20}}, 3,
                  "PAYLOAD-flagged zero-length payload");
    accept_parts ((struct flux_msg_part[]){{"", 0}, {"", 0}, {p, 20}}, 3,
                  "TOPIC-flagged empty topic and empty payload");
    reject_parts (
        (struct flux_msg_part[]){{"x", 1}, {"a.b", 3}, {"", 0}, {p, 20}}, 4,
        "event with an unclaimed leading part");
    reject_parts ((struct flux_msg_part[]){{"a\0b", 3}, {"", 0}, {p, 20}}, 3,
                  "topic with an interior NUL");
    reject_parts ((struct flux_msg_part[]){{"a.b", 4}, {"", 0}, {p, 20}}, 3,
                  "topic with a trailing NUL");
    mkproto (p, FLUX_MSGTYPE_EVENT, FLUX_MSGFLAG_TOPIC | FLUX_MSGFLAG_ROUTE);
    accept_parts ((struct flux_msg_part[]){{"", 0}, {"a.b", 3}, {p, 20}}, 3,
                  "event with ROUTE flag and delimiter (flux-core's pub)");
    accept_parts (
        (struct flux_msg_part[]){{"abc", 3}, {"", 0}, {"a.b", 3}, {p, 20}}, 4,
        "event with a route id (as flux-core delivers)");
    reject_parts ((struct flux_msg_part[]){{"a.b", 3}, {p, 20}}, 2,
                  "event with ROUTE flag and no delimiter");
    mkproto (p, FLUX_MSGTYPE_CONTROL, FLUX_MSGFLAG_TOPIC);
    reject_parts ((struct flux_msg_part[]){{"a.b", 3}, {p, 20}}, 2,
                  "control with a topic");
    mkproto (p, FLUX_MSGTYPE_CONTROL, FLUX_MSGFLAG_PAYLOAD);
    reject_parts ((struct flux_msg_part[]){{"{}", 3}, {p, 20}}, 2,
                  "control with a payload");
    mkproto (p, FLUX_MSGTYPE_CONTROL, FLUX_MSGFLAG_ROUTE);
    reject_parts ((struct flux_msg_part[]){{"", 0}, {p, 20}}, 2,
                  "control with a delimiter");
    mkproto (p, FLUX_MSGTYPE_EVENT, FLUX_MSGFLAG_PRIVATE);
    accept_parts ((struct flux_msg_part[]){{p, 20}}, 1,
                  "event with only PRIVATE");
    mkproto (p, FLUX_MSGTYPE_REQUEST, FLUX_MSGFLAG_PRIVATE | 0x04 | 0x40);
    accept_parts ((struct flux_msg_part[]){{p, 20}}, 1,
                  "request with PRIVATE|NORESPONSE|STREAMING (RFC 3 allows)");
}

static void test_route_part_errors (void)
{
    uint8_t p[20], big[300];
    char routes[66][12];
    struct flux_msg_part parts[70];
    int n;

    memset (big, 'b', sizeof (big));
    mkproto (p, FLUX_MSGTYPE_REQUEST, FLUX_MSGFLAG_TOPIC | FLUX_MSGFLAG_ROUTE);
    accept_parts ((struct flux_msg_part[]){{"", 0}, {"t", 1}, {p, 20}}, 3,
                  "request with an empty route stack");
    reject_parts ((struct flux_msg_part[]){{"t", 1}, {p, 20}}, 2,
                  "ROUTE flag without a delimiter");
    reject_parts ((struct flux_msg_part[]){{"x", 1}, {"t", 1}, {p, 20}}, 3,
                  "ROUTE flag with a non-empty part as delimiter");
    reject_parts ((struct flux_msg_part[]){{"", 0}, {"", 0}, {"t", 1}, {p, 20}},
                  4, "empty route id");
    reject_parts (
        (struct flux_msg_part[]){{"a\0", 2}, {"", 0}, {"t", 1}, {p, 20}}, 4,
        "route id with a NUL");
    accept_parts (
        (struct flux_msg_part[]){{big, 255}, {"", 0}, {"t", 1}, {p, 20}}, 4,
        "255-byte route id");
    reject_parts (
        (struct flux_msg_part[]){{big, 256}, {"", 0}, {"t", 1}, {p, 20}}, 4,
        "256-byte route id");
    mkproto (p, FLUX_MSGTYPE_REQUEST, FLUX_MSGFLAG_TOPIC);
    reject_parts ((struct flux_msg_part[]){{"", 0}, {"t", 1}, {p, 20}}, 3,
                  "delimiter without the ROUTE flag");
    mkproto (p, FLUX_MSGTYPE_REQUEST, FLUX_MSGFLAG_ROUTE);
    for (n = 0; n < 65; n++) {
        snprintf (routes[n], sizeof (routes[n]), "%d", n);
        parts[n].data = routes[n];
        parts[n].size = strlen (routes[n]);
    }
    parts[64].data = "";
    parts[64].size = 0;
    parts[65].data = p;
    parts[65].size = 20;
    accept_parts (parts, 66, "64 routes");
    snprintf (routes[65], sizeof (routes[65]), "%d", 65);
    memmove (&parts[1], &parts[0], 66 * sizeof (parts[0]));
    parts[0].data = routes[65];
    parts[0].size = 2;
    reject_parts (parts, 67, "65 routes");
    for (n = 0; n < 69; n++) {
        parts[n].data = "";
        parts[n].size = 0;
    }
    parts[68].data = p;
    parts[68].size = 20;
    reject_parts (parts, 69, "69 parts");
    reject_parts (NULL, 0, "zero parts");

    errno = 0;
    ok (flux_msg_from_parts (NULL, -1) == NULL && errno == EINVAL,
        "from_parts count -1 fails with EINVAL");
    errno = 0;
    ok (flux_msg_from_parts (NULL, 1) == NULL && errno == EINVAL,
        "from_parts NULL parts fails with EINVAL");
    errno = 0;
    ok (flux_msg_from_parts ((struct flux_msg_part[]){{NULL, 3}, {p, 20}}, 2)
                == NULL
            && errno == EINVAL,
        "from_parts NULL data with a size fails with EINVAL");
    mkproto (p, FLUX_MSGTYPE_REQUEST, FLUX_MSGFLAG_ROUTE | FLUX_MSGFLAG_TOPIC);
    {
        flux_msg_t *msg = flux_msg_from_parts (
            (struct flux_msg_part[]){{NULL, 0}, {NULL, 0}, {p, 20}}, 3);
        const char *t = NULL;
        ok (msg && flux_msg_get_topic (msg, &t) == 0 && !strcmp (t, ""),
            "from_parts accepts NULL data for empty parts");
        flux_msg_destroy (msg);
    }
}

static void test_multiple_frames (void)
{
    const struct {
        const char *lit;
        size_t len;
        int type;
    } v[] = {
        {LIT (req_frame), FLUX_MSGTYPE_REQUEST},
        {LIT (resp_frame), FLUX_MSGTYPE_RESPONSE},
        {LIT (event_frame), FLUX_MSGTYPE_EVENT},
        {LIT (control_frame), FLUX_MSGTYPE_CONTROL},
    };
    uint8_t buf[512];
    size_t total = 0, off = 0;
    int i = 0, bad = 0;

    for (int k = 0; k < 4; k++) {
        uint8_t *w = wire (v[k].lit, v[k].len);
        memcpy (buf + total, w, v[k].len);
        total += v[k].len;
        free (w);
    }
    memcpy (buf + total, buf, 10); /* the start of another request */
    total += 10;
    for (;;) {
        flux_msg_t *msg = NULL;
        size_t need = 0;
        int type;
        ssize_t rc
            = flux_msg_frame_decode (buf + off, total - off, &msg, &need);
        if (rc == 0) {
            ok (i == 4 && need == v[0].len && total - off == 10,
                "back-to-back frames: 4 decoded, the partial 5th needs %zu",
                need);
            break;
        }
        if (rc < 0 || i >= 4 || rc != (ssize_t)v[i].len
            || flux_msg_get_type (msg, &type) < 0 || type != v[i].type)
            bad++;
        flux_msg_destroy (msg);
        if (rc < 0 || bad)
            break;
        off += rc;
        i++;
    }
    ok (bad == 0, "back-to-back frames decode in order with exact lengths");
}

static void test_robustness (void)
{
    const struct {
        const char *name;
        const char *lit;
        size_t len;
    } v[] = {
        {"request", LIT (req_frame)},
        {"response", LIT (resp_frame)},
        {"event", LIT (event_frame)},
        {"control", LIT (control_frame)},
    };
    uint8_t *w;
    size_t len;

    for (size_t i = 0; i < sizeof (v) / sizeof (v[0]); i++) {
        w = wire (v[i].lit, v[i].len);
        test_truncation (w, v[i].len, v[i].name);
        test_bitflips (w, v[i].len, v[i].name);
        free (w);
    }
    w = big_wire (LIT (big255_head), 255, &len);
    test_truncation (w, len, "payload 255");
    test_bitflips (w, len, "payload 255");
    free (w);
    w = big_wire (LIT (big70000_head), 70000, &len);
    test_truncation (w, len, "payload 70000");
    free (w);
}

static void test_describe (void)
{
    uint8_t *w = wire (LIT (req_frame));
    flux_msg_t *msg = decode_all (w, sizeof (req_frame) - 1);
    const char *want[] = {
        "type: request\n",
        "flags: 0x4b topic,payload,route,streaming\n",
        "userid: 1000\n",
        "rolemask: 0x5 owner,local\n",
        "nodeid: any\n",
        "matchtag: 42\n",
        "routes: 2\n",
        "  [1] 0\n",
        "  [0] " UUID " (sender)\n",
        "topic: kvs.lookup\n",
        "payload: 14 bytes \"{\\\"key\\\":\\\"a.b\\\"}\\0\"\n",
    };
    char *s;

    s = flux_msg_describe (msg);
    ok (s != NULL, "describe request");
    for (size_t i = 0; s && i < sizeof (want) / sizeof (want[0]); i++)
        ok (strstr (s, want[i]) != NULL, "describe has: %.*s",
            (int)strlen (want[i]) - 1, want[i]);
    free (s);
    flux_msg_destroy (msg);
    free (w);

    msg = flux_msg_create (FLUX_MSGTYPE_CONTROL);
    flux_msg_set_control (msg, 2, -3);
    s = flux_msg_describe (msg);
    ok (s && strstr (s, "type: control\n") && strstr (s, "flags: 0x00\n")
            && strstr (s, "userid: unknown\n")
            && strstr (s, "control-type: 2\ncontrol-status: -3\n")
            && !strstr (s, "topic") && !strstr (s, "payload"),
        "describe control");
    free (s);
    flux_msg_destroy (msg);

    msg = flux_msg_create (FLUX_MSGTYPE_EVENT);
    {
        char payload[100];
        for (int i = 0; i < 100; i++)
            payload[i] = i < 3 ? "\x01\n\x7f"[i] : 'z';
        flux_msg_set_payload (msg, payload, sizeof (payload));
    }
    flux_msg_set_rolemask (msg, FLUX_ROLE_ALL);
    s = flux_msg_describe (msg);
    ok (s && strstr (s, "type: event\n") && strstr (s, "seq: 0\n")
            && strstr (s, "rolemask: 0xffffffff all\n")
            && strstr (s, "payload: 100 bytes \"\\x01\\x0a\\x7fzzz")
            && strstr (s, "z\"...\n"),
        "describe event: binary payload escaped and cut at 80 bytes");
    free (s);
    flux_msg_destroy (msg);
    errno = 0;
    ok (flux_msg_describe (NULL) == NULL && errno == EINVAL,
        "describe NULL fails with EINVAL");
}

/* Round trip every type with a spread of flags and parts. */
static void test_roundtrip_matrix (void)
{
    const int types[] = {FLUX_MSGTYPE_REQUEST, FLUX_MSGTYPE_RESPONSE,
                         FLUX_MSGTYPE_EVENT, FLUX_MSGTYPE_CONTROL};
    int built = 0, bad = 0;

    for (int t = 0; t < 4; t++) {
        for (int f = 0; f < 256; f++) {
            flux_msg_t *msg = flux_msg_create (types[t]);
            flux_msg_t *back = NULL;
            struct flux_msg_part parts[80];
            uint8_t proto[FLUX_MSG_PROTO_SIZE];
            uint8_t buf[1024];
            int count = 80;
            ssize_t n;

            if (flux_msg_set_flags (msg, f) < 0) {
                flux_msg_destroy (msg);
                continue;
            }
            built++;
            if ((f & FLUX_MSGFLAG_TOPIC))
                flux_msg_set_topic (
                    msg, f & 0x10 ? "a-topic-longer-than-64-"
                                    "bytes-to-leave-the-inline-storage-behind"
                                  : "t.x");
            if ((f & FLUX_MSGFLAG_PAYLOAD) && (f & 0x80))
                flux_msg_pack (msg, "{s:i}", "f", f);
            if ((f & FLUX_MSGFLAG_ROUTE)) {
                for (int r = 0; r < (f >> 4); r++)
                    flux_msg_route_push (msg, r & 1 ? UUID : "7");
            }
            flux_msg_set_userid (msg, f * 1000);
            n = flux_msg_frame_encode (msg, buf, sizeof (buf));
            if (n < 0 || flux_msg_frame_decode (buf, n, &back, NULL) != n
                || !same_encoding (msg, back))
                bad++;
            flux_msg_destroy (back);
            back = NULL;
            if (flux_msg_to_parts (msg, proto, parts, &count) < 0
                || !(back = flux_msg_from_parts (parts, count))
                || !same_encoding (msg, back))
                bad++;
            flux_msg_destroy (back);
            flux_msg_destroy (msg);
        }
    }
    cmp_ok (built, "==", 256 * 3 + 32,
            "set_flags accepted exactly the valid flag bytes per type");
    ok (bad == 0, "all %d messages round-trip through frames and parts", built);
}

int main (int argc, char *argv[])
{
    plan (NO_PLAN);
    test_create ();
    test_refcount ();
    test_fields ();
    test_set_type ();
    test_flags ();
    test_topic ();
    test_payload ();
    test_json ();
    test_json_pack ();
    test_cred ();
    test_routes ();
    test_routes_limit ();
    test_copy ();
    test_vectors ();
    test_frame_errors ();
    test_frame_part_errors ();
    test_part_errors ();
    test_route_part_errors ();
    test_multiple_frames ();
    test_robustness ();
    test_describe ();
    test_roundtrip_matrix ();
    done_testing ();
    return 0;
}
