/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef RESOURCE_DRAINSET_H
#define RESOURCE_DRAINSET_H
/* drainset - which execution targets are drained, since when and why
 * (RFC 44 drain/undrain).  Pure: no handle, no KVS.
 *
 * Each drained rank has a timestamp, a reason ("" if none) and the host
 * it had when drained, so that a replayed eventlog can be checked against
 * a new rank -> host mapping (drainset_remap).  Costs are O(ranks
 * touched) with a hash lookup per rank.
 */
#include <jansson.h>

#include "libflux/flux.h"
#include "libidset/idset.h"
#include "rmap.h"

/* RFC 44 "overwrite": how a drain applies to ranks already drained. */
enum drain_overwrite {
    DRAIN_KEEP = 0,          /* leave them as they are */
    DRAIN_UPDATE_REASON = 1, /* new reason, old timestamp */
    DRAIN_UPDATE_ALL = 2,    /* new reason and timestamp */
};

struct drainset;

struct drainset *drainset_create (void);
void drainset_destroy (struct drainset *ds);

/* Drain ranks at timestamp with reason (NULL: "").  hosts, if not NULL,
 * is an RFC 29 hostlist naming one host per rank in ascending rank order
 * (as in the event's nodelist); otherwise the hosts are unknown.
 * EINVAL for a bad overwrite or a hosts count that does not match. */
int drainset_drain (struct drainset *ds, const struct idset *ranks,
                    const char *hosts, double timestamp, const char *reason,
                    int overwrite);
/* Undrain ranks (those not drained are ignored). */
int drainset_undrain (struct drainset *ds, const struct idset *ranks);

/* The drained ranks (borrowed; changes with the set). */
const struct idset *drainset_ranks (const struct drainset *ds);
bool drainset_test (const struct drainset *ds, unsigned int rank);
/* The record of a drained rank; ENOENT if not drained.  Strings are
 * borrowed; *host is NULL if unknown. */
int drainset_get (const struct drainset *ds, unsigned int rank, double *ts,
                  const char **reason, const char **host);

/* Apply one resource.eventlog entry (RFC 44).  drain and undrain change
 * the set; other event names are ignored.  EPROTO with text for a drain
 * or undrain event without a valid context. */
int drainset_apply_event (struct drainset *ds, json_t *entry,
                          flux_error_t *error);

/* Check each drained rank against m (a new R): a rank whose recorded host
 * differs moves to the first rank of that host; a rank whose host is not
 * in m, or which is not in m at all, is dropped.  *changed (if not NULL)
 * is set to the number of ranks moved or dropped. */
int drainset_remap (struct drainset *ds, struct rmap *m, int *changed);

/* The resource.status form: {"<idset>": {timestamp:f, reason:s}, ...},
 * ranks with the same timestamp and reason grouped.  NULL/ENOMEM. */
json_t *drainset_to_json (const struct drainset *ds);

#endif /* !RESOURCE_DRAINSET_H */
