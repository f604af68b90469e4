/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* appendtrack.h - position of a WATCH_APPEND watcher in a value.
 *
 * The watcher looks the key up as a raw tree object (FLUX_KVS_TREEOBJ) at
 * each root and feeds the result here, which says what is new since the
 * last call: a val to send as is, and/or the blobrefs of a valref to load
 * and send, in order.  Only those blobs are loaded from the content
 * store, so watching an N-entry eventlog to its end loads N blobs, not
 * N^2.
 *
 * The kvs folds the last blobs of a long valref into one (apply.c), so a
 * newer valref may replace blobs already sent with one holding their
 * bytes followed by new ones.  The position is therefore kept in bytes:
 * each loaded blob is fed back (appendtrack_loaded), which says how many
 * of its first bytes were sent already, after checking that they are the
 * very bytes sent (their blobrefs are their hashes).  Anything that is
 * not an append of what was already seen fails.  Pure logic: no messages.
 */
#ifndef KVS_WATCH_APPENDTRACK_H
#define KVS_WATCH_APPENDTRACK_H

#include <jansson.h>
#include <stddef.h>

typedef struct appendtrack appendtrack_t;

appendtrack_t *appendtrack_create (void);
void appendtrack_destroy (appendtrack_t *at); /* NULL-safe, keeps errno */

/* Feed the dirent of the key at a newer root.
 * On success *direct is NULL or a new reference to a val tree object to
 * send as it is (the first value seen, or the bytes appended to a val
 * that stayed a val), and *newrefs a new JSON array (possibly empty) of
 * the blobref strings to load, in order; each loaded blob must be given
 * to appendtrack_loaded() before the next update.
 * Errors (-1, state unchanged): EISDIR if dirent is a dir or dirref;
 * EINVAL if it is not a value (symlink, malformed), if the value was
 * overwritten or truncated rather than appended to, or if the blobs of
 * the last update were not all loaded; ENOMEM.
 */
int appendtrack_update (appendtrack_t *at, const json_t *dirent,
                        json_t **direct, json_t **newrefs);

/* The next blob of the last update's newrefs, loaded.  Sets *skip to the
 * number of its first bytes already sent: send the rest.  EINVAL if they
 * are not the bytes sent (the value was rewritten), or if no blob was
 * expected.
 */
int appendtrack_loaded (appendtrack_t *at, const void *data, size_t len,
                        size_t *skip);

/* Number of pieces (blobs, or the initial val) to send so far. */
int appendtrack_count (appendtrack_t *at);

#endif /* !KVS_WATCH_APPENDTRACK_H */
