/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef BROKER_BOOT_PMI_H
#define BROKER_BOOT_PMI_H

/* The business-card exchange of a PMI bootstrap, over any upmi method.
 *
 * Every broker publishes one card, "uri;pubkey;host" (bounded by its own
 * sizes, never by the instance's), under key "flux.card".  After a
 * barrier each broker reads only the cards it needs: its parent's (to
 * connect) and its children's (to authorize their keys).  Rank 0 alone
 * reads every card to build the hostlist, O(size) on rank 0 and
 * O(fanout) elsewhere, and publishes the encoded hostlist split in
 * values the method accepts ("flux.hostlist" = chunk count, then
 * "flux.hostlist.I"); after a second barrier the other ranks read those
 * chunks if there are at most BOOTX_HOSTLIST_CHUNKS_MAX of them (a
 * hostlist that does not compress, e.g. 16,384 unrelated names, stays on
 * rank 0 and the others get "", then fetch it from their parent once
 * the overlay is up: hostlist_share.h).
 */
#include <stdint.h>

#include "common/libpmi/upmi.h"
#include "libflux/flux.h"

#define BOOTX_HOSTLIST_CHUNKS_MAX 64

struct bootx_card {
    char uri[512];
    char pubkey[128];
    char host[256];
};

/* The number of nodes a PMI_process_mapping value spans
 * ("(vector,(nodeid,nnodes,ppn),...)", as MPICH, Slurm and a Flux job
 * shell give it): the highest nodeid + nnodes of its blocks.  -1 with
 * errno EINVAL if s is not that form. */
int bootx_mapping_nnodes (const char *s);

/* An IPv4 address of this host for other hosts to reach it: the one of
 * the interface holding the default route, else of the first interface
 * that is up, not loopback, and has one.  -1 with errno ENOENT if none. */
int bootx_tcp_address (char *buf, size_t len);

/* Publish this broker's card (uri NULL for a leaf: "-"). */
int bootx_put_card (struct upmi *upmi, const char *uri, const char *pubkey,
                    const char *host, flux_error_t *error);

/* Read the card of rank. */
int bootx_get_card (struct upmi *upmi, int rank, struct bootx_card *card,
                    flux_error_t *error);

/* Rank 0, after the card barrier: read every card, publish the hostlist
 * chunks (commit happens in the next barrier).  Returns the hostlist
 * (free it) or NULL with error. */
char *bootx_hostlist_publish (struct upmi *upmi, flux_error_t *error);

/* Ranks > 0, after the second barrier: the hostlist from rank 0's
 * chunks, or "" if there are more than chunks_max of them (the broker
 * then gets it through the overlay, hostlist_share.h).  Free it. */
char *bootx_hostlist_fetch (struct upmi *upmi, size_t chunks_max,
                            flux_error_t *error);

#endif /* !BROKER_BOOT_PMI_H */
