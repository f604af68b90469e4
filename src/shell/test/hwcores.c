/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/hwcores.c - the cores read from hwloc XML without hwloc are
 * hwloc's own: the same logical order, the same CPUs; given as text by
 * the agent, the shell's map of them has the same CPUs. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <hwloc.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwcores.h"
#include "tap.h"

/* The cores of hc given as text (the agent's hwcores_format, the shell's
 * hwcores_set, backwards so that the map grows): the same CPUs. */
static void check_given (const char *desc, const struct hwcores *hc)
{
    int n = hwcores_count (hc), bad = 0;
    struct hwcores *given = hwcores_create (n);
    size_t size = hwcores_setsize (hc);
    cpu_set_t *a = CPU_ALLOC (size * 8), *b = CPU_ALLOC (size * 8);

    if (!given || !a || !b)
        BAIL_OUT ("out of memory");
    for (int i = n - 1; i >= 0; i--) {
        char buf[1024];
        if (hwcores_format (hc, i, buf, sizeof (buf)) < 0
            || hwcores_set (given, i, buf) < 0)
            bad++;
    }
    ok (bad == 0 && hwcores_setsize (given) <= size,
        "%s: each core's CPUs as bitmap text set a new map", desc);
    for (int i = 0; i < n; i++) {
        CPU_ZERO_S (size, a);
        CPU_ZERO_S (size, b);
        if (hwcores_add (hc, i, a) < 0 || hwcores_add (given, i, b) < 0
            || !CPU_EQUAL_S (size, a, b))
            bad++;
    }
    ok (bad == 0, "%s: the new map has the same CPUs", desc);
    CPU_FREE (a);
    CPU_FREE (b);
    hwcores_destroy (given);
}

/* Compare hwcores' reading of topo's XML export with hwloc's objects. */
static void check_same (const char *desc, hwloc_topology_t topo)
{
    char *xml = NULL;
    int len, n, bad = 0;
    flux_error_t error;
    struct hwcores *hc;

    if (hwloc_topology_export_xmlbuffer (topo, &xml, &len, 0) < 0)
        BAIL_OUT ("hwloc export failed");
    hc = hwcores_parse (xml, &error);
    ok (hc != NULL, "%s: parsed", desc);
    if (!hc)
        diag ("%s", error.text);
    n = hwloc_get_nbobjs_by_type (topo, HWLOC_OBJ_CORE);
    ok (hwcores_count (hc) == n, "%s: %d cores, as hwloc", desc, n);
    for (int i = 0; hc && i < n; i++) {
        hwloc_obj_t core = hwloc_get_obj_by_type (topo, HWLOC_OBJ_CORE, i);
        size_t size = hwcores_setsize (hc);
        cpu_set_t *set = CPU_ALLOC (size * 8);
        int cpu;
        CPU_ZERO_S (size, set);
        if (hwcores_add (hc, i, set) < 0)
            bad++;
        hwloc_bitmap_foreach_begin (cpu, core->cpuset)
        {
            if ((size_t)cpu >= size * 8 || !CPU_ISSET_S (cpu, size, set))
                bad++;
        }
        hwloc_bitmap_foreach_end ();
        if (CPU_COUNT_S (size, set) != hwloc_bitmap_weight (core->cpuset))
            bad++;
        CPU_FREE (set);
    }
    ok (hc && bad == 0, "%s: every core has hwloc's CPUs", desc);
    check_given (desc, hc);
    hwcores_destroy (hc);
    hwloc_free_xmlbuffer (topo, xml);
}

static void synthetic (const char *desc)
{
    hwloc_topology_t topo;

    if (hwloc_topology_init (&topo) < 0
        || hwloc_topology_set_synthetic (topo, desc) < 0
        || hwloc_topology_load (topo) < 0)
        BAIL_OUT ("hwloc synthetic %s failed", desc);
    check_same (desc, topo);
    hwloc_topology_destroy (topo);
}

/* Physical indexes not in order: logical order is not os_index order. */
static void shuffled (void)
{
    synthetic ("pack:2 core:3 pu:2(indexes=11,3,0,7,1,2,4,5,6,8,9,10)");
}

static void this_machine (void)
{
    hwloc_topology_t topo;

    if (hwloc_topology_init (&topo) < 0 || hwloc_topology_load (topo) < 0)
        BAIL_OUT ("hwloc load failed");
    check_same ("this machine", topo);
    hwloc_topology_destroy (topo);
}

static void malformed (void)
{
    const char *bad[] = {
        "<object type=\"Core\" os_index=\"0\">",
        "<object type=\"Core\" cpuset=\"0xf...f\">",
        "<object type=\"Core\" cpuset=\"0x123456789\">",
        "<object type=\"Core\" cpuset=\"zz\">",
        "<object type=\"Core\" cpuset=\"\">",
        "<object type=\"Core\" cpuset=\"0x1\"",
    };
    flux_error_t error;
    struct hwcores *hc;
    char *big;
    size_t words = HWCORES_MAX_CPUS / 32 + 1;

    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        error.text[0] = '\0';
        hc = hwcores_parse (bad[i], &error);
        ok (hc == NULL && error.text[0], "refused: %s (%s)", bad[i],
            error.text);
        hwcores_destroy (hc);
    }
    /* more CPUs than HWCORES_MAX_CPUS */
    if (!(big = malloc (words * 11 + 64)))
        BAIL_OUT ("out of memory");
    strcpy (big, "<object type=\"Core\" cpuset=\"0x1");
    for (size_t i = 1; i < words; i++)
        strcat (big, ",0x00000000");
    strcat (big, "\">");
    ok (hwcores_parse (big, &error) == NULL, "a set beyond %d CPUs is refused",
        HWCORES_MAX_CPUS);
    free (big);

    hc = hwcores_parse ("<topology><object type=\"Machine\" "
                        "cpuset=\"0x3\"></object></topology>",
                        &error);
    ok (hc && hwcores_count (hc) == 0, "no Core object: no cores");
    ok (hwcores_add (hc, 0, NULL) < 0 && errno == EINVAL,
        "hwcores_add of a missing core: EINVAL");
    hwcores_destroy (hc);

    /* complete_cpuset is not cpuset; words past the highest CPU are
     * dropped; a second word is the CPUs 32-63 */
    hc = hwcores_parse ("<object type=\"Core\" complete_cpuset=\"0xff\" "
                        "cpuset=\"0x00000002,0x00000001\">"
                        "<object type=\"Core\" cpuset=\"0x0,0x0,0x4\">"
                        "<object type=\"Core\" cpuset=\"0x00000003,,0x0\">",
                        &error);
    if (!hc)
        BAIL_OUT ("parse: %s", error.text);
    {
        size_t size = hwcores_setsize (hc);
        cpu_set_t *set = CPU_ALLOC (size * 8);
        CPU_ZERO_S (size, set);
        ok (hwcores_add (hc, 0, set) == 0 && CPU_COUNT_S (size, set) == 2
                && CPU_ISSET_S (0, size, set) && CPU_ISSET_S (33, size, set),
            "core 0 is CPUs 0 and 33 (not its complete_cpuset)");
        CPU_ZERO_S (size, set);
        ok (hwcores_add (hc, 1, set) == 0 && CPU_COUNT_S (size, set) == 1
                && CPU_ISSET_S (2, size, set),
            "core 1 is CPU 2");
        CPU_ZERO_S (size, set);
        ok (hwcores_add (hc, 2, set) == 0 && CPU_COUNT_S (size, set) == 2
                && CPU_ISSET_S (64, size, set) && CPU_ISSET_S (65, size, set),
            "core 2 (\"0x00000003,,0x0\") is CPUs 64 and 65");
        CPU_FREE (set);
    }
    hwcores_destroy (hc);
    ok (hwcores_parse (NULL, &error) == NULL, "no XML: NULL");
}

/* The agent's text for a shell's cores, the shell's map of them. */
static void given (void)
{
    struct hwcores *hc = hwcores_create (5);
    char buf[64];
    size_t size;
    cpu_set_t *set;

    if (!hc)
        BAIL_OUT ("hwcores_create failed");
    ok (hwcores_count (hc) == 5, "hwcores_create: 5 cores");
    ok (hwcores_add (hc, 0, NULL) < 0 && errno == EINVAL,
        "a core not set has no CPUs: hwcores_add fails with EINVAL");
    ok (hwcores_format (hc, 0, buf, sizeof (buf)) < 0 && errno == EINVAL,
        "nor can it be formatted");
    ok (hwcores_set (hc, 3, "0x00000001,0x00000000,0x00000004") == 0,
        "core 3 set to CPUs 2 and 64");
    ok (hwcores_set (hc, 4, "0x0,0x00000010") == 0,
        "core 4 set to CPU 4 (an empty high word is dropped)");
    ok (hwcores_format (hc, 3, buf, sizeof (buf)) > 0
            && !strcmp (buf, "0x00000001,0x00000000,0x00000004"),
        "core 3 formats as hwloc's bitmap text: %s", buf);
    ok (hwcores_format (hc, 4, buf, sizeof (buf)) > 0
            && !strcmp (buf, "0x00000010"),
        "core 4 formats in one word: %s", buf);
    ok (hwcores_format (hc, 3, buf, 12) < 0 && errno == EOVERFLOW,
        "a buffer too small: EOVERFLOW");
    size = hwcores_setsize (hc);
    set = CPU_ALLOC (size * 8);
    CPU_ZERO_S (size, set);
    ok (hwcores_add (hc, 3, set) == 0 && hwcores_add (hc, 4, set) == 0
            && CPU_COUNT_S (size, set) == 3 && CPU_ISSET_S (2, size, set)
            && CPU_ISSET_S (4, size, set) && CPU_ISSET_S (64, size, set),
        "cores 3 and 4 are CPUs 2, 4 and 64");
    CPU_FREE (set);
    ok (hwcores_set (hc, 5, "0x1") < 0 && errno == EINVAL,
        "hwcores_set beyond the cores: EINVAL");
    ok (hwcores_set (hc, -1, "0x1") < 0 && errno == EINVAL,
        "hwcores_set of core -1: EINVAL");
    ok (hwcores_set (hc, 0, "0x0") < 0 && errno == EINVAL,
        "an empty set: EINVAL (a core has a CPU)");
    ok (hwcores_set (hc, 0, "0-3") < 0 && hwcores_set (hc, 0, "") < 0
            && hwcores_set (hc, 0, "0xf...f") < 0
            && hwcores_set (hc, 0, NULL) < 0,
        "what is not a bitmap (a range, nothing, infinite, NULL): refused");
    ok (hwcores_add (hc, 0, NULL) < 0, "core 0 is still not set");
    hwcores_destroy (hc);
    ok (hwcores_create (-1) == NULL && errno == EINVAL,
        "hwcores_create (-1): EINVAL");
    hc = hwcores_create (0);
    ok (hc && hwcores_count (hc) == 0, "hwcores_create (0): no cores");
    hwcores_destroy (hc);
}

int main (void)
{
    plan (NO_PLAN);
    synthetic ("core:1 pu:1");
    synthetic ("core:4 pu:2");
    synthetic ("pack:2 core:8 pu:2");
    synthetic ("pack:2 numa:2 l3:2 core:4 pu:4");
    synthetic ("pack:4 core:20 pu:2"); /* 160 CPUs: several words */
    shuffled ();
    this_machine ();
    malformed ();
    given ();
    done_testing ();
}
