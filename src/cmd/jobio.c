/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* jobio.c - see jobio.h */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>

#include "libflux/base64.h"
#include "libutil/utf8.h"

#include "jobio.h"

int jobio_exit_code (int status, bool fatal_exception, flux_error_t *msg)
{
    int code;

    errprintf (msg, "%s", "");
    if (status < 0)
        return 1;
    if (WIFSIGNALED (status)) {
        code = 128 + WTERMSIG (status);
        errprintf (msg, "job shell %s", strsignal (WTERMSIG (status)));
    }
    else {
        code = WEXITSTATUS (status);
        if (code > 128)
            errprintf (msg, "task(s) %s", strsignal (code - 128));
        else if (code > 0)
            errprintf (msg, "task(s) exited with exit code %d", code);
    }
    if (code == 0 && fatal_exception)
        code = 1;
    return code;
}

bool jobio_is_utf8 (const char *s, size_t len)
{
    return !memchr (s, '\0', len) && utf8_valid (s, len);
}

static int decode_base64 (const char *s, char **data, size_t *len,
                          flux_error_t *error)
{
    size_t slen = strlen (s);
    size_t size = base64_decoded_size (slen) + 1;
    ssize_t n;
    char *buf;

    if (!(buf = malloc (size)))
        return errprintf (error, "out of memory");
    if ((n = base64_decode (buf, size, s, slen)) < 0) {
        free (buf);
        return errprintf (error, "data is not valid base64");
    }
    *data = buf;
    *len = (size_t)n;
    return 0;
}

int jobio_decode (json_t *context, json_t *header_encoding, const char **stream,
                  const char **rank, char **data, size_t *len, bool *eof,
                  flux_error_t *error)
{
    const char *s, *r, *enc = NULL;
    json_t *d = NULL;
    int e = 0;

    if (!context
        || json_unpack (context, "{s:s s:s s?o s?b s?s}", "stream", &s, "rank",
                        &r, "data", &d, "eof", &e, "encoding", &enc)
               < 0)
        return errprintf (error, "expected {stream:s, rank:s, data?:s, "
                                 "eof?:b, encoding?:s}");
    if (d && !json_is_string (d))
        return errprintf (error, "data is not a string");
    if (!enc && header_encoding)
        enc = json_string_value (json_object_get (header_encoding, s));
    if (enc && strcasecmp (enc, "base64") != 0 && strcasecmp (enc, "UTF-8")
        && strcasecmp (enc, "utf8"))
        return errprintf (error, "unknown encoding %s", enc);
    *data = NULL;
    *len = 0;
    if (d) {
        if (enc && !strcasecmp (enc, "base64")) {
            if (decode_base64 (json_string_value (d), data, len, error) < 0)
                return -1;
        }
        else {
            size_t n = json_string_length (d);
            if (!(*data = malloc (n + 1)))
                return errprintf (error, "out of memory");
            memcpy (*data, json_string_value (d), n + 1);
            *len = n;
        }
    }
    *stream = s;
    *rank = r;
    if (eof)
        *eof = e != 0;
    return 0;
}

json_t *jobio_encode (const char *stream, const char *rank, const void *data,
                      size_t len, bool eof)
{
    json_t *o;

    if (!stream || !rank || (len > 0 && !data)) {
        errno = EINVAL;
        return NULL;
    }
    if (!(o = json_pack ("{s:s s:s}", "stream", stream, "rank", rank)))
        goto nomem;
    if (len > 0) {
        json_t *v;
        if (jobio_is_utf8 (data, len))
            v = json_stringn (data, len);
        else {
            size_t size = base64_encoded_size (len) + 1;
            char *buf = malloc (size);
            if (!buf || base64_encode (buf, size, data, len) < 0) {
                free (buf);
                goto nomem;
            }
            v = json_string (buf);
            free (buf);
            if (json_object_set_new (o, "encoding", json_string ("base64"))
                < 0) {
                json_decref (v);
                goto nomem;
            }
        }
        if (json_object_set_new (o, "data", v) < 0)
            goto nomem;
    }
    if (eof && json_object_set_new (o, "eof", json_true ()) < 0)
        goto nomem;
    return o;
nomem:
    json_decref (o);
    errno = ENOMEM;
    return NULL;
}

/* RFC 5424 levels as attach labels them: the first three are all fatal
 * to a shell; NOTICE has no label. */
static const char *levelstr[]
    = {"FATAL", "FATAL", "FATAL", "ERROR", " WARN", NULL, "DEBUG", "TRACE"};

char *jobio_log_line (json_t *context, double t, double t0, bool verbose,
                      flux_error_t *error)
{
    const char *msg, *component = NULL, *file = NULL;
    int rank = -1, level, line = -1;
    char *buf = NULL;
    size_t size = 0;
    FILE *fp;

    if (!context
        || json_unpack (context, "{s?i s:i s:s s?s s?s s?i}", "rank", &rank,
                        "level", &level, "message", &msg, "component",
                        &component, "file", &file, "line", &line)
               < 0) {
        errprintf (error, "expected {level:i, message:s, rank?:i, "
                          "component?:s, file?:s, line?:i}");
        return NULL;
    }
    if (level < 0 || level > 7) {
        errprintf (error, "level %d is not 0-7", level);
        return NULL;
    }
    if (!(fp = open_memstream (&buf, &size))) {
        errprintf (error, "out of memory");
        return NULL;
    }
    fprintf (fp, "%.3fs: flux-shell", t - t0);
    if (rank >= 0)
        fprintf (fp, "[%d]", rank);
    if (levelstr[level])
        fprintf (fp, ": %s", levelstr[level]);
    if (component)
        fprintf (fp, ": %s", component);
    if (verbose && file) {
        fprintf (fp, ": %s", file);
        if (line > 0)
            fprintf (fp, ":%d", line);
    }
    fprintf (fp, ": %s", msg);
    if (fclose (fp) != 0) {
        free (buf);
        errprintf (error, "out of memory");
        return NULL;
    }
    return buf;
}

char *jobio_exception_line (json_t *context, double t, double t0,
                            const char *jobid, int *severity,
                            flux_error_t *error)
{
    const char *type, *note = "";
    int sev;
    char *s;

    if (!context
        || json_unpack (context, "{s:s s:i s?s}", "type", &type, "severity",
                        &sev, "note", &note)
               < 0) {
        errprintf (error, "expected {type:s, severity:i, note?:s}");
        return NULL;
    }
    if (asprintf (&s, "%.3fs: job.exception %s type=%s severity=%d %s", t - t0,
                  jobid, type, sev, note)
        < 0) {
        errprintf (error, "out of memory");
        return NULL;
    }
    if (severity)
        *severity = sev;
    return s;
}

long jobio_taskmap_ntasks (json_t *taskmap)
{
    json_t *map, *entry;
    size_t i;
    long total = 0;
    int version;

    if (!taskmap
        || json_unpack (taskmap, "{s:i s:o}", "version", &version, "map", &map)
               < 0
        || version != 1 || !json_is_array (map))
        return -1;
    json_array_foreach (map, i, entry)
    {
        json_int_t v[4];
        if (json_unpack (entry, "[IIII]", &v[0], &v[1], &v[2], &v[3]) < 0
            || v[0] < 0 || v[1] < 1 || v[2] < 1 || v[3] < 1)
            return -1;
        /* bounded so that the product cannot overflow */
        if (v[1] > INT32_MAX || v[2] > INT32_MAX || v[3] > INT32_MAX
            || v[1] * v[2] > INT32_MAX || v[1] * v[2] * v[3] > INT32_MAX
            || total + v[1] * v[2] * v[3] > INT32_MAX)
            return -1;
        total += (long)(v[1] * v[2] * v[3]);
    }
    return total;
}
