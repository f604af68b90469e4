/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_UTIL_SLICE_H
#define FLUX_UTIL_SLICE_H

/* slice - a Python-style slice "[start:stop:step]" of a list.
 *
 * Each of start, stop and step may be omitted ("[:5]", "[::-1]", "[2:]");
 * ":step" itself is optional ("[1:3]").  start and stop may be negative
 * (counted from the end of the list); step may not be 0.  Whitespace is
 * not allowed.  The meaning is Python's: for a list of n elements the
 * slice selects indices start, start + step, ... up to but not including
 * stop, after clamping to the list, so a slice never selects an index
 * out of range and may select nothing.
 *
 * `flux job last` (job-manager.history.get) takes a slice of the user's
 * jobs, newest first: "[:1]" is the last job submitted.
 */
#include <stdbool.h>
#include <stddef.h>

struct slice {
    long start, stop, step;
    bool has_start, has_stop;
};

/* Parse s.  -1 with EINVAL if it is not a slice. */
int slice_parse (struct slice *sl, const char *s);

/* Apply the slice to a list of n elements: the first index selected in
 * *first, the distance between two in *step, and the number selected is
 * returned (0: nothing, *first is then undefined). */
size_t slice_apply (const struct slice *sl, size_t n, long *first, long *step);

#endif /* !FLUX_UTIL_SLICE_H */
