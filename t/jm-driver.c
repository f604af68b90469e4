/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* jm-driver.c - the pieces exec-driver and sched-driver share (see
 * jm-driver.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jm-driver.h"

const char *jm_driver_name = "driver";

void die (const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    fprintf (stderr, "%s: ", jm_driver_name);
    vfprintf (stderr, fmt, ap);
    fprintf (stderr, "\n");
    va_end (ap);
    exit (1);
}

void jm_driver_read_script (const char *path, char ***lines, int *nlines)
{
    FILE *fp = fopen (path, "r");
    char buf[8192];

    if (!fp)
        die ("%s: %s", path, strerror (errno));
    while (fgets (buf, sizeof (buf), fp)) {
        buf[strcspn (buf, "\n")] = '\0';
        if (!(*lines = realloc (*lines, (*nlines + 1) * sizeof (**lines)))
            || !((*lines)[(*nlines)++] = strdup (buf)))
            die ("out of memory");
    }
    fclose (fp);
}

void jm_driver_free_script (char **lines, int nlines)
{
    for (int i = 0; i < nlines; i++)
        free (lines[i]);
    free (lines);
}

void jm_driver_register (flux_t *h, const char *readyfile)
{
    flux_future_t *f;

    if (!(f = flux_service_register (h, "job-manager"))
        || flux_future_get (f, NULL) < 0)
        die ("registering job-manager: %s", future_strerror (f, errno));
    flux_future_destroy (f);
    if (readyfile) {
        FILE *fp = fopen (readyfile, "w");
        if (!fp)
            die ("%s: %s", readyfile, strerror (errno));
        fclose (fp);
    }
}
