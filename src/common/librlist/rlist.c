/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* rlist.c - the resource set by rank: nodes sorted by rank, their free
 * cores and gpus, up/down marks, and the indexes the allocator uses
 * (see rlist_private.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libhostlist/hostlist.h"
#include "libidset/idset.h"
#include "rlist.h"
#include "rlist_private.h"

struct rnode *rnode__create (unsigned int rank, const char *hostname,
                             struct idset *cores, struct idset *gpus)
{
    struct rnode *n;

    if (!gpus && !(gpus = idset_create (0, 0)))
        goto error;
    if (!(n = calloc (1, sizeof (*n))))
        goto error;
    n->rank = rank;
    n->cores = cores;
    n->gpus = gpus;
    n->up = true;
    n->ncores = idset_count (cores);
    n->ngpus = idset_count (gpus);
    if ((hostname && !(n->hostname = strdup (hostname)))
        || !(n->cores_free = idset_copy (cores))
        || !(n->gpus_free = idset_copy (gpus))) {
        rnode__destroy (n);
        errno = ENOMEM;
        return NULL;
    }
    return n;
error:
    idset_destroy (cores);
    idset_destroy (gpus);
    errno = ENOMEM;
    return NULL;
}

void rnode__destroy (struct rnode *n)
{
    if (n) {
        int saved_errno = errno;
        free (n->hostname);
        idset_destroy (n->cores);
        idset_destroy (n->gpus);
        idset_destroy (n->cores_free);
        idset_destroy (n->gpus_free);
        free (n);
        errno = saved_errno;
    }
}

struct rlist *rlist_create (void)
{
    struct rlist *rl = calloc (1, sizeof (*rl));

    if (!rl || !(rl->partial = idset_create (0, 0))
        || !(rl->idle = idset_create (0, 0))) {
        rlist_destroy (rl);
        errno = ENOMEM;
        return NULL;
    }
    return rl;
}

void rlist_destroy (struct rlist *rl)
{
    if (rl) {
        int saved_errno = errno;
        for (int i = 0; i < rl->nnodes; i++)
            rnode__destroy (rl->nodes[i]);
        free (rl->nodes);
        free (rl->shapes);
        idset_destroy (rl->partial);
        idset_destroy (rl->idle);
        free (rl);
        errno = saved_errno;
    }
}

/* Index of the first node with rank >= 'rank'. */
static int lower_bound (const struct rlist *rl, unsigned int rank)
{
    int lo = 0, hi = rl->nnodes;

    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (rl->nodes[mid]->rank < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

struct rnode *rlist__find (const struct rlist *rl, unsigned int rank)
{
    int i = lower_bound (rl, rank);

    if (i < rl->nnodes && rl->nodes[i]->rank == rank)
        return rl->nodes[i];
    return NULL;
}

static int shape_add (struct rlist *rl, int ncores, int ngpus, int delta)
{
    int i;

    for (i = 0; i < rl->nshapes; i++) {
        if (rl->shapes[i].ncores == ncores && rl->shapes[i].ngpus == ngpus) {
            if ((rl->shapes[i].count += delta) == 0)
                rl->shapes[i] = rl->shapes[--rl->nshapes];
            return 0;
        }
    }
    if (delta < 0)
        return 0;
    if (rl->nshapes == rl->maxshapes) {
        int n = rl->maxshapes ? rl->maxshapes * 2 : 4;
        struct rshape *s = realloc (rl->shapes, n * sizeof (*s));
        if (!s)
            return -1;
        rl->shapes = s;
        rl->maxshapes = n;
    }
    rl->shapes[rl->nshapes++] = (struct rshape){ncores, ngpus, delta};
    return 0;
}

int rlist__insert (struct rlist *rl, struct rnode *n)
{
    int i = lower_bound (rl, n->rank);

    if (i < rl->nnodes && rl->nodes[i]->rank == n->rank) {
        errno = EEXIST;
        return -1;
    }
    if (rl->nnodes == rl->maxnodes) {
        int max = rl->maxnodes ? rl->maxnodes * 2 : 16;
        struct rnode **v = realloc (rl->nodes, max * sizeof (*v));
        if (!v)
            goto nomem;
        rl->nodes = v;
        rl->maxnodes = max;
    }
    if (shape_add (rl, n->ncores, n->ngpus, 1) < 0)
        goto nomem;
    n->counted_cores = n->counted_gpus = 0;
    if (rlist__reindex (rl, n) < 0) {
        shape_add (rl, n->ncores, n->ngpus, -1);
        goto nomem;
    }
    memmove (&rl->nodes[i + 1], &rl->nodes[i],
             (rl->nnodes - i) * sizeof (rl->nodes[0]));
    rl->nodes[i] = n;
    rl->nnodes++;
    rl->total_cores += n->ncores;
    rl->total_gpus += n->ngpus;
    return 0;
nomem:
    errno = ENOMEM;
    return -1;
}

int rlist__reindex (struct rlist *rl, struct rnode *n)
{
    int fc = n->up ? (int)idset_count (n->cores_free) : 0;
    int fg = n->up ? (int)idset_count (n->gpus_free) : 0;
    bool idle = n->up && fc == n->ncores && fg == n->ngpus;

    if ((fc > 0 ? idset_set (rl->partial, n->rank)
                : idset_clear (rl->partial, n->rank))
            < 0
        || (idle ? idset_set (rl->idle, n->rank)
                 : idset_clear (rl->idle, n->rank))
               < 0)
        return -1;
    rl->avail_cores += fc - n->counted_cores;
    rl->avail_gpus += fg - n->counted_gpus;
    n->counted_cores = fc;
    n->counted_gpus = fg;
    return 0;
}

/* A copy of node n with the given free sets (NULL: all free). */
static struct rnode *node_copy (const struct rnode *n, bool keep_alloc)
{
    struct idset *cores = idset_copy (n->cores);
    struct idset *gpus = idset_copy (n->gpus);
    struct rnode *c;

    if (!cores || !gpus) {
        idset_destroy (cores);
        idset_destroy (gpus);
        errno = ENOMEM;
        return NULL;
    }
    if (!(c = rnode__create (n->rank, n->hostname, cores, gpus)))
        return NULL;
    c->up = n->up;
    if (keep_alloc) {
        idset_destroy (c->cores_free);
        idset_destroy (c->gpus_free);
        c->cores_free = c->gpus_free = NULL;
        if (!(c->cores_free = idset_copy (n->cores_free))
            || !(c->gpus_free = idset_copy (n->gpus_free))) {
            rnode__destroy (c);
            errno = ENOMEM;
            return NULL;
        }
    }
    return c;
}

struct rlist *rlist_copy (const struct rlist *rl)
{
    struct rlist *cpy;

    if (!rl) {
        errno = EINVAL;
        return NULL;
    }
    if (!(cpy = rlist_create ()))
        return NULL;
    for (int i = 0; i < rl->nnodes; i++) {
        struct rnode *n = node_copy (rl->nodes[i], false);
        if (!n || rlist__insert (cpy, n) < 0) {
            rnode__destroy (n);
            rlist_destroy (cpy);
            return NULL;
        }
    }
    cpy->starttime = rl->starttime;
    cpy->expiration = rl->expiration;
    cpy->nslots = rl->nslots;
    return cpy;
}

void rlist_set_times (struct rlist *rl, double starttime, double expiration)
{
    if (rl) {
        rl->starttime = starttime;
        rl->expiration = expiration;
    }
}

double rlist_starttime (const struct rlist *rl)
{
    return rl ? rl->starttime : 0.;
}

double rlist_expiration (const struct rlist *rl)
{
    return rl ? rl->expiration : 0.;
}

int rlist_nslots (const struct rlist *rl)
{
    return rl ? rl->nslots : 0;
}

int rlist_add_rank (struct rlist *rl, unsigned int rank, const char *hostname,
                    const char *cores, const char *gpus)
{
    struct idset *c = NULL, *g = NULL;
    struct rnode *n;

    if (!rl || !cores || rank == IDSET_INVALID_ID) {
        errno = EINVAL;
        return -1;
    }
    if (rlist__find (rl, rank)) {
        errno = EEXIST;
        return -1;
    }
    if (!(c = idset_decode (cores)) || (gpus && !(g = idset_decode (gpus)))) {
        idset_destroy (c);
        errno = EINVAL;
        return -1;
    }
    if (hostname) {
        struct hostlist *hl = hostlist_decode (hostname);
        int count = hostlist_count (hl);
        hostlist_destroy (hl);
        if (count != 1) {
            idset_destroy (c);
            idset_destroy (g);
            errno = EINVAL;
            return -1;
        }
    }
    if (!(n = rnode__create (rank, hostname, c, g)))
        return -1;
    if (rlist__insert (rl, n) < 0) {
        rnode__destroy (n);
        return -1;
    }
    return 0;
}

/* Remove and destroy the node at index k. */
static void node_remove (struct rlist *rl, int k)
{
    struct rnode *n = rl->nodes[k];

    n->up = false;
    (void)rlist__reindex (rl, n); /* only clears: cannot fail */
    shape_add (rl, n->ncores, n->ngpus, -1);
    rl->total_cores -= n->ncores;
    rl->total_gpus -= n->ngpus;
    memmove (&rl->nodes[k], &rl->nodes[k + 1],
             (rl->nnodes - k - 1) * sizeof (rl->nodes[0]));
    rl->nnodes--;
    rnode__destroy (n);
}

int rlist_append (struct rlist *a, const struct rlist *b)
{
    int i;

    if (!a || !b || a == b) {
        errno = EINVAL;
        return -1;
    }
    for (i = 0; i < b->nnodes; i++) {
        if (rlist__find (a, b->nodes[i]->rank)) {
            errno = EEXIST;
            return -1;
        }
    }
    for (i = 0; i < b->nnodes; i++) {
        struct rnode *n = node_copy (b->nodes[i], true);
        if (!n || rlist__insert (a, n) < 0) {
            int saved_errno = errno;
            rnode__destroy (n);
            /* undo: remove what was added */
            while (--i >= 0)
                node_remove (a, lower_bound (a, b->nodes[i]->rank));
            errno = saved_errno;
            return -1;
        }
    }
    return 0;
}

int rlist_add (struct rlist *a, const struct rlist *b)
{
    if (!a || !b || a == b) {
        errno = EINVAL;
        return -1;
    }
    for (int i = 0; i < b->nnodes; i++) {
        const struct rnode *nb = b->nodes[i];
        int k = lower_bound (a, nb->rank);
        struct rnode *na = k < a->nnodes && a->nodes[k]->rank == nb->rank
                               ? a->nodes[k]
                               : NULL;
        struct idset *cores, *gpus;
        struct rnode *n;

        if (!na) {
            if (!(n = node_copy (nb, false)) || rlist__insert (a, n) < 0) {
                rnode__destroy (n);
                return -1;
            }
            continue;
        }
        /* the same rank in both: one node with the union of their sets */
        if (!(cores = idset_union (na->cores, nb->cores))
            || !(gpus = idset_union (na->gpus, nb->gpus))) {
            idset_destroy (cores);
            errno = ENOMEM;
            return -1;
        }
        if (!(n = rnode__create (nb->rank,
                                 na->hostname ? na->hostname : nb->hostname,
                                 cores, gpus)))
            return -1;
        node_remove (a, k);
        if (rlist__insert (a, n) < 0) {
            rnode__destroy (n);
            return -1;
        }
    }
    return 0;
}

int rlist_nnodes (const struct rlist *rl)
{
    return rl ? rl->nnodes : 0;
}

int rlist_count_cores (const struct rlist *rl)
{
    return rl ? (int)rl->total_cores : 0;
}

int rlist_count_gpus (const struct rlist *rl)
{
    return rl ? (int)rl->total_gpus : 0;
}

int rlist_avail_cores (const struct rlist *rl)
{
    return rl ? (int)rl->avail_cores : 0;
}

int rlist_avail_gpus (const struct rlist *rl)
{
    return rl ? (int)rl->avail_gpus : 0;
}

char *rlist_ranks (const struct rlist *rl)
{
    struct idset *ids;
    char *s;

    if (!rl) {
        errno = EINVAL;
        return NULL;
    }
    if (!(ids = idset_create (0, 0)))
        return NULL;
    for (int i = 0; i < rl->nnodes; i++) {
        if (idset_set (ids, rl->nodes[i]->rank) < 0) {
            idset_destroy (ids);
            return NULL;
        }
    }
    s = idset_encode (ids, IDSET_FLAG_RANGE);
    idset_destroy (ids);
    return s;
}

char *rlist_nodelist (const struct rlist *rl)
{
    struct hostlist *hl;
    char *s;

    if (!rl) {
        errno = EINVAL;
        return NULL;
    }
    if (!(hl = hostlist_create ()))
        return NULL;
    for (int i = 0; i < rl->nnodes; i++) {
        const char *host = rl->nodes[i]->hostname;
        if (host && hostlist_append (hl, host) < 0) {
            hostlist_destroy (hl);
            return NULL;
        }
    }
    s = hostlist_encode (hl);
    hostlist_destroy (hl);
    return s;
}

static struct idset *decode_ranks (const char *ranks)
{
    struct idset *ids;

    if (!ranks) {
        errno = EINVAL;
        return NULL;
    }
    if (!strcmp (ranks, "all"))
        return idset_create (0, 0); /* empty means all, see mark() */
    if (!(ids = idset_decode (ranks)))
        errno = EINVAL;
    return ids;
}

static int mark (struct rlist *rl, const char *ranks, bool up)
{
    struct idset *ids;
    bool all;

    if (!rl) {
        errno = EINVAL;
        return -1;
    }
    if (!(ids = decode_ranks (ranks)))
        return -1;
    all = !strcmp (ranks, "all");
    if (all) {
        for (int i = 0; i < rl->nnodes; i++) {
            rl->nodes[i]->up = up;
            if (rlist__reindex (rl, rl->nodes[i]) < 0)
                goto error;
        }
    }
    else {
        unsigned int id;
        for (id = idset_first (ids); id != IDSET_INVALID_ID;
             id = idset_next (ids, id)) {
            struct rnode *n = rlist__find (rl, id);
            if (n && n->up != up) {
                n->up = up;
                if (rlist__reindex (rl, n) < 0)
                    goto error;
            }
        }
    }
    idset_destroy (ids);
    return 0;
error:
    idset_destroy (ids);
    errno = ENOMEM;
    return -1;
}

int rlist_mark_down (struct rlist *rl, const char *ranks)
{
    return mark (rl, ranks, false);
}

int rlist_mark_up (struct rlist *rl, const char *ranks)
{
    return mark (rl, ranks, true);
}

/* Check every node of alloc against rl: present, within the node's
 * resources, and (want_free) all free or (!want_free) all allocated. */
static int check_alloc (const struct rlist *rl, const struct rlist *alloc,
                        bool want_free)
{
    for (int i = 0; i < alloc->nnodes; i++) {
        const struct rnode *a = alloc->nodes[i];
        const struct rnode *n = rlist__find (rl, a->rank);
        if (!n || !idset_is_subset (a->cores, n->cores)
            || !idset_is_subset (a->gpus, n->gpus)) {
            errno = ENOENT;
            return -1;
        }
        if (want_free) {
            if (!idset_is_subset (a->cores, n->cores_free)
                || !idset_is_subset (a->gpus, n->gpus_free)) {
                errno = EEXIST;
                return -1;
            }
        }
        else if (idset_has_intersection (a->cores, n->cores_free)
                 || idset_has_intersection (a->gpus, n->gpus_free)) {
            errno = ENOENT;
            return -1;
        }
    }
    return 0;
}

/* Move alloc's resources out of (take) or back into (!take) the free
 * sets.  Nothing is changed if this fails (ENOMEM). */
static int apply (struct rlist *rl, const struct rlist *alloc, bool take)
{
    int i;

    for (i = 0; i < alloc->nnodes; i++) {
        const struct rnode *a = alloc->nodes[i];
        struct rnode *n = rlist__find (rl, a->rank);
        int rc;
        if (take)
            rc = idset_subtract (n->cores_free, a->cores) < 0
                         || idset_subtract (n->gpus_free, a->gpus) < 0
                     ? -1
                     : 0;
        else
            rc = idset_add (n->cores_free, a->cores) < 0
                         || idset_add (n->gpus_free, a->gpus) < 0
                     ? -1
                     : 0;
        if (rc < 0 || rlist__reindex (rl, n) < 0)
            goto undo;
    }
    return 0;
undo:
    /* best effort: these only grow/shrink sets just touched */
    for (int j = 0; j <= i && j < alloc->nnodes; j++) {
        const struct rnode *a = alloc->nodes[j];
        struct rnode *n = rlist__find (rl, a->rank);
        if (take) {
            (void)idset_add (n->cores_free, a->cores);
            (void)idset_add (n->gpus_free, a->gpus);
        }
        else {
            (void)idset_subtract (n->cores_free, a->cores);
            (void)idset_subtract (n->gpus_free, a->gpus);
        }
        (void)rlist__reindex (rl, n);
    }
    errno = ENOMEM;
    return -1;
}

int rlist_free (struct rlist *rl, const struct rlist *alloc)
{
    if (!rl || !alloc) {
        errno = EINVAL;
        return -1;
    }
    if (check_alloc (rl, alloc, false) < 0)
        return -1;
    return apply (rl, alloc, false);
}

int rlist__take (struct rlist *rl, const struct rlist *alloc)
{
    return apply (rl, alloc, true);
}

int rlist_set_allocated (struct rlist *rl, const struct rlist *alloc)
{
    if (!rl || !alloc) {
        errno = EINVAL;
        return -1;
    }
    if (check_alloc (rl, alloc, true) < 0)
        return -1;
    return apply (rl, alloc, true);
}

/* A new rlist of the nodes of rl selected by 'down' (down ranks, all
 * their resources) or !down (the allocated part of every node that has
 * something allocated). */
static struct rlist *extract (const struct rlist *rl, bool down)
{
    struct rlist *out;

    if (!rl) {
        errno = EINVAL;
        return NULL;
    }
    if (!(out = rlist_create ()))
        return NULL;
    for (int i = 0; i < rl->nnodes; i++) {
        const struct rnode *n = rl->nodes[i];
        struct idset *c = NULL, *g = NULL;
        struct rnode *m;
        if (down) {
            if (n->up)
                continue;
            c = idset_copy (n->cores);
            g = idset_copy (n->gpus);
        }
        else {
            if (idset_count (n->cores_free) == (size_t)n->ncores
                && idset_count (n->gpus_free) == (size_t)n->ngpus)
                continue;
            c = idset_difference (n->cores, n->cores_free);
            g = idset_difference (n->gpus, n->gpus_free);
        }
        if (!c || !g) {
            idset_destroy (c);
            idset_destroy (g);
            goto nomem;
        }
        if (!(m = rnode__create (n->rank, n->hostname, c, g)))
            goto nomem;
        m->up = n->up;
        if (rlist__insert (out, m) < 0) {
            rnode__destroy (m);
            goto nomem;
        }
    }
    return out;
nomem:
    rlist_destroy (out);
    errno = ENOMEM;
    return NULL;
}

struct rlist *rlist_copy_down (const struct rlist *rl)
{
    return extract (rl, true);
}

struct rlist *rlist_copy_allocated (const struct rlist *rl)
{
    return extract (rl, false);
}

struct rlist *rlist_diff (const struct rlist *a, const struct rlist *b)
{
    struct rlist *out;

    if (!a || !b) {
        errno = EINVAL;
        return NULL;
    }
    if (!(out = rlist_create ()))
        return NULL;
    for (int i = 0; i < a->nnodes; i++) {
        const struct rnode *n = a->nodes[i];
        const struct rnode *m = rlist__find (b, n->rank);
        struct idset *c = idset_difference (n->cores, m ? m->cores : NULL);
        struct idset *g = idset_difference (n->gpus, m ? m->gpus : NULL);
        struct rnode *r;
        if (!c || !g) {
            idset_destroy (c);
            idset_destroy (g);
            goto nomem;
        }
        if (idset_empty (c) && idset_empty (g)) {
            idset_destroy (c);
            idset_destroy (g);
            continue;
        }
        if (!(r = rnode__create (n->rank, n->hostname, c, g)))
            goto nomem;
        r->up = n->up;
        if (rlist__insert (out, r) < 0) {
            rnode__destroy (r);
            goto nomem;
        }
    }
    out->starttime = a->starttime;
    out->expiration = a->expiration;
    return out;
nomem:
    rlist_destroy (out);
    errno = ENOMEM;
    return NULL;
}

struct rlist *rlist_copy_ranks (const struct rlist *rl,
                                const struct idset *ranks)
{
    struct rlist *out;

    if (!rl || !ranks) {
        errno = EINVAL;
        return NULL;
    }
    if (!(out = rlist_create ()))
        return NULL;
    for (int i = 0; i < rl->nnodes; i++) {
        struct rnode *n;
        if (!idset_test (ranks, rl->nodes[i]->rank))
            continue;
        if (!(n = node_copy (rl->nodes[i], false))
            || rlist__insert (out, n) < 0) {
            rnode__destroy (n);
            rlist_destroy (out);
            errno = ENOMEM;
            return NULL;
        }
    }
    out->starttime = rl->starttime;
    out->expiration = rl->expiration;
    return out;
}

int rlist_remove_ranks (struct rlist *rl, const struct idset *ranks)
{
    int kept = 0, removed = 0;

    if (!rl || !ranks) {
        errno = EINVAL;
        return -1;
    }
    /* one pass: unindex and destroy the removed nodes, compact the rest */
    for (int i = 0; i < rl->nnodes; i++) {
        struct rnode *n = rl->nodes[i];
        if (!idset_test (ranks, n->rank)) {
            rl->nodes[kept++] = n;
            continue;
        }
        n->up = false;
        (void)rlist__reindex (rl, n); /* only clears: cannot fail */
        shape_add (rl, n->ncores, n->ngpus, -1);
        rl->total_cores -= n->ncores;
        rl->total_gpus -= n->ngpus;
        rnode__destroy (n);
        removed++;
    }
    rl->nnodes = kept;
    return removed;
}
