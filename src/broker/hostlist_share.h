/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef BROKER_HOSTLIST_SHARE_H
#define BROKER_HOSTLIST_SHARE_H

/* hostlist_share - every rank gets the hostlist attribute, even when the
 * PMI exchange gave it to rank 0 only (an encoded hostlist of more than
 * 64 KiB, boot_pmi.h).
 *
 * A broker of rank > 0 whose hostlist is "" asks its parent for it
 * (broker.hostlist, owner only, {} -> {hostlist:s}) once the parent is
 * online, and stays in join until it has it, so its modules, rc1 and
 * clients all see it.  A parent that is still waiting for its own holds
 * its children's requests (as many as it has children; past that EAGAIN)
 * and answers them when it gets it, or fails them if it cannot.
 * Each broker thus receives the hostlist once and sends it to its direct
 * children only: O(size) bytes and O(fanout) messages per broker, and
 * rank 0 sends nothing more than its children's copies.
 */

struct broker;

/* Register broker.hostlist on b->h.  -1 on error. */
int hostlist_share_init (struct broker *b);
void hostlist_share_fini (struct broker *b);

/* In join, with the parent online: 1 if the hostlist is being fetched
 * (the broker then enters init when it arrives, or shuts down if it
 * cannot be had), 0 if there is nothing to fetch. */
int hostlist_share_join (struct broker *b);

#endif /* !BROKER_HOSTLIST_SHARE_H */
