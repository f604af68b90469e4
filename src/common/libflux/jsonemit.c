/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* jsonemit.c - compact JSON text of a jansson value, byte for byte what
 * json_dumps (JSON_COMPACT) writes (jsonemit.h).
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libutil/utf8.h"

#include "jsonemit.h"
#include "jsonplain.h"

#define MAX_DEPTH 2048

struct emitter {
    char *buf;
    size_t len;
    size_t cap;
    bool punt; /* leave this one to json_dumps */
    bool nomem;
};

static bool reserve (struct emitter *e, size_t n)
{
    size_t cap = e->cap ? e->cap : 256;
    char *p;

    if (e->len + n < e->cap)
        return true;
    while (cap <= e->len + n)
        cap *= 2;
    if (!(p = realloc (e->buf, cap))) {
        e->nomem = true;
        return false;
    }
    e->buf = p;
    e->cap = cap;
    return true;
}

static void put (struct emitter *e, const char *s, size_t n)
{
    if (reserve (e, n)) {
        memcpy (e->buf + e->len, s, n);
        e->len += n;
    }
}

static void putc1 (struct emitter *e, char c)
{
    if (reserve (e, 1))
        e->buf[e->len++] = c;
}

static void string (struct emitter *e, const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str, *end = s + len;

    putc1 (e, '"');
    while (s < end) {
        const unsigned char *run = s;
        /* plain printable ASCII, and valid multibyte sequences, as is */
        for (;;) {
            s = json_plain_skip (s, end);
            if (s < end && *s >= 0x80) {
                size_t n = utf8_seqlen (s, end);
                if (n == 0) {
                    e->punt = true; /* jansson refuses it */
                    return;
                }
                s += n;
            }
            else
                break;
        }
        put (e, (const char *)run, (size_t)(s - run));
        if (s < end) {
            char seq[8];
            switch (*s) {
                case '"':
                    put (e, "\\\"", 2);
                    break;
                case '\\':
                    put (e, "\\\\", 2);
                    break;
                case '\b':
                    put (e, "\\b", 2);
                    break;
                case '\f':
                    put (e, "\\f", 2);
                    break;
                case '\n':
                    put (e, "\\n", 2);
                    break;
                case '\r':
                    put (e, "\\r", 2);
                    break;
                case '\t':
                    put (e, "\\t", 2);
                    break;
                default:
                    snprintf (seq, sizeof (seq), "\\u%04X", *s);
                    put (e, seq, 6);
                    break;
            }
            s++;
        }
    }
    putc1 (e, '"');
}

/* A finite real as jansson writes it: %.17g, a ".0" when that looks like
 * an integer, and the exponent without '+' or leading zeros. */
static void real (struct emitter *e, double v)
{
    char buf[64], *p;
    int n;

    if (!isfinite (v)) {
        e->punt = true;
        return;
    }
    n = snprintf (buf, sizeof (buf), "%.17g", v);
    if (n < 0 || (size_t)n >= sizeof (buf) - 3) {
        e->punt = true;
        return;
    }
    for (p = buf; *p; p++)
        if (*p != '-' && *p != '+' && *p != 'e' && (*p < '0' || *p > '9')) {
            if (*p == ',' || *p == '.')
                *p = '.'; /* a locale's radix */
            else {
                e->punt = true;
                return;
            }
        }
    if (!strchr (buf, '.') && !strchr (buf, 'e')) {
        memcpy (buf + n, ".0", 3);
        n += 2;
    }
    if ((p = strchr (buf, 'e'))) {
        char *start = p + 1, *q;
        if (*start == '-')
            start++;
        q = start;
        if (*q == '+')
            q++;
        while (*q == '0' && q[1] != '\0')
            q++;
        if (q != start) {
            memmove (start, q, strlen (q) + 1);
            n = (int)strlen (buf);
        }
    }
    put (e, buf, (size_t)n);
}

static void value (struct emitter *e, const json_t *o, int depth)
{
    char num[32];
    int n;

    if (e->punt || e->nomem)
        return;
    if (depth > MAX_DEPTH) {
        e->punt = true;
        return;
    }
    switch (json_typeof (o)) {
        case JSON_OBJECT: {
            const char *key;
            size_t keylen;
            json_t *v;
            bool first = true;
            putc1 (e, '{');
            json_object_keylen_foreach ((json_t *)o, key, keylen, v)
            {
                if (!first)
                    putc1 (e, ',');
                first = false;
                string (e, key, keylen);
                putc1 (e, ':');
                value (e, v, depth + 1);
                if (e->punt || e->nomem)
                    return;
            }
            putc1 (e, '}');
            break;
        }
        case JSON_ARRAY: {
            size_t i, size = json_array_size (o);
            putc1 (e, '[');
            for (i = 0; i < size; i++) {
                if (i > 0)
                    putc1 (e, ',');
                value (e, json_array_get (o, i), depth + 1);
                if (e->punt || e->nomem)
                    return;
            }
            putc1 (e, ']');
            break;
        }
        case JSON_STRING:
            string (e, json_string_value (o), json_string_length (o));
            break;
        case JSON_INTEGER:
            n = snprintf (num, sizeof (num), "%" JSON_INTEGER_FORMAT,
                          json_integer_value (o));
            put (e, num, (size_t)n);
            break;
        case JSON_REAL:
            real (e, json_real_value (o));
            break;
        case JSON_TRUE:
            put (e, "true", 4);
            break;
        case JSON_FALSE:
            put (e, "false", 5);
            break;
        case JSON_NULL:
            put (e, "null", 4);
            break;
        default:
            e->punt = true;
            break;
    }
}

char *jsonemit (const json_t *o, size_t flags, size_t *lenp)
{
    struct emitter e = {0};

    if (!o || (flags & ~(size_t)(JSON_COMPACT | JSON_ENCODE_ANY))
        || !(flags & JSON_COMPACT)) {
        errno = EINVAL;
        return NULL;
    }
    if (!(flags & JSON_ENCODE_ANY) && !json_is_object (o)
        && !json_is_array (o)) {
        errno = EINVAL;
        return NULL;
    }
    value (&e, o, 1);
    if (e.nomem) {
        free (e.buf);
        errno = ENOMEM;
        return NULL;
    }
    if (e.punt) {
        char *s;
        free (e.buf);
        if (!(s = json_dumps (o, flags))) {
            errno = EINVAL;
            return NULL;
        }
        if (lenp)
            *lenp = strlen (s);
        return s;
    }
    if (!reserve (&e, 1)) {
        free (e.buf);
        errno = ENOMEM;
        return NULL;
    }
    e.buf[e.len] = '\0';
    if (lenp)
        *lenp = e.len;
    return e.buf;
}
