/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#include <dirent.h>
#include <errno.h>
#include <string.h>

#include "dirempty.h"

int dir_empty (const char *path)
{
    DIR *d = opendir (path);
    struct dirent *e;
    int empty = 1;

    if (!d)
        return -1;
    errno = 0;
    while (empty && (e = readdir (d))) {
        if (strcmp (e->d_name, ".") != 0 && strcmp (e->d_name, "..") != 0)
            empty = 0;
    }
    if (empty && errno != 0) {
        int saved_errno = errno;
        closedir (d);
        errno = saved_errno;
        return -1;
    }
    closedir (d);
    return empty;
}
