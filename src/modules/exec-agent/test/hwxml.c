/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/hwxml.c - the topology the agent loads, the cores it hands each
 * shell. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <hwloc.h>
#include <jansson.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwxml.h"
#include "tap.h"

static json_t *R_of (const char *rlite)
{
    json_error_t e;
    json_t *R = json_pack ("{s:i s:{s:o}}", "version", 1, "execution", "R_lite",
                           json_loads (rlite, 0, &e));
    if (!R)
        BAIL_OUT ("bad R_lite %s", rlite);
    return R;
}

/* The cpus of a job's shell: its cores of R on this rank, each with the
 * CPUs this node's cores have. */
static void job_cpus (int ncores)
{
    struct hwcores *hc = hwxml_cores ();
    char want[1024];
    json_t *R, *cpus;
    const char *s;

    ok (hc != NULL && hwcores_count (hc) == ncores,
        "hwxml_cores: this node's %d cores", ncores);
    if (!hc)
        return;
    R = R_of ("[{\"rank\":\"0-3\",\"children\":{\"core\":\"0\"}},"
              "{\"rank\":\"7\",\"children\":{\"core\":\"0\"}}]");
    cpus = hwxml_job_cpus (hc, R, 2);
    ok (hwcores_format (hc, 0, want, sizeof (want)) > 0 && cpus
            && json_object_size (cpus) == 1
            && json_unpack (cpus, "{s:s}", "0", &s) == 0 && !strcmp (s, want),
        "rank 2 of ranks 0-3: core 0 with its CPUs (%s)", want);
    json_decref (cpus);
    cpus = hwxml_job_cpus (hc, R, 5);
    ok (cpus && json_object_size (cpus) == 0, "rank 5 (not in R): no cores");
    json_decref (cpus);
    json_decref (R);

    /* every core of the node, and one it does not have */
    snprintf (want, sizeof (want),
              "[{\"rank\":\"0\",\"children\":{\"core\":\"0-%d\"}}]", ncores);
    R = R_of (want);
    cpus = hwxml_job_cpus (hc, R, 0);
    snprintf (want, sizeof (want), "%d", ncores);
    ok (cpus && (int)json_object_size (cpus) == ncores
            && !json_object_get (cpus, want),
        "R naming core %d too: only the node's %d cores are given", ncores,
        ncores);
    json_decref (cpus);
    json_decref (R);

    R = R_of ("[{\"rank\":\"0\",\"children\":{\"gpu\":\"0\"}}]");
    cpus = hwxml_job_cpus (hc, R, 0);
    ok (cpus && json_object_size (cpus) == 0, "R without cores: no cores");
    json_decref (cpus);
    json_decref (R);

    const char *bad[] = {
        "[{\"rank\":\"0\",\"children\":{\"core\":\"x\"}}]",
        "[{\"rank\":\"zz\",\"children\":{\"core\":\"0\"}}]",
        "[{\"children\":{\"core\":\"0\"}}]",
        "[{\"rank\":\"0\",\"children\":{\"core\":0}}]",
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        R = R_of (bad[i]);
        errno = 0;
        cpus = hwxml_job_cpus (hc, R, 0);
        ok (cpus == NULL && errno == EPROTO, "malformed R_lite %s: EPROTO",
            bad[i]);
        json_decref (R);
    }
    R = json_pack ("{s:i}", "version", 1);
    ok (hwxml_job_cpus (hc, R, 0) == NULL && errno == EPROTO,
        "R without R_lite: EPROTO");
    json_decref (R);
    hwcores_destroy (hc);
}

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
    job_cpus (ncores);
    done_testing ();
    return 0;
}
