/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* kvs_commit.c - kvs.commit {namespace, flags, ops} and its response
 * {rootref, rootseq}; copy and move, chained from a TREEOBJ lookup.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kvs.h"
#include "kvs_private.h"

#define AUX_TREEOBJ "flux::kvs_commit_treeobj"

flux_future_t *flux_kvs_commit (flux_t *h, const char *ns, int flags,
                                flux_kvs_txn_t *txn)
{
    const int valid = FLUX_KVS_NO_MERGE | FLUX_KVS_TXN_COMPACT | FLUX_KVS_SYNC
                      | FLUX_KVS_LAZY;
    flux_future_t *f;
    json_t *ops;

    if (!h || !txn || (flags & ~valid)
        || ((flags & FLUX_KVS_SYNC) && (flags & FLUX_KVS_LAZY))) {
        errno = EINVAL;
        return NULL;
    }
    if (flags & FLUX_KVS_TXN_COMPACT) {
        if (!(ops = kvs_txn__compact (txn)))
            return NULL;
        flags &= ~FLUX_KVS_TXN_COMPACT;
    }
    else
        ops = json_incref (kvs_txn__ops (txn));
    f = flux_rpc_pack (h, "kvs.commit", FLUX_NODEID_ANY, 0, "{s:s s:i s:O}",
                       "namespace", kvs__namespace (ns), "flags", flags, "ops",
                       ops);
    json_decref (ops);
    return f;
}

int flux_kvs_commit_get_rootref (flux_future_t *f, const char **rootref)
{
    if (!f || !rootref) {
        errno = EINVAL;
        return -1;
    }
    return flux_rpc_get_unpack (f, "{s:s}", "rootref", rootref);
}

int flux_kvs_commit_get_sequence (flux_future_t *f, int *rootseq)
{
    if (!f || !rootseq) {
        errno = EINVAL;
        return -1;
    }
    return flux_rpc_get_unpack (f, "{s:i}", "rootseq", rootseq);
}

int flux_kvs_commit_get_treeobj (flux_future_t *f, const char **treeobj)
{
    const char *ref;
    char *s;

    if (!f || !treeobj) {
        errno = EINVAL;
        return -1;
    }
    if (flux_kvs_commit_get_rootref (f, &ref) < 0
        || !(s = kvs__dirref_text (f, AUX_TREEOBJ, ref)))
        return -1;
    *treeobj = s;
    return 0;
}

/* Copy and move
 */

struct copy_ctx {
    char *srcns, *srckey;
    char *dstns, *dstkey;
    int flags;
};

static void copy_ctx_destroy (struct copy_ctx *ctx)
{
    if (ctx) {
        int saved_errno = errno;
        free (ctx->srcns);
        free (ctx->srckey);
        free (ctx->dstns);
        free (ctx->dstkey);
        free (ctx);
        errno = saved_errno;
    }
}

static char *strdup_null (const char *s, bool *err)
{
    char *cpy = NULL;

    if (s && !(cpy = strdup (s)))
        *err = true;
    return cpy;
}

static struct copy_ctx *copy_ctx_create (const char *srcns, const char *srckey,
                                         const char *dstns, const char *dstkey,
                                         int flags)
{
    struct copy_ctx *ctx;
    bool err = false;

    if (!(ctx = calloc (1, sizeof (*ctx))))
        return NULL;
    ctx->srcns = strdup_null (srcns, &err);
    ctx->srckey = strdup_null (srckey, &err);
    ctx->dstns = strdup_null (dstns, &err);
    ctx->dstkey = strdup_null (dstkey, &err);
    ctx->flags = flags;
    if (err) {
        copy_ctx_destroy (ctx);
        errno = ENOMEM;
        return NULL;
    }
    return ctx;
}

/* Commit a one-operation transaction (put treeobj, or unlink if treeobj
 * is NULL) and make it the result of prev's chain.
 */
static void continue_with_commit (flux_future_t *prev, const char *ns,
                                  const char *key, const char *treeobj,
                                  int flags)
{
    flux_kvs_txn_t *txn;
    flux_future_t *f = NULL;
    int rc;

    if (!(txn = flux_kvs_txn_create ()))
        goto error;
    if (treeobj)
        rc = flux_kvs_txn_put_treeobj (txn, 0, key, treeobj);
    else
        rc = flux_kvs_txn_unlink (txn, 0, key);
    if (rc < 0
        || !(f = flux_kvs_commit (flux_future_get_flux (prev), ns, flags, txn)))
        goto error;
    /* On failure f may already belong to the chain: do not destroy it. */
    if (flux_future_continue (prev, f) < 0)
        goto error;
    flux_kvs_txn_destroy (txn);
    return;
error:
    flux_future_continue_error (prev, errno, NULL);
    flux_kvs_txn_destroy (txn);
}

static void copy_lookup_done (flux_future_t *f, void *arg)
{
    struct copy_ctx *ctx = arg;
    const char *treeobj;

    if (flux_kvs_lookup_get_treeobj (f, &treeobj) < 0) {
        flux_future_continue_error (f, errno, flux_future_error_string (f));
        return;
    }
    continue_with_commit (f, ctx->dstns, ctx->dstkey, treeobj, ctx->flags);
}

static void move_copy_done (flux_future_t *f, void *arg)
{
    struct copy_ctx *ctx = arg;

    continue_with_commit (f, ctx->srcns, ctx->srckey, NULL, ctx->flags);
}

/* Run cb (prev, ctx) once prev succeeds; ctx is owned by prev. */
static flux_future_t *chain (flux_future_t *prev, flux_continuation_f cb,
                             struct copy_ctx *ctx)
{
    flux_future_t *next;

    if (flux_future_aux_set (prev, "flux::kvs_copy", ctx,
                             (flux_free_f)copy_ctx_destroy)
        < 0) {
        copy_ctx_destroy (ctx);
        flux_future_destroy (prev);
        return NULL;
    }
    if (!(next = flux_future_and_then (prev, cb, ctx))) {
        flux_future_destroy (prev);
        return NULL;
    }
    return next;
}

flux_future_t *flux_kvs_copy (flux_t *h, const char *srcns, const char *srckey,
                              const char *dstns, const char *dstkey,
                              int commit_flags)
{
    struct copy_ctx *ctx;
    flux_future_t *f;

    if (!h || !srckey || !dstkey) {
        errno = EINVAL;
        return NULL;
    }
    if (!(ctx = copy_ctx_create (srcns, srckey, dstns, dstkey, commit_flags)))
        return NULL;
    if (!(f = flux_kvs_lookup (h, srcns, FLUX_KVS_TREEOBJ, srckey))) {
        copy_ctx_destroy (ctx);
        return NULL;
    }
    return chain (f, copy_lookup_done, ctx);
}

flux_future_t *flux_kvs_move (flux_t *h, const char *srcns, const char *srckey,
                              const char *dstns, const char *dstkey,
                              int commit_flags)
{
    struct copy_ctx *ctx;
    flux_future_t *f;

    if (!h || !srckey || !dstkey) {
        errno = EINVAL;
        return NULL;
    }
    if (!(ctx = copy_ctx_create (srcns, srckey, dstns, dstkey, commit_flags)))
        return NULL;
    if (!(f = flux_kvs_copy (h, srcns, srckey, dstns, dstkey, commit_flags))) {
        copy_ctx_destroy (ctx);
        return NULL;
    }
    return chain (f, move_copy_done, ctx);
}
