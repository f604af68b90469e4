/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* toml.c - a strict TOML v1.0 reader (toml.h).
 *
 * One pass, recursive descent, building the JSON tree as it reads.  What
 * TOML says about redefinition needs to know how each table came to be,
 * which a json_t cannot carry, so a small pointer map holds a few flags
 * per table and per array of tables:
 *   EXPLICIT  defined by its own [header] (or is an [[element]])
 *   DOTTED    created by a dotted key (a.b = 1 creates table a)
 *   STATIC    an inline table: nothing may be added to it afterwards
 *   AOT       an array made by [[header]] (other arrays are static)
 * A table with no flag was created on the way to a [header] (implicitly)
 * and may still be defined once by its own [header], unless dotted keys
 * add to it first (it becomes DOTTED, as Python's tomllib has it).  Dotted
 * keys may walk through DOTTED and implicit tables, [headers] through any
 * table but a STATIC one.
 *
 * Recursion is only into arrays and inline tables, and the nesting of the
 * resulting JSON (tables, dotted keys, arrays) is bounded by
 * TOML_MAX_DEPTH, so neither the reader nor jansson's recursive freeing
 * can run out of stack.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toml.h"

enum { F_EXPLICIT = 1, F_DOTTED = 2, F_STATIC = 4, F_AOT = 8 };

struct flagmap {
    const void **keys;
    unsigned char *vals;
    size_t size; /* a power of 2, or 0 */
    size_t count;
};

struct buf {
    char *data;
    size_t len, cap;
};

struct keypath {
    char **parts;
    size_t count, cap;
    const char *at; /* where the key starts in the text */
};

struct parser {
    const char *start, *p, *end;
    toml_error_t *error;
    struct flagmap flags;
    json_t *root;
    json_t *cur; /* the table key/values go to */
    int cur_depth;
};

/* ---- errors ---- */

static int fail (struct parser *P, const char *at, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static int fail (struct parser *P, const char *at, const char *fmt, ...)
{
    if (P->error) {
        int line = 1, col = 1;
        va_list ap;

        if (at > P->end)
            at = P->end;
        for (const char *q = P->start; q < at; q++) {
            if (*q == '\n') {
                line++;
                col = 1;
            }
            else if (((unsigned char)*q & 0xC0) != 0x80)
                col++;
        }
        P->error->line = line;
        P->error->column = col;
        va_start (ap, fmt);
        vsnprintf (P->error->text, sizeof (P->error->text), fmt, ap);
        va_end (ap);
    }
    errno = EINVAL;
    return -1;
}

static int oom (struct parser *P)
{
    if (P->error) {
        P->error->line = 0;
        P->error->column = 0;
        snprintf (P->error->text, sizeof (P->error->text), "out of memory");
    }
    errno = ENOMEM;
    return -1;
}

/* ---- the flag map (open addressing, keys are pointers) ---- */

static size_t slot (const struct flagmap *m, const void *key)
{
    uint64_t h = ((uint64_t)(uintptr_t)key >> 4) * 0x9E3779B97F4A7C15ull;
    size_t i = (size_t)(h >> 32) & (m->size - 1);

    while (m->keys[i] && m->keys[i] != key)
        i = (i + 1) & (m->size - 1);
    return i;
}

static int flags_get (struct parser *P, const json_t *o)
{
    if (P->flags.size == 0)
        return 0;
    size_t i = slot (&P->flags, o);
    return P->flags.keys[i] ? P->flags.vals[i] : 0;
}

static int flags_set (struct parser *P, const json_t *o, int flags)
{
    struct flagmap *m = &P->flags;
    size_t i;

    if ((m->count + 1) * 2 > m->size) {
        struct flagmap n = {.size = m->size ? m->size * 2 : 64};
        if (!(n.keys = calloc (n.size, sizeof (*n.keys)))
            || !(n.vals = calloc (n.size, sizeof (*n.vals)))) {
            free (n.keys);
            return oom (P);
        }
        for (size_t j = 0; j < m->size; j++)
            if (m->keys[j]) {
                size_t k = slot (&n, m->keys[j]);
                n.keys[k] = m->keys[j];
                n.vals[k] = m->vals[j];
                n.count++;
            }
        free (m->keys);
        free (m->vals);
        *m = n;
    }
    i = slot (m, o);
    if (!m->keys[i]) {
        m->keys[i] = o;
        m->count++;
    }
    m->vals[i] = (unsigned char)flags;
    return 0;
}

/* ---- buffers and key paths ---- */

static int buf_add (struct parser *P, struct buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 32;
        char *d;
        while (cap < b->len + n + 1)
            cap *= 2;
        if (!(d = realloc (b->data, cap)))
            return oom (P);
        b->data = d;
        b->cap = cap;
    }
    memcpy (b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

static int buf_utf8 (struct parser *P, struct buf *b, uint32_t c)
{
    char s[4];
    size_t n;

    if (c < 0x80) {
        s[0] = (char)c;
        n = 1;
    }
    else if (c < 0x800) {
        s[0] = (char)(0xC0 | (c >> 6));
        s[1] = (char)(0x80 | (c & 0x3F));
        n = 2;
    }
    else if (c < 0x10000) {
        s[0] = (char)(0xE0 | (c >> 12));
        s[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        s[2] = (char)(0x80 | (c & 0x3F));
        n = 3;
    }
    else {
        s[0] = (char)(0xF0 | (c >> 18));
        s[1] = (char)(0x80 | ((c >> 12) & 0x3F));
        s[2] = (char)(0x80 | ((c >> 6) & 0x3F));
        s[3] = (char)(0x80 | (c & 0x3F));
        n = 4;
    }
    return buf_add (P, b, s, n);
}

static void keypath_clear (struct keypath *kp)
{
    for (size_t i = 0; i < kp->count; i++)
        free (kp->parts[i]);
    free (kp->parts);
    memset (kp, 0, sizeof (*kp));
}

/* The first n parts of kp joined by dots, for messages (static). */
static const char *keyname (const struct keypath *kp, size_t n)
{
    static __thread char s[100];
    size_t len = 0;

    s[0] = '\0';
    for (size_t i = 0; i < n && len < sizeof (s); i++)
        len += (size_t)snprintf (s + len, sizeof (s) - len, "%s%s",
                                 i ? "." : "", kp->parts[i]);
    return s;
}

/* ---- the lexer ---- */

static int peek (const struct parser *P)
{
    return P->p < P->end ? (unsigned char)*P->p : -1;
}

static bool looking_at (const struct parser *P, const char *s)
{
    size_t n = strlen (s);
    return (size_t)(P->end - P->p) >= n && !memcmp (P->p, s, n);
}

static void skip_ws (struct parser *P)
{
    while (P->p < P->end && (*P->p == ' ' || *P->p == '\t'))
        P->p++;
}

static bool newline (struct parser *P)
{
    if (looking_at (P, "\n")) {
        P->p++;
        return true;
    }
    if (looking_at (P, "\r\n")) {
        P->p += 2;
        return true;
    }
    return false;
}

/* Control characters TOML forbids in comments and strings. */
static bool is_control (int c)
{
    return (c >= 0 && c < 0x20 && c != '\t') || c == 0x7F;
}

/* A comment, if there is one, up to (not including) its newline. */
static int skip_comment (struct parser *P)
{
    if (peek (P) != '#')
        return 0;
    while (P->p < P->end && *P->p != '\n') {
        if (looking_at (P, "\r\n"))
            break;
        if (is_control ((unsigned char)*P->p))
            return fail (P, P->p, "a control character in a comment");
        P->p++;
    }
    return 0;
}

/* Whitespace, comments and newlines (inside arrays). */
static int skip_wcn (struct parser *P)
{
    for (;;) {
        skip_ws (P);
        if (skip_comment (P) < 0)
            return -1;
        if (!newline (P))
            return 0;
    }
}

/* The rest of a line after a key/value or a header. */
static int end_of_line (struct parser *P, const char *what)
{
    skip_ws (P);
    if (skip_comment (P) < 0)
        return -1;
    if (P->p == P->end || newline (P))
        return 0;
    if (*P->p == '\r')
        return fail (P, P->p, "a carriage return not followed by a newline");
    return fail (P, P->p, "expected the end of the line after %s", what);
}

/* What may follow a scalar value. */
static bool at_delim (const struct parser *P)
{
    int c = peek (P);
    return c < 0 || c == ' ' || c == '\t' || c == '#' || c == '\n' || c == '\r'
           || c == ',' || c == ']' || c == '}';
}

static bool is_bare (int c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
           || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

static bool is_digit (int c)
{
    return c >= '0' && c <= '9';
}

static int hexval (int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The whole text is UTF-8 without NUL, checked once before parsing. */
static int check_utf8 (struct parser *P)
{
    const unsigned char *s = (const unsigned char *)P->start;
    const unsigned char *e = (const unsigned char *)P->end;

    while (s < e) {
        uint32_t c = *s, min;
        int n;

        if (c == 0)
            return fail (P, (const char *)s, "a NUL byte");
        if (c < 0x80) {
            s++;
            continue;
        }
        if ((c & 0xE0) == 0xC0)
            n = 1, c &= 0x1F, min = 0x80;
        else if ((c & 0xF0) == 0xE0)
            n = 2, c &= 0x0F, min = 0x800;
        else if ((c & 0xF8) == 0xF0)
            n = 3, c &= 0x07, min = 0x10000;
        else
            return fail (P, (const char *)s, "invalid UTF-8");
        if (e - s <= n)
            return fail (P, (const char *)s, "invalid UTF-8");
        for (int i = 1; i <= n; i++) {
            if ((s[i] & 0xC0) != 0x80)
                return fail (P, (const char *)s, "invalid UTF-8");
            c = (c << 6) | (s[i] & 0x3F);
        }
        if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
            return fail (P, (const char *)s, "invalid UTF-8");
        s += n + 1;
    }
    return 0;
}

/* ---- strings ---- */

static int escape (struct parser *P, struct buf *b)
{
    const char *at = P->p; /* at the backslash */
    int c, n = 0;
    uint32_t u = 0;

    P->p++;
    switch ((c = peek (P))) {
        case 'b':
            P->p++;
            return buf_add (P, b, "\b", 1);
        case 't':
            P->p++;
            return buf_add (P, b, "\t", 1);
        case 'n':
            P->p++;
            return buf_add (P, b, "\n", 1);
        case 'f':
            P->p++;
            return buf_add (P, b, "\f", 1);
        case 'r':
            P->p++;
            return buf_add (P, b, "\r", 1);
        case '"':
            P->p++;
            return buf_add (P, b, "\"", 1);
        case '\\':
            P->p++;
            return buf_add (P, b, "\\", 1);
        case 'u':
            n = 4;
            break;
        case 'U':
            n = 8;
            break;
        default:
            return fail (P, at, "an invalid escape sequence");
    }
    P->p++;
    for (int i = 0; i < n; i++) {
        int v = hexval (peek (P));
        if (v < 0)
            return fail (P, at, "\\%c needs %d hexadecimal digits", c, n);
        u = (u << 4) | (uint32_t)v;
        P->p++;
    }
    if (u > 0x10FFFF || (u >= 0xD800 && u <= 0xDFFF))
        return fail (P, at, "\\%c%.*s is not a Unicode scalar value", c, n,
                     at + 2);
    return buf_utf8 (P, b, u);
}

/* A run of closing quotes in a multi-line string: 1-2 are content, 3-5
 * end it (the first 0-2 being content), more is an error.  Returns 1 at
 * the end, 0 to go on. */
static int ml_quotes (struct parser *P, struct buf *b, char q)
{
    const char *at = P->p;
    size_t n = 0;

    while (P->p < P->end && *P->p == q)
        P->p++, n++;
    if (n > 5)
        return fail (P, at, "too many quotes at the end of a string");
    if (buf_add (P, b, at, n < 3 ? n : n - 3) < 0)
        return -1;
    return n >= 3 ? 1 : 0;
}

/* One string of any of the four kinds; multi-line ones only if ml. */
static int parse_string (struct parser *P, bool ml, struct buf *b)
{
    const char *at = P->p;
    char q = *P->p;
    bool multi = false;
    int rc;

    b->len = 0;
    if (buf_add (P, b, "", 0) < 0)
        return -1;
    if ((q == '"' && looking_at (P, "\"\"\""))
        || (q == '\'' && looking_at (P, "'''"))) {
        if (!ml)
            return fail (P, at, "a multi-line string cannot be a key");
        multi = true;
        P->p += 3;
        (void)newline (P); /* a newline right after the quotes is trimmed */
    }
    else
        P->p++;
    for (;;) {
        int c = peek (P);
        if (c < 0)
            return fail (P, at, "an unterminated string");
        if (multi && c == q) {
            if ((rc = ml_quotes (P, b, q)) != 0)
                return rc < 0 ? -1 : 0;
            continue;
        }
        if (!multi && c == q) {
            P->p++;
            return 0;
        }
        if (c == '\n' || c == '\r') {
            if (!multi)
                return fail (P, at, "an unterminated string");
            if (!newline (P))
                return fail (P, P->p, "a carriage return in a string");
            if (buf_add (P, b, "\n", 1) < 0)
                return -1;
            continue;
        }
        if (is_control (c))
            return fail (P, P->p, "a control character in a string");
        if (c == '\\' && q == '"') {
            if (multi) { /* a line-ending backslash */
                const char *s = P->p + 1;
                while (s < P->end && (*s == ' ' || *s == '\t'))
                    s++;
                if (s < P->end && (*s == '\n' || *s == '\r')) {
                    P->p = s;
                    for (;;) {
                        skip_ws (P);
                        if (!newline (P))
                            break;
                    }
                    if (peek (P) == '\r')
                        return fail (P, P->p, "a carriage return in a string");
                    continue;
                }
            }
            if (escape (P, b) < 0)
                return -1;
            continue;
        }
        if (buf_add (P, b, P->p, 1) < 0)
            return -1;
        P->p++;
    }
}

/* ---- keys ---- */

static int parse_simple_key (struct parser *P, struct buf *b)
{
    int c = peek (P);

    if (c == '"' || c == '\'') {
        const char *at = P->p;
        if (parse_string (P, false, b) < 0)
            return -1;
        if (memchr (b->data, '\0', b->len))
            return fail (P, at, "a key may not contain U+0000");
        return 0;
    }
    if (!is_bare (c))
        return fail (P, P->p, "expected a key");
    b->len = 0;
    const char *s = P->p;
    while (is_bare (peek (P)))
        P->p++;
    return buf_add (P, b, s, (size_t)(P->p - s));
}

/* A dotted key: simple keys separated by dots (whitespace around them). */
static int parse_key (struct parser *P, struct keypath *kp, struct buf *b)
{
    kp->at = P->p;
    for (;;) {
        skip_ws (P);
        if (parse_simple_key (P, b) < 0)
            return -1;
        if (kp->count == kp->cap) {
            size_t cap = kp->cap ? kp->cap * 2 : 4;
            char **v = realloc (kp->parts, cap * sizeof (*v));
            if (!v)
                return oom (P);
            kp->parts = v;
            kp->cap = cap;
        }
        if (!(kp->parts[kp->count] = strdup (b->data)))
            return oom (P);
        kp->count++;
        if (kp->count > TOML_MAX_DEPTH)
            return fail (P, kp->at, "a key of more than %d parts",
                         TOML_MAX_DEPTH);
        skip_ws (P);
        if (peek (P) != '.')
            return 0;
        P->p++;
    }
}

/* ---- numbers and dates ---- */

/* Digits of base with single underscores between them, appended to b. */
static int digits (struct parser *P, const char *at, const char **s,
                   const char *e, int base, struct buf *b)
{

    for (;;) {
        int v = *s < e ? hexval (**s) : -1;
        if (v < 0 || v >= base)
            return fail (P, at, "an invalid number");
        if (buf_add (P, b, *s, 1) < 0)
            return -1;
        (*s)++;
        if (*s < e && **s == '_') {
            (*s)++;
            continue;
        }
        v = *s < e ? hexval (**s) : -1;
        if (v < 0 || v >= base)
            return 0;
    }
}

static int make_int (struct parser *P, const char *at, const char *d, int base,
                     bool neg, json_t **out)
{
    uint64_t v = 0, max = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;

    for (; *d; d++) {
        uint64_t x = (uint64_t)hexval (*d);
        if (v > (max - x) / (uint64_t)base)
            return fail (P, at, "an integer out of range");
        v = v * (uint64_t)base + x;
    }
    if (neg)
        *out = json_integer (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN
                                                          : -(int64_t)v);
    else
        *out = json_integer ((int64_t)v);
    return *out ? 0 : oom (P);
}

static int parse_number (struct parser *P, struct buf *b, json_t **out)
{
    const char *at = P->p, *s, *e;
    bool neg = false, isfloat = false;

    while (P->p < P->end && (is_bare (*P->p) || *P->p == '.' || *P->p == '+'))
        P->p++;
    s = at;
    e = P->p;
    b->len = 0;
    if (*s == '+' || *s == '-') {
        neg = *s == '-';
        s++;
    }
    if (e - s == 3 && (!memcmp (s, "inf", 3) || !memcmp (s, "nan", 3))) {
        const char *v = s[0] == 'n' ? "nan" : neg ? "-inf" : "inf";
        return (*out = json_string (v)) ? 0 : oom (P);
    }
    if (e - s > 2 && s[0] == '0'
        && (s[1] == 'x' || s[1] == 'o' || s[1] == 'b')) {
        int base = s[1] == 'x' ? 16 : s[1] == 'o' ? 8 : 2;
        if (s != at)
            return fail (P, at, "a sign before a %s integer",
                         base == 16  ? "hexadecimal"
                         : base == 8 ? "octal"
                                     : "binary");
        s += 2;
        if (digits (P, at, &s, e, base, b) < 0)
            return -1;
        if (s != e)
            return fail (P, at, "an invalid number");
        return make_int (P, at, b->data, base, false, out);
    }
    if (buf_add (P, b, neg ? "-" : "", neg ? 1 : 0) < 0
        || digits (P, at, &s, e, 10, b) < 0)
        return -1;
    if (b->data[neg ? 1 : 0] == '0' && b->len > (neg ? 2u : 1u))
        return fail (P, at, "a leading zero in a number");
    if (s < e && *s == '.') {
        isfloat = true;
        s++;
        if (buf_add (P, b, ".", 1) < 0 || digits (P, at, &s, e, 10, b) < 0)
            return -1;
    }
    if (s < e && (*s == 'e' || *s == 'E')) {
        isfloat = true;
        s++;
        if (buf_add (P, b, "e", 1) < 0)
            return -1;
        if (s < e && (*s == '+' || *s == '-')) {
            if (buf_add (P, b, s, 1) < 0)
                return -1;
            s++;
        }
        if (digits (P, at, &s, e, 10, b) < 0)
            return -1;
    }
    if (s != e)
        return fail (P, at, "an invalid number");
    if (isfloat) {
        double d = strtod (b->data, NULL);
        if (isinf (d))
            return fail (P, at, "a float out of range");
        return (*out = json_real (d)) ? 0 : oom (P);
    }
    return make_int (P, at, b->data + (neg ? 1 : 0), 10, neg, out);
}

/* n decimal digits at s as a number, or -1. */
static int num (const char *s, const char *e, int n)
{
    int v = 0;
    if (e - s < n)
        return -1;
    for (int i = 0; i < n; i++) {
        if (!is_digit (s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* HH:MM:SS[.frac] at s; the end in *endp. */
static bool parse_time (const char *s, const char *e, const char **endp)
{
    int h = num (s, e, 2), m = num (s + 3, e, 2), sec = num (s + 6, e, 2);

    if (e - s < 8 || s[2] != ':' || s[5] != ':' || h < 0 || h > 23 || m < 0
        || m > 59 || sec < 0 || sec > 60)
        return false;
    s += 8;
    if (s < e && *s == '.') {
        if (++s == e || !is_digit (*s))
            return false;
        while (s < e && is_digit (*s))
            s++;
    }
    *endp = s;
    return true;
}

/* A date, time or date-time, kept as its text once checked. */
static int parse_datetime (struct parser *P, json_t **out)
{
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const char *at = P->p, *s = P->p, *e = P->end;

    if (num (s, e, 2) >= 0 && e - s > 2 && s[2] == ':') { /* local time */
        if (!parse_time (s, e, &s))
            return fail (P, at, "an invalid time");
    }
    else {
        int y = num (s, e, 4), mo = num (s + 5, e, 2), d = num (s + 8, e, 2);
        if (e - s < 10 || s[4] != '-' || s[7] != '-' || y < 0 || mo < 1
            || mo > 12 || d < 1 || d > mdays[mo - 1]
            || (mo == 2 && d == 29
                && !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))))
            return fail (P, at, "an invalid date");
        s += 10;
        if (s < e
            && (*s == 'T' || *s == 't'
                || (*s == ' ' && num (s + 1, e, 2) >= 0 && e - s > 3
                    && s[3] == ':'))) {
            if (!parse_time (s + 1, e, &s))
                return fail (P, at, "an invalid time");
            if (s < e && (*s == 'Z' || *s == 'z'))
                s++;
            else if (s < e && (*s == '+' || *s == '-')) {
                int oh = num (s + 1, e, 2), om = num (s + 4, e, 2);
                if (e - s < 6 || s[3] != ':' || oh < 0 || oh > 23 || om < 0
                    || om > 59)
                    return fail (P, at, "an invalid time offset");
                s += 6;
            }
        }
    }
    P->p = s;
    if (!at_delim (P))
        return fail (P, at, "an invalid date or time");
    return (*out = json_stringn (at, (size_t)(s - at))) ? 0 : oom (P);
}

/* ---- values ---- */

static int parse_value (struct parser *P, int depth, struct buf *b,
                        json_t **out);
static int parse_keyval (struct parser *P, json_t *tbl, int depth,
                         struct buf *b);

static int parse_array (struct parser *P, int depth, struct buf *b,
                        json_t **out)
{
    const char *at = P->p;
    json_t *a, *v;

    if (depth >= TOML_MAX_DEPTH)
        return fail (P, at, "nested more than %d deep", TOML_MAX_DEPTH);
    if (!(a = json_array ()))
        return oom (P);
    P->p++;
    for (;;) {
        if (skip_wcn (P) < 0)
            goto error;
        if (peek (P) == ']') {
            P->p++;
            break;
        }
        if (parse_value (P, depth + 1, b, &v) < 0)
            goto error;
        if (json_array_append_new (a, v) < 0) {
            oom (P);
            goto error;
        }
        if (skip_wcn (P) < 0)
            goto error;
        if (peek (P) == ',') {
            P->p++;
            continue;
        }
        if (peek (P) == ']') {
            P->p++;
            break;
        }
        fail (P, P->p,
              peek (P) < 0 ? "an unterminated array"
                           : "expected ',' or ']' in an array");
        goto error;
    }
    *out = a;
    return 0;
error:
    json_decref (a);
    return -1;
}

static int parse_inline_table (struct parser *P, int depth, struct buf *b,
                               json_t **out)
{
    const char *at = P->p;
    json_t *t;

    if (depth >= TOML_MAX_DEPTH)
        return fail (P, at, "nested more than %d deep", TOML_MAX_DEPTH);
    if (!(t = json_object ()))
        return oom (P);
    P->p++;
    skip_ws (P);
    if (peek (P) == '}')
        P->p++;
    else
        for (;;) {
            if (parse_keyval (P, t, depth + 1, b) < 0)
                goto error;
            skip_ws (P);
            if (peek (P) == ',') {
                P->p++;
                skip_ws (P);
                if (peek (P) == '}') {
                    fail (P, P->p, "a trailing comma in an inline table");
                    goto error;
                }
                continue;
            }
            if (peek (P) == '}') {
                P->p++;
                break;
            }
            fail (P, P->p, "expected ',' or '}' in an inline table");
            goto error;
        }
    if (flags_set (P, t, F_STATIC) < 0)
        goto error;
    *out = t;
    return 0;
error:
    json_decref (t);
    return -1;
}

static int parse_value (struct parser *P, int depth, struct buf *b,
                        json_t **out)
{
    const char *at = P->p;
    int c = peek (P);

    if (c == '"' || c == '\'') {
        if (parse_string (P, true, b) < 0)
            return -1;
        return (*out = json_stringn (b->data, b->len)) ? 0 : oom (P);
    }
    if (c == '[')
        return parse_array (P, depth, b, out);
    if (c == '{')
        return parse_inline_table (P, depth, b, out);
    if (looking_at (P, "true") || looking_at (P, "false")) {
        bool v = c == 't';
        P->p += v ? 4 : 5;
        if (!at_delim (P))
            return fail (P, at, "an invalid value");
        return (*out = json_boolean (v)) ? 0 : oom (P);
    }
    if (is_digit (c)
        && ((num (P->p, P->end, 4) >= 0 && P->end - P->p > 4 && P->p[4] == '-')
            || (num (P->p, P->end, 2) >= 0 && P->end - P->p > 2
                && P->p[2] == ':')))
        return parse_datetime (P, out);
    if (is_digit (c) || c == '+' || c == '-' || c == 'i' || c == 'n')
        return parse_number (P, b, out);
    if (c < 0 || c == '\n' || c == '\r' || c == '#')
        return fail (P, at, "expected a value");
    return fail (P, at, "an invalid value");
}

/* key = value, into tbl (the current table or an inline table). */
static int parse_keyval (struct parser *P, json_t *tbl, int depth,
                         struct buf *b)
{
    struct keypath kp = {0};
    json_t *t = tbl, *v;
    const char *at;
    int rc = -1;

    if (parse_key (P, &kp, b) < 0)
        goto done;
    at = kp.at;
    if (peek (P) != '=') {
        fail (P, P->p, "expected '=' after a key");
        goto done;
    }
    P->p++;
    skip_ws (P);
    if (depth + (int)kp.count > TOML_MAX_DEPTH) {
        fail (P, at, "nested more than %d deep", TOML_MAX_DEPTH);
        goto done;
    }
    for (size_t i = 0; i + 1 < kp.count; i++) {
        json_t *next = json_object_get (t, kp.parts[i]);
        if (!next) {
            if (!(next = json_object ())
                || json_object_set_new (t, kp.parts[i], next) < 0) {
                oom (P);
                goto done;
            }
            if (flags_set (P, next, F_DOTTED) < 0)
                goto done;
        }
        else if (!json_is_object (next)) {
            fail (P, at, "%s is already defined as a value",
                  keyname (&kp, i + 1));
            goto done;
        }
        else if (flags_get (P, next) & (F_EXPLICIT | F_STATIC)) {
            fail (P, at,
                  "%s is already defined as a table: dotted keys cannot add "
                  "to it",
                  keyname (&kp, i + 1));
            goto done;
        }
        else if (flags_set (P, next, F_DOTTED) < 0) /* no [header] now */
            goto done;
        t = next;
    }
    if (json_object_get (t, kp.parts[kp.count - 1])) {
        fail (P, at, "%s is defined twice", keyname (&kp, kp.count));
        goto done;
    }
    if (parse_value (P, depth + (int)kp.count - 1, b, &v) < 0)
        goto done;
    if (json_object_set_new (t, kp.parts[kp.count - 1], v) < 0) {
        oom (P);
        goto done;
    }
    rc = 0;
done:
    keypath_clear (&kp);
    return rc;
}

/* ---- headers ---- */

/* [a.b.c] or [[a.b.c]]: make P->cur the table it names. */
static int parse_header (struct parser *P, struct buf *b)
{
    bool aot = looking_at (P, "[[");
    struct keypath kp = {0};
    json_t *t = P->root, *next;
    const char *last;
    int depth = 0, f, rc = -1;

    P->p += aot ? 2 : 1;
    if (parse_key (P, &kp, b) < 0)
        goto done;
    if (!looking_at (P, aot ? "]]" : "]")) {
        fail (P, P->p, "expected '%s' to end a table header", aot ? "]]" : "]");
        goto done;
    }
    P->p += aot ? 2 : 1;
    for (size_t i = 0; i + 1 < kp.count; i++, depth++) {
        if (!(next = json_object_get (t, kp.parts[i]))) {
            if (!(next = json_object ())
                || json_object_set_new (t, kp.parts[i], next) < 0) {
                oom (P);
                goto done;
            }
        }
        else if (json_is_array (next) && (flags_get (P, next) & F_AOT)) {
            next = json_array_get (next, json_array_size (next) - 1);
            depth++;
        }
        else if (!json_is_object (next)) {
            fail (P, kp.at, "%s is already defined as a value",
                  keyname (&kp, i + 1));
            goto done;
        }
        else if (flags_get (P, next) & F_STATIC) {
            fail (P, kp.at, "%s is an inline table: it cannot be extended",
                  keyname (&kp, i + 1));
            goto done;
        }
        t = next;
    }
    if (depth + 2 > TOML_MAX_DEPTH) {
        fail (P, kp.at, "nested more than %d deep", TOML_MAX_DEPTH);
        goto done;
    }
    last = kp.parts[kp.count - 1];
    next = json_object_get (t, last);
    if (aot) {
        json_t *a = next, *elem;
        if (!a) {
            if (!(a = json_array ()) || json_object_set_new (t, last, a) < 0
                || flags_set (P, a, F_AOT) < 0) {
                oom (P);
                goto done;
            }
        }
        else if (!json_is_array (a) || !(flags_get (P, a) & F_AOT)) {
            fail (P, kp.at,
                  "%s is already defined and is not an array of "
                  "tables",
                  keyname (&kp, kp.count));
            goto done;
        }
        if (!(elem = json_object ()) || json_array_append_new (a, elem) < 0
            || flags_set (P, elem, F_EXPLICIT) < 0) {
            oom (P);
            goto done;
        }
        P->cur = elem;
        P->cur_depth = depth + 2;
    }
    else {
        if (!next) {
            if (!(next = json_object ())
                || json_object_set_new (t, last, next) < 0) {
                oom (P);
                goto done;
            }
        }
        else if (!json_is_object (next)) {
            fail (P, kp.at, "%s is already defined %s", keyname (&kp, kp.count),
                  json_is_array (next) && (flags_get (P, next) & F_AOT)
                      ? "as an array of tables"
                      : "as a value");
            goto done;
        }
        else if ((f = flags_get (P, next))
                 & (F_EXPLICIT | F_DOTTED | F_STATIC)) {
            fail (P, kp.at, "table %s is defined twice%s",
                  keyname (&kp, kp.count),
                  f & F_DOTTED   ? " (first by dotted keys)"
                  : f & F_STATIC ? " (first as an inline table)"
                                 : "");
            goto done;
        }
        if (flags_set (P, next, F_EXPLICIT) < 0)
            goto done;
        P->cur = next;
        P->cur_depth = depth + 1;
    }
    rc = end_of_line (P, "a table header");
done:
    keypath_clear (&kp);
    return rc;
}

json_t *toml_parse (const char *text, size_t len, toml_error_t *error)
{
    struct parser P
        = {.start = text, .p = text, .end = text + len, .error = error};
    struct buf b = {0};
    json_t *root = NULL;

    if (error)
        memset (error, 0, sizeof (*error));
    if (!text && len > 0) {
        errno = EINVAL;
        return NULL;
    }
    if (!text)
        P.start = P.p = P.end = "";
    if (check_utf8 (&P) < 0)
        return NULL;
    if (!(root = json_object ())) {
        oom (&P);
        return NULL;
    }
    P.root = P.cur = root;
    for (;;) {
        skip_ws (&P);
        if (skip_comment (&P) < 0)
            goto error;
        if (P.p == P.end)
            break;
        if (newline (&P))
            continue;
        if (*P.p == '\r') {
            fail (&P, P.p, "a carriage return not followed by a newline");
            goto error;
        }
        if (*P.p == '[') {
            if (parse_header (&P, &b) < 0)
                goto error;
        }
        else if (parse_keyval (&P, P.cur, P.cur_depth, &b) < 0
                 || end_of_line (&P, "a key/value") < 0)
            goto error;
    }
    free (b.data);
    free (P.flags.keys);
    free (P.flags.vals);
    return root;
error : {
    int e = errno;
    free (b.data);
    free (P.flags.keys);
    free (P.flags.vals);
    json_decref (root);
    errno = e;
    return NULL;
}
}

/* vi: ts=4 sw=4 expandtab
 */
