/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Unit tests for local_connect.h: connecting to a listening socket, to a
 * path with none, to a path too long; the accept byte read as accepted,
 * refused (errno the byte, *refused set) and missing (EOF: ECONNRESET).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "libflux/local_connect.h"
#include "tap.h"

static void test_connect (void)
{
    char dir[] = "/tmp/local_connect.XXXXXX";
    char path[160], longpath[200];
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    int lfd, fd, afd;

    if (!mkdtemp (dir))
        BAIL_OUT ("mkdtemp: %s", strerror (errno));
    snprintf (path, sizeof (path), "%s/sock", dir);
    errno = 0;
    ok (local_connect (path) < 0 && errno == ENOENT,
        "local_connect to a path with no socket fails with ENOENT");

    memset (longpath, 'x', sizeof (longpath) - 1);
    longpath[sizeof (longpath) - 1] = '\0';
    errno = 0;
    ok (local_connect (longpath) < 0 && errno == ENAMETOOLONG,
        "local_connect to a path too long fails with ENAMETOOLONG");

    strcpy (sun.sun_path, path);
    if ((lfd = socket (AF_UNIX, SOCK_STREAM, 0)) < 0
        || bind (lfd, (struct sockaddr *)&sun, sizeof (sun)) < 0
        || listen (lfd, 1) < 0)
        BAIL_OUT ("listen: %s", strerror (errno));
    fd = local_connect (path);
    ok (fd >= 0, "local_connect to a listening socket works");
    afd = accept (lfd, NULL, NULL);
    ok (afd >= 0 && write (afd, "", 1) == 1
            && local_read_accept (fd, NULL) == 0,
        "the accept byte 0 is read as accepted");
    close (afd);
    close (fd);
    close (lfd);
    unlink (path);
    rmdir (dir);
}

static void test_accept (void)
{
    unsigned char byte = EPERM;
    bool refused = true;
    int sv[2];

    if (socketpair (AF_UNIX, SOCK_STREAM, 0, sv) < 0)
        BAIL_OUT ("socketpair: %s", strerror (errno));
    ok (write (sv[1], "", 1) == 1 && local_read_accept (sv[0], &refused) == 0
            && !refused,
        "local_read_accept: 0 is accepted, refused is false");
    errno = 0;
    ok (write (sv[1], &byte, 1) == 1 && local_read_accept (sv[0], &refused) < 0
            && errno == EPERM && refused,
        "a nonzero byte is a refusal: errno is the byte, refused is true");
    close (sv[1]);
    errno = 0;
    refused = true;
    ok (local_read_accept (sv[0], &refused) < 0 && errno == ECONNRESET
            && !refused,
        "end of file before the byte: ECONNRESET, refused is false");
    close (sv[0]);
}

int main (void)
{
    plan (NO_PLAN);
    test_connect ();
    test_accept ();
    done_testing ();
    return 0;
}
