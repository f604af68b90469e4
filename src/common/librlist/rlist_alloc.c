/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* rlist_alloc.c - first fit of a request (nodes, slots of cores and
 * gpus, whole nodes) onto the free resources of an rlist.
 *
 * Order of the checks, so the answer is right and cheap:
 *  1. the request is well formed (EINVAL);
 *  2. it could fit if every node were up and free (else EOVERFLOW),
 *     decided from the table of node shapes: O(distinct shapes);
 *  3. the free totals are large enough (else ENOSPC at once);
 *  4. walk the nodes with free cores ('partial') or the idle ones, in
 *     rank order, and plan what to take from each; nothing changes until
 *     the whole plan is made, so ENOSPC leaves rl as it was.
 * Slots are packed: each node takes as many slots as it has room for.
 * With a node count, slots are spread evenly (the first nslots % nnodes
 * nodes chosen take one more), and each chosen node must hold its share.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libidset/idset.h"
#include "rlist.h"
#include "rlist_private.h"

struct plan_entry {
    struct rnode *n;
    int slots;
};

struct plan {
    struct plan_entry *v;
    int count;
    int max;
};

static int plan_add (struct plan *p, struct rnode *n, int slots)
{
    if (p->count == p->max) {
        int max = p->max ? p->max * 2 : 16;
        struct plan_entry *v = realloc (p->v, max * sizeof (*v));
        if (!v) {
            errno = ENOMEM;
            return -1;
        }
        p->v = v;
        p->max = max;
    }
    p->v[p->count++] = (struct plan_entry){n, slots};
    return 0;
}

/* "2 slots of 4 cores and 1 gpu" */
static void describe (const struct rlist_request *req, char *buf, size_t size)
{
    int n = snprintf (buf, size, "%d slot%s of %d core%s", req->nslots,
                      req->nslots == 1 ? "" : "s", req->cores_per_slot,
                      req->cores_per_slot == 1 ? "" : "s");
    if (req->gpus_per_slot > 0 && n > 0 && (size_t)n < size)
        n += snprintf (buf + n, size - n, " and %d gpu%s", req->gpus_per_slot,
                       req->gpus_per_slot == 1 ? "" : "s");
    if (req->nnodes > 0 && n > 0 && (size_t)n < size)
        snprintf (buf + n, size - n, " on %d node%s%s", req->nnodes,
                  req->nnodes == 1 ? "" : "s",
                  req->exclusive ? " (exclusive)" : "");
}

static int check_request (const struct rlist_request *req, flux_error_t *error)
{
    if (!req) {
        errno = EINVAL;
        return errprintf (error, "no request");
    }
    if (req->nslots < 1 || req->cores_per_slot < 1 || req->gpus_per_slot < 0
        || req->nnodes < 0) {
        errno = EINVAL;
        return errprintf (error, "malformed request: slots and cores per slot "
                                 "must be >= 1, nodes and gpus >= 0");
    }
    if (req->nnodes > 0 && req->nslots < req->nnodes) {
        errno = EINVAL;
        return errprintf (error,
                          "malformed request: %d slots cannot be spread "
                          "over %d nodes",
                          req->nslots, req->nnodes);
    }
    return 0;
}

/* Could the request fit if every node were up and free? */
static int check_feasible (const struct rlist *rl,
                           const struct rlist_request *req, flux_error_t *error)
{
    int c = req->cores_per_slot, g = req->gpus_per_slot;
    char what[160];

    describe (req, what, sizeof (what));
    if (req->nnodes == 0) {
        long long capacity = 0;
        for (int i = 0; i < rl->nshapes && capacity < req->nslots; i++) {
            const struct rshape *s = &rl->shapes[i];
            capacity
                += (long long)s->count * rnode__cap (s->ncores, s->ngpus, c, g);
        }
        if (capacity < req->nslots) {
            errno = EOVERFLOW;
            return errprintf (error,
                              "unsatisfiable request: %s, the instance can "
                              "hold at most %lld such slots",
                              what, capacity);
        }
    }
    else {
        int lo = req->nslots / req->nnodes;
        int hi = lo + (req->nslots % req->nnodes ? 1 : 0);
        int r = req->nslots % req->nnodes;
        int n_lo = 0, n_hi = 0;

        if (req->nnodes > rl->nnodes) {
            errno = EOVERFLOW;
            return errprintf (error,
                              "unsatisfiable request: %d node%s requested, "
                              "the instance has %d",
                              req->nnodes, req->nnodes == 1 ? "" : "s",
                              rl->nnodes);
        }
        for (int i = 0; i < rl->nshapes; i++) {
            const struct rshape *s = &rl->shapes[i];
            int cap = rnode__cap (s->ncores, s->ngpus, c, g);
            if (cap >= lo)
                n_lo += s->count;
            if (cap >= hi)
                n_hi += s->count;
        }
        if (n_lo < req->nnodes || n_hi < r) {
            int n = n_lo < req->nnodes ? n_lo : n_hi;
            int k = n_lo < req->nnodes ? lo : hi;
            errno = EOVERFLOW;
            return errprintf (error,
                              "unsatisfiable request: %s, only %d node%s "
                              "can hold %d slot%s",
                              what, n, n == 1 ? "" : "s", k, k == 1 ? "" : "s");
        }
    }
    return 0;
}

static int nospace (flux_error_t *error)
{
    errno = ENOSPC;
    return errprintf (error, "insufficient resources");
}

/* Free room of node n for slots of (c, g). */
static int room (const struct rnode *n, int c, int g)
{
    return rnode__cap ((int)idset_count (n->cores_free),
                       (int)idset_count (n->gpus_free), c, g);
}

/* Plan without a node count: pack slots in rank order, on nodes with
 * free cores, or on idle nodes taken whole (exclusive). */
static int plan_slots (struct rlist *rl, const struct rlist_request *req,
                       struct plan *p)
{
    struct idset *set = req->exclusive ? rl->idle : rl->partial;
    int remaining = req->nslots;
    unsigned int id;

    for (id = idset_first (set); id != IDSET_INVALID_ID && remaining > 0;
         id = idset_next (set, id)) {
        struct rnode *n = rlist__find (rl, id);
        int k = room (n, req->cores_per_slot, req->gpus_per_slot);
        if (k == 0)
            continue;
        if (k > remaining)
            k = remaining;
        if (plan_add (p, n, k) < 0)
            return -1;
        remaining -= k;
    }
    if (remaining > 0) {
        errno = ENOSPC;
        return -1;
    }
    return 0;
}

/* Plan with a node count: the first nodes (rank order) that hold their
 * share; a node that holds the larger share takes it while some are
 * left, so this finds a choice whenever the candidates allow one. */
static int plan_nodes (struct rlist *rl, const struct rlist_request *req,
                       struct plan *p)
{
    struct idset *set = req->exclusive ? rl->idle : rl->partial;
    int lo = req->nslots / req->nnodes;
    int hi_left = req->nslots % req->nnodes;
    int lo_left = req->nnodes - hi_left;
    unsigned int id;

    for (id = idset_first (set);
         id != IDSET_INVALID_ID && (hi_left > 0 || lo_left > 0);
         id = idset_next (set, id)) {
        struct rnode *n = rlist__find (rl, id);
        int k = room (n, req->cores_per_slot, req->gpus_per_slot);
        if (hi_left > 0 && k >= lo + 1) {
            if (plan_add (p, n, lo + 1) < 0)
                return -1;
            hi_left--;
        }
        else if (lo_left > 0 && k >= lo) {
            if (plan_add (p, n, lo) < 0)
                return -1;
            lo_left--;
        }
    }
    if (hi_left > 0 || lo_left > 0) {
        errno = ENOSPC;
        return -1;
    }
    return 0;
}

/* The lowest 'count' ids of 'from'. */
static struct idset *take_lowest (const struct idset *from, int count)
{
    struct idset *out = idset_create (0, 0);
    unsigned int id = idset_first (from);

    if (!out)
        return NULL;
    while (count-- > 0 && id != IDSET_INVALID_ID) {
        if (idset_set (out, id) < 0) {
            idset_destroy (out);
            return NULL;
        }
        id = idset_next (from, id);
    }
    return out;
}

/* The rlist of what the plan takes. */
static struct rlist *plan_build (const struct plan *p,
                                 const struct rlist_request *req)
{
    struct rlist *out = rlist_create ();

    if (!out)
        return NULL;
    for (int i = 0; i < p->count; i++) {
        const struct rnode *n = p->v[i].n;
        struct idset *cores, *gpus;
        struct rnode *m;
        if (req->exclusive) {
            cores = idset_copy (n->cores);
            gpus = idset_copy (n->gpus);
        }
        else {
            cores = take_lowest (n->cores_free,
                                 p->v[i].slots * req->cores_per_slot);
            gpus = take_lowest (n->gpus_free,
                                p->v[i].slots * req->gpus_per_slot);
        }
        if (!cores || !gpus) {
            idset_destroy (cores);
            idset_destroy (gpus);
            goto nomem;
        }
        if (!(m = rnode__create (n->rank, n->hostname, cores, gpus)))
            goto nomem;
        if (rlist__insert (out, m) < 0) {
            rnode__destroy (m);
            goto nomem;
        }
    }
    out->nslots = req->nslots;
    return out;
nomem:
    rlist_destroy (out);
    errno = ENOMEM;
    return NULL;
}

struct rlist *rlist_alloc_ex (struct rlist *rl, const struct rlist_request *req,
                              flux_error_t *error)
{
    struct plan p = {0};
    struct rlist *out = NULL;
    long long need_cores, need_gpus;
    int rc;

    if (!rl) {
        errno = EINVAL;
        errprintf (error, "no resource set");
        return NULL;
    }
    if (check_request (req, error) < 0 || check_feasible (rl, req, error) < 0)
        return NULL;
    need_cores = (long long)req->nslots * req->cores_per_slot;
    need_gpus = (long long)req->nslots * req->gpus_per_slot;
    if (need_cores > rl->avail_cores || need_gpus > rl->avail_gpus
        || (req->exclusive && req->nnodes > (int)idset_count (rl->idle))) {
        nospace (error);
        return NULL;
    }
    if (req->nnodes > 0)
        rc = plan_nodes (rl, req, &p);
    else
        rc = plan_slots (rl, req, &p);
    if (rc < 0) {
        if (errno == ENOSPC)
            nospace (error);
        else
            errprintf (error, "out of memory");
        goto done;
    }
    if (!(out = plan_build (&p, req)) || rlist__take (rl, out) < 0) {
        errprintf (error, "out of memory");
        rlist_destroy (out);
        out = NULL;
    }
done:
    free (p.v);
    return out;
}

int rlist_check (const struct rlist *rl, const struct rlist_request *req,
                 flux_error_t *error)
{
    if (!rl) {
        errno = EINVAL;
        return errprintf (error, "no resource set");
    }
    if (check_request (req, error) < 0 || check_feasible (rl, req, error) < 0)
        return -1;
    return 0;
}

struct rlist *rlist_alloc (struct rlist *rl, const struct rlist_request *req)
{
    return rlist_alloc_ex (rl, req, NULL);
}
