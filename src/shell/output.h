/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_SHELL_OUTPUT_H
#define FLUX_SHELL_OUTPUT_H

/* Task output (RFC 24): into the `output` eventlog of the guest
 * namespace, bounded, or into files.
 *
 * Only the leader shell writes `output` (the header first, committed
 * with shell.init after barrier 1, before any task starts); the other shells
 * send it their tasks' events over `<service>.output` {shell_rank:i, events:s
 * (encoded eventlog lines), last:b} (answered once the leader holds them; one
 * in flight per shell), and the leader appends them in the order received, so
 * each task's events keep their order and a job commits its output in batches,
 * not once per shell.  The job-wide bound (`output.limit`, default 10M per
 * stream) is kept by giving each of the job's N shells limit/N bytes per
 * stream: no message to the leader per line, and no shell can ever add more
 * than its share. Past its share a shell drops the data (EOFs are kept) and
 * says so in `output` (a `log` event) and in exec.eventlog, once, then at the
 * end how many bytes were dropped.
 *
 * Events are committed in batches: every output.batch-timeout (an FSD or
 * seconds, default 0.2s) or 1 MB.
 *
 * Files: options output.stdout.path / output.stderr.path (stderr follows
 * stdout when only stdout is given), output.mode truncate|append,
 * templates {{id}}/{{jobid}} (f58), {{name}}.  The leader creates or
 * truncates them before barrier 1 and posts `redirect` events; every
 * shell then appends with O_APPEND.
 */
#include <stdbool.h>
#include <stddef.h>

#include "libflux/handle.h"

struct shell;
struct output;

enum { OUTPUT_STDOUT = 0, OUTPUT_STDERR = 1 };

/* Parse the options; the leader writes the header (in the start-up commit) and
 * opens/truncates files.  NULL with errno and error text.
 */
struct output *output_create (struct shell *shell, flux_error_t *error);

/* Whether data of stream goes out in whole lines (option
 * output.<stream>.buffer.type: line, stdout's default; or none, stderr's
 * and the only choice for stderr). */
bool output_line_buffered (struct output *out, int stream);

/* After barrier 1: non-leaders open the files. */
int output_start (struct output *out, flux_error_t *error);

void output_destroy (struct output *out);

/* Data from task rank on stream; output_eof once at its end. */
void output_write (struct output *out, int rank, int stream, const char *data,
                   size_t len);
void output_eof (struct output *out, int rank, int stream);

/* Log a shell message into the output eventlog as a `log` event
 * (component: the part of the shell it comes from); shell_log() calls it.
 */
void output_log_component (struct output *out, int level, const char *component,
                           const char *msg);

/* Leader, once its own tasks are done: run the loop until every other
 * shell has sent its last events (or the shell failed).  No-op for the
 * others and for a job of one shell.  Returns -1 with errno set when the
 * connection to the broker failed meanwhile, else 0.
 */
int output_wait (struct output *out);

/* Leader: shell rank `rank` was lost (job-exec's `lost-shell`): its last
 * events will never come, so output_wait() does not wait for them. */
void output_lost_shell (struct output *out, int rank);

/* Leader: append line to eventlog key of the guest namespace in the
 * output transaction, and commit it with the output pending at the end
 * of this loop turn (or once the commit in flight is answered, or at
 * output_flush): a task's exit event and its output's EOFs cost the KVS
 * one commit, not two.  -1 with errno.
 */
int output_commit_now (struct output *out, const char *key, const char *line);

/* At exit: the leader commits everything pending and waits; the others
 * send their last events to the leader (once the send in flight is
 * answered) without a response: the leader waits for them before it
 * ends, and logs what it refuses.  -1 with errno.
 */
int output_flush (struct output *out);

#endif /* !FLUX_SHELL_OUTPUT_H */
