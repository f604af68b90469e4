/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* textbuf.c - growable text buffer (see textbuf.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "textbuf.h"

void textbuf_reset (struct textbuf *tb, size_t max)
{
    if (tb->size > max) {
        free (tb->data);
        tb->data = NULL;
        tb->size = 0;
    }
    tb->len = 0;
    if (tb->data)
        tb->data[0] = '\0';
}

int textbuf_reserve (struct textbuf *tb, size_t n)
{
    size_t need = tb->len + n + 1;
    size_t size = tb->size ? tb->size : 256;
    char *p;

    if (need <= tb->size)
        return 0;
    while (size < need)
        size *= 2;
    if (!(p = realloc (tb->data, size))) {
        errno = ENOMEM;
        return -1;
    }
    tb->data = p;
    tb->size = size;
    return 0;
}

int textbuf_append (struct textbuf *tb, const char *s, size_t n)
{
    if (textbuf_reserve (tb, n) < 0)
        return -1;
    memcpy (tb->data + tb->len, s, n);
    tb->len += n;
    tb->data[tb->len] = '\0';
    return 0;
}

int textbuf_printf (struct textbuf *tb, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start (ap, fmt);
    n = vsnprintf (tb->data ? tb->data + tb->len : NULL,
                   tb->size ? tb->size - tb->len : 0, fmt, ap);
    va_end (ap);
    if (n < 0)
        return -1;
    if (tb->len + n + 1 > tb->size) {
        if (textbuf_reserve (tb, n) < 0)
            return -1;
        va_start (ap, fmt);
        n = vsnprintf (tb->data + tb->len, tb->size - tb->len, fmt, ap);
        va_end (ap);
        if (n < 0)
            return -1;
    }
    tb->len += n;
    return 0;
}

void textbuf_free (struct textbuf *tb)
{
    free (tb->data);
    tb->data = NULL;
    tb->len = tb->size = 0;
}
