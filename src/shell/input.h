/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_SHELL_INPUT_H
#define FLUX_SHELL_INPUT_H

/* Task stdin (RFC 24 `input` eventlog).
 *
 * Default (input.stdin.type "service"): the leader writes the `input`
 * header before barrier 1 and serves `<service>.stdin` (io object
 * {stream:"stdin", rank:"all"|idset, data?, eof?}), appending each
 * request to `input` (at most 10M in all, else a fatal error).  Every
 * other shell watches `input` and writes the data to its tasks whose
 * rank is named; the leader writes each request to its own tasks once
 * its append is committed (data committed before the tasks exist waits
 * for input_start).
 *
 * input.stdin.type "file" with input.stdin.path (templates as for
 * output): every task reads the file as its stdin; no service.
 */
#include "libflux/handle.h"

struct shell;
struct task;
struct input;

/* Parse options; leader writes the header and registers the method.  */
struct input *input_create (struct shell *shell, flux_error_t *error);

/* Before task t is spawned: open its stdin file if input is a file. */
int input_task_setup (struct input *in, struct task *t, flux_error_t *error);

/* After the tasks started: start watching `input` (or, in the leader,
 * write what was committed so far). */
int input_start (struct input *in, flux_error_t *error);

void input_destroy (struct input *in);

#endif /* !FLUX_SHELL_INPUT_H */
