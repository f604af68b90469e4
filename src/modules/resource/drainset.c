/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* drainset.c - drained ranks with timestamp, reason and host.
 *
 * Records live in a jansson object keyed by the decimal rank (a hash);
 * the idset of drained ranks is kept alongside for set operations.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drainset.h"
#include "libhostlist/hostlist.h"

struct drainset {
    json_t *records; /* "rank" -> {timestamp:f, reason:s, host?:s} */
    struct idset *ranks;
};

struct drainset *drainset_create (void)
{
    struct drainset *ds = calloc (1, sizeof (*ds));

    if (!ds || !(ds->records = json_object ())
        || !(ds->ranks = idset_create (0, 0))) {
        drainset_destroy (ds);
        errno = ENOMEM;
        return NULL;
    }
    return ds;
}

void drainset_destroy (struct drainset *ds)
{
    if (ds) {
        int saved_errno = errno;
        json_decref (ds->records);
        idset_destroy (ds->ranks);
        free (ds);
        errno = saved_errno;
    }
}

static json_t *record (const struct drainset *ds, unsigned int rank)
{
    char key[16];
    snprintf (key, sizeof (key), "%u", rank);
    return json_object_get (ds->records, key);
}

static int put_record (struct drainset *ds, unsigned int rank, double ts,
                       const char *reason, const char *host)
{
    char key[16];
    json_t *o;

    snprintf (key, sizeof (key), "%u", rank);
    if (!(o = json_pack ("{s:f s:s}", "timestamp", ts, "reason",
                         reason ? reason : ""))
        || (host && json_object_set_new (o, "host", json_string (host)) < 0)
        || json_object_set_new (ds->records, key, o) < 0)
        goto nomem;
    if (idset_set (ds->ranks, rank) < 0) {
        json_object_del (ds->records, key);
        goto nomem;
    }
    return 0;
nomem:
    errno = ENOMEM;
    return -1;
}

static void del_record (struct drainset *ds, unsigned int rank)
{
    char key[16];
    snprintf (key, sizeof (key), "%u", rank);
    json_object_del (ds->records, key);
    (void)idset_clear (ds->ranks, rank);
}

int drainset_drain (struct drainset *ds, const struct idset *ranks,
                    const char *hosts, double timestamp, const char *reason,
                    int overwrite)
{
    struct hostlist *hl = NULL;
    const char *listhost = NULL;
    unsigned int id;

    if (!ds || !ranks || overwrite < DRAIN_KEEP || overwrite > DRAIN_UPDATE_ALL)
        goto inval;
    if (hosts) {
        if (!(hl = hostlist_decode (hosts))
            || hostlist_count (hl) != (int)idset_count (ranks))
            goto inval;
        listhost = hostlist_first (hl);
    }
    for (id = idset_first (ranks); id != IDSET_INVALID_ID;
         id = idset_next (ranks, id)) {
        json_t *old = record (ds, id);
        const char *host = listhost;
        double ts = timestamp;
        char *copy = NULL;
        int rc;

        if (old && overwrite == DRAIN_KEEP)
            goto next;
        if (old && overwrite == DRAIN_UPDATE_REASON)
            ts = json_number_value (json_object_get (old, "timestamp"));
        if (!host && old) /* keep the host we knew */
            host = json_string_value (json_object_get (old, "host"));
        /* copy: the cursor string is volatile and old is replaced */
        if (host && !(copy = strdup (host)))
            rc = -1;
        else
            rc = put_record (ds, id, ts, reason, copy);
        free (copy);
        if (rc < 0) {
            hostlist_destroy (hl);
            errno = ENOMEM;
            return -1;
        }
    next:
        if (hl)
            listhost = hostlist_next (hl);
    }
    hostlist_destroy (hl);
    return 0;
inval:
    hostlist_destroy (hl);
    errno = EINVAL;
    return -1;
}

int drainset_undrain (struct drainset *ds, const struct idset *ranks)
{
    unsigned int id;

    if (!ds || !ranks) {
        errno = EINVAL;
        return -1;
    }
    for (id = idset_first (ranks); id != IDSET_INVALID_ID;
         id = idset_next (ranks, id))
        del_record (ds, id);
    return 0;
}

const struct idset *drainset_ranks (const struct drainset *ds)
{
    return ds ? ds->ranks : NULL;
}

bool drainset_test (const struct drainset *ds, unsigned int rank)
{
    return ds && idset_test (ds->ranks, rank);
}

int drainset_get (const struct drainset *ds, unsigned int rank, double *ts,
                  const char **reason, const char **host)
{
    json_t *o;

    if (!ds || !(o = record (ds, rank))) {
        errno = ENOENT;
        return -1;
    }
    if (ts)
        *ts = json_number_value (json_object_get (o, "timestamp"));
    if (reason)
        *reason = json_string_value (json_object_get (o, "reason"));
    if (host)
        *host = json_string_value (json_object_get (o, "host"));
    return 0;
}

int drainset_apply_event (struct drainset *ds, json_t *entry,
                          flux_error_t *error)
{
    const char *name, *idset, *nodelist = NULL, *reason = NULL;
    json_t *context = NULL;
    double ts;
    int overwrite = 0;
    struct idset *ids;
    json_error_t jerr;
    int rc;

    if (json_unpack_ex (entry, &jerr, 0, "{s:F s:s s?o}", "timestamp", &ts,
                        "name", &name, "context", &context)
        < 0) {
        errno = EPROTO;
        return errprintf (error, "malformed event: %s", jerr.text);
    }
    if (strcmp (name, "drain") != 0 && strcmp (name, "undrain") != 0)
        return 0;
    if (!context
        || json_unpack_ex (context, &jerr, 0, "{s:s s?s s?s s?i}", "idset",
                           &idset, "nodelist", &nodelist, "reason", &reason,
                           "overwrite", &overwrite)
               < 0) {
        errno = EPROTO;
        return errprintf (error, "%s event: %s", name,
                          context ? jerr.text : "no context");
    }
    if (!(ids = idset_decode (idset))) {
        errno = EPROTO;
        return errprintf (error, "%s event: bad idset '%s'", name, idset);
    }
    if (name[0] == 'd')
        rc = drainset_drain (ds, ids, nodelist, ts, reason, overwrite);
    else
        rc = drainset_undrain (ds, ids);
    idset_destroy (ids);
    if (rc < 0) {
        errno = EPROTO;
        return errprintf (error,
                          "%s event: bad context (overwrite %d, "
                          "nodelist %s)",
                          name, overwrite, nodelist ? nodelist : "none");
    }
    return 0;
}

/* Move the record of rank to the first rank of its host, or drop it. */
static int remap_one (struct drainset *ds, struct rmap *m, unsigned int rank,
                      int *changed)
{
    json_t *o = json_incref (record (ds, rank));
    const char *host = json_string_value (json_object_get (o, "host"));
    const char *now = rmap_host (m, rank);
    int to, rc = 0;

    if (now && (!host || !strcmp (host, now)))
        goto done; /* unchanged, or nothing to check against */
    del_record (ds, rank);
    (*changed)++;
    if (host && (to = rmap_first_rank (m, host)) >= 0
        && !idset_test (ds->ranks, (unsigned int)to))
        rc = put_record (ds, (unsigned int)to,
                         json_number_value (json_object_get (o, "timestamp")),
                         json_string_value (json_object_get (o, "reason")),
                         host);
done:
    json_decref (o);
    return rc;
}

int drainset_remap (struct drainset *ds, struct rmap *m, int *changed)
{
    struct idset *old;
    unsigned int id;
    int n = 0;

    if (!ds || !m) {
        errno = EINVAL;
        return -1;
    }
    if (!(old = idset_copy (ds->ranks)))
        return -1;
    for (id = idset_first (old); id != IDSET_INVALID_ID;
         id = idset_next (old, id)) {
        if (remap_one (ds, m, id, &n) < 0) {
            idset_destroy (old);
            return -1;
        }
    }
    idset_destroy (old);
    if (changed)
        *changed = n;
    return 0;
}

/* Group ranks by (timestamp, reason): groups maps "ts\x1freason" to an
 * index into the array of idsets. */
json_t *drainset_to_json (const struct drainset *ds)
{
    json_t *groups = json_object (), *out = json_object ();
    struct idset **sets = NULL;
    size_t nsets = 0, i;
    unsigned int id;

    if (!groups || !out)
        goto nomem;
    for (id = idset_first (ds->ranks); id != IDSET_INVALID_ID;
         id = idset_next (ds->ranks, id)) {
        json_t *o = record (ds, id), *g;
        char key[64];
        char *k = NULL;
        size_t idx;

        snprintf (key, sizeof (key), "%.6f\x1f",
                  json_number_value (json_object_get (o, "timestamp")));
        if (asprintf (&k, "%s%s", key,
                      json_string_value (json_object_get (o, "reason")))
            < 0)
            goto nomem;
        if ((g = json_object_get (groups, k)))
            idx = (size_t)json_integer_value (g);
        else {
            struct idset **v = realloc (sets, (nsets + 1) * sizeof (*v));
            if (!v || !(v[nsets] = idset_create (0, 0))) {
                sets = v ? v : sets;
                free (k);
                goto nomem;
            }
            sets = v;
            idx = nsets++;
            if (json_object_set_new (groups, k, json_integer ((json_int_t)idx))
                < 0) {
                free (k);
                goto nomem;
            }
        }
        free (k);
        if (idset_set (sets[idx], id) < 0)
            goto nomem;
    }
    for (i = 0; i < nsets; i++) {
        unsigned int first = idset_first (sets[i]);
        json_t *o = record (ds, first);
        char *s = rmap_idset_str (sets[i]);
        if (!s
            || json_object_set_new (out, s,
                                    json_pack ("{s:O s:O}", "timestamp",
                                               json_object_get (o, "timestamp"),
                                               "reason",
                                               json_object_get (o, "reason")))
                   < 0) {
            free (s);
            goto nomem;
        }
        free (s);
    }
    goto done;
nomem:
    json_decref (out);
    out = NULL;
    errno = ENOMEM;
done:
    for (i = 0; i < nsets; i++)
        idset_destroy (sets[i]);
    free (sets);
    json_decref (groups);
    return out;
}
