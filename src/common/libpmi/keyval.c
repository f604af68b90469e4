/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* keyval.c - split a PMI-1 protocol line into key=value tuples.
 *
 * The line is copied once and cut up in place; the tuple array points
 * into the copy.  Lines are short (PMI_SIMPLE_LINE_MAX), so lookups are
 * a linear scan.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "keyval.h"

struct tuple {
    const char *key;
    const char *val;
};

struct keyval {
    char *buf;
    struct tuple *tuples;
    int count;
    int alloc;
};

static bool is_blank (char c)
{
    return c == ' ' || c == '\t';
}

static bool is_control (char c)
{
    unsigned char u = (unsigned char)c;
    return u < 0x20 || u == 0x7f;
}

void keyval_destroy (struct keyval *kv)
{
    if (kv) {
        int saved_errno = errno;
        free (kv->buf);
        free (kv->tuples);
        free (kv);
        errno = saved_errno;
    }
}

static bool is_tail_key (const char *key, const char *const *tail_keys)
{
    if (tail_keys) {
        for (int i = 0; tail_keys[i]; i++)
            if (!strcmp (key, tail_keys[i]))
                return true;
    }
    return false;
}

static int append (struct keyval *kv, const char *key, const char *val)
{
    for (int i = 0; i < kv->count; i++) {
        if (!strcmp (kv->tuples[i].key, key)) {
            errno = EPROTO;
            return -1;
        }
    }
    if (kv->count == kv->alloc) {
        int n = kv->alloc ? kv->alloc * 2 : 8;
        struct tuple *t = realloc (kv->tuples, n * sizeof (*t));
        if (!t)
            return -1;
        kv->tuples = t;
        kv->alloc = n;
    }
    kv->tuples[kv->count].key = key;
    kv->tuples[kv->count].val = val;
    kv->count++;
    return 0;
}

/* Only a final '\n' may end the line; tabs are blanks; every other
 * control character is malformed.
 */
static int check_chars (char *s)
{
    size_t len = strlen (s);

    if (len > 0 && s[len - 1] == '\n')
        s[--len] = '\0';
    for (size_t i = 0; i < len; i++) {
        if (is_control (s[i]) && s[i] != '\t') {
            errno = EPROTO;
            return -1;
        }
    }
    return 0;
}

/* The rest of the line, minus trailing blanks, is the value at 'p'. */
static void trim_tail (char *p)
{
    size_t len = strlen (p);

    while (len > 0 && is_blank (p[len - 1]))
        p[--len] = '\0';
}

static int split (struct keyval *kv, const char *const *tail_keys)
{
    char *p = kv->buf;

    for (;;) {
        while (is_blank (*p))
            p++;
        if (*p == '\0')
            break;
        char *key = p;
        while (*p != '\0' && !is_blank (*p) && *p != '=')
            p++;
        if (*p != '=' || p == key) {
            errno = EPROTO;
            return -1;
        }
        *p++ = '\0';
        char *val = p;
        if (is_tail_key (key, tail_keys)) {
            trim_tail (val);
            return append (kv, key, val);
        }
        while (*p != '\0' && !is_blank (*p))
            p++;
        if (*p != '\0')
            *p++ = '\0';
        if (append (kv, key, val) < 0)
            return -1;
    }
    return 0;
}

struct keyval *keyval_parse_tail (const char *line,
                                  const char *const *tail_keys)
{
    struct keyval *kv;

    if (!line) {
        errno = EINVAL;
        return NULL;
    }
    if (!(kv = calloc (1, sizeof (*kv))))
        return NULL;
    if (!(kv->buf = strdup (line)))
        goto error;
    if (check_chars (kv->buf) < 0 || split (kv, tail_keys) < 0)
        goto error;
    if (kv->count == 0) {
        errno = EPROTO;
        goto error;
    }
    return kv;
error:
    keyval_destroy (kv);
    return NULL;
}

struct keyval *keyval_parse (const char *line)
{
    return keyval_parse_tail (line, NULL);
}

int keyval_count (const struct keyval *kv)
{
    if (!kv) {
        errno = EINVAL;
        return -1;
    }
    return kv->count;
}

int keyval_get_str (const struct keyval *kv, const char *key, const char **val)
{
    if (!kv || !key || !val) {
        errno = EINVAL;
        return -1;
    }
    for (int i = 0; i < kv->count; i++) {
        if (!strcmp (kv->tuples[i].key, key)) {
            *val = kv->tuples[i].val;
            return 0;
        }
    }
    errno = ENOENT;
    return -1;
}

/* Strict decimal: [+-]DIGITS, nothing else, no overflow. */
static int parse_int (const char *s, int *val)
{
    const char *p = s;
    long long v = 0;
    bool neg = false;

    if (*p == '+' || *p == '-')
        neg = (*p++ == '-');
    if (*p == '\0')
        return -1;
    for (; *p != '\0'; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v * 10 + (*p - '0');
        if (v > (long long)INT_MAX + 1)
            return -1;
    }
    if (neg)
        v = -v;
    if (v > INT_MAX || v < INT_MIN)
        return -1;
    *val = (int)v;
    return 0;
}

int keyval_get_int (const struct keyval *kv, const char *key, int *val)
{
    const char *s;

    if (!val) {
        errno = EINVAL;
        return -1;
    }
    if (keyval_get_str (kv, key, &s) < 0)
        return -1;
    if (parse_int (s, val) < 0) {
        errno = EPROTO;
        return -1;
    }
    return 0;
}

bool keyval_valid_value (const char *s)
{
    if (!s)
        return false;
    for (; *s != '\0'; s++) {
        if (is_blank (*s) || is_control (*s))
            return false;
    }
    return true;
}

bool keyval_valid_word (const char *s)
{
    return s && *s != '\0' && !strchr (s, '=') && keyval_valid_value (s);
}
