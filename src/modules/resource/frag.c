/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* frag.c - merging R fragments with librlist. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "frag.h"
#include "libidset/idset.h"
#include "rmap.h"

struct idset *frag_ranks (const struct rlist *rl)
{
    char *s;
    struct idset *ids;

    if (!rl)
        return idset_create (0, 0);
    if (!(s = rlist_ranks (rl)))
        return NULL;
    ids = idset_decode (s);
    free (s);
    return ids;
}

/* b restricted to the ranks that acc lacks, or NULL with errno ENOENT
 * when there are none. */
static struct rlist *new_part (const struct rlist *acc, const struct rlist *b)
{
    struct idset *have = frag_ranks (acc), *theirs = frag_ranks (b);
    struct idset *fresh = NULL;
    struct rmap *m = NULL;
    struct rlist *out = NULL;
    json_t *R = NULL, *sub = NULL;

    if (!have || !theirs || !(fresh = idset_difference (theirs, have)))
        goto done;
    if (idset_empty (fresh)) {
        errno = ENOENT;
        goto done;
    }
    if (!(R = rlist_to_R (b)) || !(m = rmap_create (R, NULL))
        || !(sub = rmap_subset (m, fresh)))
        goto done;
    out = rlist_from_R (sub, NULL);
done:
    json_decref (sub);
    rmap_destroy (m);
    json_decref (R);
    idset_destroy (fresh);
    idset_destroy (theirs);
    idset_destroy (have);
    return out;
}

int frag_merge_rlist (struct rlist **acc, const struct rlist *b)
{
    struct rlist *part;
    int n;

    if (!acc || !b) {
        errno = EINVAL;
        return -1;
    }
    if (!*acc) {
        if (!(*acc = rlist_copy (b)))
            return -1;
        return rlist_nnodes (b);
    }
    if (rlist_append (*acc, b) == 0)
        return rlist_nnodes (b);
    if (errno != EEXIST)
        return -1;
    if (!(part = new_part (*acc, b)))
        return errno == ENOENT ? 0 : -1;
    n = rlist_nnodes (part);
    if (rlist_append (*acc, part) < 0)
        n = -1;
    rlist_destroy (part);
    return n;
}

int frag_merge (struct rlist **acc, json_t *R, flux_error_t *error)
{
    struct rlist *rl;
    int n;

    if (!(rl = rlist_from_R (R, error))) {
        if (errno != ENOMEM)
            errno = EINVAL;
        return -1;
    }
    if (!*acc) { /* take it as it is */
        *acc = rl;
        return rlist_nnodes (rl);
    }
    n = frag_merge_rlist (acc, rl);
    rlist_destroy (rl);
    if (n < 0)
        errprintf (error, "merging a fragment: %s", strerror (errno));
    return n;
}
