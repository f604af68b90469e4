/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* jsonparse.c - a recursive descent JSON decoder into jansson objects
 * (jsonparse.h).  Strings without escapes are scanned in place and copied
 * once; strings with escapes are decoded into one reused buffer.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libutil/utf8.h"

#include "jsonparse.h"
#include "jsonplain.h"

#define MAX_DEPTH 2048

struct parser {
    const unsigned char *start, *p, *end;
    int depth;
    bool reject_dups;
    char *error;
    size_t errsize;
    char *buf; /* decoded strings with escapes */
    size_t bufsize;
};

/* Record the first error, with its offset; returns NULL. */
static void *fail (struct parser *ps, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static void *fail (struct parser *ps, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (!ps->error || ps->errsize == 0 || ps->error[0])
        return NULL;
    va_start (ap, fmt);
    n = vsnprintf (ps->error, ps->errsize, fmt, ap);
    va_end (ap);
    if (n >= 0 && (size_t)n < ps->errsize)
        snprintf (ps->error + n, ps->errsize - n, " at offset %zu",
                  (size_t)(ps->p - ps->start));
    return NULL;
}

static void *nomem (struct parser *ps)
{
    errno = ENOMEM;
    return fail (ps, "out of memory");
}

static void skip_ws (struct parser *ps)
{
    while (ps->p < ps->end
           && (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\r'
               || *ps->p == '\t'))
        ps->p++;
}

static bool reserve (struct parser *ps, size_t need)
{
    size_t size = ps->bufsize ? ps->bufsize : 256;
    char *nbuf;

    if (need <= ps->bufsize)
        return true;
    while (size < need)
        size *= 2;
    if (!(nbuf = realloc (ps->buf, size)))
        return false;
    ps->buf = nbuf;
    ps->bufsize = size;
    return true;
}

static int hex4 (const unsigned char *s)
{
    int v = 0;

    for (int i = 0; i < 4; i++) {
        int d = hexdigit (s[i]);
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* Decode the rest of a string that has escapes, from q (the first
 * backslash) on; s..q is already known to be plain.  The result is in
 * ps->buf (valid until the next string). */
static int string_escaped (struct parser *ps, const unsigned char *s,
                           const unsigned char *q, const char **out,
                           size_t *outlen)
{
    size_t len = (size_t)(q - s);

    if (!reserve (ps, len + 8)) {
        nomem (ps);
        return -1;
    }
    memcpy (ps->buf, s, len);
    for (;;) {
        unsigned c;
        if (!reserve (ps, len + 8)) {
            nomem (ps);
            return -1;
        }
        if (q >= ps->end) {
            ps->p = q;
            fail (ps, "premature end of input in a string");
            return -1;
        }
        c = *q;
        if (c == '"')
            break;
        if (c < 0x20) {
            ps->p = q;
            fail (ps, "control character 0x%x in a string", c);
            return -1;
        }
        if (c >= 0x80) {
            size_t n = utf8_seqlen (q, ps->end);
            if (n == 0) {
                ps->p = q;
                fail (ps, "invalid UTF-8 in a string");
                return -1;
            }
            memcpy (ps->buf + len, q, n);
            len += n;
            q += n;
            continue;
        }
        if (c != '\\') {
            ps->buf[len++] = (char)c;
            q++;
            continue;
        }
        ps->p = q;
        if (++q >= ps->end) {
            fail (ps, "premature end of input in a string");
            return -1;
        }
        switch (*q) {
            case '"':
            case '\\':
            case '/':
                ps->buf[len++] = (char)*q++;
                break;
            case 'b':
                ps->buf[len++] = '\b';
                q++;
                break;
            case 'f':
                ps->buf[len++] = '\f';
                q++;
                break;
            case 'n':
                ps->buf[len++] = '\n';
                q++;
                break;
            case 'r':
                ps->buf[len++] = '\r';
                q++;
                break;
            case 't':
                ps->buf[len++] = '\t';
                q++;
                break;
            case 'u': {
                int cp, lo;
                if (ps->end - q < 5 || (cp = hex4 (q + 1)) < 0) {
                    fail (ps, "invalid \\u escape");
                    return -1;
                }
                q += 5;
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    if (ps->end - q < 6 || q[0] != '\\' || q[1] != 'u'
                        || (lo = hex4 (q + 2)) < 0 || lo < 0xDC00
                        || lo > 0xDFFF) {
                        fail (ps, "invalid Unicode '\\u%04X'", cp);
                        return -1;
                    }
                    q += 6;
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                }
                else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    fail (ps, "invalid Unicode '\\u%04X'", cp);
                    return -1;
                }
                else if (cp == 0) {
                    fail (ps, "\\u0000 is not allowed");
                    return -1;
                }
                len += utf8_encode (ps->buf + len, (unsigned)cp);
                break;
            }
            default:
                fail (ps, "invalid escape");
                return -1;
        }
    }
    ps->p = q + 1;
    *out = ps->buf;
    *outlen = len;
    return 0;
}

/* A string at ps->p (the opening quote).  *out points into the input, or
 * into ps->buf when the string had escapes. */
static int string (struct parser *ps, const char **out, size_t *outlen)
{
    const unsigned char *s = ps->p + 1, *q = s;

    for (;;) {
        q = json_plain_skip (q, ps->end);
        if (q >= ps->end) {
            ps->p = q;
            fail (ps, "premature end of input in a string");
            return -1;
        }
        if (*q == '"') {
            *out = (const char *)s;
            *outlen = (size_t)(q - s);
            ps->p = q + 1;
            return 0;
        }
        if (*q == '\\')
            return string_escaped (ps, s, q, out, outlen);
        if (*q < 0x20) {
            ps->p = q;
            fail (ps, "control character 0x%x in a string", *q);
            return -1;
        }
        size_t n = utf8_seqlen (q, ps->end);
        if (n == 0) {
            ps->p = q;
            fail (ps, "invalid UTF-8 in a string");
            return -1;
        }
        q += n;
    }
}

static bool digit (struct parser *ps)
{
    return ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9';
}

static json_t *number (struct parser *ps)
{
    const unsigned char *s = ps->p;
    bool real = false;
    char small[64], *text = small;
    size_t len;
    json_t *o = NULL;

    if (*ps->p == '-')
        ps->p++;
    if (!digit (ps))
        return fail (ps, "invalid number");
    if (*ps->p == '0')
        ps->p++;
    else
        while (digit (ps))
            ps->p++;
    if (ps->p < ps->end && *ps->p == '.') {
        real = true;
        ps->p++;
        if (!digit (ps))
            return fail (ps, "invalid number");
        while (digit (ps))
            ps->p++;
    }
    if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
        real = true;
        ps->p++;
        if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
            ps->p++;
        if (!digit (ps))
            return fail (ps, "invalid number");
        while (digit (ps))
            ps->p++;
    }
    len = (size_t)(ps->p - s);
    if (len >= sizeof (small) && !(text = malloc (len + 1)))
        return nomem (ps);
    memcpy (text, s, len);
    text[len] = '\0';
    if (!real) {
        char *end;
        long long v;
        errno = 0;
        v = strtoll (text, &end, 10);
        if (errno == ERANGE)
            fail (ps, v < 0 ? "too big negative integer" : "too big integer");
        else if (!(o = json_integer (v)))
            nomem (ps);
    }
    else {
        char *end;
        double v;
        errno = 0;
        v = strtod (text, &end);
        if (*end != '\0') {
            /* a locale whose radix is not '.': let jansson convert it */
            json_t *tmp = json_loads (text, JSON_DECODE_ANY, NULL);
            if (!tmp || !json_is_real (tmp))
                fail (ps, "invalid number");
            else
                o = json_incref (tmp);
            json_decref (tmp);
        }
        else if (errno == ERANGE && isinf (v))
            fail (ps, "real number overflow");
        else if (!(o = json_real (v)))
            nomem (ps);
    }
    if (text != small)
        free (text);
    return o;
}

static json_t *value (struct parser *ps);

static json_t *object (struct parser *ps)
{
    json_t *o;

    if (++ps->depth > MAX_DEPTH)
        return fail (ps, "maximum parsing depth reached");
    if (!(o = json_object ()))
        return nomem (ps);
    ps->p++;
    skip_ws (ps);
    if (ps->p < ps->end && *ps->p == '}') {
        ps->p++;
        ps->depth--;
        return o;
    }
    for (;;) {
        const char *key;
        char *copy = NULL;
        size_t keylen;
        json_t *v;

        skip_ws (ps);
        if (ps->p >= ps->end || *ps->p != '"') {
            fail (ps, "string or '}' expected");
            goto error;
        }
        if (string (ps, &key, &keylen) < 0)
            goto error;
        if (key == ps->buf) { /* the value's strings would reuse buf */
            if (!(copy = malloc (keylen + 1))) {
                nomem (ps);
                goto error;
            }
            memcpy (copy, key, keylen);
            key = copy;
        }
        skip_ws (ps);
        if (ps->p >= ps->end || *ps->p != ':') {
            free (copy);
            fail (ps, "':' expected");
            goto error;
        }
        ps->p++;
        if (!(v = value (ps))) {
            free (copy);
            goto error;
        }
        if (ps->reject_dups && json_object_getn (o, key, keylen)) {
            json_decref (v);
            free (copy);
            fail (ps, "duplicate object key");
            goto error;
        }
        if (json_object_setn_new_nocheck (o, key, keylen, v) < 0) {
            free (copy);
            nomem (ps);
            goto error;
        }
        free (copy);
        skip_ws (ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == '}') {
            ps->p++;
            break;
        }
        fail (ps, "',' or '}' expected");
        goto error;
    }
    ps->depth--;
    return o;
error:
    json_decref (o);
    return NULL;
}

static json_t *array (struct parser *ps)
{
    json_t *a;

    if (++ps->depth > MAX_DEPTH)
        return fail (ps, "maximum parsing depth reached");
    if (!(a = json_array ()))
        return nomem (ps);
    ps->p++;
    skip_ws (ps);
    if (ps->p < ps->end && *ps->p == ']') {
        ps->p++;
        ps->depth--;
        return a;
    }
    for (;;) {
        json_t *v;

        if (!(v = value (ps)))
            goto error;
        if (json_array_append_new (a, v) < 0) {
            nomem (ps);
            goto error;
        }
        skip_ws (ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == ']') {
            ps->p++;
            break;
        }
        fail (ps, "',' or ']' expected");
        goto error;
    }
    ps->depth--;
    return a;
error:
    json_decref (a);
    return NULL;
}

static json_t *literal (struct parser *ps, const char *word, json_t *o)
{
    size_t n = strlen (word);

    if ((size_t)(ps->end - ps->p) < n || memcmp (ps->p, word, n) != 0)
        return fail (ps, "invalid token");
    ps->p += n;
    return o;
}

static json_t *value (struct parser *ps)
{
    skip_ws (ps);
    if (ps->p >= ps->end)
        return fail (ps, "premature end of input");
    switch (*ps->p) {
        case '{':
            return object (ps);
        case '[':
            return array (ps);
        case '"': {
            const char *s;
            size_t len;
            json_t *o;
            if (string (ps, &s, &len) < 0)
                return NULL;
            if (!(o = json_stringn_nocheck (s, len)))
                return nomem (ps);
            return o;
        }
        case 't':
            return literal (ps, "true", json_true ());
        case 'f':
            return literal (ps, "false", json_false ());
        case 'n':
            return literal (ps, "null", json_null ());
        default:
            if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9'))
                return number (ps);
            return fail (ps, "invalid token");
    }
}

json_t *jsonparse_ex (const char *buf, size_t len, size_t flags, char *error,
                      size_t errsize)
{
    struct parser ps = {
        .start = (const unsigned char *)buf,
        .p = (const unsigned char *)buf,
        .end = (const unsigned char *)buf + len,
        .reject_dups = (flags & JSON_REJECT_DUPLICATES) != 0,
        .error = error,
        .errsize = errsize,
    };
    json_t *o = NULL;

    if (error && errsize > 0)
        error[0] = '\0';
    if (flags & ~(size_t)JSON_REJECT_DUPLICATES) {
        errno = EINVAL;
        return fail (&ps, "unsupported flags");
    }
    if (!buf) {
        errno = EINVAL;
        return fail (&ps, "no input");
    }
    skip_ws (&ps);
    if (ps.p >= ps.end || (*ps.p != '{' && *ps.p != '[')) {
        fail (&ps, "'[' or '{' expected");
        goto done;
    }
    if (!(o = value (&ps)))
        goto done;
    skip_ws (&ps);
    if (ps.p != ps.end) {
        json_decref (o);
        o = NULL;
        fail (&ps, "end of file expected");
    }
done:
    free (ps.buf);
    return o;
}

json_t *jsonparse (const char *buf, size_t len, char *error, size_t errsize)
{
    return jsonparse_ex (buf, len, 0, error, errsize);
}
