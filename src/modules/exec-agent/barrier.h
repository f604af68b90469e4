/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef EXEC_AGENT_BARRIER_H
#define EXEC_AGENT_BARRIER_H

/* barrier - the entries an agent holds for one job's shell barrier: one
 * per member of its share (its own shell, each child with ranks of the
 * job).  Rounds are numbered by seq, increasing; a round is complete when
 * nentries entries of the same seq are in, and its data is the merge
 * (object update, in arrival order) of their data objects.  The caller
 * then either answers the entries (barrier_release) or enters its
 * parent's barrier with the merge first.
 *
 * Entries are opaque pointers (the agent's requests); the barrier only
 * holds them and hands each back once, to barrier_release() or
 * barrier_fail().  After barrier_fail() every later entry is refused EIO:
 * a shell of the job exited, or the job is being killed.
 */
#include <jansson.h>

struct barrier;

typedef void (*barrier_entry_f) (void *entry, void *arg);

/* nentries >= 1.  NULL with errno. */
struct barrier *barrier_create (int nentries);

/* Entries still held are dropped without a call: fail them first. */
void barrier_destroy (struct barrier *b);

/* Enter round seq with data (an object or NULL, borrowed) and entry.
 * 1: the round is now complete; 0: it waits for more.  -1 with errno:
 * EIO (failed), EINVAL (seq older than the current round, or data not an
 * object), EBUSY (another round is pending or the complete round is not
 * released yet), EEXIST (more entries than nentries cannot happen: the
 * round completes first), ENOMEM.  On error entry is not held. */
int barrier_enter (struct barrier *b, int seq, json_t *data, void *entry);

/* The merged data of the complete round (borrowed, valid until
 * release or fail). */
json_t *barrier_data (struct barrier *b);

/* The seq of the pending or complete round (-1: none yet). */
int barrier_seq (const struct barrier *b);

/* The seq of the last released round (-1: none yet). */
int barrier_last (const struct barrier *b);

/* Entries held in the current round. */
int barrier_count (const struct barrier *b);

/* Hand every entry of the complete round to fn and start afresh (the
 * next round must have a larger seq).  -1 with EINVAL if the round is
 * not complete. */
int barrier_release (struct barrier *b, barrier_entry_f fn, void *arg);

/* Hand every held entry to fn (NULL: just drop them) and refuse all
 * later entries with EIO. */
void barrier_fail (struct barrier *b, barrier_entry_f fn, void *arg);

#endif /* !EXEC_AGENT_BARRIER_H */
