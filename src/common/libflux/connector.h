/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_CONNECTOR_H
#define FLUX_CONNECTOR_H

/* Internal: the built-in connectors, selected by flux_open_ex(). */
#include <sys/types.h>

#include "handle.h"

/* local://PATH: connect to a broker's unix socket, read the accept byte. */
flux_t *connector_local_open (const char *path, int flags, flux_error_t *error);

/* fd://N: framed messages over an already connected unix stream socket
 * (no accept byte).  The handle owns the fd and closes it.  Received
 * messages are stamped with the peer's SO_PEERCRED credentials (RFC 12):
 * a peer with our uid is the owner and may preset credentials; any other
 * peer is a guest (FLUX_ROLE_USER) and cannot.
 */
flux_t *connector_fd_open (const char *arg, int flags, flux_error_t *error);

/* loop://: messages sent are received back by the same handle. */
flux_t *connector_loop_open (const char *arg, int flags, flux_error_t *error);

/* ssh://[USER@]HOST[:PORT]/PATH: run `$FLUX_SSH [-p PORT] [USER@]HOST
 * $FLUX_SSH_RCMD relay PATH` (FLUX_SSH defaults to ssh, FLUX_SSH_RCMD to
 * the flux found on PATH) and speak the local connector's protocol (the
 * accept byte, then framed messages) over its stdin/stdout.
 */
flux_t *connector_ssh_open (const char *arg, int flags, flux_error_t *error);

/* Internal to the stream connectors: a handle over the connected stream
 * socket fd (no accept byte is read); it owns fd and, if child > 0,
 * reaps that process when it is destroyed (killing it if it does not
 * exit within ~2 s of the close).  NULL on failure, fd closed and child
 * reaped. */
flux_t *connector_stream_open (int fd, pid_t child, int flags);

/* Reap child, which was sent EOF: wait up to ~2 s, then SIGKILL it. */
void connector_reap_child (pid_t pid);

#endif /* !FLUX_CONNECTOR_H */
