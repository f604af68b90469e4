/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* job_summary.c - reduce a jobspec (RFC 14/25) and an R (RFC 20) to the
 * few fields job-list reports, and apply jobspec-update events to them.
 *
 * Counts as flux-core's job-list reports them: nnodes from the node
 * level of the jobspec until R gives the real number; ncores = slots x
 * cores per slot, unless whole nodes are requested (then from R);
 * ntasks = tasks count total, or per_slot x slots, or as the shell's
 * per-resource option says (some of those need R).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "libhostlist/hostlist.h"
#include "libidset/idset.h"

#define MAX_DEPTH 8

struct counts {
    int nnodes;    /* 0 when there is no node level */
    int nslots;    /* total slots */
    int slot_size; /* cores per slot */
    bool exclusive;
};

static int count_of (json_t *r)
{
    json_t *c = json_object_get (r, "count");
    json_int_t n = -1;

    if (json_is_integer (c))
        n = json_integer_value (c);
    else if (json_is_object (c))
        (void)json_unpack (c, "{s:I}", "min", &n);
    return n >= 1 && n <= 1 << 30 ? (int)n : -1;
}

/* Cores below a slot (per slot). */
static int cores_in (json_t *with, int depth)
{
    size_t i;
    json_t *r;
    int sum = 0;

    if (depth > MAX_DEPTH || !json_is_array (with))
        return 0;
    json_array_foreach (with, i, r)
    {
        const char *type = json_string_value (json_object_get (r, "type"));
        int n = count_of (r);
        if (!type || n < 0)
            continue;
        if (!strcmp (type, "core"))
            sum += n;
        else
            sum += n * cores_in (json_object_get (r, "with"), depth + 1);
    }
    return sum;
}

static void walk (json_t *resources, int mult, struct counts *c, int depth)
{
    size_t i;
    json_t *r;

    if (depth > MAX_DEPTH || !json_is_array (resources))
        return;
    json_array_foreach (resources, i, r)
    {
        const char *type = json_string_value (json_object_get (r, "type"));
        int n = count_of (r);
        if (!type || n < 0)
            continue;
        if (!strcmp (type, "slot")) {
            c->nslots += mult * n;
            c->slot_size = cores_in (json_object_get (r, "with"), depth + 1);
            continue;
        }
        if (!strcmp (type, "node")) {
            c->nnodes += mult * n;
            if (json_is_true (json_object_get (r, "exclusive")))
                c->exclusive = true;
        }
        walk (json_object_get (r, "with"), mult * n, c, depth + 1);
    }
}

static int set_str (strpool_t *pool, const char **field, const char *s)
{
    const char *p = NULL;

    if (s && !(p = strpool_get (pool, s)))
        return -1;
    strpool_put (pool, *field);
    *field = p;
    return 0;
}

static const char *basename_of (const char *path)
{
    const char *p = strrchr (path, '/');
    return p && p[1] != '\0' ? p + 1 : path;
}

/* Apply the attributes.system fields present in o (a jobspec, or the
 * partial object a jobspec-update builds).
 */
static int apply_attributes (struct job *job, strpool_t *pool, json_t *o)
{
    json_t *sys = json_object_get (json_object_get (o, "attributes"), "system");
    json_t *v;
    static const struct {
        const char *key;
        size_t offset;
    } strs[] = {
        {"cwd", offsetof (struct job, cwd)},
        {"queue", offsetof (struct job, queue)},
        {"project", offsetof (struct job, project)},
        {"bank", offsetof (struct job, bank)},
    };

    if (!json_is_object (sys))
        return 0;
    for (size_t i = 0; i < sizeof (strs) / sizeof (strs[0]); i++) {
        const char **field = (const char **)((char *)job + strs[i].offset);
        if ((v = json_object_get (sys, strs[i].key)) && json_is_string (v)
            && set_str (pool, field, json_string_value (v)) < 0)
            return -1;
    }
    if ((v = json_object_get (sys, "duration")) && json_is_number (v))
        job->duration = json_number_value (v);
    v = json_object_get (json_object_get (sys, "job"), "name");
    if (json_is_string (v) && set_str (pool, &job->name, json_string_value (v)))
        return -1;
    return 0;
}

static void apply_counts (struct job *job, json_t *jobspec)
{
    struct counts c = {0};
    json_t *task = json_array_get (json_object_get (jobspec, "tasks"), 0);
    json_t *count = json_object_get (task, "count");
    json_t *pr;
    json_int_t total = -1, per_slot = -1;
    const char *type = NULL;
    int prcount = 1;

    walk (json_object_get (jobspec, "resources"), 1, &c, 0);
    if (c.nnodes > 0 && !job->have_R)
        job->nnodes = c.nnodes;
    if (!(c.nnodes > 0 && c.exclusive) && c.nslots > 0 && !job->have_R)
        job->ncores = c.nslots * c.slot_size;

    pr = json_object_get (
        json_object_get (
            json_object_get (
                json_object_get (json_object_get (jobspec, "attributes"),
                                 "system"),
                "shell"),
            "options"),
        "per-resource");
    if (json_is_object (pr)
        && json_unpack (pr, "{s:s s?i}", "type", &type, "count", &prcount) == 0
        && prcount >= 1) {
        if (!strcmp (type, "node")) {
            if (c.nnodes > 0)
                job->ntasks = c.nnodes * prcount;
            else
                job->ntasks_per_node = prcount;
            return;
        }
        if (!strcmp (type, "core")) {
            if (c.nnodes == 0)
                job->ntasks = c.nslots * c.slot_size * prcount;
            else
                job->ntasks_per_core = prcount;
            return;
        }
    }
    (void)json_unpack (count, "{s?I s?I}", "total", &total, "per_slot",
                       &per_slot);
    if (total >= 1)
        job->ntasks = total;
    else if (c.nslots > 0)
        job->ntasks = c.nslots * (per_slot >= 1 ? per_slot : 1);
}

int job_apply_jobspec (struct job *job, strpool_t *pool, json_t *jobspec,
                       flux_error_t *error)
{
    json_t *task, *arg0;

    if (!json_is_object (jobspec)) {
        errprintf (error, "jobspec is not an object");
        errno = EPROTO;
        return -1;
    }
    task = json_array_get (json_object_get (jobspec, "tasks"), 0);
    arg0 = json_array_get (json_object_get (task, "command"), 0);
    if (json_is_string (arg0)
        && set_str (pool, &job->name, basename_of (json_string_value (arg0)))
               < 0)
        return -1;
    if (apply_attributes (job, pool, jobspec) < 0)
        return -1;
    apply_counts (job, jobspec);
    return 0;
}

/* Set o's value at a dotted path, creating objects on the way. */
static int path_set (json_t *o, const char *path, json_t *value)
{
    char *cpy, *save = NULL, *tok, *next;
    int rc = -1;

    if (!(cpy = strdup (path)))
        return -1;
    tok = strtok_r (cpy, ".", &save);
    while (tok) {
        if (!(next = strtok_r (NULL, ".", &save))) {
            rc = json_object_set (o, tok, value);
            break;
        }
        json_t *child = json_object_get (o, tok);
        if (!json_is_object (child)) {
            if (!(child = json_object ())
                || json_object_set_new (o, tok, child) < 0)
                break;
        }
        o = child;
        tok = next;
    }
    free (cpy);
    return rc;
}

int job_jobspec_update (struct job *job, strpool_t *pool, json_t *context,
                        flux_error_t *error)
{
    json_t *partial, *value;
    const char *key;
    int rc = -1;

    if (!(partial = json_object ()))
        goto nomem;
    json_object_foreach (context, key, value)
    {
        if (strncmp (key, "attributes", 10) != 0
            || (key[10] != '\0' && key[10] != '.'))
            continue; /* resources.*, tasks.*: no jobspec kept to update */
        if (path_set (partial, key, value) < 0)
            goto nomem;
    }
    if (apply_attributes (job, pool, partial) < 0)
        goto nomem;
    rc = JOB_EVENT_APPLIED;
nomem:
    json_decref (partial);
    if (rc < 0) {
        errprintf (error, "jobspec-update: out of memory");
        errno = ENOMEM;
    }
    return rc;
}

static int r_error (flux_error_t *error, const char *what)
{
    errprintf (error, "R: %s", what);
    errno = EPROTO;
    return -1;
}

int job_apply_R (struct job *job, strpool_t *pool, json_t *R,
                 flux_error_t *error)
{
    json_t *rlite, *nodelist = NULL, *entry;
    double expiration = 0.;
    struct idset *ranks = NULL, *ids = NULL, *cores = NULL;
    struct hostlist *hl = NULL;
    char *ranks_s = NULL, *nodes_s = NULL;
    const char *pranks = NULL, *pnodes = NULL;
    size_t i;
    long ncores = 0;
    int version, rc = -1;

    if (!R
        || json_unpack (R, "{s:i s:{s:o s?o s?F}}", "version", &version,
                        "execution", "R_lite", &rlite, "nodelist", &nodelist,
                        "expiration", &expiration)
               < 0
        || version != 1 || !json_is_array (rlite))
        return r_error (error, "expected {version:1, execution:{R_lite:[]}}");
    if (!(ranks = idset_create (0, IDSET_FLAG_AUTOGROW)))
        goto done;
    json_array_foreach (rlite, i, entry)
    {
        const char *rank_s, *core_s;
        if (json_unpack (entry, "{s:s s:{s:s}}", "rank", &rank_s, "children",
                         "core", &core_s)
                < 0
            || !(ids = idset_decode (rank_s))
            || !(cores = idset_decode (core_s)) || idset_add (ranks, ids) < 0) {
            rc = r_error (error, "bad R_lite entry");
            goto done;
        }
        ncores += (long)idset_count (ids) * idset_count (cores);
        idset_destroy (ids);
        idset_destroy (cores);
        ids = cores = NULL;
    }
    if (nodelist) {
        json_t *s;
        if (!json_is_array (nodelist) || !(hl = hostlist_create ())) {
            rc = r_error (error, "bad nodelist");
            goto done;
        }
        json_array_foreach (nodelist, i, s)
        {
            if (!json_is_string (s)
                || hostlist_append (hl, json_string_value (s)) < 0) {
                rc = r_error (error, "bad nodelist");
                goto done;
            }
        }
        if (!(nodes_s = hostlist_encode (hl))
            || !(pnodes = strpool_get (pool, nodes_s)))
            goto done;
    }
    if (!(ranks_s
          = idset_encode (ranks, IDSET_FLAG_RANGE | IDSET_FLAG_BRACKETS))
        || !(pranks = strpool_get (pool, ranks_s)))
        goto done;
    strpool_put (pool, job->ranks);
    job->ranks = pranks;
    pranks = NULL;
    if (pnodes) {
        strpool_put (pool, job->nodelist);
        job->nodelist = pnodes;
        pnodes = NULL;
    }
    job->nnodes = idset_count (ranks);
    job->ncores = ncores;
    if (expiration > 0.)
        job->expiration = expiration;
    if (job->ntasks_per_node > 0)
        job->ntasks = job->nnodes * job->ntasks_per_node;
    if (job->ntasks_per_core > 0)
        job->ntasks = job->ncores * job->ntasks_per_core;
    job->have_R = true;
    rc = 0;
done:
    if (rc < 0 && errno != EPROTO)
        errprintf (error, "R: %s", strerror (errno));
    strpool_put (pool, pranks);
    strpool_put (pool, pnodes);
    free (ranks_s);
    free (nodes_s);
    hostlist_destroy (hl);
    idset_destroy (ids);
    idset_destroy (cores);
    idset_destroy (ranks);
    return rc;
}
