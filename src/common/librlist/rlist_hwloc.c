/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* rlist_hwloc.c - this node's resources with hwloc, as Flux counts them:
 * one core id per hwloc core object (0..n-1 by logical index; PUs when
 * the topology has no core objects), one gpu id per GPU OS device
 * (CUDA coprocessors, else RSMI or NVML GPUs, else OpenCL coprocessors,
 * so a GPU seen by several backends counts once).  The environment
 * variable FLUX_HWLOC_XMLFILE names an XML topology to read instead of
 * the machine (as in flux-core), which also lets tests fake GPUs.
 */
#include <errno.h>
#include <hwloc.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rlist.h"

static int count_gpus (hwloc_topology_t topo)
{
    int cuda = 0, opencl = 0, rsmi = 0, nvml = 0;
    hwloc_obj_t obj = NULL;

    while ((obj = hwloc_get_next_osdev (topo, obj))) {
        const char *name = obj->name ? obj->name : "";
        const char *sub = obj->subtype ? obj->subtype : "";
        if (obj->attr->osdev.type == HWLOC_OBJ_OSDEV_COPROC) {
            if (!strcmp (sub, "CUDA") || !strncmp (name, "cuda", 4))
                cuda++;
            else if (!strcmp (sub, "OpenCL") || !strncmp (name, "opencl", 6))
                opencl++;
        }
        else if (obj->attr->osdev.type == HWLOC_OBJ_OSDEV_GPU) {
            if (!strcmp (sub, "RSMI") || !strncmp (name, "rsmi", 4))
                rsmi++;
            else if (!strcmp (sub, "NVML") || !strncmp (name, "nvml", 4))
                nvml++;
        }
    }
    return cuda ? cuda : rsmi ? rsmi : nvml ? nvml : opencl;
}

static int load (hwloc_topology_t *topop, flux_error_t *error)
{
    const char *xml = getenv ("FLUX_HWLOC_XMLFILE");
    hwloc_topology_t topo;

    if (hwloc_topology_init (&topo) < 0)
        return errprintf (error, "hwloc_topology_init: %s", strerror (errno));
    if (hwloc_topology_set_io_types_filter (topo,
                                            HWLOC_TYPE_FILTER_KEEP_IMPORTANT)
            < 0
        || (xml && hwloc_topology_set_xml (topo, xml) < 0)
        || hwloc_topology_load (topo) < 0) {
        int saved_errno = errno;
        hwloc_topology_destroy (topo);
        errno = saved_errno ? saved_errno : EINVAL;
        return errprintf (error, "hwloc: loading the topology%s%s failed: %s",
                          xml ? " from " : "", xml ? xml : "",
                          strerror (errno));
    }
    *topop = topo;
    return 0;
}

struct rlist *rlist_from_hwloc (unsigned int rank, flux_error_t *error)
{
    hwloc_topology_t topo = NULL;
    char host[HOST_NAME_MAX + 1];
    char cores[32], gpus[32] = "";
    int ncores, ngpus;
    struct rlist *rl;

    if (gethostname (host, sizeof (host)) < 0) {
        errprintf (error, "gethostname: %s", strerror (errno));
        return NULL;
    }
    host[HOST_NAME_MAX] = '\0';
    if (load (&topo, error) < 0)
        return NULL;
    ncores = hwloc_get_nbobjs_by_type (topo, HWLOC_OBJ_CORE);
    if (ncores <= 0)
        ncores = hwloc_get_nbobjs_by_type (topo, HWLOC_OBJ_PU);
    ngpus = count_gpus (topo);
    hwloc_topology_destroy (topo);
    if (ncores <= 0) {
        errno = ENOENT;
        errprintf (error, "hwloc found no cores");
        return NULL;
    }
    snprintf (cores, sizeof (cores), ncores > 1 ? "0-%d" : "0", ncores - 1);
    if (ngpus > 0)
        snprintf (gpus, sizeof (gpus), ngpus > 1 ? "0-%d" : "0", ngpus - 1);
    if (!(rl = rlist_create ())
        || rlist_add_rank (rl, rank, host, cores, gpus) < 0) {
        int saved_errno = errno;
        errprintf (error, "cannot add rank %u (host %s): %s", rank, host,
                   strerror (errno));
        rlist_destroy (rl);
        errno = saved_errno;
        return NULL;
    }
    return rl;
}
