/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libutil/dirempty.h"
#include "tap.h"

int main (int argc, char **argv)
{
    char tmpl[] = "/tmp/dirempty-test.XXXXXX";
    char *dir = mkdtemp (tmpl);
    char path[256], sub[256], file[256];
    int fd;

    plan (NO_PLAN);
    if (!dir)
        BAIL_OUT ("mkdtemp: %s", strerror (errno));
    ok (dir_empty (dir) == 1, "a new directory is empty");

    snprintf (file, sizeof (file), "%s/.hidden", dir);
    fd = open (file, O_CREAT | O_WRONLY, 0600);
    ok (fd >= 0 && close (fd) == 0, "create a dot file");
    ok (dir_empty (dir) == 0, "a dot file makes it not empty");
    ok (unlink (file) == 0 && dir_empty (dir) == 1, "empty again without it");

    snprintf (sub, sizeof (sub), "%s/sub", dir);
    ok (mkdir (sub, 0700) == 0 && dir_empty (dir) == 0,
        "an empty subdirectory makes it not empty");
    ok (dir_empty (sub) == 1, "the subdirectory is empty");

    snprintf (path, sizeof (path), "%s/nonesuch", dir);
    errno = 0;
    ok (dir_empty (path) == -1 && errno == ENOENT,
        "a missing directory: -1, ENOENT");
    snprintf (file, sizeof (file), "%s/file", sub);
    fd = open (file, O_CREAT | O_WRONLY, 0600);
    ok (fd >= 0 && close (fd) == 0, "create a file");
    errno = 0;
    ok (dir_empty (file) == -1 && errno == ENOTDIR, "a file: -1, ENOTDIR");

    (void)unlink (file);
    (void)rmdir (sub);
    (void)rmdir (dir);
    done_testing ();
    return 0;
}
