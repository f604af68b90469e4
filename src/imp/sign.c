/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* sign.c - decode and verify J (munge, none) for flux-imp. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <munge.h>

#include "b64.h"
#include "sha256.h"
#include "sign.h"

#define HEADER_MAX 4096

void imp_j_clear (struct imp_j *j)
{
    if (j) {
        free (j->payload);
        free (j->signed_text);
        free (j->signature);
        memset (j, 0, sizeof (*j));
    }
}

/* RFC 38 header: key\0 <type><value>\0 ..., exactly the three keys. */
static int header_parse (const char *h, size_t len, struct imp_j *j,
                         struct imp_err *e)
{
    bool have_v = false, have_m = false, have_u = false;
    const char *p = h, *end = h + len;

    while (p < end) {
        const char *key = p;
        const char *nul = memchr (p, '\0', end - p);
        const char *val, *vend;

        if (!nul || nul == key)
            return imp_errf (e, "J header is not RFC 38 key-value text");
        val = nul + 1;
        if (val >= end || !(vend = memchr (val, '\0', end - val)))
            return imp_errf (e, "J header is not RFC 38 key-value text");
        if (!strcmp (key, "version")) {
            if (have_v)
                return imp_errf (e, "J header has key version twice");
            have_v = true;
            if (strcmp (val, "i1") != 0)
                return imp_errf (e, "J header version must be i1");
        }
        else if (!strcmp (key, "mechanism")) {
            if (have_m)
                return imp_errf (e, "J header has key mechanism twice");
            have_m = true;
            if (val[0] != 's' || (size_t)(vend - val) > sizeof (j->mechanism))
                return imp_errf (e, "J header mechanism is not valid");
            strcpy (j->mechanism, val + 1);
        }
        else if (!strcmp (key, "userid")) {
            char *ep;
            unsigned long long u;
            if (have_u)
                return imp_errf (e, "J header has key userid twice");
            have_u = true;
            if (val[0] != 'i' || val[1] < '0' || val[1] > '9')
                return imp_errf (e, "J header userid must be an integer");
            errno = 0;
            u = strtoull (val + 1, &ep, 10);
            if (*ep != '\0' || errno != 0 || u > UINT32_MAX)
                return imp_errf (e, "J header userid is not a valid uid");
            j->userid = (uint32_t)u;
        }
        else
            return imp_errf (e, "J header has unknown key '%.32s'", key);
        p = vend + 1;
    }
    if (!have_v || !have_m || !have_u)
        return imp_errf (e, "J header is missing key %s",
                         !have_v   ? "version"
                         : !have_m ? "mechanism"
                                   : "userid");
    return 0;
}

int imp_j_decode (const char *J, struct imp_j *j, struct imp_err *e)
{
    const char *dot1, *dot2;
    char *header = NULL;
    size_t hlen, Jlen;

    memset (j, 0, sizeof (*j));
    if (!J)
        return imp_errf (e, "J is missing");
    Jlen = strnlen (J, IMP_J_MAX + 1);
    if (Jlen > IMP_J_MAX)
        return imp_errf (e, "J is longer than %d bytes", IMP_J_MAX);
    if (!(dot1 = strchr (J, '.')) || !(dot2 = strchr (dot1 + 1, '.'))
        || strchr (dot2 + 1, '.'))
        return imp_errf (e, "J does not have 3 parts");
    if ((size_t)(dot1 - J) > (HEADER_MAX + 2) / 3 * 4)
        return imp_errf (e, "J header is too long");
    if (!(header = b64_decode (J, dot1 - J, &hlen)))
        return imp_errf (e, errno == ENOMEM ? "out of memory"
                                            : "J header is not valid base64");
    if (header_parse (header, hlen, j, e) < 0)
        goto error;
    free (header);
    header = NULL;
    if (!(j->payload
          = b64_decode (dot1 + 1, dot2 - dot1 - 1, &j->payload_len))) {
        imp_errf (e, errno == ENOMEM ? "out of memory"
                                     : "J payload is not valid base64");
        goto error;
    }
    if (strlen (j->payload) != j->payload_len) {
        imp_errf (e, "J payload contains a NUL byte");
        goto error;
    }
    j->signed_len = dot2 - J;
    if (!(j->signed_text = strndup (J, j->signed_len))
        || !(j->signature = strdup (dot2 + 1))) {
        imp_errf (e, "out of memory");
        goto error;
    }
    if (j->signature[0] == '\0') {
        imp_errf (e, "J signature is empty");
        goto error;
    }
    if (strcmp (j->mechanism, "none") == 0) {
        if (strcmp (j->signature, "none") != 0) {
            imp_errf (e, "J signature must be 'none' for mechanism none");
            goto error;
        }
    }
    else if (strcmp (j->mechanism, "munge") != 0) {
        imp_errf (e, "J mechanism %s is not supported", j->mechanism);
        goto error;
    }
    return 0;
error:
    free (header);
    imp_j_clear (j);
    return -1;
}

static void digest (const struct imp_j *j, uint8_t out[IMP_MUNGE_PAYLOAD_SIZE])
{
    struct sha256_ctx ctx;

    out[0] = 1; /* hash type: SHA-256 */
    sha256_init (&ctx);
    sha256_update (&ctx, j->signed_text, j->signed_len);
    sha256_final (&ctx, out + 1);
}

int imp_j_check_munge (const struct imp_j *j, const void *cred, size_t credlen,
                       uint32_t cred_uid, time_t encode_time, int max_ttl,
                       time_t now, struct imp_err *e)
{
    uint8_t want[IMP_MUNGE_PAYLOAD_SIZE];

    if (credlen != IMP_MUNGE_PAYLOAD_SIZE || !cred
        || ((const uint8_t *)cred)[0] != 1)
        return imp_errf (e, "J: munge payload is not a SHA-256 hash");
    digest (j, want);
    if (memcmp (want, cred, sizeof (want)) != 0)
        return imp_errf (e, "J: signature does not match the content");
    if (cred_uid != j->userid)
        return imp_errf (
            e, "J: uid mismatch (credential %" PRIu32 ", header %" PRIu32 ")",
            cred_uid, j->userid);
    if (max_ttl <= 0 || encode_time > now + 300 /* clock skew */
        || (int64_t)encode_time + max_ttl < (int64_t)now)
        return imp_errf (e, "J: expired (signed %lld s ago, max-ttl %d)",
                         (long long)(now - encode_time), max_ttl);
    return 0;
}

static munge_ctx_t ctx_create (const char *socket, struct imp_err *e)
{
    munge_ctx_t ctx;

    if (!(ctx = munge_ctx_create ())) {
        imp_errf (e, "munge: out of memory");
        return NULL;
    }
    if (socket
        && munge_ctx_set (ctx, MUNGE_OPT_SOCKET, socket) != EMUNGE_SUCCESS) {
        imp_errf (e, "munge: socket %s: %s", socket, munge_ctx_strerror (ctx));
        munge_ctx_destroy (ctx);
        return NULL;
    }
    return ctx;
}

int imp_j_verify (const struct imp_j *j, bool allow_munge, bool allow_none,
                  const char *socket, int max_ttl, uint32_t caller,
                  uint32_t *uid, struct imp_err *e)
{
    if (!strcmp (j->mechanism, "none")) {
        if (!allow_none)
            return imp_errf (e,
                             "J: mechanism none is not in sign.allowed-types");
        if (j->userid != caller)
            return imp_errf (e,
                             "J: mechanism none signed by %" PRIu32
                             ", not by the caller %" PRIu32,
                             j->userid, caller);
        *uid = j->userid;
        return 0;
    }
    if (strcmp (j->mechanism, "munge") != 0)
        return imp_errf (e, "J: mechanism %s is not supported", j->mechanism);
    if (!allow_munge)
        return imp_errf (e, "J: mechanism munge is not in sign.allowed-types");

    munge_ctx_t ctx;
    munge_err_t rc;
    void *buf = NULL;
    int len = 0;
    uid_t cuid;
    gid_t cgid;
    time_t t = 0;
    int ret;

    if (!(ctx = ctx_create (socket, e)))
        return -1;
    rc = munge_decode (j->signature, ctx, &buf, &len, &cuid, &cgid);
    /* every node's IMP decodes the same credential; ingest may too */
    if (rc != EMUNGE_SUCCESS && rc != EMUNGE_CRED_REPLAYED) {
        if (rc == EMUNGE_CRED_EXPIRED || rc == EMUNGE_CRED_REWOUND)
            imp_errf (e, "J: expired (munge: %s)", munge_ctx_strerror (ctx));
        else
            imp_errf (e, "J: munge: %s", munge_ctx_strerror (ctx));
        free (buf);
        munge_ctx_destroy (ctx);
        return -1;
    }
    if (munge_ctx_get (ctx, MUNGE_OPT_ENCODE_TIME, &t) != EMUNGE_SUCCESS) {
        imp_errf (e, "J: munge: no encode time");
        free (buf);
        munge_ctx_destroy (ctx);
        return -1;
    }
    ret = imp_j_check_munge (j, buf, len < 0 ? 0 : (size_t)len, (uint32_t)cuid,
                             t, max_ttl, time (NULL), e);
    free (buf);
    munge_ctx_destroy (ctx);
    if (ret == 0)
        *uid = cuid;
    return ret;
}

char *imp_j_wrap (const char *mech, const void *payload, size_t len,
                  uint32_t userid, const char *socket, int ttl,
                  struct imp_err *e)
{
    char header[128];
    int hlen;
    char *h64 = NULL, *p64 = NULL, *J = NULL, *sig = NULL;
    struct imp_j j = {0};

    if (!mech || (strcmp (mech, "munge") && strcmp (mech, "none"))) {
        imp_errf (e, "unknown mechanism %s", mech ? mech : "(null)");
        return NULL;
    }
    if (len > 0 && (!payload || memchr (payload, '\0', len))) {
        imp_errf (e, "payload contains a NUL byte");
        return NULL;
    }
    hlen = snprintf (header, sizeof (header),
                     "version%ci1%cmechanism%cs%s%cuserid%ci%" PRIu32 "%c", 0,
                     0, 0, mech, 0, 0, userid, 0);
    if (!(h64 = b64_encode (header, hlen))
        || !(p64 = b64_encode (len ? payload : "", len))) {
        imp_errf (e, "out of memory");
        goto done;
    }
    if (!strcmp (mech, "none"))
        sig = strdup ("none");
    else {
        uint8_t d[IMP_MUNGE_PAYLOAD_SIZE];
        munge_ctx_t ctx;
        munge_err_t rc;

        if (asprintf (&j.signed_text, "%s.%s", h64, p64) < 0) {
            j.signed_text = NULL;
            imp_errf (e, "out of memory");
            goto done;
        }
        j.signed_len = strlen (j.signed_text);
        digest (&j, d);
        if (!(ctx = ctx_create (socket, e)))
            goto done;
        if (ttl > 0
            && munge_ctx_set (ctx, MUNGE_OPT_TTL, ttl) != EMUNGE_SUCCESS) {
            imp_errf (e, "munge: ttl: %s", munge_ctx_strerror (ctx));
            munge_ctx_destroy (ctx);
            goto done;
        }
        rc = munge_encode (&sig, ctx, d, sizeof (d));
        if (rc != EMUNGE_SUCCESS) {
            imp_errf (e, "munge: %s", munge_ctx_strerror (ctx));
            munge_ctx_destroy (ctx);
            sig = NULL;
            goto done;
        }
        munge_ctx_destroy (ctx);
    }
    if (!sig || asprintf (&J, "%s.%s.%s", h64, p64, sig) < 0) {
        J = NULL;
        imp_errf (e, "out of memory");
    }
done:
    free (j.signed_text);
    free (sig);
    free (h64);
    free (p64);
    return J;
}
