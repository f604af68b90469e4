/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_SHELL_INPUT_H
#define FLUX_SHELL_INPUT_H

/* Task stdin (RFC 24 `input` eventlog).
 *
 * Default (input.stdin.type "service"): the leader writes the `input`
 * header (in the start-up commit) and serves `<service>.stdin` (io object
 * {stream:"stdin", rank:"all"|idset, data?, eof?}), appending each
 * request to `input` (at most 10M in all, else a fatal error).  The
 * leader writes each request to its own tasks once its append is
 * committed (data committed before the tasks exist waits for input_start)
 * and, from barrier 2 on (every shell's tasks exist), forwards it to the
 * other shells with a named task: `<service>.input` {context:o} (no
 * response), which they write to their tasks.  A shell on the leader's
 * broker (only with the tests' fake agent) watches `input` instead.
 *
 * input.stdin.type "file" with input.stdin.path (templates as for
 * output): every task reads the file as its stdin; no service.
 */
#include "libflux/handle.h"

struct shell;
struct task;
struct input;

/* Parse options; the leader writes the header (in the start-up commit,
 * shell_commit_async) and registers the methods; other shells register
 * `<service>.input`, or watch `input` when on the leader's broker. */
struct input *input_create (struct shell *shell, flux_error_t *error);

/* Before task t is spawned: open its stdin file if input is a file. */
int input_task_setup (struct input *in, struct task *t, flux_error_t *error);

/* After the tasks started: in the leader, write what was committed so
 * far to its tasks; in a shell on the leader's broker, watch `input`. */
int input_start (struct input *in, flux_error_t *error);

/* Leader, after barrier 2: forward what came so far and from now on. */
void input_forward_start (struct input *in);

void input_destroy (struct input *in);

#endif /* !FLUX_SHELL_INPUT_H */
