/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* textbuf.h - a growable NUL-terminated text buffer.
 *
 * Zero-initialize to create.  It grows by doubling (from 256 bytes), so
 * appending n bytes costs O(n) amortized; reset empties it and may keep
 * its memory, so a buffer reused across batches costs no reallocation
 * (and no fresh pages) once it has grown to its working size.
 */
#ifndef FLUX_UTIL_TEXTBUF_H
#define FLUX_UTIL_TEXTBUF_H

#include <stddef.h>

struct textbuf {
    char *data; /* NUL-terminated when size > 0 */
    size_t len;
    size_t size;
};

/* Empty the buffer (keeping its memory unless it grew beyond max). */
void textbuf_reset (struct textbuf *tb, size_t max);
/* Make room for n more bytes and the NUL.  -1/ENOMEM. */
int textbuf_reserve (struct textbuf *tb, size_t n);
int textbuf_append (struct textbuf *tb, const char *s, size_t n);
int textbuf_printf (struct textbuf *tb, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
/* Free the memory; the buffer is empty (and zeroed) again. */
void textbuf_free (struct textbuf *tb);

#endif /* !FLUX_UTIL_TEXTBUF_H */
