/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_SHELL_INPUT_H
#define FLUX_SHELL_INPUT_H

/* Task stdin (RFC 24 `input` eventlog).
 *
 * Default (input.stdin.type "service"): the leader writes the `input`
 * header (committed with shell.init) and serves `<service>.stdin` (io object
 * {stream:"stdin", rank:"all"|idset, data?, eof?}), appending each
 * request to `input` (at most 10M in all, else a fatal error).  The
 * leader watches `input`, writes the data to its tasks whose rank is
 * named and, from barrier 2 on (every shell's tasks exist), forwards
 * each event to the other shells with a named task: `<service>.input`
 * {context:o} (no response), which they write to their tasks.  A shell
 * on the leader's broker (only with the tests' fake agent) watches
 * `input` itself instead.
 *
 * input.stdin.type "file" with input.stdin.path (templates as for
 * output): every task reads the file as its stdin; no service.
 */
#include "libflux/handle.h"

struct shell;
struct task;
struct input;

/* Parse options; leader puts the header in shell_init_txn() and
 * registers the method. */
struct input *input_create (struct shell *shell, flux_error_t *error);

/* Before task t is spawned: open its stdin file if input is a file. */
int input_task_setup (struct input *in, struct task *t, flux_error_t *error);

/* After the tasks started: start watching `input` (leader, and shells
 * on the leader's broker). */
int input_start (struct input *in, flux_error_t *error);

/* Leader, after barrier 2: forward what came so far and from now on. */
void input_forward_start (struct input *in);

void input_destroy (struct input *in);

#endif /* !FLUX_SHELL_INPUT_H */
