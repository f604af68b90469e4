/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* sign.c - J with mechanism "none" (RFC 15, PROTOCOLS.md section 6).
 *
 * The header is RFC 38 key-value text.  We write the keys in
 * flux-security's order (version, mechanism, userid) and accept any
 * order, but nothing else: exactly those three keys, each once,
 * version i1, userid a decimal uid, and the signature part "none".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libflux/base64.h"
#include "sign.h"

#define HEADER_MAX 4096 /* RFC 38: an implementation defined limit */

char *sign_none_wrap (const void *payload, size_t len, uint32_t userid)
{
    char header[128];
    int hlen;
    size_t hsize, psize;
    ssize_t n, off;
    char *J;

    if ((!payload && len > 0) || (len > 0 && memchr (payload, '\0', len))) {
        errno = EINVAL;
        return NULL;
    }
    hlen = snprintf (header, sizeof (header),
                     "version%ci1%cmechanism%csnone%cuserid%ci%" PRIu32 "%c", 0,
                     0, 0, 0, 0, userid, 0);
    /* one buffer: base64(header) "." base64(payload) ".none" */
    hsize = base64_encoded_size (hlen);
    psize = base64_encoded_size (len);
    if (!(J = malloc (hsize + psize + 6))) {
        errno = ENOMEM;
        return NULL;
    }
    if ((off = base64_encode (J, hsize, header, hlen)) < 0)
        goto inval;
    J[off++] = '.';
    if ((n = base64_encode (J + off, psize, payload ? payload : "", len)) < 0)
        goto inval;
    memcpy (J + off + n, ".none", 6);
    return J;
inval:
    free (J);
    errno = EINVAL;
    return NULL;
}

/* Decode base64 src[0..len) into a new NUL-terminated buffer. */
static char *unb64 (const char *src, size_t len, size_t *outlen)
{
    size_t size = base64_decoded_size (len) + 1;
    ssize_t n;
    char *buf;

    if (!(buf = malloc (size)))
        return NULL;
    if ((n = base64_decode (buf, size, src, len)) < 0) {
        free (buf);
        errno = EINVAL;
        return NULL;
    }
    buf[n] = '\0';
    *outlen = n;
    return buf;
}

/* Parse the RFC 38 header into *userid, *version_ok, and the mechanism
 * value copied into mech[mechsz].
 */
static int header_parse (const char *h, size_t len, uint32_t *userid,
                         char *mech, size_t mechsz, flux_error_t *error)
{
    bool have_version = false, have_mech = false, have_userid = false;
    const char *p = h, *end = h + len;

    while (p < end) {
        const char *key = p;
        const char *nul = memchr (p, '\0', end - p);
        const char *val, *vend;
        bool *seen;

        if (!nul || nul == key)
            return errprintf (error, "J header is not RFC 38 key-value text");
        val = nul + 1;
        if (val >= end || !(vend = memchr (val, '\0', end - val)))
            return errprintf (error, "J header is not RFC 38 key-value text");
        if (!strcmp (key, "version"))
            seen = &have_version;
        else if (!strcmp (key, "mechanism"))
            seen = &have_mech;
        else if (!strcmp (key, "userid"))
            seen = &have_userid;
        else
            return errprintf (error, "J header has unknown key '%.32s'", key);
        if (*seen)
            return errprintf (error, "J header has key '%s' twice", key);
        *seen = true;
        if (seen == &have_version) {
            if (strcmp (val, "i1") != 0)
                return errprintf (error, "J header version must be i1");
        }
        else if (seen == &have_mech) {
            if (val[0] != 's' || (size_t)(vend - val) > mechsz)
                return errprintf (error, "J header mechanism must be a string");
            strcpy (mech, val + 1);
        }
        else {
            char *e;
            unsigned long long u;
            if (val[0] != 'i' || val[1] < '0' || val[1] > '9')
                return errprintf (error, "J header userid must be an integer");
            errno = 0;
            u = strtoull (val + 1, &e, 10);
            if (*e != '\0')
                return errprintf (error, "J header userid must be an integer");
            if (errno != 0 || u > UINT32_MAX)
                return errprintf (error, "J header userid is out of range");
            *userid = (uint32_t)u;
        }
        p = vend + 1;
    }
    if (!have_version || !have_mech || !have_userid)
        return errprintf (error, "J header is missing key '%s'",
                          !have_version ? "version"
                          : !have_mech  ? "mechanism"
                                        : "userid");
    return 0;
}

int sign_unwrap (const char *J, char **payload, size_t *len, uint32_t *userid,
                 const char **mechanism, flux_error_t *error)
{
    const char *dot1, *dot2;
    char *header = NULL, *pl = NULL;
    char mech[64];
    size_t hlen, plen;
    uint32_t uid = 0;
    int parts = 1;

    if (!J || !payload || !len || !userid || !mechanism) {
        errprintf (error, "invalid argument");
        errno = EINVAL;
        return -1;
    }
    for (const char *p = J; *p; p++)
        if (*p == '.')
            parts++;
    if (parts != 3) {
        errprintf (error, "J has %d part%s, expected 3", parts,
                   parts == 1 ? "" : "s");
        goto inval;
    }
    dot1 = strchr (J, '.');
    dot2 = strchr (dot1 + 1, '.');
    if ((size_t)(dot1 - J) > base64_encoded_size (HEADER_MAX)) {
        errprintf (error, "J header is too long");
        goto inval;
    }
    if (!(header = unb64 (J, dot1 - J, &hlen))) {
        if (errno == EINVAL)
            errprintf (error, "J header is not valid base64");
        goto error;
    }
    if (header_parse (header, hlen, &uid, mech, sizeof (mech), error) < 0)
        goto inval;
    if (strcmp (mech, "none") != 0) {
        errprintf (error, "unknown mechanism %.32s", mech);
        goto inval;
    }
    if (strcmp (dot2 + 1, "none") != 0) {
        errprintf (error, "J signature must be 'none' for mechanism none");
        goto inval;
    }
    if (!(pl = unb64 (dot1 + 1, dot2 - dot1 - 1, &plen))) {
        if (errno == EINVAL)
            errprintf (error, "J payload is not valid base64");
        goto error;
    }
    if (strlen (pl) != plen) {
        errprintf (error, "J payload contains a NUL byte");
        goto inval;
    }
    free (header);
    *payload = pl;
    *len = plen;
    *userid = uid;
    *mechanism = "none";
    return 0;
inval:
    errno = EINVAL;
error:
    if (errno == ENOMEM)
        errprintf (error, "out of memory");
    free (header);
    free (pl);
    return -1;
}
