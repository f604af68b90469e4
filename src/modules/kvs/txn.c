/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* txn.c - decode and validate the ops of a commit (see txn.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libkvs/kvs.h"
#include "libkvs/kvs_util.h"
#include "libkvs/treeobj.h"

#include "txn.h"

struct txn {
    json_t *ops;
    int flags;
    int count;
    struct txn_op *op;
    char **keys; /* storage of the normalized keys */
};

void txn_destroy (struct txn *t)
{
    if (t) {
        int saved_errno = errno;
        for (int i = 0; i < t->count; i++)
            free (t->keys[i]);
        free (t->keys);
        free (t->op);
        json_decref (t->ops);
        free (t);
        errno = saved_errno;
    }
}

static bool guest_allowed (const json_t *dirent)
{
    return !dirent || treeobj_is_val (dirent)
           || (treeobj_is_dir (dirent) && treeobj_get_count (dirent) == 0);
}

static int decode_op (struct txn *t, int i, json_t *op, bool guest,
                      flux_error_t *error)
{
    const char *key;
    json_t *dirent;
    int flags;
    json_error_t jerr;

    if (json_unpack_ex (op, &jerr, JSON_STRICT, "{s:s s:i s:o}", "key", &key,
                        "flags", &flags, "dirent", &dirent)
        < 0) {
        errno = EPROTO;
        return errprintf (error, "op %d: %s", i, jerr.text);
    }
    if (flags != 0 && flags != FLUX_KVS_APPEND) {
        errno = EPROTO;
        return errprintf (error, "op %d: invalid flags 0x%x", i, flags);
    }
    if (json_is_null (dirent))
        dirent = NULL;
    else if (treeobj_validate (dirent) < 0) {
        errno = EPROTO;
        return errprintf (error, "op %d: invalid tree object", i);
    }
    if (treeobj_is_hdir (dirent)) {
        errno = EPROTO;
        return errprintf (error,
                          "op %d: an hdir is stored only behind a dirref", i);
    }
    if ((flags & FLUX_KVS_APPEND) && !treeobj_is_val (dirent)) {
        errno = EPROTO;
        return errprintf (error, "op %d: append needs a val", i);
    }
    if (guest && !guest_allowed (dirent)) {
        errno = EPERM;
        return errprintf (error,
                          "op %d: guests may only write values and"
                          " empty directories",
                          i);
    }
    if (!(t->keys[i] = kvs_util_normalize_key (key, NULL))) {
        errno = ENOMEM;
        return errprintf (error, "out of memory");
    }
    if (!strcmp (t->keys[i], ".")) {
        errno = EINVAL;
        return errprintf (error, "op %d: the root cannot be written", i);
    }
    t->op[i].key = t->keys[i];
    t->op[i].flags = flags;
    t->op[i].dirent = dirent;
    return 0;
}

struct txn *txn_create (json_t *ops, int flags, bool guest, flux_error_t *error)
{
    struct txn *t;
    size_t n;

    if (!json_is_array (ops)) {
        errno = EPROTO;
        errprintf (error, "ops is not an array");
        return NULL;
    }
    if (flags
        & ~(FLUX_KVS_NO_MERGE | FLUX_KVS_TXN_COMPACT | FLUX_KVS_SYNC
            | FLUX_KVS_LAZY)) {
        errno = EPROTO;
        errprintf (error, "invalid commit flags 0x%x", flags);
        return NULL;
    }
    if ((flags & FLUX_KVS_SYNC) && (flags & FLUX_KVS_LAZY)) {
        errno = EINVAL;
        errprintf (error, "commit flags SYNC and LAZY contradict each other");
        return NULL;
    }
    n = json_array_size (ops);
    if (!(t = calloc (1, sizeof (*t)))
        || (n > 0
            && (!(t->op = calloc (n, sizeof (t->op[0])))
                || !(t->keys = calloc (n, sizeof (t->keys[0])))))) {
        txn_destroy (t);
        errprintf (error, "out of memory");
        errno = ENOMEM;
        return NULL;
    }
    t->ops = json_incref (ops);
    t->flags = flags;
    t->count = (int)n;
    for (size_t i = 0; i < n; i++) {
        if (decode_op (t, (int)i, json_array_get (ops, i), guest, error) < 0) {
            txn_destroy (t);
            return NULL;
        }
    }
    return t;
}

int txn_count (const struct txn *t)
{
    return t ? t->count : 0;
}

const struct txn_op *txn_op (const struct txn *t, int index)
{
    if (!t || index < 0 || index >= t->count)
        return NULL;
    return &t->op[index];
}

int txn_flags (const struct txn *t)
{
    return t ? t->flags : 0;
}

json_t *txn_ops (const struct txn *t)
{
    return t ? t->ops : NULL;
}
