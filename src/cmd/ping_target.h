/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_CMD_PING_TARGET_H
#define FLUX_CMD_PING_TARGET_H

/* Parsing of `flux ping` targets (PROTOCOLS.md section 2, default
 * methods).  A target names a service and where to find it:
 *
 *   SVC          SVC.ping, nodeid ANY
 *   R!SVC        SVC.ping on R
 *   R            broker.ping on R
 *
 * where R is a rank (decimal), "any", "upstream", "all" (every rank, one
 * request each) or a host name, translated to a rank by the caller's
 * lookup function (flux ping uses the "hostlist" attribute).  A bare
 * word that is a known host name is a rank; otherwise it is a service.
 * With --rank, the rank comes from the option and the target is always
 * a service name.
 */
#include <stdbool.h>
#include <stdint.h>

#include "libflux/flux.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ping_dest {
    PING_DEST_RANK,     /* t->rank */
    PING_DEST_ANY,      /* FLUX_NODEID_ANY */
    PING_DEST_UPSTREAM, /* FLUX_NODEID_UPSTREAM */
    PING_DEST_ALL,      /* every rank */
};

struct ping_target {
    char *topic; /* "SVC.ping" */
    char *label; /* the rank as the user wrote it, "" for an implied any */
    enum ping_dest dest;
    uint32_t rank; /* for PING_DEST_RANK */
};

/* Resolve host to a rank: 0 with *rank set, or -1 if not a host name. */
typedef int (*ping_lookup_f) (const char *host, uint32_t *rank, void *arg);

/* Parse target (and the --rank option value, NULL if none) into t, which
 * the caller releases with ping_target_clear().  lookup may be NULL (no
 * host names).  Returns 0, or -1 with errno EINVAL and a reason in error
 * (empty service name, a rank part that is neither a rank, a keyword nor
 * a known host, a rank >= FLUX_NODEID_UPSTREAM), or ENOMEM.
 */
int ping_target_parse (const char *target, const char *rankopt,
                       ping_lookup_f lookup, void *arg, struct ping_target *t,
                       flux_error_t *error);

/* Free what ping_target_parse() allocated.  NULL-safe. */
void ping_target_clear (struct ping_target *t);

/* The nodeid to send to (not meaningful for PING_DEST_ALL). */
uint32_t ping_target_nodeid (const struct ping_target *t);

#ifdef __cplusplus
}
#endif

#endif /* !FLUX_CMD_PING_TARGET_H */
