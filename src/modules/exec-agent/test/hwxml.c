/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/hwxml.c - the topology the agent hands its shells. */
#define _GNU_SOURCE 1
#include <hwloc.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "hwxml.h"
#include "tap.h"

int main (int argc, char **argv)
{
    char *xml;
    hwloc_topology_t topo;
    cpu_set_t set;
    int ncores = -1, npus = -1;

    plan (NO_PLAN);
    xml = hwxml_load ();
    ok (xml != NULL && strstr (xml, "<topology") != NULL,
        "hwxml_load returns an XML topology");
    ok (xml && strstr (xml, "type=\"L1Cache\"") == NULL,
        "without caches (packages, cores, PUs only)");
    ok (hwloc_topology_init (&topo) == 0
            && hwloc_topology_set_xmlbuffer (topo, xml, (int)strlen (xml) + 1)
                   == 0
            && hwloc_topology_set_flags (topo,
                                         HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM)
                   == 0
            && hwloc_topology_load (topo) == 0,
        "it loads back as this system");
    ncores = hwloc_get_nbobjs_by_type (topo, HWLOC_OBJ_CORE);
    npus = hwloc_get_nbobjs_by_type (topo, HWLOC_OBJ_PU);
    ok (sched_getaffinity (0, sizeof (set), &set) == 0
            && npus == CPU_COUNT (&set) && ncores >= 1 && ncores <= npus,
        "its PUs are the CPUs this process may run on (%d cores, %d PUs)",
        ncores, npus);
    hwloc_topology_destroy (topo);
    free (xml);
    done_testing ();
    return 0;
}
