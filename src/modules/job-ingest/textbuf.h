/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* textbuf.h - a growable NUL-terminated text buffer, kept and reused
 * across batches so that writing a large request costs no reallocation
 * (and no fresh pages) once the buffer has grown to its working size.
 */
#ifndef JOB_INGEST_TEXTBUF_H
#define JOB_INGEST_TEXTBUF_H

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
/* Append the RFC 4648 base64 encoding of len bytes of data. */
int textbuf_append_base64 (struct textbuf *tb, const void *data, size_t len);
void textbuf_free (struct textbuf *tb);

#endif /* !JOB_INGEST_TEXTBUF_H */
