/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* files.c - stage attributes.system.files into the job's tmpdir (files.h). */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "libflux/base64.h"

static int write_all (int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write (fd, data, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

static int stage_one (const char *dir, const char *name, json_t *o,
                      flux_error_t *error)
{
    const char *data = NULL, *encoding = "utf-8";
    json_int_t mode = 0600;
    char *path = NULL, *buf = NULL;
    size_t len;
    int fd = -1, rc = -1;

    if (!*name || strchr (name, '/') || !strcmp (name, ".")
        || !strcmp (name, ".."))
        return errprintf (error, "files: bad file name '%s'", name);
    if (json_unpack (o, "{s:s s?I s?s}", "data", &data, "mode", &mode,
                     "encoding", &encoding)
        < 0)
        return errprintf (error, "files.%s: expected {data, mode?, encoding?}",
                          name);
    len = strlen (data);
    if (!strcmp (encoding, "base64")) {
        ssize_t n;
        if (!(buf = malloc (base64_decoded_size (len) + 1))
            || (n
                = base64_decode (buf, base64_decoded_size (len) + 1, data, len))
                   < 0) {
            errprintf (error, "files.%s: bad base64 data", name);
            goto done;
        }
        data = buf;
        len = (size_t)n;
    }
    else if (strcmp (encoding, "utf-8") != 0) {
        errprintf (error, "files.%s: unknown encoding '%s'", name, encoding);
        goto done;
    }
    if (asprintf (&path, "%s/%s", dir, name) < 0) {
        errprintf (error, "out of memory");
        goto done;
    }
    if ((fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                    (mode_t)(mode & 0777)))
            < 0
        || fchmod (fd, (mode_t)(mode & 0777)) < 0
        || write_all (fd, data, len) < 0) {
        errprintf (error, "%s: %s", path, strerror (errno));
        goto done;
    }
    rc = 0;
done:
    if (fd >= 0 && close (fd) < 0 && rc == 0)
        rc = errprintf (error, "%s: %s", path, strerror (errno));
    free (path);
    free (buf);
    return rc;
}

int shell_files_stage (json_t *jobspec, const char *dir, flux_error_t *error)
{
    json_t *files = json_object_get (
        json_object_get (json_object_get (jobspec, "attributes"), "system"),
        "files");
    const char *name;
    json_t *o;

    if (!files)
        return 0;
    if (!json_is_object (files))
        return errprintf (error, "attributes.system.files: not an object");
    json_object_foreach (files, name, o)
    {
        if (stage_one (dir, name, o, error) < 0)
            return -1;
    }
    return 0;
}

char *shell_files_subst (const char *arg, const char *tmpdir)
{
    static const char tag[] = "{{tmpdir}}";
    size_t n = 0, len;
    const char *p;
    char *out, *q;

    for (p = arg; (p = strstr (p, tag)); p += sizeof (tag) - 1)
        n++;
    len = strlen (arg) + n * strlen (tmpdir) + 1;
    if (!(out = malloc (len)))
        return NULL;
    for (q = out, p = arg; *p;) {
        if (!strncmp (p, tag, sizeof (tag) - 1)) {
            q = stpcpy (q, tmpdir);
            p += sizeof (tag) - 1;
        }
        else
            *q++ = *p++;
    }
    *q = '\0';
    return out;
}
