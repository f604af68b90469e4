/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_TEST_STRPOS_H
#define FLUX_TEST_STRPOS_H

/* Test helper: strings of plain letters with one special byte sequence
 * at a chosen position, to exercise code that scans strings a word at a
 * time (jsonparse.c, jsonemit.c) at every offset of a word. */
#include <string.h>

/* Write len plain letters into buf with special inserted before letter
 * pos (0 <= pos <= len); returns the bytes written (no NUL).  buf must
 * hold len + strlen (special) bytes. */
static inline size_t strpos_build (char *buf, int len, int pos,
                                   const char *special)
{
    size_t off = 0, sl = strlen (special);

    for (int i = 0; i < pos; i++)
        buf[off++] = 'A' + i % 26;
    memcpy (buf + off, special, sl);
    off += sl;
    for (int i = pos; i < len; i++)
        buf[off++] = 'a' + i % 26;
    return off;
}

#endif /* !FLUX_TEST_STRPOS_H */
