/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* hwxml.c - this node's topology as XML (see hwxml.h). */
#include <errno.h>
#include <hwloc.h>
#include <stdlib.h>
#include <string.h>

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
