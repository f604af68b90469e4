/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* sign.c - J with mechanisms "none" and "munge" (RFC 15, PROTOCOLS.md
 * section 6, PROTOCOLS-exec.md 5.6).
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

#include <dlfcn.h>
#include <munge.h>
#include <pthread.h>
#include <unistd.h>

#include "libcontent/blobref.h"
#include "libflux/base64.h"
#include "sign.h"

#define HEADER_MAX 4096 /* RFC 38: an implementation defined limit */
#define MUNGE_SIGLEN 33 /* hash type byte + SHA-256 */

/* "base64(header).base64(payload)" for mech and userid, in a buffer
 * with room for extra more bytes after its NUL.
 */
static char *wrap_prefix (const char *mech, const void *payload, size_t len,
                          uint32_t userid, size_t extra)
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
                     "version%ci1%cmechanism%cs%s%cuserid%ci%" PRIu32 "%c", 0,
                     0, 0, mech, 0, 0, userid, 0);
    hsize = base64_encoded_size (hlen);
    psize = base64_encoded_size (len);
    if (!(J = malloc (hsize + psize + 2 + extra))) {
        errno = ENOMEM;
        return NULL;
    }
    if ((off = base64_encode (J, hsize, header, hlen)) < 0)
        goto inval;
    J[off++] = '.';
    if ((n = base64_encode (J + off, psize, payload ? payload : "", len)) < 0)
        goto inval;
    J[off + n] = '\0';
    return J;
inval:
    free (J);
    errno = EINVAL;
    return NULL;
}

char *sign_none_wrap (const void *payload, size_t len, uint32_t userid)
{
    char *J;

    if (!(J = wrap_prefix ("none", payload, len, userid, 5)))
        return NULL;
    strcat (J, ".none");
    return J;
}

/* libmunge, loaded (dlopen, MUNGE_SONAME from configure) the first time
 * a munge J is signed or verified, as libyaml is: the flux command then
 * maps it only for a guest's submit, not at every start.
 */
static struct {
    munge_ctx_t (*ctx_create) (void);
    void (*ctx_destroy) (munge_ctx_t ctx);
    munge_err_t (*ctx_set) (munge_ctx_t ctx, int opt, ...);
    const char *(*ctx_strerror) (munge_ctx_t ctx);
    munge_err_t (*encode) (char **cred, munge_ctx_t ctx, const void *buf,
                           int len);
    munge_err_t (*decode) (const char *cred, munge_ctx_t ctx, void **buf,
                           int *len, uid_t *uid, gid_t *gid);
    char error[256]; /* why they could not be loaded, if they could not */
} mg;

static pthread_once_t mg_once = PTHREAD_ONCE_INIT;

static void *mg_sym (void *dso, const char *name)
{
    void *sym = dlsym (dso, name);

    if (!sym && !mg.error[0])
        snprintf (mg.error, sizeof (mg.error), "%s: no symbol %s", MUNGE_SONAME,
                  name);
    return sym;
}

static void mg_load (void)
{
    void *dso = dlopen (MUNGE_SONAME, RTLD_NOW | RTLD_LOCAL);

    if (!dso) {
        const char *e = dlerror ();
        snprintf (mg.error, sizeof (mg.error), "cannot load %s: %s",
                  MUNGE_SONAME, e ? e : "unknown error");
        return;
    }
    /* the DSO stays loaded for the life of the process */
    *(void **)&mg.ctx_create = mg_sym (dso, "munge_ctx_create");
    *(void **)&mg.ctx_destroy = mg_sym (dso, "munge_ctx_destroy");
    *(void **)&mg.ctx_set = mg_sym (dso, "munge_ctx_set");
    *(void **)&mg.ctx_strerror = mg_sym (dso, "munge_ctx_strerror");
    *(void **)&mg.encode = mg_sym (dso, "munge_encode");
    *(void **)&mg.decode = mg_sym (dso, "munge_decode");
}

static munge_ctx_t munge_ctx (flux_error_t *error)
{
    const char *path = getenv ("FLUX_MUNGE_SOCKET");
    munge_ctx_t ctx;

    (void)pthread_once (&mg_once, mg_load);
    if (mg.error[0]) {
        errprintf (error, "munge: %s", mg.error);
        errno = ENOSYS;
        return NULL;
    }
    if (!(ctx = mg.ctx_create ())) {
        errprintf (error, "out of memory");
        errno = ENOMEM;
        return NULL;
    }
    if (path && *path
        && mg.ctx_set (ctx, MUNGE_OPT_SOCKET, path) != EMUNGE_SUCCESS) {
        errprintf (error, "munge: cannot use socket %s", path);
        mg.ctx_destroy (ctx);
        errno = EINVAL;
        return NULL;
    }
    return ctx;
}

/* The 33 bytes a munge signature carries for prefix "h64.p64". */
static void munge_digest (const char *prefix, size_t len,
                          uint8_t out[MUNGE_SIGLEN])
{
    out[0] = 1; /* hash type SHA-256, as flux-security numbers it */
    blobref_hash_raw ("sha256", prefix, len, out + 1, MUNGE_SIGLEN - 1);
}

static char *sign_munge_wrap (const void *payload, size_t len, uint32_t userid,
                              flux_error_t *error)
{
    uint8_t digest[MUNGE_SIGLEN];
    munge_ctx_t ctx;
    munge_err_t e;
    char *prefix, *cred = NULL, *J;

    if (userid != getuid ()) {
        errprintf (error, "munge signs for the caller's uid %u, not %" PRIu32,
                   (unsigned)getuid (), userid);
        errno = EINVAL;
        return NULL;
    }
    if (!(prefix = wrap_prefix ("munge", payload, len, userid, 0))) {
        errprintf (error, "%s",
                   errno == ENOMEM ? "out of memory"
                                   : "payload may not contain NUL");
        return NULL;
    }
    munge_digest (prefix, strlen (prefix), digest);
    if (!(ctx = munge_ctx (error))) {
        free (prefix);
        return NULL;
    }
    e = mg.encode (&cred, ctx, digest, sizeof (digest));
    if (e != EMUNGE_SUCCESS) {
        errprintf (error, "munge: %s", mg.ctx_strerror (ctx));
        mg.ctx_destroy (ctx);
        free (prefix);
        free (cred);
        errno = EPERM;
        return NULL;
    }
    mg.ctx_destroy (ctx);
    if (asprintf (&J, "%s.%s", prefix, cred) < 0) {
        errprintf (error, "out of memory");
        J = NULL;
        errno = ENOMEM;
    }
    free (prefix);
    free (cred);
    return J;
}

char *sign_wrap (const char *mechanism, const void *payload, size_t len,
                 uint32_t userid, flux_error_t *error)
{
    char *J;

    if (mechanism && !strcmp (mechanism, "munge"))
        return sign_munge_wrap (payload, len, userid, error);
    if (!mechanism || strcmp (mechanism, "none") != 0) {
        errprintf (error, "unknown signing mechanism %.32s",
                   mechanism ? mechanism : "(null)");
        errno = EINVAL;
        return NULL;
    }
    if (!(J = sign_none_wrap (payload, len, userid)))
        errprintf (error, "%s",
                   errno == ENOMEM ? "out of memory"
                                   : "payload may not contain NUL");
    return J;
}

/* Verify the munge credential cred over prefix[0..len) for userid. */
static int munge_verify (const char *prefix, size_t len, const char *cred,
                         uint32_t userid, flux_error_t *error)
{
    uint8_t digest[MUNGE_SIGLEN];
    munge_ctx_t ctx;
    munge_err_t e;
    void *buf = NULL;
    int buflen = 0;
    uid_t uid;
    gid_t gid;

    if (!(ctx = munge_ctx (error)))
        return -1;
    e = mg.decode (cred, ctx, &buf, &buflen, &uid, &gid);
    if (e != EMUNGE_SUCCESS && e != EMUNGE_CRED_REPLAYED) {
        errprintf (error, "J signature: munge: %s", mg.ctx_strerror (ctx));
        goto perm;
    }
    munge_digest (prefix, len, digest);
    if (buflen != MUNGE_SIGLEN || memcmp (buf, digest, MUNGE_SIGLEN) != 0) {
        errprintf (error, "J signature does not match its header and payload");
        goto perm;
    }
    if (uid != (uid_t)userid) {
        errprintf (error,
                   "J signature: uid mismatch (credential uid %u, "
                   "header userid %" PRIu32 ")",
                   (unsigned)uid, userid);
        goto perm;
    }
    free (buf);
    mg.ctx_destroy (ctx);
    return 0;
perm:
    free (buf);
    mg.ctx_destroy (ctx);
    errno = EPERM;
    return -1;
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

/* The form of a MUNGE credential: "MUNGE:" base64 ":" */
static bool munge_cred_form (const char *s)
{
    size_t n = strlen (s);

    if (n < 8 || strncmp (s, "MUNGE:", 6) != 0 || s[n - 1] != ':')
        return false;
    for (size_t i = 6; i < n - 1; i++)
        if (!strchr ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                     "0123456789+/=",
                     s[i]))
            return false;
    return true;
}

int sign_unwrap (const char *J, char **payload, size_t *len, uint32_t *userid,
                 const char **mechanism, flux_error_t *error)
{
    return sign_unwrap_ex (J, SIGN_NOVERIFY, payload, len, userid, mechanism,
                           error);
}

int sign_unwrap_ex (const char *J, int flags, char **payload, size_t *len,
                    uint32_t *userid, const char **mechanism,
                    flux_error_t *error)
{
    bool munge = false;
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
    if (!strcmp (mech, "munge"))
        munge = true;
    else if (strcmp (mech, "none") != 0) {
        errprintf (error, "unknown mechanism %.32s", mech);
        goto inval;
    }
    if (flags & ~SIGN_NOVERIFY) {
        errprintf (error, "invalid flags");
        goto inval;
    }
    if (!munge && strcmp (dot2 + 1, "none") != 0) {
        errprintf (error, "J signature must be 'none' for mechanism none");
        goto inval;
    }
    if (munge && !munge_cred_form (dot2 + 1)) {
        errprintf (error, "J signature is not a MUNGE credential");
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
    if (munge && !(flags & SIGN_NOVERIFY)
        && munge_verify (J, dot2 - J, dot2 + 1, uid, error) < 0)
        goto error;
    free (header);
    *payload = pl;
    *len = plen;
    *userid = uid;
    *mechanism = munge ? "munge" : "none";
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
