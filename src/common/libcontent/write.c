/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* write.c - the content-backing.write payload (see write.h): encoded in
 * one pass into one buffer, decoded by checking every length against
 * what is left before using it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "write.h"

#define HDR_SIZE 12
#define FLAG_CHECKPOINT 1
#define FLAG_LAZY 2

static void put32 (uint8_t *p, uint32_t x)
{
    p[0] = x >> 24;
    p[1] = x >> 16;
    p[2] = x >> 8;
    p[3] = x;
}

static uint32_t get32 (const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8
           | (uint32_t)p[3];
}

void *content_write_encode (int digest_size,
                            const struct content_write_blob *blobs, int n,
                            const char *checkpoint, uint32_t failures,
                            size_t *len)
{
    size_t size = HDR_SIZE, cplen = checkpoint ? strlen (checkpoint) : 0;
    uint8_t *buf, *p;
    int i;

    if (digest_size < 1 || digest_size > 0xffff || n < 0 || (n > 0 && !blobs)
        || !len || cplen > UINT32_MAX) {
        errno = EINVAL;
        return NULL;
    }
    for (i = 0; i < n; i++) {
        if (!blobs[i].digest || (!blobs[i].data && blobs[i].len > 0)
            || blobs[i].len > UINT32_MAX) {
            errno = EINVAL;
            return NULL;
        }
        size += 4 + digest_size + blobs[i].len;
    }
    if (checkpoint)
        size += 4 + cplen;
    if (!(buf = malloc (size)))
        return NULL;
    p = buf;
    p[0] = CONTENT_WRITE_VERSION;
    p[1] = checkpoint ? FLAG_CHECKPOINT : 0;
    p[2] = digest_size >> 8;
    p[3] = digest_size & 0xff;
    put32 (p + 4, failures);
    put32 (p + 8, (uint32_t)n);
    p += HDR_SIZE;
    for (i = 0; i < n; i++) {
        put32 (p, (uint32_t)blobs[i].len);
        memcpy (p + 4, blobs[i].digest, digest_size);
        p += 4 + digest_size;
        if (blobs[i].len > 0)
            memcpy (p, blobs[i].data, blobs[i].len);
        p += blobs[i].len;
    }
    if (checkpoint) {
        put32 (p, (uint32_t)cplen);
        memcpy (p + 4, checkpoint, cplen);
    }
    *len = size;
    return buf;
}

int content_write_set_lazy (void *buf, size_t len)
{
    uint8_t *p = buf;

    if (!buf || len < HDR_SIZE || p[0] != CONTENT_WRITE_VERSION
        || (p[1] & FLAG_CHECKPOINT)) {
        errno = EINVAL;
        return -1;
    }
    p[1] |= FLAG_LAZY;
    return 0;
}

void content_write_clear (struct content_write *w)
{
    if (w) {
        free (w->blobs);
        w->blobs = NULL;
        w->nblobs = 0;
    }
}

int content_write_decode (const void *buf, size_t len, int digest_size,
                          struct content_write *w)
{
    const uint8_t *p = buf;
    size_t left = len;
    uint32_t n, i;
    int flags;

    if ((!buf && len > 0) || !w || digest_size < 1) {
        errno = EINVAL;
        return -1;
    }
    memset (w, 0, sizeof (*w));
    if (left < HDR_SIZE || p[0] != CONTENT_WRITE_VERSION
        || (p[1] & ~(FLAG_CHECKPOINT | FLAG_LAZY)) != 0
        || (p[1] & (FLAG_CHECKPOINT | FLAG_LAZY))
               == (FLAG_CHECKPOINT | FLAG_LAZY)
        || (p[2] << 8 | p[3]) != digest_size)
        goto proto;
    flags = p[1];
    w->lazy = (flags & FLAG_LAZY) != 0;
    w->digest_size = digest_size;
    w->failures = get32 (p + 4);
    n = get32 (p + 8);
    p += HDR_SIZE;
    left -= HDR_SIZE;
    /* every blob takes at least 4 + digest_size bytes: bound n first */
    if (n > left / (4 + (size_t)digest_size) || n > INT32_MAX)
        goto proto;
    if (n > 0 && !(w->blobs = calloc (n, sizeof (*w->blobs))))
        return -1;
    for (i = 0; i < n; i++) {
        size_t blen;
        if (left < 4 + (size_t)digest_size)
            goto proto;
        blen = get32 (p);
        if (blen > left - 4 - digest_size)
            goto proto;
        w->blobs[i].digest = p + 4;
        w->blobs[i].data = blen > 0 ? p + 4 + digest_size : NULL;
        w->blobs[i].len = blen;
        p += 4 + digest_size + blen;
        left -= 4 + digest_size + blen;
    }
    w->nblobs = (int)n;
    if (flags & FLAG_CHECKPOINT) {
        size_t clen;
        if (left < 4 || (clen = get32 (p)) != left - 4 || clen == 0)
            goto proto;
        w->checkpoint = (const char *)p + 4;
        w->checkpoint_len = clen;
        left = 0;
    }
    if (left != 0)
        goto proto;
    return 0;
proto:
    content_write_clear (w);
    errno = EPROTO;
    return -1;
}
