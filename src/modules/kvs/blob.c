/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* blob.c - shared blobs and the entry index of canonical dir blobs (see
 * blob.h).  The index is built by one scan that checks the exact layout:
 * names are plain (no escapes, no control characters, no '.'), strictly
 * increasing; values are skipped by matching brackets outside strings
 * (they are checked by jansson when an entry is decoded).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libflux/jsonparse.h"
#include "libkvs/treeobj.h"

#include "blob.h"

#define DIR_HEAD "{\"data\":{"
#define DIR_TAIL "},\"type\":\"dir\",\"ver\":1}"
#define HEAD_LEN (sizeof (DIR_HEAD) - 1)
#define TAIL_LEN (sizeof (DIR_TAIL) - 1)

struct blob *blob_create (const void *data, size_t len)
{
    struct blob *b;

    if (len > 0 && !data) {
        errno = EINVAL;
        return NULL;
    }
    if (!(b = malloc (sizeof (*b) + len + 1)))
        return NULL;
    b->refs = 1;
    b->len = len;
    b->n = 0;
    b->index = 0;
    b->off = NULL;
    if (len > 0)
        memcpy (b->data, data, len);
    b->data[len] = '\0';
    return b;
}

struct blob *blob_create_take (char *data, size_t len, uint32_t *off, int n)
{
    struct blob *b;

    /* one allocation for header and bytes: grow data's into it */
    if (!data || !(b = realloc (data, sizeof (*b) + len + 1))) {
        free (data);
        free (off);
        errno = data ? ENOMEM : EINVAL;
        return NULL;
    }
    memmove (b->data, b, len);
    b->data[len] = '\0';
    b->refs = 1;
    b->len = len;
    b->n = off ? n : 0;
    b->index = off ? 1 : 0;
    b->off = off;
    return b;
}

struct blob *blob_from_buffer (char *mem, size_t len, uint32_t *off, int n)
{
    struct blob *b = (struct blob *)mem;

    if (!mem) {
        free (off);
        errno = EINVAL;
        return NULL;
    }
    b->data[len] = '\0';
    b->refs = 1;
    b->len = len;
    b->n = off ? n : 0;
    b->index = off ? 1 : 0;
    b->off = off;
    return b;
}

struct blob *blob_incref (struct blob *b)
{
    if (b)
        b->refs++;
    return b;
}

void blob_decref (struct blob *b)
{
    if (b && --b->refs == 0) {
        int saved_errno = errno;
        free (b->off);
        free (b);
        errno = saved_errno;
    }
}

/* The end of the JSON value starting at p (an object or array), or
 * NULL if it runs past end. */
static const char *skip_value (const char *p, const char *end)
{
    int depth = 0;

    if (p >= end || (*p != '{' && *p != '['))
        return NULL;
    while (p < end) {
        char c = *p++;
        if (c == '"') {
            while (p < end && *p != '"') {
                if (*p == '\\')
                    p++;
                p++;
            }
            if (p >= end)
                return NULL;
            p++;
        }
        else if (c == '{' || c == '[')
            depth++;
        else if (c == '}' || c == ']') {
            if (--depth == 0)
                return p;
        }
    }
    return NULL;
}

/* A plain name from p (after its opening quote): its length, or -1. */
static int scan_name (const char *p, const char *end)
{
    const char *q = p;

    while (q < end && *q != '"') {
        unsigned char c = (unsigned char)*q;
        if (c < 0x20 || c == '\\' || c == '.')
            return -1;
        q++;
    }
    if (q >= end || q == p)
        return -1;
    return (int)(q - p);
}

static int namecmp (const char *a, size_t alen, const char *b, size_t blen)
{
    int c = memcmp (a, b, alen < blen ? alen : blen);
    if (c != 0)
        return c;
    return alen < blen ? -1 : alen > blen;
}

static int build_index (struct blob *b)
{
    const char *base = b->data, *p, *end;
    const char *prev = NULL;
    size_t prevlen = 0;
    uint32_t *off = NULL;
    int n = 0, cap = 0;

    if (b->len < HEAD_LEN + TAIL_LEN || b->len > UINT32_MAX
        || memcmp (base, DIR_HEAD, HEAD_LEN) != 0
        || memcmp (base + b->len - TAIL_LEN, DIR_TAIL, TAIL_LEN) != 0)
        return -1;
    p = base + HEAD_LEN;
    end = base + b->len - TAIL_LEN; /* the '}' closing the entries */
    while (p < end) {
        int klen;
        if (n > 0 && *p++ != ',')
            goto bad;
        if (p >= end || *p != '"' || (klen = scan_name (p + 1, end)) < 0)
            goto bad;
        if (prev && namecmp (prev, prevlen, p + 1, klen) >= 0)
            goto bad; /* not strictly increasing */
        if (n + 1 >= cap) {
            int ncap = cap ? cap * 2 : 16;
            uint32_t *noff = realloc (off, ncap * sizeof (*noff));
            if (!noff)
                goto bad;
            off = noff;
            cap = ncap;
        }
        off[n++] = (uint32_t)(p - base);
        prev = p + 1;
        prevlen = klen;
        p += klen + 2;
        if (p >= end || *p++ != ':' || !(p = skip_value (p, end)))
            goto bad;
    }
    if (p != end)
        goto bad;
    if (!off && !(off = malloc (sizeof (*off))))
        return -1;
    off[n] = (uint32_t)(end - base) + 1; /* one past the closing '}' */
    b->off = off;
    b->n = n;
    return 0;
bad:
    free (off);
    return -1;
}

int blob_dir_index (struct blob *b)
{
    if (!b)
        return -1;
    if (b->index == 0)
        b->index = build_index (b) == 0 ? 1 : -1;
    return b->index > 0 ? 0 : -1;
}

const char *blob_dir_name (const struct blob *b, int i, size_t *len)
{
    const char *p = b->data + b->off[i] + 1;

    if (len)
        *len = strchr (p, '"') - p;
    return p;
}

int blob_dir_namecmp (const struct blob *b, int i, const char *name)
{
    const unsigned char *p = (const unsigned char *)b->data + b->off[i] + 1;
    const unsigned char *q = (const unsigned char *)name;

    /* the entry's name ends at '"', which no indexed name contains */
    while (*p != '"' && *q && *p == *q) {
        p++;
        q++;
    }
    if (*p == '"')
        return *q ? -1 : 0;
    if (!*q)
        return 1;
    return *p < *q ? -1 : 1;
}

int blob_dir_find (const struct blob *b, const char *name, bool *found)
{
    int lo = 0, hi = b->n;

    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (blob_dir_namecmp (b, mid, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (found)
        *found = lo < b->n && blob_dir_namecmp (b, lo, name) == 0;
    return lo;
}

json_t *blob_dir_value (const struct blob *b, int i)
{
    size_t klen;
    const char *name = blob_dir_name (b, i, &klen);
    const char *v = name + klen + 2; /* past '":' */
    const char *end = b->data + b->off[i + 1] - 1;
    json_t *o;

    /* jsonparse.h: json_loadb, faster (every entry a commit touches) */
    if (!(o = jsonparse_ex (v, end - v, JSON_REJECT_DUPLICATES, NULL, 0))
        || treeobj_validate (o) < 0) {
        json_decref (o);
        errno = ENOTRECOVERABLE;
        return NULL;
    }
    return o;
}
