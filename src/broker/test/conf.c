/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Unit tests for conf_load(): a JSON file, a YAML file, a directory of
 * both merged in name order, and every error: a key set twice (naming
 * both files), a table that is not at the top, bad syntax, a missing
 * path, a file too big or not regular.
 */
#include "config.h"
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/conf.h"
#include "tap.h"

static char dir[64];

static const char *path (const char *name)
{
    static char buf[256];
    snprintf (buf, sizeof (buf), "%s/%s", dir, name);
    return buf;
}

static void write_file (const char *name, const char *text)
{
    FILE *f = fopen (path (name), "w");
    if (!f || fputs (text, f) < 0 || fclose (f) != 0)
        BAIL_OUT ("cannot write %s", name);
}

/* conf_load (name) as compact JSON text (static), or "error: TEXT". */
static const char *load (const char *name)
{
    static char out[1024];
    flux_error_t error;
    json_t *o = conf_load (path (name), &error);
    char *s;

    if (!o) {
        const char *e = error.text;
        if (!strncmp (e, dir, strlen (dir)))
            e += strlen (dir) + 1; /* the name under dir */
        snprintf (out, sizeof (out), "error: %s", e);
        return out;
    }
    s = json_dumps (o, JSON_COMPACT | JSON_SORT_KEYS);
    snprintf (out, sizeof (out), "%s", s ? s : "?");
    free (s);
    json_decref (o);
    return out;
}

/* ok() if got matches the extended regular expression re */
static void like (const char *got, const char *re, const char *name)
{
    regex_t rx;
    bool match;

    if (regcomp (&rx, re, REG_EXTENDED | REG_NOSUB) != 0)
        BAIL_OUT ("bad regex %s", re);
    match = regexec (&rx, got, 0, NULL, 0) == 0;
    regfree (&rx);
    ok (match, "%s", name);
    if (!match)
        diag ("got '%s', expected /%s/", got, re);
}

static void test_files (void)
{
    write_file ("a.json", "{\"x\":{\"y\":1},\"s\":\"t\"}");
    is (load ("a.json"), "{\"s\":\"t\",\"x\":{\"y\":1}}", "a JSON file");
    write_file ("b.yaml", "x:\n  y: 2\n  z: [1, two]\n# end\n");
    is (load ("b.yaml"), "{\"x\":{\"y\":2,\"z\":[1,\"two\"]}}", "a YAML file");
    write_file ("c.conf", "{\"k\": true}");
    is (load ("c.conf"), "{\"k\":true}", "another name is read as YAML");
    write_file ("empty.yaml", "# only a comment\n\n   \n");
    is (load ("empty.yaml"), "{}", "a comment-only YAML file is empty");
    write_file ("zero.yml", "");
    is (load ("zero.yml"), "{}", "an empty file is empty");
    write_file ("list.json", "[1]");
    is (load ("list.json"),
        "error: list.json: expected a table (an object) at the top",
        "a JSON array is refused");
    write_file ("scalar.yaml", "hello\n");
    like (load ("scalar.yaml"), "^error: scalar.yaml: expected a table",
          "a YAML scalar is refused");
    write_file ("bad.json", "{\"x\":\n");
    like (load ("bad.json"), "^error: bad.json:2:", "bad JSON: file and line");
    write_file ("bad.yaml", "x: [1,\n");
    like (load ("bad.yaml"), "^error: bad.yaml: YAML: .*line 2",
          "bad YAML: file and line");
    write_file ("dup.json", "{\"a\":1,\"a\":2}");
    like (load ("dup.json"), "^error: dup.json:.*duplicate",
          "a key twice in one JSON file");
    write_file ("dup.yaml", "a: 1\na: 2\n");
    like (load ("dup.yaml"), "^error: dup.yaml: .*uplicate",
          "a key twice in one YAML file");
    errno = 0;
    like (load ("nonexistent.json"), "No such file",
          "a missing file: its name and why");
}

static void test_toml (void)
{
    write_file ("a.toml",
                "[x]\ny = 1\nz = [1, 'two']\n[[h]]\nhost = 'a[1-3]'\n");
    is (load ("a.toml"),
        "{\"h\":[{\"host\":\"a[1-3]\"}],\"x\":{\"y\":1,\"z\":[1,\"two\"]}}",
        "a TOML file");
    write_file ("empty.toml", "# only a comment\n");
    is (load ("empty.toml"), "{}", "a comment-only TOML file is empty");
    write_file ("bad.toml", "[x]\ny = 1\n[x]\n");
    is (load ("bad.toml"), "error: bad.toml:3:2: table x is defined twice",
        "bad TOML: file, line, column and reason");
    write_file ("nul.toml", "");
    {
        FILE *f = fopen (path ("nul.toml"), "w");
        if (!f || fwrite ("a = 1\n\0", 1, 7, f) != 7 || fclose (f) != 0)
            BAIL_OUT ("cannot write nul.toml");
    }
    is (load ("nul.toml"), "error: nul.toml:2:1: a NUL byte",
        "a TOML file with a NUL byte is refused");
    if (mkdir (path ("t"), 0700) < 0)
        BAIL_OUT ("mkdir");
    write_file ("t/10-a.toml", "[jm]\nnum = 5\n");
    write_file ("t/20-b.yaml", "jm:\n  age: 7d\n");
    is (load ("t"), "{\"jm\":{\"age\":\"7d\",\"num\":5}}",
        "a directory: TOML and YAML merged");
    write_file ("t/30-c.toml", "jm.num = 6\n");
    is (load ("t"), "error: t/30-c.toml: jm.num is also set in 10-a.toml",
        "a key set in two TOML files: both named");
}

static void test_nul_and_size (void)
{
    FILE *f = fopen (path ("nul.yaml"), "w");

    if (!f || fwrite ("a: 1\n\0b: 2\n", 1, 11, f) != 11 || fclose (f) != 0)
        BAIL_OUT ("cannot write nul.yaml");
    like (load ("nul.yaml"), "^error: nul.yaml: not a text file",
          "a YAML file with a NUL byte is refused");
    if (!(f = fopen (path ("big.json"), "w"))
        || fseek (f, (long)CONF_MAX_FILE, SEEK_SET) < 0 || fputc (' ', f) < 0
        || fclose (f) != 0)
        BAIL_OUT ("cannot write big.json");
    like (load ("big.json"), "^error: big.json: bigger than 16 MiB",
          "a file over CONF_MAX_FILE is refused before it is read");
    unlink (path ("big.json"));
}

static void test_dir (void)
{
    if (mkdir (path ("d"), 0700) < 0)
        BAIL_OUT ("mkdir");
    is (load ("d"), "{}", "an empty directory is an empty configuration");
    write_file ("d/20-b.json", "{\"jm\":{\"age\":\"7d\"},\"z\":1}");
    write_file ("d/10-a.yaml", "jm:\n  num: 5\nres:\n  x: true\n");
    write_file ("d/README", "not read");
    write_file ("d/.hidden.json", "{\"hidden\":1}");
    is (load ("d"),
        "{\"jm\":{\"age\":\"7d\",\"num\":5},\"res\":{\"x\":true},\"z\":1}",
        "a directory: tables merged, other and hidden files skipped");
    write_file ("d/30-c.yml", "jm:\n  age: 1d\n");
    is (load ("d"), "error: d/30-c.yml: jm.age is also set in 20-b.json",
        "a key set in two files: both named");
    write_file ("d/30-c.yml", "z: {a: 1}\n");
    is (load ("d"), "error: d/30-c.yml: z is also set in 20-b.json",
        "a table where another file has a value");
    write_file ("d/30-c.yml", "jm: [1]\n");
    is (load ("d"), "error: d/30-c.yml: jm is also set in 10-a.yaml",
        "a value where two files have a table: the first named");
    write_file ("d/30-c.yml", "[1]\n");
    like (load ("d"), "^error: d/30-c.yml: expected a table",
          "a bad file in a directory is named");
    unlink (path ("d/30-c.yml"));
    if (mkdir (path ("d/sub.json"), 0700) < 0)
        BAIL_OUT ("mkdir");
    is (load ("d"), "error: d/sub.json: not a regular file",
        "a directory named like a file is refused");
    rmdir (path ("d/sub.json"));
}

static void cleanup (void)
{
    char cmd[128];
    snprintf (cmd, sizeof (cmd), "rm -rf %s", dir);
    if (system (cmd) != 0)
        diag ("cannot remove %s", dir);
}

int main (void)
{
    flux_error_t error;

    plan (NO_PLAN);
    snprintf (dir, sizeof (dir), "%s/conf-t.XXXXXX",
              getenv ("TMPDIR") && strlen (getenv ("TMPDIR")) < 40
                  ? getenv ("TMPDIR")
                  : "/tmp");
    if (!mkdtemp (dir))
        BAIL_OUT ("mkdtemp");
    test_files ();
    test_toml ();
    test_nul_and_size ();
    test_dir ();
    errno = 0;
    ok (conf_load (NULL, &error) == NULL && errno == EINVAL, "no path: EINVAL");
    cleanup ();
    done_testing ();
}
