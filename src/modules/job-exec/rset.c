/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* rset.c - the parts of R (RFC 20) job-exec uses (see rset.h). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "libhostlist/hostlist.h"
#include "rset.h"

static int inval (flux_error_t *error, const char *fmt, const char *arg)
{
    errprintf (error, fmt, arg);
    errno = EINVAL;
    return -1;
}

static int get_time (json_t *execution, const char *key, double *t,
                     flux_error_t *error)
{
    json_t *o = json_object_get (execution, key);

    *t = 0.;
    if (!o)
        return 0;
    if (!json_is_number (o) || !isfinite (json_number_value (o))
        || json_number_value (o) < 0.)
        return inval (error, "R: execution.%s is not a number >= 0", key);
    *t = json_number_value (o);
    return 0;
}

/* Decode R_lite[index].rank and add it to *ranks (which takes the decoded
 * set itself if it is still NULL: the usual R has a single entry).
 */
static int add_entry (struct idset **ranks, json_t *entry, size_t index,
                      flux_error_t *error)
{
    const char *s;
    json_t *children;
    struct idset *ids;
    idset_error_t e;
    char where[32];

    snprintf (where, sizeof (where), "%zu", index);
    if (json_unpack (entry, "{s:s s:o}", "rank", &s, "children", &children) < 0
        || !json_is_object (children))
        return inval (error,
                      "R: R_lite[%s] needs rank (string) and"
                      " children (object)",
                      where);
    if (!(ids = idset_decode_ex (s, -1, -1, 0, &e))) {
        if (errno == ENOMEM)
            return -1;
        return inval (error, "R: R_lite[%s].rank is not an idset", where);
    }
    if (idset_empty (ids)) {
        idset_destroy (ids);
        return inval (error, "R: R_lite[%s].rank is empty", where);
    }
    if (!*ranks) {
        *ranks = ids;
        return 0;
    }
    if (idset_add (*ranks, ids) < 0) {
        idset_destroy (ids);
        return -1;
    }
    idset_destroy (ids);
    return 0;
}

int rset_decode (json_t *R, struct rset *rs, flux_error_t *error)
{
    int version;
    json_t *execution, *R_lite, *entry;
    struct rset new = {0};
    size_t index;

    if (!R || !rs) {
        errno = EINVAL;
        return errprintf (error, "R: missing");
    }
    if (json_unpack (R, "{s:i s:o}", "version", &version, "execution",
                     &execution)
            < 0
        || !json_is_object (execution))
        return inval (error, "R: %s", "expected {version:i execution:o}");
    if (version != 1)
        return inval (error, "R: version %s", "must be 1");
    if (!(R_lite = json_object_get (execution, "R_lite"))
        || !json_is_array (R_lite) || json_array_size (R_lite) == 0)
        return inval (error, "R: %s",
                      "execution.R_lite is not a non-empty array");
    if (get_time (execution, "starttime", &new.starttime, error) < 0
        || get_time (execution, "expiration", &new.expiration, error) < 0)
        return -1;
    if (new.starttime > 0. && new.expiration > 0.
        && !(new.expiration > new.starttime))
        return inval (error, "R: %s", "expiration is not after starttime");
    json_array_foreach (R_lite, index, entry)
    {
        if (add_entry (&new.ranks, entry, index, error) < 0) {
            int saved_errno = errno;
            idset_destroy (new.ranks);
            errno = saved_errno;
            return -1;
        }
    }
    new.R = json_incref (R);
    *rs = new;
    return 0;
}

void rset_clear (struct rset *rs)
{
    if (rs) {
        idset_destroy (rs->ranks);
        json_decref (rs->R);
        memset (rs, 0, sizeof (*rs));
    }
}

char *rset_hosts (json_t *R, const struct idset *ranks)
{
    struct rset rs;
    json_t *nodelist, *entry;
    struct hostlist *all = NULL, *hl = NULL;
    char *s = NULL;
    size_t index;
    unsigned int r;
    const char *host;

    if (!ranks || rset_decode (R, &rs, NULL) < 0) {
        errno = EINVAL;
        return NULL;
    }
    if (json_unpack (R, "{s:{s:o}}", "execution", "nodelist", &nodelist) < 0
        || !json_is_array (nodelist) || !(all = hostlist_create ())
        || !(hl = hostlist_create ()))
        goto inval;
    json_array_foreach (nodelist, index, entry)
    {
        if (!json_is_string (entry)
            || hostlist_append (all, json_string_value (entry)) < 0)
            goto inval;
    }
    if (hostlist_count (all) != (int)idset_count (rs.ranks))
        goto inval;
    /* both walks are ascending: one pass over R's ranks and hosts */
    r = idset_first (rs.ranks);
    host = hostlist_first (all);
    for (unsigned int want = idset_first (ranks); want != IDSET_INVALID_ID;
         want = idset_next (ranks, want)) {
        while (r != IDSET_INVALID_ID && r < want) {
            r = idset_next (rs.ranks, r);
            host = hostlist_next (all);
        }
        if (r != want || !host || hostlist_append (hl, host) < 0)
            goto inval;
    }
    s = hostlist_encode (hl);
    hostlist_destroy (all);
    hostlist_destroy (hl);
    rset_clear (&rs);
    return s;
inval:
    hostlist_destroy (all);
    hostlist_destroy (hl);
    rset_clear (&rs);
    errno = EINVAL;
    return NULL;
}
