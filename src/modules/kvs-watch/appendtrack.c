/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* appendtrack.c - follow a value that only grows by appends.
 *
 * State: how many pieces were sent (count), the blobref of the last blob
 * sent (last), or, while the value is still a val, that val (so a later
 * valref can be checked to start with its bytes, as the kvs stores a val
 * as the first blob when it is first appended to).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "appendtrack.h"
#include "libcontent/blobref.h"
#include "libkvs/treeobj.h"

struct appendtrack {
    int count;   /* pieces sent */
    int nblobs;  /* blobs of the valref sent (0 while a val) */
    char *last;  /* blobref nblobs-1 */
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
        free (at->last);
        json_decref (at->val);
        free (at);
        errno = saved_errno;
    }
}

int appendtrack_count (appendtrack_t *at)
{
    return at ? at->count : 0;
}

/* True if the valref's first blob holds exactly the bytes of val. */
static bool valref_starts_with_val (const json_t *valref, const json_t *val)
{
    const char *ref0 = treeobj_get_blobref (valref, 0);
    char hashtype[16];
    char ref[BLOBREF_MAX_STRING_SIZE];
    void *data = NULL;
    size_t len;
    bool match = false;

    if (ref0 && blobref_hashtype (ref0, hashtype, sizeof (hashtype)) == 0
        && treeobj_decode_val (val, &data, &len) == 0
        && blobref_hash (hashtype, data, len, ref, sizeof (ref)) == 0)
        match = !strcmp (ref, ref0);
    free (data);
    return match;
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

static int valref_update (appendtrack_t *at, const json_t *dirent,
                          json_t **newrefs)
{
    int n = treeobj_get_count (dirent);
    int start = at->nblobs;
    json_t *a;
    char *last;

    if (n < 1) {
        errno = EINVAL;
        return -1;
    }
    if (at->val) {
        /* the val became blob 0 of a valref when first appended to */
        if (!valref_starts_with_val (dirent, at->val)) {
            errno = EINVAL;
            return -1;
        }
        start = 1;
    }
    else if (start > 0) {
        const char *ref = treeobj_get_blobref (dirent, start - 1);
        if (n < start || !ref || !at->last || strcmp (ref, at->last) != 0) {
            errno = EINVAL; /* truncated or overwritten */
            return -1;
        }
    }
    if (!(a = json_array ()))
        goto nomem;
    for (int i = start; i < n; i++) {
        json_t *s = json_string (treeobj_get_blobref (dirent, i));
        if (!s || json_array_append_new (a, s) < 0)
            goto nomem;
    }
    if (!(last = strdup (treeobj_get_blobref (dirent, n - 1))))
        goto nomem;
    free (at->last);
    at->last = last;
    json_decref (at->val);
    at->val = NULL;
    at->count += n - start;
    at->nblobs = n;
    *newrefs = a;
    return 0;
nomem:
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
