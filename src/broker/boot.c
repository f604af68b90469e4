/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* boot.c - find this broker's place in the instance.
 *
 * Without PMI_FD the broker is a singleton (rank 0 of 1).  Under a PMI-1
 * launcher (flux start -s N, mpiexec, srun --mpi=pmi2) each broker binds
 * its child-facing overlay socket, publishes "uri;pubkey;hostname" under
 * its rank, and after a barrier connects to its parent and authorizes its
 * children's keys.  Rank 0 then assembles the hostlist and publishes it in
 * a second barrier: O(size) work on rank 0, O(fanout) elsewhere.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot.h"
#include "common/libhostlist/hostlist.h"
#include "common/libpmi/simple_client.h"
#include "overlay/topology.h"

#define VALMAX 1024

static int pmi_get (struct pmi_simple_client *pmi, const char *kvsname,
                    const char *key, char *buf, size_t len, flux_error_t *error)
{
    if (pmi_simple_client_kvs_get (pmi, kvsname, key, buf, len) < 0)
        return errprintf (error, "PMI get %s: %s", key,
                          pmi_simple_client_last_error (pmi));
    return 0;
}

/* Split "uri;pubkey;host" in place. */
static int split3 (char *val, char **uri, char **key, char **host)
{
    char *s1 = strchr (val, ';'), *s2;
    if (!s1 || !(s2 = strchr (s1 + 1, ';')))
        return -1;
    *s1 = *s2 = '\0';
    *uri = val;
    *key = s1 + 1;
    *host = s2 + 1;
    return 0;
}

static int exchange (struct boot_info *info, struct pmi_simple_client *pmi,
                     const char *kvsname, const char *bind_uri,
                     const char *pubkey, flux_error_t *error)
{
    char key[32], val[VALMAX], host[256];
    char *uri, *pk, *h;
    int64_t parent;
    int i, n;
    int64_t first;

    if (gethostname (host, sizeof (host)) < 0)
        snprintf (host, sizeof (host), "localhost");
    host[sizeof (host) - 1] = '\0';
    snprintf (key, sizeof (key), "%u", info->rank);
    snprintf (val, sizeof (val), "%s;%s;%s", bind_uri ? bind_uri : "-", pubkey,
              host);
    if (pmi_simple_client_kvs_put (pmi, kvsname, key, val) < 0
        || pmi_simple_client_kvs_commit (pmi, kvsname) < 0
        || pmi_simple_client_barrier (pmi) < 0)
        return errprintf (error, "PMI exchange: %s",
                          pmi_simple_client_last_error (pmi));
    if ((parent = topology_parent (info->rank, info->size, info->fanout))
        >= 0) {
        snprintf (key, sizeof (key), "%u", (uint32_t)parent);
        if (pmi_get (pmi, kvsname, key, val, sizeof (val), error) < 0)
            return -1;
        if (split3 (val, &uri, &pk, &h) < 0)
            return errprintf (error, "PMI: malformed entry for rank %s", key);
        snprintf (info->parent_uri, sizeof (info->parent_uri), "%s", uri);
        snprintf (info->parent_pubkey, sizeof (info->parent_pubkey), "%s", pk);
    }
    n = topology_child_count (info->rank, info->size, info->fanout);
    first = topology_first_child (info->rank, info->size, info->fanout);
    for (i = 0; i < n; i++) {
        snprintf (key, sizeof (key), "%u", (uint32_t)(first + i));
        if (pmi_get (pmi, kvsname, key, val, sizeof (val), error) < 0)
            return -1;
        if (split3 (val, &uri, &pk, &h) < 0)
            return errprintf (error, "PMI: malformed entry for rank %s", key);
        if (info->authorize (info->arg, (uint32_t)(first + i), pk) < 0)
            return errprintf (error, "cannot authorize rank %s", key);
    }
    return 0;
}

/* Rank 0 builds the hostlist from every entry; others read it. */
static int share_hostlist (struct boot_info *info,
                           struct pmi_simple_client *pmi, const char *kvsname,
                           flux_error_t *error)
{
    char key[32], val[VALMAX];
    char *uri, *pk, *h, *s = NULL;
    struct hostlist *hl = NULL;
    uint32_t r;

    if (info->rank == 0) {
        if (!(hl = hostlist_create ()))
            return errprintf (error, "out of memory");
        for (r = 0; r < info->size; r++) {
            snprintf (key, sizeof (key), "%u", r);
            if (pmi_get (pmi, kvsname, key, val, sizeof (val), error) < 0
                || split3 (val, &uri, &pk, &h) < 0
                || hostlist_append (hl, h) < 0) {
                hostlist_destroy (hl);
                return errprintf (error, "PMI: cannot read rank %u host", r);
            }
        }
        s = hostlist_encode (hl);
        hostlist_destroy (hl);
        if (!s || strlen (s) >= VALMAX
            || pmi_simple_client_kvs_put (pmi, kvsname, "hostlist", s) < 0) {
            free (s);
            return errprintf (error, "PMI: cannot publish the hostlist");
        }
    }
    if (pmi_simple_client_barrier (pmi) < 0) {
        free (s);
        return errprintf (error, "PMI barrier: %s",
                          pmi_simple_client_last_error (pmi));
    }
    if (info->rank != 0) {
        if (pmi_get (pmi, kvsname, "hostlist", val, sizeof (val), error) < 0)
            return -1;
        s = strdup (val);
    }
    snprintf (info->hostlist, sizeof (info->hostlist), "%s", s ? s : "");
    free (s);
    return 0;
}

int boot_pmi_open (struct boot_info *info, flux_error_t *error)
{
    const char *fd = getenv ("PMI_FD");
    struct pmi_simple_client *pmi;
    char host[256];

    /* the hostlist of a size 1 instance (the PMI exchange replaces it) */
    if (gethostname (host, sizeof (host)) < 0)
        snprintf (host, sizeof (host), "localhost");
    host[sizeof (host) - 1] = '\0';
    snprintf (info->hostlist, sizeof (info->hostlist), "%s", host);
    if (!fd) {
        info->rank = 0;
        info->size = 1;
        info->pmi = NULL;
        return 0;
    }
    if (!(pmi = pmi_simple_client_create_fd (fd, getenv ("PMI_RANK"),
                                             getenv ("PMI_SIZE"),
                                             getenv ("PMI_SPAWNED"))))
        return errprintf (error, "PMI_FD/PMI_RANK/PMI_SIZE are malformed");
    if (pmi_simple_client_init (pmi) < 0) {
        errprintf (error, "PMI init: %s", pmi_simple_client_last_error (pmi));
        pmi_simple_client_destroy (pmi);
        return -1;
    }
    info->rank = pmi_simple_client_rank (pmi);
    info->size = pmi_simple_client_size (pmi);
    info->pmi = pmi;
    /* a Flux job shell serves the level its brokers are at (RFC 8); other
     * launchers have no such key: level 0 */
    char kvsname[256], lvl[16];
    if (pmi_simple_client_kvs_get_my_name (pmi, kvsname, sizeof (kvsname)) == 0
        && pmi_simple_client_kvs_get (pmi, kvsname, "flux.instance-level", lvl,
                                      sizeof (lvl))
               == 0)
        info->instance_level = atoi (lvl) > 0 ? atoi (lvl) : 0;
    return 0;
}

int boot_pmi_exchange (struct boot_info *info, const char *bind_uri,
                       const char *pubkey, flux_error_t *error)
{
    struct pmi_simple_client *pmi = info->pmi;
    char kvsname[256];

    if (!pmi)
        return 0;
    if (pmi_simple_client_kvs_get_my_name (pmi, kvsname, sizeof (kvsname)) < 0)
        return errprintf (error, "PMI: %s", pmi_simple_client_last_error (pmi));
    if (exchange (info, pmi, kvsname, bind_uri, pubkey, error) < 0
        || share_hostlist (info, pmi, kvsname, error) < 0)
        return -1;
    return 0;
}

void boot_pmi_close (struct boot_info *info)
{
    if (info->pmi) {
        (void)pmi_simple_client_finalize (info->pmi);
        pmi_simple_client_destroy (info->pmi);
        info->pmi = NULL;
    }
}
