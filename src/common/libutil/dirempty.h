/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef UTIL_DIREMPTY_H
#define UTIL_DIREMPTY_H

/* dirempty - whether a directory holds anything but "." and "..", read
 * with one open and (most often) two getdents: cheaper than an rmdir
 * that would succeed, which frees the directory's inode and block.
 */

/* 1: empty; 0: something in it; -1 with errno: it cannot be opened as a
 * directory (ENOENT, ENOTDIR, EACCES...).  Symlinks are followed. */
int dir_empty (const char *path);

#endif /* !UTIL_DIREMPTY_H */
