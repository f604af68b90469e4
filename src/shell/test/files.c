/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/files.c - attributes.system.files staged into a directory. */
#define _GNU_SOURCE 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "tap.h"

static json_t *js_files (const char *files)
{
    char *s;
    json_t *js;

    if (asprintf (&s, "{\"attributes\":{\"system\":{\"files\":%s}}}", files) < 0
        || !(js = json_loads (s, 0, NULL)))
        BAIL_OUT ("bad test input");
    free (s);
    return js;
}

static int stage (const char *dir, const char *files, flux_error_t *error)
{
    json_t *js = js_files (files);
    int rc = shell_files_stage (js, dir, error);
    json_decref (js);
    return rc;
}

static char *slurp (const char *dir, const char *name)
{
    char path[4096], *buf = calloc (1, 4096);
    FILE *fp;

    snprintf (path, sizeof (path), "%s/%s", dir, name);
    if (!buf || !(fp = fopen (path, "r"))) {
        free (buf);
        return NULL;
    }
    if (fread (buf, 1, 4095, fp) == 0 && ferror (fp)) {
        free (buf);
        buf = NULL;
    }
    fclose (fp);
    return buf;
}

int main (void)
{
    char dir[] = "/tmp/files-test-XXXXXX", path[4200], *s;
    flux_error_t error;
    struct stat st;
    json_t *none;

    plan (NO_PLAN);
    if (!mkdtemp (dir))
        BAIL_OUT ("mkdtemp");
    ok (stage (dir,
               "{\"script\":{\"data\":\"#!/bin/sh\\necho hi\\n\","
               "\"mode\":448,\"encoding\":\"utf-8\"}}",
               &error)
            == 0,
        "a utf-8 file is staged");
    s = slurp (dir, "script");
    ok (s && !strcmp (s, "#!/bin/sh\necho hi\n"), "with its data");
    free (s);
    snprintf (path, sizeof (path), "%s/script", dir);
    ok (stat (path, &st) == 0 && (st.st_mode & 0777) == 0700,
        "and its mode (0700)");
    ok (stage (dir, "{\"b\":{\"data\":\"aGVsbG8=\",\"encoding\":\"base64\"}}",
               &error)
            == 0,
        "a base64 file is staged");
    s = slurp (dir, "b");
    ok (s && !strcmp (s, "hello"), "decoded");
    free (s);
    snprintf (path, sizeof (path), "%s/b", dir);
    ok (stat (path, &st) == 0 && (st.st_mode & 0777) == 0600,
        "mode defaults to 0600");
    ok (stage (dir, "{\"../x\":{\"data\":\"\"}}", &error) < 0
            && strstr (error.text, "bad file name"),
        "a name with / is refused");
    ok (stage (dir, "{\"..\":{\"data\":\"\"}}", &error) < 0, ".. is refused");
    ok (stage (dir, "{\"x\":{\"mode\":1}}", &error) < 0,
        "a file without data is refused");
    ok (stage (dir, "{\"x\":{\"data\":\"a\",\"encoding\":\"rot13\"}}", &error)
                < 0
            && strstr (error.text, "unknown encoding"),
        "an unknown encoding is refused");
    ok (stage (dir, "{\"x\":{\"data\":\"***\",\"encoding\":\"base64\"}}",
               &error)
            < 0,
        "bad base64 is refused");
    ok (stage (dir, "[]", &error) < 0, "files not an object is refused");
    none = json_pack ("{s:{}}", "attributes");
    ok (shell_files_stage (none, dir, &error) == 0, "no files: nothing to do");
    json_decref (none);

    s = shell_files_subst ("{{tmpdir}}/script", "/t/d");
    ok (s && !strcmp (s, "/t/d/script"), "{{tmpdir}} is replaced");
    free (s);
    s = shell_files_subst ("a{{tmpdir}}b{{tmpdir}}", "X");
    ok (s && !strcmp (s, "aXbX"), "every occurrence");
    free (s);
    s = shell_files_subst ("{{tmp}}", "X");
    ok (s && !strcmp (s, "{{tmp}}"), "other text is kept");
    free (s);

    snprintf (path, sizeof (path), "rm -rf %s", dir);
    if (system (path) != 0)
        diag ("cleanup failed");
    done_testing ();
    return 0;
}
