/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* content.c - client RPCs of the content service: content.load,
 * content.store (or their content-backing.* variants), and the KVS root
 * checkpoint (content.checkpoint-get / content.checkpoint-put on rank 0).
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blobref.h"
#include "content.h"

static const char *topic_of (int flags, const char *method)
{
    if (flags & CONTENT_FLAG_CACHE_BYPASS)
        return !strcmp (method, "load") ? "content-backing.load"
                                        : "content-backing.store";
    return !strcmp (method, "load") ? "content.load" : "content.store";
}

static int check_flags (int flags)
{
    if (flags & ~(CONTENT_FLAG_CACHE_BYPASS | CONTENT_FLAG_UPSTREAM)) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

flux_future_t *content_load_byhash (flux_t *h, const void *hash, size_t len,
                                    int flags)
{
    uint32_t nodeid;

    if (!h || !hash || len == 0 || len > BLOBREF_MAX_DIGEST_SIZE
        || check_flags (flags) < 0) {
        errno = EINVAL;
        return NULL;
    }
    nodeid = flags & CONTENT_FLAG_UPSTREAM ? FLUX_NODEID_UPSTREAM
                                           : FLUX_NODEID_ANY;
    return flux_rpc_raw (h, topic_of (flags, "load"), hash, len, nodeid, 0);
}

flux_future_t *content_load_byblobref (flux_t *h, const char *blobref,
                                       int flags)
{
    char hash[BLOBREF_MAX_DIGEST_SIZE];
    int len;

    if ((len = blobref_strtohash (blobref, hash, sizeof (hash))) < 0)
        return NULL;
    return content_load_byhash (h, hash, len, flags);
}

int content_load_get (flux_future_t *f, const void **buf, size_t *len)
{
    const void *data = NULL;
    size_t size = 0;

    if (flux_rpc_get_raw (f, &data, &size) < 0)
        return -1;
    if (buf)
        *buf = size > 0 ? data : NULL;
    if (len)
        *len = size;
    return 0;
}

flux_future_t *content_store (flux_t *h, const void *buf, size_t len, int flags)
{
    uint32_t nodeid;

    if (!h || (!buf && len > 0) || check_flags (flags) < 0) {
        errno = EINVAL;
        return NULL;
    }
    nodeid = flags & CONTENT_FLAG_UPSTREAM ? FLUX_NODEID_UPSTREAM
                                           : FLUX_NODEID_ANY;
    /* RFC 10: the empty blob is sent with no payload */
    return flux_rpc_raw (h, topic_of (flags, "store"), len > 0 ? buf : NULL,
                         len, nodeid, 0);
}

int content_store_get_hash (flux_future_t *f, const void **hash, size_t *len)
{
    const void *data;
    size_t size;

    if (flux_rpc_get_raw (f, &data, &size) < 0)
        return -1;
    if (size != 20 && size != 32) {
        errno = EPROTO;
        return -1;
    }
    if (hash)
        *hash = data;
    if (len)
        *len = size;
    return 0;
}

int content_store_get_blobref (flux_future_t *f, const char *hashtype,
                               const char **blobref)
{
    const void *hash;
    size_t len;
    char *s;
    int size;

    if ((size = blobref_hashtype_size (hashtype)) < 0)
        return -1;
    if (content_store_get_hash (f, &hash, &len) < 0)
        return -1;
    if (len != (size_t)size) {
        errno = EPROTO;
        return -1;
    }
    if (!(s = flux_future_aux_get (f, "content::blobref"))) {
        if (!(s = malloc (BLOBREF_MAX_STRING_SIZE)))
            return -1;
        if (blobref_hashtostr (hashtype, hash, len, s, BLOBREF_MAX_STRING_SIZE)
                < 0
            || flux_future_aux_set (f, "content::blobref", s, free) < 0) {
            int saved_errno = errno;
            free (s);
            errno = saved_errno;
            return -1;
        }
    }
    if (blobref)
        *blobref = s;
    return 0;
}

flux_future_t *content_checkpoint_put_with (flux_t *h, const char *rootref,
                                            int sequence, json_t *extra)
{
    struct timespec ts;
    json_t *value;
    flux_future_t *f;

    if (!h || !rootref || blobref_validate (rootref) < 0 || sequence < 0
        || (extra && !json_is_object (extra))) {
        errno = EINVAL;
        return NULL;
    }
    clock_gettime (CLOCK_REALTIME, &ts);
    if (!(value = extra ? json_deep_copy (extra) : json_object ())
        || json_object_set_new (value, "version", json_integer (1)) < 0
        || json_object_set_new (value, "rootref", json_string (rootref)) < 0
        || json_object_set_new (value, "sequence", json_integer (sequence)) < 0
        || json_object_set_new (value, "timestamp",
                                json_real (ts.tv_sec + ts.tv_nsec * 1e-9))
               < 0) {
        json_decref (value);
        errno = ENOMEM;
        return NULL;
    }
    f = flux_rpc_pack (h, "content.checkpoint-put", 0, 0, "{s:o}", "value",
                       value);
    return f;
}

flux_future_t *content_checkpoint_put (flux_t *h, const char *rootref,
                                       int sequence)
{
    return content_checkpoint_put_with (h, rootref, sequence, NULL);
}

flux_future_t *content_write (flux_t *h, int digest_size,
                              const struct content_write_blob *blobs, int n,
                              const char *rootref, int sequence)
{
    json_t *cp = NULL;
    char *cptext = NULL;
    void *buf = NULL;
    size_t len;
    flux_future_t *f = NULL;
    int saved_errno;

    if (!h || (rootref && (blobref_validate (rootref) < 0 || sequence < 0))) {
        errno = EINVAL;
        return NULL;
    }
    if (rootref) {
        struct timespec ts;
        clock_gettime (CLOCK_REALTIME, &ts);
        if (!(cp = json_pack ("{s:i s:s s:i s:f}", "version", 1, "rootref",
                              rootref, "sequence", sequence, "timestamp",
                              ts.tv_sec + ts.tv_nsec * 1e-9))
            || !(cptext = json_dumps (cp, JSON_COMPACT | JSON_SORT_KEYS))) {
            errno = ENOMEM;
            goto done;
        }
    }
    if (!(buf = content_write_encode (digest_size, blobs, n, cptext, 0, &len)))
        goto done;
    f = flux_rpc_raw (h, "content.write", buf, len, 0, 0);
done:
    saved_errno = errno;
    free (buf);
    free (cptext);
    json_decref (cp);
    errno = saved_errno;
    return f;
}

flux_future_t *content_checkpoint_get (flux_t *h)
{
    if (!h) {
        errno = EINVAL;
        return NULL;
    }
    return flux_rpc (h, "content.checkpoint-get", NULL, 0, 0);
}

int content_checkpoint_get_object (flux_future_t *f, json_t **object)
{
    json_t *value, *o;

    if (flux_rpc_get_unpack (f, "{s:o}", "value", &value) < 0)
        return -1;
    if (json_is_array (value)) {
        if (json_array_size (value) == 0) {
            errno = ENOENT;
            return -1;
        }
        o = json_array_get (value, 0);
    }
    else
        o = value;
    if (!json_is_object (o)) {
        errno = EPROTO;
        return -1;
    }
    *object = o;
    return 0;
}

int content_checkpoint_get_value (flux_future_t *f, const char **rootref,
                                  int *sequence, double *timestamp)
{
    json_t *o;
    const char *ref;
    int version, seq;
    double t = 0;

    if (content_checkpoint_get_object (f, &o) < 0)
        return -1;
    if (json_unpack (o, "{s:i s:s s:i s?F}", "version", &version, "rootref",
                     &ref, "sequence", &seq, "timestamp", &t)
        < 0) {
        errno = EPROTO;
        return -1;
    }
    if (version != 1) {
        errno = EINVAL;
        return -1;
    }
    if (rootref)
        *rootref = ref;
    if (sequence)
        *sequence = seq;
    if (timestamp)
        *timestamp = t;
    return 0;
}

int content_checkpoint_get_rootref (flux_future_t *f, const char **rootref,
                                    int *sequence)
{
    return content_checkpoint_get_value (f, rootref, sequence, NULL);
}
