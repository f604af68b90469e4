/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* blobref.c - RFC 10 blobrefs: hashing blobs and converting between the
 * "<hashtype>-<hex>" string and the raw digest.  The hash functions are
 * our own (sha1.c, sha256.c).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "blobref.h"
#include "sha1.h"
#include "sha256.h"

struct hashtype {
    const char *name;
    int size;
    void (*hash) (const void *data, size_t len, uint8_t *digest);
};

static void hash_sha1 (const void *data, size_t len, uint8_t *digest)
{
    struct sha1_ctx ctx;

    sha1_init (&ctx);
    sha1_update (&ctx, data, len);
    sha1_final (&ctx, digest);
}

static void hash_sha256 (const void *data, size_t len, uint8_t *digest)
{
    struct sha256_ctx ctx;

    sha256_init (&ctx);
    sha256_update (&ctx, data, len);
    sha256_final (&ctx, digest);
}

static const struct hashtype hashtypes[] = {
    {"sha1", SHA1_DIGEST_SIZE, hash_sha1},
    {"sha256", SHA256_DIGEST_SIZE, hash_sha256},
};

/* Look up a hash type by the first namelen characters of name. */
static const struct hashtype *lookup (const char *name, size_t namelen)
{
    size_t i;

    for (i = 0; i < sizeof (hashtypes) / sizeof (hashtypes[0]); i++) {
        if (strlen (hashtypes[i].name) == namelen
            && !strncmp (hashtypes[i].name, name, namelen))
            return &hashtypes[i];
    }
    return NULL;
}

static const struct hashtype *lookup_name (const char *hashtype)
{
    const struct hashtype *ht;

    if (!hashtype || !(ht = lookup (hashtype, strlen (hashtype)))) {
        errno = EINVAL;
        return NULL;
    }
    return ht;
}

int blobref_hashtype_size (const char *hashtype)
{
    const struct hashtype *ht;

    if (!(ht = lookup_name (hashtype)))
        return -1;
    return ht->size;
}

static int hexval (char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1; /* upper case is not allowed (RFC 10) */
}

/* Parse blobref; on success *htp is its hash type and digest (if not
 * NULL) receives the raw digest. */
static int parse (const char *blobref, const struct hashtype **htp,
                  uint8_t *digest)
{
    const struct hashtype *ht;
    const char *dash, *hex;
    int i;

    if (!blobref || !(dash = strchr (blobref, '-'))
        || !(ht = lookup (blobref, dash - blobref)))
        goto inval;
    hex = dash + 1;
    if (strlen (hex) != (size_t)ht->size * 2)
        goto inval;
    for (i = 0; i < ht->size; i++) {
        int hi = hexval (hex[2 * i]);
        int lo = hexval (hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            goto inval;
        if (digest)
            digest[i] = (uint8_t)(hi << 4 | lo);
    }
    *htp = ht;
    return 0;
inval:
    errno = EINVAL;
    return -1;
}

static int format (const struct hashtype *ht, const uint8_t *digest,
                   char *blobref, size_t size)
{
    static const char xdigit[] = "0123456789abcdef";
    size_t namelen = strlen (ht->name);
    size_t i;
    char *p;

    if (!blobref) {
        errno = EINVAL;
        return -1;
    }
    if (size < namelen + 1 + ht->size * 2 + 1) {
        errno = EOVERFLOW;
        return -1;
    }
    memcpy (blobref, ht->name, namelen);
    p = blobref + namelen;
    *p++ = '-';
    for (i = 0; i < (size_t)ht->size; i++) {
        *p++ = xdigit[digest[i] >> 4];
        *p++ = xdigit[digest[i] & 0xf];
    }
    *p = '\0';
    return 0;
}

int blobref_hash (const char *hashtype, const void *data, size_t len,
                  char *blobref, size_t blobref_size)
{
    const struct hashtype *ht;
    uint8_t digest[BLOBREF_MAX_DIGEST_SIZE];

    if (!(ht = lookup_name (hashtype)) || (!data && len > 0)) {
        errno = EINVAL;
        return -1;
    }
    ht->hash (data, len, digest);
    return format (ht, digest, blobref, blobref_size);
}

int blobref_hash_raw (const char *hashtype, const void *data, size_t len,
                      void *hash, size_t hash_size)
{
    const struct hashtype *ht;
    uint8_t digest[BLOBREF_MAX_DIGEST_SIZE];

    if (!(ht = lookup_name (hashtype)) || (!data && len > 0) || !hash) {
        errno = EINVAL;
        return -1;
    }
    if (hash_size < (size_t)ht->size) {
        errno = EOVERFLOW;
        return -1;
    }
    ht->hash (data, len, digest);
    memcpy (hash, digest, ht->size);
    return ht->size;
}

int blobref_strtohash (const char *blobref, void *hash, size_t size)
{
    const struct hashtype *ht;
    uint8_t digest[BLOBREF_MAX_DIGEST_SIZE];

    if (parse (blobref, &ht, digest) < 0)
        return -1;
    if (!hash) {
        errno = EINVAL;
        return -1;
    }
    if (size < (size_t)ht->size) {
        errno = EOVERFLOW;
        return -1;
    }
    memcpy (hash, digest, ht->size);
    return ht->size;
}

int blobref_hashtostr (const char *hashtype, const void *hash, size_t len,
                       char *blobref, size_t blobref_size)
{
    const struct hashtype *ht;

    if (!(ht = lookup_name (hashtype)) || !hash || len != (size_t)ht->size) {
        errno = EINVAL;
        return -1;
    }
    return format (ht, hash, blobref, blobref_size);
}

int blobref_validate (const char *blobref)
{
    const struct hashtype *ht;

    return parse (blobref, &ht, NULL);
}

int blobref_hashtype (const char *blobref, char *buf, size_t size)
{
    const struct hashtype *ht;

    if (parse (blobref, &ht, NULL) < 0)
        return -1;
    if (!buf || size < strlen (ht->name) + 1) {
        errno = buf ? EOVERFLOW : EINVAL;
        return -1;
    }
    strcpy (buf, ht->name);
    return 0;
}
