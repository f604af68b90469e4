/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* hwxml.c - this node's cores for the job shells (see hwxml.h). */
#include <errno.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libidset/idset.h"

#include "hwxml.h"

char *hwxml_load (void)
{
    hwloc_topology_t topo;
    char *buf = NULL, *xml = NULL;
    int len;

    if (hwloc_topology_init (&topo) < 0)
        return NULL;
    if (hwloc_topology_set_all_types_filter (topo, HWLOC_TYPE_FILTER_KEEP_NONE)
            < 0
        || hwloc_topology_set_type_filter (topo, HWLOC_OBJ_PACKAGE,
                                           HWLOC_TYPE_FILTER_KEEP_ALL)
               < 0
        || hwloc_topology_set_type_filter (topo, HWLOC_OBJ_CORE,
                                           HWLOC_TYPE_FILTER_KEEP_ALL)
               < 0
        || hwloc_topology_set_type_filter (topo, HWLOC_OBJ_PU,
                                           HWLOC_TYPE_FILTER_KEEP_ALL)
               < 0
        || hwloc_topology_load (topo) < 0
        || hwloc_topology_export_xmlbuffer (topo, &buf, &len, 0) < 0)
        goto done;
    if (!(xml = strdup (buf)))
        errno = ENOMEM;
done : {
    int saved_errno = errno;
    if (buf)
        hwloc_free_xmlbuffer (topo, buf);
    hwloc_topology_destroy (topo);
    errno = saved_errno;
}
    return xml;
}

struct hwcores *hwxml_cores (void)
{
    char *xml = hwxml_load ();
    struct hwcores *hc;
    flux_error_t error;

    if (!xml)
        return NULL;
    if (!(hc = hwcores_parse (xml, &error)))
        errno = EPROTO;
    free (xml);
    return hc;
}

/* Add the cores of children.core (an idset) to cpus. */
static int add_cores (const struct hwcores *hc, json_t *children, json_t *cpus)
{
    json_t *o = json_object_get (children, "core");
    struct idset *ids;
    int rc = 0;

    if (!o)
        return 0;
    if (!json_is_string (o) || !(ids = idset_decode (json_string_value (o)))) {
        errno = EPROTO;
        return -1;
    }
    for (unsigned int id = idset_first (ids); id != IDSET_INVALID_ID;
         id = idset_next (ids, id)) {
        char key[16], bitmap[HWCORES_MAX_CPUS / 32 * 11 + 1];
        json_t *v;
        if (hwcores_format (hc, (int)id, bitmap, sizeof (bitmap)) < 0)
            continue; /* not on this node */
        snprintf (key, sizeof (key), "%u", id);
        if (!(v = json_string (bitmap)) || json_object_set_new (cpus, key, v)) {
            errno = ENOMEM;
            rc = -1;
            break;
        }
    }
    idset_destroy (ids);
    return rc;
}

json_t *hwxml_job_cpus (const struct hwcores *hc, json_t *R, uint32_t rank)
{
    json_t *rlite, *entry, *cpus;
    size_t i;

    if (json_unpack (R, "{s:{s:o}}", "execution", "R_lite", &rlite) < 0
        || !json_is_array (rlite)) {
        errno = EPROTO;
        return NULL;
    }
    if (!(cpus = json_object ())) {
        errno = ENOMEM;
        return NULL;
    }
    json_array_foreach (rlite, i, entry)
    {
        const char *rs;
        json_t *children;
        struct idset *ranks;
        bool here;

        if (json_unpack (entry, "{s:s s:o}", "rank", &rs, "children", &children)
                < 0
            || !(ranks = idset_decode (rs))) {
            errno = EPROTO;
            goto error;
        }
        here = idset_test (ranks, rank);
        idset_destroy (ranks);
        if (here && add_cores (hc, children, cpus) < 0)
            goto error;
    }
    return cpus;
error:
    json_decref (cpus);
    return NULL;
}
