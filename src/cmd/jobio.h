/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_CMD_JOBIO_H
#define FLUX_CMD_JOBIO_H

/* jobio.h - the parts of `flux run` and `flux job attach` that need no
 * broker: a job's exit code from its finish status, RFC 24 io objects
 * (the context of guest.output "data" events and of <service>.stdin
 * requests), and the lines attach prints for shell log events and
 * exceptions (PROTOCOLS-exec.md 4.1).
 */
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "libflux/flux.h"

/* The exit code of a job, as flux run reports it:
 *   status < 0 (no finish event)            1
 *   finish status of a signaled job shell   128 + signal ("job shell <sig>")
 *   else the shell's exit status             (> 128: "task(s) <sig>",
 *                                             > 0: "task(s) exited with
 *                                             exit code N")
 * and at least 1 if fatal_exception is set.  msg (may be NULL) gets the
 * explanation, or "" when there is none to print.
 */
int jobio_exit_code (int status, bool fatal_exception, flux_error_t *msg);

/* Decode an io object {stream:s, rank:s, data?:s, eof?:b, encoding?:s}.
 * The data is decoded by the event's own "encoding" if present, else by
 * the stream's entry in header_encoding (the header event's "encoding"
 * object; may be NULL), else as UTF-8.  Encodings: "UTF-8" and "base64"
 * (any case).  *data is a malloc'd copy (free it), NULL with *len 0 when
 * the event has no data.  -1 with error->text on a malformed object.
 */
int jobio_decode (json_t *context, json_t *header_encoding, const char **stream,
                  const char **rank, char **data, size_t *len, bool *eof,
                  flux_error_t *error);

/* An io object for len bytes of data (data may be NULL if len is 0):
 * the text itself if it is valid UTF-8 without NUL, else base64 with
 * encoding:"base64".  eof adds eof:true.  NULL with errno on failure. */
json_t *jobio_encode (const char *stream, const char *rank, const void *data,
                      size_t len, bool eof);

/* True if the len bytes at s are valid UTF-8 without a NUL byte. */
bool jobio_is_utf8 (const char *s, size_t len);

/* The line attach prints for a guest.output "log" event of time t
 * (t0: the time of the job's first event), without a newline:
 *   "<t-t0>s: flux-shell[<rank>]: <LEVEL>: <component>: <message>"
 * ("[rank]", LEVEL and component only when known; with verbose also
 * ": file:line" after the component).  malloc'd; NULL with error->text
 * for a malformed context.
 */
char *jobio_log_line (json_t *context, double t, double t0, bool verbose,
                      flux_error_t *error);

/* The line attach prints for an exception event, without a newline:
 *   "<t-t0>s: job.exception <jobid> type=<type> severity=<sev> <note>"
 * malloc'd; NULL with error->text for a malformed context.  *severity
 * (may be NULL) gets the severity.
 */
char *jobio_exception_line (json_t *context, double t, double t0,
                            const char *jobid, int *severity,
                            flux_error_t *error);

/* The number of tasks of an RFC 34 taskmap {version:1, map:[[nodeid,
 * nnodes, ppn, repeat]...]}, or -1 if it is malformed. */
long jobio_taskmap_ntasks (json_t *taskmap);

#endif /* !FLUX_CMD_JOBIO_H */
