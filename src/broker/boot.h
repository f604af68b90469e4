/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef BROKER_BOOT_H
#define BROKER_BOOT_H

/* Bootstrap through PMI (boot_pmi.c: simple, pmix or single, see upmi.h).
 *
 *   boot_pmi_open ()      rank and size (1 without PMI)
 *   ... the caller creates the overlay and binds its socket ...
 *   boot_pmi_exchange ()  publish bind uri + public key, barrier, learn the
 *                         parent's uri and key, authorize the children's
 *                         keys (info->authorize), share the hostlist
 *   boot_pmi_close ()     finalize PMI
 */
#include <stdint.h>

#include "libflux/flux.h"

struct upmi;
struct topology;

struct boot_info {
    uint32_t rank;
    uint32_t size;
    const struct topology *topo;
    char parent_uri[512];
    char parent_pubkey[128];
    char *hostlist;     /* malloc'd, freed by boot_pmi_close() */
    int instance_level; /* PMI key flux.instance-level; 0 if absent */
    int nnodes; /* nodes of the launch (PMI_process_mapping), 0 if unknown */
    int (*authorize) (void *arg, uint32_t rank, const char *pubkey);
    void *arg;
    struct upmi *pmi;
    const char *methods; /* PMI methods to try (NULL: upmi.h default) */
    /* the most hostlist chunks a rank > 0 reads through PMI (-1: the
     * default, BOOTX_HOSTLIST_CHUNKS_MAX); past it, the hostlist comes
     * through the overlay (attribute broker.boot-hostlist-chunks, a test
     * hook: 0 sends it through the overlay always) */
    int hostlist_chunks_max;
};

int boot_pmi_open (struct boot_info *info, flux_error_t *error);
int boot_pmi_exchange (struct boot_info *info, const char *bind_uri,
                       const char *pubkey, flux_error_t *error);
void boot_pmi_close (struct boot_info *info);

#endif /* !BROKER_BOOT_H */
