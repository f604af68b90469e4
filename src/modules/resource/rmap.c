/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* rmap.c - Rv1 with its rank <-> host map: validation, subsets, targets. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libhostlist/hostlist.h"
#include "rmap.h"

/* More ranks than this in one R is refused (the arrays below are O(n)). */
#define RMAP_MAX_RANKS (1 << 20)

struct rmap {
    json_t *R;
    struct idset *ranks;
    unsigned int *rankv; /* sorted */
    char **hostv;        /* hostv[i] is the host of rankv[i] */
    int n;
    json_t *byhost; /* host -> [rank...] ascending, built on first use */
};

void rmap_destroy (struct rmap *m)
{
    if (m) {
        int saved_errno = errno;
        for (int i = 0; m->hostv && i < m->n; i++)
            free (m->hostv[i]);
        free (m->hostv);
        free (m->rankv);
        idset_destroy (m->ranks);
        json_decref (m->byhost);
        json_decref (m->R);
        free (m);
        errno = saved_errno;
    }
}

char *rmap_idset_str (const struct idset *ids)
{
    return idset_encode (ids, IDSET_FLAG_RANGE);
}

/* Validate one R_lite entry and add its ranks to all (disjoint). */
static int add_entry (struct idset *all, json_t *entry, size_t i,
                      flux_error_t *error)
{
    const char *rank, *core, *gpu = NULL;
    struct idset *ids = NULL, *tmp;
    json_error_t jerr;

    if (json_unpack_ex (entry, &jerr, 0, "{s:s s:{s:s s?s}}", "rank", &rank,
                        "children", "core", &core, "gpu", &gpu)
        < 0) {
        errno = EINVAL;
        return errprintf (error, "R_lite[%zu]: %s", i, jerr.text);
    }
    if (!(tmp = idset_decode (core)))
        goto bad;
    idset_destroy (tmp);
    if (gpu) {
        if (!(tmp = idset_decode (gpu)))
            goto bad;
        idset_destroy (tmp);
    }
    if (!(ids = idset_decode (rank)) || idset_empty (ids))
        goto bad;
    if (idset_has_intersection (all, ids)) {
        idset_destroy (ids);
        errno = EINVAL;
        return errprintf (error, "R_lite[%zu]: ranks %s appear twice", i, rank);
    }
    if (idset_add (all, ids) < 0) {
        idset_destroy (ids);
        return errprintf (error, "out of memory");
    }
    idset_destroy (ids);
    return 0;
bad:
    idset_destroy (ids);
    errno = EINVAL;
    return errprintf (error,
                      "R_lite[%zu]: a rank, core or gpu idset is "
                      "malformed or empty",
                      i);
}

static struct hostlist *nodelist_decode (json_t *nodelist, flux_error_t *error)
{
    struct hostlist *hl = hostlist_create ();
    size_t i;
    json_t *v;

    if (!hl) {
        errprintf (error, "out of memory");
        return NULL;
    }
    json_array_foreach (nodelist, i, v)
    {
        if (!json_is_string (v)
            || hostlist_append (hl, json_string_value (v)) < 0) {
            hostlist_destroy (hl);
            errno = EINVAL;
            errprintf (error, "nodelist[%zu] is not a valid hostlist", i);
            return NULL;
        }
    }
    return hl;
}

/* Fill rankv/hostv from the ranks and the hostlist (same count). */
static int index_hosts (struct rmap *m, struct hostlist *hl)
{
    unsigned int id = idset_first (m->ranks);
    const char *host = hostlist_first (hl);

    if (!(m->rankv = calloc (m->n ? m->n : 1, sizeof (*m->rankv)))
        || !(m->hostv = calloc (m->n ? m->n : 1, sizeof (*m->hostv))))
        return -1;
    for (int i = 0; i < m->n; i++) {
        if (!host || id == IDSET_INVALID_ID || !(m->hostv[i] = strdup (host)))
            return -1;
        m->rankv[i] = id;
        id = idset_next (m->ranks, id);
        host = hostlist_next (hl);
    }
    return 0;
}

struct rmap *rmap_create (json_t *R, flux_error_t *error)
{
    struct rmap *m = NULL;
    struct hostlist *hl = NULL;
    json_t *R_lite, *nodelist, *entry;
    json_error_t jerr;
    int version;
    size_t i;

    if (!R
        || json_unpack_ex (R, &jerr, 0, "{s:i s:{s:o s:o}}", "version",
                           &version, "execution", "R_lite", &R_lite, "nodelist",
                           &nodelist)
               < 0) {
        errno = EINVAL;
        errprintf (error, "R: %s", R ? jerr.text : "missing");
        return NULL;
    }
    if (version != 1 || !json_is_array (R_lite) || !json_is_array (nodelist)) {
        errno = EINVAL;
        errprintf (error, "R: expected version 1 with R_lite and nodelist "
                          "arrays");
        return NULL;
    }
    if (!(m = calloc (1, sizeof (*m))) || !(m->ranks = idset_create (0, 0)))
        goto nomem;
    json_array_foreach (R_lite, i, entry)
    {
        if (add_entry (m->ranks, entry, i, error) < 0)
            goto error;
        if (idset_count (m->ranks) > RMAP_MAX_RANKS) {
            errno = EINVAL;
            errprintf (error, "R: more than %d ranks", RMAP_MAX_RANKS);
            goto error;
        }
    }
    if (!(hl = nodelist_decode (nodelist, error)))
        goto error;
    m->n = (int)idset_count (m->ranks);
    if (hostlist_count (hl) != m->n) {
        errno = EINVAL;
        errprintf (error, "R: nodelist names %d hosts for %d ranks",
                   hostlist_count (hl), m->n);
        goto error;
    }
    if (index_hosts (m, hl) < 0)
        goto nomem;
    hostlist_destroy (hl);
    m->R = json_incref (R);
    return m;
nomem:
    errno = ENOMEM;
    errprintf (error, "out of memory");
error:
    hostlist_destroy (hl);
    rmap_destroy (m);
    return NULL;
}

json_t *rmap_R (const struct rmap *m)
{
    return m ? m->R : NULL;
}

const struct idset *rmap_ranks (const struct rmap *m)
{
    return m ? m->ranks : NULL;
}

static int find_index (const struct rmap *m, unsigned int rank)
{
    int lo = 0, hi = m->n - 1;

    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (m->rankv[mid] == rank)
            return mid;
        if (m->rankv[mid] < rank)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

const char *rmap_host (const struct rmap *m, unsigned int rank)
{
    int i;

    if (!m || (i = find_index (m, rank)) < 0) {
        errno = ENOENT;
        return NULL;
    }
    return m->hostv[i];
}

static int build_byhost (struct rmap *m)
{
    if (m->byhost)
        return 0;
    if (!(m->byhost = json_object ()))
        return -1;
    for (int i = 0; i < m->n; i++) {
        json_t *a = json_object_get (m->byhost, m->hostv[i]);
        if (!a) {
            if (!(a = json_array ())
                || json_object_set_new (m->byhost, m->hostv[i], a) < 0)
                goto nomem;
        }
        if (json_array_append_new (a, json_integer (m->rankv[i])) < 0)
            goto nomem;
    }
    return 0;
nomem:
    json_decref (m->byhost);
    m->byhost = NULL;
    errno = ENOMEM;
    return -1;
}

int rmap_first_rank (struct rmap *m, const char *host)
{
    json_t *a;

    if (!m || !host || build_byhost (m) < 0)
        return -1;
    if (!(a = json_object_get (m->byhost, host))) {
        errno = ENOENT;
        return -1;
    }
    return (int)json_integer_value (json_array_get (a, 0));
}

char *rmap_nodelist (const struct rmap *m, const struct idset *ranks)
{
    struct hostlist *hl = hostlist_create ();
    char *s = NULL;
    unsigned int id;

    if (!hl)
        return NULL;
    /* walk the smaller side: the given ranks, looked up one by one */
    for (id = idset_first (ranks); id != IDSET_INVALID_ID;
         id = idset_next (ranks, id)) {
        const char *host = rmap_host (m, id);
        if (host && hostlist_append (hl, host) < 0)
            goto done;
    }
    s = hostlist_encode (hl);
done:
    hostlist_destroy (hl);
    return s;
}

/* Append entry restricted to keep (NULL: all) to out, unless empty. */
static int subset_entry (json_t *out, json_t *entry, const struct idset *keep)
{
    const char *rank = json_string_value (json_object_get (entry, "rank"));
    struct idset *ids = idset_decode (rank), *in = NULL;
    const struct idset *use;
    char *s = NULL;
    json_t *o = NULL;
    int rc = -1;

    if (!ids || (keep && !(in = idset_intersect (ids, keep))))
        goto done;
    use = in ? in : ids;
    if (idset_empty (use))
        rc = 0;
    else if ((s = rmap_idset_str (use))
             && (o = json_pack ("{s:s s:O}", "rank", s, "children",
                                json_object_get (entry, "children")))
             && json_array_append_new (out, o) == 0) {
        o = NULL;
        rc = 0;
    }
done:
    json_decref (o);
    free (s);
    idset_destroy (in);
    idset_destroy (ids);
    return rc;
}

static json_t *subset_R_lite (const struct rmap *m, const struct idset *keep)
{
    json_t *R_lite
        = json_object_get (json_object_get (m->R, "execution"), "R_lite");
    json_t *out = json_array (), *entry;
    size_t i;

    if (!out)
        return NULL;
    json_array_foreach (R_lite, i, entry)
    {
        if (subset_entry (out, entry, keep) < 0) {
            json_decref (out);
            return NULL;
        }
    }
    return out;
}

static json_t *subset_properties (json_t *props, const struct idset *keep)
{
    json_t *out = json_object (), *v;
    const char *name;

    if (!out)
        return NULL;
    json_object_foreach (props, name, v)
    {
        struct idset *ids = idset_decode (json_string_value (v)), *in = NULL;
        char *s = NULL;
        int rc = 0;

        if (!ids || (keep && !(in = idset_intersect (ids, keep))))
            rc = -1;
        else if (!idset_empty (in ? in : ids)) {
            if (!(s = rmap_idset_str (in ? in : ids))
                || json_object_set_new (out, name, json_string (s)) < 0)
                rc = -1;
        }
        free (s);
        idset_destroy (in);
        idset_destroy (ids);
        if (rc < 0) {
            json_decref (out);
            return NULL;
        }
    }
    return out;
}

json_t *rmap_subset (const struct rmap *m, const struct idset *keep)
{
    json_t *exec = json_object_get (m->R, "execution");
    json_t *props = json_object_get (exec, "properties");
    json_t *sched = json_object_get (m->R, "scheduling");
    json_t *R_lite = NULL, *o = NULL, *p = NULL;
    struct idset *ids = NULL;
    char *nodelist = NULL;

    if (keep && !(ids = idset_intersect (m->ranks, keep)))
        goto done;
    if (!(nodelist = rmap_nodelist (m, ids ? ids : m->ranks))
        || !(R_lite = subset_R_lite (m, keep)))
        goto done;
    if (!(o
          = json_pack ("{s:i s:{s:O s:f s:f s:[]}}", "version", 1, "execution",
                       "R_lite", R_lite, "starttime",
                       json_number_value (json_object_get (exec, "starttime")),
                       "expiration",
                       json_number_value (json_object_get (exec, "expiration")),
                       "nodelist")))
        goto done;
    if (*nodelist
        && json_array_append_new (
               json_object_get (json_object_get (o, "execution"), "nodelist"),
               json_string (nodelist))
               < 0)
        goto error;
    if (json_is_object (props)) {
        if (!(p = subset_properties (props, keep)))
            goto error;
        if (json_object_size (p) > 0
            && json_object_set (json_object_get (o, "execution"), "properties",
                                p)
                   < 0)
            goto error;
    }
    if (sched && json_object_set (o, "scheduling", sched) < 0)
        goto error;
    goto done;
error:
    json_decref (o);
    o = NULL;
done:
    if (!o)
        errno = ENOMEM;
    json_decref (p);
    json_decref (R_lite);
    free (nodelist);
    idset_destroy (ids);
    return o;
}

static int add_host_ranks (struct rmap *m, struct idset *ids, const char *host,
                           flux_error_t *error)
{
    json_t *a = json_object_get (m->byhost, host), *v;
    size_t i;

    if (!a) {
        errno = EINVAL;
        return errprintf (error, "unknown host %s", host);
    }
    json_array_foreach (a, i, v)
    {
        if (idset_set (ids, (unsigned int)json_integer_value (v)) < 0)
            return errprintf (error, "out of memory");
    }
    return 0;
}

struct idset *rmap_targets (struct rmap *m, const char *targets,
                            flux_error_t *error)
{
    struct idset *ids, *extra = NULL;
    struct hostlist *hl;
    const char *host;

    if (!m || !targets || !*targets) {
        errno = EINVAL;
        errprintf (error, "no targets were given");
        return NULL;
    }
    if ((ids = idset_decode (targets))) {
        if (idset_empty (ids)) {
            idset_destroy (ids);
            errno = EINVAL;
            errprintf (error, "no targets were given");
            return NULL;
        }
        if (!(extra = idset_difference (ids, m->ranks)))
            goto nomem;
        if (!idset_empty (extra)) {
            char *s = rmap_idset_str (extra);
            errno = EINVAL;
            errprintf (error, "ranks %s do not exist", s ? s : "?");
            free (s);
            goto error;
        }
        idset_destroy (extra);
        return ids;
    }
    if (!(hl = hostlist_decode (targets)) || hostlist_count (hl) == 0) {
        hostlist_destroy (hl);
        errno = EINVAL;
        errprintf (error, "invalid targets '%s': not an idset or a hostlist",
                   targets);
        return NULL;
    }
    if (!(ids = idset_create (0, 0)) || build_byhost (m) < 0) {
        hostlist_destroy (hl);
        goto nomem;
    }
    for (host = hostlist_first (hl); host; host = hostlist_next (hl)) {
        if (add_host_ranks (m, ids, host, error) < 0) {
            hostlist_destroy (hl);
            goto error;
        }
    }
    hostlist_destroy (hl);
    return ids;
nomem:
    errno = ENOMEM;
    errprintf (error, "out of memory");
error:
    idset_destroy (extra);
    idset_destroy (ids);
    return NULL;
}

json_t *rmap_empty_R (void)
{
    json_t *o
        = json_pack ("{s:i s:{s:[] s:f s:f s:[]}}", "version", 1, "execution",
                     "R_lite", "starttime", 0., "expiration", 0., "nodelist");
    if (!o)
        errno = ENOMEM;
    return o;
}
