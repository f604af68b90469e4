/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* rlist_R.c - Rv1 (RFC 20) to and from an rlist, and the one-line
 * summary ("rank[0-1]/core[0-3],gpu0") schedulers put in annotations.
 *
 * Output groups ranks whose children are identical into one R_lite entry
 * (sort by children, then by rank: O(n log n)), so 1024 identical nodes
 * are one entry; nodelist is one RFC 29 hostlist in rank order.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "libhostlist/hostlist.h"
#include "libidset/idset.h"
#include "rlist.h"
#include "rlist_private.h"

/* Rv1 -> rlist
 *
 * The nodes of all R_lite entries are collected first, then sorted by rank
 * and appended: inserting them one by one in R_lite order would move the
 * node array for each rank of an entry that comes before earlier ones,
 * O(n^2) in all (seconds for "100000-199999" followed by "0-99999").
 */

struct nodevec {
    struct rnode **v;
    size_t n;
    size_t max;
};

static void nodevec_free (struct nodevec *nv)
{
    for (size_t i = 0; i < nv->n; i++)
        rnode__destroy (nv->v[i]);
    free (nv->v);
}

static int node_cmp (const void *a, const void *b)
{
    const struct rnode *x = *(struct rnode *const *)a;
    const struct rnode *y = *(struct rnode *const *)b;
    return x->rank < y->rank ? -1 : x->rank > y->rank ? 1 : 0;
}

/* Counts are int (rnode ncores, rlist_count_cores ()). */
static bool too_many (const struct idset *ids)
{
    return ids && idset_count (ids) > INT_MAX;
}

static int add_entry (struct nodevec *nv, json_t *entry, size_t index,
                      flux_error_t *error)
{
    const char *ranks, *cores, *gpus = NULL;
    struct idset *r = NULL, *c = NULL, *g = NULL;
    json_error_t jerr;
    unsigned int id;
    int rc = -1;

    if (json_unpack_ex (entry, &jerr, 0, "{s:s s:{s:s s?s}}", "rank", &ranks,
                        "children", "core", &cores, "gpu", &gpus)
        < 0) {
        errprintf (error, "R_lite[%zu]: %s", index, jerr.text);
        goto inval;
    }
    if (!(r = idset_decode (ranks)) || idset_empty (r)) {
        errprintf (error, "R_lite[%zu]: rank \"%s\" is not a valid idset",
                   index, ranks);
        goto inval;
    }
    if (!(c = idset_decode (cores))) {
        errprintf (error, "R_lite[%zu]: core \"%s\" is not a valid idset",
                   index, cores);
        goto inval;
    }
    if (gpus && !(g = idset_decode (gpus))) {
        errprintf (error, "R_lite[%zu]: gpu \"%s\" is not a valid idset", index,
                   gpus);
        goto inval;
    }
    if (too_many (c) || too_many (g)) {
        errprintf (error, "R_lite[%zu]: more than %d cores or gpus", index,
                   INT_MAX);
        goto inval;
    }
    /* a few bytes of R_lite ("0-4294967294") may name billions of ranks,
     * each of which costs a node */
    if (idset_count (r) > RLIST_MAX_RANKS - nv->n) {
        errprintf (error, "R_lite: more than %d ranks", RLIST_MAX_RANKS);
        goto inval;
    }
    if (nv->max - nv->n < idset_count (r)) {
        size_t max = nv->max ? nv->max * 2 : 16;
        struct rnode **v;
        if (max < nv->n + idset_count (r))
            max = nv->n + idset_count (r);
        v = realloc (nv->v, max * sizeof (*v));
        if (!v) {
            errprintf (error, "out of memory");
            errno = ENOMEM;
            goto done;
        }
        nv->v = v;
        nv->max = max;
    }
    for (id = idset_first (r); id != IDSET_INVALID_ID;
         id = idset_next (r, id)) {
        struct idset *nc = idset_copy (c);
        struct idset *ng = g ? idset_copy (g) : NULL;
        struct rnode *n;
        if (!nc || (g && !ng)) {
            idset_destroy (nc);
            idset_destroy (ng);
            errprintf (error, "out of memory");
            goto done;
        }
        if (!(n = rnode__create (id, NULL, nc, ng))) {
            errprintf (error, "out of memory");
            goto done;
        }
        nv->v[nv->n++] = n;
    }
    rc = 0;
    goto done;
inval:
    errno = EINVAL;
done:
    idset_destroy (r);
    idset_destroy (c);
    idset_destroy (g);
    return rc;
}

/* Give the nodes (in rank order) the hostnames of nodelist. */
static int assign_hosts (struct rlist *rl, json_t *nodelist,
                         flux_error_t *error)
{
    struct hostlist *hl;
    const char *host;
    size_t index;
    json_t *entry;
    int i = 0;

    if (!json_is_array (nodelist)) {
        errprintf (error, "nodelist must be an array of strings");
        goto inval;
    }
    if (!(hl = hostlist_create ())) {
        errprintf (error, "out of memory");
        return -1;
    }
    json_array_foreach (nodelist, index, entry)
    {
        if (!json_is_string (entry)
            || hostlist_append (hl, json_string_value (entry)) < 0) {
            errprintf (error, "nodelist[%zu] is not a valid hostlist", index);
            hostlist_destroy (hl);
            goto inval;
        }
    }
    if (hostlist_count (hl) != rl->nnodes) {
        errprintf (error, "nodelist has %d hosts but R_lite has %d ranks",
                   hostlist_count (hl), rl->nnodes);
        hostlist_destroy (hl);
        goto inval;
    }
    for (host = hostlist_first (hl); host; host = hostlist_next (hl)) {
        if (!(rl->nodes[i++]->hostname = strdup (host))) {
            hostlist_destroy (hl);
            errprintf (error, "out of memory");
            errno = ENOMEM;
            return -1;
        }
    }
    hostlist_destroy (hl);
    return 0;
inval:
    errno = EINVAL;
    return -1;
}

static int get_time (json_t *exec, const char *key, double *t,
                     flux_error_t *error)
{
    json_t *o = json_object_get (exec, key);

    *t = 0.;
    if (!o)
        return 0;
    if (!json_is_number (o) || !isfinite (json_number_value (o))
        || json_number_value (o) < 0) {
        errprintf (error, "%s must be a number >= 0", key);
        errno = EINVAL;
        return -1;
    }
    *t = json_number_value (o);
    return 0;
}

struct rlist *rlist_from_R (json_t *R, flux_error_t *error)
{
    struct nodevec nodes = {0};
    struct rlist *rl = NULL;
    json_t *exec, *R_lite, *nodelist = NULL, *nslots = NULL, *entry;
    json_error_t jerr;
    int version;
    size_t index;

    if (!R) {
        errprintf (error, "R is NULL");
        goto inval;
    }
    if (json_unpack_ex (R, &jerr, 0, "{s:i s:o}", "version", &version,
                        "execution", &exec)
        < 0) {
        errprintf (error, "R: %s", jerr.text);
        goto inval;
    }
    if (version != 1) {
        errprintf (error, "R version %d is not supported (only version 1)",
                   version);
        goto inval;
    }
    if (json_unpack_ex (exec, &jerr, 0, "{s:o s?o s?o}", "R_lite", &R_lite,
                        "nodelist", &nodelist, "nslots", &nslots)
        < 0) {
        errprintf (error, "R execution: %s", jerr.text);
        goto inval;
    }
    if (!json_is_array (R_lite)) {
        errprintf (error, "R_lite must be an array");
        goto inval;
    }
    if (nslots
        && (!json_is_integer (nslots) || json_integer_value (nslots) < 1
            || json_integer_value (nslots) > INT32_MAX)) {
        errprintf (error, "nslots must be an integer > 0");
        goto inval;
    }
    if (!(rl = rlist_create ())) {
        errprintf (error, "out of memory");
        return NULL;
    }
    json_array_foreach (R_lite, index, entry)
    {
        if (add_entry (&nodes, entry, index, error) < 0)
            goto error;
    }
    if (nodes.n > 0)
        qsort (nodes.v, nodes.n, sizeof (nodes.v[0]), node_cmp);
    /* in rank order, each insert appends (a rank listed twice: EEXIST) */
    for (size_t i = 0; i < nodes.n; i++) {
        if (rlist__insert (rl, nodes.v[i]) < 0) {
            if (errno == EEXIST) {
                errprintf (error, "R_lite: rank %u appears more than once",
                           nodes.v[i]->rank);
                errno = EINVAL;
            }
            else {
                errprintf (error, "out of memory");
                errno = ENOMEM;
            }
            goto error;
        }
        nodes.v[i] = NULL;
    }
    nodevec_free (&nodes);
    nodes = (struct nodevec){0};
    if (nodelist && assign_hosts (rl, nodelist, error) < 0)
        goto error;
    if (get_time (exec, "starttime", &rl->starttime, error) < 0
        || get_time (exec, "expiration", &rl->expiration, error) < 0)
        goto error;
    if (rl->starttime > 0 && rl->expiration > 0
        && rl->expiration <= rl->starttime) {
        errprintf (error, "expiration must be greater than starttime");
        errno = EINVAL;
        goto error;
    }
    if (nslots)
        rl->nslots = (int)json_integer_value (nslots);
    return rl;
inval:
    errno = EINVAL;
error:
    nodevec_free (&nodes);
    rlist_destroy (rl);
    return NULL;
}

/* rlist -> groups of ranks with identical children */

struct child {
    int index; /* into rl->nodes */
    char *cores;
    char *gpus;
};

struct group {
    struct idset *ranks;
    const char *cores; /* borrowed from a struct child */
    const char *gpus;
    unsigned int first;
};

static int child_cmp (const void *a, const void *b)
{
    const struct child *x = a, *y = b;
    int rc;

    if ((rc = strcmp (x->cores, y->cores)) || (rc = strcmp (x->gpus, y->gpus)))
        return rc;
    return x->index - y->index;
}

static int group_cmp (const void *a, const void *b)
{
    const struct group *x = a, *y = b;
    return x->first < y->first ? -1 : x->first > y->first ? 1 : 0;
}

struct grouping {
    struct child *children;
    struct group *groups;
    int nchildren;
    int ngroups;
};

static void grouping_free (struct grouping *gr)
{
    for (int i = 0; i < gr->nchildren; i++) {
        free (gr->children[i].cores);
        free (gr->children[i].gpus);
    }
    for (int i = 0; i < gr->ngroups; i++)
        idset_destroy (gr->groups[i].ranks);
    free (gr->children);
    free (gr->groups);
}

/* Group the nodes of rl (with their full resources) by children. */
static int grouping_make (const struct rlist *rl, struct grouping *gr)
{
    int i;

    memset (gr, 0, sizeof (*gr));
    if (rl->nnodes == 0)
        return 0;
    if (!(gr->children = calloc (rl->nnodes, sizeof (*gr->children)))
        || !(gr->groups = calloc (rl->nnodes, sizeof (*gr->groups))))
        goto nomem;
    for (i = 0; i < rl->nnodes; i++) {
        struct child *c = &gr->children[i];
        c->index = i;
        gr->nchildren++;
        if (!(c->cores = idset_encode (rl->nodes[i]->cores, IDSET_FLAG_RANGE))
            || !(c->gpus = idset_encode (rl->nodes[i]->gpus, IDSET_FLAG_RANGE)))
            goto nomem;
    }
    qsort (gr->children, gr->nchildren, sizeof (*gr->children), child_cmp);
    for (i = 0; i < gr->nchildren; i++) {
        struct child *c = &gr->children[i];
        struct group *g = gr->ngroups ? &gr->groups[gr->ngroups - 1] : NULL;
        unsigned int rank = rl->nodes[c->index]->rank;
        if (!g || strcmp (g->cores, c->cores) || strcmp (g->gpus, c->gpus)) {
            g = &gr->groups[gr->ngroups];
            if (!(g->ranks = idset_create (0, 0)))
                goto nomem;
            gr->ngroups++;
            g->cores = c->cores;
            g->gpus = c->gpus;
            g->first = rank;
        }
        if (idset_set (g->ranks, rank) < 0)
            goto nomem;
    }
    qsort (gr->groups, gr->ngroups, sizeof (*gr->groups), group_cmp);
    return 0;
nomem:
    grouping_free (gr);
    errno = ENOMEM;
    return -1;
}

static json_t *R_lite_entry (const struct group *g)
{
    char *ranks = idset_encode (g->ranks, IDSET_FLAG_RANGE);
    json_t *o = NULL;

    if (ranks) {
        if (*g->gpus)
            o = json_pack ("{s:s s:{s:s s:s}}", "rank", ranks, "children",
                           "core", g->cores, "gpu", g->gpus);
        else
            o = json_pack ("{s:s s:{s:s}}", "rank", ranks, "children", "core",
                           g->cores);
    }
    free (ranks);
    return o;
}

static bool all_hosts_known (const struct rlist *rl)
{
    for (int i = 0; i < rl->nnodes; i++)
        if (!rl->nodes[i]->hostname)
            return false;
    return true;
}

json_t *rlist_to_R (const struct rlist *rl)
{
    struct grouping gr;
    json_t *R_lite = NULL, *exec = NULL, *R = NULL;

    if (!rl) {
        errno = EINVAL;
        return NULL;
    }
    if (grouping_make (rl, &gr) < 0)
        return NULL;
    if (!(R_lite = json_array ()))
        goto nomem;
    for (int i = 0; i < gr.ngroups; i++) {
        if (json_array_append_new (R_lite, R_lite_entry (&gr.groups[i])) < 0)
            goto nomem;
    }
    if (!(exec = json_pack ("{s:O s:f s:f}", "R_lite", R_lite, "starttime",
                            rl->starttime, "expiration", rl->expiration)))
        goto nomem;
    if (rl->nnodes > 0 && all_hosts_known (rl)) {
        char *hosts = rlist_nodelist (rl);
        if (!hosts
            || json_object_set_new (exec, "nodelist", json_pack ("[s]", hosts))
                   < 0) {
            free (hosts);
            goto nomem;
        }
        free (hosts);
    }
    else if (rl->nnodes == 0
             && json_object_set_new (exec, "nodelist", json_array ()) < 0)
        goto nomem;
    if (rl->nslots > 0
        && json_object_set_new (exec, "nslots", json_integer (rl->nslots)) < 0)
        goto nomem;
    if (!(R = json_pack ("{s:i s:O}", "version", 1, "execution", exec)))
        goto nomem;
    json_decref (R_lite);
    json_decref (exec);
    grouping_free (&gr);
    return R;
nomem:
    json_decref (R_lite);
    json_decref (exec);
    grouping_free (&gr);
    errno = ENOMEM;
    return NULL;
}

/* "rank[0-1]/core[0-3],gpu0 rank2/core0" */
char *rlist_dumps (const struct rlist *rl)
{
    struct grouping gr;
    size_t len = 0, size = 64;
    char *buf;

    if (!rl) {
        errno = EINVAL;
        return NULL;
    }
    if (grouping_make (rl, &gr) < 0)
        return NULL;
    if (!(buf = calloc (1, size)))
        goto nomem;
    for (int i = 0; i < gr.ngroups; i++) {
        struct group *g = &gr.groups[i];
        const int fl = IDSET_FLAG_RANGE | IDSET_FLAG_BRACKETS;
        const struct rnode *node = rlist__find (rl, g->first);
        const struct idset *c = node->cores;
        const struct idset *gp = node->gpus;
        char *r = idset_encode (g->ranks, fl);
        char *cs = idset_encode (c, fl);
        char *gs = idset_encode (gp, fl);
        int n;
        if (!r || !cs || !gs) {
            free (r);
            free (cs);
            free (gs);
            goto nomem;
        }
        n = snprintf (NULL, 0, "%s%s%s%s%s%s%s", i ? " " : "", "rank", r,
                      *cs ? "/core" : "", cs,
                      *gs ? (*cs ? ",gpu" : "/gpu") : "", gs);
        if (len + n + 1 > size) {
            char *nb;
            while (len + n + 1 > size)
                size *= 2;
            if (!(nb = realloc (buf, size))) {
                free (r);
                free (cs);
                free (gs);
                goto nomem;
            }
            buf = nb;
        }
        len += sprintf (buf + len, "%s%s%s%s%s%s%s", i ? " " : "", "rank", r,
                        *cs ? "/core" : "", cs,
                        *gs ? (*cs ? ",gpu" : "/gpu") : "", gs);
        free (r);
        free (cs);
        free (gs);
    }
    grouping_free (&gr);
    return buf;
nomem:
    free (buf);
    grouping_free (&gr);
    errno = ENOMEM;
    return NULL;
}
