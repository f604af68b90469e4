/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Unit tests for write.c: the content-backing.write payload round-trips
 * (blobs, the empty blob, a checkpoint, nothing at all), and every
 * truncation or corruption of a payload is EPROTO, never a crash.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libcontent/write.h"
#include "tap.h"

static void test_roundtrip (void)
{
    unsigned char d1[20], d2[20], d3[20];
    struct content_write_blob b[3] = {
        {d1, "hello", 5},
        {d2, NULL, 0},
        {d3, "world!", 6},
    };
    struct content_write w;
    const char *cp = "{\"rootref\":\"x\"}";
    size_t len;
    void *buf;

    memset (d1, 1, 20);
    memset (d2, 2, 20);
    memset (d3, 3, 20);
    ok ((buf = content_write_encode (20, b, 3, cp, 7, &len)) != NULL,
        "encode three blobs and a checkpoint");
    ok (len == 12 + 3 * 24 + 11 + 4 + strlen (cp), "size is %zu", len);
    ok (content_write_decode (buf, len, 20, &w) == 0, "decode");
    ok (w.nblobs == 3 && w.failures == 7, "three blobs, failures 7");
    ok (w.blobs[0].len == 5 && !memcmp (w.blobs[0].data, "hello", 5)
            && !memcmp (w.blobs[0].digest, d1, 20),
        "blob 0 and its digest");
    ok (w.blobs[1].len == 0 && w.blobs[1].data == NULL
            && !memcmp (w.blobs[1].digest, d2, 20),
        "blob 1 is the empty blob");
    ok (w.blobs[2].len == 6 && !memcmp (w.blobs[2].data, "world!", 6),
        "blob 2");
    ok (w.checkpoint && w.checkpoint_len == strlen (cp)
            && !memcmp (w.checkpoint, cp, w.checkpoint_len),
        "the checkpoint");
    content_write_clear (&w);
    ok (content_write_decode (buf, len, 32, &w) < 0 && errno == EPROTO,
        "decode expecting sha256 digests: EPROTO");
    free (buf);

    ok ((buf = content_write_encode (20, NULL, 0, NULL, 0, &len)) != NULL
            && len == 12,
        "encode nothing: a header");
    ok (content_write_decode (buf, len, 20, &w) == 0 && w.nblobs == 0
            && w.checkpoint == NULL,
        "decodes as no blobs, no checkpoint");
    content_write_clear (&w);
    free (buf);

    ok ((buf = content_write_encode (20, b, 1, NULL, 0, &len)) != NULL
            && content_write_set_lazy (buf, len) == 0
            && content_write_decode (buf, len, 20, &w) == 0 && w.lazy
            && w.nblobs == 1,
        "a write marked lazy decodes lazy");
    content_write_clear (&w);
    free (buf);
    ok ((buf = content_write_encode (20, b, 1, cp, 0, &len)) != NULL
            && content_write_set_lazy (buf, len) < 0 && errno == EINVAL,
        "a write with a checkpoint cannot be lazy: EINVAL");
    ((unsigned char *)buf)[1] |= 2;
    ok (content_write_decode (buf, len, 20, &w) < 0 && errno == EPROTO,
        "a lazy write with a checkpoint does not decode: EPROTO");
    free (buf);
    ok ((buf = content_write_encode (20, b, 1, NULL, 0, &len)) != NULL
            && content_write_decode (buf, len, 20, &w) == 0 && !w.lazy,
        "an ordinary write is not lazy");
    content_write_clear (&w);
    free (buf);

    ok (content_write_encode (0, b, 1, NULL, 0, &len) == NULL
            && errno == EINVAL,
        "encode with digest size 0: EINVAL");
    b[0].data = NULL;
    ok (content_write_encode (20, b, 1, NULL, 0, &len) == NULL
            && errno == EINVAL,
        "encode of NULL data with a length: EINVAL");
}

/* Every prefix of a valid payload, and every single-byte corruption of
 * its header and length fields, fails cleanly (or decodes to something
 * whose pointers stay inside the buffer). */
static void test_malformed (void)
{
    unsigned char d1[20];
    struct content_write_blob b[2] = {{d1, "abc", 3}, {d1, "defgh", 5}};
    struct content_write w;
    size_t len, i;
    unsigned char *buf;
    int bad = 0, outside = 0;

    memset (d1, 9, 20);
    buf = content_write_encode (20, b, 2, "{}", 0, &len);
    if (!buf)
        BAIL_OUT ("encode failed");
    for (i = 0; i < len; i++) {
        if (content_write_decode (buf, i, 20, &w) == 0 || errno != EPROTO)
            bad++;
    }
    ok (bad == 0, "all %zu truncations: EPROTO", len);
    for (i = 0; i < len; i++) {
        unsigned char save = buf[i];
        buf[i] ^= 0xff;
        if (content_write_decode (buf, len, 20, &w) == 0) {
            for (int k = 0; k < w.nblobs; k++) {
                const unsigned char *d = w.blobs[k].data;
                if (d && (d < buf || d + w.blobs[k].len > buf + len))
                    outside++;
            }
            content_write_clear (&w);
        }
        buf[i] = save;
    }
    ok (outside == 0, "corrupted payloads never point outside the buffer");
    {
        unsigned char *big = malloc (len + 1);
        memcpy (big, buf, len);
        big[len] = 0;
        ok (content_write_decode (big, len + 1, 20, &w) < 0 && errno == EPROTO,
            "a trailing byte: EPROTO");
        free (big);
    }
    buf[8] = buf[9] = buf[10] = buf[11] = 0xff;
    ok (content_write_decode (buf, len, 20, &w) < 0 && errno == EPROTO,
        "a huge blob count: EPROTO (no huge allocation)");
    ok (content_write_decode (NULL, 0, 20, &w) < 0 && errno == EPROTO,
        "an empty payload: EPROTO");
    ok (content_write_decode (buf, len, 20, NULL) < 0 && errno == EINVAL,
        "no result struct: EINVAL");
    free (buf);
}

int main (void)
{
    plan (NO_PLAN);
    test_roundtrip ();
    test_malformed ();
    done_testing ();
    return 0;
}
