/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* appendtrack.h - position of a WATCH_APPEND watcher in a value.
 *
 * The watcher looks the key up as a raw tree object (FLUX_KVS_TREEOBJ) at
 * each root and feeds the result here, which says what is new since the
 * last call: a val to send as is, and/or the blobrefs of a valref not yet
 * sent, in order.  Only those blobs are then loaded from the content
 * store, so watching an N-entry eventlog to its end loads N blobs, not
 * N^2.  Anything that is not an append of what was already seen fails.
 * Pure logic: no messages.
 */
#ifndef KVS_WATCH_APPENDTRACK_H
#define KVS_WATCH_APPENDTRACK_H

#include <jansson.h>

typedef struct appendtrack appendtrack_t;

appendtrack_t *appendtrack_create (void);
void appendtrack_destroy (appendtrack_t *at); /* NULL-safe, keeps errno */

/* Feed the dirent of the key at a newer root.
 * On success *direct is NULL or a new reference to a val tree object to
 * send as it is (the first value seen, or the bytes appended to a val
 * that stayed a val), and *newrefs a new JSON array (possibly empty) of
 * the blobref strings to load and send, in order.  The state advances
 * past both.
 * Errors (-1, state unchanged): EISDIR if dirent is a dir or dirref;
 * EINVAL if it is not a value (symlink, malformed) or if the value was
 * overwritten or truncated rather than appended to; ENOMEM.
 */
int appendtrack_update (appendtrack_t *at, const json_t *dirent,
                        json_t **direct, json_t **newrefs);

/* Number of pieces (blobs, or the initial val) accounted for so far. */
int appendtrack_count (appendtrack_t *at);

#endif /* !KVS_WATCH_APPENDTRACK_H */
