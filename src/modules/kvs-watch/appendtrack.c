/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* appendtrack.c - follow a value that only grows by appends.
 *
 * State: the blobs of the valref seen last, each with its length once
 * loaded (pieces), the index of the next one to load, and, after a fold,
 * the pieces sent earlier that the first blob to load must start with
 * (check).  While the value is still a val: that val (so a later valref
 * can be checked to start with its bytes, as the kvs stores a val as the
 * first blob when it is first appended to; that blob is never folded).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "appendtrack.h"
#include "libcontent/blobref.h"
#include "libkvs/treeobj.h"

struct piece {
    char ref[BLOBREF_MAX_STRING_SIZE];
    size_t len; /* once loaded */
};

struct appendtrack {
    int count;       /* pieces to send */
    struct piece *p; /* the blobs of the valref seen last */
    int np;
    int next;            /* p[next] is the next blob to be loaded */
    struct piece *check; /* sent before, the start of p[next] */
    int ncheck;
    json_t *val; /* the val seen last, while no valref was seen */
};

appendtrack_t *appendtrack_create (void)
{
    return calloc (1, sizeof (struct appendtrack));
}

void appendtrack_destroy (appendtrack_t *at)
{
    if (at) {
        int saved_errno = errno;
        free (at->p);
        free (at->check);
        json_decref (at->val);
        free (at);
        errno = saved_errno;
    }
}

int appendtrack_count (appendtrack_t *at)
{
    return at ? at->count : 0;
}

/* True if data hashes to ref (with ref's hash type). */
static bool bytes_are (const char *ref, const void *data, size_t len)
{
    char hashtype[16];
    char r[BLOBREF_MAX_STRING_SIZE];

    return blobref_hashtype (ref, hashtype, sizeof (hashtype)) == 0
           && blobref_hash (hashtype, data, len, r, sizeof (r)) == 0
           && !strcmp (r, ref);
}

/* A val following a val: nothing new if equal, the suffix if the new one
 * extends the old one, else EINVAL.
 */
static int val_after_val (appendtrack_t *at, const json_t *dirent,
                          json_t **direct)
{
    void *old = NULL, *new = NULL;
    size_t oldlen, newlen;
    json_t *suffix = NULL;
    int rc = -1;

    if (treeobj_decode_val (at->val, &old, &oldlen) < 0
        || treeobj_decode_val (dirent, &new, &newlen) < 0)
        goto done;
    if (newlen < oldlen || memcmp (old, new, oldlen) != 0) {
        errno = EINVAL;
        goto done;
    }
    if (newlen > oldlen) {
        if (!(suffix
              = treeobj_create_val ((char *)new + oldlen, newlen - oldlen)))
            goto done;
        json_decref (at->val);
        at->val = json_incref ((json_t *)dirent);
        at->count++;
    }
    *direct = suffix;
    rc = 0;
done:
    free (old);
    free (new);
    return rc;
}

/* The pieces of valref: the first k as p (the val seen, or the blobs
 * that did not change), the rest to load.  NULL with ENOMEM. */
static struct piece *pieces_of (const json_t *valref, int n,
                                const struct piece *p, int k)
{
    struct piece *np = calloc (n, sizeof (*np));

    if (!np) {
        errno = ENOMEM;
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        if (i < k)
            np[i] = p[i];
        else
            strncpy (np[i].ref, treeobj_get_blobref (valref, i),
                     sizeof (np[i].ref) - 1);
    }
    return np;
}

static int valref_update (appendtrack_t *at, const json_t *dirent,
                          json_t **newrefs)
{
    int n = treeobj_get_count (dirent);
    struct piece first, *p = at->p, *np = NULL, *check = NULL;
    int k = 0, ncheck = 0;
    json_t *a = NULL;

    /* dirent passed treeobj_validate(): n >= 1 well-formed blobrefs */
    if (at->next < at->np) {
        errno = EINVAL;
        return -1;
    }
    if (at->val) {
        /* the val became blob 0 of a valref when first appended to */
        void *data = NULL;
        bool match = false;
        if (treeobj_decode_val (at->val, &data, &first.len) == 0)
            match
                = bytes_are (treeobj_get_blobref (dirent, 0), data, first.len);
        free (data);
        if (!match) {
            errno = EINVAL;
            return -1;
        }
        strncpy (first.ref, treeobj_get_blobref (dirent, 0),
                 sizeof (first.ref) - 1);
        first.ref[sizeof (first.ref) - 1] = '\0';
        p = &first;
        k = 1;
    }
    else {
        while (k < at->np && k < n
               && !strcmp (at->p[k].ref, treeobj_get_blobref (dirent, k)))
            k++;
        if (k < at->np) {
            /* blobs k.. were replaced: by one that starts with their
             * bytes (a fold), or the value was rewritten; the load says */
            if (k == n) {
                errno = EINVAL; /* truncated */
                return -1;
            }
            ncheck = at->np - k;
            if (!(check = calloc (ncheck, sizeof (*check))))
                goto nomem;
            memcpy (check, at->p + k, ncheck * sizeof (*check));
        }
    }
    if (!(np = pieces_of (dirent, n, p, k)) || !(a = json_array ()))
        goto nomem;
    for (int i = k; i < n; i++) {
        json_t *s = json_string (np[i].ref);
        if (!s || json_array_append_new (a, s) < 0)
            goto nomem;
    }
    free (at->p);
    at->p = np;
    at->np = n;
    at->next = k;
    free (at->check);
    at->check = check;
    at->ncheck = ncheck;
    json_decref (at->val);
    at->val = NULL;
    at->count += n - k;
    *newrefs = a;
    return 0;
nomem:
    free (np);
    free (check);
    json_decref (a);
    errno = ENOMEM;
    return -1;
}

int appendtrack_update (appendtrack_t *at, const json_t *dirent,
                        json_t **direct, json_t **newrefs)
{
    json_t *d = NULL, *a = NULL;

    if (!at || !dirent || !direct || !newrefs) {
        errno = EINVAL;
        return -1;
    }
    if (treeobj_is_dir (dirent) || treeobj_is_dirref (dirent)) {
        errno = EISDIR;
        return -1;
    }
    if (treeobj_validate (dirent) < 0) {
        errno = EINVAL;
        return -1;
    }
    if (treeobj_is_val (dirent)) {
        if (at->count > 0 && !at->val) {
            errno = EINVAL; /* a valref was overwritten by a val */
            return -1;
        }
        if (!(a = json_array ())) {
            errno = ENOMEM;
            return -1;
        }
        if (at->count == 0) {
            d = json_incref ((json_t *)dirent);
            at->val = json_incref ((json_t *)dirent);
            at->count = 1;
        }
        else if (val_after_val (at, dirent, &d) < 0) {
            json_decref (a);
            return -1;
        }
    }
    else if (treeobj_is_valref (dirent)) {
        if (valref_update (at, dirent, &a) < 0)
            return -1;
    }
    else {
        errno = EINVAL;
        return -1;
    }
    *direct = d;
    *newrefs = a;
    return 0;
}

int appendtrack_loaded (appendtrack_t *at, const void *data, size_t len,
                        size_t *skip)
{
    size_t off = 0;

    if (!at || (!data && len > 0) || !skip || at->next >= at->np) {
        errno = EINVAL;
        return -1;
    }
    for (int i = 0; i < at->ncheck; i++) {
        const struct piece *c = &at->check[i];
        const char *d = data ? (const char *)data + off : NULL;
        if (c->len > len - off || !bytes_are (c->ref, d, c->len)) {
            errno = EINVAL;
            return -1;
        }
        off += c->len;
    }
    free (at->check);
    at->check = NULL;
    at->ncheck = 0;
    at->p[at->next++].len = len;
    *skip = off;
    return 0;
}
