/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* request.c - jobspec resources -> rlist_request (see request.h).
 * The job-ingest validator has already checked the whole jobspec; this
 * reads only what scheduling needs and still fails closed, because a
 * scheduler must never crash on what it is sent.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "request.h"

static int inval (flux_error_t *error, const char *fmt, const char *path,
                  const char *what)
{
    errno = EINVAL;
    return errprintf (error, fmt, path, what);
}

/* A vertex {type:s, count:i, ...}: its type and count. */
static int vertex (json_t *v, const char *path, const char **type, int *count,
                   flux_error_t *error)
{
    json_t *t, *c;

    if (!json_is_object (v))
        return inval (error, "%s: %s", path, "must be an object");
    if (!(t = json_object_get (v, "type")) || !json_is_string (t))
        return inval (error, "%s: %s", path, "type must be a string");
    c = json_object_get (v, "count");
    if (!json_is_integer (c) || json_integer_value (c) < 1
        || json_integer_value (c) > INT_MAX)
        return inval (error, "%s: %s", path, "count must be an integer >= 1");
    *type = json_string_value (t);
    *count = (int)json_integer_value (c);
    return 0;
}

/* The slot's children: one core vertex and at most one gpu vertex. */
static int slot_children (json_t *slot, const char *path,
                          struct rlist_request *req, flux_error_t *error)
{
    json_t *with = json_object_get (slot, "with"), *v;
    char p[128];
    size_t i;

    if (!json_is_array (with) || json_array_size (with) < 1
        || json_array_size (with) > 2)
        return inval (error, "%s: %s", path,
                      "slot must have 'with': a core and an optional gpu");
    json_array_foreach (with, i, v)
    {
        const char *type;
        int count;
        snprintf (p, sizeof (p), "%s.with[%zu]", path, i);
        if (vertex (v, p, &type, &count, error) < 0)
            return -1;
        if (json_object_get (v, "with"))
            return inval (error, "%s: %s", p, "a core or gpu has no 'with'");
        if (!strcmp (type, "core") && req->cores_per_slot == 0)
            req->cores_per_slot = count;
        else if (!strcmp (type, "gpu") && req->gpus_per_slot == 0)
            req->gpus_per_slot = count;
        else
            return inval (error, "%s: %s", p,
                          "expected one core and at most one gpu");
    }
    if (req->cores_per_slot == 0)
        return inval (error, "%s: %s", path, "slot has no core");
    return 0;
}

static int parse_resources (json_t *res, struct rlist_request *req,
                            flux_error_t *error)
{
    const char *type;
    json_t *top, *with;
    int count;

    if (!json_is_array (res) || json_array_size (res) != 1)
        return inval (error, "%s%s", "resources: ",
                      "must be a list of exactly one node or slot");
    top = json_array_get (res, 0);
    if (vertex (top, "resources[0]", &type, &count, error) < 0)
        return -1;
    if (!strcmp (type, "slot")) {
        req->nslots = count;
        return slot_children (top, "resources[0]", req, error);
    }
    if (strcmp (type, "node") != 0)
        return inval (error, "%s: %s", "resources[0]",
                      "the first resource must be a node or a slot");
    req->nnodes = count;
    if (json_object_get (top, "exclusive")) {
        json_t *x = json_object_get (top, "exclusive");
        if (!json_is_boolean (x))
            return inval (error, "%s: %s", "resources[0]",
                          "exclusive must be a boolean");
        req->exclusive = json_is_true (x);
    }
    with = json_object_get (top, "with");
    if (!json_is_array (with) || json_array_size (with) != 1)
        return inval (error, "%s: %s", "resources[0]",
                      "a node must have 'with': exactly one slot");
    if (vertex (json_array_get (with, 0), "resources[0].with[0]", &type, &count,
                error)
        < 0)
        return -1;
    if (strcmp (type, "slot") != 0)
        return inval (error, "%s: %s", "resources[0].with[0]",
                      "a node may contain only a slot");
    if ((long long)count * req->nnodes > INT_MAX)
        return inval (error, "%s: %s", "resources[0]", "too many slots");
    req->nslots = count * req->nnodes;
    return slot_children (json_array_get (with, 0), "resources[0].with[0]", req,
                          error);
}

int request_parse (json_t *jobspec, struct rlist_request *req, double *duration,
                   flux_error_t *error)
{
    json_t *d = NULL;

    memset (req, 0, sizeof (*req));
    *duration = 0.;
    if (!json_is_object (jobspec))
        return inval (error, "%s%s", "jobspec ", "must be an object");
    if (parse_resources (json_object_get (jobspec, "resources"), req, error)
        < 0)
        return -1;
    (void)json_unpack (jobspec, "{s:{s:{s:o}}}", "attributes", "system",
                       "duration", &d);
    if (d) {
        if (!json_is_number (d) || !isfinite (json_number_value (d))
            || json_number_value (d) < 0)
            return inval (error, "%s%s", "attributes.system.duration ",
                          "must be a number >= 0");
        *duration = json_number_value (d);
    }
    return 0;
}
