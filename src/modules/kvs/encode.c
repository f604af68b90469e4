/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* encode.c - canonical tree object serialization (see encode.h).
 *
 * Canonical form: JSON without whitespace, object keys in byte order,
 * strings escaped as jansson does ('"', '\\', the C escapes \b \f \n \r
 * \t, other control characters as \u00XX, everything else verbatim).
 * A tree object has exactly the keys data, type, ver, so it is written
 * as {"data":D,"type":"T","ver":1}.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libkvs/treeobj.h"

#include "blob.h"
#include "encode.h"

struct buf {
    char *s;
    size_t len, cap;
    bool failed;
};

static void grow (struct buf *b, size_t n)
{
    size_t cap = b->cap ? b->cap : 256;
    char *s;

    if (b->failed)
        return;
    while (cap < b->len + n + 1)
        cap *= 2;
    if (!(s = realloc (b->s, cap))) {
        b->failed = true;
        return;
    }
    b->s = s;
    b->cap = cap;
}

static inline void put (struct buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        grow (b, n);
        if (b->failed)
            return;
    }
    memcpy (b->s + b->len, s, n);
    b->len += n;
}

#define PUTS(b, lit) put ((b), (lit), sizeof (lit) - 1)

/* Returns true if s needed escaping. */
static bool put_string (struct buf *b, const char *s, size_t n)
{
    size_t start = 0;
    bool escaped = false;

    PUTS (b, "\"");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = NULL;
        char ubuf[8];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        put (b, s + start, i - start);
        start = i + 1;
        escaped = true;
        switch (c) {
            case '"':
                esc = "\\\"";
                break;
            case '\\':
                esc = "\\\\";
                break;
            case '\b':
                esc = "\\b";
                break;
            case '\f':
                esc = "\\f";
                break;
            case '\n':
                esc = "\\n";
                break;
            case '\r':
                esc = "\\r";
                break;
            case '\t':
                esc = "\\t";
                break;
            default:
                snprintf (ubuf, sizeof (ubuf), "\\u%04X", c);
                esc = ubuf;
        }
        put (b, esc, strlen (esc));
    }
    put (b, s + start, n - start);
    PUTS (b, "\"");
    return escaped;
}

static void put_json_string (struct buf *b, const json_t *s)
{
    put_string (b, json_string_value (s), json_string_length (s));
}

/* Anything else: jansson, as treeobj_encode would. */
static void put_generic (struct buf *b, const json_t *o)
{
    char *s = json_dumps (o, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    if (!s) {
        b->failed = true;
        return;
    }
    put (b, s, strlen (s));
    free (s);
}

struct item {
    const char *key;
    size_t klen;
    json_t *val;
};

/* byte order, as jansson sorts (names hold no NUL) */
static int cmp_item (const void *a, const void *b)
{
    const struct item *x = a, *y = b;
    return strcmp (x->key, y->key);
}

static void put_treeobj (struct buf *b, const json_t *o);

/* A dir's data: entries sorted, each a tree object. */
static void put_entries (struct buf *b, const json_t *data)
{
    size_t n = json_object_size (data), i = 0;
    struct item small[16], *items = small;
    const char *key;
    json_t *val;

    if (n > 16 && !(items = malloc (n * sizeof (*items)))) {
        b->failed = true;
        return;
    }
    json_object_foreach ((json_t *)data, key, val)
    {
        items[i].key = key;
        items[i].klen = strlen (key);
        items[i].val = val;
        i++;
    }
    qsort (items, n, sizeof (*items), cmp_item);
    PUTS (b, "{");
    for (i = 0; i < n; i++) {
        if (i > 0)
            PUTS (b, ",");
        put_string (b, items[i].key, items[i].klen);
        PUTS (b, ":");
        put_treeobj (b, items[i].val);
    }
    PUTS (b, "}");
    if (items != small)
        free (items);
}

static bool is_string_array (const json_t *a)
{
    size_t i;
    json_t *v;

    json_array_foreach (a, i, v)
    {
        if (!json_is_string (v))
            return false;
    }
    return true;
}

static void put_treeobj (struct buf *b, const json_t *o);

/* An hdir's data {"bucket":[...],"func":f,"size":n}, as jansson would
 * write it; false (nothing written) if it has another shape. */
static bool put_hdir (struct buf *b, const json_t *data)
{
    json_t *bucket = json_object_get (data, "bucket");
    json_t *func = json_object_get (data, "func");
    json_t *size = json_object_get (data, "size");
    char num[32];
    size_t i;
    json_t *v;

    if (json_object_size (data) != 3 || !json_is_array (bucket)
        || !json_is_string (func) || !json_is_integer (size))
        return false;
    PUTS (b, "{\"bucket\":[");
    json_array_foreach (bucket, i, v)
    {
        if (i > 0)
            PUTS (b, ",");
        if (json_is_null (v))
            PUTS (b, "null");
        else
            put_treeobj (b, v);
    }
    PUTS (b, "],\"func\":");
    put_json_string (b, func);
    snprintf (num, sizeof (num), ",\"size\":%" JSON_INTEGER_FORMAT "}",
              json_integer_value (size));
    put (b, num, strlen (num));
    return true;
}

static void put_treeobj (struct buf *b, const json_t *o)
{
    json_t *data, *type, *ver;
    const char *t;

    if (!json_is_object (o) || json_object_size (o) != 3
        || !(data = json_object_get (o, "data"))
        || !(type = json_object_get (o, "type")) || !json_is_string (type)
        || !(ver = json_object_get (o, "ver")) || !json_is_integer (ver)
        || json_integer_value (ver) != 1) {
        put_generic (b, o);
        return;
    }
    t = json_string_value (type);
    PUTS (b, "{\"data\":");
    if (!strcmp (t, "val") && json_is_string (data))
        put_json_string (b, data);
    else if ((!strcmp (t, "dirref") || !strcmp (t, "valref"))
             && json_is_array (data) && is_string_array (data)) {
        size_t i;
        json_t *v;
        PUTS (b, "[");
        json_array_foreach (data, i, v)
        {
            if (i > 0)
                PUTS (b, ",");
            put_json_string (b, v);
        }
        PUTS (b, "]");
    }
    else if (!strcmp (t, "dir") && json_is_object (data))
        put_entries (b, data);
    else if (!strcmp (t, "hdir") && json_is_object (data) && put_hdir (b, data))
        ;
    else
        put_generic (b, data); /* symlink: a small object */
    PUTS (b, ",\"type\":");
    put_json_string (b, type);
    PUTS (b, ",\"ver\":1}");
}

/* The end of the JSON value at s[pos] (null, or an object or array
 * holding strings, numbers and literals), or 0 if it is not one or has
 * white space outside its strings. */
static size_t value_end (const char *s, size_t len, size_t pos)
{
    int depth = 0;

    if (len - pos >= 4 && !memcmp (s + pos, "null", 4))
        return pos + 4;
    if (pos >= len || (s[pos] != '{' && s[pos] != '['))
        return 0;
    while (pos < len) {
        char c = s[pos++];
        if (c == '"') {
            /* to the closing quote: one not escaped by an odd run of
             * backslashes */
            for (;;) {
                const char *q = memchr (s + pos, '"', len - pos);
                size_t bs = 0;
                if (!q)
                    return 0;
                while (q - bs > s + pos && q[-1 - (ptrdiff_t)bs] == '\\')
                    bs++;
                pos = q - s + 1;
                if (bs % 2 == 0)
                    break;
            }
        }
        else if (c == '{' || c == '[')
            depth++;
        else if (c == '}' || c == ']') {
            if (--depth == 0)
                return pos;
        }
        else if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
            return 0;
    }
    return 0;
}

char *kvs_encode_hdir_patch (const json_t *hdir, const json_t *src,
                             const char *srctext, size_t srclen, size_t *len)
{
    static const char head[] = "{\"data\":{\"bucket\":[";
    json_t *buckets = treeobj_hdir_get_buckets (hdir);
    json_t *old = treeobj_hdir_get_buckets (src);
    struct buf b = {0};
    size_t n, pos = sizeof (head) - 1;
    char tail[128];
    int tlen;

    if (!buckets || !old || (n = json_array_size (buckets)) == 0
        || n != json_array_size (old) || srclen < pos
        || memcmp (srctext, head, pos) != 0)
        goto inval;
    grow (&b, srclen + 256);
    PUTS (&b, head);
    for (size_t k = 0; k < n; k++) {
        size_t end = value_end (srctext, srclen, pos);
        json_t *v = json_array_get (buckets, k);
        if (end == 0 || end >= srclen
            || srctext[end] != (k + 1 < n ? ',' : ']'))
            goto inval;
        if (k > 0)
            PUTS (&b, ",");
        if (v == json_array_get (old, k))
            put (&b, srctext + pos, end - pos);
        else if (json_is_null (v))
            PUTS (&b, "null");
        else
            put_treeobj (&b, v);
        pos = end + 1;
    }
    /* what follows the slots, as kvs_encode writes it */
    tlen = snprintf (tail, sizeof (tail),
                     "],\"func\":\"fnv1a32\",\"size\":%zu},\"type\":"
                     "\"hdir\",\"ver\":1}",
                     n);
    if (srclen - (pos - 1) != (size_t)tlen
        || memcmp (srctext + pos - 1, tail, tlen) != 0)
        goto inval;
    put (&b, tail, tlen);
    if (b.failed) {
        free (b.s);
        errno = ENOMEM;
        return NULL;
    }
    b.s[b.len] = '\0';
    *len = b.len;
    return b.s;
inval:
    free (b.s);
    errno = EINVAL;
    return NULL;
}

char *kvs_encode (const json_t *obj, size_t *len)
{
    struct buf b = {0};

    if (!obj) {
        errno = EINVAL;
        return NULL;
    }
    put_treeobj (&b, obj);
    if (!b.failed && b.len + 1 > b.cap)
        grow (&b, 1);
    if (b.failed || !b.s) {
        free (b.s);
        errno = ENOMEM;
        return NULL;
    }
    b.s[b.len] = '\0';
    if (len)
        *len = b.len;
    return b.s;
}

/* ---- directories as patches ---- */

struct index {
    uint32_t *off;
    int n, cap;
    bool failed;
    bool plain; /* every name is plain (indexable) */
};

static void index_add (struct index *ix, size_t pos)
{
    if (ix->failed)
        return;
    if (ix->n + 1 >= ix->cap) {
        int ncap = ix->cap ? ix->cap * 2 : 64;
        uint32_t *noff = realloc (ix->off, ncap * sizeof (*noff));
        if (!noff) {
            ix->failed = true;
            return;
        }
        ix->off = noff;
        ix->cap = ncap;
    }
    ix->off[ix->n++] = (uint32_t)pos;
}

/* Entries i..j-1 of base, as one run of bytes. */
static void put_run (struct buf *b, struct index *ix, const struct blob *base,
                     int i, int j)
{
    size_t start, len;
    long delta;

    if (i >= j)
        return;
    if (ix->n > 0)
        PUTS (b, ",");
    start = base->off[i];
    len = base->off[j] - 1 - start;
    delta = (long)(b->len - BLOB_HDR) - (long)start;
    if (!ix->failed && ix->n + (j - i) + 1 > ix->cap) {
        int ncap = ix->cap ? ix->cap : 64;
        while (ix->n + (j - i) + 1 > ncap)
            ncap *= 2;
        uint32_t *noff = realloc (ix->off, ncap * sizeof (*noff));
        if (!noff)
            ix->failed = true;
        else {
            ix->off = noff;
            ix->cap = ncap;
        }
    }
    if (!ix->failed) {
        for (int k = i; k < j; k++)
            ix->off[ix->n++] = (uint32_t)((long)base->off[k] + delta);
    }
    put (b, base->data + start, len);
}

static void put_item (struct buf *b, struct index *ix, const struct item *it)
{
    if (ix->n > 0)
        PUTS (b, ",");
    index_add (ix, b->len - BLOB_HDR);
    if (put_string (b, it->key, it->klen))
        ix->plain = false;
    PUTS (b, ":");
    put_treeobj (b, it->val);
}

struct blob *kvs_encode_dir (struct blob *base, const json_t *data)
{
    struct buf b = {0};
    struct index ix = {.plain = true};
    size_t n = json_object_size (data), k = 0;
    struct item *items = NULL;
    const char *key;
    json_t *val;
    int i = 0, nbase = 0;

    if (!json_is_object (data) || (base && blob_dir_index (base) < 0)) {
        errno = EINVAL;
        return NULL;
    }
    if (base)
        nbase = base->n;
    if (n > 0 && !(items = malloc (n * sizeof (*items))))
        return NULL;
    json_object_foreach ((json_t *)data, key, val)
    {
        items[k].key = key;
        items[k].klen = strlen (key);
        items[k].val = val;
        k++;
    }
    if (n > 1)
        qsort (items, n, sizeof (*items), cmp_item);
    /* the blob's header goes first, so that no copy is needed at the end */
    grow (&b, BLOB_HDR + (base ? base->len : 0) + n * 64 + 64);
    if (b.failed) {
        free (items);
        errno = ENOMEM;
        return NULL;
    }
    b.len = BLOB_HDR;
    PUTS (&b, "{\"data\":{");
    for (k = 0; k < n; k++) {
        bool found = false;
        int pos = base ? blob_dir_find (base, items[k].key, &found) : 0;
        put_run (&b, &ix, base, i, pos);
        if (!json_is_null (items[k].val))
            put_item (&b, &ix, &items[k]);
        i = found ? pos + 1 : pos;
    }
    if (base)
        put_run (&b, &ix, base, i, nbase);
    index_add (&ix, b.len - BLOB_HDR + 1); /* one past the closing '}' */
    PUTS (&b, "},\"type\":\"dir\",\"ver\":1}");
    free (items);
    if (!b.failed && b.len + 1 > b.cap)
        grow (&b, 1);
    if (b.failed) {
        free (b.s);
        free (ix.off);
        errno = ENOMEM;
        return NULL;
    }
    if (ix.failed || !ix.plain) {
        free (ix.off);
        ix.off = NULL;
    }
    return blob_from_buffer (b.s, b.len - BLOB_HDR, ix.off, ix.n - 1);
}
