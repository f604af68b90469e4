/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* kvs_txn.c - KVS transactions: a JSON array of operations
 * {key:s, flags:i, dirent:<treeobj>|null}, exactly as kvs.commit takes
 * them (PROTOCOLS.md 4), plus the client-side TXN_COMPACT pass.
 */
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kvs.h"
#include "kvs_private.h"
#include "kvs_util.h"
#include "libutil/utf8.h"
#include "treeobj.h"

struct flux_kvs_txn {
    json_t *ops;
};

flux_kvs_txn_t *flux_kvs_txn_create (void)
{
    flux_kvs_txn_t *txn;

    if (!(txn = calloc (1, sizeof (*txn))))
        return NULL;
    if (!(txn->ops = json_array ())) {
        free (txn);
        errno = ENOMEM;
        return NULL;
    }
    return txn;
}

void flux_kvs_txn_destroy (flux_kvs_txn_t *txn)
{
    if (txn) {
        int saved_errno = errno;
        json_decref (txn->ops);
        free (txn);
        errno = saved_errno;
    }
}

int flux_kvs_txn_clear (flux_kvs_txn_t *txn)
{
    if (!txn) {
        errno = EINVAL;
        return -1;
    }
    json_array_clear (txn->ops);
    return 0;
}

json_t *kvs_txn__ops (const flux_kvs_txn_t *txn)
{
    return txn ? txn->ops : NULL;
}

int kvs_txn__append (flux_kvs_txn_t *dst, const flux_kvs_txn_t *src)
{
    if (!dst || !src || dst == src) {
        errno = EINVAL;
        return -1;
    }
    if (json_array_extend (dst->ops, src->ops) < 0) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

/* Append {key, flags, dirent} with key normalized; dirent is stolen
 * (NULL: a null dirent, i.e. unlink).  On failure txn is unchanged.
 */
static int append_op (flux_kvs_txn_t *txn, const char *key, int flags,
                      json_t *dirent)
{
    json_t *op = NULL;
    char *nkey = NULL;

    if (!txn || !key || !(nkey = kvs_util_normalize_key (key, NULL)))
        goto inval;
    /* A key travels as a JSON string: json_string() would fail on invalid
     * UTF-8, which is not ENOMEM: checked here, once */
    if (!strcmp (nkey, ".") || !utf8_valid (nkey, strlen (nkey)))
        goto inval;
    if (!dirent)
        dirent = json_null ();
    if (!(op = json_object ())
        || json_object_set_new (op, "key", json_string_nocheck (nkey)) < 0
        || json_object_set_new (op, "flags", json_integer (flags)) < 0
        || json_object_set (op, "dirent", dirent) < 0
        || json_array_append_new (txn->ops, op) < 0) {
        json_decref (op);
        json_decref (dirent);
        free (nkey);
        errno = ENOMEM;
        return -1;
    }
    json_decref (dirent);
    free (nkey);
    return 0;
inval:
    json_decref (dirent);
    free (nkey);
    errno = EINVAL;
    return -1;
}

int flux_kvs_txn_put_raw (flux_kvs_txn_t *txn, int flags, const char *key,
                          const void *data, size_t len)
{
    json_t *dirent;

    if (!txn || !key || (flags & ~FLUX_KVS_APPEND) || (!data && len > 0)) {
        errno = EINVAL;
        return -1;
    }
    if (!(dirent = treeobj_create_val (data, len)))
        return -1;
    return append_op (txn, key, flags, dirent);
}

int flux_kvs_txn_put (flux_kvs_txn_t *txn, int flags, const char *key,
                      const char *value)
{
    return flux_kvs_txn_put_raw (txn, flags, key, value,
                                 value ? strlen (value) : 0);
}

int flux_kvs_txn_vpack (flux_kvs_txn_t *txn, int flags, const char *key,
                        const char *fmt, va_list ap)
{
    json_t *o;
    char *s;
    int rc;

    if (!txn || !key || !fmt) {
        errno = EINVAL;
        return -1;
    }
    if (!(o = json_vpack_ex (NULL, 0, fmt, ap))) {
        errno = EINVAL;
        return -1;
    }
    s = json_dumps (o, JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref (o);
    if (!s) {
        errno = ENOMEM;
        return -1;
    }
    rc = flux_kvs_txn_put (txn, flags, key, s);
    free (s);
    return rc;
}

int flux_kvs_txn_pack (flux_kvs_txn_t *txn, int flags, const char *key,
                       const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start (ap, fmt);
    rc = flux_kvs_txn_vpack (txn, flags, key, fmt, ap);
    va_end (ap);
    return rc;
}

int flux_kvs_txn_put_treeobj (flux_kvs_txn_t *txn, int flags, const char *key,
                              const char *treeobj)
{
    json_t *dirent;

    if (!txn || !key || !treeobj || flags != 0) {
        errno = EINVAL;
        return -1;
    }
    if (!(dirent = treeobj_decode (treeobj)))
        return -1;
    return append_op (txn, key, flags, dirent);
}

int flux_kvs_txn_mkdir (flux_kvs_txn_t *txn, int flags, const char *key)
{
    json_t *dirent;

    if (!txn || !key || flags != 0) {
        errno = EINVAL;
        return -1;
    }
    if (!(dirent = treeobj_create_dir ()))
        return -1;
    return append_op (txn, key, flags, dirent);
}

int flux_kvs_txn_unlink (flux_kvs_txn_t *txn, int flags, const char *key)
{
    if (!txn || !key || flags != 0) {
        errno = EINVAL;
        return -1;
    }
    return append_op (txn, key, flags, NULL);
}

int flux_kvs_txn_symlink (flux_kvs_txn_t *txn, int flags, const char *key,
                          const char *ns, const char *target)
{
    json_t *dirent;

    if (!txn || !key || !target || flags != 0) {
        errno = EINVAL;
        return -1;
    }
    if (!(dirent = treeobj_create_symlink (ns, target)))
        return -1;
    return append_op (txn, key, flags, dirent);
}

/* Compaction
 */

static bool op_is_val (json_t *op, int *flags)
{
    json_t *dirent = json_object_get (op, "dirent");
    json_int_t f = json_integer_value (json_object_get (op, "flags"));

    *flags = (int)f;
    return treeobj_is_val (dirent) && (f == 0 || f == FLUX_KVS_APPEND);
}

/* The data of an operation of out that appends were merged into: kept
 * decoded and grown in place, encoded once when compaction ends, so a txn
 * of N appends to one key costs O(total bytes), not O(N * total) (a shell
 * batching 2,000 output events re-encoded its whole batch per event). */
struct merged {
    char *data;
    size_t len, cap;
};

/* Append the decoded value of val dirent v to m (its data decoded from
 * first, the earlier operation's dirent, if m is empty). */
static int merged_add (struct merged *m, json_t *first, json_t *v)
{
    void *d = NULL;
    size_t len;

    if (!m->data) {
        if (treeobj_decode_val (first, &d, &len) < 0)
            return -1;
        m->data = d;
        m->len = m->cap = len;
    }
    if (treeobj_decode_val (v, &d, &len) < 0)
        return -1;
    if (m->len + len > m->cap) {
        size_t cap = m->cap ? m->cap : 4096;
        char *p;
        while (cap < m->len + len)
            cap *= 2;
        if (!(p = realloc (m->data, cap))) {
            free (d);
            return -1;
        }
        m->data = p;
        m->cap = cap;
    }
    memcpy (m->data + m->len, d, len);
    m->len += len;
    free (d);
    return 0;
}

/* Where out's operations stand, by key, so that an append finds what it
 * may merge into without scanning back over out: last[K] is the index in
 * out of the last operation on key K, below[P] that of the last operation
 * on a key under P (P a strict ancestor of it, "a" and "a.b" for "a.b.c").
 * Each operation costs one lookup or update per component of its key, so
 * a transaction appending to N different keys compacts in O(N), not
 * O(N^2).  steps counts those lookups and updates (for the unit test).
 */
struct keyindex {
    json_t *last;
    json_t *below;
    size_t steps;
};

/* The index stored under the first len bytes of key in o, or -1. */
static json_int_t index_get (struct keyindex *ki, json_t *o, const char *key,
                             size_t len)
{
    json_t *v;

    ki->steps++;
    if (!(v = json_object_getn (o, key, len)))
        return -1;
    return json_integer_value (v);
}

static int index_set (struct keyindex *ki, json_t *o, const char *key,
                      size_t len, size_t i)
{
    json_t *v;

    ki->steps++;
    if ((v = json_object_getn (o, key, len)))
        return json_integer_set (v, (json_int_t)i);
    if (!(v = json_integer ((json_int_t)i))
        || json_object_setn_new_nocheck (o, key, len, v) < 0)
        return -1;
    return 0;
}

/* op, with key key, is now out[i]. */
static int index_add (struct keyindex *ki, const char *key, size_t i)
{
    size_t len = strlen (key);

    for (size_t k = 0; k < len; k++) {
        if (key[k] == '.' && index_set (ki, ki->below, key, k, i) < 0)
            return -1;
    }
    return index_set (ki, ki->last, key, len, i);
}

/* Try to merge append operation op into an earlier operation of out
 * (its data into merged[i] for that operation's index i): the last
 * operation on the same key, if it is a value and no operation on an
 * ancestor or a descendant of the key came after it.
 * Returns 1 if merged, 0 if not, -1 on error.
 */
static int merge_append (struct keyindex *ki, json_t *out,
                         struct merged *merged, json_t *op)
{
    const char *key = json_string_value (json_object_get (op, "key"));
    size_t len = strlen (key);
    json_int_t j = index_get (ki, ki->last, key, len);
    json_t *prev;
    int pflags;

    if (j < 0 || index_get (ki, ki->below, key, len) > j)
        return 0;
    for (size_t k = 0; k < len; k++) {
        if (key[k] == '.' && index_get (ki, ki->last, key, k) > j)
            return 0;
    }
    prev = json_array_get (out, (size_t)j);
    if (!op_is_val (prev, &pflags))
        return 0;
    if (merged_add (&merged[j], json_object_get (prev, "dirent"),
                    json_object_get (op, "dirent"))
        < 0)
        return -1;
    return 1;
}

json_t *kvs_txn__compact (const flux_kvs_txn_t *txn)
{
    return kvs_txn__compact_steps (txn, NULL);
}

json_t *kvs_txn__compact_steps (const flux_kvs_txn_t *txn, size_t *steps)
{
    json_t *out = NULL, *op;
    struct merged *merged = NULL;
    struct keyindex ki = {0};
    size_t i, n;

    if (!txn) {
        errno = EINVAL;
        return NULL;
    }
    n = json_array_size (txn->ops);
    if (!(out = json_array ()) || !(ki.last = json_object ())
        || !(ki.below = json_object ())
        || !(merged = calloc (n ? n : 1, sizeof (*merged))))
        goto nomem;
    json_array_foreach (txn->ops, i, op)
    {
        int flags, rc = 0;

        if (op_is_val (op, &flags) && flags == FLUX_KVS_APPEND
            && (rc = merge_append (&ki, out, merged, op)) == 1)
            continue;
        /* shallow copy: the merge replaces the copy's dirent only */
        if (rc < 0 || json_array_append_new (out, json_copy (op)) < 0
            || index_add (&ki, json_string_value (json_object_get (op, "key")),
                          json_array_size (out) - 1)
                   < 0)
            goto nomem;
    }
    json_array_foreach (out, i, op)
    {
        json_t *v;

        if (!merged[i].data)
            continue;
        if (!(v = treeobj_create_val (merged[i].data, merged[i].len))
            || json_object_set_new (op, "dirent", v) < 0)
            goto nomem;
    }
    for (i = 0; i < n; i++)
        free (merged[i].data);
    free (merged);
    json_decref (ki.last);
    json_decref (ki.below);
    if (steps)
        *steps = ki.steps;
    return out;
nomem:
    if (merged) {
        for (i = 0; i < n; i++)
            free (merged[i].data);
        free (merged);
    }
    json_decref (ki.last);
    json_decref (ki.below);
    json_decref (out);
    errno = ENOMEM;
    return NULL;
}
