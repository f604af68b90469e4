/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* affinity.c - bind the shell and its tasks to the cores of R with
 * hwloc; CUDA_VISIBLE_DEVICES from R's GPUs.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <hwloc.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "affinity.h"
#include "shell.h"

enum mode { MODE_OFF, MODE_ON, MODE_PER_TASK };

struct affinity {
    struct shell *shell;
    enum mode cpu, gpu;
    hwloc_topology_t topo;
    hwloc_cpuset_t all;    /* every core of R found here */
    hwloc_cpuset_t *cores; /* one cpuset per core found, in R order */
    int ncores;
    unsigned int *gpus; /* GPU ids of R */
    int ngpus;
};

static int parse_mode (json_t *options, const char *name, enum mode *mode,
                       flux_error_t *error)
{
    json_t *o = json_object_get (options, name);
    const char *s;

    *mode = MODE_ON;
    if (!o)
        return 0;
    if (!json_is_string (o))
        goto inval;
    s = json_string_value (o);
    if (!strcmp (s, "on"))
        *mode = MODE_ON;
    else if (!strcmp (s, "off"))
        *mode = MODE_OFF;
    else if (!strcmp (s, "per-task"))
        *mode = MODE_PER_TASK;
    else
        goto inval;
    return 0;
inval:
    errno = EINVAL;
    return errprintf (error, "shell option %s must be on, off or per-task",
                      name);
}

void affinity_destroy (struct affinity *a)
{
    if (a) {
        int saved_errno = errno;
        for (int i = 0; i < a->ncores; i++)
            hwloc_bitmap_free (a->cores[i]);
        free (a->cores);
        hwloc_bitmap_free (a->all);
        if (a->topo)
            hwloc_topology_destroy (a->topo);
        free (a->gpus);
        free (a);
        errno = saved_errno;
    }
}

/* hwloc's plugins (libxml2, PCI, OpenCL, GL) are dlopened by
 * hwloc_topology_init: about 2.5 ms of every job's start-up, for nothing
 * the shell uses (cores and PUs come from the built-in Linux backend).
 * The blacklist is read at init; the shell's environment is put back
 * after, a user's own setting is kept. */
#define PLUGINS_OFF "hwloc_xml_libxml,hwloc_pci,hwloc_opencl,hwloc_gl"

static int init_quiet (hwloc_topology_t *topo)
{
    const char *name = "HWLOC_PLUGINS_BLACKLIST";
    bool set = !getenv (name) && setenv (name, PLUGINS_OFF, 1) == 0;
    int rc = hwloc_topology_init (topo);

    if (set)
        (void)unsetenv (name);
    return rc;
}

static int topology_init (struct affinity *a)
{
    hwloc_topology_t *topo = &a->topo;
    const char *xml = a->shell->info->topology;

    if (init_quiet (topo) < 0)
        return -1;
    /* The agent's XML (exec-agent.shell-info): this node as its broker
     * sees it, bound as the shell is; about 0.1 ms rather than 1-5. */
    if (xml) {
        if (hwloc_topology_set_xmlbuffer (*topo, xml, (int)strlen (xml) + 1)
                == 0
            && hwloc_topology_set_flags (*topo,
                                         HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM)
                   == 0
            && hwloc_topology_load (*topo) == 0)
            return 0;
        shell_log (a->shell, LOG_WARNING, "affinity",
                   "the agent's topology does not load: discovering it");
        hwloc_topology_destroy (*topo);
        if (init_quiet (topo) < 0)
            return -1;
    }
    /* cores and PUs only: no caches, groups, dies (less of /sys read) */
    if (hwloc_topology_set_all_types_filter (*topo, HWLOC_TYPE_FILTER_KEEP_NONE)
            < 0
        || hwloc_topology_set_type_filter (*topo, HWLOC_OBJ_PACKAGE,
                                           HWLOC_TYPE_FILTER_KEEP_ALL)
               < 0
        || hwloc_topology_set_type_filter (*topo, HWLOC_OBJ_CORE,
                                           HWLOC_TYPE_FILTER_KEEP_ALL)
               < 0
        || hwloc_topology_set_type_filter (*topo, HWLOC_OBJ_PU,
                                           HWLOC_TYPE_FILTER_KEEP_ALL)
               < 0)
        return -1;
    return hwloc_topology_load (*topo);
}

/* With cpu-affinity=on, binding to R's cores when they are at least as
 * many as the CPUs the shell may run on binds to what it already has
 * (cores are disjoint sets of those CPUs, and R counts the cores hwloc
 * finds in the broker's binding, which the shell inherits): no topology
 * is needed. */
static bool nothing_to_bind (struct affinity *a)
{
    cpu_set_t set;

    if (a->cpu != MODE_ON || sched_getaffinity (0, sizeof (set), &set) < 0)
        return false;
    return idset_count (a->shell->info->cores) >= (size_t)CPU_COUNT (&set);
}

static int load_cores (struct affinity *a)
{
    struct shell_info *info = a->shell->info;
    size_t n = idset_count (info->cores);
    int missing = 0;

    if (topology_init (a) < 0 || !(a->all = hwloc_bitmap_alloc ())
        || !(a->cores = calloc (n ? n : 1, sizeof (hwloc_cpuset_t))))
        return -1;
    for (unsigned int id = idset_first (info->cores); id != IDSET_INVALID_ID;
         id = idset_next (info->cores, id)) {
        hwloc_obj_t core = hwloc_get_obj_by_type (a->topo, HWLOC_OBJ_CORE, id);
        if (!core || !core->cpuset) {
            missing++;
            continue;
        }
        if (!(a->cores[a->ncores] = hwloc_bitmap_dup (core->cpuset)))
            return -1;
        hwloc_bitmap_or (a->all, a->all, core->cpuset);
        a->ncores++;
    }
    if (missing)
        shell_log (a->shell, LOG_WARNING, "affinity",
                   "%d of the %zu cores of R are not on this machine", missing,
                   n);
    return 0;
}

struct affinity *affinity_create (struct shell *shell, flux_error_t *error)
{
    struct affinity *a = calloc (1, sizeof (*a));
    struct shell_info *info = shell->info;

    if (!a)
        return NULL;
    a->shell = shell;
    if (parse_mode (info->options, "cpu-affinity", &a->cpu, error) < 0
        || parse_mode (info->options, "gpu-affinity", &a->gpu, error) < 0)
        goto error;
    if (!(a->gpus = calloc (idset_count (info->gpus) + 1, sizeof (unsigned))))
        goto error;
    for (unsigned int id = idset_first (info->gpus); id != IDSET_INVALID_ID;
         id = idset_next (info->gpus, id))
        a->gpus[a->ngpus++] = id;
    if (a->cpu == MODE_OFF || nothing_to_bind (a))
        return a;
    if (load_cores (a) < 0) {
        errprintf (error, "hwloc: %s", strerror (errno));
        goto error;
    }
    if (a->ncores > 0
        && hwloc_set_cpubind (a->topo, a->all, HWLOC_CPUBIND_PROCESS) < 0)
        shell_log (shell, LOG_WARNING, "affinity", "binding the shell: %s",
                   strerror (errno));
    return a;
error:
    affinity_destroy (a);
    return NULL;
}

/* The share [lo, hi) of n items for local task i of ntasks. */
static void share (int n, int i, int ntasks, int *lo, int *hi)
{
    if (n >= ntasks) {
        *lo = (int)((long long)n * i / ntasks);
        *hi = (int)((long long)n * (i + 1) / ntasks);
    }
    else { /* fewer items than tasks: tasks share them round robin */
        *lo = i % n;
        *hi = *lo + 1;
    }
}

static int set_gpus (struct affinity *a, int localid, struct env *env)
{
    char *s = NULL;
    size_t len = 0;
    FILE *f;
    int lo = 0, hi = a->ngpus;

    if (a->gpu == MODE_OFF)
        return 0;
    if (a->ngpus == 0)
        return env_set (env, "CUDA_VISIBLE_DEVICES", "-1");
    if (a->gpu == MODE_PER_TASK)
        share (a->ngpus, localid, a->shell->ntasks, &lo, &hi);
    if (!(f = open_memstream (&s, &len)))
        return -1;
    for (int i = lo; i < hi; i++)
        fprintf (f, "%s%u", i > lo ? "," : "", a->gpus[i]);
    if (fclose (f) != 0) {
        free (s);
        return -1;
    }
    int rc = env_set (env, "CUDA_VISIBLE_DEVICES", s);
    free (s);
    if (rc == 0 && !env_get (env, "CUDA_DEVICE_ORDER"))
        rc = env_set (env, "CUDA_DEVICE_ORDER", "PCI_BUS_ID");
    return rc;
}

int affinity_task_setup (struct affinity *a, int localid, struct env *env)
{
    if (set_gpus (a, localid, env) < 0)
        return -1;
    if (a->cpu == MODE_PER_TASK && a->ncores > 0) {
        hwloc_cpuset_t set = hwloc_bitmap_alloc ();
        int lo, hi;
        if (!set)
            return -1;
        share (a->ncores, localid, a->shell->ntasks, &lo, &hi);
        for (int i = lo; i < hi; i++)
            hwloc_bitmap_or (set, set, a->cores[i]);
        if (hwloc_set_cpubind (a->topo, set, HWLOC_CPUBIND_PROCESS) < 0)
            shell_log (a->shell, LOG_WARNING, "affinity", "binding task %d: %s",
                       localid, strerror (errno));
        hwloc_bitmap_free (set);
    }
    return 0;
}

void affinity_task_done (struct affinity *a)
{
    if (a->cpu == MODE_PER_TASK && a->ncores > 0)
        (void)hwloc_set_cpubind (a->topo, a->all, HWLOC_CPUBIND_PROCESS);
}
