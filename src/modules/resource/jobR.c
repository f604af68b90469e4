/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* jobR.c - R of a sub-instance, from its job in the parent (jobR.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jobR.h"
#include "libidset/idset.h"
#include "libjob/job.h"

#define FETCH_TIMEOUT 30.0

static int cmp_uint (const void *a, const void *b)
{
    unsigned int x = *(const unsigned int *)a, y = *(const unsigned int *)b;
    return x < y ? -1 : x > y;
}

/* The union of the ranks of every R_lite entry, as a sorted array. */
static unsigned int *all_ranks (json_t *R_lite, size_t *np, flux_error_t *error)
{
    struct idset *all = idset_create (0, IDSET_FLAG_AUTOGROW);
    unsigned int *ranks = NULL, r;
    size_t i, n = 0;
    json_t *entry;

    if (!all) {
        errprintf (error, "out of memory");
        return NULL;
    }
    json_array_foreach (R_lite, i, entry)
    {
        const char *s = json_string_value (json_object_get (entry, "rank"));
        struct idset *ids = s ? idset_decode (s) : NULL;
        if (!ids || idset_add (all, ids) < 0) {
            idset_destroy (ids);
            errprintf (error, "R_lite[%zu]: missing or bad rank", i);
            goto done;
        }
        idset_destroy (ids);
    }
    if (!(ranks = calloc (idset_count (all) + 1, sizeof (*ranks)))) {
        errprintf (error, "out of memory");
        goto done;
    }
    for (r = idset_first (all); r != IDSET_INVALID_ID; r = idset_next (all, r))
        ranks[n++] = r;
    *np = n;
done:
    idset_destroy (all);
    return ranks;
}

json_t *jobR_remap (json_t *R, flux_error_t *error)
{
    json_t *cpy, *R_lite, *entry;
    unsigned int *ranks;
    size_t i, n = 0;

    if (!(cpy = json_deep_copy (R))
        || !(R_lite
             = json_object_get (json_object_get (cpy, "execution"), "R_lite"))
        || !json_is_array (R_lite)) {
        json_decref (cpy);
        errprintf (error, "R has no execution.R_lite array");
        return NULL;
    }
    if (!(ranks = all_ranks (R_lite, &n, error))) {
        json_decref (cpy);
        return NULL;
    }
    json_array_foreach (R_lite, i, entry)
    {
        const char *s = json_string_value (json_object_get (entry, "rank"));
        struct idset *ids = idset_decode (s), *new = idset_create (0, 0);
        char *enc = NULL;
        unsigned int r;
        int rc = new ? 0 : -1;

        for (r = idset_first (ids); rc == 0 && r != IDSET_INVALID_ID;
             r = idset_next (ids, r)) {
            unsigned int *p = bsearch (&r, ranks, n, sizeof (*ranks), cmp_uint);
            rc = idset_set (new, (unsigned int)(p - ranks));
        }
        if (rc < 0 || !(enc = idset_encode (new, IDSET_FLAG_RANGE))
            || json_object_set_new (entry, "rank", json_string (enc)) < 0) {
            errprintf (error, "out of memory");
            free (enc);
            idset_destroy (new);
            idset_destroy (ids);
            free (ranks);
            json_decref (cpy);
            return NULL;
        }
        free (enc);
        idset_destroy (new);
        idset_destroy (ids);
    }
    free (ranks);
    return cpy;
}

json_t *jobR_fetch (const char *parent_uri, const char *jobid,
                    flux_error_t *error)
{
    flux_jobid_t id;
    flux_future_t *f = NULL;
    flux_t *h = NULL;
    json_t *R = NULL, *result = NULL;

    if (flux_job_id_parse (jobid, &id) < 0) {
        errprintf (error, "jobid attribute %s: not a job id", jobid);
        return NULL;
    }
    if (!(h = flux_open (parent_uri, 0))) {
        errprintf (error, "cannot reach the parent %s: %s", parent_uri,
                   strerror (errno));
        return NULL;
    }
    if (!(f = flux_rpc_pack (h, "job-info.lookup", FLUX_NODEID_ANY, 0,
                             "{s:I s:[s] s:i}", "id", (json_int_t)id, "keys",
                             "R", "flags", 1))
        || flux_future_wait_for (f, FETCH_TIMEOUT) < 0
        || flux_rpc_get_unpack (f, "{s:o}", "R", &R) < 0) {
        errprintf (error, "job %s R from the parent: %s", jobid,
                   f ? future_strerror (f, errno) : strerror (errno));
        goto done;
    }
    result = jobR_remap (R, error);
done:
    flux_future_destroy (f);
    flux_close (h);
    return result;
}
