/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* affinity.c - bind the shell and its tasks to the cores of R (their
 * CPUs given by the agent, hwcores.h: libhwloc is loaded only when the
 * agent gave none); CUDA_VISIBLE_DEVICES from R's GPUs.
 */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <errno.h>
#include <hwloc.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "affinity.h"
#include "hwcores.h"
#include "shell.h"

enum mode { MODE_OFF, MODE_ON, MODE_PER_TASK };

struct affinity {
    struct shell *shell;
    enum mode cpu, gpu;
    struct hwcores *hw;
    size_t setsize; /* bytes of each CPU set below */
    cpu_set_t *all; /* every core of R found here */
    int *cores;     /* logical index of each core of R found, in R order */
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
        free (a->cores);
        if (a->all)
            CPU_FREE (a->all);
        hwcores_destroy (a->hw);
        free (a->gpus);
        free (a);
        errno = saved_errno;
    }
}

/* No cpus from the agent (a stand-in agent, or its hwloc failed):
 * discover this node with hwloc, loaded for this only (dlopen), and read
 * its cores from the XML it exports.  hwloc's plugins (libxml2, PCI,
 * OpenCL, GL) are dlopened by hwloc_topology_init, for nothing the shell
 * uses (cores and PUs come from the built-in Linux backend): the
 * blacklist is read at init; the shell's environment is put back after,
 * a user's own setting is kept. */
#define PLUGINS_OFF "hwloc_xml_libxml,hwloc_pci,hwloc_opencl,hwloc_gl"

/* hwloc 2's soname (Debian's libhwloc15) */
#ifndef HWLOC_SONAME
#define HWLOC_SONAME "libhwloc.so.15"
#endif

struct hwloc_calls {
    typeof (&hwloc_topology_init) init;
    typeof (&hwloc_topology_set_all_types_filter) all_filter;
    typeof (&hwloc_topology_set_type_filter) filter;
    typeof (&hwloc_topology_load) load;
    typeof (&hwloc_topology_export_xmlbuffer) export;
    typeof (&hwloc_free_xmlbuffer) free_xml;
    typeof (&hwloc_topology_destroy) destroy;
};

static int hwloc_resolve (void *dso, struct hwloc_calls *c)
{
    const struct {
        const char *name;
        void **fn;
    } syms[] = {
        {"hwloc_topology_init", (void **)&c->init},
        {"hwloc_topology_set_all_types_filter", (void **)&c->all_filter},
        {"hwloc_topology_set_type_filter", (void **)&c->filter},
        {"hwloc_topology_load", (void **)&c->load},
        {"hwloc_topology_export_xmlbuffer", (void **)&c->export},
        {"hwloc_free_xmlbuffer", (void **)&c->free_xml},
        {"hwloc_topology_destroy", (void **)&c->destroy},
    };

    for (size_t i = 0; i < sizeof (syms) / sizeof (syms[0]); i++) {
        if (!(*syms[i].fn = dlsym (dso, syms[i].name)))
            return -1;
    }
    return 0;
}

static char *discover_xml (flux_error_t *error)
{
    const char *name = "HWLOC_PLUGINS_BLACKLIST";
    void *dso = dlopen (HWLOC_SONAME, RTLD_NOW | RTLD_LOCAL);
    struct hwloc_calls c;
    hwloc_topology_t topo = NULL;
    char *buf = NULL, *xml = NULL;
    int len, rc;
    bool set;

    if (!dso || hwloc_resolve (dso, &c) < 0) {
        errprintf (error, "hwloc: %s", dlerror ());
        goto out;
    }
    set = !getenv (name) && setenv (name, PLUGINS_OFF, 1) == 0;
    rc = c.init (&topo);
    if (set)
        (void)unsetenv (name);
    /* cores and PUs only: no caches, groups, dies (less of /sys read) */
    if (rc < 0 || c.all_filter (topo, HWLOC_TYPE_FILTER_KEEP_NONE) < 0
        || c.filter (topo, HWLOC_OBJ_PACKAGE, HWLOC_TYPE_FILTER_KEEP_ALL) < 0
        || c.filter (topo, HWLOC_OBJ_CORE, HWLOC_TYPE_FILTER_KEEP_ALL) < 0
        || c.filter (topo, HWLOC_OBJ_PU, HWLOC_TYPE_FILTER_KEEP_ALL) < 0
        || c.load (topo) < 0 || c.export(topo, &buf, &len, 0) < 0) {
        errprintf (error, "hwloc: %s", strerror (errno));
        goto out;
    }
    if (!(xml = strdup (buf)))
        errprintf (error, "out of memory");
out:
    if (buf)
        c.free_xml (topo, buf);
    if (topo)
        c.destroy (topo);
    if (dso)
        dlclose (dso);
    return xml;
}

/* The CPUs of this shell's cores from its agent (the `cpus` of
 * exec-agent.shell-info: its cores of R, as its broker's hwloc sees
 * them, bound as the shell is). */
static struct hwcores *given_cores (json_t *cpus, flux_error_t *error)
{
    const char *key;
    json_t *v;
    long max = -1;
    struct hwcores *hw;

    json_object_foreach (cpus, key, v)
    {
        char *end;
        long id;
        errno = 0;
        id = strtol (key, &end, 10);
        if (errno || end == key || *end || id < 0 || id >= HWCORES_MAX_CPUS
            || !json_is_string (v)) {
            errprintf (error, "core '%s' is not a core id with a bitmap", key);
            return NULL;
        }
        if (id > max)
            max = id;
    }
    if (!(hw = hwcores_create ((int)(max + 1)))) {
        errprintf (error, "%s", strerror (errno));
        return NULL;
    }
    json_object_foreach (cpus, key, v)
    {
        if (hwcores_set (hw, (int)strtol (key, NULL, 10), json_string_value (v))
            < 0) {
            errprintf (error, "core %s: '%s' is not a CPU bitmap", key,
                       json_string_value (v));
            hwcores_destroy (hw);
            return NULL;
        }
    }
    return hw;
}

/* The shell's cores: given by the agent, else discovered. */
static struct hwcores *topology_cores (struct affinity *a, flux_error_t *error)
{
    json_t *cpus = a->shell->info->cpus;
    struct hwcores *hw;
    char *found;

    if (cpus) {
        flux_error_t e;
        if ((hw = given_cores (cpus, &e)))
            return hw;
        shell_log (a->shell, LOG_WARNING, "affinity",
                   "the agent's cpus do not load (%s): discovering the "
                   "topology",
                   e.text);
    }
    if (!(found = discover_xml (error)))
        return NULL;
    hw = hwcores_parse (found, error);
    free (found);
    return hw;
}

static int bind_shell (struct affinity *a, const cpu_set_t *set)
{
    return sched_setaffinity (0, a->setsize, set);
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

static int load_cores (struct affinity *a, flux_error_t *error)
{
    struct shell_info *info = a->shell->info;
    size_t n = idset_count (info->cores);
    int missing = 0;

    if (!(a->hw = topology_cores (a, error)))
        return -1;
    a->setsize = hwcores_setsize (a->hw);
    if (!(a->all = CPU_ALLOC (a->setsize * 8))
        || !(a->cores = calloc (n ? n : 1, sizeof (a->cores[0]))))
        return errprintf (error, "out of memory");
    CPU_ZERO_S (a->setsize, a->all);
    for (unsigned int id = idset_first (info->cores); id != IDSET_INVALID_ID;
         id = idset_next (info->cores, id)) {
        if (hwcores_add (a->hw, (int)id, a->all) < 0) {
            missing++;
            continue;
        }
        a->cores[a->ncores++] = (int)id;
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
    if (load_cores (a, error) < 0)
        goto error;
    if (a->ncores > 0 && bind_shell (a, a->all) < 0)
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
        cpu_set_t *set = CPU_ALLOC (a->setsize * 8);
        int lo, hi;
        if (!set)
            return -1;
        CPU_ZERO_S (a->setsize, set);
        share (a->ncores, localid, a->shell->ntasks, &lo, &hi);
        for (int i = lo; i < hi; i++)
            (void)hwcores_add (a->hw, a->cores[i], set);
        if (bind_shell (a, set) < 0)
            shell_log (a->shell, LOG_WARNING, "affinity", "binding task %d: %s",
                       localid, strerror (errno));
        CPU_FREE (set);
    }
    return 0;
}

void affinity_task_done (struct affinity *a)
{
    if (a->cpu == MODE_PER_TASK && a->ncores > 0)
        (void)bind_shell (a, a->all);
}
