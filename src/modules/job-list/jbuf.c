/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* jbuf.c - JSON text writer (see jbuf.h). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jbuf.h"

void jbuf_init (struct jbuf *b)
{
    memset (b, 0, sizeof (*b));
}

void jbuf_free (struct jbuf *b)
{
    if (b) {
        int saved_errno = errno;
        textbuf_free (&b->t);
        jbuf_init (b);
        errno = saved_errno;
    }
}

void jbuf_reset (struct jbuf *b)
{
    b->t.len = 0;
    b->errnum = 0;
}

/* Make room for n more bytes plus the NUL. */
static int reserve (struct jbuf *b, size_t n)
{
    if (b->errnum)
        return -1;
    if (textbuf_reserve (&b->t, n) < 0) {
        b->errnum = ENOMEM;
        return -1;
    }
    return 0;
}

void jbuf_raw (struct jbuf *b, const char *s, size_t len)
{
    if (!b->errnum && textbuf_append (&b->t, s, len) < 0)
        b->errnum = ENOMEM;
}

void jbuf_rawz (struct jbuf *b, const char *s)
{
    jbuf_raw (b, s, strlen (s));
}

void jbuf_char (struct jbuf *b, char c)
{
    if (reserve (b, 1) < 0)
        return;
    b->t.data[b->t.len++] = c;
    b->t.data[b->t.len] = '\0';
}

void jbuf_str (struct jbuf *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const char *run = s;

    jbuf_char (b, '"');
    for (; *s; s++) {
        unsigned char c = *s;
        char esc[6];
        size_t n = 2;

        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        jbuf_raw (b, run, s - run);
        run = s + 1;
        esc[0] = '\\';
        switch (c) {
            case '"':
                esc[1] = '"';
                break;
            case '\\':
                esc[1] = '\\';
                break;
            case '\n':
                esc[1] = 'n';
                break;
            case '\t':
                esc[1] = 't';
                break;
            case '\r':
                esc[1] = 'r';
                break;
            case '\b':
                esc[1] = 'b';
                break;
            case '\f':
                esc[1] = 'f';
                break;
            default:
                memcpy (esc + 1, "u00", 3);
                esc[4] = hex[c >> 4];
                esc[5] = hex[c & 15];
                n = 6;
                break;
        }
        jbuf_raw (b, esc, n);
    }
    jbuf_raw (b, run, s - run);
    jbuf_char (b, '"');
}

/* Decimal digits of u, written backwards ending at end; returns start. */
static char *digits (char *end, uint64_t u)
{
    do
        *--end = '0' + u % 10;
    while ((u /= 10) > 0);
    return end;
}

void jbuf_int (struct jbuf *b, int64_t i)
{
    char tmp[24], *p;

    p = digits (tmp + sizeof (tmp), i < 0 ? -(uint64_t)i : (uint64_t)i);
    if (i < 0)
        *--p = '-';
    jbuf_raw (b, p, tmp + sizeof (tmp) - p);
}

void jbuf_uint (struct jbuf *b, uint64_t u)
{
    char tmp[24], *p = digits (tmp + sizeof (tmp), u);
    jbuf_raw (b, p, tmp + sizeof (tmp) - p);
}

void jbuf_real (struct jbuf *b, double d)
{
    char tmp[40];
    int n;

    if (!isfinite (d)) {
        if (!b->errnum)
            b->errnum = EDOM;
        return;
    }
    /* Timestamps usually have microsecond digits: if d is exactly the
     * double nearest to m / 10^6, that decimal reads back as d (both are
     * correctly rounded), and is cheap to write.
     */
    if (d >= 0. && d < 1e9 * 1e3) {
        double m = nearbyint (d * 1e6);
        if (m / 1e6 == d) {
            uint64_t u = (uint64_t)m, frac = u % 1000000;
            char *p = tmp + sizeof (tmp), *end = p;
            int nd = 6;
            while (nd > 1 && frac % 10 == 0)
                frac /= 10, nd--;
            for (int k = 0; k < nd; k++, frac /= 10)
                *--p = '0' + frac % 10;
            *--p = '.';
            p = digits (p, u / 1000000);
            jbuf_raw (b, p, end - p);
            return;
        }
    }
    n = snprintf (tmp, sizeof (tmp), "%.17g", d);
    if (!strpbrk (tmp, ".eE")) {
        memcpy (tmp + n, ".0", 3);
        n += 2;
    }
    jbuf_raw (b, tmp, n);
}

void jbuf_bool (struct jbuf *b, int v)
{
    jbuf_rawz (b, v ? "true" : "false");
}

static int dump_cb (const char *buf, size_t size, void *arg)
{
    struct jbuf *b = arg;
    jbuf_raw (b, buf, size);
    return b->errnum ? -1 : 0;
}

void jbuf_json (struct jbuf *b, const json_t *o)
{
    if (b->errnum)
        return;
    if (json_dump_callback (o, dump_cb, b, JSON_COMPACT | JSON_ENCODE_ANY) < 0
        && !b->errnum)
        b->errnum = EINVAL;
}

void jbuf_key (struct jbuf *b, const char *name, int *first)
{
    if (!*first)
        jbuf_char (b, ',');
    *first = 0;
    jbuf_str (b, name);
    jbuf_char (b, ':');
}

const char *jbuf_get (struct jbuf *b)
{
    if (b->errnum) {
        errno = b->errnum;
        return NULL;
    }
    if (!b->t.data && reserve (b, 0) < 0) {
        errno = b->errnum;
        return NULL;
    }
    b->t.data[b->t.len] = '\0';
    return b->t.data;
}

int jbuf_error (const struct jbuf *b)
{
    return b->errnum;
}
