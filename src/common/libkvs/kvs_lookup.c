/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* kvs_lookup.c - kvs.lookup / kvs-watch.lookup and the decoding of their
 * {val:<treeobj>} responses.
 *
 * The lookup future is the RPC future itself, with a context attached
 * as aux.  Decoded forms of the current response (the tree object, the
 * value bytes, the JSON of the value, the directory) are cached in the
 * context and tied to the response message they came from; we hold a
 * reference to that message, so a new response (after reset) cannot
 * have the same address and is always detected.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libflux/jsonparse.h"

#include "kvs.h"
#include "kvs_private.h"
#include "treeobj.h"

#define AUX_LOOKUP "flux::kvs_lookup"

struct lookup_ctx {
    flux_t *h;
    char *key;
    char *ns;    /* NULL for lookupat */
    char *atref; /* the snapshot of lookupat, else NULL */
    int flags;

    const flux_msg_t *msg; /* the response the caches below decode */
    json_t *treeobj;       /* NULL: the sentinel (no payload) */
    char *treeobj_text;
    void *val;
    size_t val_len;
    bool val_decoded;
    json_t *val_json;
    flux_kvsdir_t *dir;
};

static void cache_clear (struct lookup_ctx *ctx)
{
    flux_msg_decref (ctx->msg);
    ctx->msg = NULL;
    json_decref (ctx->treeobj);
    ctx->treeobj = NULL;
    free (ctx->treeobj_text);
    ctx->treeobj_text = NULL;
    free (ctx->val);
    ctx->val = NULL;
    ctx->val_len = 0;
    ctx->val_decoded = false;
    json_decref (ctx->val_json);
    ctx->val_json = NULL;
    flux_kvsdir_destroy (ctx->dir);
    ctx->dir = NULL;
}

static void lookup_ctx_destroy (struct lookup_ctx *ctx)
{
    if (ctx) {
        int saved_errno = errno;
        cache_clear (ctx);
        free (ctx->key);
        free (ctx->ns);
        free (ctx->atref);
        free (ctx);
        errno = saved_errno;
    }
}

static struct lookup_ctx *lookup_ctx_create (flux_t *h, const char *ns,
                                             const char *atref, int flags,
                                             const char *key)
{
    struct lookup_ctx *ctx;

    if (!(ctx = calloc (1, sizeof (*ctx))))
        return NULL;
    ctx->h = h;
    ctx->flags = flags;
    if (!(ctx->key = strdup (key)) || (ns && !(ctx->ns = strdup (ns)))
        || (atref && !(ctx->atref = strdup (atref)))) {
        lookup_ctx_destroy (ctx);
        errno = ENOMEM;
        return NULL;
    }
    return ctx;
}

#define WATCH_MODIFIERS                                                \
    (FLUX_KVS_WATCH_FULL | FLUX_KVS_WATCH_UNIQ | FLUX_KVS_WATCH_APPEND \
     | FLUX_KVS_WATCH_INITIAL_SENTINEL)
#define WATCH_FLAGS \
    (FLUX_KVS_WATCH | FLUX_KVS_WAITCREATE | FLUX_KVS_STREAM | WATCH_MODIFIERS)

static bool valid_flags (int flags)
{
    if ((flags & FLUX_KVS_WATCH) && (flags & FLUX_KVS_STREAM))
        return false;
    if ((flags & WATCH_MODIFIERS) && !(flags & FLUX_KVS_WATCH))
        return false;
    if ((flags & FLUX_KVS_WATCH_INITIAL_SENTINEL)
        && !(flags & FLUX_KVS_WATCH_APPEND))
        return false;
    switch (flags & ~WATCH_FLAGS) {
        case 0:
        case FLUX_KVS_TREEOBJ:
        case FLUX_KVS_READDIR:
        case FLUX_KVS_READDIR | FLUX_KVS_TREEOBJ:
        case FLUX_KVS_READLINK:
            return true;
        default:
            return false;
    }
}

static flux_future_t *attach (flux_future_t *f, struct lookup_ctx *ctx)
{
    if (!f) {
        lookup_ctx_destroy (ctx);
        return NULL;
    }
    if (flux_future_aux_set (f, AUX_LOOKUP, ctx,
                             (flux_free_f)lookup_ctx_destroy)
        < 0) {
        lookup_ctx_destroy (ctx);
        flux_future_destroy (f);
        return NULL;
    }
    return f;
}

flux_future_t *flux_kvs_lookup (flux_t *h, const char *ns, int flags,
                                const char *key)
{
    const char *topic = "kvs.lookup";
    struct lookup_ctx *ctx;
    int rpc_flags = 0;
    flux_future_t *f;

    if (!h || !key || !valid_flags (flags)) {
        errno = EINVAL;
        return NULL;
    }
    ns = kvs__namespace (ns);
    if (flags & (FLUX_KVS_WATCH | FLUX_KVS_WAITCREATE | FLUX_KVS_STREAM))
        topic = "kvs-watch.lookup";
    if (flags & (FLUX_KVS_WATCH | FLUX_KVS_STREAM))
        rpc_flags = FLUX_RPC_STREAMING;
    if (!(ctx = lookup_ctx_create (h, ns, NULL, flags, key)))
        return NULL;
    f = flux_rpc_pack (h, topic, FLUX_NODEID_ANY, rpc_flags, "{s:s s:s s:i}",
                       "key", key, "namespace", ns, "flags", flags);
    return attach (f, ctx);
}

flux_future_t *flux_kvs_lookupat (flux_t *h, int flags, const char *key,
                                  const char *treeobj)
{
    struct lookup_ctx *ctx;
    flux_future_t *f;
    json_t *root;

    if (!h || !key || !treeobj || (flags & WATCH_FLAGS)
        || !valid_flags (flags)) {
        errno = EINVAL;
        return NULL;
    }
    if (!(root = treeobj_decode (treeobj)))
        return NULL;
    if (!treeobj_is_dirref (root)) {
        json_decref (root);
        errno = EINVAL;
        return NULL;
    }
    if (!(ctx = lookup_ctx_create (h, NULL, treeobj, flags, key))) {
        json_decref (root);
        return NULL;
    }
    f = flux_rpc_pack (h, "kvs.lookup", FLUX_NODEID_ANY, 0, "{s:s s:i s:o}",
                       "key", key, "flags", flags, "rootdir", root);
    return attach (f, ctx);
}

static struct lookup_ctx *get_ctx (flux_future_t *f)
{
    struct lookup_ctx *ctx;

    if (!f || !(ctx = flux_future_aux_get (f, AUX_LOOKUP))) {
        errno = EINVAL;
        return NULL;
    }
    return ctx;
}

/* Wait for the current response and decode it into ctx (once). */
static struct lookup_ctx *decode (flux_future_t *f)
{
    struct lookup_ctx *ctx;
    const flux_msg_t *msg;
    json_t *o;

    if (!(ctx = get_ctx (f)) || flux_future_get_msg (f, &msg) < 0)
        return NULL;
    if (msg == ctx->msg)
        return ctx;
    cache_clear (ctx);
    ctx->msg = flux_msg_incref (msg);
    if (!flux_msg_has_payload (msg))
        return ctx; /* the WATCH_INITIAL_SENTINEL */
    if (flux_msg_unpack (msg, "{s:o}", "val", &o) < 0
        || treeobj_validate (o) < 0) {
        cache_clear (ctx);
        errno = EPROTO;
        return NULL;
    }
    ctx->treeobj = json_incref (o);
    return ctx;
}

/* The value bytes of a val response (NULL ctx->val for the sentinel). */
static struct lookup_ctx *decode_value (flux_future_t *f)
{
    struct lookup_ctx *ctx;

    if (!(ctx = decode (f)))
        return NULL;
    if (!ctx->treeobj || ctx->val_decoded)
        return ctx;
    if (!treeobj_is_val (ctx->treeobj)) {
        errno = treeobj_is_dir (ctx->treeobj) ? EISDIR : EINVAL;
        return NULL;
    }
    if (treeobj_decode_val (ctx->treeobj, &ctx->val, &ctx->val_len) < 0) {
        errno = EPROTO;
        return NULL;
    }
    ctx->val_decoded = true;
    return ctx;
}

int flux_kvs_lookup_get (flux_future_t *f, const char **value)
{
    struct lookup_ctx *ctx;

    if (!(ctx = decode_value (f)))
        return -1;
    if (value)
        *value = ctx->val_len > 0 ? ctx->val : NULL;
    return 0;
}

int flux_kvs_lookup_get_raw (flux_future_t *f, const void **data, size_t *len)
{
    struct lookup_ctx *ctx;

    if (!(ctx = decode_value (f)))
        return -1;
    if (data)
        *data = ctx->val_len > 0 ? ctx->val : NULL;
    if (len)
        *len = ctx->val_len;
    return 0;
}

/* The JSON value of len bytes at s: jsonparse (json_loadb's result,
 * faster) for an object or array, the usual case (R, a jobspec), else
 * json_loadb with JSON_DECODE_ANY (a number, a string...). */
static json_t *decode_json (const char *s, size_t len)
{
    size_t i = 0;

    while (i < len
           && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        i++;
    if (i < len && (s[i] == '{' || s[i] == '['))
        return jsonparse (s, len, NULL, 0);
    return json_loadb (s, len, JSON_DECODE_ANY, NULL);
}

int flux_kvs_lookup_get_unpack (flux_future_t *f, const char *fmt, ...)
{
    struct lookup_ctx *ctx;
    va_list ap;
    int rc;

    if (!fmt) {
        errno = EINVAL;
        return -1;
    }
    if (!(ctx = decode_value (f)))
        return -1;
    if (!ctx->val_json) {
        if (!ctx->val
            || !(ctx->val_json = decode_json (ctx->val, ctx->val_len))) {
            errno = EINVAL;
            return -1;
        }
    }
    va_start (ap, fmt);
    rc = json_vunpack_ex (ctx->val_json, NULL, 0, fmt, ap);
    va_end (ap);
    if (rc < 0) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

/* The tree object of the current response; EINVAL for the sentinel. */
static struct lookup_ctx *decode_treeobj (flux_future_t *f)
{
    struct lookup_ctx *ctx;

    if (!(ctx = decode (f)))
        return NULL;
    if (!ctx->treeobj) {
        errno = EINVAL;
        return NULL;
    }
    return ctx;
}

int flux_kvs_lookup_get_dir (flux_future_t *f, const flux_kvsdir_t **dirp)
{
    struct lookup_ctx *ctx;

    if (!dirp) {
        errno = EINVAL;
        return -1;
    }
    if (!(ctx = decode_treeobj (f)))
        return -1;
    if (!ctx->dir) {
        if (!treeobj_is_dir (ctx->treeobj)) {
            errno = treeobj_is_dirref (ctx->treeobj) ? EINVAL : ENOTDIR;
            return -1;
        }
        if (!(ctx->dir
              = kvsdir__create (ctx->h, ctx->atref, ctx->key, ctx->treeobj)))
            return -1;
    }
    *dirp = ctx->dir;
    return 0;
}

int flux_kvs_lookup_get_treeobj (flux_future_t *f, const char **treeobj)
{
    struct lookup_ctx *ctx;

    if (!treeobj) {
        errno = EINVAL;
        return -1;
    }
    if (!(ctx = decode_treeobj (f)))
        return -1;
    if (!ctx->treeobj_text
        && !(ctx->treeobj_text = treeobj_encode (ctx->treeobj)))
        return -1;
    *treeobj = ctx->treeobj_text;
    return 0;
}

int flux_kvs_lookup_get_symlink (flux_future_t *f, const char **ns,
                                 const char **target)
{
    struct lookup_ctx *ctx;

    if (!(ctx = decode_treeobj (f)))
        return -1;
    if (!treeobj_is_symlink (ctx->treeobj)) {
        errno = EINVAL;
        return -1;
    }
    return treeobj_get_symlink (ctx->treeobj, ns, target);
}

bool flux_kvs_lookup_is_sentinel (flux_future_t *f)
{
    struct lookup_ctx *ctx = decode (f);

    return ctx && !ctx->treeobj;
}

const char *flux_kvs_lookup_get_key (flux_future_t *f)
{
    struct lookup_ctx *ctx = get_ctx (f);

    return ctx ? ctx->key : NULL;
}

const char *flux_kvs_lookup_get_namespace (flux_future_t *f)
{
    struct lookup_ctx *ctx = get_ctx (f);

    return ctx ? ctx->ns : NULL;
}

int flux_kvs_lookup_cancel (flux_future_t *f)
{
    struct lookup_ctx *ctx;
    flux_future_t *cf;

    if (!(ctx = get_ctx (f)))
        return -1;
    if (!(ctx->flags
          & (FLUX_KVS_WATCH | FLUX_KVS_WAITCREATE | FLUX_KVS_STREAM))) {
        errno = EINVAL;
        return -1;
    }
    if (!(cf = flux_rpc_pack (ctx->h, "kvs-watch.cancel", FLUX_NODEID_ANY,
                              FLUX_RPC_NORESPONSE, "{s:i}", "matchtag",
                              (int)flux_rpc_get_matchtag (f))))
        return -1;
    flux_future_destroy (cf);
    return 0;
}
