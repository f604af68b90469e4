/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_HOSTLIST_H
#define FLUX_HOSTLIST_H

/* Hostlists: ordered lists of host names, possibly with duplicates, and
 * their RFC 29 compressed string form, e.g. "login,node[01-16,20]-ib".
 *
 * Host names.  A name is split at its LAST group of decimal digits into
 * prefix, number and suffix: "rack1-node12-ib" is prefix "rack1-node",
 * number 12, suffix "-ib"; "login" has no number.  Only that number is ever
 * put in a range, so equal names always split the same way.  The digits
 * keep their written width: "node007" is 7 padded to 3 digits and differs
 * from "node7".  A number above UINT_MAX - 1 or written with more than
 * HOSTLIST_MAX_WIDTH digits is not treated as a number (the name is kept
 * whole).  Names are printable ASCII without whitespace, ',', '[' or ']'.
 *
 * Decoding (RFC 29).  A string is a comma separated list of expressions
 * "prefix[idlist]suffix", each part optional; empty expressions are empty
 * lists, so "" and "a,,b" are valid.  An idlist is "N" and "N-M" (N <= M)
 * elements separated by commas, in any order, repeats allowed.  Leading
 * zeros of the first number in an idlist set the width of every id in it:
 * "[00-2]" is 00,01,02 and "[005,4,11-13]" is 005,004,011,012,013.  As an
 * extension (pdsh/slurm style) an expression may hold several idlists,
 * expanded leftmost outermost: "r[1-2]n[1-2]" is r1n1,r1n2,r2n1,r2n2.
 * Malformed input (unbalanced or nested brackets, "[]", empty or reversed
 * elements, non-digits in an idlist, whitespace, a number above
 * UINT_MAX - 1 or wider than HOSTLIST_MAX_WIDTH digits) fails with EINVAL;
 * an expression of more than HOSTLIST_MAX_EXPAND hosts, or a list of more
 * than INT_MAX hosts, fails with ERANGE.  So does a string whose expansion
 * does more than HOSTLIST_MAX_DECODE of work the text does not pay for
 * byte by byte: each name formatted on its own (ids that are not the
 * names' last digit group, as in "n[1-9]0") and, in an expression with
 * several idlists, each id or range of the last one pushed for each
 * combination of the others ("r[1-2]n[1,3]" pushes 4) costs its length
 * plus 64.  This bounds time and memory by the text, not by what it
 * names: "[0-524287][0,2]" stores a million runs (~70 MB), and repeated it
 * would take gigabytes.  Any one expression of short names (under ~60
 * bytes) fits.  Ids and ranges written in the text cost nothing however
 * many hosts they hold: "node[0-99999999]" decodes, and so does every
 * string hostlist_encode() writes.
 *
 * Encoding is canonical: the same sequence of names always gives the same
 * string.  Consecutive names with the same prefix and suffix whose numbers
 * print compatibly with the first one's width go in one bracket, with runs
 * of ascending consecutive numbers as "lo-hi": "node9,node10" is
 * "node[9-10]", "node09,node10" is "node[09-10]", "node9,node010" stays
 * "node9,node010", "foo1,foo1" is "foo[1,1]", "foo3,foo1" is "foo[3,1]".
 * Order and duplicates are always kept.  A bracket holds at most
 * HOSTLIST_MAX_EXPAND hosts, so that the string decodes again: more
 * continue in the next expression, "x[0-1048575],x[1048576-2000000]".
 *
 * Storage is a list of runs (prefix, suffix, lo, hi, width), so a 10,000
 * node cluster is one run however it was built.  Costs, with r runs:
 * append O(hosts added) or O(1) per bracket range, count O(1), encode O(r),
 * first/next/current O(1) amortized, nth O(1) amortized when moving forward
 * and O(r) otherwise, find O(r), delete O(d log d + r log d) for d runs in
 * the names to delete, sort/uniq O(r log r + hosts in duplicated stretches).
 *
 * The cursor.  Each hostlist has a cursor used by first/next/last/current/
 * nth/find.  It is either ON a host or in a gap before the host at some
 * position.  A new list's cursor is in the gap before the first host, so
 * hostlist_next() on it returns the first host.  Appending does not move
 * it; hostlist_delete() keeps it on the same host, or if that host was
 * deleted, in the gap where it was; sort and uniq put it back before the
 * first host.  Strings returned by the cursor functions belong to the
 * hostlist and stay valid until the next call on the same hostlist.
 *
 * A hostlist is not thread-safe; even reading through the cursor functions
 * modifies it.
 */
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HOSTLIST_MAX_WIDTH 32           /* digits in one number */
#define HOSTLIST_MAX_EXPAND (1 << 20)   /* hosts from one expression */
#define HOSTLIST_MAX_DECODE (128 << 20) /* decoding work of one string */

/* Create an empty hostlist.  Returns NULL with errno = ENOMEM on failure.
 */
struct hostlist *hostlist_create (void);

/* Free 'hl'.  NULL is a no-op; errno is preserved.
 */
void hostlist_destroy (struct hostlist *hl);

/* Return a new hostlist holding the same hosts in the same order, with its
 * cursor before the first host.  NULL with errno = EINVAL (hl NULL) or
 * ENOMEM.
 */
struct hostlist *hostlist_copy (const struct hostlist *hl);

/* Decode RFC 29 string 's' (see above) into a new hostlist.
 * NULL with errno = EINVAL (s NULL or malformed), ERANGE or ENOMEM.
 */
struct hostlist *hostlist_decode (const char *s);

/* Encode 'hl' as a canonical RFC 29 string (see above); "" if empty.
 * Returns a string the caller must free, or NULL with errno = EINVAL
 * (hl NULL) or ENOMEM.
 */
char *hostlist_encode (const struct hostlist *hl);

/* Decode 'hosts' and append them to 'hl' in order.
 * Returns the number of hosts appended (0 for ""), or -1 with errno =
 * EINVAL (NULL argument or malformed 'hosts'), ERANGE or ENOMEM, in which
 * case 'hl' is unchanged.
 */
int hostlist_append (struct hostlist *hl, const char *hosts);

/* Append every host of 'hl2' to 'hl1' ('hl2' may be 'hl1').
 * Returns the number of hosts appended, or -1 with errno = EINVAL,
 * ERANGE or ENOMEM, in which case 'hl1' is unchanged.
 */
int hostlist_append_list (struct hostlist *hl1, const struct hostlist *hl2);

/* Return the number of hosts in 'hl' (0 if hl is NULL).  O(1).
 */
int hostlist_count (const struct hostlist *hl);

/* Put the cursor on host 'n' (counting from 0) and return its name.
 * NULL with errno = EINVAL (hl NULL or n < 0), ENOENT (n >= count; the
 * cursor does not move) or ENOMEM.
 */
const char *hostlist_nth (struct hostlist *hl, int n);

/* Return the index of the first host named 'hostname' and put the cursor
 * on it.  -1 with errno = EINVAL (NULL argument or not a valid host name)
 * or ENOENT (not found; the cursor does not move).
 */
int hostlist_find (struct hostlist *hl, const char *hostname);

/* Remove every occurrence of every host named in 'hosts' (an RFC 29
 * string) from 'hl'.  Returns the number of hosts removed, or -1 with
 * errno = EINVAL, ERANGE or ENOMEM, in which case 'hl' is unchanged.
 */
int hostlist_delete (struct hostlist *hl, const char *hosts);

/* Sort 'hl': by prefix, then suffix (both by strcmp), names without a
 * number first, then by width class (unpadded numbers before numbers
 * padded to 2 digits, before 3, ...), then by number.  Duplicates are kept.
 * hostlist_uniq() sorts the same way and keeps one host of each name.
 * Both return 0, or -1 with errno = EINVAL (hl NULL) or ENOMEM, in which
 * case 'hl' is unchanged.  The cursor goes before the first host.
 */
int hostlist_sort (struct hostlist *hl);
int hostlist_uniq (struct hostlist *hl);

/* Cursor iteration (see above):
 *   first    cursor on the first host; returns it
 *   last     cursor on the last host; returns it
 *   next     cursor on the host after the cursor; returns it
 *   current  returns the host the cursor is on
 * Each returns NULL with errno = ENOENT when there is no such host (empty
 * list, end of list, cursor in a gap for current); next then leaves the
 * cursor in the gap after the last host, so hosts appended later are
 * returned by the next call to next.  NULL with errno = EINVAL if hl is
 * NULL, ENOMEM if the name cannot be formatted.
 *   for (h = hostlist_first (hl); h; h = hostlist_next (hl)) ...
 */
const char *hostlist_first (struct hostlist *hl);
const char *hostlist_last (struct hostlist *hl);
const char *hostlist_next (struct hostlist *hl);
const char *hostlist_current (struct hostlist *hl);

#ifdef __cplusplus
}
#endif

#endif /* !FLUX_HOSTLIST_H */
