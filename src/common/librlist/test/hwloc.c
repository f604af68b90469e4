/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/hwloc.c - discovery: this machine's physical cores (checked
 * against the core sibling lists in sysfs for the CPUs we may use), its
 * hostname and no gpus; an XML topology with two GPUs seen by three
 * backends each (they count once) and 4 cores of 2 PUs; a bad XML file.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "librlist/rlist.h"
#include "tap.h"

/* Distinct core sibling lists of the CPUs in our affinity mask. */
static int sysfs_cores (void)
{
    cpu_set_t set;
    char seen[256][64];
    int nseen = 0;

    if (sched_getaffinity (0, sizeof (set), &set) < 0)
        return -1;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        char path[128], buf[64] = "";
        FILE *f;
        int i;
        if (!CPU_ISSET (cpu, &set))
            continue;
        snprintf (path, sizeof (path),
                  "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list",
                  cpu);
        if (!(f = fopen (path, "r")))
            return -1;
        if (!fgets (buf, sizeof (buf), f))
            buf[0] = '\0';
        fclose (f);
        for (i = 0; i < nseen; i++)
            if (!strcmp (seen[i], buf))
                break;
        if (i == nseen && nseen < 256)
            strcpy (seen[nseen++], buf);
    }
    return nseen;
}

int main (int argc, char **argv)
{
    struct rlist *rl;
    flux_error_t error;
    char host[HOST_NAME_MAX + 1], *s;
    int expect = sysfs_cores ();

    plan (NO_PLAN);

    unsetenv ("FLUX_HWLOC_XMLFILE");
    /* hwloc 2.9's pci component leaks ~1 KB per load (LeakSanitizer fails
     * the test); this machine has no GPUs to find through it anyway */
    setenv ("HWLOC_COMPONENTS", "-pci", 0);
    rl = rlist_from_hwloc (3, &error);
    ok (rl != NULL, "rlist_from_hwloc works on this machine%s%s",
        rl ? "" : ": ", rl ? "" : error.text);
    s = rlist_ranks (rl);
    is (s, "3", "it is rank 3");
    free (s);
    gethostname (host, sizeof (host));
    s = rlist_nodelist (rl);
    is (s, host, "with this host's name");
    free (s);
    if (expect > 0)
        cmp_ok (rlist_count_cores (rl), "==", expect,
                "one core per physical core (%d, from sysfs)", expect);
    else
        skip (1, "cannot read core siblings from sysfs");
    cmp_ok (rlist_count_gpus (rl), "==", 0, "no gpus on this machine");
    rlist_destroy (rl);

    setenv ("FLUX_HWLOC_XMLFILE", SRCDIR "/test/gpus.xml", 1);
    rl = rlist_from_hwloc (0, &error);
    ok (rl != NULL, "rlist_from_hwloc reads FLUX_HWLOC_XMLFILE%s%s",
        rl ? "" : ": ", rl ? "" : error.text);
    cmp_ok (rlist_count_cores (rl), "==", 4, "4 cores of 2 PUs count as 4");
    cmp_ok (rlist_count_gpus (rl), "==", 2,
            "2 GPUs seen through CUDA, OpenCL and NVML count as 2");
    s = rlist_dumps (rl);
    is (s, "rank0/core[0-3],gpu[0-1]", "summary");
    free (s);
    rlist_destroy (rl);

    setenv ("FLUX_HWLOC_XMLFILE", "/nonexistent/topology.xml", 1);
    error.text[0] = '\0';
    rl = rlist_from_hwloc (0, &error);
    ok (rl == NULL && strstr (error.text, "/nonexistent/topology.xml"),
        "a missing XML file fails: %s", error.text);
    done_testing ();
    return 0;
}
