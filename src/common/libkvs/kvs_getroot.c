/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* kvs_getroot.c - kvs.getroot and the version calls built on it and on
 * kvs.wait-version.
 */
#include <errno.h>
#include <stdlib.h>

#include "kvs.h"
#include "kvs_private.h"
#include "treeobj.h"

#define AUX_TREEOBJ "flux::kvs_getroot_treeobj"

flux_future_t *flux_kvs_getroot (flux_t *h, const char *ns, int flags)
{
    if (!h || flags != 0) {
        errno = EINVAL;
        return NULL;
    }
    return flux_rpc_pack (h, "kvs.getroot", FLUX_NODEID_ANY, 0, "{s:s s:i}",
                          "namespace", kvs__namespace (ns), "flags", flags);
}

static int getroot_unpack (flux_future_t *f, const char **rootref, int *seq,
                           uint32_t *owner)
{
    const char *ref;
    json_int_t o;
    int s;

    if (flux_rpc_get_unpack (f, "{s:s s:i s:I}", "rootref", &ref, "rootseq", &s,
                             "owner", &o)
        < 0)
        return -1;
    if (rootref)
        *rootref = ref;
    if (seq)
        *seq = s;
    if (owner)
        *owner = (uint32_t)o;
    return 0;
}

int flux_kvs_getroot_get_blobref (flux_future_t *f, const char **blobref)
{
    if (!f || !blobref) {
        errno = EINVAL;
        return -1;
    }
    return getroot_unpack (f, blobref, NULL, NULL);
}

int flux_kvs_getroot_get_sequence (flux_future_t *f, int *rootseq)
{
    if (!f || !rootseq) {
        errno = EINVAL;
        return -1;
    }
    return getroot_unpack (f, NULL, rootseq, NULL);
}

int flux_kvs_getroot_get_owner (flux_future_t *f, uint32_t *owner)
{
    if (!f || !owner) {
        errno = EINVAL;
        return -1;
    }
    return getroot_unpack (f, NULL, NULL, owner);
}

/* The RFC 11 dirref text of blobref, cached on f under name. */
char *kvs__dirref_text (flux_future_t *f, const char *name, const char *blobref)
{
    json_t *o;
    char *s;

    if ((s = flux_future_aux_get (f, name)))
        return s;
    if (!(o = treeobj_create_dirref (blobref))) {
        errno = EPROTO; /* the server sent a malformed blobref */
        return NULL;
    }
    s = treeobj_encode (o);
    json_decref (o);
    if (!s)
        return NULL;
    if (flux_future_aux_set (f, name, s, free) < 0) {
        free (s);
        return NULL;
    }
    return s;
}

int flux_kvs_getroot_get_treeobj (flux_future_t *f, const char **treeobj)
{
    const char *ref;
    char *s;

    if (!f || !treeobj) {
        errno = EINVAL;
        return -1;
    }
    if (getroot_unpack (f, &ref, NULL, NULL) < 0
        || !(s = kvs__dirref_text (f, AUX_TREEOBJ, ref)))
        return -1;
    *treeobj = s;
    return 0;
}

int flux_kvs_get_version (flux_t *h, const char *ns, int *version)
{
    flux_future_t *f;
    int rc = -1;

    if (!h || !version) {
        errno = EINVAL;
        return -1;
    }
    if ((f = flux_kvs_getroot (h, ns, 0))
        && flux_kvs_getroot_get_sequence (f, version) == 0)
        rc = 0;
    flux_future_destroy (f);
    return rc;
}

int flux_kvs_wait_version (flux_t *h, const char *ns, int version)
{
    flux_future_t *f;
    int rc = -1;

    if (!h || version < 0) {
        errno = EINVAL;
        return -1;
    }
    if ((f = flux_rpc_pack (h, "kvs.wait-version", FLUX_NODEID_ANY, 0,
                            "{s:i s:s}", "rootseq", version, "namespace",
                            kvs__namespace (ns)))
        && flux_future_get (f, NULL) == 0)
        rc = 0;
    flux_future_destroy (f);
    return rc;
}
