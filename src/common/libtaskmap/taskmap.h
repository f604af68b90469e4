/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_TASKMAP_H
#define FLUX_TASKMAP_H

/* The Flux task map (RFC 34): which task ranks of a job run on which
 * node (shell rank), kept as the compact list of map blocks
 * [nodeid, nnodes, ppn, repeat].  Task ids are given out in block order:
 * for each repetition, for each node of the block, ppn consecutive ids.
 *
 * Built from per-node task counts (block or cyclic), block by block
 * with taskmap_append(), or decoded from text: the JSON array, the
 * wrapped object {version:1, map:[...]}, or the "raw" form of RFC 34
 * (node-ordered idsets separated by ';').  Encoded back to JSON, to the
 * raw form (tests) or to a PMI-1 PMI_process_mapping string (RFC 13).
 *
 * Lookups cost O(blocks) (taskmap_nodeid) or O(blocks * repeat)
 * (taskmap_taskids); no table the size of the job is built.
 * A map with no block means "mapping unknown".
 */
#include <jansson.h>
#include <stdbool.h>

#include "libflux/handle.h" /* flux_error_t */
#include "libidset/idset.h"

#ifdef __cplusplus
extern "C" {
#endif

struct taskmap;

/* encode flags: exactly one of them */
enum {
    TASKMAP_ENCODE_WRAPPED = 1, /* {"version":1,"map":[...]} */
    TASKMAP_ENCODE_PMI = 2,     /* (vector,(nodeid,nnodes,ppn),...) */
    TASKMAP_ENCODE_RAW = 4,     /* 0-3;4-7 */
};

/* An empty map (mapping unknown).  NULL with errno ENOMEM. */
struct taskmap *taskmap_create (void);

/* Free.  NULL-safe, preserves errno. */
void taskmap_destroy (struct taskmap *map);

/* Append nnodes nodes from nodeid with ppn tasks each (the next task
 * ids), merged into the last block when that keeps the meaning.
 * -1 with errno EINVAL (nodeid < 0, nnodes < 1, ppn < 1), EOVERFLOW
 * (more than INT_MAX tasks), ENOMEM.
 */
int taskmap_append (struct taskmap *map, int nodeid, int nnodes, int ppn);

/* Block distribution of counts[0..nnodes-1] tasks per node (nodes with 0
 * tasks get none).  NULL with errno EINVAL, EOVERFLOW, ENOMEM.
 */
struct taskmap *taskmap_block (const int *counts, int nnodes);

/* Cyclic distribution with stride 'stride' (>= 1): rounds over the nodes
 * in order, each node taking up to stride of its remaining tasks per
 * round.  NULL with errno EINVAL, EOVERFLOW, ENOMEM.
 */
struct taskmap *taskmap_cyclic (const int *counts, int nnodes, int stride);

/* Decode JSON text (array or wrapped object) or the raw form.  NULL with
 * errno EINVAL and a reason in error (may be NULL), or ENOMEM.
 */
struct taskmap *taskmap_decode (const char *s, flux_error_t *error);

/* The same from a JSON value (array or wrapped object). */
struct taskmap *taskmap_decode_json (const json_t *o, flux_error_t *error);

/* The map array as a new JSON reference (wrapped if flags is
 * TASKMAP_ENCODE_WRAPPED, else flags must be 0).  NULL with errno.
 */
json_t *taskmap_encode_json (const struct taskmap *map, int flags);

/* Text in one of the encodings above (malloc'd, caller frees).  NULL with
 * errno EINVAL (bad flags), ENOMEM.  The PMI form of an unknown map is
 * "(vector)"; a repeat is written out block by block.
 */
char *taskmap_encode (const struct taskmap *map, int flags);

bool taskmap_unknown (const struct taskmap *map);
int taskmap_nnodes (const struct taskmap *map); /* highest nodeid + 1 */
int taskmap_total_ntasks (const struct taskmap *map);

/* Tasks on nodeid (0 if none or out of range), -1/EINVAL on a bad arg. */
int taskmap_ntasks (const struct taskmap *map, int nodeid);

/* The node of task taskid, or -1 with errno ENOENT (no such task) or
 * EINVAL.
 */
int taskmap_nodeid (const struct taskmap *map, int taskid);

/* The task ids on nodeid as a new idset (caller destroys; empty if none).
 * NULL with errno EINVAL or ENOMEM.
 */
struct idset *taskmap_taskids (const struct taskmap *map, int nodeid);

/* True if both maps give every node the same number of tasks (a new map
 * may replace an old one only then).
 */
bool taskmap_check (const struct taskmap *old, const struct taskmap *map);

#ifdef __cplusplus
}
#endif

#endif /* !FLUX_TASKMAP_H */
