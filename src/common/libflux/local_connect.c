/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* local_connect.c - the client's side of the local connector's handshake
 * (local_connect.h): a helper of libflux-internal.la, not exported from
 * libflux-core.so (see Makefile.am).
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "local_connect.h"

int local_connect (const char *path)
{
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    int fd;

    if (strlen (path) >= sizeof (sun.sun_path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy (sun.sun_path, path);
    if ((fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        return -1;
    if (connect (fd, (struct sockaddr *)&sun, sizeof (sun)) < 0) {
        int saved_errno = errno;
        close (fd);
        errno = saved_errno;
        return -1;
    }
    return fd;
}

int local_read_accept (int fd, bool *refused)
{
    unsigned char c;
    ssize_t n;

    if (refused)
        *refused = false;
    do {
        n = read (fd, &c, 1);
    } while (n < 0 && errno == EINTR);
    if (n < 0)
        return -1;
    if (n == 0) {
        errno = ECONNRESET;
        return -1;
    }
    if (c != 0) {
        if (refused)
            *refused = true;
        errno = c;
        return -1;
    }
    return 0;
}
