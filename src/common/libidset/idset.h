/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_IDSET_H
#define FLUX_IDSET_H

/* Idsets: sets of non-negative integer ids (broker ranks, job ids, ...)
 * and their RFC 22 string form, e.g. "0-3,7,9-12" or "[0-3,7,9-12]".
 *
 * Ids are unsigned int in [0, UINT_MAX - 1].  UINT_MAX is IDSET_INVALID_ID:
 * it can never be stored and is what the iteration functions return when
 * there is no (further) id.
 *
 * Representation: the set is held as disjoint, non-adjacent ranges [lo,hi]
 * in a treap (randomized balanced binary search tree) ordered by lo.  With
 * r ranges (r <= number of ids), expected costs are
 *   set/clear/test, range set/clear, first/last/next/prev, alloc: O(log r)
 *   count, empty:                                                  O(1)
 *   copy, encode with IDSET_FLAG_RANGE:                            O(r)
 *   encode without IDSET_FLAG_RANGE:                          O(count)
 *   equal:                                                   O(r log r)
 *   add/subtract a -= b, and union/difference (plus a copy):
 *                                                  O(r_b log (r_a + r_b))
 *   has_intersection:                             O(r_small log r_large)
 *   intersect:                            O((r_small + out) log (r + out))
 * so memory and time depend on the number of ranges, not ids: the range
 * 0-2147483647 takes one node, and a million scattered ids take a million.
 *
 * The "universe size" is kept for flux-core compatibility: it starts at the
 * size given to idset_create() and grows to (highest id ever set + 1).  It
 * never limits what may be set: sets always grow as needed, whether or not
 * IDSET_FLAG_AUTOGROW was given.
 *
 * An idset is not thread-safe; concurrent readers of a set nobody modifies
 * are fine (no function taking a const set writes to it).
 */
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

enum idset_flags {
    IDSET_FLAG_AUTOGROW = 1, /* create: accepted; growth always happens */
    IDSET_FLAG_BRACKETS = 2, /* encode: "[...]" when more than one id */
    IDSET_FLAG_RANGE = 4,    /* encode: "2-4" instead of "2,3,4" */
};

#define IDSET_INVALID_ID UINT_MAX

/* Human readable error text filled in by idset_decode_ex().
 */
typedef struct {
    char text[160];
} idset_error_t;

/* Create an empty idset.  'size' is the initial universe size (a hint,
 * at most UINT_MAX); 'flags' may only contain IDSET_FLAG_AUTOGROW.
 * Returns the set, or NULL with errno = EINVAL (bad size or flags) or
 * ENOMEM.  The caller destroys it with idset_destroy().
 */
struct idset *idset_create (size_t size, int flags);

/* Free 'idset'.  NULL is a no-op; errno is preserved.
 */
void idset_destroy (struct idset *idset);

/* Return a new set with the same ids, universe size and flags,
 * or NULL with errno = EINVAL (idset NULL) or ENOMEM.
 */
struct idset *idset_copy (const struct idset *idset);

/* Return the universe size (see above), or 0 if idset is NULL.
 */
size_t idset_universe_size (const struct idset *idset);

/* Encode 'idset' as an RFC 22 string in canonical form: ascending, each id
 * once.  'flags' may contain IDSET_FLAG_RANGE (compress runs of two or more
 * consecutive ids into "lo-hi") and IDSET_FLAG_BRACKETS (surround with
 * "[" "]" if the set holds more than one id).  The empty set is "".
 * Returns a string the caller must free, or NULL with errno = EINVAL
 * (idset NULL, unknown flags) or ENOMEM.
 */
char *idset_encode (const struct idset *idset, int flags);

/* Decode an RFC 22 string.  Same as idset_decode_ex (s, -1, 0, 0, NULL).
 */
struct idset *idset_decode (const char *s);

/* Decode the first 'len' characters of 's' (all of it if len < 0; 's'
 * need not be NUL-terminated when len >= 0).  Accepted, strictly:
 *   ""  "[]"  "5"  "1-5"  "1,3,5-7"  "[1-3,5]"
 * i.e. an optional pair of enclosing brackets around comma separated
 * elements "N" or "N-M" with N < M, each beginning above the previous one
 * (the RFC 22 "ascending, unique" rule; adjacent elements such as "1,2" or
 * "1-3,4-5" are allowed and merged).  Numbers are decimal digits only, with
 * no leading zero, at most UINT_MAX - 1.  Everything else (whitespace,
 * signs, empty elements, trailing commas, "5-1", "1-1", "3,1", "1,1",
 * stray or nested brackets, overflow) fails with EINVAL.
 * 'size' is the universe size hint; if size < 0 the universe is made to fit
 * (highest id + 1).  'flags' is as for idset_create().
 * Returns a new set, or NULL with errno = EINVAL or ENOMEM; on failure a
 * message is written to 'error' if it is not NULL.
 */
struct idset *idset_decode_ex (const char *s, ssize_t len, ssize_t size,
                               int flags, idset_error_t *error);

/* Add 'id', or every id from lo to hi inclusive (lo and hi are swapped if
 * lo > hi), to the set.  Setting ids already present is not an error.
 * Returns 0, or -1 with errno = EINVAL (idset NULL or an id equal to
 * IDSET_INVALID_ID) or ENOMEM.  On failure the set is unchanged.
 */
int idset_set (struct idset *idset, unsigned int id);
int idset_range_set (struct idset *idset, unsigned int lo, unsigned int hi);

/* Remove 'id', or every id from lo to hi inclusive (swapped if lo > hi).
 * Clearing ids that are absent is not an error.
 * Returns 0, or -1 with errno = EINVAL (as above) or ENOMEM.  On failure
 * the set is unchanged.
 */
int idset_clear (struct idset *idset, unsigned int id);
int idset_range_clear (struct idset *idset, unsigned int lo, unsigned int hi);

/* Return true if 'id' is in the set; false if not, or if idset is NULL.
 */
bool idset_test (const struct idset *idset, unsigned int id);

/* Iteration.  first/last return the lowest/highest id; next/prev return the
 * lowest id above 'id' / the highest id below 'id' ('id' itself need not be
 * in the set).  All return IDSET_INVALID_ID when there is no such id or
 * idset is NULL.  Forward:  for (id = idset_first (s);
 *                                 id != IDSET_INVALID_ID;
 *                                 id = idset_next (s, id))
 * Each call looks the set up afresh, so the set may be modified during
 * the loop (e.g. clearing the current id); later calls see the changes.
 */
unsigned int idset_first (const struct idset *idset);
unsigned int idset_next (const struct idset *idset, unsigned int id);
unsigned int idset_last (const struct idset *idset);
unsigned int idset_prev (const struct idset *idset, unsigned int id);

/* Return the number of ids in the set (0 if idset is NULL).  O(1).
 */
size_t idset_count (const struct idset *idset);

/* Return true if the set is empty or idset is NULL.
 */
bool idset_empty (const struct idset *idset);

/* Return true if 'a' and 'b' hold the same ids (universe sizes and flags
 * are ignored).  False if either is NULL.
 */
bool idset_equal (const struct idset *a, const struct idset *b);

/* Return a new set a | b.  'b' may be NULL (treated as empty).
 * NULL with errno = EINVAL (a NULL) or ENOMEM.
 */
struct idset *idset_union (const struct idset *a, const struct idset *b);

/* a |= b.  'b' may be NULL or equal to 'a'.
 * Returns 0, or -1 with errno = EINVAL (a NULL) or ENOMEM, in which case
 * 'a' is unchanged.
 */
int idset_add (struct idset *a, const struct idset *b);

/* a -= b.  'b' may be NULL or equal to 'a' (which empties 'a').
 * Returns 0, or -1 with errno = EINVAL (a NULL) or ENOMEM, in which case
 * 'a' is unchanged.
 */
int idset_subtract (struct idset *a, const struct idset *b);

/* Return a new set a - b.  'b' may be NULL.
 * NULL with errno = EINVAL (a NULL) or ENOMEM.
 */
struct idset *idset_difference (const struct idset *a, const struct idset *b);

/* Return a new set a & b.
 * NULL with errno = EINVAL (a or b NULL) or ENOMEM.
 */
struct idset *idset_intersect (const struct idset *a, const struct idset *b);

/* Return true if 'a' and 'b' have at least one id in common
 * (false if either is NULL).
 */
bool idset_has_intersection (const struct idset *a, const struct idset *b);

/* Return true if every id of 'a' is in 'b' (an empty 'a' is in any 'b';
 * false if either is NULL).  No allocation.
 */
bool idset_is_subset (const struct idset *a, const struct idset *b);

/* Use an idset as an id pool whose members are the ids in use.
 * idset_alloc() takes the lowest id not in the set, adds it, and stores it
 * in '*id'.  Returns 0, or -1 with errno = EINVAL (NULL argument), ENOSPC
 * (every id 0..UINT_MAX-1 is in use) or ENOMEM.
 * idset_free() gives 'id' back (removes it).  Returns 0, or -1 with
 * errno = EINVAL (idset NULL or id invalid), ENOENT (id not in use, e.g. a
 * double free; the set is unchanged) or ENOMEM.
 * Note: flux-core's idset_alloc() works the other way round (the set holds
 * the free ids and must be created with IDSET_FLAG_INITFULL).
 */
int idset_alloc (struct idset *idset, unsigned int *id);
int idset_free (struct idset *idset, unsigned int id);

#ifdef __cplusplus
}
#endif

#endif /* !FLUX_IDSET_H */
