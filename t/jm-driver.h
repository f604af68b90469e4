/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_T_JM_DRIVER_H
#define FLUX_T_JM_DRIVER_H

/* jm-driver.h - what the test drivers that play the job manager's side
 * of a protocol (exec-driver: RFC 32, sched-driver: RFC 27) share: dying
 * with a message, reading the SCRIPT they run, and their start as the
 * job-manager service.
 */
#include "libflux/flux.h"

/* The name die() puts before its messages (each driver sets it first). */
extern const char *jm_driver_name;

/* Print "NAME: MESSAGE" on stderr and exit 1. */
void die (const char *fmt, ...)
    __attribute__ ((format (printf, 1, 2), noreturn));

/* Read the lines of the file path (newlines removed) into *lines, an
 * array of *nlines strings; dies on error.  jm_driver_free_script()
 * frees them. */
void jm_driver_read_script (const char *path, char ***lines, int *nlines);
void jm_driver_free_script (char **lines, int nlines);

/* Register the job-manager service on h, then create readyfile (if not
 * NULL), so a test knows the driver is in place; dies on error. */
void jm_driver_register (flux_t *h, const char *readyfile);

#endif /* !FLUX_T_JM_DRIVER_H */
