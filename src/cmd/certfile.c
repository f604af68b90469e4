/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* certfile.c - write CURVE certificates in czmq's zcert text format,
 * and the Z85 codec its keys are written in.  Kept free of czmq and
 * libzmq so that `flux keygen` starts fast; the unit test checks the
 * result against both.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "certfile.h"

static const char z85_chars[]
    = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
      ".-:+=^!/*?&<>()[]{}@%$#";

ssize_t z85_encode (char *dst, size_t dstsize, const uint8_t *src, size_t len)
{
    size_t n = 0;

    if (!dst || (!src && len > 0) || len % 4 != 0
        || dstsize < len / 4 * 5 + 1) {
        errno = EINVAL;
        return -1;
    }
    for (size_t i = 0; i < len; i += 4) {
        uint32_t v = (uint32_t)src[i] << 24 | (uint32_t)src[i + 1] << 16
                     | (uint32_t)src[i + 2] << 8 | src[i + 3];
        for (int k = 4; k >= 0; k--) {
            dst[n + k] = z85_chars[v % 85];
            v /= 85;
        }
        n += 5;
    }
    dst[n] = '\0';
    return n;
}

ssize_t z85_decode (uint8_t *dst, size_t dstsize, const char *src)
{
    size_t len = src ? strlen (src) : 0;
    size_t n = 0;

    if (!dst || !src || len % 5 != 0 || dstsize < len / 5 * 4)
        goto inval;
    for (size_t i = 0; i < len; i += 5) {
        uint64_t v = 0;
        for (int k = 0; k < 5; k++) {
            const char *p = strchr (z85_chars, src[i + k]);
            if (!p || !*p)
                goto inval;
            v = v * 85 + (p - z85_chars);
        }
        if (v > UINT32_MAX)
            goto inval;
        dst[n++] = v >> 24;
        dst[n++] = v >> 16;
        dst[n++] = v >> 8;
        dst[n++] = v;
    }
    return n;
inval:
    errno = EINVAL;
    return -1;
}

static bool valid_name (const char *s)
{
    if (!s || !*s)
        return false;
    for (; *s; s++) {
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')
              || (*s >= '0' && *s <= '9') || strchr ("$-_@.&+/", *s)))
            return false;
    }
    return true;
}

static bool valid_value (const char *s)
{
    if (!s)
        return false;
    for (; *s; s++) {
        if ((unsigned char)*s < 32 || *s == 127 || *s == '"' || *s == '\\')
            return false;
    }
    return true;
}

static int write_cert (FILE *f, const char *pub, const char *sec,
                       const char *const *meta)
{
    time_t now = time (NULL);
    char date[64] = "";
    struct tm tm;

    if (localtime_r (&now, &tm))
        strftime (date, sizeof (date), "%Y-%m-%d %H:%M:%S", &tm);
    fprintf (f, "#   ****  Generated on %s by flux-keygen  ****\n", date);
    fprintf (f, "#   ZeroMQ CURVE **Secret** Certificate\n");
    fprintf (f, "#   DO NOT PROVIDE THIS FILE TO OTHER USERS nor change "
                "its permissions.\n\n");
    fprintf (f, "metadata\n");
    for (int i = 0; meta && meta[i]; i += 2)
        fprintf (f, "    %s = \"%s\"\n", meta[i], meta[i + 1]);
    fprintf (f, "curve\n");
    fprintf (f, "    public-key = \"%s\"\n", pub);
    fprintf (f, "    secret-key = \"%s\"\n", sec);
    return ferror (f) ? -1 : 0;
}

int certfile_write_secret (const char *path, const uint8_t pub[CERT_KEY_SIZE],
                           const uint8_t sec[CERT_KEY_SIZE],
                           const char *const *meta)
{
    char pubtxt[CERT_KEY_Z85_SIZE], sectxt[CERT_KEY_Z85_SIZE];
    char tmp[PATH_MAX];
    FILE *f = NULL;
    int fd, saved_errno;

    if (!path || !*path || !pub || !sec
        || z85_encode (pubtxt, sizeof (pubtxt), pub, CERT_KEY_SIZE) < 0
        || z85_encode (sectxt, sizeof (sectxt), sec, CERT_KEY_SIZE) < 0
        || snprintf (tmp, sizeof (tmp), "%s.XXXXXX", path) >= (int)sizeof (tmp))
        goto inval;
    for (int i = 0; meta && meta[i]; i += 2) {
        if (!valid_name (meta[i]) || !valid_value (meta[i + 1]))
            goto inval;
    }
    if ((fd = mkstemp (tmp)) < 0) /* created with mode 0600 */
        return -1;
    if (fchmod (fd, 0600) < 0 || !(f = fdopen (fd, "w"))) {
        saved_errno = errno;
        close (fd);
        goto error;
    }
    if (write_cert (f, pubtxt, sectxt, meta) < 0 || fflush (f) != 0
        || fsync (fileno (f)) < 0) {
        saved_errno = errno;
        fclose (f);
        goto error;
    }
    if (fclose (f) != 0 || rename (tmp, path) < 0) {
        saved_errno = errno;
        goto error;
    }
    return 0;
error:
    unlink (tmp);
    errno = saved_errno;
    return -1;
inval:
    errno = EINVAL;
    return -1;
}
