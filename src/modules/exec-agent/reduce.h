/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef EXEC_AGENT_REDUCE_H
#define EXEC_AGENT_REDUCE_H

/* reduce - what an agent holds of the reports about its share of a job
 * (its own rank if it is in R, and the job's ranks below its children),
 * combined before they go up the tree.
 *
 * Reports: started (ranks), exited (ranks, wait status), failed (ranks,
 * wait status, error text: the shell could not start, or was killed by a
 * signal), lost (ranks: a broker on the way was lost; status 1 when that
 * was before the job's start barriers were through).  A rank is *finished* once
 * it exited, failed or was lost; reports about finished ranks are dropped, and
 * a rank that is lost after it started is only lost.  Held reports are combined
 * per type: the union of the ranks, the largest status, the first error.
 * reduce_flush() hands out one report per type that has ranks, in the order
 * started, failed, exited, lost.
 *
 * The object keeps no timer: the caller flushes at the end of its window,
 * or at once when reduce_urgent() says a held report completes the share.
 * It also keeps the whole history (reduce_replay) for a reattach.
 */
#include <stdbool.h>

#include "libidset/idset.h"

enum reduce_type {
    REDUCE_STARTED = 0,
    REDUCE_FAILED,
    REDUCE_EXITED,
    REDUCE_LOST,
};
#define REDUCE_NTYPES 4

typedef void (*reduce_emit_f) (enum reduce_type type, const struct idset *ranks,
                               int status, const char *error, void *arg);

struct reduce;

/* share is copied.  NULL with errno (EINVAL: empty share). */
struct reduce *reduce_create (const struct idset *share);
void reduce_destroy (struct reduce *r);

/* Add a report.  ranks must be a non-empty subset of the share (-1 with
 * EINVAL otherwise, nothing held).  error may be NULL (failed: "shell
 * could not start" is then used); it is copied.  Returns 0. */
int reduce_add (struct reduce *r, enum reduce_type type,
                const struct idset *ranks, int status, const char *error);

/* Something is held. */
bool reduce_held (const struct reduce *r);

/* Only reports of finished ranks (exited, failed, lost) are held. */
bool reduce_held_finished_only (const struct reduce *r);

/* A held report completes something the receiver waits for: every rank
 * of the share started (held or sent before), or every rank finished. */
bool reduce_urgent (const struct reduce *r);

/* Every rank of the share finished (held or not). */
bool reduce_finished (const struct reduce *r);

/* Hand out the held reports (fn once per type with ranks) and hold
 * nothing.  Returns the number of reports handed out. */
int reduce_flush (struct reduce *r, reduce_emit_f fn, void *arg);

/* Hand out everything reported so far, held or flushed, one report per
 * type with ranks (started: the ranks that started and are not lost),
 * and hold nothing.  Returns the number handed out. */
int reduce_replay (struct reduce *r, reduce_emit_f fn, void *arg);

/* The ranks of subset that have not finished: a new idset. */
struct idset *reduce_unfinished (const struct reduce *r,
                                 const struct idset *subset);

const struct idset *reduce_share (const struct reduce *r);

/* Counters: reports added (that changed something) and reports handed out
 * by reduce_flush(). */
unsigned long reduce_count_in (const struct reduce *r);
unsigned long reduce_count_out (const struct reduce *r);

const char *reduce_typestr (enum reduce_type type);
/* -1 with EINVAL for an unknown name. */
int reduce_type_parse (const char *s, enum reduce_type *type);

#endif /* !EXEC_AGENT_REDUCE_H */
