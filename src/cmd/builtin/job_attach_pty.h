/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_CMD_JOB_ATTACH_PTY_H
#define FLUX_CMD_JOB_ATTACH_PTY_H

/* job_attach_pty.h - the pty mode of an attach: the local terminal
 * connected to a job shell's interactive session (shell.init
 * {pty:"terminus.0"}; the methods are described in src/shell/pty.h).
 *
 * While it lasts the terminal is in raw mode: every key (ctrl-C too)
 * goes to the job's pty, whose line discipline does the editing and
 * sends the signals; window-size changes (SIGWINCH) follow.  The
 * terminal is restored when the session ends, at destroy, and at exit()
 * (cmd_die included).
 *
 * Typing the detach key, ctrl-] (as telnet's escape), detaches: this
 * client's attach ends, the task goes on, and the session may be
 * attached again (flux job attach).
 */
#include <stdbool.h>
#include <stdint.h>

#include "libflux/flux.h"

struct attach_pty;

#define ATTACH_PTY_DETACH_KEY 0x1d /* ctrl-] */

/* Called once when the session is over: errnum 0 after the task's exit
 * was received or after a detach (attach_pty_detached() tells), else the
 * attach failed (ENOSYS: no such session, or the shell is gone).  The
 * terminal is restored by then. */
typedef void (*attach_pty_done_f) (struct attach_pty *p, int errnum, void *arg);

/* True if stdin is a terminal whose mode we can set. */
bool attach_pty_usable (void);

/* Attach to <service>.<session> at nodeid rank.  NULL with errno. */
struct attach_pty *attach_pty_create (flux_t *h, uint32_t rank,
                                      const char *service, const char *session,
                                      attach_pty_done_f cb, void *arg);
void attach_pty_destroy (struct attach_pty *p);

/* True once the session confirmed the attach ({type:"attach"}): from
 * then on it shows task 0's output, the backlog first. */
bool attach_pty_attached (struct attach_pty *p);

/* True if the session ended by the detach key (the task goes on). */
bool attach_pty_detached (struct attach_pty *p);

#endif /* !FLUX_CMD_JOB_ATTACH_PTY_H */
