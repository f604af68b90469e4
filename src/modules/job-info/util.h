/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* util.h - pure helpers of job-info: who owns a job, current jobspec
 * and R from their update events, and eventlog text split into lines.
 */
#ifndef JOB_INFO_UTIL_H
#define JOB_INFO_UTIL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libflux/flux.h"
#include "libutil/textbuf.h"

/* The userid in the context of the submit event, which must be the
 * first entry of the eventlog text.  -1 EPROTO otherwise.
 */
int info_submit_userid (const char *eventlog, uint32_t *userid);

/* May the sender of msg see the job whose eventlog text this is?  The
 * instance owner may; a guest only if it submitted the job.  0, or -1
 * with EPERM (EPROTO if the eventlog has no valid submit event).
 */
int info_allow (const flux_msg_t *msg, const char *eventlog);

/* Set a value at a dotted path of an object, creating objects on the
 * way (RFC 21 jobspec-update keys).  -1 EINVAL if a path element is
 * empty or a non-object is in the way, ENOMEM.
 */
int info_path_set (json_t *o, const char *path, json_t *value);

/* Apply the jobspec-update events of an eventlog (text) to jobspec, and
 * the resource-update events to R (execution.expiration), in place.
 * Returns the number of updates applied, or -1 with EPROTO (a bad
 * eventlog) or ENOMEM.
 */
int info_apply_jobspec_updates (json_t *jobspec, const char *eventlog);
int info_apply_R_updates (json_t *R, const char *eventlog);

/* Split appended eventlog data into lines.  Feed chunks in order; each
 * call of info_lines_next() returns the next complete line including
 * its "\n" (valid until the next feed/next call) and its length, or
 * NULL when no complete line is buffered.
 */
struct info_lines {
    struct textbuf t; /* bytes buffered */
    size_t pos;       /* start of the next line */
};
void info_lines_init (struct info_lines *l);
void info_lines_free (struct info_lines *l);
int info_lines_feed (struct info_lines *l, const char *data, size_t len);
const char *info_lines_next (struct info_lines *l, size_t *len);

/* The event name of one eventlog line (copied into buf), or NULL. */
const char *info_line_name (const char *line, size_t len, char *buf,
                            size_t size);

#endif /* !JOB_INFO_UTIL_H */
