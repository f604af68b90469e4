/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_CONNECTOR_H
#define FLUX_CONNECTOR_H

/* Internal: the built-in connectors, selected by flux_open_ex(). */
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

#endif /* !FLUX_CONNECTOR_H */
