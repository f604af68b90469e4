/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* kvs_namespace.c - the default namespace and the namespace RPCs
 * (kvs.namespace-create/-remove on rank 0, kvs.namespace-list).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libcontent/blobref.h"

#include "kvs.h"
#include "kvs_private.h"
#include "treeobj.h"

const char *flux_kvs_default_namespace (void)
{
    const char *ns = getenv ("FLUX_KVS_NAMESPACE");

    return ns && *ns ? ns : KVS_PRIMARY_NAMESPACE;
}

const char *kvs__namespace (const char *ns)
{
    return ns ? ns : flux_kvs_default_namespace ();
}

flux_future_t *flux_kvs_namespace_create_with (flux_t *h, const char *ns,
                                               const char *rootref,
                                               uint32_t owner, int flags)
{
    if (!h || !ns || !*ns || !rootref || blobref_validate (rootref) < 0
        || flags != 0) {
        errno = EINVAL;
        return NULL;
    }
    return flux_rpc_pack (h, "kvs.namespace-create", 0, 0, "{s:s s:s s:i s:i}",
                          "namespace", ns, "rootref", rootref, "owner",
                          (int)owner, "flags", flags);
}

flux_future_t *flux_kvs_namespace_create (flux_t *h, const char *ns,
                                          uint32_t owner, int flags)
{
    char rootref[BLOBREF_MAX_STRING_SIZE];
    const char *hashtype;
    json_t *dir;
    int rc;

    if (!h || !ns || !*ns || flags != 0) {
        errno = EINVAL;
        return NULL;
    }
    if (!(hashtype = flux_attr_get (h, "content.hash")))
        hashtype = "sha1";
    if (!(dir = treeobj_create_dir ()))
        return NULL;
    rc = treeobj_hash (hashtype, dir, rootref, sizeof (rootref));
    json_decref (dir);
    if (rc < 0)
        return NULL;
    return flux_kvs_namespace_create_with (h, ns, rootref, owner, flags);
}

flux_future_t *flux_kvs_namespace_remove (flux_t *h, const char *ns)
{
    if (!h || !ns || !*ns) {
        errno = EINVAL;
        return NULL;
    }
    return flux_rpc_pack (h, "kvs.namespace-remove", 0, 0, "{s:s}", "namespace",
                          ns);
}

flux_future_t *flux_kvs_namespace_list (flux_t *h)
{
    if (!h) {
        errno = EINVAL;
        return NULL;
    }
    return flux_rpc (h, "kvs.namespace-list", NULL, FLUX_NODEID_ANY, 0);
}
