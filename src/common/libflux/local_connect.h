/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_LOCAL_CONNECT_H
#define FLUX_LOCAL_CONNECT_H

/* The client's side of the local connector's handshake: connect to the
 * broker's unix socket, then read its accept byte (0: accepted, else the
 * errno it refused with).  Shared by the local:// and ssh:// connectors
 * and `flux relay`.  Part of libflux-internal.la, not exported from
 * libflux-core.so (src/common/libflux/Makefile.am); stateless.
 */
#include <stdbool.h>

/* Connect a close-on-exec unix stream socket to PATH.  Returns the fd
 * (blocking), or -1 with errno: ENAMETOOLONG if PATH does not fit a
 * socket address, else socket()'s or connect()'s (ENOENT or ECONNREFUSED
 * while the broker starts).  Nothing is left open on failure.
 */
int local_connect (const char *path);

/* Read the accept byte from fd, waiting for it.  Returns 0 if it is 0.
 * Else -1 with errno: read()'s, ECONNRESET at end of file, or the byte
 * itself when the broker refused; *refused (if not NULL) is set true only
 * in that last case.  fd is left open either way.
 */
int local_read_accept (int fd, bool *refused);

#endif /* !FLUX_LOCAL_CONNECT_H */
