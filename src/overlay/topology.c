/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* topology.c - the overlay's tree (see topology.h).
 *
 * Whatever the spec, the tree is first a parent per rank; from it, one
 * pass makes the children lists (ranks in ascending order, so each list
 * comes out sorted) and one depth-first walk numbers the ranks in
 * preorder.  The subtree of r is then the preorder interval
 * [pre[r], pre[r] + sub[r]), which makes in_subtree O(1) and child_toward
 * a binary search among r's children (their preorder numbers ascend with
 * their ranks).  The walk uses an explicit stack: a chain of a million
 * ranks must not overflow the C stack.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology.h"

#define NO_PARENT UINT32_MAX

struct topology {
    uint32_t size;
    char spec[32];
    uint32_t *parent;    /* [size]; parent[0] = NO_PARENT */
    uint32_t *child_off; /* [size + 1]: children of r at child[off[r]..] */
    uint32_t *child;     /* [size - 1] */
    uint32_t *pre;       /* [size]: preorder number */
    uint32_t *sub;       /* [size]: subtree size, r included */
    uint32_t *level;     /* [size] */
    uint32_t maxlevel;
};

void topology_destroy (struct topology *t)
{
    if (t) {
        int saved = errno;
        free (t->parent);
        free (t->child_off);
        free (t->child);
        free (t->pre);
        free (t->sub);
        free (t->level);
        free (t);
        errno = saved;
    }
}

static struct topology *alloc (uint32_t size, const char *spec)
{
    struct topology *t;
    size_t n = size;

    if (size == 0) {
        errno = EINVAL;
        return NULL;
    }
    if (!(t = calloc (1, sizeof (*t))))
        return NULL;
    t->size = size;
    snprintf (t->spec, sizeof (t->spec), "%s", spec);
    if (!(t->parent = calloc (n, sizeof (uint32_t)))
        || !(t->child_off = calloc (n + 1, sizeof (uint32_t)))
        || !(t->child = calloc (n, sizeof (uint32_t)))
        || !(t->pre = calloc (n, sizeof (uint32_t)))
        || !(t->sub = calloc (n, sizeof (uint32_t)))
        || !(t->level = calloc (n, sizeof (uint32_t)))) {
        topology_destroy (t);
        return NULL;
    }
    t->parent[0] = NO_PARENT;
    return t;
}

/* Children lists, preorder, subtree sizes and levels from t->parent.
 * -1 with EINVAL if some rank does not reach rank 0 (a cycle). */
static int finish (struct topology *t, flux_error_t *error)
{
    uint32_t size = t->size, r, *fill = NULL, *stack = NULL;
    uint32_t *next = NULL, sp = 0, count = 0;

    for (r = 1; r < size; r++)
        t->child_off[t->parent[r] + 1]++;
    for (r = 0; r < size; r++)
        t->child_off[r + 1] += t->child_off[r];
    if (!(fill = calloc (size, sizeof (uint32_t)))
        || !(stack = calloc (size, sizeof (uint32_t)))
        || !(next = calloc (size, sizeof (uint32_t)))) {
        free (fill);
        free (stack);
        errprintf (error, "out of memory");
        errno = ENOMEM;
        return -1;
    }
    for (r = 1; r < size; r++) {
        uint32_t p = t->parent[r];
        t->child[t->child_off[p] + fill[p]++] = r;
    }
    /* depth first from rank 0; next[r] is the next child of r to visit */
    stack[sp++] = 0;
    t->pre[0] = count++;
    t->level[0] = 0;
    t->maxlevel = 0;
    while (sp > 0) {
        uint32_t top = stack[sp - 1];
        uint32_t i = t->child_off[top] + next[top];
        if (i < t->child_off[top + 1]) {
            uint32_t c = t->child[i];
            next[top]++;
            t->pre[c] = count++;
            t->level[c] = t->level[top] + 1;
            if (t->level[c] > t->maxlevel)
                t->maxlevel = t->level[c];
            stack[sp++] = c;
        }
        else {
            t->sub[top] = count - t->pre[top];
            sp--;
        }
    }
    free (fill);
    free (stack);
    free (next);
    if (count != size) {
        errprintf (error,
                   "topology: %" PRIu32 " of %" PRIu32
                   " ranks do not lead to rank 0 (a cycle in the parents)",
                   size - count, size);
        errno = EINVAL;
        return -1;
    }
    return 0;
}

static int parse_kary (const char *s, unsigned long *k)
{
    char *end;

    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    *k = strtoul (s, &end, 10);
    if (errno != 0 || *end != '\0' || *k > UINT32_MAX)
        return -1;
    return 0;
}

struct topology *topology_create (const char *spec, uint32_t size,
                                  flux_error_t *error)
{
    struct topology *t;
    unsigned long k = 0;
    bool binomial = false;

    if (!spec) {
        errprintf (error, "topology: no spec");
        errno = EINVAL;
        return NULL;
    }
    if (!strncmp (spec, "kary:", 5)) {
        if (parse_kary (spec + 5, &k) < 0) {
            errprintf (error,
                       "tbon.topo %s: kary:N needs a whole number N >= 0",
                       spec);
            errno = EINVAL;
            return NULL;
        }
    }
    else if (!strcmp (spec, "binomial"))
        binomial = true;
    else if (!strcmp (spec, "custom")) {
        errprintf (error, "tbon.topo custom: the tree is given by the"
                          " bootstrap hosts of a config file (parent keys)");
        errno = EINVAL;
        return NULL;
    }
    else {
        errprintf (error,
                   "tbon.topo %s: unknown topology (kary:N, binomial or"
                   " custom)",
                   spec);
        errno = EINVAL;
        return NULL;
    }
    if (size == 0) {
        errprintf (error, "topology: size 0");
        errno = EINVAL;
        return NULL;
    }
    if (!(t = alloc (size, spec))) {
        errprintf (error, "topology: %s", strerror (errno));
        return NULL;
    }
    for (uint32_t r = 1; r < size; r++) {
        if (binomial)
            t->parent[r] = r & (r - 1);
        else if (k == 0)
            t->parent[r] = 0;
        else
            t->parent[r] = (uint32_t)((r - 1) / k);
    }
    if (finish (t, error) < 0) {
        topology_destroy (t);
        return NULL;
    }
    return t;
}

struct topology *topology_create_custom (uint32_t size, const uint32_t *parent,
                                         flux_error_t *error)
{
    struct topology *t;

    if (size == 0 || !parent) {
        errprintf (error, "topology: size 0");
        errno = EINVAL;
        return NULL;
    }
    for (uint32_t r = 1; r < size; r++) {
        if (parent[r] >= size || parent[r] == r) {
            errprintf (error,
                       "topology: rank %" PRIu32 " has parent %" PRIu32
                       ", not a rank of 0..%" PRIu32 " other than itself",
                       r, parent[r], size - 1);
            errno = EINVAL;
            return NULL;
        }
    }
    if (!(t = alloc (size, "custom"))) {
        errprintf (error, "topology: %s", strerror (errno));
        return NULL;
    }
    memcpy (t->parent + 1, parent + 1, (size - 1) * sizeof (uint32_t));
    if (finish (t, error) < 0) {
        topology_destroy (t);
        return NULL;
    }
    return t;
}

/* Set parent[] from one node of the nested object; iterative over a
 * stack of arrays still to visit, so depth costs heap, not C stack. */
static int parents_from_json (json_t *root, uint32_t size, uint32_t *parent,
                              bool *seen, flux_error_t *error)
{
    struct item {
        json_t *node;
        uint32_t parent;
    } * stack;
    size_t sp = 0;
    int rc = -1;

    if (!(stack = calloc (size, sizeof (*stack))))
        return errprintf (error, "out of memory");
    stack[sp++] = (struct item){root, NO_PARENT};
    while (sp > 0) {
        struct item it = stack[--sp];
        json_t *children = NULL, *c;
        json_int_t rank;
        size_t i;

        if (json_unpack (it.node, "{s:I s?o}", "rank", &rank, "children",
                         &children)
                < 0
            || rank < 0 || rank >= size
            || (children && !json_is_array (children))) {
            errprintf (error, "topology: malformed node");
            goto out;
        }
        if (seen[rank] || (it.parent == NO_PARENT) != (rank == 0)) {
            errprintf (error, "topology: rank %d misplaced", (int)rank);
            goto out;
        }
        seen[rank] = true;
        parent[rank] = it.parent;
        json_array_foreach (children, i, c)
        {
            if (sp >= size) {
                errprintf (error, "topology: more nodes than size");
                goto out;
            }
            stack[sp++] = (struct item){c, (uint32_t)rank};
        }
    }
    rc = 0;
out:
    free (stack);
    return rc;
}

struct topology *topology_create_json (json_t *o, flux_error_t *error)
{
    json_int_t size;
    uint32_t *parent = NULL;
    bool *seen = NULL;
    struct topology *t = NULL;

    if (!o || json_unpack (o, "{s:I}", "size", &size) < 0 || size < 1
        || size > UINT32_MAX - 1) {
        errprintf (error, "topology: expected {rank, size, children}");
        errno = EPROTO;
        return NULL;
    }
    if (!(parent = calloc ((size_t)size, sizeof (uint32_t)))
        || !(seen = calloc ((size_t)size, sizeof (bool)))) {
        errprintf (error, "out of memory");
        errno = ENOMEM;
        goto out;
    }
    if (parents_from_json (o, (uint32_t)size, parent, seen, error) < 0) {
        errno = EPROTO;
        goto out;
    }
    for (json_int_t r = 0; r < size; r++) {
        if (!seen[r]) {
            errprintf (error, "topology: rank %d missing", (int)r);
            errno = EPROTO;
            goto out;
        }
    }
    t = topology_create_custom ((uint32_t)size, parent, error);
out:
    free (parent);
    free (seen);
    return t;
}

struct topology *topology_create_broker (flux_t *h, flux_error_t *error)
{
    const char *spec;
    uint32_t size, rank;
    flux_future_t *f;
    json_t *o;
    struct topology *t;

    if (flux_get_size (h, &size) < 0 || flux_get_rank (h, &rank) < 0
        || !(spec = flux_attr_get (h, "tbon.topo"))) {
        errprintf (error, "reading size, rank, tbon.topo: %s",
                   strerror (errno));
        return NULL;
    }
    if (strcmp (spec, "custom") != 0)
        return topology_create (spec, size, error);
    if (!(f
          = flux_rpc_pack (h, "overlay.topology", rank, 0, "{s:i}", "rank", 0))
        || flux_rpc_get_unpack (f, "o", &o) < 0) {
        errprintf (error, "overlay.topology: %s", strerror (errno));
        flux_future_destroy (f);
        return NULL;
    }
    t = topology_create_json (o, error);
    flux_future_destroy (f);
    return t;
}

const char *topology_spec (const struct topology *t)
{
    return t ? t->spec : NULL;
}

uint32_t topology_size (const struct topology *t)
{
    return t ? t->size : 0;
}

static bool valid (const struct topology *t, uint32_t rank)
{
    if (!t || rank >= t->size) {
        errno = EINVAL;
        return false;
    }
    return true;
}

int64_t topology_parent (const struct topology *t, uint32_t rank)
{
    if (!valid (t, rank))
        return -1;
    return rank == 0 ? -1 : (int64_t)t->parent[rank];
}

int topology_child_count (const struct topology *t, uint32_t rank)
{
    if (!valid (t, rank))
        return -1;
    return (int)(t->child_off[rank + 1] - t->child_off[rank]);
}

const uint32_t *topology_children (const struct topology *t, uint32_t rank)
{
    if (!valid (t, rank))
        return NULL;
    return t->child + t->child_off[rank];
}

int topology_child_index (const struct topology *t, uint32_t rank,
                          uint32_t child)
{
    if (!valid (t, rank) || !valid (t, child) || child == 0
        || t->parent[child] != rank) {
        errno = EINVAL;
        return -1;
    }
    /* binary search: the list is sorted */
    uint32_t lo = t->child_off[rank], hi = t->child_off[rank + 1];
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (t->child[mid] < child)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (int)(lo - t->child_off[rank]);
}

int64_t topology_level (const struct topology *t, uint32_t rank)
{
    if (!valid (t, rank))
        return -1;
    return t->level[rank];
}

int64_t topology_maxlevel (const struct topology *t)
{
    if (!t) {
        errno = EINVAL;
        return -1;
    }
    return t->maxlevel;
}

int64_t topology_descendants (const struct topology *t, uint32_t rank)
{
    if (!valid (t, rank))
        return -1;
    return (int64_t)t->sub[rank] - 1;
}

bool topology_in_subtree (const struct topology *t, uint32_t rank,
                          uint32_t target)
{
    if (!valid (t, rank) || !valid (t, target))
        return false;
    return t->pre[target] >= t->pre[rank]
           && t->pre[target] - t->pre[rank] < t->sub[rank];
}

int64_t topology_child_toward (const struct topology *t, uint32_t rank,
                               uint32_t target)
{
    if (!valid (t, rank) || !valid (t, target))
        return -1;
    if (target == rank || !topology_in_subtree (t, rank, target)) {
        errno = EINVAL;
        return -1;
    }
    /* the last child whose preorder number is <= target's */
    uint32_t lo = t->child_off[rank], hi = t->child_off[rank + 1];
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (t->pre[t->child[mid]] <= t->pre[target])
            lo = mid;
        else
            hi = mid;
    }
    return t->child[lo];
}

json_t *topology_to_json (const struct topology *t, uint32_t rank)
{
    struct frame {
        uint32_t rank;
        json_t *children;
    } * stack;
    size_t sp = 0;
    json_t *result = NULL;

    if (!valid (t, rank))
        return NULL;
    if (!(stack = calloc (t->maxlevel + 2, sizeof (*stack))))
        return NULL;
    /* children are appended as each subtree completes; a node is built
     * when its rank is reached in preorder, its array filled on the way */
    json_t *node = json_pack ("{s:i s:i s:[]}", "rank", (int)rank, "size",
                              (int)t->sub[rank], "children");
    if (!node)
        goto nomem;
    result = node;
    stack[sp++] = (struct frame){rank, json_object_get (node, "children")};
    uint32_t *next = calloc (t->maxlevel + 2, sizeof (uint32_t));
    if (!next)
        goto nomem;
    while (sp > 0) {
        struct frame *f = &stack[sp - 1];
        uint32_t i = t->child_off[f->rank] + next[sp - 1];
        if (i < t->child_off[f->rank + 1]) {
            uint32_t c = t->child[i];
            json_t *cn = json_pack ("{s:i s:i s:[]}", "rank", (int)c, "size",
                                    (int)t->sub[c], "children");
            next[sp - 1]++;
            if (!cn || json_array_append_new (f->children, cn) < 0) {
                free (next);
                goto nomem;
            }
            next[sp] = 0;
            stack[sp++] = (struct frame){c, json_object_get (cn, "children")};
        }
        else
            sp--;
    }
    free (next);
    free (stack);
    return result;
nomem:
    free (stack);
    json_decref (result);
    errno = ENOMEM;
    return NULL;
}
