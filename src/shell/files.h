/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef SHELL_FILES_H
#define SHELL_FILES_H

/* files.h - files carried in the jobspec, written before the tasks start.
 *
 * attributes.system.files (as flux-core's `flux batch` writes it) is an
 * object NAME -> {data:s, mode?:i, encoding?:"utf-8"|"base64"}: each is
 * written to FLUX_JOB_TMPDIR/NAME on every node with MODE (default 0600,
 * only permission bits kept).  A command argument may name one as
 * "{{tmpdir}}/NAME": {{tmpdir}} is replaced by FLUX_JOB_TMPDIR.
 */
#include <jansson.h>

#include "libflux/flux.h"

/* Write the files of jobspec into dir; 0, or -1 with error set (a NAME
 * with '/' or that is "." or "..", bad data, a write error). */
int shell_files_stage (json_t *jobspec, const char *dir, flux_error_t *error);

/* arg with every {{tmpdir}} replaced by tmpdir (free it); NULL if out of
 * memory. */
char *shell_files_subst (const char *arg, const char *tmpdir);

#endif /* !SHELL_FILES_H */
