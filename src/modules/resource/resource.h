/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef RESOURCE_RESOURCE_H
#define RESOURCE_RESOURCE_H
/* resource - the instance's resource inventory on rank 0 (RFC 20/28/44,
 * PROTOCOLS 5.5).
 *
 * Holds R once it is defined (from configuration, from the KVS after a
 * restart, or assembled from the ranks' fragments), which ranks are
 * online, excluded and drained, and serves resource.status,
 * resource.sched-status, resource.drain/undrain, resource.acquire and
 * resource.journal.  resource.eventlog in the KVS gets resource-define,
 * drain and undrain; all events also go to the journal.  Requests that
 * need R wait (a bounded queue) until it is defined.
 */
#include <jansson.h>

#include "libflux/flux.h"
#include "libidset/idset.h"

struct resource;

struct resource_config {
    uint32_t size;        /* broker ranks */
    json_t *R;            /* configured R (resource.path), or NULL */
    const char *exclude;  /* idset or hostlist, or NULL */
    bool force_up;        /* resource.monitor-force-up */
    const char *hostlist; /* the broker attribute, for the restart event */
};

/* Replays resource.eventlog from the KVS (synchronously), and defines R
 * at once when it is configured or already in the KVS.  NULL with errno
 * and a reason in error (bad configured R or exclude, KVS failure). */
struct resource *resource_create (flux_t *h, const struct resource_config *cfg,
                                  flux_error_t *error);
void resource_destroy (struct resource *res);

/* The reduce update callback (reduce_update_f): ranks online/offline, and
 * fragments to assemble R from. */
void resource_update (const struct idset *online, json_t *R,
                      const struct idset *offline, void *arg);

/* Request handlers (the rolemasks are in main.c's table). */
void resource_status (struct resource *res, const flux_msg_t *msg);
void resource_sched_status (struct resource *res, const flux_msg_t *msg);
void resource_drain (struct resource *res, const flux_msg_t *msg);
void resource_undrain (struct resource *res, const flux_msg_t *msg);
void resource_acquire (struct resource *res, const flux_msg_t *msg);
void resource_acquire_cancel (struct resource *res, const flux_msg_t *msg);
void resource_acquire_mute (struct resource *res, const flux_msg_t *msg);
void resource_journal (struct resource *res, const flux_msg_t *msg);
void resource_journal_cancel (struct resource *res, const flux_msg_t *msg);
void resource_disconnect (struct resource *res, const flux_msg_t *msg);

/* Numbers for resource.stats-get. */
json_t *resource_stats (struct resource *res);

#endif /* !RESOURCE_RESOURCE_H */
